// Command worldforge-bench load-tests the WorldForge server and draws the
// growth charts of docs/performance.md.
//
//	worldforge-bench compare [-c 1,8,64] [-duration 10s] [-reps 2] [-protocol REV] [-client raw|nethttp] [-nice N] [-postgres URL] [-mcpgo DIR|off] [-ts DIR|off] [-only NAMES] [flags]
//	worldforge-bench soak [-duration 10m] [-rate 200] [-sample 10s]
//	worldforge-bench soak -large-world N [-clients 8] [-max-rss 128MiB] [-duration 15s]
//	worldforge-bench plot -in FILE -out FILE.svg -size KEYS [-metric ns/op|B/op] [-title T] [-note TEXT] [-match RE]
//
// compare and soak run every server under test as a child process of this
// program: its hidden commands serve (worldforge's serve command, the same
// code as `worldforge serve`, with the bench-only tool bench_noop behind
// --bench-noop), raw (the plain net/http limit) and baseline (the bare
// go-sdk floor). `worldforge-bench help` prints every command with all its
// flags (the table in commands.go, which docs/commands.md shows too). The
// server binary, cmd/worldforge, contains none of this.
package main

import (
	"context"
	"fmt"
	"io"

	"github.com/worldforge-go/worldforge/bench"
	"github.com/worldforge-go/worldforge/internal/cli"
	"github.com/worldforge-go/worldforge/internal/servecmd"
)

func main() { cli.Main("worldforge-bench", run) }

// env is the process environment as the commands see it.
type env struct{ *cli.Env }

// run is the whole program, callable from tests.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	e := &env{&cli.Env{Getenv: getenv, Stdout: stdout, Stderr: stderr, Program: program}}
	if len(args) == 0 {
		fmt.Fprint(stderr, program.Usage())
		return cli.UsageErrorf("no command given")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "compare":
		return e.compare(ctx, rest)
	case "soak":
		return e.soak(ctx, rest)
	case "plot":
		return e.plot(rest)
	case "serve":
		return servecmd.Serve(ctx, e.Env, rest, &servecmd.Options{BenchNoopPayload: bench.BaselinePayload()})
	case "raw":
		return e.raw(ctx, rest)
	case "baseline":
		return e.baseline(ctx, rest)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, program.Usage())
		return nil
	}
	return cli.UsageErrorf("unknown command %q (try: worldforge-bench help)", cmd)
}
