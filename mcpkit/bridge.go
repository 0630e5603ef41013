package mcpkit

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"
)

// The bridge joins a Fleet to a Registry: every ready server's tools are
// registered under qualified names, and a call of a qualified name is
// routed to its server by the registry's table. A gateway (gateway.go)
// serves such a registry as one MCP server, so that any MCP client reaches
// every configured server's tools through a single connection.

// Bridge is a fleet mounted into a registry. It follows the fleet by
// itself, with no Refresh or client callbacks needed: when a server
// announces a changed tool, resource or prompt list (tools/list_changed
// and the like), when a server
// becomes ready or stops being ready (a crash, a Close, a reconnect), and
// when servers are added to or removed from the fleet (Fleet.Add, Remove,
// Reload), it refreshes in the background and OnChange hears of it (a
// gateway then tells its clients, notifications/tools/list_changed).
//
// A server that is not ready has its tools withdrawn: they leave the
// registry (a call of one is TOOL_NOT_FOUND, as for any unknown tool)
// rather than staying listed and failing, so that a model is never
// offered a tool it cannot call. They come back when the server is ready
// again: by its ReconnectPolicy, Connect or Fleet.Start.
type Bridge struct {
	fleet      *Fleet
	reg        *Registry
	sep        string
	noPrefix   bool
	descPrefix bool
	log        *slog.Logger

	refreshMu sync.Mutex        // one Refresh at a time
	warned    map[string]string // schema notes logged, by tool (under refreshMu)

	mu         sync.Mutex
	collisions []Collision
	onChange   []func()
	// Following: a background refresh is running (following), another
	// is due after it (again), or the bridge is closed.
	following, again, closed bool
	// Forwarded resources (by URI), resource templates (by URI template)
	// and prompts (by served name), and each server's last listing, kept
	// when a later listing fails.
	resources    map[string]RemoteResource
	templates    map[string]RemoteTemplate
	prompts      map[string]RemotePrompt
	srvRes       map[string][]*mcp.Resource
	srvTemplates map[string][]*mcp.ResourceTemplate
	srvPrompts   map[string][]*mcp.Prompt
}

// RemoteTemplate is a resource template of a mounted server, served under
// its own URI template.
type RemoteTemplate struct {
	Server   string
	Template *mcp.ResourceTemplate
	match    *regexp.Regexp // the URIs it stands for; nil if it does not parse
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
	// DescriptionPrefix starts each tool's description with its server's
	// name in brackets, "[server] ", as the interop original does, so that
	// a model sees where a tool comes from even under NoPrefix.
	DescriptionPrefix bool
	// Registry receives the tools (default a new one).
	Registry *Registry
	Logger   *slog.Logger
}

// Mount registers the tools of every ready server of fleet under
// qualified names and returns the bridge, which from then on follows the
// fleet (see Bridge). Servers that are not ready are left out (Status says
// why) and mounted when they become ready. Name collisions are resolved
// (see Registry.AddRemote) and listed by Collisions. Close stops the
// following.
func Mount(ctx context.Context, fleet *Fleet, opts *BridgeOptions) (*Bridge, error) {
	b := &Bridge{fleet: fleet, sep: DefaultSeparator, log: slog.Default()}
	if opts != nil {
		if opts.Separator != "" {
			b.sep = opts.Separator
		}
		b.reg = opts.Registry
		b.noPrefix = opts.NoPrefix
		b.descPrefix = opts.DescriptionPrefix
		if opts.Logger != nil {
			b.log = opts.Logger
		}
	}
	if b.reg == nil {
		b.reg = NewRegistry()
	}
	fleet.watchMembers(b, b.follow)
	return b, b.Refresh(ctx)
}

// Close stops the bridge following its fleet, after a background
// refresh in progress; the registry keeps the tools it has, and Refresh
// still works by hand. It is idempotent.
func (b *Bridge) Close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.fleet.watchMembers(b, nil)
	for _, c := range b.fleet.Clients() {
		c.watchers.remove(b)
	}
	b.refreshMu.Lock() // wait out a background refresh
	b.refreshMu.Unlock()
}

// watchClients makes the bridge a watcher of every client of the fleet
// (once each): a changed list, and a change to or from ready, start a
// background refresh.
func (b *Bridge) watchClients() {
	for _, c := range b.fleet.Clients() {
		if !c.watchers.has(b) {
			c.watchers.set(b, &clientWatcher{
				lists: func(string) { b.follow() },
				phase: func(ev PhaseChange) {
					if ev.To == PhaseReady || ev.From == PhaseReady || ev.To == PhaseClosed {
						b.follow()
					}
				},
			})
		}
	}
}

// follow refreshes in the background: one refresh at a time, and one more
// after it however many changes came in the meantime.
func (b *Bridge) follow() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	if b.following {
		b.again = true
		b.mu.Unlock()
		return
	}
	b.following = true
	b.mu.Unlock()
	go func() {
		for {
			ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
			if err := b.refresh(ctx, true); err != nil {
				b.log.Warn("mcpkit: bridge refresh failed", "err", err)
			}
			cancel()
			b.mu.Lock()
			if !b.again || b.closed {
				b.following, b.again = false, false
				b.mu.Unlock()
				return
			}
			b.again = false
			b.mu.Unlock()
		}
	}()
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
// tools of servers that are gone or not ready. The bridge calls it by
// itself when the fleet changes (see Bridge); calling it by hand is
// needed only to pick up a change at a known moment. A tool whose input
// schema cannot be used whole is still registered (its arguments checked
// as far as they can be) and what was lost is logged; see
// Registry.SchemaNotes.
//
// It also lists the resources and prompts of every ready server that
// advertises them (see Resources and Prompts): prompts go by the same
// names as tools, resources by their own URIs; on a clash the first
// server by name keeps the URI or name and the clash is logged. A server
// whose listing fails keeps its previous one.
func (b *Bridge) Refresh(ctx context.Context) error {
	return b.refresh(ctx, false)
}

// refresh is Refresh; a background one (auto) does nothing once the
// bridge is closed.
func (b *Bridge) refresh(ctx context.Context, auto bool) error {
	b.refreshMu.Lock()
	defer b.refreshMu.Unlock()
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed && auto {
		return nil
	}
	if !closed {
		// Before reading the phases, so that a client that becomes ready
		// after this look is seen by its watcher.
		b.watchClients()
	}
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
		tools := c.Tools()
		if b.descPrefix {
			tools = prefixDescriptions(c.Name(), tools)
		}
		added, coll, err := b.reg.AddRemoteNamed(c.Name(), tools, b.call, name)
		collisions = append(collisions, coll...)
		if err != nil {
			b.log.Warn("mcpkit: some tools left out", "server", c.Name(), "err", err)
		}
		for _, n := range added {
			// Logged once per tool and change, not on every refresh.
			notes := b.reg.SchemaNotes(n)
			key := strings.Join(notes, "\n")
			if len(notes) > 0 && b.warned[n] != key {
				b.log.Warn("mcpkit: tool's input schema not used whole", "server", c.Name(), "tool", n, "lost", notes)
			}
			if b.warned == nil {
				b.warned = map[string]string{}
			}
			b.warned[n] = key
		}
	}
	for _, name := range b.reg.RemoteServers() {
		if !live[name] {
			b.reg.RemoveServer(name)
		}
	}
	resources, templates, prompts := b.refreshExtras(ctx, clients, live)
	b.mu.Lock()
	b.collisions = collisions
	b.resources, b.templates, b.prompts = resources, templates, prompts
	fns := append([]func(){}, b.onChange...)
	b.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
	return nil
}

// prefixDescriptions returns copies of tools whose descriptions start
// with "[server] ".
func prefixDescriptions(server string, tools []*mcp.Tool) []*mcp.Tool {
	out := make([]*mcp.Tool, 0, len(tools))
	for _, t := range tools {
		if t == nil {
			continue
		}
		c := *t
		c.Description = strings.TrimSpace("[" + server + "] " + t.Description)
		out = append(out, &c)
	}
	return out
}

// refreshExtras lists the resources, resource templates and prompts of
// every live server (servers that advertise them) and resolves clashes: a
// URI, URI template or served prompt name goes to the first server by
// name, and the clash is logged. A server whose listing fails keeps its
// previous listing.
func (b *Bridge) refreshExtras(ctx context.Context, clients []*Client, live map[string]bool) (map[string]RemoteResource, map[string]RemoteTemplate, map[string]RemotePrompt) {
	b.mu.Lock()
	oldRes, oldTemplates, oldPrompts := b.srvRes, b.srvTemplates, b.srvPrompts
	b.mu.Unlock()
	srvRes := map[string][]*mcp.Resource{}
	srvTemplates := map[string][]*mcp.ResourceTemplate{}
	srvPrompts := map[string][]*mcp.Prompt{}
	resources := map[string]RemoteResource{}
	templates := map[string]RemoteTemplate{}
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
			tlist, err := c.ListResourceTemplates(ctx)
			if we := wireError(err); we != nil && we.Code == jsonrpc.CodeMethodNotFound {
				tlist, err = nil, nil // a server without templates
			}
			if err != nil {
				b.log.Warn("mcpkit: listing resource templates failed", "server", server, "err", err)
				tlist = oldTemplates[server]
			}
			srvTemplates[server] = tlist
			for _, t := range tlist {
				if t == nil || t.URITemplate == "" {
					continue
				}
				if holder, ok := templates[t.URITemplate]; ok {
					b.log.Warn("mcpkit: resource template clash, kept the first server's", "uriTemplate", t.URITemplate, "server", server, "holder", holder.Server)
					continue
				}
				rt := RemoteTemplate{Server: server, Template: t}
				if ut, err := uritemplate.New(t.URITemplate); err == nil {
					rt.match = ut.Regexp()
				}
				templates[t.URITemplate] = rt
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
	b.srvRes, b.srvTemplates, b.srvPrompts = srvRes, srvTemplates, srvPrompts
	b.mu.Unlock()
	return resources, templates, prompts
}

// Resources lists the mounted servers' resources, sorted by URI.
func (b *Bridge) Resources() []RemoteResource {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.SortedFunc(maps.Values(b.resources), func(x, y RemoteResource) int { return strings.Compare(x.Resource.URI, y.Resource.URI) })
}

// ResourceTemplates lists the mounted servers' resource templates, sorted
// by URI template.
func (b *Bridge) ResourceTemplates() []RemoteTemplate {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.SortedFunc(maps.Values(b.templates), func(x, y RemoteTemplate) int {
		return strings.Compare(x.Template.URITemplate, y.Template.URITemplate)
	})
}

// resourceOwner returns the server that serves uri: the one that lists
// it, else the first (by URI template) whose template matches it.
func (b *Bridge) resourceOwner(uri string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r, ok := b.resources[uri]; ok {
		return r.Server, true
	}
	for _, t := range slices.Sorted(maps.Keys(b.templates)) {
		if rt := b.templates[t]; rt.match != nil && rt.match.MatchString(uri) {
			return rt.Server, true
		}
	}
	return "", false
}

// Prompts lists the mounted servers' prompts, sorted by served name.
func (b *Bridge) Prompts() []RemotePrompt {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.SortedFunc(maps.Values(b.prompts), func(x, y RemotePrompt) int { return strings.Compare(x.Prompt.Name, y.Prompt.Name) })
}

// ReadResource reads a mounted resource, or a URI of a mounted resource
// template, from the server that owns it. Errors: RESOURCE_NOT_FOUND for a
// URI no mounted server has, and those of Client.ReadResource.
func (b *Bridge) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	server, ok := b.resourceOwner(uri)
	if !ok {
		return nil, &Error{Code: CodeResourceNotFound, Message: "no mounted server has resource " + uri}
	}
	c, err := b.client(server, "")
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
