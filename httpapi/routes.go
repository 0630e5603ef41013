package httpapi

import (
	"fmt"
	"net/http"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/app"
)

// route is one REST route: its pattern, the scopes an API key needs to
// pass the route at all (the path-level gate; a session JWT's "*" passes
// every one), and its handler. Beyond the gate each handler calls the app
// operation the route serves, which applies the owner / GM / member rules
// of the world it touches.
type route struct {
	pattern string
	access  app.Access
	handler http.HandlerFunc
}

// routes is the REST surface. Each route's gate scopes come from its
// operation's row of the app layer's access table (app.RouteAccess); a
// pattern without a row is a programming error.
func (s *Server) routes() []route {
	handlers := []struct {
		pattern string
		handler http.HandlerFunc
	}{
		{"GET /me", s.serveMe},
		{"PUT /worlds/{id}/presence", s.putPresence},
		{"GET /worlds/{id}/pois/search", s.searchPOIs},
		{"POST /worlds/{id}/pois/search", s.searchPOIs},
		{"GET /worlds/{id}/proposals", s.listProposals},
		{"GET /proposals/{id}", s.getProposal},
		{"POST /proposals/{id}/commit", s.commitProposal},
		{"POST /proposals/{id}/reject", s.rejectProposal},
		{"POST /worlds/{id}/changesets/{changeset}/commit", s.commitChangeset},
		{"GET /auto-accept-rules", s.listRules},
		{"POST /auto-accept-rules", s.createRule},
		{"DELETE /auto-accept-rules/{id}", s.deleteRule},
	}
	out := make([]route, 0, len(handlers))
	for _, h := range handlers {
		row, ok := app.RouteAccess(h.pattern)
		if !ok {
			panic(fmt.Sprintf("httpapi: route %q has no row in the access table", h.pattern))
		}
		out = append(out, route{pattern: h.pattern, access: row, handler: h.handler})
	}
	return out
}

// gate refuses an actor without the row's scopes (missing_scopes, 403).
func gate(row app.Access, next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := worldforge.ActorFromContext(r.Context())
		if a == nil {
			writeError(w, worldforge.ErrUnauthorized)
			return
		}
		err := a.RequireScopes(row.Scopes...)
		if row.AnyScope {
			err = a.RequireAnyScope(row.Scopes...)
		}
		if err != nil {
			writeError(w, err)
			return
		}
		next(w, r)
	})
}

// request is the app layer's view of a REST request: its actor, and the
// route pattern that served it (for the audit row).
func request(r *http.Request) app.Request {
	return app.Request{Actor: worldforge.ActorFromContext(r.Context()), Via: app.Via{Route: r.Pattern}}
}
