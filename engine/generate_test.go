package engine

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"pgregory.net/rapid"
)

var templateIDs = []string{
	"starter-jungle", "starter-dungeon", "starter-city", "starter-desert", "starter-wetland",
	"starter-archipelago", "starter-volcanic", "starter-caverns", "empty-hex",
}

func TestTemplates(t *testing.T) {
	var ids []string
	for _, ti := range Templates() {
		ids = append(ids, ti.ID)
		if ti.Name == "" || ti.Description == "" {
			t.Errorf("template %s has no name or description", ti.ID)
		}
	}
	if !slices.Equal(ids, templateIDs) {
		t.Errorf("template ids = %v, want %v", ids, templateIDs)
	}
}

func generate(t testing.TB, template string, seed int64, size string, populate bool) (*World, *Grid) {
	t.Helper()
	w, err := Generate(Spec{Template: template, Seed: &seed, Size: size, Populate: populate})
	if err != nil {
		t.Fatalf("Generate(%s, %d, %s): %v", template, seed, size, err)
	}
	g, err := DocGrid(w.Doc)
	if err != nil {
		t.Fatalf("DocGrid: %v", err)
	}
	return w, g
}

func TestGenerateErrors(t *testing.T) {
	seed := int64(1)
	_, err := Generate(Spec{Template: "starter-moon", Seed: &seed})
	if code(err) != wf.EUnknownTemplate || err.Error() != "unknown_template" {
		t.Errorf("unknown template: %v", err)
	}
	_, err = Generate(Spec{Template: "starter-jungle", Seed: &seed, Size: "huge"})
	if code(err) != wf.EBadRequest || !strings.Contains(err.Error(), `"huge"`) {
		t.Errorf("bad size: %v", err)
	}
}

func TestGenerateSizesAndDoc(t *testing.T) {
	for _, tt := range []struct {
		size, want string
		cols, rows int
	}{
		{"small", "small", 32, 24}, {"medium", "medium", 64, 48}, {"", "medium", 64, 48}, {"large", "large", 128, 96},
	} {
		w, g := generate(t, "starter-desert", -7, tt.size, false)
		if w.Size != tt.want || w.Cols != tt.cols || w.Rows != tt.rows || g.Cols() != tt.cols || g.Rows() != tt.rows || g.Blank() {
			t.Errorf("size %q: world %s %dx%d, grid %dx%d", tt.size, w.Size, w.Cols, w.Rows, g.Cols(), g.Rows())
		}
		var doc struct {
			Grid     json.RawMessage `json:"grid"`
			Template string          `json:"template"`
			Seed     int64           `json:"seed"`
			Size     string          `json:"size"`
		}
		if err := json.Unmarshal(w.Doc, &doc); err != nil || doc.Template != "starter-desert" || doc.Seed != -7 || doc.Size != tt.want {
			t.Errorf("doc %+v, %v", doc, err)
		}
		if !strings.HasPrefix(string(w.Doc), `{"grid":{"type":"hex","layout":"odd-r","cols":`) ||
			!strings.HasSuffix(string(w.Doc), `"template":"starter-desert","seed":-7,"size":"`+tt.want+`"}`) {
			t.Errorf("doc layout: %.80s…", w.Doc)
		}
	}
}

func TestGenerateBlankAndEmpty(t *testing.T) {
	w, g := generate(t, "", 3, "small", true)
	if !g.Blank() || len(w.POIs)+len(w.Places)+len(w.Pages) != 0 {
		t.Errorf("blank world: blank=%v pois=%d places=%d pages=%d", g.Blank(), len(w.POIs), len(w.Places), len(w.Pages))
	}
	if want := `{"grid":{"type":"hex","layout":"odd-r","cols":32,"rows":24,"cellSizePx":32},"template":"","seed":3,"size":"small"}`; string(w.Doc) != want {
		t.Errorf("blank doc = %s", w.Doc)
	}
	if w.POIs == nil || w.Places == nil || w.Pages == nil {
		t.Error("nil slices")
	}

	w, g = generate(t, "empty-hex", 3, "medium", true)
	for y := range g.Rows() {
		for x := range g.Cols() {
			if tr, e := g.At(x, y); tr != Grass || e != 0 {
				t.Fatalf("empty-hex cell (%d,%d) = %s %d", x, y, tr, e)
			}
		}
	}
	if len(w.POIs)+len(w.Places)+len(w.Pages) != 0 {
		t.Error("empty-hex has content")
	}
}

func TestGenerateRandomSeed(t *testing.T) {
	a, err := Generate(Spec{Template: "starter-city", Populate: true})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(Spec{Template: "starter-city", Populate: true})
	if a.Seed == b.Seed {
		t.Errorf("two random seeds are both %d", a.Seed)
	}
	for _, s := range []int64{a.Seed, b.Seed} {
		if s < 0 || s >= 1<<53 {
			t.Errorf("random seed %d outside [0, 2^53)", s)
		}
	}
	again, _ := generate(t, "starter-city", a.Seed, "", true)
	if string(again.Doc) != string(a.Doc) || !reflect.DeepEqual(again.POIs, a.POIs) {
		t.Error("regenerating with the returned seed gave another world")
	}
}

func TestGenerateDeterministic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tmpl := rapid.SampledFrom(templateIDs).Draw(t, "template")
		seed := rapid.Int64().Draw(t, "seed")
		size := rapid.SampledFrom([]string{"small", "medium", ""}).Draw(t, "size")
		populate := rapid.Bool().Draw(t, "populate")
		spec := Spec{Template: tmpl, Seed: &seed, Size: size, Populate: populate}
		a, err := Generate(spec)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Generate(spec)
		if string(a.Doc) != string(b.Doc) {
			t.Fatal("same spec, different documents")
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatal("same spec, different POIs, places or pages")
		}
		// Populating does not change the terrain.
		spec.Populate = !populate
		c, _ := Generate(spec)
		if string(c.Doc) != string(a.Doc) {
			t.Fatal("populate changed the document")
		}
		if tmpl == "empty-hex" {
			return
		}
		other := seed + 1 + rapid.Int64Range(0, 1000).Draw(t, "delta")
		d, _ := Generate(Spec{Template: tmpl, Seed: &other, Size: size})
		ga, _ := DocGrid(a.Doc)
		gd, _ := DocGrid(d.Doc)
		if string(ga.terrain) == string(gd.terrain) {
			t.Fatalf("seeds %d and %d give the same terrain", seed, other)
		}
	})
}

// shares returns each terrain's share of the grid.
func shares(g *Grid) map[Terrain]float64 {
	out := map[Terrain]float64{}
	for _, b := range g.terrain {
		out[Terrain(b)] += 1 / float64(len(g.terrain))
	}
	return out
}

func dominant(sh map[Terrain]float64) Terrain {
	best := Empty
	for _, tr := range Terrains() {
		if sh[tr] > sh[best] {
			best = tr
		}
	}
	return best
}

func TestTemplateTerrain(t *testing.T) {
	// Each template's look, as minimum shares of groups of terrains.
	type share struct {
		codes string
		min   float64
	}
	want := map[string]struct {
		dominant Terrain
		shares   []share
	}{
		"starter-jungle":      {Jungle, []share{{"jf", 0.6}, {"s", 0.02}, {"hm", 0.08}}},
		"starter-dungeon":     {DungeonWall, []share{{"nvs", 1}, {"n", 0.2}}},
		"starter-city":        {Building, []share{{"up", 0.45}, {"t", 0.02}, {"w", 0.01}, {"y", 0.05}}},
		"starter-desert":      {Desert, []share{{"dr", 0.8}, {"r", 0.1}, {"ws", 0.002}}},
		"starter-wetland":     {Swamp, []share{{"x", 0.35}, {"sw", 0.2}, {"g", 0.05}}},
		"starter-archipelago": {DeepWater, []share{{"w", 0.5}, {"ws", 0.65}, {"b", 0.02}}},
		"starter-volcanic":    {Ash, []share{{"akmh", 0.8}, {"l", 0.01}, {"m", 0.05}}},
		"starter-caverns":     {Rock, []share{{"kcsw", 1}, {"c", 0.2}, {"sw", 0.03}}},
		"empty-hex":           {Grass, []share{{"g", 1}}},
	}
	for _, tmpl := range templateIDs {
		for _, size := range []string{"small", "medium", "large"} {
			for seed := int64(1); seed <= 3; seed++ {
				_, g := generate(t, tmpl, seed*7919, size, false)
				sh := shares(g)
				w := want[tmpl]
				if d := dominant(sh); d != w.dominant {
					t.Errorf("%s/%s/%d: dominant terrain %s, want %s", tmpl, size, seed, d, w.dominant)
				}
				for _, s := range w.shares {
					got := 0.0
					for _, c := range []byte(s.codes) {
						got += sh[Terrain(c)]
					}
					if got < s.min-1e-9 {
						t.Errorf("%s/%s/%d: share of %q = %.3f, want ≥ %.3f", tmpl, size, seed, s.codes, got, s.min)
					}
				}
			}
		}
	}
	// Every template is recognisably different: distinct dominant terrains
	// (checked above) and histograms far apart.
	hist := map[string]map[Terrain]float64{}
	for _, tmpl := range templateIDs {
		_, g := generate(t, tmpl, 99, "medium", false)
		hist[tmpl] = shares(g)
	}
	for i, a := range templateIDs {
		for _, b := range templateIDs[i+1:] {
			d := 0.0
			for _, tr := range Terrains() {
				d += max(hist[a][tr]-hist[b][tr], hist[b][tr]-hist[a][tr])
			}
			if d < 0.8 {
				t.Errorf("%s and %s histograms differ by only %.2f (L1)", a, b, d)
			}
		}
	}
}

func TestPopulate(t *testing.T) {
	for _, tmpl := range templateIDs[:8] {
		for _, size := range []string{"small", "medium", "large"} {
			t.Run(tmpl+"/"+size, func(t *testing.T) {
				w, g := generate(t, tmpl, 2024, size, true)
				solid := "vt." // terrain nothing should stand on
				if tmpl == "starter-caverns" || tmpl == "starter-volcanic" {
					solid = "vtk." // solid rock (volcanic: bare rock fields)
				}
				def := findTemplate(tmpl)
				if len(w.POIs) < 5 {
					t.Errorf("%d POIs", len(w.POIs))
				}
				cats := map[string]bool{}
				pos := map[[2]int]string{}
				items := map[string]bool{}
				for i, p := range w.POIs {
					if p.ID != fmt.Sprintf("poi-%d", i+1) || p.WorldID != "" || p.Name == "" || p.Category == "" || p.Tags == nil || p.Items == nil {
						t.Errorf("POI %+v", p)
					}
					cats[p.Category] = true
					if !g.InBounds(p.X, p.Y) {
						t.Errorf("%s at (%d,%d) outside the grid", p.ID, p.X, p.Y)
					}
					if o, dup := pos[[2]int{p.X, p.Y}]; dup {
						t.Errorf("%s and %s share a cell", o, p.ID)
					}
					pos[[2]int{p.X, p.Y}] = p.ID
					tr, _ := g.At(p.X, p.Y)
					k := def.pois[slices.IndexFunc(def.pois, func(k poiKind) bool { return k.cat == p.Category })]
					if (strings.IndexByte(solid, byte(tr)) >= 0 && p.Category != "obsidian") ||
						(!k.anchorOnly && strings.IndexByte(k.on, byte(tr)) < 0) {
						t.Errorf("%s %q (%s) stands on %s", p.ID, p.Name, p.Category, tr)
					}
					if p.Visibility != wf.AudienceGM && p.Visibility != wf.AudienceParty {
						t.Errorf("%s visibility %q", p.ID, p.Visibility)
					}
					if p.Pickable != (len(p.Items) > 0) {
						t.Errorf("%s pickable=%v with %d items", p.ID, p.Pickable, len(p.Items))
					}
					for _, it := range p.Items {
						if items[it.ID] || it.Name == "" || !strings.HasPrefix(it.ID, "item-") {
							t.Errorf("item %+v duplicate or unnamed", it)
						}
						items[it.ID] = true
					}
				}
				if len(cats) < 5 {
					t.Errorf("only categories %v", cats)
				}

				// Places: one root, children after parents, levels one deeper,
				// level-3 places named after POIs at their cells.
				keys := map[string]int{}
				for i, pl := range w.Places {
					if _, dup := keys[pl.Key]; dup || pl.Key != fmt.Sprintf("place-%d", i+1) {
						t.Errorf("place key %q", pl.Key)
					}
					keys[pl.Key] = pl.Node.Level
					n := pl.Node
					if n.ID != "" || n.WorldID != "" || n.Name == "" || !json.Valid(n.JSON) {
						t.Errorf("place %+v", pl)
					}
					if _, ok := TerrainByName(n.TerrainType); !ok {
						t.Errorf("place %s terrain %q", pl.Key, n.TerrainType)
					}
					if i == 0 {
						if pl.ParentKey != "" || n.Level != 1 {
							t.Errorf("root place %+v", pl)
						}
						continue
					}
					if lvl, ok := keys[pl.ParentKey]; !ok || lvl != n.Level-1 || n.Level > 3 {
						t.Errorf("place %s level %d under %q", pl.Key, n.Level, pl.ParentKey)
					}
					if n.Level == 3 {
						var at struct{ X, Y int }
						json.Unmarshal(n.JSON, &at)
						if pos[[2]int{at.X, at.Y}] == "" {
							t.Errorf("place %s %q at (%d,%d) has no POI", pl.Key, n.Name, at.X, at.Y)
						}
					}
				}
				if len(w.Places) < 6 {
					t.Errorf("%d places", len(w.Places))
				}

				if len(w.Pages) < 2 || len(w.Pages) > 4 {
					t.Errorf("%d pages", len(w.Pages))
				}
				titles := map[string]bool{}
				for _, pg := range w.Pages {
					if titles[pg.Title] || pg.Title == "" || !strings.HasPrefix(pg.Body, "# ") ||
						!slices.Contains(wf.WikiKinds, pg.Kind) || (pg.Audience != wf.AudienceGM && pg.Audience != wf.AudienceParty) ||
						strings.Contains(pg.Body, "{") {
						t.Errorf("page %q (%s/%s):\n%s", pg.Title, pg.Kind, pg.Audience, pg.Body)
					}
					titles[pg.Title] = true
				}
			})
		}
	}
}

func TestTemplatePOICategories(t *testing.T) {
	want := map[string][]string{
		"starter-jungle":      {"shrine", "ruin", "camp", "cache", "lair"},
		"starter-dungeon":     {"stairs", "altar", "door", "chest", "trap"},
		"starter-city":        {"market", "gate", "tavern", "shop", "temple"},
		"starter-desert":      {"oasis", "tomb", "caravan"},
		"starter-wetland":     {"village", "hut", "ruin", "herbs"},
		"starter-archipelago": {"port", "wreck", "cove"},
		"starter-volcanic":    {"caldera", "forge", "obsidian", "cult"},
		"starter-caverns":     {"lake", "grove", "vault", "warren"},
	}
	for tmpl, cats := range want {
		w, _ := generate(t, tmpl, 5, "medium", true)
		var got []string
		for _, p := range w.POIs {
			got = append(got, p.Category)
		}
		for _, c := range cats {
			if !slices.Contains(got, c) {
				t.Errorf("%s: no %q POI among %v", tmpl, c, got)
			}
		}
	}
	// Specific placements: doors and gates are openable, gates are named
	// after their side and stand on streets.
	w, g := generate(t, "starter-city", 5, "medium", true)
	gates := 0
	for _, p := range w.POIs {
		if p.Category == "gate" {
			gates++
			tr, _ := g.At(p.X, p.Y)
			if !p.Openable || tr != Street || !strings.HasSuffix(p.Name, " Gate") {
				t.Errorf("gate %+v on %s", p, tr)
			}
		}
	}
	if gates != 4 {
		t.Errorf("%d gates", gates)
	}
}

func BenchmarkGenerate(b *testing.B) {
	for _, size := range []string{"small", "medium", "large"} {
		for _, tmpl := range []string{"starter-jungle", "starter-caverns", "starter-city"} {
			b.Run(size+"/"+tmpl, func(b *testing.B) {
				b.ReportAllocs()
				seed := int64(1)
				for b.Loop() {
					seed++
					if _, err := Generate(Spec{Template: tmpl, Seed: &seed, Size: size, Populate: true}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
