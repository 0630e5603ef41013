package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/worldforge-go/worldforge/internal/cli"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/worldforge-go/worldforge/bench"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// soak [-duration 10m] [-rate 200] [-sample 10s] [-db DSN] [-pin]
//
// runs the serve command (this program's hidden serve, the same code as
// `worldforge serve`) as a child process under a steady, mixed load
// (reads, proposals and their commits) at a fixed request rate, samples the
// server's memory, goroutines and open files, and reports whether they
// stayed flat and whether any request failed. The exit status is 1 when a
// request failed, an acknowledged write is missing at the end, or (in a run
// of a minute or more) the RSS of the last third of the run exceeds that of
// the first third by more than 10 % and 8 MiB.
//
// With -large-world N it runs the large-world mode instead (soaklarge.go):
// read_world of an N×N world by -clients concurrent callers on every
// protocol revision, -duration (default 15s) each, failing when the
// server's peak RSS exceeds -max-rss.
func (e *env) soak(ctx context.Context, args []string) error {
	fs := cli.NewFlags("soak")
	duration := fs.Duration("duration", 10*time.Minute, "how long to run the load")
	rate := fs.Int("rate", 200, "requests per second, spread evenly (open loop)")
	sample := fs.Duration("sample", 10*time.Second, "how often to sample the server")
	dbFlag := fs.String("db", "", "database DSN for the server (default: a new SQLite file in a temporary directory)")
	pin := fs.Bool("pin", runtime.NumCPU() >= 2, "run the server on CPU 0 alone (via taskset) and the load on the other CPUs")
	largeWorld := fs.Int("large-world", 0, "large-world mode: read_world of a world resized to this side (1–4096) on every protocol revision, checking the server's peak RSS (0: off)")
	clients := fs.Int("clients", 8, "large-world mode: concurrent read_world callers")
	maxRSS := cli.ByteSize(128 << 20)
	fs.Var(&maxRSS, "max-rss", "large-world mode: the server's peak RSS allowed on any revision (e.g. 128MiB)")
	if err := e.Parse(fs, args); err != nil {
		return err
	}
	if *largeWorld != 0 {
		durationSet := false
		fs.Visit(func(f *flag.Flag) { durationSet = durationSet || f.Name == "duration" })
		if !durationSet {
			*duration = 15 * time.Second
		}
		if *largeWorld < 1 || *largeWorld > 4096 || *clients < 1 || *clients > 1024 || *duration <= 0 || maxRSS <= 0 {
			return cli.UsageErrorf("soak: want 1 ≤ -large-world ≤ 4096, 1 ≤ -clients ≤ 1024, -duration > 0 and -max-rss > 0")
		}
		*sample = *duration
	}
	if _, err := cli.Positional(fs, 0, "no arguments"); err != nil {
		return err
	}
	if *duration <= 0 || *rate <= 0 || *rate > 100000 || *sample <= 0 || *sample > *duration {
		return cli.UsageErrorf("soak: want -duration > 0, 0 < -rate ≤ 100000 and 0 < -sample ≤ -duration")
	}
	dsn := *dbFlag
	if dsn == "" {
		dir, err := os.MkdirTemp("", "worldforge-soak-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		dsn = "sqlite:" + filepath.Join(dir, "soak.db")
	}
	key, worldID, err := benchSeed(ctx, dsn)
	if err != nil {
		return fmt.Errorf("soak: seed: %w", err)
	}
	largeID := ""
	if *largeWorld != 0 {
		if largeID, err = largeWorldSeed(ctx, dsn, worldID, *largeWorld); err != nil {
			return fmt.Errorf("soak: seed: %w", err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	serverPrefix, err := pinServers(*pin && runtime.NumCPU() >= 2)
	if err != nil {
		return fmt.Errorf("soak: %w", err)
	}
	srv, err := startChild(ctx, serverPrefix, self, &lockedWriter{w: e.Stderr}, "serve", "--addr", "127.0.0.1:0", "--db", dsn, "--log-level", "warn")
	if err != nil {
		return fmt.Errorf("soak: start server: %w", err)
	}
	defer srv.stop()
	if *largeWorld != 0 {
		return e.soakLargeWorld(ctx, srv, key, largeID, *largeWorld, *clients, *duration, int64(maxRSS))
	}

	l := &soakLoad{url: srv.url, key: key, world: worldID,
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	fmt.Fprintf(e.Stdout, "soak: %s at %d req/s against %s (pid %d), sampling every %s\n", *duration, *rate, cli.RedactDSN(dsn), srv.cmd.Process.Pid, *sample)
	fmt.Fprintf(e.Stdout, "%8s %9s %7s %8s %9s %5s %10s %9s %9s\n", "t", "requests", "errors", "RSS MiB", "heap MiB", "fds", "goroutines", "p50", "p99")

	runCtx, cancel := context.WithTimeout(ctx, *duration)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { l.run(runCtx, *rate) })
	var samples []soakSample
	start := time.Now()
	tick := time.NewTicker(*sample)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case <-tick.C:
		case <-runCtx.Done():
			done = true
		}
		if done && len(samples) > 0 && time.Since(start)-samples[len(samples)-1].at < *sample/2 {
			break // the last tick was just now
		}
		s := l.sample(srv.cmd.Process.Pid, time.Since(start))
		samples = append(samples, s)
		fmt.Fprintf(e.Stdout, "%8s %9d %7d %8.1f %9.1f %5d %10d %9s %9s\n", s.at.Round(time.Second), s.requests, s.errors,
			float64(s.rss)/(1<<20), float64(s.heap)/(1<<20), s.fds, s.goroutines, s.p50.Round(time.Microsecond), s.p99.Round(time.Microsecond))
	}
	wg.Wait()
	select {
	case <-srv.done:
		return fmt.Errorf("soak: the server exited during the run")
	default:
	}

	// Every acknowledged proposal is in the database.
	missing, err := l.checkAcked(ctx, dsn)
	if err != nil {
		return fmt.Errorf("soak: check: %w", err)
	}
	v := soakVerdict(samples)
	fmt.Fprintf(e.Stdout, "requests %d, errors %d, proposals acknowledged %d (missing %d), commits acknowledged %d\n",
		l.requests.Load(), l.errors.Load(), l.proposed.Load(), missing, l.committed.Load())
	fmt.Fprintf(e.Stdout, "RSS first third %.1f MiB, last third %.1f MiB (max %.1f); Go heap in use %.1f → %.1f MiB; goroutines %d → %d; fds %d → %d\n",
		v.rssFirst/(1<<20), v.rssLast/(1<<20), v.rssMax/(1<<20), v.heapFirst/(1<<20), v.heapLast/(1<<20), v.goroutinesFirst, v.goroutinesLast, v.fdsFirst, v.fdsLast)
	var problems []string
	if n := l.errors.Load(); n > 0 {
		problems = append(problems, fmt.Sprintf("%d requests failed (first: %s)", n, l.firstError()))
	}
	if missing > 0 {
		problems = append(problems, fmt.Sprintf("%d acknowledged proposals are missing", missing))
	}
	switch {
	case *duration < time.Minute:
		// Warm-up (caches, the heap reaching its working size) dominates.
		fmt.Fprintln(e.Stdout, "soak: under a minute: too short to judge memory growth")
	case v.rssLast > v.rssFirst*1.10 && v.rssLast-v.rssFirst > 8<<20:
		problems = append(problems, "RSS grew")
	}
	if len(problems) > 0 {
		return fmt.Errorf("soak: %s", strings.Join(problems, "; "))
	}
	fmt.Fprintln(e.Stdout, "soak: flat, no errors")
	return nil
}

// soakLoad is the mixed load: per cycle of ten requests, seven read_world,
// one list_campaigns, one propose_quest and one REST commit of an earlier
// proposal.
type soakLoad struct {
	url, key, world string
	client          *http.Client

	requests, errors, proposed, committed atomic.Int64

	mu       sync.Mutex
	pending  []string // proposals not yet committed
	acked    []string // every acknowledged proposal
	firstErr string
	lat      []time.Duration // since the last sample
}

func (l *soakLoad) run(ctx context.Context, rate int) {
	interval := time.Second / time.Duration(rate)
	next := time.Now()
	var wg sync.WaitGroup
	for i := 0; ctx.Err() == nil; i++ {
		next = next.Add(interval)
		if d := time.Until(next); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() { l.one(i % 10) })
	}
	wg.Wait()
}

func (l *soakLoad) one(kind int) {
	start := time.Now()
	var err error
	switch kind {
	case 7:
		_, err = l.tool("list_campaigns", map[string]any{})
	case 8:
		var text string
		text, err = l.tool("propose_quest", map[string]any{"payload": map[string]any{"name": "soak quest"}, "diff_summary": "soak"})
		if err == nil {
			var res struct {
				ProposalID string `json:"proposal_id"`
			}
			if err = json.Unmarshal([]byte(text), &res); err == nil {
				l.mu.Lock()
				l.pending = append(l.pending, res.ProposalID)
				l.acked = append(l.acked, res.ProposalID)
				l.mu.Unlock()
				l.proposed.Add(1)
			}
		}
	case 9:
		l.mu.Lock()
		var id string
		if n := len(l.pending); n > 0 {
			id, l.pending = l.pending[n-1], l.pending[:n-1]
		}
		l.mu.Unlock()
		if id == "" {
			_, err = l.tool("read_world", map[string]any{"id": l.world})
			break
		}
		err = l.commit(id)
		if err == nil {
			l.committed.Add(1)
		}
	default:
		_, err = l.tool("read_world", map[string]any{"id": l.world})
	}
	l.requests.Add(1)
	l.mu.Lock()
	l.lat = append(l.lat, time.Since(start))
	if err != nil {
		l.errors.Add(1)
		if l.firstErr == "" {
			l.firstErr = err.Error()
		}
	}
	l.mu.Unlock()
}

func (l *soakLoad) tool(name string, args map[string]any) (string, error) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
	req, err := http.NewRequest(http.MethodPost, l.url+"/mcp", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+l.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := l.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: HTTP %d: %.200s", name, resp.StatusCode, raw)
	}
	var msg struct {
		Result *struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &msg); err != nil || msg.Result == nil || len(msg.Result.Content) != 1 {
		return "", fmt.Errorf("%s: not a tool result: %.200s", name, raw)
	}
	if msg.Result.IsError {
		return "", fmt.Errorf("%s: tool error %s", name, msg.Result.Content[0].Text)
	}
	return msg.Result.Content[0].Text, nil
}

func (l *soakLoad) commit(id string) error {
	req, err := http.NewRequest(http.MethodPost, l.url+"/proposals/"+id+"/commit", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+l.key)
	resp, err := l.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("commit %s: HTTP %d: %.200s", id, resp.StatusCode, raw)
	}
	return nil
}

func (l *soakLoad) firstError() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.firstErr
}

// soakSample is one sample of the server and the load.
type soakSample struct {
	at               time.Duration
	requests, errors int64
	rss              int64
	fds, goroutines  int
	heap             int64 // Go heap in use, from /metrics (-1: none)
	p50, p99         time.Duration
}

func (l *soakLoad) sample(pid int, at time.Duration) soakSample {
	s := soakSample{at: at, requests: l.requests.Load(), errors: l.errors.Load()}
	s.rss, _ = bench.RSS(pid)
	if ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd"); err == nil {
		s.fds = len(ents)
	}
	m := l.metrics("go_goroutines", "go_memstats_heap_inuse_bytes")
	s.goroutines, s.heap = int(m[0]), int64(m[1])
	l.mu.Lock()
	lat := l.lat
	l.lat = nil
	l.mu.Unlock()
	if len(lat) > 0 {
		slices.Sort(lat)
		s.p50 = lat[len(lat)/2]
		s.p99 = lat[min(len(lat)-1, int(math.Ceil(float64(len(lat))*0.99))-1)]
	}
	return s
}

// metrics reads the named unlabelled gauges from the server's /metrics;
// -1 for each it does not offer.
func (l *soakLoad) metrics(names ...string) []float64 {
	out := make([]float64, len(names))
	for i := range out {
		out[i] = -1
	}
	resp, err := l.client.Get(l.url + "/metrics")
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	for line := range strings.SplitSeq(string(raw), "\n") {
		for i, name := range names {
			if v, ok := strings.CutPrefix(line, name+" "); ok {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					out[i] = f
				}
			}
		}
	}
	return out
}

// checkAcked counts the acknowledged proposals the database does not have.
func (l *soakLoad) checkAcked(ctx context.Context, dsn string) (int, error) {
	db, err := sqlstore.Open(ctx, dsn, nil)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	l.mu.Lock()
	acked := slices.Clone(l.acked)
	l.mu.Unlock()
	missing := 0
	for _, id := range acked {
		if _, err := db.FindProposal(ctx, id); err != nil {
			missing++
		}
	}
	return missing, nil
}

type verdict struct {
	rssFirst, rssLast, rssMax, heapFirst, heapLast     float64
	goroutinesFirst, goroutinesLast, fdsFirst, fdsLast int
}

// soakVerdict compares the first and last thirds of the samples.
func soakVerdict(samples []soakSample) verdict {
	var v verdict
	if len(samples) == 0 {
		return v
	}
	third := max(1, len(samples)/3)
	avg := func(ss []soakSample, f func(soakSample) int64) float64 {
		var sum float64
		for _, s := range ss {
			sum += float64(f(s))
		}
		return sum / float64(len(ss))
	}
	rss := func(s soakSample) int64 { return s.rss }
	heap := func(s soakSample) int64 { return s.heap }
	first, last := samples[:third], samples[len(samples)-third:]
	v.rssFirst, v.rssLast = avg(first, rss), avg(last, rss)
	v.heapFirst, v.heapLast = avg(first, heap), avg(last, heap)
	for _, s := range samples {
		v.rssMax = max(v.rssMax, float64(s.rss))
	}
	v.goroutinesFirst, v.goroutinesLast = samples[0].goroutines, samples[len(samples)-1].goroutines
	v.fdsFirst, v.fdsLast = samples[0].fds, samples[len(samples)-1].fds
	return v
}
