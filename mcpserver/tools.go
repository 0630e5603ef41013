package mcpserver

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"

	wf "github.com/worldforge-go/worldforge"
)

// registrations is the tool table: name, description, scopes, schema
// adjustments and body, grouped as the spec lists them (tools/list shows
// them sorted by name: the go-sdk sorts). Who may call (owner only,
// owner/GM, member) is stated in each description and enforced in the
// body.
var registrations = []registration{
	tool(wf.ToolReadWorld, "Read a world you own: the row with its runtime state (presence, opened POIs, picked items) merged into json.runtime.",
		allOf(wf.ScopeWorldRead), idSchema, (*Server).readWorld),
	tool(wf.ToolReadCampaign, "Read a campaign you own.",
		allOf(wf.ScopeCampaignRead), idSchema, (*Server).readCampaign),
	tool(wf.ToolListCampaigns, "List your campaigns (summaries).",
		allOf(wf.ScopeCampaignRead), nil, (*Server).listCampaigns),
	tool(wf.ToolReadQuest, "Read a quest you own.",
		allOf(wf.ScopeQuestRead), idSchema, (*Server).readQuest),
	tool(wf.ToolListQuests, "List your quests (summaries), optionally of one campaign.",
		allOf(wf.ScopeQuestRead), campaignFilterSchema, (*Server).listQuests),
	tool(wf.ToolReadEncounter, "Read an encounter you own.",
		allOf(wf.ScopeEncounterRead), idSchema, (*Server).readEncounter),
	tool(wf.ToolListEncounters, "List your encounters (summaries), optionally of one campaign.",
		allOf(wf.ScopeEncounterRead), campaignFilterSchema, (*Server).listEncounters),
	tool(wf.ToolListWikiPages, "List the live wiki pages of a world you own or run as GM, optionally of one kind.",
		allOf(wf.ScopeWikiRead), func(s *jsonschema.Schema) { worldIDSchema(s); kindSchema(s) }, (*Server).listWikiPages),
	tool(wf.ToolReadWikiPage, "Read a wiki page of a world you own or run as GM.",
		allOf(wf.ScopeWikiRead), idSchema, (*Server).readWikiPage),
	tool(wf.ToolSearchWikiPages, "Search the live wiki pages of the worlds you own or run as GM by text and kind.",
		allOf(wf.ScopeWikiRead), func(s *jsonschema.Schema) {
			optionalIDSchema(s, "world_id")
			querySchema(s)
			kindSchema(s)
			limitSchema(s, wf.DefaultSearchLimit, wf.MaxSearchLimit)
		}, (*Server).searchWikiPages),
	tool(wf.ToolWikiPageHistory, "List a wiki page's revisions, newest first (world owner or GM).",
		allOf(wf.ScopeWikiRead), func(s *jsonschema.Schema) {
			idSchema(s)
			limitSchema(s, wf.DefaultHistoryLimit, wf.MaxHistoryLimit)
		}, (*Server).wikiPageHistory),
	tool(wf.ToolListFactions, "List a world's factions: its faction wiki pages and its lore factions (world owner or GM).",
		allOf(wf.ScopeWikiRead), worldIDSchema, (*Server).listFactions),
	tool(wf.ToolGetWorldSummary, "Summarise a world you own or run as GM: wiki page counts by kind and the number of atlas nodes.",
		allOf(wf.ScopeWikiRead, wf.ScopeAtlasRead), worldIDSchema, (*Server).getWorldSummary),
	tool(wf.ToolListAtlasPlaces, "List the atlas places of a world you own or run as GM, optionally of one level (1–5).",
		allOf(wf.ScopeAtlasRead), func(s *jsonschema.Schema) {
			worldIDSchema(s)
			p := s.Properties["level"]
			p.Minimum, p.Maximum = ptr(float64(wf.MinAtlasLevel)), ptr(float64(wf.MaxAtlasLevel))
		}, (*Server).listAtlasPlaces),
	tool(wf.ToolReadAtlasNode, "Read an atlas node of a world you own or run as GM.",
		allOf(wf.ScopeAtlasRead), idSchema, (*Server).readAtlasNode),
	tool(wf.ToolSearchAtlasNodes, "Search the atlas places of the worlds you own or run as GM by name.",
		allOf(wf.ScopeAtlasRead), func(s *jsonschema.Schema) {
			optionalIDSchema(s, "world_id")
			querySchema(s)
			limitSchema(s, wf.DefaultSearchLimit, wf.MaxSearchLimit)
		}, (*Server).searchAtlasNodes),
	tool(wf.ToolSearchPOIs, "Search the POIs of a world you own by name, category, tags (all of them) and distance in pixels from x/y (one cell is 32 px). Unknown request fields are ignored.",
		allOf(wf.ScopeWorldRead), poiSchema, (*Server).searchPOIs),
	tool(wf.ToolListLore, "List a world's lore (world owner or GM): every collection with counts, integrity issues and presets, or one collection's items.",
		anyOf(wf.ScopeLoreRead, wf.ScopeWorldRead), func(s *jsonschema.Schema) {
			worldIDSchema(s)
			s.Properties["collection"].Enum = enum(wf.LoreCollections)
		}, (*Server).listLore),

	writeTool(wf.ToolCreateWorld, "Create a world you own, generated from a template (starter-jungle, starter-dungeon, starter-city, starter-desert, starter-wetland, starter-archipelago, starter-volcanic, starter-caverns, empty-hex; none for a blank grid) with a seed (random when absent, and returned) and a size (small 32×24, medium 64×48, large 128×96). populate false gives terrain only. Returns { id, version, template, seed, cols, rows }.",
		allOf(wf.ScopeWorldWrite), false, createWorldSchema, (*Server).createWorld),
	writeTool(wf.ToolResizeWorld, "Resize a world you own to cols × rows (1–4096 each), at once and destructively: cells and POIs that still fit are kept, the rest are dropped. Returns the resize report; refusals are freeform_grid, out_of_bounds_cap, too_small, non_integer, no_grid or no_size. Editors must reload the world.",
		allOf(wf.ScopeWorldWrite), true, worldIDSchema, (*Server).resizeWorld),
	writeTool(wf.ToolPlayerPickup, "Pick up an item from a pickable POI on or next to your cell (your position is the server's presence) into your inventory; world owner or member. Errors: bad_request: too_far / not_pickable / unknown_item, conflict: no_presence, not_found.",
		allOf(wf.ScopeWorldWrite), false, playSchema, (*Server).playerPickup),
	writeTool(wf.ToolPlayerOpen, "Open an openable POI on or next to your cell; world owner or member. Opening an open POI again is not an error. Errors: bad_request: too_far / not_openable, conflict: no_presence, not_found.",
		allOf(wf.ScopeWorldWrite), false, playSchema, (*Server).playerOpen),

	writeTool(wf.ToolProposeQuest, "Propose a new quest (no id; you will own it) or a change to one (its owner, or the owner/GM of its world), pinned to its current version. Nothing changes until it is committed. Returns { proposal_id, audit_id, world_id?, changeset_id?, auto_accepted? }.",
		allOf(wf.ScopeQuestWrite), false, proposeQuestSchema, (*Server).proposeQuest),
	writeTool(wf.ToolProposeEncounter, "Propose a new encounter or a change to one; the same rules as propose_quest.",
		allOf(wf.ScopeEncounterWrite), false, proposeQuestSchema, (*Server).proposeEncounter),
	writeTool(wf.ToolProposeWikiPage, "Propose a new wiki page in a world you own or run as GM (title required, 1–200 characters; kind lore/faction/place/quest-log; audience gm/party).",
		allOf(wf.ScopeWikiPropose), false, proposeWikiPageSchema, (*Server).proposeWikiPage),
	writeTool(wf.ToolProposeWikiEdit, "Propose a change to a wiki page's title, body or audience (owner/GM of its world), pinned to the page's version.",
		allOf(wf.ScopeWikiPropose), false, proposeWikiEditSchema, (*Server).proposeWikiEdit),
	writeTool(wf.ToolProposeAtlasPlace, "Propose a new atlas place (name 1–200, terrainType ≤ 50, optional parentId in the same world; level is the parent's plus one) in a world you own or run as GM.",
		allOf(wf.ScopeAtlasPropose), false, proposeAtlasSchema, (*Server).proposeAtlasPlace),
	writeTool(wf.ToolProposeLore, "Propose 1–100 lore operations on a world you own or run as GM: {op:'upsert',collection,entity} (validated against the collection's schema), {op:'remove',collection,id}, {op:'add_preset',preset_id}. Pinned to the world's version; nothing changes until accepted.",
		anyOf(wf.ScopeLorePropose, wf.ScopeWorldWrite), false, proposeLoreSchema, (*Server).proposeLore),
	writeTool(wf.ToolCommitQuest, "Commit a quest proposal (confirm must be true); the quest's owner only. Claim-once, version-checked, audited in one transaction. Errors: proposal_not_found, not_found, version_conflict, conflict: not_pending.",
		allOf(wf.ScopeQuestCommit), true, commitSchema, (*Server).commitQuest),
	writeTool(wf.ToolCommitEncounter, "Commit an encounter proposal; the same rules as commit_quest.",
		allOf(wf.ScopeEncounterCommit), true, commitSchema, (*Server).commitEncounter),
	writeTool(wf.ToolCreateCampaign, "Create a campaign you own, optionally in a world you own or run as GM. Returns { id, version: 1 }.",
		allOf(wf.ScopeCampaignWrite), false, createCampaignSchema, (*Server).createCampaign),
}

func playSchema(s *jsonschema.Schema) {
	worldIDSchema(s)
	idProp(s.Properties["poi_id"])
	if p, ok := s.Properties["item_id"]; ok {
		idProp(p)
	}
}

// Schema adjustments shared by several tools.

const maxIDLength = 100

func idSchema(s *jsonschema.Schema) { idProp(s.Properties["id"]) }

func worldIDSchema(s *jsonschema.Schema) { idProp(s.Properties["world_id"]) }

func optionalIDSchema(s *jsonschema.Schema, name string) { idProp(s.Properties[name]) }

func campaignFilterSchema(s *jsonschema.Schema) { idProp(s.Properties["campaign_id"]) }

func idProp(p *jsonschema.Schema) {
	p.MinLength, p.MaxLength = ptr(1), ptr(maxIDLength)
}

func kindSchema(s *jsonschema.Schema) { s.Properties["kind"].Enum = enum(wf.WikiKinds) }

func querySchema(s *jsonschema.Schema) { s.Properties["q"].MaxLength = ptr(wf.MaxQueryLength) }

func limitSchema(s *jsonschema.Schema, def, max int) {
	p := s.Properties["limit"]
	p.Minimum, p.Maximum = ptr(1.0), ptr(float64(max))
	p.Default, _ = json.Marshal(def)
}

func poiSchema(s *jsonschema.Schema) {
	worldIDSchema(s)
	r := s.Properties["request"]
	r.AdditionalProperties = nil // extra keys pass through and are ignored
	r.Default = json.RawMessage("{}")
	r.Properties["name"].MaxLength = ptr(wf.MaxQueryLength)
	r.Properties["category"].MaxLength = ptr(wf.MaxQueryLength)
	r.Properties["radiusPx"].Minimum = ptr(0.0)
	lim := r.Properties["limit"]
	lim.Minimum, lim.Maximum = ptr(1.0), ptr(float64(wf.MaxPOILimit))
	lim.Default, _ = json.Marshal(wf.DefaultPOILimit)
}

func enum(values []string) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}

func ptr[T any](v T) *T { return &v }
