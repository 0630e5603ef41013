package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/engine"
	"github.com/worldforge-go/worldforge/engine/lore"
	"github.com/worldforge-go/worldforge/internal/argjson"
)

// The world tools apply at once (no proposal): creating a world from a
// template, resizing its grid, and a player picking up an item or opening
// a POI next to them.
//
// Player actions: the player is the caller (the credential's owner), who
// must own the world or be one of its members; the position is the one the
// server holds (PUT /worlds/{id}/presence), never the client's; `cell`
// names the POI's cell and must match it (a POI is not found at a cell it
// is not in). A POI the caller does not see (wf.POISight: players and
// observers see only the party's POIs) is not_found, as one that does not
// exist. The POI must be on the player's cell or next to it
// (bad_request: too_far). Items are picked up once: an item already taken
// is unknown_item, as is one the POI never held.

func createWorldSchema(s *jsonschema.Schema) {
	p := s.Properties["name"]
	p.MinLength, p.MaxLength = ptr(1), ptr(wf.MaxWorldNameLength)
	s.Properties["size"].Enum = []any{"small", "medium", "large"}
	s.Properties["populate"].Default = []byte("true")
	seed := s.Properties["seed"]
	seed.Type, seed.Types = "", []string{"null", "integer", "string"}
	seed.Description = "the generation seed: an integer from " + wf.SeedRangeText + ", or a string: digits (optionally after a minus sign) are that integer, any other text (a word such as \"dragon\") maps to a fixed integer (the top 54 bits of the 64-bit FNV-1a hash of its UTF-8 bytes, minus 2^53); absent for a random one. The integer used is returned as seed: passing it back gives the same world"
}

func (s *Server) createWorld(ctx context.Context, c *call, in *wf.CreateWorldArgs) (any, error) {
	if n := utf8.RuneCountInString(in.Name); n < 1 || n > wf.MaxWorldNameLength {
		return nil, wf.BadRequest("name must be 1–%d characters", wf.MaxWorldNameLength)
	}
	if in.Seed != nil {
		if err := wf.CheckSeed(*in.Seed); err != nil {
			return nil, err
		}
	}
	populate := in.Populate == nil || *in.Populate
	gen, err := engine.Generate(engine.Spec{Template: in.Template, Seed: in.Seed, Size: in.Size, Populate: populate})
	if err != nil {
		return nil, err
	}
	w := &wf.World{OwnerID: c.owner, Name: in.Name, Template: gen.Template, Seed: gen.Seed,
		Cols: gen.Cols, Rows: gen.Rows, JSON: gen.Doc}
	content := &wf.WorldContent{POIs: gen.POIs, WikiPages: gen.Pages}
	for i := range content.POIs {
		content.POIs[i].ID = "" // the engine's local keys; the store assigns ids
	}
	// Atlas places come as a tree of local keys, parents first.
	ids := map[string]string{}
	for _, pl := range gen.Places {
		n := pl.Node
		n.ID = wf.NewID("atlas")
		ids[pl.Key] = n.ID
		if pl.ParentKey != "" {
			parent, ok := ids[pl.ParentKey]
			if !ok {
				return nil, fmt.Errorf("template %s: atlas place %s before its parent %s", gen.Template, pl.Key, pl.ParentKey)
			}
			n.ParentID = parent
		}
		content.AtlasNodes = append(content.AtlasNodes, n)
	}
	if populate {
		if p, ok := lore.ForTemplate(gen.Template); ok {
			for _, e := range p.Entities {
				content.Lore = append(content.Lore, wf.LoreEntity{Collection: e.Collection, ID: e.ID, Name: e.Name, JSON: e.JSON})
			}
		}
	}
	if err := s.store.CreateWorldContent(ctx, w, content, c.owner); err != nil {
		return nil, storeErr(err)
	}
	c.target("world", w.ID, w.ID)
	return wf.CreateWorldResult{ID: w.ID, Version: w.Version, Template: gen.Template, Seed: gen.Seed, Cols: gen.Cols, Rows: gen.Rows}, nil
}

// resizeResult is the result of worldforge_resize_world: the world's new
// version and the resize report.
type resizeResult struct {
	WorldID string `json:"worldId"`
	Version int64  `json:"version"`
	engine.ResizeReport
}

func (s *Server) resizeWorld(ctx context.Context, c *call, in *wf.ResizeWorldArgs) (any, error) {
	if err := s.worldOwner(ctx, c, in.WorldID); err != nil {
		return nil, err
	}
	cols, rows, err := engine.CheckSize(in.Cols, in.Rows)
	if err != nil {
		return nil, err
	}
	// A resize over the cells quota is refused before the engine rebuilds
	// a document of up to 4096² cells (about a second and 100 MB); the
	// store checks again in the resize's transaction.
	if err := s.store.CheckResizeQuota(ctx, in.WorldID, cols, rows); err != nil {
		return nil, storeErr(err)
	}
	var rep engine.ResizeReport
	w, err := s.store.ResizeWorld(ctx, in.WorldID, func(w *wf.World, pois []wf.POI, rt *wf.WorldRuntime) (*wf.ResizePlan, error) {
		if w.OwnerID != c.owner { // ownership changed since the check
			return nil, wf.ErrNotFound
		}
		doc, r, err := engine.Resize(w.JSON, cols, rows, pois, rt)
		if err != nil {
			return nil, err
		}
		rep = r
		return rep.Plan(doc), nil
	})
	if err != nil {
		return nil, storeErr(err)
	}
	c.target("world", w.ID, w.ID)
	return resizeResult{WorldID: w.ID, Version: w.Version, ResizeReport: rep}, nil
}

// worldMember checks that the caller owns the world or is a member of it
// (GM, player or observer), and returns what the caller sees of its POIs;
// anyone else gets not_found.
func (s *Server) worldMember(ctx context.Context, c *call, worldID string) (wf.POISight, error) {
	role, err := s.store.WorldRole(ctx, worldID, c.owner)
	if err != nil {
		return wf.SeesNoPOIs, storeErr(err)
	}
	if role == "" {
		return wf.SeesNoPOIs, wf.ErrNotFound
	}
	return wf.POISightOf(role), nil
}

// reach is the rule every player action shares: the caller sees the POI
// (a POI hidden from them is not_found, before anything else is checked,
// as a POI that does not exist), it is at the named cell, and on or next
// to the player's cell.
func reach(sight wf.POISight, cell wf.Cell) func(p *wf.Presence, poi *wf.POI) error {
	return func(p *wf.Presence, poi *wf.POI) error {
		if !sight.Sees(poi) || poi.X != cell.X || poi.Y != cell.Y {
			return wf.ErrNotFound
		}
		if !engine.Adjacent(p.X, p.Y, poi.X, poi.Y) {
			return wf.BadRequest("too_far")
		}
		return nil
	}
}

func (s *Server) playerPickup(ctx context.Context, c *call, in *wf.PlayerPickupArgs) (any, error) {
	sight, err := s.worldMember(ctx, c, in.WorldID)
	if err != nil {
		return nil, err
	}
	near := reach(sight, in.Cell)
	item, err := s.store.PickUp(ctx, in.WorldID, c.owner, in.POIID, in.ItemID, func(p *wf.Presence, poi *wf.POI) error {
		if err := near(p, poi); err != nil {
			return err
		}
		if !poi.Pickable {
			return wf.BadRequest("not_pickable")
		}
		return nil
	})
	if err != nil {
		return nil, storeErr(err)
	}
	c.target("poi", in.POIID, in.WorldID)
	return wf.PickupResult{Item: *item}, nil
}

func (s *Server) playerOpen(ctx context.Context, c *call, in *wf.PlayerOpenArgs) (any, error) {
	sight, err := s.worldMember(ctx, c, in.WorldID)
	if err != nil {
		return nil, err
	}
	near := reach(sight, in.Cell)
	poi, first, err := s.store.OpenPOI(ctx, in.WorldID, c.owner, in.POIID, func(p *wf.Presence, poi *wf.POI) error {
		if err := near(p, poi); err != nil {
			return err
		}
		if !poi.Openable {
			return wf.BadRequest("not_openable")
		}
		return nil
	})
	if err != nil {
		return nil, storeErr(err)
	}
	c.target("poi", poi.ID, in.WorldID)
	return wf.OpenResult{POI: *poi, Opened: true, First: first}, nil
}

// argPrepares are the tools whose arguments need more than decoding, by
// name: each gets the arguments, numbers as json.Number, after unknown
// keys are dropped and before they are decoded.
var argPrepares = map[string]func(any) error{
	wf.ToolCreateWorld: prepareCreateWorldArgs,
}

// prepareCreateWorldArgs reads worldforge_create_world's seed: a string is
// read by wf.ParseSeed (digits are that integer, any other text maps to
// wf.SeedOfWord), and the integer must lie within ±2^53.
func prepareCreateWorldArgs(v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	switch seed := m["seed"].(type) {
	case string:
		n, err := wf.ParseSeed(seed)
		if err != nil {
			return err
		}
		m["seed"] = json.Number(strconv.FormatInt(n, 10))
	case json.Number:
		n, err := strconv.ParseInt(string(seed), 10, 64)
		if err == nil {
			return wf.CheckSeed(n)
		}
		if _, ok := argjson.Integral(string(seed)); ok {
			return wf.BadRequest("seed %s is out of range: seeds are integers from %s, which JavaScript clients hold exactly", seed, wf.SeedRangeText)
		}
		// Not an integer: decoding says so.
	}
	return nil
}
