package console_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/browsertest"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// overMCP files a proposal with the tool over /mcp, as an agent does,
// and returns its id.
func overMCP(t *testing.T, s *testserver.Server, key, tool string, args map[string]any) string {
	t.Helper()
	text, isErr := testserver.CallText(t, testserver.Connect(t, s.MCPURL(), key, ""), tool, args)
	if isErr {
		t.Fatalf("%s: %s", tool, text)
	}
	var res wf.ProposeResult
	if err := json.Unmarshal([]byte(text), &res); err != nil || res.ProposalID == "" {
		t.Fatalf("%s: %q (%v)", tool, text, err)
	}
	return res.ProposalID
}

// gmKey mints the GM's agent key.
func gmKey(t *testing.T, s *testserver.Server) string {
	t.Helper()
	secret, _, err := s.Auth.MintKey(context.Background(), s.GM.ID, "gm-agent", []string{wf.ScopeAll})
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// TestBrowserReviewCommit: an agent files a wiki page over /mcp; the
// owner signs in with a link, sees it in the queue (and a second one
// announced live), opens its diff and commits it, and the page exists.
// The proposer's summary and the body are script, shown as text.
func TestBrowserReviewCommit(t *testing.T) {
	b := browsertest.New(t)
	db := dbtest.Open(t)
	s := testserver.StartWith(t, db, testserver.Config{Console: true, LiveInterval: 50 * time.Millisecond})
	key := gmKey(t, s)
	// A changeset and another proposal, so that the queue has groups.
	overMCP(t, s, key, wf.ToolProposeLore, map[string]any{"world_id": s.World.ID, "diff_summary": "Add the Harbor Guild and its rival", "changeset_id": "harbor-district",
		"operations": []any{
			map[string]any{"op": "upsert", "collection": "factions", "entity": map[string]any{"id": "harbor-guild", "name": "Harbor Guild", "kind": "guild", "rivals": []string{"wardens"}}},
			map[string]any{"op": "upsert", "collection": "factions", "entity": map[string]any{"id": "wardens", "name": "Wardens", "leader": "Mara Vell"}},
		}})
	overMCP(t, s, key, wf.ToolProposeWikiEdit, map[string]any{"page_id": s.Page.ID, "diff_summary": "The Wardens now guard the harbor", "changeset_id": "harbor-district",
		"payload": map[string]any{"body": "A faction of keepers.\nThey guard the harbor since the flood.\n"}})
	overMCP(t, s, key, wf.ToolProposeQuest, map[string]any{"id": s.Quest.ID, "diff_summary": "Quest moves to step 2",
		"payload": map[string]any{"name": "Quest", "json": map[string]any{"step": 2, "goal": "Find the keeper"}}})
	id := overMCP(t, s, key, wf.ToolProposeWikiPage, map[string]any{"world_id": s.World.ID, "diff_summary": xss,
		"payload": map[string]any{"title": "Lighthouse", "body": "A tall tower.\nIts keeper: " + xss + "\n", "kind": "place"}})
	b.SignIn(s.LoginLink(t, s.Owner))

	b.Do(chromedp.Navigate(s.URL+"/queue"), chromedp.WaitVisible(chromedp.CSS("#p-"+id)))
	row := b.Text("#p-" + id)
	for _, want := range []string{xss, "GM", "gm-agent", "New wiki page “Lighthouse”", "pending"} {
		if !strings.Contains(row, want) {
			t.Errorf("queue row %q lacks %q", row, want)
		}
	}
	// Another proposal arrives while the page is open: announced.
	overMCP(t, s, key, wf.ToolProposeAtlasPlace, map[string]any{"world_id": s.World.ID, "diff_summary": "add the cape",
		"payload": map[string]any{"name": "Cape", "parentId": s.Node.ID}})
	b.Do(chromedp.WaitVisible(chromedp.CSS("#live-notice")))
	if n := b.Text("#live-reload"); n != "1 new proposal — reload" {
		t.Errorf("live notice %q", n)
	}
	b.Shot("queue")

	b.Do(chromedp.Click(chromedp.CSS("#p-"+id+" a.summary-link")), chromedp.WaitVisible(chromedp.CSS("#commit")))
	if h := b.Text("h1"); h != "New wiki page “Lighthouse”" {
		t.Errorf("h1 %q", h)
	}
	if d := b.Text("table.linediff"); !strings.Contains(d, "Its keeper: "+xss) || !strings.Contains(d, "A tall tower.") {
		t.Errorf("body diff %q", d)
	}
	if sum := b.Text("#diff-summary"); sum != xss {
		t.Errorf("summary %q", sum)
	}
	b.Shot("proposal")

	b.Do(chromedp.Click(chromedp.CSS("#commit")), chromedp.WaitVisible(chromedp.CSS("#flash")))
	if f := b.Text("#flash"); !strings.HasPrefix(f, "Committed: wiki_") {
		t.Errorf("flash %q", f)
	}
	if st := b.Text("#status"); st != "committed" {
		t.Errorf("status %q", st)
	}
	// The world's page lists the new wiki page.
	b.Do(chromedp.Click(chromedp.CSS("#result")), chromedp.WaitVisible(chromedp.CSS("h1")))
	if loc := b.Location(); loc != s.URL+"/w/"+s.World.ID {
		t.Errorf("result link led to %s", loc)
	}
	if m := b.Text("main"); !strings.Contains(m, "Lighthouse") {
		t.Errorf("the world page does not list the new page:\n%s", m)
	}
	pages, err := db.SearchWikiPages(context.Background(), wf.WikiSearch{WorldIDs: []string{s.World.ID}, Q: "Lighthouse"})
	if err != nil || len(pages) != 1 || pages[0].Title != "Lighthouse" {
		t.Errorf("the world's wiki: %+v, %v", pages, err)
	}
	if d := b.Dialogs(); len(d) != 0 {
		t.Errorf("script ran: %v", d)
	}
}

// TestBrowserReviewReject: the owner rejects a proposal with a reason,
// which the proposal's page then shows (as text).
func TestBrowserReviewReject(t *testing.T) {
	b := browsertest.New(t)
	db := dbtest.Open(t)
	s := startConsole(t, db)
	id := overMCP(t, s, gmKey(t, s), wf.ToolProposeWikiEdit, map[string]any{"page_id": s.Page.ID, "diff_summary": "rename the wardens",
		"payload": map[string]any{"title": "The Watchers", "body": "A faction of watchers.\n"}})
	b.SignIn(s.LoginLink(t, s.Owner))

	reason := "Not canon: the Wardens keep their name. " + xss
	b.Do(chromedp.Navigate(s.URL+"/p/"+id), chromedp.WaitVisible(chromedp.CSS("#reason-input")))
	if d := b.Text("table.linediff"); !strings.Contains(d, "A faction of keepers.") || !strings.Contains(d, "A faction of watchers.") {
		t.Errorf("body diff %q", d)
	}
	b.Shot("proposal-edit")
	b.Do(chromedp.SendKeys(chromedp.CSS("#reason-input"), reason),
		chromedp.Click(chromedp.CSS("#reject")),
		chromedp.WaitVisible(chromedp.CSS("#reason")))
	if f := b.Text("#flash"); f != "Rejected." {
		t.Errorf("flash %q", f)
	}
	if got := b.Text("#reason"); got != reason {
		t.Errorf("reason %q", got)
	}
	if st := b.Text("#status"); st != "rejected" {
		t.Errorf("status %q", st)
	}
	p, err := db.FindProposal(context.Background(), id)
	if err != nil || p.Status != wf.ProposalRejected || p.Reason != reason {
		t.Errorf("stored: %+v, %v", p, err)
	}
	if d := b.Dialogs(); len(d) != 0 {
		t.Errorf("script ran: %v", d)
	}
}

// TestBrowserChangesetConflict: a changeset one of whose proposals
// conflicts (its page changed since) is refused whole: the page names the
// proposal and why, and nothing is applied. A lore entity in it holds
// script, shown as text.
func TestBrowserChangesetConflict(t *testing.T) {
	b := browsertest.New(t)
	db := dbtest.Open(t)
	s := startConsole(t, db)
	key := gmKey(t, s)
	lore := overMCP(t, s, key, wf.ToolProposeLore, map[string]any{"world_id": s.World.ID, "diff_summary": "the keepers", "changeset_id": "harbor",
		"operations": []any{map[string]any{"op": "upsert", "collection": "factions", "entity": map[string]any{"id": "keepers", "name": "Keepers", "leader": xss}}}})
	stale := overMCP(t, s, key, wf.ToolProposeWikiEdit, map[string]any{"page_id": s.Page.ID, "diff_summary": "retell the wardens", "changeset_id": "harbor",
		"payload": map[string]any{"body": "Keepers of the light.\n"}})
	// The page changes outside the changeset.
	commitNow(t, s, overMCP(t, s, key, wf.ToolProposeWikiEdit, map[string]any{"page_id": s.Page.ID, "diff_summary": "outside",
		"payload": map[string]any{"body": "Someone else's words.\n"}}))
	b.SignIn(s.LoginLink(t, s.Owner))

	b.Do(chromedp.Navigate(s.URL+"/p/"+lore), chromedp.WaitVisible(chromedp.CSS("#commit-changeset")))
	if ops := b.Text("#op-0"); !strings.Contains(ops, xss) || !strings.Contains(ops, "schema: valid") {
		t.Errorf("lore operation %q", ops)
	}
	if w := b.Text("#cs-conflicts"); !strings.Contains(w, "1 of these would fail now") {
		t.Errorf("foreseen: %q", w)
	}
	b.Do(chromedp.Click(chromedp.CSS("#commit-changeset")), chromedp.WaitVisible(chromedp.CSS("#failure")))
	f := b.Text("#failure")
	for _, want := range []string{"nothing of it was applied", stale, "retell the wardens", "Version conflict"} {
		if !strings.Contains(f, want) {
			t.Errorf("failure %q lacks %q", f, want)
		}
	}
	b.Shot("changeset-conflict")
	for _, id := range []string{lore, stale} {
		if st := status(t, s, id); st != wf.ProposalPending {
			t.Errorf("%s is %s", id, st)
		}
	}
	if page, err := db.FindWikiPageByID(context.Background(), s.Page.ID); err != nil || page.Body != "Someone else's words.\n" {
		t.Errorf("page: %+v, %v", page, err)
	}
	if d := b.Dialogs(); len(d) != 0 {
		t.Errorf("script ran: %v", d)
	}
}
