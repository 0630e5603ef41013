package mcpkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
	// Forwarded resources (by URI) and prompts (by served name), and each
	// server's last listing, kept when a later listing fails.
	resources  map[string]RemoteResource
	prompts    map[string]RemotePrompt
	srvRes     map[string][]*mcp.Resource
	srvPrompts map[string][]*mcp.Prompt
}

// RemoteResource is a resource of a mounted server, served under its own
// URI.
type RemoteResource struct {
	Server   string
	Resource *mcp.Resource
}

// RemotePrompt is a prompt of a mounted server: Prompt is the server's
// definition with Name set to the bridge's name for it (qualified like
// tools, or plain with NoPrefix); Name is the server's own name.
type RemotePrompt struct {
	Server string
	Name   string
	Prompt *mcp.Prompt
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
//
// It also lists the resources and prompts of every ready server that
// advertises them (see Resources and Prompts): prompts go by the same
// names as tools, resources by their own URIs; on a clash the first
// server by name keeps the URI or name and the clash is logged. A server
// whose listing fails keeps its previous one.
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
	resources, prompts := b.refreshExtras(ctx, clients, live)
	b.mu.Lock()
	b.collisions = collisions
	b.resources, b.prompts = resources, prompts
	fns := append([]func(){}, b.onChange...)
	b.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
	return nil
}

// refreshExtras lists the resources and prompts of every live server
// (servers that advertise them) and resolves clashes: a URI or served
// prompt name goes to the first server by name, and the clash is logged.
// A server whose listing fails keeps its previous listing.
func (b *Bridge) refreshExtras(ctx context.Context, clients []*Client, live map[string]bool) (map[string]RemoteResource, map[string]RemotePrompt) {
	b.mu.Lock()
	oldRes, oldPrompts := b.srvRes, b.srvPrompts
	b.mu.Unlock()
	srvRes := map[string][]*mcp.Resource{}
	srvPrompts := map[string][]*mcp.Prompt{}
	resources := map[string]RemoteResource{}
	prompts := map[string]RemotePrompt{}
	for _, c := range clients {
		server := c.Name()
		if !live[server] {
			continue
		}
		var caps *mcp.ServerCapabilities
		if ir := c.InitializeResult(); ir != nil {
			caps = ir.Capabilities
		}
		if caps != nil && caps.Resources != nil {
			list, err := c.ListResources(ctx)
			if err != nil {
				b.log.Warn("mcpkit: listing resources failed", "server", server, "err", err)
				list = oldRes[server]
			}
			srvRes[server] = list
			for _, r := range list {
				if r == nil || r.URI == "" {
					continue
				}
				if holder, ok := resources[r.URI]; ok {
					b.log.Warn("mcpkit: resource URI clash, kept the first server's", "uri", r.URI, "server", server, "holder", holder.Server)
					continue
				}
				resources[r.URI] = RemoteResource{Server: server, Resource: r}
			}
		}
		if caps != nil && caps.Prompts != nil {
			list, err := c.ListPrompts(ctx)
			if err != nil {
				b.log.Warn("mcpkit: listing prompts failed", "server", server, "err", err)
				list = oldPrompts[server]
			}
			srvPrompts[server] = list
			for _, p := range list {
				if p == nil || p.Name == "" {
					continue
				}
				name := QualifiedName(server, p.Name, b.sep)
				if b.noPrefix {
					name = PlainName(p.Name)
				}
				if holder, ok := prompts[name]; ok {
					b.log.Warn("mcpkit: prompt name clash, kept the first server's", "prompt", name, "server", server, "holder", holder.Server)
					continue
				}
				served := *p
				served.Name = name
				prompts[name] = RemotePrompt{Server: server, Name: p.Name, Prompt: &served}
			}
		}
	}
	b.mu.Lock()
	b.srvRes, b.srvPrompts = srvRes, srvPrompts
	b.mu.Unlock()
	return resources, prompts
}

// Resources lists the mounted servers' resources, sorted by URI.
func (b *Bridge) Resources() []RemoteResource {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.SortedFunc(maps.Values(b.resources), func(x, y RemoteResource) int { return strings.Compare(x.Resource.URI, y.Resource.URI) })
}

// Prompts lists the mounted servers' prompts, sorted by served name.
func (b *Bridge) Prompts() []RemotePrompt {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.SortedFunc(maps.Values(b.prompts), func(x, y RemotePrompt) int { return strings.Compare(x.Prompt.Name, y.Prompt.Name) })
}

// ReadResource reads a mounted resource from the server that owns it.
// Errors: RESOURCE_NOT_FOUND for a URI no mounted server has, and those of
// Client.ReadResource.
func (b *Bridge) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	b.mu.Lock()
	r, ok := b.resources[uri]
	b.mu.Unlock()
	if !ok {
		return nil, &Error{Code: CodeResourceNotFound, Message: "no mounted server has resource " + uri}
	}
	c, err := b.client(r.Server, "")
	if err != nil {
		return nil, err
	}
	return c.ReadResource(ctx, uri)
}

// GetPrompt renders a mounted prompt, by its served name, on the server
// that owns it. Errors: PROMPT_NOT_FOUND for an unknown name, and those of
// Client.GetPrompt.
func (b *Bridge) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	b.mu.Lock()
	p, ok := b.prompts[name]
	b.mu.Unlock()
	if !ok {
		return nil, &Error{Code: CodePromptNotFound, Message: "no mounted server has prompt " + name}
	}
	c, err := b.client(p.Server, "")
	if err != nil {
		return nil, err
	}
	return c.GetPrompt(ctx, p.Name, args)
}

// client returns the fleet's client of a mounted server, or NOT_CONNECTED
// if the server has been removed since it was mounted.
func (b *Bridge) client(server, tool string) (*Client, error) {
	if c := b.fleet.Client(server); c != nil {
		return c, nil
	}
	return nil, &Error{Code: CodeNotConnected, Kind: FaultNotConnected, Server: server, Tool: tool, Message: "server removed"}
}

// call routes a registry call to its server.
func (b *Bridge) call(ctx context.Context, ref RemoteRef, args json.RawMessage) (*mcp.CallToolResult, error) {
	c, err := b.client(ref.Server, ref.Tool)
	if err != nil {
		return nil, err
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
// that changed it). The mounted servers' resources and prompts are served
// the same way (see Bridge.Resources and Bridge.Prompts): resources/read
// and prompts/get go to the owning server, whose JSON-RPC errors reach the
// client as they are, and the lists follow Refresh with list_changed
// notifications. Tool failures of a server reach the gateway's client
// as the same isError result; a server that cannot be reached is an
// isError result naming the server and the error code.
func NewGateway(b *Bridge, opts *GatewayOptions) (*Provider, error) {
	info := mcp.Implementation{Name: "worldforge-gateway", Version: "0.1.0"}
	instr := "One MCP server in front of several: each tool is named <server>" + b.sep + "<tool>."
	if b.noPrefix {
		instr = "One MCP server in front of others, their tools under their own names."
	}
	// Resources and prompts are advertised (with list_changed) even when
	// no server has any yet, as tools are: servers mounted later can
	// bring them.
	popts := &ProviderOptions{Instructions: instr, ServerOptions: &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true},
			Prompts:   &mcp.PromptCapabilities{ListChanged: true},
		},
	}}
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
	g := &gateway{b: b, p: p, have: map[string]string{}, haveRes: map[string]string{}, havePrompts: map[string]string{}}
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
	// schema, so that a changed definition is served anew; haveRes and
	// havePrompts do the same for resources (by URI) and prompts.
	have        map[string]string
	haveRes     map[string]string
	havePrompts map[string]string
}

func extraFingerprint(server string, def any) string {
	b, _ := json.Marshal(def)
	return server + "\x00" + string(b)
}

// forwardError is the error a gateway answers for a failed forwarded
// read or get: the upstream server's own JSON-RPC error when it answered
// one, a not-found error for an item no server has, else err.
func forwardError(err error, uri, prompt string) error {
	if we := wireError(err); we != nil {
		return we
	}
	switch {
	case uri != "" && errors.Is(err, ErrResourceNotFound):
		return mcp.ResourceNotFoundError(uri)
	case prompt != "" && errors.Is(err, ErrPromptNotFound):
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", prompt)}
	}
	return err
}

// syncExtras makes the provider's resources and prompts equal to the
// bridge's. Called with g.mu held.
func (g *gateway) syncExtras() {
	b := g.b
	reconcile(g.haveRes, b.Resources(),
		func(r RemoteResource) (string, string) {
			return r.Resource.URI, extraFingerprint(r.Server, r.Resource)
		},
		func(r RemoteResource) error {
			return g.p.AddResource(Resource{URI: r.Resource.URI, Name: r.Resource.Name, Description: r.Resource.Description, MIMEType: r.Resource.MIMEType,
				Read: func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
					res, err := b.ReadResource(ctx, uri)
					if err != nil {
						return nil, forwardError(err, uri, "")
					}
					return res, nil
				}})
		},
		func(uri string) { g.p.RemoveResource(uri) },
		func(uri string, err error) {
			b.log.Warn("mcpkit: gateway cannot serve resource", "uri", uri, "err", err)
		})
	reconcile(g.havePrompts, b.Prompts(),
		func(p RemotePrompt) (string, string) {
			return p.Prompt.Name, extraFingerprint(p.Server+"\x00"+p.Name, p.Prompt)
		},
		func(p RemotePrompt) error {
			name := p.Prompt.Name
			return g.p.AddPrompt(Prompt{Name: name, Description: p.Prompt.Description, Arguments: p.Prompt.Arguments,
				Get: func(ctx context.Context, args map[string]string) (*mcp.GetPromptResult, error) {
					res, err := b.GetPrompt(ctx, name, args)
					if err != nil {
						return nil, forwardError(err, "", name)
					}
					return res, nil
				}})
		},
		func(name string) { g.p.RemovePrompt(name) },
		func(name string, err error) {
			b.log.Warn("mcpkit: gateway cannot serve prompt", "prompt", name, "err", err)
		})
}

// reconcile makes a served set equal to items. have maps each served key
// to a fingerprint of its definition: an item whose fingerprint changed is
// removed and added anew, one no longer among items is removed, and one
// add refuses is left out (warn says why).
func reconcile[T any](have map[string]string, items []T, key func(T) (k, fp string), add func(T) error, remove func(string), warn func(string, error)) {
	want := make(map[string]bool, len(items))
	for _, it := range items {
		k, fp := key(it)
		want[k] = true
		if old, ok := have[k]; ok {
			if old == fp {
				continue
			}
			remove(k)
			delete(have, k)
		}
		if err := add(it); err != nil {
			warn(k, err)
			continue
		}
		have[k] = fp
	}
	for k := range have {
		if !want[k] {
			remove(k)
			delete(have, k)
		}
	}
}

func fingerprint(t Tool) string {
	schema, _ := json.Marshal(t.InputSchema)
	return t.Description + "\x00" + string(schema)
}

func (g *gateway) sync() {
	g.mu.Lock()
	defer g.mu.Unlock()
	reg := g.b.reg
	reconcile(g.have, reg.List(),
		func(t Tool) (string, string) { return t.Name, fingerprint(t) },
		func(t Tool) error {
			name := t.Name
			return g.p.AddTool(Tool{Name: name, Description: t.Description, InputSchema: t.InputSchema,
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
				}})
		},
		func(name string) { g.p.RemoveTool(name) },
		func(name string, err error) {
			g.b.log.Warn("mcpkit: gateway cannot serve tool", "tool", name, "err", err)
		})
	g.syncExtras()
}
