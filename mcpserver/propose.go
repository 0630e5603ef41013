package mcpserver

import (
	"github.com/google/jsonschema-go/jsonschema"

	wf "github.com/worldforge-go/worldforge"
)

// The write tools' argument schemas; their rules (who proposes, reviews
// and commits, auto-accept) are in package app.

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
