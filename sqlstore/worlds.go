package sqlstore

import (
	"context"
	"database/sql"

	"github.com/worldforge-go/worldforge"
)

const worldCols = "id, owner_id, name, template, seed, grid_cols, grid_rows, doc, version, created_at, updated_at"

func scanWorld(s scanner) (*worldforge.World, error) {
	var (
		w                worldforge.World
		doc              sql.NullString
		created, updated int64
	)
	if err := s.Scan(&w.ID, &w.OwnerID, &w.Name, &w.Template, &w.Seed, &w.Cols, &w.Rows,
		&doc, &w.Version, &created, &updated); err != nil {
		return nil, err
	}
	w.JSON = fromNullJSON(doc)
	w.CreatedAt, w.UpdatedAt = fromMS(created), fromMS(updated)
	return &w, nil
}

// CreateWorld stores w at version 1. A missing owner is not_found.
func (db *DB) CreateWorld(ctx context.Context, w *worldforge.World) error {
	if w.ID == "" {
		w.ID = worldforge.NewID("world")
	}
	w.Version = 1
	w.CreatedAt = stamp(w.CreatedAt)
	if w.UpdatedAt.IsZero() {
		w.UpdatedAt = w.CreatedAt
	}
	w.UpdatedAt = stamp(w.UpdatedAt)
	_, err := db.writer.q().exec(ctx,
		"INSERT INTO worlds ("+worldCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		w.ID, w.OwnerID, w.Name, w.Template, w.Seed, w.Cols, w.Rows,
		jsonArg(w.JSON), w.Version, ms(w.CreatedAt), ms(w.UpdatedAt))
	return wrap("create world", err)
}

// FindWorldByID returns the world, or not_found.
func (db *DB) FindWorldByID(ctx context.Context, id string) (*worldforge.World, error) {
	w, err := scanWorld(db.reader.q().queryRow(ctx, "SELECT "+worldCols+" FROM worlds WHERE id = ?", id))
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
	var owner, role string
	err := db.reader.q().queryRow(ctx,
		`SELECT w.owner_id, COALESCE(m.role, '') FROM worlds w
		LEFT JOIN world_members m ON m.world_id = w.id AND m.user_id = ?
		WHERE w.id = ?`, userID, worldID).Scan(&owner, &role)
	if err != nil {
		return "", wrap("world role", err)
	}
	if userID != "" && owner == userID {
		return worldforge.RoleOwner, nil
	}
	return role, nil
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
// position. A missing world or user is not_found.
func (db *DB) SetPresence(ctx context.Context, p *worldforge.Presence) error {
	p.UpdatedAt = stamp(p.UpdatedAt)
	_, err := db.writer.q().exec(ctx,
		`INSERT INTO presence (world_id, user_id, x, y, updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (world_id, user_id) DO UPDATE SET x = excluded.x, y = excluded.y, updated_at = excluded.updated_at`,
		p.WorldID, p.UserID, p.X, p.Y, ms(p.UpdatedAt))
	return wrap("set presence", err)
}

// WorldRuntime returns the world's presence (by user), opened POIs (by id)
// and picked items (oldest first), with empty lists when there are none.
// A missing world is not_found.
func (db *DB) WorldRuntime(ctx context.Context, worldID string) (*worldforge.WorldRuntime, error) {
	q := db.reader.q()
	var one int
	if err := q.queryRow(ctx, "SELECT 1 FROM worlds WHERE id = ?", worldID).Scan(&one); err != nil {
		return nil, wrap("world runtime", err)
	}
	rt := &worldforge.WorldRuntime{}
	var err error
	rt.Presence, err = collect(scanPresence)(q.query(ctx,
		"SELECT world_id, user_id, x, y, updated_at FROM presence WHERE world_id = ? ORDER BY user_id", worldID))
	if err != nil {
		return nil, wrap("world runtime: presence", err)
	}
	rt.OpenedPOIs, err = collect(scanString)(q.query(ctx,
		"SELECT poi_id FROM opened_pois WHERE world_id = ? ORDER BY poi_id", worldID))
	if err != nil {
		return nil, wrap("world runtime: opened pois", err)
	}
	rt.PickedItems, err = collect(scanInventoryItem)(q.query(ctx,
		`SELECT world_id, user_id, item_id, poi_id, name, picked_at FROM inventory
		WHERE world_id = ? ORDER BY picked_at, item_id`, worldID))
	if err != nil {
		return nil, wrap("world runtime: inventory", err)
	}
	return rt, nil
}

func scanPresence(s scanner) (worldforge.Presence, error) {
	var (
		p  worldforge.Presence
		at int64
	)
	err := s.Scan(&p.WorldID, &p.UserID, &p.X, &p.Y, &at)
	p.UpdatedAt = fromMS(at)
	return p, err
}

func scanInventoryItem(s scanner) (worldforge.InventoryItem, error) {
	var (
		it worldforge.InventoryItem
		at int64
	)
	err := s.Scan(&it.WorldID, &it.UserID, &it.ItemID, &it.POIID, &it.Name, &at)
	it.PickedAt = fromMS(at)
	return it, err
}
