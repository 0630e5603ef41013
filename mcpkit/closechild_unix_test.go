//go:build unix

package mcpkit

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestCloseLeavesNoChild races Close against the ways a child comes and
// goes: a connect in its handshake, a connect just finished, a child
// killed under a live session (the session tears itself down while the
// reconnect policy starts a new child). Whenever Close returns, no child
// the client spawned may be alive.
func TestCloseLeavesNoChild(t *testing.T) {
	t.Parallel()
	rounds := 40
	if testing.Short() {
		rounds = 8
	}
	var wg sync.WaitGroup
	for i := range rounds {
		wg.Go(func() {
			f := newFixture(t, "close", fxSlowStart)
			c := NewClient(f.cfg, opts(func(o *ClientOptions) {
				o.Reconnect = &ReconnectPolicy{InitialBackoff: time.Millisecond}
				o.ShutdownGrace = 200 * time.Millisecond
			}))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			connected := make(chan error, 1)
			go func() { connected <- c.Connect(ctx) }()
			switch i % 3 {
			case 0: // Close during the handshake (the fixture takes 200 ms to start)
				time.Sleep(time.Duration(i%7) * 30 * time.Millisecond)
			case 1: // Close as the connect finishes
				<-connected
			case 2: // Close as a killed child is torn down and replaced
				if err := <-connected; err == nil {
					if pids := f.pids(); len(pids) > 0 {
						syscall.Kill(pids[len(pids)-1], syscall.SIGKILL)
					}
				}
			}
			c.Close()
			for _, pid := range f.pids() {
				if alive(pid) {
					t.Errorf("round %d: child %d alive after Close", i, pid)
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
	}
	wg.Wait()
}

// pids returns every pid the fixture logged at its start.
func (f *fixture) pids() []int {
	data, _ := os.ReadFile(f.spawnLog)
	var pids []int
	for line := range strings.FieldsSeq(string(data)) {
		if pid, err := strconv.Atoi(line); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// alive reports whether pid is a process that is not a zombie.
func alive(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return false
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !errors.Is(err, os.ErrNotExist) // no /proc: kill says it exists
	}
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && len(s) > i+2 {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}
