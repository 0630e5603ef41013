package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/app"
)

// OAuth (package authserver): the server is an OAuth 2.1 protected
// resource. Its endpoints (Options.OAuth) are mounted next to /mcp,
// behind the same Host/Origin check and per-IP limits as the console.
// Every 401 names the protected resource metadata (RFC 9728 §5.1), so
// that an MCP client that connects by URL alone can find where to get a
// token; a REST route refusing a credential that lacks its scopes says
// insufficient_scope with the scopes it needs (RFC 6750 §3.1). Tools on
// /mcp keep answering a missing scope as a tool error (missing_scopes),
// since the HTTP request itself was authorized.

// challenge is the WWW-Authenticate value of a 401: on a REST route it
// names the route's scopes (what a token for it needs).
func (s *Server) challenge(r *http.Request) string {
	if s.opts.ResourceMetadataURL == "" {
		return `Bearer realm="worldforge"`
	}
	v := `Bearer realm="worldforge", resource_metadata="` + s.opts.ResourceMetadataURL + `"`
	if scopes, _ := r.Context().Value(routeScopesKey{}).([]string); len(scopes) > 0 {
		v += `, scope="` + strings.Join(scopes, " ") + `"`
	}
	return v
}

type routeScopesKey struct{}

// withRouteScopes records a REST route's scopes for its 401's challenge.
func withRouteScopes(row app.Access, next http.Handler) http.Handler {
	if len(row.Scopes) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), routeScopesKey{}, row.Scopes)))
	})
}

// scopeChallenge sets, before gate refuses a credential without the
// route's scopes (403), the WWW-Authenticate naming them.
func (s *Server) scopeChallenge(row app.Access, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := worldforge.ActorFromContext(r.Context()); a != nil && len(row.Scopes) > 0 {
			err := a.RequireScopes(row.Scopes...)
			if row.AnyScope {
				err = a.RequireAnyScope(row.Scopes...)
			}
			if err != nil {
				v := `Bearer error="insufficient_scope", scope="` + strings.Join(row.Scopes, " ") + `"`
				if s.opts.ResourceMetadataURL != "" {
					v += `, resource_metadata="` + s.opts.ResourceMetadataURL + `"`
				}
				w.Header().Set("WWW-Authenticate", v)
			}
		}
		next.ServeHTTP(w, r)
	})
}
