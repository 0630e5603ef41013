package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// Protocol revisions the request builders know about.
const (
	// Protocol20260728 is the sessionless revision (SEP-2575): there is no
	// initialize handshake; every request carries the protocol version, the
	// client capabilities and (optionally) the client info in params._meta,
	// and the HTTP transport mirrors the method and name in Mcp-Method and
	// Mcp-Name headers.
	Protocol20260728 = "2026-07-28"
	// Protocol20251125 is the last revision with an initialize handshake. A
	// stateless go-sdk server synthesizes the initialized session state for
	// each POST, so a bare tools/call with MCP-Protocol-Version is enough.
	Protocol20251125 = "2025-11-25"
)

// _meta keys and HTTP headers of the 2026-07-28 revision. They match the
// exported mcp.MetaKey* constants and the go-sdk's unexported header names.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"

	headerProtocolVersion = "Mcp-Protocol-Version"
	headerMethod          = "Mcp-Method"
	headerName            = "Mcp-Name"
)

// ClientName is the clientInfo name sent in 2026-07-28 requests.
const ClientName = "worldforge-bench"

// Target is the endpoint a load run talks to: the full URL of the MCP
// endpoint (e.g. http://127.0.0.1:8080/mcp) and the headers sent with every
// request (typically [ToolCallHeaders] plus any Authorization).
type Target struct {
	URL    string
	Header http.Header
}

// usesMetaProtocol reports whether protocol is a revision that carries the
// per-request _meta triple and the Mcp-Method/Mcp-Name headers. Revisions
// are ISO dates, so string order is date order (the go-sdk compares them the
// same way).
func usesMetaProtocol(protocol string) bool {
	return protocol >= Protocol20260728
}

type rpcRequest struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      int            `json:"id"`
	Method  string         `json:"method"`
	Params  toolCallParams `json:"params"`
}

type toolCallParams struct {
	Meta      map[string]any `json:"_meta,omitempty"`
	Name      string         `json:"name"`
	Arguments any            `json:"arguments,omitempty"`
}

// ToolCallBody returns a JSON-RPC 2.0 tools/call request calling tool with
// args (any JSON-marshalable value, usually a map or struct; nil omits
// "arguments").
//
// For protocol >= 2026-07-28 params._meta carries
// io.modelcontextprotocol/protocolVersion (= protocol),
// io.modelcontextprotocol/clientCapabilities ({}, required by the server)
// and io.modelcontextprotocol/clientInfo. For older revisions there is no
// _meta: the request is the plain call a stateless server accepts without
// an initialize.
//
// It panics if args cannot be marshaled: request bodies are built once,
// before a run, from values the caller controls.
func ToolCallBody(id int, protocol, tool string, args any) []byte {
	req := rpcRequest{
		JSONRPC: "2.0",
		ID:      id,
		Method:  "tools/call",
		Params:  toolCallParams{Name: tool, Arguments: args},
	}
	if usesMetaProtocol(protocol) {
		req.Params.Meta = map[string]any{
			metaProtocolVersion:    protocol,
			metaClientInfo:         map[string]string{"name": ClientName, "version": "0"},
			metaClientCapabilities: map[string]any{},
		}
	}
	b, err := json.Marshal(req)
	if err != nil {
		panic(fmt.Sprintf("bench.ToolCallBody: marshal %s arguments: %v", tool, err))
	}
	return b
}

// ToolCallHeaders returns the HTTP headers for a tools/call of tool under
// protocol: Content-Type: application/json, Accept: application/json,
// text/event-stream (the server requires both), and MCP-Protocol-Version.
// For protocol >= 2026-07-28 it adds Mcp-Method: tools/call and
// Mcp-Name: tool, which the server checks against the body.
//
// Tools whose input schema annotates properties with x-mcp-header would
// also need Mcp-Param-* headers; none of the tools driven here do.
func ToolCallHeaders(protocol, tool string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if protocol != "" {
		h.Set(headerProtocolVersion, protocol)
	}
	if usesMetaProtocol(protocol) {
		h.Set(headerMethod, "tools/call")
		h.Set(headerName, tool)
	}
	return h
}

// ToolCallTarget is shorthand for a Target at url with [ToolCallHeaders].
func ToolCallTarget(url, protocol, tool string) Target {
	return Target{URL: url, Header: ToolCallHeaders(protocol, tool)}
}

// SequencedBody returns a LoadConfig.AppendBody that makes every request
// distinct: the body is ToolCallBody(id, protocol, tool, args), in which
// placeholder, a string that must occur exactly once in it, is replaced by
// tag and the request's sequence number. Both placeholder and tag must be
// plain JSON string text (no character JSON escapes).
func SequencedBody(id int, protocol, tool string, args any, placeholder, tag string) (func(dst []byte, i int) []byte, error) {
	for _, s := range []string{placeholder, tag} {
		if q, _ := json.Marshal(s); string(q) != `"`+s+`"` {
			return nil, fmt.Errorf("bench: %q needs escaping in JSON", s)
		}
	}
	body := ToolCallBody(id, protocol, tool, args)
	before, after, ok := bytes.Cut(body, []byte(placeholder))
	if placeholder == "" || !ok || bytes.Contains(after, []byte(placeholder)) {
		return nil, fmt.Errorf("bench: placeholder %q must occur once in the %s body", placeholder, tool)
	}
	before = append(append([]byte(nil), before...), tag...)
	return func(dst []byte, i int) []byte {
		dst = append(dst, before...)
		dst = strconv.AppendInt(dst, int64(i), 10)
		return append(dst, after...)
	}, nil
}
