package authserver_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/worldforge-go/worldforge/internal/browsertest"
)

// TestBrowserConsent: in Chromium, a signed-in person opens an app's
// authorization request, sees the app's name (script, shown as text),
// unticks one of the two scopes and approves; the browser lands on the
// app's redirect URI with a code (the consent page's CSP lets the form
// redirect there), and the code's token carries the scope kept.
func TestBrowserConsent(t *testing.T) {
	b := browsertest.New(t)
	s := start(t, nil)
	got := make(chan url.Values, 1)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/callback" {
			select {
			case got <- r.URL.Query():
			default:
			}
		}
		w.Write([]byte("done"))
	}))
	defer app.Close()
	f := newFlow(t, s)
	f.redirect = app.URL + "/callback"
	const xss = `<script>alert("app")</script>`
	resp, body := f.do("POST", "/register", strings.NewReader(`{"client_name":"`+strings.ReplaceAll(xss, `"`, `\"`)+`","redirect_uris":["`+f.redirect+`"]}`),
		map[string]string{"Content-Type": "application/json"})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("register: %d %s", resp.StatusCode, body)
	}
	f.clientID = strings.Split(strings.Split(string(body), `"client_id":"`)[1], `"`)[0]

	b.SignIn(s.LoginLink(t, s.Owner))
	b.Do(chromedp.Navigate(s.URL+"/authorize?"+f.authorizeQuery("world:read campaign:read").Encode()),
		chromedp.WaitVisible(chromedp.CSS(`form[action="/oauth/consent"]`)))
	if h := b.Text("h1"); !strings.Contains(h, xss) {
		t.Errorf("heading %q does not show the app's name as text", h)
	}
	b.Shot("consent")
	b.Do(
		chromedp.Click(chromedp.CSS(`input[name="scope"][value="campaign:read"]`)),
		chromedp.Click(chromedp.CSS(`button[value="approve"]`)),
	)
	var q url.Values
	select {
	case q = <-got:
	case <-time.After(browsertest.Timeout):
		t.Fatalf("the browser never reached the app; it is at %s", b.Location())
	}
	if q.Get("state") != f.state || q.Get("code") == "" {
		t.Fatalf("callback query %v", q)
	}
	tr := f.exchange(q.Get("code"))
	if tr.Status != 200 || tr.Scope != "world:read" {
		t.Fatalf("token: %+v", tr)
	}
	if d := b.Dialogs(); len(d) > 0 {
		t.Errorf("dialogs opened: %v", d)
	}
}
