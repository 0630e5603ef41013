package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	wf "github.com/worldforge-go/worldforge"
)

// The console's review operations: the review queue across the worlds a
// user reviews, and one proposal with what its review needs — the
// current state of its target and the conflict a commit would meet now,
// worked out before anyone clicks. Neither writes an audit row (a page
// view is not an action); commits and rejections go through
// CommitProposal, RejectProposal and CommitChangeset like everywhere
// else.

// Queue page sizes.
const (
	DefaultQueueLimit = 50
	MaxQueueLimit     = 200
)

// proposalStatuses are the statuses a queue may be filtered by.
var proposalStatuses = []string{wf.ProposalPending, wf.ProposalCommitted, wf.ProposalRejected}

// ProposalStatuses lists the proposal statuses, for filters.
func ProposalStatuses() []string { return slices.Clone(proposalStatuses) }

// check refuses a query with a value no proposal can have.
func (q *QueueQuery) check() error {
	if q.Status != "" && !slices.Contains(proposalStatuses, q.Status) {
		return wf.BadRequest("status must be one of %s", strings.Join(proposalStatuses, ", "))
	}
	if q.Kind != "" && !slices.Contains(wf.ProposalKinds, q.Kind) {
		return wf.BadRequest("kind must be one of %s", strings.Join(wf.ProposalKinds, ", "))
	}
	for _, f := range []struct{ name, value string }{{"world", q.WorldID}, {"actor", q.ActorID}, {"key", q.KeyID}} {
		if err := wf.CheckLength(f.name, f.value, wf.MaxIDLength); err != nil {
			return err
		}
	}
	if q.Before != nil && (q.Before.CreatedAt.IsZero() || !wf.ValidID("prop", q.Before.ID)) {
		return wf.BadRequest("the page cursor is not a proposal's position")
	}
	if q.Limit < 0 || q.Limit > MaxQueueLimit {
		return wf.BadRequest("limit must be 1–%d", MaxQueueLimit)
	}
	return nil
}

// ReviewQueue lists a page of the proposals of the worlds the caller owns
// or runs as GM (of the one named, which must be such a world:
// not_found otherwise), newest first: pending ones unless the query
// names another status. It is not audited.
func (s *Service) ReviewQueue(ctx context.Context, r Request, q QueueQuery) (*QueuePage, error) {
	return run(ctx, s, r, OpReviewQueue, func(c *call) (*QueuePage, error) {
		if err := q.check(); err != nil {
			return nil, err
		}
		worlds, err := s.gmWorlds(ctx, c, q.WorldID)
		if err != nil {
			return nil, err
		}
		page := &QueuePage{Proposals: []wf.Proposal{}}
		if len(worlds) == 0 {
			// An empty WorldIDs would not filter at all.
			return page, nil
		}
		limit := q.Limit
		if limit == 0 {
			limit = DefaultQueueLimit
		}
		f := wf.ProposalFilter{WorldIDs: worlds, Status: q.Status, Kind: q.Kind, ActorID: q.ActorID, KeyID: q.KeyID}
		if f.Status == "" {
			f.Status = wf.ProposalPending
		}
		if page.Total, err = s.store.CountProposals(ctx, f); err != nil {
			return nil, storeErr(err)
		}
		f.Before, f.Limit = q.Before, min(limit+1, MaxQueueLimit)
		list, err := s.store.ListProposals(ctx, f)
		if err != nil {
			return nil, storeErr(err)
		}
		more := len(list) > limit
		if !more && len(list) == limit && limit == MaxQueueLimit {
			// The store answers at most MaxQueueLimit rows: ask for one
			// beyond the page.
			f.Before, f.Limit = cursorOf(&list[limit-1]), 1
			next, err := s.store.ListProposals(ctx, f)
			if err != nil {
				return nil, storeErr(err)
			}
			more = len(next) > 0
		}
		if more {
			list = list[:limit]
			page.Next = cursorOf(&list[limit-1])
		}
		page.Proposals = list
		return page, nil
	})
}

// older reports whether p comes after the cursor in the newest-first
// order.
func older(p *wf.Proposal, c *wf.ProposalCursor) bool {
	return p.CreatedAt.Before(c.CreatedAt) || p.CreatedAt.Equal(c.CreatedAt) && p.ID < c.ID
}

func cursorOf(p *wf.Proposal) *wf.ProposalCursor {
	return &wf.ProposalCursor{CreatedAt: p.CreatedAt, ID: p.ID}
}

// ProposalReview is one proposal with what its reviewer needs to decide.
type ProposalReview struct {
	Proposal wf.Proposal
	// Target is the current state of what the proposal changes.
	Target TargetState
	// Conflict is the error committing the proposal alone would meet
	// now, nil when none is foreseen: conflict: not_pending (decided
	// already), version_conflict (its target changed since it was
	// filed), not_found (its target, or an atlas place's parent, is
	// gone), bad_request (a payload that cannot be applied) or
	// quota_exceeded. The store finds it by running the commit's own
	// transaction and rolling it back; a commit checks again.
	Conflict *wf.Error
	// Changeset lists the pending proposals of the proposal's changeset,
	// oldest first (the order a changeset commit applies them), each with
	// the conflict it would meet in that commit. Empty outside a world's
	// changeset.
	Changeset []ChangesetEntry
}

// ChangesetEntry is a pending proposal of a changeset and the conflict a
// commit of the whole changeset would meet on it (nil: none).
type ChangesetEntry struct {
	Proposal wf.Proposal
	Conflict *wf.Error
}

// TargetState is the current state of what a proposal changes; nil for
// a row that does not exist (a new row, or one gone since filing).
type TargetState struct {
	// Doc is the quest or encounter a change targets.
	Doc *wf.Quest
	// Page is the wiki page a wiki_edit targets.
	Page *wf.WikiPage
	// Parent is the parent place an atlas_place names.
	Parent *wf.AtlasNode
	// World is the world a lore (world) proposal is pinned to.
	World *wf.World
	// Lore holds the stored entities the operations of a lore proposal
	// touch, in operation order (absent ones are not listed).
	Lore []wf.LoreEntity
}

// ReviewProposal reads a proposal for its reviewer (the rule of
// GetProposal: everyone else is told proposal_not_found), with the
// current state of its target, the conflict a commit would meet now and,
// for a changeset of a world, its pending proposals with theirs. It is
// not audited.
func (s *Service) ReviewProposal(ctx context.Context, r Request, id string) (*ProposalReview, error) {
	return run(ctx, s, r, OpReviewProposal, func(c *call) (*ProposalReview, error) {
		if !wf.ValidID("prop", id) {
			return nil, wf.BadRequest("%q is not a proposal id", id)
		}
		p, err := s.store.FindProposal(ctx, id)
		if err == nil {
			err = s.canReview(ctx, c.owner, p)
		}
		if err != nil {
			return nil, storeErr(err)
		}
		rv := &ProposalReview{Proposal: *p}
		t := newTargets(s.store)
		if rv.Target, err = t.state(ctx, p); err != nil {
			return nil, storeErr(err)
		}
		if rv.Conflict, err = s.foresee(ctx, p); err != nil {
			return nil, storeErr(err)
		}
		if p.WorldID != "" && p.ChangesetID != "" {
			if rv.Changeset, err = s.changesetEntries(ctx, p.WorldID, p.ChangesetID); err != nil {
				return nil, storeErr(err)
			}
		}
		return rv, nil
	})
}

// changesetEntries lists the pending proposals of a world's changeset,
// oldest first, each with the conflict a commit of the whole changeset
// would meet on it. In that commit a proposal's target is expected at its
// base version plus the changes the changeset's earlier proposals made to
// it, and it is then at its stored version plus those same changes: so
// the test is the one for a proposal alone, stored version against base
// version.
func (s *Service) changesetEntries(ctx context.Context, worldID, changesetID string) ([]ChangesetEntry, error) {
	var all []wf.Proposal
	f := wf.ProposalFilter{WorldID: worldID, ChangesetID: changesetID, Status: wf.ProposalPending, Limit: MaxQueueLimit}
	for {
		list, err := s.store.ListProposals(ctx, f)
		if err != nil {
			return nil, err
		}
		if f.Before != nil && len(list) > 0 && !older(&list[0], f.Before) {
			return nil, fmt.Errorf("list proposals: a page after %s starts at %s", f.Before.ID, list[0].ID)
		}
		all = append(all, list...)
		if len(list) < MaxQueueLimit {
			break
		}
		f.Before = cursorOf(&list[len(list)-1])
	}
	slices.Reverse(all)
	out := make([]ChangesetEntry, len(all))
	for i := range all {
		conflict, err := s.foresee(ctx, &all[i])
		if err != nil {
			return nil, err
		}
		out[i] = ChangesetEntry{Proposal: all[i], Conflict: conflict}
	}
	return out, nil
}

// targets reads the rows proposals change, each once per review.
type targets struct {
	store  wf.Store
	docs   map[string]*wf.Quest
	pages  map[string]*wf.WikiPage
	nodes  map[string]*wf.AtlasNode
	worlds map[string]*wf.World
}

func newTargets(store wf.Store) *targets {
	return &targets{store: store, docs: map[string]*wf.Quest{}, pages: map[string]*wf.WikiPage{},
		nodes: map[string]*wf.AtlasNode{}, worlds: map[string]*wf.World{}}
}

// absent turns not_found into a nil row.
func absent[T any](row *T, err error) (*T, error) {
	if errors.Is(err, wf.ErrNotFound) {
		return nil, nil
	}
	return row, err
}

// doc is the quest or encounter a proposal targets, nil when gone or
// not in the proposal's world.
func (t *targets) doc(ctx context.Context, p *wf.Proposal) (*wf.Quest, error) {
	key := p.Kind + ":" + p.TargetID
	if row, ok := t.docs[key]; ok {
		return row, nil
	}
	find := t.store.FindQuestByID
	if p.Kind == wf.ProposalEncounter {
		find = t.store.FindEncounterByID
	}
	row, err := absent(find(ctx, p.TargetID))
	if err != nil {
		return nil, err
	}
	if row != nil && p.WorldID != "" && row.WorldID != p.WorldID {
		row = nil
	}
	t.docs[key] = row
	return row, nil
}

// page is the live wiki page a wiki_edit targets, nil when gone
// (deleted, or not in the proposal's world).
func (t *targets) page(ctx context.Context, p *wf.Proposal) (*wf.WikiPage, error) {
	if row, ok := t.pages[p.TargetID]; ok {
		return row, nil
	}
	row, err := absent(t.store.FindWikiPageByID(ctx, p.TargetID))
	if err != nil {
		return nil, err
	}
	if row != nil && (row.DeletedAt != nil || row.WorldID != p.WorldID) {
		row = nil
	}
	t.pages[p.TargetID] = row
	return row, nil
}

// parent is the parent place an atlas_place names, nil when none, gone,
// or of another world.
func (t *targets) parent(ctx context.Context, p *wf.Proposal, parentID string) (*wf.AtlasNode, error) {
	if parentID == "" {
		return nil, nil
	}
	if row, ok := t.nodes[parentID]; ok {
		return row, nil
	}
	row, err := absent(t.store.FindAtlasNodeByID(ctx, parentID))
	if err != nil {
		return nil, err
	}
	if row != nil && row.WorldID != p.WorldID {
		row = nil
	}
	t.nodes[parentID] = row
	return row, nil
}

// world is the header of the world a lore proposal is pinned to.
func (t *targets) world(ctx context.Context, p *wf.Proposal) (*wf.World, error) {
	id := cmp.Or(p.WorldID, p.TargetID)
	if row, ok := t.worlds[id]; ok {
		return row, nil
	}
	row, err := absent(t.store.FindWorldHeader(ctx, id))
	if err != nil {
		return nil, err
	}
	t.worlds[id] = row
	return row, nil
}

// payload decodes a proposal's payload as the store does when applying
// it (bad_request when it does not fit its kind).
func payload[T any](p *wf.Proposal) (T, error) {
	var v T
	if err := json.Unmarshal(p.Payload, &v); err != nil {
		return v, wf.BadRequest("%s payload: %v", p.Kind, err)
	}
	return v, nil
}

// state reads the current state of what p changes. A payload that cannot
// be read has no state (its conflict says why).
func (t *targets) state(ctx context.Context, p *wf.Proposal) (TargetState, error) {
	var (
		st  TargetState
		err error
	)
	switch p.Kind {
	case wf.ProposalQuest, wf.ProposalEncounter:
		if p.TargetID != "" {
			st.Doc, err = t.doc(ctx, p)
		}
	case wf.ProposalWikiEdit:
		st.Page, err = t.page(ctx, p)
	case wf.ProposalAtlas:
		pl, perr := payload[wf.AtlasPlacePayload](p)
		if perr == nil {
			st.Parent, err = t.parent(ctx, p, pl.ParentID)
		}
	case wf.ProposalWorld:
		if st.World, err = t.world(ctx, p); err != nil || st.World == nil {
			return st, err
		}
		pl, perr := payload[wf.LorePayload](p)
		if perr == nil {
			st.Lore, err = t.lore(ctx, st.World.ID, pl.Operations)
		}
	}
	return st, err
}

// lore reads the stored entities the operations touch, each once, in
// operation order.
func (t *targets) lore(ctx context.Context, worldID string, ops []wf.StoredLoreOp) ([]wf.LoreEntity, error) {
	var out []wf.LoreEntity
	seen := map[[2]string]bool{}
	for _, op := range ops {
		k := [2]string{op.Collection, op.ID}
		if seen[k] {
			continue
		}
		seen[k] = true
		e, err := t.findLore(ctx, worldID, op.Collection, op.ID)
		if err != nil {
			return nil, err
		}
		if e != nil {
			out = append(out, *e)
		}
	}
	return out, nil
}

// findLore reads one entity, nil when there is none.
func (t *targets) findLore(ctx context.Context, worldID, collection, id string) (*wf.LoreEntity, error) {
	return absent(t.store.FindLore(ctx, worldID, collection, id))
}

// foresee is the error committing p alone would meet now (nil: none),
// found by the store running the commit's own transaction and rolling it
// back: the rules that decide a commit live in one place.
func (s *Service) foresee(ctx context.Context, p *wf.Proposal) (*wf.Error, error) {
	if p.Status != wf.ProposalPending {
		return &wf.Error{Code: wf.EConflict, Detail: wf.DetailNotPending}, nil
	}
	err := s.store.PreviewCommit(ctx, p.ID)
	if err == nil {
		return nil, nil
	}
	var e *wf.Error
	if errors.As(err, &e) {
		return e, nil
	}
	return nil, err
}
