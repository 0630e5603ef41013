package mcpkit

// What a server sends the client unasked: list changes, resource updates,
// progress, log messages, sampling and elicitation requests, and
// subscription acknowledgements.

import (
	"context"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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
			c.listsChanged()
		case kindPrompts:
			if n, err := s.countPrompts(ctx); err == nil {
				c.mu.Lock()
				c.nprompts = n
				c.mu.Unlock()
			}
			if h := c.opts.OnPromptListChanged; h != nil {
				h(c.cfg.Name)
			}
			c.listsChanged()
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
					tools = c.setToolsLocked(tools)
				}
				again := c.refresh.again && current
				c.refresh.again = false
				if !again {
					c.refresh.running = false
				}
				c.mu.Unlock()
				if err != nil {
					c.log.Warn("mcpkit: refreshing tools failed", "server", c.cfg.Name, "error", err)
				} else if current {
					if h := c.opts.OnToolsChanged; h != nil {
						h(c.cfg.Name, slices.Clone(tools))
					}
					c.listsChanged()
				}
				if !again {
					return
				}
			}
		}
	}()
}

// listsChanged tells the watchers that a list (tools, resources,
// prompts) changed.
func (c *Client) listsChanged() {
	c.watchers.each(func(w *clientWatcher) {
		if w.lists != nil {
			w.lists(c.cfg.Name)
		}
	})
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
