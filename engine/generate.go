package engine

import (
	"cmp"
	crand "crypto/rand"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	wf "github.com/worldforge-go/worldforge"
)

// World sizes.
const (
	SizeSmall  = "small"  // 32 × 24
	SizeMedium = "medium" // 64 × 48, the default
	SizeLarge  = "large"  // 128 × 96
)

// SizeDims returns the columns and rows of a named size ("" is medium).
func SizeDims(size string) (cols, rows int, ok bool) {
	switch size {
	case SizeSmall:
		return 32, 24, true
	case SizeMedium, "":
		return 64, 48, true
	case SizeLarge:
		return 128, 96, true
	}
	return 0, 0, false
}

// Spec says what world to generate.
type Spec struct {
	Template string // a template id, or "" for a blank grid
	Seed     *int64 // nil: a random seed, returned in World.Seed
	Size     string // small, medium (default) or large
	Populate bool   // add POIs, atlas places and wiki pages
}

// World is a generated world. The local keys in it (POI.ID "poi-1", Place
// keys "place-1", item ids "item-1") are unique within the world; the caller
// replaces POI and place keys with stored ids when it saves them (item ids
// may be kept: they only need to be unique within the world).
type World struct {
	Template string
	Size     string
	Seed     int64
	Cols     int
	Rows     int
	// Doc is the world document: {"grid":…,"template":…,"seed":…,"size":…}.
	Doc json.RawMessage
	// POIs have ID set to a local key ("poi-1", …) and WorldID empty.
	POIs []wf.POI
	// Places form a tree by Key/ParentKey: one level-1 region, its level-2
	// areas and level-3 places. Node.ID, WorldID and ParentID are empty.
	Places []Place
	// Pages are starter wiki pages (ID and WorldID empty, Version 0).
	Pages []wf.WikiPage
}

// Place is an atlas node to create, with local keys forming the tree.
type Place struct {
	Key       string // "place-1", …
	ParentKey string // "" for the root
	Node      wf.AtlasNode
}

// TemplateInfo describes a template.
type TemplateInfo struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Templates lists the templates in a fixed order.
func Templates() []TemplateInfo {
	out := make([]TemplateInfo, len(templates))
	for i, t := range templates {
		out[i] = TemplateInfo{ID: t.id, Name: t.name, Description: t.desc}
	}
	return out
}

func findTemplate(id string) *templateDef {
	for i := range templates {
		if templates[i].id == id {
			return &templates[i]
		}
	}
	return nil
}

// Generate makes a world. The same Template, Seed, Size and Populate give a
// byte-identical Doc and identical POIs, Places and Pages, on every
// platform: generation uses integer arithmetic only, and PCG streams seeded
// from the seed and the template id. Populate does not change the terrain.
//
// Errors: unknown_template (an unknown template id), bad_request (an
// unknown size).
func Generate(spec Spec) (*World, error) {
	var def *templateDef
	if spec.Template != "" {
		if def = findTemplate(spec.Template); def == nil {
			return nil, &wf.Error{Code: wf.EUnknownTemplate}
		}
	}
	size := spec.Size
	if size == "" {
		size = SizeMedium
	}
	cols, rows, ok := SizeDims(size)
	if !ok {
		return nil, wf.BadRequest("size must be small, medium or large, got %q", clip(size))
	}
	var seed int64
	if spec.Seed != nil {
		seed = *spec.Seed
	} else {
		seed = RandomSeed()
	}
	w := &World{
		Template: spec.Template, Size: size, Seed: seed, Cols: cols, Rows: rows,
		POIs: []wf.POI{}, Places: []Place{}, Pages: []wf.WikiPage{},
	}
	g := NewGrid(cols, rows)
	if def != nil {
		c := newGen(g, newRNG(seed, def.id, "terrain"))
		def.terrain(c)
		if spec.Populate && len(def.pois) > 0 {
			populate(w, def, c, newRNG(seed, def.id, "populate"))
		}
	}
	w.Doc = worldDoc(g, spec.Template, seed, size)
	return w, nil
}

// RandomSeed returns a random seed from crypto/rand in [0, 2^53), so that it
// survives a round trip through a JSON number in any language.
func RandomSeed() int64 {
	var b [8]byte
	if _, err := crand.Read(b[:]); err != nil {
		panic("engine: crypto/rand failed: " + err.Error())
	}
	return int64(binary.LittleEndian.Uint64(b[:]) & (1<<53 - 1))
}

func worldDoc(g *Grid, template string, seed int64, size string) json.RawMessage {
	out := make([]byte, 0, g.jsonLen()+len(template)+len(size)+64)
	out = append(out, `{"grid":`...)
	out = g.AppendJSON(out)
	out = append(out, `,"template":`...)
	out = strconv.AppendQuote(out, template)
	out = append(out, `,"seed":`...)
	out = strconv.AppendInt(out, seed, 10)
	out = append(out, `,"size":`...)
	out = strconv.AppendQuote(out, size)
	return append(out, '}')
}

// ---- randomness ----

// rng draws from a PCG stream. Bounded values are derived here (not by
// math/rand's helpers) so the output depends only on PCG and this code.
type rng struct{ src *rand.PCG }

func newRNG(seed int64, template, stream string) *rng {
	h := fnv.New64a()
	h.Write([]byte(template))
	h.Write([]byte{0})
	h.Write([]byte(stream))
	return &rng{rand.NewPCG(uint64(seed), h.Sum64())}
}

func (r *rng) u64() uint64 { return r.src.Uint64() }

// intn returns a value in [0, n), n > 0 (multiply-shift; the bias is
// below n/2^64).
func (r *rng) intn(n int) int {
	hi, _ := bits.Mul64(r.src.Uint64(), uint64(n))
	return int(hi)
}

// between returns a value in [lo, hi].
func (r *rng) between(lo, hi int) int { return lo + r.intn(hi-lo+1) }

// chance returns true with probability num/den.
func (r *rng) chance(num, den int) bool { return r.intn(den) < num }

func shuffle[T any](r *rng, xs []T) {
	for i := len(xs) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		xs[i], xs[j] = xs[j], xs[i]
	}
}

func pick[T any](r *rng, xs []T) T { return xs[r.intn(len(xs))] }

// ---- integer value noise ----

// noise is 2-D value noise on an integer lattice with smoothstep
// interpolation, in 16.16 fixed point. Values are 0–65535.
type noise struct {
	perm [256]uint8
	val  [256]int64
}

func newNoise(r *rng) *noise {
	n := &noise{}
	for i := range n.perm {
		n.perm[i] = uint8(i)
		n.val[i] = int64(r.u64() & 0xffff)
	}
	shuffle(r, n.perm[:])
	return n
}

func (n *noise) lat(ix, iy int64) int64 {
	return n.val[n.perm[(int64(n.perm[ix&255])+iy)&255]]
}

func smooth(t int64) int64 { return t * t * (3<<16 - 2*t) >> 32 }

// sample returns the noise at (fx, fy) in 16.16 fixed point.
func (n *noise) sample(fx, fy int64) int64 {
	ix, iy := fx>>16, fy>>16
	sx, sy := smooth(fx&0xffff), smooth(fy&0xffff)
	a, b := n.lat(ix, iy), n.lat(ix+1, iy)
	c, d := n.lat(ix, iy+1), n.lat(ix+1, iy+1)
	top := a + (b-a)*sx>>16
	bot := c + (d-c)*sx>>16
	return top + (bot-top)*sy>>16
}

// cellPos returns the centre of cell (x, y) in milli-cells: odd rows shift
// right by half a cell and rows are √3/2 of a cell apart.
func cellPos(x, y int) (int64, int64) {
	return int64(x)*1000 + int64(y&1)*500, int64(y) * 866
}

// fbm returns fractal noise (octaves halving in amplitude) at cell (x, y);
// scale is the size of the coarsest feature in cells. Values are 0–65535.
func (n *noise) fbm(x, y, scale, octaves int) int64 {
	px, py := cellPos(x, y)
	s := int64(max(scale, 1)) * 1000
	var sum, total int64
	amp := int64(1 << 10)
	for o := range octaves {
		off := int64(o) * 7919 << 16
		sum += n.sample(px<<(16+o)/s+off, py<<(16+o)/s+off) * amp
		total += amp
		amp >>= 1
	}
	return sum / total
}

// field returns fbm for every cell, row-major.
func (c *gen) field(n *noise, scale, octaves int) []int64 {
	out := make([]int64, c.w*c.h)
	for y := range c.h {
		for x := range c.w {
			out[y*c.w+x] = n.fbm(x, y, scale, octaves)
		}
	}
	return out
}

// ranks returns, for each value, its rank in per-mille (0–999): the share of
// values below it, ties broken by index.
func ranks(vals []int64) []int {
	idx := make([]int32, len(vals))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int {
		return cmp.Or(cmp.Compare(vals[a], vals[b]), cmp.Compare(a, b))
	})
	out := make([]int, len(vals))
	for r, i := range idx {
		out[i] = r * 1000 / len(vals)
	}
	return out
}

// ---- generation context ----

// gen is the state of one generation: the grid (always materialised), the
// terrain stream and the anchors the terrain step leaves for the POIs.
type gen struct {
	r       *rng
	g       *Grid
	w, h    int
	anchors []anchor
}

// anchor is a position the terrain step marked for a POI category, such as
// a dungeon door or a city gate; name, if set, names the POI.
type anchor struct {
	cat  string
	x, y int
	name string
}

func newGen(g *Grid, r *rng) *gen {
	g.materialize()
	return &gen{r: r, g: g, w: g.cols, h: g.rows}
}

func (c *gen) in(x, y int) bool { return x >= 0 && y >= 0 && x < c.w && y < c.h }

func (c *gen) t(x, y int) Terrain { return Terrain(c.g.terrain[y*c.w+x]) }

func (c *gen) e(x, y int) int { return int(c.g.elev[y*c.w+x] - '0') }

func (c *gen) set(x, y int, t Terrain, e int) {
	i := y*c.w + x
	c.g.terrain[i] = byte(t)
	c.g.elev[i] = byte('0' + min(max(e, 0), 9))
}

func (c *gen) anchor(cat string, x, y int, name string) {
	c.anchors = append(c.anchors, anchor{cat, x, y, name})
}

// randomCell returns a random cell at least margin cells from the edges
// whose terrain is in codes, or ok=false after tries attempts.
func (c *gen) randomCell(codes string, margin, tries int) (int, int, bool) {
	if c.w <= 2*margin || c.h <= 2*margin {
		return 0, 0, false
	}
	for range tries {
		x, y := c.r.between(margin, c.w-1-margin), c.r.between(margin, c.h-1-margin)
		if strings.IndexByte(codes, byte(c.t(x, y))) >= 0 {
			return x, y, true
		}
	}
	return 0, 0, false
}

// walk carves a path from (x, y) that always steps to the lowest unvisited
// neighbour of height (with jitter), until stop says so, an edge is
// reached or maxSteps pass. It calls paint on every cell of the path.
func (c *gen) walk(x, y int, height []int64, jitter int, maxSteps int, stop func(x, y int) bool, paint func(x, y int)) {
	seen := make([]bool, c.w*c.h)
	for range maxSteps {
		paint(x, y)
		seen[y*c.w+x] = true
		if x == 0 || y == 0 || x == c.w-1 || y == c.h-1 {
			return
		}
		bx, by, best := -1, -1, int64(1<<62)
		for _, nb := range Neighbors(x, y) {
			nx, ny := nb[0], nb[1]
			if !c.in(nx, ny) || seen[ny*c.w+nx] {
				continue
			}
			v := height[ny*c.w+nx] + int64(c.r.intn(jitter+1))
			if v < best {
				bx, by, best = nx, ny, v
			}
		}
		if bx < 0 {
			return
		}
		if stop(bx, by) {
			paint(bx, by)
			return
		}
		x, y = bx, by
	}
}

// disc calls f for every in-bounds cell within hex distance r of (x, y).
func (c *gen) disc(x, y, r int, f func(x, y, d int)) {
	for yy := max(0, y-r); yy <= min(c.h-1, y+r); yy++ {
		for xx := max(0, x-r-1); xx <= min(c.w-1, x+r+1); xx++ {
			if d := Distance(x, y, xx, yy); d <= r {
				f(xx, yy, d)
			}
		}
	}
}

// dominant returns the most common terrain in the rectangle [x0,x1)×[y0,y1),
// ties to the earlier terrain in table order.
func (c *gen) dominant(x0, y0, x1, y1 int) Terrain {
	var counts [256]int
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			counts[c.g.terrain[y*c.w+x]]++
		}
	}
	best := Empty
	for _, t := range terrainTable {
		if counts[t.code] > counts[best] {
			best = t.code
		}
	}
	return best
}

// ---- population: POIs, atlas places, wiki pages ----

// poiKind is one kind of POI a template places.
type poiKind struct {
	cat        string
	tags       []string
	on         string // terrain codes it may stand on
	names      []string
	items      []string // item names to draw from
	minI, maxI int      // how many items
	pick, open bool     // items can be picked up; it can be opened
	gm         bool     // visible to the GM only (else to the party)
	n          [3]int   // how many for small, medium, large
	place      bool     // also a level-3 atlas place
	anchorOnly bool     // only at the terrain step's anchors of cat
}

// flavor is the text a template's places and pages are written from. In
// the texts, {region}, {faction}, {poi1} and {poi2} are replaced.
type flavor struct {
	regions     []string // level-1 region names
	areas       []string // level-2 area names (at least 4)
	intro       string
	faction     string
	factionText string
	secret      string
	hookTitle   string
	hook        string
}

func sizeIndex(size string) int {
	switch size {
	case SizeSmall:
		return 0
	case SizeLarge:
		return 2
	}
	return 1
}

var romanSuffix = []string{"", " II", " III", " IV", " V", " VI", " VII", " VIII", " IX", " X"}

type placedPOI struct {
	poi  wf.POI
	kind *poiKind
}

func populate(w *World, def *templateDef, c *gen, r *rng) {
	si := sizeIndex(w.Size)
	occupied := make([]bool, c.w*c.h)
	var placed []placedPOI
	nItems := 0
	for ki := range def.pois {
		k := &def.pois[ki]
		var anchors []anchor
		for _, a := range c.anchors {
			if a.cat == k.cat {
				anchors = append(anchors, a)
			}
		}
		shuffle(r, anchors)
		names := slices.Clone(k.names)
		shuffle(r, names)
		for i := range k.n[si] {
			x, y, name, ok := -1, -1, "", false
			for len(anchors) > 0 && !ok {
				a := anchors[0]
				anchors = anchors[1:]
				if !occupied[a.y*c.w+a.x] {
					x, y, name, ok = a.x, a.y, a.name, true
				}
			}
			if !ok {
				if k.anchorOnly {
					break
				}
				x, y = findSpot(c, r, k.on, occupied, placed)
			}
			occupied[y*c.w+x] = true
			if name == "" {
				name = names[i%len(names)] + romanSuffix[min(i/len(names), len(romanSuffix)-1)]
			}
			p := wf.POI{
				ID:         "poi-" + strconv.Itoa(len(placed)+1),
				Name:       name,
				Category:   k.cat,
				Tags:       slices.Clone(k.tags),
				X:          x,
				Y:          y,
				Items:      []wf.POIItem{},
				Openable:   k.open,
				Visibility: wf.AudienceParty,
			}
			if p.Tags == nil {
				p.Tags = []string{}
			}
			if k.gm {
				p.Visibility = wf.AudienceGM
			}
			if len(k.items) > 0 {
				pool := slices.Clone(k.items)
				shuffle(r, pool)
				for _, it := range pool[:min(r.between(k.minI, k.maxI), len(pool))] {
					nItems++
					p.Items = append(p.Items, wf.POIItem{ID: "item-" + strconv.Itoa(nItems), Name: it})
				}
			}
			p.Pickable = k.pick && len(p.Items) > 0
			placed = append(placed, placedPOI{p, k})
		}
	}
	for _, p := range placed {
		w.POIs = append(w.POIs, p.poi)
	}
	w.Places = makePlaces(def, c, r, placed)
	w.Pages = makePages(def, w, c, placed)
}

// findSpot returns a free cell on one of the codes, away from other POIs
// if it can; failing that any free cell on the codes, then any free cell.
func findSpot(c *gen, r *rng, codes string, occupied []bool, placed []placedPOI) (int, int) {
	ok := func(i int) bool {
		return !occupied[i] && strings.IndexByte(codes, c.g.terrain[i]) >= 0
	}
	for try := range 400 {
		x, y := r.intn(c.w), r.intn(c.h)
		if !ok(y*c.w + x) {
			continue
		}
		if try < 300 && slices.ContainsFunc(placed, func(p placedPOI) bool {
			return Distance(p.poi.X, p.poi.Y, x, y) < 3
		}) {
			continue
		}
		return x, y
	}
	n := c.w * c.h
	start := r.intn(n)
	for k := range n {
		if i := (start + k) % n; ok(i) {
			return i % c.w, i / c.w
		}
	}
	for k := range n {
		if i := (start + k) % n; !occupied[i] {
			return i % c.w, i / c.w
		}
	}
	return 0, 0 // unreachable: there are more cells than POIs
}

type placeJSON struct {
	X        *int   `json:"x,omitempty"`
	Y        *int   `json:"y,omitempty"`
	Cols     int    `json:"cols,omitempty"`
	Rows     int    `json:"rows,omitempty"`
	Template string `json:"template,omitempty"`
	Category string `json:"category,omitempty"`
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// quadrant returns 0–3 (NW, NE, SW, SE) for a cell.
func (c *gen) quadrant(x, y int) int {
	q := 0
	if x >= c.w/2 {
		q |= 1
	}
	if y >= c.h/2 {
		q |= 2
	}
	return q
}

func makePlaces(def *templateDef, c *gen, r *rng, placed []placedPOI) []Place {
	region := pick(r, def.flavor.regions)
	areas := slices.Clone(def.flavor.areas)
	shuffle(r, areas)
	places := []Place{{
		Key: "place-1",
		Node: wf.AtlasNode{
			Name: region, Level: 1, TerrainType: c.dominant(0, 0, c.w, c.h).Name(),
			JSON: mustJSON(placeJSON{Template: def.id, Cols: c.w, Rows: c.h}),
		},
	}}
	for q := range 4 {
		x0, y0 := (q&1)*(c.w/2), (q>>1)*(c.h/2)
		x1, y1 := x0+c.w/2, y0+c.h/2
		if q&1 == 1 {
			x1 = c.w
		}
		if q>>1 == 1 {
			y1 = c.h
		}
		cx, cy := (x0+x1)/2, (y0+y1)/2
		places = append(places, Place{
			Key: "place-" + strconv.Itoa(q+2), ParentKey: "place-1",
			Node: wf.AtlasNode{
				Name: areas[q], Level: 2, TerrainType: c.dominant(x0, y0, x1, y1).Name(),
				JSON: mustJSON(placeJSON{X: &cx, Y: &cy}),
			},
		})
	}
	for _, p := range placed {
		if !p.kind.place {
			continue
		}
		x, y := p.poi.X, p.poi.Y
		places = append(places, Place{
			Key:       "place-" + strconv.Itoa(len(places)+1),
			ParentKey: "place-" + strconv.Itoa(c.quadrant(x, y)+2),
			Node: wf.AtlasNode{
				Name: p.poi.Name, Level: 3, TerrainType: c.t(x, y).Name(),
				JSON: mustJSON(placeJSON{X: &x, Y: &y, Category: p.poi.Category}),
			},
		})
	}
	return places
}

func makePages(def *templateDef, w *World, c *gen, placed []placedPOI) []wf.WikiPage {
	fl := &def.flavor
	region := w.Places[0].Node.Name
	var landmarks, hidden []placedPOI
	for _, p := range placed {
		switch {
		case p.poi.Visibility == wf.AudienceGM:
			hidden = append(hidden, p)
		case p.kind.place:
			landmarks = append(landmarks, p)
		}
	}
	poi1, poi2 := region, region
	if len(landmarks) > 0 {
		poi1, poi2 = landmarks[0].poi.Name, landmarks[len(landmarks)-1].poi.Name
	}
	rep := strings.NewReplacer("{region}", region, "{faction}", fl.faction, "{poi1}", poi1, "{poi2}", poi2)
	at := func(b *strings.Builder, p placedPOI) {
		b.WriteString("- **" + p.poi.Name + "** (" + p.poi.Category + ") at (" +
			strconv.Itoa(p.poi.X) + ", " + strconv.Itoa(p.poi.Y) + ")")
	}

	var b strings.Builder
	b.WriteString("# " + region + "\n\n" + rep.Replace(fl.intro) + "\n\n## Areas\n\n")
	for _, pl := range w.Places[1:5] {
		b.WriteString("- **" + pl.Node.Name + "**: mostly " + pl.Node.TerrainType + "\n")
	}
	if len(landmarks) > 0 {
		b.WriteString("\n## Landmarks\n\n")
		for _, p := range landmarks {
			at(&b, p)
			b.WriteString("\n")
		}
	}
	overview := b.String()

	b.Reset()
	b.WriteString("# GM notes: " + region + "\n\n" + rep.Replace(fl.secret) + "\n")
	if len(hidden) > 0 {
		b.WriteString("\n## Hidden on the map\n\n")
		for _, p := range hidden {
			at(&b, p)
			for i, it := range p.poi.Items {
				if i == 0 {
					b.WriteString(": ")
				} else {
					b.WriteString(", ")
				}
				b.WriteString(it.Name)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\n_Generated from template `" + def.id + "`, seed " + strconv.FormatInt(w.Seed, 10) + ", size " + w.Size + "._\n")
	notes := b.String()

	hook := "# " + rep.Replace(fl.hookTitle) + "\n\n" + rep.Replace(fl.hook) + "\n\n## Objectives\n\n" +
		"- [ ] Reach **" + poi1 + "**\n- [ ] Learn what happened at **" + poi2 + "**\n- [ ] Report back to " + fl.faction + "\n"

	return []wf.WikiPage{
		{Title: region, Body: overview, Kind: wf.WikiKindLore, Audience: wf.AudienceParty},
		{Title: fl.faction, Body: "# " + fl.faction + "\n\n" + rep.Replace(fl.factionText) + "\n", Kind: wf.WikiKindFaction, Audience: wf.AudienceParty},
		{Title: "GM notes: " + region, Body: notes, Kind: wf.WikiKindLore, Audience: wf.AudienceGM},
		{Title: rep.Replace(fl.hookTitle), Body: hook, Kind: wf.WikiKindQuestLog, Audience: wf.AudienceParty},
	}
}
