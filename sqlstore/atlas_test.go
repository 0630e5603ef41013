package sqlstore_test

import (
	"encoding/json"
	"testing"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

func nodeIDs(ns []worldforge.AtlasNode) []string {
	ids := []string{}
	for _, n := range ns {
		ids = append(ids, n.ID)
	}
	return ids
}

func TestAtlas(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner := newUser(t, db, "owner")
		w1, w2 := newWorld(t, db, owner.ID, "one"), newWorld(t, db, owner.ID, "two")

		node := func(world, parent, name string, level int) *worldforge.AtlasNode {
			n := &worldforge.AtlasNode{WorldID: world, ParentID: parent, Name: name, Level: level, TerrainType: "plains",
				JSON: json.RawMessage(`{"climate":"mild"}`)}
			must(t, db.CreateAtlasNode(ctx, n))
			return n
		}
		cont := node(w1.ID, "", "Valmar", 1)
		north := node(w1.ID, cont.ID, "North Reach", 2)
		south := node(w1.ID, cont.ID, "Southmarch", 2)
		port := node(w1.ID, south.ID, "Port Valmar", 3)
		far := node(w2.ID, "", "Valmarine Isles", 1)

		if !worldforge.ValidID("atlas", cont.ID) || cont.Version != 1 {
			t.Errorf("created: id %q version %d", cont.ID, cont.Version)
		}
		got, err := db.FindAtlasNodeByID(ctx, north.ID)
		must(t, err)
		diff(t, north, got)
		_, err = db.FindAtlasNodeByID(ctx, "atlas_missing")
		wantCode(t, err, worldforge.ENotFound)
		wantCode(t, db.CreateAtlasNode(ctx, &worldforge.AtlasNode{WorldID: w1.ID, ParentID: "atlas_missing", Name: "x", Level: 2}),
			worldforge.ENotFound)
		wantCode(t, db.CreateAtlasNode(ctx, &worldforge.AtlasNode{WorldID: "world_missing", Name: "x", Level: 1}),
			worldforge.ENotFound)

		lists := []struct {
			name  string
			level int
			want  []string
		}{
			{"all, by level then name", 0, []string{cont.ID, north.ID, south.ID, port.ID}},
			{"level 2", 2, []string{north.ID, south.ID}},
			{"empty level", 5, []string{}},
		}
		for _, c := range lists {
			t.Run("list "+c.name, func(t *testing.T) {
				got, err := dbtest.AtlasNodes(ctx, db, w1.ID, c.level)
				must(t, err)
				diff(t, c.want, nodeIDs(got))
			})
		}

		searches := []struct {
			name string
			s    worldforge.AtlasSearch
			want []string
		}{
			{"no worlds", worldforge.AtlasSearch{Q: "valmar"}, []string{}},
			{"one world, any case", worldforge.AtlasSearch{WorldIDs: []string{w1.ID}, Q: "VALMAR"}, []string{port.ID, cont.ID}},
			{"two worlds", worldforge.AtlasSearch{WorldIDs: []string{w1.ID, w2.ID}, Q: "valmar"}, []string{port.ID, cont.ID, far.ID}},
			{"limit", worldforge.AtlasSearch{WorldIDs: []string{w1.ID, w2.ID}, Q: "valmar", Limit: 1}, []string{port.ID}},
			{"no match", worldforge.AtlasSearch{WorldIDs: []string{w1.ID}, Q: "zzz"}, []string{}},
		}
		for _, c := range searches {
			t.Run("search "+c.name, func(t *testing.T) {
				got, err := db.SearchAtlasNodes(ctx, c.s)
				must(t, err)
				diff(t, c.want, nodeIDs(got))
			})
		}

		for world, want := range map[string]int{w1.ID: 4, w2.ID: 1, "world_missing": 0} {
			n, err := db.CountAtlasNodes(ctx, world)
			must(t, err)
			if n != want {
				t.Errorf("CountAtlasNodes(%s) = %d, want %d", world, n, want)
			}
		}
	})
}
