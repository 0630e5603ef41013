package dbtest

import (
	"context"
	"slices"

	wf "github.com/worldforge-go/worldforge"
)

// The whole lists tests read to see what a store holds: each walks the
// list's paged read (the only list read the Store contract has) from its
// first page to its last, in the list's order. An empty list is an empty,
// non-nil slice.

// walk reads every page of a list, each starting after the last row of
// the one before.
func walk[T any](fetch func(wf.PageQuery) (*wf.Page[T], error), key func(*T) *wf.PageKey) ([]T, error) {
	out := []T{}
	q := wf.PageQuery{Limit: wf.MaxPageLimit}
	for {
		page, err := fetch(q)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
		if !page.More || len(page.Items) == 0 {
			return out, nil
		}
		q.After = key(&page.Items[len(page.Items)-1])
	}
}

func docKey(d *wf.DocSummary) *wf.PageKey {
	return &wf.PageKey{UpdatedAt: d.UpdatedAt.UnixMilli(), ID: d.ID}
}

// Campaigns lists the owner's campaigns (ListCampaignsPage, every page).
func Campaigns(ctx context.Context, st wf.CampaignStore, ownerID string) ([]wf.DocSummary, error) {
	return walk(func(q wf.PageQuery) (*wf.Page[wf.DocSummary], error) { return st.ListCampaignsPage(ctx, ownerID, q) }, docKey)
}

// Quests lists the owner's quests, of one campaign when campaignID is set
// (ListQuestsPage, every page).
func Quests(ctx context.Context, st wf.CampaignStore, ownerID, campaignID string) ([]wf.DocSummary, error) {
	return walk(func(q wf.PageQuery) (*wf.Page[wf.DocSummary], error) {
		return st.ListQuestsPage(ctx, ownerID, campaignID, q)
	}, docKey)
}

// Encounters lists the owner's encounters, of one campaign when
// campaignID is set (ListEncountersPage, every page).
func Encounters(ctx context.Context, st wf.CampaignStore, ownerID, campaignID string) ([]wf.DocSummary, error) {
	return walk(func(q wf.PageQuery) (*wf.Page[wf.DocSummary], error) {
		return st.ListEncountersPage(ctx, ownerID, campaignID, q)
	}, docKey)
}

// WikiPages lists a world's live wiki pages, of one kind when kind is set
// (ListWikiPagesPage, every page).
func WikiPages(ctx context.Context, st wf.WikiStore, worldID, kind string) ([]wf.WikiPageSummary, error) {
	return walk(func(q wf.PageQuery) (*wf.Page[wf.WikiPageSummary], error) {
		return st.ListWikiPagesPage(ctx, worldID, kind, q)
	}, func(p *wf.WikiPageSummary) *wf.PageKey { return &wf.PageKey{Name: p.Title, ID: p.ID} })
}

// AtlasNodes lists a world's atlas nodes, of one level when level > 0
// (ListAtlasNodesPage, every page).
func AtlasNodes(ctx context.Context, st wf.AtlasStore, worldID string, level int) ([]wf.AtlasNode, error) {
	return walk(func(q wf.PageQuery) (*wf.Page[wf.AtlasNode], error) {
		return st.ListAtlasNodesPage(ctx, worldID, level, q)
	}, func(n *wf.AtlasNode) *wf.PageKey { return &wf.PageKey{Level: n.Level, Name: n.Name, ID: n.ID} })
}

// Lore lists a world's lore entities by collection, then name and id: of
// one collection when collection is set, of every collection otherwise
// (ListLoreByNamePage, every page of each).
func Lore(ctx context.Context, st wf.LoreStore, worldID, collection string) ([]wf.LoreEntity, error) {
	collections := []string{collection}
	if collection == "" {
		collections = slices.Sorted(slices.Values(wf.LoreCollections))
	}
	out := []wf.LoreEntity{}
	for _, c := range collections {
		l, err := walk(func(q wf.PageQuery) (*wf.Page[wf.LoreEntity], error) {
			return st.ListLoreByNamePage(ctx, worldID, c, q)
		}, func(e *wf.LoreEntity) *wf.PageKey { return &wf.PageKey{Name: e.Name, ID: e.ID} })
		if err != nil {
			return nil, err
		}
		out = append(out, l...)
	}
	return out, nil
}

// World reads the world with its document (ReadWorld, without the
// runtime state).
func World(ctx context.Context, st wf.WorldStore, id string) (*wf.World, error) {
	w, _, err := st.ReadWorld(ctx, id)
	return w, err
}

// Runtime reads the world's runtime state (ReadWorld, without the world).
func Runtime(ctx context.Context, st wf.WorldStore, worldID string) (*wf.WorldRuntime, error) {
	_, rt, err := st.ReadWorld(ctx, worldID)
	return rt, err
}
