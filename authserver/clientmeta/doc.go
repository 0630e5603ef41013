// Package clientmeta is the client side of WorldForge's authorization
// server: what a client says about itself, checked before anything is
// stored or anyone is redirected. It knows the two ways MCP clients
// register today:
//
//   - dynamic client registration (RFC 7591): ParseRegistration turns a
//     registration request body into validated Metadata;
//   - client ID metadata documents (draft-ietf-oauth-client-id-metadata-document,
//     as the MCP authorization specification uses them): the client_id is
//     an https URL, and Fetcher.Fetch reads and validates the document it
//     names — with a timeout, a byte cap, no redirects, and the address it
//     dials checked so that a client ID can never make the server reach an
//     internal address (unless AllowInternal says it may).
//
// RedirectMatches is the one redirect URI comparison: exact string match,
// except that a loopback redirect may use any port (RFC 8252 §7.3).
//
// The rules, in one place:
//
//   - a registration body is at most MaxRegistrationBytes of valid UTF-8
//     holding one JSON object whose keys do not repeat; unknown members are
//     ignored, a known member of the wrong type is refused;
//   - redirect_uris: 1 to MaxRedirectURIs distinct absolute URIs of at
//     most MaxURILength bytes, with no fragment and no user info, each
//     either https with a host, http on a loopback host (127.0.0.1, [::1]
//     or localhost), or a private-use scheme of a native app (RFC 8252
//     §7.1): a reverse domain name such as com.example.app:/callback — the
//     scheme must contain a dot, which keeps out javascript:, data:, file:
//     and every other well-known scheme, and PKCE (required for every
//     client) is what protects a code sent to a scheme another app could
//     also claim (RFC 8252 §8.1);
//   - grant_types: authorization_code and refresh_token only, and
//     authorization_code among them (the default);
//   - response_types: code only (the default);
//   - token_endpoint_auth_method: every client is public and proves itself
//     with PKCE, so the registered method is always "none". A registration
//     asking for client_secret_post or client_secret_basic is registered
//     with "none" instead (RFC 7591 §3.2.1 lets the server replace a
//     requested value; the response tells the client): a secret handed to
//     anyone who asks proves nothing about who they are, and clients such
//     as the TypeScript SDK ask for one by default. Any other method is
//     refused. A metadata document must say "none" or nothing, and must
//     not carry a client_secret (the draft forbids shared secrets);
//   - client_name and software fields: at most MaxNameLength characters,
//     no control or bidirectional-override characters; client_uri and
//     logo_uri: https URLs;
//   - scope: space-separated scope tokens (RFC 6749 §3.3), at most
//     MaxScopeLength bytes; which scopes exist is the server's business.
//
// Errors are *Error values carrying the RFC 7591 or RFC 6749 error code.
package clientmeta
