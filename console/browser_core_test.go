package console_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/app"
	"github.com/worldforge-go/worldforge/internal/browsertest"
	"github.com/worldforge-go/worldforge/internal/dbtest"
)

// xss is user-supplied text that runs script if a page fails to escape
// it.
const xss = `<script>alert(1)</script>"><img src=x onerror=alert(1)>`

// TestBrowserSignIn signs in with a login link in Chromium and reads the
// worlds page, where a world named with script shows as text.
func TestBrowserSignIn(t *testing.T) {
	b := browsertest.New(t)
	db := dbtest.Open(t)
	s := startConsole(t, db)
	actor := &wf.Actor{UserID: s.Owner.ID, Kind: wf.CredentialSession, Scopes: []string{wf.ScopeAll}}
	if _, err := app.New(db).CreateWorld(context.Background(), app.Request{Actor: actor, Via: app.Via{Tool: wf.ToolCreateWorld}},
		&wf.CreateWorldArgs{Name: xss, Template: "starter-city", Size: "small"}); err != nil {
		t.Fatal(err)
	}

	// Signed out: the sign-in page.
	b.Do(chromedp.Navigate(s.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#credential")))
	if h := b.Text("h1"); h != "Sign in" {
		t.Fatalf("signed out, h1 %q", h)
	}
	b.Shot("signin")

	b.SignIn(s.LoginLink(t, s.Owner))
	if loc := b.Location(); loc != s.URL+"/" {
		t.Errorf("after the link: %s", loc)
	}
	if h := b.Text("h1"); h != "Your worlds" {
		t.Errorf("h1 %q", h)
	}
	table := b.Text("table.list")
	if !strings.Contains(table, s.World.Name) || !strings.Contains(table, xss) {
		t.Errorf("worlds table:\n%s", table)
	}
	if d := b.Dialogs(); len(d) != 0 {
		t.Errorf("script in a world name ran: %v", d)
	}
	b.Shot("worlds")

	// Sign out, and the console is closed again.
	b.Do(chromedp.Click(chromedp.CSS("form.signout button")), chromedp.WaitVisible(chromedp.CSS("#credential")))
	if f := b.Text("#flash"); f != "Signed out." {
		t.Errorf("flash %q", f)
	}
}

// TestBrowserKeyboard signs in with the keyboard alone: Tab goes to the
// skip link, the home link, then the credential field, and Enter sends
// the form.
func TestBrowserKeyboard(t *testing.T) {
	b := browsertest.New(t)
	db := dbtest.Open(t)
	s := startConsole(t, db)
	key := s.Key(t, s.Owner, wf.ScopeAll)
	b.Do(chromedp.Navigate(s.URL+"/signin"), chromedp.WaitVisible(chromedp.CSS("#credential")))
	focused := func() string {
		b.Do(chromedp.KeyEvent(kb.Tab))
		return browsertest.Run(b, chromedp.Evaluate[string](`document.activeElement.id || document.activeElement.className`))
	}
	for _, want := range []string{"skip", "brand", "credential"} {
		if got := focused(); got != want {
			t.Fatalf("Tab focused %q, want %q", got, want)
		}
	}
	b.Do(chromedp.KeyEvent(key+kb.Enter), chromedp.WaitVisible(chromedp.CSS("header.top nav")))
	if h := b.Text("h1"); h != "Your worlds" {
		t.Errorf("after Enter: h1 %q", h)
	}
}
