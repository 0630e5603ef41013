package mapview

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"sync/atomic"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/engine"
)

// bigGrid is a 4096×4096 grid of bands of terrain.
func bigGrid() *engine.Grid {
	g := engine.NewGrid(engine.MaxSide, engine.MaxSide)
	g.Fill(engine.Grass, 3)
	for y := range engine.MaxSide {
		for x := 0; x < engine.MaxSide; x += 2 {
			switch (x / 256) % 4 {
			case 1:
				g.Set(x, y, engine.Forest, 5)
			case 2:
				g.Set(x, y, engine.DeepWater, 1)
			}
		}
	}
	return g
}

func TestLayoutSizes(t *testing.T) {
	for _, c := range []struct {
		cols, rows int
		ovStep     int
	}{
		{1, 1, 1}, {32, 24, 1}, {64, 48, 1}, {128, 96, 1}, {1000, 20, 1}, {1024, 1024, 1},
		{1025, 10, 2}, {3000, 2000, 3}, {4096, 4096, 4}, {4096, 1, 4}, {1, 4096, 4},
	} {
		t.Run(fmt.Sprintf("%dx%d", c.cols, c.rows), func(t *testing.T) {
			l, err := NewLayout(c.cols, c.rows)
			if err != nil {
				t.Fatal(err)
			}
			if got := l.Levels[0].Step; got != c.ovStep {
				t.Errorf("overview step %d, want %d", got, c.ovStep)
			}
			w, h := l.OverviewSize()
			if w < 1 || h < 1 || w > OverviewMax || h > OverviewMax {
				t.Errorf("overview %d×%d", w, h)
			}
			if max(w, h) < OverviewMax/2 && l.Levels[0].CellPx < maxOverviewCellPx && c.cols > 1 {
				t.Errorf("overview %d×%d at %d px a cell wastes room", w, h, l.Levels[0].CellPx)
			}
			deep := l.Levels[l.Depth()-1]
			if deep.Step != 1 || deep.CellPx < DeepCellPx {
				t.Errorf("deepest level %+v is not readable", deep)
			}
			for z := 1; z < l.Depth(); z++ {
				lv, prev := l.Levels[z], l.Levels[z-1]
				if lv.TileRows%2 != 0 {
					t.Errorf("level %d: odd tile rows %d", z, lv.TileRows)
				}
				finer := lv.Step < prev.Step || lv.CellPx > prev.CellPx
				if !finer {
					t.Errorf("level %d %+v is not finer than %+v", z, lv, prev)
				}
				for _, tile := range [][2]int{{0, 0}, {lv.TilesX - 1, lv.TilesY - 1}, {lv.TilesX / 2, lv.TilesY / 2}} {
					w, h, err := l.TileSize(z, tile[0], tile[1])
					if err != nil || w < 1 || h < 1 || w > TileMax || h > TileMax {
						t.Errorf("level %d tile %v: %d×%d, %v", z, tile, w, h, err)
					}
				}
				// Every cell is in exactly the tile TileOf names.
				for _, cell := range [][2]int{{0, 0}, {c.cols - 1, c.rows - 1}, {c.cols / 2, c.rows / 3}} {
					tx, ty, err := l.TileOf(z, cell[0], cell[1])
					if err != nil {
						t.Fatal(err)
					}
					r, err := l.TileCells(z, tx, ty)
					if err != nil || !(cell[0] >= r.Min.X && cell[0] < r.Max.X && cell[1] >= r.Min.Y && cell[1] < r.Max.Y) {
						t.Errorf("level %d: cell %v in tile (%d, %d) = %v, %v", z, cell, tx, ty, r, err)
					}
				}
			}
		})
	}
}

func TestLayoutBadInput(t *testing.T) {
	for _, c := range [][2]int{{0, 1}, {1, 0}, {-1, 5}, {4097, 10}, {10, 4097}} {
		if _, err := NewLayout(c[0], c[1]); !errors.Is(err, badRequest) {
			t.Errorf("NewLayout(%d, %d) = %v, want bad_request", c[0], c[1], err)
		}
	}
	l, err := NewLayout(4096, 4096)
	if err != nil {
		t.Fatal(err)
	}
	deep := l.Depth() - 1
	lv := l.Levels[deep]
	for _, c := range [][3]int{{-1, 0, 0}, {l.Depth(), 0, 0}, {0, 1, 0}, {0, 0, 1}, {deep, -1, 0}, {deep, lv.TilesX, 0}, {deep, 0, lv.TilesY}} {
		if _, err := l.TileCells(c[0], c[1], c[2]); !errors.Is(err, badRequest) {
			t.Errorf("TileCells%v = %v, want bad_request", c, err)
		}
	}
	for _, c := range [][3]int{{-1, 0, 0}, {l.Depth(), 0, 0}, {1, -1, 0}, {1, 4096, 0}, {1, 0, 4096}} {
		if _, _, err := l.TileOf(c[0], c[1], c[2]); !errors.Is(err, badRequest) {
			t.Errorf("TileOf%v = %v, want bad_request", c, err)
		}
	}
}

func TestRenderer4096(t *testing.T) {
	g := bigGrid()
	l, err := NewLayout(g.Cols(), g.Rows())
	if err != nil {
		t.Fatal(err)
	}
	var loads atomic.Int32
	m := &Map{WorldID: "w1", Version: 3, Layout: l,
		POIs:     []wf.POI{{X: 10, Y: 10, Openable: true}, {X: 2050, Y: 2050}},
		Presence: []wf.Presence{{UserID: "u", X: 2049, Y: 2052}},
		Grid: func(context.Context) (*engine.Grid, error) {
			loads.Add(1)
			return g, nil
		},
	}
	r := NewRenderer(Options{})
	decode := func(b []byte) (int, int) {
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		return img.Bounds().Dx(), img.Bounds().Dy()
	}
	ov, err := r.PNG(t.Context(), m, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if w, h := decode(ov); w != 1024 || h != 1024 {
		t.Errorf("overview %d×%d, want 1024×1024", w, h)
	}
	deep := l.Depth() - 1
	tx, ty, err := l.TileOf(deep, 2050, 2050)
	if err != nil {
		t.Fatal(err)
	}
	tile, err := r.PNG(t.Context(), m, deep, tx, ty)
	if err != nil {
		t.Fatal(err)
	}
	w, h := decode(tile)
	if ww, wh, _ := l.TileSize(deep, tx, ty); w != ww || h != wh || w > TileMax || h > TileMax {
		t.Errorf("tile %d×%d, layout says %d×%d", w, h, ww, wh)
	}
	again, err := r.PNG(t.Context(), m, 0, 0, 0)
	if err != nil || !bytes.Equal(again, ov) {
		t.Errorf("cached overview differs: %v", err)
	}
	if n := loads.Load(); n != 1 {
		t.Errorf("grid loaded %d times, want 1", n)
	}
	// Bad tiles are refused before anything loads.
	fresh := *m
	fresh.Version = 4
	for _, c := range [][3]int{{-1, 0, 0}, {deep + 1, 0, 0}, {deep, -1, 0}, {deep, 0, 1 << 20}} {
		if _, err := r.PNG(t.Context(), &fresh, c[0], c[1], c[2]); !errors.Is(err, badRequest) {
			t.Errorf("PNG%v = %v, want bad_request", c, err)
		}
	}
	if n := loads.Load(); n != 1 {
		t.Errorf("bad tiles loaded the grid (%d loads)", n)
	}
	// A moved player changes the overlay, and so the picture.
	moved := *m
	moved.Presence = []wf.Presence{{UserID: "u", X: 100, Y: 100}}
	if moved.ETag() == m.ETag() {
		t.Error("moving a player keeps the ETag")
	}
	ov2, err := r.PNG(t.Context(), &moved, 0, 0, 0)
	if err != nil || bytes.Equal(ov2, ov) {
		t.Errorf("overview after a move is the same picture (%v)", err)
	}
}

func TestRendererLoadError(t *testing.T) {
	l, _ := NewLayout(10, 10)
	boom := errors.New("boom")
	m := &Map{WorldID: "w", Version: 1, Layout: l, Grid: func(context.Context) (*engine.Grid, error) { return nil, boom }}
	r := NewRenderer(Options{})
	if _, err := r.PNG(t.Context(), m, 0, 0, 0); !errors.Is(err, boom) {
		t.Errorf("err = %v, want the loader's", err)
	}
	m.Grid = func(context.Context) (*engine.Grid, error) { return engine.NewGrid(11, 10), nil }
	if _, err := r.PNG(t.Context(), m, 0, 0, 0); err == nil {
		t.Error("a grid of another size than the layout was drawn")
	}
}

func TestCacheBudget(t *testing.T) {
	c := newLRU[[]byte](100)
	c.put("a", make([]byte, 40), 40)
	c.put("b", make([]byte, 40), 40)
	c.get("a") // a is now the most recent
	c.put("c", make([]byte, 40), 40)
	if _, ok := c.get("b"); ok {
		t.Error("b, least recently used, was kept")
	}
	if _, ok := c.get("a"); !ok {
		t.Error("a was dropped")
	}
	c.put("huge", make([]byte, 200), 200)
	if _, ok := c.get("huge"); ok {
		t.Error("an entry over the budget was kept")
	}
	if used, n := c.stats(); used > 100 || n != 2 {
		t.Errorf("used %d bytes in %d entries", used, n)
	}

	// The renderer's caches stay within budget however many tiles are drawn.
	l, _ := NewLayout(512, 512)
	g := engine.NewGrid(512, 512)
	g.Fill(engine.Hills, 4)
	r := NewRenderer(Options{PNGBytes: 64 << 10, GridBytes: 1 << 20})
	m := &Map{WorldID: "w", Version: 1, Layout: l, Grid: func(context.Context) (*engine.Grid, error) { return g, nil }}
	deep := l.Levels[l.Depth()-1]
	for y := range deep.TilesY {
		for x := range deep.TilesX {
			if _, err := r.PNG(t.Context(), m, l.Depth()-1, x, y); err != nil {
				t.Fatal(err)
			}
		}
	}
	if pb, _, gb, grids := r.Stats(); pb > 64<<10 || gb > 1<<20 || grids != 1 {
		t.Errorf("caches hold %d PNG bytes, %d grid bytes in %d grids", pb, gb, grids)
	}
}

func BenchmarkOverview4096(b *testing.B) {
	benchTile(b, func(l *Layout) (int, int, int) { return 0, 0, 0 })
}

func BenchmarkTile4096(b *testing.B) {
	benchTile(b, func(l *Layout) (int, int, int) {
		z := l.Depth() - 1
		tx, ty, _ := l.TileOf(z, 2048, 2048)
		return z, tx, ty
	})
}

// benchTile draws and encodes one tile of a 4096×4096 map per op, a new
// version each time so that nothing comes from the picture cache (the
// parsed grid is cached, as it is for a world being viewed).
func benchTile(b *testing.B, pick func(*Layout) (z, x, y int)) {
	g := bigGrid()
	l, err := NewLayout(g.Cols(), g.Rows())
	if err != nil {
		b.Fatal(err)
	}
	z, x, y := pick(l)
	r := NewRenderer(Options{GridBytes: 64 << 20})
	m := &Map{WorldID: "w", Layout: l, POIs: []wf.POI{{X: 2050, Y: 2050}}, Presence: []wf.Presence{{X: 2048, Y: 2048}}}
	m.Grid = func(context.Context) (*engine.Grid, error) { return g, nil }
	for b.Loop() {
		m.Version++
		if _, err := r.PNG(b.Context(), m, z, x, y); err != nil {
			b.Fatal(err)
		}
	}
}

var badRequest = &wf.Error{Code: wf.EBadRequest}

func TestChildren(t *testing.T) {
	for _, size := range [][2]int{{4096, 4096}, {128, 96}, {3000, 17}} {
		l, err := NewLayout(size[0], size[1])
		if err != nil {
			t.Fatal(err)
		}
		// From the overview down the centre: the children tile the parent.
		x, y := 0, 0
		for z := 0; z < l.Depth(); z++ {
			kids, err := l.Children(z, x, y)
			if err != nil {
				t.Fatal(err)
			}
			if z == l.Depth()-1 {
				if len(kids) != 0 {
					t.Errorf("%v: deepest level has %d children", size, len(kids))
				}
				break
			}
			w, h, _ := l.TileSize(z, x, y)
			area := 0
			for _, k := range kids {
				if !k.Area.In(image.Rect(0, 0, w, h)) || k.Area.Empty() {
					t.Errorf("%v level %d: child %+v outside %d×%d", size, z, k, w, h)
				}
				area += k.Area.Dx() * k.Area.Dy()
			}
			if area != w*h {
				t.Errorf("%v level %d: children cover %d of %d pixels", size, z, area, w*h)
			}
			cx, cy, _ := l.Centre(z, x, y)
			if x, y, err = l.TileOf(z+1, cx, cy); err != nil {
				t.Fatal(err)
			}
			found := false
			for _, k := range kids {
				found = found || (k.X == x && k.Y == y)
			}
			if !found {
				t.Errorf("%v level %d: the centre's tile (%d, %d) is not a child", size, z, x, y)
			}
		}
	}
	l, _ := NewLayout(10, 10)
	if _, err := l.Children(5, 0, 0); !errors.Is(err, badRequest) {
		t.Errorf("Children of a bad level: %v", err)
	}
	if _, _, err := l.Centre(0, 1, 0); !errors.Is(err, badRequest) {
		t.Errorf("Centre of a bad tile: %v", err)
	}
}

// TestRendererConcurrent draws from many goroutines: one load per grid,
// never more loads at once than Options.Loads.
func TestRendererConcurrent(t *testing.T) {
	l, _ := NewLayout(300, 200)
	var now, most, loads atomic.Int32
	r := NewRenderer(Options{Loads: 2})
	maps := make([]*Map, 5)
	for i := range maps {
		maps[i] = &Map{WorldID: fmt.Sprint("w", i), Version: 1, Layout: l, Grid: func(context.Context) (*engine.Grid, error) {
			n := now.Add(1)
			defer now.Add(-1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			loads.Add(1)
			g := engine.NewGrid(300, 200)
			g.Fill(engine.Forest, 2)
			return g, nil
		}}
	}
	done := make(chan error)
	for i := range 40 {
		go func() {
			_, err := r.PNG(context.Background(), maps[i%len(maps)], 0, 0, 0)
			done <- err
		}()
	}
	for range 40 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if most.Load() > 2 || loads.Load() != int32(len(maps)) {
		t.Errorf("%d loads, at most %d at once", loads.Load(), most.Load())
	}
}
