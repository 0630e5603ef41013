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
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// TestBrowserTour walks the main pages as a world's owner would, after
// an agent (the GM's key "lore-keeper") has filed a few proposals over
// /mcp. Its screenshots are the ones in docs/console.md and the README:
//
//	WORLDFORGE_TEST_BROWSER=1 WORLDFORGE_SCREENSHOTS=$PWD/docs/console go test ./console -run TestBrowserTour
func TestBrowserTour(t *testing.T) {
	b := browsertest.New(t)
	s, world, edit := tourFixture(t)

	b.SignIn(s.LoginLink(t, s.Owner))
	if !strings.Contains(b.Text("table.list"), "The Amber Isles") {
		t.Fatal("the world is not listed")
	}
	b.Shot("worlds")

	b.Do(chromedp.Navigate(s.URL+"/w/"+world.ID), chromedp.WaitVisible(chromedp.CSS("img.map")))
	if h := b.Text("h1"); h != "The Amber Isles" {
		t.Errorf("world page h1 %q", h)
	}
	b.Shot("world")

	b.Do(chromedp.Navigate(s.URL+"/queue"), chromedp.WaitVisible(chromedp.CSS("table.list")))
	queue := b.Text("main")
	for _, want := range []string{"harbour-guilds", "lore-keeper", "Name the harbour master", "A lighthouse on the outer reef"} {
		if !strings.Contains(queue, want) {
			t.Errorf("queue lacks %q", want)
		}
	}
	b.Shot("queue")

	b.Do(chromedp.Navigate(s.URL+"/p/"+edit), chromedp.WaitVisible(chromedp.CSS("main h1")))
	if !strings.Contains(b.Text("main"), "Ysolde Varn") {
		t.Error("the diff does not show the new line")
	}
	b.Shot("proposal")

	b.Do(chromedp.Navigate(s.URL+"/keys"), chromedp.WaitVisible(chromedp.CSS("main h1")))
	b.Shot("keys")
	b.Do(chromedp.Navigate(s.URL+"/audit"), chromedp.WaitVisible(chromedp.CSS("main h1")))
	if !strings.Contains(b.Text("main"), "propose_wiki_edit") {
		t.Error("the audit log lacks the agent's filing")
	}
	b.Shot("audit")
	if d := b.Dialogs(); len(d) != 0 {
		t.Errorf("dialogs: %v", d)
	}
}

// tourFixture is a server whose owner has a generated world, "The Amber
// Isles", in which the GM's agent key "lore-keeper" filed four proposals
// over /mcp (two in the changeset harbour-guilds); it returns the world
// and the id of the wiki edit.
func tourFixture(t *testing.T) (*testserver.Server, wf.CreateWorldResult, string) {
	t.Helper()
	db := dbtest.Open(t)
	s := testserver.StartWith(t, db, testserver.Config{Console: true})
	ctx := context.Background()
	owner := app.Request{Actor: &wf.Actor{UserID: s.Owner.ID, Kind: wf.CredentialSession, Scopes: []string{wf.ScopeAll}}, Via: app.Via{Route: "test"}}
	world, err := app.New(db).CreateWorld(ctx, owner, &wf.CreateWorldArgs{Name: "The Amber Isles", Template: "starter-archipelago", Seed: new(int64(7)), Size: "medium"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.AddWorldMember(ctx, world.ID, s.GM.ID, wf.RoleGM); err != nil {
		t.Fatal(err)
	}
	pages, err := db.ListWikiPagesPage(ctx, world.ID, "", wf.PageQuery{Limit: 10})
	if err != nil || len(pages.Items) == 0 {
		t.Fatalf("wiki pages: %v", err)
	}
	page, err := db.FindWikiPageByID(ctx, pages.Items[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	secret, _, err := s.Auth.MintKey(ctx, s.GM.ID, "lore-keeper", []string{wf.ScopeAll})
	if err != nil {
		t.Fatal(err)
	}
	edit := overMCP(t, s, secret, wf.ToolProposeWikiEdit, map[string]any{"page_id": page.ID,
		"diff_summary": "Name the harbour master and the tide bells",
		"payload":      map[string]any{"body": page.Body + "\n\nThe harbour master, Ysolde Varn, rings the tide bells at dusk.\nNo ship leaves after the third bell."}})
	overMCP(t, s, secret, wf.ToolProposeLore, map[string]any{"world_id": world.ID, "changeset_id": "harbour-guilds",
		"diff_summary": "Two guilds that run the harbour",
		"operations": []map[string]any{
			{"op": "upsert", "collection": "factions", "entity": map[string]any{"id": "tide-wardens", "name": "Tide Wardens"}},
			{"op": "upsert", "collection": "factions", "entity": map[string]any{"id": "salt-syndicate", "name": "Salt Syndicate"}},
		}})
	overMCP(t, s, secret, wf.ToolProposeWikiPage, map[string]any{"world_id": world.ID, "changeset_id": "harbour-guilds",
		"diff_summary": "A page for the Tide Wardens",
		"payload":      map[string]any{"title": "The Tide Wardens", "body": "Keepers of the bells and the harbour chain.", "kind": "faction", "audience": "party"}})
	overMCP(t, s, secret, wf.ToolProposeAtlasPlace, map[string]any{"world_id": world.ID,
		"diff_summary": "A lighthouse on the outer reef",
		"payload":      map[string]any{"name": "Bellrock Light", "terrainType": "coast"}})

	return s, world, edit
}
