package mcpserver

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/app"
)

// registrations is the tool table: name, description, schema adjustments
// and the app operation the tool serves, grouped as the spec lists them
// (tools/list shows them sorted by name: the go-sdk sorts). Each tool's
// access row (scopes and who may call) comes from the app layer's access
// table (app.ToolAccess); each description ends with a sentence made from
// it; the app layer enforces it, and the access matrix test
// (httpapi/matrix_test.go) checks every tool against its row.
var registrations = []registration{
	tool(wf.ToolReadWorld, "Read a world: the row with its runtime state (presence, opened POIs, picked items) merged into json.runtime.",
		idSchema, (*Server).readWorld),
	tool(wf.ToolReadCampaign, "Read a campaign.",
		idSchema, op((*app.Service).ReadCampaign)),
	tool(wf.ToolListCampaigns, "List your campaigns (summaries), most recently updated first."+pagingNote(""),
		pageSchema, op((*app.Service).ListCampaigns)),
	tool(wf.ToolReadQuest, "Read a quest.",
		idSchema, op((*app.Service).ReadQuest)),
	tool(wf.ToolListQuests, "List your quests (summaries), optionally of one campaign, most recently updated first."+pagingNote(""),
		campaignFilterSchema, op((*app.Service).ListQuests)),
	tool(wf.ToolReadEncounter, "Read an encounter.",
		idSchema, op((*app.Service).ReadEncounter)),
	tool(wf.ToolListEncounters, "List your encounters (summaries), optionally of one campaign, most recently updated first."+pagingNote(""),
		campaignFilterSchema, op((*app.Service).ListEncounters)),
	tool(wf.ToolListWikiPages, "List the live wiki pages of a world, optionally of one kind, by title."+pagingNote(""),
		func(s *jsonschema.Schema) { worldIDSchema(s); kindSchema(s); pageSchema(s) }, op((*app.Service).ListWikiPages)),
	tool(wf.ToolReadWikiPage, "Read a wiki page.",
		idSchema, op((*app.Service).ReadWikiPage)),
	tool(wf.ToolSearchWikiPages, "Search live wiki pages by text and kind, in one world or all you may see.",
		func(s *jsonschema.Schema) {
			optionalIDSchema(s, "world_id")
			querySchema(s)
			kindSchema(s)
			limitSchema(s, wf.DefaultSearchLimit, wf.MaxSearchLimit)
		}, op((*app.Service).SearchWikiPages)),
	tool(wf.ToolWikiPageHistory, "List a wiki page's revisions, newest first.",
		func(s *jsonschema.Schema) {
			idSchema(s)
			limitSchema(s, wf.DefaultHistoryLimit, wf.MaxHistoryLimit)
		}, op((*app.Service).WikiPageHistory)),
	tool(wf.ToolListFactions, "List a world's factions: its faction wiki pages (pages, by title) and its lore factions (lore, by name), paged side by side: an answer holds up to limit (default "+strconv.Itoa(wf.DefaultPageLimit)+", at most "+strconv.Itoa(wf.MaxPageLimit)+") of each, the lore ending early before "+strconv.Itoa(wf.MaxPageBytes>>20)+" MB of entity JSON; when either has more, next_cursor is set: pass it back as cursor, with the same world_id, for the next page of both (a part already listed whole comes back empty). No next_cursor: both are complete.",
		func(s *jsonschema.Schema) { worldIDSchema(s); pageSchema(s) }, op((*app.Service).ListFactions)),
	tool(wf.ToolGetWorldSummary, "Summarise a world: wiki page counts by kind and the number of atlas nodes.",
		worldIDSchema, op((*app.Service).GetWorldSummary)),
	tool(wf.ToolListAtlasPlaces, "List the atlas places of a world, optionally of one level (1–5), by level then name."+pagingNote("; a page also ends before "+strconv.Itoa(wf.MaxPageBytes>>20)+" MB of place documents"),
		func(s *jsonschema.Schema) {
			worldIDSchema(s)
			p := s.Properties["level"]
			p.Minimum, p.Maximum = ptr(float64(wf.MinAtlasLevel)), ptr(float64(wf.MaxAtlasLevel))
			pageSchema(s)
		}, op((*app.Service).ListAtlasPlaces)),
	tool(wf.ToolReadAtlasNode, "Read an atlas node.",
		idSchema, op((*app.Service).ReadAtlasNode)),
	tool(wf.ToolSearchAtlasNodes, "Search atlas places by name, in one world or all you may see.",
		func(s *jsonschema.Schema) {
			optionalIDSchema(s, "world_id")
			querySchema(s)
			limitSchema(s, wf.DefaultSearchLimit, wf.MaxSearchLimit)
		}, op((*app.Service).SearchAtlasNodes)),
	tool(wf.ToolSearchPOIs, "Search the POIs of a world by name, category, tags (all of them; at most "+strconv.Itoa(wf.MaxPOITags)+", each at most "+strconv.Itoa(wf.MaxPOITagLength)+" characters) and distance in pixels from x/y (one cell is 32 px). Unknown request fields are ignored.",
		poiSchema, op((*app.Service).SearchPOIs)),
	tool(wf.ToolListLore, "List a world's lore: every collection's first page with counts, integrity issues and presets, or one page of one collection's items (in id order). A collection with more items than its page has a cursor (next_cursor, or next_cursors per collection): pass it back as cursor for the next page. issues lists the first "+strconv.Itoa(wf.MaxLoreIssues)+" issues, issues_total counts them all.",
		func(s *jsonschema.Schema) {
			worldIDSchema(s)
			s.Properties["collection"].Enum = enum(wf.LoreCollections)
			limitSchema(s, wf.DefaultLoreLimit, wf.MaxLoreLimit)
		}, op((*app.Service).ListLore)),

	writeTool(wf.ToolCreateWorld, "Create a world you own, generated from a template (starter-jungle, starter-dungeon, starter-city, starter-desert, starter-wetland, starter-archipelago, starter-volcanic, starter-caverns, empty-hex; none for a blank grid) with a seed (an integer within ±2^53, or a string: digits are that integer, a word maps to a fixed one; random when absent; the integer used is returned) and a size (small 32×24, medium 64×48, large 128×96). populate false gives terrain only. Returns { id, version, template, seed, cols, rows }.",
		false, createWorldSchema, op((*app.Service).CreateWorld)),
	writeTool(wf.ToolResizeWorld, "Resize a world to cols × rows (1–4096 each), at once and destructively: cells and POIs that still fit are kept, the rest are dropped, and so are the presence outside the new grid (those players place theirs again) and the opened marks and picked items of the dropped POIs. Returns the resize report, which lists what was dropped; refusals are freeform_grid, out_of_bounds_cap, too_small, non_integer, no_grid or no_size. Editors must reload the world.",
		true, worldIDSchema, op((*app.Service).ResizeWorld)),
	writeTool(wf.ToolPlayerPickup, "Pick up an item from a pickable POI on or next to your cell (your position is the server's presence) into your inventory. Players and observers reach only the POIs visible to the party: a GM-only POI is not_found to them, as a missing one. Errors: bad_request: too_far / not_pickable / unknown_item, conflict: no_presence, not_found.",
		false, playSchema, op((*app.Service).PlayerPickup)),
	writeTool(wf.ToolPlayerOpen, "Open an openable POI on or next to your cell. Opening an open POI again is not an error. Players and observers reach only the POIs visible to the party, as for pickup. Errors: bad_request: too_far / not_openable, conflict: no_presence, not_found.",
		false, playSchema, op((*app.Service).PlayerOpen)),

	writeTool(wf.ToolProposeQuest, "Propose a new quest (no id; you will own it) or a change to one, pinned to its current version. Nothing changes until it is committed. Returns { proposal_id, audit_id, world_id?, changeset_id?, auto_accepted? }.",
		false, proposeQuestSchema, op((*app.Service).ProposeQuest)),
	writeTool(wf.ToolProposeEncounter, "Propose a new encounter or a change to one; the same rules as propose_quest.",
		false, proposeQuestSchema, op((*app.Service).ProposeEncounter)),
	writeTool(wf.ToolProposeWikiPage, "Propose a new wiki page in a world (title required, 1–200 characters; kind lore/faction/place/quest-log; audience gm/party).",
		false, proposeWikiPageSchema, op((*app.Service).ProposeWikiPage)),
	writeTool(wf.ToolProposeWikiEdit, "Propose a change to a wiki page's title, body or audience, pinned to the page's version.",
		false, proposeWikiEditSchema, op((*app.Service).ProposeWikiEdit)),
	writeTool(wf.ToolProposeAtlasPlace, "Propose a new atlas place (name 1–200, terrainType ≤ 50, optional parentId in the same world; level is the parent's plus one) in a world.",
		false, proposeAtlasSchema, op((*app.Service).ProposeAtlasPlace)),
	writeTool(wf.ToolProposeLore, "Propose 1–100 lore operations on a world: {op:'upsert',collection,entity} (validated against the collection's schema), {op:'remove',collection,id}, {op:'add_preset',preset_id}. Pinned to the world's version; nothing changes until accepted.",
		false, proposeLoreSchema, op((*app.Service).ProposeLore)),
	writeTool(wf.ToolCommitQuest, "Commit a quest proposal (confirm must be true). Claim-once, version-checked, audited in one transaction. Errors: proposal_not_found, not_found, version_conflict, conflict: not_pending.",
		true, commitSchema, op((*app.Service).CommitQuest)),
	writeTool(wf.ToolCommitEncounter, "Commit an encounter proposal; the same rules as commit_quest.",
		true, commitSchema, op((*app.Service).CommitEncounter)),
	writeTool(wf.ToolCreateCampaign, "Create a campaign you own, optionally in a world you own or run as GM. Returns { id, version: 1 }.",
		false, createCampaignSchema, op((*app.Service).CreateCampaign)),
}

// op adapts an app operation to a tool body: the arguments decoded by the
// pipeline go to the app layer, and its result comes back to be encoded.
func op[In, Out any](f func(*app.Service, context.Context, app.Request, *In) (Out, error)) func(*Server, context.Context, *call, *In) (any, error) {
	return func(s *Server, ctx context.Context, c *call, in *In) (any, error) {
		out, err := f(s.app, ctx, c.req, in)
		if err != nil {
			return nil, err
		}
		return out, nil
	}
}

func playSchema(s *jsonschema.Schema) {
	worldIDSchema(s)
	idProp(s.Properties["poi_id"])
	if p, ok := s.Properties["item_id"]; ok {
		idProp(p)
	}
}

// Schema adjustments shared by several tools.

// maxIDLength bounds every id argument.
const maxIDLength = wf.MaxIDLength

func idSchema(s *jsonschema.Schema) { idProp(s.Properties["id"]) }

func worldIDSchema(s *jsonschema.Schema) { idProp(s.Properties["world_id"]) }

func optionalIDSchema(s *jsonschema.Schema, name string) { idProp(s.Properties[name]) }

func campaignFilterSchema(s *jsonschema.Schema) {
	idProp(s.Properties["campaign_id"])
	pageSchema(s)
}

// pagingNote ends the description of a one-part paged list; extra says
// what else ends a page.
func pagingNote(extra string) string {
	return " One page per call: up to limit rows (default " + strconv.Itoa(wf.DefaultPageLimit) + ", at most " +
		strconv.Itoa(wf.MaxPageLimit) + extra + "). When more rows follow, the answer has next_cursor: pass it back as cursor, with the same other arguments, for the next page. No next_cursor: the list is complete."
}

// pageSchema bounds the paging arguments limit and cursor.
func pageSchema(s *jsonschema.Schema) {
	limitSchema(s, wf.DefaultPageLimit, wf.MaxPageLimit)
	c := s.Properties["cursor"]
	c.MaxLength = ptr(wf.MaxPageCursorLength)
}

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
	tags := r.Properties["tags"]
	tags.MaxItems, tags.Items.MaxLength = ptr(wf.MaxPOITags), ptr(wf.MaxPOITagLength)
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
