package mcpkit

// Test fixtures: real MCP servers built with the go-sdk. Stdio fixtures
// run as child processes by re-executing the test binary with
// MCPKIT_TEST_SERVER=<kind>; HTTP and SSE fixtures run in-process on
// 127.0.0.1.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Environment of the fixture processes.
const (
	envFixture   = "MCPKIT_TEST_SERVER"    // which fixture to run
	envSpawnLog  = "MCPKIT_TEST_SPAWNS"    // file the fixture appends its pid to at start
	envCancelLog = "MCPKIT_TEST_CANCELLED" // file notifications/cancelled are recorded in
	envPidFile   = "MCPKIT_TEST_PIDFILE"   // file the spawn tool writes its grandchild's pid to
	envBlockLog  = "MCPKIT_TEST_BLOCKED"   // file the block tool appends a line to when a call starts
)

// Fixture kinds.
const (
	fxNormal       = "normal"       // every tool, a resource, a prompt
	fxExitStart    = "exitstart"    // writes to stderr and exits 7 before the handshake
	fxHangStart    = "hangstart"    // never answers the handshake
	fxGarbageStart = "garbagestart" // writes a non-JSON line instead of answering
	fxBadCursor    = "badcursor"    // normal, but resources/list repeats its cursor forever
	fxSlowStart    = "slowstart"    // normal, after 200 ms of start-up work (a server that loads something first)
	fxForward      = "forward"      // talks back in the course of calls (gateway_forward_test.go)
	fxStructured   = "structured"   // a tool with title, annotations, output schema and structured results (bridge_follow_test.go)
	fxDeafStart    = "deafstart"    // never answers the handshake, and ignores both the end of stdin and SIGTERM
	fxLong         = "long"         // normal, plus the long tool (addLongTool)
)

func TestMain(m *testing.M) {
	if kind := os.Getenv(envFixture); kind != "" {
		os.Exit(runFixture(kind))
	}
	os.Exit(m.Run())
}

// runFixture runs a fixture server on stdin/stdout and returns its exit
// code.
func runFixture(kind string) int {
	if f := os.Getenv(envSpawnLog); f != "" {
		appendLine(f, fmt.Sprint(os.Getpid()))
	}
	switch kind {
	case fxExitStart:
		fmt.Fprintln(os.Stderr, "starting up")
		fmt.Fprintln(os.Stderr, "fatal: cannot open database /nonexistent/db.sqlite")
		return 7
	case fxHangStart:
		io.Copy(io.Discard, os.Stdin)
		return 0
	case fxDeafStart:
		signal.Ignore(syscall.SIGTERM)
		// Neither reads stdin nor exits: only SIGKILL ends it. (A sleep
		// rather than an empty select, which the runtime would call a
		// deadlock.)
		time.Sleep(time.Hour)
		return 0
	case fxGarbageStart:
		os.Stdout.WriteString("this is not JSON-RPC\n")
		io.Copy(io.Discard, os.Stdin)
		return 0
	case fxSlowStart:
		time.Sleep(200 * time.Millisecond) // the start-up work this fixture stands for: real time the client must wait out
		srv := newFixtureServer(false)
		if err := srv.Run(context.Background(), &mcp.StdioTransport{MaxLineLength: -1}); err != nil {
			fmt.Fprintln(os.Stderr, "fixture:", err)
		}
		return 0
	case fxForward:
		if err := newForwardServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "fixture:", err)
		}
		return 0
	case fxStructured:
		if err := newStructuredServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "fixture:", err)
		}
		return 0
	case fxLong:
		srv := newFixtureServer(false)
		addLongTool(srv)
		if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "fixture:", err)
		}
		return 0
	case fxNormal, fxBadCursor:
		srv := newFixtureServer(kind == fxBadCursor)
		if err := srv.Run(context.Background(), &mcp.StdioTransport{MaxLineLength: -1}); err != nil {
			fmt.Fprintln(os.Stderr, "fixture:", err)
		}
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown fixture", kind)
	return 2
}

func appendLine(file, line string) {
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, line)
}

func fxText(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

var objectSchema = json.RawMessage(`{"type":"object"}`)

// newFixtureServer builds the test MCP server. Tools that kill or write
// to the process (crash, garbage) are only for stdio use.
func newFixtureServer(badCursor bool) *mcp.Server {
	var srv *mcp.Server
	srv = mcp.NewServer(&mcp.Implementation{Name: "fixture", Version: "1.0.0"}, &mcp.ServerOptions{
		PageSize:           4, // so that listing the tools takes several pages
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})

	// Record the notifications/cancelled the server receives.
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/cancelled" {
				if f := os.Getenv(envCancelLog); f != "" {
					p := req.GetParams().(*mcp.CancelledParams)
					appendLine(f, fmt.Sprintf("cancelled %v: %s", p.RequestID, p.Reason))
				}
			}
			if badCursor && method == "resources/list" {
				return &mcp.ListResourcesResult{
					Resources:  []*mcp.Resource{{URI: "mem://loop", Name: "loop"}},
					NextCursor: "again",
				}, nil
			}
			return next(ctx, method, req)
		}
	})

	type echoIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echoes text"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return fxText("%s", in.Text), nil, nil
	})
	type addIn struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}
	type addOut struct {
		Sum float64 `json:"sum"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "add", Description: "adds"}, func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
		return nil, addOut{Sum: in.A + in.B}, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "mixed"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "a picture"},
			&mcp.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://greeting", MIMEType: "text/plain", Text: "hello"}},
		}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "fail"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, fmt.Errorf("the tool failed on purpose")
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "strict"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "strict: argument x is required"}
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "boom"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, &jsonrpc.Error{Code: -32000, Message: "boom", Data: json.RawMessage(`{"why":"test"}`)}
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "crash"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		fmt.Fprintln(os.Stderr, "crashing now")
		os.Exit(3)
		return nil, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "block"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		if f := os.Getenv(envBlockLog); f != "" {
			appendLine(f, "block")
		}
		<-ctx.Done()
		return nil, nil, ctx.Err()
	})
	type sleepIn struct {
		Ms int `json:"ms"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "sleep"}, func(ctx context.Context, _ *mcp.CallToolRequest, in sleepIn) (*mcp.CallToolResult, any, error) {
		select {
		case <-time.After(time.Duration(in.Ms) * time.Millisecond):
		case <-ctx.Done():
		}
		return fxText("slept"), nil, nil
	})
	type bigIn struct {
		Bytes int `json:"bytes"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "big"}, func(_ context.Context, _ *mcp.CallToolRequest, in bigIn) (*mcp.CallToolResult, any, error) {
		return fxText("%s", strings.Repeat("x", in.Bytes)), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "garbage"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		os.Stdout.WriteString("}{ this is not json\n")
		<-ctx.Done()
		return nil, nil, ctx.Err()
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "spawn"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		cmd := exec.Command("sleep", "60")
		if err := cmd.Start(); err != nil {
			return nil, nil, err
		}
		if f := os.Getenv(envPidFile); f != "" {
			os.WriteFile(f, []byte(fmt.Sprint(cmd.Process.Pid)), 0o600)
		}
		return fxText("%d", cmd.Process.Pid), nil, nil
	})
	type nameIn struct {
		Name string `json:"name"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "add_tool"}, func(_ context.Context, _ *mcp.CallToolRequest, in nameIn) (*mcp.CallToolResult, any, error) {
		mcp.AddTool(srv, &mcp.Tool{Name: in.Name}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return fxText("I am %s", in.Name), nil, nil
		})
		return fxText("added %s", in.Name), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "add_prompt"}, func(_ context.Context, _ *mcp.CallToolRequest, in nameIn) (*mcp.CallToolResult, any, error) {
		srv.AddPrompt(&mcp.Prompt{Name: in.Name}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		})
		return fxText("added %s", in.Name), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "env"}, func(_ context.Context, _ *mcp.CallToolRequest, in nameIn) (*mcp.CallToolResult, any, error) {
		return fxText("%s|path=%t", os.Getenv(in.Name), os.Getenv("PATH") != ""), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "cwd"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		wd, _ := os.Getwd()
		return fxText("%s", wd), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		p := req.Session.InitializeParams()
		if p == nil || p.ClientInfo == nil {
			return fxText("unknown"), nil, nil
		}
		return fxText("%s %s %s", p.ClientInfo.Name, p.ClientInfo.Version, p.ProtocolVersion), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "progress"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		tok := req.Params.GetProgressToken()
		if tok == nil {
			return fxText("no token"), nil, nil
		}
		for i := 1; i <= 3; i++ {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i)})
		}
		return fxText("done"), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "log"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Logger: "fixture", Data: "hello from the server"})
		return fxText("logged"), nil, nil
	})
	type uriIn struct {
		URI string `json:"uri"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "touch"}, func(ctx context.Context, _ *mcp.CallToolRequest, in uriIn) (*mcp.CallToolResult, any, error) {
		return fxText("touched"), nil, srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: in.URI})
	})
	// Input from the client (elicitation, roots) through multi round-trip
	// input requests, which the go-sdk turns into server-to-client
	// requests for pre-2026 sessions.
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: objectSchema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r, ok := req.Params.InputResponses["q"].(*mcp.ElicitResult); ok {
			return fxText("%s %v", r.Action, r.Content["name"]), nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": &mcp.ElicitParams{
			Message:         "What is your name?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}},
		}}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "roots", InputSchema: objectSchema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r, ok := req.Params.InputResponses["r"].(*mcp.ListRootsResult); ok {
			var uris []string
			for _, root := range r.Roots {
				uris = append(uris, root.URI)
			}
			return fxText("%s", strings.Join(uris, ",")), nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"r": &mcp.ListRootsParams{}}}, nil
	})

	srv.AddResource(&mcp.Resource{URI: "mem://greeting", Name: "greeting", MIMEType: "text/plain"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "hello"}}}, nil
	})
	srv.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Hello, " + req.Params.Arguments["name"]}}}}, nil
	})
	return srv
}

// addLongTool adds the tool "long": an operation that takes ms
// milliseconds and reports progress every everyMs (to a call with a
// progress token), then answers "done"; a cancelled call ends at once.
func addLongTool(srv *mcp.Server) {
	type longIn struct {
		Ms      int `json:"ms"`
		EveryMs int `json:"everyMs"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "long"}, func(ctx context.Context, req *mcp.CallToolRequest, in longIn) (*mcp.CallToolResult, any, error) {
		if in.Ms <= 0 || in.EveryMs <= 0 {
			return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "long: ms and everyMs must be positive"}
		}
		tok := req.Params.GetProgressToken()
		end := time.NewTimer(time.Duration(in.Ms) * time.Millisecond)
		defer end.Stop()
		tick := time.NewTicker(time.Duration(in.EveryMs) * time.Millisecond)
		defer tick.Stop()
		for n := 1; ; n++ {
			select {
			case <-end.C:
				return fxText("done"), nil, nil
			case <-tick.C:
				if tok != nil {
					req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(n), Message: fmt.Sprintf("step %d", n)})
				}
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		}
	})
}

// fixtureTools is the number of tools of the fixture server.
const fixtureTools = 22

// fixture is a stdio fixture's configuration plus the files it reports
// through.
type fixture struct {
	cfg       ServerConfig
	spawnLog  string
	cancelLog string
	pidFile   string
	blockLog  string
	dir       string
}

// newFixture configures the stdio fixture of the given kind.
func newFixture(t testing.TB, name, kind string) *fixture {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f := &fixture{
		dir:       dir,
		spawnLog:  filepath.Join(dir, "spawns"),
		cancelLog: filepath.Join(dir, "cancelled"),
		pidFile:   filepath.Join(dir, "pid"),
		blockLog:  filepath.Join(dir, "blocked"),
	}
	f.cfg = ServerConfig{
		Name:    name,
		Command: exe,
		Env: map[string]string{
			envFixture:   kind,
			envSpawnLog:  f.spawnLog,
			envCancelLog: f.cancelLog,
			envPidFile:   f.pidFile,
			envBlockLog:  f.blockLog,
			// A race-enabled binary sleeps 1 s at exit by default.
			"GORACE": "atexit_sleep_ms=0",
		},
	}
	return f
}

// spawns counts the processes the fixture started.
func (f *fixture) spawns() int {
	data, _ := os.ReadFile(f.spawnLog)
	return strings.Count(string(data), "\n")
}

// blocked counts the calls of the block tool the fixture has started.
func (f *fixture) blocked() int {
	data, _ := os.ReadFile(f.blockLog)
	return strings.Count(string(data), "\n")
}

// httpFixture is the fixture server over streamable HTTP and legacy SSE,
// plus an endpoint that answers 401.
type httpFixture struct {
	streamable *httptest.Server
	sse        *httptest.Server
	denied     *httptest.Server

	mu      sync.Mutex
	headers []http.Header // request headers seen by the streamable endpoint
}

func newHTTPFixture(t testing.TB) *httpFixture {
	srv := newFixtureServer(false)
	hf := &httpFixture{}
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hf.streamable = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hf.mu.Lock()
		hf.headers = append(hf.headers, r.Header.Clone())
		hf.mu.Unlock()
		streamable.ServeHTTP(w, r)
	}))
	hf.sse = httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	hf.denied = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="test"`)
		http.Error(w, "no entry", http.StatusUnauthorized)
	}))
	t.Cleanup(func() {
		hf.streamable.CloseClientConnections()
		hf.sse.CloseClientConnections()
		hf.streamable.Close()
		hf.sse.Close()
		hf.denied.Close()
	})
	return hf
}

func (hf *httpFixture) sawHeader(name, value string) bool {
	hf.mu.Lock()
	defer hf.mu.Unlock()
	for _, h := range hf.headers {
		if h.Get(name) == value {
			return true
		}
	}
	return false
}
