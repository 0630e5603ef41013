package engine

import (
	"fmt"
	"image"

	wf "github.com/worldforge-go/worldforge"
)

// Helpers for maps drawn in parts or scaled down (the web console's
// overview and tiles): the size RenderImage gives a grid, a window of a
// grid, and a rendering of a window at one pixel per block of cells.

// ImageSize returns the width and height of RenderImage's image of a
// cols × rows grid at cellPx (0 or less: the automatic size).
func ImageSize(cols, rows, cellPx int) (w, h int) {
	rg := geometry(&Grid{cols: cols, rows: rows}, cellPx)
	return rg.w, rg.h
}

// Window returns a copy of the cells of g in the rectangle of cols × rows
// cells whose top-left cell is (x, y), clipped to the grid. The copy keeps
// g's cellSizePx and blankness. For hexagons to line up with g's, y
// should be even (odd-r rows keep their parity). It panics unless (x, y)
// is a cell of g and cols, rows ≥ 1.
func (g *Grid) Window(x, y, cols, rows int) *Grid {
	if !g.InBounds(x, y) || cols < 1 || rows < 1 {
		panic(fmt.Sprintf("engine: Window(%d, %d, %d, %d) of a %d×%d grid", x, y, cols, rows, g.cols, g.rows))
	}
	cols, rows = min(cols, g.cols-x), min(rows, g.rows-y)
	w := NewGrid(cols, rows)
	w.cellPx = g.cellPx
	if g.terrain == nil {
		return w
	}
	w.terrain = make([]byte, cols*rows)
	w.elev = make([]byte, cols*rows)
	for r := range rows {
		src := (y+r)*g.cols + x
		copy(w.terrain[r*cols:(r+1)*cols], g.terrain[src:src+cols])
		copy(w.elev[r*cols:(r+1)*cols], g.elev[src:src+cols])
	}
	return w
}

// SampledSize returns the size of RenderSampled's image of a window of
// cols × rows cells at step cells per pixel.
func SampledSize(cols, rows, step int) (w, h int) {
	step = max(1, step)
	return (cols + step - 1) / step, (rows + step - 1) / step
}

// RenderSampled draws the window of cols × rows cells of g whose top-left
// cell is (x0, y0), clipped to the grid, at one pixel per step × step
// block of cells: each pixel takes the colour of the cell at its block's
// centre (the cells are read directly; no full-size image is made, so a
// 4096×4096 grid at step 4 costs a 1024×1024 image). POIs and presence in
// the window are drawn on top at a fixed size (a dot of radius 3 and a
// ring of radius 7), so that they stay visible however far the map is
// scaled down; those outside the window are skipped. Colours are those of
// RenderImage. It panics unless (x0, y0) is a cell of g and cols, rows,
// step ≥ 1.
func RenderSampled(g *Grid, x0, y0, cols, rows, step int, pois []wf.POI, presence []wf.Presence) *image.Paletted {
	if !g.InBounds(x0, y0) || cols < 1 || rows < 1 || step < 1 {
		panic(fmt.Sprintf("engine: RenderSampled(%d, %d, %d, %d, step %d) of a %d×%d grid", x0, y0, cols, rows, step, g.cols, g.rows))
	}
	cols, rows = min(cols, g.cols-x0), min(rows, g.rows-y0)
	w, h := SampledSize(cols, rows, step)
	img := image.NewPaletted(image.Rect(0, 0, w, h), palette)
	for py := range h {
		y := y0 + min(py*step+step/2, rows-1)
		line := img.Pix[py*img.Stride : py*img.Stride+w]
		if g.terrain == nil {
			fillBytes(line, palBlank)
			continue
		}
		row := y * g.cols
		for px := range line {
			i := row + x0 + min(px*step+step/2, cols-1)
			t := terrainIndex[g.terrain[i]]
			line[px] = 1 + (t-1)*elevShades + (g.elev[i] - '0')
		}
	}
	in := func(x, y int) bool { return x >= x0 && y >= y0 && x < x0+cols && y < y0+rows }
	at := func(x, y int) (float64, float64) {
		return (float64(x-x0) + 0.5) / float64(step), (float64(y-y0) + 0.5) / float64(step)
	}
	for _, p := range pois {
		if !in(p.X, p.Y) {
			continue
		}
		cx, cy := at(p.X, p.Y)
		disc(img, cx, cy, 4, palMarkerRim)
		disc(img, cx, cy, 3, poiColor(p))
	}
	for _, p := range presence {
		if !in(p.X, p.Y) {
			continue
		}
		cx, cy := at(p.X, p.Y)
		ring(img, cx, cy, 8, 2, palWhite)
		ring(img, cx, cy, 7, 3, palPresence)
	}
	return img
}

// poiColor is a POI's marker colour: orange if openable, yellow if
// pickable, red otherwise.
func poiColor(p wf.POI) uint8 {
	switch {
	case p.Openable:
		return palOpenable
	case p.Pickable:
		return palPickable
	}
	return palPOI
}
