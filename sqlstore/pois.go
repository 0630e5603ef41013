package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/worldforge-go/worldforge"
)

// POI search limits, and the largest coordinate or radius a search takes
// (far beyond any grid: 4096 cells are 131072 px).
const (
	poiSearchDefault = 50
	poiSearchMax     = 200
	poiMaxCoord      = 1 << 31
	// poiMaxPos bounds the search position itself: the squared distance to
	// any POI within 2^24 cells of the origin then fits in an int64 (at
	// ±2^31 it overflowed to a REAL in SQLite, which failed the scan, and
	// would be "bigint out of range" in PostgreSQL).
	poiMaxPos = 1 << 30
)

const poiCols = "id, world_id, name, category, tags, x, y, items, pickable, openable, visibility, version, created_at"

// CreatePOI stores p at version 1. An empty Visibility is stored as "gm".
// A missing world is not_found.
func (db *DB) CreatePOI(ctx context.Context, p *worldforge.POI) error {
	return wrap("create poi", insertPOI(ctx, db.writer.q(), p))
}

func insertPOI(ctx context.Context, q querier, p *worldforge.POI) error {
	if p.ID == "" {
		p.ID = worldforge.NewID("poi")
	}
	if p.Visibility == "" {
		p.Visibility = worldforge.AudienceGM
	}
	p.Version = 1
	p.CreatedAt = stamp(p.CreatedAt)
	tags, err := marshalList(p.Tags)
	if err != nil {
		return fmt.Errorf("tags: %w", err)
	}
	items, err := marshalList(p.Items)
	if err != nil {
		return fmt.Errorf("items: %w", err)
	}
	_, err = q.exec(ctx,
		"INSERT INTO pois ("+poiCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		p.ID, p.WorldID, p.Name, p.Category, tags, p.X, p.Y, items,
		b2i(p.Pickable), b2i(p.Openable), p.Visibility, p.Version, ms(p.CreatedAt))
	return err
}

func scanPOI(s scanner, extra ...any) (worldforge.POI, error) {
	var (
		p                  worldforge.POI
		tags, items        string
		pickable, openable int
		created            int64
	)
	dest := append([]any{&p.ID, &p.WorldID, &p.Name, &p.Category, &tags, &p.X, &p.Y, &items,
		&pickable, &openable, &p.Visibility, &p.Version, &created}, extra...)
	if err := s.Scan(dest...); err != nil {
		return p, err
	}
	if err := json.Unmarshal([]byte(tags), &p.Tags); err != nil {
		return p, fmt.Errorf("poi %s tags: %w", p.ID, err)
	}
	if err := json.Unmarshal([]byte(items), &p.Items); err != nil {
		return p, fmt.Errorf("poi %s items: %w", p.ID, err)
	}
	p.Pickable, p.Openable = pickable != 0, openable != 0
	p.CreatedAt = fromMS(created)
	return p, nil
}

// SearchPOIs answers q on one world. Name matches a substring,
// case-insensitive; Category matches exactly; every tag of Tags must be on
// the POI; PartyOnly keeps visibility "party". With X and Y (pixels) the
// result is nearest first by the distance from (X, Y) to the cell centre
// ((x+0.5)·CellSizePx, (y+0.5)·CellSizePx), and RadiusPx, when set, keeps
// the POIs within it; otherwise it is by name. RadiusPx without X and Y is
// ignored. Limit defaults to 50 and is capped at 200.
//
// All of it runs in SQL: the radius becomes a bounding box on the cell
// coordinates, answered by the (world_id, x, y) index, then an exact
// integer test of the squared distance, so LIMIT is exact too.
func (db *DB) SearchPOIs(ctx context.Context, worldID string, q worldforge.POIQuery) ([]worldforge.POI, error) {
	if q.X == nil || q.Y == nil || q.RadiusPx != nil {
		return db.searchPOIs(ctx, worldID, q)
	}
	// Nearest first without a radius: ask the index for rings of growing
	// radius. When a ring holds a whole page, nothing outside it can be
	// nearer than what it returned; otherwise widen. Only a world whose
	// matches are fewer than a page, or all far away, is scanned whole.
	limit := clampLimit(q.Limit, poiSearchDefault, poiSearchMax)
	for cells := 16.0; cells <= 4096; cells *= 4 {
		ring := q
		r := cells * worldforge.CellSizePx
		ring.RadiusPx = &r
		got, err := db.searchPOIs(ctx, worldID, ring)
		if err != nil || len(got) >= limit {
			return got, err
		}
	}
	return db.searchPOIs(ctx, worldID, q)
}

func (db *DB) searchPOIs(ctx context.Context, worldID string, q worldforge.POIQuery) ([]worldforge.POI, error) {
	const (
		c    = worldforge.CellSizePx
		half = c / 2
	)
	hasPos := q.X != nil && q.Y != nil
	var qx, qy int64
	if hasPos {
		qx, qy = int64(*q.X), int64(*q.Y)
		if qx < -poiMaxPos || qx > poiMaxPos || qy < -poiMaxPos || qy > poiMaxPos {
			return nil, wrap("search pois", worldforge.BadRequest("x/y out of range"))
		}
	}
	if q.RadiusPx != nil && (math.IsNaN(*q.RadiusPx) || *q.RadiusPx < 0) {
		return nil, wrap("search pois", worldforge.BadRequest("radiusPx must be a number >= 0"))
	}

	var (
		b    strings.Builder
		args []any
	)
	b.WriteString("SELECT " + poiCols)
	// dist2 is the squared pixel distance from (qx, qy) to the cell centre.
	dist2 := fmt.Sprintf("((x * %d + %d - ?) * (x * %d + %d - ?) + (y * %d + %d - ?) * (y * %d + %d - ?))",
		c, half, c, half, c, half, c, half)
	if hasPos {
		b.WriteString(", " + dist2 + " AS d2")
		args = append(args, qx, qx, qy, qy)
	}
	b.WriteString(" FROM pois WHERE world_id = ?")
	args = append(args, worldID)
	if hasPos && q.RadiusPx != nil && *q.RadiusPx < poiMaxCoord {
		r := *q.RadiusPx
		// Cells whose centre can be within r, widened by one cell so that
		// float rounding never drops one; the exact test follows.
		x0, x1 := int64(math.Floor((float64(qx)-r)/c))-1, int64(math.Ceil((float64(qx)+r)/c))+1
		y0, y1 := int64(math.Floor((float64(qy)-r)/c))-1, int64(math.Ceil((float64(qy)+r)/c))+1
		b.WriteString(" AND x BETWEEN ? AND ? AND y BETWEEN ? AND ? AND " + dist2 + " <= ?")
		// The squared distance is an integer: d² <= r² exactly when d² <= ⌊r²⌋.
		args = append(args, x0, x1, y0, y1, qx, qx, qy, qy, int64(math.Floor(r*r)))
	}
	if q.Name != "" {
		b.WriteString(` AND LOWER(name) LIKE ? ESCAPE '\'`)
		args = append(args, containsPattern(q.Name))
	}
	if q.Category != "" {
		b.WriteString(" AND category = ?")
		args = append(args, q.Category)
	}
	if q.PartyOnly {
		b.WriteString(" AND visibility = ?")
		args = append(args, worldforge.AudienceParty)
	}
	if len(q.Tags) > 0 {
		// Every tag: one condition with the tags as one JSON array
		// parameter, whatever their number (a condition per tag reached
		// SQLite's expression depth limit at 934 tags).
		tags := slices.Clone(q.Tags)
		slices.Sort(tags)
		tags = slices.Compact(tags)
		want, err := json.Marshal(tags)
		if err != nil {
			return nil, wrap("search pois", err)
		}
		b.WriteString(" AND " + db.reader.d.jsonArrayHasAll("pois.tags"))
		args = append(args, string(want), len(tags))
	}
	if hasPos {
		b.WriteString(" ORDER BY d2, name, id")
	} else {
		b.WriteString(" ORDER BY name, id")
	}
	b.WriteString(" LIMIT ?")
	args = append(args, clampLimit(q.Limit, poiSearchDefault, poiSearchMax))

	out, err := collect(func(s scanner) (worldforge.POI, error) {
		if hasPos {
			var d2 int64
			return scanPOI(s, &d2)
		}
		return scanPOI(s)
	})(db.reader.q().query(ctx, b.String(), args...))
	return out, wrap("search pois", err)
}
