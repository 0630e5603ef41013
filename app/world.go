package app

import (
	"context"
	"fmt"
	"unicode/utf8"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/engine"
	"github.com/worldforge-go/worldforge/engine/lore"
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

// CreateWorld generates a world from a template and stores it as the
// caller's (worldforge_create_world).
func (s *Service) CreateWorld(ctx context.Context, r Request, in *wf.CreateWorldArgs) (wf.CreateWorldResult, error) {
	return run(ctx, s, r, wf.ToolCreateWorld, func(c *call) (wf.CreateWorldResult, error) {
		if n := utf8.RuneCountInString(in.Name); n < 1 || n > wf.MaxWorldNameLength {
			return wf.CreateWorldResult{}, wf.BadRequest("name must be 1–%d characters", wf.MaxWorldNameLength)
		}
		if in.Seed != nil {
			if err := wf.CheckSeed(*in.Seed); err != nil {
				return wf.CreateWorldResult{}, err
			}
		}
		populate := in.Populate == nil || *in.Populate
		gen, err := engine.Generate(engine.Spec{Template: in.Template, Seed: in.Seed, Size: in.Size, Populate: populate})
		if err != nil {
			return wf.CreateWorldResult{}, err
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
					return wf.CreateWorldResult{}, fmt.Errorf("template %s: atlas place %s before its parent %s", gen.Template, pl.Key, pl.ParentKey)
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
			return wf.CreateWorldResult{}, storeErr(err)
		}
		c.target("world", w.ID, w.ID)
		return wf.CreateWorldResult{ID: w.ID, Version: w.Version, Template: gen.Template, Seed: gen.Seed, Cols: gen.Cols, Rows: gen.Rows}, nil
	})
}

// ResizeResult is the result of worldforge_resize_world: the world's new
// version and the resize report.
type ResizeResult struct {
	WorldID string `json:"worldId"`
	Version int64  `json:"version"`
	engine.ResizeReport
}

// ResizeWorld resizes a world's grid for its owner
// (worldforge_resize_world).
func (s *Service) ResizeWorld(ctx context.Context, r Request, in *wf.ResizeWorldArgs) (ResizeResult, error) {
	return run(ctx, s, r, wf.ToolResizeWorld, func(c *call) (ResizeResult, error) {
		if err := s.worldOwner(ctx, c, in.WorldID); err != nil {
			return ResizeResult{}, err
		}
		cols, rows, err := engine.CheckSize(in.Cols, in.Rows)
		if err != nil {
			return ResizeResult{}, err
		}
		// A resize over the cells quota is refused before the engine rebuilds
		// a document of up to 4096² cells (about a second and 100 MB); the
		// store checks again in the resize's transaction.
		if err := s.store.CheckResizeQuota(ctx, in.WorldID, cols, rows); err != nil {
			return ResizeResult{}, storeErr(err)
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
			return ResizeResult{}, storeErr(err)
		}
		c.target("world", w.ID, w.ID)
		return ResizeResult{WorldID: w.ID, Version: w.Version, ResizeReport: rep}, nil
	})
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

// PlayerPickup picks up an item from a POI next to the caller, a member of
// the world (worldforge_player_pickup).
func (s *Service) PlayerPickup(ctx context.Context, r Request, in *wf.PlayerPickupArgs) (wf.PickupResult, error) {
	return run(ctx, s, r, wf.ToolPlayerPickup, func(c *call) (wf.PickupResult, error) {
		sight, err := s.worldMember(ctx, c, in.WorldID)
		if err != nil {
			return wf.PickupResult{}, err
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
			return wf.PickupResult{}, storeErr(err)
		}
		c.target("poi", in.POIID, in.WorldID)
		return wf.PickupResult{Item: *item}, nil
	})
}

// PlayerOpen opens a POI next to the caller, a member of the world
// (worldforge_player_open).
func (s *Service) PlayerOpen(ctx context.Context, r Request, in *wf.PlayerOpenArgs) (wf.OpenResult, error) {
	return run(ctx, s, r, wf.ToolPlayerOpen, func(c *call) (wf.OpenResult, error) {
		sight, err := s.worldMember(ctx, c, in.WorldID)
		if err != nil {
			return wf.OpenResult{}, err
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
			return wf.OpenResult{}, storeErr(err)
		}
		c.target("poi", poi.ID, in.WorldID)
		return wf.OpenResult{POI: *poi, Opened: true, First: first}, nil
	})
}
