// Command worldforge runs the WorldForge server and its admin tasks.
//
//	worldforge serve [--addr HOST:PORT] [--db DSN] [--demo]
//	worldforge user create NAME
//	worldforge key create --user USER_ID --scopes s1,s2,…
//	worldforge key revoke KEY
//	worldforge token --user USER_ID [--ttl 1h]
//	worldforge token rotate-key
//	worldforge world create --user USER_ID --name NAME [--template T] [--seed N|WORD] [--size S]
//	worldforge world render WORLD_ID -o map.png
//	worldforge world add-gm WORLD_ID USER_ID
//	worldforge world add-member WORLD_ID USER_ID
//	worldforge bench [flags]
//	worldforge plot -in bench.txt -out growth.svg -size KEYS [-metric ns/op|B/op] [-title T] [-note TEXT] [-match RE]
//	worldforge mcp tools --url URL [--api-key K | --jwt T]
//	worldforge mcp call --url URL [--api-key K | --jwt T] TOOL [JSON | @FILE | -]
//
// Every command takes --db DSN (or WORLDFORGE_DB): "sqlite:PATH" or
// "postgres://…". The default is the embedded SQLite database in the data
// directory ($WORLDFORGE_DATA_DIR, else $XDG_DATA_HOME/worldforge, else
// ~/.local/share/worldforge). Admin commands print only the value they name,
// on one line, to stdout.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// SIGTERM or SIGINT starts serve's graceful shutdown (and cancels any
	// other command); once it has, the signals get their default action
	// again, so a second one ends the process at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		var u usageError
		if errors.As(err, &u) && u.msg == "" {
			os.Exit(0) // -h
		}
		fmt.Fprintln(os.Stderr, "worldforge:", err)
		os.Exit(exitCode(err))
	}
}

// env is the process environment as the commands see it.
type env struct {
	getenv func(string) string
	stdout io.Writer
	stderr io.Writer
}

// run is the whole program, callable from tests.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	e := &env{getenv: getenv, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usageErrorf("no command given")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return e.serve(ctx, rest)
	case "user":
		return e.user(ctx, rest)
	case "key":
		return e.key(ctx, rest)
	case "token":
		return e.token(ctx, rest)
	case "world":
		return e.world(ctx, rest)
	case "bench":
		return e.bench(ctx, rest)
	case "plot":
		return e.plot(rest)
	case "mcp":
		return e.mcp(ctx, rest, os.Stdin)
	case "soak":
		return e.soak(ctx, rest)
	case "bench-raw":
		return e.benchRaw(ctx, args[1:])
	case "bench-baseline":
		return e.benchBaseline(ctx, rest)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		return usageErrorf("unknown command %q (try: worldforge help)", cmd)
	}
}

const usage = `usage: worldforge COMMAND [flags] [args]

commands:
  serve [--addr HOST:PORT] [--db DSN] [--demo]    run the server
  user create NAME                               create a user; prints its id
  key create --user USER_ID --scopes s1,s2       create an API key; prints it
  key revoke KEY                                 revoke an API key
  token --user USER_ID [--ttl 1h]                mint a session JWT; prints it
  token rotate-key                               replace the JWT signing key (old tokens stop working); prints its id
  world create --user USER_ID --name NAME [--template T] [--seed N|WORD] [--size S] [--populate=false]
                                                 generate a world; prints its id
  world render WORLD_ID -o map.png [--cell-px N] draw a world's map as PNG (-o - for stdout)
  world add-gm WORLD_ID USER_ID                  make a user a GM of a world
  world add-member WORLD_ID USER_ID              make a user a player in a world
  bench [flags]                                  load-test read_world against a bare go-sdk server
  soak [-duration 10m] [-rate 200]               steady mixed load; reports memory, goroutines, files and errors
  soak -large-world 4096 [-clients 8] [-max-rss 128MiB] [-duration 15s]
                                                 read_world of a huge world on every revision; fails over the peak RSS
  plot -in FILE -out FILE.svg -size KEYS [-metric ns/op|B/op] [-title T] [-note TEXT] [-match RE]
                                                 draw go test -bench output as a log-log growth chart (SVG)
  mcp tools --url URL [--api-key K | --jwt T]    list an MCP endpoint's tools: name<TAB>summary
  mcp call --url URL [--api-key K | --jwt T] TOOL [JSON | @FILE | -]
                                                 call a tool; prints its result as indented JSON

every command takes --db DSN or WORLDFORGE_DB ("sqlite:PATH" or "postgres://…")
mcp commands take --url, --api-key, --jwt instead (or WORLDFORGE_URL, WORLDFORGE_API_KEY, WORLDFORGE_JWT)
`

// usageError is a mistake in the command line (exit code 2).
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

func usageErrorf(format string, args ...any) error {
	return usageError{msg: fmt.Sprintf(format, args...)}
}

func exitCode(err error) int {
	var u usageError
	if errors.As(err, &u) {
		return 2
	}
	return 1
}
