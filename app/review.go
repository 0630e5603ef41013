package app

import (
	"context"
	"errors"
	"fmt"

	wf "github.com/worldforge-go/worldforge"
)

// The review queue (the rules in the package doc): listing, reading,
// committing and rejecting proposals, committing a changeset, and filing
// a proposal with the reviewer's auto-accept rules. Commits and
// rejections write their audit row in their own transaction; listing and
// reading a proposal write none.

// reviewer returns the user whose rules and review a proposal falls
// under: the world's owner, or outside a world the row's owner (for a
// new row, the proposer).
func (s *Service) reviewer(ctx context.Context, p *wf.Proposal) (string, error) {
	if p.WorldID != "" {
		w, err := s.store.FindWorldHeader(ctx, p.WorldID)
		if err != nil {
			return "", err
		}
		return w.OwnerID, nil
	}
	return s.rowOwner(ctx, p)
}

// rowOwner is the owner of a quest or encounter proposal's row (for a new
// row, the proposer). A deleted row is not_found.
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
		return "", fmt.Errorf("app: a %s proposal without a world", p.Kind)
	}
	if err != nil {
		return "", err
	}
	return q.OwnerID, nil
}

// canReview answers nil if user may list, commit or reject p, and
// proposal_not_found otherwise (a stranger cannot tell a proposal exists).
func (s *Service) canReview(ctx context.Context, user string, p *wf.Proposal) error {
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

// hide turns a missing world or row behind a proposal into
// proposal_not_found.
func hide(err error) error {
	if errors.Is(err, wf.ErrNotFound) {
		return wf.ErrProposalNotFound
	}
	return err
}

// fileProposal stores p (pending) with its filing's audit row and, when
// one of the reviewer's auto-accept rules matches, commits it at once.
// The result is nil unless it was committed. The propose operations file
// through it once they have checked the caller. reviewer is the reviewer
// of record when the caller's checks read it already (the world's owner),
// else "" and it is read here.
func (s *Service) fileProposal(ctx context.Context, p *wf.Proposal, audit *wf.AuditEntry, reviewer string) (*wf.CommitResult, error) {
	if err := s.store.CreateProposal(ctx, p, audit); err != nil {
		return nil, err
	}
	if reviewer == "" {
		var err error
		if reviewer, err = s.reviewer(ctx, p); err != nil {
			return nil, err
		}
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

// commit commits one proposal for the call; authorize decides whether
// the caller may (nil: the review rule). The store writes the audit row
// in the commit's transaction.
func (s *Service) commit(ctx context.Context, c *call, id string, authorize func(*wf.Proposal) error) (*wf.CommitResult, error) {
	audit := c.entry("committed")
	return s.store.CommitProposal(ctx, id, c.owner, func(p *wf.Proposal) error {
		var err error
		if authorize != nil {
			err = authorize(p)
		} else {
			err = s.canReview(ctx, c.owner, p)
		}
		if err != nil {
			return err
		}
		audit.TargetType, audit.WorldID = p.Kind, p.WorldID
		return nil
	}, audit)
}

// ProposalQuery is what GET /worlds/{id}/proposals filters by.
type ProposalQuery struct {
	Status      string
	ChangesetID string
	Limit       int
}

// ListProposals lists a world's proposals, newest first, for its owner
// and GMs. read supplies the filter once the caller may list (a caller
// who may not learns nothing about their query's faults); it is not
// audited.
func (s *Service) ListProposals(ctx context.Context, r Request, worldID string, read func(*ProposalQuery) error) ([]wf.Proposal, error) {
	return run(ctx, s, r, OpListProposals, func(c *call) ([]wf.Proposal, error) {
		if err := s.ownerOrGM(ctx, c, worldID); err != nil {
			return nil, err
		}
		var q ProposalQuery
		if read != nil {
			if err := read(&q); err != nil {
				return nil, err
			}
		}
		list, err := s.store.ListProposals(ctx, wf.ProposalFilter{WorldID: worldID, Status: q.Status, ChangesetID: q.ChangesetID, Limit: q.Limit})
		if err != nil {
			return nil, storeErr(err)
		}
		if list == nil {
			list = []wf.Proposal{}
		}
		return list, nil
	})
}

// GetProposal reads one proposal for its reviewer; it is not audited.
func (s *Service) GetProposal(ctx context.Context, r Request, id string) (*wf.Proposal, error) {
	return run(ctx, s, r, OpGetProposal, func(c *call) (*wf.Proposal, error) {
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
		return p, nil
	})
}

// CommitProposal commits one proposal for its reviewer: claim once,
// version-checked, audited (outcome committed) in one transaction.
func (s *Service) CommitProposal(ctx context.Context, r Request, id string) (*wf.CommitResult, error) {
	c, err := begin(r, OpCommitProposal)
	if err != nil {
		return nil, err
	}
	if !wf.ValidID("prop", id) {
		return nil, wf.BadRequest("%q is not a proposal id", id)
	}
	res, err := s.commit(ctx, c, id, nil)
	if err != nil {
		return nil, storeErr(err)
	}
	return res, nil
}

// MaxRejectReason is the longest rejection reason, in characters.
const MaxRejectReason = 2000

// RejectProposal rejects one proposal for its reviewer, with an optional
// reason (at most MaxRejectReason characters), audited (outcome
// rejected) in the rejection's transaction.
func (s *Service) RejectProposal(ctx context.Context, r Request, id, reason string) (*wf.Proposal, error) {
	c, err := begin(r, OpRejectProposal)
	if err != nil {
		return nil, err
	}
	if !wf.ValidID("prop", id) {
		return nil, wf.BadRequest("%q is not a proposal id", id)
	}
	if err := textLen("reason", reason, 0, MaxRejectReason); err != nil {
		return nil, err
	}
	audit := c.entry("rejected")
	p, err := s.store.RejectProposal(ctx, id, c.owner, reason, func(p *wf.Proposal) error {
		if err := s.canReview(ctx, c.owner, p); err != nil {
			return err
		}
		audit.TargetType, audit.TargetID, audit.WorldID = p.Kind, p.ID, p.WorldID
		return nil
	}, audit)
	if err != nil {
		return nil, storeErr(err)
	}
	return p, nil
}

// CommitChangeset commits every pending proposal of a world's changeset
// for the world's owner or a GM, all or none; each proposal gets its own
// audit row (outcome committed).
func (s *Service) CommitChangeset(ctx context.Context, r Request, worldID, changesetID string) ([]wf.CommitResult, error) {
	c, err := begin(r, OpCommitChangeset)
	if err != nil {
		return nil, err
	}
	if !wf.ValidChangesetID(changesetID) {
		return nil, wf.BadRequest("changeset must match %s", wf.ChangesetIDPattern)
	}
	role, err := s.store.WorldRole(ctx, worldID, c.owner)
	if err != nil {
		return nil, storeErr(err)
	}
	if role != wf.RoleOwner && role != wf.RoleGM {
		return nil, wf.ErrNotFound
	}
	res, err := s.store.CommitChangeset(ctx, worldID, changesetID, c.owner,
		func(p *wf.Proposal) error { return s.canReview(ctx, c.owner, p) },
		func(p *wf.Proposal) *wf.AuditEntry {
			a := c.entry("committed")
			a.TargetType, a.WorldID = p.Kind, p.WorldID
			return a
		})
	if err != nil {
		return nil, storeErr(err)
	}
	return res, nil
}
