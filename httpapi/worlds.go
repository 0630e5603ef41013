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
	"github.com/worldforge-go/worldforge/app"
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
// Who may call is the app layer's rule (app.Service.PlacePresence and
// SearchWorldPOIs): the world's owner and its GMs see every POI; players
// and observers see the POIs visible to the party; anyone else is 404
// not_found, as for a missing world. A player sets their own presence; the
// owner or a GM may place any owner, GM or player of the world by naming
// userId.

// presenceRequest is the body of PUT /worlds/{id}/presence.
type presenceRequest struct {
	X      *int   `json:"x"`
	Y      *int   `json:"y"`
	UserID string `json:"userId,omitempty"`
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
	body, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	return decodeJSON(body, v, lenient)
}

// readOptionalJSON is readJSON for a body that may be left out: an empty
// (or all white space) body leaves v as it is.
func (s *Server) readOptionalJSON(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := s.readBody(w, r)
	if err != nil || firstNonSpace(body) < 0 {
		return err
	}
	return decodeJSON(body, v, false)
}

// readBody reads the request body within the body limit.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, worldforge.Errorf(worldforge.ETooLarge, "body exceeds %d bytes", mbe.Limit)
		}
		return nil, worldforge.BadRequest("could not read the body")
	}
	return body, nil
}

// decodeJSON decodes a JSON object body strictly (unknown fields refused
// unless lenient, then dropped).
func decodeJSON(body []byte, v any, lenient bool) error {
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

func (s *Server) putPresence(w http.ResponseWriter, r *http.Request) {
	p, err := s.app.PlacePresence(r.Context(), request(r), r.PathValue("id"), func(in *app.PresenceArgs) error {
		var req presenceRequest
		if err := s.readJSON(w, r, &req, false); err != nil {
			return err
		}
		in.X, in.Y, in.UserID = req.X, req.Y, req.UserID
		return nil
	})
	if err != nil {
		s.storeError(w, "presence", err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (s *Server) searchPOIs(w http.ResponseWriter, r *http.Request) {
	list, err := s.app.SearchWorldPOIs(r.Context(), request(r), r.PathValue("id"), func(q *worldforge.POIQuery) error {
		if r.Method == http.MethodPost {
			// Like the search_pois tool: unknown keys pass and are ignored.
			return s.readJSON(w, r, q, true)
		}
		return poiQueryFromURL(r.URL.Query(), q)
	})
	if err != nil {
		s.storeError(w, "poi search", err)
		return
	}
	writeJSON(w, http.StatusOK, list)
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
