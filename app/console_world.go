package app

import (
	"context"
	"strings"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/engine"
)

// The console's world page: the map (world header, grid, POIs and
// presence) for the world's owner or a GM, and its membership, which the
// owner manages. Reads are not audited; adding and removing a member are
// (target world_member).

// WorldMapData is what a world's map is drawn from: the world's header
// (its document left out), the caller's role in it (owner or gm), every
// POI (the owner and GMs see them all) and the party's presence. The
// grid is read only when asked for (Grid), so a page that shows the
// world's facts and a cached map never reads a large document.
type WorldMapData struct {
	World    *wf.World
	Role     string
	POIs     []wf.POI
	Presence []wf.Presence

	s   *Service
	doc []byte // the document, when it was read along with the header
}

// Grid reads and parses the world's grid, at the version WorldMap read.
// Errors: no_grid, freeform_grid, no_size and bad_request for a world
// whose document has no usable grid (engine.DocGrid), conflict if the
// world changed since WorldMap read it, and store errors.
func (d *WorldMapData) Grid(ctx context.Context) (*engine.Grid, error) {
	if d.doc != nil {
		return engine.DocGrid(d.doc)
	}
	// One snapshot of the world row and its document's pieces.
	w, _, err := d.s.store.ReadWorld(ctx, d.World.ID)
	if err != nil {
		return nil, storeErr(err)
	}
	if w.Version != d.World.Version {
		return nil, wf.Errorf(wf.EConflict, "the world changed while its map was read; reload the page")
	}
	return engine.DocGrid(w.JSON)
}

// WorldMap reads what a world's map is drawn from, for its owner or a
// GM; everyone else gets not_found, as for a missing world.
func (s *Service) WorldMap(ctx context.Context, r Request, worldID string) (*WorldMapData, error) {
	return run(ctx, s, r, OpWorldMap, func(c *call) (*WorldMapData, error) {
		role, err := s.store.WorldRole(ctx, worldID, c.owner)
		if err != nil {
			return nil, storeErr(err)
		}
		if role != wf.RoleOwner && role != wf.RoleGM {
			return nil, wf.ErrNotFound
		}
		// As read_world: a document kept in pieces stays in the store
		// until the grid is asked for.
		w, rt, _, err := s.store.ReadWorldDeferred(ctx, worldID)
		if err != nil {
			return nil, storeErr(err)
		}
		pois, err := s.store.ListPOIs(ctx, worldID)
		if err != nil {
			return nil, storeErr(err)
		}
		d := &WorldMapData{World: w, Role: role, POIs: pois, s: s, doc: w.JSON}
		w.JSON = nil
		if rt != nil {
			d.Presence = rt.Presence
		}
		c.target("world", w.ID, w.ID)
		return d, nil
	})
}

// ListWorldMembers lists a world's members (not its owner) with their
// names, by role then name, for its owner or a GM.
func (s *Service) ListWorldMembers(ctx context.Context, r Request, worldID string) ([]wf.WorldMember, error) {
	return run(ctx, s, r, OpListWorldMembers, func(c *call) ([]wf.WorldMember, error) {
		if err := s.ownerOrGM(ctx, c, worldID); err != nil {
			return nil, err
		}
		list, err := s.store.ListWorldMembers(ctx, worldID)
		if err != nil {
			return nil, storeErr(err)
		}
		if list == nil {
			list = []wf.WorldMember{}
		}
		c.target("world", worldID, worldID)
		return list, nil
	})
}

// MemberArgs names a user to add to a world and their role. User is the
// user's id or exact name (an id wins); Role is gm, player or observer.
type MemberArgs struct {
	User string
	Role string
}

// memberRoles are the roles a member may be given.
var memberRoles = []string{wf.RoleGM, wf.RolePlayer, wf.RoleObserver}

// AddWorldMember gives a user a role in a world (replacing an earlier
// one), for the world's owner only. Errors: bad_request for a missing
// user, a role other than gm, player or observer, a name several users
// share (give the id), or the owner naming themselves; not_found for a
// user no id or name matches.
func (s *Service) AddWorldMember(ctx context.Context, r Request, worldID string, args MemberArgs) (*wf.WorldMember, error) {
	return run(ctx, s, r, OpAddWorldMember, func(c *call) (*wf.WorldMember, error) {
		if err := s.worldOwner(ctx, c, worldID); err != nil {
			return nil, err
		}
		who, role := strings.TrimSpace(args.User), strings.TrimSpace(args.Role)
		if who == "" {
			return nil, wf.BadRequest("name the user to add, by id or name")
		}
		if !contains(memberRoles, role) {
			return nil, wf.BadRequest("role must be gm, player or observer, got %q", clip(role))
		}
		u, err := s.findUser(ctx, who)
		if err != nil {
			return nil, err
		}
		if u.ID == c.owner {
			return nil, wf.BadRequest("you own this world: the owner cannot also be a member")
		}
		if err := s.store.AddWorldMember(ctx, worldID, u.ID, role); err != nil {
			return nil, storeErr(err)
		}
		c.target("world_member", u.ID, worldID)
		return &wf.WorldMember{WorldID: worldID, UserID: u.ID, Role: role, Name: u.Name}, nil
	})
}

// findUser finds a user by id, else by exact name.
func (s *Service) findUser(ctx context.Context, who string) (*wf.User, error) {
	u, err := s.store.FindUserByID(ctx, who)
	if err == nil {
		return u, nil
	}
	if wf.ErrorCode(err) != wf.ENotFound {
		return nil, storeErr(err)
	}
	users, err := s.store.FindUsersByName(ctx, who)
	if err != nil {
		return nil, storeErr(err)
	}
	switch len(users) {
	case 0:
		return nil, wf.Errorf(wf.ENotFound, "no user has the id or name %q", clip(who))
	case 1:
		return &users[0], nil
	}
	return nil, wf.BadRequest("%d users are named %q: give the user's id instead", len(users), clip(who))
}

// RemoveWorldMember removes a user from a world's members, for the
// world's owner only. Errors: not_found for everyone else (as for a
// missing world), and, for the owner, not_found naming a user who is not
// a member.
func (s *Service) RemoveWorldMember(ctx context.Context, r Request, worldID, userID string) error {
	_, err := run(ctx, s, r, OpRemoveWorldMember, func(c *call) (struct{}, error) {
		if err := s.worldOwner(ctx, c, worldID); err != nil {
			return struct{}{}, err
		}
		if strings.TrimSpace(userID) == "" {
			return struct{}{}, wf.BadRequest("name the member to remove")
		}
		if err := s.store.RemoveWorldMember(ctx, worldID, userID); err != nil {
			if wf.ErrorCode(err) == wf.ENotFound {
				return struct{}{}, wf.Errorf(wf.ENotFound, "that user is not a member of this world")
			}
			return struct{}{}, storeErr(err)
		}
		c.target("world_member", userID, worldID)
		return struct{}{}, nil
	})
	return err
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// clip shortens user input quoted in an error.
func clip(s string) string {
	if r := []rune(s); len(r) > 64 {
		return string(r[:64]) + "…"
	}
	return s
}
