// Package client is the Go SDK for WorldForge's Model Context Protocol
// endpoint (/mcp): connect with an API key, a session JWT or a token source,
// call tools with the MCP content envelope unwrapped, get tool failures as a
// typed error, and use typed helpers for the stable core tools.
//
//	c, err := client.Connect(ctx, client.Options{
//		BaseURL: "http://127.0.0.1:8080",
//		APIKey:  os.Getenv("WORLDFORGE_API_KEY"),
//	})
//	if err != nil {
//		return err // a transport failure: 401, connection refused, …
//	}
//	defer c.Close()
//	summary, err := c.GetWorldSummary(ctx, "world_abc") // *worldforge.WorldSummary
//
// The package speaks MCP through the official go-sdk and imports nothing of
// the server: its argument and result types are the server's own, from the
// root package worldforge (standard library only).
//
// # Calling tools
//
// [Client.CallTool] unwraps the content envelope: a single text block is
// parsed as JSON (falling back to the raw text when it is not JSON); several
// text blocks are joined with newlines; non-text blocks are ignored (a result
// without text is ""). JSON decoded into any gives the encoding/json shapes
// (map[string]any, []any, float64, …). To decode into a type of your own use
// the generic [CallTool] or [Client.CallToolInto], which decode the text
// directly (no detour through float64): CallTool[worldforge.World](ctx, c,
// "read_world", args). [Client.CallToolRaw] returns the envelope untouched;
// [UnwrapResult] applies the rules to it later.
//
// # Errors
//
// A tool-level failure (a result with isError true) comes back from both
// CallTool and CallToolRaw as a [*ToolError]: it names the tool, holds the
// failed envelope in Result, and reads "MCP tool <name> failed: <detail>".
// WorldForge's tools fail with a code text (not_found, missing_scopes:a,b,
// bad_request: …); ToolError unwraps to the matching *worldforge.Error, so
// errors.Is(err, worldforge.ErrNotFound) and worldforge.ErrorCode(err) work.
// Transport failures are the go-sdk's and net/http's own errors, not
// converted: a 401 (bad or revoked credential) surfaces at [Connect], since it
// connects before it returns, or at the call that hit it; it is never a
// *ToolError. Connect adds the endpoint to its error (with %w). A 401 or 403
// answer to Connect's first request ends Connect at once with an error that
// matches [ErrCredentialRefused] and names the status: the refused credential
// is not sent again (no initialize after a refused server/discover).
//
// # Choices
//
// Protocol revision: [Options.ProtocolVersion] is sent to the go-sdk; ""
// keeps the go-sdk default, the stateless 2026-07-28 revision
// (server/discover instead of initialize, _meta on every request), which the
// go-sdk falls back from to the initialize handshake when a server refuses
// server/discover. Set "2025-11-25" (or older) to use the initialize-based
// revisions. The protocol negotiated is in
// Session().InitializeResult().ProtocolVersion.
//
// Retries: none. The transport's MaxRetries is negative, so a 401, a refused
// connection or a dropped stream is returned by the call that met it, at
// once, instead of after the go-sdk's reconnect backoff. The client opens no
// standalone SSE stream either (the WorldForge server never initiates
// messages); responses, including progress notifications, arrive on each
// call's own response.
//
// Credentials: APIKey, then JWT, then TokenSource, the first one set wins;
// with none, Connect returns a plain error before any network I/O. The
// credential goes out as "Authorization: Bearer …" on every request,
// through a RoundTripper wrapped around the transport of
// [Options.HTTPClient] (which is copied, not modified).
//
// TokenSource is an interface, Token(ctx) (string, error), with the
// [TokenFunc] adapter for plain functions, in the way of http.Handler and
// http.HandlerFunc: a type that caches or refreshes tokens satisfies the
// interface, a closure is one conversion away, and the context lets a token
// fetch honour Connect's deadline. It is not golang.org/x/oauth2's
// TokenSource, whose Token method takes no context and returns a struct; one
// adapts in a line:
//
//	client.TokenFunc(func(context.Context) (string, error) {
//		t, err := ts.Token()
//		if err != nil {
//			return "", err
//		}
//		return t.AccessToken, nil
//	})
//
// The token is resolved once, in Connect, and used for the life of the
// client: when it expires, calls fail with a 401 and a new Connect fetches a
// fresh one.
//
// # Below the helpers
//
// [Client.Session] is the go-sdk *mcp.ClientSession, for what this package
// does not wrap: resources, prompts, and progress (call
// Session().CallTool with params.SetProgressToken(tok), and receive the
// notifications in the ProgressNotificationHandler of
// [Options.MCPOptions]). A Client is safe for concurrent use.
package client
