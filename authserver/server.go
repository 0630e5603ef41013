// Package authserver makes WorldForge an OAuth 2.1 protected resource
// with a built-in authorization server, the shape the MCP authorization
// specification (2025-11-25) asks of a remote MCP server:
//
//   - protected resource metadata (RFC 9728) at
//     /.well-known/oauth-protected-resource and
//     /.well-known/oauth-protected-resource/mcp;
//   - authorization server metadata (RFC 8414) at
//     /.well-known/oauth-authorization-server and, for clients that probe
//     it, /.well-known/openid-configuration, with the public URL as issuer;
//   - /register: dynamic client registration (RFC 7591); a client may
//     instead use an https URL as its client_id (a client ID metadata
//     document, fetched and checked by package clientmeta);
//   - /authorize: the authorization code flow with PKCE S256 only, redirect
//     URIs matched exactly (a loopback one may vary its port, RFC 8252),
//     and a resource indicator (RFC 8707) naming this server required.
//     After its checks it sends the browser to the console's consent page
//     (ConsentPath), which calls back Approve or Deny;
//   - /token: the authorization_code and refresh_token grants. Refresh
//     tokens rotate; a rotated one presented again revokes its whole
//     family, as does a code presented twice;
//   - /revoke: token revocation (RFC 7009).
//
// Codes, access tokens ("wfa_…") and refresh tokens ("wfr_…") are opaque
// 160-bit random secrets of which the store keeps only the SHA-256 (as
// for API keys); package auth accepts access tokens bound to this
// server's resource and gives them exactly the scopes granted, the
// existing scope names, checked per tool like an API key's. Every client
// is public (no client secrets): PKCE is what binds a code to the client
// that asked for it.
//
// The handlers are written on net/http and the standard library. A
// general OAuth framework (ory/fosite and the like) brings storage
// interfaces, strategies and grant types this server does not have, and
// would still need the MCP-specific parts (resource binding, client ID
// metadata documents, the console's consent); the flow here is small
// enough to read in one sitting.
package authserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/auth"
	"github.com/worldforge-go/worldforge/authserver/clientmeta"
)

// Defaults of Options.
const (
	DefaultAccessTTL  = 10 * time.Minute
	DefaultRefreshTTL = 30 * 24 * time.Hour
	DefaultCodeTTL    = time.Minute
	// DefaultConsentPath is the console's consent page.
	DefaultConsentPath = "/oauth/consent"
)

// Paths of the endpoints.
const (
	PathResourceMetadata    = "/.well-known/oauth-protected-resource"
	PathResourceMetadataMCP = "/.well-known/oauth-protected-resource/mcp"
	PathServerMetadata      = "/.well-known/oauth-authorization-server"
	PathOpenIDConfiguration = "/.well-known/openid-configuration"
	PathRegister            = "/register"
	PathAuthorize           = "/authorize"
	PathToken               = "/token"
	PathRevoke              = "/revoke"
)

// maxFormBytes bounds a token or revocation request body.
const maxFormBytes = 16 << 10

// Store is what the authorization server needs of the store.
type Store interface {
	wf.OAuthStore
	FindUserByID(ctx context.Context, id string) (*wf.User, error)
}

// Options configure a Server.
type Options struct {
	Store Store
	// Auth, when set, forgets its cached access tokens when a grant is
	// revoked here, so this server refuses them at once.
	Auth *auth.Authenticator
	// PublicURL is the server's address as clients reach it
	// ("https://worlds.example.com"): the issuer, and the base of every
	// endpoint and of the resource (PublicURL + "/mcp").
	PublicURL string
	// AccessTTL, RefreshTTL and CodeTTL are the lifetimes of access
	// tokens, refresh tokens and authorization codes (0: the defaults).
	AccessTTL, RefreshTTL, CodeTTL time.Duration
	// Fetcher reads client ID metadata documents (nil: a Fetcher with
	// its defaults, which never dials an internal address).
	Fetcher *clientmeta.Fetcher
	// ConsentPath is the console page /authorize sends the browser to
	// (DefaultConsentPath when empty).
	ConsentPath string
	Logger      *slog.Logger
	// Now replaces the clock (tests).
	Now func() time.Time
}

// Server is the authorization server's HTTP handler.
type Server struct {
	o        Options
	store    Store
	log      *slog.Logger
	now      func() time.Time
	issuer   string
	resource string
	fetcher  *clientmeta.Fetcher
	mux      *http.ServeMux
	// lastPrune is when expired rows were last pruned (UnixNano).
	lastPrune atomic.Int64
}

// Scopes lists the scopes a client may ask for: every scope but "*".
func Scopes() []string { return wf.AllScopes[1:] }

// New returns the authorization server.
func New(o Options) (*Server, error) {
	if o.Store == nil {
		return nil, errors.New("authserver: Store is required")
	}
	u, err := url.Parse(o.PublicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("authserver: public URL %q is not an http(s) URL", o.PublicURL)
	}
	if o.AccessTTL <= 0 {
		o.AccessTTL = DefaultAccessTTL
	}
	if o.RefreshTTL <= 0 {
		o.RefreshTTL = DefaultRefreshTTL
	}
	if o.CodeTTL <= 0 {
		o.CodeTTL = DefaultCodeTTL
	}
	if o.ConsentPath == "" {
		o.ConsentPath = DefaultConsentPath
	}
	s := &Server{o: o, store: o.Store, log: o.Logger, now: o.Now, fetcher: o.Fetcher, mux: http.NewServeMux()}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.fetcher == nil {
		s.fetcher = &clientmeta.Fetcher{}
	}
	s.issuer = strings.TrimSuffix(u.String(), "/")
	s.resource = s.issuer + "/mcp"
	s.mux.HandleFunc("GET "+PathResourceMetadata, s.resourceMetadata)
	s.mux.HandleFunc("GET "+PathResourceMetadataMCP, s.resourceMetadata)
	s.mux.HandleFunc("GET "+PathServerMetadata, s.serverMetadata)
	s.mux.HandleFunc("GET "+PathOpenIDConfiguration, s.serverMetadata)
	s.mux.HandleFunc("POST "+PathRegister, s.register)
	s.mux.HandleFunc("GET "+PathAuthorize, s.authorize)
	s.mux.HandleFunc("POST "+PathToken, s.token)
	s.mux.HandleFunc("POST "+PathRevoke, s.revoke)
	for _, p := range []string{PathResourceMetadata, PathResourceMetadataMCP, PathServerMetadata, PathOpenIDConfiguration, PathRegister, PathToken, PathRevoke} {
		s.mux.HandleFunc("OPTIONS "+p, s.preflight)
	}
	return s, nil
}

// Patterns are the ServeMux patterns the server answers, for the HTTP
// server that mounts it.
func (s *Server) Patterns() []string {
	return []string{
		PathResourceMetadata, PathResourceMetadataMCP, PathServerMetadata, PathOpenIDConfiguration,
		PathRegister, PathAuthorize, PathToken, PathRevoke,
	}
}

// Issuer is the issuer identifier (the public URL).
func (s *Server) Issuer() string { return s.issuer }

// Resource is the resource every token is bound to: PublicURL + "/mcp".
func (s *Server) Resource() string { return s.resource }

// ResourceMetadataURL is the URL of the protected resource metadata of
// /mcp, for WWW-Authenticate's resource_metadata.
func (s *Server) ResourceMetadataURL() string { return s.issuer + PathResourceMetadataMCP }

// ServeHTTP serves the endpoints. A method an endpoint does not take is
// 405 with the OAuth error body.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	if r.URL.Path != PathAuthorize {
		// Browser-based clients read the metadata and call the
		// registration, token and revocation endpoints from their own
		// origin; none of them uses cookies.
		h.Set("Access-Control-Allow-Origin", "*")
	}
	_, pattern := s.mux.Handler(r)
	if pattern == "" {
		writeOAuthError(w, http.StatusMethodNotAllowed, "invalid_request", "method "+r.Method+" is not allowed here")
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) preflight(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, MCP-Protocol-Version")
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}

// resourceMetadata is RFC 9728's document. The root document describes
// the whole server, the /mcp one the MCP endpoint; both name this
// authorization server and the same scopes.
func (s *Server) resourceMetadata(w http.ResponseWriter, r *http.Request) {
	resource := s.resource
	if r.URL.Path == PathResourceMetadata {
		resource = s.issuer
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"resource":                 resource,
		"authorization_servers":    []string{s.issuer},
		"scopes_supported":         Scopes(),
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "WorldForge",
	})
}

// serverMetadata is RFC 8414's document (also served as the OpenID
// configuration, which clients probe; it claims no OpenID features).
func (s *Server) serverMetadata(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                         s.issuer,
		"authorization_endpoint":                         s.issuer + PathAuthorize,
		"token_endpoint":                                 s.issuer + PathToken,
		"registration_endpoint":                          s.issuer + PathRegister,
		"revocation_endpoint":                            s.issuer + PathRevoke,
		"scopes_supported":                               Scopes(),
		"response_types_supported":                       []string{"code"},
		"response_modes_supported":                       []string{"query"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"token_endpoint_auth_methods_supported":          []string{"none"},
		"revocation_endpoint_auth_methods_supported":     []string{"none"},
		"code_challenge_methods_supported":               []string{"S256"},
		"client_id_metadata_document_supported":          true,
		"authorization_response_iss_parameter_supported": true,
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeOAuthError writes {"error": code, "error_description": desc}.
func writeOAuthError(w http.ResponseWriter, status int, code, desc string) {
	body := map[string]string{"error": code}
	if desc != "" {
		body["error_description"] = desc
	}
	writeJSON(w, status, body)
}
