package sqlstore_test

import (
	"fmt"
	"testing"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

func summaryIDs(s []worldforge.WikiPageSummary) []string {
	ids := []string{}
	for _, p := range s {
		ids = append(ids, p.ID)
	}
	return ids
}

func TestWiki(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner := newUser(t, db, "owner")
		w1, w2, w3 := newWorld(t, db, owner.ID, "one"), newWorld(t, db, owner.ID, "two"), newWorld(t, db, owner.ID, "three")

		page := func(world, title, body, kind string) *worldforge.WikiPage {
			p := &worldforge.WikiPage{WorldID: world, Title: title, Body: body, Kind: kind, Audience: worldforge.AudienceGM, CreatedAt: t0}
			must(t, db.CreateWikiPage(ctx, p, owner.ID))
			return p
		}
		harbor := page(w1.ID, "Harbor of Kest", "Ships dock here.", worldforge.WikiKindPlace)
		guild := page(w1.ID, "Thieves' Guild", "They meet at the HARBOR.", worldforge.WikiKindFaction)
		pct := page(w1.ID, "100% Pure", "A tavern.", worldforge.WikiKindPlace)
		other := page(w2.ID, "Harborless", "Inland.", worldforge.WikiKindPlace)
		page(w3.ID, "Harbor Three", "Not searched.", worldforge.WikiKindPlace)
		gone := &worldforge.WikiPage{WorldID: w1.ID, Title: "Harbor ruins", Kind: worldforge.WikiKindPlace,
			Audience: worldforge.AudienceParty, DeletedAt: ptr(at(1))}
		must(t, db.CreateWikiPage(ctx, gone, owner.ID))

		if !worldforge.ValidID("wiki", harbor.ID) || harbor.Version != 1 {
			t.Errorf("created: id %q version %d", harbor.ID, harbor.Version)
		}
		got, err := db.FindWikiPageByID(ctx, harbor.ID)
		must(t, err)
		diff(t, harbor, got)
		gotGone, err := db.FindWikiPageByID(ctx, gone.ID)
		must(t, err)
		if gotGone.DeletedAt == nil || !gotGone.DeletedAt.Equal(*gone.DeletedAt) {
			t.Errorf("deleted page DeletedAt = %v, want %v", gotGone.DeletedAt, gone.DeletedAt)
		}
		_, err = db.FindWikiPageByID(ctx, "wiki_missing")
		wantCode(t, err, worldforge.ENotFound)
		wantCode(t, db.CreateWikiPage(ctx, &worldforge.WikiPage{WorldID: "world_missing", Title: "x", Kind: "lore"}, owner.ID),
			worldforge.ENotFound)

		t.Run("list", func(t *testing.T) {
			all, err := dbtest.WikiPages(ctx, db, w1.ID, "")
			must(t, err)
			diff(t, []string{pct.ID, harbor.ID, guild.ID}, summaryIDs(all)) // by title, live only
			diff(t, worldforge.WikiPageSummary{ID: harbor.ID, WorldID: w1.ID, Title: harbor.Title, Kind: harbor.Kind,
				Audience: harbor.Audience, Version: 1, UpdatedAt: harbor.UpdatedAt}, all[1])
			places, err := dbtest.WikiPages(ctx, db, w1.ID, worldforge.WikiKindPlace)
			must(t, err)
			diff(t, []string{pct.ID, harbor.ID}, summaryIDs(places))
			none, err := dbtest.WikiPages(ctx, db, "world_missing", "")
			must(t, err)
			diff(t, []string{}, summaryIDs(none))
		})

		searches := []struct {
			name string
			s    worldforge.WikiSearch
			want []string
		}{
			{"no worlds", worldforge.WikiSearch{Q: "harbor"}, []string{}},
			{"title or body, any case", worldforge.WikiSearch{WorldIDs: []string{w1.ID}, Q: "hArBoR"}, []string{harbor.ID, guild.ID}},
			{"two worlds", worldforge.WikiSearch{WorldIDs: []string{w1.ID, w2.ID}, Q: "harbor"}, []string{harbor.ID, other.ID, guild.ID}},
			{"kind", worldforge.WikiSearch{WorldIDs: []string{w1.ID, w2.ID}, Q: "harbor", Kind: worldforge.WikiKindFaction}, []string{guild.ID}},
			{"limit", worldforge.WikiSearch{WorldIDs: []string{w1.ID, w2.ID}, Q: "harbor", Limit: 2}, []string{harbor.ID, other.ID}},
			{"no q", worldforge.WikiSearch{WorldIDs: []string{w2.ID}}, []string{other.ID}},
			{"percent is literal", worldforge.WikiSearch{WorldIDs: []string{w1.ID}, Q: "0%"}, []string{pct.ID}},
			{"underscore is literal", worldforge.WikiSearch{WorldIDs: []string{w1.ID}, Q: "_"}, []string{}},
			{"deleted not found", worldforge.WikiSearch{WorldIDs: []string{w1.ID}, Q: "ruins"}, []string{}},
		}
		for _, c := range searches {
			t.Run("search "+c.name, func(t *testing.T) {
				got, err := db.SearchWikiPages(ctx, c.s)
				must(t, err)
				diff(t, c.want, summaryIDs(got))
			})
		}

		t.Run("search limit default and cap", func(t *testing.T) {
			w := newWorld(t, db, owner.ID, "many")
			for i := range 105 {
				page(w.ID, fmt.Sprintf("Page %03d", i), "", worldforge.WikiKindLore)
			}
			for _, c := range []struct{ limit, want int }{{0, 20}, {-1, 20}, {7, 7}, {100, 100}, {1000, 100}} {
				got, err := db.SearchWikiPages(ctx, worldforge.WikiSearch{WorldIDs: []string{w.ID}, Limit: c.limit})
				must(t, err)
				if len(got) != c.want {
					t.Errorf("limit %d: %d results, want %d", c.limit, len(got), c.want)
				}
			}
		})

		t.Run("history", func(t *testing.T) {
			hist, err := db.WikiPageHistory(ctx, harbor.ID, 0)
			must(t, err)
			diff(t, []worldforge.WikiRevision{{PageID: harbor.ID, Version: 1, Title: harbor.Title, Body: harbor.Body,
				Kind: harbor.Kind, Audience: harbor.Audience, AuthorID: owner.ID, CreatedAt: harbor.CreatedAt}}, hist)
			for v := 2; v <= 4; v++ {
				must(t, db.ExecForTest(ctx, `INSERT INTO wiki_revisions
					(page_id, version, title, body, kind, audience, author_id, diff_summary, created_at)
					VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
					harbor.ID, v, fmt.Sprintf("Harbor v%d", v), "", "place", "gm", owner.ID, fmt.Sprintf("edit %d", v), at(v).UnixMilli()))
			}
			// A revision number is taken once.
			wantCode(t, db.ExecForTest(ctx, `INSERT INTO wiki_revisions
				(page_id, version, title, body, kind, audience, created_at) VALUES (?, 4, 'x', '', 'place', 'gm', 0)`, harbor.ID),
				worldforge.EConflict)
			for _, c := range []struct {
				limit int
				want  []int64
			}{{0, []int64{4, 3, 2, 1}}, {2, []int64{4, 3}}, {500, []int64{4, 3, 2, 1}}} {
				hist, err := db.WikiPageHistory(ctx, harbor.ID, c.limit)
				must(t, err)
				var got []int64
				for _, r := range hist {
					got = append(got, r.Version)
				}
				diff(t, c.want, got)
			}
			none, err := db.WikiPageHistory(ctx, "wiki_missing", 10)
			must(t, err)
			if none == nil || len(none) != 0 {
				t.Errorf("history of missing page = %#v, want empty", none)
			}
		})

		t.Run("counts", func(t *testing.T) {
			got, err := db.CountWikiPages(ctx, w1.ID)
			must(t, err)
			diff(t, map[string]int{"lore": 0, "faction": 1, "place": 2, "quest-log": 0}, got)
			empty, err := db.CountWikiPages(ctx, "world_missing")
			must(t, err)
			diff(t, map[string]int{"lore": 0, "faction": 0, "place": 0, "quest-log": 0}, empty)
		})
	})
}
