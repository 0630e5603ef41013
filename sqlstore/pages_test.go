package sqlstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// pagedList is one paged list of the store under test: the whole list as
// the old unpaged method gives it, one page, and the key of a row.
type pagedList[T any] struct {
	name  string
	whole func(ctx context.Context) ([]T, error)
	page  func(ctx context.Context, q worldforge.PageQuery) (*worldforge.Page[T], error)
	key   func(*T) *worldforge.PageKey
	id    func(*T) string
}

// walk reads every page of l with the limit, calling between(pages so
// far) after each page, and returns the ids in the order read.
func (l pagedList[T]) walk(t *testing.T, limit int, between func(n int)) []string {
	t.Helper()
	var (
		ids   []string
		after *worldforge.PageKey
	)
	for n := 1; ; n++ {
		p, err := l.page(t.Context(), worldforge.PageQuery{After: after, Limit: limit})
		if err != nil {
			t.Fatalf("%s: page %d (limit %d): %v", l.name, n, limit, err)
		}
		if len(p.Items) > limit || (p.More && len(p.Items) == 0) {
			t.Fatalf("%s: page %d (limit %d): %d rows, more %v", l.name, n, limit, len(p.Items), p.More)
		}
		for i := range p.Items {
			ids = append(ids, l.id(&p.Items[i]))
		}
		if !p.More {
			return ids
		}
		after = l.key(&p.Items[len(p.Items)-1])
		if n > 10_000 {
			t.Fatalf("%s: no end after %d pages", l.name, n)
		}
		if between != nil {
			between(n)
		}
	}
}

func (l pagedList[T]) wholeIDs(t *testing.T) []string {
	t.Helper()
	all, err := l.whole(t.Context())
	must(t, err)
	ids := []string{}
	for i := range all {
		ids = append(ids, l.id(&all[i]))
	}
	return ids
}

// checkWalks walks l with several limits and requires exactly the whole
// list, in its order, each time.
func (l pagedList[T]) checkWalks(t *testing.T) {
	t.Helper()
	want := l.wholeIDs(t)
	if len(want) < 5 {
		t.Fatalf("%s: only %d rows", l.name, len(want))
	}
	for _, limit := range []int{1, 2, 3, 7, len(want) - 1, len(want), len(want) + 1, worldforge.MaxPageLimit} {
		if got := l.walk(t, limit, nil); !slices.Equal(got, want) {
			t.Errorf("%s, limit %d: walked %v\nwant %v", l.name, limit, got, want)
		}
	}
}

func docID(d *worldforge.DocSummary) string { return d.ID }
func docKey(d *worldforge.DocSummary) *worldforge.PageKey {
	return &worldforge.PageKey{UpdatedAt: d.UpdatedAt.UnixMilli(), ID: d.ID}
}
func wikiID(p *worldforge.WikiPageSummary) string { return p.ID }
func wikiKey(p *worldforge.WikiPageSummary) *worldforge.PageKey {
	return &worldforge.PageKey{Name: p.Title, ID: p.ID}
}
func atlasID(n *worldforge.AtlasNode) string { return n.ID }
func atlasKey(n *worldforge.AtlasNode) *worldforge.PageKey {
	return &worldforge.PageKey{Level: n.Level, Name: n.Name, ID: n.ID}
}
func loreID(e *worldforge.LoreEntity) string { return e.ID }
func loreKey(e *worldforge.LoreEntity) *worldforge.PageKey {
	return &worldforge.PageKey{Name: e.Name, ID: e.ID}
}

// pagedFixture is a store with rows for every paged list: ties in every
// sort key but the id, rows of other owners, worlds, campaigns, kinds and
// collections, and archived wiki pages.
type pagedFixture struct {
	db            *sqlstore.DB
	owner, other  *worldforge.User
	world, world2 *worldforge.World
	campaign      *worldforge.Campaign
}

const pagedRows = 23

func newPagedFixture(t *testing.T, db *sqlstore.DB) *pagedFixture {
	t.Helper()
	ctx := t.Context()
	f := &pagedFixture{db: db, owner: newUser(t, db, "owner"), other: newUser(t, db, "other")}
	f.world, f.world2 = newWorld(t, db, f.owner.ID, "one"), newWorld(t, db, f.owner.ID, "two")
	f.campaign = &worldforge.Campaign{OwnerID: f.owner.ID, WorldID: f.world.ID, Name: "main", UpdatedAt: at(-100)}
	must(t, db.CreateCampaign(ctx, f.campaign))
	for i := range pagedRows {
		// Four rows share each update time: the id orders them.
		must(t, db.CreateCampaign(ctx, &worldforge.Campaign{OwnerID: f.owner.ID, Name: fmt.Sprint("c", i), UpdatedAt: at(i / 4)}))
		must(t, db.CreateCampaign(ctx, &worldforge.Campaign{OwnerID: f.other.ID, Name: fmt.Sprint("o", i), UpdatedAt: at(i / 4)}))
		campaign := ""
		if i%2 == 0 {
			campaign = f.campaign.ID
		}
		must(t, db.CreateQuest(ctx, &worldforge.Quest{OwnerID: f.owner.ID, CampaignID: campaign, Name: fmt.Sprint("q", i), UpdatedAt: at(i / 3)}))
		must(t, db.CreateEncounter(ctx, &worldforge.Encounter{OwnerID: f.owner.ID, CampaignID: campaign, Name: fmt.Sprint("e", i), UpdatedAt: at(i / 3)}))
		must(t, db.CreateQuest(ctx, &worldforge.Quest{OwnerID: f.other.ID, Name: fmt.Sprint("oq", i), UpdatedAt: at(i / 3)}))

		kind := worldforge.WikiKinds[i%len(worldforge.WikiKinds)]
		if i%3 == 0 {
			kind = worldforge.WikiKindFaction
		}
		page := &worldforge.WikiPage{WorldID: f.world.ID, Title: fmt.Sprint("Title ", i%5), Kind: kind, Audience: "gm"}
		if i%7 == 6 {
			page.DeletedAt = ptr(at(0))
		}
		must(t, db.CreateWikiPage(ctx, page, f.owner.ID))
		must(t, db.CreateWikiPage(ctx, &worldforge.WikiPage{WorldID: f.world2.ID, Title: fmt.Sprint("Title ", i%5), Kind: kind, Audience: "gm"}, f.owner.ID))

		must(t, db.CreateAtlasNode(ctx, &worldforge.AtlasNode{WorldID: f.world.ID, Name: fmt.Sprint("Place ", i%4), Level: 1 + i%3,
			JSON: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}))
		must(t, db.CreateAtlasNode(ctx, &worldforge.AtlasNode{WorldID: f.world2.ID, Name: "Elsewhere", Level: 1}))

		for _, c := range []string{"factions", "deities"} {
			id := fmt.Sprintf("f%02d", (i*7)%pagedRows)
			must(t, db.UpsertLore(ctx, &worldforge.LoreEntity{WorldID: f.world.ID, Collection: c, ID: id, Name: fmt.Sprint("Faction ", i%6),
				JSON: json.RawMessage(fmt.Sprintf(`{"id":%q,"name":"Faction %d"}`, id, i%6))}))
		}
		must(t, db.UpsertLore(ctx, &worldforge.LoreEntity{WorldID: f.world2.ID, Collection: "factions", ID: fmt.Sprint("g", i), Name: "G"}))
	}
	return f
}

func (f *pagedFixture) campaigns() pagedList[worldforge.DocSummary] {
	return pagedList[worldforge.DocSummary]{name: "campaigns",
		whole: func(ctx context.Context) ([]worldforge.DocSummary, error) {
			return f.db.ListCampaignsForTest(ctx, f.owner.ID)
		},
		page: func(ctx context.Context, q worldforge.PageQuery) (*worldforge.Page[worldforge.DocSummary], error) {
			return f.db.ListCampaignsPage(ctx, f.owner.ID, q)
		}, key: docKey, id: docID}
}

func (f *pagedFixture) quests(campaign string) pagedList[worldforge.DocSummary] {
	return pagedList[worldforge.DocSummary]{name: "quests " + campaign,
		whole: func(ctx context.Context) ([]worldforge.DocSummary, error) {
			return f.db.ListQuestsForTest(ctx, f.owner.ID, campaign)
		},
		page: func(ctx context.Context, q worldforge.PageQuery) (*worldforge.Page[worldforge.DocSummary], error) {
			return f.db.ListQuestsPage(ctx, f.owner.ID, campaign, q)
		}, key: docKey, id: docID}
}

func (f *pagedFixture) encounters(campaign string) pagedList[worldforge.DocSummary] {
	return pagedList[worldforge.DocSummary]{name: "encounters " + campaign,
		whole: func(ctx context.Context) ([]worldforge.DocSummary, error) {
			return f.db.ListEncountersForTest(ctx, f.owner.ID, campaign)
		},
		page: func(ctx context.Context, q worldforge.PageQuery) (*worldforge.Page[worldforge.DocSummary], error) {
			return f.db.ListEncountersPage(ctx, f.owner.ID, campaign, q)
		}, key: docKey, id: docID}
}

func (f *pagedFixture) wiki(kind string) pagedList[worldforge.WikiPageSummary] {
	return pagedList[worldforge.WikiPageSummary]{name: "wiki " + kind,
		whole: func(ctx context.Context) ([]worldforge.WikiPageSummary, error) {
			return f.db.ListWikiPagesForTest(ctx, f.world.ID, kind)
		},
		page: func(ctx context.Context, q worldforge.PageQuery) (*worldforge.Page[worldforge.WikiPageSummary], error) {
			return f.db.ListWikiPagesPage(ctx, f.world.ID, kind, q)
		}, key: wikiKey, id: wikiID}
}

func (f *pagedFixture) atlas(level int) pagedList[worldforge.AtlasNode] {
	return pagedList[worldforge.AtlasNode]{name: fmt.Sprint("atlas level ", level),
		whole: func(ctx context.Context) ([]worldforge.AtlasNode, error) {
			return f.db.ListAtlasNodesForTest(ctx, f.world.ID, level)
		},
		page: func(ctx context.Context, q worldforge.PageQuery) (*worldforge.Page[worldforge.AtlasNode], error) {
			return f.db.ListAtlasNodesPage(ctx, f.world.ID, level, q)
		}, key: atlasKey, id: atlasID}
}

func (f *pagedFixture) lore(collection string) pagedList[worldforge.LoreEntity] {
	return pagedList[worldforge.LoreEntity]{name: "lore " + collection,
		whole: func(ctx context.Context) ([]worldforge.LoreEntity, error) {
			return f.db.ListLoreForTest(ctx, f.world.ID, collection)
		},
		page: func(ctx context.Context, q worldforge.PageQuery) (*worldforge.Page[worldforge.LoreEntity], error) {
			return f.db.ListLoreByNamePage(ctx, f.world.ID, collection, q)
		}, key: loreKey, id: loreID}
}

// TestPagedListsWalk walks every paged list with limits from 1 to past the
// list's end: each walk gives exactly the unpaged list, in its order.
func TestPagedListsWalk(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newPagedFixture(t, db)
		f.campaigns().checkWalks(t)
		f.quests("").checkWalks(t)
		f.quests(f.campaign.ID).checkWalks(t)
		f.encounters("").checkWalks(t)
		f.encounters(f.campaign.ID).checkWalks(t)
		f.wiki("").checkWalks(t)
		f.wiki(worldforge.WikiKindFaction).checkWalks(t)
		f.atlas(0).checkWalks(t)
		f.atlas(2).checkWalks(t)
		f.lore("factions").checkWalks(t)
		f.lore("deities").checkWalks(t) // no index in name order, same answer

		// Empty lists: one empty page.
		for _, p := range []func() (int, bool, error){
			func() (int, bool, error) {
				p, err := db.ListCampaignsPage(t.Context(), "user_nobody", worldforge.PageQuery{})
				return len(p.Items), p.More, err
			},
			func() (int, bool, error) {
				p, err := db.ListWikiPagesPage(t.Context(), "world_missing", "", worldforge.PageQuery{})
				return len(p.Items), p.More, err
			},
			func() (int, bool, error) {
				p, err := db.ListAtlasNodesPage(t.Context(), f.world.ID, 5, worldforge.PageQuery{})
				return len(p.Items), p.More, err
			},
			func() (int, bool, error) {
				p, err := db.ListLoreByNamePage(t.Context(), f.world.ID, "eras", worldforge.PageQuery{})
				return len(p.Items), p.More, err
			},
		} {
			if n, more, err := p(); n != 0 || more || err != nil {
				t.Errorf("empty list: %d rows, more %v, %v", n, more, err)
			}
		}
		_, err := db.ListLoreByNamePage(t.Context(), f.world.ID, "dragons", worldforge.PageQuery{})
		wantCode(t, err, worldforge.EBadRequest)
		_, err = db.ListLoreByNamePage(t.Context(), f.world.ID, "factions' OR '1'='1", worldforge.PageQuery{})
		wantCode(t, err, worldforge.EBadRequest)
	})
}

// TestPagedListsConcurrentInserts inserts rows before, after and among
// the rows already listed between the pages of a walk: no row is listed
// twice, every row present from the start is listed once, and the walk
// stays in the list's order.
func TestPagedListsConcurrentInserts(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		f := newPagedFixture(t, db)
		check := func(name string, before []string, walked []string, after []string) {
			t.Helper()
			seen := map[string]bool{}
			for _, id := range walked {
				if seen[id] {
					t.Errorf("%s: %s listed twice", name, id)
				}
				seen[id] = true
			}
			for _, id := range before {
				if !seen[id] {
					t.Errorf("%s: %s (present from the start) not listed", name, id)
				}
			}
			// The walk is the final list's order restricted to what it saw.
			var want []string
			for _, id := range after {
				if seen[id] {
					want = append(want, id)
				}
			}
			if !slices.Equal(walked, want) {
				t.Errorf("%s: walked out of order:\n%v\nfinal order %v", name, walked, after)
			}
		}
		n := 0
		{
			l := f.campaigns()
			before := l.wholeIDs(t)
			walked := l.walk(t, 4, func(int) {
				n++
				for _, m := range []int{-50, 2, 3, 500} { // older, tied, newer
					must(t, db.CreateCampaign(ctx, &worldforge.Campaign{OwnerID: f.owner.ID, Name: fmt.Sprint("new", n), UpdatedAt: at(m)}))
				}
			})
			check(l.name, before, walked, l.wholeIDs(t))
		}
		{
			l := f.quests(f.campaign.ID)
			before := l.wholeIDs(t)
			walked := l.walk(t, 3, func(int) {
				n++
				for _, m := range []int{-50, 2, 500} {
					must(t, db.CreateQuest(ctx, &worldforge.Quest{OwnerID: f.owner.ID, CampaignID: f.campaign.ID, Name: fmt.Sprint("new", n), UpdatedAt: at(m)}))
				}
			})
			check(l.name, before, walked, l.wholeIDs(t))
		}
		{
			l := f.wiki("")
			before := l.wholeIDs(t)
			walked := l.walk(t, 3, func(int) {
				n++
				for _, title := range []string{"A first", "Title 2", "Title 3", "Zz last"} {
					must(t, db.CreateWikiPage(ctx, &worldforge.WikiPage{WorldID: f.world.ID, Title: title, Kind: "lore", Audience: "gm"}, f.owner.ID))
				}
			})
			check(l.name, before, walked, l.wholeIDs(t))
		}
		{
			l := f.atlas(0)
			before := l.wholeIDs(t)
			walked := l.walk(t, 5, func(int) {
				n++
				for _, lv := range []int{1, 2, 3} {
					must(t, db.CreateAtlasNode(ctx, &worldforge.AtlasNode{WorldID: f.world.ID, Name: "Place 1", Level: lv}))
				}
			})
			check(l.name, before, walked, l.wholeIDs(t))
		}
		{
			l := f.lore("factions")
			before := l.wholeIDs(t)
			walked := l.walk(t, 4, func(int) {
				n++
				for _, name := range []string{"Aaa", "Faction 2", "Zzz"} {
					id := fmt.Sprintf("n%03d%s", n, name[:1])
					must(t, db.UpsertLore(ctx, &worldforge.LoreEntity{WorldID: f.world.ID, Collection: "factions", ID: id, Name: name}))
				}
			})
			check(l.name, before, walked, l.wholeIDs(t))
		}
	})
}

// TestPageKeyFromRow: a key that names its row instead of carrying its
// name places the page as the name would; a row that has left the list is
// bad_request.
func TestPageKeyFromRow(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		f := newPagedFixture(t, db)
		fromRow := func(k *worldforge.PageKey) *worldforge.PageKey { return &worldforge.PageKey{ID: k.ID, FromRow: true} }

		wiki, err := db.ListWikiPagesPage(ctx, f.world.ID, worldforge.WikiKindFaction, worldforge.PageQuery{Limit: 3})
		must(t, err)
		byName, err := db.ListWikiPagesPage(ctx, f.world.ID, worldforge.WikiKindFaction, worldforge.PageQuery{After: wikiKey(&wiki.Items[2]), Limit: 3})
		must(t, err)
		byRow, err := db.ListWikiPagesPage(ctx, f.world.ID, worldforge.WikiKindFaction, worldforge.PageQuery{After: fromRow(wikiKey(&wiki.Items[2])), Limit: 3})
		must(t, err)
		diff(t, byName, byRow)

		atlas, err := db.ListAtlasNodesPage(ctx, f.world.ID, 0, worldforge.PageQuery{Limit: 9})
		must(t, err)
		for _, level := range []int{0, atlas.Items[8].Level} {
			byName, err := db.ListAtlasNodesPage(ctx, f.world.ID, level, worldforge.PageQuery{After: atlasKey(&atlas.Items[8]), Limit: 4})
			must(t, err)
			byRow, err := db.ListAtlasNodesPage(ctx, f.world.ID, level, worldforge.PageQuery{After: fromRow(atlasKey(&atlas.Items[8])), Limit: 4})
			must(t, err)
			diff(t, byName, byRow)
		}

		lore, err := db.ListLoreByNamePage(ctx, f.world.ID, "factions", worldforge.PageQuery{Limit: 5})
		must(t, err)
		loreByName, err := db.ListLoreByNamePage(ctx, f.world.ID, "factions", worldforge.PageQuery{After: loreKey(&lore.Items[4]), Limit: 5})
		must(t, err)
		loreByRow, err := db.ListLoreByNamePage(ctx, f.world.ID, "factions", worldforge.PageQuery{After: fromRow(loreKey(&lore.Items[4])), Limit: 5})
		must(t, err)
		diff(t, loreByName, loreByRow)

		// Rows that have left the list (or were never in it).
		must(t, db.ExecForTest(ctx, "UPDATE wiki_pages SET deleted_at = 1 WHERE id = ?", wiki.Items[2].ID))
		_, err = db.ListWikiPagesPage(ctx, f.world.ID, worldforge.WikiKindFaction, worldforge.PageQuery{After: fromRow(wikiKey(&wiki.Items[2]))})
		wantCode(t, err, worldforge.EBadRequest)
		_, err = db.ListWikiPagesPage(ctx, f.world2.ID, "", worldforge.PageQuery{After: fromRow(wikiKey(&wiki.Items[1]))})
		wantCode(t, err, worldforge.EBadRequest)
		_, err = db.ListAtlasNodesPage(ctx, f.world.ID, 5, worldforge.PageQuery{After: fromRow(atlasKey(&atlas.Items[0]))})
		wantCode(t, err, worldforge.EBadRequest)
		must(t, db.ExecForTest(ctx, "DELETE FROM lore_entities WHERE world_id = ? AND collection = 'factions' AND id = ?", f.world.ID, lore.Items[4].ID))
		_, err = db.ListLoreByNamePage(ctx, f.world.ID, "factions", worldforge.PageQuery{After: fromRow(loreKey(&lore.Items[4]))})
		wantCode(t, err, worldforge.EBadRequest)
		// A key that carries its name needs no row.
		_, err = db.ListLoreByNamePage(ctx, f.world.ID, "factions", worldforge.PageQuery{After: loreKey(&lore.Items[4])})
		must(t, err)
	})
}

// TestPageLimitsAndBytes: the default and the largest limit, and pages
// ended by the size of their documents.
func TestPageLimitsAndBytes(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner := newUser(t, db, "owner")
		w := &worldforge.World{OwnerID: owner.ID, Name: "big"}
		var content worldforge.WorldContent
		for i := range worldforge.MaxPageLimit + 5 {
			content.WikiPages = append(content.WikiPages, worldforge.WikiPage{Title: fmt.Sprintf("Page %04d", i), Kind: "lore", Audience: "gm"})
		}
		for i := range 6 {
			content.AtlasNodes = append(content.AtlasNodes, worldforge.AtlasNode{Name: fmt.Sprint("N", i), Level: 1,
				JSON: json.RawMessage(`{"pad":"` + strings.Repeat("x", 90) + `"}`)})
			content.Lore = append(content.Lore, worldforge.LoreEntity{Collection: "factions", ID: fmt.Sprint("f", i), Name: fmt.Sprint("F", i),
				JSON: json.RawMessage(`{"id":"f` + fmt.Sprint(i) + `","name":"F` + fmt.Sprint(i) + `","notes":"` + strings.Repeat("y", 90) + `"}`)})
		}
		must(t, db.CreateWorldContent(ctx, w, &content, owner.ID))

		for _, c := range []struct{ limit, want int }{{0, worldforge.DefaultPageLimit}, {-3, worldforge.DefaultPageLimit}, {5000, worldforge.MaxPageLimit}, {17, 17}} {
			p, err := db.ListWikiPagesPage(ctx, w.ID, "", worldforge.PageQuery{Limit: c.limit})
			must(t, err)
			if len(p.Items) != c.want || !p.More {
				t.Errorf("limit %d: %d rows, more %v; want %d and more", c.limit, len(p.Items), p.More, c.want)
			}
		}

		// 100-byte documents, 250 bytes a page: two rows a page.
		atlas := pagedList[worldforge.AtlasNode]{name: "atlas by bytes", key: atlasKey, id: atlasID,
			whole: func(ctx context.Context) ([]worldforge.AtlasNode, error) {
				return db.ListAtlasNodesForTest(ctx, w.ID, 0)
			},
			page: func(ctx context.Context, q worldforge.PageQuery) (*worldforge.Page[worldforge.AtlasNode], error) {
				q.MaxBytes = 250
				p, err := db.ListAtlasNodesPage(ctx, w.ID, 0, q)
				if err == nil && len(p.Items) > 2 {
					t.Errorf("a page of %d atlas nodes over 250 bytes", len(p.Items))
				}
				return p, err
			}}
		if got, want := atlas.walk(t, 10, nil), atlas.wholeIDs(t); !slices.Equal(got, want) {
			t.Errorf("atlas by bytes: %v, want %v", got, want)
		}
		// A document larger than the budget is a page of its own.
		p, err := db.ListLoreByNamePage(ctx, w.ID, "factions", worldforge.PageQuery{Limit: 10, MaxBytes: 10})
		must(t, err)
		if len(p.Items) != 1 || !p.More {
			t.Errorf("lore over budget: %d rows, more %v", len(p.Items), p.More)
		}
	})
}

// TestPageQueryPlans checks that every page statement is read through an
// index in the list's order, never sorted: on SQLite no temporary B-tree
// in EXPLAIN QUERY PLAN, on PostgreSQL no Sort step even with sorting
// disabled (so whatever the statistics, an index can give the order).
func TestPageQueryPlans(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		cases := []struct {
			list     string
			filtered bool
			index    string
			args     func(after bool) []any
		}{
			{"campaigns", false, "campaigns_owner_page", docArgs(false)},
			{"quests", false, "quests_owner_page", docArgs(false)},
			{"quests", true, "quests_campaign_page", docArgs(true)},
			{"encounters", false, "encounters_owner_page", docArgs(false)},
			{"encounters", true, "encounters_campaign_page", docArgs(true)},
			{"wiki", false, "wiki_pages_world_title", nameArgs("world_x")},
			{"wiki", true, "wiki_pages_world_kind_title", nameArgs("world_x", "faction")},
			{"atlas", false, "atlas_nodes_world_page", func(after bool) []any {
				if after {
					return []any{"world_x", 2, "Name", "atlas_x", 101}
				}
				return []any{"world_x", 101}
			}},
			{"atlas", true, "atlas_nodes_world_page", nameArgs("world_x", 2)},
			{"factions", false, "lore_entities_faction_name", nameArgs("world_x")},
		}
		for _, c := range cases {
			for _, after := range []bool{false, true} {
				query := sqlstore.PageSQLForTest(c.list, c.filtered, after)
				plan, err := db.QueryPlanForTest(t.Context(), query, c.args(after)...)
				if err != nil {
					t.Fatalf("%s: %v", query, err)
				}
				text := strings.Join(plan, "\n")
				if strings.Contains(text, "TEMP B-TREE") || strings.Contains(text, "Sort") || !strings.Contains(text, c.index) {
					t.Errorf("%s (filtered %v, after %v): the plan sorts or misses %s:\n%s", c.list, c.filtered, after, c.index, text)
				}
			}
		}
	})
}

func docArgs(campaign bool) func(after bool) []any {
	return func(after bool) []any {
		args := []any{"user_x"}
		if campaign {
			args = []any{"campaign_x", "user_x"}
		}
		if after {
			args = append(args, int64(1), int64(1), "id_x")
		}
		return append(args, 101)
	}
}

func nameArgs(filter ...any) func(after bool) []any {
	return func(after bool) []any {
		args := slices.Clone(filter)
		if after {
			args = append(args, "Name", "id_x")
		}
		return append(args, 101)
	}
}
