package app

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	wf "github.com/worldforge-go/worldforge"
)

// The paged lists: list_campaigns, list_quests, list_encounters,
// list_wiki_pages, list_factions and list_atlas_places answer one page of
// at most limit rows (wf.DefaultPageLimit, at most wf.MaxPageLimit) in the
// list's order, and a next_cursor only when more rows follow; passed back
// as cursor, with the same other arguments, it asks for the next page.
// Pages are keyset pages (sqlstore/pages.go): a cursor holds the sort key
// of the page's last row, so a page costs the same anywhere in a list, and
// rows inserted during a walk never appear twice. A list that fits one page
// answers exactly as before paging.
//
// A cursor is base64url of a small JSON object: a format version, a digest
// of the tool and its other arguments (so a cursor of another tool, world,
// kind, level or campaign is refused) and the key of each part (one part;
// list_factions has two, its faction pages and its lore factions, paged
// side by side). Anything that is not such a cursor is "bad_request:
// cursor: …", refused before any store work, and writes no audit row.

// pageCursorVersion is the format version every cursor carries.
const pageCursorVersion = 1

// keyShape says which values a part's key holds (besides the id).
type keyShape int

const (
	keyTime      keyShape = iota + 1 // updated_at (campaigns, quests, encounters)
	keyName                          // a title or name (wiki pages, lore)
	keyLevelName                     // a level and a name (atlas nodes)
)

// pageCursor is a decoded cursor.
type pageCursor struct {
	V    int         `json:"v"`
	List string      `json:"l"`
	Keys []cursorKey `json:"k"`
}

// cursorKey is one part's position: the key of the last row listed, or
// End once the part is listed whole (list_factions). FromRow replaces
// Level and Name when the name is too long for a cursor: the store reads
// them from the row.
type cursorKey struct {
	UpdatedAt *int64  `json:"u,omitempty"`
	Level     *int    `json:"lv,omitempty"`
	Name      *string `json:"n,omitempty"`
	FromRow   bool    `json:"r,omitempty"`
	ID        string  `json:"i,omitempty"`
	End       bool    `json:"e,omitempty"`
}

// pagePart is a decoded part: from its start (key nil), after key, or
// listed whole (done).
type pagePart struct {
	key  *wf.PageKey
	done bool
}

// pagedList is one paged list as asked for: the tool and the digest of
// its other arguments.
type pagedList struct {
	tool   string
	digest string
}

// newPagedList binds cursors to the tool and the arguments that choose the
// list's rows (the caller's identity is not among them: every list is
// read for the caller).
func newPagedList(tool string, args ...string) pagedList {
	h := sha256.New()
	io.WriteString(h, "worldforge page cursor\x00"+tool)
	for _, a := range args {
		io.WriteString(h, "\x00"+strconv.Itoa(len(a))+":"+a)
	}
	return pagedList{tool: tool, digest: base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:9])}
}

// errCursor is the refusal of anything that is not a cursor of l.
func (l pagedList) errCursor() error {
	return wf.BadRequest("cursor: not a next_cursor of %s with these arguments", l.tool)
}

// decode reads a cursor of l whose parts have the given shapes: one part
// per shape, each from its start when cursor is "". A part listed whole
// (End) is accepted only when several parts are paged together, and not
// all of them may be.
func (l pagedList) decode(cursor string, shapes ...keyShape) ([]pagePart, error) {
	parts := make([]pagePart, len(shapes))
	if cursor == "" {
		return parts, nil
	}
	c, ok := parseCursor(cursor)
	if !ok || c.List != l.digest || len(c.Keys) != len(shapes) {
		return nil, l.errCursor()
	}
	ends := 0
	for i, k := range c.Keys {
		p, ok := k.part(shapes[i], len(shapes) > 1)
		if !ok {
			return nil, l.errCursor()
		}
		if p.done {
			ends++
		}
		parts[i] = p
	}
	if ends == len(parts) {
		return nil, l.errCursor()
	}
	return parts, nil
}

// parseCursor decodes the JSON of a cursor strictly: version 1, no
// unknown fields, nothing after the object.
func parseCursor(cursor string) (*pageCursor, bool) {
	if len(cursor) > wf.MaxPageCursorLength {
		return nil, false
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var c pageCursor
	if err := dec.Decode(&c); err != nil || c.V != pageCursorVersion {
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false
	}
	return &c, true
}

// part checks a key against its shape and returns the position it names.
func (k cursorKey) part(shape keyShape, mayEnd bool) (pagePart, bool) {
	if k.End {
		return pagePart{done: true}, mayEnd && k == cursorKey{End: true}
	}
	if k.ID == "" || strings.IndexByte(k.ID, 0) >= 0 {
		return pagePart{}, false
	}
	key := &wf.PageKey{ID: k.ID}
	switch shape {
	case keyTime:
		if k.UpdatedAt == nil || k.Level != nil || k.Name != nil || k.FromRow {
			return pagePart{}, false
		}
		key.UpdatedAt = *k.UpdatedAt
	case keyName, keyLevelName:
		if k.UpdatedAt != nil {
			return pagePart{}, false
		}
		if k.FromRow {
			if k.Level != nil || k.Name != nil {
				return pagePart{}, false
			}
			key.FromRow = true
			break
		}
		if k.Name == nil || strings.IndexByte(*k.Name, 0) >= 0 {
			return pagePart{}, false
		}
		key.Name = *k.Name
		if shape == keyName {
			if k.Level != nil {
				return pagePart{}, false
			}
			break
		}
		if k.Level == nil || *k.Level < wf.MinAtlasLevel || *k.Level > wf.MaxAtlasLevel {
			return pagePart{}, false
		}
		key.Level = *k.Level
	default:
		return pagePart{}, false
	}
	return pagePart{key: key}, true
}

// encode makes the cursor of the next page: each part continues after key,
// or is done. A cursor that would be longer than wf.MaxPageCursorLength
// (a name of thousands of bytes) names its rows instead (FromRow).
func (l pagedList) encode(shapes []keyShape, parts []pagePart) (string, error) {
	c := pageCursor{V: pageCursorVersion, List: l.digest, Keys: make([]cursorKey, len(parts))}
	for i, p := range parts {
		if p.done {
			c.Keys[i] = cursorKey{End: true}
			continue
		}
		k := cursorKey{ID: p.key.ID}
		switch shapes[i] {
		case keyTime:
			k.UpdatedAt = &p.key.UpdatedAt
		case keyLevelName:
			k.Level = &p.key.Level
			fallthrough
		case keyName:
			k.Name = &p.key.Name
		}
		c.Keys[i] = k
	}
	out, err := marshalCursor(&c)
	if err != nil || len(out) <= wf.MaxPageCursorLength {
		return out, err
	}
	for i := range c.Keys {
		if c.Keys[i].Name != nil {
			c.Keys[i].Level, c.Keys[i].Name, c.Keys[i].FromRow = nil, nil, true
		}
	}
	if out, err = marshalCursor(&c); err == nil && len(out) > wf.MaxPageCursorLength {
		err = fmt.Errorf("%s: the cursor after row %q is %d bytes, over %d", l.tool, c.Keys[0].ID, len(out), wf.MaxPageCursorLength)
	}
	return out, err
}

func marshalCursor(c *pageCursor) (string, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// onePage reads a one-part list's page with read and returns its rows and
// the cursor of the next page when read reports more, made from the last
// row's key.
func onePage[T any](l pagedList, shape keyShape, read func() (*wf.Page[T], error), key func(*T) *wf.PageKey) ([]T, string, error) {
	page, err := read()
	if err != nil {
		return nil, "", storeErr(err)
	}
	if !page.More || len(page.Items) == 0 {
		return page.Items, "", nil
	}
	next, err := l.encode([]keyShape{shape}, []pagePart{{key: key(&page.Items[len(page.Items)-1])}})
	return page.Items, next, err
}

func docKey(d *wf.DocSummary) *wf.PageKey {
	return &wf.PageKey{UpdatedAt: d.UpdatedAt.UnixMilli(), ID: d.ID}
}

func wikiKey(p *wf.WikiPageSummary) *wf.PageKey { return &wf.PageKey{Name: p.Title, ID: p.ID} }

func atlasKey(n *wf.AtlasNode) *wf.PageKey {
	return &wf.PageKey{Level: n.Level, Name: n.Name, ID: n.ID}
}

func loreNameKey(e *wf.LoreEntity) *wf.PageKey { return &wf.PageKey{Name: e.Name, ID: e.ID} }

// Campaigns, quests and encounters: the caller's own, newest first.

// ListCampaigns lists one page of the caller's campaigns (list_campaigns).
func (s *Service) ListCampaigns(ctx context.Context, r Request, in *wf.ListCampaignsArgs) (wf.CampaignList, error) {
	return run(ctx, s, r, wf.ToolListCampaigns, func(c *call) (wf.CampaignList, error) {
		l := newPagedList(wf.ToolListCampaigns)
		parts, err := l.decode(in.Cursor, keyTime)
		if err != nil {
			return wf.CampaignList{}, err
		}
		list, next, err := onePage(l, keyTime, func() (*wf.Page[wf.DocSummary], error) {
			return s.store.ListCampaignsPage(ctx, c.owner, wf.PageQuery{After: parts[0].key, Limit: cmp.Or(in.Limit, wf.DefaultPageLimit)})
		}, docKey)
		if err != nil {
			return wf.CampaignList{}, err
		}
		c.target("campaign", "", "")
		return wf.CampaignList{Campaigns: list, NextCursor: next}, nil
	})
}

// ListQuests lists one page of the caller's quests, optionally of one
// campaign (list_quests).
func (s *Service) ListQuests(ctx context.Context, r Request, in *wf.CampaignFilterArgs) (wf.QuestList, error) {
	return run(ctx, s, r, wf.ToolListQuests, func(c *call) (wf.QuestList, error) {
		l := newPagedList(wf.ToolListQuests, in.CampaignID)
		parts, err := l.decode(in.Cursor, keyTime)
		if err != nil {
			return wf.QuestList{}, err
		}
		list, next, err := onePage(l, keyTime, func() (*wf.Page[wf.DocSummary], error) {
			return s.store.ListQuestsPage(ctx, c.owner, in.CampaignID, wf.PageQuery{After: parts[0].key, Limit: cmp.Or(in.Limit, wf.DefaultPageLimit)})
		}, docKey)
		if err != nil {
			return wf.QuestList{}, err
		}
		c.target("quest", "", "")
		return wf.QuestList{Quests: list, NextCursor: next}, nil
	})
}

// ListEncounters lists one page of the caller's encounters, optionally of
// one campaign (list_encounters).
func (s *Service) ListEncounters(ctx context.Context, r Request, in *wf.CampaignFilterArgs) (wf.EncounterList, error) {
	return run(ctx, s, r, wf.ToolListEncounters, func(c *call) (wf.EncounterList, error) {
		l := newPagedList(wf.ToolListEncounters, in.CampaignID)
		parts, err := l.decode(in.Cursor, keyTime)
		if err != nil {
			return wf.EncounterList{}, err
		}
		list, next, err := onePage(l, keyTime, func() (*wf.Page[wf.DocSummary], error) {
			return s.store.ListEncountersPage(ctx, c.owner, in.CampaignID, wf.PageQuery{After: parts[0].key, Limit: cmp.Or(in.Limit, wf.DefaultPageLimit)})
		}, docKey)
		if err != nil {
			return wf.EncounterList{}, err
		}
		c.target("encounter", "", "")
		return wf.EncounterList{Encounters: list, NextCursor: next}, nil
	})
}

// Wiki pages, factions and atlas places: owner or GM of the world.

// ListWikiPages lists one page of a world's live wiki pages for its owner
// or a GM (list_wiki_pages).
func (s *Service) ListWikiPages(ctx context.Context, r Request, in *wf.ListWikiPagesArgs) (wf.WikiPageList, error) {
	return run(ctx, s, r, wf.ToolListWikiPages, func(c *call) (wf.WikiPageList, error) {
		l := newPagedList(wf.ToolListWikiPages, in.WorldID, in.Kind)
		parts, err := l.decode(in.Cursor, keyName)
		if err != nil {
			return wf.WikiPageList{}, err
		}
		if err := s.ownerOrGM(ctx, c, in.WorldID); err != nil {
			return wf.WikiPageList{}, err
		}
		pages, next, err := onePage(l, keyName, func() (*wf.Page[wf.WikiPageSummary], error) {
			return s.store.ListWikiPagesPage(ctx, in.WorldID, in.Kind, wf.PageQuery{After: parts[0].key, Limit: cmp.Or(in.Limit, wf.DefaultPageLimit)})
		}, wikiKey)
		if err != nil {
			return wf.WikiPageList{}, err
		}
		c.target("world", in.WorldID, in.WorldID)
		return wf.WikiPageList{Pages: pages, NextCursor: next}, nil
	})
}

// ListAtlasPlaces lists one page of a world's atlas places for its owner
// or a GM (list_atlas_places).
func (s *Service) ListAtlasPlaces(ctx context.Context, r Request, in *wf.ListAtlasPlacesArgs) (wf.AtlasPlaceList, error) {
	return run(ctx, s, r, wf.ToolListAtlasPlaces, func(c *call) (wf.AtlasPlaceList, error) {
		l := newPagedList(wf.ToolListAtlasPlaces, in.WorldID, strconv.Itoa(in.Level))
		parts, err := l.decode(in.Cursor, keyLevelName)
		if err != nil {
			return wf.AtlasPlaceList{}, err
		}
		if err := s.ownerOrGM(ctx, c, in.WorldID); err != nil {
			return wf.AtlasPlaceList{}, err
		}
		nodes, next, err := onePage(l, keyLevelName, func() (*wf.Page[wf.AtlasNode], error) {
			return s.store.ListAtlasNodesPage(ctx, in.WorldID, in.Level, wf.PageQuery{After: parts[0].key,
				Limit: cmp.Or(in.Limit, wf.DefaultPageLimit), MaxBytes: wf.MaxPageBytes})
		}, atlasKey)
		if err != nil {
			return wf.AtlasPlaceList{}, err
		}
		c.target("world", in.WorldID, in.WorldID)
		return wf.AtlasPlaceList{Places: nodes, NextCursor: next}, nil
	})
}

// listFactions pages its two parts side by side: each answer holds up to
// limit faction pages (by title) and up to limit lore factions (by name);
// next_cursor continues both, and a part listed whole answers empty.
func (s *Service) ListFactions(ctx context.Context, r Request, in *wf.ListFactionsArgs) (wf.FactionList, error) {
	return run(ctx, s, r, wf.ToolListFactions, func(c *call) (wf.FactionList, error) {
		l := newPagedList(wf.ToolListFactions, in.WorldID)
		shapes := []keyShape{keyName, keyName}
		parts, err := l.decode(in.Cursor, shapes...)
		if err != nil {
			return wf.FactionList{}, err
		}
		if err := s.ownerOrGM(ctx, c, in.WorldID); err != nil {
			return wf.FactionList{}, err
		}
		limit := cmp.Or(in.Limit, wf.DefaultPageLimit)
		out := wf.FactionList{WorldID: in.WorldID, Pages: []wf.WikiPageSummary{}, Lore: []wf.RawEntity{}}
		next := []pagePart{{done: true}, {done: true}}
		if !parts[0].done {
			page, err := s.store.ListWikiPagesPage(ctx, in.WorldID, wf.WikiKindFaction, wf.PageQuery{After: parts[0].key, Limit: limit})
			if err != nil {
				return wf.FactionList{}, storeErr(err)
			}
			out.Pages = page.Items
			if page.More && len(page.Items) > 0 {
				next[0] = pagePart{key: wikiKey(&page.Items[len(page.Items)-1])}
			}
		}
		if !parts[1].done {
			page, err := s.store.ListLoreByNamePage(ctx, in.WorldID, "factions", wf.PageQuery{After: parts[1].key, Limit: limit, MaxBytes: wf.MaxPageBytes})
			if err != nil {
				return wf.FactionList{}, storeErr(err)
			}
			out.Lore = rawEntities(page.Items)
			if page.More && len(page.Items) > 0 {
				next[1] = pagePart{key: loreNameKey(&page.Items[len(page.Items)-1])}
			}
		}
		if !next[0].done || !next[1].done {
			if out.NextCursor, err = l.encode(shapes, next); err != nil {
				return wf.FactionList{}, err
			}
		}
		c.target("world", in.WorldID, in.WorldID)
		return out, nil
	})
}
