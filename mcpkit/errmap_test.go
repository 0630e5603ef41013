package mcpkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestClassifyError(t *testing.T) {
	wire := func(code int64, msg string) error {
		return fmt.Errorf("calling: %w", &jsonrpc.Error{Code: code, Message: msg})
	}
	tests := []struct {
		name   string
		err    error
		method string
		status int
		code   Code
		kind   FaultKind
	}{
		{"method not found on a tool call", wire(-32601, "method not found"), "tools/call", 0, CodeToolNotFound, ""},
		{"method not found on a read", wire(-32601, "method not found"), "resources/read", 0, CodeResourceNotFound, ""},
		{"method not found on a prompt", wire(-32601, "method not found"), "prompts/get", 0, CodePromptNotFound, ""},
		{"method not found elsewhere", wire(-32601, "method not found"), "resources/list", 0, CodeServerError, ""},
		{"invalid params", wire(-32602, "x must be a number"), "tools/call", 0, CodeInvalidParameters, ""},
		{"unknown tool (go-sdk)", wire(-32602, `unknown tool "x"`), "tools/call", 0, CodeToolNotFound, ""},
		{"unknown prompt (go-sdk)", wire(-32602, `unknown prompt "x"`), "prompts/get", 0, CodePromptNotFound, ""},
		{"resource not found (SEP-2164)", wire(-32602, "Resource not found"), "resources/read", 0, CodeResourceNotFound, ""},
		{"resource not found (legacy -32002)", wire(-32002, "Resource not found"), "resources/read", 0, CodeResourceNotFound, ""},
		{"-32002 elsewhere", wire(-32002, "whatever"), "tools/call", 0, CodeServerError, ""},
		{"internal error", wire(-32603, "internal"), "tools/call", 0, CodeServerError, ""},
		{"application error", wire(-32000, "boom"), "tools/call", 0, CodeServerError, ""},
		{"parse error", wire(-32700, "parse error"), "tools/call", 0, CodeProtocolError, FaultProtocol},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), "tools/call", 0, CodeTimeout, FaultTimeout},
		{"cancel", context.Canceled, "tools/list", 0, CodeTimeout, FaultTimeout},
		{"HTTP 401", errors.New(`sending "initialize": Unauthorized`), "initialize", 401, CodeSessionError, ""},
		{"HTTP 403 beats a JSON-RPC body", wire(-32600, "forbidden"), "tools/call", 403, CodeSessionError, ""},
		{"session missing", fmt.Errorf("x: %w", mcp.ErrSessionMissing), "tools/call", 404, CodeSessionError, ""},
		{"EOF", fmt.Errorf("calling: %w", io.EOF), "tools/call", 0, CodeTransportError, FaultTransport},
		{"connection reset", &net.OpError{Op: "read", Err: syscall.ECONNRESET}, "tools/call", 0, CodeTransportError, FaultTransport},
		{"connection closed", fmt.Errorf("%w: calling", mcp.ErrConnectionClosed), "tools/call", 0, CodeTransportError, FaultTransport},
		{"frame too large", errors.New("inbound JSON-RPC frame exceeded the configured maximum line length"), "tools/call", 0, CodeProtocolError, FaultProtocol},
		{"bad JSON", fmt.Errorf("x: %w", json.Unmarshal([]byte("}{"), new(any))), "tools/call", 0, CodeProtocolError, FaultProtocol},
		{"bad content type", errors.New(`sending "tools/call": unsupported content type "text/html"`), "tools/call", 0, CodeProtocolError, FaultProtocol},
		{"rejected by transport", fmt.Errorf("calling: %w: %w", &jsonrpc.Error{Code: -32005, Message: "rejected by transport"}, &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), "tools/call", 0, CodeTransportError, FaultTransport},
		{"HTTP body error behind the rejected marker", fmt.Errorf("sending: %w: %w", &jsonrpc.Error{Code: -32602, Message: "bad x"}, &jsonrpc.Error{Code: -32005}), "tools/call", 400, CodeInvalidParameters, ""},
		{"server closing", fmt.Errorf("%w: calling", &jsonrpc.Error{Code: -32004, Message: "server is closing"}), "tools/call", 0, CodeTransportError, FaultTransport},
		{"unencodable params", errors.New("marshaling call parameters: json: unsupported type: chan int"), "tools/call", 0, CodeInvalidParameters, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, kind := classifyError(tt.err, tt.method, tt.status)
			if code != tt.code || kind != tt.kind {
				t.Errorf("classifyError = %s %q, want %s %q", code, kind, tt.code, tt.kind)
			}
		})
	}
}

func TestErrorAttribution(t *testing.T) {
	c := NewClient(ServerConfig{Name: "srv"}, opts())
	e := c.forOp(&Error{Code: CodeNotConnected, Kind: FaultNotConnected, Server: "srv", Message: "gone"}, errOp{method: methodCallTool, name: "echo"})
	if e.Server != "srv" || e.Tool != "echo" || e.Code != CodeNotConnected {
		t.Errorf("forOp = %+v", e)
	}
	e = c.forOp(io.EOF, errOp{method: methodReadResource, name: "mem://x"})
	if e.Code != CodeTransportError || e.Tool != "" || e.Server != "srv" || !errors.Is(e, io.EOF) {
		t.Errorf("forOp(EOF) = %+v", e)
	}
}

func TestSameServerConfig(t *testing.T) {
	base := ServerConfig{Name: "a", Command: "srv", Args: []string{"-v"}, Env: map[string]string{"K": "V"}, Headers: nil}
	same := base
	same.Args = []string{"-v"}
	same.Env = map[string]string{"K": "V"}
	same.Kind = TransportStdio // implied anyway
	if !SameServerConfig(base, same) {
		t.Error("equal configs differ")
	}
	changes := map[string]func(*ServerConfig){
		"args":    func(c *ServerConfig) { c.Args = []string{"-q"} },
		"env":     func(c *ServerConfig) { c.Env = map[string]string{"K": "W"} },
		"cwd":     func(c *ServerConfig) { c.Cwd = "/tmp" },
		"url":     func(c *ServerConfig) { c.URL = "http://127.0.0.1:1" },
		"kind":    func(c *ServerConfig) { c.Kind = TransportSSE },
		"timeout": func(c *ServerConfig) { c.Timeout = 1 },
		"reset":   func(c *ServerConfig) { c.ResetTimeoutOnProgress = true },
		"max":     func(c *ServerConfig) { c.MaxTotalTimeout = 1 },
		"headers": func(c *ServerConfig) { c.Headers = map[string]string{"A": "b"} },
	}
	for name, change := range changes {
		other := base
		change(&other)
		if SameServerConfig(base, other) {
			t.Errorf("%s change not noticed", name)
		}
	}
}
