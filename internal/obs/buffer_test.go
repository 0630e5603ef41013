package obs

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the timer goroutine's writes that
// also counts the writes it gets.
type syncBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) Writes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}

func TestBufferedWriterBatchesAndKeepsOrder(t *testing.T) {
	var out syncBuffer
	bw := NewBufferedWriter(&out, time.Hour) // only size, Flush and Close write
	const writers, each = 16, 2000
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				fmt.Fprintf(bw, "g=%d i=%d %s\n", g, i, strings.Repeat("x", 40))
			}
		}()
	}
	wg.Wait()
	if err := bw.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != writers*each {
		t.Fatalf("got %d lines, want %d", len(lines), writers*each)
	}
	next := make([]int, writers) // each writer's lines in its order, none torn
	for _, l := range lines {
		var g, i int
		var pad string
		if _, err := fmt.Sscanf(l, "g=%d i=%d %s", &g, &i, &pad); err != nil || len(pad) != 40 {
			t.Fatalf("torn line %q", l)
		}
		if i != next[g] {
			t.Fatalf("writer %d: line %d after %d", g, i, next[g]-1)
		}
		next[g]++
	}
	// ~60 bytes a line, 64 KiB a batch: about 30 writes, not 32,000.
	if w := out.Writes(); w > writers*each/100 {
		t.Errorf("%d writes for %d lines: not batched", w, writers*each)
	}
}

// TestBufferedWriterInterval runs in a synctest bubble: the writer's timer
// is in-process, so the fake clock moves it without waiting.
func TestBufferedWriterInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = 20 * time.Millisecond
		var out syncBuffer
		bw := NewBufferedWriter(&out, interval)
		defer bw.Close()
		fmt.Fprintln(bw, "first")
		synctest.Wait()
		if got := out.String(); got != "" {
			t.Fatalf("written before the interval: %q", got)
		}
		time.Sleep(interval) // the bubble's fake clock: returns at once
		synctest.Wait()
		if got := out.String(); got != "first\n" {
			t.Fatalf("not written after the interval: %q", got)
		}
		// The timer re-arms for the next batch.
		fmt.Fprintln(bw, "second")
		time.Sleep(interval)
		synctest.Wait()
		if got := out.String(); got != "first\nsecond\n" {
			t.Fatalf("second batch not written: %q", got)
		}
	})
}

func TestBufferedWriterUnbufferedAndClosed(t *testing.T) {
	var out syncBuffer
	bw := NewBufferedWriter(&out, 0)
	fmt.Fprintln(bw, "a")
	if out.String() != "a\n" {
		t.Fatalf("interval 0 held the record: %q", out.String())
	}
	bw = NewBufferedWriter(&out, time.Hour)
	fmt.Fprintln(bw, "b")
	if err := bw.Close(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(bw, "c") // after Close: straight through
	if out.String() != "a\nb\nc\n" {
		t.Fatalf("got %q", out.String())
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	f.n++
	return 0, errors.New("disk gone")
}

func TestBufferedWriterStickyError(t *testing.T) {
	fw := &failWriter{}
	bw := NewBufferedWriter(fw, time.Hour)
	fmt.Fprintln(bw, "a")
	if err := bw.Flush(); err == nil || !strings.Contains(err.Error(), "disk gone") {
		t.Fatalf("Flush: %v", err)
	}
	if _, err := fmt.Fprintln(bw, "b"); err == nil {
		t.Fatal("Write after a failed batch succeeded")
	}
	if err := bw.Flush(); err == nil || fw.n != 1 {
		t.Fatalf("Flush after failure: err %v, %d writes (want the first error, no new write)", err, fw.n)
	}
}

func TestFlushingHandler(t *testing.T) {
	var out syncBuffer
	bw := NewBufferedWriter(&out, time.Hour)
	defer bw.Close()
	log := slog.New(NewFlushingHandler(slog.NewTextHandler(bw, nil), bw, slog.LevelWarn).WithAttrs([]slog.Attr{slog.String("svc", "x")}))
	log.Info("held")
	if out.String() != "" {
		t.Fatalf("info written at once: %q", out.String())
	}
	log.Warn("at once")
	got := out.String()
	if !strings.Contains(got, "msg=held") || !strings.Contains(got, `msg="at once"`) || strings.Index(got, "held") > strings.Index(got, "at once") {
		t.Fatalf("warning did not flush both records in order: %q", got)
	}
	if !strings.Contains(got, "svc=x") {
		t.Fatalf("WithAttrs lost: %q", got)
	}
}
