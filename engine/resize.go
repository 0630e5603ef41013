package engine

import (
	"encoding/json"
	"math"

	wf "github.com/worldforge-go/worldforge"
)

// ResizeReport says what a resize did.
type ResizeReport struct {
	OldCols      int64 `json:"oldCols"`
	OldRows      int64 `json:"oldRows"`
	NewCols      int64 `json:"newCols"`
	NewRows      int64 `json:"newRows"`
	DroppedCells int64 `json:"droppedCells"` // cells of the old grid outside the new one
	// DroppedPOIs lists, in input order, the IDs of the POIs outside the
	// new grid. Never nil.
	DroppedPOIs []string `json:"droppedPois"`
	KeptPOIs    int      `json:"keptPois"`
}

// CheckSize validates the cols and rows arguments of a resize and returns
// them as ints. The checks run in this order, over both values:
// no_size (either is nil), non_integer (NaN, infinite or fractional),
// too_small (under 1), out_of_bounds_cap (over MaxSide). The error is an
// *wf.Error whose text is the bare code.
func CheckSize(cols, rows *float64) (int, int, error) {
	if cols == nil || rows == nil {
		return 0, 0, &wf.Error{Code: wf.ENoSize}
	}
	c, r := *cols, *rows
	for _, v := range [2]float64{c, r} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v != math.Trunc(v) {
			return 0, 0, &wf.Error{Code: wf.ENonInteger}
		}
	}
	if c < 1 || r < 1 {
		return 0, 0, &wf.Error{Code: wf.ETooSmall}
	}
	if c > MaxSide || r > MaxSide {
		return 0, 0, &wf.Error{Code: wf.EOutOfBoundsCap}
	}
	return int(c), int(r), nil
}

// Resize sets the size of the grid of a world document to cols × rows, at
// once. Cells that still fit are kept exactly; new cells are Empty at
// elevation 0, and a blank grid stays blank. Every other member of the
// document is kept as written. POIs outside the new grid are reported as
// dropped (the caller deletes them); the others are counted as kept.
//
// Errors: too_small / out_of_bounds_cap (cols or rows out of 1–MaxSide),
// then as DocGrid: no_grid, freeform_grid, no_size, bad_request.
func Resize(doc json.RawMessage, cols, rows int, pois []wf.POI) (json.RawMessage, ResizeReport, error) {
	var rep ResizeReport
	if cols < 1 || rows < 1 {
		return nil, rep, &wf.Error{Code: wf.ETooSmall}
	}
	if cols > MaxSide || rows > MaxSide {
		return nil, rep, &wf.Error{Code: wf.EOutOfBoundsCap}
	}
	ms, gi, err := splitDoc(doc)
	if err == errNotObject {
		return nil, rep, &wf.Error{Code: wf.ENoGrid}
	}
	if err != nil {
		return nil, rep, err
	}
	if gi < 0 {
		return nil, rep, &wf.Error{Code: wf.ENoGrid}
	}
	g, err := gridOfMember(ms[gi].val)
	if err != nil {
		return nil, rep, err
	}
	ng := g.Resized(cols, rows)
	newDoc := joinDoc(ms, gi, ng)

	rep = ResizeReport{
		OldCols: int64(g.cols), OldRows: int64(g.rows),
		NewCols: int64(cols), NewRows: int64(rows),
		DroppedCells: int64(g.cols)*int64(g.rows) - int64(min(g.cols, cols))*int64(min(g.rows, rows)),
		DroppedPOIs:  []string{},
	}
	for _, p := range pois {
		if ng.InBounds(p.X, p.Y) {
			rep.KeptPOIs++
		} else {
			rep.DroppedPOIs = append(rep.DroppedPOIs, p.ID)
		}
	}
	return newDoc, rep, nil
}
