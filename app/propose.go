package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/engine/lore"
)

// The write path: the six propose operations store a proposal and change
// nothing else (unless an auto-accept rule of the owner commits it at
// once); commit_quest and commit_encounter commit one; create_campaign
// writes directly. See review.go for who reviews and auto-accept, and the
// store for the transaction (claim once, version predicate, audit row).

// maxWikiBody bounds a proposed wiki page body.
const maxWikiBody = 200_000

// proposal starts a proposal of kind by the caller, after the checks every
// propose tool shares.
func proposal(c *call, kind, diffSummary, changesetID string) (*wf.Proposal, error) {
	if strings.TrimSpace(diffSummary) == "" {
		return nil, wf.BadRequest("diff_summary is required")
	}
	if n := utf8.RuneCountInString(diffSummary); n > wf.MaxDiffSummary {
		return nil, wf.BadRequest("diff_summary has %d characters, the limit is %d", n, wf.MaxDiffSummary)
	}
	if changesetID != "" && !wf.ValidChangesetID(changesetID) {
		return nil, wf.BadRequest("changeset_id must match %s", wf.ChangesetIDPattern)
	}
	return &wf.Proposal{Kind: kind, ActorID: c.owner, KeyID: c.keyID(), DiffSummary: diffSummary, ChangesetID: changesetID}, nil
}

// file stores the proposal (auto-accepting it when a rule says so) and
// renders the propose result.
func (s *Service) file(ctx context.Context, c *call, p *wf.Proposal, payload any) (wf.ProposeResult, error) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return wf.ProposeResult{}, fmt.Errorf("encode payload: %w", err)
	}
	p.Payload = raw
	// The filing's audit row goes in with the proposal, in one
	// transaction.
	// The reviewer of record: the world's owner, known from the access
	// check when it was of this world.
	reviewer := ""
	if p.WorldID != "" && p.WorldID == c.world {
		reviewer = c.worldOwner
	}
	res, err := s.fileProposal(ctx, p, c.entry("ok"), reviewer)
	if err != nil {
		return wf.ProposeResult{}, storeErr(err)
	}
	c.audited = true
	c.target("proposal", p.ID, p.WorldID)
	out := wf.ProposeResult{ProposalID: p.ID, AuditID: p.ID, WorldID: p.WorldID, ChangesetID: p.ChangesetID}
	if res != nil {
		accepted := true
		out.AutoAccepted = &accepted
	}
	return out, nil
}

// textLen checks a required or optional text's length in characters.
func textLen(field, v string, min, max int) error {
	if n := utf8.RuneCountInString(v); n < min || n > max {
		if min > 0 && n == 0 {
			return wf.BadRequest("%s is required", field)
		}
		return wf.BadRequest("%s must be %d–%d characters, not %d", field, min, max, n)
	}
	return nil
}

// jsonObject encodes an optional JSON document argument, which must be an
// object.
func jsonObject(field string, v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, wf.BadRequest("%s must be a JSON object", field)
	}
	return json.Marshal(v)
}

// ProposeQuest files a new quest, or a change to one by its owner or its
// world's owner or a GM (propose_quest).
func (s *Service) ProposeQuest(ctx context.Context, r Request, in *wf.ProposeQuestArgs) (wf.ProposeResult, error) {
	return run(ctx, s, r, wf.ToolProposeQuest, func(c *call) (wf.ProposeResult, error) {
		return s.proposeDoc(ctx, c, in, wf.ProposalQuest)
	})
}

// ProposeEncounter files a new encounter or a change to one; the rules of
// ProposeQuest (propose_encounter).
func (s *Service) ProposeEncounter(ctx context.Context, r Request, in *wf.ProposeQuestArgs) (wf.ProposeResult, error) {
	return run(ctx, s, r, wf.ToolProposeEncounter, func(c *call) (wf.ProposeResult, error) {
		return s.proposeDoc(ctx, c, in, wf.ProposalEncounter)
	})
}

// proposeDoc files a quest or encounter proposal: a new row when no id is
// given (anyone with the scope; the proposer will own it), else a change
// of the row by its owner or the owner/GM of its world, pinned to the
// row's version.
func (s *Service) proposeDoc(ctx context.Context, c *call, in *wf.ProposeQuestArgs, kind string) (wf.ProposeResult, error) {
	p, err := proposal(c, kind, in.DiffSummary, in.ChangesetID)
	if err != nil {
		return wf.ProposeResult{}, err
	}
	doc, err := jsonObject("payload.json", in.Payload.JSON)
	if err != nil {
		return wf.ProposeResult{}, err
	}
	payload := wf.QuestPayload{Name: in.Payload.Name, JSON: doc}
	if in.ID == "" {
		if err := textLen("payload.name", payload.Name, 1, wf.MaxNameLength); err != nil {
			return wf.ProposeResult{}, err
		}
		return s.file(ctx, c, p, payload)
	}
	if payload.Name != "" {
		if err := textLen("payload.name", payload.Name, 1, wf.MaxNameLength); err != nil {
			return wf.ProposeResult{}, err
		}
	}
	var row *wf.Quest
	if kind == wf.ProposalQuest {
		row, err = s.store.FindQuestByID(ctx, in.ID)
	} else {
		row, err = s.store.FindEncounterByID(ctx, in.ID)
	}
	if err != nil {
		return wf.ProposeResult{}, storeErr(err)
	}
	if row.OwnerID != c.owner {
		if row.WorldID == "" {
			return wf.ProposeResult{}, wf.ErrNotFound
		}
		if err := s.ownerOrGM(ctx, c, row.WorldID); err != nil {
			return wf.ProposeResult{}, err
		}
	}
	p.TargetID, p.BaseVersion, p.WorldID = row.ID, row.Version, row.WorldID
	if payload.Name == "" {
		payload.Name = row.Name
	}
	if payload.JSON == nil {
		payload.JSON = row.JSON
	}
	return s.file(ctx, c, p, payload)
}

// ProposeWikiPage files a new wiki page in a world, for its owner or a GM
// (propose_wiki_page).
func (s *Service) ProposeWikiPage(ctx context.Context, r Request, in *wf.ProposeWikiPageArgs) (wf.ProposeResult, error) {
	return run(ctx, s, r, wf.ToolProposeWikiPage, func(c *call) (wf.ProposeResult, error) {
		p, err := proposal(c, wf.ProposalWikiPage, in.DiffSummary, in.ChangesetID)
		if err != nil {
			return wf.ProposeResult{}, err
		}
		if err := s.ownerOrGM(ctx, c, in.WorldID); err != nil {
			return wf.ProposeResult{}, err
		}
		pl := in.Payload
		if err := textLen("payload.title", pl.Title, 1, wf.MaxTitleLength); err != nil {
			return wf.ProposeResult{}, err
		}
		if err := textLen("payload.body", pl.Body, 0, maxWikiBody); err != nil {
			return wf.ProposeResult{}, err
		}
		payload := wf.WikiPagePayload{Title: pl.Title, Body: pl.Body, Kind: cmp.Or(pl.Kind, wf.WikiKindLore), Audience: cmp.Or(pl.Audience, wf.AudienceGM)}
		if !slices.Contains(wf.WikiKinds, payload.Kind) {
			return wf.ProposeResult{}, wf.BadRequest("payload.kind must be one of %s", strings.Join(wf.WikiKinds, ", "))
		}
		if payload.Audience != wf.AudienceGM && payload.Audience != wf.AudienceParty {
			return wf.ProposeResult{}, wf.BadRequest("payload.audience must be gm or party")
		}
		p.WorldID = in.WorldID
		return s.file(ctx, c, p, payload)
	})
}

// ProposeWikiEdit files a change to a wiki page, for its world's owner or
// a GM (propose_wiki_edit).
func (s *Service) ProposeWikiEdit(ctx context.Context, r Request, in *wf.ProposeWikiEditArgs) (wf.ProposeResult, error) {
	return run(ctx, s, r, wf.ToolProposeWikiEdit, func(c *call) (wf.ProposeResult, error) {
		p, err := proposal(c, wf.ProposalWikiEdit, in.DiffSummary, in.ChangesetID)
		if err != nil {
			return wf.ProposeResult{}, err
		}
		page, err := s.store.FindWikiPageByID(ctx, in.PageID)
		if err != nil {
			return wf.ProposeResult{}, storeErr(err)
		}
		if page.DeletedAt != nil {
			return wf.ProposeResult{}, wf.ErrNotFound
		}
		if err := s.ownerOrGM(ctx, c, page.WorldID); err != nil {
			return wf.ProposeResult{}, err
		}
		pl := in.Payload
		if pl.Title == nil && pl.Body == nil && pl.Audience == nil {
			return wf.ProposeResult{}, wf.BadRequest("payload must change at least one of title, body, audience")
		}
		if pl.Title != nil {
			if err := textLen("payload.title", *pl.Title, 1, wf.MaxTitleLength); err != nil {
				return wf.ProposeResult{}, err
			}
		}
		if pl.Body != nil {
			if err := textLen("payload.body", *pl.Body, 0, maxWikiBody); err != nil {
				return wf.ProposeResult{}, err
			}
		}
		if pl.Audience != nil && *pl.Audience != wf.AudienceGM && *pl.Audience != wf.AudienceParty {
			return wf.ProposeResult{}, wf.BadRequest("payload.audience must be gm or party")
		}
		p.TargetID, p.BaseVersion, p.WorldID = page.ID, page.Version, page.WorldID
		return s.file(ctx, c, p, wf.WikiEditPayload{Title: pl.Title, Body: pl.Body, Audience: pl.Audience})
	})
}

// ProposeAtlasPlace files a new atlas place in a world, for its owner or a
// GM (propose_atlas_place).
func (s *Service) ProposeAtlasPlace(ctx context.Context, r Request, in *wf.ProposeAtlasPlaceArgs) (wf.ProposeResult, error) {
	return run(ctx, s, r, wf.ToolProposeAtlasPlace, func(c *call) (wf.ProposeResult, error) {
		p, err := proposal(c, wf.ProposalAtlas, in.DiffSummary, in.ChangesetID)
		if err != nil {
			return wf.ProposeResult{}, err
		}
		if err := s.ownerOrGM(ctx, c, in.WorldID); err != nil {
			return wf.ProposeResult{}, err
		}
		pl := in.Payload
		if err := textLen("payload.name", pl.Name, 1, wf.MaxPlaceNameLength); err != nil {
			return wf.ProposeResult{}, err
		}
		if err := textLen("payload.terrainType", pl.TerrainType, 0, wf.MaxTerrainType); err != nil {
			return wf.ProposeResult{}, err
		}
		if pl.ParentID != "" {
			parent, err := s.store.FindAtlasNodeByID(ctx, pl.ParentID)
			if err != nil {
				return wf.ProposeResult{}, storeErr(err)
			}
			if parent.WorldID != in.WorldID {
				return wf.ProposeResult{}, wf.ErrNotFound
			}
			if parent.Level >= wf.MaxAtlasLevel {
				return wf.ProposeResult{}, wf.BadRequest("payload.parentId is a level-%d place, the deepest", parent.Level)
			}
		}
		p.WorldID = in.WorldID
		return s.file(ctx, c, p, wf.AtlasPlacePayload{Name: pl.Name, TerrainType: pl.TerrainType, ParentID: pl.ParentID})
	})
}

// proposeLore files a world proposal of lore operations pinned to the
// world's version. Every upserted entity is validated against its
// collection's schema now; add_preset is stored expanded into "add"
// operations (each keeps an existing entity of the same id).
func (s *Service) ProposeLore(ctx context.Context, r Request, in *wf.ProposeLoreArgs) (wf.ProposeResult, error) {
	return run(ctx, s, r, wf.ToolProposeLore, func(c *call) (wf.ProposeResult, error) {
		p, err := proposal(c, wf.ProposalWorld, in.DiffSummary, in.ChangesetID)
		if err != nil {
			return wf.ProposeResult{}, err
		}
		if n := len(in.Operations); n < 1 || n > wf.MaxLoreOperations {
			return wf.ProposeResult{}, wf.BadRequest("operations must hold 1–%d operations, not %d", wf.MaxLoreOperations, n)
		}
		if err := s.ownerOrGM(ctx, c, in.WorldID); err != nil {
			return wf.ProposeResult{}, err
		}
		var ops []wf.StoredLoreOp
		for i, op := range in.Operations {
			at := func(err error) error {
				return wf.BadRequest("operations[%d]: %s", i, strings.TrimPrefix(err.Error(), "bad_request: "))
			}
			switch op.Op {
			case "upsert":
				if !slices.Contains(wf.LoreCollections, op.Collection) {
					return wf.ProposeResult{}, at(fmt.Errorf("collection %q is not a lore collection", op.Collection))
				}
				if op.Entity == nil {
					return wf.ProposeResult{}, at(fmt.Errorf("upsert needs entity"))
				}
				raw, err := json.Marshal(op.Entity)
				if err != nil {
					return wf.ProposeResult{}, at(err)
				}
				e, err := lore.Validate(op.Collection, raw)
				if err != nil {
					return wf.ProposeResult{}, at(err)
				}
				ops = append(ops, wf.StoredLoreOp{Op: wf.LoreOpUpsert, Collection: e.Collection, ID: e.ID, Name: e.Name, Entity: e.JSON})
			case "remove":
				if !slices.Contains(wf.LoreCollections, op.Collection) {
					return wf.ProposeResult{}, at(fmt.Errorf("collection %q is not a lore collection", op.Collection))
				}
				if op.ID == "" {
					return wf.ProposeResult{}, at(fmt.Errorf("remove needs id"))
				}
				ops = append(ops, wf.StoredLoreOp{Op: wf.LoreOpRemove, Collection: op.Collection, ID: op.ID})
			case "add_preset":
				preset, ok := lore.PresetByID(op.PresetID)
				if !ok {
					return wf.ProposeResult{}, at(fmt.Errorf("unknown preset %q", op.PresetID))
				}
				for _, e := range preset.Entities {
					ops = append(ops, wf.StoredLoreOp{Op: wf.LoreOpAdd, Collection: e.Collection, ID: e.ID, Name: e.Name, Entity: e.JSON, PresetID: preset.ID})
				}
			default:
				return wf.ProposeResult{}, at(fmt.Errorf("op must be upsert, remove or add_preset, not %q", op.Op))
			}
		}
		w, err := s.store.FindWorldHeader(ctx, in.WorldID)
		if err != nil {
			return wf.ProposeResult{}, storeErr(err)
		}
		p.WorldID, p.TargetID, p.BaseVersion = w.ID, w.ID, w.Version
		return s.file(ctx, c, p, wf.LorePayload{Operations: ops})
	})
}

// CommitQuest commits a quest proposal for the quest's owner only
// (commit_quest); the store audits it in the commit's transaction.
func (s *Service) CommitQuest(ctx context.Context, r Request, in *wf.CommitArgs) (*wf.CommitResult, error) {
	return run(ctx, s, r, wf.ToolCommitQuest, func(c *call) (*wf.CommitResult, error) {
		return s.commitDoc(ctx, c, in, wf.ProposalQuest)
	})
}

// CommitEncounter commits an encounter proposal; the rules of CommitQuest
// (commit_encounter).
func (s *Service) CommitEncounter(ctx context.Context, r Request, in *wf.CommitArgs) (*wf.CommitResult, error) {
	return run(ctx, s, r, wf.ToolCommitEncounter, func(c *call) (*wf.CommitResult, error) {
		return s.commitDoc(ctx, c, in, wf.ProposalEncounter)
	})
}

// commitDoc commits a quest or encounter proposal: confirm is checked
// before anything is read, and only the row's owner (for a new row, the
// proposer) may commit. Everyone else gets proposal_not_found, exactly the
// answer for a missing proposal id; not_found means the row itself is gone
// (told to its proposer only). The store writes the audit row in the
// commit's transaction.
func (s *Service) commitDoc(ctx context.Context, c *call, in *wf.CommitArgs, kind string) (*wf.CommitResult, error) {
	if !in.Confirm {
		return nil, wf.BadRequest("confirm must be the literal true")
	}
	if !wf.ValidID("prop", in.ProposalID) {
		return nil, wf.BadRequest("proposal_id %q is not a proposal id", in.ProposalID)
	}
	res, err := s.commit(ctx, c, in.ProposalID, func(p *wf.Proposal) error {
		if p.Kind != kind {
			return wf.ErrProposalNotFound
		}
		owner, err := s.rowOwner(ctx, p)
		switch {
		case errors.Is(err, wf.ErrNotFound) && p.ActorID == c.owner:
			// The proposer learns that the row is gone.
			return err
		case errors.Is(err, wf.ErrNotFound):
			return wf.ErrProposalNotFound
		case err != nil:
			return err
		case owner != c.owner:
			return wf.ErrProposalNotFound
		}
		return nil
	})
	if err != nil {
		return nil, storeErr(err)
	}
	c.audited = true
	return res, nil
}

// CreateCampaign creates a campaign of the caller's, optionally in a world
// they own or run as GM (create_campaign).
func (s *Service) CreateCampaign(ctx context.Context, r Request, in *wf.CreateCampaignArgs) (wf.CreatedResult, error) {
	return run(ctx, s, r, wf.ToolCreateCampaign, func(c *call) (wf.CreatedResult, error) {
		if err := textLen("name", in.Name, 1, wf.MaxNameLength); err != nil {
			return wf.CreatedResult{}, err
		}
		doc, err := jsonObject("json", in.JSON)
		if err != nil {
			return wf.CreatedResult{}, err
		}
		if in.WorldID != "" {
			if err := s.ownerOrGM(ctx, c, in.WorldID); err != nil {
				return wf.CreatedResult{}, err
			}
		}
		cp := &wf.Campaign{OwnerID: c.owner, WorldID: in.WorldID, Name: in.Name, JSON: doc}
		if err := s.store.CreateCampaign(ctx, cp); err != nil {
			return wf.CreatedResult{}, storeErr(err)
		}
		c.target("campaign", cp.ID, cp.WorldID)
		return wf.CreatedResult{ID: cp.ID, Version: cp.Version}, nil
	})
}
