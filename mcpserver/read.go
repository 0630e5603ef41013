package mcpserver

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/engine/lore"
)

// World, campaign, quest and encounter reads: owner only.

func (s *Server) readWorld(ctx context.Context, c *call, in *wf.IDArgs) (any, error) {
	w, rt, err := s.store.ReadWorld(ctx, in.ID)
	if err != nil {
		return nil, storeErr(err)
	}
	if err := ownedBy(c, w.OwnerID); err != nil {
		return nil, err
	}
	out, err := wf.WorldWithRuntimeJSON(w, rt)
	if err != nil {
		return nil, err
	}
	c.target("world", w.ID, w.ID)
	return out, nil
}

func (s *Server) readCampaign(ctx context.Context, c *call, in *wf.IDArgs) (any, error) {
	cp, err := s.store.FindCampaignByID(ctx, in.ID)
	if err != nil {
		return nil, storeErr(err)
	}
	if err := ownedBy(c, cp.OwnerID); err != nil {
		return nil, err
	}
	c.target("campaign", cp.ID, cp.WorldID)
	return cp, nil
}

func (s *Server) listCampaigns(ctx context.Context, c *call, _ *struct{}) (any, error) {
	list, err := s.store.ListCampaigns(ctx, c.owner)
	if err != nil {
		return nil, storeErr(err)
	}
	c.target("campaign", "", "")
	return wf.CampaignList{Campaigns: list}, nil
}

func (s *Server) readQuest(ctx context.Context, c *call, in *wf.IDArgs) (any, error) {
	q, err := s.store.FindQuestByID(ctx, in.ID)
	if err != nil {
		return nil, storeErr(err)
	}
	if err := ownedBy(c, q.OwnerID); err != nil {
		return nil, err
	}
	c.target("quest", q.ID, q.WorldID)
	return q, nil
}

func (s *Server) listQuests(ctx context.Context, c *call, in *wf.CampaignFilterArgs) (any, error) {
	list, err := s.store.ListQuests(ctx, c.owner, in.CampaignID)
	if err != nil {
		return nil, storeErr(err)
	}
	c.target("quest", "", "")
	return wf.QuestList{Quests: list}, nil
}

func (s *Server) readEncounter(ctx context.Context, c *call, in *wf.IDArgs) (any, error) {
	e, err := s.store.FindEncounterByID(ctx, in.ID)
	if err != nil {
		return nil, storeErr(err)
	}
	if err := ownedBy(c, e.OwnerID); err != nil {
		return nil, err
	}
	c.target("encounter", e.ID, e.WorldID)
	return e, nil
}

func (s *Server) listEncounters(ctx context.Context, c *call, in *wf.CampaignFilterArgs) (any, error) {
	list, err := s.store.ListEncounters(ctx, c.owner, in.CampaignID)
	if err != nil {
		return nil, storeErr(err)
	}
	c.target("encounter", "", "")
	return wf.EncounterList{Encounters: list}, nil
}

// Wiki reads: owner or GM of the page's world.

func (s *Server) listWikiPages(ctx context.Context, c *call, in *wf.ListWikiPagesArgs) (any, error) {
	if err := s.ownerOrGM(ctx, c, in.WorldID); err != nil {
		return nil, err
	}
	pages, err := s.store.ListWikiPages(ctx, in.WorldID, in.Kind)
	if err != nil {
		return nil, storeErr(err)
	}
	c.target("world", in.WorldID, in.WorldID)
	return wf.WikiPageList{Pages: pages}, nil
}

func (s *Server) readWikiPage(ctx context.Context, c *call, in *wf.IDArgs) (any, error) {
	p, err := s.store.FindWikiPageByID(ctx, in.ID)
	if err != nil {
		return nil, storeErr(err)
	}
	if err := s.ownerOrGM(ctx, c, p.WorldID); err != nil {
		return nil, err
	}
	c.target("wiki_page", p.ID, p.WorldID)
	return p, nil
}

func (s *Server) searchWikiPages(ctx context.Context, c *call, in *wf.SearchWikiPagesArgs) (any, error) {
	worlds, err := s.gmWorlds(ctx, c, in.WorldID)
	if err != nil {
		return nil, err
	}
	pages, err := s.store.SearchWikiPages(ctx, wf.WikiSearch{
		WorldIDs: worlds, Q: in.Q, Kind: in.Kind, Limit: cmp.Or(in.Limit, wf.DefaultSearchLimit),
	})
	if err != nil {
		return nil, storeErr(err)
	}
	c.target("world", in.WorldID, in.WorldID)
	return wf.WikiPageList{Pages: pages}, nil
}

func (s *Server) wikiPageHistory(ctx context.Context, c *call, in *wf.WikiPageHistoryArgs) (any, error) {
	p, err := s.store.FindWikiPageByID(ctx, in.ID)
	if err != nil {
		return nil, storeErr(err)
	}
	if err := s.ownerOrGM(ctx, c, p.WorldID); err != nil {
		return nil, err
	}
	revs, err := s.store.WikiPageHistory(ctx, p.ID, cmp.Or(in.Limit, wf.DefaultHistoryLimit))
	if err != nil {
		return nil, storeErr(err)
	}
	c.target("wiki_page", p.ID, p.WorldID)
	return wf.WikiHistory{PageID: p.ID, Revisions: revs}, nil
}

func (s *Server) listFactions(ctx context.Context, c *call, in *wf.WorldArgs) (any, error) {
	if err := s.ownerOrGM(ctx, c, in.WorldID); err != nil {
		return nil, err
	}
	pages, err := s.store.ListWikiPages(ctx, in.WorldID, wf.WikiKindFaction)
	if err != nil {
		return nil, storeErr(err)
	}
	lore, err := s.store.ListLore(ctx, in.WorldID, "factions")
	if err != nil {
		return nil, storeErr(err)
	}
	c.target("world", in.WorldID, in.WorldID)
	return wf.FactionList{WorldID: in.WorldID, Pages: pages, Lore: rawEntities(lore)}, nil
}

func (s *Server) getWorldSummary(ctx context.Context, c *call, in *wf.WorldArgs) (any, error) {
	if err := s.ownerOrGM(ctx, c, in.WorldID); err != nil {
		return nil, err
	}
	w, err := s.store.FindWorldHeader(ctx, in.WorldID)
	if err != nil {
		return nil, storeErr(err)
	}
	counts, err := s.store.CountWikiPages(ctx, in.WorldID)
	if err != nil {
		return nil, storeErr(err)
	}
	nodes, err := s.store.CountAtlasNodes(ctx, in.WorldID)
	if err != nil {
		return nil, storeErr(err)
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	c.target("world", w.ID, w.ID)
	return wf.WorldSummary{WorldID: w.ID, Name: w.Name, WikiPages: counts, WikiTotal: total, AtlasNodes: nodes}, nil
}

// Atlas reads: owner or GM of the node's world.

func (s *Server) listAtlasPlaces(ctx context.Context, c *call, in *wf.ListAtlasPlacesArgs) (any, error) {
	if err := s.ownerOrGM(ctx, c, in.WorldID); err != nil {
		return nil, err
	}
	nodes, err := s.store.ListAtlasNodes(ctx, in.WorldID, in.Level)
	if err != nil {
		return nil, storeErr(err)
	}
	c.target("world", in.WorldID, in.WorldID)
	return wf.AtlasPlaceList{Places: nodes}, nil
}

func (s *Server) readAtlasNode(ctx context.Context, c *call, in *wf.IDArgs) (any, error) {
	n, err := s.store.FindAtlasNodeByID(ctx, in.ID)
	if err != nil {
		return nil, storeErr(err)
	}
	if err := s.ownerOrGM(ctx, c, n.WorldID); err != nil {
		return nil, err
	}
	c.target("atlas_node", n.ID, n.WorldID)
	return n, nil
}

func (s *Server) searchAtlasNodes(ctx context.Context, c *call, in *wf.SearchAtlasNodesArgs) (any, error) {
	worlds, err := s.gmWorlds(ctx, c, in.WorldID)
	if err != nil {
		return nil, err
	}
	nodes, err := s.store.SearchAtlasNodes(ctx, wf.AtlasSearch{
		WorldIDs: worlds, Q: in.Q, Limit: cmp.Or(in.Limit, wf.DefaultSearchLimit),
	})
	if err != nil {
		return nil, storeErr(err)
	}
	c.target("world", in.WorldID, in.WorldID)
	return wf.AtlasPlaceList{Places: nodes}, nil
}

// POIs: world owner only (the GM/member split lives in the REST route).

func (s *Server) searchPOIs(ctx context.Context, c *call, in *wf.SearchPOIsArgs) (any, error) {
	if err := s.worldOwner(ctx, c, in.WorldID); err != nil {
		return nil, err
	}
	q := in.Request
	q.Limit = cmp.Or(q.Limit, wf.DefaultPOILimit)
	if err := q.Check(); err != nil {
		return nil, err
	}
	pois, err := s.store.SearchPOIs(ctx, in.WorldID, q)
	if err != nil {
		return nil, storeErr(err)
	}
	c.target("world", in.WorldID, in.WorldID)
	return wf.POIList{POIs: pois}, nil
}

// Lore: owner or GM; lore:read or world:read.
//
// list_lore answers in pages: with a collection (or a cursor, which names
// its collection) one page of at most limit entities in id order and a
// next_cursor while more follow; without, the first page of every
// collection, next_cursors for those not listed whole, and the presets.
// Either way the counts of every collection, and the issues (of the
// collection, or of the world) up to wf.MaxLoreIssues with issues_total.
// Nothing reads or validates the whole world: pages come through the
// primary key, counts through a GROUP BY, issues from the facts stored
// when each entity was written (Store.LoreIssues). An answer holds at most
// wf.MaxLorePageBytes of entity JSON: a page ends early rather than grow.

func (s *Server) listLore(ctx context.Context, c *call, in *wf.ListLoreArgs) (any, error) {
	limit := cmp.Or(in.Limit, wf.DefaultLoreLimit)
	collection, after := in.Collection, ""
	if in.Cursor != "" {
		cc, id, ok := decodeLoreCursor(in.Cursor)
		if !ok || (collection != "" && cc != collection) {
			return nil, wf.BadRequest("cursor")
		}
		collection, after = cc, id
	}
	if err := s.ownerOrGM(ctx, c, in.WorldID); err != nil {
		return nil, err
	}
	counts, err := s.store.CountLore(ctx, in.WorldID)
	if err != nil {
		return nil, storeErr(err)
	}
	issues, total, err := s.store.LoreIssues(ctx, in.WorldID, collection, wf.MaxLoreIssues)
	if err != nil {
		return nil, storeErr(err)
	}
	c.target("world", in.WorldID, in.WorldID)
	if collection != "" {
		page, err := s.store.ListLorePage(ctx, wf.LorePageQuery{WorldID: in.WorldID, Collection: collection,
			After: after, Limit: limit, MaxBytes: wf.MaxLorePageBytes})
		if err != nil {
			return nil, storeErr(err)
		}
		out := wf.LoreCollectionList{Collection: collection, Items: rawEntities(page.Items), Counts: counts,
			Issues: issues, IssuesTotal: total}
		if page.More {
			out.NextCursor = encodeLoreCursor(collection, page.Items[len(page.Items)-1].ID)
		}
		return out, nil
	}
	out := wf.LoreOverview{Lore: make(map[string][]wf.RawEntity, len(wf.LoreCollections)), Counts: counts,
		Issues: issues, IssuesTotal: total, Presets: presetList()}
	budget := wf.MaxLorePageBytes
	for _, name := range wf.LoreCollections {
		out.Lore[name] = []wf.RawEntity{}
		if counts[name] == 0 {
			continue
		}
		if budget <= 0 { // the answer is full: this collection from its start
			setCursor(&out, name, "")
			continue
		}
		page, err := s.store.ListLorePage(ctx, wf.LorePageQuery{WorldID: in.WorldID, Collection: name,
			Limit: limit, MaxBytes: budget})
		if err != nil {
			return nil, storeErr(err)
		}
		out.Lore[name] = rawEntities(page.Items)
		for _, e := range page.Items {
			budget -= len(e.JSON)
		}
		if page.More {
			setCursor(&out, name, page.Items[len(page.Items)-1].ID)
		}
	}
	return out, nil
}

func setCursor(o *wf.LoreOverview, collection, after string) {
	if o.NextCursors == nil {
		o.NextCursors = map[string]string{}
	}
	o.NextCursors[collection] = encodeLoreCursor(collection, after)
}

// loreCursorPrefix starts every list_lore cursor: a format version.
const loreCursorPrefix = "lore1:"

// encodeLoreCursor makes the opaque cursor of the page of collection after
// the entity with id after ("" from the start): base64url of
// "lore1:<collection>:<after>".
func encodeLoreCursor(collection, after string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(loreCursorPrefix + collection + ":" + after))
}

// decodeLoreCursor reads a cursor made by encodeLoreCursor; ok is false for
// anything else.
func decodeLoreCursor(cursor string) (collection, after string, ok bool) {
	if len(cursor) > wf.MaxCursorLength {
		return "", "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || !utf8.Valid(b) {
		return "", "", false
	}
	rest, ok := strings.CutPrefix(string(b), loreCursorPrefix)
	if !ok {
		return "", "", false
	}
	collection, after, ok = strings.Cut(rest, ":")
	if !ok || !slices.Contains(wf.LoreCollections, collection) || strings.IndexByte(after, 0) >= 0 {
		return "", "", false
	}
	return collection, after, true
}

// presetList describes the lore presets add_preset can add.
func presetList() []wf.LorePreset {
	ps := lore.Presets()
	out := make([]wf.LorePreset, 0, len(ps))
	for _, p := range ps {
		counts := map[string]int{}
		for _, e := range p.Entities {
			counts[e.Collection]++
		}
		out = append(out, wf.LorePreset{ID: p.ID, Name: p.Name, Description: p.Description, Entities: counts})
	}
	return out
}

func rawEntities(list []wf.LoreEntity) []wf.RawEntity {
	out := make([]wf.RawEntity, 0, len(list))
	for _, e := range list {
		if len(e.JSON) == 0 {
			b, _ := json.Marshal(map[string]string{"id": e.ID, "name": e.Name})
			out = append(out, b)
			continue
		}
		out = append(out, e.JSON)
	}
	return out
}
