package worldforge

import (
	"encoding/json"
	"regexp"
	"time"
)

// This file is the contract of the write path: what a proposal carries for
// each kind, what committing one returns, and the store methods behind the
// review queue. Nothing an agent proposes changes a world until an owner or
// GM commits it (or one of the owner's auto-accept rules does).

// ChangesetIDPattern is CHANGESET_ID_PATTERN: a changeset id is 1–64
// letters, digits, '_', '-' or '.', starting with a letter or digit.
const ChangesetIDPattern = `^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`

var changesetIDRE = regexp.MustCompile(ChangesetIDPattern)

// ValidChangesetID reports whether id matches ChangesetIDPattern.
func ValidChangesetID(id string) bool { return changesetIDRE.MatchString(id) }

// Proposal conflict details (conflict: <detail>).
const (
	// DetailNotPending: the proposal was already committed or rejected.
	DetailNotPending = "not_pending"
)

// QuestPayload is the payload of a quest or encounter proposal. A proposal
// without a target creates a new row owned by the proposer.
type QuestPayload struct {
	Name string          `json:"name"`
	JSON json.RawMessage `json:"json,omitempty"`
}

// WikiPagePayload is the payload of a wiki_page proposal (a new page).
type WikiPagePayload struct {
	Title    string `json:"title"`
	Body     string `json:"body"`
	Kind     string `json:"kind"`
	Audience string `json:"audience"`
}

// WikiEditPayload is the payload of a wiki_edit proposal: the fields to
// change (absent ones are kept).
type WikiEditPayload struct {
	Title    *string `json:"title,omitempty"`
	Body     *string `json:"body,omitempty"`
	Audience *string `json:"audience,omitempty"`
}

// AtlasPlacePayload is the payload of an atlas_place proposal (a new node;
// its level is its parent's plus one, 1 without a parent).
type AtlasPlacePayload struct {
	Name        string `json:"name"`
	TerrainType string `json:"terrainType,omitempty"`
	ParentID    string `json:"parentId,omitempty"`
}

// Lore operations as stored in a world proposal. The agent's add_preset
// is stored expanded into LoreOpAdd operations, one per preset entity, so
// that the review shows exactly what will change.
const (
	LoreOpUpsert = "upsert" // create or replace the entity
	LoreOpRemove = "remove" // delete the entity (absent: nothing to do)
	LoreOpAdd    = "add"    // create the entity unless one with its id exists
)

// StoredLoreOp is one operation of a world (lore) proposal.
type StoredLoreOp struct {
	Op         string          `json:"op"`
	Collection string          `json:"collection"`
	ID         string          `json:"id"`
	Name       string          `json:"name,omitempty"`
	Entity     json.RawMessage `json:"entity,omitempty"`
	PresetID   string          `json:"presetId,omitempty"`
}

// LorePayload is the payload of a world (lore) proposal.
type LorePayload struct {
	Operations []StoredLoreOp `json:"operations"`
}

// ProposalFilter selects proposals. Zero fields do not filter; Limit
// defaults to 50 and is capped at 200.
type ProposalFilter struct {
	WorldID string
	// WorldIDs, when not empty, keeps the proposals of those worlds.
	WorldIDs []string
	Status   string
	Kind     string
	KeyID    string
	// ChangesetID selects the proposals filed under the id. Changeset ids
	// are scoped (to a world, or outside worlds to the proposer), so it
	// names one changeset only together with WorldID (or ActorID).
	ChangesetID string
	ActorID     string
	// Before, when set, keeps proposals older than it in the listing's
	// order (CreatedAt, then ID, newest first): the next page.
	Before *ProposalCursor
	Limit  int
}

// ProposalCursor is a proposal's position in a newest-first listing.
type ProposalCursor struct {
	CreatedAt time.Time
	ID        string
}

// CommitResult is what committing a proposal did.
type CommitResult struct {
	Proposal Proposal `json:"proposal"`
	// TargetID is the row created or changed; Version its new version.
	TargetID string `json:"targetId"`
	Version  int64  `json:"version"`
	AuditID  string `json:"auditId"`
}
