// Package review holds the rules of WorldForge's write path that the MCP
// tools (package mcpserver) and the REST review queue (package httpapi)
// share: who may review a proposal, filing a proposal with the owner's
// auto-accept rules, and committing or rejecting one.
//
// Who reviews (commits, rejects, lists): for a proposal on a world, the
// world's owner and its GMs; for a quest or encounter proposal outside any
// world, the row's owner — for a new row, the proposer, who will own it.
// Everyone else is told not_found, as for a missing proposal.
//
// Auto-accept: the rules that count are those of the proposal's reviewer
// of record — the world's owner, or the row's owner outside a world. A
// matching proposal is committed at once, in its own transaction, with its
// own audit row naming the rule; if that commit fails (a version conflict
// between filing and committing) the proposal stays pending for review.
//
// The store does the transactional work (claim once, version predicate,
// audit row, one transaction); this package decides who may.
package review

import (
	"context"
	"errors"
	"fmt"

	wf "github.com/worldforge-go/worldforge"
)

// Service applies the review rules on a store.
type Service struct {
	store wf.Store
}

// New returns a Service on store.
func New(store wf.Store) *Service { return &Service{store: store} }

// Reviewer returns the user whose rules and review a proposal falls
// under: the world's owner, or outside a world the row's owner (for a
// new row, the proposer).
func (s *Service) Reviewer(ctx context.Context, p *wf.Proposal) (string, error) {
	if p.WorldID != "" {
		w, err := s.store.FindWorldHeader(ctx, p.WorldID)
		if err != nil {
			return "", err
		}
		return w.OwnerID, nil
	}
	return s.rowOwner(ctx, p)
}

// rowOwner is the owner of a quest or encounter proposal's row.
func (s *Service) rowOwner(ctx context.Context, p *wf.Proposal) (string, error) {
	if p.TargetID == "" {
		return p.ActorID, nil
	}
	var (
		q   *wf.Quest
		err error
	)
	switch p.Kind {
	case wf.ProposalQuest:
		q, err = s.store.FindQuestByID(ctx, p.TargetID)
	case wf.ProposalEncounter:
		q, err = s.store.FindEncounterByID(ctx, p.TargetID)
	default:
		return "", fmt.Errorf("review: a %s proposal without a world", p.Kind)
	}
	if err != nil {
		return "", err
	}
	return q.OwnerID, nil
}

// CanReview answers nil if user may list, commit or reject p, and
// proposal_not_found otherwise (a stranger cannot tell a proposal exists).
func (s *Service) CanReview(ctx context.Context, user string, p *wf.Proposal) error {
	if p.WorldID != "" {
		role, err := s.store.WorldRole(ctx, p.WorldID, user)
		if err != nil {
			return hide(err)
		}
		if role == wf.RoleOwner || role == wf.RoleGM {
			return nil
		}
		return wf.ErrProposalNotFound
	}
	owner, err := s.rowOwner(ctx, p)
	if err != nil {
		return hide(err)
	}
	if owner != user {
		return wf.ErrProposalNotFound
	}
	return nil
}

// CanReviewWorld answers nil if user owns the world or is one of its GMs,
// and not_found otherwise.
func (s *Service) CanReviewWorld(ctx context.Context, user, worldID string) error {
	role, err := s.store.WorldRole(ctx, worldID, user)
	if err != nil {
		return err
	}
	if role != wf.RoleOwner && role != wf.RoleGM {
		return wf.ErrNotFound
	}
	return nil
}

// hide turns a missing world or row behind a proposal into
// proposal_not_found.
func hide(err error) error {
	if errors.Is(err, wf.ErrNotFound) {
		return wf.ErrProposalNotFound
	}
	return err
}

// File stores p (pending) with its filing's audit row and, when one of
// the reviewer's auto-accept rules matches, commits it at once. The result
// is nil unless it was committed.
func (s *Service) File(ctx context.Context, p *wf.Proposal, audit *wf.AuditEntry) (*wf.CommitResult, error) {
	if err := s.store.CreateProposal(ctx, p, audit); err != nil {
		return nil, err
	}
	reviewer, err := s.Reviewer(ctx, p)
	if err != nil {
		return nil, err
	}
	ok, err := s.store.MatchAutoAccept(ctx, reviewer, p)
	if err != nil || !ok {
		return nil, err
	}
	res, err := s.store.CommitProposal(ctx, p.ID, reviewer, nil, &wf.AuditEntry{
		ActorID: reviewer, Route: "auto-accept", TargetType: p.Kind, WorldID: p.WorldID, Outcome: "auto_accepted",
	})
	if err != nil {
		var e *wf.Error
		if errors.As(err, &e) {
			// A conflict between filing and committing: the proposal
			// stays pending for a person to look at.
			return nil, nil
		}
		return nil, err
	}
	*p = res.Proposal
	return res, nil
}

// Commit commits one proposal as user, through via. authorize decides
// whether user may; nil means the review rule (CanReview). The MCP commit
// tools pass their own, stricter rule (the quest's owner only).
func (s *Service) Commit(ctx context.Context, user, keyID string, via Via, id string, authorize func(*wf.Proposal) error) (*wf.CommitResult, error) {
	audit := auditFor(user, keyID, via)
	return s.store.CommitProposal(ctx, id, user, func(p *wf.Proposal) error {
		var err error
		if authorize != nil {
			err = authorize(p)
		} else {
			err = s.CanReview(ctx, user, p)
		}
		if err != nil {
			return err
		}
		audit.TargetType, audit.WorldID = p.Kind, p.WorldID
		return nil
	}, audit)
}

// RowOwner returns the owner of a quest or encounter proposal's row (for
// a new row, the proposer): the only user commit_quest and
// commit_encounter accept. A deleted row is not_found.
func (s *Service) RowOwner(ctx context.Context, p *wf.Proposal) (string, error) {
	return s.rowOwner(ctx, p)
}

// Reject rejects one proposal as user, through via.
func (s *Service) Reject(ctx context.Context, user, keyID string, via Via, id string) (*wf.Proposal, error) {
	audit := auditFor(user, keyID, via)
	audit.Outcome = "rejected"
	return s.store.RejectProposal(ctx, id, user, func(p *wf.Proposal) error {
		if err := s.CanReview(ctx, user, p); err != nil {
			return err
		}
		audit.TargetType, audit.TargetID, audit.WorldID = p.Kind, p.ID, p.WorldID
		return nil
	}, audit)
}

// CommitChangeset commits every pending proposal of a world's changeset
// as user, all or none.
func (s *Service) CommitChangeset(ctx context.Context, user, keyID string, via Via, worldID, changesetID string) ([]wf.CommitResult, error) {
	if err := s.CanReviewWorld(ctx, user, worldID); err != nil {
		return nil, err
	}
	return s.store.CommitChangeset(ctx, worldID, changesetID, user,
		func(p *wf.Proposal) error { return s.CanReview(ctx, user, p) },
		func(p *wf.Proposal) *wf.AuditEntry {
			a := auditFor(user, keyID, via)
			a.TargetType, a.WorldID = p.Kind, p.WorldID
			return a
		})
}

// Via names what a review action came through, for its audit row: an MCP
// tool or a REST route.
type Via struct {
	Tool  string
	Route string
}

// auditFor starts the audit row of a review action.
func auditFor(user, keyID string, via Via) *wf.AuditEntry {
	return &wf.AuditEntry{ActorID: user, KeyID: keyID, Tool: via.Tool, Route: via.Route, Outcome: "committed"}
}
