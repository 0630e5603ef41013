package app

import (
	"context"

	wf "github.com/worldforge-go/worldforge"
)

// The world operations that only REST serves: placing presence and the
// POI search by what the caller's role sees (worldforge.POISightOf, the
// rule the player tools share).

// PresenceArgs places a player: the cell, and whom (UserID; "" for the
// caller).
type PresenceArgs struct {
	X      *int
	Y      *int
	UserID string
}

// PlacePresence places a player on a world's grid. The world's owner, its
// GMs and its players may; a player places only themselves, the owner or
// a GM any owner, GM or player of the world. read supplies the placement
// once the caller's role allows it. The store refuses a cell outside the
// grid (bad_request), atomically with a resize of the world.
func (s *Service) PlacePresence(ctx context.Context, r Request, worldID string, read func(*PresenceArgs) error) (*wf.Presence, error) {
	return run(ctx, s, r, OpPlacePresence, func(c *call) (*wf.Presence, error) {
		role, err := s.store.WorldRole(ctx, worldID, c.owner)
		if err != nil {
			return nil, storeErr(err)
		}
		if role != wf.RoleOwner && role != wf.RoleGM && role != wf.RolePlayer {
			return nil, wf.ErrNotFound
		}
		var in PresenceArgs
		if err := read(&in); err != nil {
			return nil, err
		}
		if in.X == nil || in.Y == nil {
			return nil, wf.BadRequest("x and y are required")
		}
		who := c.owner
		if in.UserID != "" && in.UserID != c.owner {
			if role == wf.RolePlayer {
				return nil, wf.BadRequest("a player places only themselves")
			}
			target, err := s.store.WorldRole(ctx, worldID, in.UserID)
			if err != nil {
				return nil, storeErr(err)
			}
			if target != wf.RoleOwner && target != wf.RoleGM && target != wf.RolePlayer {
				return nil, wf.BadRequest("userId is not a player of this world")
			}
			who = in.UserID
		}
		p := &wf.Presence{WorldID: worldID, UserID: who, X: *in.X, Y: *in.Y}
		if err := s.store.SetPresence(ctx, p); err != nil {
			return nil, storeErr(err)
		}
		c.target("presence", who, worldID)
		return p, nil
	})
}

// SearchWorldPOIs searches a world's POIs by what the caller sees: the
// owner and GMs every POI, players and observers the party's; anyone else
// is not_found, as for a missing world. read supplies the query once the
// caller's role allows it; PartyOnly is never the caller's to set.
func (s *Service) SearchWorldPOIs(ctx context.Context, r Request, worldID string, read func(*wf.POIQuery) error) (wf.POIList, error) {
	return run(ctx, s, r, OpSearchWorldPOIs, func(c *call) (wf.POIList, error) {
		role, err := s.store.WorldRole(ctx, worldID, c.owner)
		if err != nil {
			return wf.POIList{}, storeErr(err)
		}
		var partyOnly bool
		switch wf.POISightOf(role) {
		case wf.SeesAllPOIs:
		case wf.SeesPartyPOIs:
			partyOnly = true
		default:
			return wf.POIList{}, wf.ErrNotFound
		}
		q := wf.POIQuery{PartyOnly: partyOnly}
		if err := read(&q); err != nil {
			return wf.POIList{}, err
		}
		q.PartyOnly = partyOnly // never from the client
		if q.Limit < 0 || q.Limit > wf.MaxPOILimit {
			return wf.POIList{}, wf.BadRequest("limit must be between 1 and %d", wf.MaxPOILimit)
		}
		if err := q.Check(); err != nil {
			return wf.POIList{}, err
		}
		pois, err := s.store.SearchPOIs(ctx, worldID, q)
		if err != nil {
			return wf.POIList{}, storeErr(err)
		}
		c.target("world", worldID, worldID)
		return wf.POIList{POIs: pois}, nil
	})
}
