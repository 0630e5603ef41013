package sqlstore_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// TestReadWorldSince: a stamp still the world's reads nothing else; any
// change gives a new stamp that was never the world's; a deleted world is
// not_found whatever stamp the caller holds.
func TestReadWorldSince(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		u := &worldforge.User{Name: "owner"}
		must(t, db.CreateUser(ctx, u))
		w := &worldforge.World{OwnerID: u.ID, Name: "w", Cols: 8, Rows: 8, JSON: []byte(`{"grid":[]}`)}
		must(t, db.CreateWorld(ctx, w))

		got, rt, _, stamp, err := db.ReadWorldSince(ctx, w.ID, 0)
		must(t, err)
		if got == nil || rt == nil || stamp <= 0 {
			t.Fatalf("first read: world %v, runtime %v, stamp %d", got, rt, stamp)
		}
		seen := map[int64]bool{stamp: true}
		again, _, _, same, err := db.ReadWorldSince(ctx, w.ID, stamp)
		must(t, err)
		if again != nil || same != stamp {
			t.Fatalf("unchanged world: got %v at stamp %d, want nil at %d", again, same, stamp)
		}
		for i, change := range []func() error{
			func() error {
				return db.SetPresence(ctx, &worldforge.Presence{WorldID: w.ID, UserID: u.ID, X: 1, Y: 1})
			},
			func() error {
				return db.SetPresence(ctx, &worldforge.Presence{WorldID: w.ID, UserID: u.ID, X: 2, Y: 1})
			},
			func() error { return db.ExecForTest(ctx, "UPDATE worlds SET name = 'v' WHERE id = ?", w.ID) },
			func() error { return db.ExecForTest(ctx, "DELETE FROM presence WHERE world_id = ?", w.ID) },
		} {
			must(t, change())
			got, _, _, now, err := db.ReadWorldSince(ctx, w.ID, stamp)
			must(t, err)
			if got == nil || seen[now] {
				t.Fatalf("change %d: world %v at stamp %d (seen before: %v)", i, got, now, seen[now])
			}
			seen[now], stamp = true, now
		}
		must(t, db.ExecForTest(ctx, "DELETE FROM worlds WHERE id = ?", w.ID))
		if _, _, _, _, err := db.ReadWorldSince(ctx, w.ID, stamp); !errors.Is(err, worldforge.ErrNotFound) {
			t.Fatalf("deleted world: %v, want not_found", err)
		}
	})
}

// TestReadWorldSinceMany checks kept answers of many worlds at once, so
// that the shared stamp queries read several worlds (IN lists padded to a
// power of two): each caller gets its own world's stamp.
func TestReadWorldSinceMany(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		u := &worldforge.User{Name: "owner"}
		must(t, db.CreateUser(ctx, u))
		const n = 23
		ids, stamps := make([]string, n), make([]int64, n)
		for i := range n {
			w := &worldforge.World{OwnerID: u.ID, Name: "w", Cols: 8, Rows: 8, JSON: []byte(`{"grid":[]}`)}
			must(t, db.CreateWorld(ctx, w))
			_, _, _, stamp, err := db.ReadWorldSince(ctx, w.ID, 0)
			must(t, err)
			ids[i], stamps[i] = w.ID, stamp
		}
		// Change every third world.
		for i := 0; i < n; i += 3 {
			must(t, db.SetPresence(ctx, &worldforge.Presence{WorldID: ids[i], UserID: u.ID, X: 1, Y: 1}))
		}
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for k := range 50 {
					i := (g*5 + k) % n
					w, _, _, _, err := db.ReadWorldSince(ctx, ids[i], stamps[i])
					if err != nil {
						t.Error(err)
						return
					}
					if changed := i%3 == 0; (w != nil) != changed {
						t.Errorf("world %d (changed: %v): read whole: %v", i, changed, w != nil)
						return
					}
				}
			})
		}
		wg.Wait()
	})
}
