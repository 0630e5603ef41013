package mcpkit

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/worldforge-go/worldforge/mcpkit/oauth"
)

// Defaults for ClientOptions.
const (
	DefaultTimeout        = 60 * time.Second // per request, and for the handshake
	DefaultMaxMessageSize = 64 << 20         // largest stdio frame accepted
	DefaultShutdownGrace  = 2 * time.Second  // after closing stdin, and after SIGTERM
	DefaultClientName     = "worldforge-mcpkit"
	DefaultClientVersion  = "0.1.0"
)

// maxListPages bounds pagination even when cursors never repeat.
const maxListPages = 10000

// ClientOptions configures a Client. The zero value (or nil) gives the
// defaults. The handlers are called with the server's name; they run on
// the connection's reader and must not block: hand long work to a
// goroutine. What the server sends in the course of a request made with
// WithRequestHooks goes to that request's hooks instead (see
// RequestHooks).
type ClientOptions struct {
	// Implementation is the identity sent in the handshake
	// (default: worldforge-mcpkit 0.1.0).
	Implementation *mcp.Implementation
	// Logger receives the client's own logs, the server's stderr (debug)
	// and the server's log messages (default: slog.Default()).
	Logger *slog.Logger
	// Timeout bounds each request when neither its context has a deadline
	// nor ServerConfig.Timeout is set, and bounds the handshake when
	// Connect's context has no deadline (default 60 s).
	Timeout time.Duration
	// ResetTimeoutOnProgress and MaxTotalTimeout are the defaults of the
	// ServerConfig fields of the same names, for servers whose
	// configuration does not set them.
	ResetTimeoutOnProgress bool
	MaxTotalTimeout        time.Duration
	// ProtocolVersion is the protocol version to ask for ("" for the
	// go-sdk's latest; the server may negotiate down).
	ProtocolVersion string
	// MaxMessageSize caps one stdio frame (default 64 MiB). A larger frame
	// breaks the connection with PROTOCOL_ERROR.
	MaxMessageSize int
	// ShutdownGrace is how long Close waits for a stdio server to exit
	// after closing its stdin, and again after SIGTERM, before SIGKILL
	// (default 2 s).
	ShutdownGrace time.Duration
	// Reconnect, if set, makes a faulted client reconnect.
	Reconnect *ReconnectPolicy
	// Roots are the client's initial roots (see SetRoots).
	Roots []*mcp.Root
	// LogLevel, if set, asks the server for log messages at this level
	// and above (logging/setLevel, or per request on 2026-07-28).
	LogLevel mcp.LoggingLevel

	// OnPhase is told every phase change, in order, from a goroutine of
	// its own (so it may call the client, and may lag behind Phase()).
	OnPhase func(PhaseChange)
	// OnToolsChanged is called with the refreshed tool list after the
	// server announced a change.
	OnToolsChanged func(server string, tools []*mcp.Tool)
	// OnResourceListChanged and OnPromptListChanged are called when the
	// server announces a change (the cached counts are refreshed first).
	OnResourceListChanged func(server string)
	OnPromptListChanged   func(server string)
	// OnResourceUpdated is called when a subscribed resource changed.
	OnResourceUpdated func(server, uri string)
	// OnElicit answers the server's requests for user input. Without it
	// every request is declined.
	OnElicit func(ctx context.Context, server string, req *mcp.ElicitParams) (*mcp.ElicitResult, error)
	// OnSample answers the server's sampling requests
	// (sampling/createMessage). The client declares the sampling
	// capability only when it is set; RequestHooks.OnSample needs it set
	// too (it answers what no request's hook takes).
	OnSample func(ctx context.Context, server string, req *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	// OnProgress, if set, receives progress notifications; CallTool then
	// attaches a progress token to each call.
	OnProgress func(server string, p *mcp.ProgressNotificationParams)
	// OnLog receives the server's log messages (they also go to Logger).
	OnLog func(server string, p *mcp.LoggingMessageParams)
	// OAuthAuthorize shows the user the authorization requests of servers
	// with an OAuth configuration (ServerConfig.OAuth), for example with
	// oauth.LoopbackAuthorizer. Without it the client fetches the
	// authorization URL itself and takes the code from an immediate
	// redirect, which works only where no user is asked.
	OAuthAuthorize oauth.AuthorizeFunc
}

// ReconnectPolicy makes a faulted client reconnect: at once when the
// fault is noticed, and again when a call finds it faulted. Each round
// makes up to MaxAttempts attempts, waiting InitialBackoff before the
// second and doubling up to MaxBackoff. Calls made meanwhile wait for the
// round (one reconnect however many calls). A request pending when the
// server died is not retried.
type ReconnectPolicy struct {
	MaxAttempts    int           // default 3
	InitialBackoff time.Duration // default 100 ms
	MaxBackoff     time.Duration // default 5 s
}

// PhaseChange is one transition of a client's phase.
type PhaseChange struct {
	Server   string
	From, To Phase
	// Err is the fault, for a change to faulted.
	Err error
}

// Client is a connection to one MCP server. Its methods are safe for
// concurrent use. Requests return *Error values.
type Client struct {
	cfg     ServerConfig
	opts    ClientOptions
	log     *slog.Logger
	timeout time.Duration
	// Progress restarts a request's timeout; maxTotal bounds its run.
	resetOnProgress bool
	maxTotal        time.Duration
	grace           time.Duration
	sdk             *mcp.Client
	events          phaseQueue

	progressSeq atomic.Int64
	routes      routeTable // requests in flight, for routing what servers send back (route.go)
	watchers    watcherSet // a gateway's listeners (route.go)
	// logLevel is asked of the server (ClientOptions.LogLevel,
	// SetLogLevel); atomic, as every request looks at it.
	logLevel atomic.Pointer[mcp.LoggingLevel]

	mu        sync.Mutex
	phase     Phase
	fault     error    // the last connect failure or fault
	sess      *session // the live session, when ready
	inflight  *attempt // the connect or reconnect round in progress
	dialing   *session // the session in its handshake
	closed    bool
	closeDone chan struct{}
	// procs holds every stdio child this client started that is not yet
	// shut down, whatever owns it now (a live session, a session being
	// torn down after a fault, a connect that lost a race with Close):
	// Close waits for all of them.
	procs     map[*process]struct{}
	tools     []*mcp.Tool // as filtered by filter
	hidden    int         // tools the filter hid from the last listing
	filter    *toolFilter // AllowedTools and DisabledTools; nil keeps all
	filterErr *Error      // a bad pattern: Connect fails with it
	nres      int         // resources, as last listed
	nprompts  int         // prompts, as last listed
	refresh   refreshState
	oauth     oauthHolder // OAuth tokens, kept across reconnects (dial.go)
}

// attempt is a connect round that concurrent callers share.
type attempt struct {
	done   chan struct{}
	cancel context.CancelCauseFunc
	sess   *session
	err    error
}

type refreshState struct {
	running, again bool
}

// NewClient returns a client for cfg in phase idle; Connect connects it.
func NewClient(cfg ServerConfig, opts *ClientOptions) *Client {
	c := &Client{cfg: cfg, phase: PhaseIdle}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.Implementation == nil {
		c.opts.Implementation = &mcp.Implementation{Name: DefaultClientName, Version: DefaultClientVersion}
	}
	c.log = c.opts.Logger
	if c.log == nil {
		c.log = slog.Default()
	}
	c.timeout = firstPositive(cfg.Timeout, c.opts.Timeout, DefaultTimeout)
	c.resetOnProgress = cfg.ResetTimeoutOnProgress || c.opts.ResetTimeoutOnProgress
	c.maxTotal = firstPositive(cfg.MaxTotalTimeout, c.opts.MaxTotalTimeout)
	c.grace = firstPositive(c.opts.ShutdownGrace, DefaultShutdownGrace)
	if c.opts.MaxMessageSize <= 0 {
		c.opts.MaxMessageSize = DefaultMaxMessageSize
	}
	c.events.fn = c.phaseChanged
	if f, err := newToolFilter(&c.cfg); err != nil {
		c.filterErr = &Error{Code: CodeConfigError, Server: cfg.Name, Message: "tool filter: " + err.Error(), Err: err}
	} else {
		c.filter = f
	}
	if c.opts.LogLevel != "" {
		level := c.opts.LogLevel
		c.logLevel.Store(&level)
	}

	sdkOpts := &mcp.ClientOptions{
		Logger:                      c.log,
		ElicitationHandler:          c.elicit,
		ToolListChangedHandler:      func(context.Context, *mcp.ToolListChangedRequest) { c.listChanged(kindTools) },
		PromptListChangedHandler:    func(context.Context, *mcp.PromptListChangedRequest) { c.listChanged(kindPrompts) },
		ResourceListChangedHandler:  func(context.Context, *mcp.ResourceListChangedRequest) { c.listChanged(kindResources) },
		ResourceUpdatedHandler:      c.resourceUpdated,
		LoggingMessageHandler:       c.serverLog,
		ProgressNotificationHandler: c.progress,
	}
	if c.opts.OnSample != nil {
		sdkOpts.CreateMessageHandler = c.sample // declares sampling
	}
	c.sdk = mcp.NewClient(c.opts.Implementation, sdkOpts)
	if len(c.opts.Roots) > 0 {
		c.sdk.AddRoots(c.opts.Roots...)
	}
	c.sdk.AddReceivingMiddleware(c.watchAcks, c.routeIncoming)
	c.sdk.AddSendingMiddleware(c.requestLogLevel)
	return c
}

// firstPositive returns the first positive duration.
func firstPositive(ds ...time.Duration) time.Duration {
	for _, d := range ds {
		if d > 0 {
			return d
		}
	}
	return 0
}

// Name returns the server's name.
func (c *Client) Name() string { return c.cfg.Name }

// Config returns the server's configuration.
func (c *Client) Config() ServerConfig { return c.cfg }

// Phase returns the current phase.
func (c *Client) Phase() Phase {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.phase
}

// Err returns the last connect failure or fault (nil when ready).
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fault
}

// InitializeResult returns the server's handshake answer (its identity,
// capabilities and protocol version), or nil when not ready.
func (c *Client) InitializeResult() *mcp.InitializeResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess == nil {
		return nil
	}
	return c.sess.cs.InitializeResult()
}

// Tools returns the cached tool list: as listed at connect, refreshed by
// ListTools and on the server's tools/list_changed, without the tools
// that the server's AllowedTools and DisabledTools hide. It keeps the last
// known list while the client is faulted.
func (c *Client) Tools() []*mcp.Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.tools)
}

// setToolsLocked stores a listing of the server's tools, without the
// tools the filter hides; it returns what it stored. Callers hold c.mu.
func (c *Client) setToolsLocked(tools []*mcp.Tool) []*mcp.Tool {
	if c.filter != nil {
		kept := make([]*mcp.Tool, 0, len(tools))
		for _, t := range tools {
			if t != nil && c.filter.keeps(t.Name) {
				kept = append(kept, t)
			}
		}
		c.hidden = len(tools) - len(kept)
		tools = kept
	}
	c.tools = tools
	return tools
}

// filteredToolError is the answer to a call of a tool the filter hides:
// the one an MCP server gives for a tool it does not have (JSON-RPC
// -32602, "unknown tool"), as CallTool reports it, so that a hidden tool
// cannot be told from a missing one.
func (c *Client) filteredToolError(name string) *Error {
	we := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
	e := c.newError(CodeToolNotFound, "", errOp{method: methodCallTool, name: name}, we.Message, we)
	e.Details = &WireError{Code: we.Code, Message: we.Message}
	return e
}

func (c *Client) hasTool(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.ContainsFunc(c.tools, func(t *mcp.Tool) bool { return t.Name == name })
}

// ServerStatus is a snapshot of one server.
type ServerStatus struct {
	Name      string
	Transport TransportKind
	Phase     Phase
	Tools     int
	Resources int
	Prompts   int
	// HiddenTools is how many tools of the last listing the server's
	// AllowedTools and DisabledTools hid (Tools does not count them).
	HiddenTools int
	// Err is the last connect failure or fault (nil when ready).
	Err error
}

// Status returns a snapshot of the client.
func (c *Client) Status() ServerStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return ServerStatus{
		Name: c.cfg.Name, Transport: c.cfg.Transport(), Phase: c.phase,
		Tools: len(c.tools), Resources: c.nres, Prompts: c.nprompts, HiddenTools: c.hidden, Err: c.fault,
	}
}

// Connect connects to the server and returns once it has answered the
// handshake and its tools (and, when offered, resources and prompts) are
// listed. It is idempotent: a ready client returns at once, and callers
// that arrive while a connect is in progress share its outcome. If ctx
// has no deadline the handshake is bounded by the client's timeout.
//
// Errors: CONNECTION_FAILED (Kind spawn_failed when a stdio server cannot
// start or exits during start-up, with a *ProcessExit in Details),
// TIMEOUT, SESSION_ERROR (HTTP 401/403), CONFIG_ERROR, NOT_CONNECTED
// after Close.
func (c *Client) Connect(ctx context.Context) error {
	_, err := c.session(ctx, true)
	return err
}

// listAll follows nextCursor. A cursor that comes back a second time (or
// an endless list) is a PROTOCOL_ERROR.
func listAll[T any](ctx context.Context, page func(ctx context.Context, cursor string) ([]T, string, error)) ([]T, error) {
	var all []T
	seen := map[string]bool{}
	cursor := ""
	for range maxListPages {
		items, next, err := page(ctx, cursor)
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		if next == "" {
			return all, nil
		}
		if seen[next] {
			return nil, &Error{Code: CodeProtocolError, Kind: FaultProtocol, Message: fmt.Sprintf("server repeated the list cursor %q", next)}
		}
		seen[next] = true
		cursor = next
	}
	return nil, &Error{Code: CodeProtocolError, Kind: FaultProtocol, Message: fmt.Sprintf("list did not end after %d pages", maxListPages)}
}

// do runs one request on the live session with the request timeout and
// maps its error. While it runs, what the server sends in its course is
// routed to it (route.go).
//
// This is the hot path of every request: fn gets a context (the
// request's, route.go) that is cancelled when the session ends or the
// client's timeout passes, at the cost of one allocation, one
// context.WithCancelCause and one uncontended lock at each end.
func (c *Client) do(ctx context.Context, op errOp, fn func(ctx context.Context, cs *mcp.ClientSession) error) error {
	rt := requestTimeoutFrom(ctx)
	if rt != nil {
		if err := rt.check(); err != nil {
			return c.newError(CodeConfigError, "", op, "bad request timeout: "+err.Error(), err)
		}
	}
	s, err := c.session(ctx, false)
	if err != nil {
		return c.forOp(err, op)
	}
	r := c.routes.begin(c, s, ctx, rt)
	defer c.routes.end(r)
	callCtx := &r.ctx
	if err := fn(callCtx, s.cs); err != nil {
		return c.mapCallError(ctx, callCtx, s, op, err)
	}
	c.settle(callCtx, s, r)
	return nil
}

// CallTool calls a tool and returns its whole result: content blocks
// (text, image, audio, resource links, embedded resources), structured
// content and isError. A result with isError set is not an error here
// (see ToolResultError). args must marshal to a JSON object (nil for
// none). A tool that the server's AllowedTools or DisabledTools hide is
// refused without asking the server, with the TOOL_NOT_FOUND an unknown
// tool gets.
//
// Errors: TOOL_NOT_FOUND, INVALID_PARAMETERS, SERVER_ERROR, TIMEOUT,
// NOT_CONNECTED (with the exit status when the server died mid-call),
// TRANSPORT_ERROR, PROTOCOL_ERROR, SESSION_ERROR.
func (c *Client) CallTool(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	if !c.filter.keeps(name) {
		return nil, c.filteredToolError(name)
	}
	var res *mcp.CallToolResult
	err := c.do(ctx, errOp{method: methodCallTool, name: name}, func(ctx context.Context, cs *mcp.ClientSession) error {
		p := &mcp.CallToolParams{Name: name, Arguments: args}
		if tok := c.progressToken(ctx); tok != "" {
			p.SetProgressToken(tok)
		}
		var err error
		res, err = cs.CallTool(ctx, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// ListTools lists the server's tools (all pages), without those its
// AllowedTools and DisabledTools hide, and refreshes the cache.
func (c *Client) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	var tools []*mcp.Tool
	err := c.do(ctx, errOp{method: "tools/list"}, func(ctx context.Context, cs *mcp.ClientSession) (err error) {
		tools, err = listAll(ctx, func(ctx context.Context, cursor string) ([]*mcp.Tool, string, error) {
			res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return res.Tools, res.NextCursor, nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	tools = c.setToolsLocked(tools)
	c.mu.Unlock()
	return slices.Clone(tools), nil
}

// ListResources lists the server's resources (all pages).
func (c *Client) ListResources(ctx context.Context) ([]*mcp.Resource, error) {
	var out []*mcp.Resource
	err := c.do(ctx, errOp{method: "resources/list"}, func(ctx context.Context, cs *mcp.ClientSession) (err error) {
		out, err = listAll(ctx, func(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
			res, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return res.Resources, res.NextCursor, nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.nres = len(out)
	c.mu.Unlock()
	return out, nil
}

// ListPrompts lists the server's prompts (all pages).
func (c *Client) ListPrompts(ctx context.Context) ([]*mcp.Prompt, error) {
	var out []*mcp.Prompt
	err := c.do(ctx, errOp{method: "prompts/list"}, func(ctx context.Context, cs *mcp.ClientSession) (err error) {
		out, err = listAll(ctx, func(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
			res, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return res.Prompts, res.NextCursor, nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.nprompts = len(out)
	c.mu.Unlock()
	return out, nil
}

// ReadResource reads a resource. Errors: RESOURCE_NOT_FOUND and the
// request errors of CallTool.
func (c *Client) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	var res *mcp.ReadResourceResult
	err := c.do(ctx, errOp{method: methodReadResource, name: uri}, func(ctx context.Context, cs *mcp.ClientSession) (err error) {
		p := &mcp.ReadResourceParams{URI: uri}
		if tok := c.progressToken(ctx); tok != "" {
			p.SetProgressToken(tok)
		}
		res, err = cs.ReadResource(ctx, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// GetPrompt renders a prompt. Errors: PROMPT_NOT_FOUND and the request
// errors of CallTool.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	var res *mcp.GetPromptResult
	err := c.do(ctx, errOp{method: methodGetPrompt, name: name}, func(ctx context.Context, cs *mcp.ClientSession) (err error) {
		p := &mcp.GetPromptParams{Name: name, Arguments: args}
		if tok := c.progressToken(ctx); tok != "" {
			p.SetProgressToken(tok)
		}
		res, err = cs.GetPrompt(ctx, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// ListResourceTemplates lists the server's resource templates (all
// pages).
func (c *Client) ListResourceTemplates(ctx context.Context) ([]*mcp.ResourceTemplate, error) {
	var out []*mcp.ResourceTemplate
	err := c.do(ctx, errOp{method: "resources/templates/list"}, func(ctx context.Context, cs *mcp.ClientSession) (err error) {
		out, err = listAll(ctx, func(ctx context.Context, cursor string) ([]*mcp.ResourceTemplate, string, error) {
			res, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return res.ResourceTemplates, res.NextCursor, nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Complete asks the server for completions of a prompt's or resource
// template's argument (completion/complete). Errors: those of CallTool.
func (c *Client) Complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	var res *mcp.CompleteResult
	err := c.do(ctx, errOp{method: "completion/complete"}, func(ctx context.Context, cs *mcp.ClientSession) (err error) {
		res, err = cs.Complete(ctx, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// SetLogLevel asks the server for log messages at level and above,
// replacing ClientOptions.LogLevel: at once with logging/setLevel (a
// server that offers logging, before 2026-07-28), again on every later
// connection, and with each request on 2026-07-28, where the level is
// per request. The level is kept even when the request fails.
func (c *Client) SetLogLevel(ctx context.Context, level mcp.LoggingLevel) error {
	c.logLevel.Store(&level)
	return c.do(ctx, errOp{method: "logging/setLevel"}, func(ctx context.Context, cs *mcp.ClientSession) error {
		init := cs.InitializeResult()
		if init == nil || init.ProtocolVersion >= "2026-07-28" || init.Capabilities == nil || init.Capabilities.Logging == nil {
			return nil
		}
		return cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level})
	})
}

// LogLevel returns the log level asked of the server ("" for none).
func (c *Client) LogLevel() mcp.LoggingLevel {
	if p := c.logLevel.Load(); p != nil {
		return *p
	}
	return ""
}

// Subscribe asks for OnResourceUpdated calls when the resource changes.
// Subscriptions belong to a connection: after a reconnect, subscribe
// again.
func (c *Client) Subscribe(ctx context.Context, uri string) error {
	return c.do(ctx, errOp{method: methodSubscribe, name: uri}, func(ctx context.Context, cs *mcp.ClientSession) error {
		newProtocol := cs.InitializeResult().ProtocolVersion >= "2026-07-28"
		var w *ackWaiter
		s := c.currentSession(cs)
		if newProtocol && s != nil {
			// 2026-07-28 subscribes by opening a stream; wait for the
			// server to acknowledge it.
			w = s.addAckWaiter(func(p *mcp.SubscriptionsAcknowledgedParams) bool {
				return slices.Contains(p.Notifications.ResourceSubscriptions, uri)
			})
		}
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			if w != nil {
				s.removeAckWaiter(w)
			}
			return err
		}
		if w != nil {
			s.waitAck(ctx, w)
		}
		return nil
	})
}

// Unsubscribe ends a subscription.
func (c *Client) Unsubscribe(ctx context.Context, uri string) error {
	return c.do(ctx, errOp{method: methodUnsubscribe, name: uri}, func(ctx context.Context, cs *mcp.ClientSession) error {
		return cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	})
}

// SetRoots replaces the client's roots; connected servers are told the
// list changed, and the go-sdk answers their roots/list from it.
func (c *Client) SetRoots(roots []*mcp.Root) {
	keep := make(map[string]bool, len(roots))
	for _, r := range roots {
		keep[r.URI] = true
	}
	c.mu.Lock()
	old := c.opts.Roots
	c.opts.Roots = slices.Clone(roots)
	c.mu.Unlock()
	var gone []string
	for _, r := range old {
		if !keep[r.URI] {
			gone = append(gone, r.URI)
		}
	}
	if len(gone) > 0 {
		c.sdk.RemoveRoots(gone...)
	}
	c.sdk.AddRoots(roots...)
}

// Roots returns the client's roots.
func (c *Client) Roots() []*mcp.Root {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.opts.Roots)
}

// Close ends the connection and leaves nothing behind: pending requests
// fail with NOT_CONNECTED, a stdio server gets its stdin closed, then
// SIGTERM, then SIGKILL (each after ShutdownGrace), sent to its whole
// process group. Close is idempotent, safe to call concurrently, and
// bounded; a closed client cannot be reconnected.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		done := c.closeDone
		c.mu.Unlock()
		<-done
		return nil
	}
	c.closed = true
	c.closeDone = make(chan struct{})
	s, a := c.sess, c.inflight
	c.sess = nil
	c.setPhaseLocked(PhaseClosing, nil)
	if a != nil {
		a.cancel(c.closedErr())
	}
	c.mu.Unlock()

	if a != nil {
		<-a.done // the attempt closes its own session when it sees closed
	}
	if s != nil {
		s.close(c.closedErr())
	}
	// A child may still be on its way out (a session that faulted and is
	// tearing itself down, a connect that finished just as Close began):
	// stop it, or wait for the shutdown under way, so that no child
	// outlives Close.
	c.mu.Lock()
	procs := slices.Collect(maps.Keys(c.procs))
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Go(func() { p.shutdown(c.grace) })
	}
	wg.Wait()
	c.routes.stop()
	c.mu.Lock()
	c.setPhaseLocked(PhaseClosed, nil)
	close(c.closeDone)
	c.mu.Unlock()
	return nil
}
