package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"

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
