package engine

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	wf "github.com/worldforge-go/worldforge"
)

func decodePNG(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("png.Decode: %v", err)
	}
	return img
}

func nrgba(c color.Color) color.NRGBA { return color.NRGBAModel.Convert(c).(color.NRGBA) }

func TestRenderTemplates(t *testing.T) {
	dir := t.TempDir()
	for _, tmpl := range templateIDs {
		w, g := generate(t, tmpl, 11, "small", true)
		pres := []wf.Presence{{UserID: "u", X: 3, Y: 3}, {UserID: "v", X: 999, Y: 0}}
		var buf bytes.Buffer
		if err := Render(&buf, w.Doc, w.POIs, pres, RenderOptions{CellPx: 16}); err != nil {
			t.Fatalf("%s: Render: %v", tmpl, err)
		}
		path := filepath.Join(dir, tmpl+".png")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		img := decodePNG(t, data)
		rg := geometry(g, 16)
		if b := img.Bounds(); b.Dx() != 32*16+8 || b.Dy() != rg.h {
			t.Errorf("%s: image %v, want %dx%d", tmpl, b, 32*16+8, rg.h)
		}
		// Cell centres away from markers show their terrain's shade.
		marked := map[[2]int]bool{{3, 3}: true}
		for _, p := range w.POIs {
			marked[[2]int{p.X, p.Y}] = true
		}
		checked := 0
		for y := 0; y < g.Rows(); y += 3 {
			for x := 0; x < g.Cols(); x += 5 {
				if marked[[2]int{x, y}] {
					continue
				}
				tr, e := g.At(x, y)
				cx, cy := rg.center(x, y)
				if got, want := nrgba(img.At(int(cx), int(cy))), shade(tr.Color(), e); got != want {
					t.Errorf("%s: cell (%d,%d) %s/%d is %v, want %v", tmpl, x, y, tr, e, got, want)
				}
				checked++
			}
		}
		// POIs are drawn in their colours.
		for _, p := range w.POIs {
			want := palette[palPOI]
			if p.Openable {
				want = palette[palOpenable]
			} else if p.Pickable {
				want = palette[palPickable]
			}
			cx, cy := rg.center(p.X, p.Y)
			if p.X == 3 && p.Y == 3 {
				continue // under the presence ring
			}
			if got := img.At(int(cx), int(cy)); nrgba(got) != nrgba(want) {
				t.Errorf("%s: %s marker is %v, want %v", tmpl, p.ID, got, want)
			}
		}
		// The presence ring is there.
		cx, cy := rg.center(3, 3)
		if got := nrgba(img.At(int(cx+16*0.42-1), int(cy))); got != nrgba(palette[palPresence]) {
			t.Errorf("%s: presence ring pixel is %v", tmpl, got)
		}
		if checked < 20 {
			t.Errorf("%s: checked only %d cells", tmpl, checked)
		}
	}
}

func TestRenderBlankAndAuto(t *testing.T) {
	doc := json.RawMessage(`{"grid":{"cols":16,"rows":12},"name":"x"}`)
	var buf bytes.Buffer
	if err := Render(&buf, doc, nil, nil, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	img := decodePNG(t, buf.Bytes())
	b := img.Bounds()
	if b.Dx() > 2048 || b.Dy() > 2048 || b.Dx() < 16*maxAutoCellPx {
		t.Errorf("auto-sized image %v", b)
	}
	rg := geometry(NewGrid(16, 12), 0)
	cx, cy := rg.center(5, 5)
	if got := nrgba(img.At(int(cx), int(cy))); got != nrgba(palette[palBlank]) {
		t.Errorf("blank cell is %v", got)
	}
	outline := 0
	for x := range b.Dx() {
		if nrgba(img.At(x, int(cy))) == nrgba(palette[palOutline]) {
			outline++
		}
	}
	if outline < 16 {
		t.Errorf("only %d outline pixels across a row of 16 cells", outline)
	}
	// Corners outside every hex are transparent.
	if _, _, _, a := img.At(0, 0).RGBA(); a != 0 {
		t.Error("corner is not transparent")
	}
}

func TestRenderHugeAndWide(t *testing.T) {
	// 3000 columns: cells of 1 px, drawn as blocks.
	g := NewGrid(3000, 4)
	g.Set(2999, 3, Lava, 9)
	doc, err := SetGrid(nil, g)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	poi := wf.POI{ID: "p", X: 10, Y: 0, Openable: true}
	if err := Render(&buf, doc, []wf.POI{poi}, nil, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	img := decodePNG(t, buf.Bytes())
	if b := img.Bounds(); b.Dx() != 3000 || b.Dy() != 4 {
		t.Errorf("image %v, want 3000x4", b)
	}
	if got := nrgba(img.At(2999, 3)); got != shade(Lava.Color(), 9) {
		t.Errorf("lava pixel %v", got)
	}
	if got := nrgba(img.At(10, 0)); got != nrgba(palette[palOpenable]) {
		t.Errorf("POI pixel %v", got)
	}
	// An explicit cell size is capped at MaxImageSide.
	if rg := geometry(NewGrid(4096, 4096), 64); rg.w > MaxImageSide || rg.h > MaxImageSide || rg.cell != 1 {
		t.Errorf("4096² at 64 px: %+v", rg)
	}
	if rg := geometry(NewGrid(10, 10), 1<<40); rg.w > MaxImageSide || rg.h > MaxImageSide || !rg.hex {
		t.Errorf("10² at 2^40 px: %+v", rg)
	}
	if rg := geometry(NewGrid(100, 100), 20); rg.cell != 20 || !rg.hex || rg.w != 100*20+10 {
		t.Errorf("100² at 20 px: %+v", rg)
	}
}

func TestRenderErrors(t *testing.T) {
	for doc, want := range map[string]string{
		`null`: wf.ENoGrid,
		`{}`:   wf.ENoGrid,
		`{"grid":{"type":"freeform","image":"x.png"}}`: wf.EFreeformGrid,
		`{"grid":{"cols":0,"rows":1}}`:                 wf.ENoSize,
		`{"grid":{"cols":2,"rows":1,"terrain":["g"]}}`: wf.EBadRequest,
	} {
		var buf bytes.Buffer
		err := Render(&buf, json.RawMessage(doc), nil, nil, RenderOptions{})
		if code(err) != want || buf.Len() != 0 {
			t.Errorf("Render(%s) = %v (wrote %d bytes), want %s", doc, err, buf.Len(), want)
		}
	}
}
