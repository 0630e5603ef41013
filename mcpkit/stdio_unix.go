//go:build unix

package mcpkit

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup starts the child as the leader of a new process group,
// so that signals to the group reach anything it spawns.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// terminateGroup sends SIGTERM to the child's process group.
func terminateGroup(p *os.Process) {
	if syscall.Kill(-p.Pid, syscall.SIGTERM) != nil {
		p.Signal(syscall.SIGTERM)
	}
}

// killGroup sends SIGKILL to the child's process group.
func killGroup(p *os.Process) {
	if syscall.Kill(-p.Pid, syscall.SIGKILL) != nil {
		p.Kill()
	}
}
