//go:build !unix

package mcpkit

import (
	"os"
	"os/exec"
	"time"
)

// setProcessGroup does nothing where there are no Unix process groups.
func setProcessGroup(cmd *exec.Cmd) {}

// terminateGroup kills the child: there is no portable SIGTERM.
func terminateGroup(p *os.Process) { p.Kill() }

// killGroup kills the child.
func killGroup(p *os.Process) { p.Kill() }

// awaitGroupGone returns at once: killGroup killed the one process.
func awaitGroupGone(p *os.Process, d time.Duration) {}
