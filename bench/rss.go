package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// RSSInterval is how often an [RSSSampler] samples.
const RSSInterval = 100 * time.Millisecond

// RSS returns the resident set size of process pid in bytes, read from the
// VmRSS line of /proc/PID/status (Linux only).
func RSS(pid int) (int64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmRSS:"))
		if !ok {
			continue
		}
		// "VmRSS:	   12345 kB"
		fields := bytes.Fields(rest)
		if len(fields) != 2 || string(fields[1]) != "kB" {
			return 0, fmt.Errorf("bench: unexpected VmRSS line %q", sc.Text())
		}
		kb, err := strconv.ParseInt(string(fields[0]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("bench: bad VmRSS line %q: %v", sc.Text(), err)
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("bench: no VmRSS in /proc/%d/status", pid)
}

// RSSSampler samples a process's RSS every RSSInterval from
// [StartRSSSampler] until Stop, keeping the peak and the last value.
type RSSSampler struct {
	pid  int
	stop chan struct{}
	done chan struct{}
	once sync.Once

	mu      sync.Mutex
	peak    int64
	last    int64
	samples int
	err     error
}

// StartRSSSampler takes a first sample of pid and keeps sampling in the
// background until Stop.
func StartRSSSampler(pid int) *RSSSampler {
	s := &RSSSampler{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	s.sample()
	go s.loop()
	return s
}

func (s *RSSSampler) loop() {
	defer close(s.done)
	t := time.NewTicker(RSSInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.sample()
		}
	}
}

func (s *RSSSampler) sample() {
	v, err := RSS(s.pid)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if s.err == nil {
			s.err = err
		}
		return
	}
	s.samples++
	s.last = v
	s.peak = max(s.peak, v)
}

// Stop stops sampling, takes a final sample and returns the peak and last
// RSS in bytes, and the first sampling error if any. It may be called more
// than once.
func (s *RSSSampler) Stop() (peak, last int64, err error) {
	s.once.Do(func() {
		close(s.stop)
		<-s.done
		s.sample()
	})
	return s.Peak(), s.Last(), s.Err()
}

// Peak returns the largest RSS sampled so far, in bytes.
func (s *RSSSampler) Peak() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// Last returns the latest RSS sample, in bytes.
func (s *RSSSampler) Last() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// Samples returns the number of successful samples taken so far.
func (s *RSSSampler) Samples() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples
}

// Err returns the first sampling error, if any.
func (s *RSSSampler) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat; it
// is 100 on every Linux architecture Go supports.
const clockTicks = 100

// CPUTime returns the user+system CPU time process pid has used so far,
// read from /proc/PID/stat (Linux only).
func CPUTime(pid int) (time.Duration, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; fields after its closing
	// parenthesis are space-separated: state is field 3, utime 14, stime 15.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, fmt.Errorf("parse /proc/%d/stat: no ')'", pid)
	}
	fields := bytes.Fields(data[i+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("parse /proc/%d/stat: %d fields", pid, len(fields))
	}
	utime, err1 := strconv.ParseInt(string(fields[11]), 10, 64)
	stime, err2 := strconv.ParseInt(string(fields[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("parse /proc/%d/stat: bad utime/stime", pid)
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// CoreTimes returns how long CPU cpu has been busy (every state but idle
// and iowait) and its total time since boot, read from the cpuN line of
// /proc/stat (Linux only). Two readings give the share of that core that
// every process on it used in between.
func CoreTimes(cpu int) (busy, total time.Duration, err error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	prefix := []byte("cpu" + strconv.Itoa(cpu) + " ")
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, prefix)
		if !ok {
			continue
		}
		var idle int64
		for i, f := range bytes.Fields(rest) {
			v, err := strconv.ParseInt(string(f), 10, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("bench: bad /proc/stat line %q", line)
			}
			if i >= 8 {
				break // guest times are already counted in user and nice
			}
			total += time.Duration(v)
			if i == 3 || i == 4 { // idle, iowait
				idle += v
			}
		}
		busy = (total - time.Duration(idle)) * time.Second / clockTicks
		return busy, total * time.Second / clockTicks, nil
	}
	return 0, 0, fmt.Errorf("bench: no cpu%d in /proc/stat", cpu)
}
