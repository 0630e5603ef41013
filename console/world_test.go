package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/engine"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// gridWorld stores a world of the owner's with a cols × rows grid of
// bands of terrain, and returns it.
func gridWorld(t testing.TB, s *testserver.Server, name string, cols, rows int) *wf.World {
	t.Helper()
	g := engine.NewGrid(cols, rows)
	g.Fill(engine.Grass, 4)
	for y := range rows {
		for x := 0; x < cols; x++ {
			if (x/64+y/64)%3 == 1 {
				g.Set(x, y, engine.DeepWater, 1)
			}
		}
	}
	doc, err := engine.SetGrid(json.RawMessage(`{"name":"x"}`), g)
	if err != nil {
		t.Fatal(err)
	}
	w := &wf.World{OwnerID: s.Owner.ID, Name: name, Cols: cols, Rows: rows, JSON: doc}
	if err := s.DB.CreateWorld(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	return w
}

func decodeSize(t *testing.T, body string) (int, int) {
	t.Helper()
	img, err := png.Decode(strings.NewReader(body))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	return img.Bounds().Dx(), img.Bounds().Dy()
}

func TestWorldPageOwner(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := startConsole(t, db)
		ctx := context.Background()
		if err := db.SetPresence(ctx, &wf.Presence{WorldID: s.World.ID, UserID: s.Player.ID, X: 5, Y: 6}); err != nil {
			t.Fatal(err)
		}
		// A lore entity with an integrity issue.
		if err := db.UpsertLore(ctx, &wf.LoreEntity{WorldID: s.World.ID, Collection: "deities", ID: "zeus", Name: "Zeus",
			JSON: json.RawMessage(`{"id":"zeus","name":"Zeus","pantheon":"nowhere"}`)}); err != nil {
			t.Fatal(err)
		}
		b := newBrowser(t, s.URL)
		b.signIn(s.LoginLink(t, s.Owner))
		base := "/w/" + s.World.ID
		p := b.get(base)
		if p.status != http.StatusOK {
			t.Fatalf("world page: %d\n%s", p.status, p.body)
		}
		for _, want := range []string{
			"<h1>Testworld</h1>", "16 × 12 cells", `src="` + base + `/map.png"`, `id="m-` + s.GM.ID + `"`, `id="m-` + s.Player.ID + `"`,
			`action="` + base + `/members"`, `action="` + base + `/members/` + s.Player.ID + `/remove"`, "Add member",
			`href="` + base + `/wiki/` + s.Page.ID + `"`, "The Wardens", "Aldmere", `id="lore-factions"`, "Player at (5, 6)",
			"1 issue:", "invalid_entity", "deities/zeus", `unknown field &#34;pantheon&#34;`,
		} {
			if !strings.Contains(p.body, want) {
				t.Errorf("world page lacks %q", want)
			}
		}
		if got := strings.Count(p.body, "<h1"); got != 1 {
			t.Errorf("%d h1 elements", got)
		}

		// The overview, cached privately and revalidated by its ETag.
		img := b.get(base + "/map.png")
		if img.status != http.StatusOK || img.header.Get("Content-Type") != "image/png" || img.header.Get("Cache-Control") != "private, no-cache" {
			t.Fatalf("map.png: %d %v", img.status, img.header)
		}
		if w, h := decodeSize(t, img.body); w < 16 || w > 1024 || h > 1024 {
			t.Errorf("overview %d×%d", w, h)
		}
		etag := img.header.Get("ETag")
		req, _ := http.NewRequest("GET", s.URL+base+"/map.png", nil)
		req.Header.Set("If-None-Match", etag)
		resp, err := b.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotModified {
			t.Errorf("If-None-Match: %d, want 304", resp.StatusCode)
		}
		// Moving the party changes the picture, and so its ETag.
		if err := db.SetPresence(ctx, &wf.Presence{WorldID: s.World.ID, UserID: s.Player.ID, X: 1, Y: 1}); err != nil {
			t.Fatal(err)
		}
		if again := b.get(base + "/map.png"); again.header.Get("ETag") == etag || again.body == img.body {
			t.Error("the map did not change with the party's move")
		}

		// A wiki page: its body as text, and its history.
		wp := b.get(base + "/wiki/" + s.Page.ID)
		if wp.status != http.StatusOK {
			t.Fatalf("wiki page: %d\n%s", wp.status, wp.body)
		}
		for _, want := range []string{"<h1>The Wardens</h1>", "faction", "party", `<pre class="body" id="wiki-body">A faction of keepers.</pre>`, `id="rev-1"`} {
			if !strings.Contains(wp.body, want) {
				t.Errorf("wiki page lacks %q", want)
			}
		}
	})
}

func TestWorldPageBadInput(t *testing.T) {
	db := dbtest.Open(t)
	s := startConsole(t, db)
	b := newBrowser(t, s.URL)
	b.signIn(s.LoginLink(t, s.Owner))
	base := "/w/" + s.World.ID
	other := gridWorld(t, s, "Other", 10, 10)
	otherPage := &wf.WikiPage{WorldID: other.ID, Title: "Elsewhere", Body: "b", Kind: wf.WikiKindLore, Audience: wf.AudienceGM}
	if err := db.CreateWikiPage(context.Background(), otherPage, s.Owner.ID); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path   string
		status int
	}{
		{base + "/map.png?z=abc", http.StatusBadRequest},
		{base + "/map.png?z=0&x=1&y=0", http.StatusBadRequest},
		{base + "/map.png?z=99", http.StatusBadRequest},
		{base + "/map.png?z=-1", http.StatusBadRequest},
		{base + "/map.png?z=0&x=&y=zz", http.StatusBadRequest},
		{base + "?z=7", http.StatusBadRequest},
		{base + "?z=1&x=1", http.StatusBadRequest},
		{"/w/world_missing", http.StatusNotFound},
		{"/w/world_missing/map.png", http.StatusNotFound},
		{base + "/wiki/page_missing", http.StatusNotFound},
		{base + "/wiki/" + otherPage.ID, http.StatusNotFound}, // a page of another world
		{base + "/map.png?z=0", http.StatusOK},
	} {
		p := b.get(c.path)
		if p.status != c.status {
			t.Errorf("GET %s: %d, want %d\n%s", c.path, p.status, c.status, p.body)
		}
		if c.status == http.StatusBadRequest && !strings.Contains(p.body, `<p class="message">Map `) {
			t.Errorf("GET %s: the message does not say what was wrong:\n%s", c.path, p.body)
		}
	}
}

// TestWorldPageZoom walks the zoom links of a world too large to be
// readable whole: areas and links lead to tiles, and every tile is a
// PNG of at most 512 pixels a side.
func TestWorldPageZoom(t *testing.T) {
	db := dbtest.Open(t)
	s := startConsole(t, db)
	w := gridWorld(t, s, "Wide", 1500, 300)
	b := newBrowser(t, s.URL)
	b.signIn(s.LoginLink(t, s.Owner))
	base := "/w/" + w.ID
	area := regexp.MustCompile(`<area shape="rect" coords="[0-9,]+" href="([^"]+)"`)
	zoomIn := regexp.MustCompile(`<a href="([^"]+)" rel="nofollow" data-key="\+">Zoom in</a>`)
	src := regexp.MustCompile(`<img class="map" id="map-img" src="([^"]+)" width="(\d+)" height="(\d+)"`)
	p := b.get(base)
	if len(area.FindAllString(p.body, -1)) < 2 {
		t.Fatalf("the overview has no zoom areas:\n%s", p.body)
	}
	levels := 0
	for {
		m := src.FindStringSubmatch(p.body)
		if m == nil {
			t.Fatalf("no map picture:\n%s", p.body)
		}
		img := b.get(strings.ReplaceAll(m[1], "&amp;", "&"))
		if img.status != http.StatusOK {
			t.Fatalf("%s: %d", m[1], img.status)
		}
		gw, gh := decodeSize(t, img.body)
		if fmt.Sprint(gw) != m[2] || fmt.Sprint(gh) != m[3] {
			t.Errorf("%s is %d×%d, the page says %s×%s", m[1], gw, gh, m[2], m[3])
		}
		if levels > 0 && (gw > 512 || gh > 512) {
			t.Errorf("tile %s is %d×%d", m[1], gw, gh)
		}
		in := zoomIn.FindStringSubmatch(p.body)
		if in == nil {
			break
		}
		levels++
		next := strings.ReplaceAll(in[1], "&amp;", "&")
		if p = b.get(next); p.status != http.StatusOK {
			t.Fatalf("%s: %d", next, p.status)
		}
		for _, want := range []string{"Zoom out", "Whole world"} {
			if !strings.Contains(p.body, want) {
				t.Errorf("%s lacks %q", next, want)
			}
		}
	}
	if levels < 3 {
		t.Errorf("only %d zoom levels below the overview", levels)
	}
}

// TestWorldPageWho: a GM sees the page without the owner's forms; a
// player, an observer, a stranger and the signed-out get nothing of the
// world.
func TestWorldPageWho(t *testing.T) {
	db := dbtest.Open(t)
	s := startConsole(t, db)
	base := "/w/" + s.World.ID
	gm := newBrowser(t, s.URL)
	gm.signIn(s.LoginLink(t, s.GM))
	p := gm.get(base)
	if p.status != http.StatusOK || !strings.Contains(p.body, "<h1>Testworld</h1>") || !strings.Contains(p.body, "You are a GM") {
		t.Fatalf("GM: %d\n%s", p.status, p.body)
	}
	for _, owners := range []string{"Add member", "/remove", `name="role"`} {
		if strings.Contains(p.body, owners) {
			t.Errorf("the GM's page has the owner's %q", owners)
		}
	}
	if img := gm.get(base + "/map.png"); img.status != http.StatusOK {
		t.Errorf("GM map: %d", img.status)
	}
	// The GM's forms are refused as for a missing world.
	before := s.Fingerprint(t)
	for _, post := range []struct {
		path string
		form url.Values
	}{
		{base + "/members", url.Values{"user": {s.Stranger.ID}, "role": {"gm"}}},
		{base + "/members/" + s.Player.ID + "/remove", nil},
	} {
		if p := gm.post("/", post.path, post.form); p.status != http.StatusNotFound {
			t.Errorf("GM POST %s: %d, want 404", post.path, p.status)
		}
	}
	if changed := testserver.Changed(before, s.Fingerprint(t)); len(changed) != 0 {
		t.Errorf("the GM's forms changed %v", changed)
	}

	observer := &wf.User{Name: "Observer"}
	if err := db.CreateUser(context.Background(), observer); err != nil {
		t.Fatal(err)
	}
	if err := db.AddWorldMember(context.Background(), s.World.ID, observer.ID, wf.RoleObserver); err != nil {
		t.Fatal(err)
	}
	for _, u := range []*wf.User{s.Player, observer, s.Stranger} {
		b := newBrowser(t, s.URL)
		b.signIn(s.LoginLink(t, u))
		b.get("/") // shows the sign-in's flash
		missing := b.get("/w/world_missing")
		for _, path := range []string{base, base + "/map.png", base + "/map.png?z=0&x=0&y=0", base + "/wiki/" + s.Page.ID} {
			p := b.get(path)
			if p.status != http.StatusNotFound {
				t.Errorf("%s GET %s: %d, want 404", u.Name, path, p.status)
			}
			if path == base && p.body != missing.body {
				t.Errorf("%s: the world's 404 differs from a missing world's", u.Name)
			}
			for _, secret := range []string{"Testworld", "The Wardens", "Aldmere"} {
				if strings.Contains(p.body, secret) {
					t.Errorf("%s GET %s shows %q", u.Name, path, secret)
				}
			}
		}
	}
	anon := newBrowser(t, s.URL)
	if p := anon.get(base + "/map.png"); p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/signin") {
		t.Errorf("signed out map.png: %d %s", p.status, p.header.Get("Location"))
	}
}

func TestWorldMemberForms(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := startConsole(t, db)
		ctx := context.Background()
		for _, name := range []string{"Twin", "Twin", "Newcomer"} {
			if err := db.CreateUser(ctx, &wf.User{Name: name}); err != nil {
				t.Fatal(err)
			}
		}
		b := newBrowser(t, s.URL)
		b.signIn(s.LoginLink(t, s.Owner))
		base := "/w/" + s.World.ID
		members := func() string {
			list, err := db.ListWorldMembers(ctx, s.World.ID)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, m := range list {
				out = append(out, m.Name+":"+m.Role)
			}
			return strings.Join(out, ",")
		}
		start := members()

		// Bad input: back to the page with the reason, nothing changed.
		for _, c := range []struct {
			form url.Values
			want string
		}{
			{url.Values{"user": {""}, "role": {"gm"}}, "Name the user to add, by id or name."},
			{url.Values{"user": {"Newcomer"}, "role": {"owner"}}, "Role must be gm, player or observer, got &#34;owner&#34;."},
			{url.Values{"user": {"Newcomer"}}, "Role must be gm, player or observer"},
			{url.Values{"user": {"Nobody at all"}, "role": {"gm"}}, "No user has the id or name &#34;Nobody at all&#34;."},
			{url.Values{"user": {"Twin"}, "role": {"gm"}}, "2 users are named &#34;Twin&#34;: give the user&#39;s id instead."},
			{url.Values{"user": {"Owner"}, "role": {"gm"}}, "You own this world: the owner cannot also be a member."},
			{url.Values{"user": {"<script>alert(1)</script>"}, "role": {"gm"}}, "&lt;script&gt;alert(1)&lt;/script&gt;"},
		} {
			c.form.Set("csrf", csrfOf(t, b.get("/").body))
			before := s.Fingerprint(t)
			p := b.do("POST", base+"/members", c.form)
			if p.status != http.StatusSeeOther || p.header.Get("Location") != base+"#members" {
				t.Errorf("%v: %d %s", c.form, p.status, p.header.Get("Location"))
				continue
			}
			if changed := testserver.Changed(before, s.Fingerprint(t)); len(changed) != 0 {
				t.Errorf("%v changed %v", c.form, changed)
			}
			page := b.get(base)
			if !strings.Contains(page.body, `class="flash error" role="alert">`) || !strings.Contains(page.body, c.want) {
				t.Errorf("%v: the page does not say %q", c.form, c.want)
			}
		}
		if members() != start {
			t.Fatalf("refused forms changed members: %s", members())
		}

		// Forged or missing CSRF: 403, nothing changed.
		before := s.Fingerprint(t)
		for _, token := range []string{"", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"} {
			form := url.Values{"user": {"Newcomer"}, "role": {"gm"}}
			if token != "" {
				form.Set("csrf", token)
			}
			if p := b.do("POST", base+"/members", form); p.status != http.StatusForbidden {
				t.Errorf("add with token %q: %d", token, p.status)
			}
			if p := b.do("POST", base+"/members/"+s.Player.ID+"/remove", url.Values{"csrf": {token}}); p.status != http.StatusForbidden {
				t.Errorf("remove with token %q: %d", token, p.status)
			}
		}
		if changed := testserver.Changed(before, s.Fingerprint(t)); len(changed) != 0 {
			t.Errorf("forged forms changed %v", changed)
		}

		// Add by name, then remove.
		p := b.post(base, base+"/members", url.Values{"user": {"Newcomer"}, "role": {"observer"}})
		if p.status != http.StatusSeeOther {
			t.Fatalf("add: %d\n%s", p.status, p.body)
		}
		page := b.get(base)
		if !strings.Contains(page.body, "Newcomer is now an observer of this world.") {
			t.Errorf("no flash after adding:\n%s", page.body)
		}
		list, _ := db.ListWorldMembers(ctx, s.World.ID)
		var added string
		for _, m := range list {
			if m.Name == "Newcomer" && m.Role == wf.RoleObserver {
				added = m.UserID
			}
		}
		if added == "" || !strings.Contains(page.body, `id="m-`+added+`"`) {
			t.Fatalf("Newcomer not listed: %+v", list)
		}
		rows, err := db.ListAudit(ctx, wf.AuditFilter{ActorID: s.Owner.ID, Route: "console POST /w/{world}/members"})
		if err != nil || len(rows) != 1 || rows[0].TargetType != "world_member" || rows[0].TargetID != added {
			t.Errorf("add audit rows %+v, %v", rows, err)
		}
		p = b.post(base, base+"/members/"+added+"/remove", nil)
		if p.status != http.StatusSeeOther || !strings.Contains(b.get(base).body, "Member removed.") {
			t.Fatalf("remove: %d", p.status)
		}
		if members() != start {
			t.Errorf("members after add and remove: %s, want %s", members(), start)
		}
		// Removing again: a clear message, nothing changed.
		token := csrfOf(t, b.get("/").body)
		before = s.Fingerprint(t)
		p = b.do("POST", base+"/members/"+added+"/remove", url.Values{"csrf": {token}})
		if changed := testserver.Changed(before, s.Fingerprint(t)); len(changed) != 0 {
			t.Errorf("removing a non-member changed %v", changed)
		}
		if p.status != http.StatusSeeOther || !strings.Contains(b.get(base).body, "That user is not a member of this world.") {
			t.Errorf("removing a non-member: %d", p.status)
		}
	})
}

// TestWorldPageLists pages through the wiki list, and shows what a
// session signed in with a limited API key cannot read or change.
func TestWorldPageLists(t *testing.T) {
	db := dbtest.Open(t)
	s := startConsole(t, db)
	ctx := context.Background()
	for i := range 30 {
		p := &wf.WikiPage{WorldID: s.World.ID, Title: fmt.Sprintf("Page %02d", i), Body: "b", Kind: wf.WikiKindLore, Audience: wf.AudienceGM}
		if err := db.CreateWikiPage(ctx, p, s.Owner.ID); err != nil {
			t.Fatal(err)
		}
	}
	b := newBrowser(t, s.URL)
	b.signIn(s.LoginLink(t, s.Owner))
	base := "/w/" + s.World.ID
	link := regexp.MustCompile(`<li id="wp-[^"]+"><a href="[^"]+">`)
	next := regexp.MustCompile(`<a rel="next" href="([^"]+)">Next page</a>`)
	p := b.get(base)
	seen := len(link.FindAllString(p.body, -1))
	m := next.FindStringSubmatch(p.body)
	if seen != 25 || m == nil {
		t.Fatalf("first page: %d pages, next link %v", seen, m)
	}
	p = b.get(strings.ReplaceAll(m[1], "&amp;", "&"))
	if n := len(link.FindAllString(p.body, -1)); p.status != http.StatusOK || n != 6 || next.MatchString(p.body) {
		t.Errorf("second page: %d, %d pages", p.status, n)
	}
	if p := b.get(base + "?wiki=not-a-cursor"); p.status != http.StatusOK || !strings.Contains(p.body, "Cursor: not a next_cursor") {
		t.Errorf("bad wiki cursor: %d", p.status)
	}

	// A session of a key with world:read only.
	key := s.Key(t, s.Owner, wf.ScopeWorldRead)
	kb := newBrowser(t, s.URL)
	if p := kb.post("/signin", "/signin", url.Values{"credential": {key}}); p.status != http.StatusSeeOther {
		t.Fatalf("sign in with key: %d", p.status)
	}
	p = kb.get(base)
	for _, want := range []string{"<h1>Testworld</h1>", "it lacks wiki:read", "it lacks atlas:read", `id="lore-factions"`, "Your session cannot change members (it lacks world:write)."} {
		if !strings.Contains(p.body, want) {
			t.Errorf("limited session's page lacks %q", want)
		}
	}
	if strings.Contains(p.body, "Add member") || strings.Contains(p.body, "/remove") {
		t.Error("a session without world:write is offered the member forms")
	}
}
