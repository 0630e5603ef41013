package mcpkit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/worldforge-go/worldforge/mcpkit/oauth"
)

// FleetOptions configures a Fleet.
type FleetOptions struct {
	// Client configures every server's client (nil for the defaults). Its
	// handlers are told which server they are called for.
	Client *ClientOptions
}

// Fleet is a set of clients, one per named server, under one lifecycle:
// connected in parallel, failing independently, reloaded by difference.
// Its methods are safe for concurrent use.
type Fleet struct {
	opts FleetOptions

	mu       sync.Mutex
	order    []string // names, in configuration order
	clients  map[string]*Client
	problems []error // configuration problems found by NewFleet, reported by Start
	closed   bool
	// members are told that the set of clients changed (Add, Remove,
	// Reload), by owner (a Bridge).
	members map[any]func()
}

// watchMembers tells fn, keyed by owner, every change of the set of
// clients; nil fn stops it.
func (f *Fleet) watchMembers(owner any, fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fn == nil {
		delete(f.members, owner)
		return
	}
	if f.members == nil {
		f.members = map[any]func(){}
	}
	f.members[owner] = fn
}

// membersChanged calls the member watchers. Called without f.mu.
func (f *Fleet) membersChanged() {
	f.mu.Lock()
	fns := slices.Collect(maps.Values(f.members))
	f.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// NewFleet returns a fleet of idle clients for servers; Start connects
// them. A server without a name, or with the name of an earlier one, is
// left out and reported by Start as CONFIG_ERROR.
func NewFleet(servers []ServerConfig, opts *FleetOptions) *Fleet {
	f := &Fleet{clients: make(map[string]*Client)}
	if opts != nil {
		f.opts = *opts
	}
	want, problems := uniqueConfigs(servers)
	f.problems = problems
	for _, cfg := range want {
		f.order = append(f.order, cfg.Name)
		f.clients[cfg.Name] = f.newClient(cfg)
	}
	return f
}

func (f *Fleet) newClient(cfg ServerConfig) *Client { return NewClient(cfg, f.opts.Client) }

// uniqueConfigs drops unnamed and repeated servers, reporting each.
func uniqueConfigs(servers []ServerConfig) (want []ServerConfig, problems []error) {
	seen := make(map[string]bool, len(servers))
	for i, cfg := range servers {
		switch {
		case cfg.Name == "":
			problems = append(problems, &Error{Code: CodeConfigError, Message: fmt.Sprintf("server %d has no name", i)})
		case seen[cfg.Name]:
			problems = append(problems, &Error{Code: CodeConfigError, Server: cfg.Name, Message: "duplicate server name; the first definition is used"})
		default:
			seen[cfg.Name] = true
			want = append(want, cfg)
		}
	}
	return want, problems
}

// Start connects every idle or faulted client in parallel and returns
// when all have finished. A server that fails stays in the fleet (see
// Status) and does not affect the others; the returned error joins the
// failures (nil if all connected).
func (f *Fleet) Start(ctx context.Context) error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return &Error{Code: CodeNotConnected, Kind: FaultNotConnected, Message: "fleet is closed"}
	}
	errs := slices.Clone(f.problems)
	var todo []*Client
	for _, name := range f.order {
		c := f.clients[name]
		if p := c.Phase(); p == PhaseIdle || p == PhaseFaulted {
			todo = append(todo, c)
		}
	}
	f.mu.Unlock()
	return errors.Join(append(errs, connectAll(ctx, todo)...)...)
}

// connectAll connects clients in parallel and returns their errors.
func connectAll(ctx context.Context, clients []*Client) []error {
	errs := make([]error, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() { errs[i] = c.Connect(ctx) })
	}
	wg.Wait()
	return slices.DeleteFunc(errs, func(err error) bool { return err == nil })
}

// closeAll closes clients in parallel.
func closeAll(clients []*Client) {
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() { c.Close() })
	}
	wg.Wait()
}

// Status returns every server's status, in configuration order.
func (f *Fleet) Status() []ServerStatus {
	clients := f.Clients()
	out := make([]ServerStatus, len(clients))
	for i, c := range clients {
		out[i] = c.Status()
	}
	return out
}

// Client returns the named server's client, or nil.
func (f *Fleet) Client(name string) *Client {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.clients[name]
}

// Clients returns every client, in configuration order.
func (f *Fleet) Clients() []*Client {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]*Client, len(f.order))
	for i, name := range f.order {
		out[i] = f.clients[name]
	}
	return out
}

// listAll queries every ready client in parallel; the error joins the
// failures, and the map holds the rest.
func fleetList[T any](ctx context.Context, f *Fleet, list func(*Client, context.Context) ([]T, error)) (map[string][]T, error) {
	var (
		mu   sync.Mutex
		out  = make(map[string][]T)
		errs []error
		wg   sync.WaitGroup
	)
	for _, c := range f.Clients() {
		if !c.Phase().Usable() {
			continue
		}
		wg.Go(func() {
			items, err := list(c, ctx)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			out[c.Name()] = items
		})
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// ListAllTools lists the tools of every ready server, by server name.
func (f *Fleet) ListAllTools(ctx context.Context) (map[string][]*mcp.Tool, error) {
	return fleetList(ctx, f, (*Client).ListTools)
}

// ListAllResources lists the resources of every ready server.
func (f *Fleet) ListAllResources(ctx context.Context) (map[string][]*mcp.Resource, error) {
	return fleetList(ctx, f, (*Client).ListResources)
}

// ListAllPrompts lists the prompts of every ready server.
func (f *Fleet) ListAllPrompts(ctx context.Context) (map[string][]*mcp.Prompt, error) {
	return fleetList(ctx, f, (*Client).ListPrompts)
}

// Add adds a server and connects it. A server of the same name is closed
// and replaced (its process is gone before the new one starts). The new
// client stays in the fleet even if connecting fails.
func (f *Fleet) Add(ctx context.Context, cfg ServerConfig) error {
	if cfg.Name == "" {
		return &Error{Code: CodeConfigError, Message: "server has no name"}
	}
	c := f.newClient(cfg)
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return &Error{Code: CodeNotConnected, Kind: FaultNotConnected, Server: cfg.Name, Message: "fleet is closed"}
	}
	old := f.clients[cfg.Name]
	if old == nil {
		f.order = append(f.order, cfg.Name)
	}
	f.clients[cfg.Name] = c
	f.mu.Unlock()
	if old != nil {
		old.Close()
	}
	f.membersChanged()
	return c.Connect(ctx)
}

// Remove closes and removes the named server; it reports whether there
// was one.
func (f *Fleet) Remove(name string) bool {
	f.mu.Lock()
	c := f.clients[name]
	if c != nil {
		delete(f.clients, name)
		f.order = slices.DeleteFunc(f.order, func(n string) bool { return n == name })
	}
	f.mu.Unlock()
	if c == nil {
		return false
	}
	c.Close()
	f.membersChanged()
	return true
}

// Reload makes the fleet match servers, changing only what changed: a
// server whose configuration is the same (field by field; an HTTPClient
// is not compared) keeps its client untouched, a changed one is closed
// and replaced, a new one added and a missing one closed. New and
// replaced clients are connected in parallel; the error joins their
// failures and any configuration problems.
func (f *Fleet) Reload(ctx context.Context, servers []ServerConfig) error {
	want, problems := uniqueConfigs(servers)
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return &Error{Code: CodeNotConnected, Kind: FaultNotConnected, Message: "fleet is closed"}
	}
	var stale, fresh []*Client
	clients := make(map[string]*Client, len(want))
	order := make([]string, 0, len(want))
	for _, cfg := range want {
		old := f.clients[cfg.Name]
		if old != nil && SameServerConfig(old.Config(), cfg) {
			clients[cfg.Name] = old
		} else {
			if old != nil {
				stale = append(stale, old)
			}
			c := f.newClient(cfg)
			clients[cfg.Name] = c
			fresh = append(fresh, c)
		}
		order = append(order, cfg.Name)
	}
	for name, old := range f.clients {
		if _, ok := clients[name]; !ok {
			stale = append(stale, old)
		}
	}
	f.clients, f.order = clients, order
	f.mu.Unlock()

	closeAll(stale) // before starting replacements
	f.membersChanged()
	return errors.Join(append(problems, connectAll(ctx, fresh)...)...)
}

// Close closes every client in parallel. It is idempotent.
func (f *Fleet) Close() error {
	f.mu.Lock()
	f.closed = true
	clients := slices.Collect(maps.Values(f.clients))
	f.mu.Unlock()
	closeAll(clients)
	return nil
}

// SameServerConfig reports whether a and b configure the same server:
// every field equal, maps and slices by content, OAuth by the contents of
// the two blocks (so that a changed oauth block replaces the client and
// its tokens), HTTPClient ignored (clients are not comparable by value),
// Kind by the transport it implies.
func SameServerConfig(a, b ServerConfig) bool {
	return a.Name == b.Name &&
		a.Transport() == b.Transport() &&
		a.Command == b.Command &&
		slices.Equal(a.Args, b.Args) &&
		maps.Equal(a.Env, b.Env) &&
		a.Cwd == b.Cwd &&
		a.URL == b.URL &&
		maps.Equal(a.Headers, b.Headers) &&
		sameOAuth(a.OAuth, b.OAuth) &&
		a.Timeout == b.Timeout &&
		a.ResetTimeoutOnProgress == b.ResetTimeoutOnProgress &&
		a.MaxTotalTimeout == b.MaxTotalTimeout &&
		slices.Equal(a.AllowedTools, b.AllowedTools) &&
		slices.Equal(a.DisabledTools, b.DisabledTools)
}

// sameOAuth compares two OAuth blocks by content; nil equals only nil.
func sameOAuth(a, b *oauth.Config) bool {
	if a == nil || b == nil {
		return a == b
	}
	return reflect.DeepEqual(*a, *b)
}
