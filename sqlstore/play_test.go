package sqlstore_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

func TestCreateWorldContent(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner := newUser(t, db, "owner")
		w := &worldforge.World{OwnerID: owner.ID, Name: "Generated", Template: "starter-jungle", Seed: 7, Cols: 4, Rows: 3,
			JSON: json.RawMessage(`{"grid":{"cols":4,"rows":3}}`)}
		region := worldforge.AtlasNode{ID: worldforge.NewID("atlas"), Name: "Region", Level: 1}
		c := &worldforge.WorldContent{
			POIs:       []worldforge.POI{{Name: "Shrine", Category: "shrine", X: 1, Y: 1, Items: []worldforge.POIItem{{ID: "item-1", Name: "Idol"}}, Pickable: true}},
			AtlasNodes: []worldforge.AtlasNode{region, {Name: "Village", Level: 2, ParentID: region.ID}},
			WikiPages:  []worldforge.WikiPage{{Title: "Welcome", Body: "# Hi", Kind: worldforge.WikiKindLore, Audience: worldforge.AudienceParty}},
			Lore:       []worldforge.LoreEntity{{Collection: "pantheons", ID: "serpents", Name: "Serpents", JSON: json.RawMessage(`{"id":"serpents","name":"Serpents"}`)}},
		}
		must(t, db.CreateWorldContent(ctx, w, c, owner.ID))
		if w.Version != 1 || !worldforge.ValidID("world", w.ID) {
			t.Fatalf("world: %+v", w)
		}
		pois, err := db.SearchPOIs(ctx, w.ID, worldforge.POIQuery{})
		must(t, err)
		if len(pois) != 1 || pois[0].Name != "Shrine" || len(pois[0].Items) != 1 {
			t.Errorf("pois: %+v", pois)
		}
		nodes, err := dbtest.AtlasNodes(ctx, db, w.ID, 0)
		must(t, err)
		if len(nodes) != 2 {
			t.Errorf("atlas: %+v", nodes)
		}
		pages, err := db.CountWikiPages(ctx, w.ID)
		must(t, err)
		if pages[worldforge.WikiKindLore] != 1 {
			t.Errorf("wiki counts: %v", pages)
		}
		lore, err := db.CountLore(ctx, w.ID)
		must(t, err)
		if lore["pantheons"] != 1 {
			t.Errorf("lore counts: %v", lore)
		}

		// A failure part-way stores nothing: the second POI's world is
		// fine, but an atlas node names a parent that does not exist.
		bad := &worldforge.World{OwnerID: owner.ID, Name: "Half"}
		err = db.CreateWorldContent(ctx, bad, &worldforge.WorldContent{
			POIs:       []worldforge.POI{{Name: "P", X: 0, Y: 0}},
			AtlasNodes: []worldforge.AtlasNode{{Name: "Orphan", Level: 2, ParentID: "atlas_nonexistent000000"}},
		}, owner.ID)
		wantCode(t, err, worldforge.ENotFound)
		if _, err := dbtest.World(ctx, db, bad.ID); !errors.Is(err, worldforge.ErrNotFound) {
			t.Errorf("half-created world exists: %v", err)
		}
	})
}

func TestResizeWorld(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner := newUser(t, db, "owner")
		w := newWorld(t, db, owner.ID, "R")
		inside := &worldforge.POI{WorldID: w.ID, Name: "In", X: 1, Y: 1, Openable: true, Pickable: true,
			Items: []worldforge.POIItem{{ID: "item-in", Name: "In"}}}
		outside := &worldforge.POI{WorldID: w.ID, Name: "Out", X: 9, Y: 9, Openable: true, Pickable: true,
			Items: []worldforge.POIItem{{ID: "item-out", Name: "Out"}}}
		must(t, db.CreatePOI(ctx, inside))
		must(t, db.CreatePOI(ctx, outside))
		player, near := newUser(t, db, "player"), newUser(t, db, "near")
		must(t, db.SetPresence(ctx, &worldforge.Presence{WorldID: w.ID, UserID: player.ID, X: 9, Y: 9}))
		must(t, db.SetPresence(ctx, &worldforge.Presence{WorldID: w.ID, UserID: near.ID, X: 1, Y: 1}))
		_, _, err := db.OpenPOI(ctx, w.ID, player.ID, outside.ID, nil)
		must(t, err)
		_, err = db.PickUp(ctx, w.ID, player.ID, outside.ID, "item-out", nil)
		must(t, err)
		_, _, err = db.OpenPOI(ctx, w.ID, near.ID, inside.ID, nil)
		must(t, err)
		_, err = db.PickUp(ctx, w.ID, near.ID, inside.ID, "item-in", nil)
		must(t, err)
		_, before, err := db.ReadWorld(ctx, w.ID)
		must(t, err)

		// An error from fn changes nothing.
		refuse := &worldforge.Error{Code: "too_small"}
		_, err = db.ResizeWorld(ctx, w.ID, func(*worldforge.World, []worldforge.POI, *worldforge.WorldRuntime) (*worldforge.ResizePlan, error) {
			return nil, refuse
		})
		if !errors.Is(err, refuse) {
			t.Fatalf("refusal: %v", err)
		}
		got, err := dbtest.World(ctx, db, w.ID)
		must(t, err)
		if got.Version != 1 {
			t.Fatalf("version after refusal: %d", got.Version)
		}

		var (
			seen   []string
			seenRT *worldforge.WorldRuntime
		)
		rw, err := db.ResizeWorld(ctx, w.ID, func(cur *worldforge.World, pois []worldforge.POI, rt *worldforge.WorldRuntime) (*worldforge.ResizePlan, error) {
			for _, p := range pois {
				seen = append(seen, p.Name)
			}
			seenRT = rt
			return &worldforge.ResizePlan{Doc: []byte(`{"grid":{"cols":5,"rows":5}}`), Cols: 5, Rows: 5,
				DropPOIs: []string{outside.ID}, DropPresence: []string{player.ID},
				DropOpened: []string{outside.ID}, DropPicked: []string{"item-out"}}, nil
		})
		must(t, err)
		slices.Sort(seen)
		if rw.Version != 2 || rw.Cols != 5 || rw.Rows != 5 || fmt.Sprint(seen) != "[In Out]" {
			t.Fatalf("resized: %+v, fn saw %v", rw, seen)
		}
		diff(t, before, seenRT) // fn saw the runtime state
		rw2, rt, err := db.ReadWorld(ctx, w.ID)
		must(t, err)
		if string(rw2.JSON) != `{"grid":{"cols":5,"rows":5}}` || rw2.Version != 2 {
			t.Errorf("after resize: %+v", rw2)
		}
		// Exactly what the plan named is gone.
		if len(rt.Presence) != 1 || rt.Presence[0].UserID != near.ID || !slices.Equal(rt.OpenedPOIs, []string{inside.ID}) ||
			len(rt.PickedItems) != 1 || rt.PickedItems[0].ItemID != "item-in" {
			t.Errorf("runtime after resize: %+v", rt)
		}
		if _, err := db.FindPOIByID(ctx, outside.ID); !errors.Is(err, worldforge.ErrNotFound) {
			t.Errorf("dropped POI still there: %v", err)
		}
		if _, err := db.FindPOIByID(ctx, inside.ID); err != nil {
			t.Errorf("kept POI: %v", err)
		}
		_, err = db.ResizeWorld(ctx, "world_missing0000000000", func(*worldforge.World, []worldforge.POI, *worldforge.WorldRuntime) (*worldforge.ResizePlan, error) {
			t.Error("fn called for a missing world")
			return nil, nil
		})
		wantCode(t, err, worldforge.ENotFound)
	})
}

// TestSetPresenceInGrid: the store refuses a presence outside the world's
// grid (bad_request, nothing stored), a side of 0 being unbounded.
func TestSetPresenceInGrid(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner := newUser(t, db, "owner")
		w := newWorld(t, db, owner.ID, "G") // 64×48
		for _, c := range [][2]int{{64, 0}, {0, 48}, {-1, 0}, {0, -1}, {1 << 40, 0}} {
			err := db.SetPresence(ctx, &worldforge.Presence{WorldID: w.ID, UserID: owner.ID, X: c[0], Y: c[1]})
			wantCode(t, err, worldforge.EBadRequest)
		}
		rt, err := dbtest.Runtime(ctx, db, w.ID)
		must(t, err)
		if len(rt.Presence) != 0 {
			t.Fatalf("refused presence stored: %+v", rt.Presence)
		}
		must(t, db.SetPresence(ctx, &worldforge.Presence{WorldID: w.ID, UserID: owner.ID, X: 63, Y: 47}))
		free := &worldforge.World{OwnerID: owner.ID, Name: "No grid", JSON: json.RawMessage(`{}`)}
		must(t, db.CreateWorld(ctx, free))
		must(t, db.SetPresence(ctx, &worldforge.Presence{WorldID: free.ID, UserID: owner.ID, X: 5000, Y: 7}))
	})
}

// TestResizeInterleaving: a presence write and a player action that come
// while a shrinking resize is under way (its function running) wait for
// it, and then see the new grid: neither a presence outside it nor an
// opened mark or picked item of a POI it dropped is left behind. The
// resize function waits a moment for them to finish first; where they are
// not held back (the bug this guards against) they do, and the test fails.
func TestResizeInterleaving(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner := newUser(t, db, "owner")
		w := newWorld(t, db, owner.ID, "Shrinking") // 64×48
		mover, looter := newUser(t, db, "mover"), newUser(t, db, "looter")
		chest := &worldforge.POI{WorldID: w.ID, Name: "Chest", X: 27, Y: 8, Openable: true, Pickable: true,
			Items: []worldforge.POIItem{{ID: "item-coin", Name: "Coin"}}}
		must(t, db.CreatePOI(ctx, chest))
		must(t, db.SetPresence(ctx, &worldforge.Presence{WorldID: w.ID, UserID: looter.ID, X: 27, Y: 8}))

		acts := []struct {
			name string
			run  func() error
		}{
			{"set presence", func() error {
				return db.SetPresence(ctx, &worldforge.Presence{WorldID: w.ID, UserID: mover.ID, X: 27, Y: 8})
			}},
			{"open", func() error { _, _, err := db.OpenPOI(ctx, w.ID, looter.ID, chest.ID, nil); return err }},
			{"pick up", func() error { _, err := db.PickUp(ctx, w.ID, looter.ID, chest.ID, "item-coin", nil); return err }},
		}
		inside := make(chan struct{})
		done := make(chan error, len(acts))
		for _, a := range acts {
			go func() {
				<-inside
				err := a.run()
				if err != nil {
					err = fmt.Errorf("%s: %w", a.name, err)
				}
				done <- err
			}()
		}
		_, err := db.ResizeWorld(ctx, w.ID, func(_ *worldforge.World, _ []worldforge.POI, rt *worldforge.WorldRuntime) (*worldforge.ResizePlan, error) {
			close(inside)
			// Give the actions the chance to finish inside the resize (a
			// bound, not an assertion: held back, they cannot).
			timeout := time.After(500 * time.Millisecond)
			var early []error
		wait:
			for range acts {
				select {
				case err := <-done:
					early = append(early, err)
				case <-timeout:
					break wait
				}
			}
			for _, err := range early {
				done <- err
			}
			plan := &worldforge.ResizePlan{Doc: []byte(`{"grid":{"cols":2,"rows":2}}`), Cols: 2, Rows: 2,
				DropPOIs: []string{chest.ID}, DropOpened: slices.Clone(rt.OpenedPOIs)}
			for _, p := range rt.Presence {
				plan.DropPresence = append(plan.DropPresence, p.UserID) // all are outside 2×2
			}
			for _, it := range rt.PickedItems {
				plan.DropPicked = append(plan.DropPicked, it.ItemID)
			}
			return plan, nil
		})
		must(t, err)
		for range acts {
			err := <-done
			// After the resize: the cell is outside (bad_request), the
			// looter's presence is gone (conflict: no_presence).
			if !errors.Is(err, &worldforge.Error{Code: worldforge.EBadRequest}) && !errors.Is(err, &worldforge.Error{Code: worldforge.EConflict}) {
				t.Errorf("action during the resize: %v, want it refused after it", err)
			}
		}
		rt, err := dbtest.Runtime(ctx, db, w.ID)
		must(t, err)
		if len(rt.Presence)+len(rt.OpenedPOIs)+len(rt.PickedItems) != 0 {
			t.Errorf("runtime left outside the 2×2 grid: %+v", rt)
		}
	})
}

func TestPickUpAndOpen(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner := newUser(t, db, "owner")
		player := newUser(t, db, "player")
		w := newWorld(t, db, owner.ID, "P")
		chest := &worldforge.POI{WorldID: w.ID, Name: "Chest", X: 2, Y: 2, Pickable: true, Openable: true,
			Items: []worldforge.POIItem{{ID: "item-1", Name: "Gold"}, {ID: "item-2", Name: "Map"}}}
		must(t, db.CreatePOI(ctx, chest))

		_, err := db.PickUp(ctx, w.ID, player.ID, chest.ID, "item-1", nil)
		wantCode(t, err, worldforge.EConflict)
		if err == nil || err.Error() != "pick up: conflict: no_presence" {
			t.Errorf("no presence: %v", err)
		}
		must(t, db.SetPresence(ctx, &worldforge.Presence{WorldID: w.ID, UserID: player.ID, X: 2, Y: 3}))

		tooFar := worldforge.BadRequest("too_far")
		_, err = db.PickUp(ctx, w.ID, player.ID, chest.ID, "item-1", func(*worldforge.Presence, *worldforge.POI) error { return tooFar })
		if !errors.Is(err, tooFar) {
			t.Errorf("check refusal: %v", err)
		}
		_, err = db.PickUp(ctx, w.ID, player.ID, "poi_missing000000000000", "item-1", nil)
		wantCode(t, err, worldforge.ENotFound)
		_, err = db.PickUp(ctx, w.ID, player.ID, chest.ID, "item-9", nil)
		if err == nil || err.Error() != "pick up: bad_request: unknown_item" {
			t.Errorf("unknown item: %v", err)
		}

		var saw *worldforge.Presence
		item, err := db.PickUp(ctx, w.ID, player.ID, chest.ID, "item-1", func(p *worldforge.Presence, poi *worldforge.POI) error {
			saw = p
			return nil
		})
		must(t, err)
		if item.Name != "Gold" || item.POIID != chest.ID || saw == nil || saw.X != 2 || saw.Y != 3 {
			t.Errorf("item %+v, presence %+v", item, saw)
		}
		_, err = db.PickUp(ctx, w.ID, player.ID, chest.ID, "item-1", nil)
		wantCode(t, err, worldforge.EBadRequest) // taken already

		poi, first, err := db.OpenPOI(ctx, w.ID, player.ID, chest.ID, nil)
		must(t, err)
		if !first || poi.ID != chest.ID {
			t.Errorf("open: %v %+v", first, poi)
		}
		_, first, err = db.OpenPOI(ctx, w.ID, player.ID, chest.ID, nil)
		must(t, err)
		if first {
			t.Error("opened twice")
		}
		_, rt, err := db.ReadWorld(ctx, w.ID)
		must(t, err)
		if len(rt.PickedItems) != 1 || rt.PickedItems[0].ItemID != "item-1" || len(rt.OpenedPOIs) != 1 {
			t.Errorf("runtime: %+v", rt)
		}
	})
}

// TestPickUpRace has many players grab the same item at once: exactly one
// gets it, the others are told unknown_item, and one inventory row exists.
func TestPickUpRace(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner := newUser(t, db, "owner")
		w := newWorld(t, db, owner.ID, "Race")
		chest := &worldforge.POI{WorldID: w.ID, Name: "Chest", X: 0, Y: 0, Pickable: true,
			Items: []worldforge.POIItem{{ID: "item-crown", Name: "Crown"}}}
		must(t, db.CreatePOI(ctx, chest))
		const players = 12
		ids := make([]string, players)
		for i := range ids {
			u := newUser(t, db, fmt.Sprintf("p%d", i))
			ids[i] = u.ID
			must(t, db.SetPresence(ctx, &worldforge.Presence{WorldID: w.ID, UserID: u.ID, X: 0, Y: 0}))
		}
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			winners  int
			unknowns int
			others   []error
		)
		for _, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := db.PickUp(ctx, w.ID, id, chest.ID, "item-crown", nil)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					winners++
				case errors.Is(err, &worldforge.Error{Code: worldforge.EBadRequest, Detail: "unknown_item"}):
					unknowns++
				default:
					others = append(others, err)
				}
			}()
		}
		wg.Wait()
		if winners != 1 || unknowns != players-1 || len(others) > 0 {
			t.Fatalf("winners %d, unknown_item %d, other errors %v", winners, unknowns, others)
		}
		_, rt, err := db.ReadWorld(ctx, w.ID)
		must(t, err)
		if len(rt.PickedItems) != 1 {
			t.Fatalf("inventory rows: %+v", rt.PickedItems)
		}
	})
}
