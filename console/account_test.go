package console_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// acctUser is a browser stand-in for the account page tests: a cookie
// jar that does not follow redirects, signed in to the console.
type acctUser struct {
	t    *testing.T
	s    *testserver.Server
	c    *http.Client
	csrf string
}

var acctCSRF = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// acctNew is a cookie-jar client of s, not signed in.
func acctNew(t *testing.T, s *testserver.Server) *acctUser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &acctUser{t: t, s: s, c: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// acctSignIn signs u in with a login link, as a browser does.
func acctSignIn(t *testing.T, s *testserver.Server, u *wf.User) *acctUser {
	t.Helper()
	a := acctNew(t, s)
	link := s.LoginLink(t, u)
	code, body, _ := a.do("GET", link, nil)
	if code != http.StatusOK {
		t.Fatalf("login page: %d", code)
	}
	a.csrf = a.token(body)
	if code, _, _ := a.do("POST", link, url.Values{}); code != http.StatusSeeOther {
		t.Fatalf("login: %d", code)
	}
	a.refresh()
	return a
}

// acctSignInKey signs in by pasting an API key.
func acctSignInKey(t *testing.T, s *testserver.Server, key string) *acctUser {
	t.Helper()
	a := acctNew(t, s)
	_, body, _ := a.do("GET", "/signin", nil)
	a.csrf = a.token(body)
	if code, _, _ := a.do("POST", "/signin", url.Values{"credential": {key}}); code != http.StatusSeeOther {
		t.Fatalf("sign in with a key: %d", code)
	}
	a.refresh()
	return a
}

// refresh reads the session's CSRF token off a page.
func (a *acctUser) refresh() {
	a.t.Helper()
	code, body, _ := a.do("GET", "/keys", nil)
	if code != http.StatusOK {
		a.t.Fatalf("GET /keys: %d", code)
	}
	a.csrf = a.token(body)
}

func (a *acctUser) token(body string) string {
	a.t.Helper()
	m := acctCSRF.FindStringSubmatch(body)
	if m == nil {
		a.t.Fatalf("no csrf token in the page:\n%s", body)
	}
	return html.UnescapeString(m[1])
}

// do sends a request (a POST carries the form, with the CSRF token
// unless the form has one) and returns the status, body and response.
func (a *acctUser) do(method, path string, form url.Values) (int, string, *http.Response) {
	a.t.Helper()
	u := path
	if strings.HasPrefix(path, "/") {
		u = a.s.URL + path
	}
	var body io.Reader
	if form != nil {
		if _, ok := form["csrf"]; !ok {
			form.Set("csrf", a.csrf)
		}
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		a.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := a.c.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp
}

// get fetches a page and fails unless it answers want.
func (a *acctUser) get(path string, want int) string {
	a.t.Helper()
	code, body, _ := a.do("GET", path, nil)
	if code != want {
		a.t.Fatalf("GET %s: %d, want %d\n%s", path, code, want, body)
	}
	return body
}

// rowIDs are the ids of the page's rows of a kind ("r", "k", "a").
func rowIDs(body, kind string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<tr id="`+kind+`-([^"]+)"`).FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestRulesPage checks listing, adding and deleting auto-accept rules
// through the console, bad input and forged forms.
func TestRulesPage(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := startConsole(t, db)
		owner := acctSignIn(t, s, s.Owner)
		body := owner.get("/rules", http.StatusOK)
		if !strings.Contains(body, `<option value="`+s.World.ID+`">Testworld</option>`) || !strings.Contains(body, "no auto-accept rules") {
			t.Fatalf("rules page:\n%s", body)
		}

		unchanged := func(t *testing.T, f func() (int, string), want int, text string) {
			t.Helper()
			before := s.Fingerprint(t)
			code, body := f()
			if code != want || !strings.Contains(body, text) {
				t.Errorf("got %d, want %d with %q:\n%s", code, want, text, body)
			}
			if d := testserver.Changed(before, s.Fingerprint(t)); len(d) > 0 {
				t.Errorf("changed: %v", d)
			}
		}
		post := func(a *acctUser, path string, form url.Values) func() (int, string) {
			return func() (int, string) { code, body, _ := a.do("POST", path, form); return code, body }
		}
		for _, tc := range []struct {
			name string
			form url.Values
			want int
			text string
		}{
			{"nobody trusted", url.Values{"world": {s.World.ID}, "kind": {"wiki_page"}}, 400, "A rule must name the actorId or keyId"},
			{"unknown kind", url.Values{"actor": {s.GM.ID}, "kind": {"<b>nope</b>"}}, 400, "&lt;b&gt;nope&lt;/b&gt;"},
			{"kind twice", url.Values{"actor": {s.GM.ID}, "kind": {"quest", "quest"}}, 400, "listed twice"},
			{"long actor", url.Values{"actor": {strings.Repeat("u", 300)}}, 400, "Bad request"},
			{"someone else's world", url.Values{"actor": {s.GM.ID}, "world": {wf.NewID("world")}}, 404, "Not found"},
			{"forged csrf", url.Values{"actor": {s.GM.ID}, "csrf": {"forged"}}, 403, "Nothing was changed"},
			{"missing csrf", url.Values{"actor": {s.GM.ID}, "csrf": {""}}, 403, "Forbidden"},
		} {
			t.Run(tc.name, func(t *testing.T) { unchanged(t, post(owner, "/rules", tc.form), tc.want, tc.text) })
		}
		// The GM runs the world but does not own it: not a world of theirs
		// for rules.
		gm := acctSignIn(t, s, s.GM)
		unchanged(t, post(gm, "/rules", url.Values{"actor": {s.Player.ID}, "world": {s.World.ID}}), 404, "Not found")

		before := s.AuditCount(t)
		code, _, resp := owner.do("POST", "/rules", url.Values{"world": {s.World.ID}, "actor": {s.GM.ID}, "kind": {"wiki_page", "atlas_place"}})
		if code != http.StatusSeeOther || resp.Header.Get("Location") != "/rules" {
			t.Fatalf("add: %d to %q", code, resp.Header.Get("Location"))
		}
		if n := s.AuditCount(t) - before; n != 1 {
			t.Errorf("adding wrote %d audit rows", n)
		}
		rows, err := db.ListAudit(t.Context(), wf.AuditFilter{Limit: 1})
		if err != nil || rows[0].Route != "console POST /rules" || rows[0].TargetType != "auto_accept_rule" || rows[0].WorldID != s.World.ID {
			t.Errorf("audit row %+v, %v", rows, err)
		}
		rules, err := db.ListAutoAcceptRules(t.Context(), s.Owner.ID)
		if err != nil || len(rules) != 1 || !slices.Equal(rules[0].Kinds, []string{"wiki_page", "atlas_place"}) || rules[0].ActorID != s.GM.ID {
			t.Fatalf("rules %+v, %v", rules, err)
		}
		id := rules[0].ID
		body = owner.get("/rules", http.StatusOK)
		if ids := rowIDs(body, "r"); !slices.Equal(ids, []string{id}) || !strings.Contains(body, "wiki_page, atlas_place") || !strings.Contains(body, `id="flash"`) {
			t.Errorf("rules after adding: %v\n%s", ids, body)
		}
		if ids := rowIDs(gm.get("/rules", http.StatusOK), "r"); len(ids) != 0 {
			t.Errorf("the GM sees rules %v", ids)
		}

		unchanged(t, post(gm, "/rules/"+id+"/delete", url.Values{}), 404, "Not found")
		unchanged(t, post(owner, "/rules/"+id+"/delete", url.Values{"csrf": {gm.csrf}}), 403, "Forbidden")
		code, _, resp = owner.do("POST", "/rules/"+id+"/delete", url.Values{})
		if code != http.StatusSeeOther || resp.Header.Get("Location") != "/rules" {
			t.Fatalf("delete: %d", code)
		}
		if ids := rowIDs(owner.get("/rules", http.StatusOK), "r"); len(ids) != 0 {
			t.Errorf("rules after deleting: %v", ids)
		}
		unchanged(t, post(owner, "/rules/"+id+"/delete", url.Values{}), 404, "Not found")
	})
}

var (
	acctNewKey = regexp.MustCompile(`<code id="new-key">([^<]+)</code>`)
	acctConfig = regexp.MustCompile(`(?s)<pre id="mcp-config">(.*?)</pre>`)
)

// TestKeysPage checks the API keys page: a new key shown once with its
// mcpServers snippet, that works and, revoked, stops working; the scopes
// a limited session may grant; bad input and forged forms.
func TestKeysPage(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := startConsole(t, db)
		owner := acctSignIn(t, s, s.Owner)
		body := owner.get("/keys", http.StatusOK)
		for _, scope := range wf.AllScopes {
			if !strings.Contains(body, `name="scope" value="`+scope+`">`) {
				t.Errorf("no checkbox for scope %s", scope)
			}
		}

		before := s.AuditCount(t)
		code, body, resp := owner.do("POST", "/keys", url.Values{"name": {xss}, "scope": {wf.ScopeWorldRead, wf.ScopeWikiRead}})
		if code != http.StatusCreated {
			t.Fatalf("create: %d\n%s", code, body)
		}
		m := acctNewKey.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no new key on the page:\n%s", body)
		}
		secret := m[1]
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") || !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("the key name is not escaped:\n%s", body)
		}
		if resp.Header.Get("Location") != "" || strings.Contains(fmt.Sprint(resp.Header["Set-Cookie"]), secret) {
			t.Errorf("the secret left the page: %v", resp.Header)
		}
		if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("Cache-Control %q", cc)
		}
		if n := s.AuditCount(t) - before; n != 1 {
			t.Errorf("creating wrote %d audit rows", n)
		}
		cm := acctConfig.FindStringSubmatch(body)
		if cm == nil {
			t.Fatalf("no mcpServers snippet:\n%s", body)
		}
		var cfg struct {
			MCPServers map[string]struct {
				Type    string            `json:"type"`
				URL     string            `json:"url"`
				Headers map[string]string `json:"headers"`
			} `json:"mcpServers"`
		}
		if err := json.Unmarshal([]byte(html.UnescapeString(cm[1])), &cfg); err != nil {
			t.Fatalf("snippet: %v\n%s", err, cm[1])
		}
		if c := cfg.MCPServers["worldforge"]; c.Type != "http" || c.URL != s.MCPURL() || c.Headers["Authorization"] != "Bearer "+secret || len(cfg.MCPServers) != 1 {
			t.Errorf("snippet %+v", cfg)
		}
		actor, err := s.Auth.Authenticate(t.Context(), secret)
		if err != nil || actor.UserID != s.Owner.ID || !slices.Equal(actor.Scopes, []string{wf.ScopeWorldRead, wf.ScopeWikiRead}) {
			t.Fatalf("the new key: %+v, %v", actor, err)
		}
		keyID := actor.KeyID

		// The list shows it and its use (Authenticate above), never its
		// secret again.
		body = owner.get("/keys", http.StatusOK)
		if strings.Contains(body, secret) || !slices.Contains(rowIDs(body, "k"), keyID) || !strings.Contains(body, "world:read, wiki:read") ||
			!regexp.MustCompile(`id="k-`+keyID+`"(?s:.*?)<td class="nowrap last-used"><time datetime="[^"]+">[^<]+ UTC</time>`).MatchString(body) {
			t.Errorf("keys page after creating:\n%s", body)
		}

		unchanged := func(t *testing.T, a *acctUser, path string, form url.Values, want int, text string) {
			t.Helper()
			before := s.Fingerprint(t)
			code, body, _ := a.do("POST", path, form)
			if code != want || !strings.Contains(body, text) {
				t.Errorf("got %d, want %d with %q:\n%s", code, want, text, body)
			}
			if d := testserver.Changed(before, s.Fingerprint(t)); len(d) > 0 {
				t.Errorf("changed: %v", d)
			}
		}
		for _, tc := range []struct {
			name string
			form url.Values
			want int
			text string
		}{
			{"no scope", url.Values{"name": {"x"}}, 400, "An API key needs at least one scope"},
			{"unknown scope", url.Values{"name": {"x"}, "scope": {"root"}}, 400, "Unknown scope &#34;root&#34;"},
			{"long name", url.Values{"name": {strings.Repeat("n", 101)}, "scope": {wf.ScopeWorldRead}}, 400, "A key name is at most 100 characters"},
			{"forged csrf", url.Values{"name": {"x"}, "scope": {wf.ScopeWorldRead}, "csrf": {"x" + owner.csrf}}, 403, "Forbidden"},
		} {
			t.Run(tc.name, func(t *testing.T) { unchanged(t, owner, "/keys", tc.form, tc.want, tc.text) })
		}

		// A session signed in with a limited key grants only its scopes.
		limited := acctSignInKey(t, s, s.Key(t, s.Owner, wf.ScopeWorldRead, wf.ScopeWikiRead))
		body = limited.get("/keys", http.StatusOK)
		if !strings.Contains(body, `value="wiki:propose" disabled>`) || !strings.Contains(body, `value="world:read">`) {
			t.Errorf("limited session's form:\n%s", body)
		}
		unchanged(t, limited, "/keys", url.Values{"scope": {wf.ScopeWorldRead, wf.ScopeWikiPropose, wf.ScopeAll}}, 403, "<code>wiki:propose</code>, <code>*</code>")
		if code, body, _ := limited.do("POST", "/keys", url.Values{"name": {"narrow"}, "scope": {wf.ScopeWikiRead}}); code != http.StatusCreated || acctNewKey.FindString(body) == "" {
			t.Errorf("a limited session minting its own scope: %d", code)
		}

		// Revoking: someone else's is not found; forged forms change
		// nothing; the owner's works and shows.
		stranger := acctSignIn(t, s, s.Stranger)
		if ids := rowIDs(stranger.get("/keys", http.StatusOK), "k"); len(ids) != 0 {
			t.Errorf("the stranger sees keys %v", ids)
		}
		unchanged(t, stranger, "/keys/"+keyID+"/revoke", url.Values{}, 404, "Not found")
		unchanged(t, owner, "/keys/"+keyID+"/revoke", url.Values{"csrf": {stranger.csrf}}, 403, "Forbidden")
		unchanged(t, owner, "/keys/not-a-key/revoke", url.Values{}, 400, "is not an API key id")
		before = s.AuditCount(t)
		code, _, resp = owner.do("POST", "/keys/"+keyID+"/revoke", url.Values{})
		if code != http.StatusSeeOther || resp.Header.Get("Location") != "/keys" {
			t.Fatalf("revoke: %d", code)
		}
		if n := s.AuditCount(t) - before; n != 1 {
			t.Errorf("revoking wrote %d audit rows", n)
		}
		k, err := db.FindAPIKeyByID(t.Context(), keyID)
		if err != nil || k.RevokedAt == nil {
			t.Fatalf("key after revoking: %+v, %v", k, err)
		}
		body = owner.get("/keys", http.StatusOK)
		if !strings.Contains(body, "Key revoked.") || !regexp.MustCompile(`id="k-`+keyID+`"(?s:.*?)revoked `).MatchString(body) {
			t.Errorf("keys page after revoking:\n%s", body)
		}
	})
}

// TestAuditPage checks the audit page and its exports: who sees which
// rows, the filters, paging, bad filters, and the CSV and JSON Lines
// files parsed back.
func TestAuditPage(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := startConsole(t, db)
		ctx := t.Context()
		other := &wf.World{OwnerID: s.Stranger.ID, Name: "Elsewhere", Cols: 8, Rows: 8, JSON: json.RawMessage(`{"grid":{"cols":8,"rows":8}}`)}
		if err := db.CreateWorld(ctx, other); err != nil {
			t.Fatal(err)
		}
		// Each user: a row on the shared world, one on the stranger's
		// world and one outside any world (a rejection).
		var all []wf.AuditEntry
		users := []*wf.User{s.Owner, s.GM, s.Player, s.Stranger}
		for _, u := range users {
			for i, world := range []string{s.World.ID, other.ID, ""} {
				e := wf.AuditEntry{ActorID: u.ID, Tool: wf.ToolReadWorld, WorldID: world, TargetType: "world", TargetID: world, Outcome: "ok"}
				if i == 2 {
					e.Tool, e.Route, e.Outcome, e.TargetType, e.KeyID = "", "POST /proposals/{id}/reject", "rejected", "wiki_page", "key_"+u.Name
				}
				if err := db.AppendAudit(ctx, &e); err != nil {
					t.Fatal(err)
				}
				all = append(all, e)
			}
		}
		sees := func(u *wf.User, e wf.AuditEntry) bool {
			return e.ActorID == u.ID || e.WorldID == s.World.ID && (u == s.Owner || u == s.GM) || e.WorldID == other.ID && u == s.Stranger
		}
		// want lists the ids u sees of the rows keep keeps, newest first.
		want := func(u *wf.User, keep func(wf.AuditEntry) bool) []string {
			var out []string
			for i := len(all) - 1; i >= 0; i-- {
				if sees(u, all[i]) && keep(all[i]) {
					out = append(out, all[i].ID)
				}
			}
			return out
		}
		every := func(wf.AuditEntry) bool { return true }

		for _, u := range users {
			t.Run(u.Name, func(t *testing.T) {
				a := acctSignIn(t, s, u)
				// Signing in and reading pages writes no audit rows, so
				// the page shows exactly the rows above.
				if got, want := rowIDs(a.get("/audit", http.StatusOK), "a"), want(u, every); !slices.Equal(got, want) {
					t.Errorf("sees %v, want %v", got, want)
				}
				q := "/audit?outcome=rejected&route=" + url.QueryEscape("POST /proposals/{id}/reject")
				if got, want := rowIDs(a.get(q, http.StatusOK), "a"), want(u, func(e wf.AuditEntry) bool { return e.Outcome == "rejected" }); !slices.Equal(got, want) {
					t.Errorf("rejections: sees %v, want %v", got, want)
				}
				q = "/audit?actor=" + s.Owner.ID + "&tool=" + wf.ToolReadWorld
				if got, want := rowIDs(a.get(q, http.StatusOK), "a"), want(u, func(e wf.AuditEntry) bool { return e.ActorID == s.Owner.ID && e.Tool == wf.ToolReadWorld }); !slices.Equal(got, want) {
					t.Errorf("the owner's reads: sees %v, want %v", got, want)
				}
				q = "/audit?key=key_" + s.Player.Name
				if got, want := rowIDs(a.get(q, http.StatusOK), "a"), want(u, func(e wf.AuditEntry) bool { return e.KeyID == "key_"+s.Player.Name }); !slices.Equal(got, want) {
					t.Errorf("the player's key: sees %v, want %v", got, want)
				}
				runs := u == s.Owner || u == s.GM
				if !runs {
					a.get("/audit?world="+s.World.ID, http.StatusNotFound)
					return
				}
				body := a.get("/audit?world="+s.World.ID, http.StatusOK)
				if got, want := rowIDs(body, "a"), want(u, func(e wf.AuditEntry) bool { return e.WorldID == s.World.ID }); !slices.Equal(got, want) || len(got) != 4 {
					t.Errorf("the world's rows: sees %v, want %v", got, want)
				}
				if !strings.Contains(body, `<option value="`+s.World.ID+`" selected>`) {
					t.Errorf("the world filter is not kept in the form")
				}
			})
		}

		owner := acctSignIn(t, s, s.Owner)
		for _, tc := range []struct{ q, text string }{
			{"outcome=nope", "Unknown outcome &#34;nope&#34;"},
			{"since=yesterday", "Since &#34;yesterday&#34; is not a time"},
			{"until=2026-13-01", "Until &#34;2026-13-01&#34; is not a time"},
			{"since=2026-12-02T10:00&until=2026-12-01T10:00", "Since (2026-12-02 10:00:00) must be before until (2026-12-01 10:00:00)"},
			{"key=" + strings.Repeat("k", 101), "Key has 101 characters; at most 100"},
			{"before=-3", "Before &#34;-3&#34; is not a position in the log"},
			{"before=abc", "Before &#34;abc&#34; is not a position in the log"},
		} {
			for _, path := range []string{"/audit", "/audit.csv", "/audit.jsonl"} {
				body := owner.get(path+"?"+tc.q, http.StatusBadRequest)
				if !strings.Contains(body, tc.text) {
					t.Errorf("%s?%s: no %q in\n%s", path, tc.q, tc.text, body)
				}
			}
		}

		// The time range is Since <= CreatedAt < Until, in UTC.
		first, err := db.ListAudit(ctx, wf.AuditFilter{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		at := first[0].CreatedAt.UTC()
		future := at.Add(time.Hour).Format("2006-01-02T15:04")
		if ids := rowIDs(owner.get("/audit?since="+future, http.StatusOK), "a"); len(ids) != 0 {
			t.Errorf("rows from the future: %v", ids)
		}
		if ids := rowIDs(owner.get("/audit?until="+future+"&since="+at.Add(-time.Hour).Format(time.RFC3339), http.StatusOK), "a"); len(ids) != len(want(s.Owner, every)) {
			t.Errorf("rows of the last hours: %v", ids)
		}

		// Paging: 60 more rows of the owner's, 50 on the first page.
		for i := range 60 {
			e := wf.AuditEntry{ActorID: s.Owner.ID, Tool: wf.ToolListQuests, Outcome: "ok", TargetID: fmt.Sprint(i)}
			if err := db.AppendAudit(ctx, &e); err != nil {
				t.Fatal(err)
			}
			all = append(all, e)
		}
		var walked []string
		next := "/audit?tool=" + wf.ToolListQuests
		nextLink := regexp.MustCompile(`<a rel="next" href="([^"]+)">Next page</a>`)
		for pages := 0; next != ""; pages++ {
			if pages > 3 {
				t.Fatal("too many pages")
			}
			body := owner.get(next, http.StatusOK)
			ids := rowIDs(body, "a")
			if pages == 0 && len(ids) != 50 {
				t.Errorf("first page: %d rows", len(ids))
			}
			walked = append(walked, ids...)
			next = ""
			if m := nextLink.FindStringSubmatch(body); m != nil {
				next = html.UnescapeString(m[1])
				if !strings.Contains(next, "tool="+wf.ToolListQuests) {
					t.Errorf("the next link drops the filter: %s", next)
				}
			}
		}
		if want := want(s.Owner, func(e wf.AuditEntry) bool { return e.Tool == wf.ToolListQuests }); !slices.Equal(walked, want) {
			t.Errorf("walked %d rows, want %d", len(walked), len(want))
		}

		// A target id an agent chose that a spreadsheet would run.
		formula := wf.AuditEntry{ActorID: s.Owner.ID, Route: "POST /worlds/{id}/changesets/{changeset}/commit", TargetType: "changeset",
			TargetID: `=HYPERLINK("http://evil.example/","x")`, Outcome: "committed"}
		if err := db.AppendAudit(ctx, &formula); err != nil {
			t.Fatal(err)
		}
		all = append(all, formula)

		// The exports: every matching row, in one file each.
		for _, u := range []*wf.User{s.Owner, s.Player} {
			a := acctSignIn(t, s, u)
			want := want(u, every)
			code, body, resp := a.do("GET", "/audit.csv", nil)
			if code != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") ||
				!regexp.MustCompile(`^attachment; filename="worldforge-audit-\d{8}-\d{6}\.csv"$`).MatchString(resp.Header.Get("Content-Disposition")) {
				t.Fatalf("csv: %d %v", code, resp.Header)
			}
			records, err := csv.NewReader(strings.NewReader(body)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(records[0], []string{"seq", "id", "created_at", "actor_id", "key_id", "tool", "route", "target_type", "target_id", "world_id", "outcome"}) {
				t.Errorf("csv header %v", records[0])
			}
			var got []string
			for _, r := range records[1:] {
				got = append(got, r[1])
				if _, err := time.Parse(time.RFC3339Nano, r[2]); err != nil || r[3] == "" || r[10] == "" {
					t.Errorf("csv row %v", r)
				}
				if r[1] == formula.ID && r[8] != "'"+formula.TargetID {
					t.Errorf("a formula in the csv: %q", r[8])
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s's csv: %d rows, want %d", u.Name, len(got), len(want))
			}

			code, body, resp = a.do("GET", "/audit.jsonl?outcome=ok", nil)
			if code != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Disposition"), ".jsonl\"") || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/jsonl") {
				t.Fatalf("jsonl: %d %v", code, resp.Header)
			}
			got = nil
			for lines := bytes.Split(bytes.TrimSuffix([]byte(body), []byte("\n")), []byte("\n")); len(lines) > 0 && len(lines[0]) > 0; lines = lines[1:] {
				var e wf.AuditEntry
				if err := json.Unmarshal(lines[0], &e); err != nil {
					t.Fatalf("jsonl line %q: %v", lines[0], err)
				}
				if e.Outcome != "ok" || e.Seq == 0 || !sees(u, e) {
					t.Errorf("jsonl row %+v", e)
				}
				got = append(got, e.ID)
			}
			if want := wantOK(want, all); !slices.Equal(got, want) {
				t.Errorf("%s's jsonl: %d rows, want %d", u.Name, len(got), len(want))
			}
		}
	})
}

// wantOK keeps the ids whose row in all has outcome ok.
func wantOK(ids []string, all []wf.AuditEntry) []string {
	var out []string
	for _, id := range ids {
		for _, e := range all {
			if e.ID == id && e.Outcome == "ok" {
				out = append(out, id)
			}
		}
	}
	return out
}
