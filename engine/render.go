package engine

import (
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"

	wf "github.com/worldforge-go/worldforge"
)

// RenderOptions tune Render.
type RenderOptions struct {
	// CellPx is the width of one cell in pixels. 0 (or less) picks the
	// largest size, up to 64, that keeps the image within 2048 px on both
	// sides, but never under 1 px (so a grid over 2048 columns gives a wider
	// image). Any value is capped so that no side passes MaxImageSide.
	CellPx int
}

const (
	// MaxImageSide bounds the width and height of a rendered image (a
	// 4096-column grid at 1 px per cell still fits).
	MaxImageSide  = 8192
	autoImageSide = 2048
	maxAutoCellPx = 64
	// minHexCellPx is the smallest cell drawn as a hexagon; smaller cells
	// are square blocks, odd rows shifted by half a block.
	minHexCellPx = 6
	// minOutlineCellPx is the smallest cell that gets an outline (blank
	// grids are outlined from minHexCellPx).
	minOutlineCellPx = 10
)

// Palette layout: 0 transparent, then every terrain at elevations 0–9, then
// the fixed colours.
const elevShades = 10

var (
	palBlank     = uint8(1 + len(terrainTable)*elevShades)
	palOutline   = palBlank + 1
	palOpenable  = palBlank + 2
	palPickable  = palBlank + 3
	palPOI       = palBlank + 4
	palPresence  = palBlank + 5
	palMarkerRim = palBlank + 6
	palWhite     = palBlank + 7
	palette      = makePalette()
)

func makePalette() color.Palette {
	p := color.Palette{color.NRGBA{}}
	for _, t := range terrainTable {
		for e := range elevShades {
			p = append(p, shade(t.color, e))
		}
	}
	return append(p,
		rgb(0xee, 0xeb, 0xe3), // blank fill
		rgb(0x33, 0x30, 0x2c), // outline
		rgb(0xff, 0x8c, 0x00), // openable POI
		rgb(0xff, 0xd7, 0x00), // pickable POI
		rgb(0xd3, 0x2f, 0x2f), // other POI
		rgb(0xe0, 0x40, 0xfb), // presence
		rgb(0x10, 0x10, 0x10), // marker rim
		rgb(0xff, 0xff, 0xff), // white
	)
}

// shade darkens low cells and lightens high ones.
func shade(c color.NRGBA, e int) color.NRGBA {
	f := 0.80 + 0.04*float64(e)
	s := func(v uint8) uint8 { return uint8(min(255, math.Round(float64(v)*f))) }
	return color.NRGBA{s(c.R), s(c.G), s(c.B), 0xff}
}

// Render writes a PNG of a world document's grid: cells filled with their
// terrain colour (darker when low, lighter when high), thin outlines when
// cells are big enough, POIs as dots (orange if openable, yellow if
// pickable, red otherwise) and player presence as a magenta ring. A blank
// grid is a light neutral fill with outlines. POIs and presence outside the
// grid are skipped.
//
// Errors: as DocGrid (no_grid, freeform_grid, no_size, bad_request), and
// whatever w returns.
func Render(w io.Writer, doc json.RawMessage, pois []wf.POI, presence []wf.Presence, opt RenderOptions) error {
	g, err := DocGrid(doc)
	if err != nil {
		return err
	}
	return png.Encode(w, RenderImage(g, pois, presence, opt))
}

// renderGeom is the pixel geometry of a rendering.
type renderGeom struct {
	cell  int     // cell width in pixels
	hex   bool    // hexagons (else blocks)
	r     float64 // hex circumradius
	pitch float64 // hex row pitch
	w, h  int     // image size
}

func geometry(g *Grid, cellPx int) renderGeom {
	size := func(s int) (int, int, bool) {
		if s >= minHexCellPx {
			r := float64(s) / math.Sqrt(3)
			w := g.cols * s
			if g.rows > 1 {
				w += s / 2
			}
			return w, int(math.Ceil(2*r + float64(g.rows-1)*1.5*r)), true
		}
		return g.cols*s + s/2, g.rows * s, false
	}
	s := min(cellPx, MaxImageSide)
	if s <= 0 {
		s = maxAutoCellPx
		for s > 1 {
			if w, h, _ := size(s); w <= autoImageSide && h <= autoImageSide {
				break
			}
			s--
		}
	}
	for s > 1 {
		if w, h, _ := size(s); w <= MaxImageSide && h <= MaxImageSide {
			break
		}
		s--
	}
	w, h, hex := size(s)
	r := float64(s) / math.Sqrt(3)
	return renderGeom{cell: s, hex: hex, r: r, pitch: 1.5 * r, w: w, h: h}
}

// center returns the pixel centre of a cell.
func (rg renderGeom) center(x, y int) (float64, float64) {
	if rg.hex {
		return float64(rg.cell) * (float64(x) + 0.5 + 0.5*float64(y&1)), rg.r + float64(y)*rg.pitch
	}
	return float64(x*rg.cell+(y&1)*(rg.cell/2)) + float64(rg.cell)/2, float64(y*rg.cell) + float64(rg.cell)/2
}

// RenderImage draws the grid as Render does and returns the image.
func RenderImage(g *Grid, pois []wf.POI, presence []wf.Presence, opt RenderOptions) *image.Paletted {
	rg := geometry(g, opt.CellPx)
	img := image.NewPaletted(image.Rect(0, 0, rg.w, rg.h), palette)
	fill := func(i int) uint8 {
		if g.terrain == nil {
			return palBlank
		}
		t := terrainIndex[g.terrain[i]]
		return 1 + (t-1)*elevShades + (g.elev[i] - '0')
	}
	if rg.hex {
		outline := rg.cell >= minOutlineCellPx || g.terrain == nil
		drawHexes(img, g, rg, fill, outline)
	} else {
		drawBlocks(img, g, rg, fill)
	}
	for _, p := range pois {
		if !g.InBounds(p.X, p.Y) {
			continue
		}
		c := poiColor(p)
		cx, cy := rg.center(p.X, p.Y)
		rad := max(1, float64(rg.cell)/4)
		if rad >= 3 {
			disc(img, cx, cy, rad+1, palMarkerRim)
		}
		disc(img, cx, cy, rad, c)
	}
	for _, p := range presence {
		if !g.InBounds(p.X, p.Y) {
			continue
		}
		cx, cy := rg.center(p.X, p.Y)
		outer := max(1.5, float64(rg.cell)*0.42)
		width := max(1, float64(rg.cell)/8)
		ring(img, cx, cy, outer+1, outer-width-1, palWhite)
		ring(img, cx, cy, outer, outer-width, palPresence)
	}
	return img
}

// drawHexes fills every pixel with the colour of the hex it falls in,
// outlining where the hex changes.
func drawHexes(img *image.Paletted, g *Grid, rg renderGeom, fill func(int) uint8, outline bool) {
	rows := [3][]int32{make([]int32, rg.w), make([]int32, rg.w), make([]int32, rg.w)}
	hexRow(g, rg, 0, rows[1])
	for py := range rg.h {
		prev, cur, next := rows[0], rows[1], rows[2]
		if py+1 < rg.h {
			hexRow(g, rg, py+1, next)
		}
		line := img.Pix[py*img.Stride : py*img.Stride+rg.w]
		for px, i := range cur {
			if i < 0 {
				continue
			}
			if outline && ((px > 0 && cur[px-1] != i) || (py > 0 && prev[px] != i) ||
				px == 0 || py == 0 || px+1 == rg.w || py+1 == rg.h ||
				cur[px+1] < 0 || (py+1 < rg.h && next[px] < 0)) {
				line[px] = palOutline
				continue
			}
			line[px] = fill(int(i))
		}
		rows[0], rows[1], rows[2] = cur, next, prev
	}
}

// hexRow sets out[px] to the index of the cell under each pixel of row py,
// or -1.
func hexRow(g *Grid, rg renderGeom, py int, out []int32) {
	y := float64(py) + 0.5 - rg.r
	rr := (2.0 / 3.0) * y / rg.r
	for px := range out {
		x := float64(px) + 0.5 - float64(rg.cell)/2
		q := (math.Sqrt(3)/3*x - y/3) / rg.r
		cx, cy := hexRound(q, rr)
		if !g.InBounds(cx, cy) {
			out[px] = -1
			continue
		}
		out[px] = int32(cy*g.cols + cx)
	}
}

// hexRound rounds fractional axial coordinates to the nearest hex and
// returns it in odd-r offset coordinates.
func hexRound(q, r float64) (int, int) {
	s := -q - r
	rq, rr, rs := math.Round(q), math.Round(r), math.Round(s)
	dq, dr, ds := math.Abs(rq-q), math.Abs(rr-r), math.Abs(rs-s)
	switch {
	case dq > dr && dq > ds:
		rq = -rr - rs
	case dr > ds:
		rr = -rq - rs
	}
	return fromAxial(int(rq), int(rr))
}

func drawBlocks(img *image.Paletted, g *Grid, rg renderGeom, fill func(int) uint8) {
	s := rg.cell
	for y := range g.rows {
		off := (y & 1) * (s / 2)
		for x := range g.cols {
			c := fill(y*g.cols + x)
			for py := y * s; py < (y+1)*s; py++ {
				row := img.Pix[py*img.Stride:]
				for px := off + x*s; px < off+(x+1)*s; px++ {
					row[px] = c
				}
			}
		}
	}
}

// disc fills a disc of radius rad centred on (cx, cy).
func disc(img *image.Paletted, cx, cy, rad float64, c uint8) {
	ring(img, cx, cy, rad, -1, c)
}

// ring fills the pixels whose centres lie between radii in and out.
func ring(img *image.Paletted, cx, cy, out, in float64, c uint8) {
	b := img.Bounds()
	x0, x1 := max(b.Min.X, int(math.Floor(cx-out))), min(b.Max.X-1, int(math.Ceil(cx+out)))
	y0, y1 := max(b.Min.Y, int(math.Floor(cy-out))), min(b.Max.Y-1, int(math.Ceil(cy+out)))
	for py := y0; py <= y1; py++ {
		for px := x0; px <= x1; px++ {
			dx, dy := float64(px)+0.5-cx, float64(py)+0.5-cy
			d2 := dx*dx + dy*dy
			if d2 <= out*out && (in < 0 || d2 > in*in) {
				img.Pix[py*img.Stride+px] = c
			}
		}
	}
}
