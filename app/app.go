// Package app is WorldForge's application layer: every operation the
// product has — reading worlds, campaigns, quests, encounters, wiki pages,
// atlas places, POIs and lore; creating and resizing worlds; the player
// actions; proposing, reviewing, committing and rejecting changes; placing
// presence; managing auto-accept rules — each taking the actor, and each
// owning, in this order:
//
//  1. the scope check (missing_scopes:<every missing scope>),
//  2. owner resolution (missing_scopes:unresolved_owner),
//  3. the role check (owner / owner-or-GM / member / row owner), answering
//     not_found to everyone else exactly as for a missing id,
//  4. visibility (what of a world the caller sees, such as POIs),
//  5. the store call,
//  6. one audit row, committed before the result is returned, and
//  7. the error code (a *worldforge.Error; anything else is internal).
//
// A failure at any step writes no audit row. The access table (Table)
// names, for every operation, the MCP tool and REST routes that serve it,
// its scopes and who may perform it; the adapters (package mcpserver for
// the tools, package httpapi for REST) take their gates and descriptions
// from it and only decode, call and encode.
//
// Review rules. Who reviews (commits, rejects, lists): for a proposal on a
// world, the world's owner and its GMs; for a quest or encounter proposal
// outside any world, the row's owner — for a new row, the proposer, who
// will own it. Everyone else is told proposal_not_found (not_found for a
// world), as for a missing proposal.
//
// Auto-accept: the rules that count are those of the proposal's reviewer
// of record — the world's owner, or the row's owner outside a world. A
// matching proposal is committed at once, in its own transaction, with its
// own audit row naming the rule; if that commit fails (a version conflict
// between filing and committing) the proposal stays pending for review.
//
// The store does the transactional work (claim once, version predicate,
// audit row, one transaction); this package decides who may.
package app

import (
	"context"
	"errors"
	"fmt"

	wf "github.com/worldforge-go/worldforge"
)

// Service performs the operations on a store.
type Service struct {
	store wf.Store
}

// New returns a Service on store.
func New(store wf.Store) *Service { return &Service{store: store} }

// Via names what an operation came through, for its audit row: an MCP
// tool or a REST route pattern ("PUT /worlds/{id}/presence").
type Via struct {
	Tool  string
	Route string
}

// Request is who asks for an operation, and through what.
type Request struct {
	Actor *wf.Actor
	Via   Via
	// PageView marks a read made to show a web console page: a read-only
	// operation then writes no audit row (a person looking at a page is
	// not an action; the MCP and REST reads stay audited). Writes are
	// audited whatever the request says.
	PageView bool
}

// call is the state of one operation shared with its body.
type call struct {
	req   Request
	row   *Access
	owner string
	audit wf.AuditEntry
	// audited is set by a body whose audit row the store wrote in the
	// body's own transaction (filings, commits, rejections).
	audited bool
	// world and worldOwner are the last world ownerOrGM checked and its
	// owner (owners never change), for a filing's reviewer.
	world, worldOwner string
}

// keyID is the caller's API key id ("" for a session).
func (c *call) keyID() string { return c.req.Actor.KeyID }

// target records what the call touched, for its audit row.
func (c *call) target(typ, id, worldID string) {
	c.audit.TargetType, c.audit.TargetID, c.audit.WorldID = typ, id, worldID
}

// entry starts an audit row of the call's with the given outcome.
func (c *call) entry(outcome string) *wf.AuditEntry {
	return &wf.AuditEntry{ActorID: c.owner, KeyID: c.keyID(), Tool: c.req.Via.Tool, Route: c.req.Via.Route, Outcome: outcome}
}

// begin admits r for the operation op (scope check, then owner
// resolution).
func begin(r Request, op string) (*call, error) {
	row, ok := byOp[op]
	if !ok {
		return nil, fmt.Errorf("app: no access row for %q", op)
	}
	owner, err := Admit(r, *row)
	if err != nil {
		return nil, err
	}
	// An operation an MCP tool serves names the tool in its audit row
	// whatever it came through (the console's create-world form is
	// create_world), next to the route that served it.
	if r.Via.Tool == "" {
		r.Via.Tool = row.Tool
	}
	return &call{req: r, row: row, owner: owner}, nil
}

// run performs operation op for r: begin, the body (role, visibility,
// store call), then the audit row unless the body's transaction wrote
// it.
func run[T any](ctx context.Context, s *Service, r Request, op string, body func(c *call) (T, error)) (T, error) {
	var zero T
	c, err := begin(r, op)
	if err != nil {
		return zero, err
	}
	out, err := body(c)
	if err != nil {
		return zero, err
	}
	if err := s.audit(ctx, c); err != nil {
		return zero, err
	}
	return out, nil
}

// audit writes the call's audit row (outcome ok), unless the body's
// transaction did, the operation is not audited (Access.NoAudit), or it
// only reads for a console page (Request.PageView).
func (s *Service) audit(ctx context.Context, c *call) error {
	if c.audited || c.row.NoAudit || (c.req.PageView && c.row.ReadOnly) {
		return nil
	}
	a := &c.audit
	a.ActorID, a.KeyID, a.Tool, a.Route, a.Outcome = c.owner, c.keyID(), c.req.Via.Tool, c.req.Via.Route, "ok"
	if err := s.store.AppendAudit(ctx, a); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

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
func (s *Service) worldOwner(ctx context.Context, c *call, worldID string) error {
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
func (s *Service) ownerOrGM(ctx context.Context, c *call, worldID string) error {
	owner, role, err := s.store.WorldAccess(ctx, worldID, c.owner)
	if err != nil {
		return storeErr(err)
	}
	if role != wf.RoleOwner && role != wf.RoleGM {
		return wf.ErrNotFound
	}
	c.world, c.worldOwner = worldID, owner
	return nil
}

// gmWorlds returns the worlds a search may cover: the one named, if the
// caller owns it or runs it as GM, or else every such world.
func (s *Service) gmWorlds(ctx context.Context, c *call, worldID string) ([]string, error) {
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

// worldMember checks that the caller owns the world or is a member of it
// (GM, player or observer), and returns what the caller sees of its POIs;
// anyone else gets not_found.
func (s *Service) worldMember(ctx context.Context, c *call, worldID string) (wf.POISight, error) {
	role, err := s.store.WorldRole(ctx, worldID, c.owner)
	if err != nil {
		return wf.SeesNoPOIs, storeErr(err)
	}
	if role == "" {
		return wf.SeesNoPOIs, wf.ErrNotFound
	}
	return wf.POISightOf(role), nil
}

// storeErr passes domain errors through and wraps the rest.
func storeErr(err error) error {
	var e *wf.Error
	if errors.As(err, &e) {
		return e
	}
	return fmt.Errorf("store: %w", err)
}
