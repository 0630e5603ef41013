package mcpkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// goSDKChecked is the go-sdk version errmap.go was checked against: the
// texts of protocolMessages and paramsEncodingMessage, the jsonrpc2 codes
// codeClientClosing, codeServerClosing and codeRejected, and the messages
// saysNotFound reads in -32602 answers.
const goSDKChecked = "v1.8.0"

// TestErrmapGoSDKVersion fails when go.mod names another go-sdk than the
// one errmap.go was checked against, listing what to check again.
func TestErrmapGoSDKVersion(t *testing.T) {
	const path = "github.com/modelcontextprotocol/go-sdk"
	data, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	var have string
	for line := range strings.Lines(string(data)) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == path {
			have = f[1]
		} else if len(f) >= 3 && f[0] == "require" && f[1] == path {
			have = f[2]
		}
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == path {
				if m.Replace != nil {
					m = m.Replace
				}
				if have == "" || m.Version != have {
					have = m.Version + " (build info)"
				}
			}
		}
	}
	if have == goSDKChecked {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "go.mod requires %s %s, but errmap.go was checked against %s. In the new go-sdk's source, check again:\n", path, have, goSDKChecked)
	for _, m := range protocolMessages {
		fmt.Fprintf(&b, "  - the text %q (%s) still names that error, and it still has no type;\n", m.text, m.source)
	}
	fmt.Fprintf(&b, "  - the text %q (internal/jsonrpc2/conn.go) still prefixes arguments that cannot be encoded;\n", paramsEncodingMessage)
	fmt.Fprintf(&b, "  - internal/jsonrpc2/wire.go still has ErrClientClosing %d, ErrServerClosing %d and ErrRejected %d, and whether package jsonrpc now exports them;\n",
		codeClientClosing, codeServerClosing, codeRejected)
	b.WriteString("  - go-sdk servers still answer an unknown tool or prompt and a missing resource with -32602 and a message saysNotFound accepts;\n")
	b.WriteString("  - whether the go-sdk now exports an error or type for any of these (then match it with errors.Is/As instead);\n")
	b.WriteString("then run TestErrmapGoSDKErrors and set goSDKChecked.")
	t.Fatal(b.String())
}

// TestErrmapGoSDKErrors makes the go-sdk produce the errors that errmap.go
// matches by text or by an unexported code, and checks their
// classification and that the text or code matched is the one expected.
func TestErrmapGoSDKErrors(t *testing.T) {
	type probe struct {
		name   string
		err    func(t *testing.T) error
		method string
		code   Code
		kind   FaultKind
		text   string // the text (of protocolMessages or paramsEncodingMessage) the error must carry
		wire   int64  // the JSON-RPC code the error must carry
	}
	protocol := func(name, text string, err func(t *testing.T) error) probe {
		return probe{name: name, err: err, method: "tools/list", code: CodeProtocolError, kind: FaultProtocol, text: text}
	}
	sse := func(body string) func(t *testing.T) error {
		return func(t *testing.T) error {
			return connectHTTP(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, body)
			}, 1024)
		}
	}
	probes := []probe{
		protocol("stdio frame too large", "exceeded the configured maximum line length", func(t *testing.T) error {
			return readIOConn(t, 64, `{"jsonrpc":"2.0","method":"x","params":{"a":"`+strings.Repeat("a", 200)+`"}}`+"\n")
		}),
		protocol("stdio trailing data", "invalid trailing data", func(t *testing.T) error {
			return readIOConn(t, 0, `{"jsonrpc":"2.0","method":"x"}x`+"\n")
		}),
		protocol("stdio not JSON (typed)", "", func(t *testing.T) error { return readIOConn(t, 0, "this is not JSON-RPC\n") }),
		protocol("SSE event over the cap", "malformed event", sse("event: message\ndata: "+strings.Repeat("x", 4096)+"\n\n")),
		protocol("SSE bad line", "malformed event", sse("nonsense\n\n")),
		protocol("HTTP body not JSON", "unmarshaling jsonrpc message", func(t *testing.T) error {
			return connectHTTP(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, "{not json")
			}, 0)
		}),
		protocol("HTTP content type", "unsupported content type", func(t *testing.T) error {
			return connectHTTP(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				io.WriteString(w, "<html></html>")
			}, 0)
		}),
		protocol("protocol version", "unsupported protocol version", func(t *testing.T) error {
			return connectHTTP(t, func(w http.ResponseWriter, r *http.Request) {
				_, id := rpcRequest(r)
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, initResult(id, "1900-01-01"))
			}, 0)
		}),
		protocol("session IDs", "mismatching session IDs", func(t *testing.T) error {
			return connectHTTP(t, func(w http.ResponseWriter, r *http.Request) {
				method, id := rpcRequest(r)
				if method == "initialize" {
					w.Header().Set("Mcp-Session-Id", "one")
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, initResult(id, "2025-06-18"))
					return
				}
				w.Header().Set("Mcp-Session-Id", "two")
				if len(id) == 0 {
					w.WriteHeader(http.StatusAccepted)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"tools":[]}}`)
			}, 0)
		}),
		protocol("result of the wrong type (typed)", "", func(t *testing.T) error {
			return connectHTTP(t, func(w http.ResponseWriter, r *http.Request) {
				_, id := rpcRequest(r)
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"protocolVersion":7}}`)
			}, 0)
		}),
		{name: "unencodable arguments", method: "tools/call", code: CodeInvalidParameters, text: paramsEncodingMessage,
			err: func(t *testing.T) error { return callInMemory(t, "t", make(chan int)) }},
		{name: "NaN argument", method: "tools/call", code: CodeInvalidParameters, text: paramsEncodingMessage,
			err: func(t *testing.T) error { return callInMemory(t, "t", math.NaN()) }},
		{name: "transport rejected the request", method: "tools/list", code: CodeTransportError, kind: FaultTransport, wire: codeRejected,
			err: func(t *testing.T) error {
				srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
					return mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
				}, nil))
				t.Cleanup(srv.Close)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				down := &failingPosts{base: http.DefaultTransport}
				tr := &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1, HTTPClient: &http.Client{Transport: down}}
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "probe", Version: "1"}, nil).Connect(ctx, tr, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				down.fail.Store(true)
				_, err = cs.ListTools(ctx, nil)
				return err
			}},
		{name: "unknown tool", method: "tools/call", code: CodeToolNotFound, wire: jsonrpc.CodeInvalidParams,
			err: func(t *testing.T) error { return callInMemory(t, "nope", nil) }},
		{name: "unknown prompt", method: "prompts/get", code: CodePromptNotFound, wire: jsonrpc.CodeInvalidParams,
			err: func(t *testing.T) error {
				_, err := inMemorySession(t).GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "nope"})
				return err
			}},
		{name: "missing resource", method: "resources/read", code: CodeResourceNotFound, wire: jsonrpc.CodeInvalidParams,
			err: func(t *testing.T) error {
				_, err := inMemorySession(t).ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "mem://nope"})
				return err
			}},
	}
	for _, p := range probes {
		t.Run(p.name, func(t *testing.T) {
			err := p.err(t)
			if err == nil {
				t.Fatal("the go-sdk returned no error")
			}
			if p.text != "" && !strings.Contains(err.Error(), p.text) {
				t.Errorf("the go-sdk's error %q lacks %q: check errmap.go against this go-sdk", err, p.text)
			}
			if p.text == "" && p.code == CodeProtocolError && !isJSONError(err) {
				t.Errorf("the go-sdk's error %q (%T) no longer carries encoding/json's type", err, err)
			}
			if p.wire != 0 {
				var we *jsonrpc.Error
				if !errors.As(err, &we) || we.Code != p.wire {
					t.Errorf("the go-sdk's error %q carries no JSON-RPC error %d", err, p.wire)
				}
			}
			code, kind := classifyError(err, p.method, 0)
			if code != p.code || kind != p.kind {
				t.Errorf("classifyError(%q) = %s %q, want %s %q", err, code, kind, p.code, p.kind)
			}
		})
	}
}

// readIOConn feeds input to a go-sdk stdio connection and returns the
// error of its first read.
func readIOConn(t *testing.T, maxLine int, input string) error {
	t.Helper()
	pr, pw := io.Pipe()
	t.Cleanup(func() { pr.Close() })
	tr := &mcp.IOTransport{Reader: pr, Writer: nopCloser{io.Discard}, MaxLineLength: maxLine}
	conn, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go pw.Write([]byte(input))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = conn.Read(ctx)
	if err == nil {
		t.Fatalf("the go-sdk read %q without an error", input)
	}
	return err
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// connectHTTP connects a go-sdk client to an HTTP server whose handler
// answers as h does, and returns the error of Connect or, if it connects,
// of a tools/list.
func connectHTTP(t *testing.T, h http.HandlerFunc, maxEvent int) error {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl := mcp.NewClient(&mcp.Implementation{Name: "probe", Version: "1"}, nil)
	cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxEventSize: maxEvent, MaxRetries: -1}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	_, err = cs.ListTools(ctx, nil)
	if err == nil {
		t.Fatal("the go-sdk connected and listed tools without an error")
	}
	return err
}

// rpcRequest reads a JSON-RPC request from r.
func rpcRequest(r *http.Request) (method string, id json.RawMessage) {
	var req struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	return req.Method, req.ID
}

func initResult(id json.RawMessage, version string) string {
	return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"protocolVersion":"` + version +
		`","capabilities":{"tools":{}},"serverInfo":{"name":"probe","version":"1"}}}`
}

// inMemorySession connects a go-sdk client to a go-sdk server with one
// tool, "t", over in-memory transports.
func inMemorySession(t *testing.T) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "t"}, func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "probe", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callInMemory calls a tool of a go-sdk server with one tool, "t".
func callInMemory(t *testing.T, name string, args any) error {
	_, err := inMemorySession(t).CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	return err
}

// failingPosts fails every POST once fail is set, as a refused dial does.
type failingPosts struct {
	base http.RoundTripper
	fail atomic.Bool
}

func (t *failingPosts) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && t.fail.Load() {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	}
	return t.base.RoundTrip(req)
}
