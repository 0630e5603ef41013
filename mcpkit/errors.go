package mcpkit

import (
	"errors"
	"fmt"
	"strings"
)

// Code classifies an error (the 13 codes of the original API).
type Code string

// The error codes.
const (
	CodeConnectionFailed      Code = "CONNECTION_FAILED"       // a connection could not be made (spawn, dial, handshake)
	CodeTimeout               Code = "TIMEOUT"                 // a request or connect ran past its deadline
	CodeToolNotFound          Code = "TOOL_NOT_FOUND"          // the server has no such tool (JSON-RPC -32601, or unknown tool)
	CodeInvalidParameters     Code = "INVALID_PARAMETERS"      // arguments failed the tool's schema (ours or the server's: -32602)
	CodeServerError           Code = "SERVER_ERROR"            // the server answered with an error, or a tool failed (isError)
	CodeTransportError        Code = "TRANSPORT_ERROR"         // the transport broke (EOF, HTTP status, network)
	CodeNotConnected          Code = "NOT_CONNECTED"           // the client is not ready (never connected, closed, or faulted)
	CodeProtocolError         Code = "PROTOCOL_ERROR"          // a malformed or unexpected message
	CodeConfigError           Code = "CONFIG_ERROR"            // a bad configuration file or entry
	CodeSchemaConversionError Code = "SCHEMA_CONVERSION_ERROR" // a tool's input schema could not be used
	CodeResourceNotFound      Code = "RESOURCE_NOT_FOUND"      // the server has no such resource
	CodePromptNotFound        Code = "PROMPT_NOT_FOUND"        // the server has no such prompt
	CodeSessionError          Code = "SESSION_ERROR"           // the server refused the session (HTTP 401/403, 404 on a session)
)

// Codes lists every code.
var Codes = []Code{
	CodeConnectionFailed, CodeTimeout, CodeToolNotFound, CodeInvalidParameters, CodeServerError,
	CodeTransportError, CodeNotConnected, CodeProtocolError, CodeConfigError, CodeSchemaConversionError,
	CodeResourceNotFound, CodePromptNotFound, CodeSessionError,
}

// FaultKind says how a live connection failed (the interop vocabulary).
type FaultKind string

// The fault kinds.
const (
	FaultTransport    FaultKind = "transport"
	FaultProtocol     FaultKind = "protocol"
	FaultTimeout      FaultKind = "timeout"
	FaultToolError    FaultKind = "tool_error"
	FaultNotConnected FaultKind = "not_connected"
	FaultSpawnFailed  FaultKind = "spawn_failed"
)

// FaultKinds lists every fault kind.
var FaultKinds = []FaultKind{FaultTransport, FaultProtocol, FaultTimeout, FaultToolError, FaultNotConnected, FaultSpawnFailed}

// Error is the toolkit's error. Code is always set; Kind is set for faults
// of a connection; Server and Tool name where it happened when known; Err
// is the cause.
type Error struct {
	Code    Code
	Kind    FaultKind
	Server  string
	Tool    string
	Message string
	// Details carries machine-readable context: validation failures, a
	// JSON-RPC error's data, a child's exit status and stderr tail.
	Details any
	Err     error
}

// Error renders "[server] tool: CODE: message: cause".
func (e *Error) Error() string {
	var b strings.Builder
	if e.Server != "" {
		fmt.Fprintf(&b, "[%s] ", e.Server)
	}
	if e.Tool != "" {
		b.WriteString(e.Tool + ": ")
	}
	b.WriteString(string(e.Code))
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches target *Error values by their set fields: Code, and Kind when
// the target names one. errors.Is(err, ErrTimeout) is true for any
// TIMEOUT error; errors.Is(err, &Error{Kind: FaultSpawnFailed}) for any
// spawn failure.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	if t.Code != "" && t.Code != e.Code {
		return false
	}
	if t.Kind != "" && t.Kind != e.Kind {
		return false
	}
	return t.Code != "" || t.Kind != ""
}

// Values to match with errors.Is.
var (
	ErrConnectionFailed  = &Error{Code: CodeConnectionFailed}
	ErrTimeout           = &Error{Code: CodeTimeout}
	ErrToolNotFound      = &Error{Code: CodeToolNotFound}
	ErrInvalidParameters = &Error{Code: CodeInvalidParameters}
	ErrServerError       = &Error{Code: CodeServerError}
	ErrTransport         = &Error{Code: CodeTransportError}
	ErrNotConnected      = &Error{Code: CodeNotConnected}
	ErrProtocol          = &Error{Code: CodeProtocolError}
	ErrConfig            = &Error{Code: CodeConfigError}
	ErrSchemaConversion  = &Error{Code: CodeSchemaConversionError}
	ErrResourceNotFound  = &Error{Code: CodeResourceNotFound}
	ErrPromptNotFound    = &Error{Code: CodePromptNotFound}
	ErrSession           = &Error{Code: CodeSessionError}
)

// IsSessionError reports whether err means the session is gone or refused
// (SESSION_ERROR or NOT_CONNECTED): reconnecting may help.
func IsSessionError(err error) bool {
	return errors.Is(err, ErrSession) || errors.Is(err, ErrNotConnected)
}

// ErrorCode returns err's code, or "" if it is not an *Error.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
