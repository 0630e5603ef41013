package engine

import (
	"testing"

	wf "github.com/worldforge-go/worldforge"
)

func TestImageSizeMatchesRenderImage(t *testing.T) {
	for _, c := range []struct{ cols, rows, cell int }{
		{1, 1, 16}, {31, 36, 16}, {64, 48, 0}, {128, 96, 4}, {4096, 1, 1}, {10, 10, 6}, {10, 10, 5},
	} {
		w, h := ImageSize(c.cols, c.rows, c.cell)
		b := RenderImage(NewGrid(c.cols, c.rows), nil, nil, RenderOptions{CellPx: c.cell}).Bounds()
		if b.Dx() != w || b.Dy() != h {
			t.Errorf("ImageSize(%d, %d, %d) = %d×%d, RenderImage %d×%d", c.cols, c.rows, c.cell, w, h, b.Dx(), b.Dy())
		}
	}
}

func TestWindow(t *testing.T) {
	g := NewGrid(10, 8)
	g.Set(3, 2, Forest, 4)
	g.Set(9, 7, DeepWater, 1)
	w := g.Window(2, 2, 4, 3)
	if w.Cols() != 4 || w.Rows() != 3 {
		t.Fatalf("window %d×%d", w.Cols(), w.Rows())
	}
	if tr, e := w.At(1, 0); tr != Forest || e != 4 {
		t.Errorf("At(1, 0) = %s %d, want forest 4", tr, e)
	}
	clipped := g.Window(8, 6, 5, 5)
	if clipped.Cols() != 2 || clipped.Rows() != 2 {
		t.Fatalf("clipped window %d×%d, want 2×2", clipped.Cols(), clipped.Rows())
	}
	if tr, e := clipped.At(1, 1); tr != DeepWater || e != 1 {
		t.Errorf("clipped At(1, 1) = %s %d, want water 1", tr, e)
	}
	if !NewGrid(5, 5).Window(1, 1, 2, 2).Blank() {
		t.Error("a window of a blank grid is not blank")
	}
	for _, bad := range [][4]int{{-1, 0, 1, 1}, {10, 0, 1, 1}, {0, 8, 1, 1}, {0, 0, 0, 1}, {0, 0, 1, 0}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Window%v did not panic", bad)
				}
			}()
			g.Window(bad[0], bad[1], bad[2], bad[3])
		}()
	}
}

func TestRenderSampled(t *testing.T) {
	g := NewGrid(4096, 4096)
	g.Fill(Grass, 5)
	for y := range 4096 {
		for x := 2048; x < 4096; x++ {
			g.Set(x, y, DeepWater, 2)
		}
	}
	img := RenderSampled(g, 0, 0, 4096, 4096, 4, []wf.POI{{X: 100, Y: 100}}, []wf.Presence{{X: 3000, Y: 3000}, {X: 5000, Y: 0}})
	if b := img.Bounds(); b.Dx() != 1024 || b.Dy() != 1024 {
		t.Fatalf("size %v, want 1024×1024", b)
	}
	grass, water := img.ColorIndexAt(100, 500), img.ColorIndexAt(900, 500)
	if grass == water || palette[grass] != shade(terrainTable[terrainIndex[Grass]-1].color, 5) {
		t.Errorf("grass pixel %d, water pixel %d", grass, water)
	}
	if got := img.ColorIndexAt(25, 25); got != palPOI {
		t.Errorf("POI pixel = %d, want %d", got, palPOI)
	}
	if got := img.ColorIndexAt(750+4, 750); got != palPresence {
		t.Errorf("presence ring pixel = %d, want %d", got, palPresence)
	}
	// A window at the grid's edge is clipped.
	edge := RenderSampled(g, 4000, 4000, 512, 512, 3, nil, nil)
	if w, h := SampledSize(96, 96, 3); edge.Bounds().Dx() != w || edge.Bounds().Dy() != h {
		t.Errorf("edge window %v, want %d×%d", edge.Bounds(), w, h)
	}
	blank := RenderSampled(NewGrid(20, 20), 0, 0, 20, 20, 2, nil, nil)
	if blank.ColorIndexAt(3, 3) != palBlank {
		t.Error("a blank grid is not drawn blank")
	}
}
