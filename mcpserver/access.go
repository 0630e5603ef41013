package mcpserver

import (
	"context"
	"errors"
	"fmt"

	wf "github.com/worldforge-go/worldforge"
)

// ownedBy answers not_found unless the row belongs to the caller, so a
// stranger cannot tell someone else's row from a missing one.
func ownedBy(c *call, ownerID string) error {
	if ownerID != c.owner {
		return wf.ErrNotFound
	}
	return nil
}

// worldOwner checks that the caller owns the world, answering not_found
// for everyone else and for a missing world. It asks only for the caller's
// role, not for the world's document.
func (s *Server) worldOwner(ctx context.Context, c *call, worldID string) error {
	role, err := s.store.WorldRole(ctx, worldID, c.owner)
	if err != nil {
		return storeErr(err)
	}
	if role != wf.RoleOwner {
		return wf.ErrNotFound
	}
	return nil
}

// ownerOrGM checks that the caller owns the world or is one of its GMs.
// Players, observers and strangers get not_found, as for a missing world.
func (s *Server) ownerOrGM(ctx context.Context, c *call, worldID string) error {
	role, err := s.store.WorldRole(ctx, worldID, c.owner)
	if err != nil {
		return storeErr(err)
	}
	if role != wf.RoleOwner && role != wf.RoleGM {
		return wf.ErrNotFound
	}
	return nil
}

// gmWorlds returns the worlds a search may cover: the one named, if the
// caller owns it or runs it as GM, or else every such world.
func (s *Server) gmWorlds(ctx context.Context, c *call, worldID string) ([]string, error) {
	if worldID != "" {
		if err := s.ownerOrGM(ctx, c, worldID); err != nil {
			return nil, err
		}
		return []string{worldID}, nil
	}
	ids, err := s.store.WorldsWhereGM(ctx, c.owner)
	if err != nil {
		return nil, storeErr(err)
	}
	return ids, nil
}

// storeErr passes domain errors through and wraps the rest.
func storeErr(err error) error {
	var e *wf.Error
	if errors.As(err, &e) {
		return e
	}
	return fmt.Errorf("store: %w", err)
}
