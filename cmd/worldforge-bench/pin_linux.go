package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// pinSelf moves every thread of this process onto the given CPUs and sets
// GOMAXPROCS to match, so the load generator stays off the server's core.
func pinSelf(cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("pin: %w", err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil {
			return fmt.Errorf("pin thread %d: %w", tid, err)
		}
	}
	runtime.GOMAXPROCS(len(cpus))
	return nil
}

// niceSelf sets the nice value of every thread of this process (threads
// made later inherit it from theirs). A negative value needs root or
// CAP_SYS_NICE.
func niceSelf(n int) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("nice: %w", err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.Setpriority(unix.PRIO_PROCESS, tid, n); err != nil {
			return fmt.Errorf("nice %d for thread %d: %w", n, tid, err)
		}
	}
	return nil
}

// niceAutogroup sets the nice value of this process's scheduler autogroup
// (its session's, which the servers it starts share) and returns a
// function that restores the old one. With autogroups on, the scheduler
// shares a CPU between sessions first, so a thread's own nice value only
// counts against the threads of its session. Without autogroups (no
// /proc/self/autogroup) it does nothing.
func niceAutogroup(n int) (restore func(), err error) {
	const path = "/proc/self/autogroup"
	old, err := os.ReadFile(path)
	if err != nil {
		return func() {}, nil
	}
	// "/autogroup-116 nice 0"
	f := strings.Fields(string(old))
	if len(f) != 3 || f[1] != "nice" {
		return nil, fmt.Errorf("nice: unexpected %s: %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(n)), 0); err != nil {
		return nil, fmt.Errorf("nice: autogroup: %w", err)
	}
	return func() { os.WriteFile(path, []byte(f[2]), 0) }, nil
}
