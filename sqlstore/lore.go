package sqlstore

import (
	"context"
	"database/sql"
	"slices"

	"github.com/worldforge-go/worldforge"
)

// UpsertLore creates the entity at version 1, or replaces its name and JSON
// and raises its version by one; e.Version and e.UpdatedAt are set to the
// stored values. An unknown collection is bad_request; a missing world is
// not_found.
func (db *DB) UpsertLore(ctx context.Context, e *worldforge.LoreEntity) error {
	return wrap("upsert lore", upsertLore(ctx, db.writer.q(), e))
}

func upsertLore(ctx context.Context, q querier, e *worldforge.LoreEntity) error {
	if !slices.Contains(worldforge.LoreCollections, e.Collection) {
		return worldforge.BadRequest("unknown lore collection %q", e.Collection)
	}
	if e.ID == "" {
		e.ID = worldforge.NewID("lore")
	}
	e.UpdatedAt = stamp(e.UpdatedAt)
	return q.queryRow(ctx,
		`INSERT INTO lore_entities (world_id, collection, id, name, doc, version, updated_at)
		VALUES (?, ?, ?, ?, ?, 1, ?)
		ON CONFLICT (world_id, collection, id) DO UPDATE SET
			name = excluded.name, doc = excluded.doc, updated_at = excluded.updated_at,
			version = lore_entities.version + 1
		RETURNING version`,
		e.WorldID, e.Collection, e.ID, e.Name, jsonArg(e.JSON), ms(e.UpdatedAt)).Scan(&e.Version)
}

// ListLore lists the world's entities, of one collection when set, by
// collection then name.
func (db *DB) ListLore(ctx context.Context, worldID, collection string) ([]worldforge.LoreEntity, error) {
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

// CountLore counts the world's entities per collection; every collection of
// worldforge.LoreCollections is present, zero included.
func (db *DB) CountLore(ctx context.Context, worldID string) (map[string]int, error) {
	counts := make(map[string]int, len(worldforge.LoreCollections))
	for _, c := range worldforge.LoreCollections {
		counts[c] = 0
	}
	err := countBy(ctx, db.reader.q(), counts,
		"SELECT collection, COUNT(*) FROM lore_entities WHERE world_id = ? GROUP BY collection", worldID)
	if err != nil {
		return nil, wrap("count lore", err)
	}
	return counts, nil
}

func scanLoreEntity(s scanner) (worldforge.LoreEntity, error) {
	var (
		e       worldforge.LoreEntity
		doc     sql.NullString
		updated int64
	)
	err := s.Scan(&e.WorldID, &e.Collection, &e.ID, &e.Name, &doc, &e.Version, &updated)
	e.JSON = fromNullJSON(doc)
	e.UpdatedAt = fromMS(updated)
	return e, err
}
