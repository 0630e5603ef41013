package main

import (
	"github.com/worldforge-go/worldforge/internal/cli"
	"github.com/worldforge-go/worldforge/internal/servecmd"
)

// program is worldforge-bench's command table: the usage text, each
// command's -h and the second table of docs/commands.md come from it, and
// TestCommandTable holds the docs, the package comment and the commands'
// flag sets to it. The hidden rows are the servers compare and soak start
// as child processes of this program.
var program = &cli.Program{
	Name: "worldforge-bench",
	Commands: []cli.Command{
		{Name: "compare", Synopsis: "[-c 1,8,64] [-duration 10s] [-warmup 1s] [-reps 2] [-protocol 2026-07-28|2025-11-25] [-client raw|nethttp] [-pin=false] [-nice N] [-cpuprofile FILE] " +
			"[-db DSN] [-postgres URL] [-mcpgo DIR|off] [-ts DIR|off] [-only NAMES]",
			Summary: "load-test read_world and a write against the other MCP stacks; prints the table",
			Doc:     "the load comparison table ([Performance](performance.md)): read_world against raw `net/http`, the bare go-sdk, mcp-go and the TypeScript SDK, and propose_wiki_page, in one run, with each server's share of its core"},
		{Name: "soak", Synopsis: "[-duration 10m] [-rate 200] [-sample 10s] [-db DSN] [-pin=false]",
			Summary: "steady mixed load; reports memory, goroutines, files and errors",
			Doc:     "memory, goroutines, files and errors over a steady mixed load (exit 1 on a failed request, a lost write or growth)"},
		{Name: "soak", Synopsis: "-large-world N [-clients 8] [-max-rss 128MiB] [-duration 15s] [-db DSN] [-pin=false]",
			Summary: "read_world of a huge world on every revision; fails over the peak RSS",
			Doc: "peak server RSS while `-clients` callers read an N×N world with `read_world` for `-duration` on each protocol revision " +
				"(no header, 2024-11-05 … 2026-07-28) and in a JSON-RPC batch (exit 1 on a failed call or a peak over `-max-rss`)"},
		{Name: "plot", Synopsis: "-in FILE -out FILE.svg -size KEYS [-metric ns/op|B/op] [-title T] [-note TEXT] [-match RE]",
			Summary: "draw go test -bench output as a log-log growth chart (SVG)",
			Doc:     "writes `go test -bench` output as a log-log growth chart; prints nothing"},
		{Name: "serve", Synopsis: servecmd.Synopsis + " [--bench-noop]", Hidden: true,
			Summary: "worldforge's serve, with the bench-only tool bench_noop (--bench-noop)"},
		{Name: "raw", Synopsis: "[--addr HOST:PORT] [--cpuprofile FILE]", Hidden: true,
			Summary: "serve the plain net/http JSON-RPC limit"},
		{Name: "baseline", Synopsis: "[--addr HOST:PORT] [--cpuprofile FILE]", Hidden: true,
			Summary: "serve the bare go-sdk floor"},
	},
	Footer: `compare and soak start every server as a child process of this program; run them from the
repository root, where compare finds ./bench/mcpgo and an installed ./interop
`,
}
