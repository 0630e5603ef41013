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
	// DroppedPresence lists, by user id, the presence outside the new
	// grid, dropped: those players must place their presence again.
	// Never nil.
	DroppedPresence []string `json:"droppedPresence"`
	// DroppedOpenedPOIs lists the opened marks dropped: those of the
	// dropped POIs (and of any POI the world no longer holds). Never nil.
	DroppedOpenedPOIs []string `json:"droppedOpenedPois"`
	// DroppedPickedItems lists, by item id, the picked items dropped: those
	// picked from a dropped POI (or from any POI the world no longer
	// holds) leave their holder's inventory with it. Never nil.
	DroppedPickedItems []string `json:"droppedPickedItems"`
}

// Plan is the store's side of the report: the new document and size, and
// what the resize deletes.
func (r *ResizeReport) Plan(doc []byte) *wf.ResizePlan {
	return &wf.ResizePlan{Doc: doc, Cols: int(r.NewCols), Rows: int(r.NewRows),
		DropPOIs: r.DroppedPOIs, DropPresence: r.DroppedPresence, DropOpened: r.DroppedOpenedPOIs, DropPicked: r.DroppedPickedItems}
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
// The runtime state rt (nil: none) is kept only where it still fits: a
// presence outside the new grid is dropped, not clamped (the player
// places it again), and so are the opened marks and picked items of the
// dropped POIs, and of any POI not among pois. A grow drops nothing that
// fits.
//
// Errors: too_small / out_of_bounds_cap (cols or rows out of 1–MaxSide),
// then as DocGrid: no_grid, freeform_grid, no_size, bad_request.
func Resize(doc json.RawMessage, cols, rows int, pois []wf.POI, rt *wf.WorldRuntime) (json.RawMessage, ResizeReport, error) {
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

		DroppedPresence: []string{}, DroppedOpenedPOIs: []string{}, DroppedPickedItems: []string{},
	}
	kept := make(map[string]bool, len(pois))
	for _, p := range pois {
		if ng.InBounds(p.X, p.Y) {
			rep.KeptPOIs++
			kept[p.ID] = true
		} else {
			rep.DroppedPOIs = append(rep.DroppedPOIs, p.ID)
		}
	}
	if rt != nil {
		for _, p := range rt.Presence {
			if !ng.InBounds(p.X, p.Y) {
				rep.DroppedPresence = append(rep.DroppedPresence, p.UserID)
			}
		}
		for _, id := range rt.OpenedPOIs {
			if !kept[id] {
				rep.DroppedOpenedPOIs = append(rep.DroppedOpenedPOIs, id)
			}
		}
		for _, it := range rt.PickedItems {
			if !kept[it.POIID] {
				rep.DroppedPickedItems = append(rep.DroppedPickedItems, it.ItemID)
			}
		}
	}
	return newDoc, rep, nil
}
