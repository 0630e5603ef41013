package sqlstore_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/worldforge-go/worldforge"
)

// BenchmarkPagedLists measures the paged lists' store reads on a
// world (and an owner) with n rows in each list: the whole list, as the
// tools read it before paging, against one page of 100 rows, the first and
// one from the middle (the key of row n/2). Titles and names repeat, so
// the id breaks ties. Run with
// go test -run XXX -bench PagedLists ./sqlstore
func BenchmarkPagedLists(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		db, owner := benchStore(b)
		ctx := b.Context()
		content := &worldforge.WorldContent{
			WikiPages:  make([]worldforge.WikiPage, n),
			AtlasNodes: make([]worldforge.AtlasNode, n),
			Lore:       make([]worldforge.LoreEntity, n),
		}
		kinds := worldforge.WikiKinds
		for i := range n {
			content.WikiPages[i] = worldforge.WikiPage{Title: fmt.Sprintf("Page %d", i%(n/4)), Body: "Some text.",
				Kind: kinds[i%len(kinds)], Audience: worldforge.AudienceGM}
			content.AtlasNodes[i] = worldforge.AtlasNode{Name: fmt.Sprintf("Place %d", i%(n/4)), Level: 1 + i%5, TerrainType: "plains",
				JSON: []byte(`{"climate":"mild"}`)}
			id := fmt.Sprintf("f%06d", i)
			content.Lore[i] = worldforge.LoreEntity{Collection: "factions", ID: id, Name: fmt.Sprintf("Faction %d", i%(n/4)),
				JSON: []byte(`{"id":"` + id + `","name":"Faction ` + fmt.Sprint(i%(n/4)) + `"}`)}
		}
		w := &worldforge.World{OwnerID: owner.ID, Name: "Paged"}
		if err := db.CreateWorldContent(ctx, w, content, owner.ID); err != nil {
			b.Fatal(err)
		}
		// The owner's campaigns, 50 to a millisecond.
		const batch = 500
		for i := 0; i < n; i += batch {
			var sb strings.Builder
			var args []any
			sb.WriteString("INSERT INTO campaigns (id, owner_id, name, version, created_at, updated_at) VALUES ")
			for k := i; k < i+batch && k < n; k++ {
				if k > i {
					sb.WriteString(", ")
				}
				sb.WriteString("(?, ?, ?, 1, ?, ?)")
				at := int64(1_700_000_000_000 + k/50)
				args = append(args, fmt.Sprintf("campaign_%08d", k), owner.ID, fmt.Sprint("Campaign ", k), at, at)
			}
			if err := db.ExecForTest(ctx, sb.String(), args...); err != nil {
				b.Fatal(err)
			}
		}

		wiki, err := db.ListWikiPagesForTest(ctx, w.ID, "")
		if err != nil {
			b.Fatal(err)
		}
		atlas, err := db.ListAtlasNodesForTest(ctx, w.ID, 0)
		if err != nil {
			b.Fatal(err)
		}
		lore, err := db.ListLoreForTest(ctx, w.ID, "factions")
		if err != nil {
			b.Fatal(err)
		}
		campaigns, err := db.ListCampaignsForTest(ctx, owner.ID)
		if err != nil {
			b.Fatal(err)
		}
		mid := n / 2
		for _, r := range []struct {
			list string
			whole,
			page func(after *worldforge.PageKey) (int, error)
			middle *worldforge.PageKey
		}{
			{"wiki", func(*worldforge.PageKey) (int, error) {
				l, err := db.ListWikiPagesForTest(ctx, w.ID, "")
				return len(l), err
			}, func(after *worldforge.PageKey) (int, error) {
				p, err := db.ListWikiPagesPage(ctx, w.ID, "", worldforge.PageQuery{After: after, Limit: 100})
				return len(p.Items), err
			}, wikiKey(&wiki[mid])},
			{"atlas", func(*worldforge.PageKey) (int, error) {
				l, err := db.ListAtlasNodesForTest(ctx, w.ID, 0)
				return len(l), err
			}, func(after *worldforge.PageKey) (int, error) {
				p, err := db.ListAtlasNodesPage(ctx, w.ID, 0, worldforge.PageQuery{After: after, Limit: 100, MaxBytes: worldforge.MaxPageBytes})
				return len(p.Items), err
			}, atlasKey(&atlas[mid])},
			{"factions", func(*worldforge.PageKey) (int, error) {
				l, err := db.ListLoreForTest(ctx, w.ID, "factions")
				return len(l), err
			}, func(after *worldforge.PageKey) (int, error) {
				p, err := db.ListLoreByNamePage(ctx, w.ID, "factions", worldforge.PageQuery{After: after, Limit: 100, MaxBytes: worldforge.MaxPageBytes})
				return len(p.Items), err
			}, loreKey(&lore[mid])},
			{"campaigns", func(*worldforge.PageKey) (int, error) {
				l, err := db.ListCampaignsForTest(ctx, owner.ID)
				return len(l), err
			}, func(after *worldforge.PageKey) (int, error) {
				p, err := db.ListCampaignsPage(ctx, owner.ID, worldforge.PageQuery{After: after, Limit: 100})
				return len(p.Items), err
			}, docKey(&campaigns[mid])},
		} {
			for _, c := range []struct {
				name  string
				fn    func(*worldforge.PageKey) (int, error)
				after *worldforge.PageKey
				want  int
			}{
				{"whole", r.whole, nil, n},
				{"page-first", r.page, nil, 100},
				{"page-middle", r.page, r.middle, 100},
			} {
				b.Run(fmt.Sprintf("%s/%s/rows=%d", r.list, c.name, n), func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						got, err := c.fn(c.after)
						if err != nil || got != c.want {
							b.Fatalf("%d rows, want %d: %v", got, c.want, err)
						}
					}
				})
			}
		}
	}
}
