package worldforge

import (
	"encoding/json"
	"strconv"
	"time"
)

// User is a person with an account.
type User struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
}

// APIKey is a stored API key. The secret itself is never stored: only the
// SHA-256 of it (Hash), which is what the store looks keys up by.
type APIKey struct {
	ID     string   `json:"id"`
	UserID string   `json:"userId"`
	Hash   []byte   `json:"-"`
	Prefix string   `json:"prefix"` // the first characters of the secret, for people to recognise it
	Scopes []string `json:"scopes"`
	// Name is what its owner called it ("" for keys made without one).
	Name      string     `json:"name,omitempty"`
	CreatedAt time.Time  `json:"createdAt"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
	// LastUsedAt is when it last authenticated a request, to within a
	// minute (nil: never).
	LastUsedAt *time.Time `json:"lastUsedAt,omitempty"`
}

// Session is a web console session: a signed-in browser. A session
// signed in with an API key carries that key's id and scopes and acts
// with those only; one signed in with a login link or a session JWT has
// every scope.
type Session struct {
	ID        string     `json:"id"`
	Hash      []byte     `json:"-"`
	UserID    string     `json:"userId"`
	KeyID     string     `json:"keyId,omitempty"`
	Scopes    []string   `json:"scopes"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt time.Time  `json:"expiresAt"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
}

// LoginLink is a one-time console sign-in link for a user.
type LoginLink struct {
	ID        string     `json:"id"`
	Hash      []byte     `json:"-"`
	UserID    string     `json:"userId"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt time.Time  `json:"expiresAt"`
	UsedAt    *time.Time `json:"usedAt,omitempty"`
}

// World roles. The owner is the world's OwnerID; the others are rows of the
// world's membership.
const (
	RoleOwner    = "owner"
	RoleGM       = "gm"
	RolePlayer   = "player"
	RoleObserver = "observer"
)

// World is an authored world. JSON holds the authored document (grid,
// POIs, …); runtime state (presence, opened POIs, picked items) is kept
// apart and merged in by read_world.
type World struct {
	ID        string          `json:"id"`
	OwnerID   string          `json:"ownerId"`
	Name      string          `json:"name"`
	Template  string          `json:"template,omitempty"`
	Seed      int64           `json:"seed"`
	Cols      int             `json:"cols"`
	Rows      int             `json:"rows"`
	JSON      json.RawMessage `json:"json"`
	Version   int64           `json:"version"`
	CreatedAt time.Time       `json:"createdAt"`
	UpdatedAt time.Time       `json:"updatedAt"`
}

// WorldMember is a user's role in a world other than its owner.
type WorldMember struct {
	WorldID string `json:"worldId"`
	UserID  string `json:"userId"`
	Role    string `json:"role"`
	// Name is the member's user name (filled by ListWorldMembers).
	Name      string    `json:"name,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

// WorldListing is a world in a user's list of the worlds they review:
// the world (without its document), the user's role in it (owner or gm)
// and its count of pending proposals.
type WorldListing struct {
	World   World  `json:"world"`
	Role    string `json:"role"`
	Pending int    `json:"pending"`
}

// Campaign is a campaign run in (optionally) a world.
type Campaign struct {
	ID        string          `json:"id"`
	OwnerID   string          `json:"ownerId"`
	WorldID   string          `json:"worldId,omitempty"`
	Name      string          `json:"name"`
	JSON      json.RawMessage `json:"json,omitempty"`
	Version   int64           `json:"version"`
	CreatedAt time.Time       `json:"createdAt"`
	UpdatedAt time.Time       `json:"updatedAt"`
}

// Quest and Encounter share one shape: a named JSON document owned by a
// user, optionally inside a campaign.
type Quest struct {
	ID         string          `json:"id"`
	OwnerID    string          `json:"ownerId"`
	CampaignID string          `json:"campaignId,omitempty"`
	WorldID    string          `json:"worldId,omitempty"`
	Name       string          `json:"name"`
	JSON       json.RawMessage `json:"json,omitempty"`
	Version    int64           `json:"version"`
	CreatedAt  time.Time       `json:"createdAt"`
	UpdatedAt  time.Time       `json:"updatedAt"`
}

// Encounter has the same shape as Quest.
type Encounter = Quest

// DocSummary is the list form of a quest, encounter or campaign.
type DocSummary struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	CampaignID string    `json:"campaignId,omitempty"`
	WorldID    string    `json:"worldId,omitempty"`
	Version    int64     `json:"version"`
	UpdatedAt  time.Time `json:"updatedAt"`
}

// Wiki page kinds and audiences.
const (
	WikiKindLore     = "lore"
	WikiKindFaction  = "faction"
	WikiKindPlace    = "place"
	WikiKindQuestLog = "quest-log"

	AudienceGM    = "gm"
	AudienceParty = "party"
)

// WikiKinds lists the wiki page kinds in the order the spec gives them.
var WikiKinds = []string{WikiKindLore, WikiKindFaction, WikiKindPlace, WikiKindQuestLog}

// WikiPage is the live revision of a wiki page. A deleted page keeps its
// history and has DeletedAt set; list tools show live pages only.
type WikiPage struct {
	ID        string     `json:"id"`
	WorldID   string     `json:"worldId"`
	Title     string     `json:"title"`
	Body      string     `json:"body"`
	Kind      string     `json:"kind"`
	Audience  string     `json:"audience"`
	Version   int64      `json:"version"`
	CreatedAt time.Time  `json:"createdAt"`
	UpdatedAt time.Time  `json:"updatedAt"`
	DeletedAt *time.Time `json:"deletedAt,omitempty"`
}

// WikiPageSummary is the list form of a wiki page (no body).
type WikiPageSummary struct {
	ID        string    `json:"id"`
	WorldID   string    `json:"worldId"`
	Title     string    `json:"title"`
	Kind      string    `json:"kind"`
	Audience  string    `json:"audience"`
	Version   int64     `json:"version"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// WikiRevision is one stored version of a wiki page.
type WikiRevision struct {
	PageID      string    `json:"pageId"`
	Version     int64     `json:"version"`
	Title       string    `json:"title"`
	Body        string    `json:"body"`
	Kind        string    `json:"kind"`
	Audience    string    `json:"audience"`
	AuthorID    string    `json:"authorId,omitempty"`
	DiffSummary string    `json:"diffSummary,omitempty"`
	CreatedAt   time.Time `json:"createdAt"`
}

// AtlasNode is a place in a world's atlas tree. Level runs 1 (continent)
// to 5 (site).
type AtlasNode struct {
	ID          string          `json:"id"`
	WorldID     string          `json:"worldId"`
	ParentID    string          `json:"parentId,omitempty"`
	Name        string          `json:"name"`
	Level       int             `json:"level"`
	TerrainType string          `json:"terrainType,omitempty"`
	JSON        json.RawMessage `json:"json,omitempty"`
	Version     int64           `json:"version"`
	CreatedAt   time.Time       `json:"createdAt"`
	UpdatedAt   time.Time       `json:"updatedAt"`
}

// POIItem is an item held by a POI.
type POIItem struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// POI is a point of interest on a world's grid.
type POI struct {
	ID       string    `json:"id"`
	WorldID  string    `json:"worldId"`
	Name     string    `json:"name"`
	Category string    `json:"category"`
	Tags     []string  `json:"tags"`
	X        int       `json:"x"`
	Y        int       `json:"y"`
	Items    []POIItem `json:"items"`
	Pickable bool      `json:"pickable"`
	Openable bool      `json:"openable"`
	// Visibility is "gm" (the GM's eyes only) or "party".
	Visibility string    `json:"visibility"`
	Version    int64     `json:"version"`
	CreatedAt  time.Time `json:"createdAt"`
}

// POISight is what a caller sees of a world's POIs. It is the one
// visibility rule of every path that answers with a POI or acts on one
// (POI search, worldforge_player_open, worldforge_player_pickup): a POI the
// caller does not see is not_found to them, the same answer as an id that
// does not exist.
type POISight int

// The POI sights.
const (
	// SeesNoPOIs: strangers to the world.
	SeesNoPOIs POISight = iota
	// SeesPartyPOIs: players and observers, who see the POIs whose
	// Visibility is AudienceParty and no others.
	SeesPartyPOIs
	// SeesAllPOIs: the world's owner and its GMs.
	SeesAllPOIs
)

// POISightOf returns the sight of a caller whose role in the world is role
// (WorldRole's answer: RoleOwner, a member role, or "" for a stranger).
func POISightOf(role string) POISight {
	switch role {
	case RoleOwner, RoleGM:
		return SeesAllPOIs
	case RolePlayer, RoleObserver:
		return SeesPartyPOIs
	}
	return SeesNoPOIs
}

// Sees reports whether a caller with this sight sees p. The store's
// POIQuery.PartyOnly filter is the same test, in SQL.
func (s POISight) Sees(p *POI) bool {
	switch s {
	case SeesAllPOIs:
		return true
	case SeesPartyPOIs:
		return p.Visibility == AudienceParty
	}
	return false
}

// POIQuery is the search_pois request. Zero fields do not filter.
type POIQuery struct {
	Name     string   `json:"name,omitempty"`
	Category string   `json:"category,omitempty"`
	Tags     []string `json:"tags,omitempty"`
	X        *int     `json:"x,omitempty"`
	Y        *int     `json:"y,omitempty"`
	RadiusPx *float64 `json:"radiusPx,omitempty"`
	Limit    int      `json:"limit,omitempty"`
	// PartyOnly restricts results to POIs visible to the party.
	PartyOnly bool `json:"-"`
}

// Check refuses queries that cannot be answered: over the bounds (name and
// category of at most MaxQueryLength characters, at most MaxPOITags tags
// of at most MaxPOITagLength characters each), x without y (or y without
// x), and a radius without a position.
func (q *POIQuery) Check() error {
	if err := CheckLength("request.name", q.Name, MaxQueryLength); err != nil {
		return err
	}
	if err := CheckLength("request.category", q.Category, MaxQueryLength); err != nil {
		return err
	}
	if err := CheckItems("request.tags", len(q.Tags), MaxPOITags); err != nil {
		return err
	}
	for i, t := range q.Tags {
		if err := CheckLength("request.tags["+strconv.Itoa(i)+"]", t, MaxPOITagLength); err != nil {
			return err
		}
	}
	if (q.X == nil) != (q.Y == nil) {
		return BadRequest("request.x and request.y go together")
	}
	if q.RadiusPx != nil && q.X == nil {
		return BadRequest("request.radiusPx needs request.x and request.y")
	}
	return nil
}

// CellSizePx is the pixel scale of one grid cell: a POI search with
// x/y/radiusPx works in pixels, with a cell (x, y) centred on
// ((x+0.5)·CellSizePx, (y+0.5)·CellSizePx).
const CellSizePx = 32

// LoreCollections lists the 17 lore collections.
var LoreCollections = []string{
	"pantheons", "deities", "faiths", "orders", "traditions", "spells",
	"factions", "entries", "artifacts", "rumours", "dynasties", "creatures",
	"festivals", "strongholds", "cultures", "eras", "events",
}

// LoreEntity is one entity of a lore collection. JSON holds the whole
// entity as validated against its collection's schema.
type LoreEntity struct {
	WorldID    string          `json:"-"`
	Collection string          `json:"-"`
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	JSON       json.RawMessage `json:"-"`
	Version    int64           `json:"-"`
	UpdatedAt  time.Time       `json:"-"`
}

// Presence is a player's position in a world.
type Presence struct {
	WorldID   string    `json:"worldId"`
	UserID    string    `json:"userId"`
	X         int       `json:"x"`
	Y         int       `json:"y"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// InventoryItem is an item a player picked up.
type InventoryItem struct {
	WorldID  string    `json:"worldId"`
	UserID   string    `json:"userId"`
	ItemID   string    `json:"itemId"`
	POIID    string    `json:"poiId"`
	Name     string    `json:"name"`
	PickedAt time.Time `json:"pickedAt"`
}

// WorldRuntime is a world's runtime state, kept apart from the authored
// world and merged into read_world's json under "runtime".
type WorldRuntime struct {
	Presence    []Presence      `json:"presence"`
	OpenedPOIs  []string        `json:"openedPois"`
	PickedItems []InventoryItem `json:"pickedItems"`
}

// Proposal kinds and statuses.
const (
	ProposalQuest     = "quest"
	ProposalEncounter = "encounter"
	ProposalWikiPage  = "wiki_page"
	ProposalWikiEdit  = "wiki_edit"
	ProposalAtlas     = "atlas_place"
	ProposalWorld     = "world" // lore operations, pinned to the world version

	ProposalPending   = "pending"
	ProposalCommitted = "committed"
	ProposalRejected  = "rejected"
)

// Proposal is a change an agent filed for review. BaseVersion pins it to the
// target's version at filing time.
type Proposal struct {
	ID          string          `json:"id"`
	WorldID     string          `json:"worldId,omitempty"`
	Kind        string          `json:"kind"`
	TargetID    string          `json:"targetId,omitempty"`
	BaseVersion int64           `json:"baseVersion"`
	Payload     json.RawMessage `json:"payload"`
	DiffSummary string          `json:"diffSummary"`
	ChangesetID string          `json:"changesetId,omitempty"`
	Status      string          `json:"status"`
	ActorID     string          `json:"actorId"`
	KeyID       string          `json:"keyId,omitempty"`
	CreatedAt   time.Time       `json:"createdAt"`
	DecidedAt   *time.Time      `json:"decidedAt,omitempty"`
	DecidedBy   string          `json:"decidedBy,omitempty"`
	// Reason is the reviewer's reason for a rejection ("" if none given).
	Reason string `json:"reason,omitempty"`
}

// AutoAcceptRule commits matching proposals at once.
type AutoAcceptRule struct {
	ID        string    `json:"id"`
	OwnerID   string    `json:"ownerId"`
	WorldID   string    `json:"worldId,omitempty"`
	ActorID   string    `json:"actorId,omitempty"`
	KeyID     string    `json:"keyId,omitempty"`
	Kinds     []string  `json:"kinds"`
	CreatedAt time.Time `json:"createdAt"`
}

// AuditEntry is one row of the audit log: one per successful tool call and
// per REST commit/reject.
type AuditEntry struct {
	// Seq is the row's position in the log (set by ListAudit): later
	// rows have greater Seq.
	Seq        int64     `json:"seq,omitempty"`
	ID         string    `json:"id"`
	ActorID    string    `json:"actorId"`
	KeyID      string    `json:"keyId,omitempty"`
	Tool       string    `json:"tool,omitempty"`
	Route      string    `json:"route,omitempty"`
	TargetType string    `json:"targetType,omitempty"`
	TargetID   string    `json:"targetId,omitempty"`
	WorldID    string    `json:"worldId,omitempty"`
	Outcome    string    `json:"outcome"`
	CreatedAt  time.Time `json:"createdAt"`
}

// AuditFilter selects audit rows. Zero fields do not filter.
type AuditFilter struct {
	ActorID string
	KeyID   string
	Tool    string
	Route   string
	WorldID string
	Outcome string
	// Since and Until bound CreatedAt: Since <= CreatedAt < Until.
	Since, Until time.Time
	// Viewer, when set, keeps the rows the user may read: their own
	// (ActorID) and those of the worlds they own or run as GM.
	Viewer string
	// BeforeSeq, when positive, keeps rows with Seq < BeforeSeq (the
	// next page of a newest-first listing).
	BeforeSeq int64
	Limit     int
}
