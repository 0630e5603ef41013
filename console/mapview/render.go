package mapview

import (
	"bytes"
	"container/list"
	"context"
	"fmt"
	"hash/fnv"
	"image"
	"image/png"
	"strconv"
	"sync"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/engine"
)

// Map is one version of a world's map: what a Renderer draws.
type Map struct {
	WorldID  string
	Version  int64
	Layout   *Layout
	POIs     []wf.POI
	Presence []wf.Presence
	// Grid loads the world's grid at Version; it is called only when a
	// picture is not cached and the grid is not either.
	Grid func(ctx context.Context) (*engine.Grid, error)
}

// Overlay is a hash of what is drawn over the grid (each POI's cell and
// kind, each presence's cell), which the world's version does not cover.
func (m *Map) Overlay() uint64 {
	h := fnv.New64a()
	var b []byte
	for _, p := range m.POIs {
		b = strconv.AppendInt(b[:0], int64(p.X), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(p.Y), 10)
		b = append(b, ',', boolByte(p.Openable), boolByte(p.Pickable), ';')
		h.Write(b)
	}
	h.Write([]byte{'|'})
	for _, p := range m.Presence {
		b = strconv.AppendInt(b[:0], int64(p.X), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(p.Y), 10)
		b = append(b, ';')
		h.Write(b)
	}
	return h.Sum64()
}

func boolByte(v bool) byte {
	if v {
		return '1'
	}
	return '0'
}

// ETag is an HTTP entity tag for the map's pictures: its world, version
// and overlay.
func (m *Map) ETag() string {
	return fmt.Sprintf(`"%s-v%d-%x"`, m.WorldID, m.Version, m.Overlay())
}

// Options size a Renderer's caches.
type Options struct {
	// PNGBytes is the budget of the encoded-picture cache (default 16 MiB).
	PNGBytes int64
	// GridBytes is the budget of the parsed-grid cache (default 40 MiB:
	// one 4096×4096 grid takes 32 MiB). A grid larger than the budget is
	// drawn from and not kept.
	GridBytes int64
	// Loads bounds how many grids are read and parsed at once (default
	// 2): reading a 4096×4096 world holds its 33 MB document and 32 MB
	// grid until it is parsed.
	Loads int
}

// Renderer draws maps into PNGs and caches them. It is safe for
// concurrent use.
type Renderer struct {
	pngs  *lru[[]byte]
	grids *lru[*engine.Grid]

	mu      sync.Mutex
	loading map[string]*flight // grids being loaded, by key
	loads   chan struct{}      // one token per grid load under way
	enc     png.Encoder
}

// flight is one grid load that concurrent callers wait for.
type flight struct {
	done chan struct{}
	g    *engine.Grid
	err  error
}

// NewRenderer returns a Renderer with the given cache budgets.
func NewRenderer(o Options) *Renderer {
	if o.PNGBytes <= 0 {
		o.PNGBytes = 16 << 20
	}
	if o.GridBytes <= 0 {
		o.GridBytes = 40 << 20
	}
	if o.Loads <= 0 {
		o.Loads = 2
	}
	return &Renderer{
		pngs:    newLRU[[]byte](o.PNGBytes),
		grids:   newLRU[*engine.Grid](o.GridBytes),
		loading: map[string]*flight{},
		loads:   make(chan struct{}, o.Loads),
		enc:     png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: &bufferPool{}},
	}
}

// PNG returns tile (x, y) of level z of the map (level 0 is the
// overview) as a PNG, from the cache or drawn. Errors: bad_request for a
// level or tile outside the map (checked before anything is loaded), the
// Grid loader's, and internal ones.
func (r *Renderer) PNG(ctx context.Context, m *Map, z, x, y int) ([]byte, error) {
	cells, err := m.Layout.TileCells(z, x, y)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("%s/%d/%x/%d/%d/%d", m.WorldID, m.Version, m.Overlay(), z, x, y)
	if b, ok := r.pngs.get(key); ok {
		return b, nil
	}
	g, err := r.grid(ctx, m)
	if err != nil {
		return nil, err
	}
	if g.Cols() != m.Layout.Cols || g.Rows() != m.Layout.Rows {
		return nil, fmt.Errorf("mapview: world %s version %d: grid is %d×%d, layout %d×%d",
			m.WorldID, m.Version, g.Cols(), g.Rows(), m.Layout.Cols, m.Layout.Rows)
	}
	img := Draw(g, m.Layout.Levels[z], cells, m.POIs, m.Presence)
	var buf bytes.Buffer
	if err := r.enc.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("mapview: encode: %w", err)
	}
	b := bytes.Clone(buf.Bytes())
	r.pngs.put(key, b, int64(len(b)+len(key)))
	return b, nil
}

// grid returns the map's grid from the cache, or loads it once however
// many callers ask at the same time.
func (r *Renderer) grid(ctx context.Context, m *Map) (*engine.Grid, error) {
	key := m.WorldID + "/" + strconv.FormatInt(m.Version, 10)
	if g, ok := r.grids.get(key); ok {
		return g, nil
	}
	r.mu.Lock()
	// Again under the lock: a load that ended since is in the cache
	// (it is put there before its flight is removed).
	if g, ok := r.grids.get(key); ok {
		r.mu.Unlock()
		return g, nil
	}
	if f, ok := r.loading[key]; ok {
		r.mu.Unlock()
		select {
		case <-f.done:
			return f.g, f.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := &flight{done: make(chan struct{})}
	r.loading[key] = f
	r.mu.Unlock()

	select {
	case r.loads <- struct{}{}:
		f.g, f.err = m.Grid(ctx)
		<-r.loads
	case <-ctx.Done():
		f.err = ctx.Err()
	}
	if f.err == nil {
		size := int64(64)
		if !f.g.Blank() {
			size += 2 * int64(f.g.Cols()) * int64(f.g.Rows())
		}
		r.grids.put(key, f.g, size)
	}
	r.mu.Lock()
	delete(r.loading, key)
	r.mu.Unlock()
	close(f.done)
	return f.g, f.err
}

// Stats says what the caches hold: the encoded pictures' bytes and
// count, and the parsed grids' bytes and count.
func (r *Renderer) Stats() (pngBytes int64, pngs int, gridBytes int64, grids int) {
	pngBytes, pngs = r.pngs.stats()
	gridBytes, grids = r.grids.stats()
	return pngBytes, pngs, gridBytes, grids
}

// Draw draws the cells of g in the rectangle cells at level lv, with the
// POIs and presence that fall in it.
func Draw(g *engine.Grid, lv Level, cells image.Rectangle, pois []wf.POI, presence []wf.Presence) *image.Paletted {
	if lv.Step > 1 {
		return engine.RenderSampled(g, cells.Min.X, cells.Min.Y, cells.Dx(), cells.Dy(), lv.Step, pois, presence)
	}
	in := func(x, y int) bool { return image.Pt(x, y).In(cells) }
	var ps []wf.POI
	for _, p := range pois {
		if in(p.X, p.Y) {
			p.X, p.Y = p.X-cells.Min.X, p.Y-cells.Min.Y
			ps = append(ps, p)
		}
	}
	var pr []wf.Presence
	for _, p := range presence {
		if in(p.X, p.Y) {
			p.X, p.Y = p.X-cells.Min.X, p.Y-cells.Min.Y
			pr = append(pr, p)
		}
	}
	win := g
	if cells != image.Rect(0, 0, g.Cols(), g.Rows()) {
		win = g.Window(cells.Min.X, cells.Min.Y, cells.Dx(), cells.Dy())
	}
	return engine.RenderImage(win, ps, pr, engine.RenderOptions{CellPx: lv.CellPx})
}

// bufferPool reuses the PNG encoder's buffers.
type bufferPool struct{ p sync.Pool }

func (b *bufferPool) Get() *png.EncoderBuffer {
	if v, ok := b.p.Get().(*png.EncoderBuffer); ok {
		return v
	}
	return nil
}

func (b *bufferPool) Put(e *png.EncoderBuffer) { b.p.Put(e) }

// lru is a cache of values by key within a byte budget, least recently
// used out first. A value larger than the budget is not kept.
type lru[V any] struct {
	mu     sync.Mutex
	budget int64
	used   int64
	order  *list.List // front: most recent; elements hold *entry[V]
	byKey  map[string]*list.Element
}

type entry[V any] struct {
	key  string
	val  V
	size int64
}

func newLRU[V any](budget int64) *lru[V] {
	return &lru[V]{budget: budget, order: list.New(), byKey: map[string]*list.Element{}}
}

func (c *lru[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*entry[V]).val, true
	}
	var zero V
	return zero, false
}

func (c *lru[V]) put(key string, v V, size int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if size > c.budget {
		return
	}
	if e, ok := c.byKey[key]; ok {
		c.used -= e.Value.(*entry[V]).size
		c.order.Remove(e)
		delete(c.byKey, key)
	}
	for c.used+size > c.budget {
		last := c.order.Back()
		old := last.Value.(*entry[V])
		c.order.Remove(last)
		delete(c.byKey, old.key)
		c.used -= old.size
	}
	c.byKey[key] = c.order.PushFront(&entry[V]{key: key, val: v, size: size})
	c.used += size
}

// stats returns the bytes used and the number of entries.
func (c *lru[V]) stats() (used int64, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used, len(c.byKey)
}
