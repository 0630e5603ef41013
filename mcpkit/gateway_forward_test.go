package mcpkit

// What a gateway forwards besides answers: an upstream's log messages,
// progress, sampling and elicitation requests and closed streams back to
// the session whose call caused them, logging/setLevel, subscriptions and
// completions on to the upstream, resources/updated back to subscribers.
// Every test runs real servers: the forwarding fixture below over
// streamable HTTP on 127.0.0.1 or as a stdio child process, a gateway
// over streamable HTTP on 127.0.0.1, and go-sdk clients.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// forwardState is what the forwarding fixture was asked, as its "state"
// tool reports it.
type forwardState struct {
	Levels       []string `json:"levels"`       // logging/setLevel, in order
	Subscribed   []string `json:"subscribed"`   // resources/subscribe, in order
	Unsubscribed []string `json:"unsubscribed"` // resources/unsubscribe, in order
}

// newForwardServer is an MCP server that talks back in the course of its
// calls, records what it is asked, and completes arguments for real.
func newForwardServer() *mcp.Server {
	var (
		mu    sync.Mutex
		state forwardState
	)
	record := func(list *[]string, v string) {
		mu.Lock()
		*list = append(*list, v)
		mu.Unlock()
	}
	var srv *mcp.Server
	srv = mcp.NewServer(&mcp.Implementation{Name: "forward", Version: "1.0.0"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}},
		SubscribeHandler: func(_ context.Context, req *mcp.SubscribeRequest) error {
			record(&state.Subscribed, req.Params.URI)
			return nil
		},
		UnsubscribeHandler: func(_ context.Context, req *mcp.UnsubscribeRequest) error {
			record(&state.Unsubscribed, req.Params.URI)
			return nil
		},
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			ref, arg := req.Params.Ref, req.Params.Argument
			var pool []string
			switch {
			case ref.Type == "ref/prompt" && ref.Name == "greet" && arg.Name == "name":
				pool = []string{"alice", "albert", "bob"}
				if c := req.Params.Context; c != nil && c.Arguments["formal"] == "yes" {
					pool = []string{"Alice Smith", "Albert Jones"}
				}
			case ref.Type == "ref/resource" && ref.URI == "mem://items/{id}" && arg.Name == "id":
				pool = []string{"item-1", "item-2", "other"}
			default:
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("no completions for %s %s%s", ref.Type, ref.Name, ref.URI)}
			}
			values := []string{}
			for _, v := range pool {
				if strings.HasPrefix(strings.ToLower(v), strings.ToLower(arg.Value)) {
					values = append(values, v)
				}
			}
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
		},
	})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "logging/setLevel" {
				record(&state.Levels, string(req.GetParams().(*mcp.SetLoggingLevelParams).Level))
			}
			return next(ctx, method, req)
		}
	})

	type textIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "logs"}, func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
		for _, l := range []mcp.LoggingLevel{"debug", "info", "warning", "error"} {
			req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: l, Logger: "forward", Data: fmt.Sprintf("%s %s", in.Text, l)})
		}
		return fxText("logged"), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "log_later"}, func(_ context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
		go func() {
			time.Sleep(100 * time.Millisecond) // after the answer is on the wire (the go-sdk tells a handler nothing of it): a message outside the call
			req.Session.Log(context.Background(), &mcp.LoggingMessageParams{Level: "error", Logger: "forward", Data: in.Text})
		}()
		return fxText("later"), nil, nil
	})
	// Progress right up to the answer: nothing between the last
	// notification and the result.
	mcp.AddTool(srv, &mcp.Tool{Name: "progress"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		tok := req.Params.GetProgressToken()
		if tok == nil {
			return fxText("no token"), nil, nil
		}
		for i := 1; i <= 5; i++ {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 5, Message: fmt.Sprintf("step %d", i)})
		}
		return fxText("token %v", tok), nil, nil
	})
	// Sampling and elicitation as input requests, which the go-sdk sends
	// as requests to the client in the course of the call before
	// 2026-07-28, and answers with an incomplete result (the client
	// retries with the answers) on 2026-07-28.
	type sampleIn struct {
		Prompt  string `json:"prompt"`
		DelayMs int    `json:"delayMs,omitempty"`
	}
	srv.AddTool(&mcp.Tool{Name: "sample", InputSchema: objectSchema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in sampleIn
		json.Unmarshal(req.Params.Arguments, &in)
		switch r := req.Params.InputResponses["s"].(type) {
		case *mcp.CreateMessageWithToolsResult:
			return fxText("model said: %s", r.Content[0].(*mcp.TextContent).Text), nil
		case *mcp.CreateMessageResult:
			return fxText("model said: %s", r.Content.(*mcp.TextContent).Text), nil
		case nil:
		default:
			return nil, fmt.Errorf("sampling answered with %T", r)
		}
		time.Sleep(time.Duration(in.DelayMs) * time.Millisecond) // so that calls overlap
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"s": &mcp.CreateMessageParams{
			Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Prompt}}},
			MaxTokens: 50,
		}}}, nil
	})
	elicit := func(name string, schema map[string]any) {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: objectSchema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if r, ok := req.Params.InputResponses["e"].(*mcp.ElicitResult); ok {
				return fxText("%s %v", r.Action, r.Content["name"]), nil
			}
			var in textIn
			json.Unmarshal(req.Params.Arguments, &in)
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"e": &mcp.ElicitParams{Message: in.Text, RequestedSchema: schema}}}, nil
		})
	}
	elicit("elicit", map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}})
	// A SEP-1330 titled multi-select, which the go-sdk's own form check
	// refuses: a hook that passes requests on gets it as it is.
	elicit("elicit_titled", map[string]any{"type": "object", "properties": map[string]any{
		"name": map[string]any{"type": "string"},
		"colors": map[string]any{"type": "array", "minItems": 1, "items": map[string]any{"type": "string", "anyOf": []any{
			map[string]any{"const": "r", "title": "Red"}, map[string]any{"const": "g", "title": "Green"},
		}}},
	}})
	type uriIn struct {
		URI string `json:"uri"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "touch"}, func(ctx context.Context, _ *mcp.CallToolRequest, in uriIn) (*mcp.CallToolResult, any, error) {
		return fxText("touched"), nil, srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: in.URI})
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "close_stream"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		if req.Extra == nil || req.Extra.CloseSSEStream == nil {
			return fxText("no stream"), nil, nil
		}
		req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 5 * time.Millisecond})
		time.Sleep(150 * time.Millisecond) // real time for the clients to see the stream close and resume it; no hook tells the fixture they did
		return fxText("answered after the stream closed"), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "caps"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		caps := req.ClientCapabilities()
		return fxText("sampling=%t elicitation=%t", caps.Sampling != nil, caps.Elicitation != nil), nil, nil
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
	mcp.AddTool(srv, &mcp.Tool{Name: "state"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		mu.Lock()
		defer mu.Unlock()
		b, _ := json.Marshal(state)
		return fxText("%s", b), nil, nil
	})

	srv.AddResource(&mcp.Resource{URI: "mem://doc", Name: "doc", MIMEType: "text/plain"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "the doc"}}}, nil
	})
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "mem://items/{id}", Name: "item", Title: "An item", MIMEType: "application/json"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := strings.TrimPrefix(req.Params.URI, "mem://items/")
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: fmt.Sprintf(`{"id":%q}`, id)}}}, nil
		})
	srv.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Hello, " + req.Params.Arguments["name"]}}}}, nil
	})
	return srv
}

// forwardHTTP serves the forwarding fixture over streamable HTTP, with an
// event store (its streams can be closed and resumed).
func forwardHTTP(t *testing.T) string {
	srv := newForwardServer()
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)}))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL
}

// wireLog records the HTTP exchanges of a gateway: each request body and
// the response body as it was written (SSE included), and how many
// streams clients resumed with Last-Event-ID.
type wireLog struct {
	mu        sync.Mutex
	exchanges []wireExchange
	resumes   int
}

type wireExchange struct{ req, resp string }

type recordingWriter struct {
	http.ResponseWriter
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *recordingWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	w.buf.Write(b)
	w.mu.Unlock()
	return w.ResponseWriter.Write(b)
}

func (w *recordingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *recordingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (l *wireLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
			l.mu.Lock()
			l.resumes++
			l.mu.Unlock()
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &recordingWriter{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		rec.mu.Lock()
		resp := rec.buf.String()
		rec.mu.Unlock()
		l.mu.Lock()
		l.exchanges = append(l.exchanges, wireExchange{req: string(body), resp: resp})
		l.mu.Unlock()
	})
}

// streamOf returns, for the first POST whose body contains marker, the
// methods of the messages on its response stream in order ("<answer>"
// for the response). It waits for the exchange to end.
func (l *wireLog) streamOf(t *testing.T, marker string) []string {
	t.Helper()
	var resp string
	waitUntil(t, "an exchange with "+marker, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, ex := range l.exchanges {
			if strings.Contains(ex.req, marker) {
				resp = ex.resp
				return true
			}
		}
		return false
	})
	var out []string
	sc := bufio.NewScanner(strings.NewReader(resp))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var m struct {
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal([]byte(data), &m) != nil {
			continue
		}
		switch {
		case m.Method != "":
			out = append(out, m.Method)
		case m.Result != nil || m.Error != nil:
			out = append(out, "<answer>")
		}
	}
	return out
}

// startGateway mounts the given upstream configurations and serves a
// gateway over streamable HTTP on 127.0.0.1. The fleet refreshes the
// bridge on list changes, as `worldforge mcp gateway` does.
func startGateway(t *testing.T, ctx context.Context, noPrefix bool, protocol string, cfgs ...ServerConfig) (url string, wire *wireLog, fleet *Fleet) {
	t.Helper()
	var bridge *Bridge
	var bmu sync.Mutex
	refresh := func() {
		bmu.Lock()
		b := bridge
		bmu.Unlock()
		if b != nil {
			b.Refresh(context.Background())
		}
	}
	fleet = NewFleet(cfgs, &FleetOptions{Client: GatewayClientOptions(&ClientOptions{
		ProtocolVersion:       protocol,
		OnToolsChanged:        func(string, []*mcp.Tool) { go refresh() },
		OnResourceListChanged: func(string) { go refresh() },
		OnPromptListChanged:   func(string) { go refresh() },
	})})
	t.Cleanup(func() { fleet.Close() })
	if err := fleet.Start(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := Mount(ctx, fleet, &BridgeOptions{NoPrefix: noPrefix})
	if err != nil {
		t.Fatal(err)
	}
	bmu.Lock()
	bridge = b
	bmu.Unlock()
	gw, err := NewGateway(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	wire = &wireLog{}
	ts := httptest.NewServer(wire.wrap(gw.Handler()))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL, wire, fleet
}

// downstream is a go-sdk client of the gateway that records what reaches
// it and answers sampling and elicitation with its name.
type downstream struct {
	name string
	cs   *mcp.ClientSession

	mu          sync.Mutex
	logs        []string  // "level data"
	progress    []float64 // in arrival order
	tokens      []any
	updated     []string
	toolsChange int
	samples     []string // the prompts it was asked to sample
}

func connectDownstream(t *testing.T, ctx context.Context, url, name string, sampling bool) *downstream {
	t.Helper()
	d := &downstream{name: name}
	opts := &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			d.mu.Lock()
			d.logs = append(d.logs, fmt.Sprintf("%s %v", req.Params.Level, req.Params.Data))
			d.mu.Unlock()
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			d.mu.Lock()
			d.progress = append(d.progress, req.Params.Progress)
			d.tokens = append(d.tokens, req.Params.ProgressToken)
			d.mu.Unlock()
		},
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			d.mu.Lock()
			d.updated = append(d.updated, req.Params.URI)
			d.mu.Unlock()
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			d.mu.Lock()
			d.toolsChange++
			d.mu.Unlock()
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": d.name + " answering " + req.Params.Message}}, nil
		},
	}
	if sampling {
		opts.CreateMessageHandler = func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			prompt := req.Params.Messages[0].Content.(*mcp.TextContent).Text
			d.mu.Lock()
			d.samples = append(d.samples, prompt)
			d.mu.Unlock()
			return &mcp.CreateMessageResult{Role: "assistant", Model: d.name, Content: &mcp.TextContent{Text: d.name + " on " + prompt}}, nil
		}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, opts).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("%s: connect to the gateway: %v", name, err)
	}
	t.Cleanup(func() { cs.Close() })
	d.cs = cs
	return d
}

func (d *downstream) snapshot() (logs []string, progress []float64, updated []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.logs), slices.Clone(d.progress), slices.Clone(d.updated)
}

// call calls a tool through the gateway and returns its text.
func (d *downstream) call(t *testing.T, ctx context.Context, p *mcp.CallToolParams) string {
	t.Helper()
	res, err := d.cs.CallTool(ctx, p)
	if err != nil {
		t.Fatalf("%s: %s: %v", d.name, p.Name, err)
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	text := strings.Join(parts, "\n")
	if res.IsError {
		t.Fatalf("%s: %s: tool error: %s", d.name, p.Name, text)
	}
	return text
}

func (d *downstream) upstreamState(t *testing.T, ctx context.Context, tool string) forwardState {
	t.Helper()
	var st forwardState
	if err := json.Unmarshal([]byte(d.call(t, ctx, &mcp.CallToolParams{Name: tool})), &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// waitUntil polls cond for up to 5 s, failing the test with what: the
// conditions are on notifications the sessions record and on the
// upstream's state, asked for by a call, which signal nothing.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// upstreamCase is an upstream server and the protocol version the
// gateway's client asks it for ("" for the latest).
type upstreamCase struct {
	name     string
	cfg      ServerConfig
	protocol string
}

// perRequestLogging reports whether the upstream session has no log
// level of its own (2026-07-28: the level comes with each request).
func (u upstreamCase) perRequestLogging() bool { return u.name == "stdio-2026-07-28" }

// upstreams are the forwarding fixture over streamable HTTP (stateful:
// it negotiates 2025-11-25) and as a stdio child process at 2025-11-25
// and at 2026-07-28, where the go-sdk answers sampling and elicitation
// with incomplete results instead of requests to the client.
func upstreams(t *testing.T) []upstreamCase {
	f := newFixture(t, "up", fxForward)
	return []upstreamCase{
		{"http", ServerConfig{Name: "up", URL: forwardHTTP(t)}, ""},
		{"stdio-2025-11-25", f.cfg, "2025-11-25"},
		{"stdio-2026-07-28", f.cfg, ""},
	}
}

// TestGatewayForwardsProgressAndLogs: a call's progress reaches its
// caller under the caller's own token, in order and ahead of the answer on
// the wire; log messages reach the calling session filtered by its own
// level, while the upstream is set to the most verbose level any session
// asked for; a message sent outside any call reaches every session that
// wants it.
func TestGatewayForwardsProgressAndLogs(t *testing.T) {
	for _, up := range upstreams(t) {
		t.Run(up.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			url, wire, _ := startGateway(t, ctx, true, up.protocol, up.cfg)
			quiet := connectDownstream(t, ctx, url, "quiet", false)
			chatty := connectDownstream(t, ctx, url, "chatty", false)

			// Progress, under the caller's token, all of it ahead of
			// the answer.
			p := &mcp.CallToolParams{Name: "progress"}
			p.SetProgressToken("caller-token-7")
			if got := quiet.call(t, ctx, p); strings.Contains(got, "caller-token-7") || !strings.HasPrefix(got, "token ") {
				t.Errorf("the upstream saw the caller's token, or none: %q", got)
			}
			stream := wire.streamOf(t, `"caller-token-7"`)
			want := []string{"notifications/progress", "notifications/progress", "notifications/progress", "notifications/progress", "notifications/progress", "<answer>"}
			if !slices.Equal(stream, want) {
				t.Errorf("the call's stream carried %v, want %v", stream, want)
			}
			waitUntil(t, "5 progress notifications", func() bool { _, pr, _ := quiet.snapshot(); return len(pr) == 5 })
			if _, pr, _ := quiet.snapshot(); !slices.Equal(pr, []float64{1, 2, 3, 4, 5}) {
				t.Errorf("progress %v", pr)
			}
			quiet.mu.Lock()
			for _, tok := range quiet.tokens {
				if tok != "caller-token-7" {
					t.Errorf("progress under token %v", tok)
				}
			}
			quiet.mu.Unlock()
			if _, pr, _ := chatty.snapshot(); len(pr) != 0 {
				t.Errorf("another session got the progress: %v", pr)
			}

			// logging/setLevel reaches the upstream: the most verbose
			// level asked for.
			if err := quiet.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
				t.Fatal(err)
			}
			wantLevels := func(levels ...string) {
				t.Helper()
				if up.perRequestLogging() {
					levels = nil // the level goes with each request instead
				}
				if st := quiet.upstreamState(t, ctx, "state"); !slices.Equal(st.Levels, levels) {
					t.Errorf("upstream levels %v, want %v", st.Levels, levels)
				}
			}
			wantLevels("warning")
			if err := chatty.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
				t.Fatal(err)
			}
			wantLevels("warning", "debug")

			// Each session gets its own call's messages, at its level,
			// ahead of the answer on the wire.
			quiet.call(t, ctx, &mcp.CallToolParams{Name: "logs", Arguments: map[string]any{"text": "q"}})
			chatty.call(t, ctx, &mcp.CallToolParams{Name: "logs", Arguments: map[string]any{"text": "c"}})
			if stream := wire.streamOf(t, `"text":"q"`); !slices.Equal(stream, []string{"notifications/message", "notifications/message", "<answer>"}) {
				t.Errorf("the warning-level call's stream carried %v", stream)
			}
			if stream := wire.streamOf(t, `"text":"c"`); len(stream) != 5 || stream[4] != "<answer>" {
				t.Errorf("the debug-level call's stream carried %v", stream)
			}
			waitUntil(t, "the log messages", func() bool {
				lq, _, _ := quiet.snapshot()
				lc, _, _ := chatty.snapshot()
				return len(lq) >= 2 && len(lc) >= 4
			})
			time.Sleep(50 * time.Millisecond) // for any that should not come: an absence has no event to wait for
			if logs, _, _ := quiet.snapshot(); !slices.Equal(logs, []string{"warning q warning", "error q error"}) {
				t.Errorf("the warning-level session got %q", logs)
			}
			if logs, _, _ := chatty.snapshot(); !slices.Equal(logs, []string{"debug c debug", "info c info", "warning c warning", "error c error"}) {
				t.Errorf("the debug-level session got %q", logs)
			}
			if up.perRequestLogging() {
				// A session has no level outside requests: no message
				// is sent outside a call.
				return
			}

			// A message sent after the call, outside it: every session
			// whose level admits it.
			chatty.call(t, ctx, &mcp.CallToolParams{Name: "log_later", Arguments: map[string]any{"text": "afterwards"}})
			for _, d := range []*downstream{quiet, chatty} {
				waitUntil(t, d.name+" getting the late message", func() bool {
					logs, _, _ := d.snapshot()
					return slices.Contains(logs, "error afterwards")
				})
			}

			// When the debug session leaves, the upstream goes back to
			// the level of those that remain.
			chatty.cs.Close()
			waitUntil(t, "the upstream back at warning", func() bool {
				st := quiet.upstreamState(t, ctx, "state")
				return slices.Equal(st.Levels, []string{"warning", "debug", "warning"})
			})
		})
	}
}

// TestGatewayForwardsSamplingAndElicitation: the upstream's sampling and
// elicitation requests reach the session whose call made them — also
// with calls of several sessions in flight at once on an HTTP upstream —
// and a session that does not offer sampling gets none.
func TestGatewayForwardsSamplingAndElicitation(t *testing.T) {
	for _, up := range upstreams(t) {
		t.Run(up.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			url, _, _ := startGateway(t, ctx, true, up.protocol, up.cfg)
			ann := connectDownstream(t, ctx, url, "ann", true)
			bob := connectDownstream(t, ctx, url, "bob", true)
			plain := connectDownstream(t, ctx, url, "plain", false)

			if got := ann.call(t, ctx, &mcp.CallToolParams{Name: "sample", Arguments: map[string]any{"prompt": "hello"}}); got != "model said: ann on hello" {
				t.Errorf("sampling: %q", got)
			}
			if got := bob.call(t, ctx, &mcp.CallToolParams{Name: "elicit", Arguments: map[string]any{"text": "who?"}}); got != "accept bob answering who?" {
				t.Errorf("elicitation: %q", got)
			}
			res, err := plain.cs.CallTool(ctx, &mcp.CallToolParams{Name: "sample", Arguments: map[string]any{"prompt": "x"}})
			if err != nil || !res.IsError {
				t.Errorf("a session without sampling was sampled: %v %+v", err, res)
			}
			if got := ann.call(t, ctx, &mcp.CallToolParams{Name: "caps"}); got != "sampling=true elicitation=true" {
				t.Errorf("the gateway's client declares %q", got)
			}

			if up.name == "stdio-2025-11-25" {
				// Nothing tells concurrent calls apart over stdio before
				// 2026-07-28 (see the package documentation).
				return
			}
			var wg sync.WaitGroup
			for i := range 4 {
				for _, d := range []*downstream{ann, bob} {
					wg.Go(func() {
						prompt := fmt.Sprintf("%s-%d", d.name, i)
						res, err := d.cs.CallTool(ctx, &mcp.CallToolParams{Name: "sample", Arguments: map[string]any{"prompt": prompt, "delayMs": 100}})
						if err != nil || res.IsError {
							t.Errorf("%s: %v %+v", prompt, err, res)
							return
						}
						if got := res.Content[0].(*mcp.TextContent).Text; got != "model said: "+d.name+" on "+prompt {
							t.Errorf("%s was answered %q", prompt, got)
						}
					})
				}
			}
			wg.Wait()
			for _, d := range []*downstream{ann, bob} {
				d.mu.Lock()
				for _, s := range d.samples {
					if !strings.HasPrefix(s, d.name) && s != "hello" {
						t.Errorf("%s was asked to sample %q", d.name, s)
					}
				}
				d.mu.Unlock()
			}
		})
	}
}

// TestGatewayForwardsSubscriptions: resources/subscribe and unsubscribe
// reach the upstream once however many sessions subscribe (to listed and
// templated URIs), the upstream's updates reach exactly the subscribed
// sessions, and a session that goes away is unsubscribed for.
func TestGatewayForwardsSubscriptions(t *testing.T) {
	for _, up := range upstreams(t) {
		t.Run(up.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			url, _, _ := startGateway(t, ctx, true, up.protocol, up.cfg)
			a := connectDownstream(t, ctx, url, "a", false)
			b := connectDownstream(t, ctx, url, "b", false)
			c := connectDownstream(t, ctx, url, "c", false)

			for _, d := range []*downstream{a, b} {
				if err := d.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "mem://doc"}); err != nil {
					t.Fatal(err)
				}
			}
			if err := a.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "mem://items/7"}); err != nil {
				t.Fatal(err)
			}
			if err := a.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "mem://nowhere"}); err == nil {
				t.Error("subscribed to a URI no upstream has")
			}
			if st := c.upstreamState(t, ctx, "state"); !slices.Equal(st.Subscribed, []string{"mem://doc", "mem://items/7"}) {
				t.Errorf("upstream subscriptions %v", st.Subscribed)
			}

			c.call(t, ctx, &mcp.CallToolParams{Name: "touch", Arguments: map[string]any{"uri": "mem://doc"}})
			c.call(t, ctx, &mcp.CallToolParams{Name: "touch", Arguments: map[string]any{"uri": "mem://items/7"}})
			waitUntil(t, "updates", func() bool {
				_, _, ua := a.snapshot()
				_, _, ub := b.snapshot()
				return len(ua) == 2 && len(ub) == 1
			})
			if _, _, ua := a.snapshot(); !slices.Equal(ua, []string{"mem://doc", "mem://items/7"}) {
				t.Errorf("a got updates %v", ua)
			}

			// b's unsubscribe leaves a's subscription in place upstream.
			if err := b.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "mem://doc"}); err != nil {
				t.Fatal(err)
			}
			if st := c.upstreamState(t, ctx, "state"); len(st.Unsubscribed) != 0 {
				t.Errorf("upstream unsubscribed %v while a session still wants it", st.Unsubscribed)
			}
			c.call(t, ctx, &mcp.CallToolParams{Name: "touch", Arguments: map[string]any{"uri": "mem://doc"}})
			waitUntil(t, "a's third update", func() bool { _, _, ua := a.snapshot(); return len(ua) == 3 })
			time.Sleep(100 * time.Millisecond) // for an update to b or c that should not come: an absence has no event to wait for
			if _, _, ub := b.snapshot(); len(ub) != 1 {
				t.Errorf("b got updates after unsubscribing: %v", ub)
			}
			if _, _, uc := c.snapshot(); len(uc) != 0 {
				t.Errorf("c, never subscribed, got updates: %v", uc)
			}

			// a goes away: the gateway unsubscribes upstream.
			a.cs.Close()
			waitUntil(t, "upstream unsubscribed", func() bool {
				st := c.upstreamState(t, ctx, "state")
				return slices.Equal(sorted(st.Unsubscribed), []string{"mem://doc", "mem://items/7"})
			})
		})
	}
}

// TestGatewayForwardsTemplatesAndCompletions: resource templates are
// listed and their URIs read through the gateway, and completion/complete
// of a prompt (under its served name) or a template reaches the upstream
// and brings its values back.
func TestGatewayForwardsTemplatesAndCompletions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	url, _, _ := startGateway(t, ctx, false, "", ServerConfig{Name: "up", URL: forwardHTTP(t)})
	d := connectDownstream(t, ctx, url, "d", false)

	if caps := d.cs.InitializeResult().Capabilities; caps.Completions == nil || caps.Logging == nil || caps.Resources == nil || !caps.Resources.Subscribe {
		t.Errorf("gateway capabilities %+v", caps)
	}
	tl, err := d.cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.ResourceTemplates) != 1 || tl.ResourceTemplates[0].URITemplate != "mem://items/{id}" || tl.ResourceTemplates[0].Title != "An item" || tl.ResourceTemplates[0].MIMEType != "application/json" {
		t.Fatalf("templates %+v", tl.ResourceTemplates)
	}
	rr, err := d.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mem://items/42"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].Text != `{"id":"42"}` || rr.Contents[0].URI != "mem://items/42" {
		t.Errorf("templated read %+v", rr.Contents)
	}

	complete := func(ref *mcp.CompleteReference, arg, value string, context map[string]string) (*mcp.CompleteResult, error) {
		p := &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}}
		if context != nil {
			p.Context = &mcp.CompleteContext{Arguments: context}
		}
		return d.cs.Complete(ctx, p)
	}
	res, err := complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "up_greet"}, "name", "al", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Completion.Values, []string{"alice", "albert"}) || res.Completion.Total != 2 {
		t.Errorf("prompt completion %+v", res.Completion)
	}
	res, err = complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "up_greet"}, "name", "al", map[string]string{"formal": "yes"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Completion.Values, []string{"Alice Smith", "Albert Jones"}) {
		t.Errorf("completion with context %+v", res.Completion)
	}
	res, err = complete(&mcp.CompleteReference{Type: "ref/resource", URI: "mem://items/{id}"}, "id", "item", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Completion.Values, []string{"item-1", "item-2"}) {
		t.Errorf("template completion %+v", res.Completion)
	}
	if _, err := complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "greet"}, "name", "a", nil); err == nil {
		t.Error("completed a prompt under the upstream's name, which the gateway does not serve")
	}
	// The upstream's own error comes back as it is.
	_, err = complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "up_greet"}, "other", "a", nil)
	if we := wireError(err); we == nil || we.Code != jsonrpc.CodeInvalidParams || !strings.Contains(we.Message, "no completions") {
		t.Errorf("upstream completion error: %v", err)
	}
}

// TestGatewayResumesClosedStream: an upstream that closes a call's event
// stream (SEP-1699) makes the gateway close its client's stream alike;
// the client resumes it with Last-Event-ID and gets the answer.
func TestGatewayResumesClosedStream(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	url, wire, _ := startGateway(t, ctx, true, "", ServerConfig{Name: "up", URL: forwardHTTP(t)})
	d := connectDownstream(t, ctx, url, "d", false)
	if got := d.call(t, ctx, &mcp.CallToolParams{Name: "close_stream"}); got != "answered after the stream closed" {
		t.Errorf("got %q", got)
	}
	wire.mu.Lock()
	resumes := wire.resumes
	wire.mu.Unlock()
	if resumes == 0 {
		t.Error("the client never resumed a stream: the gateway kept its stream open")
	}
	if stream := wire.streamOf(t, `"close_stream"`); slices.Contains(stream, "<answer>") {
		t.Errorf("the answer came on the stream the upstream had closed: %v", stream)
	}
}

// TestGatewayFollowsListChanges: a tool the upstream adds reaches the
// gateway's clients with notifications/tools/list_changed.
func TestGatewayFollowsListChanges(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	url, _, _ := startGateway(t, ctx, true, "", ServerConfig{Name: "up", URL: forwardHTTP(t)})
	d := connectDownstream(t, ctx, url, "d", false)
	d.call(t, ctx, &mcp.CallToolParams{Name: "add_tool", Arguments: map[string]any{"name": "fresh"}})
	waitUntil(t, "tools/list_changed", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.toolsChange > 0
	})
	if got := d.call(t, ctx, &mcp.CallToolParams{Name: "fresh"}); got != "I am fresh" {
		t.Errorf("fresh: %q", got)
	}
}

// TestClientSamplingAndRequestHooks: the client declares sampling only
// with OnSample; a request's hooks take its progress, log messages,
// sampling and elicitation in place of the client-wide handlers; and
// SetLogLevel reaches the server and outlives a reconnect.
func TestClientSamplingAndRequestHooks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	url := forwardHTTP(t)

	bare := NewClient(ServerConfig{Name: "bare", URL: url}, nil)
	defer bare.Close()
	if err := bare.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	if res, err := bare.CallTool(ctx, "caps", nil); err != nil || res.Content[0].(*mcp.TextContent).Text != "sampling=false elicitation=true" {
		t.Errorf("without OnSample: %v %+v", err, res)
	}

	var mu sync.Mutex
	var wide []string
	note := func(s string) {
		mu.Lock()
		wide = append(wide, s)
		mu.Unlock()
	}
	c := NewClient(ServerConfig{Name: "c", URL: url}, &ClientOptions{
		LogLevel: "info",
		OnSample: func(_ context.Context, _ string, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			note("sample")
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "client-wide"}}, nil
		},
		OnLog:      func(_ string, p *mcp.LoggingMessageParams) { note(fmt.Sprint("log ", p.Data)) },
		OnProgress: func(string, *mcp.ProgressNotificationParams) { note("progress") },
	})
	defer c.Close()
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	text := func(res *mcp.CallToolResult, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	if got := text(c.CallTool(ctx, "caps", nil)); got != "sampling=true elicitation=true" {
		t.Errorf("with OnSample: %q", got)
	}
	if got := text(c.CallTool(ctx, "sample", map[string]any{"prompt": "p"})); got != "model said: client-wide" {
		t.Errorf("client-wide sampling: %q", got)
	}

	var hooked []string
	hooks := &RequestHooks{
		OnProgress: func(p *mcp.ProgressNotificationParams) { hooked = append(hooked, fmt.Sprint("progress ", p.Progress)) },
		OnLog:      func(p *mcp.LoggingMessageParams) { hooked = append(hooked, fmt.Sprint("log ", p.Data)) },
		OnSample: func(_ context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "hooked"}}, nil
		},
		OnElicit: func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			if b, _ := json.Marshal(p.RequestedSchema); strings.Contains(string(b), `"anyOf"`) {
				// The titled form reached the hook as it was sent. (The
				// upstream's go-sdk would check an accepted answer
				// against it, and refuse it.)
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "hook"}}, nil
		},
	}
	hctx := WithRequestHooks(ctx, hooks)
	if got := text(c.CallTool(hctx, "sample", map[string]any{"prompt": "p"})); got != "model said: hooked" {
		t.Errorf("hooked sampling: %q", got)
	}
	if got := text(c.CallTool(hctx, "elicit", map[string]any{"text": "t"})); got != "accept hook" {
		t.Errorf("hooked elicit: %q", got)
	}
	if got := text(c.CallTool(hctx, "elicit_titled", map[string]any{"text": "t"})); got != "decline <nil>" {
		t.Errorf("hooked elicit_titled: %q", got)
	}
	// Without the hook the go-sdk checks the form, and refuses the newer one.
	if res, err := c.CallTool(ctx, "elicit_titled", map[string]any{"text": "t"}); err == nil && !res.IsError {
		t.Errorf("client-wide elicit_titled: %+v", res)
	}
	text(c.CallTool(hctx, "progress", nil))
	text(c.CallTool(hctx, "logs", map[string]any{"text": "h"}))
	// Everything came before the calls returned, in order, and nothing
	// went to the client-wide handlers.
	want := []string{"progress 1", "progress 2", "progress 3", "progress 4", "progress 5", "log h info", "log h warning", "log h error"}
	if !slices.Equal(hooked, want) {
		t.Errorf("hooks got %q, want %q", hooked, want)
	}
	mu.Lock()
	if !slices.Equal(wide, []string{"sample"}) {
		t.Errorf("client-wide handlers got %q", wide)
	}
	mu.Unlock()

	if err := c.SetLogLevel(ctx, "error"); err != nil {
		t.Fatal(err)
	}
	var st forwardState
	json.Unmarshal([]byte(text(c.CallTool(ctx, "state", nil))), &st)
	if !slices.Equal(st.Levels[len(st.Levels)-2:], []string{"info", "error"}) || c.LogLevel() != "error" {
		t.Errorf("levels asked of the server: %v (client: %s)", st.Levels, c.LogLevel())
	}
}
