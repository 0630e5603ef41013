package sqlstore_test

import (
	"fmt"
	"testing"

	"github.com/worldforge-go/worldforge"
)

// BenchmarkSearchPOIs searches a world of n POIs spread over a 4096×4096
// grid (seeded once per size, in one transaction): by radius around a
// point (the (world_id, x, y) index and an exact distance test), nearest
// first without a radius (growing rings on the same index), by name
// substring (the (world_id, name) index walked in order until the page is
// full; a substring nothing matches walks all of the world's entries), and
// by category and tag.
func BenchmarkSearchPOIs(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		db, owner := benchStore(b)
		ctx := b.Context()
		w := &worldforge.World{OwnerID: owner.ID, Name: "Big", Cols: 4096, Rows: 4096}
		pois := make([]worldforge.POI, n)
		cats := []string{"shrine", "ruin", "camp", "cave", "tower"}
		for i := range pois {
			// A scattered, deterministic layout.
			x, y := (i*7919)%4096, (i*104729/7)%4096
			pois[i] = worldforge.POI{Name: fmt.Sprintf("Place %d", i), Category: cats[i%len(cats)], X: x, Y: y,
				Tags: []string{cats[(i+1)%len(cats)]}, Visibility: worldforge.AudienceParty}
		}
		if err := db.CreateWorldContent(ctx, w, &worldforge.WorldContent{POIs: pois}, owner.ID); err != nil {
			b.Fatal(err)
		}
		x, y, r := 2048*worldforge.CellSizePx, 2048*worldforge.CellSizePx, 20.0*worldforge.CellSizePx
		queries := []struct {
			name string
			q    worldforge.POIQuery
		}{
			{"radius", worldforge.POIQuery{X: &x, Y: &y, RadiusPx: &r}},
			{"nearest", worldforge.POIQuery{X: &x, Y: &y, Limit: 10}},
			{"name", worldforge.POIQuery{Name: "place 12", Limit: 20}},
			{"name-no-match", worldforge.POIQuery{Name: "nowhere", Limit: 20}},
			{"category+tag", worldforge.POIQuery{Category: "ruin", Tags: []string{"camp"}, Limit: 20}},
		}
		for _, q := range queries {
			b.Run(fmt.Sprintf("%s/n=%d", q.name, n), func(b *testing.B) {
				b.ReportAllocs()
				found := 0
				for b.Loop() {
					got, err := db.SearchPOIs(ctx, w.ID, q.q)
					if err != nil {
						b.Fatal(err)
					}
					found = len(got)
				}
				b.ReportMetric(float64(found), "results")
			})
		}
	}
}
