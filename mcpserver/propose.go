package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/engine/lore"
	"github.com/worldforge-go/worldforge/review"
)

// The write path over MCP: the six propose tools store a proposal and
// change nothing else (unless an auto-accept rule of the owner commits it
// at once); commit_quest and commit_encounter commit one; create_campaign
// writes directly. See package review for who reviews and auto-accept, and
// the store for the transaction (claim once, version predicate, audit row).

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
	return &wf.Proposal{Kind: kind, ActorID: c.owner, KeyID: c.actor.KeyID, DiffSummary: diffSummary, ChangesetID: changesetID}, nil
}

// file stores the proposal (auto-accepting it when a rule says so) and
// renders the propose result.
func (s *Server) file(ctx context.Context, c *call, p *wf.Proposal, payload any) (any, error) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("encode payload: %w", err)
	}
	p.Payload = raw
	// The filing's audit row goes in with the proposal, in one
	// transaction.
	audit := &wf.AuditEntry{ActorID: c.owner, KeyID: c.actor.KeyID, Tool: c.tool, Outcome: "ok"}
	res, err := s.review.File(ctx, p, audit)
	if err != nil {
		return nil, storeErr(err)
	}
	c.audited = true
	c.target("proposal", p.ID, p.WorldID)
	out := wf.ProposeResult{ProposalID: p.ID, AuditID: p.ID, WorldID: p.WorldID, ChangesetID: p.ChangesetID}
	if res != nil {
		out.AutoAccepted = ptr(true)
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

func (s *Server) proposeQuest(ctx context.Context, c *call, in *wf.ProposeQuestArgs) (any, error) {
	return s.proposeDoc(ctx, c, in, wf.ProposalQuest)
}

func (s *Server) proposeEncounter(ctx context.Context, c *call, in *wf.ProposeQuestArgs) (any, error) {
	return s.proposeDoc(ctx, c, in, wf.ProposalEncounter)
}

// proposeDoc files a quest or encounter proposal: a new row when no id is
// given (anyone with the scope; the proposer will own it), else a change
// of the row by its owner or the owner/GM of its world, pinned to the
// row's version.
func (s *Server) proposeDoc(ctx context.Context, c *call, in *wf.ProposeQuestArgs, kind string) (any, error) {
	p, err := proposal(c, kind, in.DiffSummary, in.ChangesetID)
	if err != nil {
		return nil, err
	}
	doc, err := jsonObject("payload.json", in.Payload.JSON)
	if err != nil {
		return nil, err
	}
	payload := wf.QuestPayload{Name: in.Payload.Name, JSON: doc}
	if in.ID == "" {
		if err := textLen("payload.name", payload.Name, 1, wf.MaxNameLength); err != nil {
			return nil, err
		}
		return s.file(ctx, c, p, payload)
	}
	if payload.Name != "" {
		if err := textLen("payload.name", payload.Name, 1, wf.MaxNameLength); err != nil {
			return nil, err
		}
	}
	var row *wf.Quest
	if kind == wf.ProposalQuest {
		row, err = s.store.FindQuestByID(ctx, in.ID)
	} else {
		row, err = s.store.FindEncounterByID(ctx, in.ID)
	}
	if err != nil {
		return nil, storeErr(err)
	}
	if row.OwnerID != c.owner {
		if row.WorldID == "" {
			return nil, wf.ErrNotFound
		}
		if err := s.ownerOrGM(ctx, c, row.WorldID); err != nil {
			return nil, err
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

func (s *Server) proposeWikiPage(ctx context.Context, c *call, in *wf.ProposeWikiPageArgs) (any, error) {
	p, err := proposal(c, wf.ProposalWikiPage, in.DiffSummary, in.ChangesetID)
	if err != nil {
		return nil, err
	}
	if err := s.ownerOrGM(ctx, c, in.WorldID); err != nil {
		return nil, err
	}
	pl := in.Payload
	if err := textLen("payload.title", pl.Title, 1, wf.MaxTitleLength); err != nil {
		return nil, err
	}
	if err := textLen("payload.body", pl.Body, 0, maxWikiBody); err != nil {
		return nil, err
	}
	payload := wf.WikiPagePayload{Title: pl.Title, Body: pl.Body, Kind: cmp.Or(pl.Kind, wf.WikiKindLore), Audience: cmp.Or(pl.Audience, wf.AudienceGM)}
	if !slices.Contains(wf.WikiKinds, payload.Kind) {
		return nil, wf.BadRequest("payload.kind must be one of %s", strings.Join(wf.WikiKinds, ", "))
	}
	if payload.Audience != wf.AudienceGM && payload.Audience != wf.AudienceParty {
		return nil, wf.BadRequest("payload.audience must be gm or party")
	}
	p.WorldID = in.WorldID
	return s.file(ctx, c, p, payload)
}

func (s *Server) proposeWikiEdit(ctx context.Context, c *call, in *wf.ProposeWikiEditArgs) (any, error) {
	p, err := proposal(c, wf.ProposalWikiEdit, in.DiffSummary, in.ChangesetID)
	if err != nil {
		return nil, err
	}
	page, err := s.store.FindWikiPageByID(ctx, in.PageID)
	if err != nil {
		return nil, storeErr(err)
	}
	if page.DeletedAt != nil {
		return nil, wf.ErrNotFound
	}
	if err := s.ownerOrGM(ctx, c, page.WorldID); err != nil {
		return nil, err
	}
	pl := in.Payload
	if pl.Title == nil && pl.Body == nil && pl.Audience == nil {
		return nil, wf.BadRequest("payload must change at least one of title, body, audience")
	}
	if pl.Title != nil {
		if err := textLen("payload.title", *pl.Title, 1, wf.MaxTitleLength); err != nil {
			return nil, err
		}
	}
	if pl.Body != nil {
		if err := textLen("payload.body", *pl.Body, 0, maxWikiBody); err != nil {
			return nil, err
		}
	}
	if pl.Audience != nil && *pl.Audience != wf.AudienceGM && *pl.Audience != wf.AudienceParty {
		return nil, wf.BadRequest("payload.audience must be gm or party")
	}
	p.TargetID, p.BaseVersion, p.WorldID = page.ID, page.Version, page.WorldID
	return s.file(ctx, c, p, wf.WikiEditPayload{Title: pl.Title, Body: pl.Body, Audience: pl.Audience})
}

func (s *Server) proposeAtlasPlace(ctx context.Context, c *call, in *wf.ProposeAtlasPlaceArgs) (any, error) {
	p, err := proposal(c, wf.ProposalAtlas, in.DiffSummary, in.ChangesetID)
	if err != nil {
		return nil, err
	}
	if err := s.ownerOrGM(ctx, c, in.WorldID); err != nil {
		return nil, err
	}
	pl := in.Payload
	if err := textLen("payload.name", pl.Name, 1, wf.MaxPlaceNameLength); err != nil {
		return nil, err
	}
	if err := textLen("payload.terrainType", pl.TerrainType, 0, wf.MaxTerrainType); err != nil {
		return nil, err
	}
	if pl.ParentID != "" {
		parent, err := s.store.FindAtlasNodeByID(ctx, pl.ParentID)
		if err != nil {
			return nil, storeErr(err)
		}
		if parent.WorldID != in.WorldID {
			return nil, wf.ErrNotFound
		}
		if parent.Level >= wf.MaxAtlasLevel {
			return nil, wf.BadRequest("payload.parentId is a level-%d place, the deepest", parent.Level)
		}
	}
	p.WorldID = in.WorldID
	return s.file(ctx, c, p, wf.AtlasPlacePayload{Name: pl.Name, TerrainType: pl.TerrainType, ParentID: pl.ParentID})
}

// proposeLore files a world proposal of lore operations pinned to the
// world's version. Every upserted entity is validated against its
// collection's schema now; add_preset is stored expanded into "add"
// operations (each keeps an existing entity of the same id).
func (s *Server) proposeLore(ctx context.Context, c *call, in *wf.ProposeLoreArgs) (any, error) {
	p, err := proposal(c, wf.ProposalWorld, in.DiffSummary, in.ChangesetID)
	if err != nil {
		return nil, err
	}
	if n := len(in.Operations); n < 1 || n > wf.MaxLoreOperations {
		return nil, wf.BadRequest("operations must hold 1–%d operations, not %d", wf.MaxLoreOperations, n)
	}
	if err := s.ownerOrGM(ctx, c, in.WorldID); err != nil {
		return nil, err
	}
	var ops []wf.StoredLoreOp
	for i, op := range in.Operations {
		at := func(err error) error {
			return wf.BadRequest("operations[%d]: %s", i, strings.TrimPrefix(err.Error(), "bad_request: "))
		}
		switch op.Op {
		case "upsert":
			if !slices.Contains(wf.LoreCollections, op.Collection) {
				return nil, at(fmt.Errorf("collection %q is not a lore collection", op.Collection))
			}
			if op.Entity == nil {
				return nil, at(fmt.Errorf("upsert needs entity"))
			}
			raw, err := json.Marshal(op.Entity)
			if err != nil {
				return nil, at(err)
			}
			e, err := lore.Validate(op.Collection, raw)
			if err != nil {
				return nil, at(err)
			}
			ops = append(ops, wf.StoredLoreOp{Op: wf.LoreOpUpsert, Collection: e.Collection, ID: e.ID, Name: e.Name, Entity: e.JSON})
		case "remove":
			if !slices.Contains(wf.LoreCollections, op.Collection) {
				return nil, at(fmt.Errorf("collection %q is not a lore collection", op.Collection))
			}
			if op.ID == "" {
				return nil, at(fmt.Errorf("remove needs id"))
			}
			ops = append(ops, wf.StoredLoreOp{Op: wf.LoreOpRemove, Collection: op.Collection, ID: op.ID})
		case "add_preset":
			preset, ok := lore.PresetByID(op.PresetID)
			if !ok {
				return nil, at(fmt.Errorf("unknown preset %q", op.PresetID))
			}
			for _, e := range preset.Entities {
				ops = append(ops, wf.StoredLoreOp{Op: wf.LoreOpAdd, Collection: e.Collection, ID: e.ID, Name: e.Name, Entity: e.JSON, PresetID: preset.ID})
			}
		default:
			return nil, at(fmt.Errorf("op must be upsert, remove or add_preset, not %q", op.Op))
		}
	}
	w, err := s.store.FindWorldHeader(ctx, in.WorldID)
	if err != nil {
		return nil, storeErr(err)
	}
	p.WorldID, p.TargetID, p.BaseVersion = w.ID, w.ID, w.Version
	return s.file(ctx, c, p, wf.LorePayload{Operations: ops})
}

func (s *Server) commitQuest(ctx context.Context, c *call, in *wf.CommitArgs) (any, error) {
	return s.commitDoc(ctx, c, in, wf.ProposalQuest, wf.ToolCommitQuest)
}

func (s *Server) commitEncounter(ctx context.Context, c *call, in *wf.CommitArgs) (any, error) {
	return s.commitDoc(ctx, c, in, wf.ProposalEncounter, wf.ToolCommitEncounter)
}

// commitDoc commits a quest or encounter proposal: confirm is checked
// before anything is read, and only the row's owner (for a new row, the
// proposer) may commit. Everyone else gets proposal_not_found, exactly the
// answer for a missing proposal id; not_found means the row itself is gone
// (told to its proposer only). The store writes the audit row in the
// commit's transaction.
func (s *Server) commitDoc(ctx context.Context, c *call, in *wf.CommitArgs, kind, tool string) (any, error) {
	if !in.Confirm {
		return nil, wf.BadRequest("confirm must be the literal true")
	}
	if !wf.ValidID("prop", in.ProposalID) {
		return nil, wf.BadRequest("proposal_id %q is not a proposal id", in.ProposalID)
	}
	res, err := s.review.Commit(ctx, c.owner, c.actor.KeyID, review.Via{Tool: tool}, in.ProposalID, func(p *wf.Proposal) error {
		if p.Kind != kind {
			return wf.ErrProposalNotFound
		}
		owner, err := s.review.RowOwner(ctx, p)
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

func (s *Server) createCampaign(ctx context.Context, c *call, in *wf.CreateCampaignArgs) (any, error) {
	if err := textLen("name", in.Name, 1, wf.MaxNameLength); err != nil {
		return nil, err
	}
	doc, err := jsonObject("json", in.JSON)
	if err != nil {
		return nil, err
	}
	if in.WorldID != "" {
		if err := s.ownerOrGM(ctx, c, in.WorldID); err != nil {
			return nil, err
		}
	}
	cp := &wf.Campaign{OwnerID: c.owner, WorldID: in.WorldID, Name: in.Name, JSON: doc}
	if err := s.store.CreateCampaign(ctx, cp); err != nil {
		return nil, storeErr(err)
	}
	c.target("campaign", cp.ID, cp.WorldID)
	return wf.CreatedResult{ID: cp.ID, Version: cp.Version}, nil
}

// Schemas of the write tools.

func proposeCommonSchema(s *jsonschema.Schema) {
	d := s.Properties["diff_summary"]
	d.MinLength, d.MaxLength = ptr(1), ptr(wf.MaxDiffSummary)
	s.Properties["changeset_id"].Pattern = wf.ChangesetIDPattern
}

func proposeQuestSchema(s *jsonschema.Schema) {
	proposeCommonSchema(s)
	idProp(s.Properties["id"])
	s.Properties["payload"].Properties["name"].MaxLength = ptr(wf.MaxNameLength)
}

func proposeWikiPageSchema(s *jsonschema.Schema) {
	proposeCommonSchema(s)
	worldIDSchema(s)
	pl := s.Properties["payload"]
	pl.AdditionalProperties = nil // extra payload keys pass the schema
	pl.Properties["title"].MaxLength = ptr(wf.MaxTitleLength)
	pl.Properties["kind"].Enum = enum(wf.WikiKinds)
	pl.Properties["audience"].Enum = []any{wf.AudienceGM, wf.AudienceParty}
}

func proposeWikiEditSchema(s *jsonschema.Schema) {
	proposeCommonSchema(s)
	idProp(s.Properties["page_id"])
	pl := s.Properties["payload"]
	pl.Properties["title"].MaxLength = ptr(wf.MaxTitleLength)
	pl.Properties["audience"].Enum = []any{wf.AudienceGM, wf.AudienceParty}
}

func proposeAtlasSchema(s *jsonschema.Schema) {
	proposeCommonSchema(s)
	worldIDSchema(s)
	pl := s.Properties["payload"]
	pl.Properties["name"].MaxLength = ptr(wf.MaxPlaceNameLength)
	pl.Properties["terrainType"].MaxLength = ptr(wf.MaxTerrainType)
	pl.Properties["parentId"].MaxLength = ptr(maxIDLength)
}

func proposeLoreSchema(s *jsonschema.Schema) {
	proposeCommonSchema(s)
	worldIDSchema(s)
	ops := s.Properties["operations"]
	ops.MinItems, ops.MaxItems = ptr(1), ptr(wf.MaxLoreOperations)
	item := ops.Items
	item.Properties["op"].Enum = []any{"upsert", "remove", "add_preset"}
	item.Properties["collection"].Enum = enum(wf.LoreCollections)
	item.Properties["id"].MaxLength = ptr(maxIDLength)
	item.Properties["preset_id"].MaxLength = ptr(maxIDLength)
}

func commitSchema(s *jsonschema.Schema) {
	idProp(s.Properties["proposal_id"])
}

func createCampaignSchema(s *jsonschema.Schema) {
	n := s.Properties["name"]
	n.MinLength, n.MaxLength = ptr(1), ptr(wf.MaxNameLength)
	idProp(s.Properties["world_id"])
}
