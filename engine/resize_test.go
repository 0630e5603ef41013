package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	wf "github.com/worldforge-go/worldforge"
	"pgregory.net/rapid"
)

func f64(v float64) *float64 { return &v }

func TestCheckSize(t *testing.T) {
	tests := []struct {
		cols, rows *float64
		code       string
		c, r       int
	}{
		{nil, nil, wf.ENoSize, 0, 0},
		{nil, f64(5), wf.ENoSize, 0, 0},
		{f64(5), nil, wf.ENoSize, 0, 0},
		{f64(math.NaN()), f64(5), wf.ENonInteger, 0, 0},
		{f64(5), f64(math.Inf(1)), wf.ENonInteger, 0, 0},
		{f64(math.Inf(-1)), f64(5), wf.ENonInteger, 0, 0},
		{f64(1.5), f64(5), wf.ENonInteger, 0, 0},
		{f64(-0.5), f64(5), wf.ENonInteger, 0, 0},
		{f64(5000.5), f64(5), wf.ENonInteger, 0, 0},
		{f64(0), f64(5), wf.ETooSmall, 0, 0},
		{f64(5), f64(-3), wf.ETooSmall, 0, 0},
		{f64(0), f64(5000), wf.ETooSmall, 0, 0},
		{f64(4097), f64(5), wf.EOutOfBoundsCap, 0, 0},
		{f64(5), f64(1e12), wf.EOutOfBoundsCap, 0, 0},
		{f64(1), f64(1), "", 1, 1},
		{f64(4096), f64(4096), "", 4096, 4096},
		{f64(16), f64(12), "", 16, 12},
	}
	for _, tt := range tests {
		c, r, err := CheckSize(tt.cols, tt.rows)
		name := fmt.Sprintf("CheckSize(%v, %v)", deref(tt.cols), deref(tt.rows))
		if code(err) != tt.code {
			t.Errorf("%s error %v, want %q", name, err, tt.code)
			continue
		}
		if err != nil && err.Error() != tt.code {
			t.Errorf("%s error renders %q, want %q", name, err, tt.code)
		}
		if c != tt.c || r != tt.r {
			t.Errorf("%s = %d, %d, want %d, %d", name, c, r, tt.c, tt.r)
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestResizeErrors(t *testing.T) {
	ok := `{"grid":{"cols":4,"rows":4}}`
	tests := []struct {
		doc        string
		cols, rows int
		code       string
	}{
		{ok, 0, 4, wf.ETooSmall},
		{ok, 4, -1, wf.ETooSmall},
		{ok, 4097, 4, wf.EOutOfBoundsCap},
		{``, 4, 4, wf.ENoGrid},
		{`null`, 4, 4, wf.ENoGrid},
		{`[]`, 4, 4, wf.ENoGrid},
		{`{"name":"x"}`, 4, 4, wf.ENoGrid},
		{`{"grid":null}`, 4, 4, wf.ENoGrid},
		{`{"grid":{"type":"freeform","image":"x.png"}}`, 4, 4, wf.EFreeformGrid},
		{`{"grid":{"type":"hex"}}`, 4, 4, wf.ENoSize},
		{`{"grid":{"cols":0,"rows":3}}`, 4, 4, wf.ENoSize},
		{`{"grid":{"cols":2,"rows":2,"terrain":["gg"]}}`, 4, 4, wf.EBadRequest},
		{`{"grid":{"cols":2,"rows":2}`, 4, 4, wf.EBadRequest},
		{`{"grid":{"cols":2,"rows":2},"x":tru}`, 4, 4, wf.EBadRequest},
	}
	for _, tt := range tests {
		_, _, err := Resize(json.RawMessage(tt.doc), tt.cols, tt.rows, nil, nil)
		if code(err) != tt.code {
			t.Errorf("Resize(%s, %d, %d) error %v, want %q", tt.doc, tt.cols, tt.rows, err, tt.code)
		}
		if tt.code != wf.EBadRequest && err != nil && err.Error() != tt.code {
			t.Errorf("error renders %q, want %q", err, tt.code)
		}
	}
}

func TestResizeExample(t *testing.T) {
	doc := `{"name":"Test","grid":{"type":"hex","layout":"odd-r","cols":3,"rows":2,"cellSizePx":40,` +
		`"terrain":["gfj","hmw"],"elevation":["123","456"]},"template":"x","extra":{"a":[1,2,{"b":null}]}}`
	pois := []wf.POI{
		{ID: "a", X: 2, Y: 0}, // column 2 goes
		{ID: "b", X: 1, Y: 1},
		{ID: "c", X: 0, Y: 2}, // a new row
		{ID: "d", X: -1, Y: 0},
		{ID: "e", X: 1, Y: 3},
	}
	rt := &wf.WorldRuntime{
		Presence: []wf.Presence{
			{UserID: "u1", X: 1, Y: 1},
			{UserID: "u2", X: 2, Y: 0}, // on the column that goes
			{UserID: "u3", X: 0, Y: 2}, // on the new row
			{UserID: "u4", X: 1, Y: 3},
		},
		OpenedPOIs:  []string{"a", "b", "zz"}, // zz: a POI the world no longer holds
		PickedItems: []wf.InventoryItem{{ItemID: "i-b", POIID: "b"}, {ItemID: "i-a", POIID: "a"}, {ItemID: "i-zz", POIID: "zz"}},
	}
	got, rep, err := Resize(json.RawMessage(doc), 2, 3, pois, rt)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"Test","grid":{"type":"hex","layout":"odd-r","cols":2,"rows":3,"cellSizePx":40,` +
		`"terrain":["gf","hm",".."],"elevation":["12","45","00"]},"template":"x","extra":{"a":[1,2,{"b":null}]}}`
	if string(got) != want {
		t.Errorf("Resize =\n%s\nwant\n%s", got, want)
	}
	wantRep := ResizeReport{OldCols: 3, OldRows: 2, NewCols: 2, NewRows: 3, DroppedCells: 2,
		DroppedPOIs: []string{"a", "d", "e"}, KeptPOIs: 2,
		DroppedPresence: []string{"u2", "u4"}, DroppedOpenedPOIs: []string{"a", "zz"}, DroppedPickedItems: []string{"i-a", "i-zz"}}
	if d := cmp.Diff(wantRep, rep); d != "" {
		t.Errorf("report (-want +got):\n%s", d)
	}
	plan := rep.Plan(got)
	if string(plan.Doc) != want || plan.Cols != 2 || plan.Rows != 3 || !slices.Equal(plan.DropPOIs, rep.DroppedPOIs) ||
		!slices.Equal(plan.DropPresence, rep.DroppedPresence) || !slices.Equal(plan.DropOpened, rep.DroppedOpenedPOIs) ||
		!slices.Equal(plan.DropPicked, rep.DroppedPickedItems) {
		t.Errorf("plan %+v", plan)
	}
	b, _ := json.Marshal(rep)
	if string(b) != `{"oldCols":3,"oldRows":2,"newCols":2,"newRows":3,"droppedCells":2,"droppedPois":["a","d","e"],"keptPois":2,`+
		`"droppedPresence":["u2","u4"],"droppedOpenedPois":["a","zz"],"droppedPickedItems":["i-a","i-zz"]}` {
		t.Errorf("report JSON = %s", b)
	}

	// A grow drops no runtime state that fits.
	_, rep, err = Resize(json.RawMessage(doc), 8, 8, pois[:3], &wf.WorldRuntime{
		Presence:    []wf.Presence{{UserID: "u1", X: 2, Y: 1}, {UserID: "u2", X: 0, Y: 0}},
		OpenedPOIs:  []string{"a", "c"},
		PickedItems: []wf.InventoryItem{{ItemID: "i-b", POIID: "b"}},
	})
	if err != nil || len(rep.DroppedPOIs)+len(rep.DroppedPresence)+len(rep.DroppedOpenedPOIs)+len(rep.DroppedPickedItems) != 0 || rep.KeptPOIs != 3 {
		t.Errorf("grow report %+v, %v", rep, err)
	}

	// A blank grid stays blank and small; no POIs gives an empty list.
	got, rep, err = Resize(json.RawMessage(`{"grid":{"cols":16,"rows":12},"size":"small"}`), 4096, 4096, nil, nil)
	if err != nil || string(got) != `{"grid":{"type":"hex","layout":"odd-r","cols":4096,"rows":4096,"cellSizePx":32},"size":"small"}` {
		t.Errorf("blank resize = %s, %v", got, err)
	}
	if rep.DroppedPOIs == nil || rep.DroppedPresence == nil || rep.DroppedOpenedPOIs == nil || rep.DroppedPickedItems == nil || rep.DroppedCells != 0 {
		t.Errorf("blank resize report %+v", rep)
	}
}

// docMembers returns the members of a document other than "grid".
func docMembers(t interface{ Fatalf(string, ...any) }, doc []byte) [][2]string {
	ms, err := scanObject(doc)
	if err != nil {
		t.Fatalf("scanObject(%s): %v", doc, err)
	}
	var out [][2]string
	for _, m := range ms {
		if m.key != "grid" {
			out = append(out, [2]string{string(m.rawKey), string(m.val)})
		}
	}
	return out
}

func TestResizeProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := drawGrid(t, 20)
		// Members around the grid, kept byte for byte.
		extra := rapid.SliceOfN(rapid.SampledFrom([]string{
			`"name":"A \"quoted\" name"`, `"seed":-12345678901234567890`, `"size":"large"`,
			`"notes":{"grid":[1, 2, {"x":"]}"}]}`, `"\u00e9t\u00e9":true`, `"empty":{}`, `"n":null`,
		}), 0, 4).Draw(t, "extra")
		before := rapid.IntRange(0, len(extra)).Draw(t, "before")
		gj, _ := g.MarshalJSON()
		doc := "{"
		for i, e := range extra {
			if i == before {
				doc += `"grid":` + string(gj) + ", "
			}
			doc += e + " , "
		}
		if before == len(extra) {
			doc += `"grid":` + string(gj) + "}"
		} else {
			doc = doc[:len(doc)-3] + "}"
		}
		var pois []wf.POI
		for i := range rapid.IntRange(0, 8).Draw(t, "npois") {
			pois = append(pois, wf.POI{
				ID: "poi-" + strconv.Itoa(i),
				X:  rapid.IntRange(-2, 25).Draw(t, "x"), Y: rapid.IntRange(-2, 25).Draw(t, "y"),
			})
		}
		nc, nr := rapid.IntRange(1, 24).Draw(t, "newCols"), rapid.IntRange(1, 24).Draw(t, "newRows")

		out, rep, err := Resize(json.RawMessage(doc), nc, nr, pois, nil)
		if err != nil {
			t.Fatalf("Resize(%s): %v", doc, err)
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON %s", out)
		}
		if d := cmp.Diff(docMembers(t, []byte(doc)), docMembers(t, out)); d != "" {
			t.Fatalf("other members changed (-before +after):\n%s", d)
		}
		ng, err := DocGrid(out)
		if err != nil {
			t.Fatal(err)
		}
		if ng.Cols() != nc || ng.Rows() != nr || ng.Blank() != g.Blank() || ng.CellSizePx() != g.CellSizePx() {
			t.Fatalf("new grid %dx%d blank=%v", ng.Cols(), ng.Rows(), ng.Blank())
		}
		if rep.OldCols != int64(g.Cols()) || rep.OldRows != int64(g.Rows()) || rep.NewCols != int64(nc) || rep.NewRows != int64(nr) {
			t.Fatalf("report dims %+v", rep)
		}
		if want := int64(g.Cols()*g.Rows() - min(g.Cols(), nc)*min(g.Rows(), nr)); rep.DroppedCells != want {
			t.Fatalf("DroppedCells = %d, want %d", rep.DroppedCells, want)
		}
		for y := range nr {
			for x := range nc {
				nt, ne := ng.At(x, y)
				if g.InBounds(x, y) {
					if ot, oe := g.At(x, y); nt != ot || ne != oe {
						t.Fatalf("kept cell (%d,%d) changed", x, y)
					}
				} else if nt != Empty || ne != 0 {
					t.Fatalf("new cell (%d,%d) = %s %d", x, y, nt, ne)
				}
			}
		}
		var dropped []string
		for _, p := range pois {
			if !(p.X >= 0 && p.Y >= 0 && p.X < nc && p.Y < nr) {
				dropped = append(dropped, p.ID)
			}
		}
		if !slices.Equal(dropped, rep.DroppedPOIs) || rep.KeptPOIs != len(pois)-len(dropped) {
			t.Fatalf("dropped %v kept %d, want %v", rep.DroppedPOIs, rep.KeptPOIs, dropped)
		}

		// Back to the old size: cells outside the smaller grid come back
		// blank, not resurrected.
		back, _, err := Resize(out, g.Cols(), g.Rows(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		bg, _ := DocGrid(back)
		for y := range g.Rows() {
			for x := range g.Cols() {
				bt, be := bg.At(x, y)
				ot, oe := g.At(x, y)
				if x < nc && y < nr {
					if bt != ot || be != oe {
						t.Fatalf("cell (%d,%d) lost on the way back", x, y)
					}
				} else if bt != Empty || be != 0 {
					t.Fatalf("cell (%d,%d) resurrected as %s %d", x, y, bt, be)
				}
			}
		}
	})
}

// bigDoc returns the document of a generated large world resized to
// side × side (a non-blank grid, mostly new empty cells).
func bigDoc(tb testing.TB, side int) json.RawMessage {
	seed := int64(1)
	w, err := Generate(Spec{Template: "starter-archipelago", Seed: &seed, Size: SizeLarge})
	if err != nil {
		tb.Fatal(err)
	}
	doc, _, err := Resize(w.Doc, side, side, nil, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return doc
}

func TestResizeHuge(t *testing.T) {
	if testing.Short() {
		t.Skip("a 4096×4096 world in -short mode")
	}
	seed := int64(42)
	w, err := Generate(Spec{Template: "starter-jungle", Seed: &seed, Size: SizeLarge, Populate: true})
	if err != nil {
		t.Fatal(err)
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	heap0 := ms.TotalAlloc

	start := time.Now()
	up, rep, err := Resize(w.Doc, MaxSide, MaxSide, w.POIs, nil)
	if err != nil {
		t.Fatal(err)
	}
	upTime := time.Since(start)
	if rep.KeptPOIs != len(w.POIs) || rep.DroppedCells != 0 {
		t.Errorf("grow report %+v", rep)
	}
	runtime.ReadMemStats(&ms)
	upAlloc := ms.TotalAlloc - heap0

	start = time.Now()
	g, err := DocGrid(up)
	if err != nil {
		t.Fatal(err)
	}
	parseTime := time.Since(start)
	if g.Cols() != MaxSide || g.Rows() != MaxSide || g.Blank() {
		t.Fatalf("grid %dx%d blank=%v", g.Cols(), g.Rows(), g.Blank())
	}
	if tr, e := g.At(MaxSide-1, MaxSide-1); tr != Empty || e != 0 {
		t.Errorf("far corner %s %d", tr, e)
	}

	runtime.ReadMemStats(&ms)
	heap0 = ms.TotalAlloc
	start = time.Now()
	down, rep, err := Resize(up, 100, 80, w.POIs, nil)
	if err != nil {
		t.Fatal(err)
	}
	downTime := time.Since(start)
	runtime.ReadMemStats(&ms)
	downAlloc := ms.TotalAlloc - heap0
	if rep.DroppedCells != MaxSide*MaxSide-100*80 {
		t.Errorf("DroppedCells = %d", rep.DroppedCells)
	}
	orig, _ := DocGrid(w.Doc)
	small, _ := DocGrid(down)
	for y := range 80 {
		for x := range 100 {
			a, ae := small.At(x, y)
			b, be := orig.At(x, y)
			if !orig.InBounds(x, y) {
				b, be = Empty, 0
			}
			if a != b || ae != be {
				t.Fatalf("cell (%d,%d) = %s %d, want %s %d", x, y, a, ae, b, be)
			}
		}
	}
	cells := uint64(MaxSide * MaxSide)
	t.Logf("4096×4096: doc %.1f MB; grow %v (%.1f bytes/cell allocated), parse %v, shrink %v (%.1f bytes/cell allocated)",
		float64(len(up))/1e6, upTime, float64(upAlloc)/float64(cells), parseTime, downTime, float64(downAlloc)/float64(cells))
	// Memory stays a small multiple of the cells: the grid (2 bytes a cell)
	// and the document (a little over 2 bytes a cell), a few times over.
	if upAlloc > 12*cells || downAlloc > 12*cells {
		t.Errorf("allocated %d and %d bytes for %d cells", upAlloc, downAlloc, cells)
	}
}

func BenchmarkResize(b *testing.B) {
	for _, side := range []int{512, 4096} {
		b.Run(fmt.Sprintf("%dx%d", side, side), func(b *testing.B) {
			doc := bigDoc(b, side)
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := Resize(doc, side-1, side-1, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func FuzzResize(f *testing.F) {
	for _, s := range []string{
		`{"grid":{"cols":16,"rows":12}}`,
		`{"a":1,"grid":{"type":"hex","cols":3,"rows":2,"terrain":["g..","..w"],"elevation":["100","009"]},"b":[{"c":"}"}]}`,
		`{"grid":{"type":"freeform"}}`, `null`, `{"grid":null}`, `{"grid":{"cols":0,"rows":1}}`, `[`,
	} {
		f.Add([]byte(s), uint8(5), uint8(5))
	}
	f.Fuzz(func(t *testing.T, doc []byte, cols, rows uint8) {
		c, r := int(cols%40), int(rows%40) // 0 is too_small
		out, rep, err := Resize(doc, c, r, []wf.POI{{ID: "p", X: 3, Y: 3}}, nil)
		if err != nil {
			switch code(err) {
			case wf.EBadRequest, wf.ENoGrid, wf.EFreeformGrid, wf.ENoSize, wf.ETooSmall:
			default:
				t.Fatalf("error %v", err)
			}
			return
		}
		if !json.Valid(doc) || !json.Valid(out) {
			t.Fatalf("Resize(%q) = %q: invalid JSON in or out", doc, out)
		}
		if d := cmp.Diff(docMembers(t, doc), docMembers(t, out)); d != "" {
			t.Fatalf("members changed:\n%s", d)
		}
		g, err := DocGrid(out)
		if err != nil || g.Cols() != c || g.Rows() != r || rep.NewCols != int64(c) {
			t.Fatalf("resized grid: %v", err)
		}
	})
}
