package sqlstore_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// BenchmarkWikiPageWrite measures the writes the wiki search index is kept
// in step with: a page created, and an edit proposed and
// committed, in a world of 10k pages, bodies of about 1 KB; with the index
// (its triggers) and without (triggers dropped: the cost before migration
// 005). Run with go test -run XXX -bench WikiPageWrite ./sqlstore
func BenchmarkWikiPageWrite(b *testing.B) {
	const n = 10_000
	body := func(i int) string {
		var sb strings.Builder
		for j := uint(i); sb.Len() < 1000; j = j*31 + 17 {
			fmt.Fprintf(&sb, "The %s of %d keeps its %s. ", benchWords[j%uint(len(benchWords))], j%100_000, benchWords[(j/7)%uint(len(benchWords))])
		}
		return sb.String()
	}
	for _, index := range []bool{true, false} {
		db := dbtest.Open(b)
		ctx := b.Context()
		if !index {
			for _, q := range []string{"DROP TRIGGER wiki_search_insert", "DROP TRIGGER wiki_search_update", "DROP TRIGGER wiki_search_delete"} {
				if err := db.ExecForTest(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
		}
		owner := &worldforge.User{Name: "bench"}
		if err := db.CreateUser(ctx, owner); err != nil {
			b.Fatal(err)
		}
		pages := make([]worldforge.WikiPage, n)
		for i := range pages {
			pages[i] = worldforge.WikiPage{Title: fmt.Sprintf("Page %d", i), Body: body(i),
				Kind: worldforge.WikiKinds[i%len(worldforge.WikiKinds)], Audience: worldforge.AudienceParty}
		}
		w := &worldforge.World{OwnerID: owner.ID, Name: "Wiki"}
		c := &worldforge.WorldContent{WikiPages: pages}
		if err := db.CreateWorldContent(ctx, w, c, owner.ID); err != nil {
			b.Fatal(err)
		}
		i := n
		b.Run(fmt.Sprintf("create/index=%v/pages=%d", index, n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				i++
				p := &worldforge.WikiPage{WorldID: w.ID, Title: fmt.Sprintf("New page %d", i), Body: body(i),
					Kind: worldforge.WikiKindLore, Audience: worldforge.AudienceGM}
				if err := db.CreateWikiPage(ctx, p, owner.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
		page := c.WikiPages[n/2]
		version := page.Version // kept across the runs of the sub-benchmark
		b.Run(fmt.Sprintf("edit/index=%v/pages=%d", index, n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				i++
				pl, _ := json.Marshal(worldforge.WikiEditPayload{Body: ptr(body(i))})
				p := &worldforge.Proposal{WorldID: w.ID, Kind: worldforge.ProposalWikiEdit, TargetID: page.ID, BaseVersion: version,
					ActorID: owner.ID, DiffSummary: "edit", Payload: pl}
				if err := db.CreateProposal(ctx, p, nil); err != nil {
					b.Fatal(err)
				}
				res, err := db.CommitProposal(ctx, p.ID, owner.ID, nil, commitAudit(owner.ID))
				if err != nil {
					b.Fatal(err)
				}
				version = res.Version
			}
		})
	}
}

// benchWords are the words of the benchmark bodies.
var benchWords = []string{"river", "tower", "market", "crypt", "harbor", "guild", "temple", "forest", "dragon", "lantern",
	"bridge", "citadel", "orchard", "smithy", "archive", "garrison", "shrine", "quarry", "ferry", "beacon"}

// BenchmarkSearchWikiPagesIndex measures indexed wiki searches on the
// world of BenchmarkSearchWikiPages plus a second world of n/4 pages titled
// "Beacon …": the growth benchmark's common word and rare title, a text no
// page holds, a long text, a text common in the other world only, and
// searches of both worlds (a common word, a rare one); each by the store
// ("race") and by the plain query it replaces ("plain", what every search
// did before the index), on SQLite and, when WORLDFORGE_TEST_POSTGRES_DSN
// is set, PostgreSQL. Run with
// go test -run XXX -bench SearchWikiPagesIndex ./sqlstore
func BenchmarkSearchWikiPagesIndex(b *testing.B) {
	for _, engine := range dbtest.Engines {
		if engine == sqlstore.EnginePostgres && os.Getenv(dbtest.EnvPostgresDSN) == "" {
			continue
		}
		benchmarkSearchWikiPagesIndex(b, engine)
	}
}

func benchmarkSearchWikiPagesIndex(b *testing.B, engine string) {
	for _, n := range []int{1_000, 10_000, 50_000} {
		db := dbtest.MustOpen(b, dbtest.DSN(b, engine))
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
		other := make([]worldforge.WikiPage, n/4)
		for i := range other {
			other[i] = worldforge.WikiPage{Title: fmt.Sprintf("Beacon %d", i), Body: strings.Repeat("dolor sit amet ", 16),
				Kind: kinds[i%len(kinds)], Audience: worldforge.AudienceParty}
		}
		w2 := &worldforge.World{OwnerID: owner.ID, Name: "Beacons"}
		if err := db.CreateWorldContent(ctx, w2, &worldforge.WorldContent{WikiPages: other}, owner.ID); err != nil {
			b.Fatal(err)
		}
		if engine == sqlstore.EnginePostgres {
			// Statistics, as autovacuum gathers them after a load: without
			// them the planner takes a world of 10k pages for one of 80.
			if err := db.ExecForTest(ctx, "ANALYZE wiki_pages"); err != nil {
				b.Fatal(err)
			}
		}
		one, both := []string{w.ID}, []string{w.ID, w2.ID}
		for _, q := range []struct {
			name   string
			worlds []string
			q      string
		}{
			{"common-word", one, "tower"},
			{"rare-title", one, "Page 4242 "},
			{"no-match", one, "zzz-nowhere"},
			{"long-text", one, "page 4242 of the market and then some more"},
			{"common-elsewhere", one, "beacon"},
			{"two-worlds-common", both, "tower"},
			{"two-worlds-rare", both, "Beacon 42 "},
		} {
			for _, plan := range []string{"race", "plain"} {
				search := db.SearchWikiPages
				if plan == "plain" {
					search = db.SearchWikiPagesScanForTest
				}
				b.Run(fmt.Sprintf("%s/%s/%s/pages=%d", engine, q.name, plan, n), func(b *testing.B) {
					b.ReportAllocs()
					found := 0
					for b.Loop() {
						got, err := search(ctx, worldforge.WikiSearch{WorldIDs: q.worlds, Q: q.q, Limit: 20})
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
}
