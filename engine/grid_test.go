package engine

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"pgregory.net/rapid"
)

// code returns the *wf.Error code of err, or "" for nil, or "<not wf.Error>".
func code(err error) string {
	if err == nil {
		return ""
	}
	var e *wf.Error
	if !errors.As(err, &e) {
		return "<not wf.Error: " + err.Error() + ">"
	}
	return e.Code
}

func row16(n int) string { return `"` + strings.Repeat("g", n) + `"` }

func TestParseGridBad(t *testing.T) {
	rows4 := func(third string) string {
		return `{"cols":16,"rows":4,"terrain":[` + row16(16) + `,` + row16(16) + `,` + row16(16) + `,` + third + `]}`
	}
	tests := []struct {
		name, in, code, detail string
	}{
		{"empty", ``, wf.EBadRequest, "grid is not valid JSON"},
		{"array", `[]`, wf.EBadRequest, "grid must be a JSON object"},
		{"number", `12`, wf.EBadRequest, "grid must be a JSON object"},
		{"truncated", `{"cols":2`, wf.EBadRequest, "grid is not valid JSON"},
		{"trailing", `{"cols":2,"rows":2} x`, wf.EBadRequest, "grid is not valid JSON"},
		{"trailing comma", `{"cols":2,"rows":2,}`, wf.EBadRequest, "grid is not valid JSON"},
		{"bad unknown member", `{"cols":2,"rows":2,"note":[1,}`, wf.EBadRequest, "grid is not valid JSON"},
		{"no cols", `{"rows":2}`, wf.EBadRequest, "grid.cols is missing"},
		{"no rows", `{"cols":2}`, wf.EBadRequest, "grid.rows is missing"},
		{"zero cols", `{"cols":0,"rows":2}`, wf.EBadRequest, "grid.cols must be an integer from 1 to 4096, got 0"},
		{"negative rows", `{"cols":2,"rows":-3}`, wf.EBadRequest, "grid.rows must be an integer from 1 to 4096, got -3"},
		{"too many cols", `{"cols":4097,"rows":2}`, wf.EBadRequest, "grid.cols must be an integer from 1 to 4096, got 4097"},
		{"fractional", `{"cols":2.5,"rows":2}`, wf.EBadRequest, "got 2.5"},
		{"huge", `{"cols":1e999,"rows":2}`, wf.EBadRequest, "grid.cols must be an integer"},
		{"string cols", `{"cols":"16","rows":2}`, wf.EBadRequest, `grid.cols must be an integer from 1 to 4096, got "16"`},
		{"bool rows", `{"cols":2,"rows":true}`, wf.EBadRequest, "grid.rows must be an integer"},
		{"cell size", `{"cols":2,"rows":2,"cellSizePx":0}`, wf.EBadRequest, "grid.cellSizePx must be an integer from 1 to 1024"},
		{"type", `{"type":"square","cols":2,"rows":2}`, wf.EBadRequest, `grid.type "square" is not supported`},
		{"type not string", `{"type":7,"cols":2,"rows":2}`, wf.EBadRequest, "grid.type must be a string"},
		{"layout", `{"layout":"even-q","cols":2,"rows":2}`, wf.EBadRequest, `grid.layout "even-q" is not supported`},
		{"terrain not array", `{"cols":2,"rows":2,"terrain":"gggg"}`, wf.EBadRequest, "grid.terrain must be an array of strings"},
		{"terrain row not string", `{"cols":2,"rows":2,"terrain":["gg",7]}`, wf.EBadRequest, "grid.terrain[1] must be a string"},
		{"too few rows", `{"cols":2,"rows":2,"terrain":["gg"]}`, wf.EBadRequest, "grid.terrain has 1 rows, want 2"},
		{"too many rows", `{"cols":2,"rows":2,"terrain":["gg","gg","gg"]}`, wf.EBadRequest, "grid.terrain has 3 rows, want 2"},
		{"empty rows", `{"cols":2,"rows":2,"terrain":[]}`, wf.EBadRequest, "grid.terrain has 0 rows, want 2"},
		{"long row", rows4(row16(17)), wf.EBadRequest, "grid.terrain[3] has 17 cells, want 16"},
		{"short row", rows4(row16(3)), wf.EBadRequest, "grid.terrain[3] has 3 cells, want 16"},
		{"unknown code", `{"cols":2,"rows":2,"terrain":["gg","gZ"]}`, wf.EBadRequest, "grid.terrain[1] has unknown terrain code 'Z' at column 1"},
		{"control char", "{\"cols\":2,\"rows\":1,\"terrain\":[\"g\x01\"]}", wf.EBadRequest, "unknown terrain code"},
		{"non-ascii", `{"cols":2,"rows":1,"terrain":["gé"]}`, wf.EBadRequest, "grid.terrain[0] has unknown terrain code 'é' at column 1"},
		{"non-ascii fits", `{"cols":3,"rows":1,"terrain":["éj"]}`, wf.EBadRequest, "grid.terrain[0] has unknown terrain code 'é' at column 0"},
		{"non-ascii long", `{"cols":2,"rows":1,"terrain":["ééé"]}`, wf.EBadRequest, "grid.terrain[0] has 3 cells, want 2"},
		{"bad escape", `{"cols":2,"rows":1,"terrain":["g\q"]}`, wf.EBadRequest, "grid.terrain[0] is not a valid JSON string"},
		{"unterminated row", `{"cols":2,"rows":1,"terrain":["gg]}`, wf.EBadRequest, "not valid JSON"},
		{"bad array", `{"cols":2,"rows":1,"terrain":["gg" "gg"]}`, wf.EBadRequest, "grid.terrain is not valid JSON"},
		{"elevation digit", `{"cols":2,"rows":2,"elevation":["00","0a"]}`, wf.EBadRequest, "grid.elevation[1] has 'a' at column 1, want a digit 0-9"},
		{"elevation rows", `{"cols":2,"rows":2,"terrain":["gg","gg"],"elevation":["00"]}`, wf.EBadRequest, "grid.elevation has 1 rows, want 2"},
		{"elevation number", `{"cols":2,"rows":1,"elevation":[12]}`, wf.EBadRequest, "grid.elevation[0] must be a string"},
		{"freeform", `{"type":"freeform","image":"map.png"}`, wf.EFreeformGrid, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := ParseGrid(json.RawMessage(tt.in))
			if err == nil {
				t.Fatalf("ParseGrid(%s) = %dx%d grid, want error", tt.in, g.Cols(), g.Rows())
			}
			if c := code(err); c != tt.code {
				t.Fatalf("ParseGrid(%s) code = %q (%v), want %q", tt.in, c, err, tt.code)
			}
			if !strings.Contains(err.Error(), tt.detail) {
				t.Errorf("ParseGrid(%s) = %q, want it to contain %q", tt.in, err, tt.detail)
			}
		})
	}
	if _, err := ParseGrid(json.RawMessage(`{"type":"freeform"}`)); err.Error() != "freeform_grid" {
		t.Errorf("freeform error renders %q, want freeform_grid", err)
	}
}

func TestParseGridAccepts(t *testing.T) {
	tests := []struct {
		name, in   string
		cols, rows int
		blank      bool
		cells      string // terrain+elevation of each cell, row-major, "g3"…
		cellPx     int
	}{
		{"legacy", `{"cols":16,"rows":12}`, 16, 12, true, "", 32},
		{"full blank", `{"type":"hex","layout":"odd-r","cols":2,"rows":1,"cellSizePx":40}`, 2, 1, true, "", 40},
		{"nulls", `{"type":null,"layout":null,"cols":2,"rows":1,"cellSizePx":null,"terrain":null,"elevation":null}`, 2, 1, true, "", 32},
		{"cells", `{"cols":2,"rows":2,"terrain":["gf","jw"],"elevation":["12","34"]}`, 2, 2, false, "g1f2j3w4", 32},
		{"terrain only", `{"cols":2,"rows":1,"terrain":["lm"]}`, 2, 1, false, "l0m0", 32},
		{"elevation only", `{"cols":2,"rows":1,"elevation":["09"]}`, 2, 1, false, ".0.9", 32},
		{"escapes and space", " {\n \"cols\" : 2 ,\"rows\":1, \"terr\\u0061in\":[ \"\\u0067g\" ] , \"x\":{\"y\":[1,\"]\"]}}\t", 2, 1, false, "g0g0", 32},
		{"integral float", `{"cols":2.0,"rows":1e0}`, 2, 1, true, "", 32},
		{"duplicate keys: last wins", `{"cols":5,"cols":2,"rows":1}`, 2, 1, true, "", 32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := ParseGrid(json.RawMessage(tt.in))
			if err != nil {
				t.Fatalf("ParseGrid: %v", err)
			}
			if g.Cols() != tt.cols || g.Rows() != tt.rows || g.Blank() != tt.blank || g.CellSizePx() != tt.cellPx {
				t.Fatalf("got %dx%d blank=%v cellPx=%d, want %dx%d blank=%v cellPx=%d",
					g.Cols(), g.Rows(), g.Blank(), g.CellSizePx(), tt.cols, tt.rows, tt.blank, tt.cellPx)
			}
			var b strings.Builder
			for y := range g.Rows() {
				for x := range g.Cols() {
					tr, e := g.At(x, y)
					if tt.blank && (tr != Empty || e != 0) {
						t.Fatalf("blank cell (%d,%d) = %s %d", x, y, tr, e)
					}
					b.WriteByte(byte(tr))
					b.WriteByte(byte('0' + e))
				}
			}
			if !tt.blank && b.String() != tt.cells {
				t.Errorf("cells = %q, want %q", b.String(), tt.cells)
			}
		})
	}
}

func TestGridJSON(t *testing.T) {
	g := NewGrid(3, 2)
	if got, _ := g.MarshalJSON(); string(got) != `{"type":"hex","layout":"odd-r","cols":3,"rows":2,"cellSizePx":32}` {
		t.Errorf("blank grid JSON = %s", got)
	}
	g.Set(0, 0, Grass, 1)
	g.Set(2, 1, DeepWater, 9)
	want := `{"type":"hex","layout":"odd-r","cols":3,"rows":2,"cellSizePx":32,"terrain":["g..","..w"],"elevation":["100","009"]}`
	if got, _ := g.MarshalJSON(); string(got) != want {
		t.Errorf("grid JSON = %s\nwant        %s", got, want)
	}
	if got, _ := json.Marshal(g); string(got) != want {
		t.Errorf("json.Marshal = %s", got)
	}
	var back Grid
	if err := json.Unmarshal([]byte(want), &back); err != nil || !back.Equal(g) {
		t.Errorf("json.Unmarshal: %v, equal=%v", err, back.Equal(g))
	}
	if tr, e := g.At(5, 5); tr != 0 || e != 0 {
		t.Errorf("At outside = %v %d", tr, e)
	}
	if g.InBounds(3, 0) || g.InBounds(0, -1) || !g.InBounds(2, 1) {
		t.Error("InBounds wrong")
	}
	for _, f := range []func(){
		func() { g.Set(3, 0, Grass, 0) },
		func() { g.Set(0, 0, Terrain('Z'), 0) },
		func() { g.Set(0, 0, Grass, 10) },
		func() { NewGrid(0, 5) },
		func() { NewGrid(5, MaxSide+1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		}()
	}
}

// drawGrid draws a grid of up to maxSide × maxSide, blank or with random
// cells.
func drawGrid(t *rapid.T, maxSide int) *Grid {
	g := NewGrid(rapid.IntRange(1, maxSide).Draw(t, "cols"), rapid.IntRange(1, maxSide).Draw(t, "rows"))
	g.cellPx = rapid.IntRange(1, maxCellSizePx).Draw(t, "cellPx")
	if rapid.Bool().Draw(t, "blank") {
		return g
	}
	codes := Terrains()
	seed := rapid.Uint64().Draw(t, "cellsSeed")
	g.materialize()
	for i := range g.terrain {
		seed = seed*6364136223846793005 + 1442695040888963407
		g.terrain[i] = byte(codes[(seed>>33)%uint64(len(codes))])
		g.elev[i] = byte('0' + (seed>>20)%10)
	}
	return g
}

func TestGridRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := drawGrid(t, 24)
		b, err := g.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != g.jsonLen() || cap(b) != len(b) {
			t.Fatalf("jsonLen %d, len %d, cap %d", g.jsonLen(), len(b), cap(b))
		}
		if !json.Valid(b) {
			t.Fatalf("invalid JSON %s", b)
		}
		// encoding/json reads the same grid.
		var std struct {
			Type, Layout         string
			Cols, Rows, CellSize int
			Terrain, Elevation   []string
		}
		if err := json.Unmarshal(b, &std); err != nil || std.Type != "hex" || std.Layout != "odd-r" ||
			std.Cols != g.cols || std.Rows != g.rows || (g.Blank() != (std.Terrain == nil)) {
			t.Fatalf("encoding/json read %+v, %v", std, err)
		}
		for y, row := range std.Terrain {
			for x := range row {
				if tr, e := g.At(x, y); Terrain(row[x]) != tr || int(std.Elevation[y][x]-'0') != e {
					t.Fatalf("cell (%d,%d) differs", x, y)
				}
			}
		}
		g2, err := ParseGrid(b)
		if err != nil {
			t.Fatalf("ParseGrid(%s): %v", b, err)
		}
		if !g2.Equal(g) {
			t.Fatal("round trip changed the grid")
		}
		b2, _ := g2.MarshalJSON()
		if string(b2) != string(b) {
			t.Fatal("round trip changed the bytes")
		}
	})
}

func FuzzParseGrid(f *testing.F) {
	for _, s := range []string{
		`{"cols":16,"rows":12}`,
		`{"type":"hex","layout":"odd-r","cols":3,"rows":2,"cellSizePx":32,"terrain":["g..","..w"],"elevation":["100","009"]}`,
		`{"cols":2,"rows":1,"terrain":["\u0067g"],"x":{"a":[1,"]"]}}`,
		`{"type":"freeform"}`,
		`{"cols":2,"rows":2,"terrain":["gg","gZ"]}`,
		`[]`, `{`, `{"cols":1e999,"rows":1}`, `{"cols":2,"rows":1,"terrain":["g\"]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := ParseGrid(data)
		if err != nil {
			if c := code(err); c != wf.EBadRequest && c != wf.EFreeformGrid {
				t.Fatalf("error code %q: %v", c, err)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		if g.cols < 1 || g.rows < 1 || g.cols > MaxSide || g.rows > MaxSide {
			t.Fatalf("accepted size %dx%d", g.cols, g.rows)
		}
		// The accepted cells are what encoding/json reads.
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("encoding/json: %v", err)
		}
		var rows []string
		if raw, ok := m["terrain"]; ok && string(raw) != "null" {
			if err := json.Unmarshal(raw, &rows); err != nil {
				t.Fatalf("terrain: %v", err)
			}
			for y, row := range rows {
				for x := range g.cols {
					if tr, _ := g.At(x, y); byte(tr) != row[x] {
						t.Fatalf("cell (%d,%d) = %q, encoding/json reads %q", x, y, byte(tr), row[x])
					}
				}
			}
		}
		b, _ := g.MarshalJSON()
		g2, err := ParseGrid(b)
		if err != nil || !g2.Equal(g) {
			t.Fatalf("round trip of %s: %v", b, err)
		}
	})
}

func TestDocGrid(t *testing.T) {
	tests := []struct {
		doc, code string
	}{
		{``, wf.ENoGrid},
		{`  `, wf.ENoGrid},
		{`null`, wf.ENoGrid},
		{`[1,2]`, wf.ENoGrid},
		{`"grid"`, wf.ENoGrid},
		{`{}`, wf.ENoGrid},
		{`{"name":"x"}`, wf.ENoGrid},
		{`{"grid":null}`, wf.ENoGrid},
		{`{"grid":{"type":"freeform","image":"x.png"}}`, wf.EFreeformGrid},
		{`{"grid":{"type":"freeform","cols":5,"rows":5}}`, wf.EFreeformGrid},
		{`{"grid":{}}`, wf.ENoSize},
		{`{"grid":{"cols":16}}`, wf.ENoSize},
		{`{"grid":{"cols":0,"rows":5}}`, wf.ENoSize},
		{`{"grid":{"cols":-2,"rows":5}}`, wf.ENoSize},
		{`{"grid":{"cols":"16","rows":5}}`, wf.ENoSize},
		{`{"grid":{"cols":16,"rows":null}}`, wf.ENoSize},
		{`{"grid":5}`, wf.EBadRequest},
		{`{"grid":{"cols":2.5,"rows":5}}`, wf.EBadRequest},
		{`{"grid":{"cols":2,"rows":2,"terrain":["gg"]}}`, wf.EBadRequest},
		{`{"grid":{"cols":2,"rows":2},"notes":[}`, wf.EBadRequest},
		{`{"grid":{"cols":2,"rows":2}`, wf.EBadRequest},
		{`{"grid":{"cols":16,"rows":12}}`, ""},
		{`{"grid":{"cols":1,"rows":1},"grid":{"cols":3,"rows":2}}`, ""},
	}
	for _, tt := range tests {
		g, err := DocGrid(json.RawMessage(tt.doc))
		if c := code(err); c != tt.code {
			t.Errorf("DocGrid(%s) code %q (%v), want %q", tt.doc, c, err, tt.code)
			continue
		}
		if err != nil && tt.code != wf.EBadRequest && err.Error() != tt.code {
			t.Errorf("DocGrid(%s) error renders %q, want the bare code", tt.doc, err)
		}
		if err == nil && g == nil {
			t.Errorf("DocGrid(%s) = nil", tt.doc)
		}
	}
}

func TestSetGrid(t *testing.T) {
	g := NewGrid(2, 1)
	gj, _ := g.MarshalJSON()
	tests := []struct{ doc, want string }{
		{``, `{"grid":` + string(gj) + `}`},
		{`null`, `{"grid":` + string(gj) + `}`},
		{`{}`, `{"grid":` + string(gj) + `}`},
		{` { "name" : "A \"world\"", "grid": {"cols":9,"rows":9}, "z\u00e9":{"a":[1, 2]} } `,
			`{"name":"A \"world\"","grid":` + string(gj) + `,"z\u00e9":{"a":[1, 2]}}`},
		{`{"grid":1,"a":true,"grid":{"cols":1,"rows":1}}`, `{"a":true,"grid":` + string(gj) + `}`},
		{`{"seed":12345678901234567890,"size":"large"}`, `{"seed":12345678901234567890,"size":"large","grid":` + string(gj) + `}`},
	}
	for _, tt := range tests {
		got, err := SetGrid(json.RawMessage(tt.doc), g)
		if err != nil || string(got) != tt.want {
			t.Errorf("SetGrid(%s) = %s, %v\nwant %s", tt.doc, got, err, tt.want)
		}
	}
	for _, bad := range []string{`[]`, `{"a":}`, `{"a":1`} {
		if _, err := SetGrid(json.RawMessage(bad), g); code(err) != wf.EBadRequest {
			t.Errorf("SetGrid(%s) error %v, want bad_request", bad, err)
		}
	}
}
