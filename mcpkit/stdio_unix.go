//go:build unix

package mcpkit

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
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

// awaitGroupGone waits up to d for every process of the child's group to
// have died, after killGroup: a SIGKILLed grandchild is not gone the
// instant kill returns. A zombie counts as gone (whoever adopted it reaps
// it; a container's init may never). Where /proc cannot tell zombies from
// the living, the group counts as gone once the kernel says it is.
func awaitGroupGone(p *os.Process, d time.Duration) {
	deadline := time.Now().Add(d)
	for {
		if errors.Is(syscall.Kill(-p.Pid, 0), syscall.ESRCH) {
			return
		}
		alive, known := groupHasLiving(p.Pid)
		if known && !alive {
			return
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// groupHasLiving reports whether a process that is not a zombie belongs
// to process group pgid, as /proc tells it; known is false without /proc.
func groupHasLiving(pgid int) (alive, known bool) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(stats) == 0 {
		return false, false
	}
	want := []byte(strconv.Itoa(pgid))
	for _, f := range stats {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and ')'.
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		fields := bytes.Fields(data[i+1:])
		if len(fields) < 3 || !bytes.Equal(fields[2], want) {
			continue
		}
		if s := fields[0]; len(s) == 1 && (s[0] == 'Z' || s[0] == 'X') {
			continue
		}
		return true, true
	}
	return false, true
}
