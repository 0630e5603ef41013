package mcpkit

// A Client's connection over its life: connect rounds that concurrent
// callers share, the session of one connection, faults, reconnects and
// close.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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

// connectAbortGrace bounds how long a failed connect waits for its stdio
// child to exit after SIGTERM before it sends SIGKILL (and for the
// go-sdk session's close), so that Connect returns soon after its
// deadline. ShutdownGrace caps it.
const connectAbortGrace = 250 * time.Millisecond

// abort ends a session whose connect failed: pending requests fail with
// cause, a stdio child gets stdin closed and SIGTERM at once and SIGKILL
// after the abort grace (it never finished the handshake, so the grace
// Close gives a server to wind down is not owed), and the go-sdk
// session's close is waited for no longer than that grace. Bounded by
// about the abort grace plus a second; the child is gone when it returns
// unless the kernel cannot reap it within that second.
func (s *session) abort(cause error) {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return
	}
	s.closing = true
	s.mu.Unlock()
	close(s.ended)
	s.failCalls(cause)
	grace := min(s.c.grace, connectAbortGrace)
	var wg sync.WaitGroup
	if s.cs != nil {
		cs := s.cs
		wg.Go(func() {
			done := make(chan struct{})
			go func() {
				cs.Close() // for HTTP, sends DELETE; ends when s.cancel cancels it
				close(done)
			}()
			t := time.NewTimer(grace)
			defer t.Stop()
			select {
			case <-done:
			case <-t.C:
			}
		})
	}
	if s.proc != nil {
		wg.Go(func() { s.proc.abort(grace) })
	}
	wg.Wait()
	s.cancel()
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

// currentSession returns the live session if cs is its go-sdk session.
func (c *Client) currentSession(cs *mcp.ClientSession) *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess != nil && c.sess.cs == cs {
		return c.sess
	}
	return nil
}
