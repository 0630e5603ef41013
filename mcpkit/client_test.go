package mcpkit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var quiet = slog.New(slog.DiscardHandler)

// opts returns client options with a quiet logger, modified by fns.
func opts(fns ...func(*ClientOptions)) *ClientOptions {
	o := &ClientOptions{Logger: quiet}
	for _, fn := range fns {
		fn(o)
	}
	return o
}

// connected returns a connected client that is closed at the end of the
// test.
func connected(t testing.TB, cfg ServerConfig, o *ClientOptions) *Client {
	t.Helper()
	c := NewClient(cfg, o)
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Connect(ctx); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	return c
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// wantError checks that err is an *Error with the code and kind.
func wantError(t testing.TB, err error, code Code, kind FaultKind) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v (%T), want *Error %s", err, err, code)
	}
	if e.Code != code || e.Kind != kind {
		t.Fatalf("error = %v: code %s kind %q, want %s %q", err, e.Code, e.Kind, code, kind)
	}
	if !errors.Is(err, &Error{Code: code}) {
		t.Errorf("errors.Is(err, %s) = false", code)
	}
	return e
}

// phaseLog records phase changes.
type phaseLog struct {
	mu  sync.Mutex
	evs []PhaseChange
	ch  chan PhaseChange
}

func newPhaseLog() *phaseLog { return &phaseLog{ch: make(chan PhaseChange, 100)} }

func (p *phaseLog) record(ev PhaseChange) {
	p.mu.Lock()
	p.evs = append(p.evs, ev)
	p.mu.Unlock()
	p.ch <- ev
}

// waitFor waits until a change to phase to has been recorded.
func (p *phaseLog) waitFor(t testing.TB, to Phase) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		p.mu.Lock()
		found := slices.ContainsFunc(p.evs, func(ev PhaseChange) bool { return ev.To == to })
		p.mu.Unlock()
		if found {
			return
		}
		select {
		case <-p.ch:
		case <-deadline:
			t.Fatalf("no change to %s; saw %v", to, p.path())
		}
	}
}

// path renders the recorded changes as "a→b→c".
func (p *phaseLog) path() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.evs) == 0 {
		return ""
	}
	parts := []string{string(p.evs[0].From)}
	for _, ev := range p.evs {
		parts = append(parts, string(ev.To))
	}
	return strings.Join(parts, "→")
}

// eventually waits (up to 10 s) for cond, polling: the conditions are
// on files the fixture processes write, which signal nothing.
func eventually(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func ctxTimeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestClientStdio(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "fx", fxNormal)
	fx.cfg.Env["MCPKIT_FX_VALUE"] = "from-config"
	fx.cfg.Cwd = t.TempDir()
	phases := newPhaseLog()
	c := NewClient(fx.cfg, opts(func(o *ClientOptions) { o.OnPhase = phases.record }))
	if c.Phase() != PhaseIdle {
		t.Fatalf("new client phase = %s", c.Phase())
	}
	ctx := ctxTimeout(t, 30*time.Second)
	if _, err := c.CallTool(ctx, "echo", nil); err == nil {
		t.Fatal("call before Connect succeeded")
	} else {
		wantError(t, err, CodeNotConnected, FaultNotConnected)
	}
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Connect(ctx); err != nil { // idempotent
		t.Fatal(err)
	}
	if c.Phase() != PhaseReady {
		t.Fatalf("phase = %s", c.Phase())
	}

	var names []string
	for _, tool := range c.Tools() {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"echo", "add", "mixed", "block", "crash"} {
		if !slices.Contains(names, want) {
			t.Errorf("Tools() lacks %q: %v", want, names)
		}
	}
	if len(names) != fixtureTools { // listed over several pages
		t.Errorf("Tools() has %d tools, want %d", len(names), fixtureTools)
	}
	st := c.Status()
	if st.Phase != PhaseReady || st.Tools != len(names) || st.Resources != 1 || st.Prompts != 1 || st.Err != nil || st.Transport != TransportStdio {
		t.Errorf("Status() = %+v", st)
	}
	if init := c.InitializeResult(); init == nil || init.ServerInfo.Name != "fixture" {
		t.Errorf("InitializeResult() = %+v", init)
	}

	res, err := c.CallTool(ctx, "echo", map[string]any{"text": "hi"})
	if err != nil || resultText(res) != "hi" {
		t.Fatalf("echo = %v, %v", res, err)
	}
	res, err = c.CallTool(ctx, "add", map[string]any{"a": 2, "b": 3})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"sum": 5.0}, res.StructuredContent); diff != "" {
		t.Errorf("add structured content (-want +got):\n%s", diff)
	}
	res, err = c.CallTool(ctx, "mixed", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 3 {
		t.Fatalf("mixed: %d blocks", len(res.Content))
	}
	if img, ok := res.Content[1].(*mcp.ImageContent); !ok || img.MIMEType != "image/png" || string(img.Data) != "\x89PNG" {
		t.Errorf("mixed block 1 = %#v", res.Content[1])
	}
	if er, ok := res.Content[2].(*mcp.EmbeddedResource); !ok || er.Resource.Text != "hello" {
		t.Errorf("mixed block 2 = %#v", res.Content[2])
	}

	// isError is a result, not an error; ToolResultError turns it into one.
	res, err = c.CallTool(ctx, "fail", nil)
	if err != nil || !res.IsError {
		t.Fatalf("fail = %v, %v; want an isError result", res, err)
	}
	e := wantError(t, ToolResultError("fx", "fail", res), CodeServerError, FaultToolError)
	if !strings.Contains(e.Message, "on purpose") || e.Tool != "fail" {
		t.Errorf("tool error = %v", e)
	}
	if ToolResultError("fx", "echo", fxText("ok")) != nil {
		t.Error("ToolResultError of a good result is not nil")
	}

	// The environment is merged over the parent's; cwd is honoured.
	res, err = c.CallTool(ctx, "env", map[string]any{"name": "MCPKIT_FX_VALUE"})
	if err != nil || resultText(res) != "from-config|path=true" {
		t.Errorf("env = %q, %v", resultText(res), err)
	}
	res, err = c.CallTool(ctx, "cwd", nil)
	want, _ := filepath.EvalSymlinks(fx.cfg.Cwd)
	if got, _ := filepath.EvalSymlinks(resultText(res)); err != nil || got != want {
		t.Errorf("cwd = %q, %v; want %q", got, err, want)
	}
	res, err = c.CallTool(ctx, "whoami", nil)
	if err != nil || !strings.HasPrefix(resultText(res), "worldforge-mcpkit 0.1.0") {
		t.Errorf("whoami = %q, %v", resultText(res), err)
	}

	resources, err := c.ListResources(ctx)
	if err != nil || len(resources) != 1 || resources[0].URI != "mem://greeting" {
		t.Fatalf("ListResources = %v, %v", resources, err)
	}
	rr, err := c.ReadResource(ctx, "mem://greeting")
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "hello" {
		t.Fatalf("ReadResource = %v, %v", rr, err)
	}
	prompts, err := c.ListPrompts(ctx)
	if err != nil || len(prompts) != 1 || prompts[0].Name != "greet" {
		t.Fatalf("ListPrompts = %v, %v", prompts, err)
	}
	gp, err := c.GetPrompt(ctx, "greet", map[string]string{"name": "Ada"})
	if err != nil || gp.Messages[0].Content.(*mcp.TextContent).Text != "Hello, Ada" {
		t.Fatalf("GetPrompt = %v, %v", gp, err)
	}
	tools, err := c.ListTools(ctx)
	if err != nil || len(tools) != len(names) {
		t.Fatalf("ListTools = %d tools, %v", len(tools), err)
	}

	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	phases.waitFor(t, PhaseClosed)
	if got, want := phases.path(), "idle→connecting→ready→closing→closed"; got != want {
		t.Errorf("phases = %s, want %s", got, want)
	}
	if n := fx.spawns(); n != 1 {
		t.Errorf("spawned %d processes, want 1", n)
	}
	_, err = c.CallTool(ctx, "echo", nil)
	wantError(t, err, CodeNotConnected, FaultNotConnected)
	wantError(t, c.Connect(ctx), CodeNotConnected, FaultNotConnected)
}

func TestClientConcurrentCalls(t *testing.T) {
	t.Parallel()
	c := connected(t, newFixture(t, "fx", fxNormal).cfg, opts())
	ctx := ctxTimeout(t, 30*time.Second)
	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			msg := fmt.Sprintf("message %d", i)
			res, err := c.CallTool(ctx, "echo", map[string]any{"text": msg})
			switch {
			case err != nil:
				errs <- err
			case resultText(res) != msg:
				errs <- fmt.Errorf("call %d answered %q", i, resultText(res))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestClientConnectSingleFlight(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "fx", fxNormal)
	c := NewClient(fx.cfg, opts())
	defer c.Close()
	ctx := ctxTimeout(t, 30*time.Second)
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if err := c.Connect(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := fx.spawns(); n != 1 {
		t.Errorf("10 concurrent Connects spawned %d servers, want 1", n)
	}
}

func TestClientErrorCodes(t *testing.T) {
	t.Parallel()
	c := connected(t, newFixture(t, "fx", fxNormal).cfg, opts())
	ctx := ctxTimeout(t, 30*time.Second)
	tests := []struct {
		name string
		do   func() error
		code Code
		kind FaultKind
	}{
		{"unknown tool", func() error { _, err := c.CallTool(ctx, "nope", nil); return err }, CodeToolNotFound, ""},
		{"-32602 from a tool", func() error { _, err := c.CallTool(ctx, "strict", nil); return err }, CodeInvalidParameters, ""},
		{"unencodable arguments", func() error { _, err := c.CallTool(ctx, "echo", map[string]any{"x": make(chan int)}); return err }, CodeInvalidParameters, ""},
		{"JSON-RPC error from a tool", func() error { _, err := c.CallTool(ctx, "boom", nil); return err }, CodeServerError, ""},
		{"missing resource", func() error { _, err := c.ReadResource(ctx, "mem://nope"); return err }, CodeResourceNotFound, ""},
		{"missing prompt", func() error { _, err := c.GetPrompt(ctx, "nope", nil); return err }, CodePromptNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := wantError(t, tt.do(), tt.code, tt.kind)
			if e.Server != "fx" {
				t.Errorf("Server = %q", e.Server)
			}
		})
	}
	_, err := c.CallTool(ctx, "boom", nil)
	e := wantError(t, err, CodeServerError, "")
	if w, ok := e.Details.(*WireError); !ok || w.Code != -32000 || string(w.Data) != `{"why":"test"}` || e.Tool != "boom" {
		t.Errorf("boom details = %#v, tool %q", e.Details, e.Tool)
	}
	// The client is still fine.
	if _, err := c.CallTool(ctx, "echo", map[string]any{"text": "ok"}); err != nil {
		t.Fatal(err)
	}
}

func TestClientRepeatedCursor(t *testing.T) {
	t.Parallel()
	c := connected(t, newFixture(t, "fx", fxBadCursor).cfg, opts())
	_, err := c.ListResources(ctxTimeout(t, 30*time.Second))
	wantError(t, err, CodeProtocolError, FaultProtocol)
}

func TestClientTimeout(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "fx", fxNormal)
	fx.cfg.Timeout = 300 * time.Millisecond
	c := connected(t, fx.cfg, opts())

	// A deadline on the context.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.CallTool(ctx, "block", nil)
	e := wantError(t, err, CodeTimeout, FaultTimeout)
	if !errors.Is(err, context.DeadlineExceeded) || e.Tool != "block" {
		t.Errorf("timeout error = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("timed out after %v", d)
	}

	// The server's own timeout (ServerConfig.Timeout) when ctx has none,
	// reported as a deadline (as a context.WithTimeout would be).
	start = time.Now()
	_, err = c.CallTool(context.Background(), "block", nil)
	wantError(t, err, CodeTimeout, FaultTimeout)
	if d := time.Since(start); d < fx.cfg.Timeout {
		t.Errorf("timed out after %v, before the timeout", d)
	}
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("timeout error = %v", err)
	}

	// A context deadline overrides the server's timeout.
	res, err := c.CallTool(ctxTimeout(t, 10*time.Second), "sleep", map[string]any{"ms": 600})
	if err != nil || resultText(res) != "slept" {
		t.Errorf("sleep 600ms with a 10s deadline = %v, %v", res, err)
	}

	// Cancellation is reported as TIMEOUT too, with the cause.
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err = c.CallTool(ctx, "block", nil)
	wantError(t, err, CodeTimeout, FaultTimeout)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancel error = %v", err)
	}

	// The server was told: three notifications/cancelled.
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, _ := os.ReadFile(fx.cancelLog)
		if strings.Count(string(data), "cancelled ") >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server saw notifications/cancelled: %q, want 3", data)
		}
		time.Sleep(20 * time.Millisecond) // polled: the fixture process records them in a file
	}
	if _, err := c.CallTool(ctxTimeout(t, 10*time.Second), "echo", map[string]any{"text": "x"}); err != nil {
		t.Errorf("after timeouts: %v", err)
	}
}

// TestClientTimeoutOverlapping checks the client's timeout with several
// requests in flight, started at different times, some with deadlines of
// their own (the client keeps one timer for all of them).
func TestClientTimeoutOverlapping(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "fx", fxNormal)
	fx.cfg.Timeout = 400 * time.Millisecond
	c := connected(t, fx.cfg, opts())

	type outcome struct {
		name    string
		err     error
		elapsed time.Duration
	}
	out := make(chan outcome)
	call := func(name string, after time.Duration, ctx context.Context, tool string, args map[string]any) {
		go func() {
			time.Sleep(after) // real time: the calls start at different times against the client's one real-time timer
			start := time.Now()
			_, err := c.CallTool(ctx, tool, args)
			out <- outcome{name, err, time.Since(start)}
		}()
	}
	long := ctxTimeout(t, 30*time.Second)
	call("first", 0, context.Background(), "block", nil)
	call("own deadline", 0, long, "sleep", map[string]any{"ms": 900})
	call("second", 200*time.Millisecond, context.Background(), "block", nil)
	call("quick", 300*time.Millisecond, context.Background(), "echo", map[string]any{"text": "x"})
	for range 4 {
		o := <-out
		switch o.name {
		case "first", "second":
			wantError(t, o.err, CodeTimeout, FaultTimeout)
			if !errors.Is(o.err, context.DeadlineExceeded) {
				t.Errorf("%s: %v", o.name, o.err)
			}
			if o.elapsed < fx.cfg.Timeout {
				t.Errorf("%s timed out after %v, before the timeout", o.name, o.elapsed)
			}
			if o.elapsed > 10*time.Second {
				t.Errorf("%s timed out after %v", o.name, o.elapsed)
			}
		default:
			if o.err != nil {
				t.Errorf("%s: %v", o.name, o.err)
			}
		}
	}

	// The request's context reports the timeout as its deadline, unless
	// the caller's context has one.
	var got []time.Duration
	for _, ctx := range []context.Context{context.Background(), long} {
		start := time.Now()
		c.do(ctx, errOp{method: "test"}, func(ctx context.Context, _ *mcp.ClientSession) error {
			d, ok := ctx.Deadline()
			if !ok {
				t.Error("request context has no deadline")
			}
			got = append(got, d.Sub(start))
			if ctx.Err() != nil || ctx.Value(inflightKey{}) == nil {
				t.Errorf("request context: err %v, request %v", ctx.Err(), ctx.Value(inflightKey{}))
			}
			return nil
		})
	}
	if len(got) != 2 || got[0] < fx.cfg.Timeout || got[0] > fx.cfg.Timeout+time.Second || got[1] < 20*time.Second {
		t.Errorf("deadlines in %v", got)
	}
}

func TestClientSpawnFailed(t *testing.T) {
	t.Parallel()
	t.Run("exits at start", func(t *testing.T) {
		t.Parallel()
		phases := newPhaseLog()
		c := NewClient(newFixture(t, "dies", fxExitStart).cfg, opts(func(o *ClientOptions) { o.OnPhase = phases.record }))
		defer c.Close()
		start := time.Now()
		err := c.Connect(ctxTimeout(t, 30*time.Second))
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("Connect took %v to notice the exit", d)
		}
		e := wantError(t, err, CodeConnectionFailed, FaultSpawnFailed)
		exit, ok := e.Details.(*ProcessExit)
		if !ok {
			t.Fatalf("Details = %#v", e.Details)
		}
		if exit.ExitCode != 7 || !strings.Contains(exit.Stderr, "cannot open database") || !strings.Contains(exit.Stderr, "starting up") {
			t.Errorf("exit = %+v", exit)
		}
		if !strings.Contains(err.Error(), "exit status 7") || !strings.Contains(err.Error(), "cannot open database") {
			t.Errorf("message = %v", err)
		}
		phases.waitFor(t, PhaseFaulted)
		if c.Phase() != PhaseFaulted || c.Err() == nil {
			t.Errorf("phase %s, err %v", c.Phase(), c.Err())
		}
		if got := phases.path(); got != "idle→connecting→faulted" {
			t.Errorf("phases = %s", got)
		}
	})
	t.Run("no such command", func(t *testing.T) {
		t.Parallel()
		c := NewClient(ServerConfig{Name: "missing", Command: "/nonexistent/mcp-server"}, opts())
		defer c.Close()
		wantError(t, c.Connect(ctxTimeout(t, 10*time.Second)), CodeConnectionFailed, FaultSpawnFailed)
	})
	t.Run("never answers", func(t *testing.T) {
		t.Parallel()
		fx := newFixture(t, "mute", fxHangStart)
		c := NewClient(fx.cfg, opts())
		defer c.Close()
		err := c.Connect(ctxTimeout(t, 500*time.Millisecond))
		wantError(t, err, CodeTimeout, FaultTimeout)
	})
	t.Run("garbage", func(t *testing.T) {
		t.Parallel()
		c := NewClient(newFixture(t, "junk", fxGarbageStart).cfg, opts())
		defer c.Close()
		wantError(t, c.Connect(ctxTimeout(t, 10*time.Second)), CodeConnectionFailed, FaultProtocol)
	})
	t.Run("no command or URL", func(t *testing.T) {
		t.Parallel()
		c := NewClient(ServerConfig{Name: "empty"}, opts())
		defer c.Close()
		wantError(t, c.Connect(ctxTimeout(t, 10*time.Second)), CodeConfigError, "")
	})
}

// TestConnectTimeoutKillsChild: a connect that times out on a child that
// never answers returns TIMEOUT without waiting out ShutdownGrace (here
// far longer than the test's deadline), and leaves no child behind, even
// one that ignores the end of its stdin and SIGTERM.
func TestConnectTimeoutKillsChild(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "deaf", fxDeafStart)
	c := NewClient(fx.cfg, opts(func(o *ClientOptions) { o.ShutdownGrace = 10 * time.Minute }))
	defer c.Close()
	errc := make(chan error, 1)
	go func() { errc <- c.Connect(ctxTimeout(t, time.Second)) }()
	select {
	case err := <-errc:
		wantError(t, err, CodeTimeout, FaultTimeout)
	case <-time.After(time.Minute): // catches a hang: the graceful stop would take 20 minutes
		t.Fatal("Connect did not return")
	}
	if got := c.Phase(); got != PhaseFaulted {
		t.Errorf("phase = %s, want faulted", got)
	}
	pids := fixturePids(t, fx)
	if len(pids) != 1 {
		t.Fatalf("fixture processes started = %v, want one (did it start within the second?)", pids)
	}
	waitGone(t, pids[0])
}

// exitCode extracts the ProcessExit of an error.
func exitOf(t testing.TB, err error) *ProcessExit {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("not an *Error: %v", err)
	}
	exit, ok := e.Details.(*ProcessExit)
	if !ok {
		t.Fatalf("Details = %#v, want *ProcessExit (error %v)", e.Details, err)
	}
	return exit
}

func TestClientServerDiesMidCall(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "fx", fxNormal)
	phases := newPhaseLog()
	c := connected(t, fx.cfg, opts(func(o *ClientOptions) { o.OnPhase = phases.record }))
	ctx := ctxTimeout(t, 30*time.Second)

	// Calls pending when the server dies fail at once.
	const pending = 5
	errs := make(chan error, pending)
	for range pending {
		go func() {
			_, err := c.CallTool(ctx, "block", nil)
			errs <- err
		}()
	}
	eventually(t, func() bool { return fx.blocked() == pending }) // they reached the server
	start := time.Now()
	_, err := c.CallTool(ctx, "crash", nil)
	wantError(t, err, CodeNotConnected, FaultNotConnected)
	if exit := exitOf(t, err); exit.ExitCode != 3 || !strings.Contains(exit.Stderr, "crashing now") {
		t.Errorf("exit = %+v", exit)
	}
	for range pending {
		err := <-errs
		wantError(t, err, CodeNotConnected, FaultNotConnected)
		if exit := exitOf(t, err); exit.ExitCode != 3 {
			t.Errorf("pending call's exit = %+v", exit)
		}
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("pending calls failed after %v", d)
	}
	phases.waitFor(t, PhaseFaulted)
	if c.Phase() != PhaseFaulted {
		t.Errorf("phase = %s", c.Phase())
	}
	// Without a reconnect policy, calls fail until Connect.
	_, err = c.CallTool(ctx, "echo", map[string]any{"text": "x"})
	wantError(t, err, CodeNotConnected, FaultNotConnected)
	if exit := exitOf(t, err); exit.ExitCode != 3 {
		t.Errorf("faulted client's error exit = %+v", exit)
	}
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(ctx, "echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	phases.waitFor(t, PhaseClosed)
	if got, want := phases.path(), "idle→connecting→ready→faulted→connecting→ready→closing→closed"; got != want {
		t.Errorf("phases = %s\nwant %s", got, want)
	}
	if n := fx.spawns(); n != 2 {
		t.Errorf("spawns = %d, want 2", n)
	}
}

func TestClientReconnectOnce(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "fx", fxNormal)
	c := connected(t, fx.cfg, opts(func(o *ClientOptions) {
		o.Reconnect = &ReconnectPolicy{MaxAttempts: 3, InitialBackoff: 50 * time.Millisecond, MaxBackoff: time.Second}
	}))
	ctx := ctxTimeout(t, 30*time.Second)
	_, err := c.CallTool(ctx, "crash", nil)
	wantError(t, err, CodeNotConnected, FaultNotConnected)

	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			msg := strconv.Itoa(i)
			res, err := c.CallTool(ctx, "echo", map[string]any{"text": msg})
			if err != nil {
				t.Errorf("call %d: %v", i, err)
			} else if resultText(res) != msg {
				t.Errorf("call %d = %q", i, resultText(res))
			}
		})
	}
	wg.Wait()
	if got := fx.spawns(); got != 2 {
		t.Errorf("spawns = %d, want 2 (one reconnect for %d calls)", got, n)
	}
	if c.Phase() != PhaseReady || len(c.Tools()) == 0 {
		t.Errorf("after reconnect: phase %s, %d tools", c.Phase(), len(c.Tools()))
	}
}

// gone reports whether pid no longer runs (a zombie counts as gone).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return os.IsNotExist(err)
	}
	// "pid (comm) S ..." — the state follows the last ')'.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

func waitGone(t testing.TB, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !gone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still running", pid)
		}
		time.Sleep(20 * time.Millisecond) // polled: the processes are the client's or the fixture's children, not the test's to wait for
	}
}

func fixturePids(t testing.TB, fx *fixture) []int {
	t.Helper()
	data, _ := os.ReadFile(fx.spawnLog)
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	return pids
}

func TestClientCloseKillsProcessGroup(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("needs /proc")
	}
	fx := newFixture(t, "fx", fxNormal)
	c := connected(t, fx.cfg, opts())
	ctx := ctxTimeout(t, 30*time.Second)
	res, err := c.CallTool(ctx, "spawn", nil)
	if err != nil {
		t.Fatal(err)
	}
	grandchild, err := strconv.Atoi(resultText(res))
	if err != nil {
		t.Fatal(err)
	}
	if gone(grandchild) {
		t.Fatal("grandchild not running")
	}
	start := time.Now()
	c.Close()
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("Close took %v", d)
	}
	waitGone(t, grandchild)
	for _, pid := range fixturePids(t, fx) {
		waitGone(t, pid)
	}
	c.Close() // idempotent
	if c.Phase() != PhaseClosed {
		t.Errorf("phase = %s", c.Phase())
	}
}

func TestClientCloseFailsPendingCalls(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "fx", fxNormal)
	c := connected(t, fx.cfg, opts())
	errc := make(chan error, 1)
	go func() {
		_, err := c.CallTool(context.Background(), "block", nil)
		errc <- err
	}()
	eventually(t, func() bool { return fx.blocked() == 1 }) // it reached the server
	start := time.Now()
	var wg sync.WaitGroup
	for range 3 { // concurrent Closes all return
		wg.Go(func() { c.Close() })
	}
	wg.Wait()
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("Close took %v", d)
	}
	wantError(t, <-errc, CodeNotConnected, FaultNotConnected)
	for _, pid := range fixturePids(t, fx) {
		waitGone(t, pid)
	}
}

func TestClientLargeFrames(t *testing.T) {
	t.Parallel()
	t.Run("20 MiB result", func(t *testing.T) {
		t.Parallel()
		c := connected(t, newFixture(t, "fx", fxNormal).cfg, opts())
		const size = 20 << 20
		res, err := c.CallTool(ctxTimeout(t, 60*time.Second), "big", map[string]any{"bytes": size})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(resultText(res)); got != size {
			t.Fatalf("result has %d bytes, want %d", got, size)
		}
	})
	t.Run("over the cap", func(t *testing.T) {
		t.Parallel()
		c := connected(t, newFixture(t, "fx", fxNormal).cfg, opts(func(o *ClientOptions) { o.MaxMessageSize = 1 << 20 }))
		_, err := c.CallTool(ctxTimeout(t, 30*time.Second), "big", map[string]any{"bytes": 2 << 20})
		wantError(t, err, CodeProtocolError, FaultProtocol)
		if c.Phase() != PhaseFaulted {
			t.Errorf("phase = %s", c.Phase())
		}
	})
}

func TestClientGarbageMidSession(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "fx", fxNormal)
	c := connected(t, fx.cfg, opts())
	_, err := c.CallTool(ctxTimeout(t, 30*time.Second), "garbage", nil)
	wantError(t, err, CodeProtocolError, FaultProtocol)
	if c.Phase() != PhaseFaulted {
		t.Errorf("phase = %s", c.Phase())
	}
	wantError(t, c.Err(), CodeProtocolError, FaultProtocol)
	for _, pid := range fixturePids(t, fx) {
		waitGone(t, pid) // the misbehaving server was stopped
	}
}

func TestClientToolListChanged(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("protocol "+version, func(t *testing.T) {
			t.Parallel()
			changed := make(chan []*mcp.Tool, 10)
			promptsChanged := make(chan string, 10)
			c := connected(t, newFixture(t, "fx", fxNormal).cfg, opts(func(o *ClientOptions) {
				o.ProtocolVersion = version
				o.OnToolsChanged = func(server string, tools []*mcp.Tool) { changed <- tools }
				o.OnPromptListChanged = func(server string) { promptsChanged <- server }
			}))
			ctx := ctxTimeout(t, 30*time.Second)
			before := len(c.Tools())
			if _, err := c.CallTool(ctx, "add_tool", map[string]any{"name": "late"}); err != nil {
				t.Fatal(err)
			}
			has := func(tools []*mcp.Tool) bool {
				return slices.ContainsFunc(tools, func(t *mcp.Tool) bool { return t.Name == "late" })
			}
			for {
				select {
				case tools := <-changed:
					if !has(tools) {
						continue
					}
				case <-ctx.Done():
					t.Fatal("no tools/list_changed refresh")
				}
				break
			}
			if !has(c.Tools()) || len(c.Tools()) != before+1 {
				t.Errorf("Tools() not refreshed: %d tools", len(c.Tools()))
			}
			res, err := c.CallTool(ctx, "late", nil)
			if err != nil || resultText(res) != "I am late" {
				t.Errorf("late = %v, %v", res, err)
			}

			if _, err := c.CallTool(ctx, "add_prompt", map[string]any{"name": "second"}); err != nil {
				t.Fatal(err)
			}
			select {
			case server := <-promptsChanged:
				if server != "fx" {
					t.Errorf("prompts changed on %q", server)
				}
			case <-ctx.Done():
				t.Fatal("no prompts/list_changed")
			}
			if n := c.Status().Prompts; n != 2 {
				t.Errorf("Status().Prompts = %d after the change, want 2", n)
			}
		})
	}
}

func TestClientNotifications(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("protocol "+version, func(t *testing.T) {
			t.Parallel()
			var (
				mu       sync.Mutex
				progress []float64
				logs     []string
				updated  = make(chan string, 10)
			)
			fx := newFixture(t, "fx", fxNormal)
			c := connected(t, fx.cfg, opts(func(o *ClientOptions) {
				o.ProtocolVersion = version
				o.LogLevel = "info"
				o.Roots = []*mcp.Root{{URI: "file:///first"}}
				o.OnProgress = func(_ string, p *mcp.ProgressNotificationParams) {
					mu.Lock()
					progress = append(progress, p.Progress)
					mu.Unlock()
				}
				o.OnLog = func(server string, p *mcp.LoggingMessageParams) {
					mu.Lock()
					logs = append(logs, fmt.Sprintf("%s %s %v", server, p.Level, p.Data))
					mu.Unlock()
				}
				o.OnResourceUpdated = func(_, uri string) { updated <- uri }
			}))
			ctx := ctxTimeout(t, 30*time.Second)
			call := func(name string, args any) string {
				t.Helper()
				res, err := c.CallTool(ctx, name, args)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return resultText(res)
			}

			if got := call("progress", nil); got != "done" {
				t.Errorf("progress = %q", got)
			}
			call("log", nil)
			// Notifications are handled off the reader, so they may trail
			// the result.
			eventually(t, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(progress) == 3 && len(logs) == 1
			})
			mu.Lock()
			if !slices.Equal(progress, []float64{1, 2, 3}) {
				t.Errorf("progress = %v", progress)
			}
			if !slices.Equal(logs, []string{"fx warning hello from the server"}) {
				t.Errorf("logs = %q", logs)
			}
			mu.Unlock()

			// Elicitation is declined without a handler.
			if got := call("ask", nil); got != "decline <nil>" {
				t.Errorf("ask = %q", got)
			}
			// Roots come from the client.
			if got := call("roots", nil); got != "file:///first" {
				t.Errorf("roots = %q", got)
			}
			c.SetRoots([]*mcp.Root{{URI: "file:///a"}, {URI: "file:///b"}})
			if got := call("roots", nil); got != "file:///a,file:///b" {
				t.Errorf("roots after SetRoots = %q", got)
			}

			if err := c.Subscribe(ctx, "mem://greeting"); err != nil {
				t.Fatal(err)
			}
			call("touch", map[string]any{"uri": "mem://greeting"})
			select {
			case uri := <-updated:
				if uri != "mem://greeting" {
					t.Errorf("updated %q", uri)
				}
			case <-ctx.Done():
				t.Fatal("no resources/updated")
			}
			if err := c.Unsubscribe(ctx, "mem://greeting"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestClientElicitationHandler(t *testing.T) {
	t.Parallel()
	c := connected(t, newFixture(t, "fx", fxNormal).cfg, opts(func(o *ClientOptions) {
		o.OnElicit = func(_ context.Context, server string, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": server + "-Ada"}}, nil
		}
	}))
	res, err := c.CallTool(ctxTimeout(t, 30*time.Second), "ask", nil)
	if err != nil || resultText(res) != "accept fx-Ada" {
		t.Errorf("ask = %v, %v", res, err)
	}
}

// countingTransport counts requests.
type countingTransport struct {
	n atomic.Int64
}

func (ct *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ct.n.Add(1)
	return http.DefaultTransport.RoundTrip(req)
}

func TestClientHTTP(t *testing.T) {
	t.Parallel()
	hf := newHTTPFixture(t)
	ctx := ctxTimeout(t, 30*time.Second)

	t.Run("streamable", func(t *testing.T) {
		ct := &countingTransport{}
		c := connected(t, ServerConfig{
			Name: "web", URL: hf.streamable.URL,
			Headers:    map[string]string{"X-Mcpkit-Test": "yes"},
			HTTPClient: &http.Client{Transport: ct},
		}, opts(func(o *ClientOptions) { o.Implementation = &mcp.Implementation{Name: "custom-host", Version: "9.9"} }))
		res, err := c.CallTool(ctx, "echo", map[string]any{"text": "over http"})
		if err != nil || resultText(res) != "over http" {
			t.Fatalf("echo = %v, %v", res, err)
		}
		res, err = c.CallTool(ctx, "whoami", nil)
		if err != nil || !strings.HasPrefix(resultText(res), "custom-host 9.9") {
			t.Errorf("whoami = %q, %v", resultText(res), err)
		}
		if !hf.sawHeader("X-Mcpkit-Test", "yes") {
			t.Error("configured header not sent")
		}
		if ct.n.Load() == 0 {
			t.Error("injected HTTP client not used")
		}
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				msg := strconv.Itoa(i)
				res, err := c.CallTool(ctx, "echo", map[string]any{"text": msg})
				if err != nil || resultText(res) != msg {
					t.Errorf("call %d = %v, %v", i, res, err)
				}
			})
		}
		wg.Wait()
		_, err = c.CallTool(ctx, "nope", nil)
		wantError(t, err, CodeToolNotFound, "")
		if st := c.Status(); st.Transport != TransportHTTP || st.Resources != 1 || st.Prompts != 1 {
			t.Errorf("status = %+v", st)
		}
	})
	t.Run("sse", func(t *testing.T) {
		// The go-sdk's SSE transport ties its stream to the context given
		// to Connect; the client's connection must outlive it.
		c := NewClient(ServerConfig{Name: "legacy", Kind: TransportSSE, URL: hf.sse.URL}, opts())
		defer c.Close()
		connectCtx, cancel := context.WithCancel(ctx)
		if err := c.Connect(connectCtx); err != nil {
			t.Fatal(err)
		}
		cancel()
		time.Sleep(50 * time.Millisecond) // time for a stream tied to connectCtx to be torn down; when it is not, there is no event to wait for
		res, err := c.CallTool(ctx, "echo", map[string]any{"text": "over sse"})
		if err != nil || resultText(res) != "over sse" {
			t.Fatalf("echo = %v, %v", res, err)
		}
		if len(c.Tools()) == 0 {
			t.Error("no tools")
		}
	})
	t.Run("401", func(t *testing.T) {
		for _, kind := range []TransportKind{TransportHTTP, TransportSSE} {
			c := NewClient(ServerConfig{Name: "denied", Kind: kind, URL: hf.denied.URL}, opts())
			err := c.Connect(ctx)
			wantError(t, err, CodeSessionError, "")
			if !IsSessionError(err) {
				t.Errorf("%s: IsSessionError = false", kind)
			}
			c.Close()
		}
	})
}

func TestClientHTTPServerGone(t *testing.T) {
	t.Parallel()
	srv := newFixtureServer(false)
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	c := connected(t, ServerConfig{Name: "web", URL: ts.URL}, opts())
	ctx := ctxTimeout(t, 30*time.Second)
	if _, err := c.CallTool(ctx, "echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	ts.CloseClientConnections()
	ts.Close()
	_, err := c.CallTool(ctx, "echo", map[string]any{"text": "x"})
	wantError(t, err, CodeTransportError, FaultTransport)
}

func TestClientCloseDuringConnect(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "mute", fxHangStart)
	c := NewClient(fx.cfg, opts())
	errc := make(chan error, 1)
	go func() { errc <- c.Connect(context.Background()) }()
	eventually(t, func() bool { return fx.spawns() > 0 })
	c.Close()
	wantError(t, <-errc, CodeNotConnected, FaultNotConnected)
	for _, pid := range fixturePids(t, fx) {
		waitGone(t, pid)
	}
}

// processCPU returns the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCallTool compares a CallTool round trip through mcpkit with the
// bare go-sdk client against the same server. The paired sub-benchmarks
// take turns between the clients call by call and report the ratios of
// their mean and median latencies: on a shared machine these are much
// steadier than the ratios of separate runs.
func BenchmarkCallTool(b *testing.B) {
	args := map[string]any{"text": "hello"}
	type caller = func(ctx context.Context) (*mcp.CallToolResult, error)
	check := func(b *testing.B, res *mcp.CallToolResult, err error) {
		if err != nil || resultText(res) != "hello" {
			b.Fatal(res, err)
		}
	}
	bench := func(b *testing.B, call caller) {
		ctx := context.Background()
		lat := make([]time.Duration, 0, 1<<16)
		b.ReportAllocs()
		runtime.GC() // leave nothing of the sub-benchmark before for this one to collect
		b.ResetTimer()
		cpu0 := processCPU()
		for b.Loop() {
			start := time.Now()
			res, err := call(ctx)
			if len(lat) < cap(lat) {
				lat = append(lat, time.Since(start))
			}
			check(b, res, err)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
		// The benchmark process's own CPU time per call (the stdio server
		// is a child, not counted; the HTTP server is in-process): less
		// at the mercy of other jobs on the machine than calls/s.
		b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
		slices.Sort(lat)
		if n := len(lat); n > 0 {
			b.ReportMetric(float64(lat[n/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[n*99/100].Microseconds()), "p99-µs")
		}
	}
	// paired calls the first caller and each of the others in turn (the
	// order rotating) and reports the first's mean latency over each
	// other's, as "name/other" (the ratio of their calls/s), and the same
	// for the medians, as "name/other-p50".
	paired := func(b *testing.B, names []string, calls []caller) {
		ctx := context.Background()
		total := make([]time.Duration, len(calls))
		lat := make([][]time.Duration, len(calls))
		runtime.GC()
		b.ResetTimer()
		i := 0
		for b.Loop() {
			for j := range calls {
				k := (i + j) % len(calls)
				start := time.Now()
				res, err := calls[k](ctx)
				d := time.Since(start)
				total[k] += d
				if len(lat[k]) < 1<<16 {
					lat[k] = append(lat[k], d)
				}
				check(b, res, err)
			}
			i++
		}
		for k := range lat {
			slices.Sort(lat[k])
		}
		for k := 1; k < len(calls); k++ {
			b.ReportMetric(float64(total[0])/float64(total[k]), names[0]+"/"+names[k])
			b.ReportMetric(float64(lat[0][len(lat[0])/2])/float64(lat[k][len(lat[k])/2]), names[0]+"/"+names[k]+"-p50")
		}
	}
	bare := func(b *testing.B, t mcp.Transport) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), t, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cs.Close() })
		return cs
	}
	stdioMcpkit := func(b *testing.B) caller {
		c := connected(b, newFixture(b, "fx", fxNormal).cfg, opts())
		return func(ctx context.Context) (*mcp.CallToolResult, error) { return c.CallTool(ctx, "echo", args) }
	}
	stdioBare := func(b *testing.B) caller {
		fx := newFixture(b, "fx", fxNormal)
		cmd := exec.Command(fx.cfg.Command)
		cmd.Env = mergeEnv(os.Environ(), fx.cfg.Env)
		cs := bare(b, &mcp.CommandTransport{Command: cmd})
		return func(ctx context.Context) (*mcp.CallToolResult, error) {
			return cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
		}
	}
	// The bare client again, but with the per-call deadline every real
	// caller sets (mcpkit always sets one: the request timeout). The go-sdk
	// watches a cancellable context for each call, and WithTimeout starts
	// a runtime timer, which costs more than the Background context above.
	stdioBareDeadline := func(b *testing.B) caller {
		call := stdioBare(b)
		return func(ctx context.Context) (*mcp.CallToolResult, error) {
			ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
			defer cancel()
			return call(ctx)
		}
	}
	b.Run("stdio/mcpkit", func(b *testing.B) { bench(b, stdioMcpkit(b)) })
	b.Run("stdio/go-sdk", func(b *testing.B) { bench(b, stdioBare(b)) })
	b.Run("stdio/go-sdk-deadline", func(b *testing.B) { bench(b, stdioBareDeadline(b)) })
	b.Run("stdio/paired", func(b *testing.B) {
		paired(b, []string{"mcpkit", "go-sdk", "go-sdk-deadline"}, []caller{stdioMcpkit(b), stdioBare(b), stdioBareDeadline(b)})
	})

	hf := newHTTPFixture(b)
	httpMcpkit := func(b *testing.B) caller {
		c := connected(b, ServerConfig{Name: "web", URL: hf.streamable.URL}, opts())
		return func(ctx context.Context) (*mcp.CallToolResult, error) { return c.CallTool(ctx, "echo", args) }
	}
	httpBare := func(b *testing.B) caller {
		cs := bare(b, &mcp.StreamableClientTransport{Endpoint: hf.streamable.URL})
		return func(ctx context.Context) (*mcp.CallToolResult, error) {
			return cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
		}
	}
	b.Run("http/mcpkit", func(b *testing.B) { bench(b, httpMcpkit(b)) })
	b.Run("http/go-sdk", func(b *testing.B) { bench(b, httpBare(b)) })
	b.Run("http/paired", func(b *testing.B) {
		paired(b, []string{"mcpkit", "go-sdk"}, []caller{httpMcpkit(b), httpBare(b)})
	})
}
