package mcpkit

// Making one connection: spawn the child or dial the URL (with the
// configured headers, and OAuth beneath them), the handshake, the first
// lists.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/worldforge-go/worldforge/mcpkit/oauth"
)

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
		s.abort(e)
		return nil, e
	}

	if c.filterErr != nil {
		return fail(c.filterErr)
	}
	var t mcp.Transport
	switch kind := c.cfg.Transport(); kind {
	case TransportStdio:
		if c.cfg.Command == "" {
			return fail(c.newError(CodeConfigError, "", errOp{}, "stdio server has no command", nil))
		}
		if c.cfg.Cwd != "" {
			// Without this, a missing directory fails the spawn in a way
			// that reads like a missing command.
			if fi, err := os.Stat(c.cfg.Cwd); err != nil || !fi.IsDir() {
				if err == nil {
					err = fmt.Errorf("%s: not a directory", c.cfg.Cwd)
				}
				return fail(c.newError(CodeConnectionFailed, FaultSpawnFailed, errOp{},
					fmt.Sprintf("cannot start %s: working directory %q does not exist or is not a directory", c.cfg.Command, c.cfg.Cwd), err))
			}
		}
		p, err := startProcess(&c.cfg, c.log)
		if err != nil {
			return fail(c.newError(CodeConnectionFailed, FaultSpawnFailed, errOp{}, "cannot start "+c.cfg.Command, err))
		}
		s.proc = p
		c.trackProcess(p)
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
		return fail(c.connectError(ctx, s, ctx.Err())) // (fail closes cs, boundedly)
	}
	if s.http != nil {
		s.http.status.Store(0) // statuses seen while probing are history
	}
	if err := c.afterHandshake(ctx, s); err != nil {
		return fail(err)
	}
	return s, nil
}

// trackProcess records p until its shutdown is over, so that Close can
// wait for it whichever path stops it.
func (c *Client) trackProcess(p *process) {
	c.mu.Lock()
	if c.procs == nil {
		c.procs = make(map[*process]struct{})
	}
	c.procs[p] = struct{}{}
	c.mu.Unlock()
	p.released = func() {
		c.mu.Lock()
		delete(c.procs, p)
		c.mu.Unlock()
	}
}

// connectError classifies a failed handshake.
func (c *Client) connectError(ctx context.Context, s *session, err error) *Error {
	op := errOp{method: "initialize"}
	// A child that exited once the connect's time was up did so because
	// the transport closed its stdin when the handshake gave up: that is
	// the timeout below, not a failed start.
	if p := s.proc; p != nil && !exitedAfter(ctx, p) {
		// A child that exited (or closed stdout, and is about to) failed
		// to start: report its exit status and stderr.
		if perr := s.conn.protocolFailure(); perr == nil || p.hasExited() {
			// Wait for the exit, though not past the connect's deadline.
			wait := c.grace
			if dl, ok := ctx.Deadline(); ok {
				wait = min(wait, max(time.Until(dl), 0))
			}
			if ctx.Err() != nil && !p.hasExited() {
				wait = 0
			}
			if p.waitExit(wait) {
				info := p.exitInfo()
				e := c.newError(CodeConnectionFailed, FaultSpawnFailed, op, "server exited during start-up: "+info.String(), err)
				e.Details = info
				return e
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

// exitedAfter reports whether p has exited, and did so at or after ctx's
// deadline.
func exitedAfter(ctx context.Context, p *process) bool {
	dl, ok := ctx.Deadline()
	return ok && ctx.Err() != nil && p.hasExited() && !p.exitedAt.Before(dl)
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
	c.setToolsLocked(tools)
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

// httpWatch remembers the last HTTP error status a session's transport
// received, so that errors the go-sdk reports as text can be classified.
type httpWatch struct {
	status atomic.Int32
}

// headerTransport adds configured headers to every request and records
// error statuses.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
	watch   *httpWatch
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			if req.Header.Get(k) == "" { // never override the protocol's own headers
				req.Header.Set(k, v)
			}
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err == nil {
		switch resp.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
			t.watch.status.Store(int32(resp.StatusCode))
		}
		tapStream(req, resp) // the event stream of one of our requests (route.go)
	}
	return resp, err
}

// httpClient returns a copy of the configured HTTP client (or a new one)
// whose transport adds cfg's headers and reports to w.
func httpClient(cfg *ServerConfig, w *httpWatch) *http.Client {
	var hc http.Client
	if cfg.HTTPClient != nil {
		hc = *cfg.HTTPClient
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = &headerTransport{base: base, headers: cfg.Headers, watch: w}
	return &hc
}

// oauthHolder is a Client's OAuth state, made on first use and kept
// across reconnects.
type oauthHolder struct {
	once sync.Once
	flow *oauth.Flow
	err  error
}

// sessionHTTPClient returns the HTTP client of one HTTP or SSE session:
// the configured headers, with the OAuth layer beneath them when the
// server has an OAuth configuration.
func (c *Client) sessionHTTPClient(w *httpWatch) (*http.Client, *Error) {
	hc := httpClient(&c.cfg, w)
	if c.cfg.OAuth == nil {
		return hc, nil
	}
	c.oauth.once.Do(func() {
		c.oauth.flow, c.oauth.err = oauth.NewFlow(*c.cfg.OAuth, oauth.FlowOptions{
			Server: c.cfg.Name, URL: c.cfg.URL, HTTPClient: c.cfg.HTTPClient,
			ClientName: c.opts.Implementation.Name, Authorize: c.opts.OAuthAuthorize, Logger: c.log,
		})
	})
	if c.oauth.err != nil {
		return nil, c.newError(CodeConfigError, "", errOp{}, "bad OAuth configuration", c.oauth.err)
	}
	ht := hc.Transport.(*headerTransport)
	ht.base = oauthTransport{c.oauth.flow.Transport(ht.base)}
	return hc, nil
}

// oauthTransport reports the OAuth flow's failures as SESSION_ERRORs.
type oauthTransport struct{ rt http.RoundTripper }

func (t oauthTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	var oe *oauth.Error
	if errors.As(err, &oe) {
		return nil, &Error{Code: CodeSessionError, Server: oe.Server, Message: "OAuth authorization failed", Err: oe.Err}
	}
	return resp, err
}

// oauthFailure returns the OAuth flow's error inside err, if any.
func oauthFailure(err error) *Error {
	var e *Error
	if errors.As(err, &e) && e.Code == CodeSessionError && strings.HasPrefix(e.Message, "OAuth") {
		return e
	}
	return nil
}
