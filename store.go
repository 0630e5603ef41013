package worldforge

import (
	"context"
	"io"
	"time"
)

// Store is everything the server keeps. Package sqlstore implements it on
// SQLite and on PostgreSQL; both pass the same test suite.
//
// Unless a method says otherwise, a missing row is ErrNotFound (code
// not_found), and creating a row sets its Version to 1 and its timestamps.
// Create methods fill in an empty ID with NewID.
//
// A store may enforce Quotas (package sqlstore: DB.SetQuotas). Then
// CreateWorld, CreateWorldContent, ResizeWorld, UpsertLore,
// CreateProposal, CommitProposal, CommitChangeset and CreateAPIKey refuse
// a write that would go over one with QuotaExceeded, checked in the
// write's own transaction, and change nothing.
type Store interface {
	UserStore
	KeyStore
	WorldStore
	CampaignStore
	WikiStore
	AtlasStore
	POIStore
	LoreStore
	AuditStore
	ProposalStore
	SessionStore

	// Secret returns the named server secret, creating it with gen on first
	// use. Every replica on one database sees the same value.
	Secret(ctx context.Context, name string, gen func() ([]byte, error)) ([]byte, error)
	// ReplaceSecret stores a new value for the named secret (rotation).
	ReplaceSecret(ctx context.Context, name string, value []byte) error

	// Ping checks that the database answers.
	Ping(ctx context.Context) error
	Close() error
}

// UserStore keeps users.
type UserStore interface {
	CreateUser(ctx context.Context, u *User) error
	FindUserByID(ctx context.Context, id string) (*User, error)
	// FindUsersByName returns the users whose name is exactly name (names
	// are not unique), oldest first, at most 20.
	FindUsersByName(ctx context.Context, name string) ([]User, error)
}

// KeyStore keeps API keys by the SHA-256 of their secret.
type KeyStore interface {
	// CreateAPIKey stores k. Its user must exist (not_found otherwise).
	CreateAPIKey(ctx context.Context, k *APIKey) error
	// FindAPIKeyByHash returns the key, revoked or not.
	FindAPIKeyByHash(ctx context.Context, hash []byte) (*APIKey, error)
	// RevokeAPIKey marks the key revoked. Revoking a revoked key is not an
	// error; an unknown hash is not_found.
	RevokeAPIKey(ctx context.Context, hash []byte) error
	// FindAPIKeyByID returns the key with that id, revoked or not.
	FindAPIKeyByID(ctx context.Context, id string) (*APIKey, error)
	// ListAPIKeys lists a user's keys, revoked ones included, newest
	// first.
	ListAPIKeys(ctx context.Context, userID string) ([]APIKey, error)
	// RevokeUserAPIKey revokes the key with that id if userID owns it;
	// anyone else's key, or a missing one, is not_found. Revoking a
	// revoked key is not an error.
	RevokeUserAPIKey(ctx context.Context, userID, id string) error
	// TouchAPIKey records that the key was used at the given time (it
	// keeps the later of the stored and the given time).
	TouchAPIKey(ctx context.Context, id string, at time.Time) error
}

// WorldStore keeps worlds, their membership and runtime state.
type WorldStore interface {
	CreateWorld(ctx context.Context, w *World) error
	// FindWorldHeader returns the world without its document (JSON nil).
	FindWorldHeader(ctx context.Context, id string) (*World, error)
	// AddWorldMember sets the user's role in the world (gm, player or
	// observer), replacing an earlier role. World and user must exist.
	AddWorldMember(ctx context.Context, worldID, userID, role string) error
	// WorldRole returns the user's role in the world: RoleOwner, a member
	// role, or "" for a stranger. A missing world is not_found.
	WorldRole(ctx context.Context, worldID, userID string) (string, error)
	// WorldAccess is WorldRole with the world's owner, from the same one
	// query.
	WorldAccess(ctx context.Context, worldID, userID string) (owner, role string, err error)
	// WorldsWhereGM lists the ids of worlds the user owns or is a GM of.
	WorldsWhereGM(ctx context.Context, userID string) ([]string, error)
	// ListReviewWorlds lists the worlds the user owns or runs as GM, by
	// name then id, each with the user's role and its count of pending
	// proposals.
	ListReviewWorlds(ctx context.Context, userID string) ([]WorldListing, error)
	// ListWorldMembers lists a world's members (not its owner), by role
	// then user name, with each member's name.
	ListWorldMembers(ctx context.Context, worldID string) ([]WorldMember, error)
	// RemoveWorldMember removes the user from the world's membership; a
	// user who is not a member is not_found.
	RemoveWorldMember(ctx context.Context, worldID, userID string) error
	// ReadWorld returns the world and its runtime state together (one
	// round trip where the engine allows).
	ReadWorld(ctx context.Context, worldID string) (*World, *WorldRuntime, error)
	// ReadWorldDeferred is ReadWorld, except that a document kept in
	// pieces (package sqlstore keeps one above a size) is not read:
	// w.JSON is then nil and doc describes it. For a document kept whole,
	// w.JSON holds it and doc is nil or, when the store recorded its form
	// when writing it, has Inline set. read_world then sends a document
	// kept in pieces to the client as it reads it (StreamWorld), instead
	// of holding it whole.
	ReadWorldDeferred(ctx context.Context, worldID string) (w *World, rt *WorldRuntime, doc *DocInfo, err error)
	// ReadWorldSince is ReadWorldDeferred for a caller that holds an
	// answer read at stamp (0 for none). The store gives a world a new
	// stamp, never used before, in every transaction that changes what
	// ReadWorldDeferred returns for it, whichever process writes. When
	// stamp is still the world's, ReadWorldSince returns nil parts and
	// that stamp (unchanged: the caller's answer is current); otherwise
	// what ReadWorldDeferred returns, with the stamp of that state (0 if
	// the world has none: do not keep the answer).
	ReadWorldSince(ctx context.Context, worldID string, stamp int64) (w *World, rt *WorldRuntime, doc *DocInfo, now int64, err error)
	// StreamWorld reads the world, its runtime state and its document
	// from one snapshot of the store, which no concurrent write changes.
	// When the document is kept whole, doc is nil and w.JSON holds it;
	// otherwise w.JSON is nil and doc reads it (what the snapshot held,
	// however long the caller takes), and the caller must close doc.
	StreamWorld(ctx context.Context, worldID string) (w *World, rt *WorldRuntime, doc DocReader, err error)
	// SetPresence places a player in a world. A cell outside the world's
	// grid (a side of 0 is unbounded) is bad_request and stores nothing;
	// the check and the write are atomic with ResizeWorld, so no presence
	// outlives a shrink that leaves it outside.
	SetPresence(ctx context.Context, p *Presence) error
	// CreateWorldContent stores a new world at version 1 with its content
	// in one transaction: either all of it is stored or none. Atlas nodes
	// must come parents first. IDs left empty are assigned.
	CreateWorldContent(ctx context.Context, w *World, c *WorldContent, authorID string) error
	// ResizeWorld runs fn on the world (with its document), its POIs and
	// its runtime state in one transaction and stores the plan it returns:
	// the new document and size, with the world's version raised by one,
	// and the POIs, presence, opened marks and picked items the plan drops
	// deleted. No player action or presence write on the world interleaves.
	// An error from fn changes nothing and is returned as it is.
	ResizeWorld(ctx context.Context, worldID string, fn ResizeFunc) (*World, error)
	// CheckResizeQuota tells, before any resize work, whether resizing the
	// world to cols × rows would take its owner over the cells quota
	// (quota_exceeded: cells); a missing world is not_found. It is advice
	// read outside any transaction, so that a refused resize costs a
	// query, not the engine's work: ResizeWorld checks again, atomically.
	CheckResizeQuota(ctx context.Context, worldID string, cols, rows int) error
	// PickUp moves an item of a POI into the player's inventory in one
	// transaction, after check has approved the player's presence and the
	// POI. No presence is conflict: no_presence; a POI not in the world is
	// not_found; an item the POI does not hold, or that someone already
	// took, is bad_request: unknown_item — so of two players racing for one
	// item exactly one gets it.
	PickUp(ctx context.Context, worldID, userID, poiID, itemID string, check PlayCheck) (*InventoryItem, error)
	// OpenPOI marks a POI opened, after check has approved the player's
	// presence and the POI; opening an open POI again is not an error.
	// first reports whether this call opened it.
	OpenPOI(ctx context.Context, worldID, userID, poiID string, check PlayCheck) (poi *POI, first bool, err error)
}

// WorldContent is what a new world comes with.
type WorldContent struct {
	POIs       []POI
	AtlasNodes []AtlasNode
	WikiPages  []WikiPage
	Lore       []LoreEntity
}

// ResizeFunc computes a resize from the world, its POIs and its runtime
// state.
type ResizeFunc func(w *World, pois []POI, rt *WorldRuntime) (*ResizePlan, error)

// ResizePlan is what a resize stores: the new document and size, and what
// it deletes, each named by its key in the world.
type ResizePlan struct {
	Doc        []byte
	Cols, Rows int
	// DropPOIs are the ids of the POIs to delete.
	DropPOIs []string
	// DropPresence are the user ids whose presence to delete.
	DropPresence []string
	// DropOpened are the ids of the POIs whose opened mark to delete.
	DropOpened []string
	// DropPicked are the item ids of the picked items to delete.
	DropPicked []string
}

// PlayCheck approves (nil) or refuses a player action on a POI, given the
// player's presence in the world.
type PlayCheck func(presence *Presence, poi *POI) error

// CampaignStore keeps campaigns, quests and encounters.
type CampaignStore interface {
	CreateCampaign(ctx context.Context, c *Campaign) error
	FindCampaignByID(ctx context.Context, id string) (*Campaign, error)

	CreateQuest(ctx context.Context, q *Quest) error
	FindQuestByID(ctx context.Context, id string) (*Quest, error)

	CreateEncounter(ctx context.Context, e *Encounter) error
	FindEncounterByID(ctx context.Context, id string) (*Encounter, error)

	// ListCampaignsPage, ListQuestsPage and ListEncountersPage return one
	// page of the owner's campaigns, quests and encounters (of one
	// campaign when campaignID is set), most recently updated first, then
	// by id (a PageKey gives UpdatedAt and ID), read through an index.
	ListCampaignsPage(ctx context.Context, ownerID string, q PageQuery) (*Page[DocSummary], error)
	ListQuestsPage(ctx context.Context, ownerID, campaignID string, q PageQuery) (*Page[DocSummary], error)
	ListEncountersPage(ctx context.Context, ownerID, campaignID string, q PageQuery) (*Page[DocSummary], error)
}

// PageQuery asks for one page of a list read in keyset order: the rows
// after After, at most Limit of them. A page's cost does not grow with the
// list: the store reads it through an index in the list's order.
type PageQuery struct {
	// After is the position of the previous page's last row; nil starts
	// at the list's first row.
	After *PageKey
	// Limit is the most rows the page holds (DefaultPageLimit when not
	// positive, at most MaxPageLimit).
	Limit int
	// MaxBytes, when positive, ends the page before the row whose JSON
	// document would bring the page's total over it (lists of rows with
	// documents: atlas nodes, lore entities); a page holds at least one
	// row, however large.
	MaxBytes int
}

// PageKey is a row's position in a list: the values the list is ordered
// by, the last of which is always the row's id. Rows inserted while a
// list is walked page by page never appear twice: each page starts
// strictly after the key of the previous page's last row.
type PageKey struct {
	// ID is the row's id (ids compare as the database compares text).
	ID string
	// UpdatedAt is the row's update time in unix milliseconds: the key of
	// campaigns, quests and encounters (newest first).
	UpdatedAt int64
	// Level is an atlas node's level, its list's first key.
	Level int
	// Name is a wiki page's title, an atlas node's or a lore entity's
	// name.
	Name string
	// FromRow says that Level and Name are not given: the store reads
	// them from the row ID of the list's world. A cursor carries a row so
	// when its name is too long to carry; a row that has left the list
	// since is bad_request.
	FromRow bool
}

// Page is one page of a list.
type Page[T any] struct {
	Items []T
	// More reports that rows follow the last of Items.
	More bool
}

// WikiSearch is a wiki search. WorldIDs limits it to those worlds (the
// caller's own and GM worlds); Q matches title or body, case-insensitive.
type WikiSearch struct {
	WorldIDs []string
	Q        string
	Kind     string
	Limit    int
}

// WikiStore keeps wiki pages and their revisions.
type WikiStore interface {
	// CreateWikiPage stores the page and its first revision.
	CreateWikiPage(ctx context.Context, p *WikiPage, authorID string) error
	FindWikiPageByID(ctx context.Context, id string) (*WikiPage, error)
	// ListWikiPagesPage returns one page of the live pages of a world, of
	// one kind when kind is set, by title, then id (a PageKey gives Name
	// and ID).
	ListWikiPagesPage(ctx context.Context, worldID, kind string, q PageQuery) (*Page[WikiPageSummary], error)
	SearchWikiPages(ctx context.Context, s WikiSearch) ([]WikiPageSummary, error)
	// WikiPageHistory lists revisions newest first.
	WikiPageHistory(ctx context.Context, pageID string, limit int) ([]WikiRevision, error)
	// CountWikiPages counts live pages of a world by kind.
	CountWikiPages(ctx context.Context, worldID string) (map[string]int, error)
}

// AtlasSearch is an atlas search, scoped like WikiSearch.
type AtlasSearch struct {
	WorldIDs []string
	Q        string
	Limit    int
}

// AtlasStore keeps atlas nodes.
type AtlasStore interface {
	CreateAtlasNode(ctx context.Context, n *AtlasNode) error
	FindAtlasNodeByID(ctx context.Context, id string) (*AtlasNode, error)
	// ListAtlasNodesPage returns one page of a world's nodes, of one
	// level when level > 0, by level, name, then id (a PageKey gives
	// Level, Name and ID).
	ListAtlasNodesPage(ctx context.Context, worldID string, level int, q PageQuery) (*Page[AtlasNode], error)
	SearchAtlasNodes(ctx context.Context, s AtlasSearch) ([]AtlasNode, error)
	CountAtlasNodes(ctx context.Context, worldID string) (int, error)
}

// POIStore keeps POIs.
type POIStore interface {
	CreatePOI(ctx context.Context, p *POI) error
	// FindPOIByID returns the POI, or not_found.
	FindPOIByID(ctx context.Context, id string) (*POI, error)
	// ListPOIs returns every POI of a world, by id.
	ListPOIs(ctx context.Context, worldID string) ([]POI, error)
	// SearchPOIs answers a POI query on one world, nearest first when a
	// position is given, by name otherwise. Any number of tags makes one
	// query (callers bound them with POIQuery.Check).
	SearchPOIs(ctx context.Context, worldID string, q POIQuery) ([]POI, error)
}

// LoreStore keeps lore entities.
type LoreStore interface {
	// UpsertLore creates or replaces an entity (its version rises by one).
	UpsertLore(ctx context.Context, e *LoreEntity) error
	// FindLore returns one entity of a world's collection by id, or
	// not_found (for an unknown collection too).
	FindLore(ctx context.Context, worldID, collection, id string) (*LoreEntity, error)
	// ListLoreByNamePage returns one page of a collection's entities by
	// name, then id (a PageKey gives Name and ID).
	// Only the collection "factions" (list_factions) has an index in that
	// order; another collection is sorted whole for each page. An unknown
	// collection is bad_request.
	ListLoreByNamePage(ctx context.Context, worldID, collection string, q PageQuery) (*Page[LoreEntity], error)
	// CountLore counts a world's entities per collection (every collection
	// present, zero included).
	CountLore(ctx context.Context, worldID string) (map[string]int, error)
	// ListLorePage returns one page of a collection's entities in id order
	// (ids compare bytewise), read through an index: its cost does not
	// grow with the world. An unknown collection is bad_request.
	ListLorePage(ctx context.Context, q LorePageQuery) (*LorePage, error)
	// LoreIssues returns the integrity issues of a world's lore (those of
	// one collection's entities when collection is set) as
	// engine/lore.Issues would find them, in its order: at most limit of
	// them, and how many there are in all. Entities are validated when
	// they are written, not here: the issues come from facts stored with
	// each entity (see engine/lore.Facts), found with indexed queries.
	LoreIssues(ctx context.Context, worldID, collection string, limit int) (issues []LoreIssue, total int, err error)
}

// LorePageQuery asks for one page of a collection of a world's lore.
type LorePageQuery struct {
	WorldID    string
	Collection string
	// After is the id of the last entity of the previous page: the page
	// holds the entities with greater ids. "" starts at the beginning.
	After string
	// Limit is the most entities the page holds (DefaultLoreLimit when
	// not positive).
	Limit int
	// MaxBytes, when positive, ends the page before the entity whose JSON
	// would bring the page's total over it; a page holds at least one
	// entity, however large.
	MaxBytes int
}

// LorePage is one page of a collection's entities.
type LorePage struct {
	Items []LoreEntity
	// More reports that the collection holds entities after the last of
	// Items (a later page, asked for with After set to that entity's id).
	More bool
}

// AuditStore keeps the audit log.
type AuditStore interface {
	// AppendAudit stores the entry and returns once it is durably
	// committed. Concurrent calls may share one transaction. An empty ID is
	// filled with NewID("aud"); IDs are not checked for uniqueness (they are
	// random), and ListAudit orders by insertion.
	AppendAudit(ctx context.Context, e *AuditEntry) error
	ListAudit(ctx context.Context, f AuditFilter) ([]AuditEntry, error)
	CountAudit(ctx context.Context, f AuditFilter) (int, error)
}

// DocInfo describes a world document as the store recorded it when
// writing it.
type DocInfo struct {
	// Len is the document's length in bytes.
	Len int64
	// SplicesRuntime: the runtime state can be spliced into the document
	// without reading it (a JSON object with no white space around it or
	// just inside its braces, no "runtime" and no \u escape; the serving
	// layer's renderer, package internal/worldjson, defines it).
	SplicesRuntime bool
	// Inline: the document is kept whole (in World.JSON), not in pieces.
	Inline bool
}

// DocReader reads a world document kept in pieces: Len bytes, then io.EOF.
type DocReader interface {
	io.ReadCloser
	Info() DocInfo
}

// ProposalStore keeps proposals, commits them and keeps auto-accept rules.
type ProposalStore interface {
	// CreateProposal stores p as pending (ID, Status and CreatedAt are
	// set), and audit (when not nil) in the same transaction, so that a
	// proposal is never stored without its filing's audit row. A
	// changeset id names a changeset of p's world (for a proposal outside
	// any world, of its proposer), created on first use: changeset ids are
	// scoped, so the same id in another world or of another user is
	// another changeset and never changes the answer.
	CreateProposal(ctx context.Context, p *Proposal, audit *AuditEntry) error
	// FindProposal returns the proposal, or proposal_not_found.
	FindProposal(ctx context.Context, id string) (*Proposal, error)
	// ListProposals lists proposals, newest first.
	ListProposals(ctx context.Context, f ProposalFilter) ([]Proposal, error)
	// CountProposals counts the proposals the filter selects (Limit and
	// Before do not apply).
	CountProposals(ctx context.Context, f ProposalFilter) (int, error)
	// CommitProposal commits one proposal in one transaction: check runs
	// on it first (access rules; its error is returned and nothing
	// changes), then the proposal is claimed (pending → committed, once:
	// a proposal that is not pending is conflict: not_pending), applied
	// with a version predicate (a target changed since filing is
	// version_conflict, one deleted not_found; either way the whole
	// transaction rolls back and the proposal stays pending), and audit
	// is inserted. Nothing is acknowledged before the commit.
	CommitProposal(ctx context.Context, id, deciderID string, check func(*Proposal) error, audit *AuditEntry) (*CommitResult, error)
	// CommitChangeset commits every pending proposal of the world's
	// changeset (the id within worldID's scope), oldest first, in one transaction: all of them or none. check
	// runs on each; audit makes the audit row of each.
	CommitChangeset(ctx context.Context, worldID, changesetID, deciderID string, check func(*Proposal) error, audit func(*Proposal) *AuditEntry) ([]CommitResult, error)
	// PreviewCommit tells what committing the proposal alone would meet
	// now, without keeping anything: it runs CommitProposal's transaction
	// (claim, apply with the version predicate, the lore and quota
	// guards) and rolls it back. nil means the commit would succeed now;
	// otherwise the error is the one CommitProposal would return
	// (proposal_not_found, conflict: not_pending, version_conflict,
	// not_found, bad_request, quota_exceeded). No audit row is written.
	PreviewCommit(ctx context.Context, id string) error
	// RejectProposal marks a pending proposal rejected, with the
	// reviewer's reason (may be empty) and its audit row, in one
	// transaction (check and not_pending as for commits).
	RejectProposal(ctx context.Context, id, deciderID, reason string, check func(*Proposal) error, audit *AuditEntry) (*Proposal, error)

	// CreateAutoAcceptRule stores a rule; one that fails
	// AutoAcceptRule.Check is bad_request.
	CreateAutoAcceptRule(ctx context.Context, r *AutoAcceptRule) error
	// ListAutoAcceptRules lists an owner's rules, oldest first.
	ListAutoAcceptRules(ctx context.Context, ownerID string) ([]AutoAcceptRule, error)
	// DeleteAutoAcceptRule deletes one of the owner's rules, or not_found.
	DeleteAutoAcceptRule(ctx context.Context, ownerID, id string) error
	// MatchAutoAccept reports whether a rule of ownerID covers p: the
	// rule's world (if set) is p's, its actor and key (if set) are p's,
	// and its kinds (if any) include p's.
	MatchAutoAccept(ctx context.Context, ownerID string, p *Proposal) (bool, error)
}

// SessionStore keeps the web console's sessions and one-time login links.
// Both are looked up by the SHA-256 of their secret, which is never
// stored.
type SessionStore interface {
	// CreateSession stores s (ID and CreatedAt are set when empty).
	CreateSession(ctx context.Context, s *Session) error
	// FindSessionByHash returns the session, revoked or expired included.
	FindSessionByHash(ctx context.Context, hash []byte) (*Session, error)
	// RevokeSession marks the session revoked; an unknown hash is
	// not_found, a revoked session is not an error.
	RevokeSession(ctx context.Context, hash []byte) error
	// RevokeUserSessions revokes every live session of the user and
	// returns how many it revoked.
	RevokeUserSessions(ctx context.Context, userID string) (int, error)
	// CreateLoginLink stores l.
	CreateLoginLink(ctx context.Context, l *LoginLink) error
	// UseLoginLink marks the link used, once, and returns it: a link used
	// before is conflict: login_link_used, one past its ExpiresAt at now
	// is conflict: login_link_expired (and stays unused), an unknown hash
	// is not_found.
	UseLoginLink(ctx context.Context, hash []byte, now time.Time) (*LoginLink, error)
}

// Login link conflict details (conflict: <detail>).
const (
	DetailLinkUsed    = "login_link_used"
	DetailLinkExpired = "login_link_expired"
)
