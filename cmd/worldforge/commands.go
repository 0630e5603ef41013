package main

import (
	"github.com/worldforge-go/worldforge/internal/cli"
	"github.com/worldforge-go/worldforge/internal/servecmd"
)

// program is worldforge's command table: the usage text, each command's
// -h and the first table of docs/commands.md come from it, and
// TestCommandTable holds the docs, the package comment and the commands'
// flag sets to it.
var program = &cli.Program{
	Name: "worldforge",
	Commands: []cli.Command{
		{Name: "serve", Synopsis: servecmd.Synopsis, Summary: "run the server",
			Doc: "runs the server and logs to stderr; the limit and quota flags are in [Limits](endpoint.md#limits), logs, metrics, shutdown and memory in [Operations](operations.md)"},
		{Name: "user create", Synopsis: "NAME [--db DSN]", Summary: "create a user; prints its id"},
		{Name: "key create", Synopsis: "--user USER_ID --scopes s1,s2,… [--name NAME] [--quota-keys 100] [--db DSN]", Summary: "create an API key; prints it",
			Doc: "create an API key, named `--name` if given; prints it (shown this once); refused, exit 1, when the user already has `--quota-keys` unrevoked keys (`0` = no limit)"},
		{Name: "key list", Synopsis: "--user USER_ID [--db DSN]", Summary: "list a user's API keys, newest first: one line per key",
			Doc: "list a user's API keys, newest first, one line per key with tab-separated fields: id, name, prefix, scopes, created, last used, revoked (`-` for no name or no time; times RFC 3339 UTC)"},
		{Name: "key revoke", Synopsis: "KEY [--db DSN]", Summary: "revoke an API key"},
		{Name: "token", Synopsis: "--user USER_ID [--ttl 1h] [--db DSN]", Summary: "mint a session JWT; prints it"},
		{Name: "token rotate-key", Synopsis: "[--db DSN]", Summary: "replace the JWT signing key (old tokens stop working); prints its id"},
		{Name: "login-link", Synopsis: "--user USER_ID [--ttl 15m] [--url URL] [--db DSN]", Summary: "print a one-time web console sign-in URL",
			Doc: "print a one-time web console sign-in URL for the user (it works once, within `--ttl`; `--url` defaults to `$WORLDFORGE_URL`, else http://127.0.0.1:8080)"},
		{Name: "sessions revoke", Synopsis: "--user USER_ID [--db DSN]", Summary: "end every web console session of a user; prints how many",
			Doc: "end every web console session of a user (every replica refuses them within 1 s); prints how many"},
		{Name: "world create", Synopsis: "--user USER_ID --name NAME [--template T] [--seed N|WORD] [--size small|medium|large] [--populate=false] [--db DSN]",
			Summary: "generate a world; prints its id",
			Doc:     "generate a world; prints its id (a random seed, or the integer a word maps to, goes to stderr)"},
		{Name: "world render", Synopsis: "WORLD_ID -o map.png [--cell-px N] [--db DSN]", Summary: "draw a world's map as PNG (-o - for stdout)",
			Doc: "draw a world's map as PNG; prints nothing (`-o -` writes the PNG to stdout)"},
		{Name: "world add-gm", Synopsis: "WORLD_ID USER_ID [--db DSN]", Summary: "make a user a GM of a world"},
		{Name: "world add-member", Synopsis: "WORLD_ID USER_ID [--db DSN]", Summary: "make a user a player in a world"},
		{Name: "mcp tools", Synopsis: "--url URL [--api-key K | --jwt T] [--protocol REV] [--timeout 30s]",
			Summary: "list an MCP endpoint's tools: name<TAB>summary",
			Doc:     "one line per tool: name, a tab, the first sentence of its description"},
		{Name: "mcp call", Synopsis: "--url URL [--api-key K | --jwt T] [--protocol REV] [--timeout 30s] TOOL [JSON | @FILE | -]",
			Summary: "call a tool; prints its result as indented JSON",
			Doc:     "call a tool; prints its unwrapped result as indented JSON (a tool error goes to stderr, exit 1)"},
		{Name: "mcp servers", Synopsis: "[--config F] [--timeout 30s]",
			Summary: "a status table of the configured MCP servers (exit 1 if one failed)",
			Doc:     "a status table of the configured MCP servers: transport, phase, tool/resource/prompt counts, tools hidden by allowedTools/disabledTools, error (exit 1 if one failed)"},
		{Name: "mcp tools", Synopsis: "[--config F] [--timeout 30s] [--format openai|openai-responses|anthropic|gemini] [SERVER]",
			Summary: "server<TAB>tool<TAB>description for each configured server's tools, or with --format the tools as JSON for a model API",
			Doc:     "`server<TAB>tool<TAB>description` for each configured server's tools; with `--format`, the tools as a model API takes them (JSON, names `server_tool`, schemas normalized for the API; what was lost goes to stderr as `note:` lines)"},
		{Name: "mcp call", Synopsis: "[--config F] [--timeout 30s] SERVER TOOL [JSON | @FILE | -]",
			Summary: "call a configured server's tool; prints its result as mcp call --url does",
			Doc:     "call a configured server's tool; prints its result as `mcp call --url` does"},
		{Name: "mcp gateway", Synopsis: "[--config F] [--http ADDR] [--separator _ | --no-prefix]",
			Summary: "serve every configured server's tools as one MCP server (stdio, or streamable HTTP on ADDR)"},
	},
	Footer: `every command but mcp takes --db DSN or WORLDFORGE_DB ("sqlite:PATH" or "postgres://…")
mcp commands take --url, --api-key, --jwt instead (or WORLDFORGE_URL, WORLDFORGE_API_KEY, WORLDFORGE_JWT)
load tests (compare, soak) and growth charts (plot): go run ./cmd/worldforge-bench help
`,
}

// moved are the commands that left the server binary for
// cmd/worldforge-bench, with the command that replaces each.
var moved = map[string]string{
	"bench":          "compare",
	"soak":           "soak",
	"plot":           "plot",
	"bench-raw":      "raw",
	"bench-baseline": "baseline",
}
