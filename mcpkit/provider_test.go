package mcpkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// legacyProtocol is the newest protocol version negotiated with the
// initialize handshake; the go-sdk's default is the newer stateless one.
const legacyProtocol = "2025-11-25"

// providerFixture is a provider with test tools and a record of what its
// blocking tool saw.
type providerFixture struct {
	p         *Provider
	started   chan struct{} // a "block" call began
	cancelled chan error    // a "block" call saw its ctx end, with ctx.Err()
	logs      *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newProviderFixture(t *testing.T) *providerFixture {
	t.Helper()
	f := &providerFixture{
		started:   make(chan struct{}, 1),
		cancelled: make(chan error, 1),
		logs:      &syncBuffer{},
	}
	add := Tool{
		Name:        "add",
		Description: "adds two integers",
		InputSchema: &jsonschema.Schema{
			Type: "object",
			Properties: map[string]*jsonschema.Schema{
				"a":    {Type: "integer"},
				"b":    {Type: "integer"},
				"note": {Type: "string"},
			},
			Required:             []string{"a", "b"},
			AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
		},
		Execute: func(_ context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
			var in struct{ A, B int }
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(in.A + in.B)}},
				StructuredContent: map[string]any{"sum": in.A + in.B},
			}, nil
		},
	}
	fail := Tool{
		Name: "fail",
		Execute: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
			return nil, errors.New("disk full")
		},
	}
	block := Tool{
		Name: "block",
		Execute: func(ctx context.Context, _ json.RawMessage) (*mcp.CallToolResult, error) {
			f.started <- struct{}{}
			select {
			case <-ctx.Done():
				f.cancelled <- ctx.Err()
				return nil, ctx.Err()
			case <-time.After(10 * time.Second):
				f.cancelled <- nil
				return textResult("not cancelled"), nil
			}
		},
	}
	logger := slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p, err := NewProvider(mcp.Implementation{Name: "test-provider", Version: "1.2.3"}, &ProviderOptions{
		Tools:  []Tool{add, fail, block},
		Logger: logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.p = p
	return f
}

// listChanged counts notifications/tools/list_changed.
type listChanged struct {
	n  atomic.Int32
	ch chan struct{}
}

func newListChanged() *listChanged { return &listChanged{ch: make(chan struct{}, 16)} }

func (l *listChanged) handler(context.Context, *mcp.ToolListChangedRequest) {
	l.n.Add(1)
	l.ch <- struct{}{}
}

func (l *listChanged) wait(t *testing.T) {
	t.Helper()
	select {
	case <-l.ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed notification")
	}
}

// connect starts a session of f's provider over in-memory transports.
// It returns the client session and the result of Serve.
func (f *providerFixture) connectInMemory(t *testing.T, ctx context.Context, lc *listChanged, version string) (*mcp.ClientSession, <-chan error) {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- f.p.Serve(ctx, st) }()
	cs, err := newTestClient(lc).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	return cs, served
}

func newTestClient(lc *listChanged) *mcp.Client {
	opts := &mcp.ClientOptions{}
	if lc != nil {
		opts.ToolListChangedHandler = lc.handler
	}
	return mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "0"}, opts)
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// exerciseProvider runs the checks that every transport must pass.
func exerciseProvider(t *testing.T, f *providerFixture, cs *mcp.ClientSession, lc *listChanged, pingable bool) {
	ctx := context.Background()

	t.Run("identity", func(t *testing.T) {
		t.Logf("protocol %s", cs.InitializeResult().ProtocolVersion)
		info := cs.InitializeResult().ServerInfo
		if info == nil || info.Name != "test-provider" || info.Version != "1.2.3" {
			t.Errorf("server info = %+v", info)
		}
	})

	t.Run("ping", func(t *testing.T) {
		if !pingable {
			t.Skip("the stateless protocol over stateless HTTP has no ping")
		}
		if err := cs.Ping(ctx, nil); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("list", func(t *testing.T) {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{"add", "block", "fail"}) {
			t.Errorf("tools = %v", names)
		}
		for _, tool := range res.Tools {
			if tool.Name != "add" {
				continue
			}
			schema := tool.InputSchema.(map[string]any)
			if schema["additionalProperties"] != false || !reflect2Equal(schema["required"], []any{"a", "b"}) {
				t.Errorf("add's schema = %v", schema)
			}
		}
	})

	t.Run("call", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 40}})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError || text(res) != "42" {
			t.Errorf("result = %+v", res)
		}
		if sc, _ := res.StructuredContent.(map[string]any); sc["sum"] != float64(42) {
			t.Errorf("structured content = %v", res.StructuredContent)
		}
	})

	t.Run("invalid arguments", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1.5, "c": true}})
		if err != nil {
			t.Fatal(err)
		}
		got := text(res)
		for _, want := range []string{`missing required property "b"`, `unexpected property "c"`, `property "a"`} {
			if !res.IsError || !strings.Contains(got, want) {
				t.Errorf("result %q (isError %v) lacks %q", got, res.IsError, want)
			}
		}
	})

	t.Run("tool failure", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fail"})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || text(res) != "disk full" {
			t.Errorf("result = %q, isError %v", text(res), res.IsError)
		}
	})

	t.Run("unknown tool", func(t *testing.T) {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "nope"})
		var wire *jsonrpc.Error
		if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("err = %v, want JSON-RPC -32602", err)
		}
	})

	t.Run("cancellation", func(t *testing.T) {
		callCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		called := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "block"})
			called <- err
		}()
		select {
		case <-f.started:
		case <-time.After(5 * time.Second):
			t.Fatal("tool did not start")
		}
		cancel()
		select {
		case err := <-f.cancelled:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("tool saw %v, want context.Canceled", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("cancellation did not reach the tool")
		}
		if err := <-called; err == nil {
			t.Error("cancelled call returned no error")
		}
	})

	t.Run("list changed", func(t *testing.T) {
		before := lc.n.Load()
		if err := f.p.AddTool(echoTool("echo", nil)); err != nil {
			t.Fatal(err)
		}
		lc.wait(t)
		res, err := cs.ListTools(ctx, nil)
		if err != nil || !slices.ContainsFunc(res.Tools, func(tool *mcp.Tool) bool { return tool.Name == "echo" }) {
			t.Fatalf("echo not listed after AddTool: %v", err)
		}
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"x": 1}}); err != nil || text(res) != `{"x":1}` {
			t.Errorf("echo: %v, %v", res, err)
		}

		if !f.p.RemoveTool("echo") || f.p.RemoveTool("echo") {
			t.Fatal("RemoveTool")
		}
		lc.wait(t)
		res, err = cs.ListTools(ctx, nil)
		if err != nil || slices.ContainsFunc(res.Tools, func(tool *mcp.Tool) bool { return tool.Name == "echo" }) {
			t.Fatalf("echo listed after RemoveTool: %v", err)
		}
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo"}); err == nil {
			t.Error("removed tool still callable")
		}
		if got := lc.n.Load() - before; got != 2 {
			t.Errorf("%d notifications, want 2", got)
		}
	})
}

// checkProtocol checks that the session speaks version, or for "" the
// go-sdk's newer default (the stateless protocol, where list_changed
// needs a subscriptions/listen stream).
func checkProtocol(t *testing.T, cs *mcp.ClientSession, version string) {
	t.Helper()
	got := cs.InitializeResult().ProtocolVersion
	if version == "" && got <= legacyProtocol || version != "" && got != version {
		t.Fatalf("negotiated protocol %s, want %q", got, version)
	}
}

func reflect2Equal(a any, b []any) bool {
	s, ok := a.([]any)
	return ok && slices.Equal(s, b)
}

func TestProviderInMemory(t *testing.T) {
	for _, version := range []string{"", legacyProtocol} {
		name := version
		if name == "" {
			name = "default protocol"
		}
		t.Run(name, func(t *testing.T) {
			f := newProviderFixture(t)
			lc := newListChanged()
			cs, served := f.connectInMemory(t, context.Background(), lc, version)
			checkProtocol(t, cs, version)
			exerciseProvider(t, f, cs, lc, true)

			// The client going away ends Serve with nil.
			cs.Close()
			select {
			case err := <-served:
				if err != nil {
					t.Errorf("Serve = %v, want nil", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Serve did not return after the client closed")
			}
			if logs := f.logs.String(); !strings.Contains(logs, "tool call") {
				t.Errorf("no tool call logged:\n%s", logs)
			}
		})
	}
}

func TestProviderServeContextCancel(t *testing.T) {
	f := newProviderFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cs, served := f.connectInMemory(t, ctx, nil, "")
	defer cs.Close()
	cancel()
	select {
	case err := <-served:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Serve = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
}

func TestProviderHTTP(t *testing.T) {
	tests := []struct {
		name    string
		opts    *mcp.StreamableHTTPOptions
		version string // asked for
		want    string // negotiated; "" for newer than legacyProtocol
	}{
		// A stateful handler serves only the handshake-era protocols, so
		// the go-sdk client falls back to the newest of them.
		{name: "stateful", version: "", want: legacyProtocol},
		{name: "stateful 2025-06-18", version: "2025-06-18", want: "2025-06-18"},
		// A stateless handler serves the newer stateless protocol (and
		// cancellation needs Handler's PropagateRequestCancellation).
		{name: "stateless", opts: &mcp.StreamableHTTPOptions{Stateless: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newProviderFixture(t)
			f.p.httpOp = tt.opts
			srv := httptest.NewServer(f.p.Handler()) // 127.0.0.1:0
			defer srv.Close()
			lc := newListChanged()
			ctx := context.Background()
			connect := func(lc *listChanged) *mcp.ClientSession {
				cs, err := newTestClient(lc).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, &mcp.ClientSessionOptions{ProtocolVersion: tt.version})
				if err != nil {
					t.Fatal(err)
				}
				return cs
			}
			cs := connect(lc)
			defer cs.Close()
			checkProtocol(t, cs, tt.want)

			// A second client shares the provider's tools and hears
			// about changes too.
			lc2 := newListChanged()
			cs2 := connect(lc2)
			defer cs2.Close()

			exerciseProvider(t, f, cs, lc, tt.opts == nil || !tt.opts.Stateless)
			if lc2.n.Load() < 1 {
				lc2.wait(t) // delivery to each session is asynchronous
			}
		})
	}
}

func TestProviderServeStdio(t *testing.T) {
	// Swap the process's stdin and stdout for pipes (this test is not
	// parallel, so nothing else writes to stdout meanwhile).
	f := newProviderFixture(t)
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	oldIn, oldOut := os.Stdin, os.Stdout
	os.Stdin, os.Stdout = stdinR, stdoutW
	served := make(chan error, 1)
	go func() { served <- f.p.ServeStdio(context.Background()) }()
	defer func() { os.Stdin, os.Stdout = oldIn, oldOut }()

	ctx := context.Background()
	cs, err := newTestClient(nil).Connect(ctx, &mcp.IOTransport{Reader: stdoutR, Writer: stdinW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}})
	if err != nil || text(res) != "3" {
		t.Fatalf("call over stdio: %v, %v", res, err)
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// EOF on stdin ends ServeStdio with nil.
	stdinW.Close()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("ServeStdio = %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio did not return on EOF")
	}
	cs.Close()
	stdoutW.Close()
	io.Copy(io.Discard, stdoutR)
}

func TestNewProvider(t *testing.T) {
	p, err := NewProvider(mcp.Implementation{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	go p.Serve(context.Background(), st)
	cs, err := newTestClient(nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	info := cs.InitializeResult().ServerInfo
	if info.Name != DefaultProviderName || info.Version != DefaultProviderVersion {
		t.Errorf("default identity = %+v", info)
	}
	if caps := cs.InitializeResult().Capabilities; caps.Tools == nil || !caps.Tools.ListChanged {
		t.Errorf("tools capability not advertised without tools: %+v", caps)
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 0 {
		t.Errorf("ListTools = %v, %v", res, err)
	}

	// MCP names may contain dots, unlike model-API names.
	if err := p.AddTool(echoTool("files.read", nil)); err != nil {
		t.Errorf("dotted name: %v", err)
	}
	for _, bad := range []Tool{echoTool("has space", nil), echoTool("files.read", nil), {Name: "noexec"}} {
		if err := p.AddTool(bad); err == nil {
			t.Errorf("AddTool(%q) succeeded", bad.Name)
		}
	}
	if _, err := NewProvider(mcp.Implementation{}, &ProviderOptions{Tools: []Tool{echoTool("s", &jsonschema.Schema{Type: "array"})}}); !errors.Is(err, ErrSchemaConversion) {
		t.Errorf("bad schema: %v", err)
	}
	if names := p.Tools(); len(names) != 1 || names[0].Name != "files.read" {
		t.Errorf("Tools = %v", names)
	}
}

// TestProviderServeStopCancelsCalls: when Serve's context ends, the calls
// in flight see their contexts cancelled and Serve returns, rather than
// waiting for calls that would never end by themselves (a gateway's
// upstream calls, before its fleet is closed).
func TestProviderServeStopCancelsCalls(t *testing.T) {
	t.Parallel()
	f := newProviderFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	ct, st := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- f.p.Serve(ctx, st) }()
	cctx, ccancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer ccancel()
	cs, err := newTestClient(nil).Connect(cctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "block"})
		called <- err
	}()
	<-f.started
	cancel()
	select {
	case err := <-served:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Serve = %v, want context.Canceled", err)
		}
	case <-time.After(serveStopGrace + 5*time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	if err := <-f.cancelled; !errors.Is(err, context.Canceled) {
		t.Errorf("the call in flight ended with %v, want its context cancelled", err)
	}
}
