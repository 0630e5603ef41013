package mcpkit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	// OAuthLoopbackAuthorizer. Without it the client fetches the
	// authorization URL itself and takes the code from an immediate
	// redirect, which works only where no user is asked.
	OAuthAuthorize OAuthAuthorizeFunc
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
	grace   time.Duration
	sdk     *mcp.Client
	events  phaseQueue

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
	tools     []*mcp.Tool
	nres      int // resources, as last listed
	nprompts  int // prompts, as last listed
	refresh   refreshState
	oauth     oauthHolder // OAuth tokens, kept across reconnects (oauth.go)
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
	c.grace = firstPositive(c.opts.ShutdownGrace, DefaultShutdownGrace)
	if c.opts.MaxMessageSize <= 0 {
		c.opts.MaxMessageSize = DefaultMaxMessageSize
	}
	c.events.fn = c.phaseChanged
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
// ListTools and on the server's tools/list_changed. It keeps the last
// known list while the client is faulted.
func (c *Client) Tools() []*mcp.Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.tools)
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
	// Err is the last connect failure or fault (nil when ready).
	Err error
}

// Status returns a snapshot of the client.
func (c *Client) Status() ServerStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return ServerStatus{
		Name: c.cfg.Name, Transport: c.cfg.Transport(), Phase: c.phase,
		Tools: len(c.tools), Resources: c.nres, Prompts: c.nprompts, Err: c.fault,
	}
}

// setPhaseLocked moves to phase p and queues the change for OnPhase.
func (c *Client) setPhaseLocked(p Phase, err error) {
	if c.phase == p {
		return
	}
	ev := PhaseChange{Server: c.cfg.Name, From: c.phase, To: p, Err: err}
	c.phase = p
	c.events.push(ev)
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

// session returns the live session. explicit is true for Connect, which
// may start a connect from idle or faulted; a request starts one only to
// reconnect a faulted client with a ReconnectPolicy.
func (c *Client) session(ctx context.Context, explicit bool) (*session, error) {
	c.mu.Lock()
	for {
		if c.closed {
			c.mu.Unlock()
			return nil, c.newError(CodeNotConnected, FaultNotConnected, errOp{}, "client is closed", nil)
		}
		if c.sess != nil {
			s := c.sess
			c.mu.Unlock()
			return s, nil
		}
		if a := c.inflight; a != nil {
			c.mu.Unlock()
			select {
			case <-a.done:
			case <-ctx.Done():
				return nil, c.newError(CodeTimeout, FaultTimeout, errOp{}, "waiting for connect", ctx.Err())
			}
			if a.err != nil {
				return nil, a.err
			}
			c.mu.Lock()
			continue
		}
		tries := 1
		switch {
		case explicit:
		case c.phase == PhaseFaulted && c.opts.Reconnect != nil:
			tries = firstPositiveInt(c.opts.Reconnect.MaxAttempts, 3)
		case c.phase == PhaseFaulted:
			fault := c.fault
			c.mu.Unlock()
			return nil, c.faultedError(fault)
		default:
			c.mu.Unlock()
			return nil, c.newError(CodeNotConnected, FaultNotConnected, errOp{}, "not connected", nil)
		}
		actx, a := c.startAttemptLocked(ctx)
		c.mu.Unlock()
		c.runAttempt(actx, a, tries)
		if a.err != nil {
			return nil, a.err
		}
		return a.sess, nil
	}
}

// faultedError is the NOT_CONNECTED error of a request to a faulted
// client; it carries the fault's details (a dead child's exit status).
func (c *Client) faultedError(fault error) *Error {
	e := c.newError(CodeNotConnected, FaultNotConnected, errOp{}, "server connection faulted", fault)
	var fe *Error
	if errors.As(fault, &fe) {
		e.Message += ": " + fe.Message
		e.Err = fe.Err
		e.Details = fe.Details
	}
	return e
}

func firstPositiveInt(vs ...int) int {
	for _, v := range vs {
		if v > 0 {
			return v
		}
	}
	return 0
}

// startAttemptLocked registers a connect round; Close cancels its
// context.
func (c *Client) startAttemptLocked(ctx context.Context) (context.Context, *attempt) {
	ctx, cancel := context.WithCancelCause(ctx)
	a := &attempt{done: make(chan struct{}), cancel: cancel}
	c.inflight = a
	c.setPhaseLocked(PhaseConnecting, nil)
	return ctx, a
}

// runAttempt makes up to tries connection attempts with backoff, then
// publishes the outcome to a's waiters.
func (c *Client) runAttempt(ctx context.Context, a *attempt, tries int) {
	defer a.cancel(nil)

	var (
		s   *session
		err error
	)
	backoff := time.Duration(0)
	if p := c.opts.Reconnect; p != nil {
		backoff = firstPositive(p.InitialBackoff, 100*time.Millisecond)
	}
	for i := range tries {
		if i > 0 {
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
			if ctx.Err() != nil {
				break
			}
			backoff = min(2*backoff, firstPositive(c.opts.Reconnect.MaxBackoff, 5*time.Second))
		}
		s, err = c.dial(ctx)
		if err == nil || ctx.Err() != nil || errors.Is(err, ErrConfig) || errors.Is(err, ErrSession) {
			break
		}
		c.log.Debug("mcpkit: connect attempt failed", "server", c.cfg.Name, "attempt", i+1, "error", err)
	}

	c.mu.Lock()
	c.inflight = nil
	switch {
	case c.closed:
		if s != nil {
			close(s.watching) // never watched
			defer s.close(c.closedErr())
		}
		s, err = nil, c.closedErr()
	case err != nil:
		c.fault = err
		c.setPhaseLocked(PhaseFaulted, err)
	default:
		c.sess = s
		c.fault = nil
		c.setPhaseLocked(PhaseReady, nil)
	}
	a.sess, a.err = s, err
	close(a.done)
	c.mu.Unlock()
	if s != nil {
		go s.watch()
	}
}

func (c *Client) closedErr() *Error {
	return c.newError(CodeNotConnected, FaultNotConnected, errOp{}, "client is closed", nil)
}

// session is one connection: a handshake's worth of state.
type session struct {
	c      *Client
	cs     *mcp.ClientSession
	proc   *process   // stdio only
	conn   *stdioConn // stdio only
	http   *httpWatch // http and sse only
	cancel context.CancelFunc

	ended    chan struct{} // closed when the session is over
	endErr   *Error        // why, when it ended by itself; set before ended closes
	watching chan struct{} // closed when watch returns

	mu      sync.Mutex
	closing bool
	// failed is set (guarded by c.routes.mu) once the session's requests
	// have been failed: a request that starts later fails at once.
	failed bool

	ackMu   sync.Mutex
	ackSeen bool
	ackWait []*ackWaiter
}

func (s *session) httpStatus() int {
	if s == nil || s.http == nil {
		return 0
	}
	return int(s.http.status.Load())
}

// broken reports whether the connection is known to have failed.
func (s *session) broken() bool {
	if s.conn.failure() != nil {
		return true
	}
	if s.proc != nil && s.proc.hasExited() {
		return true
	}
	select {
	case <-s.ended:
		return true
	default:
		return false
	}
}

// awaitEnd waits (boundedly) for the session to end and returns its
// fault, or nil if it was closed by us or is still alive.
func (s *session) awaitEnd() *Error {
	t := time.NewTimer(s.c.grace + time.Second)
	defer t.Stop()
	select {
	case <-s.ended:
		return s.endErr
	case <-t.C:
		return nil
	}
}

// endedFault returns the session's fault if it has already ended by
// itself.
func (s *session) endedFault() *Error {
	select {
	case <-s.ended:
		return s.endErr
	default:
		return nil
	}
}

// endCause is the error pending requests fail with when the session ends.
func (s *session) endCause() error {
	select {
	case <-s.ended:
		if s.endErr != nil {
			return s.endErr
		}
	default:
	}
	return s.c.closedErr()
}

// failCalls cancels every pending request with cause; requests made
// later fail at once.
func (s *session) failCalls(cause error) {
	s.c.routes.failSession(s, cause)
}

// watch waits for the connection to end by itself (the server exited or
// hung up, or broke the protocol) and reports it as a fault.
func (s *session) watch() {
	defer close(s.watching)
	waited := make(chan struct{})
	go func() {
		s.cs.Wait()
		close(waited)
	}()
	var exited <-chan struct{}
	if s.proc != nil {
		exited = s.proc.exited
	}
	select {
	case <-waited:
	case <-exited:
		// The child is gone but something (a grandchild) may hold its
		// stdout open: end the connection ourselves.
		killGroup(s.proc.cmd.Process)
		s.proc.stdout.Close()
		t := time.NewTimer(s.c.grace)
		select {
		case <-waited:
		case <-t.C: // a handler of ours is stuck; report the fault anyway
		}
		t.Stop()
	}
	s.mu.Lock()
	closing := s.closing
	s.closing = true
	s.mu.Unlock()
	if closing {
		return // Close is tearing it down
	}
	fault := s.fault()
	// Leave the client first, so that a request that sees this fault
	// and retries finds the client faulted (or reconnecting), not this
	// dead session.
	s.c.sessionFaulted(s, fault)
	s.endErr = fault
	close(s.ended)
	s.failCalls(fault)
	s.teardown()
}

// fault describes why a connection that ended by itself ended.
func (s *session) fault() *Error {
	c := s.c
	if s.proc != nil {
		// A malformed message is the cause unless the server crashed: a
		// server that exits cleanly afterwards does so because the broken
		// connection closed its stdin.
		if perr := s.conn.protocolFailure(); perr != nil && (!s.proc.hasExited() || s.proc.exitInfo().ExitCode == 0) {
			return c.newError(CodeProtocolError, FaultProtocol, errOp{}, "server sent a malformed message", perr)
		}
		t := time.NewTimer(c.grace)
		defer t.Stop()
		select {
		case <-s.proc.exited:
			info := s.proc.exitInfo()
			e := c.newError(CodeNotConnected, FaultNotConnected, errOp{}, "server exited: "+info.String(), s.conn.failure())
			e.Details = info
			return e
		case <-t.C:
		}
		return c.newError(CodeTransportError, FaultTransport, errOp{}, "server closed its stdout", s.conn.failure())
	}
	if st := s.httpStatus(); st == 401 || st == 403 || st == 404 {
		return c.newError(CodeSessionError, "", errOp{}, fmt.Sprintf("server ended the session (HTTP %d)", st), nil)
	}
	return c.newError(CodeTransportError, FaultTransport, errOp{}, "connection lost", nil)
}

// teardown releases the session's resources without waiting for the
// go-sdk's graceful close.
func (s *session) teardown() {
	if s.proc != nil {
		s.proc.shutdown(s.c.grace)
	}
	if s.cs != nil {
		done := make(chan struct{})
		go func() {
			s.cs.Close()
			close(done)
		}()
		t := time.NewTimer(s.c.grace)
		select {
		case <-done:
		case <-t.C:
		}
		t.Stop()
	}
	s.cancel()
}

// close ends the session on our side: pending requests fail with cause,
// the go-sdk session is closed, and a stdio child is stopped. Bounded.
func (s *session) close(cause error) {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		if s.cs != nil {
			<-s.watching
		}
		return
	}
	s.closing = true
	s.mu.Unlock()
	close(s.ended)
	s.failCalls(cause)
	var wg sync.WaitGroup
	if s.cs != nil {
		wg.Go(func() {
			done := make(chan struct{})
			go func() {
				s.cs.Close() // waits for pending calls; for HTTP, sends DELETE
				close(done)
			}()
			t := time.NewTimer(s.c.grace)
			defer t.Stop()
			select {
			case <-done:
			case <-t.C:
			}
		})
	}
	if s.proc != nil {
		wg.Go(func() { s.proc.shutdown(s.c.grace) })
	}
	wg.Wait()
	s.cancel()
	if s.cs != nil && s.watching != nil {
		t := time.NewTimer(s.c.grace)
		defer t.Stop()
		select {
		case <-s.watching:
		case <-t.C:
		}
	}
}

// sessionFaulted moves the client to faulted when s was its live session,
// and starts a reconnect round if there is a policy.
func (c *Client) sessionFaulted(s *session, fault *Error) {
	c.mu.Lock()
	if c.sess != s || c.closed {
		c.mu.Unlock()
		return
	}
	c.sess = nil
	c.fault = fault
	c.setPhaseLocked(PhaseFaulted, fault)
	reconnect := c.opts.Reconnect != nil
	c.mu.Unlock()
	c.log.Warn("mcpkit: server connection faulted", "server", c.cfg.Name, "error", fault)
	if reconnect {
		go c.session(context.Background(), false)
	}
}

// dial makes one connection attempt: spawn or dial, handshake, list.
func (c *Client) dial(ctx context.Context) (*session, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	// The connection outlives ctx (the SSE transport ties its stream to
	// the context given to Connect), so it gets a context of its own that
	// ctx cancels only until the handshake is done.
	connCtx, connCancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, connCancel)
	s := &session{
		c: c, cancel: connCancel,
		ended: make(chan struct{}), watching: make(chan struct{}),
	}
	fail := func(e *Error) (*session, error) {
		stop()
		close(s.watching)
		s.close(e)
		return nil, e
	}

	var t mcp.Transport
	switch kind := c.cfg.Transport(); kind {
	case TransportStdio:
		if c.cfg.Command == "" {
			return fail(c.newError(CodeConfigError, "", errOp{}, "stdio server has no command", nil))
		}
		p, err := startProcess(&c.cfg, c.log)
		if err != nil {
			return fail(c.newError(CodeConnectionFailed, FaultSpawnFailed, errOp{}, "cannot start "+c.cfg.Command, err))
		}
		s.proc = p
		t = &stdioTransport{proc: p, maxFrame: c.opts.MaxMessageSize, onConn: func(conn *stdioConn) { s.conn = conn }}
		// A child that exits during start-up fails the handshake at once.
		handshakeDone := make(chan struct{})
		defer close(handshakeDone)
		go func() {
			select {
			case <-p.exited:
				connCancel()
			case <-handshakeDone:
			}
		}()
	case TransportHTTP, TransportSSE:
		if c.cfg.URL == "" {
			return fail(c.newError(CodeConfigError, "", errOp{}, string(kind)+" server has no URL", nil))
		}
		s.http = &httpWatch{}
		hc, herr := c.sessionHTTPClient(s.http) // with OAuth beneath the headers, if configured
		if herr != nil {
			return fail(herr)
		}
		if kind == TransportHTTP {
			t = &mcp.StreamableClientTransport{Endpoint: c.cfg.URL, HTTPClient: hc}
		} else {
			t = &mcp.SSEClientTransport{Endpoint: c.cfg.URL, HTTPClient: hc}
		}
	default:
		return fail(c.newError(CodeConfigError, "", errOp{}, fmt.Sprintf("server has no command or URL (transport %q)", kind), nil))
	}

	c.mu.Lock()
	c.dialing = s
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		if c.dialing == s {
			c.dialing = nil
		}
		c.mu.Unlock()
	}()
	cs, err := c.sdk.Connect(connCtx, t, &mcp.ClientSessionOptions{ProtocolVersion: c.opts.ProtocolVersion})
	if err != nil {
		if oe := oauthFailure(err); oe != nil {
			return fail(oe) // the OAuth flow's own error says more than "handshake failed"
		}
		return fail(c.connectError(ctx, s, err))
	}
	s.cs = cs
	if !stop() {
		cs.Close()
		s.cs = nil
		return fail(c.connectError(ctx, s, ctx.Err()))
	}
	if s.http != nil {
		s.http.status.Store(0) // statuses seen while probing are history
	}
	if err := c.afterHandshake(ctx, s); err != nil {
		return fail(err)
	}
	return s, nil
}

// connectError classifies a failed handshake.
func (c *Client) connectError(ctx context.Context, s *session, err error) *Error {
	op := errOp{method: "initialize"}
	if p := s.proc; p != nil {
		// A child that exited (or closed stdout, and is about to) failed
		// to start: report its exit status and stderr.
		if perr := s.conn.protocolFailure(); perr == nil || p.hasExited() {
			wait := c.grace
			if ctx.Err() != nil && !p.hasExited() {
				wait = 0
			}
			t := time.NewTimer(wait)
			defer t.Stop()
			select {
			case <-p.exited:
				info := p.exitInfo()
				e := c.newError(CodeConnectionFailed, FaultSpawnFailed, op, "server exited during start-up: "+info.String(), err)
				e.Details = info
				return e
			case <-t.C:
			}
		} else {
			return c.newError(CodeConnectionFailed, FaultProtocol, op, "server sent a malformed message during the handshake", perr)
		}
	}
	if ctx.Err() != nil {
		return c.newError(CodeTimeout, FaultTimeout, op, "handshake timed out", ctx.Err())
	}
	code, kind := classifyError(err, op.method, s.httpStatus())
	switch code {
	case CodeSessionError:
		return c.newError(code, kind, op, fmt.Sprintf("server refused the session (HTTP %d)", s.httpStatus()), err)
	case CodeTimeout:
		return c.newError(code, kind, op, "handshake timed out", err)
	}
	e := c.newError(CodeConnectionFailed, kind, op, "handshake failed", err)
	if we := wireError(err); we != nil {
		e.Details = &WireError{Code: we.Code, Message: we.Message, Data: we.Data}
	}
	return e
}

// afterHandshake asks for log messages, waits for the server to confirm
// notification subscriptions (2026-07-28) and lists what the server
// offers.
func (c *Client) afterHandshake(ctx context.Context, s *session) *Error {
	init := s.cs.InitializeResult()
	caps := init.Capabilities
	if caps == nil {
		caps = &mcp.ServerCapabilities{}
	}
	newProtocol := init.ProtocolVersion >= "2026-07-28"
	if newProtocol && (caps.Tools != nil && caps.Tools.ListChanged ||
		caps.Prompts != nil && caps.Prompts.ListChanged ||
		caps.Resources != nil && caps.Resources.ListChanged) {
		// The go-sdk opened a subscriptions/listen stream for list
		// changes; wait (briefly) for the server to acknowledge it so
		// that no change after Connect returns goes unnoticed.
		s.awaitAck(ctx, func(*mcp.SubscriptionsAcknowledgedParams) bool { return true })
	}
	if level := c.LogLevel(); level != "" && !newProtocol && caps.Logging != nil {
		if err := s.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level}); err != nil {
			c.log.Warn("mcpkit: server refused logging/setLevel", "server", c.cfg.Name, "error", err)
		}
	}
	var tools []*mcp.Tool
	if caps.Tools != nil {
		var err error
		tools, err = listAll(ctx, func(ctx context.Context, cursor string) ([]*mcp.Tool, string, error) {
			res, err := s.cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return res.Tools, res.NextCursor, nil
		})
		if err != nil {
			if s.proc != nil && (s.broken() || isConnectionLoss(err)) {
				return c.connectError(ctx, s, err) // it died right after the handshake
			}
			return c.mapCallError(ctx, ctx, s, errOp{method: "tools/list"}, err)
		}
	}
	nres, nprompts := -1, -1
	if caps.Resources != nil {
		if n, err := s.countResources(ctx); err == nil {
			nres = n
		} else {
			c.log.Warn("mcpkit: listing resources failed", "server", c.cfg.Name, "error", err)
		}
	}
	if caps.Prompts != nil {
		if n, err := s.countPrompts(ctx); err == nil {
			nprompts = n
		} else {
			c.log.Warn("mcpkit: listing prompts failed", "server", c.cfg.Name, "error", err)
		}
	}
	c.mu.Lock()
	c.tools = tools
	c.nres = max(nres, 0)
	c.nprompts = max(nprompts, 0)
	c.mu.Unlock()
	return nil
}

func (s *session) countResources(ctx context.Context) (int, error) {
	rs, err := listAll(ctx, func(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
		res, err := s.cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Resources, res.NextCursor, nil
	})
	return len(rs), err
}

func (s *session) countPrompts(ctx context.Context) (int, error) {
	ps, err := listAll(ctx, func(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
		res, err := s.cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Prompts, res.NextCursor, nil
	})
	return len(ps), err
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
	s, err := c.session(ctx, false)
	if err != nil {
		return c.forOp(err, op)
	}
	r := c.routes.begin(c, s, ctx)
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
// none).
//
// Errors: TOOL_NOT_FOUND, INVALID_PARAMETERS, SERVER_ERROR, TIMEOUT,
// NOT_CONNECTED (with the exit status when the server died mid-call),
// TRANSPORT_ERROR, PROTOCOL_ERROR, SESSION_ERROR.
func (c *Client) CallTool(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
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

// ListTools lists the server's tools (all pages) and refreshes the cache.
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
	c.tools = tools
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
	c.routes.stop()
	c.mu.Lock()
	c.setPhaseLocked(PhaseClosed, nil)
	close(c.closeDone)
	c.mu.Unlock()
	return nil
}

// currentSession returns the live session if cs is its go-sdk session.
func (c *Client) currentSession(cs *mcp.ClientSession) *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess != nil && c.sess.cs == cs {
		return c.sess
	}
	return nil
}

type listKind int

const (
	kindTools listKind = iota
	kindResources
	kindPrompts
)

// listChanged refreshes the cache for a changed list in the background
// (the handler runs on the connection's reader, which the refresh's own
// requests need) and then tells the handler.
func (c *Client) listChanged(kind listKind) {
	c.mu.Lock()
	s := c.sess
	if s == nil {
		c.mu.Unlock()
		return
	}
	if kind == kindTools {
		if c.refresh.running {
			c.refresh.again = true
			c.mu.Unlock()
			return
		}
		c.refresh.running = true
	}
	c.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
		defer cancel()
		switch kind {
		case kindResources:
			if n, err := s.countResources(ctx); err == nil {
				c.mu.Lock()
				c.nres = n
				c.mu.Unlock()
			}
			if h := c.opts.OnResourceListChanged; h != nil {
				h(c.cfg.Name)
			}
		case kindPrompts:
			if n, err := s.countPrompts(ctx); err == nil {
				c.mu.Lock()
				c.nprompts = n
				c.mu.Unlock()
			}
			if h := c.opts.OnPromptListChanged; h != nil {
				h(c.cfg.Name)
			}
		case kindTools:
			for {
				tools, err := listAll(ctx, func(ctx context.Context, cursor string) ([]*mcp.Tool, string, error) {
					res, err := s.cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
					if err != nil {
						return nil, "", err
					}
					return res.Tools, res.NextCursor, nil
				})
				c.mu.Lock()
				current := c.sess == s
				if err == nil && current {
					c.tools = tools
				}
				again := c.refresh.again && current
				c.refresh.again = false
				if !again {
					c.refresh.running = false
				}
				c.mu.Unlock()
				if err != nil {
					c.log.Warn("mcpkit: refreshing tools failed", "server", c.cfg.Name, "error", err)
				} else if h := c.opts.OnToolsChanged; h != nil && current {
					h(c.cfg.Name, slices.Clone(tools))
				}
				if !again {
					return
				}
			}
		}
	}()
}

func (c *Client) resourceUpdated(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
	if req.Params == nil {
		return
	}
	if h := c.opts.OnResourceUpdated; h != nil {
		h(c.cfg.Name, req.Params.URI)
	}
	c.watchers.each(func(w *clientWatcher) {
		if w.updated != nil {
			w.updated(c.cfg.Name, req.Params.URI)
		}
	})
}

// hooksOf returns the hooks of the request that routeIncoming found for
// a message (nil if none).
func (c *Client) hooksOf(ctx context.Context) *RequestHooks {
	if r := c.inflightFrom(ctx); r != nil {
		return r.hooks
	}
	return nil
}

func (c *Client) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	if h := c.hooksOf(ctx); h != nil && h.OnElicit != nil {
		return h.OnElicit(ctx, req.Params)
	}
	if c.opts.OnElicit == nil {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	return c.opts.OnElicit(ctx, c.cfg.Name, req.Params)
}

// sample answers a sampling request (registered only with OnSample).
func (c *Client) sample(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	if h := c.hooksOf(ctx); h != nil && h.OnSample != nil {
		return h.OnSample(ctx, req.Params)
	}
	return c.opts.OnSample(ctx, c.cfg.Name, req.Params)
}

func (c *Client) progress(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
	if req.Params == nil {
		return
	}
	if h := c.hooksOf(ctx); h != nil && h.OnProgress != nil {
		h.OnProgress(req.Params)
		return
	}
	if c.opts.OnProgress != nil {
		c.opts.OnProgress(c.cfg.Name, req.Params)
	}
}

// serverLog forwards a server's log message to the logger and to the
// hook of the request it came in the course of, else to OnLog (and a
// gateway's watchers).
func (c *Client) serverLog(ctx context.Context, req *mcp.LoggingMessageRequest) {
	p := req.Params
	if p == nil {
		return
	}
	c.log.Log(ctx, slogLevel(p.Level), "server log", "server", c.cfg.Name, "logger", p.Logger, "data", p.Data)
	if h := c.hooksOf(ctx); h != nil && h.OnLog != nil {
		h.OnLog(p)
		return
	}
	if c.opts.OnLog != nil {
		c.opts.OnLog(c.cfg.Name, p)
	}
	c.watchers.each(func(w *clientWatcher) {
		if w.log != nil {
			w.log(c.cfg.Name, p)
		}
	})
}

func slogLevel(l mcp.LoggingLevel) slog.Level {
	switch l {
	case "debug":
		return slog.LevelDebug
	case "info", "notice":
		return slog.LevelInfo
	case "warning":
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

// requestLogLevel adds the log level (the request's hook's, else the
// client's) to every request of a 2026-07-28 session, where the level is
// per request rather than per session.
func (c *Client) requestLogLevel(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		level := c.LogLevel()
		if h := c.hooksOf(ctx); h != nil && h.LogLevel != "" {
			level = h.LogLevel
		}
		if level == "" {
			return next(ctx, method, req)
		}
		if cs, ok := req.GetSession().(*mcp.ClientSession); ok {
			if init := cs.InitializeResult(); init != nil && init.ProtocolVersion >= "2026-07-28" {
				if p := req.GetParams(); !isNilParams(p) && !strings.HasPrefix(method, "notifications/") {
					m := p.GetMeta()
					if m == nil {
						m = map[string]any{}
					}
					if _, ok := m[mcp.MetaKeyLogLevel]; !ok {
						m[mcp.MetaKeyLogLevel] = level
						p.SetMeta(m)
					}
				}
			}
		}
		return next(ctx, method, req)
	}
}

// isNilParams reports whether p is nil or a typed nil pointer.
func isNilParams(p mcp.Params) bool {
	if p == nil {
		return true
	}
	v := reflect.ValueOf(p)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// ackWaiter waits for a notifications/subscriptions/acknowledged that
// match accepts.
type ackWaiter struct {
	match func(*mcp.SubscriptionsAcknowledgedParams) bool
	done  chan struct{}
}

func (s *session) addAckWaiter(match func(*mcp.SubscriptionsAcknowledgedParams) bool) *ackWaiter {
	w := &ackWaiter{match: match, done: make(chan struct{})}
	s.ackMu.Lock()
	s.ackWait = append(s.ackWait, w)
	s.ackMu.Unlock()
	return w
}

func (s *session) removeAckWaiter(w *ackWaiter) {
	s.ackMu.Lock()
	s.ackWait = slices.DeleteFunc(s.ackWait, func(x *ackWaiter) bool { return x == w })
	s.ackMu.Unlock()
}

// ackTimeout bounds the wait for a subscription acknowledgement from a
// server that never sends one.
const ackTimeout = 2 * time.Second

func (s *session) waitAck(ctx context.Context, w *ackWaiter) {
	defer s.removeAckWaiter(w)
	t := time.NewTimer(ackTimeout)
	defer t.Stop()
	select {
	case <-w.done:
	case <-t.C:
		s.c.log.Debug("mcpkit: no subscription acknowledgement", "server", s.c.cfg.Name)
	case <-ctx.Done():
	}
}

// awaitAck waits for an acknowledgement that has possibly arrived
// already (the go-sdk opens the stream inside Connect).
func (s *session) awaitAck(ctx context.Context, match func(*mcp.SubscriptionsAcknowledgedParams) bool) {
	s.ackMu.Lock()
	if s.ackSeen {
		s.ackMu.Unlock()
		return
	}
	s.ackMu.Unlock()
	s.waitAck(ctx, s.addAckWaiter(match))
}

// watchAcks is receiving middleware that resolves ack waiters.
func (c *Client) watchAcks(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "notifications/subscriptions/acknowledged" {
			if p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok && p != nil {
				if cs, ok := req.GetSession().(*mcp.ClientSession); ok {
					c.ackFor(cs, p)
				}
			}
		}
		return next(ctx, method, req)
	}
}

// ackFor delivers an acknowledgement to the session of cs, which may be
// still in its handshake (and so not yet the client's live session).
func (c *Client) ackFor(cs *mcp.ClientSession, p *mcp.SubscriptionsAcknowledgedParams) {
	c.mu.Lock()
	s := c.dialing
	if c.sess != nil && c.sess.cs == cs {
		s = c.sess
	}
	c.mu.Unlock()
	if s == nil {
		return
	}
	s.ackMu.Lock()
	s.ackSeen = true
	for _, w := range s.ackWait {
		if w.match(p) {
			select {
			case <-w.done:
			default:
				close(w.done)
			}
		}
	}
	s.ackMu.Unlock()
}

// phaseChanged tells OnPhase, and a gateway's watchers that the client is
// ready (again).
func (c *Client) phaseChanged(ev PhaseChange) {
	if c.opts.OnPhase != nil {
		c.opts.OnPhase(ev)
	}
	if ev.To == PhaseReady {
		c.watchers.each(func(w *clientWatcher) {
			if w.ready != nil {
				w.ready(c.cfg.Name)
			}
		})
	}
}

// phaseQueue delivers phase changes to fn in order, on a goroutine that
// runs only while there is something to deliver.
type phaseQueue struct {
	fn      func(PhaseChange)
	mu      sync.Mutex
	q       []PhaseChange
	running bool
}

func (pq *phaseQueue) push(ev PhaseChange) {
	if pq.fn == nil {
		return
	}
	pq.mu.Lock()
	pq.q = append(pq.q, ev)
	if !pq.running {
		pq.running = true
		go pq.run()
	}
	pq.mu.Unlock()
}

func (pq *phaseQueue) run() {
	for {
		pq.mu.Lock()
		if len(pq.q) == 0 {
			pq.running = false
			pq.mu.Unlock()
			return
		}
		ev := pq.q[0]
		pq.q = pq.q[1:]
		pq.mu.Unlock()
		pq.fn(ev)
	}
}
