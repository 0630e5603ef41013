package mcpkit

// Routing what a server sends back in the course of one of our requests
// (progress, log messages, sampling and elicitation requests, a closed
// HTTP stream) to the code that made the request. See RequestHooks and
// the package documentation for the rules.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/worldforge-go/worldforge/internal/jsonscan"
)

// RequestHooks receive what a server sends in the course of one request
// made with a context from WithRequestHooks (any Client request: CallTool,
// ReadResource, GetPrompt, Complete …). Each hook that is set takes the
// place of the ClientOptions handler of its kind for that request; a
// message the hooks do not take goes to ClientOptions. Hooks run on the
// connection's reader, as the ClientOptions handlers do: they must not
// block for long, and notifications reach them in the order the server
// sent them. The request does not return before the notifications that
// came ahead of its answer have been handed to the hooks (for stdio and
// streamable HTTP servers; see the package documentation).
type RequestHooks struct {
	// OnProgress receives the request's progress notifications; the
	// request then carries a progress token of the client's own (the
	// hook sees that token in the parameters).
	OnProgress func(p *mcp.ProgressNotificationParams)
	// OnLog receives the log messages the server sends in the course of
	// the request.
	OnLog func(p *mcp.LoggingMessageParams)
	// OnSample answers the server's sampling requests made in the course
	// of the request. The server sends them only to a client that
	// declares sampling, which takes ClientOptions.OnSample.
	OnSample func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	// OnElicit answers the server's elicitation requests made in the
	// course of the request. It gets them as the server sent them: the
	// go-sdk's check of the requested schema, and its filling in of
	// defaults in the answer, apply to ClientOptions.OnElicit only.
	OnElicit func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error)
	// OnStreamClosed is told when a streamable HTTP server closed the
	// request's event stream before answering, leaving the client to
	// resume it (SEP-1699 polling); retry is the delay the server asked
	// for (0 if none). The client resumes by itself; a gateway uses this
	// to close its own client's stream alike.
	OnStreamClosed func(retry time.Duration)
	// LogLevel, if set, is the log level sent with the request to a
	// 2026-07-28 server (where the level is per request) instead of the
	// client's (SetLogLevel).
	LogLevel mcp.LoggingLevel
}

type requestHooksKey struct{}

// WithRequestHooks returns a context whose requests send what the server
// says in their course to h (see RequestHooks).
func WithRequestHooks(ctx context.Context, h *RequestHooks) context.Context {
	return context.WithValue(ctx, requestHooksKey{}, h)
}

func requestHooksFrom(ctx context.Context) *RequestHooks {
	h, _ := ctx.Value(requestHooksKey{}).(*RequestHooks)
	return h
}

// Methods of the server-to-client messages that are routed to requests.
const (
	methodLogMessage    = "notifications/message"
	methodProgress      = "notifications/progress"
	methodCreateMessage = "sampling/createMessage"
	methodElicit        = "elicitation/create"
)

// routedParams returns a new value of the parameter type the go-sdk
// decodes a routed method's parameters into, or nil for other methods.
func routedParams(method string) any {
	switch method {
	case methodLogMessage:
		return new(mcp.LoggingMessageParams)
	case methodProgress:
		return new(mcp.ProgressNotificationParams)
	case methodCreateMessage:
		return new(mcp.CreateMessageWithToolsParams)
	case methodElicit:
		return new(mcp.ElicitParams)
	}
	return nil
}

func isRoutedNotification(method string) bool {
	return method == methodLogMessage || method == methodProgress
}

// messageKey identifies a routed message by its method and parameters,
// as decoded into the go-sdk's type and encoded again (so that the bytes
// on the wire and the go-sdk's decoded value give the same key).
func messageKey(method string, params any) (string, bool) {
	b, err := json.Marshal(params)
	if err != nil {
		return "", false
	}
	return method + "\x00" + string(b), true
}

type inflightKey struct{}

// openRequest is one request of ours while it runs. It is made in one
// allocation together with the request's context (ctx), which the go-sdk
// gets: the per-request cost is what a bare go-sdk call with a deadline
// costs (see Client.do).
type openRequest struct {
	c     *Client
	s     *session
	cs    *mcp.ClientSession
	hooks *RequestHooks // nil: the ClientOptions handlers

	ctx    requestContext
	cancel context.CancelCauseFunc
	// deadline is when the client's timeout ends the request; zero when
	// the caller's context has a deadline of its own, which then rules,
	// and, for a request that restarts its timeout on progress, the
	// latest it can end (zero: no bound but the caller's).
	deadline time.Time
	// own is the timer of a request with a timeout policy (see
	// timeoutPolicy), which ends it at due; nil for the others, which
	// the table's timer ends. The fields below are guarded by the
	// table's mu.
	own    *time.Timer
	policy timeoutPolicy
	due    time.Time // when own ends the request unless progress moves it
	start  time.Time

	// Guarded by the client's routeTable.mu.
	prev, next *openRequest // in the table's list of requests in flight
	live       bool         // in that list
	token      string       // its progress token, "" if none
	expected   bool         // a message seen on its HTTP stream was attributed to it

	// Notifications seen on the request's own HTTP stream, and of them
	// those handed to the handlers: the request waits for the latter to
	// catch up before it returns.
	seen      counter
	delivered counter
}

// errRequestTimeout is the cancellation cause of a request the client's
// timeout ended, and errMaxTotalTimeout of one that ran into its maximum
// total time.
var (
	errRequestTimeout  = fmt.Errorf("mcpkit: request timeout: %w", context.DeadlineExceeded)
	errMaxTotalTimeout = fmt.Errorf("mcpkit: maximum total timeout: %w", context.DeadlineExceeded)
)

// RequestTimeout is the timeout of the requests made with a context from
// WithRequestTimeout. It replaces, for them, the client's timeout and its
// ResetTimeoutOnProgress and MaxTotalTimeout settings, and it applies
// even when the context has a deadline of its own (whichever ends first
// ends the request). These are the TypeScript SDK's request options
// timeout, resetTimeoutOnProgress and maxTotalTimeout.
type RequestTimeout struct {
	// Timeout bounds the request (0: the client's timeout). With
	// ResetOnProgress it bounds the wait for the answer or the next
	// progress notification.
	Timeout time.Duration
	// ResetOnProgress restarts Timeout whenever the server sends a
	// progress notification for the request. The request then carries a
	// progress token (CallTool, ReadResource and GetPrompt send one).
	ResetOnProgress bool
	// MaxTotal, if positive, bounds the request's whole run, however
	// often progress restarted its timeout.
	MaxTotal time.Duration
}

func (rt *RequestTimeout) check() error {
	switch {
	case rt.Timeout < 0:
		return fmt.Errorf("negative Timeout %v", rt.Timeout)
	case rt.MaxTotal < 0:
		return fmt.Errorf("negative MaxTotal %v", rt.MaxTotal)
	}
	return nil
}

type requestTimeoutKey struct{}

// WithRequestTimeout returns a context whose requests time out as rt
// says (see RequestTimeout). A request made with a negative duration in
// rt fails with CONFIG_ERROR before anything is sent.
func WithRequestTimeout(ctx context.Context, rt RequestTimeout) context.Context {
	return context.WithValue(ctx, requestTimeoutKey{}, &rt)
}

func requestTimeoutFrom(ctx context.Context) *RequestTimeout {
	rt, _ := ctx.Value(requestTimeoutKey{}).(*RequestTimeout)
	return rt
}

// timeoutPolicy is how a request with a timer of its own times out.
type timeoutPolicy struct {
	timeout  time.Duration // each period
	reset    bool          // progress starts a new period
	maxTotal time.Duration // bound on the whole run; 0: none
}

// timeoutPolicy returns the policy of a request made with ctx, and
// whether it needs a timer of its own: when rt (the context's
// RequestTimeout) is set, or when the client restarts timeouts on
// progress or bounds their total and the caller's context has no
// deadline (a caller's deadline otherwise rules alone, as it does for
// the client's plain timeout).
func (c *Client) timeoutPolicy(rt *RequestTimeout, hasDeadline bool) (timeoutPolicy, bool) {
	switch {
	case rt != nil:
		return timeoutPolicy{timeout: firstPositive(rt.Timeout, c.timeout), reset: rt.ResetOnProgress, maxTotal: rt.MaxTotal}, true
	case hasDeadline || !c.resetOnProgress && c.maxTotal <= 0:
		return timeoutPolicy{}, false
	}
	return timeoutPolicy{timeout: c.timeout, reset: c.resetOnProgress, maxTotal: c.maxTotal}, true
}

// requestContext is the context a request runs in: the caller's, made
// cancellable so that the request fails when its session ends, with the
// client's timeout as its deadline unless the caller set one, and
// carrying the request itself (inflightKey). The timeout is kept by the
// routeTable's one timer rather than by a timer per request (a
// context.WithTimeout), which would cost each request a runtime timer.
//
// The embedded context is the context.WithCancelCause of the caller's,
// whose Done and Value (the cancelCtx the context package looks for)
// pass through, so that contexts the go-sdk derives from this one hang
// off it like off any cancelCtx.
type requestContext struct {
	context.Context
	r *openRequest
}

func (x *requestContext) Deadline() (time.Time, bool) {
	d, ok := x.Context.Deadline()
	if rd := x.r.deadline; !rd.IsZero() && (!ok || rd.Before(d)) {
		return rd, true
	}
	return d, ok
}

// Err reports the client's timeout as context.DeadlineExceeded, as a
// context.WithTimeout would.
func (x *requestContext) Err() error {
	err := x.Context.Err()
	if err == context.Canceled {
		if cause := context.Cause(x.Context); cause == errRequestTimeout || cause == errMaxTotalTimeout {
			return context.DeadlineExceeded
		}
	}
	return err
}

func (x *requestContext) Value(key any) any {
	if _, ok := key.(inflightKey); ok {
		return x.r
	}
	return x.Context.Value(key)
}

// inflightFrom returns the request of this client that ctx belongs to.
func (c *Client) inflightFrom(ctx context.Context) *openRequest {
	if r, ok := ctx.Value(inflightKey{}).(*openRequest); ok && r.c == c {
		return r
	}
	return nil
}

// routeTable is a client's requests in flight.
type routeTable struct {
	mu sync.Mutex
	// The requests in flight, oldest first (a list rather than a map:
	// adding and removing one is a few pointer writes).
	head, tail *openRequest
	tokens     map[string]*openRequest
	// expect holds, by message key, the requests on whose HTTP stream a
	// routed message was seen and not yet handled, oldest first.
	expect map[string][]*openRequest
	// timer ends the requests whose deadline (the client's timeout) has
	// passed. While armed it is set for no later than the earliest such
	// deadline; as every request gets the same timeout, the deadlines
	// grow along the list, so that a request ending early leaves the
	// timer alone and it is set again only when it fires (about once per
	// timeout while requests keep coming).
	timer *time.Timer
	armed bool
}

// begin registers a request on session s made with the caller's ctx and
// returns it; its ctx is the request's context. rt is the context's
// RequestTimeout (nil if none). The request must be ended with end.
func (t *routeTable) begin(c *Client, s *session, ctx context.Context, rt *RequestTimeout) *openRequest {
	r := &openRequest{c: c, s: s, cs: s.cs, hooks: requestHooksFrom(ctx)}
	inner, cancel := context.WithCancelCause(ctx)
	r.ctx = requestContext{Context: inner, r: r}
	r.cancel = cancel
	_, hasDeadline := ctx.Deadline()
	policy, own := c.timeoutPolicy(rt, hasDeadline)

	t.mu.Lock()
	if own {
		r.startOwnTimerLocked(policy)
	} else if !hasDeadline {
		// Under the lock, so that the deadlines grow along the list.
		r.deadline = time.Now().Add(c.timeout)
		if !t.armed {
			t.armed = true
			if t.timer == nil {
				t.timer = time.AfterFunc(c.timeout, c.expireRequests)
			} else {
				t.timer.Reset(c.timeout)
			}
		}
	}
	r.prev = t.tail
	if t.tail != nil {
		t.tail.next = r
	} else {
		t.head = r
	}
	t.tail = r
	r.live = true
	failed := s.failed
	t.mu.Unlock()
	if failed {
		cancel(s.endCause())
	}
	return r
}

// end removes r from the table and releases its context.
func (t *routeTable) end(r *openRequest) {
	t.mu.Lock()
	if r.prev != nil {
		r.prev.next = r.next
	} else {
		t.head = r.next
	}
	if r.next != nil {
		r.next.prev = r.prev
	} else {
		t.tail = r.prev
	}
	r.prev, r.next, r.live = nil, nil, false
	if r.own != nil {
		r.own.Stop()
	}
	if r.token != "" {
		delete(t.tokens, r.token)
	}
	if r.expected {
		for k, rs := range t.expect {
			kept := rs[:0]
			for _, x := range rs {
				if x != r {
					kept = append(kept, x)
				}
			}
			if len(kept) == 0 {
				delete(t.expect, k)
			} else {
				t.expect[k] = kept
			}
		}
	}
	t.mu.Unlock()
	r.cancel(nil)
}

// expireRequests is the table's timer: it cancels the requests whose
// deadline has passed and sets the timer for the next deadline.
func (c *Client) expireRequests() {
	t := &c.routes
	var due []*openRequest
	now := time.Now()
	t.mu.Lock()
	t.armed = false
	for r := t.head; r != nil; r = r.next {
		if r.own != nil || r.deadline.IsZero() {
			continue // its own timer, or the caller's deadline
		}
		if r.deadline.After(now) {
			t.armed = true
			t.timer.Reset(r.deadline.Sub(now))
			break
		}
		due = append(due, r)
	}
	t.mu.Unlock()
	for _, r := range due {
		r.cancel(errRequestTimeout)
	}
}

// startOwnTimerLocked starts the timer of a request with a timeout
// policy. The table's mu is held.
func (r *openRequest) startOwnTimerLocked(p timeoutPolicy) {
	r.policy = p
	r.start = time.Now()
	r.due = r.start.Add(p.timeout)
	hardEnd := time.Time{}
	if p.maxTotal > 0 {
		hardEnd = r.start.Add(p.maxTotal)
		if hardEnd.Before(r.due) {
			r.due = hardEnd
		}
	}
	if p.reset {
		r.deadline = hardEnd // the latest it can end
	} else {
		r.deadline = r.due
	}
	r.own = time.AfterFunc(r.due.Sub(r.start), r.expire)
}

// expire is a request's own timer: it ends the request if its time is
// up, or sets the timer again if progress moved the end meanwhile.
func (r *openRequest) expire() {
	t := &r.c.routes
	now := time.Now()
	t.mu.Lock()
	if !r.live {
		t.mu.Unlock()
		return
	}
	if now.Before(r.due) {
		r.own.Reset(r.due.Sub(now))
		t.mu.Unlock()
		return
	}
	cause := errRequestTimeout
	if p := r.policy; p.maxTotal > 0 && !now.Before(r.start.Add(p.maxTotal)) {
		cause = errMaxTotalTimeout
	}
	t.mu.Unlock()
	r.cancel(cause)
}

// progressed restarts the timeout of r, if its policy says so, on a
// progress notification for it (one that carries its token).
func (t *routeTable) progressed(r *openRequest, p *mcp.ProgressNotificationParams) {
	tok, ok := p.ProgressToken.(string)
	if !ok {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if r.own == nil || !r.policy.reset || !r.live || tok == "" || tok != r.token {
		return
	}
	due := now.Add(r.policy.timeout)
	if p := r.policy; p.maxTotal > 0 {
		if hardEnd := r.start.Add(p.maxTotal); hardEnd.Before(due) {
			due = hardEnd
		}
	}
	if due.After(r.due) {
		r.due = due // the timer, when it fires, sets itself for the new end
	}
}

// failSession cancels the requests in flight on s with cause, and those
// that s gets from now on with its end cause.
func (t *routeTable) failSession(s *session, cause error) {
	var rs []*openRequest
	t.mu.Lock()
	s.failed = true
	for r := t.head; r != nil; r = r.next {
		if r.s == s {
			rs = append(rs, r)
		}
	}
	t.mu.Unlock()
	for _, r := range rs {
		r.cancel(cause)
	}
}

// stop stops the timer (the client is closed).
func (t *routeTable) stop() {
	t.mu.Lock()
	if t.timer != nil {
		t.timer.Stop()
	}
	t.armed = false
	t.mu.Unlock()
}

func (t *routeTable) setToken(r *openRequest, tok string) {
	t.mu.Lock()
	if t.tokens == nil {
		t.tokens = map[string]*openRequest{}
	}
	t.tokens[tok] = r
	r.token = tok
	t.mu.Unlock()
}

// resetsOnProgress reports whether progress restarts r's timeout (r
// then needs a progress token even when nobody listens for progress).
func (t *routeTable) resetsOnProgress(r *openRequest) bool {
	// (own and policy are set in begin, before the request runs, and
	// never change.)
	return r != nil && r.own != nil && r.policy.reset
}

func (t *routeTable) byToken(tok any) *openRequest {
	s, ok := tok.(string)
	if !ok {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tokens[s]
}

// attribute records that a routed message was seen on r's stream.
func (t *routeTable) attribute(key string, r *openRequest) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !r.live {
		return
	}
	if t.expect == nil {
		t.expect = map[string][]*openRequest{}
	}
	t.expect[key] = append(t.expect[key], r)
	r.expected = true
}

// take returns (and forgets) the oldest request on whose stream a message
// with this key was seen.
func (t *routeTable) take(key string) *openRequest {
	t.mu.Lock()
	defer t.mu.Unlock()
	rs := t.expect[key]
	if len(rs) == 0 {
		return nil
	}
	r := rs[0]
	if len(rs) == 1 {
		delete(t.expect, key)
	} else {
		t.expect[key] = rs[1:]
	}
	return r
}

// sole returns the only request in flight on cs, or nil if there are
// none or several.
func (t *routeTable) sole(cs *mcp.ClientSession) *openRequest {
	t.mu.Lock()
	defer t.mu.Unlock()
	var found *openRequest
	for r := t.head; r != nil; r = r.next {
		if r.cs != cs {
			continue
		}
		if found != nil {
			return nil
		}
		found = r
	}
	return found
}

// progressToken returns a new progress token for the request of ctx if
// someone listens for its progress, else "".
func (c *Client) progressToken(ctx context.Context) string {
	r := c.inflightFrom(ctx)
	if c.opts.OnProgress == nil && (r == nil || r.hooks == nil || r.hooks.OnProgress == nil) && !c.routes.resetsOnProgress(r) {
		return ""
	}
	tok := c.cfg.Name + "-" + strconv.FormatInt(c.progressSeq.Add(1), 10)
	if r != nil {
		c.routes.setToken(r, tok)
	}
	return tok
}

// routeIncoming is receiving middleware that finds the request of ours a
// routed message belongs to and hands it to the handler in its context:
// the request whose context the go-sdk is already in (a 2026-07-28
// multi round-trip input request), else the request on whose HTTP stream
// the message came, else (progress) the request of its token, else — on
// a transport that does not tell requests apart (stdio, legacy SSE) — the
// only request in flight.
func (c *Client) routeIncoming(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if routedParams(method) == nil {
			return next(ctx, method, req)
		}
		cs, _ := req.GetSession().(*mcp.ClientSession)
		notification := isRoutedNotification(method)
		if notification {
			if s := c.sessionOf(cs); s != nil && s.conn != nil {
				defer s.conn.handled.add(1)
			}
		}
		r := c.inflightFrom(ctx)
		if r == nil {
			if key, ok := messageKey(method, req.GetParams()); ok {
				if r = c.routes.take(key); r != nil && notification {
					defer r.delivered.add(1)
				}
			}
		}
		if r == nil && method == methodProgress {
			if p, ok := req.GetParams().(*mcp.ProgressNotificationParams); ok && p != nil {
				r = c.routes.byToken(p.ProgressToken)
			}
		}
		if r == nil && method != methodProgress && c.cfg.Transport() != TransportHTTP {
			// (Progress names its request: one whose token is not of a
			// request in flight belongs to none.)
			r = c.routes.sole(cs)
		}
		if r != nil {
			if method == methodProgress {
				if p, ok := req.GetParams().(*mcp.ProgressNotificationParams); ok && p != nil {
					c.routes.progressed(r, p)
				}
			}
			ctx = context.WithValue(ctx, inflightKey{}, r)
			if h := r.hooks; method == methodElicit && h != nil && h.OnElicit != nil {
				// Straight to the hook: the go-sdk's check of the schema
				// (and of the answer) is for a client that shows the
				// form, and it refuses forms newer than it (SEP-1330
				// titled multi-select); a hook that passes the request on
				// leaves that to the client it asks.
				p, _ := req.GetParams().(*mcp.ElicitParams)
				if p == nil {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "elicitation/create without params"}
				}
				res, err := h.OnElicit(ctx, p)
				if err != nil {
					return nil, err
				}
				return res, nil
			}
		}
		return next(ctx, method, req)
	}
}

// sessionOf returns the session (live, or in its handshake) of cs.
func (c *Client) sessionOf(cs *mcp.ClientSession) *session {
	if cs == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess != nil && c.sess.cs == cs {
		return c.sess
	}
	if c.dialing != nil && c.dialing.cs == cs {
		return c.dialing
	}
	return nil
}

// settleTimeout bounds the wait of a finished request for the handlers
// of notifications that came ahead of its answer.
const settleTimeout = time.Second

// settle waits until the notifications the server sent ahead of r's
// answer have been handed to the handlers, so that whoever listens sees
// them before the request returns: those seen on r's HTTP stream, and on
// stdio every one read so far.
func (c *Client) settle(ctx context.Context, s *session, r *openRequest) {
	if r.hooks == nil && c.opts.OnLog == nil && c.opts.OnProgress == nil && !c.watched() {
		return
	}
	deadline := time.Now().Add(settleTimeout)
	if !r.delivered.waitFor(ctx, r.seen.load(), deadline) {
		c.log.Debug("mcpkit: notifications of a request still undelivered when it returned", "server", c.cfg.Name)
	}
	if s.conn != nil {
		want := s.conn.notifications.load()
		if !s.conn.handled.waitFor(ctx, want, deadline) {
			// One that the go-sdk dropped (bad parameters) is never
			// handled: count it as done so that later requests do not wait.
			s.conn.handled.raise(want)
		}
	}
}

// counter is a count that others can wait to reach a value.
type counter struct {
	mu      sync.Mutex
	n       int64
	changed chan struct{} // closed and replaced when n grows
}

func (k *counter) add(d int64) {
	k.mu.Lock()
	k.n += d
	if k.changed != nil {
		close(k.changed)
		k.changed = nil
	}
	k.mu.Unlock()
}

func (k *counter) load() int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.n
}

// raise sets the count to at least n.
func (k *counter) raise(n int64) {
	k.mu.Lock()
	d := n - k.n
	k.mu.Unlock()
	if d > 0 {
		k.add(d)
	}
}

// waitFor waits until the count is at least want, ctx is done or the
// deadline passes, and reports whether the count got there.
func (k *counter) waitFor(ctx context.Context, want int64, deadline time.Time) bool {
	var t *time.Timer
	for {
		k.mu.Lock()
		if k.n >= want {
			k.mu.Unlock()
			return true
		}
		if k.changed == nil {
			k.changed = make(chan struct{})
		}
		ch := k.changed
		k.mu.Unlock()
		if t == nil {
			d := time.Until(deadline)
			if d <= 0 {
				return false
			}
			t = time.NewTimer(d)
			defer t.Stop()
		}
		select {
		case <-ch:
		case <-t.C:
			return k.load() >= want
		case <-ctx.Done():
			return false
		}
	}
}

// tapStream watches the event stream of an HTTP response to one of our
// requests (a POST's answer, or its resumption): the routed messages on
// it are attributed to the request, and a stream the server ends before
// answering is reported to the request's OnStreamClosed.
func tapStream(req *http.Request, resp *http.Response) {
	r, ok := req.Context().Value(inflightKey{}).(*openRequest)
	if !ok || resp.StatusCode != http.StatusOK || resp.Body == nil {
		return
	}
	if !isEventStream(resp.Header.Get("Content-Type")) {
		return
	}
	resp.Body = &sseTap{rc: resp.Body, r: r}
}

// isEventStream reports whether a Content-Type is text/event-stream
// (what mime.ParseMediaType would say, without its allocations on every
// response).
func isEventStream(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "text/event-stream")
}

// maxTappedEvent bounds the data of one event the tap decodes; larger
// events pass through unattributed.
const maxTappedEvent = 4 << 20

// sseTap reads a server-sent event stream as it passes through to the
// go-sdk. It sees every event before the go-sdk does.
type sseTap struct {
	rc io.ReadCloser
	r  *openRequest

	line        []byte
	lineTooLong bool
	name        string
	data        []byte
	tooBig      bool
	sawID       bool
	answered    bool
	retry       time.Duration
	ended       bool
}

func (t *sseTap) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	t.feed(p[:n])
	if err == io.EOF && !t.ended {
		t.ended = true
		// The server ended the stream without the answer: the go-sdk
		// resumes it (when it has an event ID to resume from). An
		// unfinished last event is dropped, as the go-sdk drops it.
		if !t.answered && t.sawID {
			if h := t.r.hooks; h != nil && h.OnStreamClosed != nil {
				h.OnStreamClosed(t.retry)
			}
		}
	}
	return n, err
}

func (t *sseTap) Close() error { return t.rc.Close() }

// feed takes the next bytes of the stream.
func (t *sseTap) feed(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			t.appendLine(b)
			return
		}
		t.appendLine(b[:i])
		if t.lineTooLong {
			t.tooBig = true
		} else {
			t.field(bytes.TrimSuffix(t.line, []byte{'\r'}))
		}
		t.line, t.lineTooLong = t.line[:0], false
		b = b[i+1:]
	}
}

func (t *sseTap) appendLine(b []byte) {
	if t.lineTooLong {
		return
	}
	if len(t.line)+len(b) > maxTappedEvent {
		t.line, t.lineTooLong = nil, true
		return
	}
	t.line = append(t.line, b...)
}

// field handles one line of the stream.
func (t *sseTap) field(line []byte) {
	if len(line) == 0 {
		t.dispatch()
		return
	}
	name, value, _ := bytes.Cut(line, []byte{':'})
	value = bytes.TrimPrefix(value, []byte{' '})
	switch string(name) {
	case "event":
		t.name = string(value)
	case "data":
		if len(t.data)+len(value) > maxTappedEvent {
			t.tooBig = true
			return
		}
		if t.data != nil {
			t.data = append(t.data, '\n')
		}
		t.data = append(t.data, value...)
		if t.data == nil {
			t.data = []byte{}
		}
	case "id":
		if len(value) > 0 {
			t.sawID = true
		}
	case "retry":
		if ms, err := strconv.ParseInt(string(value), 10, 64); err == nil && ms >= 0 {
			t.retry = time.Duration(ms) * time.Millisecond
		}
	}
}

// dispatch handles the event the lines so far made up.
func (t *sseTap) dispatch() {
	name, data, tooBig := t.name, t.data, t.tooBig
	t.name, t.data, t.tooBig = "", nil, false
	if tooBig || len(data) == 0 || (name != "" && name != "message") {
		return
	}
	// Most events are the answer, or messages no request takes: tell them
	// by a look at the top level, rather than decode each (the go-sdk
	// decodes it again, and its decoder is not cheap).
	method, hasMethod, hasID, ok := peekMessage(data)
	switch {
	case ok && !hasMethod:
		t.answered = t.answered || hasID
		return
	case ok && routedParams(method) == nil:
		return
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return
	}
	switch m := msg.(type) {
	case *jsonrpc.Response:
		t.answered = true
	case *jsonrpc.Request:
		params := routedParams(m.Method)
		if params == nil {
			return
		}
		if len(m.Params) > 0 && json.Unmarshal(m.Params, params) != nil {
			return
		}
		key, ok := messageKey(m.Method, params)
		if !ok {
			return
		}
		if isRoutedNotification(m.Method) {
			t.r.seen.add(1)
		}
		t.r.c.routes.attribute(key, t.r)
	}
}

// peekMessage looks at the top level of a JSON-RPC message without
// decoding it: the value of its "method" member if it has one, and
// whether it has an "id" (not null). Keys match without regard to case,
// as they do for the go-sdk's decoder. ok is false when it cannot tell
// for sure: data is not a JSON object (jsonscan's Loose scan, which checks
// the object's structure and delimits its values), or a key or the method
// is not plain ASCII (escapes, say, which only a decoder reads right).
func peekMessage(data []byte) (method string, hasMethod, hasID, ok bool) {
	it := jsonscan.Loose.Members(data)
	for it.Next() {
		m := it.Member()
		key, plain := jsonscan.PlainString(m.RawKey)
		if !plain {
			return "", false, false, false
		}
		switch {
		case bytes.EqualFold(key, []byte("method")):
			v, plain := jsonscan.PlainString(m.Value)
			if !plain {
				return "", false, false, false
			}
			method, hasMethod = string(v), true
		case bytes.EqualFold(key, []byte("id")):
			hasID = string(m.Value) != "null"
		}
	}
	if it.Err() != nil {
		return "", false, false, false
	}
	return method, hasMethod, hasID, true
}

// clientWatcher is told what a server sends outside the hooks of any
// request: log messages no request took, resource updates, the client
// becoming ready (again), every phase change, and a changed tool,
// resource or prompt list (the tool list refreshed first).
// A gateway and a bridge watch their upstream clients this way, whatever
// ClientOptions they were made with.
type clientWatcher struct {
	log     func(server string, p *mcp.LoggingMessageParams)
	updated func(server, uri string)
	ready   func(server string)
	phase   func(PhaseChange)
	lists   func(server string)
}

// watcherSet is a client's watchers, by owner.
type watcherSet struct {
	mu  sync.Mutex
	ws  map[any]*clientWatcher
	any atomic.Bool // len(ws) > 0, for a look without the lock on every request
}

// set installs w for owner, replacing owner's earlier one.
func (s *watcherSet) set(owner any, w *clientWatcher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ws == nil {
		s.ws = map[any]*clientWatcher{}
	}
	s.ws[owner] = w
	s.any.Store(true)
}

// remove drops owner's watcher.
func (s *watcherSet) remove(owner any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.ws, owner)
	s.any.Store(len(s.ws) > 0)
}

func (s *watcherSet) has(owner any) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.ws[owner]
	return ok
}

func (s *watcherSet) each(fn func(*clientWatcher)) {
	s.mu.Lock()
	ws := make([]*clientWatcher, 0, len(s.ws))
	for _, w := range s.ws {
		ws = append(ws, w)
	}
	s.mu.Unlock()
	for _, w := range ws {
		fn(w)
	}
}

func (c *Client) watched() bool {
	return c.watchers.any.Load()
}
