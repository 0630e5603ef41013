package sqlstore_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

func TestLore(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner := newUser(t, db, "owner")
		w := newWorld(t, db, owner.ID, "A")

		zed := &worldforge.LoreEntity{WorldID: w.ID, Collection: "deities", ID: "zed", Name: "Zed", JSON: json.RawMessage(`{"id":"zed"}`), UpdatedAt: at(0)}
		must(t, db.UpsertLore(ctx, zed))
		if zed.Version != 1 {
			t.Errorf("new entity version %d, want 1", zed.Version)
		}
		zed.Name, zed.JSON, zed.UpdatedAt = "Zed the Old", json.RawMessage(`{"id":"zed","old":true}`), at(1)
		must(t, db.UpsertLore(ctx, zed))
		if zed.Version != 2 {
			t.Errorf("replaced entity version %d, want 2", zed.Version)
		}
		amy := &worldforge.LoreEntity{WorldID: w.ID, Collection: "deities", ID: "amy", Name: "Amy", UpdatedAt: at(2)}
		must(t, db.UpsertLore(ctx, amy))
		feast := &worldforge.LoreEntity{WorldID: w.ID, Collection: "festivals", Name: "Feast", UpdatedAt: at(3)}
		must(t, db.UpsertLore(ctx, feast))
		if !worldforge.ValidID("lore", feast.ID) {
			t.Errorf("filled ID %q", feast.ID)
		}

		wantCode(t, db.UpsertLore(ctx, &worldforge.LoreEntity{WorldID: w.ID, Collection: "dragons", ID: "x"}), worldforge.EBadRequest)
		wantCode(t, db.UpsertLore(ctx, &worldforge.LoreEntity{WorldID: "world_missing", Collection: "deities", ID: "x"}), worldforge.ENotFound)

		all, err := dbtest.Lore(ctx, db, w.ID, "")
		must(t, err)
		diff(t, []worldforge.LoreEntity{*amy, *zed, *feast}, all) // by collection, then name
		deities, err := dbtest.Lore(ctx, db, w.ID, "deities")
		must(t, err)
		diff(t, []worldforge.LoreEntity{*amy, *zed}, deities)
		none, err := dbtest.Lore(ctx, db, w.ID, "eras")
		must(t, err)
		if none == nil || len(none) != 0 {
			t.Errorf("ListLore(eras) = %#v, want empty", none)
		}

		counts, err := db.CountLore(ctx, w.ID)
		must(t, err)
		want := map[string]int{}
		for _, c := range worldforge.LoreCollections {
			want[c] = 0
		}
		want["deities"], want["festivals"] = 2, 1
		diff(t, want, counts)
		if len(counts) != 17 {
			t.Errorf("%d collections counted, want 17", len(counts))
		}
	})
}

func TestFindLore(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner := newUser(t, db, "owner")
		w, other := newWorld(t, db, owner.ID, "World"), newWorld(t, db, owner.ID, "Other")
		e := &worldforge.LoreEntity{WorldID: w.ID, Collection: "factions", ID: "wardens", Name: "Wardens", JSON: json.RawMessage(`{"id":"wardens","name":"Wardens"}`)}
		must(t, db.UpsertLore(ctx, e))
		got, err := db.FindLore(ctx, w.ID, "factions", "wardens")
		if err != nil || got.Name != "Wardens" || got.Version != 1 || string(got.JSON) != `{"id":"wardens","name":"Wardens"}` {
			t.Fatalf("FindLore: %+v, %v", got, err)
		}
		for _, miss := range [][3]string{{w.ID, "factions", "nobody"}, {w.ID, "deities", "wardens"}, {other.ID, "factions", "wardens"}, {w.ID, "bogus", "wardens"}} {
			if _, err := db.FindLore(ctx, miss[0], miss[1], miss[2]); !errors.Is(err, worldforge.ErrNotFound) {
				t.Errorf("FindLore%v: %v, want not_found", miss, err)
			}
		}
	})
}
