package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"

	"github.com/worldforge-go/worldforge"
)

const ruleCols = "id, owner_id, world_id, actor_id, key_id, kinds, created_at"

func scanRule(s scanner) (worldforge.AutoAcceptRule, error) {
	var (
		r                 worldforge.AutoAcceptRule
		world, actor, key sql.NullString
		kinds             string
		created           int64
	)
	if err := s.Scan(&r.ID, &r.OwnerID, &world, &actor, &key, &kinds, &created); err != nil {
		return r, err
	}
	r.WorldID, r.ActorID, r.KeyID = world.String, actor.String, key.String
	r.CreatedAt = fromMS(created)
	if err := json.Unmarshal([]byte(kinds), &r.Kinds); err != nil {
		return r, err
	}
	if r.Kinds == nil {
		r.Kinds = []string{}
	}
	return r, nil
}

// CreateAutoAcceptRule implements worldforge.ProposalStore. A rule that
// fails AutoAcceptRule.Check (over the bounds, a kind that is not a
// proposal kind or is listed twice) is bad_request; a missing owner or
// world is not_found. No kinds (nil or empty) means every kind.
func (db *DB) CreateAutoAcceptRule(ctx context.Context, r *worldforge.AutoAcceptRule) error {
	if err := r.Check(); err != nil {
		return wrap("create auto-accept rule", err)
	}
	if r.ID == "" {
		r.ID = worldforge.NewID("rule")
	}
	if r.Kinds == nil {
		r.Kinds = []string{}
	}
	r.CreatedAt = stamp(r.CreatedAt)
	kinds, err := marshalList(r.Kinds)
	if err != nil {
		return wrap("create auto-accept rule", err)
	}
	_, err = db.writer.q().exec(ctx,
		"INSERT INTO auto_accept_rules ("+ruleCols+") VALUES (?, ?, ?, ?, ?, ?, ?)",
		r.ID, r.OwnerID, nullStr(r.WorldID), nullStr(r.ActorID), nullStr(r.KeyID), kinds, ms(r.CreatedAt))
	return wrap("create auto-accept rule", err)
}

// ListAutoAcceptRules implements worldforge.ProposalStore: oldest first.
func (db *DB) ListAutoAcceptRules(ctx context.Context, ownerID string) ([]worldforge.AutoAcceptRule, error) {
	out, err := listRules(ctx, db.reader.q(), ownerID)
	return out, wrap("list auto-accept rules", err)
}

func listRules(ctx context.Context, q querier, ownerID string) ([]worldforge.AutoAcceptRule, error) {
	return collect(scanRule)(q.query(ctx,
		"SELECT "+ruleCols+" FROM auto_accept_rules WHERE owner_id = ? ORDER BY created_at, id", ownerID))
}

// DeleteAutoAcceptRule implements worldforge.ProposalStore: a rule that is
// not the owner's is not_found.
func (db *DB) DeleteAutoAcceptRule(ctx context.Context, ownerID, id string) error {
	return wrap("delete auto-accept rule", affectedOne(db.writer.q().exec(ctx,
		"DELETE FROM auto_accept_rules WHERE id = ? AND owner_id = ?", id, ownerID)))
}

// MatchAutoAccept implements worldforge.ProposalStore. An owner has few
// rules, so they are read and matched here rather than in SQL.
func (db *DB) MatchAutoAccept(ctx context.Context, ownerID string, p *worldforge.Proposal) (bool, error) {
	rules, err := listRules(ctx, db.reader.q(), ownerID)
	if err != nil {
		return false, wrap("match auto-accept", err)
	}
	return slices.ContainsFunc(rules, func(r worldforge.AutoAcceptRule) bool { return ruleCovers(&r, p) }), nil
}

// ruleCovers reports whether r covers p: each of its set fields equals p's,
// and its kinds, if any, include p's.
func ruleCovers(r *worldforge.AutoAcceptRule, p *worldforge.Proposal) bool {
	return (r.WorldID == "" || r.WorldID == p.WorldID) &&
		(r.ActorID == "" || r.ActorID == p.ActorID) &&
		(r.KeyID == "" || r.KeyID == p.KeyID) &&
		(len(r.Kinds) == 0 || slices.Contains(r.Kinds, p.Kind))
}
