package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/worldforge-go/worldforge/internal/cli"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/client"
	"github.com/worldforge-go/worldforge/mcpkit"
	"github.com/worldforge-go/worldforge/mcpkit/llm"
)

// The MCP client commands, on the Go SDK (package client):
//
//	mcp tools --url URL [--api-key K | --jwt T]
//	mcp call  --url URL [--api-key K | --jwt T] TOOL [JSON | @FILE | -]
//
// --url selects the one-endpoint form; without it (and without
// WORLDFORGE_URL) the commands say that it is needed. The config-file forms
// (mcp servers, mcp tools [--config F] [SERVER], mcp call [--config F]
// SERVER TOOL) are to come beside it, chosen when --url is absent.

// Environment fallbacks of the mcp flags.
const (
	envMCPURL    = "WORLDFORGE_URL"
	envMCPAPIKey = "WORLDFORGE_API_KEY"
	envMCPJWT    = "WORLDFORGE_JWT"
)

// maxToolArgs bounds the JSON arguments read from a file or stdin: the
// server's own body limit.
const maxToolArgs = 4 << 20

// mcpNotes follows the mcp rows of the command table in `mcp help` and
// in an mcp command's -h.
const mcpNotes = `--url is the endpoint URL (…/mcp, as serve --demo prints it) or the server's
base URL; the credential is an API key or a session JWT. Environment:
WORLDFORGE_URL, WORLDFORGE_API_KEY, WORLDFORGE_JWT. Without --url the servers
come from the config files: --config F alone, else ./.worldforge/mcp.json over
$XDG_CONFIG_HOME/worldforge/mcp.json (formats: {"servers":[…]} or
{"mcpServers":{…}}). Flags come before the positional arguments.
`

// mcpUsage is `worldforge mcp help`: the mcp rows of the command table and
// mcpNotes.
func mcpUsage() string {
	return "usage: worldforge mcp SUBCOMMAND [flags] [args]\n\ncommands:\n" + program.List("mcp ") + "\n" + mcpNotes
}

// mcp runs "mcp SUBCOMMAND"; stdin is read by "mcp call TOOL -".
func (e *env) mcp(ctx context.Context, args []string, stdin io.Reader) error {
	if len(args) == 0 {
		return cli.UsageErrorf("mcp: want a subcommand: servers, tools, call or gateway (try: worldforge mcp help)")
	}
	switch args[0] {
	case "tools":
		return e.mcpTools(ctx, args[1:])
	case "call":
		return e.mcpCall(ctx, args[1:], stdin)
	case "servers":
		return e.mcpServers(ctx, args[1:])
	case "gateway":
		return e.mcpGateway(ctx, args[1:])
	case "help", "-h", "--help":
		fmt.Fprint(e.Stdout, mcpUsage())
		return nil
	default:
		return cli.UsageErrorf("mcp: unknown subcommand %q (want servers, tools, call or gateway)", args[0])
	}
}

// mcpFlags are the flags of the one-endpoint form.
type mcpFlags struct {
	url, apiKey, jwt, protocol, config string
	timeout                            time.Duration
	format                             string // mcp tools --format
}

func newMCPFlags(name string) (*flag.FlagSet, *mcpFlags) {
	fs := cli.NewFlags(name)
	f := &mcpFlags{}
	fs.StringVar(&f.url, "url", "", "the MCP endpoint (…/mcp) or the server's base URL (default $"+envMCPURL+")")
	fs.StringVar(&f.apiKey, "api-key", "", "an API key (default $"+envMCPAPIKey+")")
	fs.StringVar(&f.jwt, "jwt", "", "a session JWT (default $"+envMCPJWT+")")
	fs.StringVar(&f.protocol, "protocol", "", `the MCP revision to ask for, e.g. 2025-11-25 ("": the go-sdk default, 2026-07-28)`)
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "give up after this long (0: never)")
	fs.StringVar(&f.config, "config", "", "without --url: the one config file to read (default: the project and user files)")
	return fs, f
}

// parseFlagsFirst parses flags up to the first positional argument (a
// TOOL's JSON may look like anything after it). -h prints the command's
// rows and flags, then mcpNotes.
func (e *env) parseFlagsFirst(fs *flag.FlagSet, args []string) error {
	err := e.ParseFlagsFirst(fs, args)
	if cli.IsHelp(err) {
		fmt.Fprint(e.Stderr, "\n"+mcpNotes)
	}
	return err
}

// flagAfter reports a flag-like argument among the extra positionals, to
// explain the usage error they cause.
func flagAfter(extra []string) string {
	for _, a := range extra {
		if len(a) > 1 && a[0] == '-' {
			return fmt.Sprintf(" (flags such as %s go before the positional arguments)", a)
		}
	}
	return ""
}

// useConfig reports whether a command takes the config-file form: no
// --url and no WORLDFORGE_URL, and a config file named or present.
func (e *env) useConfig(f *mcpFlags) bool {
	if f.url != "" || e.Getenv(envMCPURL) != "" {
		return false
	}
	if f.config != "" {
		return true
	}
	cwd, err := os.Getwd()
	if err != nil {
		return false
	}
	for _, p := range []string{mcpkit.ProjectConfigPath(cwd), mcpkit.UserConfigPath(e.Getenv)} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// mcpOptions resolves the endpoint and the credential of the one-endpoint
// form: flags first, then the environment. A credential given by flag
// hides the environment's.
func (e *env) mcpOptions(name string, f *mcpFlags) (client.Options, error) {
	url := f.url
	if url == "" {
		url = e.Getenv(envMCPURL)
	}
	if url == "" {
		return client.Options{}, cli.UsageErrorf("%s: --url (or %s) is needed: the endpoint URL …/mcp that serve --demo prints, or the server's base URL", name, envMCPURL)
	}
	if _, err := client.EndpointURL(url); err != nil {
		return client.Options{}, cli.UsageErrorf("%s: --url %q: want an http(s) URL such as http://127.0.0.1:8080/mcp", name, url)
	}
	if f.apiKey != "" && f.jwt != "" {
		return client.Options{}, cli.UsageErrorf("%s: give --api-key or --jwt, not both", name)
	}
	key, jwt := f.apiKey, f.jwt
	if key == "" && jwt == "" {
		key, jwt = e.Getenv(envMCPAPIKey), e.Getenv(envMCPJWT)
	}
	if key == "" && jwt == "" {
		return client.Options{}, cli.UsageErrorf("%s: a credential is needed: --api-key or --jwt (or %s / %s)", name, envMCPAPIKey, envMCPJWT)
	}
	return client.Options{
		BaseURL:         url,
		APIKey:          key,
		JWT:             jwt,
		ProtocolVersion: f.protocol,
		ClientInfo:      client.ClientInfo{Name: "worldforge-cli", Version: worldforge.Version},
	}, nil
}

// mcpConnect connects with the resolved options under the --timeout, on
// an HTTP transport of the command's own. done closes the client and the
// transport's connections.
func mcpConnect(ctx context.Context, name string, f *mcpFlags, opts client.Options) (_ context.Context, _ *client.Client, done func(), _ error) {
	cancel := func() {}
	if f.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, f.timeout)
	}
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	opts.HTTPClient = hc
	c, err := client.Connect(ctx, opts)
	if err != nil {
		hc.CloseIdleConnections()
		cancel()
		return nil, nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return ctx, c, func() {
		c.Close()
		hc.CloseIdleConnections()
		cancel()
	}, nil
}

// mcpTools: mcp tools --url URL → one line per tool: its name, a tab, the
// first sentence of its description.
func (e *env) mcpTools(ctx context.Context, args []string) error {
	const name = "mcp tools"
	fs, f := newMCPFlags(name)
	fs.StringVar(&f.format, "format", "", "without --url: print the tools as JSON for a model API: openai, openai-responses, anthropic or gemini")
	if err := e.parseFlagsFirst(fs, args); err != nil {
		return err
	}
	if f.format != "" {
		if _, err := llm.ParseFormat(f.format); err != nil {
			return cli.UsageErrorf("%s: --format: %v", name, err)
		}
	}
	if e.useConfig(f) {
		return e.mcpFleetTools(ctx, name, f, fs.Args())
	}
	if f.format != "" {
		return cli.UsageErrorf("%s: --format takes the configured servers, not --url", name)
	}
	opts, err := e.mcpOptions(name, f)
	if err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return cli.UsageErrorf("%s: with --url, want no arguments, got %q%s", name, fs.Args(), flagAfter(fs.Args()))
	}
	ctx, c, done, err := mcpConnect(ctx, name, f, opts)
	if err != nil {
		return err
	}
	defer done()
	tools, err := c.ListTools(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var out bytes.Buffer
	for _, t := range tools {
		fmt.Fprintf(&out, "%s\t%s\n", t.Name, firstSentence(t.Description))
	}
	_, err = e.Stdout.Write(out.Bytes())
	return err
}

// firstSentence is the first line of s, up to its first ". ".
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	s, _, _ = strings.Cut(s, "\n")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return strings.TrimSpace(s)
}

// mcpCall: mcp call --url URL TOOL [JSON | @FILE | -] → the unwrapped
// result, as indented JSON (a text result as it is). A tool error is the
// command's error (exit 1).
func (e *env) mcpCall(ctx context.Context, args []string, stdin io.Reader) error {
	const name = "mcp call"
	fs, f := newMCPFlags(name)
	if err := e.parseFlagsFirst(fs, args); err != nil {
		return err
	}
	if e.useConfig(f) {
		return e.mcpFleetCall(ctx, name, f, fs.Args(), stdin)
	}
	opts, err := e.mcpOptions(name, f)
	if err != nil {
		return err
	}
	pos := fs.Args()
	if len(pos) == 0 || len(pos) > 2 {
		return cli.UsageErrorf("%s: with --url, want TOOL [JSON | @FILE | -], got %d argument(s)%s", name, len(pos), flagAfter(pos))
	}
	if hint := flagAfter(pos[1:]); hint != "" && pos[1] != "-" {
		return cli.UsageErrorf("%s: %q is not JSON arguments%s", name, pos[1], hint)
	}
	tool := pos[0]
	if tool == "" || strings.HasPrefix(tool, "-") {
		return cli.UsageErrorf("%s: %q is not a tool name", name, tool)
	}
	toolArgs := json.RawMessage("{}")
	if len(pos) == 2 {
		if toolArgs, err = readToolArgs(name, pos[1], stdin); err != nil {
			return err
		}
	}
	ctx, c, done, err := mcpConnect(ctx, name, f, opts)
	if err != nil {
		return err
	}
	defer done()
	var res json.RawMessage
	if err := c.CallToolInto(ctx, tool, toolArgs, &res); err != nil {
		var te *client.ToolError
		if errors.As(err, &te) {
			return err // "MCP tool <name> failed: <detail>"
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	return writeResult(e.Stdout, res)
}

// readToolArgs reads the JSON arguments: literal, @FILE or - (stdin). They
// must be one JSON object.
func readToolArgs(name, arg string, stdin io.Reader) (json.RawMessage, error) {
	var data []byte
	source := "JSON"
	switch {
	case arg == "-":
		source = "stdin"
		if stdin == nil {
			return nil, cli.UsageErrorf("%s: no stdin to read", name)
		}
		var err error
		if data, err = io.ReadAll(io.LimitReader(stdin, maxToolArgs+1)); err != nil {
			return nil, fmt.Errorf("%s: read stdin: %w", name, err)
		}
	case strings.HasPrefix(arg, "@"):
		source = arg[1:]
		file, err := os.Open(source)
		if err != nil {
			return nil, cli.UsageErrorf("%s: arguments file: %v", name, err)
		}
		defer file.Close()
		if data, err = io.ReadAll(io.LimitReader(file, maxToolArgs+1)); err != nil {
			return nil, fmt.Errorf("%s: read %s: %w", name, source, err)
		}
	default:
		data = []byte(arg)
	}
	if len(data) > maxToolArgs {
		return nil, cli.UsageErrorf("%s: arguments from %s are over %d bytes", name, source, maxToolArgs)
	}
	data = bytes.TrimSpace(data)
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, cli.UsageErrorf("%s: arguments from %s are not valid JSON: %v", name, source, err)
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, cli.UsageErrorf("%s: arguments from %s must be a JSON object, like {\"id\":\"world_…\"}", name, source)
	}
	return json.RawMessage(data), nil
}

// writeResult prints an unwrapped result: a string as its text, anything
// else as indented JSON.
func writeResult(w io.Writer, res json.RawMessage) error {
	var text string
	if err := json.Unmarshal(res, &text); err == nil {
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		_, err := io.WriteString(w, text)
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, res, "", "  "); err != nil {
		return fmt.Errorf("mcp call: indent result: %w", err)
	}
	out.WriteByte('\n')
	_, err := w.Write(out.Bytes())
	return err
}
