package httpapi

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/argjson"
)

// The world routes that MCP does not carry (scopes: routes.go):
//
//	PUT  /worlds/{id}/presence     place a player on the grid
//	GET  /worlds/{id}/pois/search  POI search, query parameters
//	POST /worlds/{id}/pois/search  POI search, JSON body
//
// The POI search takes at most worldforge.MaxPOITags tags of at most
// worldforge.MaxPOITagLength characters, and a name and category of at
// most worldforge.MaxQueryLength (POIQuery.Check: the same bad_request as
// search_pois).
//
// Who may call: the world's owner and its GMs see every POI; players and
// observers see the POIs visible to the party; anyone else is 404
// not_found, as for a missing world (worldforge.POISightOf, the rule the
// player tools share). A player sets their own presence; the
// owner or a GM may place any owner, GM or player of the world by naming
// userId.

// presenceRequest is the body of PUT /worlds/{id}/presence.
type presenceRequest struct {
	X      *int   `json:"x"`
	Y      *int   `json:"y"`
	UserID string `json:"userId,omitempty"`
}

// caller returns the request's actor and its effective owner id (the
// gate has checked the scopes), or writes the error.
func caller(w http.ResponseWriter, r *http.Request) (*worldforge.Actor, string, bool) {
	a := worldforge.ActorFromContext(r.Context())
	if a == nil {
		writeError(w, worldforge.ErrUnauthorized)
		return nil, "", false
	}
	owner, err := a.Owner()
	if err != nil {
		writeError(w, err)
		return nil, "", false
	}
	return a, owner, true
}

// storeError reports a store failure: domain errors as they are, anything
// else logged and answered 500 internal.
func (s *Server) storeError(w http.ResponseWriter, op string, err error) {
	var e *worldforge.Error
	if !errors.As(err, &e) {
		s.log.Error(op, "err", err)
	}
	writeError(w, err)
}

// readJSON decodes a JSON object body strictly (unknown fields refused
// unless lenient, then dropped), within the body limit.
func (s *Server) readJSON(w http.ResponseWriter, r *http.Request, v any, lenient bool) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return worldforge.Errorf(worldforge.ETooLarge, "body exceeds %d bytes", mbe.Limit)
		}
		return worldforge.BadRequest("could not read the body")
	}
	if i := firstNonSpace(body); i < 0 || body[i] != '{' {
		return worldforge.BadRequest("the body must be a JSON object")
	}
	if bytes.Contains(body, []byte(`\u0000`)) {
		return worldforge.BadRequest("the body must not contain NUL characters")
	}
	// Unknown keys are refused (or, lenient, dropped) by their exact
	// spelling, integral numbers (7.0) pass for integers, and errors name
	// JSON paths, never Go types.
	if err := argjson.Decode(body, v, argjson.Options{Strict: !lenient}); err != nil {
		return worldforge.BadRequest("invalid body: %v", err)
	}
	return nil
}

// worldCaller is caller for a /worlds/{id}/… route: it also returns the
// world's id and the caller's role in it ("" for a stranger).
func (s *Server) worldCaller(w http.ResponseWriter, r *http.Request) (a *worldforge.Actor, owner, worldID, role string, ok bool) {
	if a, owner, ok = caller(w, r); !ok {
		return nil, "", "", "", false
	}
	worldID = r.PathValue("id")
	role, err := s.opts.Store.WorldRole(r.Context(), worldID, owner)
	if err != nil {
		s.storeError(w, r.Method+" "+r.URL.Path+": role", err)
		return nil, "", "", "", false
	}
	return a, owner, worldID, role, true
}

func (s *Server) putPresence(w http.ResponseWriter, r *http.Request) {
	a, owner, worldID, role, ok := s.worldCaller(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	if role != worldforge.RoleOwner && role != worldforge.RoleGM && role != worldforge.RolePlayer {
		writeError(w, worldforge.ErrNotFound)
		return
	}
	var req presenceRequest
	if err := s.readJSON(w, r, &req, false); err != nil {
		writeError(w, err)
		return
	}
	if req.X == nil || req.Y == nil {
		writeError(w, worldforge.BadRequest("x and y are required"))
		return
	}
	who := owner
	if req.UserID != "" && req.UserID != owner {
		if role == worldforge.RolePlayer {
			writeError(w, worldforge.BadRequest("a player places only themselves"))
			return
		}
		target, err := s.opts.Store.WorldRole(ctx, worldID, req.UserID)
		if err != nil {
			s.storeError(w, "presence: role", err)
			return
		}
		if target != worldforge.RoleOwner && target != worldforge.RoleGM && target != worldforge.RolePlayer {
			writeError(w, worldforge.BadRequest("userId is not a player of this world"))
			return
		}
		who = req.UserID
	}
	// The store refuses a cell outside the grid (bad_request), atomically
	// with a resize of the world.
	p := &worldforge.Presence{WorldID: worldID, UserID: who, X: *req.X, Y: *req.Y}
	if err := s.opts.Store.SetPresence(ctx, p); err != nil {
		s.storeError(w, "presence: set", err)
		return
	}
	if err := s.opts.Store.AppendAudit(ctx, &worldforge.AuditEntry{ActorID: owner, KeyID: a.KeyID,
		Route: "PUT /worlds/{id}/presence", TargetType: "presence", TargetID: who, WorldID: worldID, Outcome: "ok"}); err != nil {
		s.storeError(w, "presence: audit", err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (s *Server) searchPOIs(w http.ResponseWriter, r *http.Request) {
	a, owner, worldID, role, ok := s.worldCaller(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	var (
		q   worldforge.POIQuery
		err error
	)
	switch worldforge.POISightOf(role) {
	case worldforge.SeesAllPOIs:
	case worldforge.SeesPartyPOIs:
		q.PartyOnly = true
	default:
		writeError(w, worldforge.ErrNotFound)
		return
	}
	partyOnly := q.PartyOnly
	if r.Method == http.MethodPost {
		// Like the search_pois tool: unknown keys pass and are ignored.
		err = s.readJSON(w, r, &q, true)
	} else {
		err = poiQueryFromURL(r.URL.Query(), &q)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	q.PartyOnly = partyOnly // never from the client
	if q.Limit < 0 || q.Limit > worldforge.MaxPOILimit {
		writeError(w, worldforge.BadRequest("limit must be between 1 and %d", worldforge.MaxPOILimit))
		return
	}
	if err := q.Check(); err != nil {
		writeError(w, err)
		return
	}
	pois, err := s.opts.Store.SearchPOIs(ctx, worldID, q)
	if err != nil {
		s.storeError(w, "poi search", err)
		return
	}
	if err := s.opts.Store.AppendAudit(ctx, &worldforge.AuditEntry{ActorID: owner, KeyID: a.KeyID,
		Route: r.Method + " /worlds/{id}/pois/search", TargetType: "world", TargetID: worldID, WorldID: worldID, Outcome: "ok"}); err != nil {
		s.storeError(w, "poi search: audit", err)
		return
	}
	writeJSON(w, http.StatusOK, worldforge.POIList{POIs: pois})
}

// poiQueryFromURL reads a POI query from query parameters: name, category,
// tags (comma-separated or repeated), x, y, radiusPx, limit. Unknown
// parameters are ignored.
func poiQueryFromURL(v url.Values, q *worldforge.POIQuery) error {
	q.Name = v.Get("name")
	q.Category = v.Get("category")
	for _, t := range v["tags"] {
		for _, part := range strings.Split(t, ",") {
			if part = strings.TrimSpace(part); part != "" {
				q.Tags = append(q.Tags, part)
			}
		}
	}
	intParam := func(name string) (*int, error) {
		s := v.Get(name)
		if s == "" {
			return nil, nil
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, worldforge.BadRequest("%s must be an integer", name)
		}
		return &n, nil
	}
	var err error
	if q.X, err = intParam("x"); err != nil {
		return err
	}
	if q.Y, err = intParam("y"); err != nil {
		return err
	}
	if s := v.Get("radiusPx"); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return worldforge.BadRequest("radiusPx must be a number")
		}
		q.RadiusPx = &f
	}
	limit, err := intParam("limit")
	if err != nil {
		return err
	}
	if limit != nil {
		if *limit < 1 {
			return worldforge.BadRequest("limit must be between 1 and %d", worldforge.MaxPOILimit)
		}
		q.Limit = *limit
	}
	if strings.ContainsRune(q.Name+q.Category+strings.Join(q.Tags, ""), 0) {
		return worldforge.BadRequest("parameters must not contain NUL characters")
	}
	return nil
}
