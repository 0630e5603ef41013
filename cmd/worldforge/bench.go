package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/auth"
	"github.com/worldforge-go/worldforge/bench"
	"github.com/worldforge-go/worldforge/mcpserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// bench runs the load comparison: `tools/call read_world` over real HTTP
// with N concurrent keep-alive clients against (1) a bare go-sdk stateless
// server whose only tool returns a fixed 2 KB JSON, the floor this endpoint
// stands on, and (2) `worldforge serve` on a fresh SQLite store with auth,
// a store read and an audit row per call. Both run as child processes of
// this one so their RSS can be read apart, and the cells are interleaved.
func (e *env) bench(ctx context.Context, args []string) error {
	fs := newFlags("bench")
	conc := fs.String("c", "8,64", "comma-separated concurrency levels")
	duration := fs.Duration("duration", 10*time.Second, "length of each measured cell")
	warmup := fs.Duration("warmup", time.Second, "unmeasured warm-up before each cell")
	reps := fs.Int("reps", 1, "interleaved repetitions of each cell")
	protocol := fs.String("protocol", bench.Protocol20251125, "protocol revision of the requests: "+bench.Protocol20251125+" or "+bench.Protocol20260728)
	pin := fs.Bool("pin", runtime.NumCPU() >= 2, "run each server on CPU 0 alone (via taskset) and the load generator on the other CPUs")
	profile := fs.String("cpuprofile", "", "write the worldforge server's CPU profile to this file, and the baseline's to FILE.baseline")
	dbf := fs.String("db", "", "database for the worldforge server (default: a fresh SQLite file in a temporary directory)")
	if err := e.parse(fs, args); err != nil {
		return err
	}
	if _, err := positional(fs, 0, "no arguments"); err != nil {
		return err
	}
	levels, err := parseLevels(*conc)
	if err != nil {
		return usageErrorf("bench: -c: %v", err)
	}
	if *duration <= 0 || *duration > bench.MaxDuration || *warmup < 0 || *reps < 1 || *reps > 10 {
		return usageErrorf("bench: want 0 < -duration ≤ %s, -warmup ≥ 0, 1 ≤ -reps ≤ 10", bench.MaxDuration)
	}
	if *protocol != bench.Protocol20251125 && *protocol != bench.Protocol20260728 {
		return usageErrorf("bench: -protocol must be %s or %s", bench.Protocol20251125, bench.Protocol20260728)
	}

	tmp, err := os.MkdirTemp("", "worldforge-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dsn := *dbf
	if dsn == "" {
		dsn = "sqlite:" + filepath.Join(tmp, "bench.db")
	}
	key, worldID, err := benchSeed(ctx, dsn)
	if err != nil {
		return fmt.Errorf("bench: seed: %w", err)
	}

	self, err := os.Executable()
	if err != nil {
		return err
	}
	prefix, err := pinServers(*pin)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	baseArgs := []string{"bench-baseline", "--addr", "127.0.0.1:0"}
	if *profile != "" {
		baseArgs = append(baseArgs, "--cpuprofile", *profile+".baseline")
	}
	base, err := startChild(ctx, prefix, self, e.stderr, baseArgs...)
	if err != nil {
		return fmt.Errorf("bench: start baseline: %w", err)
	}
	defer base.stop()
	rawArgs := []string{"bench-raw", "--addr", "127.0.0.1:0"}
	if *profile != "" {
		rawArgs = append(rawArgs, "--cpuprofile", *profile+".raw")
	}
	raw, err := startChild(ctx, prefix, self, e.stderr, rawArgs...)
	if err != nil {
		return fmt.Errorf("bench: start the raw limit: %w", err)
	}
	defer raw.stop()
	serveArgs := []string{"serve", "--addr", "127.0.0.1:0", "--db", dsn, "--log-level", "info", "--bench-noop"}
	if *profile != "" {
		serveArgs = append(serveArgs, "--cpuprofile", *profile)
	}
	ours, err := startChild(ctx, prefix, self, e.stderr, serveArgs...)
	if err != nil {
		return fmt.Errorf("bench: start worldforge: %w", err)
	}
	defer ours.stop()
	// The same server with the fast path off: every request through the
	// go-sdk's stateless handler.
	sdkPath, err := startChild(ctx, prefix, self, e.stderr, "serve", "--addr", "127.0.0.1:0", "--db", dsn, "--log-level", "info", "--fast-path=false")
	if err != nil {
		return fmt.Errorf("bench: start worldforge (go-sdk path): %w", err)
	}
	defer sdkPath.stop()

	type target struct {
		name  string
		child *child
		hdr   http.Header
		tool  string
		args  map[string]any
	}
	wfHeader := bench.ToolCallHeaders(*protocol, "read_world")
	wfHeader.Set("Authorization", "Bearer "+key)
	noopHeader := bench.ToolCallHeaders(*protocol, mcpserver.ToolBenchNoop)
	noopHeader.Set("Authorization", "Bearer "+key)
	targets := []target{
		{"net/http raw (limit)", raw, bench.ToolCallHeaders(*protocol, "read_world"), "read_world", map[string]any{"id": "world_bench"}},
		{"go-sdk bare (floor)", base, bench.ToolCallHeaders(*protocol, "read_world"), "read_world", map[string]any{"id": "world_bench"}},
		{"worldforge bench_noop", ours, noopHeader, mcpserver.ToolBenchNoop, map[string]any{"id": "x"}},
		{"worldforge read_world", ours, wfHeader, "read_world", map[string]any{"id": worldID}},
		{"  same, go-sdk path only", sdkPath, wfHeader, "read_world", map[string]any{"id": worldID}},
	}
	placement := "servers and load generator share every CPU"
	if *pin {
		placement = fmt.Sprintf("each server pinned to CPU 0, load generator on CPUs 1-%d", runtime.NumCPU()-1)
	}
	fmt.Fprintf(e.stderr, "bench: %s, %s per cell after %s warm-up, %d interleaved rep(s), %s\n", *protocol, *duration, *warmup, *reps, placement)
	var rows []bench.Row
	for _, c := range levels {
		sums := make([]bench.Row, len(targets))
		cpu := make([]time.Duration, len(targets)) // server CPU over the cells, warm-up included
		reqs := make([]int64, len(targets))
		for rep := 0; rep < *reps; rep++ {
			for i, tg := range targets {
				pid := tg.child.cmd.Process.Pid
				cpu0, _ := bench.CPUTime(pid)
				sampler := bench.StartRSSSampler(pid)
				body := bench.ToolCallBody(1, *protocol, tg.tool, tg.args)
				res, err := bench.Load(ctx, bench.LoadConfig{
					Target:      bench.Target{URL: tg.child.url + "/mcp", Header: tg.hdr},
					Body:        body,
					Concurrency: c,
					Duration:    *duration,
					Warmup:      *warmup,
				})
				peak, _, _ := sampler.Stop()
				cpu1, _ := bench.CPUTime(pid)
				if err != nil {
					return fmt.Errorf("bench: %s at c=%d: %w", tg.name, c, err)
				}
				fmt.Fprintf(e.stderr, "  %-24s c=%-4d %s\n", tg.name, c, res)
				sums[i] = accumulate(sums[i], tg.name, c, res, peak)
				cpu[i] += cpu1 - cpu0
				reqs[i] += res.Requests
			}
		}
		for i, r := range sums {
			r.Result.RPS /= float64(*reps)
			if reqs[i] > 0 {
				// The warm-up's requests are not counted but its CPU is:
				// scale the measured requests by the time share.
				share := float64(*duration+*warmup) / float64(*duration)
				r.CPUPerReq = time.Duration(float64(cpu[i]) / (float64(reqs[i]) * share))
			}
			rows = append(rows, r)
		}
	}
	bench.SetRatios(rows, "go-sdk bare (floor)")
	bench.SetLimitRatios(rows, "net/http raw (limit)")
	bench.FormatTable(e.stdout, rows)
	return nil
}

// accumulate adds a repetition's figures to a row: requests/s summed (and
// averaged by the caller), the worst percentiles, the peak RSS.
func accumulate(r bench.Row, name string, c int, res *bench.Result, rss int64) bench.Row {
	if r.Result == nil {
		r = bench.Row{Name: name, Concurrency: c, Result: &bench.Result{}}
	}
	r.Result.Requests += res.Requests
	r.Result.Errors += res.Errors
	r.Result.RPS += res.RPS
	r.Result.Elapsed += res.Elapsed
	r.Result.P50 = max(r.Result.P50, res.P50)
	r.Result.P90 = max(r.Result.P90, res.P90)
	r.Result.P99 = max(r.Result.P99, res.P99)
	r.Result.Max = max(r.Result.Max, res.Max)
	if r.Result.FirstError == "" {
		r.Result.FirstError = res.FirstError
	}
	r.RSS = max(r.RSS, rss)
	return r
}

func parseLevels(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 || n > bench.MaxConcurrency {
			return nil, fmt.Errorf("%q is not a concurrency between 1 and %d", part, bench.MaxConcurrency)
		}
		out = append(out, n)
	}
	return out, nil
}

// pinServers, when pin is set, moves this process (the load generator) off
// CPU 0 and returns the command prefix that runs a server child on CPU 0
// alone; otherwise it does nothing and returns no prefix.
func pinServers(pin bool) ([]string, error) {
	if !pin {
		return nil, nil
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		return nil, fmt.Errorf("-pin needs taskset (util-linux); run with -pin=false: %w", err)
	}
	others := make([]int, 0, runtime.NumCPU()-1)
	for c := 1; c < runtime.NumCPU(); c++ {
		others = append(others, c)
	}
	if err := pinSelf(others); err != nil {
		return nil, err
	}
	return []string{taskset, "-c", "0"}, nil
}

// benchSeed makes a user with an all-scope key and a small world on dsn.
func benchSeed(ctx context.Context, dsn string) (key, worldID string, err error) {
	db, err := sqlstore.Open(ctx, dsn, nil)
	if err != nil {
		return "", "", err
	}
	defer db.Close()
	ids, err := createDemo(ctx, db)
	if err != nil {
		return "", "", err
	}
	a, err := auth.New(ctx, db, nil)
	if err != nil {
		return "", "", err
	}
	// A world whose read_world answer is about the size of the baseline's
	// fixed payload: an 8×8 grid with every cell written out.
	const side = 8
	cells := make([]map[string]any, 0, side*side)
	terrain := []string{"plains", "forest", "hills", "water"}
	for y := range side {
		for x := range side {
			cells = append(cells, map[string]any{"x": x, "y": y, "t": terrain[(x*7+y*3)%len(terrain)], "e": (x + y) % 5})
		}
	}
	w := &wf.World{OwnerID: ids.Owner, Name: "Bench World", Cols: side, Rows: side,
		JSON: mustJSON(map[string]any{"grid": map[string]any{"type": "hex", "cols": side, "rows": side, "cells": cells}})}
	if err := db.CreateWorld(ctx, w); err != nil {
		return "", "", err
	}
	key, _, err = a.CreateKey(ctx, ids.Owner, []string{wf.ScopeAll})
	return key, w.ID, err
}

// benchBaseline serves the bare go-sdk floor (a hidden command that bench
// starts as a child process).
func (e *env) benchBaseline(ctx context.Context, args []string) error {
	return e.benchServer(ctx, "bench-baseline", bench.NewBaselineHandler(), args)
}

// benchRaw serves the plain net/http JSON-RPC limit (a hidden command that
// bench starts as a child process).
func (e *env) benchRaw(ctx context.Context, args []string) error {
	return e.benchServer(ctx, "bench-raw", bench.NewRawHandler(), args)
}

func (e *env) benchServer(ctx context.Context, name string, h http.Handler, args []string) error {
	fs := newFlags(name)
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	if err := e.parse(fs, args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		defer stop()
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(e.stderr, "worldforge: listening on http://%s/mcp\n", ln.Addr())
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// child is a server process started by bench.
type child struct {
	cmd   *exec.Cmd
	url   string
	done  chan struct{}
	stdin io.Closer
}

// startChild runs this binary with args (behind the prefix command, e.g.
// taskset, if any) and waits for its "listening on" line on stderr; the
// rest of its stderr is copied to logw.
func startChild(ctx context.Context, prefix []string, self string, logw io.Writer, args ...string) (*child, error) {
	argv := append(append(append([]string{}, prefix...), self), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	// A pipe for stdin, held open until the child ends: a child that
	// watches its stdin (the tests' re-executed binary) lives as long as
	// this process does.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, done: make(chan struct{}), stdin: stdin}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if _, rest, ok := strings.Cut(line, "listening on "); ok && strings.HasPrefix(line, "worldforge:") {
				select {
				case urls <- strings.TrimSuffix(strings.TrimSpace(rest), "/mcp"):
				default:
				}
				continue
			}
			if isRequestLine(line) {
				continue // one a request: thousands a second under load
			}
			fmt.Fprintln(logw, "  [child]", line)
		}
		cmd.Wait()
		c.stdin.Close()
		close(c.done)
	}()
	select {
	case c.url = <-urls:
		return c, nil
	case <-c.done:
		return nil, fmt.Errorf("%s exited before listening", strings.Join(args, " "))
	case <-time.After(30 * time.Second):
		c.stop()
		return nil, errors.New("timed out waiting for the server to listen")
	case <-ctx.Done():
		c.stop()
		return nil, ctx.Err()
	}
}

// isRequestLine reports whether line is serve's per-request log line at
// level INFO (text format). The servers under test log as deployed, but
// the load generator does not copy those lines: at tens of thousands a
// second they would cost its CPU and bury everything else.
func isRequestLine(line string) bool {
	return strings.Contains(line, " level=INFO msg=request ")
}

// stop ends the child: SIGINT, then SIGKILL after 5 s.
func (c *child) stop() {
	if c.cmd.Process == nil {
		return
	}
	c.cmd.Process.Signal(os.Interrupt)
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
	}
}
