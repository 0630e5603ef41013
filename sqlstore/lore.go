package sqlstore

import (
	"context"
	"database/sql"

	"github.com/worldforge-go/worldforge"
)

// UpsertLore creates the entity at version 1, or replaces its name and JSON
// and raises its version by one; e.Version and e.UpdatedAt are set to the
// stored values. An unknown collection is bad_request; a missing world is
// not_found. The entity's facts (see lore_facts.go) are stored with it, in
// one transaction.
func (db *DB) UpsertLore(ctx context.Context, e *worldforge.LoreEntity) error {
	return wrap("upsert lore", db.writer.tx(ctx, func(q querier) error {
		if err := lockWorldLore(ctx, q, e.WorldID); err != nil {
			return err
		}
		return upsertLore(ctx, q, e)
	}))
}

// upsertLore is UpsertLore inside the caller's transaction, which holds
// the world's lore lock (lockWorldLore) or created the world.
func upsertLore(ctx context.Context, q querier, e *worldforge.LoreEntity) error {
	_, err := writeLore(ctx, q, e, true)
	return err
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
