// Package mapview draws world maps for the web console: an overview of
// at most OverviewMax pixels on its long side for a grid of any size, and
// tiles of at most TileMax pixels on zoom levels down to cells of
// DeepCellPx pixels, with POIs and party presence drawn on top.
//
// A large grid is never drawn whole: the overview of a 4096×4096 grid
// samples one cell per 4 × 4 block straight from the grid
// (engine.RenderSampled), and a tile draws only its own window of cells
// (engine.Grid.Window, then engine.RenderImage). Encoded PNGs are kept in
// a small LRU cache with a byte budget, keyed by world, version, overlay
// (POIs and presence) and tile; the parsed grids they are drawn from in
// another, so zooming into a large world parses its document once; at
// most Options.Loads grids are read at a time, and concurrent requests
// for the same grid share one read.
//
// The drawing uses the engine's own renderer and the standard library's
// image/png; no other library is needed.
package mapview

import (
	"image"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/engine"
)

const (
	// OverviewMax bounds the overview's width and height.
	OverviewMax = 1024
	// TileMax bounds a tile's width and height.
	TileMax = 512
	// DeepCellPx is the cell width on the deepest zoom level: hexagons
	// with outlines, readable one by one.
	DeepCellPx = 16
	// maxOverviewCellPx bounds the cells of a small world's overview.
	maxOverviewCellPx = 32
)

// Level is one zoom level. A cell is CellPx pixels wide, or, when Step is
// over 1, a pixel covers Step × Step cells. The level is cut into tiles of
// TileCols × TileRows cells (TileRows even, so hexagons keep their
// row parity), TilesX across and TilesY down; those at the right and
// bottom edges cover what remains.
type Level struct {
	CellPx             int
	Step               int
	TileCols, TileRows int
	TilesX, TilesY     int
}

// Layout is the geometry of a cols × rows grid's map. Level 0 is the
// overview, one tile of the whole grid (at most OverviewMax pixels on a
// side); levels 1 to len(Levels)-1 are tiled at TileMax pixels, each
// more detailed than the one before (twice, but for the last step), the
// last showing cells of DeepCellPx pixels. A world small enough to be readable whole has only
// level 0.
type Layout struct {
	Cols, Rows int
	Levels     []Level
}

// NewLayout returns the layout of a cols × rows grid. Errors: bad_request
// unless 1 ≤ cols, rows ≤ engine.MaxSide.
func NewLayout(cols, rows int) (*Layout, error) {
	if cols < 1 || rows < 1 || cols > engine.MaxSide || rows > engine.MaxSide {
		return nil, wf.BadRequest("a map needs a grid of 1 to %d cells a side, got %d×%d", engine.MaxSide, cols, rows)
	}
	l := &Layout{Cols: cols, Rows: rows}
	ov := Level{CellPx: 1, Step: 1, TileCols: cols, TileRows: rows, TilesX: 1, TilesY: 1}
	if cols > OverviewMax || rows > OverviewMax {
		ov.Step = (max(cols, rows) + OverviewMax - 1) / OverviewMax
	} else {
		for s := maxOverviewCellPx; s > 1; s-- {
			if w, h := engine.ImageSize(cols, rows, s); w <= OverviewMax && h <= OverviewMax {
				ov.CellPx = s
				break
			}
		}
	}
	l.Levels = append(l.Levels, ov)
	for n := ov.Step; n > 1; {
		n = (n + 1) / 2
		if n > 1 {
			l.Levels = append(l.Levels, l.tiled(1, n))
		}
	}
	s := ov.CellPx
	if ov.Step > 1 {
		l.Levels = append(l.Levels, l.tiled(1, 1))
	}
	for s < DeepCellPx {
		s = min(2*s, DeepCellPx)
		l.Levels = append(l.Levels, l.tiled(s, 1))
	}
	return l, nil
}

// tiled is the level at cellPx pixels per cell or step cells per pixel.
func (l *Layout) tiled(cellPx, step int) Level {
	lv := Level{CellPx: cellPx, Step: step}
	if step > 1 {
		lv.TileCols, lv.TileRows = TileMax*step, TileMax*step
	} else {
		lv.TileCols = (TileMax - cellPx/2) / cellPx
		for w, _ := engine.ImageSize(lv.TileCols, 2, cellPx); w > TileMax && lv.TileCols > 1; w, _ = engine.ImageSize(lv.TileCols, 2, cellPx) {
			lv.TileCols--
		}
		lv.TileRows = 2
		for {
			if _, h := engine.ImageSize(lv.TileCols, lv.TileRows+2, cellPx); h > TileMax {
				break
			}
			lv.TileRows += 2
		}
	}
	lv.TilesX = (l.Cols + lv.TileCols - 1) / lv.TileCols
	lv.TilesY = (l.Rows + lv.TileRows - 1) / lv.TileRows
	return lv
}

// Depth is the number of levels (the deepest is Depth()-1).
func (l *Layout) Depth() int { return len(l.Levels) }

// OverviewSize returns the overview's width and height in pixels.
func (l *Layout) OverviewSize() (w, h int) {
	w, h, _ = l.TileSize(0, 0, 0)
	return w, h
}

// TileOf returns the tile of level z that holds cell (x, y). Errors:
// bad_request for a level or cell outside the map.
func (l *Layout) TileOf(z, x, y int) (tx, ty int, err error) {
	if z < 0 || z >= len(l.Levels) {
		return 0, 0, wf.BadRequest("map zoom level must be 0 to %d, got %d", len(l.Levels)-1, z)
	}
	if x < 0 || y < 0 || x >= l.Cols || y >= l.Rows {
		return 0, 0, wf.BadRequest("cell (%d, %d) is outside the %d×%d grid", x, y, l.Cols, l.Rows)
	}
	lv := l.Levels[z]
	return x / lv.TileCols, y / lv.TileRows, nil
}

// TileCells returns the cells tile (x, y) of level z covers. Errors:
// bad_request for a level or tile outside the map.
func (l *Layout) TileCells(z, x, y int) (image.Rectangle, error) {
	if z < 0 || z >= len(l.Levels) {
		return image.Rectangle{}, wf.BadRequest("map zoom level must be 0 to %d, got %d", len(l.Levels)-1, z)
	}
	lv := l.Levels[z]
	if x < 0 || y < 0 || x >= lv.TilesX || y >= lv.TilesY {
		return image.Rectangle{}, wf.BadRequest("map tile (%d, %d) is outside zoom level %d's %d×%d tiles", x, y, z, lv.TilesX, lv.TilesY)
	}
	x0, y0 := x*lv.TileCols, y*lv.TileRows
	return image.Rect(x0, y0, min(x0+lv.TileCols, l.Cols), min(y0+lv.TileRows, l.Rows)), nil
}

// TileSize returns the pixel size of tile (x, y) of level z. Errors: as
// TileCells.
func (l *Layout) TileSize(z, x, y int) (w, h int, err error) {
	r, err := l.TileCells(z, x, y)
	if err != nil {
		return 0, 0, err
	}
	lv := l.Levels[z]
	if lv.Step > 1 {
		w, h = engine.SampledSize(r.Dx(), r.Dy(), lv.Step)
		return w, h, nil
	}
	w, h = engine.ImageSize(r.Dx(), r.Dy(), lv.CellPx)
	return w, h, nil
}

// Child is a tile of the next level and the part of its parent's
// picture it covers, in the parent picture's pixels (approximate at the
// hexagons' edges): what a click on the parent zooms into.
type Child struct {
	X, Y int
	Area image.Rectangle
}

// Children returns the tiles of level z+1 that tile (x, y) of level z
// covers (none on the deepest level). Errors: as TileCells.
func (l *Layout) Children(z, x, y int) ([]Child, error) {
	r, err := l.TileCells(z, x, y)
	if err != nil || z+1 >= len(l.Levels) {
		return nil, err
	}
	w, h, _ := l.TileSize(z, x, y)
	lv := l.Levels[z+1]
	px := func(c, lo, span, size int) int { return (c - lo) * size / span }
	var out []Child
	for ty := r.Min.Y / lv.TileRows; ty*lv.TileRows < r.Max.Y; ty++ {
		for tx := r.Min.X / lv.TileCols; tx*lv.TileCols < r.Max.X; tx++ {
			cr, _ := l.TileCells(z+1, tx, ty)
			in := cr.Intersect(r)
			out = append(out, Child{X: tx, Y: ty, Area: image.Rect(
				px(in.Min.X, r.Min.X, r.Dx(), w), px(in.Min.Y, r.Min.Y, r.Dy(), h),
				px(in.Max.X, r.Min.X, r.Dx(), w), px(in.Max.Y, r.Min.Y, r.Dy(), h))})
		}
	}
	return out, nil
}

// Centre returns the cell at the centre of tile (x, y) of level z.
// Errors: as TileCells.
func (l *Layout) Centre(z, x, y int) (cx, cy int, err error) {
	r, err := l.TileCells(z, x, y)
	if err != nil {
		return 0, 0, err
	}
	return (r.Min.X + r.Max.X - 1) / 2, (r.Min.Y + r.Max.Y - 1) / 2, nil
}
