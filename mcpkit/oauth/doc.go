// Package oauth is OAuth 2.1 for the HTTP and SSE servers an mcpkit.Client
// connects to: the MCP authorization specification (2025-03-26 to
// 2026-07-28) and its client-credentials, workload-identity and
// enterprise-managed extensions. mcpkit uses it when a ServerConfig has
// an OAuth Config; a host needs it directly only to build that Config or
// to show the user authorization requests (LoopbackAuthorizer).
//
// The flow lives in an http.RoundTripper under the session's transport
// rather than in the go-sdk's auth.OAuthHandler, because the handler
// interface covers only part of it: it retries a request once, always
// presents a "Bearer" token, and only the streamable transport consults
// it. The round tripper serves both transports, retries after a step-up
// (403 insufficient_scope), presents DPoP-bound tokens with a fresh proof
// per request, and answers DPoP nonce challenges. The pieces the go-sdk
// and golang.org/x/oauth2 do provide are used: oauthex's metadata types,
// WWW-Authenticate parser, dynamic client registration and RFC 8693 token
// exchange; x/oauth2's PKCE, authorization URL, code exchange, refresh and
// client-credentials requests.
//
// The files, one concept each:
//
//   - config.go: Config, the grants and client authentication methods,
//     and their validation;
//   - entry.go: Entry, the "oauth" object of a configuration file, and
//     ParseEntry;
//   - keys.go: PEM private keys and their signing algorithms;
//   - authorize.go: the user's part of the authorization code grant
//     (AuthorizeFunc, LoopbackAuthorizer);
//   - flow.go: Flow, its round tripper, and when to authorize, refresh or
//     step up;
//   - discovery.go: protected resource and authorization server metadata;
//   - grants.go: client identity (pre-registered, metadata document,
//     dynamic registration), scopes, and the grants themselves;
//   - dpop.go: DPoP proofs and nonces (RFC 9449).
package oauth
