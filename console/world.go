package console

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/app"
	"github.com/worldforge-go/worldforge/console/mapview"
)

// The world page: the map (an overview, and tiles to zoom into, from
// package mapview), the members and their roles (the owner adds and
// removes them), the wiki pages, the atlas tree and the lore collections
// with their integrity issues; and a wiki page's own page. The world's
// owner and its GMs see it; anyone else gets the not-found page a
// missing world gets.

func init() { routeSets = append(routeSets, worldRoutes) }

// Page sizes of the world page's lists.
const (
	wikiPageSize  = 25
	atlasPageSize = 500
	historySize   = 20
)

// worldPages serves the world routes with one map renderer (and its
// caches) per console.
type worldPages struct {
	c    *Console
	maps *mapview.Renderer
}

func worldRoutes(c *Console) []route {
	p := &worldPages{c: c, maps: mapview.NewRenderer(mapview.Options{})}
	return []route{
		{pattern: "GET /w/{world}", h: p.world},
		{pattern: "GET /w/{world}/map.png", h: p.mapPNG},
		{pattern: "GET /w/{world}/wiki/{page}", h: p.wikiPage},
		{pattern: "POST /w/{world}/members", h: p.addMember},
		{pattern: "POST /w/{world}/members/{user}/remove", h: p.removeMember},
	}
}

// worldData is the world page's data.
type worldData struct {
	World   *wf.World
	Role    string
	IsOwner bool
	// CanManage: the owner, with a session that may change the world.
	CanManage bool
	Base      string // "/w/<id>"

	Map    *mapData
	NoMap  string // why there is no map
	POIs   int
	Party  []presenceRow
	Roles  []string
	People map[string]string // user id → name, for presence

	Members    []memberRow
	MembersErr string

	Wiki     []wf.WikiPageSummary
	WikiNext string // URL of the next page of wiki pages
	WikiErr  string

	Atlas     []*atlasNode
	AtlasN    int
	AtlasNext string
	AtlasErr  string

	Lore    []loreCount
	LoreErr string
	Issues  []wf.LoreIssue
	IssuesN int
}

// mapData is the map view: the picture shown (the overview, or a tile)
// and the links around it.
type mapData struct {
	Src           string
	W, H          int
	Z, X, Y       int
	Depth         int
	Cols, Rows    int
	Cells         string // the cells the view shows, for people
	Areas         []mapArea
	Out, In       string
	N, S, E, West string
}

// mapArea is a clickable part of the picture: the tile it zooms into.
type mapArea struct {
	Coords string
	Href   string
	Label  string
}

type memberRow struct {
	wf.WorldMember
	RoleName string
}

type presenceRow struct {
	Name string
	X, Y int
}

type atlasNode struct {
	Node     wf.AtlasNode
	Children []*atlasNode
}

type loreCount struct {
	Collection string
	Count      int
}

// world serves GET /w/{world}.
func (p *worldPages) world(w http.ResponseWriter, r *http.Request, v *visit) {
	c, ctx, id := p.c, r.Context(), r.PathValue("world")
	m, err := c.app.WorldMap(ctx, v.req(), id)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	q := r.URL.Query()
	base := "/w/" + url.PathEscape(m.World.ID)
	d := &worldData{World: m.World, Role: m.Role, IsOwner: m.Role == wf.RoleOwner, Base: base,
		CanManage: m.Role == wf.RoleOwner && v.Can(wf.ScopeWorldWrite),
		POIs:      len(m.POIs), Roles: []string{wf.RoleGM, wf.RolePlayer, wf.RoleObserver}}

	if layout, err := mapview.NewLayout(m.World.Cols, m.World.Rows); err != nil {
		d.NoMap = "This world has no grid to draw."
	} else {
		z, x, y, err := tileParams(q)
		if err == nil {
			d.Map, err = mapView(base, layout, z, x, y)
		}
		if err != nil {
			c.fail(w, r, v, err)
			return
		}
	}

	names := map[string]string{}
	if v.User != nil {
		names[v.User.ID] = v.User.Name
	}
	members, err := c.app.ListWorldMembers(ctx, v.req(), id)
	if err != nil {
		d.MembersErr = sectionErr(err)
	}
	for _, mem := range members {
		names[mem.UserID] = mem.Name
		d.Members = append(d.Members, memberRow{WorldMember: mem, RoleName: roleName(mem.Role)})
	}
	for _, pr := range m.Presence {
		d.Party = append(d.Party, presenceRow{Name: cmp.Or(names[pr.UserID], pr.UserID), X: pr.X, Y: pr.Y})
	}

	wiki, err := c.app.ListWikiPages(ctx, v.req(), &wf.ListWikiPagesArgs{WorldID: id, Limit: wikiPageSize, Cursor: q.Get("wiki")})
	if err != nil {
		d.WikiErr = sectionErr(err)
	} else {
		d.Wiki = wiki.Pages
		if wiki.NextCursor != "" {
			d.WikiNext = urlSet(r.URL, "wiki", wiki.NextCursor) + "#wiki"
		}
	}

	atlas, err := c.app.ListAtlasPlaces(ctx, v.req(), &wf.ListAtlasPlacesArgs{WorldID: id, Limit: atlasPageSize, Cursor: q.Get("atlas")})
	if err != nil {
		d.AtlasErr = sectionErr(err)
	} else {
		d.Atlas, d.AtlasN = atlasTree(atlas.Places), len(atlas.Places)
		if atlas.NextCursor != "" {
			d.AtlasNext = urlSet(r.URL, "atlas", atlas.NextCursor) + "#atlas"
		}
	}

	lore, err := c.app.ListLore(ctx, v.req(), &wf.ListLoreArgs{WorldID: id, Limit: 1})
	if err != nil {
		d.LoreErr = sectionErr(err)
	} else if ov, ok := lore.(wf.LoreOverview); ok {
		for _, name := range wf.LoreCollections {
			d.Lore = append(d.Lore, loreCount{Collection: name, Count: ov.Counts[name]})
		}
		d.Issues, d.IssuesN = ov.Issues, ov.IssuesTotal
	}
	c.render(w, r, v, http.StatusOK, "world", m.World.Name, d)
}

// tileParams reads z, x and y from a query: all absent is the overview
// (0, 0, 0); otherwise z must be a whole number, and x and y too unless
// absent or empty (0).
func tileParams(q url.Values) (z, x, y int, err error) {
	if !q.Has("z") && !q.Has("x") && !q.Has("y") {
		return 0, 0, 0, nil
	}
	var out [3]int
	for i, k := range []string{"z", "x", "y"} {
		s := q.Get(k)
		if s == "" && k != "z" {
			continue // a level alone: its tile at the top left
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return 0, 0, 0, wf.BadRequest("map %s must be a whole number, got %q", k, clipText(s))
		}
		out[i] = n
	}
	return out[0], out[1], out[2], nil
}

// mapView is the map view of tile (x, y) of level z (0: the overview),
// with its zoom and pan links. Errors: bad_request for a tile outside
// the map.
func mapView(base string, l *mapview.Layout, z, x, y int) (*mapData, error) {
	w, h, err := l.TileSize(z, x, y)
	if err != nil {
		return nil, err
	}
	cells, _ := l.TileCells(z, x, y)
	tile := func(z, x, y int) string {
		if z == 0 {
			return base + "#map"
		}
		return fmt.Sprintf("%s?z=%d&x=%d&y=%d#map", base, z, x, y)
	}
	md := &mapData{W: w, H: h, Z: z, X: x, Y: y, Depth: l.Depth(), Cols: l.Cols, Rows: l.Rows,
		Src:   base + "/map.png",
		Cells: fmt.Sprintf("columns %d–%d, rows %d–%d", cells.Min.X, cells.Max.X-1, cells.Min.Y, cells.Max.Y-1)}
	if z > 0 {
		md.Src = fmt.Sprintf("%s/map.png?z=%d&x=%d&y=%d", base, z, x, y)
		cx, cy, _ := l.Centre(z, x, y)
		px, py, _ := l.TileOf(z-1, cx, cy)
		md.Out = tile(z-1, px, py)
		lv := l.Levels[z]
		if y > 0 {
			md.N = tile(z, x, y-1)
		}
		if y+1 < lv.TilesY {
			md.S = tile(z, x, y+1)
		}
		if x > 0 {
			md.West = tile(z, x-1, y)
		}
		if x+1 < lv.TilesX {
			md.E = tile(z, x+1, y)
		}
	}
	kids, _ := l.Children(z, x, y)
	for _, k := range kids {
		kc, _ := l.TileCells(z+1, k.X, k.Y)
		md.Areas = append(md.Areas, mapArea{
			Coords: fmt.Sprintf("%d,%d,%d,%d", k.Area.Min.X, k.Area.Min.Y, k.Area.Max.X, k.Area.Max.Y),
			Href:   tile(z+1, k.X, k.Y),
			Label:  fmt.Sprintf("Zoom into columns %d–%d, rows %d–%d", kc.Min.X, kc.Max.X-1, kc.Min.Y, kc.Max.Y-1),
		})
	}
	if z+1 < l.Depth() {
		cx, cy, _ := l.Centre(z, x, y)
		ix, iy, _ := l.TileOf(z+1, cx, cy)
		md.In = tile(z+1, ix, iy)
	}
	return md, nil
}

// atlasTree nests places under their parents (a place whose parent is
// not listed is a root), keeping the list's order.
func atlasTree(places []wf.AtlasNode) []*atlasNode {
	byID := make(map[string]*atlasNode, len(places))
	for _, n := range places {
		byID[n.ID] = &atlasNode{Node: n}
	}
	var roots []*atlasNode
	for _, n := range places {
		node := byID[n.ID]
		if parent, ok := byID[n.ParentID]; ok && n.ParentID != n.ID {
			parent.Children = append(parent.Children, node)
			continue
		}
		roots = append(roots, node)
	}
	return roots
}

// sectionErr is why a section of the world page is missing (a session
// whose API key lacks the section's scopes, say).
func sectionErr(err error) string {
	var e *wf.Error
	if errors.As(err, &e) && e.Code == wf.EMissingScopes && e.Detail != wf.UnresolvedOwner {
		return "Your session cannot read this (it lacks " + strings.ReplaceAll(e.Detail, ",", " or ") + ")."
	}
	return errorText(err)
}

// urlSet is u's path and query with key set to value.
func urlSet(u *url.URL, key, value string) string {
	q := u.Query()
	q.Set(key, value)
	return u.Path + "?" + q.Encode()
}

// clipText shortens user input quoted back in a message.
func clipText(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}

// mapPNG serves GET /w/{world}/map.png: the overview, or with z, x and y
// a tile, cached privately and revalidated by an ETag of the world's
// version and what is drawn over it.
func (p *worldPages) mapPNG(w http.ResponseWriter, r *http.Request, v *visit) {
	c, ctx := p.c, r.Context()
	m, err := c.app.WorldMap(ctx, v.req(), r.PathValue("world"))
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	z, x, y, err := tileParams(r.URL.Query())
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	layout, err := mapview.NewLayout(m.World.Cols, m.World.Rows)
	if err != nil {
		c.renderError(w, r, v, http.StatusNotFound, "No map", "This world has no grid to draw.")
		return
	}
	if _, err := layout.TileCells(z, x, y); err != nil {
		c.fail(w, r, v, err)
		return
	}
	mv := &mapview.Map{WorldID: m.World.ID, Version: m.World.Version, Layout: layout, POIs: m.POIs, Presence: m.Presence, Grid: m.Grid}
	etag := mv.ETag()
	h := w.Header()
	h.Set("Cache-Control", "private, no-cache")
	h.Set("ETag", etag)
	if match := r.Header.Get("If-None-Match"); match != "" && slices.Contains(splitTags(match), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	b, err := p.maps.PNG(ctx, mv, z, x, y)
	if err != nil {
		h.Del("ETag")
		h.Set("Cache-Control", "no-store")
		c.fail(w, r, v, err)
		return
	}
	h.Set("Content-Type", "image/png")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	if r.Method != http.MethodHead {
		w.Write(b)
	}
}

// splitTags splits an If-None-Match header into its entity tags.
func splitTags(s string) []string {
	var out []string
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		out = append(out, strings.TrimPrefix(t, "W/"))
	}
	return out
}

// wikiData is a wiki page's page.
type wikiData struct {
	World   *wf.World
	Base    string
	Page    *wf.WikiPage
	History []wf.WikiRevision
	HistErr string
}

// wikiPage serves GET /w/{world}/wiki/{page}.
func (p *worldPages) wikiPage(w http.ResponseWriter, r *http.Request, v *visit) {
	c, ctx, id := p.c, r.Context(), r.PathValue("world")
	m, err := c.app.WorldMap(ctx, v.req(), id)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	page, err := c.app.ReadWikiPage(ctx, v.req(), &wf.IDArgs{ID: r.PathValue("page")})
	if err == nil && page.WorldID != m.World.ID {
		err = wf.ErrNotFound
	}
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	d := &wikiData{World: m.World, Base: "/w/" + url.PathEscape(m.World.ID), Page: page}
	hist, err := c.app.WikiPageHistory(ctx, v.req(), &wf.WikiPageHistoryArgs{ID: page.ID, Limit: historySize})
	if err != nil {
		d.HistErr = sectionErr(err)
	} else {
		d.History = hist.Revisions
	}
	c.render(w, r, v, http.StatusOK, "wiki", page.Title, d)
}

// addMember serves POST /w/{world}/members (fields user, role).
func (p *worldPages) addMember(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("world")
	m, err := p.c.app.AddWorldMember(r.Context(), v.req(), id, app.MemberArgs{User: r.PostFormValue("user"), Role: r.PostFormValue("role")})
	if err != nil {
		p.formErr(w, r, v, id, err)
		return
	}
	p.c.redirect(w, r, "/w/"+url.PathEscape(id)+"#members", fmt.Sprintf("%s is now %s of this world.", m.Name, withArticle(roleName(m.Role))))
}

// removeMember serves POST /w/{world}/members/{user}/remove.
func (p *worldPages) removeMember(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("world")
	if err := p.c.app.RemoveWorldMember(r.Context(), v.req(), id, r.PathValue("user")); err != nil {
		p.formErr(w, r, v, id, err)
		return
	}
	p.c.redirect(w, r, "/w/"+url.PathEscape(id)+"#members", "Member removed.")
}

// formErr answers a refused member form: the not-found page for a world
// the caller may not change (as for a missing one) and the error page
// for a session that lacks scopes; otherwise back to the world page with
// the reason.
func (p *worldPages) formErr(w http.ResponseWriter, r *http.Request, v *visit, worldID string, err error) {
	var e *wf.Error
	if !errors.As(err, &e) || e.Code == wf.EMissingScopes || (e.Code == wf.ENotFound && e.Detail == "") {
		p.c.fail(w, r, v, err)
		return
	}
	p.c.setFlash(w, r, "error", memberErrText(e))
	http.Redirect(w, r, "/w/"+url.PathEscape(worldID)+"#members", http.StatusSeeOther)
}

// memberErrText is a refused member change as a sentence.
func memberErrText(e *wf.Error) string {
	if e.Code == wf.ENotFound {
		return upperFirst(e.Detail) + "."
	}
	return errorText(e)
}

// withArticle is a role name with its indefinite article.
func withArticle(role string) string {
	if role == wf.RoleObserver {
		return "an " + role
	}
	return "a " + role
}

func roleName(role string) string {
	switch role {
	case wf.RoleGM:
		return "GM"
	case wf.RoleOwner:
		return "owner"
	}
	return role
}
