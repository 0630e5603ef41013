package app

import (
	"context"

	wf "github.com/worldforge-go/worldforge"
)

// Auto-accept rules are the caller's own: listed (not audited), created
// and deleted (audited, target auto_accept_rule).

// RuleArgs is a new auto-accept rule: whom it trusts (ActorID or KeyID,
// at least one), optionally in one world the caller owns, optionally for
// some proposal kinds only.
type RuleArgs struct {
	WorldID string
	ActorID string
	KeyID   string
	Kinds   []string
}

// ListAutoAcceptRules lists the caller's auto-accept rules.
func (s *Service) ListAutoAcceptRules(ctx context.Context, r Request) ([]wf.AutoAcceptRule, error) {
	return run(ctx, s, r, OpListAutoAcceptRules, func(c *call) ([]wf.AutoAcceptRule, error) {
		rules, err := s.store.ListAutoAcceptRules(ctx, c.owner)
		if err != nil {
			return nil, storeErr(err)
		}
		if rules == nil {
			rules = []wf.AutoAcceptRule{}
		}
		return rules, nil
	})
}

// CreateAutoAcceptRule makes an auto-accept rule of the caller's. read
// supplies the rule once the caller is admitted. It must name whom it
// trusts (actorId or keyId); a worldId must be a world the caller owns
// (not_found otherwise).
func (s *Service) CreateAutoAcceptRule(ctx context.Context, r Request, read func(*RuleArgs) error) (*wf.AutoAcceptRule, error) {
	return run(ctx, s, r, OpCreateAutoAcceptRule, func(c *call) (*wf.AutoAcceptRule, error) {
		var in RuleArgs
		if err := read(&in); err != nil {
			return nil, err
		}
		rule := &wf.AutoAcceptRule{OwnerID: c.owner, WorldID: in.WorldID, ActorID: in.ActorID, KeyID: in.KeyID, Kinds: in.Kinds}
		if err := rule.Check(); err != nil {
			return nil, err
		}
		if in.ActorID == "" && in.KeyID == "" {
			return nil, wf.BadRequest("a rule must name the actorId or keyId whose proposals it accepts")
		}
		if in.WorldID != "" {
			if err := s.worldOwner(ctx, c, in.WorldID); err != nil {
				return nil, err
			}
		}
		if rule.Kinds == nil {
			rule.Kinds = []string{}
		}
		if err := s.store.CreateAutoAcceptRule(ctx, rule); err != nil {
			return nil, storeErr(err)
		}
		c.target("auto_accept_rule", rule.ID, rule.WorldID)
		return rule, nil
	})
}

// DeleteAutoAcceptRule deletes one of the caller's rules; someone else's
// or a missing one is not_found.
func (s *Service) DeleteAutoAcceptRule(ctx context.Context, r Request, id string) error {
	_, err := run(ctx, s, r, OpDeleteAutoAcceptRule, func(c *call) (struct{}, error) {
		if err := s.store.DeleteAutoAcceptRule(ctx, c.owner, id); err != nil {
			return struct{}{}, storeErr(err)
		}
		c.target("auto_accept_rule", id, "")
		return struct{}{}, nil
	})
	return err
}
