//go:build unix

package servecmd

import "syscall"

// openFileLimit is this process's soft RLIMIT_NOFILE (which the Go runtime
// raised to the hard limit at start), or 0 when it cannot be read.
func openFileLimit() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return uint64(rl.Cur)
}
