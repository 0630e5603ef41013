package sqlstore_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
)

// Growth benchmarks for the list and search reads (issue 8): each size is
// seeded once, then the read is measured. Run with
// go test -run XXX -bench 'SearchWikiPages|WikiPageHistory|ListLore' ./sqlstore

// BenchmarkSearchWikiPages searches the live pages of one world by a word
// in their titles, 20 results a page.
func BenchmarkSearchWikiPages(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 50_000} {
		db := dbtest.Open(b)
		ctx := b.Context()
		owner := &worldforge.User{Name: "bench"}
		if err := db.CreateUser(ctx, owner); err != nil {
			b.Fatal(err)
		}
		kinds := worldforge.WikiKinds
		pages := make([]worldforge.WikiPage, n)
		for i := range pages {
			pages[i] = worldforge.WikiPage{Title: fmt.Sprintf("Page %d of the %s", i, []string{"river", "tower", "market", "crypt"}[i%4]),
				Body: strings.Repeat("lorem ipsum ", 20), Kind: kinds[i%len(kinds)], Audience: worldforge.AudienceParty}
		}
		w := &worldforge.World{OwnerID: owner.ID, Name: "Wiki"}
		if err := db.CreateWorldContent(ctx, w, &worldforge.WorldContent{WikiPages: pages}, owner.ID); err != nil {
			b.Fatal(err)
		}
		for _, q := range []struct{ name, q, kind string }{{"common-word", "tower", ""}, {"rare-title", "Page 4242 ", ""}, {"kind-only", "", worldforge.WikiKindPlace}} {
			b.Run(fmt.Sprintf("%s/pages=%d", q.name, n), func(b *testing.B) {
				b.ReportAllocs()
				found := 0
				for b.Loop() {
					got, err := db.SearchWikiPages(ctx, worldforge.WikiSearch{WorldIDs: []string{w.ID}, Q: q.q, Kind: q.kind, Limit: 20})
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

// BenchmarkWikiPageHistory reads the newest 50 revisions of a page with n.
func BenchmarkWikiPageHistory(b *testing.B) {
	for _, n := range []int{100, 1_000, 10_000} {
		db := dbtest.Open(b)
		ctx := b.Context()
		owner := &worldforge.User{Name: "bench"}
		if err := db.CreateUser(ctx, owner); err != nil {
			b.Fatal(err)
		}
		w := &worldforge.World{OwnerID: owner.ID, Name: "History"}
		page := worldforge.WikiPage{Title: "Often edited", Body: "v1", Kind: worldforge.WikiKindLore, Audience: worldforge.AudienceGM}
		c := &worldforge.WorldContent{WikiPages: []worldforge.WikiPage{page}}
		if err := db.CreateWorldContent(ctx, w, c, owner.ID); err != nil {
			b.Fatal(err)
		}
		id := c.WikiPages[0].ID
		const batch = 500
		for v := 2; v <= n; v += batch {
			var sb strings.Builder
			var args []any
			sb.WriteString("INSERT INTO wiki_revisions (page_id, version, title, body, kind, audience, author_id, diff_summary, created_at) VALUES ")
			for k := v; k < v+batch && k <= n; k++ {
				if k > v {
					sb.WriteString(", ")
				}
				sb.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?)")
				args = append(args, id, k, "Often edited", fmt.Sprintf("v%d", k), worldforge.WikiKindLore, worldforge.AudienceGM, owner.ID, "edit", int64(1_700_000_000_000+k))
			}
			if err := db.ExecForTest(ctx, sb.String(), args...); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("revisions=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				revs, err := db.WikiPageHistory(ctx, id, 50)
				if err != nil || len(revs) != min(50, n) {
					b.Fatal(len(revs), err)
				}
			}
		})
	}
}

// BenchmarkListLore lists one collection of a world holding n entities
// spread over the 17 collections.
func BenchmarkListLore(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		db := dbtest.Open(b)
		ctx := b.Context()
		owner := &worldforge.User{Name: "bench"}
		if err := db.CreateUser(ctx, owner); err != nil {
			b.Fatal(err)
		}
		cols := worldforge.LoreCollections
		lore := make([]worldforge.LoreEntity, n)
		for i := range lore {
			id := fmt.Sprintf("e%06d", i)
			lore[i] = worldforge.LoreEntity{Collection: cols[i%len(cols)], ID: id, Name: "Entity " + id,
				JSON: []byte(`{"id":"` + id + `","name":"Entity ` + id + `"}`)}
		}
		w := &worldforge.World{OwnerID: owner.ID, Name: "Lore"}
		if err := db.CreateWorldContent(ctx, w, &worldforge.WorldContent{Lore: lore}, owner.ID); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("one-collection/entities=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := db.ListLore(ctx, w.ID, "deities"); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("all/entities=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := db.ListLore(ctx, w.ID, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
