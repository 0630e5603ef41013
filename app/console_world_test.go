package app_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/app"
	"github.com/worldforge-go/worldforge/engine"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/sqlstoretest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

var consoleVia = app.Via{Route: "console GET /w/{world}"}

// noSeq leaves out an audit row's position in the log.
var noSeq = cmpopts.IgnoreFields(wf.AuditEntry{}, "Seq")

func TestWorldMapWho(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		ctx := t.Context()
		if err := db.SetPresence(ctx, &wf.Presence{WorldID: f.world.ID, UserID: f.player.ID, X: 2, Y: 3}); err != nil {
			t.Fatal(err)
		}
		audits := f.auditCount()
		cases := []struct {
			name  string
			r     app.Request
			world string
			want  string
			role  string
		}{
			{"owner", as(f.owner, consoleVia, wf.ScopeWorldRead), f.world.ID, "", wf.RoleOwner},
			{"gm", as(f.gm, consoleVia, wf.ScopeWorldRead), f.world.ID, "", wf.RoleGM},
			{"player", as(f.player, consoleVia, wf.ScopeWorldRead), f.world.ID, "not_found", ""},
			{"observer", as(f.observer, consoleVia, wf.ScopeWorldRead), f.world.ID, "not_found", ""},
			{"stranger", as(f.stranger, consoleVia, wf.ScopeWorldRead), f.world.ID, "not_found", ""},
			{"owner, missing world", as(f.owner, consoleVia, wf.ScopeWorldRead), "world_missing", "not_found", ""},
			{"owner without world:read", as(f.owner, consoleVia, wf.ScopeWikiRead), f.world.ID, "missing_scopes:world:read", ""},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				d, err := f.svc.WorldMap(ctx, c.r, c.world)
				if code(err) != c.want {
					t.Fatalf("err = %v, want %q", err, c.want)
				}
				if err != nil {
					return
				}
				if d.Role != c.role || d.World.Name != "Appworld" || d.World.JSON != nil || len(d.POIs) != 2 {
					t.Errorf("got role %q, world %+v, %d POIs", d.Role, d.World, len(d.POIs))
				}
				if len(d.Presence) != 1 || d.Presence[0].UserID != f.player.ID || d.Presence[0].X != 2 {
					t.Errorf("presence %+v", d.Presence)
				}
				g, err := d.Grid(ctx)
				if err != nil || g.Cols() != 16 || g.Rows() != 12 {
					t.Errorf("grid %v, %v", g, err)
				}
			})
		}
		if n := f.auditCount(); n != audits {
			t.Errorf("reading maps wrote %d audit rows", n-audits)
		}
	})
}

// TestWorldMapLargeDocument reads the grid of a document kept in pieces,
// and refuses one that changed since the header was read.
func TestWorldMapLargeDocument(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		ctx := t.Context()
		sqlstoretest.SetDocChunkBytes(db, 1024)
		seed := int64(7)
		gen, err := engine.Generate(engine.Spec{Template: "starter-archipelago", Size: engine.SizeLarge, Seed: &seed})
		if err != nil {
			t.Fatal(err)
		}
		w := &wf.World{OwnerID: f.owner.ID, Name: "Big", Cols: gen.Cols, Rows: gen.Rows, JSON: gen.Doc}
		if err := db.CreateWorld(ctx, w); err != nil {
			t.Fatal(err)
		}
		d, err := f.svc.WorldMap(ctx, as(f.owner, consoleVia, wf.ScopeWorldRead), w.ID)
		if err != nil {
			t.Fatal(err)
		}
		g, err := d.Grid(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := engine.DocGrid(gen.Doc)
		if !g.Equal(want) {
			t.Error("the grid read in pieces differs from the one written")
		}
		if _, err := db.ResizeWorld(ctx, w.ID, func(w *wf.World, pois []wf.POI, rt *wf.WorldRuntime) (*wf.ResizePlan, error) {
			doc, _, err := engine.Resize(w.JSON, 100, 90, pois, rt)
			if err != nil {
				return nil, err
			}
			return &wf.ResizePlan{Doc: doc, Cols: 100, Rows: 90}, nil
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Grid(ctx); code(err) != "conflict: the world changed while its map was read; reload the page" {
			t.Errorf("grid of a changed world: %v", err)
		}
	})
}

func TestWorldMembers(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		ctx := t.Context()
		via := app.Via{Route: "console POST /w/{world}/members"}
		owner := as(f.owner, via, wf.ScopeWorldRead, wf.ScopeWorldWrite)
		twin1, twin2, newcomer := &wf.User{Name: "Twin"}, &wf.User{Name: "Twin"}, &wf.User{Name: "Newcomer"}
		for _, u := range []*wf.User{twin1, twin2, newcomer} {
			if err := db.CreateUser(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
		members := func(t *testing.T) []string {
			t.Helper()
			list, err := f.svc.ListWorldMembers(ctx, as(f.gm, consoleVia, wf.ScopeWorldRead), f.world.ID)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, m := range list {
				out = append(out, m.Role+":"+m.Name)
			}
			return out
		}
		before := members(t)
		if want := []string{"gm:" + f.gm.Name, "observer:" + f.observer.Name, "player:" + f.player.Name}; !cmp.Equal(before, want) {
			t.Errorf("members %v, want %v", before, want)
		}
		for _, who := range []*wf.User{f.player, f.observer, f.stranger} {
			if _, err := f.svc.ListWorldMembers(ctx, as(who, consoleVia, wf.ScopeWorldRead), f.world.ID); code(err) != "not_found" {
				t.Errorf("%s lists members: %v", who.Name, err)
			}
		}

		bad := []struct {
			name string
			r    app.Request
			args app.MemberArgs
			want string
		}{
			{"gm adds", as(f.gm, via, wf.ScopeWorldWrite), app.MemberArgs{User: newcomer.ID, Role: "player"}, "not_found"},
			{"player adds", as(f.player, via, wf.ScopeWorldWrite), app.MemberArgs{User: newcomer.ID, Role: "player"}, "not_found"},
			{"stranger adds", as(f.stranger, via, wf.ScopeWorldWrite), app.MemberArgs{User: newcomer.ID, Role: "player"}, "not_found"},
			{"stranger adds with bad input", as(f.stranger, via, wf.ScopeWorldWrite), app.MemberArgs{}, "not_found"},
			{"owner without world:write", as(f.owner, via, wf.ScopeWorldRead), app.MemberArgs{User: newcomer.ID, Role: "player"}, "missing_scopes:world:write"},
			{"no user", owner, app.MemberArgs{User: "  ", Role: "player"}, "bad_request: name the user to add, by id or name"},
			{"no role", owner, app.MemberArgs{User: newcomer.ID}, `bad_request: role must be gm, player or observer, got ""`},
			{"owner role", owner, app.MemberArgs{User: newcomer.ID, Role: "owner"}, `bad_request: role must be gm, player or observer, got "owner"`},
			{"unknown user", owner, app.MemberArgs{User: "Nobody", Role: "gm"}, `not_found: no user has the id or name "Nobody"`},
			{"shared name", owner, app.MemberArgs{User: "Twin", Role: "gm"}, `bad_request: 2 users are named "Twin": give the user's id instead`},
			{"the owner", owner, app.MemberArgs{User: f.owner.Name, Role: "gm"}, "bad_request: you own this world: the owner cannot also be a member"},
			{"missing world", owner, app.MemberArgs{User: newcomer.ID, Role: "gm"}, "not_found"},
		}
		audits := f.auditCount()
		for _, c := range bad {
			world := f.world.ID
			if c.name == "missing world" {
				world = "world_missing"
			}
			if _, err := f.svc.AddWorldMember(ctx, c.r, world, c.args); code(err) != c.want {
				t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
			}
		}
		if n := f.auditCount(); n != audits {
			t.Errorf("refused adds wrote %d audit rows", n-audits)
		}
		if got := members(t); !cmp.Equal(got, before) {
			t.Errorf("refused adds changed members: %v", got)
		}

		// By name, by id, and a new role for a member.
		m, err := f.svc.AddWorldMember(ctx, owner, f.world.ID, app.MemberArgs{User: " Newcomer ", Role: "observer"})
		if err != nil || m.UserID != newcomer.ID || m.Name != "Newcomer" || m.Role != wf.RoleObserver {
			t.Fatalf("add by name: %+v, %v", m, err)
		}
		want := wf.AuditEntry{ActorID: f.owner.ID, KeyID: "key_" + f.owner.Name, Route: via.Route, TargetType: "world_member",
			TargetID: newcomer.ID, WorldID: f.world.ID, Outcome: "ok"}
		if d := cmp.Diff(want, f.lastAudit(), auditFields, noSeq); d != "" {
			t.Errorf("audit (-want +got):\n%s", d)
		}
		if _, err := f.svc.AddWorldMember(ctx, owner, f.world.ID, app.MemberArgs{User: twin2.ID, Role: "gm"}); err != nil {
			t.Fatalf("add by id: %v", err)
		}
		if _, err := f.svc.AddWorldMember(ctx, owner, f.world.ID, app.MemberArgs{User: f.player.ID, Role: "gm"}); err != nil {
			t.Fatalf("change a role: %v", err)
		}
		if role, _ := db.WorldRole(ctx, f.world.ID, f.player.ID); role != wf.RoleGM {
			t.Errorf("player's role is %q after the change", role)
		}

		// Removing.
		rvia := app.Via{Route: "console POST /w/{world}/members/{user}/remove"}
		for _, c := range []struct {
			name string
			r    app.Request
			user string
			want string
		}{
			{"gm removes", as(f.gm, rvia, wf.ScopeWorldWrite), newcomer.ID, "not_found"},
			{"stranger removes", as(f.stranger, rvia, wf.ScopeWorldWrite), newcomer.ID, "not_found"},
			{"owner without world:write", as(f.owner, rvia, wf.ScopeWorldRead), newcomer.ID, "missing_scopes:world:write"},
			{"no user", as(f.owner, rvia, wf.ScopeWorldWrite), "", "bad_request: name the member to remove"},
			{"not a member", as(f.owner, rvia, wf.ScopeWorldWrite), f.stranger.ID, "not_found: that user is not a member of this world"},
		} {
			if err := f.svc.RemoveWorldMember(ctx, c.r, f.world.ID, c.user); code(err) != c.want {
				t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
			}
		}
		if err := f.svc.RemoveWorldMember(ctx, as(f.owner, rvia, wf.ScopeWorldWrite), f.world.ID, newcomer.ID); err != nil {
			t.Fatal(err)
		}
		if role, _ := db.WorldRole(ctx, f.world.ID, newcomer.ID); role != "" {
			t.Errorf("removed member still has role %q", role)
		}
		want.Route, want.KeyID = rvia.Route, "key_"+f.owner.Name
		if d := cmp.Diff(want, f.lastAudit(), auditFields, noSeq); d != "" {
			t.Errorf("remove audit (-want +got):\n%s", d)
		}
	})
}
