package sqlstore_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/loretest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// Growth benchmarks for the list and search reads: each size is
// seeded once, then the read is measured. Run with
// go test -run XXX -bench 'SearchWikiPages|WikiPageHistory|ListLore|LoreReads' ./sqlstore

// benchStore opens a fresh store for a benchmark with one user, the owner
// of what the benchmark seeds.
func benchStore(b *testing.B) (*sqlstore.DB, *worldforge.User) {
	b.Helper()
	db := dbtest.Open(b)
	owner := &worldforge.User{Name: "bench"}
	if err := db.CreateUser(b.Context(), owner); err != nil {
		b.Fatal(err)
	}
	return db, owner
}

// BenchmarkSearchWikiPages searches the live pages of one world by a word
// in their titles, 20 results a page.
func BenchmarkSearchWikiPages(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 50_000} {
		db, owner := benchStore(b)
		ctx := b.Context()
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
		db, owner := benchStore(b)
		ctx := b.Context()
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
		db, owner := benchStore(b)
		ctx := b.Context()
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
				if _, err := db.ListLoreForTest(ctx, w.ID, "deities"); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("all/entities=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := db.ListLoreForTest(ctx, w.ID, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLoreReads measures what list_lore reads (indexed facts), on a world
// of n entities in 17 collections that refer to each other, with an issue
// of every kind in one row of 17 out of 1,000: one page of a collection
// (the first, and one in the middle), the counts, and the integrity issues
// from the stored facts (of the world, capped at 500, and of one
// collection).
func BenchmarkLoreReads(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		db, owner := benchStore(b)
		ctx := b.Context()
		w := &worldforge.World{OwnerID: owner.ID, Name: "Lore"}
		if err := db.CreateWorldContent(ctx, w, &worldforge.WorldContent{Lore: loretest.World(n, 1000)}, owner.ID); err != nil {
			b.Fatal(err)
		}
		middle := fmt.Sprint("x", n/17/2)
		for _, r := range []struct {
			name string
			fn   func() (int, error)
		}{
			{"page-first", func() (int, error) {
				p, err := db.ListLorePage(ctx, worldforge.LorePageQuery{WorldID: w.ID, Collection: "deities", Limit: 100})
				return len(p.Items), err
			}},
			{"page-middle", func() (int, error) {
				p, err := db.ListLorePage(ctx, worldforge.LorePageQuery{WorldID: w.ID, Collection: "deities", After: middle, Limit: 100})
				return len(p.Items), err
			}},
			{"counts", func() (int, error) {
				c, err := db.CountLore(ctx, w.ID)
				return c["deities"], err
			}},
			{"issues-world", func() (int, error) {
				_, total, err := db.LoreIssues(ctx, w.ID, "", worldforge.MaxLoreIssues)
				return total, err
			}},
			{"issues-collection", func() (int, error) {
				_, total, err := db.LoreIssues(ctx, w.ID, "deities", worldforge.MaxLoreIssues)
				return total, err
			}},
		} {
			b.Run(fmt.Sprintf("%s/entities=%d", r.name, n), func(b *testing.B) {
				b.ReportAllocs()
				got := 0
				for b.Loop() {
					var err error
					if got, err = r.fn(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(got), "results")
			})
		}
	}
}

// BenchmarkUpsertLore measures the write side of the lore facts: one
// UpsertLore (its own transaction, committed) of a faction with three
// references, replacing it each time, in a world of n entities; and the
// creation of a world with n entities in one transaction (per entity).
func BenchmarkUpsertLore(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		db, owner := benchStore(b)
		ctx := b.Context()
		lore := loretest.World(n, 1000)
		b.Run(fmt.Sprintf("create-world/entities=%d", n), func(b *testing.B) {
			for b.Loop() {
				w := &worldforge.World{OwnerID: owner.ID, Name: "Lore"}
				if err := db.CreateWorldContent(ctx, w, &worldforge.WorldContent{Lore: lore}, owner.ID); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(lore)), "ns/entity")
		})
		w := &worldforge.World{OwnerID: owner.ID, Name: "Lore"}
		if err := db.CreateWorldContent(ctx, w, &worldforge.WorldContent{Lore: lore}, owner.ID); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("one/entities=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				e := &worldforge.LoreEntity{WorldID: w.ID, Collection: "factions", ID: "x1", Name: "Faction 1",
					JSON: []byte(fmt.Sprintf(`{"id":"x1","name":"Faction 1","allies":["x2","gone%d"],"rivals":["x0"]}`, i%2))}
				if err := db.UpsertLore(ctx, e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
