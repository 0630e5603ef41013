package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/jsonscan"
)

// MaxSide is the largest number of columns or rows a grid may have.
const MaxSide = 4096

// DefaultCellSizePx is the cellSizePx a grid gets when its JSON names none.
const DefaultCellSizePx = wf.CellSizePx

// maxCellSizePx bounds a grid's cellSizePx.
const maxCellSizePx = 1024

// Grid is a hex grid of cols × rows cells (odd-r offset layout, row-major).
// A blank grid stores no cells: every cell is Empty at elevation 0. Any
// other grid stores one terrain byte and one elevation byte per cell, and
// nothing else.
//
// The zero Grid is not usable; make one with NewGrid or ParseGrid.
type Grid struct {
	cols, rows int
	cellPx     int
	terrain    []byte // terrain codes, len cols*rows; nil when blank
	elev       []byte // ASCII digits '0'–'9', len cols*rows; nil when blank
}

// NewGrid returns a blank grid. It panics unless 1 ≤ cols, rows ≤ MaxSide.
func NewGrid(cols, rows int) *Grid {
	if cols < 1 || rows < 1 || cols > MaxSide || rows > MaxSide {
		panic(fmt.Sprintf("engine: grid size %d×%d out of range", cols, rows))
	}
	return &Grid{cols: cols, rows: rows, cellPx: DefaultCellSizePx}
}

// Cols returns the number of columns.
func (g *Grid) Cols() int { return g.cols }

// Rows returns the number of rows.
func (g *Grid) Rows() int { return g.rows }

// CellSizePx returns the grid's cellSizePx.
func (g *Grid) CellSizePx() int { return g.cellPx }

// Blank reports whether the grid stores no cells (all Empty, elevation 0).
func (g *Grid) Blank() bool { return g.terrain == nil }

// InBounds reports whether (x, y) is a cell of the grid.
func (g *Grid) InBounds(x, y int) bool { return x >= 0 && y >= 0 && x < g.cols && y < g.rows }

// At returns the terrain and elevation of cell (x, y). Outside the grid it
// returns (0, 0).
func (g *Grid) At(x, y int) (Terrain, int) {
	if !g.InBounds(x, y) {
		return 0, 0
	}
	if g.terrain == nil {
		return Empty, 0
	}
	i := y*g.cols + x
	return Terrain(g.terrain[i]), int(g.elev[i] - '0')
}

// Set sets the terrain and elevation of cell (x, y). Setting a cell of a
// blank grid makes the grid store its cells. Set panics if (x, y) is outside
// the grid, t is not a terrain code or elev is not 0–9.
func (g *Grid) Set(x, y int, t Terrain, elev int) {
	if !g.InBounds(x, y) {
		panic(fmt.Sprintf("engine: Set(%d, %d) outside %d×%d grid", x, y, g.cols, g.rows))
	}
	if !t.Valid() {
		panic(fmt.Sprintf("engine: Set with unknown terrain %s", t))
	}
	if elev < 0 || elev > 9 {
		panic(fmt.Sprintf("engine: Set with elevation %d", elev))
	}
	g.materialize()
	i := y*g.cols + x
	g.terrain[i] = byte(t)
	g.elev[i] = byte('0' + elev)
}

// Fill sets every cell to t at elevation elev (the grid stops being blank).
// It panics like Set.
func (g *Grid) Fill(t Terrain, elev int) {
	if !t.Valid() || elev < 0 || elev > 9 {
		panic(fmt.Sprintf("engine: Fill(%s, %d)", t, elev))
	}
	g.materialize()
	fillBytes(g.terrain, byte(t))
	fillBytes(g.elev, byte('0'+elev))
}

func (g *Grid) materialize() {
	if g.terrain != nil {
		return
	}
	n := g.cols * g.rows
	g.terrain = make([]byte, n)
	g.elev = make([]byte, n)
	fillBytes(g.terrain, byte(Empty))
	fillBytes(g.elev, '0')
}

// fillBytes sets every byte of b to c by doubling copies.
func fillBytes(b []byte, c byte) {
	if len(b) == 0 {
		return
	}
	b[0] = c
	for n := 1; n < len(b); n *= 2 {
		copy(b[n:], b[:n])
	}
}

// Resized returns a copy of g with the new size: cells that still fit keep
// their terrain and elevation, new cells are Empty at elevation 0, and a
// blank grid stays blank. It panics unless 1 ≤ cols, rows ≤ MaxSide.
func (g *Grid) Resized(cols, rows int) *Grid {
	ng := NewGrid(cols, rows)
	ng.cellPx = g.cellPx
	if g.terrain == nil {
		return ng
	}
	ng.materialize()
	w, h := min(g.cols, cols), min(g.rows, rows)
	for y := range h {
		copy(ng.terrain[y*cols:y*cols+w], g.terrain[y*g.cols:y*g.cols+w])
		copy(ng.elev[y*cols:y*cols+w], g.elev[y*g.cols:y*g.cols+w])
	}
	return ng
}

// Clone returns a deep copy of g.
func (g *Grid) Clone() *Grid {
	c := *g
	if g.terrain != nil {
		c.terrain = append([]byte(nil), g.terrain...)
		c.elev = append([]byte(nil), g.elev...)
	}
	return &c
}

// Equal reports whether g and o have the same size, cellSizePx, blankness
// and cells.
func (g *Grid) Equal(o *Grid) bool {
	return g.cols == o.cols && g.rows == o.rows && g.cellPx == o.cellPx &&
		(g.terrain == nil) == (o.terrain == nil) &&
		string(g.terrain) == string(o.terrain) && string(g.elev) == string(o.elev)
}

// jsonLen returns the exact length of the grid's JSON.
func (g *Grid) jsonLen() int {
	n := len(`{"type":"hex","layout":"odd-r","cols":,"rows":,"cellSizePx":}`) +
		intLen(g.cols) + intLen(g.rows) + intLen(g.cellPx)
	if g.terrain != nil {
		// ,"terrain":[…] and ,"elevation":[…]; each row is quoted, rows
		// separated by commas.
		rowsLen := g.rows*(g.cols+2) + g.rows - 1
		n += len(`,"terrain":[]`) + len(`,"elevation":[]`) + 2*rowsLen
	}
	return n
}

func intLen(v int) int { return len(strconv.Itoa(v)) }

// AppendJSON appends the grid's JSON to dst:
//
//	{"type":"hex","layout":"odd-r","cols":C,"rows":R,"cellSizePx":32,"terrain":[…],"elevation":[…]}
//
// with no whitespace; a blank grid has no "terrain" or "elevation".
func (g *Grid) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"type":"hex","layout":"odd-r","cols":`...)
	dst = strconv.AppendInt(dst, int64(g.cols), 10)
	dst = append(dst, `,"rows":`...)
	dst = strconv.AppendInt(dst, int64(g.rows), 10)
	dst = append(dst, `,"cellSizePx":`...)
	dst = strconv.AppendInt(dst, int64(g.cellPx), 10)
	if g.terrain != nil {
		dst = append(dst, `,"terrain":`...)
		dst = g.appendRows(dst, g.terrain)
		dst = append(dst, `,"elevation":`...)
		dst = g.appendRows(dst, g.elev)
	}
	return append(dst, '}')
}

func (g *Grid) appendRows(dst, cells []byte) []byte {
	dst = append(dst, '[')
	for y := range g.rows {
		if y > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, cells[y*g.cols:(y+1)*g.cols]...)
		dst = append(dst, '"')
	}
	return append(dst, ']')
}

// MarshalJSON returns AppendJSON(nil).
func (g *Grid) MarshalJSON() ([]byte, error) {
	return g.AppendJSON(make([]byte, 0, g.jsonLen())), nil
}

// UnmarshalJSON parses data with ParseGrid.
func (g *Grid) UnmarshalJSON(data []byte) error {
	p, err := ParseGrid(data)
	if err != nil {
		return err
	}
	*g = *p
	return nil
}

// ParseGrid parses and validates a grid object (the value of a world
// document's "grid" key). A missing "type" means "hex"; "freeform" is
// refused with code freeform_grid; a missing "layout" means "odd-r";
// missing "terrain" and "elevation" make a blank grid (if only one is
// given, the other defaults to Empty or 0). Unknown keys are ignored (and
// not kept). Everything else wrong is a bad_request naming the problem.
func ParseGrid(raw json.RawMessage) (*Grid, error) {
	ms, err := scanObject(raw)
	if err != nil {
		if err == errNotObject && json.Valid(raw) {
			return nil, wf.BadRequest("grid must be a JSON object")
		}
		return nil, wf.BadRequest("grid is not valid JSON")
	}
	if err := checkGridType(ms); err != nil {
		return nil, err
	}
	return gridFromMembers(ms)
}

// checkGridType accepts a hex grid (or one with no type) and refuses the
// rest.
func checkGridType(ms []member) error {
	i := lastMember(ms, "type")
	if i < 0 || isNull(ms[i].val) {
		return nil
	}
	typ, err := stringField("type", ms[i].val)
	if err != nil {
		return err
	}
	switch typ {
	case "hex":
		return nil
	case "freeform":
		return &wf.Error{Code: wf.EFreeformGrid}
	}
	return wf.BadRequest("grid.type %q is not supported (want \"hex\")", clip(typ))
}

func gridFromMembers(ms []member) (*Grid, error) {
	var terrainV, elevV []byte
	g := &Grid{cellPx: DefaultCellSizePx}
	haveCols, haveRows := false, false
	for _, m := range ms {
		var err error
		switch m.key {
		case "type":
			// checked by checkGridType
		case "layout":
			if isNull(m.val) {
				break
			}
			var layout string
			if layout, err = stringField("layout", m.val); err == nil && layout != "odd-r" {
				err = wf.BadRequest("grid.layout %q is not supported (want \"odd-r\")", clip(layout))
			}
		case "cols":
			haveCols = !isNull(m.val)
			if haveCols {
				g.cols, err = intField("cols", m.val, 1, MaxSide)
			}
		case "rows":
			haveRows = !isNull(m.val)
			if haveRows {
				g.rows, err = intField("rows", m.val, 1, MaxSide)
			}
		case "cellSizePx":
			if !isNull(m.val) {
				g.cellPx, err = intField("cellSizePx", m.val, 1, maxCellSizePx)
			}
		case "terrain":
			terrainV = m.val
		case "elevation":
			elevV = m.val
		default:
			if !json.Valid(m.val) {
				err = wf.BadRequest("grid is not valid JSON")
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if !haveCols {
		return nil, wf.BadRequest("grid.cols is missing")
	}
	if !haveRows {
		return nil, wf.BadRequest("grid.rows is missing")
	}
	if isNull(terrainV) && isNull(elevV) {
		return g, nil
	}
	g.materialize()
	if !isNull(terrainV) {
		if err := parseRows(terrainV, "terrain", g.cols, g.rows, g.terrain, false); err != nil {
			return nil, err
		}
	}
	if !isNull(elevV) {
		if err := parseRows(elevV, "elevation", g.cols, g.rows, g.elev, true); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// parseRows parses an array of rows strings into dst, checking the row
// count, each row's length and each cell.
func parseRows(v []byte, field string, cols, rows int, dst []byte, digits bool) error {
	if v[0] != '[' {
		return wf.BadRequest("grid.%s must be an array of strings", field)
	}
	var first error // the first bad row; reported if the row count is right
	n := 0
	i := jsonscan.SkipSpace(v, 1)
	if i < len(v) && v[i] == ']' {
		i++
	} else {
		for {
			if i >= len(v) {
				return wf.BadRequest("grid.%s is not valid JSON", field)
			}
			if v[i] != '"' {
				if _, err := jsonscan.Loose.Skip(v, i); err != nil {
					return wf.BadRequest("grid.%s is not valid JSON", field)
				}
				return wf.BadRequest("grid.%s[%d] must be a string", field, n)
			}
			end, esc, err := jsonscan.Loose.String(v, i)
			if err != nil {
				return wf.BadRequest("grid.%s is not valid JSON", field)
			}
			if n < rows && first == nil {
				first = parseRow(v[i:end], esc, field, n, cols, dst[n*cols:(n+1)*cols], digits)
			}
			n++
			i = jsonscan.SkipSpace(v, end)
			if i < len(v) && v[i] == ',' {
				i = jsonscan.SkipSpace(v, i+1)
				continue
			}
			if i < len(v) && v[i] == ']' {
				i++
				break
			}
			return wf.BadRequest("grid.%s is not valid JSON", field)
		}
	}
	if jsonscan.SkipSpace(v, i) != len(v) {
		return wf.BadRequest("grid.%s is not valid JSON", field)
	}
	if n != rows {
		return wf.BadRequest("grid.%s has %d rows, want %d", field, n, rows)
	}
	return first
}

// parseRow checks one quoted row string and copies its cells into dst.
func parseRow(quoted []byte, esc bool, field string, y, cols int, dst []byte, digits bool) error {
	s := quoted[1 : len(quoted)-1]
	if esc {
		var str string
		if err := json.Unmarshal(quoted, &str); err != nil {
			return wf.BadRequest("grid.%s[%d] is not a valid JSON string", field, y)
		}
		s = []byte(str)
	}
	if len(s) != cols {
		if n := utf8.RuneCount(s); n != cols {
			return wf.BadRequest("grid.%s[%d] has %d cells, want %d", field, y, n, cols)
		}
		// As many characters as cells, but some are not ASCII.
	}
	for x, c := range s {
		if digits && (c < '0' || c > '9') || !digits && terrainIndex[c] == 0 {
			return badCell(s, x, field, y)
		}
	}
	copy(dst, s)
	return nil
}

// badCell reports the bad character at byte offset x of row s.
func badCell(s []byte, x int, field string, y int) error {
	ch := rune(s[x])
	if ch >= utf8.RuneSelf {
		ch, _ = utf8.DecodeRune(s[x:])
	}
	col := utf8.RuneCount(s[:x])
	if field == "elevation" {
		return wf.BadRequest("grid.elevation[%d] has %q at column %d, want a digit 0-9", y, ch, col)
	}
	return wf.BadRequest("grid.terrain[%d] has unknown terrain code %q at column %d", y, ch, col)
}

func stringField(name string, v []byte) (string, error) {
	var s string
	if v[0] != '"' || json.Unmarshal(v, &s) != nil {
		return "", wf.BadRequest("grid.%s must be a string", name)
	}
	return s, nil
}

// intField parses an integer from lo to hi.
func intField(name string, v []byte, lo, hi int) (int, error) {
	f, ok := number(v)
	if !ok || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, wf.BadRequest("grid.%s must be an integer from %d to %d, got %s", name, lo, hi, clip(string(v)))
	}
	return int(f), nil
}

// number parses a JSON number.
func number(v []byte) (float64, bool) {
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return 0, false
	}
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		return 0, false
	}
	return f, true
}

// clip shortens s for an error message.
func clip(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
