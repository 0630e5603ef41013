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

// playTarget reads, inside the transaction q, the player's presence and
// the POI, and runs check on them.
func playTarget(ctx context.Context, q querier, worldID, userID, poiID string, check worldforge.PlayCheck) (*worldforge.Presence, *worldforge.POI, error) {
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
// inside the write transaction, so no other write to it interleaves; a
// chunked document is read, and the new one written, in it too, the old
// chunks deleted. A resize that grows the world over its owner's cells
// quota is refused.
func (db *DB) ResizeWorld(ctx context.Context, worldID string, fn worldforge.ResizeFunc) (*worldforge.World, error) {
	var w *worldforge.World
	err := db.writer.tx(ctx, func(q querier) error {
		var (
			old docMeta
			err error
		)
		if w, old, err = scanWorld(q.queryRow(ctx, "SELECT "+worldCols+" FROM worlds WHERE id = ?", worldID)); err != nil {
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
		before := *w // the size the quota check compares with
		doc, cols, rows, drop, err := fn(w, pois)
		if err != nil {
			return err
		}
		if err := db.checkResize(ctx, q, &before, cols, rows); err != nil {
			return err
		}
		d := db.planDoc(doc)
		w.UpdatedAt = now()
		if err := q.queryRow(ctx,
			`UPDATE worlds SET doc = ?, doc_len = ?, doc_splice = ?, grid_cols = ?, grid_rows = ?, version = version + 1, updated_at = ?
			WHERE id = ? RETURNING version`,
			d.doc, d.docLen, d.splice, cols, rows, ms(w.UpdatedAt), worldID).Scan(&w.Version); err != nil {
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
		w.JSON, w.Cols, w.Rows = doc, cols, rows
		for _, id := range drop {
			if _, err := q.exec(ctx, "DELETE FROM opened_pois WHERE world_id = ? AND poi_id = ?", worldID, id); err != nil {
				return err
			}
			if _, err := q.exec(ctx, "DELETE FROM pois WHERE world_id = ? AND id = ?", worldID, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, wrap("resize world", err)
	}
	return w, nil
}
