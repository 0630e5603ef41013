package sqlstore

import (
	"context"

	"github.com/worldforge-go/worldforge"
)

// The whole lists, each in one query: the oracle the paged lists are
// checked against (TestPagedListsWalk) and the "before paging" side of
// the paged-list benchmarks. The Store contract has only the paged reads.

// ListCampaignsForTest lists the owner's campaigns.
func (db *DB) ListCampaignsForTest(ctx context.Context, ownerID string) ([]worldforge.DocSummary, error) {
	out, err := collect(scanSummary)(db.reader.q().query(ctx,
		`SELECT id, name, NULL, world_id, version, updated_at FROM campaigns
		WHERE owner_id = ? ORDER BY updated_at DESC, id`, ownerID))
	return out, wrap("list campaigns", err)
}

func (t docTable) list(ctx context.Context, db *DB, ownerID, campaignID string) ([]worldforge.DocSummary, error) {
	query := "SELECT id, name, campaign_id, world_id, version, updated_at FROM " + t.table + " WHERE owner_id = ?"
	args := []any{ownerID}
	if campaignID != "" {
		query += " AND campaign_id = ?"
		args = append(args, campaignID)
	}
	query += " ORDER BY updated_at DESC, id"
	out, err := collect(scanSummary)(db.reader.q().query(ctx, query, args...))
	return out, wrap("list "+t.noun+"s", err)
}

// ListAtlasNodesForTest lists the world's nodes, of one level when level > 0, by
// level then name.
func (db *DB) ListAtlasNodesForTest(ctx context.Context, worldID string, level int) ([]worldforge.AtlasNode, error) {
	query := "SELECT " + atlasCols + " FROM atlas_nodes WHERE world_id = ?"
	args := []any{worldID}
	if level > 0 {
		query += " AND level = ?"
		args = append(args, level)
	}
	query += " ORDER BY level, name, id"
	out, err := collect(scanAtlasNode)(db.reader.q().query(ctx, query, args...))
	return out, wrap("list atlas nodes", err)
}

// ListLoreForTest lists the world's entities, of one collection when set, by
// collection then name.
func (db *DB) ListLoreForTest(ctx context.Context, worldID, collection string) ([]worldforge.LoreEntity, error) {
	query := "SELECT world_id, collection, id, name, doc, version, updated_at FROM lore_entities WHERE world_id = ?"
	args := []any{worldID}
	if collection != "" {
		query += " AND collection = ?"
		args = append(args, collection)
	}
	query += " ORDER BY collection, name, id"
	out, err := collect(scanLoreEntity)(db.reader.q().query(ctx, query, args...))
	return out, wrap("list lore", err)
}

// ListWikiPagesForTest lists the world's live pages, of one kind when kind is set,
// by title.
func (db *DB) ListWikiPagesForTest(ctx context.Context, worldID, kind string) ([]worldforge.WikiPageSummary, error) {
	query := "SELECT " + wikiSummaryCols + " FROM wiki_pages WHERE world_id = ? AND deleted_at IS NULL"
	args := []any{worldID}
	if kind != "" {
		query += " AND kind = ?"
		args = append(args, kind)
	}
	query += " ORDER BY title, id"
	out, err := collect(scanWikiSummary)(db.reader.q().query(ctx, query, args...))
	return out, wrap("list wiki pages", err)
}

// ListQuestsForTest lists the owner's quests, of one campaign when
// campaignID is set, in one query.
func (db *DB) ListQuestsForTest(ctx context.Context, ownerID, campaignID string) ([]worldforge.DocSummary, error) {
	return questTable.list(ctx, db, ownerID, campaignID)
}

// ListEncountersForTest lists the owner's encounters, of one campaign
// when campaignID is set, in one query.
func (db *DB) ListEncountersForTest(ctx context.Context, ownerID, campaignID string) ([]worldforge.DocSummary, error) {
	return encounterTable.list(ctx, db, ownerID, campaignID)
}
