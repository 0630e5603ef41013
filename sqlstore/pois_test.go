package sqlstore_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

func poiNames(ps []worldforge.POI) []string {
	names := []string{}
	for _, p := range ps {
		names = append(names, p.Name)
	}
	return names
}

func TestPOIs(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner := newUser(t, db, "owner")
		w, w2 := newWorld(t, db, owner.ID, "A"), newWorld(t, db, owner.ID, "B")

		poi := func(world, name, category string, x, y int, vis string, tags ...string) *worldforge.POI {
			p := &worldforge.POI{WorldID: world, Name: name, Category: category, Tags: tags, X: x, Y: y, Visibility: vis}
			must(t, db.CreatePOI(ctx, p))
			return p
		}
		// Cell centres with CellSizePx 32; distances are from the pixel (16, 16).
		well := &worldforge.POI{WorldID: w.ID, Name: "Well", Category: "water", Tags: []string{"town", "water"},
			X: 0, Y: 0, Items: []worldforge.POIItem{{ID: "item_bucket", Name: "Bucket"}}, Pickable: true, Openable: true,
			Visibility: worldforge.AudienceParty}
		must(t, db.CreatePOI(ctx, well))                                                          // d = 0
		poi(w.ID, "Tavern", "inn", 1, 0, worldforge.AudienceParty, "town", "food")                // d = 32
		poi(w.ID, "Shrine 100%", "holy", -2, -1, worldforge.AudienceParty)                        // d ≈ 71.6
		poi(w.ID, "Old Well", "water", 3, 4, worldforge.AudienceGM, "water")                      // d = 160
		poi(w.ID, "Cave", "dungeon", 10, 10, worldforge.AudienceGM, "danger")                     // d ≈ 452.5
		gate := poi(w.ID, "Gate", "wall", 50, 50, "", `a"b`, "x%y")                               // far; default visibility
		poi(w2.ID, "Well of Elsewhere", "water", 0, 0, worldforge.AudienceParty, "town", "water") // another world

		if gate.Visibility != worldforge.AudienceGM || !worldforge.ValidID("poi", gate.ID) || gate.Version != 1 {
			t.Errorf("created gate: %+v", gate)
		}
		got, err := db.SearchPOIs(ctx, w.ID, worldforge.POIQuery{Name: "well", Category: "water", Tags: []string{"town"}})
		must(t, err)
		diff(t, []worldforge.POI{*well}, got)

		cases := []struct {
			name string
			q    worldforge.POIQuery
			want []string
		}{
			{"all by name", worldforge.POIQuery{}, []string{"Cave", "Gate", "Old Well", "Shrine 100%", "Tavern", "Well"}},
			{"name any case", worldforge.POIQuery{Name: "WELL"}, []string{"Old Well", "Well"}},
			{"name percent literal", worldforge.POIQuery{Name: "0%"}, []string{"Shrine 100%"}},
			{"category exact", worldforge.POIQuery{Category: "water"}, []string{"Old Well", "Well"}},
			{"category not substring", worldforge.POIQuery{Category: "wat"}, []string{}},
			{"one tag", worldforge.POIQuery{Tags: []string{"town"}}, []string{"Tavern", "Well"}},
			{"all tags", worldforge.POIQuery{Tags: []string{"town", "water"}}, []string{"Well"}},
			{"repeated tag", worldforge.POIQuery{Tags: []string{"town", "town"}}, []string{"Tavern", "Well"}},
			{"tag with quote", worldforge.POIQuery{Tags: []string{`a"b`}}, []string{"Gate"}},
			{"tag is exact", worldforge.POIQuery{Tags: []string{"a"}}, []string{}},
			{"tag percent", worldforge.POIQuery{Tags: []string{"x%y"}}, []string{"Gate"}},
			{"tag no wildcard", worldforge.POIQuery{Tags: []string{"x_y"}}, []string{}},
			{"party only", worldforge.POIQuery{PartyOnly: true}, []string{"Shrine 100%", "Tavern", "Well"}},
			{"nearest first", worldforge.POIQuery{X: ptr(16), Y: ptr(16)}, []string{"Well", "Tavern", "Shrine 100%", "Old Well", "Cave", "Gate"}},
			{"radius inclusive", worldforge.POIQuery{X: ptr(16), Y: ptr(16), RadiusPx: ptr(160.0)}, []string{"Well", "Tavern", "Shrine 100%", "Old Well"}},
			{"radius just short", worldforge.POIQuery{X: ptr(16), Y: ptr(16), RadiusPx: ptr(159.99)}, []string{"Well", "Tavern", "Shrine 100%"}},
			{"radius zero", worldforge.POIQuery{X: ptr(16), Y: ptr(16), RadiusPx: ptr(0.0)}, []string{"Well"}},
			{"radius off the grid", worldforge.POIQuery{X: ptr(-1000), Y: ptr(-1000), RadiusPx: ptr(10.0)}, []string{}},
			{"radius huge", worldforge.POIQuery{X: ptr(16), Y: ptr(16), RadiusPx: ptr(1e300)}, []string{"Well", "Tavern", "Shrine 100%", "Old Well", "Cave", "Gate"}},
			{"radius and category", worldforge.POIQuery{X: ptr(16), Y: ptr(16), RadiusPx: ptr(200.0), Category: "water"}, []string{"Well", "Old Well"}},
			{"radius and party", worldforge.POIQuery{X: ptr(16), Y: ptr(16), RadiusPx: ptr(200.0), PartyOnly: true}, []string{"Well", "Tavern", "Shrine 100%"}},
			{"nearest from elsewhere", worldforge.POIQuery{X: ptr(330), Y: ptr(330), Limit: 2}, []string{"Cave", "Old Well"}},
			{"x without y is no position", worldforge.POIQuery{X: ptr(330), RadiusPx: ptr(1.0)}, []string{"Cave", "Gate", "Old Well", "Shrine 100%", "Tavern", "Well"}},
			{"limit", worldforge.POIQuery{Limit: 2}, []string{"Cave", "Gate"}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				got, err := db.SearchPOIs(ctx, w.ID, c.q)
				must(t, err)
				diff(t, c.want, poiNames(got))
			})
		}

		_, err = db.SearchPOIs(ctx, w.ID, worldforge.POIQuery{X: ptr(1), Y: ptr(1), RadiusPx: ptr(-1.0)})
		wantCode(t, err, worldforge.EBadRequest)
		_, err = db.SearchPOIs(ctx, w.ID, worldforge.POIQuery{X: ptr(1 << 40), Y: ptr(1)})
		wantCode(t, err, worldforge.EBadRequest)
		wantCode(t, db.CreatePOI(ctx, &worldforge.POI{WorldID: "world_missing", Name: "x"}), worldforge.ENotFound)

		t.Run("limit default and cap", func(t *testing.T) {
			many := newWorld(t, db, owner.ID, "many")
			for i := range 210 {
				poi(many.ID, fmt.Sprintf("p%03d", i), "c", i%20, i/20, worldforge.AudienceGM)
			}
			for _, c := range []struct{ limit, want int }{{0, 50}, {-5, 50}, {10, 10}, {200, 200}, {1000, 200}} {
				got, err := db.SearchPOIs(ctx, many.ID, worldforge.POIQuery{Limit: c.limit})
				must(t, err)
				if len(got) != c.want {
					t.Errorf("limit %d: %d results, want %d", c.limit, len(got), c.want)
				}
				near, err := db.SearchPOIs(ctx, many.ID, worldforge.POIQuery{Limit: c.limit, X: ptr(0), Y: ptr(0), RadiusPx: ptr(1e5)})
				must(t, err)
				if len(near) != c.want || near[0].Name != "p000" {
					t.Errorf("limit %d with position: %d results (first %s), want %d from p000", c.limit, len(near), near[0].Name, c.want)
				}
			}
		})
	})
}

// TestNearestPOIsMatchBruteForce checks the ring search for nearest-first
// queries without a radius against a sort of every POI by distance.
func TestNearestPOIsMatchBruteForce(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner := newUser(t, db, "owner")
		w := newWorld(t, db, owner.ID, "Scatter")
		rng := rand.New(rand.NewPCG(1, 2))
		var all []worldforge.POI
		for i := range 400 {
			x, y := rng.IntN(300), rng.IntN(300)
			if i%50 == 0 { // a few far away, beyond every ring
				x, y = 9000+rng.IntN(100), 9000
			}
			all = append(all, worldforge.POI{Name: fmt.Sprintf("P%03d", rng.IntN(200)), X: x, Y: y, Category: []string{"a", "b"}[i%2]})
		}
		for i := range all {
			all[i].WorldID = w.ID
			must(t, db.CreatePOI(ctx, &all[i]))
		}
		const c, half = worldforge.CellSizePx, worldforge.CellSizePx / 2
		for _, probe := range []struct{ x, y, limit int }{{0, 0, 1}, {150 * c, 150 * c, 7}, {4000, 9000, 50}, {299 * c, 0, 200}, {9050 * c, 9000 * c, 10}} {
			for _, cat := range []string{"", "b"} {
				want := slices.Clone(all)
				want = slices.DeleteFunc(want, func(p worldforge.POI) bool { return cat != "" && p.Category != cat })
				d2 := func(p worldforge.POI) int64 {
					dx, dy := int64(p.X*c+half-probe.x), int64(p.Y*c+half-probe.y)
					return dx*dx + dy*dy
				}
				slices.SortFunc(want, func(a, b worldforge.POI) int {
					return cmp.Or(cmp.Compare(d2(a), d2(b)), strings.Compare(a.Name, b.Name), strings.Compare(a.ID, b.ID))
				})
				want = want[:min(probe.limit, len(want))]
				x, y := probe.x, probe.y
				got, err := db.SearchPOIs(ctx, w.ID, worldforge.POIQuery{X: &x, Y: &y, Limit: probe.limit, Category: cat})
				must(t, err)
				if len(got) != len(want) {
					t.Fatalf("probe %+v %q: %d results, want %d", probe, cat, len(got), len(want))
				}
				for i := range got {
					if got[i].ID != want[i].ID {
						t.Fatalf("probe %+v %q: result %d is %s at (%d,%d), want %s at (%d,%d)", probe, cat, i,
							got[i].Name, got[i].X, got[i].Y, want[i].Name, want[i].X, want[i].Y)
					}
				}
			}
		}
	})
}

// TestPOISearchManyTags: the tags of a search are one SQL parameter, not
// one condition each, so no number of tags makes a query either engine
// refuses (SQLite's expression depth limit was reached at 934 tags).
// Every tag must still be on a POI for it to match.
func TestPOISearchManyTags(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner := newUser(t, db, "owner")
		w := newWorld(t, db, owner.ID, "tags")
		many := make([]string, 10_000)
		for i := range many {
			many[i] = fmt.Sprintf("tag-%05d", i)
		}
		all := &worldforge.POI{WorldID: w.ID, Name: "Everything", Category: "c", Tags: many, Visibility: worldforge.AudienceGM}
		must(t, db.CreatePOI(ctx, all))
		must(t, db.CreatePOI(ctx, &worldforge.POI{WorldID: w.ID, Name: "Some", Category: "c", Tags: many[:10], Visibility: worldforge.AudienceGM}))
		missing := append(slices.Clone(many), "not-there")
		for _, c := range []struct {
			name string
			tags []string
			want []string
		}{
			{"every tag of one POI", many, []string{"Everything"}},
			{"every tag twice", append(slices.Clone(many), many...), []string{"Everything"}},
			{"a few tags of both", many[:3], []string{"Everything", "Some"}},
			{"one tag missing", missing, []string{}},
			{"none present", []string{"x", "y", "z"}, []string{}},
		} {
			t.Run(c.name, func(t *testing.T) {
				got, err := db.SearchPOIs(ctx, w.ID, worldforge.POIQuery{Tags: c.tags})
				must(t, err)
				diff(t, c.want, poiNames(got))
				near, err := db.SearchPOIs(ctx, w.ID, worldforge.POIQuery{Tags: c.tags, X: ptr(0), Y: ptr(0)})
				must(t, err)
				diff(t, c.want, poiNames(near))
			})
		}
	})
}
