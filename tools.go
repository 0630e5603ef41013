package worldforge

import "encoding/json"

// This file holds the argument and result types of the MCP tools: the one
// source of truth for the contract, shared by the server (package
// mcpserver, which derives the input schemas from these types) and the Go
// SDK (package client). Argument names are snake_case as the spec fixes
// them; result rows use the records' camelCase JSON.

// Tool names of the read tools.
const (
	ToolReadWorld        = "read_world"
	ToolReadCampaign     = "read_campaign"
	ToolListCampaigns    = "list_campaigns"
	ToolReadQuest        = "read_quest"
	ToolListQuests       = "list_quests"
	ToolReadEncounter    = "read_encounter"
	ToolListEncounters   = "list_encounters"
	ToolListWikiPages    = "list_wiki_pages"
	ToolReadWikiPage     = "read_wiki_page"
	ToolSearchWikiPages  = "search_wiki_pages"
	ToolWikiPageHistory  = "wiki_page_history"
	ToolListFactions     = "list_factions"
	ToolGetWorldSummary  = "get_world_summary"
	ToolListAtlasPlaces  = "list_atlas_places"
	ToolReadAtlasNode    = "read_atlas_node"
	ToolSearchAtlasNodes = "search_atlas_nodes"
	ToolSearchPOIs       = "search_pois"
	ToolListLore         = "list_lore"
)

// Limits and defaults of the read tools.
const (
	DefaultSearchLimit  = 20
	MaxSearchLimit      = 100
	DefaultHistoryLimit = 50
	MaxHistoryLimit     = 200
	MinAtlasLevel       = 1
	MaxAtlasLevel       = 5
	DefaultPOILimit     = 50
	MaxPOILimit         = 200
	MaxQueryLength      = 200
	// list_lore pages: entities per collection (limit), the most bytes of
	// entity JSON one answer holds (the page ends early, never empty), the
	// most issues listed (issues_total counts them all) and the longest
	// cursor accepted.
	DefaultLoreLimit = 100
	MaxLoreLimit     = 1000
	MaxLorePageBytes = 4 << 20
	MaxLoreIssues    = 500
	MaxCursorLength  = 1024
	// The paged lists (list_campaigns, list_quests, list_encounters,
	// list_wiki_pages, list_factions, list_atlas_places): rows per answer
	// (limit; list_factions: of its pages and of its lore each), the most
	// bytes of row documents one answer holds (atlas nodes, lore entities:
	// the page ends early, never empty) and the longest cursor accepted.
	DefaultPageLimit    = 100
	MaxPageLimit        = 1000
	MaxPageBytes        = 4 << 20
	MaxPageCursorLength = 4096
)

// IDArgs is the argument of the read_* tools that take one id.
type IDArgs struct {
	ID string `json:"id" jsonschema:"the id of the row to read"`
}

// WorldArgs is the argument of tools that take one world.
type WorldArgs struct {
	WorldID string `json:"world_id" jsonschema:"the world's id"`
}

// ListCampaignsArgs are the arguments of list_campaigns.
type ListCampaignsArgs struct {
	Limit  int    `json:"limit,omitempty" jsonschema:"most rows in this answer"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of an earlier answer of this tool with the same other arguments: the page after it"`
}

// CampaignFilterArgs are the arguments of list_quests and list_encounters:
// a campaign filter and paging.
type CampaignFilterArgs struct {
	CampaignID string `json:"campaign_id,omitempty" jsonschema:"only rows of this campaign"`
	Limit      int    `json:"limit,omitempty" jsonschema:"most rows in this answer"`
	Cursor     string `json:"cursor,omitempty" jsonschema:"next_cursor of an earlier answer of this tool with the same other arguments: the page after it"`
}

// ListWikiPagesArgs are the arguments of list_wiki_pages.
type ListWikiPagesArgs struct {
	WorldID string `json:"world_id" jsonschema:"the world's id"`
	Kind    string `json:"kind,omitempty" jsonschema:"only pages of this kind"`
	Limit   int    `json:"limit,omitempty" jsonschema:"most rows in this answer"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"next_cursor of an earlier answer of this tool with the same other arguments: the page after it"`
}

// ListFactionsArgs are the arguments of list_factions.
type ListFactionsArgs struct {
	WorldID string `json:"world_id" jsonschema:"the world's id"`
	Limit   int    `json:"limit,omitempty" jsonschema:"most faction pages, and most lore factions, in this answer"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"next_cursor of an earlier answer of this tool with the same other arguments: the page after it"`
}

// SearchWikiPagesArgs are the arguments of search_wiki_pages.
type SearchWikiPagesArgs struct {
	WorldID string `json:"world_id,omitempty" jsonschema:"search one world; by default every world you own or run as GM"`
	Q       string `json:"q,omitempty" jsonschema:"text to find in titles and bodies (case-insensitive)"`
	Kind    string `json:"kind,omitempty" jsonschema:"only pages of this kind"`
	Limit   int    `json:"limit,omitempty" jsonschema:"most results to return"`
}

// WikiPageHistoryArgs are the arguments of wiki_page_history.
type WikiPageHistoryArgs struct {
	ID    string `json:"id" jsonschema:"the wiki page's id"`
	Limit int    `json:"limit,omitempty" jsonschema:"most revisions to return, newest first"`
}

// ListAtlasPlacesArgs are the arguments of list_atlas_places.
type ListAtlasPlacesArgs struct {
	WorldID string `json:"world_id" jsonschema:"the world's id"`
	Level   int    `json:"level,omitempty" jsonschema:"only places of this level (1 continent … 5 site)"`
	Limit   int    `json:"limit,omitempty" jsonschema:"most rows in this answer"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"next_cursor of an earlier answer of this tool with the same other arguments: the page after it"`
}

// SearchAtlasNodesArgs are the arguments of search_atlas_nodes.
type SearchAtlasNodesArgs struct {
	WorldID string `json:"world_id,omitempty" jsonschema:"search one world; by default every world you own or run as GM"`
	Q       string `json:"q,omitempty" jsonschema:"text to find in place names (case-insensitive)"`
	Limit   int    `json:"limit,omitempty" jsonschema:"most results to return"`
}

// SearchPOIsArgs are the arguments of search_pois.
type SearchPOIsArgs struct {
	WorldID string   `json:"world_id" jsonschema:"the world's id"`
	Request POIQuery `json:"request,omitzero" jsonschema:"the search; every field optional, unknown fields ignored"`
}

// ListLoreArgs are the arguments of list_lore.
type ListLoreArgs struct {
	WorldID    string `json:"world_id" jsonschema:"the world's id"`
	Collection string `json:"collection,omitempty" jsonschema:"one lore collection; all when absent"`
	Limit      int    `json:"limit,omitempty" jsonschema:"most entities per collection in this answer"`
	Cursor     string `json:"cursor,omitempty" jsonschema:"next_cursor (or a value of next_cursors) of an earlier answer: the next page of that collection"`
}

// The results of the paged lists carry NextCursor, the cursor of the next
// page, only when rows follow the page: an answer without it is the list's
// end (and a list that fits one page answers as it did before paging).

// CampaignList is the result of list_campaigns: one page of the caller's
// campaigns, most recently updated first, then by id.
type CampaignList struct {
	Campaigns  []DocSummary `json:"campaigns"`
	NextCursor string       `json:"next_cursor,omitempty"`
}

// QuestList is the result of list_quests: one page, ordered as
// CampaignList.
type QuestList struct {
	Quests     []DocSummary `json:"quests"`
	NextCursor string       `json:"next_cursor,omitempty"`
}

// EncounterList is the result of list_encounters: one page, ordered as
// CampaignList.
type EncounterList struct {
	Encounters []DocSummary `json:"encounters"`
	NextCursor string       `json:"next_cursor,omitempty"`
}

// WikiPageList is the result of list_wiki_pages (one page, by title then
// id) and search_wiki_pages (never a cursor).
type WikiPageList struct {
	Pages      []WikiPageSummary `json:"pages"`
	NextCursor string            `json:"next_cursor,omitempty"`
}

// WikiHistory is the result of wiki_page_history.
type WikiHistory struct {
	PageID    string         `json:"pageId"`
	Revisions []WikiRevision `json:"revisions"`
}

// FactionList is the result of list_factions: the world's faction wiki
// pages (by title, then id) and its entities of the lore collection
// "factions" (by name, then id), paged side by side: an answer holds up to
// limit of each, and NextCursor continues both (a part already listed
// whole answers empty on the later pages).
type FactionList struct {
	WorldID    string            `json:"worldId"`
	Pages      []WikiPageSummary `json:"pages"`
	Lore       []RawEntity       `json:"lore"`
	NextCursor string            `json:"next_cursor,omitempty"`
}

// WorldSummary is the result of get_world_summary.
type WorldSummary struct {
	WorldID    string         `json:"worldId"`
	Name       string         `json:"name"`
	WikiPages  map[string]int `json:"wikiPages"`
	WikiTotal  int            `json:"wikiTotal"`
	AtlasNodes int            `json:"atlasNodes"`
}

// AtlasPlaceList is the result of list_atlas_places (one page, by level,
// name, then id) and search_atlas_nodes (never a cursor).
type AtlasPlaceList struct {
	Places     []AtlasNode `json:"places"`
	NextCursor string      `json:"next_cursor,omitempty"`
}

// POIList is the result of search_pois.
type POIList struct {
	POIs []POI `json:"pois"`
}

// RawEntity is a lore entity as stored: the validated JSON object.
type RawEntity = json.RawMessage

// LoreIssue is an integrity problem in a world's lore, reported by list_lore
// without blocking anything (a dangling cross-reference, say).
type LoreIssue struct {
	Collection string `json:"collection"`
	ID         string `json:"id"`
	// Kind is dangling_reference, self_reference, duplicate_name,
	// era_order, event_outside_era or invalid_entity.
	Kind   string   `json:"kind"`
	Field  string   `json:"field,omitempty"`
	Detail string   `json:"detail"`
	Ref    *LoreRef `json:"ref,omitempty"`
}

// LoreRef names a lore entity.
type LoreRef struct {
	Collection string `json:"collection"`
	ID         string `json:"id"`
}

// LorePreset is a named bundle of lore entities that propose_lore's
// add_preset operation adds.
type LorePreset struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// Entities counts the entities the preset adds, per collection.
	Entities map[string]int `json:"entities"`
}

// LoreOverview is the result of list_lore without a collection. Lore
// holds the first page of each collection (in id order); a collection with
// more entities than its page has its cursor in NextCursors, and its count
// in Counts says how many there are in all.
type LoreOverview struct {
	Lore    map[string][]RawEntity `json:"lore"`
	Counts  map[string]int         `json:"counts"`
	Issues  []LoreIssue            `json:"issues"`
	Presets []LorePreset           `json:"presets"`
	// NextCursors maps each collection not listed whole to the cursor of
	// its next page (list_lore {world_id, cursor}); absent when every
	// collection is whole.
	NextCursors map[string]string `json:"next_cursors,omitempty"`
	// IssuesTotal counts the issues; Issues lists the first MaxLoreIssues.
	IssuesTotal int `json:"issues_total"`
}

// LoreCollectionList is the result of list_lore with a collection (or a
// cursor): one page of its entities, in id order.
type LoreCollectionList struct {
	Collection string         `json:"collection"`
	Items      []RawEntity    `json:"items"`
	Counts     map[string]int `json:"counts"`
	Issues     []LoreIssue    `json:"issues"`
	// NextCursor, when set, is the cursor of the next page; absent on the
	// last page.
	NextCursor string `json:"next_cursor,omitempty"`
	// IssuesTotal counts the collection's issues; Issues lists the first
	// MaxLoreIssues.
	IssuesTotal int `json:"issues_total"`
}

// Tool names of the world tools (direct writes, applied at once).
const (
	ToolCreateWorld  = "worldforge_create_world"
	ToolResizeWorld  = "worldforge_resize_world"
	ToolPlayerPickup = "worldforge_player_pickup"
	ToolPlayerOpen   = "worldforge_player_open"
)

// Limits of the world tools.
const (
	MaxWorldNameLength = 120
	MaxGridSide        = 4096
)

// CreateWorldArgs are the arguments of worldforge_create_world. The tool
// also takes the seed as a string (see ParseSeed); a Go client holding a
// word passes ParseSeed's integer, which gives the same world.
type CreateWorldArgs struct {
	Name     string `json:"name" jsonschema:"the world's name, 1–120 characters"`
	Template string `json:"template,omitempty" jsonschema:"a template id: starter-jungle, starter-dungeon, starter-city, starter-desert, starter-wetland, starter-archipelago, starter-volcanic, starter-caverns or empty-hex; absent for a blank grid"`
	Seed     *int64 `json:"seed,omitempty" jsonschema:"the generation seed; absent for a random one (returned)"`
	Size     string `json:"size,omitempty" jsonschema:"small, medium (default) or large"`
	Populate *bool  `json:"populate,omitempty" jsonschema:"false for terrain only (no POIs, atlas, wiki pages or lore); default true"`
}

// CreateWorldResult is the result of worldforge_create_world.
type CreateWorldResult struct {
	ID       string `json:"id"`
	Version  int64  `json:"version"`
	Template string `json:"template"`
	Seed     int64  `json:"seed"`
	Cols     int    `json:"cols"`
	Rows     int    `json:"rows"`
}

// ResizeWorldArgs are the arguments of worldforge_resize_world. The sizes
// are numbers rather than integers in the schema so that the tool can
// answer the spec's own codes (non_integer, too_small, out_of_bounds_cap,
// no_size) rather than a schema error.
type ResizeWorldArgs struct {
	WorldID string   `json:"world_id" jsonschema:"the world's id"`
	Cols    *float64 `json:"cols,omitempty" jsonschema:"the new number of columns, 1–4096"`
	Rows    *float64 `json:"rows,omitempty" jsonschema:"the new number of rows, 1–4096"`
}

// Cell is a grid cell.
type Cell struct {
	X int `json:"x" jsonschema:"the column, from 0"`
	Y int `json:"y" jsonschema:"the row, from 0"`
}

// PlayerPickupArgs are the arguments of worldforge_player_pickup.
type PlayerPickupArgs struct {
	WorldID string `json:"world_id" jsonschema:"the world's id"`
	POIID   string `json:"poi_id" jsonschema:"the POI holding the item"`
	ItemID  string `json:"item_id" jsonschema:"the item to pick up"`
	Cell    Cell   `json:"cell" jsonschema:"the POI's cell"`
}

// PlayerOpenArgs are the arguments of worldforge_player_open.
type PlayerOpenArgs struct {
	WorldID string `json:"world_id" jsonschema:"the world's id"`
	POIID   string `json:"poi_id" jsonschema:"the POI to open"`
	Cell    Cell   `json:"cell" jsonschema:"the POI's cell"`
}

// PickupResult is the result of worldforge_player_pickup.
type PickupResult struct {
	Item InventoryItem `json:"item"`
}

// OpenResult is the result of worldforge_player_open: the POI with what it
// holds, and whether this call opened it (false: it was open already).
type OpenResult struct {
	POI    POI  `json:"poi"`
	Opened bool `json:"opened"`
	First  bool `json:"first"`
}

// Tool names of the write path.
const (
	ToolProposeQuest      = "propose_quest"
	ToolProposeEncounter  = "propose_encounter"
	ToolProposeWikiPage   = "propose_wiki_page"
	ToolProposeWikiEdit   = "propose_wiki_edit"
	ToolProposeAtlasPlace = "propose_atlas_place"
	ToolProposeLore       = "propose_lore"
	ToolCommitQuest       = "commit_quest"
	ToolCommitEncounter   = "commit_encounter"
	ToolCreateCampaign    = "create_campaign"
)

// Limits of the write path.
const (
	MaxDiffSummary     = 500
	MaxNameLength      = 120
	MaxTitleLength     = 200
	MaxPlaceNameLength = 200
	MaxTerrainType     = 50
	MaxLoreOperations  = 100
)

// ProposeQuestArgs are the arguments of propose_quest and
// propose_encounter.
type ProposeQuestArgs struct {
	ID          string              `json:"id,omitempty" jsonschema:"the quest (encounter) to change; absent for a new one"`
	Payload     QuestProposalFields `json:"payload" jsonschema:"the new name and JSON document"`
	DiffSummary string              `json:"diff_summary" jsonschema:"what the change does, for the reviewer (≤ 500 characters)"`
	ChangesetID string              `json:"changeset_id,omitempty" jsonschema:"groups proposals into a changeset reviewed as a unit"`
}

// QuestProposalFields is propose_quest's payload.
type QuestProposalFields struct {
	Name string `json:"name,omitempty" jsonschema:"1–120 characters; required for a new quest, kept when absent on a change"`
	JSON any    `json:"json,omitempty" jsonschema:"the document (a JSON object); kept when absent on a change"`
}

// ProposeWikiPageArgs are the arguments of propose_wiki_page.
type ProposeWikiPageArgs struct {
	WorldID     string             `json:"world_id" jsonschema:"the world's id"`
	Payload     WikiPageProposalFs `json:"payload" jsonschema:"the page; keys other than these pass and are ignored"`
	DiffSummary string             `json:"diff_summary" jsonschema:"what the change does, for the reviewer (≤ 500 characters)"`
	ChangesetID string             `json:"changeset_id,omitempty" jsonschema:"groups proposals into a changeset reviewed as a unit"`
}

// WikiPageProposalFs is propose_wiki_page's payload.
type WikiPageProposalFs struct {
	Title    string `json:"title,omitempty" jsonschema:"1–200 characters (required)"`
	Body     string `json:"body,omitempty" jsonschema:"Markdown"`
	Kind     string `json:"kind,omitempty" jsonschema:"lore (default), faction, place or quest-log"`
	Audience string `json:"audience,omitempty" jsonschema:"gm (default) or party"`
}

// ProposeWikiEditArgs are the arguments of propose_wiki_edit.
type ProposeWikiEditArgs struct {
	PageID      string             `json:"page_id" jsonschema:"the page to change"`
	Payload     WikiEditProposalFs `json:"payload" jsonschema:"the fields to change; at least one"`
	DiffSummary string             `json:"diff_summary" jsonschema:"what the change does, for the reviewer (≤ 500 characters)"`
	ChangesetID string             `json:"changeset_id,omitempty" jsonschema:"groups proposals into a changeset reviewed as a unit"`
}

// WikiEditProposalFs is propose_wiki_edit's payload.
type WikiEditProposalFs struct {
	Title    *string `json:"title,omitempty" jsonschema:"1–200 characters"`
	Body     *string `json:"body,omitempty" jsonschema:"Markdown"`
	Audience *string `json:"audience,omitempty" jsonschema:"gm or party"`
}

// ProposeAtlasPlaceArgs are the arguments of propose_atlas_place.
type ProposeAtlasPlaceArgs struct {
	WorldID     string               `json:"world_id" jsonschema:"the world's id"`
	Payload     AtlasPlaceProposalFs `json:"payload" jsonschema:"the new place"`
	DiffSummary string               `json:"diff_summary" jsonschema:"what the change does, for the reviewer (≤ 500 characters)"`
	ChangesetID string               `json:"changeset_id,omitempty" jsonschema:"groups proposals into a changeset reviewed as a unit"`
}

// AtlasPlaceProposalFs is propose_atlas_place's payload.
type AtlasPlaceProposalFs struct {
	Name        string `json:"name" jsonschema:"1–200 characters"`
	TerrainType string `json:"terrainType,omitempty" jsonschema:"≤ 50 characters"`
	ParentID    string `json:"parentId,omitempty" jsonschema:"the parent place; absent for a level-1 place"`
}

// ProposeLoreArgs are the arguments of propose_lore.
type ProposeLoreArgs struct {
	WorldID     string        `json:"world_id" jsonschema:"the world's id"`
	Operations  []LoreOpInput `json:"operations" jsonschema:"1–100 operations, applied in order when committed"`
	DiffSummary string        `json:"diff_summary" jsonschema:"what the change does, for the reviewer (≤ 500 characters)"`
	ChangesetID string        `json:"changeset_id,omitempty" jsonschema:"groups proposals into a changeset reviewed as a unit"`
}

// LoreOpInput is one propose_lore operation: {op:"upsert", collection,
// entity}, {op:"remove", collection, id} or {op:"add_preset", preset_id}.
type LoreOpInput struct {
	Op         string `json:"op" jsonschema:"upsert, remove or add_preset"`
	Collection string `json:"collection,omitempty" jsonschema:"the lore collection (upsert, remove)"`
	Entity     any    `json:"entity,omitempty" jsonschema:"the entity, validated against the collection's schema (upsert)"`
	ID         string `json:"id,omitempty" jsonschema:"the entity to remove (remove)"`
	PresetID   string `json:"preset_id,omitempty" jsonschema:"the preset to add (add_preset)"`
}

// ProposeResult is the result of the propose tools. AuditID equals
// ProposalID (kept for older clients); AutoAccepted appears when one of
// the owner's auto-accept rules committed the proposal at once.
type ProposeResult struct {
	ProposalID   string `json:"proposal_id"`
	AuditID      string `json:"audit_id"`
	WorldID      string `json:"world_id,omitempty"`
	ChangesetID  string `json:"changeset_id,omitempty"`
	AutoAccepted *bool  `json:"auto_accepted,omitempty"`
}

// CommitArgs are the arguments of commit_quest and commit_encounter.
type CommitArgs struct {
	ProposalID string `json:"proposal_id" jsonschema:"the proposal to commit"`
	Confirm    bool   `json:"confirm" jsonschema:"must be the literal true"`
}

// CreateCampaignArgs are the arguments of create_campaign.
type CreateCampaignArgs struct {
	Name    string `json:"name" jsonschema:"1–120 characters"`
	WorldID string `json:"world_id,omitempty" jsonschema:"the world the campaign is run in (you own it or are a GM)"`
	JSON    any    `json:"json,omitempty" jsonschema:"the campaign's document (a JSON object)"`
}

// CreatedResult is the result of create_campaign.
type CreatedResult struct {
	ID      string `json:"id"`
	Version int64  `json:"version"`
}
