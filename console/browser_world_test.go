package console_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/app"
	"github.com/worldforge-go/worldforge/internal/browsertest"
	"github.com/worldforge-go/worldforge/internal/dbtest"
)

// TestBrowserWorldPage opens a world page in Chromium: the map loads and
// zooms, the owner adds a member by name and removes them, a world name
// and a wiki body made of script show as text, and a stranger sees
// nothing of the world.
func TestBrowserWorldPage(t *testing.T) {
	b := browsertest.New(t)
	db := dbtest.Open(t)
	s := startConsole(t, db)
	ctx := context.Background()
	owner := app.Request{Actor: &wf.Actor{UserID: s.Owner.ID, Kind: wf.CredentialSession, Scopes: []string{wf.ScopeAll}}, Via: app.Via{Tool: wf.ToolCreateWorld}}
	seed := int64(3)
	res, err := app.New(db).CreateWorld(ctx, owner, &wf.CreateWorldArgs{Name: xss, Template: "starter-archipelago", Size: "large", Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.AddWorldMember(ctx, res.ID, s.Player.ID, wf.RolePlayer); err != nil {
		t.Fatal(err)
	}
	if err := db.SetPresence(ctx, &wf.Presence{WorldID: res.ID, UserID: s.Player.ID, X: 60, Y: 40}); err != nil {
		t.Fatal(err)
	}
	page := &wf.WikiPage{WorldID: res.ID, Title: "Notes " + xss, Body: "First line\n" + xss, Kind: wf.WikiKindLore, Audience: wf.AudienceGM}
	if err := db.CreateWikiPage(ctx, page, s.Owner.ID); err != nil {
		t.Fatal(err)
	}
	base := s.URL + "/w/" + res.ID

	b.SignIn(s.LoginLink(t, s.Owner))
	b.Do(chromedp.Navigate(base), chromedp.WaitVisible(chromedp.CSS("#map-img")))
	if h := b.Text("h1"); h != xss {
		t.Errorf("h1 %q, want the name as text", h)
	}
	loaded := `new Promise(r => { const i = document.getElementById("map-img"); if (i.complete) r(i.naturalWidth); else i.onload = () => r(i.naturalWidth); })`
	if w := browsertest.Run(b, chromedp.Evaluate[int](loaded, chromedp.EvalAwaitPromise)); w <= 0 {
		t.Fatalf("the map did not load (naturalWidth %d)", w)
	}

	// Add a member by name, then remove them.
	b.Do(chromedp.SetValue(chromedp.CSS("#member-user"), s.Stranger.Name),
		chromedp.SetValue(chromedp.CSS("#member-role"), "player"),
		chromedp.Click(chromedp.CSS(".member-form button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("#m-"+s.Stranger.ID)))
	if f := b.Text("#flash"); f != "Stranger is now a player of this world." {
		t.Errorf("flash after adding: %q", f)
	}
	b.Shot("world")
	b.Do(chromedp.Click(chromedp.CSS("#m-"+s.Stranger.ID+" button[type=submit]")),
		chromedp.WaitNotPresent(chromedp.CSS("#m-"+s.Stranger.ID)))
	if f := b.Text("#flash"); f != "Member removed." {
		t.Errorf("flash after removing: %q", f)
	}

	// Zoom: a part of the map leads to a tile, which loads too.
	// Click the picture's centre (in the viewport), as a person would.
	b.Do(chromedp.Evaluate[chromedp.Void](`document.getElementById("map-img").scrollIntoView({block: "center"})`))
	at := browsertest.Run(b, chromedp.Evaluate[[]float64](`(() => { const r = document.getElementById("map-img").getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()`))
	b.Do(chromedp.MouseClickXY(at[0], at[1]), chromedp.WaitVisible(chromedp.CSS(`.map-nav a[data-key="-"]`)))
	if loc := b.Location(); !strings.Contains(loc, "z=1") {
		t.Errorf("after a click on the map: %s", loc)
	}
	if w := browsertest.Run(b, chromedp.Evaluate[int](loaded, chromedp.EvalAwaitPromise)); w <= 0 || w > 512 {
		t.Errorf("tile naturalWidth %d", w)
	}
	b.Shot("world-zoom")

	// The wiki page: title and body as text.
	b.Do(chromedp.Navigate(base+"/wiki/"+page.ID), chromedp.WaitVisible(chromedp.CSS("#wiki-body")))
	if body := b.Text("#wiki-body"); body != "First line\n"+xss {
		t.Errorf("wiki body %q", body)
	}
	b.Shot("wiki")
	if d := b.Dialogs(); len(d) != 0 {
		t.Errorf("script in user text ran: %v", d)
	}

	// A stranger's link: nothing of the world.
	b.SignIn(s.LoginLink(t, s.Stranger))
	for _, path := range []string{base, base + "/wiki/" + page.ID} {
		b.Do(chromedp.Navigate(path), chromedp.WaitVisible(chromedp.CSS("h1")))
		if h := b.Text("h1"); h != "Not found" {
			t.Errorf("stranger at %s: h1 %q", path, h)
		}
		if text := b.Text("body"); strings.Contains(text, "First line") || strings.Contains(text, "alert(1)") {
			t.Errorf("stranger at %s sees the world:\n%s", path, text)
		}
	}
}
