package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/worldforge-go/worldforge"
)

// Proposals: filing, listing, committing and rejecting.
//
// A commit runs in two steps. First the proposal is read and check runs on
// it, outside any transaction: check applies access rules that read the
// store (world roles, row owners), and on PostgreSQL the reader and the
// writer are one pool, so a check run inside the write transaction would
// need a second connection while holding one — with as many concurrent
// commits as the pool has connections, every one of them would wait for a
// connection that none releases. (On SQLite it would hold the only writer
// connection while reading.) Then one write transaction claims the
// proposal (pending → committed, once), applies it with a version
// predicate and inserts the audit row. Proposals never change after filing
// except for their status and decision, and the claim checks the status,
// so the proposal check saw is the one the transaction applies.

// Proposal list limits, and the deepest atlas level.
const (
	proposalListDefault = 50
	proposalListMax     = 200
	atlasDeepestLevel   = 5
)

const proposalCols = "id, world_id, kind, target_id, base_version, payload, diff_summary, changeset_id, status, actor_id, key_id, created_at, decided_at, decided_by, reason"

// notPending is the error of a claim on a proposal already decided.
func notPending() error {
	return &worldforge.Error{Code: worldforge.EConflict, Detail: worldforge.DetailNotPending}
}

func scanProposal(s scanner) (worldforge.Proposal, error) {
	var (
		p                                        worldforge.Proposal
		world, target, changeset, key, decidedBy sql.NullString
		payload                                  string
		created                                  int64
		decided                                  sql.NullInt64
	)
	err := s.Scan(&p.ID, &world, &p.Kind, &target, &p.BaseVersion, &payload, &p.DiffSummary, &changeset,
		&p.Status, &p.ActorID, &key, &created, &decided, &decidedBy, &p.Reason)
	p.WorldID, p.TargetID, p.ChangesetID, p.KeyID, p.DecidedBy = world.String, target.String, changeset.String, key.String, decidedBy.String
	p.Payload = json.RawMessage(payload)
	p.CreatedAt = fromMS(created)
	p.DecidedAt = fromNullMS(decided)
	return p, err
}

// CreateProposal implements worldforge.ProposalStore. An unknown kind, a
// payload that is not JSON or a malformed changeset id is bad_request; a
// missing world is not_found. With a changeset id, the changeset is created
// (open) on first use, in the same transaction. Changeset ids are scoped:
// the id names a changeset of p's world, or, for a proposal outside any
// world, of its proposer (the row's owner); the same id in another world,
// or another user's, names another changeset and changes no answer here.
// A proposal by a user with the pending-proposals quota of proposals
// pending is quota_exceeded.
func (db *DB) CreateProposal(ctx context.Context, p *worldforge.Proposal, audit *worldforge.AuditEntry) error {
	switch {
	case !slices.Contains(worldforge.ProposalKinds, p.Kind):
		return wrap("create proposal", worldforge.BadRequest("unknown proposal kind %q", p.Kind))
	case len(p.Payload) == 0 || !json.Valid(p.Payload):
		return wrap("create proposal", worldforge.BadRequest("proposal payload is not JSON"))
	case p.ChangesetID != "" && !worldforge.ValidChangesetID(p.ChangesetID):
		return wrap("create proposal", worldforge.BadRequest("invalid changeset id %q", p.ChangesetID))
	}
	if p.ID == "" {
		p.ID = worldforge.NewID("prop")
	}
	p.Status = worldforge.ProposalPending
	p.CreatedAt = stamp(p.CreatedAt)
	p.DecidedAt, p.DecidedBy, p.Reason = nil, "", ""
	insert := func(ctx context.Context, q querier) error {
		_, err := q.exec(ctx,
			"INSERT INTO proposals ("+proposalCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			p.ID, nullStr(p.WorldID), p.Kind, nullStr(p.TargetID), p.BaseVersion, string(p.Payload), p.DiffSummary,
			nullStr(p.ChangesetID), p.Status, p.ActorID, nullStr(p.KeyID), ms(p.CreatedAt), nil, nil, "")
		return err
	}
	return wrap("create proposal", db.writeTx(ctx, func(ctx context.Context, q querier) error {
		if err := db.checkNewProposal(ctx, q, p.ActorID); err != nil {
			return err
		}
		if p.ChangesetID != "" {
			// A changeset in the proposal's scope (its world, or its
			// proposer outside worlds) is created on first use; the
			// same id in another scope is another changeset.
			if _, err := q.exec(ctx,
				`INSERT INTO changesets (world_id, id, created_by, status, created_at) VALUES (?, ?, ?, 'open', ?)
				ON CONFLICT DO NOTHING`,
				nullStr(p.WorldID), p.ChangesetID, p.ActorID, ms(p.CreatedAt)); err != nil {
				return err
			}
		}
		if err := insert(ctx, q); err != nil {
			return err
		}
		if audit == nil {
			return nil
		}
		if audit.TargetID == "" {
			audit.TargetType, audit.TargetID = "proposal", p.ID
		}
		if audit.WorldID == "" {
			audit.WorldID = p.WorldID
		}
		return insertAudit(ctx, q, audit)
	}))
}

// readProposal reads a proposal through q, or proposal_not_found.
func readProposal(ctx context.Context, q querier, id string) (*worldforge.Proposal, error) {
	p, err := scanProposal(q.queryRow(ctx, "SELECT "+proposalCols+" FROM proposals WHERE id = ?", id))
	if errNoRows(err) {
		return nil, worldforge.ErrProposalNotFound
	}
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// FindProposal implements worldforge.ProposalStore.
func (db *DB) FindProposal(ctx context.Context, id string) (*worldforge.Proposal, error) {
	p, err := readProposal(ctx, db.reader.q(), id)
	if err != nil {
		return nil, wrap("find proposal", err)
	}
	return p, nil
}

// checkedProposal reads the proposal, runs check on it and refuses one that
// is no longer pending; see the note at the top of the file for why this
// happens before the write transaction.
func (db *DB) checkedProposal(ctx context.Context, id string, check func(*worldforge.Proposal) error) (*worldforge.Proposal, error) {
	p, err := readProposal(ctx, db.reader.q(), id)
	if err != nil {
		return nil, err
	}
	if check != nil {
		if err := check(p); err != nil {
			return nil, err
		}
	}
	if p.Status != worldforge.ProposalPending {
		return nil, notPending()
	}
	return p, nil
}

// CommitProposal implements worldforge.ProposalStore.
func (db *DB) CommitProposal(ctx context.Context, id, deciderID string, check func(*worldforge.Proposal) error, audit *worldforge.AuditEntry) (*worldforge.CommitResult, error) {
	p, err := db.checkedProposal(ctx, id, check)
	if err != nil {
		return nil, wrap("commit proposal", err)
	}
	var res *worldforge.CommitResult
	err = db.writer.tx(ctx, func(q querier) error {
		c := *p // a retried function starts from the proposal as read
		if err := claimProposal(ctx, q, &c, worldforge.ProposalCommitted, deciderID, ""); err != nil {
			return err
		}
		g, err := db.guardLoreOf(ctx, q, c)
		if err != nil {
			return err
		}
		if res, err = applyAndAudit(ctx, q, &c, audit, nil); err != nil {
			return err
		}
		return g.check(ctx, q)
	})
	if err != nil {
		return nil, wrap("commit proposal", err)
	}
	return res, nil
}

// errPreview ends a PreviewCommit transaction that went through, so that
// it rolls back.
var errPreview = errors.New("preview: roll back")

// PreviewCommit implements worldforge.ProposalStore: CommitProposal's
// transaction, rolled back.
func (db *DB) PreviewCommit(ctx context.Context, id string) error {
	p, err := db.checkedProposal(ctx, id, nil)
	if err != nil {
		return wrap("preview commit", err)
	}
	err = db.writer.tx(ctx, func(q querier) error {
		c := *p
		if err := claimProposal(ctx, q, &c, worldforge.ProposalCommitted, "", ""); err != nil {
			return err
		}
		g, err := db.guardLoreOf(ctx, q, c)
		if err != nil {
			return err
		}
		if _, _, err := applyProposal(ctx, q, &c, nil); err != nil {
			return err
		}
		if err := g.check(ctx, q); err != nil {
			return err
		}
		return errPreview
	})
	if errors.Is(err, errPreview) {
		return nil
	}
	return wrap("preview commit", err)
}

// CommitChangeset implements worldforge.ProposalStore. Every pending
// proposal of the changeset is claimed first (oldest first), then each is
// applied and audited in the same order, all in one transaction.
//
// Proposals of one changeset are filed against the versions their targets
// had before any of them is committed, so two of them on the same target
// (two lore proposals on one world, two edits of one page) carry the same
// base version. Within the changeset the version predicate therefore
// counts the changes its earlier proposals made to the target: a
// proposal's expected version is its base version plus the number of
// earlier proposals of the changeset applied to the same target. A change
// from outside the changeset still fails the predicate.
func (db *DB) CommitChangeset(ctx context.Context, worldID, changesetID, deciderID string, check func(*worldforge.Proposal) error, audit func(*worldforge.Proposal) *worldforge.AuditEntry) ([]worldforge.CommitResult, error) {
	ps, err := collect(scanProposal)(db.reader.q().query(ctx,
		"SELECT "+proposalCols+` FROM proposals
		WHERE changeset_id = ? AND world_id = ? AND status = 'pending'
		ORDER BY created_at, id`, changesetID, worldID))
	if err != nil {
		return nil, wrap("commit changeset", err)
	}
	if len(ps) == 0 {
		return nil, wrap("commit changeset", worldforge.ErrProposalNotFound)
	}
	audits := make([]*worldforge.AuditEntry, len(ps))
	for i := range ps {
		if check != nil {
			if err := check(&ps[i]); err != nil {
				return nil, wrap("commit changeset", err)
			}
		}
		if audit != nil {
			audits[i] = audit(&ps[i])
		}
	}
	var out []worldforge.CommitResult
	err = db.writer.tx(ctx, func(q querier) error {
		cs := slices.Clone(ps)
		out = make([]worldforge.CommitResult, 0, len(cs))
		for i := range cs {
			if err := claimProposal(ctx, q, &cs[i], worldforge.ProposalCommitted, deciderID, ""); err != nil {
				return fmt.Errorf("proposal %s: %w", cs[i].ID, err)
			}
		}
		g, err := db.guardLoreOf(ctx, q, cs...)
		if err != nil {
			return err
		}
		bumps := map[string]int64{}
		for i := range cs {
			r, err := applyAndAudit(ctx, q, &cs[i], audits[i], bumps)
			if err != nil {
				return fmt.Errorf("proposal %s: %w", cs[i].ID, err)
			}
			out = append(out, *r)
		}
		return g.check(ctx, q)
	})
	if err != nil {
		return nil, wrap("commit changeset", err)
	}
	return out, nil
}

// RejectProposal implements worldforge.ProposalStore: the reason is
// stored with the decision. The audit row's target defaults to the
// proposal.
func (db *DB) RejectProposal(ctx context.Context, id, deciderID, reason string, check func(*worldforge.Proposal) error, audit *worldforge.AuditEntry) (*worldforge.Proposal, error) {
	p, err := db.checkedProposal(ctx, id, check)
	if err != nil {
		return nil, wrap("reject proposal", err)
	}
	var out worldforge.Proposal
	err = db.writer.tx(ctx, func(q querier) error {
		out = *p
		if err := claimProposal(ctx, q, &out, worldforge.ProposalRejected, deciderID, reason); err != nil {
			return err
		}
		a := auditOrDefault(audit, &out, "rejected")
		if a.TargetID == "" {
			a.TargetID = out.ID
		}
		if a.WorldID == "" {
			a.WorldID = out.WorldID
		}
		return insertAudit(ctx, q, a)
	})
	if err != nil {
		return nil, wrap("reject proposal", err)
	}
	return &out, nil
}

// claimProposal moves a pending proposal to status, once: a proposal that
// is not pending (another transaction decided it first) is conflict:
// not_pending, a vanished one proposal_not_found. On success p carries its
// new status and decision (with its reason, "" for a commit).
func claimProposal(ctx context.Context, q querier, p *worldforge.Proposal, status, deciderID, reason string) error {
	t := now()
	res, err := q.exec(ctx,
		"UPDATE proposals SET status = ?, decided_at = ?, decided_by = ?, reason = ? WHERE id = ? AND status = 'pending'",
		status, ms(t), nullStr(deciderID), reason, p.ID)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		var s string
		err := q.queryRow(ctx, "SELECT status FROM proposals WHERE id = ?", p.ID).Scan(&s)
		if errNoRows(err) {
			return worldforge.ErrProposalNotFound
		}
		if err != nil {
			return err
		}
		return notPending()
	}
	p.Status, p.DecidedAt, p.DecidedBy, p.Reason = status, &t, deciderID, reason
	return nil
}

// auditOrDefault returns audit, or when nil a minimal row naming the
// decider.
func auditOrDefault(audit *worldforge.AuditEntry, p *worldforge.Proposal, outcome string) *worldforge.AuditEntry {
	if audit != nil {
		return audit
	}
	return &worldforge.AuditEntry{ActorID: p.DecidedBy, TargetType: p.Kind, Outcome: outcome}
}

// applyAndAudit applies a claimed proposal and inserts its audit row (its
// target and world default to the result's).
func applyAndAudit(ctx context.Context, q querier, p *worldforge.Proposal, audit *worldforge.AuditEntry, bumps map[string]int64) (*worldforge.CommitResult, error) {
	target, version, err := applyProposal(ctx, q, p, bumps)
	if err != nil {
		return nil, err
	}
	a := auditOrDefault(audit, p, "committed")
	if a.TargetID == "" {
		a.TargetID = target
	}
	if a.WorldID == "" {
		a.WorldID = p.WorldID
	}
	if err := insertAudit(ctx, q, a); err != nil {
		return nil, err
	}
	return &worldforge.CommitResult{Proposal: *p, TargetID: target, Version: version, AuditID: a.ID}, nil
}

// applyProposal makes the change p describes and returns the row created
// or changed and its new version. bumps (nil outside a changeset) counts
// the changes already made to each target in this transaction.
func applyProposal(ctx context.Context, q querier, p *worldforge.Proposal, bumps map[string]int64) (string, int64, error) {
	switch p.Kind {
	case worldforge.ProposalQuest:
		return applyDoc(ctx, q, questTable, p, bumps)
	case worldforge.ProposalEncounter:
		return applyDoc(ctx, q, encounterTable, p, bumps)
	case worldforge.ProposalWikiPage:
		return applyWikiPage(ctx, q, p)
	case worldforge.ProposalWikiEdit:
		return applyWikiEdit(ctx, q, p, bumps)
	case worldforge.ProposalAtlas:
		return applyAtlasPlace(ctx, q, p)
	case worldforge.ProposalWorld:
		return applyLore(ctx, q, p, bumps)
	}
	return "", 0, fmt.Errorf("apply proposal %s: unknown kind %q", p.ID, p.Kind)
}

// payloadOf decodes p's payload; a payload that does not fit its kind is
// bad_request.
func payloadOf[T any](p *worldforge.Proposal) (T, error) {
	var v T
	if err := json.Unmarshal(p.Payload, &v); err != nil {
		return v, worldforge.BadRequest("%s payload: %v", p.Kind, err)
	}
	return v, nil
}

// expectVersion is the version the target of p must have: its base version
// plus the changes earlier proposals of the same changeset made to it.
func expectVersion(p *worldforge.Proposal, key string, bumps map[string]int64) int64 {
	return p.BaseVersion + bumps[key]
}

func bump(bumps map[string]int64, key string) {
	if bumps != nil {
		bumps[key]++
	}
}

// versionMiss explains an update whose version predicate matched no row:
// not_found when exists (a one-row query on id) finds nothing,
// version_conflict otherwise.
func versionMiss(ctx context.Context, q querier, exists, id string) error {
	var one int
	err := q.queryRow(ctx, exists, id).Scan(&one)
	if errNoRows(err) {
		return worldforge.ErrNotFound
	}
	if err != nil {
		return err
	}
	return worldforge.ErrVersionConflict
}

// nullJSON is jsonArg with a JSON null stored as NULL.
func nullJSON(raw json.RawMessage) any {
	if string(raw) == "null" {
		return nil
	}
	return jsonArg(raw)
}

// applyDoc creates a quest or encounter owned by the proposer (no target),
// or replaces the target's name and document.
func applyDoc(ctx context.Context, q querier, t docTable, p *worldforge.Proposal, bumps map[string]int64) (string, int64, error) {
	pl, err := payloadOf[worldforge.QuestPayload](p)
	if err != nil {
		return "", 0, err
	}
	if p.TargetID == "" {
		d := &worldforge.Quest{OwnerID: p.ActorID, WorldID: p.WorldID, Name: pl.Name, JSON: pl.JSON}
		if string(d.JSON) == "null" {
			d.JSON = nil
		}
		if err := t.insert(ctx, q, d); err != nil {
			return "", 0, err
		}
		return d.ID, d.Version, nil
	}
	key := t.table + ":" + p.TargetID
	var v int64
	err = q.queryRow(ctx,
		"UPDATE "+t.table+" SET name = ?, doc = ?, version = version + 1, updated_at = ? WHERE id = ? AND version = ? RETURNING version",
		pl.Name, nullJSON(pl.JSON), ms(now()), p.TargetID, expectVersion(p, key, bumps)).Scan(&v)
	if errNoRows(err) {
		return "", 0, versionMiss(ctx, q, "SELECT 1 FROM "+t.table+" WHERE id = ?", p.TargetID)
	}
	if err != nil {
		return "", 0, err
	}
	bump(bumps, key)
	return p.TargetID, v, nil
}

// wikiAudiences are the audiences a wiki page may have.
var wikiAudiences = []string{worldforge.AudienceGM, worldforge.AudienceParty}

// applyWikiPage creates a page in p's world, by the proposer, with the
// proposal's diff summary on its first revision. An empty kind is lore, an
// empty audience gm.
func applyWikiPage(ctx context.Context, q querier, p *worldforge.Proposal) (string, int64, error) {
	pl, err := payloadOf[worldforge.WikiPagePayload](p)
	if err != nil {
		return "", 0, err
	}
	if p.WorldID == "" {
		return "", 0, worldforge.BadRequest("a wiki_page proposal needs a world")
	}
	page := &worldforge.WikiPage{WorldID: p.WorldID, Title: pl.Title, Body: pl.Body, Kind: pl.Kind, Audience: pl.Audience}
	if page.Kind == "" {
		page.Kind = worldforge.WikiKindLore
	}
	if page.Audience == "" {
		page.Audience = worldforge.AudienceGM
	}
	if !slices.Contains(worldforge.WikiKinds, page.Kind) {
		return "", 0, worldforge.BadRequest("unknown wiki page kind %q", page.Kind)
	}
	if !slices.Contains(wikiAudiences, page.Audience) {
		return "", 0, worldforge.BadRequest("unknown wiki audience %q", page.Audience)
	}
	if err := insertWikiPage(ctx, q, page, p.ActorID, p.DiffSummary); err != nil {
		return "", 0, err
	}
	return page.ID, page.Version, nil
}

// strArg stores an optional string (nil → NULL).
func strArg(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// applyWikiEdit changes the given fields of a live page and stores the new
// revision. A deleted page, or one of another world than p's, is
// not_found.
func applyWikiEdit(ctx context.Context, q querier, p *worldforge.Proposal, bumps map[string]int64) (string, int64, error) {
	pl, err := payloadOf[worldforge.WikiEditPayload](p)
	if err != nil {
		return "", 0, err
	}
	if pl.Audience != nil && !slices.Contains(wikiAudiences, *pl.Audience) {
		return "", 0, worldforge.BadRequest("unknown wiki audience %q", *pl.Audience)
	}
	key := "wiki_pages:" + p.TargetID
	var (
		r     = worldforge.WikiRevision{PageID: p.TargetID, AuthorID: p.ActorID, DiffSummary: p.DiffSummary, CreatedAt: now()}
		world string
	)
	err = q.queryRow(ctx,
		`UPDATE wiki_pages SET title = COALESCE(?, title), body = COALESCE(?, body), audience = COALESCE(?, audience),
			version = version + 1, updated_at = ?
		WHERE id = ? AND version = ? AND deleted_at IS NULL
		RETURNING world_id, title, body, kind, audience, version`,
		strArg(pl.Title), strArg(pl.Body), strArg(pl.Audience), ms(r.CreatedAt), p.TargetID, expectVersion(p, key, bumps)).
		Scan(&world, &r.Title, &r.Body, &r.Kind, &r.Audience, &r.Version)
	if errNoRows(err) {
		return "", 0, versionMiss(ctx, q, "SELECT 1 FROM wiki_pages WHERE id = ? AND deleted_at IS NULL", p.TargetID)
	}
	if err != nil {
		return "", 0, err
	}
	if p.WorldID != "" && world != p.WorldID {
		return "", 0, worldforge.ErrNotFound
	}
	if _, err := q.exec(ctx,
		`INSERT INTO wiki_revisions (page_id, version, title, body, kind, audience, author_id, diff_summary, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.PageID, r.Version, r.Title, r.Body, r.Kind, r.Audience, nullStr(r.AuthorID), r.DiffSummary, ms(r.CreatedAt)); err != nil {
		return "", 0, err
	}
	bump(bumps, key)
	return p.TargetID, r.Version, nil
}

// applyAtlasPlace creates a node in p's world, one level below its parent
// (a node of the same world, else not_found), or at level 1 without one.
func applyAtlasPlace(ctx context.Context, q querier, p *worldforge.Proposal) (string, int64, error) {
	pl, err := payloadOf[worldforge.AtlasPlacePayload](p)
	if err != nil {
		return "", 0, err
	}
	if p.WorldID == "" {
		return "", 0, worldforge.BadRequest("an atlas_place proposal needs a world")
	}
	level := 1
	if pl.ParentID != "" {
		var parent int
		err := q.queryRow(ctx, "SELECT level FROM atlas_nodes WHERE id = ? AND world_id = ?", pl.ParentID, p.WorldID).Scan(&parent)
		if errNoRows(err) {
			return "", 0, worldforge.ErrNotFound
		}
		if err != nil {
			return "", 0, err
		}
		if parent >= atlasDeepestLevel {
			return "", 0, worldforge.BadRequest("parent is at level %d, the deepest", parent)
		}
		level = parent + 1
	}
	n := &worldforge.AtlasNode{WorldID: p.WorldID, ParentID: pl.ParentID, Name: pl.Name, Level: level, TerrainType: pl.TerrainType}
	if err := insertAtlasNode(ctx, q, n); err != nil {
		return "", 0, err
	}
	return n.ID, n.Version, nil
}

// applyLore raises the world's version under the predicate, then runs the
// lore operations in order.
func applyLore(ctx context.Context, q querier, p *worldforge.Proposal, bumps map[string]int64) (string, int64, error) {
	pl, err := payloadOf[worldforge.LorePayload](p)
	if err != nil {
		return "", 0, err
	}
	worldID := p.WorldID
	if worldID == "" {
		worldID = p.TargetID
	}
	if worldID == "" {
		return "", 0, worldforge.BadRequest("a world proposal needs a world")
	}
	key := "worlds:" + worldID
	t := now()
	var v int64
	err = q.queryRow(ctx,
		"UPDATE worlds SET version = version + 1, updated_at = ? WHERE id = ? AND version = ? RETURNING version",
		ms(t), worldID, expectVersion(p, key, bumps)).Scan(&v)
	if errNoRows(err) {
		return "", 0, versionMiss(ctx, q, "SELECT 1 FROM worlds WHERE id = ?", worldID)
	}
	if err != nil {
		return "", 0, err
	}
	for i, op := range pl.Operations {
		if !slices.Contains(worldforge.LoreCollections, op.Collection) {
			return "", 0, worldforge.BadRequest("operation %d: unknown lore collection %q", i, op.Collection)
		}
		switch op.Op {
		case worldforge.LoreOpUpsert:
			e := &worldforge.LoreEntity{WorldID: worldID, Collection: op.Collection, ID: op.ID, Name: op.Name,
				JSON: op.Entity, UpdatedAt: t}
			err = upsertLore(ctx, q, e)
		case worldforge.LoreOpRemove:
			_, err = q.exec(ctx, "DELETE FROM lore_entities WHERE world_id = ? AND collection = ? AND id = ?",
				worldID, op.Collection, op.ID)
		case worldforge.LoreOpAdd:
			if op.ID == "" {
				return "", 0, worldforge.BadRequest("operation %d: add needs an id", i)
			}
			e := &worldforge.LoreEntity{WorldID: worldID, Collection: op.Collection, ID: op.ID, Name: op.Name,
				JSON: op.Entity, UpdatedAt: t}
			_, err = writeLore(ctx, q, e, false) // an existing entity is kept
		default:
			return "", 0, worldforge.BadRequest("operation %d: unknown op %q", i, op.Op)
		}
		if err != nil {
			return "", 0, err
		}
	}
	bump(bumps, key)
	return worldID, v, nil
}

// writeTx runs fn as a write transaction: on SQLite in the next group
// commit (writegroup.go), in a savepoint of its own; on PostgreSQL in a
// transaction of its own. fn must use the ctx it is given.
func (db *DB) writeTx(ctx context.Context, fn func(ctx context.Context, q querier) error) error {
	if db.group != nil {
		return db.group.do(ctx, fn)
	}
	return db.writer.tx(ctx, func(q querier) error { return fn(ctx, q) })
}
