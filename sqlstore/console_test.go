package sqlstore_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// wantUnchanged fails if the store's contents differ from before.
func wantUnchanged(t *testing.T, db *sqlstore.DB, before map[string]string) {
	t.Helper()
	after, err := db.Fingerprint(t.Context())
	must(t, err)
	diff(t, before, after)
}

func fingerprint(t *testing.T, db *sqlstore.DB) map[string]string {
	t.Helper()
	fp, err := db.Fingerprint(t.Context())
	must(t, err)
	return fp
}

func TestFindUsersByName(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		first := &worldforge.User{Name: "Ada", CreatedAt: at(0)}
		second := &worldforge.User{Name: "Ada", CreatedAt: at(1)}
		other := &worldforge.User{Name: "Adam", CreatedAt: at(2)}
		for _, u := range []*worldforge.User{second, other, first} {
			must(t, db.CreateUser(ctx, u))
		}
		got, err := db.FindUsersByName(ctx, "Ada")
		must(t, err)
		diff(t, []worldforge.User{*first, *second}, got)

		got, err = db.FindUsersByName(ctx, "ada") // exact: case counts
		must(t, err)
		diff(t, []worldforge.User{}, got)

		for i := range 25 {
			must(t, db.CreateUser(ctx, &worldforge.User{Name: "Many", CreatedAt: at(10 + i)}))
		}
		got, err = db.FindUsersByName(ctx, "Many")
		must(t, err)
		if len(got) != 20 || !got[0].CreatedAt.Equal(stampOf(at(10))) {
			t.Errorf("Many: %d users, first at %v; want the 20 oldest", len(got), got[0].CreatedAt)
		}

		_, err = db.FindUsersByName(ctx, "")
		wantCode(t, err, worldforge.EBadRequest)
	})
}

// stampOf is t as the store keeps it.
func stampOf(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

func TestConsoleAPIKeys(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		u := newUser(t, db, "u")
		stranger := newUser(t, db, "stranger")
		used := at(5)
		k1 := &worldforge.APIKey{UserID: u.ID, Hash: []byte("hash-1"), Prefix: "wf_1", Scopes: []string{"world:read"},
			Name: "laptop", CreatedAt: at(0), LastUsedAt: &used}
		k2 := &worldforge.APIKey{UserID: u.ID, Hash: []byte("hash-2"), Prefix: "wf_2", Scopes: []string{"*"}, CreatedAt: at(1)}
		k3 := &worldforge.APIKey{UserID: stranger.ID, Hash: []byte("hash-3"), Prefix: "wf_3", Scopes: []string{"*"}, Name: "theirs", CreatedAt: at(2)}
		for _, k := range []*worldforge.APIKey{k1, k2, k3} {
			must(t, db.CreateAPIKey(ctx, k))
		}
		if !k1.LastUsedAt.Equal(stampOf(used)) {
			t.Errorf("LastUsedAt not stamped: %v", k1.LastUsedAt)
		}

		byHash, err := db.FindAPIKeyByHash(ctx, k1.Hash)
		must(t, err)
		diff(t, k1, byHash)
		byID, err := db.FindAPIKeyByID(ctx, k2.ID)
		must(t, err)
		diff(t, k2, byID)
		_, err = db.FindAPIKeyByID(ctx, "key_missing")
		wantCode(t, err, worldforge.ENotFound)

		list, err := db.ListAPIKeys(ctx, u.ID)
		must(t, err)
		diff(t, []worldforge.APIKey{*k2, *k1}, list) // newest first
		list, err = db.ListAPIKeys(ctx, "user_nobody")
		must(t, err)
		diff(t, []worldforge.APIKey{}, list)

		// TouchAPIKey keeps the later time.
		must(t, db.TouchAPIKey(ctx, k2.ID, at(10)))
		must(t, db.TouchAPIKey(ctx, k2.ID, at(7)))
		got, err := db.FindAPIKeyByID(ctx, k2.ID)
		must(t, err)
		if got.LastUsedAt == nil || !got.LastUsedAt.Equal(stampOf(at(10))) {
			t.Errorf("LastUsedAt = %v, want %v", got.LastUsedAt, stampOf(at(10)))
		}
		must(t, db.TouchAPIKey(ctx, k2.ID, at(11)))
		got, err = db.FindAPIKeyByID(ctx, k2.ID)
		must(t, err)
		if !got.LastUsedAt.Equal(stampOf(at(11))) {
			t.Errorf("LastUsedAt = %v, want %v", got.LastUsedAt, stampOf(at(11)))
		}

		// Revoking: only the owner's own key; again is fine and keeps the
		// first time.
		before := fingerprint(t, db)
		bad := []struct {
			name string
			err  error
			code string
		}{
			{"revoke another's key", db.RevokeUserAPIKey(ctx, stranger.ID, k1.ID), worldforge.ENotFound},
			{"revoke a missing key", db.RevokeUserAPIKey(ctx, u.ID, "key_missing"), worldforge.ENotFound},
			{"touch a missing key", db.TouchAPIKey(ctx, "key_missing", at(3)), worldforge.ENotFound},
			{"touch without a time", db.TouchAPIKey(ctx, k1.ID, time.Time{}), worldforge.EBadRequest},
		}
		for _, c := range bad {
			t.Run(c.name, func(t *testing.T) { wantCode(t, c.err, c.code) })
		}
		wantUnchanged(t, db, before)

		must(t, db.RevokeUserAPIKey(ctx, u.ID, k1.ID))
		first, err := db.FindAPIKeyByID(ctx, k1.ID)
		must(t, err)
		if first.RevokedAt == nil {
			t.Fatal("key not revoked")
		}
		must(t, db.RevokeUserAPIKey(ctx, u.ID, k1.ID))
		again, err := db.FindAPIKeyByID(ctx, k1.ID)
		must(t, err)
		diff(t, first.RevokedAt, again.RevokedAt)
	})
}

func TestReviewWorldsAndMembers(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		me := newUser(t, db, "me")
		other := newUser(t, db, "Other")
		zed := newUser(t, db, "zed")
		amy := newUser(t, db, "amy")
		mine := newWorld(t, db, me.ID, "Beta")
		mine2 := newWorld(t, db, me.ID, "Alpha")
		gmOf := newWorld(t, db, other.ID, "Gamma")
		playerOf := newWorld(t, db, other.ID, "Delta")
		must(t, db.AddWorldMember(ctx, gmOf.ID, me.ID, worldforge.RoleGM))
		must(t, db.AddWorldMember(ctx, playerOf.ID, me.ID, worldforge.RolePlayer))

		file := func(worldID string) *worldforge.Proposal {
			return propose(t, db, &worldforge.Proposal{WorldID: worldID, Kind: worldforge.ProposalWikiPage, ActorID: other.ID,
				Payload: payload(t, worldforge.WikiPagePayload{Title: "P"})})
		}
		file(mine.ID)
		file(mine.ID)
		done := file(mine.ID)
		_, err := db.RejectProposal(ctx, done.ID, me.ID, "no", nil, nil)
		must(t, err)
		file(gmOf.ID)
		file(playerOf.ID)

		got, err := db.ListReviewWorlds(ctx, me.ID)
		must(t, err)
		type row struct {
			ID, Name, Role string
			Pending        int
		}
		var rows []row
		for _, l := range got {
			rows = append(rows, row{l.World.ID, l.World.Name, l.Role, l.Pending})
			if l.World.JSON != nil || l.World.OwnerID == "" || l.World.CreatedAt.IsZero() {
				t.Errorf("listing %s: %+v", l.World.Name, l.World)
			}
		}
		diff(t, []row{
			{mine2.ID, "Alpha", worldforge.RoleOwner, 0},
			{mine.ID, "Beta", worldforge.RoleOwner, 2},
			{gmOf.ID, "Gamma", worldforge.RoleGM, 1},
		}, rows)
		none, err := db.ListReviewWorlds(ctx, "user_nobody")
		must(t, err)
		diff(t, []worldforge.WorldListing{}, none)

		// Members: by role, then name; the owner is not one.
		must(t, db.AddWorldMember(ctx, gmOf.ID, zed.ID, worldforge.RolePlayer))
		must(t, db.AddWorldMember(ctx, gmOf.ID, amy.ID, worldforge.RolePlayer))
		members, err := db.ListWorldMembers(ctx, gmOf.ID)
		must(t, err)
		var names []string
		for _, m := range members {
			names = append(names, m.Role+":"+m.Name)
			if m.WorldID != gmOf.ID || m.CreatedAt.IsZero() {
				t.Errorf("member %+v", m)
			}
		}
		diff(t, []string{"gm:me", "player:amy", "player:zed"}, names)
		empty, err := db.ListWorldMembers(ctx, mine.ID)
		must(t, err)
		diff(t, []worldforge.WorldMember{}, empty)
		_, err = db.ListWorldMembers(ctx, "world_missing")
		wantCode(t, err, worldforge.ENotFound)

		before := fingerprint(t, db)
		for _, c := range []struct{ name, world, user string }{
			{"the owner", gmOf.ID, other.ID},
			{"a stranger", gmOf.ID, "user_nobody"},
			{"a missing world", "world_missing", zed.ID},
		} {
			t.Run("remove "+c.name, func(t *testing.T) {
				wantCode(t, db.RemoveWorldMember(ctx, c.world, c.user), worldforge.ENotFound)
			})
		}
		wantUnchanged(t, db, before)
		must(t, db.RemoveWorldMember(ctx, gmOf.ID, zed.ID))
		wantCode(t, db.RemoveWorldMember(ctx, gmOf.ID, zed.ID), worldforge.ENotFound)
		members, err = db.ListWorldMembers(ctx, gmOf.ID)
		must(t, err)
		if len(members) != 2 {
			t.Errorf("after removal: %+v", members)
		}
	})
}

// queueFixture files proposals over three worlds with two actors and two
// keys, one a minute apart, and returns them newest first.
func queueFixture(t *testing.T, db *sqlstore.DB) (worlds []string, actors []string, all []worldforge.Proposal) {
	t.Helper()
	db.SetQuotas(worldforge.Quotas{})
	owner := newUser(t, db, "owner")
	agent := newUser(t, db, "agent")
	for i := range 3 {
		worlds = append(worlds, newWorld(t, db, owner.ID, fmt.Sprintf("W%d", i)).ID)
	}
	actors = []string{owner.ID, agent.ID}
	for i := range 30 {
		kind, pl := worldforge.ProposalWikiPage, payload(t, worldforge.WikiPagePayload{Title: "T"})
		if i%3 == 0 {
			kind, pl = worldforge.ProposalAtlas, payload(t, worldforge.AtlasPlacePayload{Name: "N"})
		}
		p := propose(t, db, &worldforge.Proposal{WorldID: worlds[i%3], Kind: kind, ActorID: actors[i%2],
			KeyID: []string{"key_a", "key_b"}[i%4/2], Payload: pl,
			// Pairs share a time, so that the id breaks the tie.
			CreatedAt: at(i / 2)})
		all = append(all, *p)
	}
	slices.SortFunc(all, func(a, b worldforge.Proposal) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return worlds, actors, all
}

func proposalIDs(ps []worldforge.Proposal) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

func TestReviewQueue(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		worlds, actors, all := queueFixture(t, db)
		keep := func(pred func(p worldforge.Proposal) bool) []string {
			var out []string
			for _, p := range all {
				if pred(p) {
					out = append(out, p.ID)
				}
			}
			return out
		}
		// Reject one with a reason: it leaves the pending queue.
		rejected, err := db.RejectProposal(ctx, all[0].ID, actors[0], "duplicate of another page", nil, nil)
		must(t, err)
		if rejected.Reason != "duplicate of another page" {
			t.Errorf("returned reason %q", rejected.Reason)
		}
		stored := wantStatus(t, db, all[0].ID, worldforge.ProposalRejected)
		diff(t, rejected, stored)
		pending := func(p worldforge.Proposal) bool { return p.ID != all[0].ID }

		cases := []struct {
			name string
			f    worldforge.ProposalFilter
			want []string
		}{
			{"two worlds", worldforge.ProposalFilter{WorldIDs: []string{worlds[2], worlds[0], worlds[0]}, Status: worldforge.ProposalPending},
				keep(func(p worldforge.Proposal) bool { return pending(p) && p.WorldID != worlds[1] })},
			{"all worlds, kind", worldforge.ProposalFilter{WorldIDs: worlds, Status: worldforge.ProposalPending, Kind: worldforge.ProposalAtlas},
				keep(func(p worldforge.Proposal) bool { return pending(p) && p.Kind == worldforge.ProposalAtlas })},
			{"all worlds, actor and key", worldforge.ProposalFilter{WorldIDs: worlds, ActorID: actors[1], KeyID: "key_a"},
				keep(func(p worldforge.Proposal) bool { return p.ActorID == actors[1] && p.KeyID == "key_a" })},
			{"world in worlds", worldforge.ProposalFilter{WorldIDs: worlds[:2], WorldID: worlds[1]},
				keep(func(p worldforge.Proposal) bool { return p.WorldID == worlds[1] })},
			{"world outside worlds", worldforge.ProposalFilter{WorldIDs: worlds[:2], WorldID: worlds[2]}, nil},
			{"one world, key", worldforge.ProposalFilter{WorldID: worlds[0], KeyID: "key_b"},
				keep(func(p worldforge.Proposal) bool { return p.WorldID == worlds[0] && p.KeyID == "key_b" })},
			{"rejected", worldforge.ProposalFilter{WorldIDs: worlds, Status: worldforge.ProposalRejected}, []string{all[0].ID}},
			{"unknown worlds", worldforge.ProposalFilter{WorldIDs: []string{"world_x", "world_y"}}, nil},
			{"many worlds (one IN list)", worldforge.ProposalFilter{WorldIDs: append(manyIDs("world_none", 70), worlds[1]), Status: worldforge.ProposalPending},
				keep(func(p worldforge.Proposal) bool { return pending(p) && p.WorldID == worlds[1] })},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				want := c.want
				if want == nil {
					want = []string{}
				}
				n, err := db.CountProposals(ctx, c.f)
				must(t, err)
				if n != len(want) {
					t.Errorf("CountProposals = %d, want %d", n, len(want))
				}
				got, err := db.ListProposals(ctx, c.f)
				must(t, err)
				diff(t, want, proposalIDs(got))
				// Walk it in pages of 4 (keyset on the last row).
				var walked []string
				f := c.f
				f.Limit = 4
				for range 20 {
					page, err := db.ListProposals(ctx, f)
					must(t, err)
					walked = append(walked, proposalIDs(page)...)
					if len(page) < f.Limit {
						break
					}
					last := page[len(page)-1]
					f.Before = &worldforge.ProposalCursor{CreatedAt: last.CreatedAt, ID: last.ID}
				}
				diff(t, want, walked, cmpopts.EquateEmpty())
			})
		}

		// The reason is read back by every listing.
		got, err := db.ListProposals(ctx, worldforge.ProposalFilter{Status: worldforge.ProposalRejected})
		must(t, err)
		if len(got) != 1 || got[0].Reason != "duplicate of another page" {
			t.Errorf("rejected list: %+v", got)
		}

		bad := []struct {
			name string
			f    worldforge.ProposalFilter
		}{
			{"unknown kind", worldforge.ProposalFilter{Kind: "spell"}},
			{"empty world id", worldforge.ProposalFilter{WorldIDs: []string{worlds[0], ""}}},
			{"cursor without time", worldforge.ProposalFilter{Before: &worldforge.ProposalCursor{ID: all[0].ID}}},
			{"cursor without id", worldforge.ProposalFilter{Before: &worldforge.ProposalCursor{CreatedAt: at(0)}}},
		}
		for _, c := range bad {
			t.Run(c.name, func(t *testing.T) {
				_, err := db.ListProposals(ctx, c.f)
				wantCode(t, err, worldforge.EBadRequest)
				_, err = db.CountProposals(ctx, c.f)
				wantCode(t, err, worldforge.EBadRequest)
			})
		}
	})
}

func manyIDs(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s_%03d", prefix, i)
	}
	return out
}

// TestReviewQueuePlan checks that the queue's first page (each world's
// branch) and the audit page read through indexes in their order: no
// sort step.
func TestReviewQueuePlan(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner := newUser(t, db, "owner")
		w1, w2 := newWorld(t, db, owner.ID, "A"), newWorld(t, db, owner.ID, "B")
		queue := []worldforge.ProposalFilter{
			{WorldIDs: []string{w1.ID, w2.ID}, Status: worldforge.ProposalPending},
			{WorldIDs: []string{w1.ID, w2.ID}, Status: worldforge.ProposalPending, Kind: worldforge.ProposalWikiPage, ActorID: owner.ID, KeyID: "key_x"},
			{WorldIDs: []string{w1.ID, w2.ID}, Status: worldforge.ProposalPending, Before: &worldforge.ProposalCursor{CreatedAt: at(0), ID: "prop_x"}},
			{WorldID: w1.ID, Status: worldforge.ProposalPending},
		}
		for _, f := range queue {
			query, args, err := sqlstore.ProposalPageSQLForTest(f)
			must(t, err)
			wantIndexPlan(t, db, query, args, "proposals_review", max(1, len(f.WorldIDs)))
		}
		audits := []struct {
			f             worldforge.AuditFilter
			worlds, actor int
		}{
			{worldforge.AuditFilter{Viewer: owner.ID}, 2, 1},
			{worldforge.AuditFilter{Viewer: owner.ID, Tool: "read_world", KeyID: "key_x", Outcome: "ok", Since: at(0), Until: at(9), BeforeSeq: 100}, 2, 1},
			{worldforge.AuditFilter{Viewer: owner.ID, WorldID: w2.ID}, 1, 0},
		}
		for _, c := range audits {
			query, args, err := db.AuditPageSQLForTest(ctx, c.f)
			must(t, err)
			if c.worlds > 0 {
				wantIndexPlan(t, db, query, args, "audit_log_world", c.worlds)
			}
			if c.actor > 0 {
				wantIndexPlan(t, db, query, args, "audit_log_actor", c.actor)
			}
		}
	})
}

func wantIndexPlan(t *testing.T, db *sqlstore.DB, query string, args []any, index string, branches int) {
	t.Helper()
	plan, err := db.QueryPlanForTest(t.Context(), query, args...)
	must(t, err)
	text := strings.Join(plan, "\n")
	if db.Engine() == sqlstore.EngineSQLite {
		for _, line := range plan {
			if line == "SCAN u" {
				break
			}
			if strings.Contains(line, "TEMP B-TREE") {
				t.Errorf("a branch sorts:\n%s\n%s", query, text)
				break
			}
		}
		if n := strings.Count(text, "INDEX "+index); n < 1 {
			t.Errorf("plan misses %s:\n%s\n%s", index, query, text)
		}
		return
	}
	if n := strings.Count(text, "Backward using "+index); n < branches {
		t.Errorf("%d backward scans of %s, want %d:\n%s\n%s", n, index, branches, query, text)
	}
}

func TestSessions(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		u := newUser(t, db, "u")
		other := newUser(t, db, "other")
		key := &worldforge.APIKey{UserID: u.ID, Hash: []byte("key-hash"), Scopes: []string{"world:read"}}
		must(t, db.CreateAPIKey(ctx, key))
		soon := time.Now().Add(time.Hour)

		s1 := &worldforge.Session{Hash: []byte("s1"), UserID: u.ID, Scopes: []string{"*"}, ExpiresAt: soon}
		s2 := &worldforge.Session{Hash: []byte("s2"), UserID: u.ID, KeyID: key.ID, Scopes: []string{"world:read"}, ExpiresAt: soon}
		expired := &worldforge.Session{Hash: []byte("s3"), UserID: u.ID, CreatedAt: at(0), ExpiresAt: at(60)}
		theirs := &worldforge.Session{Hash: []byte("s4"), UserID: other.ID, ExpiresAt: soon}
		for _, s := range []*worldforge.Session{s1, s2, expired, theirs} {
			must(t, db.CreateSession(ctx, s))
		}
		if !worldforge.ValidID("sess", s1.ID) || s1.CreatedAt.IsZero() {
			t.Errorf("filled session: %+v", s1)
		}
		got, err := db.FindSessionByHash(ctx, s2.Hash)
		must(t, err)
		diff(t, s2, got)
		got, err = db.FindSessionByHash(ctx, expired.Hash)
		must(t, err)
		diff(t, expired, got, cmpopts.IgnoreFields(worldforge.Session{}, "Scopes"))
		_, err = db.FindSessionByHash(ctx, []byte("nope"))
		wantCode(t, err, worldforge.ENotFound)

		before := fingerprint(t, db)
		bad := []struct {
			name string
			s    worldforge.Session
			code string
		}{
			{"empty hash", worldforge.Session{UserID: u.ID, ExpiresAt: soon}, worldforge.EBadRequest},
			{"no expiry", worldforge.Session{Hash: []byte("x"), UserID: u.ID}, worldforge.EBadRequest},
			{"expires before created", worldforge.Session{Hash: []byte("x"), UserID: u.ID, CreatedAt: at(5), ExpiresAt: at(4)}, worldforge.EBadRequest},
			{"missing user", worldforge.Session{Hash: []byte("x"), UserID: "user_missing", ExpiresAt: soon}, worldforge.ENotFound},
			{"missing key", worldforge.Session{Hash: []byte("x"), UserID: u.ID, KeyID: "key_missing", ExpiresAt: soon}, worldforge.ENotFound},
			{"hash taken", worldforge.Session{Hash: s1.Hash, UserID: u.ID, ExpiresAt: soon}, worldforge.EConflict},
		}
		for _, c := range bad {
			t.Run(c.name, func(t *testing.T) { wantCode(t, db.CreateSession(ctx, &c.s), c.code) })
		}
		wantCode(t, db.RevokeSession(ctx, []byte("nope")), worldforge.ENotFound)
		_, err = db.RevokeUserSessions(ctx, "user_missing")
		wantCode(t, err, worldforge.ENotFound)
		wantUnchanged(t, db, before)

		must(t, db.RevokeSession(ctx, s1.Hash))
		r1, err := db.FindSessionByHash(ctx, s1.Hash)
		must(t, err)
		if r1.RevokedAt == nil {
			t.Fatal("session not revoked")
		}
		must(t, db.RevokeSession(ctx, s1.Hash)) // again: not an error, first time kept
		r2, err := db.FindSessionByHash(ctx, s1.Hash)
		must(t, err)
		diff(t, r1.RevokedAt, r2.RevokedAt)

		// Only s2 is still live: the expired one and other's stay as they are.
		n, err := db.RevokeUserSessions(ctx, u.ID)
		must(t, err)
		if n != 1 {
			t.Errorf("RevokeUserSessions = %d, want 1", n)
		}
		for _, s := range []*worldforge.Session{expired, theirs} {
			got, err := db.FindSessionByHash(ctx, s.Hash)
			must(t, err)
			if got.RevokedAt != nil {
				t.Errorf("session %s revoked", s.ID)
			}
		}
		n, err = db.RevokeUserSessions(ctx, u.ID)
		must(t, err)
		if n != 0 {
			t.Errorf("second RevokeUserSessions = %d, want 0", n)
		}
	})
}

func TestLoginLinks(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		u := newUser(t, db, "u")
		l := &worldforge.LoginLink{Hash: []byte("link-1"), UserID: u.ID, CreatedAt: at(0), ExpiresAt: at(15)}
		must(t, db.CreateLoginLink(ctx, l))
		if !worldforge.ValidID("login", l.ID) {
			t.Errorf("link id %q", l.ID)
		}

		before := fingerprint(t, db)
		bad := []struct {
			name string
			l    worldforge.LoginLink
			code string
		}{
			{"empty hash", worldforge.LoginLink{UserID: u.ID, ExpiresAt: at(15)}, worldforge.EBadRequest},
			{"no expiry", worldforge.LoginLink{Hash: []byte("x"), UserID: u.ID}, worldforge.EBadRequest},
			{"expires at creation", worldforge.LoginLink{Hash: []byte("x"), UserID: u.ID, CreatedAt: at(3), ExpiresAt: at(3)}, worldforge.EBadRequest},
			{"missing user", worldforge.LoginLink{Hash: []byte("x"), UserID: "user_missing", ExpiresAt: time.Now().Add(time.Hour)}, worldforge.ENotFound},
			{"hash taken", worldforge.LoginLink{Hash: l.Hash, UserID: u.ID, ExpiresAt: time.Now().Add(time.Hour)}, worldforge.EConflict},
		}
		for _, c := range bad {
			t.Run(c.name, func(t *testing.T) { wantCode(t, db.CreateLoginLink(ctx, &c.l), c.code) })
		}
		_, err := db.UseLoginLink(ctx, []byte("nope"), at(1))
		wantCode(t, err, worldforge.ENotFound)
		_, err = db.UseLoginLink(ctx, l.Hash, time.Time{})
		wantCode(t, err, worldforge.EBadRequest)
		// At its expiry and after it the link is refused and stays unused.
		for _, when := range []time.Time{at(15), at(60)} {
			_, err = db.UseLoginLink(ctx, l.Hash, when)
			if !errors.Is(err, &worldforge.Error{Code: worldforge.EConflict, Detail: worldforge.DetailLinkExpired}) {
				t.Errorf("use at %v: %v, want conflict: %s", when, err, worldforge.DetailLinkExpired)
			}
		}
		wantUnchanged(t, db, before)

		got, err := db.UseLoginLink(ctx, l.Hash, at(14))
		must(t, err)
		want := *l
		want.UsedAt = ptr(stampOf(at(14)))
		diff(t, &want, got)
		for _, when := range []time.Time{at(14), at(60)} { // used wins over expired
			_, err = db.UseLoginLink(ctx, l.Hash, when)
			if !errors.Is(err, &worldforge.Error{Code: worldforge.EConflict, Detail: worldforge.DetailLinkUsed}) {
				t.Errorf("second use at %v: %v, want conflict: %s", when, err, worldforge.DetailLinkUsed)
			}
		}
	})
}

// TestLoginLinkRace uses one link from many goroutines at once: exactly
// one use succeeds, every other is conflict: login_link_used.
func TestLoginLinkRace(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		u := newUser(t, db, "u")
		const links, users = 5, 24
		for i := range links {
			hash := fmt.Appendf(nil, "race-%d", i)
			must(t, db.CreateLoginLink(ctx, &worldforge.LoginLink{Hash: hash, UserID: u.ID, ExpiresAt: time.Now().Add(time.Hour)}))
			var (
				wg          sync.WaitGroup
				mu          sync.Mutex
				wins, usedN int
				others      []error
				start       = make(chan struct{})
			)
			for range users {
				wg.Go(func() {
					<-start
					_, err := db.UseLoginLink(ctx, hash, time.Now())
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						wins++
					case errors.Is(err, &worldforge.Error{Code: worldforge.EConflict, Detail: worldforge.DetailLinkUsed}):
						usedN++
					default:
						others = append(others, err)
					}
				})
			}
			close(start)
			wg.Wait()
			if wins != 1 || usedN != users-1 || len(others) > 0 {
				t.Errorf("link %d: %d uses succeeded, %d refused as used, other errors %v", i, wins, usedN, others)
			}
		}
	})
}

func TestAuditConsoleFilters(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		viewer := newUser(t, db, "viewer")
		other := newUser(t, db, "other")
		owned := newWorld(t, db, viewer.ID, "Owned")
		gmOf := newWorld(t, db, other.ID, "GM")
		playerOf := newWorld(t, db, other.ID, "Player")
		must(t, db.AddWorldMember(ctx, gmOf.ID, viewer.ID, worldforge.RoleGM))
		must(t, db.AddWorldMember(ctx, playerOf.ID, viewer.ID, worldforge.RolePlayer))

		var entries []*worldforge.AuditEntry
		add := func(e *worldforge.AuditEntry) *worldforge.AuditEntry {
			must(t, db.AppendAudit(ctx, e))
			entries = append(entries, e)
			return e
		}
		mineInPlayer := add(&worldforge.AuditEntry{ActorID: viewer.ID, KeyID: "key_v", Tool: "read_world", WorldID: playerOf.ID, Outcome: "ok", CreatedAt: at(0)})
		otherInOwned := add(&worldforge.AuditEntry{ActorID: other.ID, KeyID: "key_o", Tool: "propose_wiki_page", WorldID: owned.ID, Outcome: "ok", CreatedAt: at(1)})
		otherInGM := add(&worldforge.AuditEntry{ActorID: other.ID, Route: "POST /proposals/:id/commit", WorldID: gmOf.ID, Outcome: "committed", CreatedAt: at(2)})
		otherInPlayer := add(&worldforge.AuditEntry{ActorID: other.ID, Tool: "read_world", WorldID: playerOf.ID, Outcome: "ok", CreatedAt: at(3)})
		otherNoWorld := add(&worldforge.AuditEntry{ActorID: other.ID, Tool: "list_worlds", Outcome: "ok", CreatedAt: at(4)})
		mineInOwned := add(&worldforge.AuditEntry{ActorID: viewer.ID, Route: "console POST /p/{id}/reject", WorldID: owned.ID, Outcome: "rejected", CreatedAt: at(5)})
		_ = otherInPlayer
		_ = otherNoWorld

		ids := func(es ...*worldforge.AuditEntry) []string {
			out := []string{}
			for _, e := range es {
				out = append(out, e.ID)
			}
			return out
		}
		cases := []struct {
			name string
			f    worldforge.AuditFilter
			want []string
		}{
			{"viewer", worldforge.AuditFilter{Viewer: viewer.ID}, ids(mineInOwned, otherInGM, otherInOwned, mineInPlayer)},
			{"viewer, actor other", worldforge.AuditFilter{Viewer: viewer.ID, ActorID: other.ID}, ids(otherInGM, otherInOwned)},
			{"viewer, world played", worldforge.AuditFilter{Viewer: viewer.ID, WorldID: playerOf.ID}, ids(mineInPlayer)},
			{"viewer, world owned", worldforge.AuditFilter{Viewer: viewer.ID, WorldID: owned.ID}, ids(mineInOwned, otherInOwned)},
			{"viewer, key", worldforge.AuditFilter{Viewer: viewer.ID, KeyID: "key_o"}, ids(otherInOwned)},
			{"viewer, route", worldforge.AuditFilter{Viewer: viewer.ID, Route: "POST /proposals/:id/commit"}, ids(otherInGM)},
			{"viewer, outcome", worldforge.AuditFilter{Viewer: viewer.ID, Outcome: "ok"}, ids(otherInOwned, mineInPlayer)},
			{"viewer, time", worldforge.AuditFilter{Viewer: viewer.ID, Since: at(1), Until: at(5)}, ids(otherInGM, otherInOwned)},
			{"viewer, since", worldforge.AuditFilter{Viewer: viewer.ID, Since: at(2)}, ids(mineInOwned, otherInGM)},
			{"stranger viewer", worldforge.AuditFilter{Viewer: "user_nobody"}, ids()},
			{"no viewer, tool", worldforge.AuditFilter{Tool: "read_world"}, ids(otherInPlayer, mineInPlayer)},
			{"no viewer, key and outcome", worldforge.AuditFilter{KeyID: "key_v", Outcome: "ok"}, ids(mineInPlayer)},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				got, err := db.ListAudit(ctx, c.f)
				must(t, err)
				gotIDs := []string{}
				for _, e := range got {
					gotIDs = append(gotIDs, e.ID)
				}
				diff(t, c.want, gotIDs)
				n, err := db.CountAudit(ctx, c.f)
				must(t, err)
				if n != len(c.want) {
					t.Errorf("CountAudit = %d, want %d", n, len(c.want))
				}
				// Page by one with BeforeSeq.
				var walked []string
				f := c.f
				f.Limit = 1
				for range 10 {
					page, err := db.ListAudit(ctx, f)
					must(t, err)
					if len(page) == 0 {
						break
					}
					walked = append(walked, page[0].ID)
					f.BeforeSeq = page[0].Seq
				}
				if walked == nil {
					walked = []string{}
				}
				diff(t, c.want, walked)
			})
		}

		_, err := db.ListAudit(ctx, worldforge.AuditFilter{Viewer: viewer.ID, Since: at(5), Until: at(5)})
		wantCode(t, err, worldforge.EBadRequest)
		_, err = db.CountAudit(ctx, worldforge.AuditFilter{Since: at(6), Until: at(5)})
		wantCode(t, err, worldforge.EBadRequest)
	})
}

// BenchmarkReviewQueueFirstPage serves the review queue's first page over
// 10,000 pending proposals in four worlds on SQLite: one op is the first
// page of 50 (ListProposals with WorldIDs) and its count.
func BenchmarkReviewQueueFirstPage(b *testing.B) {
	db := dbtest.Open(b)
	db.SetQuotas(worldforge.Quotas{})
	ctx := b.Context()
	owner := &worldforge.User{Name: "owner"}
	if err := db.CreateUser(ctx, owner); err != nil {
		b.Fatal(err)
	}
	var worlds []string
	for i := range 4 {
		w := &worldforge.World{OwnerID: owner.ID, Name: fmt.Sprintf("W%d", i), Cols: 64, Rows: 48, JSON: []byte(`{"grid":[]}`)}
		if err := db.CreateWorld(ctx, w); err != nil {
			b.Fatal(err)
		}
		worlds = append(worlds, w.ID)
	}
	pl := []byte(`{"title":"A page","body":"Some text of a wiki page proposed by an agent."}`)
	const total = 10_000
	for i := range total {
		p := &worldforge.Proposal{WorldID: worlds[i%len(worlds)], Kind: worldforge.ProposalWikiPage, ActorID: owner.ID,
			KeyID: "key_bench", Payload: pl, DiffSummary: "new page", CreatedAt: t0.Add(time.Duration(i) * time.Second)}
		if err := db.CreateProposal(ctx, p, nil); err != nil {
			b.Fatal(err)
		}
	}
	f := worldforge.ProposalFilter{WorldIDs: worlds, Status: worldforge.ProposalPending, Limit: 50}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		page, err := db.ListProposals(ctx, f)
		if err != nil || len(page) != 50 {
			b.Fatalf("page: %d, %v", len(page), err)
		}
		n, err := db.CountProposals(ctx, f)
		if err != nil || n != total {
			b.Fatalf("count: %d, %v", n, err)
		}
	}
}
