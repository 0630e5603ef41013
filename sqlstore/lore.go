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
// not_found; a new entity in a world at its lore quota is quota_exceeded.
// The entity's facts (see lore_facts.go) are stored with it, in one
// transaction.
func (db *DB) UpsertLore(ctx context.Context, e *worldforge.LoreEntity) error {
	return wrap("upsert lore", db.writer.tx(ctx, func(q querier) error {
		if err := lockWorldLore(ctx, q, e.WorldID); err != nil {
			return err
		}
		g, err := db.guardLore(ctx, q, e.WorldID)
		if err != nil {
			return err
		}
		if err := upsertLore(ctx, q, e); err != nil {
			return err
		}
		return g.check(ctx, q)
	}))
}

// upsertLore is UpsertLore inside the caller's transaction, which holds
// the world's lore lock (lockWorldLore) or created the world.
func upsertLore(ctx context.Context, q querier, e *worldforge.LoreEntity) error {
	_, err := writeLore(ctx, q, e, true)
	return err
}

// ListLoreByNamePage implements worldforge.LoreStore: one page of
// one collection's entities, by name then id. The collection is validated and
// then written into the statement as a literal, so that the planner can
// use the partial index lore_entities_faction_name (world_id, name, id)
// WHERE collection = 'factions' (migration 007) for factions; other
// collections have no index in name order. Documents count toward
// q.MaxBytes.
func (db *DB) ListLoreByNamePage(ctx context.Context, worldID, collection string, q worldforge.PageQuery) (*worldforge.Page[worldforge.LoreEntity], error) {
	if !slices.Contains(worldforge.LoreCollections, collection) {
		return nil, wrap("list lore by name", worldforge.BadRequest("unknown lore collection %q", collection))
	}
	limit := pageLimit(q)
	args := []any{worldID}
	if a := q.After; a != nil {
		name := a.Name
		if a.FromRow {
			err := db.reader.q().queryRow(ctx, "SELECT name"+loreNameWhere(collection)+" AND id = ?", worldID, a.ID).Scan(&name)
			if errNoRows(err) {
				err = errRowLeft()
			}
			if err != nil {
				return nil, wrap("list lore by name", err)
			}
		}
		args = append(args, name, a.ID)
	}
	args = append(args, limit+1)
	rows, err := db.reader.q().query(ctx, loreNamePageSQL(collection, q.After != nil), args...)
	page, err := readPage(rows, err, scanLoreEntity, limit, q.MaxBytes, func(e *worldforge.LoreEntity) int { return len(e.JSON) })
	return page, wrap("list lore by name", err)
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

// FindLore implements worldforge.LoreStore.
func (db *DB) FindLore(ctx context.Context, worldID, collection, id string) (*worldforge.LoreEntity, error) {
	e, err := scanLoreEntity(db.reader.q().queryRow(ctx,
		"SELECT world_id, collection, id, name, doc, version, updated_at FROM lore_entities WHERE world_id = ? AND collection = ? AND id = ?",
		worldID, collection, id))
	if err != nil {
		return nil, wrap("find lore", err)
	}
	return &e, nil
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

// loreNameWhere selects a world's entities of one collection, named as a
// literal (collection must be one of worldforge.LoreCollections).
func loreNameWhere(collection string) string {
	return " FROM lore_entities WHERE world_id = ? AND collection = '" + collection + "'"
}

// loreNamePageSQL is ListLoreByNamePage's statement. Its arguments: the
// world, the previous key's name and id (after), the limit.
func loreNamePageSQL(collection string, after bool) string {
	query := "SELECT world_id, collection, id, name, doc, version, updated_at" + loreNameWhere(collection)
	if after {
		query += " AND (name, id) > (?, ?)"
	}
	return query + " ORDER BY name, id LIMIT ?"
}
