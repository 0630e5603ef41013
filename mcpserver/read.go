package mcpserver

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/engine/lore"
	"github.com/worldforge-go/worldforge/internal/worldjson"
)

// World, campaign, quest and encounter reads: owner only. (The paged
// lists — list_campaigns, list_quests, list_encounters, list_wiki_pages,
// list_factions, list_atlas_places — are in pages.go.)

func (s *Server) readWorld(ctx context.Context, c *call, in *wf.IDArgs) (any, error) {
	// The same one query as ReadWorld; a document kept in pieces is left
	// in the store, to be read from one snapshot once the audit row is
	// committed (worldText).
	w, rt, doc, err := s.store.ReadWorldDeferred(ctx, in.ID)
	if err != nil {
		return nil, storeErr(err)
	}
	if err := ownedBy(c, w.OwnerID); err != nil {
		return nil, err
	}
	if doc != nil && !doc.Inline {
		if err := checkBuffered(*doc, c.buffered, s.maxBuffered); err != nil {
			return nil, err
		}
		c.target("world", w.ID, w.ID)
		return &worldText{store: s.store, id: w.ID, owner: c.owner, buffered: c.buffered, limit: s.maxBuffered}, nil
	}
	render := worldjson.Render
	if doc != nil && doc.SplicesRuntime {
		render = worldjson.RenderSpliced // checked when written: no validation per read
	}
	out, err := render(w, rt)
	if err != nil {
		return nil, err
	}
	c.target("world", w.ID, w.ID)
	return out, nil
}

// checkBuffered refuses, before anything of it is read (in readWorld:
// before the call is audited), a document kept in pieces that would have
// to be held whole — buffered (the go-sdk path), or one that does not
// splice — and is over limit: too_large, naming the limit and how to get
// the world.
func checkBuffered(doc wf.DocInfo, buffered bool, limit int64) error {
	if doc.Len <= limit {
		return nil
	}
	if !doc.SplicesRuntime {
		return wf.Errorf(wf.ETooLarge, "the world's document is %d bytes and cannot be streamed (it mentions \"runtime\" or has a \\u escape); read_world builds such an answer in memory only up to %d bytes",
			doc.Len, limit)
	}
	if buffered {
		return wf.Errorf(wf.ETooLarge, "the world's document is %d bytes, over the %d bytes of an answer built in memory (a JSON-RPC batch or another request the go-sdk answers); send read_world as a single tools/call (MCP-Protocol-Version 2025-11-25 or any supported revision, or none), which is streamed without that limit",
			doc.Len, limit)
	}
	return nil
}

// worldText is read_world's result for a world whose document the store
// keeps in pieces: rendered, or sent, from one snapshot of the store once
// the call's audit row is committed, without holding the document whole
// when the runtime state can be spliced into it.
type worldText struct {
	store wf.WorldStore
	id    string
	owner string
	// buffered and limit are checkBuffered's, checked again on the
	// snapshot (a resize may have grown the document since).
	buffered bool
	limit    int64
}

func (t *worldText) open(ctx context.Context) (func(io.Writer) error, int64, error) {
	w, rt, doc, err := t.store.StreamWorld(ctx, t.id)
	if err != nil {
		return nil, 0, storeErr(err)
	}
	if w.OwnerID != t.owner { // checked already; owners do not change
		if doc != nil {
			doc.Close()
		}
		return nil, 0, wf.ErrNotFound
	}
	if doc != nil {
		if err := checkBuffered(doc.Info(), t.buffered, t.limit); err != nil {
			doc.Close()
			return nil, 0, err
		}
	}
	if doc != nil && doc.Info().SplicesRuntime {
		return worldjson.Stream(w, rt, doc)
	}
	if doc != nil {
		// Not spliceable (worldjson.Merge decodes it): read it whole and
		// render as for a small world.
		w.JSON, err = readAllDoc(doc)
		if err != nil {
			return nil, 0, err
		}
	}
	out, err := worldjson.Render(w, rt)
	if err != nil {
		return nil, 0, err
	}
	return func(dst io.Writer) error {
		_, err := dst.Write(out)
		return err
	}, int64(len(out)), nil
}

func readAllDoc(doc wf.DocReader) ([]byte, error) {
	defer doc.Close()
	b := bytes.NewBuffer(make([]byte, 0, doc.Info().Len+bytes.MinRead))
	if _, err := b.ReadFrom(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
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

// Wiki reads: owner or GM of the page's world.

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
