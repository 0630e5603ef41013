package client

import (
	"context"
	"fmt"
	"slices"
	"strings"

	wf "github.com/worldforge-go/worldforge"
)

// The typed helpers of the stable core tools. Each maps its parameters to
// the tool's arguments (the server's own argument types) and decodes the
// result into the server's own result type. Tool failures are *ToolError.

// ReadWorld calls read_world {id}: the world row, its document with the
// runtime state merged into json.runtime.
func (c *Client) ReadWorld(ctx context.Context, id string) (*wf.World, error) {
	return call[wf.World](ctx, c, wf.ToolReadWorld, wf.IDArgs{ID: id})
}

// GetWorldSummary calls get_world_summary {world_id}.
func (c *Client) GetWorldSummary(ctx context.Context, worldID string) (*wf.WorldSummary, error) {
	return call[wf.WorldSummary](ctx, c, wf.ToolGetWorldSummary, wf.WorldArgs{WorldID: worldID})
}

// ListLore calls list_lore {world_id}: the first page of every collection
// (NextCursors names the collections with more), the counts, the
// integrity issues (the first worldforge.MaxLoreIssues; IssuesTotal counts
// them all) and the presets. Further pages: CallToolInto with
// worldforge.ListLoreArgs{WorldID, Cursor} into a worldforge.LoreCollectionList.
func (c *Client) ListLore(ctx context.Context, worldID string) (*wf.LoreOverview, error) {
	return call[wf.LoreOverview](ctx, c, wf.ToolListLore, wf.ListLoreArgs{WorldID: worldID})
}

// ListLoreCollection calls list_lore {world_id, collection}: the first page
// of one collection's entities (collection is one of
// worldforge.LoreCollections); NextCursor is set when more follow.
// It is the spec's listLore(worldId, collection) with the collection given,
// which answers a different shape.
func (c *Client) ListLoreCollection(ctx context.Context, worldID, collection string) (*wf.LoreCollectionList, error) {
	if collection == "" {
		return nil, fmt.Errorf("worldforge client: %s: empty collection (use ListLore for all)", wf.ToolListLore)
	}
	return call[wf.LoreCollectionList](ctx, c, wf.ToolListLore, wf.ListLoreArgs{WorldID: worldID, Collection: collection})
}

// ProposeLore calls propose_lore {world_id, operations, diff_summary,
// changeset_id?}; changesetID "" is none. Each operation is {op:"upsert",
// collection, entity}, {op:"remove", collection, id} or
// {op:"add_preset", preset_id}. Nothing changes until the proposal is
// committed (or an auto-accept rule commits it: AutoAccepted).
func (c *Client) ProposeLore(ctx context.Context, worldID string, ops []wf.LoreOpInput, diffSummary, changesetID string) (*wf.ProposeResult, error) {
	return call[wf.ProposeResult](ctx, c, wf.ToolProposeLore, wf.ProposeLoreArgs{
		WorldID:     worldID,
		Operations:  ops,
		DiffSummary: diffSummary,
		ChangesetID: changesetID,
	})
}

// ListWikiPages calls list_wiki_pages {world_id, kind?}: the first page
// (worldforge.DefaultPageLimit pages, by title); NextCursor is set when
// more follow (ListWikiPagesFrom reads them). kind "" lists every page;
// otherwise it is one of worldforge.WikiKinds (lore, faction, place,
// quest-log), and any other value fails before the call.
func (c *Client) ListWikiPages(ctx context.Context, worldID, kind string) (*wf.WikiPageList, error) {
	return c.ListWikiPagesFrom(ctx, worldID, kind, "")
}

// ListWikiPagesFrom calls list_wiki_pages {world_id, kind?, cursor?}: the
// page after cursor, the NextCursor of an earlier answer for the same
// world and kind ("" for the first page). A walk ends at the answer
// without NextCursor.
func (c *Client) ListWikiPagesFrom(ctx context.Context, worldID, kind, cursor string) (*wf.WikiPageList, error) {
	if kind != "" && !slices.Contains(wf.WikiKinds, kind) {
		return nil, fmt.Errorf("worldforge client: %s: kind %q is not one of %s", wf.ToolListWikiPages, kind, strings.Join(wf.WikiKinds, ", "))
	}
	return call[wf.WikiPageList](ctx, c, wf.ToolListWikiPages, wf.ListWikiPagesArgs{WorldID: worldID, Kind: kind, Cursor: cursor})
}

// SearchPOIs calls search_pois {world_id, request}. Every request field is
// optional: name, category, tags (all of them), x and y with radiusPx (in
// pixels, 32 per cell), limit.
func (c *Client) SearchPOIs(ctx context.Context, worldID string, req wf.POIQuery) (*wf.POIList, error) {
	return call[wf.POIList](ctx, c, wf.ToolSearchPOIs, wf.SearchPOIsArgs{WorldID: worldID, Request: req})
}
