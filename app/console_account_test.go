package app_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/app"
	"github.com/worldforge-go/worldforge/auth"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// newAuth is an Authenticator on db without a credential cache, so a
// revocation shows at the next Authenticate.
func newAuth(t *testing.T, db *sqlstore.DB) *auth.Authenticator {
	t.Helper()
	a, err := auth.New(t.Context(), db, &auth.Options{CacheTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// keyIDs lists u's keys' ids.
func (f *fixture) keyIDs(u *wf.User) []string {
	f.t.Helper()
	keys, err := f.svc.ListAPIKeys(f.t.Context(), as(u, app.Via{Route: "console GET /keys"}))
	if err != nil {
		f.t.Fatal(err)
	}
	var ids []string
	for _, k := range keys {
		ids = append(ids, k.ID)
	}
	return ids
}

// TestAPIKeys checks minting, listing and revoking the caller's own
// keys: the audit rows, the scopes a caller may grant, and that a
// revoked key stops authenticating.
func TestAPIKeys(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		ctx := t.Context()
		a := newAuth(t, db)
		via := app.Via{Route: "console POST /keys"}

		if ids := f.keyIDs(f.owner); len(ids) != 0 {
			t.Fatalf("a new user has keys %v", ids)
		}
		before := f.auditCount()
		nk, err := f.svc.CreateAPIKey(ctx, as(f.owner, via, wf.ScopeAll), app.KeyArgs{Name: " agent ", Scopes: []string{wf.ScopeWikiRead, wf.ScopeWorldRead, wf.ScopeWikiRead}}, a.MintKey)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(nk.Secret, auth.KeyPrefix) || nk.Key.Name != "agent" || !slices.Equal(nk.Key.Scopes, []string{wf.ScopeWikiRead, wf.ScopeWorldRead}) {
			t.Errorf("minted %+v", nk.Key)
		}
		if n := f.auditCount() - before; n != 1 {
			t.Errorf("minting wrote %d audit rows", n)
		}
		got := f.lastAudit()
		want := wf.AuditEntry{ActorID: f.owner.ID, KeyID: "key_" + f.owner.Name, Route: "console POST /keys", TargetType: "api_key", TargetID: nk.Key.ID, Outcome: "ok"}
		if got.Seq == 0 {
			t.Errorf("audit row without a seq")
		}
		got.Seq = 0
		if got.ID == "" || got.CreatedAt.IsZero() {
			t.Errorf("audit row %+v", got)
		}
		got.ID, got.CreatedAt = "", time.Time{}
		if got != want {
			t.Errorf("audit row %+v, want %+v", got, want)
		}
		actor, err := a.Authenticate(ctx, nk.Secret)
		if err != nil || actor.UserID != f.owner.ID || actor.KeyID != nk.Key.ID {
			t.Fatalf("the new key authenticates as %v, %v", actor, err)
		}
		if ids := f.keyIDs(f.owner); !slices.Equal(ids, []string{nk.Key.ID}) {
			t.Errorf("owner's keys %v", ids)
		}
		if ids := f.keyIDs(f.stranger); len(ids) != 0 {
			t.Errorf("the stranger lists keys %v", ids)
		}

		// A key listing writes no audit row.
		before = f.auditCount()
		f.keyIDs(f.owner)
		if n := f.auditCount() - before; n != 0 {
			t.Errorf("listing wrote %d audit rows", n)
		}

		long := strings.Repeat("k", auth.MaxKeyName+1)
		bad := []struct {
			name string
			r    app.Request
			args app.KeyArgs
			want string
		}{
			{"no scopes", as(f.owner, via, wf.ScopeAll), app.KeyArgs{Name: "x"}, "bad_request: an API key needs at least one scope"},
			{"blank scope", as(f.owner, via, wf.ScopeAll), app.KeyArgs{Name: "x", Scopes: []string{" "}}, `bad_request: unknown scope "" (known: ` + strings.Join(wf.AllScopes, ",") + ")"},
			{"unknown scope", as(f.owner, via, wf.ScopeAll), app.KeyArgs{Name: "x", Scopes: []string{"world:read", "root"}}, `bad_request: unknown scope "root" (known: ` + strings.Join(wf.AllScopes, ",") + ")"},
			{"two scopes in one", as(f.owner, via, wf.ScopeAll), app.KeyArgs{Name: "x", Scopes: []string{"world:read,wiki:read"}}, `bad_request: unknown scope "world:read,wiki:read" (known: ` + strings.Join(wf.AllScopes, ",") + ")"},
			{"long name", as(f.owner, via, wf.ScopeAll), app.KeyArgs{Name: long, Scopes: []string{wf.ScopeWorldRead}}, fmt.Sprintf("bad_request: a key name is at most %d characters, without control characters", auth.MaxKeyName)},
			{"control character", as(f.owner, via, wf.ScopeAll), app.KeyArgs{Name: "a\nb", Scopes: []string{wf.ScopeWorldRead}}, fmt.Sprintf("bad_request: a key name is at most %d characters, without control characters", auth.MaxKeyName)},
			{"wider than the caller", as(f.owner, via, wf.ScopeWorldRead, wf.ScopeWikiRead), app.KeyArgs{Name: "x", Scopes: []string{wf.ScopeWorldRead, wf.ScopeWikiPropose, wf.ScopeLorePropose}}, "missing_scopes:wiki:propose,lore:propose"},
			{"every scope from a limited key", as(f.owner, via, wf.ScopeWorldRead), app.KeyArgs{Name: "x", Scopes: []string{wf.ScopeAll}}, "missing_scopes:*"},
			{"no owner", app.Request{Actor: &wf.Actor{KeyID: "key_x", Scopes: []string{wf.ScopeAll}}, Via: via}, app.KeyArgs{Name: "x", Scopes: []string{wf.ScopeWorldRead}}, "missing_scopes:unresolved_owner"},
		}
		for _, tc := range bad {
			t.Run(tc.name, func(t *testing.T) {
				f.t = t
				before := f.auditCount()
				if _, err := f.svc.CreateAPIKey(ctx, tc.r, tc.args, a.MintKey); code(err) != tc.want {
					t.Errorf("got %q, want %q", code(err), tc.want)
				}
				if n := f.auditCount() - before; n != 0 {
					t.Errorf("%d audit rows", n)
				}
				if ids := f.keyIDs(f.owner); !slices.Equal(ids, []string{nk.Key.ID}) {
					t.Errorf("owner's keys now %v", ids)
				}
			})
		}
		f.t = t

		// A caller holding the scopes may mint them, every scope included.
		narrow, err := f.svc.CreateAPIKey(ctx, as(f.owner, via, wf.ScopeWorldRead, wf.ScopeWikiRead), app.KeyArgs{Scopes: []string{wf.ScopeWikiRead}}, a.MintKey)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.CreateAPIKey(ctx, as(f.owner, via, wf.ScopeAll), app.KeyArgs{Name: "all", Scopes: []string{wf.ScopeAll}}, a.MintKey); err != nil {
			t.Fatal(err)
		}

		revoke := app.Via{Route: "console POST /keys/{id}/revoke"}
		for _, tc := range []struct {
			name string
			r    app.Request
			id   string
			want string
		}{
			{"someone else's", as(f.stranger, revoke), nk.Key.ID, "not_found"},
			{"the world's GM", as(f.gm, revoke), nk.Key.ID, "not_found"},
			{"missing", as(f.owner, revoke), wf.NewID("key"), "not_found"},
			{"malformed", as(f.owner, revoke), "key_'; DROP TABLE api_keys", `bad_request: "key_'; DROP TABLE api_keys" is not an API key id`},
			{"empty", as(f.owner, revoke), "", `bad_request: "" is not an API key id`},
		} {
			t.Run("revoke "+tc.name, func(t *testing.T) {
				f.t = t
				before := f.auditCount()
				if err := f.svc.RevokeAPIKey(ctx, tc.r, tc.id); code(err) != tc.want {
					t.Errorf("got %q, want %q", code(err), tc.want)
				}
				if n := f.auditCount() - before; n != 0 {
					t.Errorf("%d audit rows", n)
				}
				if _, err := a.Authenticate(ctx, nk.Secret); err != nil {
					t.Errorf("the key stopped working: %v", err)
				}
			})
		}
		f.t = t

		before = f.auditCount()
		if err := f.svc.RevokeAPIKey(ctx, as(f.owner, revoke), nk.Key.ID); err != nil {
			t.Fatal(err)
		}
		if n := f.auditCount() - before; n != 1 {
			t.Errorf("revoking wrote %d audit rows", n)
		}
		if row := f.lastAudit(); row.TargetType != "api_key" || row.TargetID != nk.Key.ID || row.Route != revoke.Route || row.ActorID != f.owner.ID {
			t.Errorf("revoke audit row %+v", row)
		}
		if _, err := a.Authenticate(ctx, nk.Secret); wf.ErrorCode(err) != wf.EUnauthorized {
			t.Errorf("a revoked key authenticates: %v", err)
		}
		if err := f.svc.RevokeAPIKey(ctx, as(f.owner, revoke), nk.Key.ID); err != nil {
			t.Errorf("revoking twice: %v", err)
		}
		keys, err := f.svc.ListAPIKeys(ctx, as(f.owner, app.Via{}))
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 3 {
			t.Fatalf("%d keys", len(keys))
		}
		for _, k := range keys {
			if revoked := k.RevokedAt != nil; revoked != (k.ID == nk.Key.ID) {
				t.Errorf("key %s (%s) revoked %v", k.ID, k.Name, revoked)
			}
		}
		if _, err := a.Authenticate(ctx, narrow.Secret); err != nil {
			t.Errorf("another key stopped working: %v", err)
		}
	})
}

// auditCast writes audit rows of the fixture's cast: for each user, one
// on the fixture's world, one on a world of the stranger's and one
// outside any world, an hour apart from base on.
func (f *fixture) auditCast(base time.Time) (other *wf.World, rows []wf.AuditEntry) {
	f.t.Helper()
	ctx := f.t.Context()
	other = &wf.World{OwnerID: f.stranger.ID, Name: "Elsewhere", Cols: 8, Rows: 8, JSON: json.RawMessage(`{"grid":{"cols":8,"rows":8}}`)}
	if err := f.db.CreateWorld(ctx, other); err != nil {
		f.t.Fatal(err)
	}
	at := base
	for _, u := range []*wf.User{f.owner, f.gm, f.player, f.observer, f.stranger} {
		for i, world := range []string{f.world.ID, other.ID, ""} {
			e := wf.AuditEntry{ActorID: u.ID, KeyID: "key_" + u.Name, Tool: wf.ToolReadWorld, TargetType: "world", TargetID: world,
				WorldID: world, Outcome: "ok", CreatedAt: at}
			if i == 2 {
				e.Tool, e.Route, e.Outcome = "", "POST /proposals/{id}/reject", "rejected"
			}
			if err := f.db.AppendAudit(ctx, &e); err != nil {
				f.t.Fatal(err)
			}
			rows = append(rows, e)
			at = at.Add(time.Hour)
		}
	}
	return other, rows
}

// audit lists every page of q for u, checking each page's size and that
// listing writes no audit row.
func (f *fixture) audit(u *wf.User, q app.AuditQuery) []wf.AuditEntry {
	f.t.Helper()
	ctx := f.t.Context()
	before := f.auditCount()
	var out []wf.AuditEntry
	for pages := 0; ; pages++ {
		if pages > 100 {
			f.t.Fatal("more than 100 pages")
		}
		page, err := f.svc.ListAudit(ctx, as(u, app.Via{Route: "console GET /audit"}, wf.ScopeWorldRead), q)
		if err != nil {
			f.t.Fatal(err)
		}
		limit := q.Limit
		if limit == 0 {
			limit = app.AuditPageDefault
		}
		if page.NextSeq > 0 && (len(page.Entries) != limit || page.NextSeq != page.Entries[limit-1].Seq) {
			f.t.Fatalf("a page of %d rows before another (next %d)", len(page.Entries), page.NextSeq)
		}
		out = append(out, page.Entries...)
		if page.NextSeq == 0 {
			break
		}
		q.BeforeSeq = page.NextSeq
	}
	if n := f.auditCount() - before; n != 0 {
		f.t.Errorf("listing the audit log wrote %d rows", n)
	}
	for i := 1; i < len(out); i++ {
		if out[i].Seq >= out[i-1].Seq {
			f.t.Fatalf("rows out of order: seq %d after %d", out[i].Seq, out[i-1].Seq)
		}
	}
	return out
}

// TestAuditWhoSeesWhat checks that each caller reads only their own audit
// rows and those of the worlds they own or run as GM, whatever they
// filter by.
func TestAuditWhoSeesWhat(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		// Every other row is older than base: the cast's rows are the
		// only ones from base on.
		base := time.Now().UTC().Add(24 * time.Hour).Truncate(time.Millisecond)
		other, rows := f.auditCast(base)
		type key struct{ actor, world string }
		ids := func(es []wf.AuditEntry) []key {
			var out []key
			for _, e := range es {
				out = append(out, key{e.ActorID, e.WorldID})
			}
			slices.SortFunc(out, func(a, b key) int { return strings.Compare(a.actor+"/"+a.world, b.actor+"/"+b.world) })
			return out
		}
		visible := func(u *wf.User, pred func(e wf.AuditEntry) bool) []key {
			var want []wf.AuditEntry
			for _, e := range rows {
				mine := e.ActorID == u.ID
				runs := e.WorldID == f.world.ID && (u == f.owner || u == f.gm) || e.WorldID == other.ID && u == f.stranger
				if (mine || runs) && pred(e) {
					want = append(want, e)
				}
			}
			return ids(want)
		}
		all := func(wf.AuditEntry) bool { return true }
		for _, u := range []*wf.User{f.owner, f.gm, f.player, f.observer, f.stranger} {
			t.Run(u.Name, func(t *testing.T) {
				f.t = t
				got := ids(f.audit(u, app.AuditQuery{Since: base, Limit: 2}))
				if want := visible(u, all); !slices.Equal(got, want) {
					t.Errorf("sees %v, want %v", got, want)
				}
				// Filtering by another's actor id shows only what the
				// caller may read of theirs.
				got = ids(f.audit(u, app.AuditQuery{Since: base, ActorID: f.owner.ID}))
				if want := visible(u, func(e wf.AuditEntry) bool { return e.ActorID == f.owner.ID }); !slices.Equal(got, want) {
					t.Errorf("owner's rows: sees %v, want %v", got, want)
				}
				got = ids(f.audit(u, app.AuditQuery{Since: base, Outcome: "rejected", Route: "POST /proposals/{id}/reject"}))
				if want := visible(u, func(e wf.AuditEntry) bool { return e.Outcome == "rejected" }); !slices.Equal(got, want) {
					t.Errorf("rejections: sees %v, want %v", got, want)
				}
				got = ids(f.audit(u, app.AuditQuery{Since: base, KeyID: "key_" + f.stranger.Name, Tool: wf.ToolReadWorld}))
				if want := visible(u, func(e wf.AuditEntry) bool { return e.ActorID == f.stranger.ID && e.Tool == wf.ToolReadWorld }); !slices.Equal(got, want) {
					t.Errorf("the stranger's key: sees %v, want %v", got, want)
				}
				// A world filter must name a world the caller owns or runs.
				_, err := f.svc.ListAudit(t.Context(), as(u, app.Via{}, wf.ScopeWorldRead), app.AuditQuery{WorldID: f.world.ID})
				if runs := u == f.owner || u == f.gm; runs != (err == nil) || !runs && code(err) != "not_found" {
					t.Errorf("filtering by the world: %v", err)
				}
				if err == nil {
					got = ids(f.audit(u, app.AuditQuery{Since: base, WorldID: f.world.ID}))
					if want := visible(u, func(e wf.AuditEntry) bool { return e.WorldID == f.world.ID }); !slices.Equal(got, want) || len(got) != 5 {
						t.Errorf("the world's rows: sees %v, want %v", got, want)
					}
				}
			})
		}
		f.t = t

		// The time range: Since <= CreatedAt < Until.
		got := f.audit(f.stranger, app.AuditQuery{Since: base.Add(time.Hour), Until: base.Add(5 * time.Hour)})
		if want := ids([]wf.AuditEntry{rows[1], rows[4]}); !slices.Equal(ids(got), want) {
			t.Errorf("the stranger from 1h to 5h: %v, want %v", ids(got), want)
		}

		// The default page and the walk through all.
		for range 60 {
			if err := db.AppendAudit(t.Context(), &wf.AuditEntry{ActorID: f.player.ID, Tool: wf.ToolPlayerOpen, Outcome: "ok"}); err != nil {
				t.Fatal(err)
			}
		}
		page, err := f.svc.ListAudit(t.Context(), as(f.player, app.Via{}, wf.ScopeWorldRead), app.AuditQuery{Tool: wf.ToolPlayerOpen})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entries) != app.AuditPageDefault || page.NextSeq != page.Entries[app.AuditPageDefault-1].Seq {
			t.Errorf("first page: %d rows, next %d", len(page.Entries), page.NextSeq)
		}
		if n := len(f.audit(f.player, app.AuditQuery{Tool: wf.ToolPlayerOpen})); n != 60 {
			t.Errorf("%d rows in all pages, want 60", n)
		}
		if n := len(f.audit(f.player, app.AuditQuery{Tool: wf.ToolPlayerOpen, Limit: app.AuditPageMax})); n != 60 {
			t.Errorf("%d rows in one big page, want 60", n)
		}
		if n := len(f.audit(f.owner, app.AuditQuery{Tool: wf.ToolPlayerOpen})); n != 0 {
			t.Errorf("the owner sees %d of the player's rows outside the world", n)
		}
	})
}

// TestAuditBadQuery checks the queries ListAudit refuses, before any
// store work.
func TestAuditBadQuery(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		now := time.Now()
		for _, tc := range []struct {
			name string
			r    app.Request
			q    app.AuditQuery
			want string
		}{
			{"unknown outcome", as(f.owner, app.Via{}, wf.ScopeWorldRead), app.AuditQuery{Outcome: "nope"}, `bad_request: unknown outcome "nope" (known: ok, committed, rejected, auto_accepted)`},
			{"since after until", as(f.owner, app.Via{}, wf.ScopeWorldRead), app.AuditQuery{Since: now, Until: now.Add(-time.Hour)}, "bad_request: since (" + now.UTC().Format("2006-01-02 15:04:05") + ") must be before until (" + now.Add(-time.Hour).UTC().Format("2006-01-02 15:04:05") + ")"},
			{"empty range", as(f.owner, app.Via{}, wf.ScopeWorldRead), app.AuditQuery{Since: now, Until: now}, "bad_request: since (" + now.UTC().Format("2006-01-02 15:04:05") + ") must be before until (" + now.UTC().Format("2006-01-02 15:04:05") + ")"},
			{"negative limit", as(f.owner, app.Via{}, wf.ScopeWorldRead), app.AuditQuery{Limit: -1}, "bad_request: limit must be between 1 and 500"},
			{"limit too big", as(f.owner, app.Via{}, wf.ScopeWorldRead), app.AuditQuery{Limit: app.AuditPageMax + 1}, "bad_request: limit must be between 1 and 500"},
			{"negative before", as(f.owner, app.Via{}, wf.ScopeWorldRead), app.AuditQuery{BeforeSeq: -5}, "bad_request: before must be a positive position in the log"},
			{"long actor", as(f.owner, app.Via{}, wf.ScopeWorldRead), app.AuditQuery{ActorID: strings.Repeat("u", 101)}, "bad_request: actor has 101 characters; at most 100"},
			{"long route", as(f.owner, app.Via{}, wf.ScopeWorldRead), app.AuditQuery{Route: strings.Repeat("r", 201)}, "bad_request: route has 201 characters; at most 200"},
			{"a missing world", as(f.owner, app.Via{}, wf.ScopeWorldRead), app.AuditQuery{WorldID: wf.NewID("world")}, "not_found"},
			{"a player's world", as(f.player, app.Via{}, wf.ScopeWorldRead), app.AuditQuery{WorldID: f.world.ID}, "not_found"},
			{"without world:read", as(f.owner, app.Via{}, wf.ScopeWikiRead), app.AuditQuery{}, "missing_scopes:world:read"},
			{"no owner", app.Request{Actor: &wf.Actor{KeyID: "key_x", Scopes: []string{wf.ScopeAll}}}, app.AuditQuery{}, "missing_scopes:unresolved_owner"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				page, err := f.svc.ListAudit(t.Context(), tc.r, tc.q)
				if code(err) != tc.want {
					t.Errorf("got %q, want %q", code(err), tc.want)
				}
				if page != nil {
					t.Errorf("a page of %d rows", len(page.Entries))
				}
			})
		}
	})
}
