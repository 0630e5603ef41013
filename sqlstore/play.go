package sqlstore

import (
	"context"
	"slices"

	"github.com/worldforge-go/worldforge"
)

// Play-rule details (conflict: no_presence, bad_request: unknown_item).
const (
	detailNoPresence  = "no_presence"
	detailUnknownItem = "unknown_item"
)

// FindPOIByID returns the POI, or not_found.
func (db *DB) FindPOIByID(ctx context.Context, id string) (*worldforge.POI, error) {
	p, err := scanPOI(db.reader.q().queryRow(ctx, "SELECT "+poiCols+" FROM pois WHERE id = ?", id))
	if err != nil {
		return nil, wrap("find poi", err)
	}
	return &p, nil
}

// ListPOIs returns every POI of the world, by id.
func (db *DB) ListPOIs(ctx context.Context, worldID string) ([]worldforge.POI, error) {
	out, err := collect(func(s scanner) (worldforge.POI, error) { return scanPOI(s) })(
		db.reader.q().query(ctx, "SELECT "+poiCols+" FROM pois WHERE world_id = ? ORDER BY id", worldID))
	return out, wrap("list pois", err)
}

// rowLock is the locking clause that, on PostgreSQL, makes a statement
// reading a world row wait for a transaction that resizes the world, and a
// resize wait for it: mode is "UPDATE" (the resize) or "SHARE" (presence
// writes and player actions). SQLite needs none: its one writer
// connection runs write transactions one at a time.
func (d dialect) rowLock(mode string) string {
	if d == dialectPostgres {
		return " FOR " + mode
	}
	return ""
}

// lockWorldShared takes, inside the transaction q, the world row's shared
// lock on PostgreSQL (a no-op on SQLite), so that no resize of the world
// interleaves with the rest of the transaction. A missing world is left
// to the caller's own reads.
func lockWorldShared(ctx context.Context, q querier, worldID string) error {
	if q.p.d != dialectPostgres {
		return nil
	}
	var id string
	err := q.queryRow(ctx, "SELECT id FROM worlds WHERE id = ?"+q.p.d.rowLock("SHARE"), worldID).Scan(&id)
	if errNoRows(err) {
		return nil
	}
	return err
}

// playTarget reads, inside the transaction q, the player's presence and
// the POI, and runs check on them. The world row is locked first, so the
// presence and the POI are those a concurrent resize leaves.
func playTarget(ctx context.Context, q querier, worldID, userID, poiID string, check worldforge.PlayCheck) (*worldforge.Presence, *worldforge.POI, error) {
	if err := lockWorldShared(ctx, q, worldID); err != nil {
		return nil, nil, err
	}
	pres := &worldforge.Presence{WorldID: worldID, UserID: userID}
	var updated int64
	err := q.queryRow(ctx, "SELECT x, y, updated_at FROM presence WHERE world_id = ? AND user_id = ?", worldID, userID).
		Scan(&pres.X, &pres.Y, &updated)
	if errNoRows(err) {
		return nil, nil, &worldforge.Error{Code: worldforge.EConflict, Detail: detailNoPresence}
	}
	if err != nil {
		return nil, nil, err
	}
	pres.UpdatedAt = fromMS(updated)
	poi, err := scanPOI(q.queryRow(ctx, "SELECT "+poiCols+" FROM pois WHERE id = ? AND world_id = ?", poiID, worldID))
	if err != nil {
		return nil, nil, err // sql.ErrNoRows → not_found
	}
	if check != nil {
		if err := check(pres, &poi); err != nil {
			return nil, nil, err
		}
	}
	return pres, &poi, nil
}

// PickUp implements worldforge.WorldStore. The inventory's unique
// (world, item) key makes the pick-up happen once: the insert that finds
// the item taken inserts nothing, and its caller is told unknown_item.
func (db *DB) PickUp(ctx context.Context, worldID, userID, poiID, itemID string, check worldforge.PlayCheck) (*worldforge.InventoryItem, error) {
	var item *worldforge.InventoryItem
	err := db.writer.tx(ctx, func(q querier) error {
		_, poi, err := playTarget(ctx, q, worldID, userID, poiID, check)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(poi.Items, func(it worldforge.POIItem) bool { return it.ID == itemID })
		if i < 0 {
			return worldforge.BadRequest(detailUnknownItem)
		}
		item = &worldforge.InventoryItem{WorldID: worldID, UserID: userID, ItemID: itemID, POIID: poiID,
			Name: poi.Items[i].Name, PickedAt: now()}
		res, err := q.exec(ctx,
			`INSERT INTO inventory (world_id, user_id, item_id, poi_id, name, picked_at)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			worldID, userID, itemID, poiID, item.Name, ms(item.PickedAt))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return worldforge.BadRequest(detailUnknownItem) // someone took it first
		}
		return nil
	})
	if err != nil {
		return nil, wrap("pick up", err)
	}
	return item, nil
}

// OpenPOI implements worldforge.WorldStore.
func (db *DB) OpenPOI(ctx context.Context, worldID, userID, poiID string, check worldforge.PlayCheck) (*worldforge.POI, bool, error) {
	var (
		poi   *worldforge.POI
		first bool
	)
	err := db.writer.tx(ctx, func(q querier) error {
		var err error
		if _, poi, err = playTarget(ctx, q, worldID, userID, poiID, check); err != nil {
			return err
		}
		res, err := q.exec(ctx,
			"INSERT INTO opened_pois (world_id, poi_id, opened_by, opened_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
			worldID, poiID, userID, ms(now()))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		first = n == 1
		return err
	})
	if err != nil {
		return nil, false, wrap("open poi", err)
	}
	return poi, first, nil
}

// CreateWorldContent implements worldforge.WorldStore. The quotas on
// worlds, cells and lore entities are checked first, in the transaction.
func (db *DB) CreateWorldContent(ctx context.Context, w *worldforge.World, c *worldforge.WorldContent, authorID string) error {
	if err := db.checkNewLore(c); err != nil {
		return wrap("create world", err)
	}
	d := db.planDoc(w.JSON)
	err := db.writer.tx(ctx, func(q querier) error {
		if err := db.checkNewWorld(ctx, q, w); err != nil {
			return err
		}
		if err := insertWorld(ctx, q, w, d); err != nil {
			return err
		}
		if c == nil {
			return nil
		}
		for i := range c.POIs {
			c.POIs[i].WorldID = w.ID
			if err := insertPOI(ctx, q, &c.POIs[i]); err != nil {
				return err
			}
		}
		for i := range c.AtlasNodes {
			c.AtlasNodes[i].WorldID = w.ID
			if err := insertAtlasNode(ctx, q, &c.AtlasNodes[i]); err != nil {
				return err
			}
		}
		for i := range c.WikiPages {
			c.WikiPages[i].WorldID = w.ID
			if err := insertWikiPage(ctx, q, &c.WikiPages[i], authorID, ""); err != nil {
				return err
			}
		}
		for i := range c.Lore {
			c.Lore[i].WorldID = w.ID
			if err := upsertLore(ctx, q, &c.Lore[i]); err != nil {
				return err
			}
		}
		return nil
	})
	return wrap("create world", err)
}

// ResizeWorld implements worldforge.WorldStore. The world row is read
// inside the write transaction, locked on PostgreSQL (SQLite's one writer
// runs write transactions one at a time), so no other write to it, and no
// presence write or player action on the world, interleaves; its POIs and
// runtime state are read after the lock. A chunked document is read, and
// the new one written, in the transaction too, the old chunks deleted. A
// resize that grows the world over its owner's cells quota is refused.
func (db *DB) ResizeWorld(ctx context.Context, worldID string, fn worldforge.ResizeFunc) (*worldforge.World, error) {
	var w *worldforge.World
	err := db.writer.tx(ctx, func(q querier) error {
		var (
			old docMeta
			err error
		)
		if w, old, err = scanWorld(q.queryRow(ctx, "SELECT "+worldCols+" FROM worlds WHERE id = ?"+q.p.d.rowLock("UPDATE"), worldID)); err != nil {
			return err
		}
		if old.chunked {
			if w.JSON, err = readChunks(ctx, q, worldID, old.len); err != nil {
				return err
			}
		}
		pois, err := collect(func(s scanner) (worldforge.POI, error) { return scanPOI(s) })(
			q.query(ctx, "SELECT "+poiCols+" FROM pois WHERE world_id = ? ORDER BY id", worldID))
		if err != nil {
			return err
		}
		_, rt, _, err := readWorld(ctx, q, worldID, false)
		if err != nil {
			return err
		}
		before := *w // the size the quota check compares with
		plan, err := fn(w, pois, rt)
		if err != nil {
			return err
		}
		if err := db.checkResize(ctx, q, &before, plan.Cols, plan.Rows); err != nil {
			return err
		}
		d := db.planDoc(plan.Doc)
		w.UpdatedAt = now()
		if err := q.queryRow(ctx,
			`UPDATE worlds SET doc = ?, doc_len = ?, doc_splice = ?, grid_cols = ?, grid_rows = ?, version = version + 1, updated_at = ?
			WHERE id = ? RETURNING version`,
			d.doc, d.docLen, d.splice, plan.Cols, plan.Rows, ms(w.UpdatedAt), worldID).Scan(&w.Version); err != nil {
			return err
		}
		if old.chunked {
			if err := deleteChunks(ctx, q, worldID); err != nil {
				return err
			}
		}
		if err := d.writeChunks(ctx, q, worldID); err != nil {
			return err
		}
		w.JSON, w.Cols, w.Rows = plan.Doc, plan.Cols, plan.Rows
		for _, del := range []struct {
			query string
			keys  []string
		}{
			{"DELETE FROM presence WHERE world_id = ? AND user_id = ?", plan.DropPresence},
			{"DELETE FROM opened_pois WHERE world_id = ? AND poi_id = ?", plan.DropOpened},
			{"DELETE FROM inventory WHERE world_id = ? AND item_id = ?", plan.DropPicked},
			{"DELETE FROM pois WHERE world_id = ? AND id = ?", plan.DropPOIs},
		} {
			for _, key := range del.keys {
				if _, err := q.exec(ctx, del.query, worldID, key); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, wrap("resize world", err)
	}
	return w, nil
}
