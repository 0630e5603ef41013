package sqlstore

import (
	"context"
	"database/sql"
	"slices"
	"strings"

	"github.com/worldforge-go/worldforge"
)

// worldCols are a world row's columns; doc_len and doc_splice say whether
// the document is in world_doc_chunks instead of doc (worlddoc.go).
const worldCols = "id, owner_id, name, template, seed, grid_cols, grid_rows, doc, version, created_at, updated_at, doc_len, doc_splice"

func scanWorld(s scanner) (*worldforge.World, docMeta, error) {
	var (
		w                worldforge.World
		doc              sql.NullString
		created, updated int64
		docLen           sql.NullInt64
		splice           int64
	)
	if err := s.Scan(&w.ID, &w.OwnerID, &w.Name, &w.Template, &w.Seed, &w.Cols, &w.Rows,
		&doc, &w.Version, &created, &updated, &docLen, &splice); err != nil {
		return nil, docMeta{}, err
	}
	w.JSON = fromNullJSON(doc)
	w.CreatedAt, w.UpdatedAt = fromMS(created), fromMS(updated)
	return &w, scanDocMeta(docLen, splice), nil
}

// CreateWorld stores w at version 1. A missing owner is not_found; a world
// over its owner's worlds or cells quota is quota_exceeded.
func (db *DB) CreateWorld(ctx context.Context, w *worldforge.World) error {
	d := db.planDoc(w.JSON)
	if qs := db.Quotas(); d.chunks == nil && qs.Worlds <= 0 && qs.Cells <= 0 {
		return wrap("create world", insertWorld(ctx, db.writer.q(), w, d))
	}
	return wrap("create world", db.writer.tx(ctx, func(q querier) error {
		if err := db.checkNewWorld(ctx, q, w); err != nil {
			return err
		}
		return insertWorld(ctx, q, w, d)
	}))
}

// insertWorld stores w with its document as planned by planDoc (chunks
// need q to be a transaction).
func insertWorld(ctx context.Context, q querier, w *worldforge.World, d docWrite) error {
	if w.ID == "" {
		w.ID = worldforge.NewID("world")
	}
	w.Version = 1
	w.CreatedAt = stamp(w.CreatedAt)
	if w.UpdatedAt.IsZero() {
		w.UpdatedAt = w.CreatedAt
	}
	w.UpdatedAt = stamp(w.UpdatedAt)
	_, err := q.exec(ctx,
		"INSERT INTO worlds ("+worldCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		w.ID, w.OwnerID, w.Name, w.Template, w.Seed, w.Cols, w.Rows,
		d.doc, w.Version, ms(w.CreatedAt), ms(w.UpdatedAt), d.docLen, d.splice)
	if err != nil {
		return err
	}
	return d.writeChunks(ctx, q, w.ID)
}

// FindWorldHeader returns the world without its document (JSON nil): the
// cheap read for access checks and sizes, whatever the world's size.
func (db *DB) FindWorldHeader(ctx context.Context, id string) (*worldforge.World, error) {
	w, _, err := scanWorld(db.reader.q().queryRow(ctx,
		"SELECT id, owner_id, name, template, seed, grid_cols, grid_rows, NULL, version, created_at, updated_at, NULL, 0 FROM worlds WHERE id = ?", id))
	if err != nil {
		return nil, wrap("find world", err)
	}
	return w, nil
}

// memberRoles are the roles AddWorldMember accepts.
var memberRoles = map[string]bool{worldforge.RoleGM: true, worldforge.RolePlayer: true, worldforge.RoleObserver: true}

// AddWorldMember sets the user's role in the world, replacing an earlier
// one. A role other than gm, player or observer is bad_request; a missing
// world or user is not_found.
func (db *DB) AddWorldMember(ctx context.Context, worldID, userID, role string) error {
	if !memberRoles[role] {
		return wrap("add world member", worldforge.BadRequest("invalid role %q", role))
	}
	_, err := db.writer.q().exec(ctx,
		`INSERT INTO world_members (world_id, user_id, role, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (world_id, user_id) DO UPDATE SET role = excluded.role`,
		worldID, userID, role, ms(now()))
	return wrap("add world member", err)
}

// WorldRole returns RoleOwner, the member's role, or "" for a stranger, in
// one query. A missing world is not_found.
func (db *DB) WorldRole(ctx context.Context, worldID, userID string) (string, error) {
	_, role, err := db.WorldAccess(ctx, worldID, userID)
	return role, err
}

// WorldAccess returns the world's owner and the user's role in it
// (WorldRole's), in one query. A missing world is not_found.
func (db *DB) WorldAccess(ctx context.Context, worldID, userID string) (owner, role string, err error) {
	err = db.reader.q().queryRow(ctx,
		`SELECT w.owner_id, COALESCE(m.role, '') FROM worlds w
		LEFT JOIN world_members m ON m.world_id = w.id AND m.user_id = ?
		WHERE w.id = ?`, userID, worldID).Scan(&owner, &role)
	if err != nil {
		return "", "", wrap("world role", err)
	}
	if userID != "" && owner == userID {
		return owner, worldforge.RoleOwner, nil
	}
	return owner, role, nil
}

// WorldsWhereGM lists, by id, the worlds the user owns or is a GM of.
func (db *DB) WorldsWhereGM(ctx context.Context, userID string) ([]string, error) {
	ids, err := collect(scanString)(db.reader.q().query(ctx,
		`SELECT id FROM worlds WHERE owner_id = ?
		UNION SELECT world_id FROM world_members WHERE user_id = ? AND role = 'gm'
		ORDER BY 1`, userID, userID))
	return ids, wrap("worlds where gm", err)
}

// SetPresence places the player in the world, replacing an earlier
// position. A missing world or user is not_found; a cell outside the
// world's grid (a side of 0 is unbounded) is bad_request. The grid is read
// with the world row locked on PostgreSQL (SQLite's one writer runs write
// transactions one at a time), so a concurrent resize either sees this
// presence or refuses it here.
func (db *DB) SetPresence(ctx context.Context, p *worldforge.Presence) error {
	p.UpdatedAt = stamp(p.UpdatedAt)
	err := db.writer.tx(ctx, func(q querier) error {
		var cols, rows int
		if err := q.queryRow(ctx, "SELECT grid_cols, grid_rows FROM worlds WHERE id = ?"+q.p.d.rowLock("SHARE"), p.WorldID).
			Scan(&cols, &rows); err != nil {
			return err // sql.ErrNoRows → not_found
		}
		if p.X < 0 || p.Y < 0 || (cols > 0 && p.X >= cols) || (rows > 0 && p.Y >= rows) {
			return worldforge.BadRequest("cell (%d, %d) is outside the %d×%d grid", p.X, p.Y, cols, rows)
		}
		_, err := q.exec(ctx,
			`INSERT INTO presence (world_id, user_id, x, y, updated_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (world_id, user_id) DO UPDATE SET x = excluded.x, y = excluded.y, updated_at = excluded.updated_at`,
			p.WorldID, p.UserID, p.X, p.Y, ms(p.UpdatedAt))
		return err
	})
	return wrap("set presence", err)
}

// ReadWorld returns the world and its runtime state in one round trip, or
// not_found. A chunked document is read with the rest again from one
// snapshot.
func (db *DB) ReadWorld(ctx context.Context, worldID string) (*worldforge.World, *worldforge.WorldRuntime, error) {
	w, rt, m, err := readWorld(ctx, db.reader.q(), worldID, true)
	if err == nil && m.chunked {
		w, rt, err = db.readWorldSnapshot(ctx, worldID)
	}
	if err != nil {
		return nil, nil, wrap("read world", err)
	}
	return w, rt, nil
}

// readWorld runs one UNION ALL over the world's row, its presence, opened
// POIs and inventory, as columns (kind, s1…s5, n1…n9). Without withDoc the
// world row carries no document; with it, a chunked document is not read
// either (w.JSON nil): the docMeta says so.
func readWorld(ctx context.Context, q querier, worldID string, withDoc bool) (*worldforge.World, *worldforge.WorldRuntime, docMeta, error) {
	// The world's row carries its stamp (world_stamps), read in the same
	// statement, so that it names exactly the state read.
	worldRow := "SELECT 'w', id, owner_id, name, COALESCE(template, ''), '', seed, grid_cols, grid_rows, version, created_at, updated_at, doc_len, doc_splice, " + stampCol + " FROM worlds WHERE id = ?"
	if withDoc {
		worldRow = "SELECT 'w', id, owner_id, name, COALESCE(template, ''), COALESCE(doc, ''), seed, grid_cols, grid_rows, version, created_at, updated_at, doc_len, doc_splice, " + stampCol + " FROM worlds WHERE id = ?"
	}
	var m docMeta
	rows, err := q.query(ctx, worldRow+`
		UNION ALL
		SELECT 'p', world_id, user_id, '', '', '', x, y, 0, 0, 0, updated_at, NULL, 0, 0 FROM presence WHERE world_id = ?
		UNION ALL
		SELECT 'o', poi_id, '', '', '', '', 0, 0, 0, 0, 0, 0, NULL, 0, 0 FROM opened_pois WHERE world_id = ?
		UNION ALL
		SELECT 'i', world_id, user_id, item_id, poi_id, name, 0, 0, 0, 0, 0, picked_at, NULL, 0, 0 FROM inventory WHERE world_id = ?`,
		worldID, worldID, worldID, worldID)
	if err != nil {
		return nil, nil, m, err
	}
	defer rows.Close()
	var w *worldforge.World
	rt := &worldforge.WorldRuntime{Presence: []worldforge.Presence{}, OpenedPOIs: []string{}, PickedItems: []worldforge.InventoryItem{}}
	for rows.Next() {
		var (
			kind, s1, s2, s3, s4, s5       string
			n1, n2, n3, n4, n5, n6, n8, n9 int64
			n7                             sql.NullInt64
		)
		if err := rows.Scan(&kind, &s1, &s2, &s3, &s4, &s5, &n1, &n2, &n3, &n4, &n5, &n6, &n7, &n8, &n9); err != nil {
			return nil, nil, m, err
		}
		switch kind {
		case "w":
			w = &worldforge.World{ID: s1, OwnerID: s2, Name: s3, Template: s4, Seed: n1, Cols: int(n2), Rows: int(n3),
				Version: n4, CreatedAt: fromMS(n5), UpdatedAt: fromMS(n6)}
			if s5 != "" {
				w.JSON = []byte(s5)
			}
			m = scanDocMeta(n7, n8)
			m.stamp = n9
		case "p":
			rt.Presence = append(rt.Presence, worldforge.Presence{WorldID: s1, UserID: s2, X: int(n1), Y: int(n2), UpdatedAt: fromMS(n6)})
		case "o":
			rt.OpenedPOIs = append(rt.OpenedPOIs, s1)
		case "i":
			rt.PickedItems = append(rt.PickedItems, worldforge.InventoryItem{WorldID: s1, UserID: s2, ItemID: s3, POIID: s4, Name: s5, PickedAt: fromMS(n6)})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, m, err
	}
	if w == nil {
		return nil, nil, m, worldforge.ErrNotFound
	}
	// Stable orders: presence by user, opened POIs by id, items by time.
	slices.SortFunc(rt.Presence, func(a, b worldforge.Presence) int { return strings.Compare(a.UserID, b.UserID) })
	slices.Sort(rt.OpenedPOIs)
	slices.SortFunc(rt.PickedItems, func(a, b worldforge.InventoryItem) int {
		if c := a.PickedAt.Compare(b.PickedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ItemID, b.ItemID)
	})
	return w, rt, m, nil
}
