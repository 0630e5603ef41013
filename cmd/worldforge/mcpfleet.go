package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/worldforge-go/worldforge/internal/cli"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/client"
	"github.com/worldforge-go/worldforge/mcpkit"
	"github.com/worldforge-go/worldforge/mcpkit/llm"
)

// The config-file forms of the mcp commands, on the toolkit (package
// mcpkit):
//
//	mcp servers [--config F]                       the configured servers: phase, tools, hidden tools, error
//	mcp tools   [--config F] [SERVER]              their tools
//	mcp tools   [--config F] --format FMT [SERVER] their tools as a model API takes them (JSON)
//	mcp call    [--config F] SERVER TOOL [JSON]    call one
//	mcp gateway [--config F] [--http ADDR] [--no-prefix]   every server's tools as one MCP server
//
// The servers come from the config files: --config F alone when given,
// else the project file ./.worldforge/mcp.json over the user file
// $XDG_CONFIG_HOME/worldforge/mcp.json. With --url (or WORLDFORGE_URL),
// mcp tools and mcp call use that one endpoint instead (mcpcmd.go).

// processLookupEnv is os.LookupEnv when the commands run on the process's
// own environment (main sets it), so that a config file's ${VAR} can tell
// a variable set to "" from an unset one; nil otherwise (tests), and then
// Getenv is used, where "" counts as unset.
var processLookupEnv func(string) (string, bool)

// loadMCPConfig loads the servers of the config files: the file given
// with --config alone, else the project file over the user file. Entries
// with problems are reported on stderr and left out.
func (e *env) loadMCPConfig(name, explicit string) (*mcpkit.Config, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	cfg, err := mcpkit.LoadConfig(mcpkit.LoadOptions{File: explicit, Cwd: cwd, Getenv: e.Getenv, LookupEnv: processLookupEnv})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for _, p := range cfg.Errors {
		fmt.Fprintf(e.Stderr, "%s: config: %v\n", name, p)
	}
	if len(cfg.Servers) == 0 {
		if explicit != "" {
			return nil, cli.UsageErrorf("%s: %s configures no enabled MCP server", name, explicit)
		}
		where := mcpkit.ProjectConfigPath(cwd)
		if user := mcpkit.UserConfigPath(e.Getenv); user != "" {
			where += " or " + user
		}
		return nil, cli.UsageErrorf("%s: no MCP servers configured: give --url, or --config F, or write %s", name, where)
	}
	return cfg, nil
}

// quietLogger keeps the toolkit's logs on stderr at warnings and above.
func (e *env) quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(e.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// startFleet connects the configured servers (only, when given, the one
// named) within timeout.
func (e *env) startFleet(ctx context.Context, name string, cfg *mcpkit.Config, only string, opts *mcpkit.ClientOptions) (*mcpkit.Fleet, error) {
	servers := cfg.Servers
	if only != "" {
		servers = nil
		for _, s := range cfg.Servers {
			if s.Name == only {
				servers = append(servers, s)
			}
		}
		if len(servers) == 0 {
			return nil, cli.UsageErrorf("%s: no configured server is named %q", name, only)
		}
	}
	if opts == nil {
		opts = &mcpkit.ClientOptions{}
	}
	if opts.Logger == nil {
		opts.Logger = e.quietLogger()
	}
	if opts.Implementation == nil {
		opts.Implementation = &mcp.Implementation{Name: "worldforge-cli", Version: worldforge.Version}
	}
	fleet := mcpkit.NewFleet(servers, &mcpkit.FleetOptions{Client: opts})
	_ = fleet.Start(ctx) // failures stay in the status
	return fleet, nil
}

func (e *env) mcpServers(ctx context.Context, args []string) error {
	const name = "mcp servers"
	fs := cli.NewFlags(name)
	config := fs.String("config", "", "the one config file to read (default: the project and user files)")
	timeout := fs.Duration("timeout", 30*time.Second, "give up connecting after this long")
	if err := e.parseFlagsFirst(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return cli.UsageErrorf("%s: want no arguments, got %q%s", name, fs.Args(), flagAfter(fs.Args()))
	}
	cfg, err := e.loadMCPConfig(name, *config)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	fleet, err := e.startFleet(ctx, name, cfg, "", nil)
	if err != nil {
		return err
	}
	defer fleet.Close()
	var out bytes.Buffer
	tw := tabwriter.NewWriter(&out, 2, 4, 2, ' ', 0)
	// HIDDEN counts the tools the server's allowedTools and disabledTools
	// filtered out (TOOLS does not count them).
	fmt.Fprintln(tw, "SERVER\tTRANSPORT\tPHASE\tTOOLS\tHIDDEN\tRESOURCES\tPROMPTS\tERROR")
	failed := 0
	for _, st := range fleet.Status() {
		msg := ""
		if st.Err != nil {
			failed++
			msg = oneLine(st.Err.Error())
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\n", st.Name, st.Transport, st.Phase, st.Tools, st.HiddenTools, st.Resources, st.Prompts, msg)
	}
	tw.Flush()
	if _, err := e.Stdout.Write(out.Bytes()); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%s: %d of %d servers failed", name, failed, len(fleet.Status()))
	}
	return nil
}

// oneLine keeps the first line of s, at most 200 characters.
func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// configFleet loads the config files and connects their servers (only
// the one named, when set) under the command's --timeout; done closes the
// fleet and ends the timeout.
func (e *env) configFleet(ctx context.Context, name string, f *mcpFlags, only string) (context.Context, *mcpkit.Fleet, func(), error) {
	cfg, err := e.loadMCPConfig(name, f.config)
	if err != nil {
		return nil, nil, nil, err
	}
	cancel := context.CancelFunc(func() {})
	if f.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, f.timeout)
	}
	fleet, err := e.startFleet(ctx, name, cfg, only, nil)
	if err != nil {
		cancel()
		return nil, nil, nil, err
	}
	return ctx, fleet, func() { fleet.Close(); cancel() }, nil
}

// mcpFleetTools: mcp tools [--config F] [SERVER] → "server<TAB>tool<TAB>description".
func (e *env) mcpFleetTools(ctx context.Context, name string, f *mcpFlags, pos []string) error {
	if len(pos) > 1 {
		return cli.UsageErrorf("%s: want at most one SERVER, got %q%s", name, pos, flagAfter(pos))
	}
	only := ""
	if len(pos) == 1 {
		only = pos[0]
	}
	ctx, fleet, done, err := e.configFleet(ctx, name, f, only)
	if err != nil {
		return err
	}
	defer done()
	var out bytes.Buffer
	var failures []string
	for _, c := range fleet.Clients() {
		if err := c.Err(); err != nil && !c.Phase().Usable() {
			failures = append(failures, fmt.Sprintf("%s: %s", c.Name(), oneLine(err.Error())))
			continue
		}
		if f.format != "" {
			continue
		}
		for _, t := range c.Tools() {
			fmt.Fprintf(&out, "%s\t%s\t%s\n", c.Name(), t.Name, firstSentence(t.Description))
		}
	}
	if f.format != "" {
		// The tools under the names a host would register them by
		// (server_tool), converted as a host would send them.
		bridge, err := mcpkit.Mount(ctx, fleet, &mcpkit.BridgeOptions{Logger: e.quietLogger()})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		tools, notes, err := llm.Tools(bridge.Registry(), llm.Format(f.format), &llm.Options{ServerTag: true})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		data, err := json.MarshalIndent(tools, "", "  ")
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		out.Write(data)
		out.WriteByte('\n')
		for _, n := range notes {
			fmt.Fprintf(e.Stderr, "note: %s\n", n)
		}
	}
	if _, err := e.Stdout.Write(out.Bytes()); err != nil {
		return err
	}
	if len(failures) > 0 {
		return fmt.Errorf("%s: %s", name, strings.Join(failures, "; "))
	}
	return nil
}

// mcpFleetCall: mcp call [--config F] SERVER TOOL [JSON | @FILE | -].
func (e *env) mcpFleetCall(ctx context.Context, name string, f *mcpFlags, pos []string, stdin io.Reader) error {
	if len(pos) < 2 || len(pos) > 3 {
		return cli.UsageErrorf("%s: without --url, want SERVER TOOL [JSON | @FILE | -], got %d argument(s)%s", name, len(pos), flagAfter(pos))
	}
	server, tool := pos[0], pos[1]
	args := json.RawMessage("{}")
	if len(pos) == 3 {
		var err error
		if args, err = readToolArgs(name, pos[2], stdin); err != nil {
			return err
		}
	}
	ctx, fleet, done, err := e.configFleet(ctx, name, f, server)
	if err != nil {
		return err
	}
	defer done()
	c := fleet.Client(server)
	if !c.Phase().Usable() {
		return fmt.Errorf("%s: %v", name, c.Err())
	}
	res, err := c.CallTool(ctx, tool, args)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	v := client.UnwrapResult(res)
	if res.IsError {
		return fmt.Errorf("MCP tool %s failed: %v", tool, v)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return writeResult(e.Stdout, raw)
}

// mcpGateway serves every configured server's tools as one MCP server:
// over stdio by default, over streamable HTTP with --http.
func (e *env) mcpGateway(ctx context.Context, args []string) error {
	const name = "mcp gateway"
	fs := cli.NewFlags(name)
	config := fs.String("config", "", "the one config file to read (default: the project and user files)")
	addr := fs.String("http", "", "serve streamable HTTP on this address (e.g. 127.0.0.1:8090) instead of stdio")
	sep := fs.String("separator", mcpkit.DefaultSeparator, `joins server and tool names ("_", or "__" for the interop style)`)
	noPrefix := fs.Bool("no-prefix", false, "serve each tool under its own name, without the server's (clashes are still resolved and reported)")
	if err := e.parseFlagsFirst(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return cli.UsageErrorf("%s: want no arguments, got %q%s", name, fs.Args(), flagAfter(fs.Args()))
	}
	if *addr != "" {
		if _, _, err := net.SplitHostPort(*addr); err != nil {
			return cli.UsageErrorf("%s: --http %q: %v", name, *addr, err)
		}
	}
	if *sep == "" || !mcpkit.ValidToolName("a"+*sep+"b") {
		return cli.UsageErrorf("%s: --separator %q: use letters, digits, _ or -", name, *sep)
	}
	cfg, err := e.loadMCPConfig(name, *config)
	if err != nil {
		return err
	}
	// The bridge follows the servers by itself: a changed tool, resource
	// or prompt list, a server that faults or comes back, refreshes the
	// gateway.
	log := e.quietLogger()
	// The clients declare sampling so that the upstreams may ask the
	// gateway's clients for it (GatewayClientOptions).
	opts := mcpkit.GatewayClientOptions(&mcpkit.ClientOptions{
		Logger:         log,
		Implementation: &mcp.Implementation{Name: "worldforge-gateway", Version: worldforge.Version},
		Reconnect:      &mcpkit.ReconnectPolicy{},
	})
	startCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	fleet, err := e.startFleet(startCtx, name, cfg, "", opts)
	cancel()
	if err != nil {
		return err
	}
	defer fleet.Close()
	for _, st := range fleet.Status() {
		if st.Err != nil {
			fmt.Fprintf(e.Stderr, "%s: %s: %s\n", name, st.Name, oneLine(st.Err.Error()))
		}
	}
	bridge, err := mcpkit.Mount(ctx, fleet, &mcpkit.BridgeOptions{Separator: *sep, NoPrefix: *noPrefix, Logger: log})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for _, c := range bridge.Collisions() {
		fmt.Fprintf(e.Stderr, "%s: %s/%s is served as %s (%s was taken)\n", name, c.Ref.Server, c.Ref.Tool, c.Name, c.Wanted)
	}
	gw, err := mcpkit.NewGateway(bridge, &mcpkit.GatewayOptions{Logger: log})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer bridge.Close()
	fmt.Fprintf(e.Stderr, "%s: %d tools from %d servers\n", name, bridge.Registry().Len(), len(fleet.Clients()))
	if *addr == "" {
		return gw.ServeStdio(ctx)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("%s: listen on %s: %w", name, *addr, err)
	}
	srv := &http.Server{Handler: gw.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(e.Stderr, "%s: listening on http://%s/\n", name, ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("%s: %w", name, err)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		return nil
	}
}
