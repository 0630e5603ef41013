package mcpkit

// The gateway: a Bridge served as one MCP server, relaying what the
// upstream servers send in the course of a call to the session that made
// it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// GatewayOptions configure a gateway.
type GatewayOptions struct {
	// Implementation is the gateway's identity (default
	// worldforge-gateway 0.1.0).
	Implementation *mcp.Implementation
	Logger         *slog.Logger
	// HTTP configures Handler (see ProviderOptions.HTTP). Nil gives the
	// go-sdk defaults plus an in-memory event store, which makes the
	// gateway's streams resumable: a gateway with one closes a client's
	// stream when the upstream closed its own (see RequestHooks.OnStreamClosed).
	HTTP *mcp.StreamableHTTPOptions
}

// GatewayClientOptions returns a copy of opts (nil for the defaults) for
// the clients of a fleet a gateway is to serve: they declare sampling, so
// that upstream servers may ask for it in the course of a forwarded
// request. OnSample, if unset, refuses the sampling requests that no
// downstream request takes.
func GatewayClientOptions(opts *ClientOptions) *ClientOptions {
	var o ClientOptions
	if opts != nil {
		o = *opts
	}
	if o.OnSample == nil {
		o.OnSample = func(_ context.Context, server string, _ *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return nil, fmt.Errorf("the gateway has no client request to relay %s's sampling request to", server)
		}
	}
	return &o
}

// NewGateway returns a Provider that serves the bridge's registry as one
// MCP server: tools/list is every mounted tool under its qualified name,
// tools/call is routed to the tool's server, and the tool list follows the
// bridge (clients get notifications/tools/list_changed after a Refresh
// that changed it). The mounted servers' resources, resource templates and
// prompts are served the same way (see Bridge.Resources,
// Bridge.ResourceTemplates and Bridge.Prompts): resources/read and
// prompts/get go to the owning server, whose JSON-RPC errors reach the
// client as they are, and the lists follow Refresh with list_changed
// notifications. Tool failures of a server reach the gateway's client
// as the same isError result; a server that cannot be reached is an
// isError result naming the server and the error code.
//
// What an upstream sends back in the course of a forwarded request goes
// to the session of the client that made it: progress (under that
// client's own progress token), log messages (filtered by that session's
// level), sampling and elicitation requests (when that client declared
// them; otherwise the upstream's client refuses sampling and declines
// elicitation), and a closed stream (with a resumable Handler). Log
// messages sent outside any request go to every session, each filtered
// by its level. logging/setLevel is passed on to every upstream that
// offers logging, at the most verbose level any session asked for.
// resources/subscribe and resources/unsubscribe are passed on to the
// owning upstream (once however many sessions subscribe, and again after
// the upstream reconnects), and its notifications/resources/updated reach
// the subscribed sessions. completion/complete for a prompt or resource
// template goes to the server that owns it. Upstream sampling needs
// clients made with GatewayClientOptions.
func NewGateway(b *Bridge, opts *GatewayOptions) (*Provider, error) {
	info := mcp.Implementation{Name: "worldforge-gateway", Version: "0.1.0"}
	instr := "One MCP server in front of several: each tool is named <server>" + b.sep + "<tool>."
	if b.noPrefix {
		instr = "One MCP server in front of others, their tools under their own names."
	}
	g := &gateway{b: b, have: map[string]string{}, haveRes: map[string]string{}, haveTemplates: map[string]string{}, havePrompts: map[string]string{},
		subs: map[string]*gatewaySub{}, levels: map[*mcp.ServerSession]mcp.LoggingLevel{}, watching: map[*mcp.ServerSession]bool{}}
	// Resources, prompts, logging and completions are advertised (with
	// list_changed) even when no server has any yet, as tools are:
	// servers mounted later can bring them.
	popts := &ProviderOptions{Instructions: instr, ServerOptions: &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{
			Tools:       &mcp.ToolCapabilities{ListChanged: true},
			Resources:   &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Prompts:     &mcp.PromptCapabilities{ListChanged: true},
			Logging:     &mcp.LoggingCapabilities{},
			Completions: &mcp.CompletionCapabilities{},
		},
		CompletionHandler: g.complete,
		SubscribeHandler: func(ctx context.Context, req *mcp.SubscribeRequest) error {
			return g.subscribe(ctx, req.Session, req.Params.URI)
		},
		UnsubscribeHandler: func(ctx context.Context, req *mcp.UnsubscribeRequest) error {
			return g.unsubscribe(ctx, req.Session, req.Params.URI)
		},
	}}
	httpOpts := &mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)}
	if opts != nil {
		if opts.Implementation != nil {
			info = *opts.Implementation
		}
		popts.Logger = opts.Logger
		if opts.HTTP != nil {
			httpOpts = opts.HTTP
		}
	}
	popts.HTTP = httpOpts
	g.resumable = httpOpts.EventStore != nil && !httpOpts.Stateless
	p, err := NewProvider(info, popts)
	if err != nil {
		return nil, err
	}
	g.p = p
	p.Server().AddReceivingMiddleware(g.watchSetLevel)
	g.sync()
	b.OnChange(g.sync)
	return p, nil
}

// gateway keeps a provider's tools equal to a bridge's registry, and
// relays what flows between the provider's sessions and the upstreams.
type gateway struct {
	b         *Bridge
	p         *Provider
	resumable bool // the provider's streams can be resumed (an event store)

	mu sync.Mutex
	// have maps each served tool to a fingerprint of its description and
	// schema, so that a changed definition is served anew; haveRes,
	// haveTemplates and havePrompts do the same for resources (by URI),
	// resource templates and prompts.
	have          map[string]string
	haveRes       map[string]string
	haveTemplates map[string]string
	havePrompts   map[string]string

	// subOp serializes subscription changes, upstream calls included;
	// subMu guards the relayed subscriptions and log levels.
	subOp    sync.Mutex
	subMu    sync.Mutex
	subs     map[string]*gatewaySub                  // by URI
	levels   map[*mcp.ServerSession]mcp.LoggingLevel // each session's logging/setLevel
	level    mcp.LoggingLevel                        // the level asked of the upstreams
	watching map[*mcp.ServerSession]bool             // sessions whose end is awaited
}

// gatewaySub is one URI the gateway subscribed to upstream, for the
// sessions that asked.
type gatewaySub struct {
	server   string
	sessions map[*mcp.ServerSession]bool
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
					res, err := b.ReadResource(g.relay(ctx), uri)
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
	reconcile(g.haveTemplates, b.ResourceTemplates(),
		func(t RemoteTemplate) (string, string) {
			return t.Template.URITemplate, extraFingerprint(t.Server, t.Template)
		},
		func(t RemoteTemplate) error {
			server := t.Server
			return g.p.AddResourceTemplate(ResourceTemplate{URITemplate: t.Template.URITemplate, Name: t.Template.Name, Title: t.Template.Title,
				Description: t.Template.Description, MIMEType: t.Template.MIMEType,
				Read: func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
					c, err := b.client(server, "")
					if err == nil {
						var res *mcp.ReadResourceResult
						if res, err = c.ReadResource(g.relay(ctx), uri); err == nil {
							return res, nil
						}
					}
					return nil, forwardError(err, uri, "")
				}})
		},
		func(t string) { g.p.RemoveResourceTemplate(t) },
		func(t string, err error) {
			b.log.Warn("mcpkit: gateway cannot serve resource template", "uriTemplate", t, "err", err)
		})
	reconcile(g.havePrompts, b.Prompts(),
		func(p RemotePrompt) (string, string) {
			return p.Prompt.Name, extraFingerprint(p.Server+"\x00"+p.Name, p.Prompt)
		},
		func(p RemotePrompt) error {
			name := p.Prompt.Name
			return g.p.AddPrompt(Prompt{Name: name, Description: p.Prompt.Description, Arguments: p.Prompt.Arguments,
				Get: func(ctx context.Context, args map[string]string) (*mcp.GetPromptResult, error) {
					res, err := b.GetPrompt(g.relay(ctx), name, args)
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
	ann, _ := json.Marshal(t.Annotations)
	return t.Title + "\x00" + t.Description + "\x00" + string(schema) + "\x00" + string(t.OutputSchema) + "\x00" + string(ann)
}

func (g *gateway) sync() {
	g.mu.Lock()
	defer g.mu.Unlock()
	reg := g.b.reg
	reconcile(g.have, reg.List(),
		func(t Tool) (string, string) { return t.Name, fingerprint(t) },
		func(t Tool) error {
			name := t.Name
			// Served as the upstream lists it: title, output schema and
			// annotations too; a schema the registry could not use whole is
			// served as it is (the registry checks what it can).
			return g.p.addTool(Tool{Name: name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema,
				OutputSchema: t.OutputSchema, Annotations: t.Annotations,
				Execute: func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
					res, err := reg.Call(g.relay(ctx), name, args)
					if err != nil {
						var e *Error
						if errors.As(err, &e) && e.Code != CodeInvalidParameters {
							// The upstream's failure, told to the model as a tool error.
							return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: e.Error()}}}, nil
						}
						return nil, err
					}
					return res, nil
				}}, true)
		},
		func(name string) { g.p.RemoveTool(name) },
		func(name string, err error) {
			g.b.log.Warn("mcpkit: gateway cannot serve tool", "tool", name, "err", err)
		})
	g.syncExtras()
	g.watchClients()
}

// relay returns ctx with RequestHooks that send what an upstream says in
// the course of a request made for the downstream request ctx runs for
// back to that request's session (see NewGateway).
func (g *gateway) relay(ctx context.Context) context.Context {
	req := incomingRequest(ctx)
	if req == nil {
		return ctx
	}
	ss, ok := req.GetSession().(*mcp.ServerSession)
	if !ok || ss == nil {
		return ctx
	}
	h := &RequestHooks{
		// The go-sdk filters by the session's level (or the request's,
		// on 2026-07-28).
		OnLog: func(p *mcp.LoggingMessageParams) {
			q := *p
			ss.Log(ctx, &q)
		},
	}
	if rp, ok := req.GetParams().(mcp.RequestParams); ok && !isNilParams(rp) {
		if tok := rp.GetProgressToken(); tok != nil {
			h.OnProgress = func(p *mcp.ProgressNotificationParams) {
				q := *p
				q.ProgressToken = tok // the client's own token, not ours
				ss.NotifyProgress(ctx, &q)
			}
		}
		if level, ok := rp.GetMeta()[mcp.MetaKeyLogLevel].(string); ok {
			h.LogLevel = mcp.LoggingLevel(level)
		}
	}
	if h.LogLevel == "" {
		// For an upstream that takes the level per request (2026-07-28),
		// the session's own (rather than the most verbose of all).
		g.subMu.Lock()
		h.LogLevel = g.levels[ss]
		g.subMu.Unlock()
	}
	var caps *mcp.ClientCapabilities
	if cr, ok := req.(interface {
		ClientCapabilities() *mcp.ClientCapabilities
	}); ok {
		caps = cr.ClientCapabilities()
	}
	if caps != nil && caps.Sampling != nil {
		h.OnSample = func(uctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			dctx, stop := cancelWith(ctx, uctx)
			defer stop()
			return ss.CreateMessage(dctx, p)
		}
	}
	if caps != nil && caps.Elicitation != nil {
		h.OnElicit = func(uctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			dctx, stop := cancelWith(ctx, uctx)
			defer stop()
			return ss.Elicit(dctx, p)
		}
	}
	if g.resumable {
		if ex := req.GetExtra(); ex != nil && ex.CloseSSEStream != nil {
			h.OnStreamClosed = func(retry time.Duration) {
				ex.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: retry})
			}
		}
	}
	return WithRequestHooks(ctx, h)
}

// cancelWith returns a context with ctx's values that is cancelled when
// ctx or other is done: a request to the downstream client, on behalf of
// an upstream request that may be cancelled first.
func cancelWith(ctx, other context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(other, func() { cancel(context.Cause(other)) })
	return ctx, func() {
		stop()
		cancel(nil)
	}
}

// watchClients makes the gateway a watcher of every client of the fleet
// (once each) and asks new ones for the relayed log level. Called with
// g.mu held.
func (g *gateway) watchClients() {
	g.subMu.Lock()
	level := g.level
	g.subMu.Unlock()
	for _, c := range g.b.fleet.Clients() {
		if !c.watchers.has(g) {
			c.watchers.set(g, &clientWatcher{log: g.broadcastLog, updated: g.resourceUpdated, ready: g.upstreamReady})
		}
		if level != "" && c.LogLevel() != level && c.Phase().Usable() {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
				defer cancel()
				c.SetLogLevel(ctx, level)
			}()
		}
	}
}

// broadcastLog sends an upstream's log message that came outside any
// forwarded request to every session, each filtered by its level.
func (g *gateway) broadcastLog(_ string, p *mcp.LoggingMessageParams) {
	for ss := range g.p.Server().Sessions() {
		q := *p
		ss.Log(context.Background(), &q)
	}
}

// logLevels are the MCP log levels, most verbose first.
var logLevels = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// watchSetLevel is receiving middleware that passes a session's
// logging/setLevel on to the upstreams.
func (g *gateway) watchSetLevel(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err == nil && method == "logging/setLevel" {
			p, _ := req.GetParams().(*mcp.SetLoggingLevelParams)
			ss, _ := req.GetSession().(*mcp.ServerSession)
			if p != nil && ss != nil {
				g.subMu.Lock()
				g.levels[ss] = p.Level
				g.watchSessionLocked(ss)
				g.subMu.Unlock()
				g.applyLevel(ctx)
			}
		}
		return res, err
	}
}

// applyLevel asks the upstreams for the most verbose level any session
// asked for, if that changed. It returns when they have answered.
func (g *gateway) applyLevel(ctx context.Context) {
	g.subMu.Lock()
	want := mcp.LoggingLevel("")
	best := len(logLevels)
	for _, l := range g.levels {
		if i := slices.Index(logLevels, l); i >= 0 && i < best {
			best, want = i, l
		}
	}
	if want == "" || want == g.level {
		g.subMu.Unlock()
		return
	}
	g.level = want
	g.subMu.Unlock()
	var wg sync.WaitGroup
	for _, c := range g.b.fleet.Clients() {
		wg.Go(func() {
			if err := c.SetLogLevel(ctx, want); err != nil {
				g.b.log.Debug("mcpkit: gateway could not pass the log level on", "server", c.Name(), "err", err)
			}
		})
	}
	wg.Wait()
}

// watchSessionLocked arranges for the session's subscriptions and log
// level to be dropped when it ends. Called with g.subMu held.
func (g *gateway) watchSessionLocked(ss *mcp.ServerSession) {
	if g.watching[ss] {
		return
	}
	g.watching[ss] = true
	go func() {
		ss.Wait()
		g.sessionEnded(ss)
	}()
}

// sessionEnded drops an ended session's log level and subscriptions,
// unsubscribing upstream from what no session wants any more.
func (g *gateway) sessionEnded(ss *mcp.ServerSession) {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
	defer cancel()
	g.subOp.Lock()
	defer g.subOp.Unlock()
	g.subMu.Lock()
	delete(g.watching, ss)
	delete(g.levels, ss)
	gone := map[string]string{} // URI → server
	for uri, sub := range g.subs {
		if sub.sessions[ss] {
			delete(sub.sessions, ss)
			if len(sub.sessions) == 0 {
				delete(g.subs, uri)
				gone[uri] = sub.server
			}
		}
	}
	g.subMu.Unlock()
	for uri, server := range gone {
		if c, err := g.b.client(server, ""); err == nil {
			c.Unsubscribe(ctx, uri)
		}
	}
	g.applyLevel(ctx)
}

// subscribe passes a session's resources/subscribe on to the upstream
// that owns the URI, unless the gateway is subscribed already.
func (g *gateway) subscribe(ctx context.Context, ss *mcp.ServerSession, uri string) error {
	server, ok := g.b.resourceOwner(uri)
	if !ok {
		return mcp.ResourceNotFoundError(uri)
	}
	c, err := g.b.client(server, "")
	if err != nil {
		return err
	}
	if ir := c.InitializeResult(); ir == nil || ir.Capabilities == nil || ir.Capabilities.Resources == nil || !ir.Capabilities.Resources.Subscribe {
		return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("%s does not support resource subscriptions", server)}
	}
	g.subOp.Lock()
	defer g.subOp.Unlock()
	g.subMu.Lock()
	sub := g.subs[uri]
	g.subMu.Unlock()
	if sub == nil || sub.server != server {
		if err := c.Subscribe(ctx, uri); err != nil {
			return forwardError(err, uri, "")
		}
		sub = &gatewaySub{server: server, sessions: map[*mcp.ServerSession]bool{}}
	}
	g.subMu.Lock()
	g.subs[uri] = sub
	sub.sessions[ss] = true
	g.watchSessionLocked(ss)
	g.subMu.Unlock()
	return nil
}

// unsubscribe drops a session's subscription, and the gateway's upstream
// when no session wants the URI any more.
func (g *gateway) unsubscribe(ctx context.Context, ss *mcp.ServerSession, uri string) error {
	g.subOp.Lock()
	defer g.subOp.Unlock()
	g.subMu.Lock()
	sub := g.subs[uri]
	if sub == nil || !sub.sessions[ss] {
		g.subMu.Unlock()
		return nil
	}
	delete(sub.sessions, ss)
	last := len(sub.sessions) == 0
	if last {
		delete(g.subs, uri)
	}
	g.subMu.Unlock()
	if !last {
		return nil
	}
	c, err := g.b.client(sub.server, "")
	if err != nil {
		return err
	}
	if err := c.Unsubscribe(ctx, uri); err != nil {
		return forwardError(err, uri, "")
	}
	return nil
}

// resourceUpdated passes an upstream's notifications/resources/updated on
// to the sessions subscribed to the URI through the gateway.
func (g *gateway) resourceUpdated(server, uri string) {
	g.subMu.Lock()
	sub := g.subs[uri]
	ours := sub != nil && sub.server == server
	g.subMu.Unlock()
	if ours {
		g.p.Server().ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
	}
}

// upstreamReady subscribes a (re)connected upstream to the URIs the
// gateway holds for it: subscriptions belong to a connection.
func (g *gateway) upstreamReady(server string) {
	g.subMu.Lock()
	var uris []string
	for uri, sub := range g.subs {
		if sub.server == server {
			uris = append(uris, uri)
		}
	}
	g.subMu.Unlock()
	if len(uris) == 0 {
		return
	}
	c, err := g.b.client(server, "")
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	for _, uri := range uris {
		if err := c.Subscribe(ctx, uri); err != nil {
			g.b.log.Warn("mcpkit: gateway could not subscribe again", "server", server, "uri", uri, "err", err)
		}
	}
}

// complete passes completion/complete on to the server that owns the
// prompt or resource template (or resource). A server that does not
// offer completions has none.
func (g *gateway) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	ref := req.Params.Ref
	if ref == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion/complete without ref"}
	}
	params := *req.Params
	var server string
	b := g.b
	switch ref.Type {
	case "ref/prompt":
		b.mu.Lock()
		p, ok := b.prompts[ref.Name]
		b.mu.Unlock()
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", ref.Name)}
		}
		server = p.Server
		r := *ref
		r.Name = p.Name // the upstream's own name
		params.Ref = &r
	case "ref/resource":
		b.mu.Lock()
		t, ok := b.templates[ref.URI]
		res, isRes := b.resources[ref.URI]
		b.mu.Unlock()
		switch {
		case ok:
			server = t.Server
		case isRes:
			server = res.Server
		default:
			return nil, mcp.ResourceNotFoundError(ref.URI)
		}
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown reference type %q", ref.Type)}
	}
	c, err := b.client(server, "")
	if err != nil {
		return nil, err
	}
	if ir := c.InitializeResult(); ir == nil || ir.Capabilities == nil || ir.Capabilities.Completions == nil {
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}, nil
	}
	res, err := c.Complete(g.relay(withIncoming(ctx, req)), &params)
	if err != nil {
		return nil, forwardError(err, "", "")
	}
	return res, nil
}
