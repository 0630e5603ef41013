package app

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

// World, campaign, quest and encounter reads: owner only. (The paged
// lists — list_campaigns, list_quests, list_encounters, list_wiki_pages,
// list_factions, list_atlas_places — are in pages.go.)

// WorldRead is what ReadWorld read for its caller: the world's row with
// its runtime state and, for a document kept in pieces (Doc non-nil and
// not Inline), the document's facts; that document is left in the store,
// for the adapter to read from one snapshot (worldforge.WorldStreamer)
// once the call is audited.
type WorldRead struct {
	World   *wf.World
	Runtime *wf.WorldRuntime
	Doc     *wf.DocInfo
	// Owner is the caller's owner id, who owns the world.
	Owner string
	// Stamp is the store's stamp of the state read (wf.WorldStore's
	// ReadWorldSince); 0 if it has none, and then the answer is not to be
	// kept.
	Stamp int64
	// Unchanged is set when the world is still at the stamp the caller
	// gave ReadWorldSince: World, Runtime and Doc are then nil, and the
	// answer the caller kept is the world's current one.
	Unchanged bool
}

// KnownWorld is an answer of read_world's that a caller kept: the stamp
// of the state it was read at and the world's owner then.
type KnownWorld struct {
	Stamp int64
	Owner string
}

// ReadWorld reads a world for its owner (read_world). prepare, if not
// nil, gets what was read once the access checks pass and before the
// audit row is written: an error of its (a limit of the adapter's on what
// it can send, or a rendering failure) is the call's, and nothing is
// audited.
func (s *Service) ReadWorld(ctx context.Context, r Request, in *wf.IDArgs, prepare func(*WorldRead) error) (*WorldRead, error) {
	return s.ReadWorldSince(ctx, r, in, KnownWorld{}, prepare)
}

// ReadWorldSince is ReadWorld for a caller that kept an answer of the
// world's (known; a zero KnownWorld for none). When the world is still at
// known.Stamp, the store reads only the stamp, the access check is made
// against known.Owner (the owner the stamp's state had), and prepare gets
// a WorldRead with Unchanged set. Either way the call is checked and
// audited as ReadWorld's.
func (s *Service) ReadWorldSince(ctx context.Context, r Request, in *wf.IDArgs, known KnownWorld, prepare func(*WorldRead) error) (*WorldRead, error) {
	return run(ctx, s, r, wf.ToolReadWorld, func(c *call) (*WorldRead, error) {
		// The same one query as ReadWorld; a document kept in pieces is
		// left in the store.
		w, rt, doc, stamp, err := s.store.ReadWorldSince(ctx, in.ID, known.Stamp)
		if err != nil {
			return nil, storeErr(err)
		}
		var out *WorldRead
		if w == nil { // still at known.Stamp
			if err := ownedBy(c, known.Owner); err != nil {
				return nil, err
			}
			out = &WorldRead{Owner: c.owner, Stamp: stamp, Unchanged: true}
		} else {
			if err := ownedBy(c, w.OwnerID); err != nil {
				return nil, err
			}
			out = &WorldRead{World: w, Runtime: rt, Doc: doc, Owner: c.owner, Stamp: stamp}
		}
		if prepare != nil {
			if err := prepare(out); err != nil {
				return nil, err
			}
		}
		c.target("world", in.ID, in.ID)
		return out, nil
	})
}

// ReadCampaign reads a campaign for its owner (read_campaign).
func (s *Service) ReadCampaign(ctx context.Context, r Request, in *wf.IDArgs) (*wf.Campaign, error) {
	return run(ctx, s, r, wf.ToolReadCampaign, func(c *call) (*wf.Campaign, error) {
		cp, err := s.store.FindCampaignByID(ctx, in.ID)
		if err != nil {
			return nil, storeErr(err)
		}
		if err := ownedBy(c, cp.OwnerID); err != nil {
			return nil, err
		}
		c.target("campaign", cp.ID, cp.WorldID)
		return cp, nil
	})
}

// ReadQuest reads a quest for its owner (read_quest).
func (s *Service) ReadQuest(ctx context.Context, r Request, in *wf.IDArgs) (*wf.Quest, error) {
	return run(ctx, s, r, wf.ToolReadQuest, func(c *call) (*wf.Quest, error) {
		q, err := s.store.FindQuestByID(ctx, in.ID)
		if err != nil {
			return nil, storeErr(err)
		}
		if err := ownedBy(c, q.OwnerID); err != nil {
			return nil, err
		}
		c.target("quest", q.ID, q.WorldID)
		return q, nil
	})
}

// ReadEncounter reads an encounter for its owner (read_encounter).
func (s *Service) ReadEncounter(ctx context.Context, r Request, in *wf.IDArgs) (*wf.Quest, error) {
	return run(ctx, s, r, wf.ToolReadEncounter, func(c *call) (*wf.Quest, error) {
		e, err := s.store.FindEncounterByID(ctx, in.ID)
		if err != nil {
			return nil, storeErr(err)
		}
		if err := ownedBy(c, e.OwnerID); err != nil {
			return nil, err
		}
		c.target("encounter", e.ID, e.WorldID)
		return e, nil
	})
}

// Wiki reads: owner or GM of the page's world.

// ReadWikiPage reads a wiki page for its world's owner or a GM
// (read_wiki_page).
func (s *Service) ReadWikiPage(ctx context.Context, r Request, in *wf.IDArgs) (*wf.WikiPage, error) {
	return run(ctx, s, r, wf.ToolReadWikiPage, func(c *call) (*wf.WikiPage, error) {
		p, err := s.store.FindWikiPageByID(ctx, in.ID)
		if err != nil {
			return nil, storeErr(err)
		}
		if err := s.ownerOrGM(ctx, c, p.WorldID); err != nil {
			return nil, err
		}
		c.target("wiki_page", p.ID, p.WorldID)
		return p, nil
	})
}

// SearchWikiPages searches live wiki pages in the worlds the caller owns
// or runs as GM, or the one named (search_wiki_pages).
func (s *Service) SearchWikiPages(ctx context.Context, r Request, in *wf.SearchWikiPagesArgs) (wf.WikiPageList, error) {
	return run(ctx, s, r, wf.ToolSearchWikiPages, func(c *call) (wf.WikiPageList, error) {
		worlds, err := s.gmWorlds(ctx, c, in.WorldID)
		if err != nil {
			return wf.WikiPageList{}, err
		}
		pages, err := s.store.SearchWikiPages(ctx, wf.WikiSearch{
			WorldIDs: worlds, Q: in.Q, Kind: in.Kind, Limit: cmp.Or(in.Limit, wf.DefaultSearchLimit),
		})
		if err != nil {
			return wf.WikiPageList{}, storeErr(err)
		}
		c.target("world", in.WorldID, in.WorldID)
		return wf.WikiPageList{Pages: pages}, nil
	})
}

// WikiPageHistory lists a wiki page's revisions, newest first, for its
// world's owner or a GM (wiki_page_history).
func (s *Service) WikiPageHistory(ctx context.Context, r Request, in *wf.WikiPageHistoryArgs) (wf.WikiHistory, error) {
	return run(ctx, s, r, wf.ToolWikiPageHistory, func(c *call) (wf.WikiHistory, error) {
		p, err := s.store.FindWikiPageByID(ctx, in.ID)
		if err != nil {
			return wf.WikiHistory{}, storeErr(err)
		}
		if err := s.ownerOrGM(ctx, c, p.WorldID); err != nil {
			return wf.WikiHistory{}, err
		}
		revs, err := s.store.WikiPageHistory(ctx, p.ID, cmp.Or(in.Limit, wf.DefaultHistoryLimit))
		if err != nil {
			return wf.WikiHistory{}, storeErr(err)
		}
		c.target("wiki_page", p.ID, p.WorldID)
		return wf.WikiHistory{PageID: p.ID, Revisions: revs}, nil
	})
}

// GetWorldSummary counts a world's wiki pages by kind and its atlas nodes,
// for its owner or a GM (get_world_summary).
func (s *Service) GetWorldSummary(ctx context.Context, r Request, in *wf.WorldArgs) (wf.WorldSummary, error) {
	return run(ctx, s, r, wf.ToolGetWorldSummary, func(c *call) (wf.WorldSummary, error) {
		if err := s.ownerOrGM(ctx, c, in.WorldID); err != nil {
			return wf.WorldSummary{}, err
		}
		w, err := s.store.FindWorldHeader(ctx, in.WorldID)
		if err != nil {
			return wf.WorldSummary{}, storeErr(err)
		}
		counts, err := s.store.CountWikiPages(ctx, in.WorldID)
		if err != nil {
			return wf.WorldSummary{}, storeErr(err)
		}
		nodes, err := s.store.CountAtlasNodes(ctx, in.WorldID)
		if err != nil {
			return wf.WorldSummary{}, storeErr(err)
		}
		total := 0
		for _, n := range counts {
			total += n
		}
		c.target("world", w.ID, w.ID)
		return wf.WorldSummary{WorldID: w.ID, Name: w.Name, WikiPages: counts, WikiTotal: total, AtlasNodes: nodes}, nil
	})
}

// Atlas reads: owner or GM of the node's world.

// ReadAtlasNode reads an atlas node for its world's owner or a GM
// (read_atlas_node).
func (s *Service) ReadAtlasNode(ctx context.Context, r Request, in *wf.IDArgs) (*wf.AtlasNode, error) {
	return run(ctx, s, r, wf.ToolReadAtlasNode, func(c *call) (*wf.AtlasNode, error) {
		n, err := s.store.FindAtlasNodeByID(ctx, in.ID)
		if err != nil {
			return nil, storeErr(err)
		}
		if err := s.ownerOrGM(ctx, c, n.WorldID); err != nil {
			return nil, err
		}
		c.target("atlas_node", n.ID, n.WorldID)
		return n, nil
	})
}

// SearchAtlasNodes searches atlas places in the worlds the caller owns or
// runs as GM, or the one named (search_atlas_nodes).
func (s *Service) SearchAtlasNodes(ctx context.Context, r Request, in *wf.SearchAtlasNodesArgs) (wf.AtlasPlaceList, error) {
	return run(ctx, s, r, wf.ToolSearchAtlasNodes, func(c *call) (wf.AtlasPlaceList, error) {
		worlds, err := s.gmWorlds(ctx, c, in.WorldID)
		if err != nil {
			return wf.AtlasPlaceList{}, err
		}
		nodes, err := s.store.SearchAtlasNodes(ctx, wf.AtlasSearch{
			WorldIDs: worlds, Q: in.Q, Limit: cmp.Or(in.Limit, wf.DefaultSearchLimit),
		})
		if err != nil {
			return wf.AtlasPlaceList{}, storeErr(err)
		}
		c.target("world", in.WorldID, in.WorldID)
		return wf.AtlasPlaceList{Places: nodes}, nil
	})
}

// POIs: world owner only (the GM/member split lives in the REST route).

// SearchPOIs searches a world's POIs for its owner only (search_pois); the
// REST search by role is SearchWorldPOIs.
func (s *Service) SearchPOIs(ctx context.Context, r Request, in *wf.SearchPOIsArgs) (wf.POIList, error) {
	return run(ctx, s, r, wf.ToolSearchPOIs, func(c *call) (wf.POIList, error) {
		if err := s.worldOwner(ctx, c, in.WorldID); err != nil {
			return wf.POIList{}, err
		}
		q := in.Request
		q.Limit = cmp.Or(q.Limit, wf.DefaultPOILimit)
		if err := q.Check(); err != nil {
			return wf.POIList{}, err
		}
		pois, err := s.store.SearchPOIs(ctx, in.WorldID, q)
		if err != nil {
			return wf.POIList{}, storeErr(err)
		}
		c.target("world", in.WorldID, in.WorldID)
		return wf.POIList{POIs: pois}, nil
	})
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

// ListLore lists a world's lore for its owner or a GM (list_lore): a
// wf.LoreCollectionList for one collection (or a cursor), else a
// wf.LoreOverview.
func (s *Service) ListLore(ctx context.Context, r Request, in *wf.ListLoreArgs) (any, error) {
	return run(ctx, s, r, wf.ToolListLore, func(c *call) (any, error) {
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
	})
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
