// Package mcpkit is a toolkit for Go programs that host many Model Context
// Protocol servers — an agent host, a gateway, a command-line client — and
// for programs that expose their own tools as an MCP server. It is built on
// the official github.com/modelcontextprotocol/go-sdk, which does all of the
// protocol and transport work; mcpkit adds what a host needs around it:
//
//   - Client: one connection to one server over stdio (a child process),
//     streamable HTTP or the legacy HTTP+SSE transport, with an observable
//     Phase (idle → connecting → ready → closing → closed | faulted),
//     timeouts, pagination, notifications and an opt-in reconnect policy.
//   - Fleet: many clients under one lifecycle (connect in parallel, isolate
//     failures, status, add/remove/reload).
//   - Config: the toolkit's own file format and the widespread mcpServers
//     format, user and project files merged, ${VAR} expansion.
//   - Registry: tools for an agent under qualified names that model APIs
//     accept, with argument validation against each tool's JSON Schema.
//   - Provider: local tools served as an MCP server over stdio or any
//     go-sdk transport.
//
// Errors are *Error values carrying one of the 13 codes (CONNECTION_FAILED …
// SESSION_ERROR) and, for faults of a live connection, a FaultKind; match
// them with errors.Is against the Err* values or errors.As.
//
// Library code logs through log/slog (Options.Logger) and never writes to
// stdout: on a stdio server, stdout is the protocol.
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
