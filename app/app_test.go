package app_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/app"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// fixture is a store with a cast around one world: its owner, a GM, a
// player, an observer and a stranger, and rows of the owner's.
type fixture struct {
	t   *testing.T
	db  *sqlstore.DB
	svc *app.Service
	n   int

	owner, gm, player, observer, stranger *wf.User
	world                                 *wf.World
	campaign                              *wf.Campaign
	quest                                 *wf.Quest
	partyPOI, gmPOI                       *wf.POI
}

func newFixture(t *testing.T, db *sqlstore.DB) *fixture {
	t.Helper()
	ctx := t.Context()
	f := &fixture{t: t, db: db, svc: app.New(db)}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range []**wf.User{&f.owner, &f.gm, &f.player, &f.observer, &f.stranger} {
		*u = &wf.User{Name: fmt.Sprintf("user%d", f.next())}
		must(db.CreateUser(ctx, *u))
	}
	f.world = &wf.World{OwnerID: f.owner.ID, Name: "Appworld", Cols: 16, Rows: 12, JSON: json.RawMessage(`{"grid":{"cols":16,"rows":12}}`)}
	must(db.CreateWorld(ctx, f.world))
	must(db.AddWorldMember(ctx, f.world.ID, f.gm.ID, wf.RoleGM))
	must(db.AddWorldMember(ctx, f.world.ID, f.player.ID, wf.RolePlayer))
	must(db.AddWorldMember(ctx, f.world.ID, f.observer.ID, wf.RoleObserver))
	f.campaign = &wf.Campaign{OwnerID: f.owner.ID, WorldID: f.world.ID, Name: "Campaign"}
	must(db.CreateCampaign(ctx, f.campaign))
	f.quest = &wf.Quest{OwnerID: f.owner.ID, CampaignID: f.campaign.ID, WorldID: f.world.ID, Name: "Quest", JSON: json.RawMessage(`{"step":1}`)}
	must(db.CreateQuest(ctx, f.quest))
	f.partyPOI = &wf.POI{WorldID: f.world.ID, Name: "Party chest", X: 3, Y: 4, Visibility: wf.AudienceParty}
	must(db.CreatePOI(ctx, f.partyPOI))
	f.gmPOI = &wf.POI{WorldID: f.world.ID, Name: "Hidden chest", X: 5, Y: 4, Visibility: wf.AudienceGM}
	must(db.CreatePOI(ctx, f.gmPOI))
	return f
}

func (f *fixture) next() int { f.n++; return f.n }

// as is a request by u's API key holding scopes, through via.
func as(u *wf.User, via app.Via, scopes ...string) app.Request {
	return app.Request{Actor: &wf.Actor{UserID: u.ID, KeyID: "key_" + u.Name, Kind: wf.CredentialAPIKey, Scopes: scopes}, Via: via}
}

// lastAudit returns the newest audit row.
func (f *fixture) lastAudit() wf.AuditEntry {
	f.t.Helper()
	rows, err := f.db.ListAudit(f.t.Context(), wf.AuditFilter{Limit: 1})
	if err != nil || len(rows) == 0 {
		f.t.Fatalf("audit: %v, %d rows", err, len(rows))
	}
	return rows[0]
}

func (f *fixture) auditCount() int {
	f.t.Helper()
	n, err := f.db.CountAudit(f.t.Context(), wf.AuditFilter{})
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

// pending files a pending wiki page proposal of the owner's on the world,
// in changeset cs ("" for none).
func (f *fixture) pending(cs string) *wf.Proposal {
	f.t.Helper()
	payload, _ := json.Marshal(wf.WikiPagePayload{Title: fmt.Sprintf("Page %d", f.next()), Kind: wf.WikiKindLore, Audience: wf.AudienceGM})
	p := &wf.Proposal{Kind: wf.ProposalWikiPage, WorldID: f.world.ID, Payload: payload, DiffSummary: "test", ChangesetID: cs, ActorID: f.owner.ID}
	if err := f.db.CreateProposal(f.t.Context(), p, &wf.AuditEntry{ActorID: f.owner.ID, Tool: wf.ToolProposeWikiPage, Outcome: "ok"}); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// code is the wire text of err ("" for nil).
func code(err error) string {
	if err == nil {
		return ""
	}
	var e *wf.Error
	if !errors.As(err, &e) {
		return "internal: " + err.Error()
	}
	return e.Error()
}

// auditFields compares audit rows without their place in the log (Seq), id
// and time.
var auditFields = cmpopts.IgnoreFields(wf.AuditEntry{}, "Seq", "ID", "CreatedAt")

// TestOrder checks the order every operation keeps: scope check, owner
// resolution, then the role check, so that a stranger without the scopes
// learns missing_scopes and never whether the row exists; a failure at
// any step writes no audit row.
func TestOrder(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		via := app.Via{Tool: wf.ToolReadCampaign}
		unresolved := app.Request{Actor: &wf.Actor{KeyID: "key_x", Scopes: []string{wf.ScopeCampaignRead}}, Via: via}
		noOwnerNoScope := app.Request{Actor: &wf.Actor{KeyID: "key_x", Scopes: []string{wf.ScopeWikiRead}}, Via: via}
		cases := []struct {
			name string
			r    app.Request
			id   string
			want string
		}{
			{"stranger without the scope, someone else's row", as(f.stranger, via, wf.ScopeWikiRead), f.campaign.ID, "missing_scopes:campaign:read"},
			{"stranger without the scope, a missing row", as(f.stranger, via), "camp_missing", "missing_scopes:campaign:read"},
			{"no actor", app.Request{Via: via}, f.campaign.ID, "missing_scopes:unresolved_owner"},
			{"no owner, without the scope", noOwnerNoScope, f.campaign.ID, "missing_scopes:campaign:read"},
			{"no owner, with the scope", unresolved, f.campaign.ID, "missing_scopes:unresolved_owner"},
			{"stranger with the scope", as(f.stranger, via, wf.ScopeCampaignRead), f.campaign.ID, "not_found"},
			{"GM with the scope (owner only)", as(f.gm, via, wf.ScopeCampaignRead), f.campaign.ID, "not_found"},
			{"owner, a missing row", as(f.owner, via, wf.ScopeCampaignRead), "camp_missing", "not_found"},
			{"owner", as(f.owner, via, wf.ScopeCampaignRead), f.campaign.ID, ""},
			{"owner with every scope", as(f.owner, via, wf.ScopeAll), f.campaign.ID, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				f.t = t
				before := f.auditCount()
				cp, err := f.svc.ReadCampaign(t.Context(), tc.r, &wf.IDArgs{ID: tc.id})
				if got := code(err); got != tc.want {
					t.Fatalf("got %q, want %q", got, tc.want)
				}
				rows := 0
				if err == nil {
					rows = 1
					if cp.ID != f.campaign.ID {
						t.Errorf("read %s", cp.ID)
					}
					want := wf.AuditEntry{ActorID: f.owner.ID, KeyID: tc.r.Actor.KeyID, Tool: wf.ToolReadCampaign, TargetType: "campaign",
						TargetID: f.campaign.ID, WorldID: f.world.ID, Outcome: "ok"}
					if diff := cmp.Diff(want, f.lastAudit(), auditFields); diff != "" {
						t.Errorf("audit row (-want +got):\n%s", diff)
					}
				}
				if n := f.auditCount() - before; n != rows {
					t.Errorf("%d audit rows, want %d", n, rows)
				}
			})
		}
	})
}

// TestWho checks each Who of the access table on one operation of its,
// for every member of the cast holding the row's scopes.
func TestWho(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		ctx := t.Context()
		ops := map[app.Who]func(r app.Request) error{
			app.WhoOwner: func(r app.Request) error {
				_, err := f.svc.SearchPOIs(ctx, r, &wf.SearchPOIsArgs{WorldID: f.world.ID})
				return err
			},
			app.WhoOwnerOrGM: func(r app.Request) error {
				_, err := f.svc.GetWorldSummary(ctx, r, &wf.WorldArgs{WorldID: f.world.ID})
				return err
			},
			app.WhoGMWorlds: func(r app.Request) error {
				_, err := f.svc.SearchAtlasNodes(ctx, r, &wf.SearchAtlasNodesArgs{WorldID: f.world.ID})
				return err
			},
			app.WhoMember: func(r app.Request) error {
				_, err := f.svc.SearchWorldPOIs(ctx, r, f.world.ID, func(*wf.POIQuery) error { return nil })
				return err
			},
			app.WhoPlayerOrGM: func(r app.Request) error {
				_, err := f.svc.PlacePresence(ctx, r, f.world.ID, func(in *app.PresenceArgs) error {
					in.X, in.Y = new(int), new(int)
					return nil
				})
				return err
			},
			app.WhoRowOwnerOrGM: func(r app.Request) error {
				_, err := f.svc.ProposeQuest(ctx, r, &wf.ProposeQuestArgs{ID: f.quest.ID, DiffSummary: "rename", Payload: wf.QuestProposalFields{Name: "Renamed"}})
				return err
			},
			app.WhoReviewer: func(r app.Request) error {
				_, err := f.svc.RejectProposal(ctx, r, f.pending("").ID, "")
				return err
			},
		}
		refused := map[app.Who]string{app.WhoReviewer: "proposal_not_found"}
		// stranger, observer, player, GM, owner
		allowed := map[app.Who][5]bool{
			app.WhoOwner:        {false, false, false, false, true},
			app.WhoOwnerOrGM:    {false, false, false, true, true},
			app.WhoGMWorlds:     {false, false, false, true, true},
			app.WhoMember:       {false, true, true, true, true},
			app.WhoPlayerOrGM:   {false, false, true, true, true},
			app.WhoRowOwnerOrGM: {false, false, false, true, true},
			app.WhoReviewer:     {false, false, false, true, true},
		}
		rows := map[app.Who]app.Access{
			app.WhoOwner: mustRow(t, wf.ToolSearchPOIs, ""), app.WhoOwnerOrGM: mustRow(t, wf.ToolGetWorldSummary, ""),
			app.WhoGMWorlds: mustRow(t, wf.ToolSearchAtlasNodes, ""), app.WhoMember: mustRow(t, "", "GET /worlds/{id}/pois/search"),
			app.WhoPlayerOrGM: mustRow(t, "", "PUT /worlds/{id}/presence"), app.WhoRowOwnerOrGM: mustRow(t, wf.ToolProposeQuest, ""),
			app.WhoReviewer: mustRow(t, "", "POST /proposals/{id}/reject"),
		}
		for who, op := range ops {
			t.Run(who.String(), func(t *testing.T) {
				f.t = t
				row := rows[who]
				if row.Who != who {
					t.Fatalf("row %s is %v", row.Op, row.Who)
				}
				for i, u := range []*wf.User{f.stranger, f.observer, f.player, f.gm, f.owner} {
					want := ""
					if !allowed[who][i] {
						want = refused[who]
						if want == "" {
							want = "not_found"
						}
					}
					via := app.Via{Tool: row.Tool}
					if row.Tool == "" {
						via = app.Via{Route: row.Routes[0]}
					}
					if got := code(op(as(u, via, row.Scopes...))); got != want {
						t.Errorf("%s: got %q, want %q", u.Name, got, want)
					}
				}
			})
		}
	})
}

func mustRow(t *testing.T, tool, route string) app.Access {
	t.Helper()
	row, ok := app.ToolAccess(tool)
	if route != "" {
		row, ok = app.RouteAccess(route)
	}
	if !ok {
		t.Fatalf("no row for %q %q", tool, route)
	}
	return row
}

// TestPOISight checks what each role sees of a world's POIs over REST:
// the owner and GMs every POI, players and observers the party's (a
// query cannot ask for more), strangers nothing; the search_pois tool is
// the owner's only.
func TestPOISight(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		via := app.Via{Route: "GET /worlds/{id}/pois/search"}
		cases := []struct {
			u    *wf.User
			want []string
			err  string
		}{
			{f.owner, []string{f.partyPOI.ID, f.gmPOI.ID}, ""},
			{f.gm, []string{f.partyPOI.ID, f.gmPOI.ID}, ""},
			{f.player, []string{f.partyPOI.ID}, ""},
			{f.observer, []string{f.partyPOI.ID}, ""},
			{f.stranger, nil, "not_found"},
		}
		for _, tc := range cases {
			t.Run(tc.u.Name, func(t *testing.T) {
				f.t = t
				list, err := f.svc.SearchWorldPOIs(t.Context(), as(tc.u, via, wf.ScopeWorldRead), f.world.ID, func(q *wf.POIQuery) error {
					q.PartyOnly = false // the caller cannot widen its sight
					return nil
				})
				if got := code(err); got != tc.err {
					t.Fatalf("got %q, want %q", got, tc.err)
				}
				var ids []string
				for _, p := range list.POIs {
					ids = append(ids, p.ID)
				}
				if diff := cmp.Diff(tc.want, ids, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
					t.Errorf("POIs (-want +got):\n%s", diff)
				}
				if err == nil {
					want := wf.AuditEntry{ActorID: tc.u.ID, KeyID: "key_" + tc.u.Name, Route: via.Route, TargetType: "world",
						TargetID: f.world.ID, WorldID: f.world.ID, Outcome: "ok"}
					if diff := cmp.Diff(want, f.lastAudit(), auditFields); diff != "" {
						t.Errorf("audit row (-want +got):\n%s", diff)
					}
				}
			})
		}
		f.t = t
		// The tool: the owner only.
		tool := app.Via{Tool: wf.ToolSearchPOIs}
		if _, err := f.svc.SearchPOIs(t.Context(), as(f.gm, tool, wf.ScopeWorldRead), &wf.SearchPOIsArgs{WorldID: f.world.ID}); code(err) != "not_found" {
			t.Errorf("search_pois by the GM: %v", err)
		}
		list, err := f.svc.SearchPOIs(t.Context(), as(f.owner, tool, wf.ScopeWorldRead), &wf.SearchPOIsArgs{WorldID: f.world.ID})
		if err != nil || len(list.POIs) != 2 {
			t.Errorf("search_pois by the owner: %d POIs, %v", len(list.POIs), err)
		}
	})
}

// TestPresence checks presence placement: who places whom, the input read
// only once the role allows, and the audit row.
func TestPresence(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		via := app.Via{Route: "PUT /worlds/{id}/presence"}
		cases := []struct {
			name   string
			caller *wf.User
			userID string
			x, y   int
			who    *wf.User
			want   string
		}{
			{"player places themselves", f.player, "", 3, 5, f.player, ""},
			{"player names themselves", f.player, f.player.ID, 2, 2, f.player, ""},
			{"GM places the player", f.gm, f.player.ID, 1, 1, f.player, ""},
			{"owner places the GM", f.owner, f.gm.ID, 1, 2, f.gm, ""},
			{"player cannot place the GM", f.player, f.gm.ID, 1, 1, nil, "bad_request: a player places only themselves"},
			{"GM cannot place an observer", f.gm, f.observer.ID, 1, 1, nil, "bad_request: userId is not a player of this world"},
			{"GM cannot place a stranger", f.gm, f.stranger.ID, 1, 1, nil, "bad_request: userId is not a player of this world"},
			{"observer", f.observer, "", 1, 1, nil, "not_found"},
			{"stranger", f.stranger, "", 1, 1, nil, "not_found"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				f.t = t
				read := false
				p, err := f.svc.PlacePresence(t.Context(), as(tc.caller, via, wf.ScopeWorldWrite), f.world.ID, func(in *app.PresenceArgs) error {
					read = true
					in.X, in.Y, in.UserID = &tc.x, &tc.y, tc.userID
					return nil
				})
				if got := code(err); got != tc.want {
					t.Fatalf("got %q, want %q", got, tc.want)
				}
				if tc.want == "not_found" && read {
					t.Error("the input was read for a caller the role refuses")
				}
				if err != nil {
					return
				}
				if p.UserID != tc.who.ID || p.X != tc.x || p.Y != tc.y {
					t.Errorf("placed %+v", p)
				}
				want := wf.AuditEntry{ActorID: tc.caller.ID, KeyID: "key_" + tc.caller.Name, Route: via.Route, TargetType: "presence",
					TargetID: tc.who.ID, WorldID: f.world.ID, Outcome: "ok"}
				if diff := cmp.Diff(want, f.lastAudit(), auditFields); diff != "" {
					t.Errorf("audit row (-want +got):\n%s", diff)
				}
			})
		}
		f.t = t
		// Without x and y, and outside the grid.
		for _, in := range []app.PresenceArgs{{}, {X: ptr(16), Y: ptr(0)}} {
			_, err := f.svc.PlacePresence(t.Context(), as(f.player, via, wf.ScopeWorldWrite), f.world.ID, func(p *app.PresenceArgs) error {
				*p = in
				return nil
			})
			if !errors.Is(err, &wf.Error{Code: wf.EBadRequest}) {
				t.Errorf("%+v: %v, want bad_request", in, err)
			}
		}
	})
}

func ptr[T any](v T) *T { return &v }

// TestPageViewAudit: a console page view's read writes no audit row; a
// write marked as a page view is audited all the same.
func TestPageViewAudit(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		ctx := t.Context()
		r := as(f.owner, app.Via{Route: "console GET /w/{world}"}, wf.ScopeAll)
		r.PageView = true
		before := f.auditCount()
		if _, err := f.svc.GetWorldSummary(ctx, r, &wf.WorldArgs{WorldID: f.world.ID}); err != nil {
			t.Fatal(err)
		}
		if n := f.auditCount() - before; n != 0 {
			t.Errorf("a page view's read wrote %d audit rows", n)
		}
		r.PageView = false
		if _, err := f.svc.GetWorldSummary(ctx, r, &wf.WorldArgs{WorldID: f.world.ID}); err != nil {
			t.Fatal(err)
		}
		r.PageView = true
		if _, err := f.svc.CreateCampaign(ctx, r, &wf.CreateCampaignArgs{Name: "Viewed"}); err != nil {
			t.Fatal(err)
		}
		if n := f.auditCount() - before; n != 2 {
			t.Errorf("%d audit rows, want 2 (the read without PageView, the write)", n)
		}
	})
}
