// Command worldforge runs the WorldForge server and its admin tasks.
//
//	worldforge serve [--addr HOST:PORT] [--db DSN] [--demo] [flags]
//	worldforge user create NAME
//	worldforge key create --user USER_ID --scopes s1,s2,… [--name NAME] [--quota-keys 100]
//	worldforge key list --user USER_ID
//	worldforge key revoke KEY
//	worldforge token --user USER_ID [--ttl 1h]
//	worldforge token rotate-key
//	worldforge login-link --user USER_ID [--ttl 15m] [--url URL]
//	worldforge sessions revoke --user USER_ID
//	worldforge world create --user USER_ID --name NAME [--template T] [--seed N|WORD] [--size S] [--populate=false]
//	worldforge world render WORLD_ID -o map.png [--cell-px N]
//	worldforge world add-gm WORLD_ID USER_ID
//	worldforge world add-member WORLD_ID USER_ID
//	worldforge mcp tools --url URL [--api-key K | --jwt T]
//	worldforge mcp call --url URL [--api-key K | --jwt T] TOOL [JSON | @FILE | -]
//	worldforge mcp servers [--config F]
//	worldforge mcp tools [--config F] [--format openai|openai-responses|anthropic|gemini] [SERVER]
//	worldforge mcp call [--config F] SERVER TOOL [JSON | @FILE | -]
//	worldforge mcp gateway [--config F] [--http ADDR] [--separator _ | --no-prefix]
//
// `worldforge help` prints every command with all its flags, and -h after
// a command its flags with their defaults (both from the table in
// commands.go; docs/commands.md shows the same table). Every command but
// the mcp ones takes --db DSN (or WORLDFORGE_DB): "sqlite:PATH" or
// "postgres://…". The default is the embedded SQLite database in the data
// directory ($WORLDFORGE_DATA_DIR, else $XDG_DATA_HOME/worldforge, else
// ~/.local/share/worldforge). Admin commands print only the value they name,
// on one line, to stdout.
//
// The load tests and growth charts are the command worldforge-bench.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/worldforge-go/worldforge/internal/cli"
	"github.com/worldforge-go/worldforge/internal/servecmd"
)

func main() {
	processLookupEnv = os.LookupEnv // the commands run on this process's environment
	cli.Main("worldforge", run)
}

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
	case "serve":
		return servecmd.Serve(ctx, e.Env, rest, nil)
	case "user":
		return e.user(ctx, rest)
	case "key":
		return e.key(ctx, rest)
	case "login-link":
		return e.loginLink(ctx, rest)
	case "sessions":
		return e.sessions(ctx, rest)
	case "token":
		return e.token(ctx, rest)
	case "world":
		return e.world(ctx, rest)
	case "mcp":
		return e.mcp(ctx, rest, os.Stdin)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, program.Usage())
		return nil
	}
	if to, ok := moved[cmd]; ok {
		return cli.UsageErrorf("%s moved out of the server binary: go run ./cmd/worldforge-bench %s [flags]", cmd, to)
	}
	return cli.UsageErrorf("unknown command %q (try: worldforge help)", cmd)
}
