package sqlstore

import (
	"context"
	"database/sql"
	"slices"
	"strings"

	"github.com/worldforge-go/worldforge"
)

// Atlas search limits.
const (
	atlasSearchDefault = 20
	atlasSearchMax     = 100
)

const atlasCols = "id, world_id, parent_id, name, level, terrain_type, doc, version, created_at, updated_at"

func scanAtlasNode(s scanner) (worldforge.AtlasNode, error) {
	var (
		n                worldforge.AtlasNode
		parent, doc      sql.NullString
		created, updated int64
	)
	err := s.Scan(&n.ID, &n.WorldID, &parent, &n.Name, &n.Level, &n.TerrainType, &doc, &n.Version, &created, &updated)
	n.ParentID = parent.String
	n.JSON = fromNullJSON(doc)
	n.CreatedAt, n.UpdatedAt = fromMS(created), fromMS(updated)
	return n, err
}

// CreateAtlasNode stores n at version 1. A missing world or parent is
// not_found.
func (db *DB) CreateAtlasNode(ctx context.Context, n *worldforge.AtlasNode) error {
	return wrap("create atlas node", insertAtlasNode(ctx, db.writer.q(), n))
}

func insertAtlasNode(ctx context.Context, q querier, n *worldforge.AtlasNode) error {
	if n.ID == "" {
		n.ID = worldforge.NewID("atlas")
	}
	n.Version = 1
	n.CreatedAt = stamp(n.CreatedAt)
	if n.UpdatedAt.IsZero() {
		n.UpdatedAt = n.CreatedAt
	}
	n.UpdatedAt = stamp(n.UpdatedAt)
	_, err := q.exec(ctx,
		"INSERT INTO atlas_nodes ("+atlasCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		n.ID, n.WorldID, nullStr(n.ParentID), n.Name, n.Level, n.TerrainType, jsonArg(n.JSON),
		n.Version, ms(n.CreatedAt), ms(n.UpdatedAt))
	return err
}

// FindAtlasNodeByID returns the node, or not_found.
func (db *DB) FindAtlasNodeByID(ctx context.Context, id string) (*worldforge.AtlasNode, error) {
	n, err := scanAtlasNode(db.reader.q().queryRow(ctx, "SELECT "+atlasCols+" FROM atlas_nodes WHERE id = ?", id))
	if err != nil {
		return nil, wrap("find atlas node", err)
	}
	return &n, nil
}

// ListAtlasNodesPage implements worldforge.AtlasStore: one page of the
// world's nodes, through the index (world_id, level, name, id) (migration
// 007). Documents count toward q.MaxBytes.
func (db *DB) ListAtlasNodesPage(ctx context.Context, worldID string, level int, q worldforge.PageQuery) (*worldforge.Page[worldforge.AtlasNode], error) {
	limit := pageLimit(q)
	args := []any{worldID}
	if level > 0 {
		args = append(args, level)
	}
	if a := q.After; a != nil {
		lvl, name := a.Level, a.Name
		if a.FromRow {
			err := db.reader.q().queryRow(ctx, "SELECT level, name"+atlasPageWhere(level > 0)+" AND id = ?",
				append(slices.Clip(args), a.ID)...).Scan(&lvl, &name)
			if errNoRows(err) {
				err = errRowLeft()
			}
			if err != nil {
				return nil, wrap("list atlas nodes", err)
			}
		}
		if level > 0 {
			args = append(args, name, a.ID)
		} else {
			args = append(args, lvl, name, a.ID)
		}
	}
	args = append(args, limit+1)
	rows, err := db.reader.q().query(ctx, atlasPageSQL(level > 0, q.After != nil), args...)
	page, err := readPage(rows, err, scanAtlasNode, limit, q.MaxBytes, func(n *worldforge.AtlasNode) int { return len(n.JSON) })
	return page, wrap("list atlas nodes", err)
}

func atlasPageWhere(level bool) string {
	if level {
		return " FROM atlas_nodes WHERE world_id = ? AND level = ?"
	}
	return " FROM atlas_nodes WHERE world_id = ?"
}

// atlasPageSQL is ListAtlasNodesPage's statement. Its arguments: the
// world, the level (level), the previous key (after: its level unless the
// level is fixed, its name and id), the limit.
func atlasPageSQL(level, after bool) string {
	query := "SELECT " + atlasCols + atlasPageWhere(level)
	switch {
	case after && level: // the level is fixed: the key is the rest of the row value
		query += " AND (name, id) > (?, ?)"
	case after:
		query += " AND (level, name, id) > (?, ?, ?)"
	}
	return query + " ORDER BY level, name, id LIMIT ?"
}

// SearchAtlasNodes finds nodes of s.WorldIDs (none → no result) whose name
// holds s.Q, case-insensitive, by name. Limit defaults to 20 and is capped
// at 100.
func (db *DB) SearchAtlasNodes(ctx context.Context, s worldforge.AtlasSearch) ([]worldforge.AtlasNode, error) {
	if len(s.WorldIDs) == 0 {
		return []worldforge.AtlasNode{}, nil
	}
	var b strings.Builder
	b.WriteString("SELECT " + atlasCols + " FROM atlas_nodes WHERE world_id IN (")
	b.WriteString(placeholders(len(s.WorldIDs)))
	b.WriteString(")")
	args := make([]any, 0, len(s.WorldIDs)+2)
	for _, id := range s.WorldIDs {
		args = append(args, id)
	}
	if s.Q != "" {
		b.WriteString(` AND LOWER(name) LIKE ? ESCAPE '\'`)
		args = append(args, containsPattern(s.Q))
	}
	b.WriteString(" ORDER BY name, id LIMIT ?")
	args = append(args, clampLimit(s.Limit, atlasSearchDefault, atlasSearchMax))
	out, err := collect(scanAtlasNode)(db.reader.q().queryOnce(ctx, b.String(), args...))
	return out, wrap("search atlas nodes", err)
}

// CountAtlasNodes counts the world's nodes.
func (db *DB) CountAtlasNodes(ctx context.Context, worldID string) (int, error) {
	var n int
	err := db.reader.q().queryRow(ctx, "SELECT COUNT(*) FROM atlas_nodes WHERE world_id = ?", worldID).Scan(&n)
	return n, wrap("count atlas nodes", err)
}
