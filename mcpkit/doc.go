// Package mcpkit is a toolkit for Go programs that host many Model Context
// Protocol servers — an agent host, a gateway, a command-line client — and
// for programs that expose their own tools as an MCP server. It is built on
// the official github.com/modelcontextprotocol/go-sdk, which does all of the
// protocol and transport work; mcpkit adds what a host needs around it:
//
//   - Client: one connection to one server over stdio (a child process),
//     streamable HTTP or the legacy HTTP+SSE transport, with an observable
//     Phase (idle → connecting → ready → closing → closed | faulted),
//     timeouts, pagination, notifications and an opt-in reconnect policy;
//     OAuth 2.1 for HTTP servers (ServerConfig.OAuth, an oauth.Config of
//     package mcpkit/oauth: discovery, registration, PKCE, refresh,
//     step-up, client credentials, DPoP).
//   - Fleet: many clients under one lifecycle (connect in parallel, isolate
//     failures, status, add/remove/reload).
//   - Config: the toolkit's own file format and the widespread mcpServers
//     format, user and project files merged (or one file alone), ${VAR}
//     expansion, per-server tool filters (allowedTools, disabledTools).
//   - Registry: tools for an agent under qualified names that model APIs
//     accept, with argument validation against each tool's JSON Schema.
//   - Provider: local tools, resources, resource templates and prompts
//     served as an MCP server over stdio or any go-sdk transport.
//   - Mount and NewGateway: a fleet's tools, resources, resource templates
//     and prompts behind one MCP server, with what the servers send back
//     in the course of a call (progress, logs, sampling, elicitation)
//     relayed to the client that made it, and logging levels,
//     subscriptions and completions passed on to the servers.
//
// # What servers send back in the course of a request
//
// A server may send progress, log messages, and sampling and elicitation
// requests while it works on one of the client's requests. They go to the
// ClientOptions handlers (OnProgress, OnLog, OnSample, OnElicit) unless the
// request was made with a context from WithRequestHooks, whose hooks then
// take them for that request — which is how a gateway hands each to the
// session that made the call. The client finds the request a message
// belongs to by, in order:
//
//   - the go-sdk's own context: on 2026-07-28, sampling and elicitation
//     come back as input requests that the go-sdk answers inside the
//     request (multi round-trip), so there is no doubt;
//   - the HTTP stream: on streamable HTTP a server sends what belongs to a
//     request on that request's event stream, which the client reads as it
//     passes; what comes on the session's own stream belongs to none;
//   - the progress token: each request with someone listening for its
//     progress, or whose timeout progress restarts, carries a token of
//     the client's own;
//   - otherwise (stdio, legacy SSE), where nothing on the wire says: the
//     only request in flight on the connection, if there is just one.
//
// What no request takes goes to ClientOptions. The client declares the
// sampling capability only with ClientOptions.OnSample. A request returns
// only after the progress and log notifications that came ahead of its
// answer have been handed to the handlers (waiting at most a second), so
// that whoever listens sees them before the result — on streamable HTTP
// those of its own stream, on stdio every one read so far; legacy SSE
// gives no such order. When a streamable HTTP server closes a request's
// stream before answering (SEP-1699), RequestHooks.OnStreamClosed is told;
// the client resumes the stream itself.
//
// # Timeouts
//
// A request times out after the server's Timeout unless its context has a
// deadline of its own. With ResetTimeoutOnProgress (ServerConfig or
// ClientOptions) each progress notification for the request restarts that
// timeout, and MaxTotalTimeout bounds the request's whole run; a context
// from WithRequestTimeout sets all three for one call. These are the
// TypeScript SDK's timeout, resetTimeoutOnProgress and maxTotalTimeout.
//
// Errors are *Error values carrying one of the 13 codes (CONNECTION_FAILED …
// SESSION_ERROR) and, for faults of a live connection, a FaultKind; match
// them with errors.Is against the Err* values or errors.As.
//
// Library code logs through log/slog (Options.Logger) and never writes to
// stdout: on a stdio server, stdout is the protocol.
//
// # Files and subpackages
//
// One concept a file:
//
//   - serverconfig.go: ServerConfig, what a client connects to, and its
//     tool filter;
//   - client.go: Client, its options and its requests (CallTool …);
//   - session.go: one connection's life — connect rounds, faults,
//     reconnect, close;
//   - dial.go: making a connection — spawn or dial, the HTTP client with
//     its headers and OAuth beneath them, the handshake;
//   - notify.go: what servers send unasked — list changes, resource
//     updates, logs, progress, sampling and elicitation — and
//     subscription acknowledgements;
//   - route.go: which request something a server sends back belongs to
//     (RequestHooks);
//   - phase.go: Phase and the ordered delivery of phase changes;
//   - stdio.go (stdio_unix.go, stdio_other.go): the child process;
//   - errors.go: Error and its codes; errmap.go: go-sdk errors to codes;
//   - config.go: configuration files (LoadConfig, SaveConfig);
//   - fleet.go: Fleet;
//   - registry.go, schema.go: Registry, qualified names, schemas;
//   - provider.go, resources.go: Provider and what it serves;
//   - bridge.go: Mount, a fleet's tools in a registry; gateway.go:
//     NewGateway, a bridge served as one MCP server.
//
// Subpackages: mcpkit/oauth is the OAuth client (Config, the
// configuration file's "oauth" object, the flow beneath the HTTP
// transport); mcpkit/internal/configtext holds the ${VAR} expansion both
// configuration parsers share.
//
// The package covers both vocabularies of the TypeScript original (spec
// 002): the client / pool / error-code API of its "mcp" module and the
// endpoint phases, fault kinds, fleet, qualified names and provider host of
// its "interop" bridge. Known defects of the original that this package does
// not have: start-up by sleeping instead of waiting for the handshake, lost
// PATH when a server's env is set, tool names that model APIs refuse,
// silent overwrites on name collisions, optional schema properties turned
// required, child processes left behind on close.
package mcpkit
