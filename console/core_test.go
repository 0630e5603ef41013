package console_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// browser is a cookie-keeping HTTP client that does not follow
// redirects, so tests see each answer.
type browser struct {
	t    testing.TB
	base string
	c    *http.Client
}

func newBrowser(t testing.TB, base string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: base, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	status int
	header http.Header
	body   string
}

func (b *browser) do(method, path string, form url.Values) page {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	u := path
	if strings.HasPrefix(path, "/") {
		u = b.base + path
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, header: resp.Header, body: string(raw)}
}

func (b *browser) get(path string) page { b.t.Helper(); return b.do("GET", path, nil) }

// post sends a form with the CSRF token of the page at from.
func (b *browser) post(from, path string, form url.Values) page {
	b.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf", csrfOf(b.t, b.get(from).body))
	return b.do("POST", path, form)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t testing.TB, html string) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(html)
	if m == nil {
		t.Fatalf("no csrf token in page:\n%s", html)
	}
	return m[1]
}

// signIn follows a login link as a browser does (the page, then its
// form) and checks that it lands on the worlds page.
func (b *browser) signIn(link string) {
	b.t.Helper()
	p := b.post(link, link, nil)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/" {
		b.t.Fatalf("login: %d %s\n%s", p.status, p.header.Get("Location"), p.body)
	}
}

func startConsole(t *testing.T, db *sqlstore.DB) *testserver.Server {
	return testserver.StartWith(t, db, testserver.Config{Console: true})
}

func TestSecurityHeaders(t *testing.T) {
	db := dbtest.Open(t)
	s := startConsole(t, db)
	b := newBrowser(t, s.URL)
	b.signIn(s.LoginLink(t, s.Owner))
	inline := regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]|\son[a-z]+\s*=|style="`)
	for _, path := range []string{"/signin", "/", "/login/wfl_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "/static/console.css"} {
		p := b.get(path)
		csp := p.header.Get("Content-Security-Policy")
		for _, want := range []string{"script-src 'self'", "frame-ancestors 'none'", "default-src 'self'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s: CSP allows inline code: %q", path, csp)
		}
		if p.header.Get("X-Content-Type-Options") != "nosniff" || p.header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: headers %v", path, p.header)
		}
		if strings.HasSuffix(path, ".css") {
			continue
		}
		if m := inline.FindString(p.body); m != "" {
			t.Errorf("%s: inline script or style %q", path, m)
		}
	}
}

func TestSignedOutGoesToSignIn(t *testing.T) {
	db := dbtest.Open(t)
	s := startConsole(t, db)
	b := newBrowser(t, s.URL)
	for path, want := range map[string]string{
		"/":                 "/signin",
		"/queue?kind=quest": "/signin?next=%2Fqueue%3Fkind%3Dquest",
		"/keys":             "/signin?next=%2Fkeys",
	} {
		p := b.get(path)
		if p.status != http.StatusSeeOther || p.header.Get("Location") != want {
			t.Errorf("GET %s: %d → %q, want 303 → %q", path, p.status, p.header.Get("Location"), want)
		}
	}
	p := b.get("/signin")
	if p.status != http.StatusOK || !strings.Contains(p.body, "<h1>Sign in</h1>") {
		t.Fatalf("sign-in page: %d\n%s", p.status, p.body)
	}
	// A POST without a session is sent to sign in too, and does nothing.
	before := countWorlds(t, s)
	if p := b.do("POST", "/w", url.Values{"name": {"x"}}); p.status != http.StatusSeeOther || p.header.Get("Location") != "/signin" {
		t.Errorf("POST /w signed out: %d %s", p.status, p.header.Get("Location"))
	}
	if countWorlds(t, s) != before {
		t.Error("a signed-out POST created a world")
	}
}

func countWorlds(t testing.TB, s *testserver.Server) int {
	t.Helper()
	list, err := s.DB.ListReviewWorlds(context.Background(), s.Owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

func TestLoginLink(t *testing.T) {
	db := dbtest.Open(t)
	s := startConsole(t, db)
	b := newBrowser(t, s.URL)
	link := s.LoginLink(t, s.Owner)
	p := b.get(link)
	if p.status != http.StatusOK || !strings.Contains(p.body, `src="/static/login.js"`) || !strings.Contains(p.body, "Continue") {
		t.Fatalf("link page: %d\n%s", p.status, p.body)
	}
	p = b.post(link, link, nil)
	if p.status != http.StatusSeeOther {
		t.Fatalf("login: %d\n%s", p.status, p.body)
	}
	var session *http.Cookie
	for _, c := range (&http.Response{Header: p.header}).Cookies() {
		if c.Name == "wf_session" {
			session = c
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteLaxMode || session.Secure {
		t.Fatalf("session cookie %+v", session)
	}
	home := b.get("/")
	if home.status != http.StatusOK || !strings.Contains(home.body, s.World.Name) || !strings.Contains(home.body, "Signed in.") {
		t.Fatalf("home: %d\n%s", home.status, home.body)
	}

	// The same link again, from another browser: refused, with a page
	// that says so.
	other := newBrowser(t, s.URL)
	p = other.post(link, link, nil)
	if p.status != http.StatusGone || !strings.Contains(p.body, "used already") || strings.Contains(strings.Join(p.header.Values("Set-Cookie"), ";"), "wf_session=wfs_") {
		t.Errorf("second use: %d\n%s", p.status, p.body)
	}
	// A link that was never made.
	p = other.post(link, s.URL+"/login/wfl_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", nil)
	if p.status != http.StatusNotFound || !strings.Contains(p.body, "not valid") {
		t.Errorf("unknown link: %d\n%s", p.status, p.body)
	}
	p = other.post(link, s.URL+"/login/nonsense", nil)
	if p.status != http.StatusNotFound {
		t.Errorf("malformed link: %d", p.status)
	}
	if p := other.get("/"); p.status != http.StatusSeeOther {
		t.Errorf("refused links signed in: %d", p.status)
	}
}

func TestLoginLinkExpired(t *testing.T) {
	db := dbtest.Open(t)
	var skew atomic.Int64
	s := testserver.StartWith(t, db, testserver.Config{Console: true, AuthNow: func() time.Time {
		return time.Now().Add(time.Duration(skew.Load()))
	}})
	link := s.LoginLink(t, s.Owner)
	skew.Store(int64(16 * time.Minute))
	b := newBrowser(t, s.URL)
	p := b.post(link, link, nil)
	if p.status != http.StatusGone || !strings.Contains(p.body, "expired") {
		t.Fatalf("expired link: %d\n%s", p.status, p.body)
	}
	if p := b.get("/"); p.status != http.StatusSeeOther {
		t.Errorf("an expired link signed in: %d", p.status)
	}
}

func TestSignInWithCredential(t *testing.T) {
	db := dbtest.Open(t)
	s := startConsole(t, db)

	// A key with two scopes: the session has those only.
	key := s.Key(t, s.Owner, wf.ScopeWorldRead, wf.ScopeWikiRead)
	b := newBrowser(t, s.URL)
	p := b.post("/signin", "/signin", url.Values{"credential": {" " + key + "\n"}, "next": {"/?x=1"}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/?x=1" {
		t.Fatalf("sign in with key: %d %s\n%s", p.status, p.header.Get("Location"), p.body)
	}
	home := b.get("/")
	if !strings.Contains(home.body, "cannot use the scopes") || !strings.Contains(home.body, "world:write") || strings.Contains(home.body, `action="/w"`) {
		t.Errorf("a limited session's home page does not say what it cannot do:\n%s", home.body)
	}
	// It cannot create a world, whatever it posts.
	before := countWorlds(t, s)
	p = b.post("/", "/w", url.Values{"name": {"Nope"}})
	if p.status != http.StatusSeeOther || !strings.Contains(b.get("/").body, "world:write") || countWorlds(t, s) != before {
		t.Errorf("limited session created a world: %d", p.status)
	}

	// A session JWT: every scope.
	jb := newBrowser(t, s.URL)
	if p := jb.post("/signin", "/signin", url.Values{"credential": {s.Token(t, s.Owner)}}); p.status != http.StatusSeeOther {
		t.Fatalf("sign in with JWT: %d\n%s", p.status, p.body)
	}
	if home := jb.get("/"); strings.Contains(home.body, "cannot use the scopes") || !strings.Contains(home.body, `action="/w"`) {
		t.Errorf("JWT session home:\n%s", home.body)
	}

	// Bad credentials: a clear answer, no session.
	for name, cred := range map[string]string{
		"empty":   "",
		"garbage": "hello",
		"unknown": "wk_live_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"huge":    strings.Repeat("a", 5000),
	} {
		t.Run(name, func(t *testing.T) {
			nb := newBrowser(t, s.URL)
			p := nb.post("/signin", "/signin", url.Values{"credential": {cred}})
			if p.status != http.StatusBadRequest && p.status != http.StatusUnauthorized {
				t.Errorf("status %d", p.status)
			}
			if !strings.Contains(p.body, `role="alert"`) {
				t.Errorf("no error shown:\n%s", p.body)
			}
			if p := nb.get("/"); p.status != http.StatusSeeOther {
				t.Errorf("signed in with a bad credential")
			}
		})
	}
	// next must stay on this site.
	nb := newBrowser(t, s.URL)
	p = nb.post("/signin", "/signin", url.Values{"credential": {key}, "next": {"//evil.example/x"}})
	if loc := p.header.Get("Location"); loc != "/" {
		t.Errorf("next=//evil.example/x redirected to %q", loc)
	}
}

func TestCSRF(t *testing.T) {
	db := dbtest.Open(t)
	s := startConsole(t, db)
	b := newBrowser(t, s.URL)
	b.signIn(s.LoginLink(t, s.Owner))
	other := newBrowser(t, s.URL)
	other.signIn(s.LoginLink(t, s.Owner))
	foreign := csrfOf(t, other.get("/").body) // a token of another session

	before := countWorlds(t, s)
	for name, token := range map[string]string{"missing": "", "forged": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "another session's": foreign} {
		form := url.Values{"name": {"CSRF " + name}}
		if token != "" {
			form.Set("csrf", token)
		}
		p := b.do("POST", "/w", form)
		if p.status != http.StatusForbidden || !strings.Contains(p.body, "Nothing was changed") {
			t.Errorf("%s token: %d\n%s", name, p.status, p.body)
		}
	}
	if p := b.do("POST", "/signout", url.Values{}); p.status != http.StatusForbidden {
		t.Errorf("sign-out without a token: %d", p.status)
	}
	if countWorlds(t, s) != before {
		t.Fatal("a forged form created a world")
	}
	p := b.post("/", "/w", url.Values{"name": {"Made here"}, "template": {"starter-city"}, "size": {"small"}, "seed": {"dragon"}})
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/w/") {
		t.Fatalf("create world: %d %s\n%s", p.status, p.header.Get("Location"), p.body)
	}
	if countWorlds(t, s) != before+1 {
		t.Fatal("the world was not created")
	}
	// The audit row says it came from the console.
	rows, err := s.DB.ListAudit(context.Background(), wf.AuditFilter{ActorID: s.Owner.ID, Tool: wf.ToolCreateWorld})
	if err != nil || len(rows) != 1 || rows[0].Route != "console POST /w" {
		t.Errorf("audit rows %+v, %v", rows, err)
	}
}

func TestCreateWorldBadInput(t *testing.T) {
	db := dbtest.Open(t)
	s := startConsole(t, db)
	b := newBrowser(t, s.URL)
	b.signIn(s.LoginLink(t, s.Owner))
	before := countWorlds(t, s)
	for name, form := range map[string]url.Values{
		"no name":           {"name": {""}},
		"long name":         {"name": {strings.Repeat("x", 121)}},
		"unknown template":  {"name": {"A"}, "template": {"starter-moon"}},
		"bad size":          {"name": {"A"}, "size": {"huge"}},
		"seed out of range": {"name": {"A"}, "seed": {"99999999999999999999"}},
	} {
		t.Run(name, func(t *testing.T) {
			p := b.post("/", "/w", form)
			if p.status != http.StatusSeeOther || p.header.Get("Location") != "/" {
				t.Fatalf("%d %s", p.status, p.header.Get("Location"))
			}
			home := b.get("/")
			if !strings.Contains(home.body, `class="flash error" role="alert"`) {
				t.Errorf("no error on the page:\n%s", home.body)
			}
		})
	}
	if countWorlds(t, s) != before {
		t.Error("bad input created a world")
	}
}

func TestSessionEnds(t *testing.T) {
	db := dbtest.Open(t)
	s := startConsole(t, db)

	// Sign-out.
	b := newBrowser(t, s.URL)
	b.signIn(s.LoginLink(t, s.Owner))
	if p := b.post("/", "/signout", nil); p.status != http.StatusSeeOther || p.header.Get("Location") != "/signin" {
		t.Fatalf("sign out: %d %s", p.status, p.header.Get("Location"))
	}
	if p := b.get("/"); p.status != http.StatusSeeOther {
		t.Errorf("signed out, still in: %d", p.status)
	}

	// sessions revoke (the command's call): every session of the user.
	b1, b2 := newBrowser(t, s.URL), newBrowser(t, s.URL)
	b1.signIn(s.LoginLink(t, s.Owner))
	b2.signIn(s.LoginLink(t, s.Owner))
	n, err := s.Auth.RevokeSessions(context.Background(), s.Owner.ID)
	if err != nil || n != 2 {
		t.Fatalf("revoked %d, %v", n, err)
	}
	for _, b := range []*browser{b1, b2} {
		p := b.get("/keys")
		if p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/signin") {
			t.Errorf("revoked session: %d %s", p.status, p.header.Get("Location"))
		}
	}

	// A session signed in with a key ends when the key is revoked.
	key := s.Key(t, s.Owner, wf.ScopeWorldRead)
	kb := newBrowser(t, s.URL)
	if p := kb.post("/signin", "/signin", url.Values{"credential": {key}}); p.status != http.StatusSeeOther {
		t.Fatal(p.status)
	}
	if err := s.Auth.RevokeKey(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	// The session check is cached for the authenticator's TTL (500 ms):
	// poll past it.
	deadline := time.Now().Add(3 * time.Second)
	for {
		p := kb.get("/")
		if p.status == http.StatusSeeOther {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a session of a revoked key still works")
		}
		time.Sleep(50 * time.Millisecond) // polls a cache expiry nothing signals
	}
}

func TestConsoleOff(t *testing.T) {
	db := dbtest.Open(t)
	s := testserver.Start(t, db)
	b := newBrowser(t, s.URL)
	for _, path := range []string{"/", "/signin", "/static/console.css"} {
		p := b.get(path)
		if p.status != http.StatusNotFound || !strings.Contains(p.body, `"error"`) {
			t.Errorf("GET %s without the console: %d %s", path, p.status, p.body)
		}
	}
}

// TestHostAndOrigin: the console's routes pass the same Host/Origin check
// as the API (DNS-rebinding protection): another host, or a form posted
// from another origin, is refused before the console runs, and changes
// nothing.
func TestHostAndOrigin(t *testing.T) {
	db := dbtest.Open(t)
	s := startConsole(t, db)
	b := newBrowser(t, s.URL)
	b.signIn(s.LoginLink(t, s.Owner))
	token := csrfOf(t, b.get("/").body)
	before := countWorlds(t, s)
	for name, set := range map[string]func(*http.Request){
		"host":   func(r *http.Request) { r.Host = "evil.example" },
		"origin": func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") },
	} {
		for _, method := range []string{"GET", "POST"} {
			var body io.Reader
			if method == "POST" {
				body = strings.NewReader(url.Values{"csrf": {token}, "name": {"Rebound"}}.Encode())
			}
			req, _ := http.NewRequest(method, s.URL+map[string]string{"GET": "/", "POST": "/w"}[method], body)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			set(req)
			resp, err := b.c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(raw), "forbidden_host") {
				t.Errorf("%s %s: %d %s", name, method, resp.StatusCode, raw)
			}
		}
	}
	if countWorlds(t, s) != before {
		t.Error("a refused request created a world")
	}
}

// TestCloseEndsLiveStreams: closing the server (as a graceful shutdown
// does) ends the open live-queue streams, which would otherwise hold the
// shutdown until its timeout.
func TestCloseEndsLiveStreams(t *testing.T) {
	db := dbtest.Open(t)
	s := startConsole(t, db)
	b := newBrowser(t, s.URL)
	b.signIn(s.LoginLink(t, s.Owner))
	req, _ := http.NewRequest("GET", s.URL+"/queue/events", nil)
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	first := make([]byte, 1)
	if _, err := resp.Body.Read(first); err != nil {
		t.Fatal(err)
	}
	s.API.Close()
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, resp.Body)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("stream ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream is still open 10 s after Close")
	}
}

// TestPageViewsNotAudited: looking at pages writes no audit row (the
// world page reads wiki pages, atlas places and lore through the same
// operations as the MCP tools, which audit their reads); every form's
// action writes the row its API call writes.
func TestPageViewsNotAudited(t *testing.T) {
	db := dbtest.Open(t)
	s := startConsole(t, db)
	b := newBrowser(t, s.URL)
	b.signIn(s.LoginLink(t, s.Owner))
	count := func() int {
		n, err := db.CountAudit(context.Background(), wf.AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	for _, path := range []string{"/", "/w/" + s.World.ID, "/w/" + s.World.ID + "/wiki/" + s.Page.ID, "/w/" + s.World.ID + "/map.png", "/queue", "/rules", "/keys", "/audit"} {
		if p := b.get(path); p.status != http.StatusOK {
			t.Fatalf("GET %s: %d", path, p.status)
		}
	}
	if n := count(); n != before {
		t.Errorf("page views wrote %d audit rows", n-before)
	}
	if p := b.post("/", "/w", url.Values{"name": {"Audited"}}); p.status != http.StatusSeeOther {
		t.Fatalf("create world: %d", p.status)
	}
	if n := count(); n != before+1 {
		t.Errorf("creating a world wrote %d audit rows, want 1", n-before)
	}
}
