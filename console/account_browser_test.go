package console_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/worldforge-go/worldforge/internal/browsertest"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// mcpStatus posts a raw JSON-RPC tools/list to the MCP endpoint with the
// key and returns the HTTP status.
func mcpStatus(t *testing.T, s *testserver.Server, key string) int {
	t.Helper()
	req, err := http.NewRequest("POST", s.MCPURL(), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestBrowserKeys creates an API key on the keys page in Chromium, reads
// its secret off the page, calls /mcp with it, revokes it on the page and
// sees the next call refused. The key's name is script, shown as text.
func TestBrowserKeys(t *testing.T) {
	b := browsertest.New(t)
	db := dbtest.Open(t)
	s := startConsole(t, db)
	b.SignIn(s.LoginLink(t, s.Owner))

	b.Do(chromedp.Navigate(s.URL+"/keys"), chromedp.WaitVisible(chromedp.CSS("#key-name")))
	b.Do(
		chromedp.SendKeys(chromedp.CSS("#key-name"), xss),
		chromedp.Click(chromedp.CSS(`input[name="scope"][value="world:read"]`)),
		chromedp.Click(chromedp.CSS(`input[name="scope"][value="wiki:read"]`)),
		chromedp.Click(chromedp.CSS(`form[action="/keys"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#new-key")),
	)
	secret := b.Text("#new-key")
	if !strings.HasPrefix(secret, "wk_") {
		t.Fatalf("new key %q", secret)
	}
	if h := b.Text("#newkey-h"); !strings.Contains(h, xss) {
		t.Errorf("new key heading %q", h)
	}
	if cfg := b.Text("#mcp-config"); !strings.Contains(cfg, `"Authorization": "Bearer `+secret+`"`) || !strings.Contains(cfg, s.MCPURL()) {
		t.Errorf("mcpServers snippet:\n%s", cfg)
	}
	// The copy buttons show once the script runs.
	if hidden := browsertest.Run(b, chromedp.AttributeValue(chromedp.CSS(`button[data-copy="new-key"]`), "hidden")); hidden.Exists {
		t.Errorf("the copy button is still hidden")
	}
	b.Shot("keys")

	// The key works over MCP.
	cs := testserver.Connect(t, s.MCPURL(), secret, "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools/list with the new key: %v", err)
	}
	if code := mcpStatus(t, s, secret); code == http.StatusUnauthorized {
		t.Fatalf("a raw call with the new key: %d", code)
	}

	// The list shows its use; revoke it there.
	b.Do(chromedp.Navigate(s.URL+"/keys"), chromedp.WaitVisible(chromedp.CSS(`tr[id^="k-"]`)))
	row := browsertest.Run(b, chromedp.AttributeValue(chromedp.CSS(`tr[id^="k-"]`), "id"))
	if used := b.Text("#" + row.Value + " .last-used"); !strings.HasSuffix(used, "UTC") {
		t.Errorf("last used %q after a call", used)
	}
	if strings.Contains(browsertest.Run(b, chromedp.OuterHTML(chromedp.CSS("main"))), secret) {
		t.Errorf("the secret shows again")
	}
	b.Do(
		chromedp.Click(chromedp.CSS("#"+row.Value+` button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#flash")),
	)
	if f := b.Text("#flash"); f != "Key revoked." {
		t.Errorf("flash %q", f)
	}
	if st := b.Text("#" + row.Value + " .badge"); !strings.HasPrefix(st, "revoked") {
		t.Errorf("status after revoking %q", st)
	}
	// The servers trust a verified key for up to their credential cache's
	// TTL (500 ms by default), so a revocation shows within 1 s: poll up
	// to 2 s.
	code := 0
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if code = mcpStatus(t, s, secret); code == http.StatusUnauthorized {
			break
		}
	}
	if code != http.StatusUnauthorized {
		t.Errorf("a call with the revoked key: %d, want 401", code)
	}
	if d := b.Dialogs(); len(d) != 0 {
		t.Errorf("script in a key name ran: %v", d)
	}
}

// TestBrowserAudit reads the audit log in Chromium after a console
// action, filters it and finds the action's row.
func TestBrowserAudit(t *testing.T) {
	b := browsertest.New(t)
	db := dbtest.Open(t)
	s := startConsole(t, db)
	b.SignIn(s.LoginLink(t, s.Owner))

	// Add a rule: an audited console action.
	b.Do(chromedp.Navigate(s.URL+"/rules"), chromedp.WaitVisible(chromedp.CSS("#rule-actor")),
		chromedp.SetValue(chromedp.CSS("#rule-world"), s.World.ID),
		chromedp.SendKeys(chromedp.CSS("#rule-actor"), s.GM.ID),
		chromedp.Click(chromedp.CSS(`input[name="kind"][value="wiki_page"]`)),
		chromedp.Click(chromedp.CSS(`form[action="/rules"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[id^="r-"]`)),
	)
	b.Shot("rules")

	b.Do(chromedp.Navigate(s.URL+"/audit"), chromedp.WaitVisible(chromedp.CSS("#f-outcome")),
		chromedp.SetValue(chromedp.CSS("#f-world"), s.World.ID),
		chromedp.SetValue(chromedp.CSS("#f-outcome"), "ok"),
		chromedp.Click(chromedp.CSS(`form.filters button[type="submit"]`)),
	)
	// The unfiltered page has rows too: wait for the filtered page to be
	// the one shown (bounded), then for its rows.
	loc := b.Location()
	for i := 0; i < 100 && !strings.Contains(loc, "outcome=ok"); i++ {
		time.Sleep(100 * time.Millisecond)
		loc = b.Location()
	}
	if !strings.Contains(loc, "world="+s.World.ID) || !strings.Contains(loc, "outcome=ok") {
		t.Errorf("filtered at %s", loc)
	}
	b.Do(chromedp.WaitVisible(chromedp.CSS(`tr[id^="a-"]`)))
	if row := b.Text(`tr[id^="a-"]`); !strings.Contains(row, "console POST /rules") || !strings.Contains(row, "auto_accept_rule") {
		t.Errorf("audit row %q", row)
	}
	b.Shot("audit")
	if d := b.Dialogs(); len(d) != 0 {
		t.Errorf("dialogs: %v", d)
	}
}
