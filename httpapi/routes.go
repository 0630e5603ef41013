package httpapi

import (
	"net/http"

	"github.com/worldforge-go/worldforge"
)

// route is one REST route: its pattern, the scopes an API key needs to
// pass the route at all (the path-level gate; a session JWT's "*" passes
// every one), and its handler. Beyond the gate each handler applies the
// owner / GM / member rules of the world it touches.
type route struct {
	pattern string
	scopes  []string
	handler http.HandlerFunc
}

// routes is the REST surface and its route → scope table, which the
// README reproduces.
func (s *Server) routes() []route {
	read, write := []string{worldforge.ScopeWorldRead}, []string{worldforge.ScopeWorldWrite}
	return []route{
		{"GET /me", nil, s.serveMe},
		{"PUT /worlds/{id}/presence", write, s.putPresence},
		{"GET /worlds/{id}/pois/search", read, s.searchPOIs},
		{"POST /worlds/{id}/pois/search", read, s.searchPOIs},
		{"GET /worlds/{id}/proposals", read, s.listProposals},
		{"GET /proposals/{id}", read, s.getProposal},
		{"POST /proposals/{id}/commit", write, s.commitProposal},
		{"POST /proposals/{id}/reject", write, s.rejectProposal},
		{"POST /worlds/{id}/changesets/{changeset}/commit", write, s.commitChangeset},
		{"GET /auto-accept-rules", read, s.listRules},
		{"POST /auto-accept-rules", write, s.createRule},
		{"DELETE /auto-accept-rules/{id}", write, s.deleteRule},
	}
}

// gate refuses an actor without every one of scopes (missing_scopes, 403).
func gate(scopes []string, next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := worldforge.ActorFromContext(r.Context())
		if a == nil {
			writeError(w, worldforge.ErrUnauthorized)
			return
		}
		if err := a.RequireScopes(scopes...); err != nil {
			writeError(w, err)
			return
		}
		next(w, r)
	})
}
