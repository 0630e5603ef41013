package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/app"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// restFixture is what the REST access matrix calls the routes on: the
// test server's cast and rows plus an observer of the shared world.
type restFixture struct {
	*testserver.Server
	t        *testing.T
	observer *wf.User
	n        atomic.Int64
}

// restMatrixCase builds one route's request for a call by the given
// user; it may prepare state first (a pending proposal, a rule of the
// caller's), and the matrix counts audit rows only after.
type restMatrixCase struct {
	req func(f *restFixture, caller *wf.User) (path, body string)
	// status is a success's HTTP status (200 unless given).
	status int
}

// pending files a pending wiki page proposal on the shared world by its
// owner, in changeset cs ("" for none), and returns its id.
func (f *restFixture) pending(cs string) string {
	f.t.Helper()
	payload, _ := json.Marshal(wf.WikiPagePayload{Title: fmt.Sprintf("Page %d", f.n.Add(1)), Kind: wf.WikiKindLore, Audience: wf.AudienceGM})
	p := &wf.Proposal{Kind: wf.ProposalWikiPage, WorldID: f.World.ID, Payload: payload, DiffSummary: "matrix", ChangesetID: cs, ActorID: f.Owner.ID}
	if err := f.DB.CreateProposal(f.t.Context(), p, &wf.AuditEntry{ActorID: f.Owner.ID, Tool: wf.ToolProposeWikiPage, Outcome: "ok"}); err != nil {
		f.t.Fatal(err)
	}
	return p.ID
}

// restMatrixCases has one entry per REST route pattern;
// TestRESTAccessMatrix fails when a route of the access table has none
// (or this has one no route serves).
var restMatrixCases = map[string]restMatrixCase{
	"GET /me": {req: func(*restFixture, *wf.User) (string, string) { return "/me", "" }},
	"PUT /worlds/{id}/presence": {req: func(f *restFixture, _ *wf.User) (string, string) {
		return "/worlds/" + f.World.ID + "/presence", `{"x":2,"y":2}`
	}},
	"GET /worlds/{id}/pois/search": {req: func(f *restFixture, _ *wf.User) (string, string) {
		return "/worlds/" + f.World.ID + "/pois/search?name=chest", ""
	}},
	"POST /worlds/{id}/pois/search": {req: func(f *restFixture, _ *wf.User) (string, string) {
		return "/worlds/" + f.World.ID + "/pois/search", `{"name":"chest"}`
	}},
	"GET /worlds/{id}/proposals": {req: func(f *restFixture, _ *wf.User) (string, string) {
		return "/worlds/" + f.World.ID + "/proposals", ""
	}},
	"GET /proposals/{id}": {req: func(f *restFixture, _ *wf.User) (string, string) {
		return "/proposals/" + f.pending(""), ""
	}},
	"POST /proposals/{id}/commit": {req: func(f *restFixture, _ *wf.User) (string, string) {
		return "/proposals/" + f.pending("") + "/commit", ""
	}},
	"POST /proposals/{id}/reject": {req: func(f *restFixture, _ *wf.User) (string, string) {
		return "/proposals/" + f.pending("") + "/reject", ""
	}},
	"POST /worlds/{id}/changesets/{changeset}/commit": {req: func(f *restFixture, _ *wf.User) (string, string) {
		cs := fmt.Sprintf("cs%d", f.n.Add(1))
		f.pending(cs)
		return "/worlds/" + f.World.ID + "/changesets/" + cs + "/commit", ""
	}},
	"GET /auto-accept-rules": {req: func(*restFixture, *wf.User) (string, string) { return "/auto-accept-rules", "" }},
	"POST /auto-accept-rules": {req: func(f *restFixture, _ *wf.User) (string, string) {
		return "/auto-accept-rules", `{"actorId":"` + f.Player.ID + `"}`
	}, status: http.StatusCreated},
	"DELETE /auto-accept-rules/{id}": {req: func(f *restFixture, caller *wf.User) (string, string) {
		r := &wf.AutoAcceptRule{OwnerID: caller.ID, ActorID: f.Player.ID, Kinds: []string{}}
		if err := f.DB.CreateAutoAcceptRule(f.t.Context(), r); err != nil {
			f.t.Fatal(err)
		}
		return "/auto-accept-rules/" + r.ID, ""
	}, status: http.StatusNoContent},
}

// TestRESTAccessMatrix checks every REST route against its row of the app
// layer's access table (app.Table, the one the tools' rows come from): the
// route's gate holds the row's scopes; a key without them gets 403
// missing_scopes naming them; the stranger, observer, player, GM and
// owner, each holding exactly the row's scopes, get what the row's Who
// allows (404 not_found, or proposal_not_found for a proposal, as for a
// missing id, to the others); and the audit log gains one row per success
// (none for a NoAudit row) and none per failure.
func TestRESTAccessMatrix(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := testserver.Start(t, db)
		f := &restFixture{Server: s, t: t, observer: &wf.User{Name: "Observer"}}
		if err := db.CreateUser(t.Context(), f.observer); err != nil {
			t.Fatal(err)
		}
		if err := db.AddWorldMember(t.Context(), s.World.ID, f.observer.ID, wf.RoleObserver); err != nil {
			t.Fatal(err)
		}

		// Every row is served: by a registered tool, or by routes.
		tools := map[string]bool{}
		for _, row := range s.Tools.AccessTable() {
			tools[row.Tool] = true
		}
		gates := s.API.RouteScopes()
		var rows []app.Access
		for _, row := range app.Table() {
			if row.Tool == "" && len(row.Routes) == 0 && len(row.Console) == 0 {
				t.Errorf("%s: served by no tool, no route and not by the console", row.Op)
			}
			if row.Tool != "" && !tools[row.Tool] {
				t.Errorf("%s: tool %s is not registered", row.Op, row.Tool)
			}
			if len(row.Routes) > 0 {
				rows = append(rows, row)
			}
		}
		routes := 0
		for _, row := range rows {
			for _, pattern := range row.Routes {
				routes++
				if _, ok := restMatrixCases[pattern]; !ok {
					t.Errorf("%s: no REST matrix case", pattern)
				}
				if g, ok := gates[pattern]; !ok || !slices.Equal(g, row.Scopes) {
					t.Errorf("%s: gate %v (registered %v), row %v", pattern, g, ok, row.Scopes)
				}
			}
		}
		if len(restMatrixCases) != routes || len(gates) != routes {
			t.Errorf("%d REST matrix cases and %d registered routes for %d routes in the access table", len(restMatrixCases), len(gates), routes)
		}

		for _, row := range rows {
			for _, pattern := range row.Routes {
				t.Run(pattern, func(t *testing.T) {
					f.t = t
					tc := restMatrixCases[pattern]
					if tc.req == nil {
						t.Fatal("no case")
					}
					method, _, _ := strings.Cut(pattern, " ")
					success := cmpOr(tc.status, http.StatusOK)
					expect := func(token, who string, caller *wf.User, wantStatus int, wantCode string) {
						t.Helper()
						path, body := tc.req(f, caller)
						before := s.AuditCount(t)
						status, got := rest(t, method, s.URL+path, token, body)
						if status != wantStatus {
							t.Errorf("%s: %d %s, want %d %s", who, status, got, wantStatus, wantCode)
						}
						if wantCode != "" {
							var e struct{ Error, Detail string }
							_ = json.Unmarshal([]byte(got), &e)
							if code := strings.TrimSuffix(e.Error+":"+e.Detail, ":"); code != wantCode {
								t.Errorf("%s: error %q, want %q", who, code, wantCode)
							}
						}
						rows := 0
						if status == success && !row.NoAudit {
							rows = 1
						}
						if n := s.AuditCount(t) - before; n != rows {
							t.Errorf("%s: %d new audit rows, want %d", who, n, rows)
						}
					}
					everyScope := slices.DeleteFunc(slices.Clone(wf.AllScopes), func(sc string) bool { return sc == wf.ScopeAll })
					if len(row.Scopes) > 0 {
						unrelated := slices.IndexFunc(everyScope, func(sc string) bool { return !slices.Contains(row.Scopes, sc) })
						expect(s.Key(t, s.Owner, everyScope[unrelated]), "key without the scopes", s.Owner, http.StatusForbidden,
							"missing_scopes:"+strings.Join(row.Scopes, ","))
					}
					token := func(u *wf.User) string {
						if len(row.Scopes) == 0 {
							return s.Token(t, u)
						}
						return s.Key(t, u, row.Scopes...)
					}
					refused := "not_found"
					if row.Who == app.WhoReviewer {
						refused = "proposal_not_found"
					}
					// Who may reach the owner's world: stranger, observer,
					// player, GM, owner.
					allowed, ok := map[app.Who][5]bool{
						app.WhoSelf:       {true, true, true, true, true},
						app.WhoMember:     {false, true, true, true, true},
						app.WhoPlayerOrGM: {false, false, true, true, true},
						app.WhoOwnerOrGM:  {false, false, false, true, true},
						app.WhoReviewer:   {false, false, false, true, true},
					}[row.Who]
					if !ok {
						t.Fatalf("no expectations for %v", row.Who)
					}
					for i, u := range []*wf.User{s.Stranger, f.observer, s.Player, s.GM, s.Owner} {
						if allowed[i] {
							expect(token(u), u.Name, u, success, "")
						} else {
							expect(token(u), u.Name, u, http.StatusNotFound, refused)
						}
					}
				})
			}
		}
	})
}

func cmpOr(v, def int) int {
	if v != 0 {
		return v
	}
	return def
}
