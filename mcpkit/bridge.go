package mcpkit

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sort"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The bridge joins a Fleet to a Registry: every ready server's tools are
// registered under qualified names, and a call of a qualified name is
// routed to its server by the registry's table. A Gateway serves such a
// registry as one MCP server, so that any MCP client reaches every
// configured server's tools through a single connection.

// Bridge is a fleet mounted into a registry. It follows tool-list changes
// of the servers it mounted.
type Bridge struct {
	fleet    *Fleet
	reg      *Registry
	sep      string
	noPrefix bool
	log      *slog.Logger

	mu         sync.Mutex
	collisions []Collision
	onChange   []func()
}

// BridgeOptions configure Mount.
type BridgeOptions struct {
	// Separator joins server and tool names (default DefaultSeparator,
	// "_"; Qualifier, "__", is the interop style).
	Separator string
	// NoPrefix registers each tool under its own name (PlainName), for a
	// gateway that stands in for one server; clashes between servers are
	// still resolved and reported, never overwritten.
	NoPrefix bool
	// Registry receives the tools (default a new one).
	Registry *Registry
	Logger   *slog.Logger
}

// Mount registers the tools of every ready server of fleet under
// qualified names and returns the bridge. Servers that are not ready are
// left out (Status says why); Refresh mounts them later. Name collisions
// are resolved (see Registry.AddRemote) and listed by Collisions.
func Mount(ctx context.Context, fleet *Fleet, opts *BridgeOptions) (*Bridge, error) {
	b := &Bridge{fleet: fleet, sep: DefaultSeparator, log: slog.Default()}
	if opts != nil {
		if opts.Separator != "" {
			b.sep = opts.Separator
		}
		b.reg = opts.Registry
		b.noPrefix = opts.NoPrefix
		if opts.Logger != nil {
			b.log = opts.Logger
		}
	}
	if b.reg == nil {
		b.reg = NewRegistry()
	}
	return b, b.Refresh(ctx)
}

// Registry returns the registry the bridge fills.
func (b *Bridge) Registry() *Registry { return b.reg }

// Fleet returns the mounted fleet.
func (b *Bridge) Fleet() *Fleet { return b.fleet }

// Collisions lists the name collisions of the last Refresh.
func (b *Bridge) Collisions() []Collision {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Collision(nil), b.collisions...)
}

// OnChange registers fn to be called after each Refresh that changed the
// registry.
func (b *Bridge) OnChange(fn func()) {
	b.mu.Lock()
	b.onChange = append(b.onChange, fn)
	b.mu.Unlock()
}

// Refresh re-registers every ready server's current tools and drops the
// tools of servers that are gone or not ready. Schema problems of single
// tools are logged and the tools left out; they do not fail the refresh.
func (b *Bridge) Refresh(ctx context.Context) error {
	clients := b.fleet.Clients()
	sort.Slice(clients, func(i, j int) bool { return clients[i].Name() < clients[j].Name() })
	live := make(map[string]bool, len(clients))
	var collisions []Collision
	for _, c := range clients {
		if !c.Phase().Usable() {
			continue
		}
		live[c.Name()] = true
		name := func(tool string) string { return QualifiedName(c.Name(), tool, b.sep) }
		if b.noPrefix {
			name = PlainName
		}
		_, coll, err := b.reg.AddRemoteNamed(c.Name(), c.Tools(), b.call, name)
		collisions = append(collisions, coll...)
		if err != nil {
			b.log.Warn("mcpkit: some tools left out", "server", c.Name(), "err", err)
		}
	}
	for _, name := range b.reg.RemoteServers() {
		if !live[name] {
			b.reg.RemoveServer(name)
		}
	}
	b.mu.Lock()
	b.collisions = collisions
	fns := append([]func(){}, b.onChange...)
	b.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
	return nil
}

// call routes a registry call to its server.
func (b *Bridge) call(ctx context.Context, ref RemoteRef, args json.RawMessage) (*mcp.CallToolResult, error) {
	c := b.fleet.Client(ref.Server)
	if c == nil {
		return nil, &Error{Code: CodeNotConnected, Kind: FaultNotConnected, Server: ref.Server, Tool: ref.Tool, Message: "server removed"}
	}
	var a any
	if len(args) > 0 {
		a = args
	}
	return c.CallTool(ctx, ref.Tool, a)
}

// GatewayOptions configure a gateway.
type GatewayOptions struct {
	// Implementation is the gateway's identity (default
	// worldforge-gateway 0.1.0).
	Implementation *mcp.Implementation
	Logger         *slog.Logger
	// HTTP configures Handler (see ProviderOptions.HTTP).
	HTTP *mcp.StreamableHTTPOptions
}

// NewGateway returns a Provider that serves the bridge's registry as one
// MCP server: tools/list is every mounted tool under its qualified name,
// tools/call is routed to the tool's server, and the tool list follows the
// bridge (clients get notifications/tools/list_changed after a Refresh
// that changed it). Tool failures of a server reach the gateway's client
// as the same isError result; a server that cannot be reached is an
// isError result naming the server and the error code.
func NewGateway(b *Bridge, opts *GatewayOptions) (*Provider, error) {
	info := mcp.Implementation{Name: "worldforge-gateway", Version: "0.1.0"}
	instr := "One MCP server in front of several: each tool is named <server>" + b.sep + "<tool>."
	if b.noPrefix {
		instr = "One MCP server in front of others, their tools under their own names."
	}
	popts := &ProviderOptions{Instructions: instr}
	if opts != nil {
		if opts.Implementation != nil {
			info = *opts.Implementation
		}
		popts.Logger = opts.Logger
		popts.HTTP = opts.HTTP
	}
	p, err := NewProvider(info, popts)
	if err != nil {
		return nil, err
	}
	g := &gateway{b: b, p: p, have: map[string]string{}}
	g.sync()
	b.OnChange(g.sync)
	return p, nil
}

// gateway keeps a provider's tools equal to a bridge's registry.
type gateway struct {
	b *Bridge
	p *Provider

	mu sync.Mutex
	// have maps each served tool to a fingerprint of its description and
	// schema, so that a changed definition is served anew.
	have map[string]string
}

func fingerprint(t Tool) string {
	schema, _ := json.Marshal(t.InputSchema)
	return t.Description + "\x00" + string(schema)
}

func (g *gateway) sync() {
	g.mu.Lock()
	defer g.mu.Unlock()
	want := map[string]bool{}
	for _, t := range g.b.reg.List() {
		want[t.Name] = true
		fp := fingerprint(t)
		if old, ok := g.have[t.Name]; ok {
			if old == fp {
				continue
			}
			g.p.RemoveTool(t.Name)
			delete(g.have, t.Name)
		}
		reg, name := g.b.reg, t.Name
		tool := Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema,
			Execute: func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
				res, err := reg.Call(ctx, name, args)
				if err != nil {
					var e *Error
					if errors.As(err, &e) && e.Code != CodeInvalidParameters {
						// The upstream's failure, told to the model as a tool error.
						return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: e.Error()}}}, nil
					}
					return nil, err
				}
				return res, nil
			}}
		if err := g.p.AddTool(tool); err != nil {
			g.b.log.Warn("mcpkit: gateway cannot serve tool", "tool", t.Name, "err", err)
			continue
		}
		g.have[t.Name] = fp
	}
	for name := range g.have {
		if !want[name] {
			g.p.RemoveTool(name)
			delete(g.have, name)
		}
	}
}
