package mcpkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// JSON-RPC methods whose errors name a missing item.
const (
	methodCallTool     = "tools/call"
	methodReadResource = "resources/read"
	methodSubscribe    = "resources/subscribe"
	methodUnsubscribe  = "resources/unsubscribe"
	methodGetPrompt    = "prompts/get"
)

// codeResourceNotFoundLegacy is the resource-not-found code servers used
// before SEP-2164 (and go-sdk before v1.7.0).
const codeResourceNotFoundLegacy = -32002

// Codes the go-sdk's jsonrpc2 uses for its own conditions: a connection
// that is closing (on either side; a peer may also answer with them), and
// a transport that could not send a request (a marker wrapped around the
// real cause, never an answer from the server). The go-sdk does not export
// them (internal/jsonrpc2/wire.go: ErrClientClosing, ErrServerClosing,
// ErrRejected); errmap_sdk_test.go pins them to its version.
const (
	codeClientClosing = -32003
	codeServerClosing = -32004
	codeRejected      = -32005
)

// wireError returns the first JSON-RPC error in err's tree that is not
// the transport's "rejected" marker, or nil.
func wireError(err error) *jsonrpc.Error {
	switch x := err.(type) {
	case nil:
		return nil
	case *jsonrpc.Error:
		if x.Code != codeRejected {
			return x
		}
		return nil
	case interface{ Unwrap() error }:
		return wireError(x.Unwrap())
	case interface{ Unwrap() []error }:
		for _, e := range x.Unwrap() {
			if we := wireError(e); we != nil {
				return we
			}
		}
	}
	return nil
}

// WireError is the Details of an *Error made from a JSON-RPC error.
type WireError struct {
	Code    int64
	Message string
	Data    json.RawMessage
}

// notFoundCode is the not-found code for the item a method addresses, or
// "" for methods that address none.
func notFoundCode(method string) Code {
	switch method {
	case methodCallTool:
		return CodeToolNotFound
	case methodReadResource, methodSubscribe, methodUnsubscribe:
		return CodeResourceNotFound
	case methodGetPrompt:
		return CodePromptNotFound
	}
	return ""
}

// classifyWire maps a JSON-RPC error answered to method.
//
// -32601 (method not found) on a method that addresses an item means the
// item's kind is missing; -32602 (invalid params) is a not-found when the
// server says so (go-sdk servers answer an unknown tool or prompt, and a
// missing resource, with -32602) and INVALID_PARAMETERS otherwise; every
// other code is SERVER_ERROR, except the JSON-RPC framing codes, which are
// PROTOCOL_ERROR.
func classifyWire(we *jsonrpc.Error, method string) (Code, FaultKind) {
	nf := notFoundCode(method)
	switch we.Code {
	case jsonrpc.CodeMethodNotFound:
		if nf != "" {
			return nf, ""
		}
		return CodeServerError, ""
	case jsonrpc.CodeInvalidParams:
		if nf != "" && saysNotFound(we.Message) {
			return nf, ""
		}
		return CodeInvalidParameters, ""
	case codeResourceNotFoundLegacy:
		if nf == CodeResourceNotFound {
			return nf, ""
		}
		return CodeServerError, ""
	case jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest:
		return CodeProtocolError, FaultProtocol
	case codeClientClosing, codeServerClosing:
		return CodeTransportError, FaultTransport
	}
	return CodeServerError, ""
}

func saysNotFound(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "not found") || strings.Contains(m, "unknown") || strings.Contains(m, "no such")
}

// classifyError maps an error from the go-sdk to a code and fault kind.
// method is the JSON-RPC method of the failed request; httpStatus the last
// error status an HTTP transport saw (0 if none).
func classifyError(err error, method string, httpStatus int) (Code, FaultKind) {
	we := wireError(err)
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return CodeTimeout, FaultTimeout
	case httpStatus == http.StatusUnauthorized, httpStatus == http.StatusForbidden:
		return CodeSessionError, ""
	case errors.Is(err, mcp.ErrSessionMissing):
		return CodeSessionError, ""
	case we != nil:
		return classifyWire(we, method)
	case isParamsEncodingError(err):
		return CodeInvalidParameters, ""
	case isJSONError(err), isProtocolMessage(err):
		return CodeProtocolError, FaultProtocol
	}
	// Everything else the SDK returns comes from the transport: a closed or
	// reset connection, a refused dial, an HTTP status.
	return CodeTransportError, FaultTransport
}

// isJSONError reports whether err is a JSON syntax or type error: the peer
// sent something that is not a JSON-RPC message.
func isJSONError(err error) bool {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	return errors.As(err, &se) || errors.As(err, &te)
}

// isParamsEncodingError reports whether the request's own arguments could
// not be encoded: encoding/json's errors, or the go-sdk's jsonrpc2 prefix
// for them (internal/jsonrpc2/conn.go, "marshaling call parameters: %w";
// see protocolMessages on how such texts are checked).
func isParamsEncodingError(err error) bool {
	var ut *json.UnsupportedTypeError
	var uv *json.UnsupportedValueError
	var me *json.MarshalerError
	return errors.As(err, &ut) || errors.As(err, &uv) || errors.As(err, &me) ||
		strings.Contains(err.Error(), paramsEncodingMessage)
}

// paramsEncodingMessage is the go-sdk's text for arguments it could not
// encode.
const paramsEncodingMessage = "marshaling call parameters"

// protocolMessages are texts of go-sdk errors that mean the peer broke the
// protocol and that the go-sdk offers no type for: its unexported errors,
// and errors it flattens with %v. They were checked against the go-sdk
// version in goSDKChecked (errmap_sdk_test.go makes that go-sdk produce
// each one it can and fails when go.mod names another version). Errors
// that keep their type — encoding/json's, which the go-sdk wraps with %w —
// are matched by type (isJSONError).
var protocolMessages = []struct{ text, source string }{
	{"exceeded the configured maximum line length", "mcp/transport.go: errFrameTooLarge, a stdio frame over MaxLineLength"},
	{"invalid trailing data", "mcp/transport.go: ioConn, data after a stdio frame's JSON value"},
	{"malformed event", "mcp/event.go: errMalformedEvent (an SSE event over MaxEventSize, or a bad line), flattened by the streamable client"},
	{"unmarshaling jsonrpc message", "internal/jsonrpc2/messages.go: DecodeMessage, flattened by the streamable client (\"failed to decode response\")"},
	{"unsupported content type", "mcp/streamable.go: a response that is neither JSON nor an event stream"},
	{"unsupported protocol version", "mcp/client.go: unsupportedProtocolVersionError, an initialize result with an unknown version"},
	{"mismatching session IDs", "mcp/streamable.go: a response with another Mcp-Session-Id"},
	{"multi-round-trip: exceeded", "mcp/mrtr.go: a server that keeps asking for input (2026-07-28)"},
}

func isProtocolMessage(err error) bool {
	msg := err.Error()
	for _, m := range protocolMessages {
		if strings.Contains(msg, m.text) {
			return true
		}
	}
	return false
}

// isConnectionLoss reports whether err means the connection is gone: the
// peer closed it, reset it or went away.
func isConnectionLoss(err error) bool {
	var ne net.Error
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, os.ErrClosed) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, net.ErrClosed) ||
		errors.As(err, &ne)
}

// errOp names the request an error belongs to.
type errOp struct {
	method string // the JSON-RPC method
	name   string // the tool or prompt name, or the resource URI
}

func (op errOp) describe() string {
	switch {
	case op.name == "":
		return op.method
	case op.method == methodCallTool:
		return "call"
	default:
		return fmt.Sprintf("%s %q", op.method, op.name)
	}
}

// newError builds an *Error for this client and op.
func (c *Client) newError(code Code, kind FaultKind, op errOp, msg string, cause error) *Error {
	e := &Error{Code: code, Kind: kind, Server: c.cfg.Name, Message: msg, Err: cause}
	if op.method == methodCallTool {
		e.Tool = op.name
	}
	return e
}

// forOp returns err as an *Error attributed to this client and op: an
// *Error made elsewhere (a session fault, say) is copied with the tool
// name filled in.
func (c *Client) forOp(err error, op errOp) *Error {
	var e *Error
	if errors.As(err, &e) {
		if e.Server == c.cfg.Name && (op.method != methodCallTool || e.Tool == op.name) {
			return e
		}
		cp := *e
		if cp.Server == "" {
			cp.Server = c.cfg.Name
		}
		if op.method == methodCallTool {
			cp.Tool = op.name
		}
		return &cp
	}
	code, kind := classifyError(err, op.method, 0)
	return c.newError(code, kind, op, op.describe(), err)
}

// mapCallError turns the error of a request on session s into an *Error.
// ctx is the caller's context and callCtx the request's (with the
// timeout); the request's cancellation cause tells a timeout from a
// session that ended under it.
func (c *Client) mapCallError(ctx, callCtx context.Context, s *session, op errOp, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return c.forOp(e, op)
	}
	if callCtx.Err() != nil {
		cause := context.Cause(callCtx)
		if errors.As(cause, &e) { // the session ended, or the client closed
			return c.forOp(e, op)
		}
		ctxErr := ctx.Err()
		if ctxErr == nil {
			ctxErr = callCtx.Err() // our default timeout
		}
		msg := op.describe() + ": timed out"
		switch {
		case errors.Is(ctxErr, context.Canceled):
			msg = op.describe() + ": cancelled"
		case cause == errMaxTotalTimeout:
			msg = op.describe() + ": timed out: maximum total timeout reached"
		}
		return c.newError(CodeTimeout, FaultTimeout, op, msg, ctxErr)
	}

	status := s.httpStatus()
	if we := wireError(err); we != nil && status != http.StatusUnauthorized && status != http.StatusForbidden {
		code, kind := classifyWire(we, op.method)
		if code == CodeInvalidParameters && op.method == methodCallTool && !c.hasTool(op.name) {
			code = CodeToolNotFound
		}
		e := c.newError(code, kind, op, we.Message, err)
		e.Details = &WireError{Code: we.Code, Message: we.Message, Data: we.Data}
		return e
	}

	// The connection may have broken under the request: then the session's
	// own fault (with a dead child's exit status) is the better answer.
	// A broken stdio pipe ends the session promptly; an HTTP request that
	// failed may leave the session alive, so only a fault already noticed
	// counts there.
	if s.proc != nil && (s.broken() || isConnectionLoss(err)) {
		if fault := s.awaitEnd(); fault != nil {
			return c.forOp(fault, op)
		}
	} else if fault := s.endedFault(); fault != nil {
		return c.forOp(fault, op)
	}
	code, kind := classifyError(err, op.method, status)
	return c.newError(code, kind, op, op.describe(), err)
}

// ToolResultError returns nil if res is not an error result, and
// otherwise a SERVER_ERROR with Kind tool_error whose message is the
// result's text. CallTool itself returns isError results as results.
func ToolResultError(server, tool string, res *mcp.CallToolResult) error {
	if res == nil || !res.IsError {
		return nil
	}
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	msg := strings.Join(parts, "\n")
	if msg == "" {
		msg = "tool reported an error"
	}
	return &Error{Code: CodeServerError, Kind: FaultToolError, Server: server, Tool: tool, Message: msg, Details: res}
}
