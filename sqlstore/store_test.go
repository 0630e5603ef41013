package sqlstore_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// t0 is a fixed time with sub-millisecond digits the store truncates.
var t0 = time.Date(2026, 3, 4, 5, 6, 7, 8_123_456, time.UTC)

func at(minutes int) time.Time { return t0.Add(time.Duration(minutes) * time.Minute) }

func ptr[T any](v T) *T { return &v }

// wantCode fails unless err carries the worldforge error code (and, for
// not_found, matches worldforge.ErrNotFound).
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := worldforge.ErrorCode(err); got != code {
		t.Fatalf("error %v: code %q, want %q", err, got, code)
	}
	if code == worldforge.ENotFound && !errors.Is(err, worldforge.ErrNotFound) {
		t.Fatalf("error %v does not match ErrNotFound", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func diff(t *testing.T, want, got any, opts ...cmp.Option) {
	t.Helper()
	if d := cmp.Diff(want, got, opts...); d != "" {
		t.Errorf("mismatch (-want +got):\n%s", d)
	}
}

func newUser(t *testing.T, db *sqlstore.DB, name string) *worldforge.User {
	t.Helper()
	u := &worldforge.User{Name: name}
	must(t, db.CreateUser(t.Context(), u))
	return u
}

func newWorld(t *testing.T, db *sqlstore.DB, ownerID, name string) *worldforge.World {
	t.Helper()
	w := &worldforge.World{OwnerID: ownerID, Name: name, Cols: 64, Rows: 48, JSON: json.RawMessage(`{"grid":[]}`)}
	must(t, db.CreateWorld(t.Context(), w))
	return w
}

func TestUsers(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		u := &worldforge.User{Name: "Ada", CreatedAt: t0}
		must(t, db.CreateUser(ctx, u))
		if !worldforge.ValidID("user", u.ID) {
			t.Errorf("ID %q is not a user id", u.ID)
		}
		if !u.CreatedAt.Equal(t0.Truncate(time.Millisecond)) {
			t.Errorf("CreatedAt = %v, want %v truncated to ms", u.CreatedAt, t0)
		}
		got, err := db.FindUserByID(ctx, u.ID)
		must(t, err)
		diff(t, u, got)

		_, err = db.FindUserByID(ctx, "user_missing")
		wantCode(t, err, worldforge.ENotFound)
		wantCode(t, db.CreateUser(ctx, &worldforge.User{ID: u.ID, Name: "again"}), worldforge.EConflict)

		fresh := &worldforge.User{Name: "Now"}
		before := time.Now().Add(-time.Second)
		must(t, db.CreateUser(ctx, fresh))
		if fresh.CreatedAt.Before(before) || fresh.CreatedAt.Location() != time.UTC {
			t.Errorf("CreatedAt = %v, want now in UTC", fresh.CreatedAt)
		}
	})
}

func TestAPIKeys(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		u := newUser(t, db, "Ada")
		hash := bytes.Repeat([]byte{0xab}, 32)
		k := &worldforge.APIKey{UserID: u.ID, Hash: hash, Prefix: "wk_live_ab", Scopes: []string{"world:read", "wiki:read"}}
		must(t, db.CreateAPIKey(ctx, k))
		if !worldforge.ValidID("key", k.ID) {
			t.Errorf("ID %q is not a key id", k.ID)
		}

		got, err := db.FindAPIKeyByHash(ctx, hash)
		must(t, err)
		diff(t, k, got)

		cases := []struct {
			name string
			key  *worldforge.APIKey
			code string
		}{
			{"missing user", &worldforge.APIKey{UserID: "user_missing", Hash: []byte{1}}, worldforge.ENotFound},
			{"duplicate hash", &worldforge.APIKey{UserID: u.ID, Hash: hash}, worldforge.EConflict},
			{"empty hash", &worldforge.APIKey{UserID: u.ID}, worldforge.EBadRequest},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				wantCode(t, db.CreateAPIKey(ctx, c.key), c.code)
			})
		}

		_, err = db.FindAPIKeyByHash(ctx, []byte("nope"))
		wantCode(t, err, worldforge.ENotFound)

		must(t, db.RevokeAPIKey(ctx, hash))
		revoked, err := db.FindAPIKeyByHash(ctx, hash)
		must(t, err)
		if revoked.RevokedAt == nil {
			t.Fatal("RevokedAt not set after revoke")
		}
		// The store stamps with the wall clock in ms: let it move, so that
		// a second revoke that moved RevokedAt would show.
		time.Sleep(5 * time.Millisecond)
		must(t, db.RevokeAPIKey(ctx, hash)) // revoking twice is not an error
		again, err := db.FindAPIKeyByHash(ctx, hash)
		must(t, err)
		if !again.RevokedAt.Equal(*revoked.RevokedAt) {
			t.Errorf("second revoke moved RevokedAt from %v to %v", revoked.RevokedAt, again.RevokedAt)
		}
		wantCode(t, db.RevokeAPIKey(ctx, []byte("nope")), worldforge.ENotFound)
	})
}

func TestSecret(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		random := func() ([]byte, error) {
			b := make([]byte, 32)
			_, err := rand.Read(b)
			return b, err
		}

		// Racing first uses all get the one value that won.
		const racers = 8
		var (
			wg      sync.WaitGroup
			results [racers][]byte
			errs    [racers]error
		)
		for i := range racers {
			wg.Go(func() { results[i], errs[i] = db.Secret(ctx, "jwt", random) })
		}
		wg.Wait()
		for i := range racers {
			must(t, errs[i])
			if !bytes.Equal(results[i], results[0]) {
				t.Fatalf("racer %d got %x, racer 0 got %x", i, results[i], results[0])
			}
		}

		// Later uses read it without generating.
		got, err := db.Secret(ctx, "jwt", func() ([]byte, error) {
			t.Error("gen called for an existing secret")
			return nil, errors.New("unexpected")
		})
		must(t, err)
		diff(t, results[0], got)

		boom := errors.New("boom")
		_, err = db.Secret(ctx, "other", func() ([]byte, error) { return nil, boom })
		if !errors.Is(err, boom) {
			t.Errorf("gen error = %v, want boom", err)
		}
	})
}

func TestWorlds(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner := newUser(t, db, "Owner")
		w := &worldforge.World{OwnerID: owner.ID, Name: "Eryndor", Template: "starter-jungle", Seed: -42,
			Cols: 64, Rows: 48, JSON: json.RawMessage(`{"grid":[[1,2],[3,4]]}`), Version: 9, CreatedAt: t0}
		must(t, db.CreateWorld(ctx, w))
		if w.Version != 1 || !worldforge.ValidID("world", w.ID) || !w.UpdatedAt.Equal(w.CreatedAt) {
			t.Errorf("created world: version %d, id %q, updated %v", w.Version, w.ID, w.UpdatedAt)
		}
		got, err := dbtest.World(ctx, db, w.ID)
		must(t, err)
		diff(t, w, got)

		_, err = dbtest.World(ctx, db, "world_missing")
		wantCode(t, err, worldforge.ENotFound)
		wantCode(t, db.CreateWorld(ctx, &worldforge.World{OwnerID: "user_missing", Name: "x"}), worldforge.ENotFound)

		bare := &worldforge.World{OwnerID: owner.ID, Name: "No JSON"}
		must(t, db.CreateWorld(ctx, bare))
		gotBare, err := dbtest.World(ctx, db, bare.ID)
		must(t, err)
		if gotBare.JSON != nil {
			t.Errorf("JSON = %s, want nil", gotBare.JSON)
		}
	})
}

func TestMembership(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner, gm, player, observer, stranger := newUser(t, db, "owner"), newUser(t, db, "gm"),
			newUser(t, db, "player"), newUser(t, db, "observer"), newUser(t, db, "stranger")
		w := newWorld(t, db, owner.ID, "A")
		other := newWorld(t, db, gm.ID, "B")     // gm owns B
		third := newWorld(t, db, player.ID, "C") // gm plays in C
		must(t, db.AddWorldMember(ctx, w.ID, gm.ID, worldforge.RolePlayer))
		must(t, db.AddWorldMember(ctx, w.ID, gm.ID, worldforge.RoleGM)) // replaces player
		must(t, db.AddWorldMember(ctx, w.ID, player.ID, worldforge.RolePlayer))
		must(t, db.AddWorldMember(ctx, w.ID, observer.ID, worldforge.RoleObserver))
		must(t, db.AddWorldMember(ctx, third.ID, gm.ID, worldforge.RolePlayer))

		roles := []struct {
			name, user, want string
		}{
			{"owner", owner.ID, worldforge.RoleOwner},
			{"gm", gm.ID, worldforge.RoleGM},
			{"player", player.ID, worldforge.RolePlayer},
			{"observer", observer.ID, worldforge.RoleObserver},
			{"stranger", stranger.ID, ""},
			{"no user", "", ""},
		}
		for _, c := range roles {
			t.Run("role of "+c.name, func(t *testing.T) {
				got, err := db.WorldRole(ctx, w.ID, c.user)
				must(t, err)
				if got != c.want {
					t.Errorf("WorldRole = %q, want %q", got, c.want)
				}
			})
		}
		_, err := db.WorldRole(ctx, "world_missing", owner.ID)
		wantCode(t, err, worldforge.ENotFound)

		bad := []struct {
			name, world, user, role, code string
		}{
			{"owner role", w.ID, stranger.ID, worldforge.RoleOwner, worldforge.EBadRequest},
			{"unknown role", w.ID, stranger.ID, "king", worldforge.EBadRequest},
			{"missing world", "world_missing", stranger.ID, worldforge.RoleGM, worldforge.ENotFound},
			{"missing user", w.ID, "user_missing", worldforge.RoleGM, worldforge.ENotFound},
		}
		for _, c := range bad {
			t.Run(c.name, func(t *testing.T) {
				wantCode(t, db.AddWorldMember(ctx, c.world, c.user, c.role), c.code)
			})
		}

		gmWorlds := []struct {
			user string
			want []string
		}{
			{owner.ID, []string{w.ID}},
			{gm.ID, sorted(w.ID, other.ID)},
			{player.ID, []string{third.ID}},
			{stranger.ID, []string{}},
		}
		for _, c := range gmWorlds {
			got, err := db.WorldsWhereGM(ctx, c.user)
			must(t, err)
			diff(t, c.want, got)
		}
	})
}

func sorted(s ...string) []string {
	slices.Sort(s)
	return s
}

func TestWorldRuntime(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner, p1, p2 := newUser(t, db, "owner"), newUser(t, db, "p1"), newUser(t, db, "p2")
		w := newWorld(t, db, owner.ID, "A")

		rt, err := dbtest.Runtime(ctx, db, w.ID)
		must(t, err)
		diff(t, &worldforge.WorldRuntime{Presence: []worldforge.Presence{}, OpenedPOIs: []string{},
			PickedItems: []worldforge.InventoryItem{}}, rt)
		if rt.Presence == nil || rt.OpenedPOIs == nil || rt.PickedItems == nil {
			t.Errorf("runtime lists are nil: %+v", rt)
		}
		_, err = dbtest.Runtime(ctx, db, "world_missing")
		wantCode(t, err, worldforge.ENotFound)

		pres := &worldforge.Presence{WorldID: w.ID, UserID: p1.ID, X: 3, Y: 4, UpdatedAt: at(0)}
		must(t, db.SetPresence(ctx, pres))
		pres.X, pres.Y, pres.UpdatedAt = 5, 6, at(1)
		must(t, db.SetPresence(ctx, pres)) // moves, not duplicates
		wantCode(t, db.SetPresence(ctx, &worldforge.Presence{WorldID: w.ID, UserID: "user_missing"}), worldforge.ENotFound)
		wantCode(t, db.SetPresence(ctx, &worldforge.Presence{WorldID: "world_missing", UserID: p1.ID}), worldforge.ENotFound)

		must(t, db.ExecForTest(ctx, "INSERT INTO opened_pois (world_id, poi_id, opened_by, opened_at) VALUES (?, ?, ?, ?)",
			w.ID, "poi_chest", p1.ID, at(2).UnixMilli()))
		must(t, db.ExecForTest(ctx, "INSERT INTO inventory (world_id, user_id, item_id, poi_id, name, picked_at) VALUES (?, ?, ?, ?, ?, ?)",
			w.ID, p1.ID, "item_sword", "poi_chest", "Sword", at(3).UnixMilli()))
		// An item can be picked only once per world, by anyone.
		wantCode(t, db.ExecForTest(ctx, "INSERT INTO inventory (world_id, user_id, item_id, poi_id, name, picked_at) VALUES (?, ?, ?, ?, ?, ?)",
			w.ID, p2.ID, "item_sword", "poi_chest", "Sword", at(4).UnixMilli()), worldforge.EConflict)

		rt, err = dbtest.Runtime(ctx, db, w.ID)
		must(t, err)
		diff(t, &worldforge.WorldRuntime{
			Presence:   []worldforge.Presence{{WorldID: w.ID, UserID: p1.ID, X: 5, Y: 6, UpdatedAt: at(1).Truncate(time.Millisecond)}},
			OpenedPOIs: []string{"poi_chest"},
			PickedItems: []worldforge.InventoryItem{{WorldID: w.ID, UserID: p1.ID, ItemID: "item_sword", POIID: "poi_chest",
				Name: "Sword", PickedAt: time.UnixMilli(at(3).UnixMilli()).UTC()}},
		}, rt)
	})
}

func TestCampaigns(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner, other := newUser(t, db, "owner"), newUser(t, db, "other")
		w := newWorld(t, db, owner.ID, "A")

		c1 := &worldforge.Campaign{OwnerID: owner.ID, WorldID: w.ID, Name: "First", JSON: json.RawMessage(`{"a":1}`), CreatedAt: at(0)}
		c2 := &worldforge.Campaign{OwnerID: owner.ID, Name: "Second", CreatedAt: at(5)}
		must(t, db.CreateCampaign(ctx, c1))
		must(t, db.CreateCampaign(ctx, c2))
		must(t, db.CreateCampaign(ctx, &worldforge.Campaign{OwnerID: other.ID, Name: "Theirs"}))
		got, err := db.FindCampaignByID(ctx, c1.ID)
		must(t, err)
		diff(t, c1, got)
		_, err = db.FindCampaignByID(ctx, "campaign_missing")
		wantCode(t, err, worldforge.ENotFound)
		wantCode(t, db.CreateCampaign(ctx, &worldforge.Campaign{OwnerID: owner.ID, WorldID: "world_missing", Name: "x"}), worldforge.ENotFound)

		list, err := dbtest.Campaigns(ctx, db, owner.ID)
		must(t, err)
		diff(t, []worldforge.DocSummary{
			{ID: c2.ID, Name: "Second", Version: 1, UpdatedAt: c2.UpdatedAt},
			{ID: c1.ID, Name: "First", WorldID: w.ID, Version: 1, UpdatedAt: c1.UpdatedAt},
		}, list)
		none, err := dbtest.Campaigns(ctx, db, "user_nobody")
		must(t, err)
		if none == nil || len(none) != 0 {
			t.Errorf("Campaigns(nobody) = %#v, want empty", none)
		}
	})
}

// TestQuestsAndEncounters runs one suite over the two tables of one shape.
func TestQuestsAndEncounters(t *testing.T) {
	t.Parallel()
	type ops struct {
		prefix string
		create func(*sqlstore.DB, context.Context, *worldforge.Quest) error
		find   func(*sqlstore.DB, context.Context, string) (*worldforge.Quest, error)
		list   func(*sqlstore.DB, context.Context, string, string) ([]worldforge.DocSummary, error)
	}
	kinds := map[string]ops{
		"quest": {"quest", (*sqlstore.DB).CreateQuest, (*sqlstore.DB).FindQuestByID, func(db *sqlstore.DB, ctx context.Context, owner, campaign string) ([]worldforge.DocSummary, error) {
			return dbtest.Quests(ctx, db, owner, campaign)
		}},
		"encounter": {"encounter", (*sqlstore.DB).CreateEncounter, (*sqlstore.DB).FindEncounterByID, func(db *sqlstore.DB, ctx context.Context, owner, campaign string) ([]worldforge.DocSummary, error) {
			return dbtest.Encounters(ctx, db, owner, campaign)
		}},
	}
	for name, k := range kinds {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
				ctx := t.Context()
				create := func(ctx context.Context, q *worldforge.Quest) error { return k.create(db, ctx, q) }
				find := func(ctx context.Context, id string) (*worldforge.Quest, error) { return k.find(db, ctx, id) }
				list := func(ctx context.Context, owner, campaign string) ([]worldforge.DocSummary, error) {
					return k.list(db, ctx, owner, campaign)
				}
				owner := newUser(t, db, "owner")
				w := newWorld(t, db, owner.ID, "A")
				camp := &worldforge.Campaign{OwnerID: owner.ID, WorldID: w.ID, Name: "C"}
				must(t, db.CreateCampaign(ctx, camp))

				q1 := &worldforge.Quest{OwnerID: owner.ID, CampaignID: camp.ID, WorldID: w.ID, Name: "In campaign",
					JSON: json.RawMessage(`{"steps":[]}`), CreatedAt: at(0)}
				q2 := &worldforge.Quest{OwnerID: owner.ID, Name: "Loose", CreatedAt: at(1)}
				must(t, create(ctx, q1))
				must(t, create(ctx, q2))
				if !worldforge.ValidID(k.prefix, q1.ID) || q1.Version != 1 {
					t.Errorf("created: id %q version %d", q1.ID, q1.Version)
				}
				got, err := find(ctx, q1.ID)
				must(t, err)
				diff(t, q1, got)
				_, err = find(ctx, k.prefix+"_missing")
				wantCode(t, err, worldforge.ENotFound)
				wantCode(t, create(ctx, &worldforge.Quest{OwnerID: owner.ID, CampaignID: "campaign_missing", Name: "x"}), worldforge.ENotFound)

				all, err := list(ctx, owner.ID, "")
				must(t, err)
				diff(t, []worldforge.DocSummary{
					{ID: q2.ID, Name: "Loose", Version: 1, UpdatedAt: q2.UpdatedAt},
					{ID: q1.ID, Name: "In campaign", CampaignID: camp.ID, WorldID: w.ID, Version: 1, UpdatedAt: q1.UpdatedAt},
				}, all)
				inCamp, err := list(ctx, owner.ID, camp.ID)
				must(t, err)
				if len(inCamp) != 1 || inCamp[0].ID != q1.ID {
					t.Errorf("list of campaign = %+v, want just %s", inCamp, q1.ID)
				}
				none, err := list(ctx, "user_nobody", "")
				must(t, err)
				if none == nil || len(none) != 0 {
					t.Errorf("list(nobody) = %#v, want empty", none)
				}
			})
		})
	}
}

func TestPing(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		must(t, db.Ping(t.Context()))
	})
}
