package authserver_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/auth"
	"github.com/worldforge-go/worldforge/authserver"
	"github.com/worldforge-go/worldforge/authserver/clientmeta"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// unchanged fails the test if the store was written since before.
func unchanged(t *testing.T, s *testserver.Server, before map[string]string, what string) {
	t.Helper()
	if changed := testserver.Changed(before, s.Fingerprint(t)); len(changed) > 0 {
		t.Errorf("%s changed %v", what, changed)
	}
}

// TestAuthorizeBadInput: each bad authorization request gets its OAuth
// error — an error page when the client or its redirect URI is in doubt
// (never a redirect there), else a redirect back with the error — and
// writes nothing.
func TestAuthorizeBadInput(t *testing.T) {
	s := start(t, nil)
	f := newFlow(t, s)
	cases := []struct {
		name     string
		edit     func(q url.Values)
		code     string
		redirect bool // the error goes back to the client
	}{
		{"unregistered redirect", func(q url.Values) { q.Set("redirect_uri", "https://evil.example/cb") }, "invalid_request", false},
		{"redirect on another path", func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1:9/other") }, "invalid_request", false},
		{"unknown client", func(q url.Values) { q.Set("client_id", "client_nosuchclient") }, "invalid_client", false},
		{"no client", func(q url.Values) { q.Del("client_id") }, "invalid_request", false},
		{"client id twice", func(q url.Values) { q.Add("client_id", "x") }, "invalid_request", false},
		{"implicit flow", func(q url.Values) { q.Set("response_type", "token") }, "unsupported_response_type", true},
		{"no pkce", func(q url.Values) { q.Del("code_challenge"); q.Del("code_challenge_method") }, "invalid_request", true},
		{"plain pkce", func(q url.Values) { q.Set("code_challenge_method", "plain") }, "invalid_request", true},
		{"short challenge", func(q url.Values) { q.Set("code_challenge", "abc") }, "invalid_request", true},
		{"no resource", func(q url.Values) { q.Del("resource") }, "invalid_request", true},
		{"other resource", func(q url.Values) { q.Set("resource", "https://other.example/mcp") }, "invalid_target", true},
		{"two resources", func(q url.Values) { q.Add("resource", s.URL+"/mcp") }, "invalid_target", true},
		{"unknown scope", func(q url.Values) { q.Set("scope", "world:read admin") }, "invalid_scope", true},
		{"star scope", func(q url.Values) { q.Set("scope", "*") }, "invalid_scope", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := f.authorizeQuery("world:read")
			tc.edit(q)
			before := s.Fingerprint(t)
			resp, b := f.do("GET", "/authorize?"+q.Encode(), nil, nil)
			loc := resp.Header.Get("Location")
			if tc.redirect {
				u, _ := url.Parse(loc)
				if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, f.redirect+"?") || u.Query().Get("error") != tc.code || u.Query().Get("state") != f.state {
					t.Fatalf("got %d Location %q, want a redirect to the client with error=%s", resp.StatusCode, loc, tc.code)
				}
			} else if resp.StatusCode != http.StatusBadRequest || loc != "" || !strings.Contains(string(b), tc.code) {
				t.Fatalf("got %d Location %q body %s, want an error page (%s)", resp.StatusCode, loc, b, tc.code)
			}
			// The consent page and its form check the request the same way.
			resp, _ = f.do("GET", authserver.DefaultConsentPath+"?"+q.Encode(), nil, map[string]string{"Cookie": "wf_session=" + f.cookie})
			if got := resp.Header.Get("Location"); (tc.redirect && !strings.HasPrefix(got, f.redirect+"?")) || (!tc.redirect && got != "") {
				t.Fatalf("consent page: %d Location %q", resp.StatusCode, got)
			}
			unchanged(t, s, before, tc.name)
		})
	}

	// Denying sends access_denied and writes nothing.
	csrf, request := f.consentForm(f.authorizeQuery("world:read"))
	before := s.Fingerprint(t)
	resp, _ := f.decide(csrf, request, "deny")
	if u, _ := url.Parse(resp.Header.Get("Location")); resp.StatusCode != http.StatusSeeOther || u.Query().Get("error") != "access_denied" || u.Query().Get("state") != f.state {
		t.Fatalf("deny: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	// Approving a scope not asked for, or none at all, is refused.
	for _, scopes := range [][]string{{"world:write"}, {"*"}, nil} {
		resp, _ := f.decide(csrf, request, "approve", scopes...)
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("approve %v: %d", scopes, resp.StatusCode)
		}
	}
	// Without the CSRF token nothing happens.
	if resp, _ := f.decide("forged", request, "approve", "world:read"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("forged consent: %d", resp.StatusCode)
	}
	unchanged(t, s, before, "deny and refused approvals")

	// Not signed in: the consent page sends the person to sign in and
	// back.
	resp, _ = f.do("GET", authserver.DefaultConsentPath+"?"+f.authorizeQuery("world:read").Encode(), nil, nil)
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/signin?next=%2Foauth%2Fconsent") {
		t.Fatalf("signed out: %d %q", resp.StatusCode, loc)
	}
}

// TestTokenBadInput: each bad token request gets its RFC 6749 §5.2
// error and writes nothing; the code is still good afterwards.
func TestTokenBadInput(t *testing.T) {
	s := start(t, nil)
	f := newFlow(t, s)
	code := f.code("world:read")
	good := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {f.clientID},
		"redirect_uri": {f.redirect}, "code_verifier": {f.verifier}, "resource": {s.URL + "/mcp"}}
	cases := []struct {
		name   string
		edit   func(q url.Values)
		code   string
		status int
	}{
		{"pkce verifier mismatch", func(q url.Values) { q.Set("code_verifier", strings.Repeat("x", 43)) }, "invalid_grant", 400},
		{"no verifier", func(q url.Values) { q.Del("code_verifier") }, "invalid_request", 400},
		{"short verifier", func(q url.Values) { q.Set("code_verifier", "abc") }, "invalid_grant", 400},
		{"other client", func(q url.Values) { q.Set("client_id", "client_other") }, "invalid_grant", 400},
		{"other redirect", func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1:9/other") }, "invalid_grant", 400},
		{"no redirect", func(q url.Values) { q.Del("redirect_uri") }, "invalid_grant", 400},
		{"other resource", func(q url.Values) { q.Set("resource", "https://other.example/mcp") }, "invalid_target", 400},
		{"unknown code", func(q url.Values) { q.Set("code", "wfc_"+strings.Repeat("a", 32)) }, "invalid_grant", 400},
		{"malformed code", func(q url.Values) { q.Set("code", "nope") }, "invalid_grant", 400},
		{"password grant", func(q url.Values) { q.Set("grant_type", "password") }, "unsupported_grant_type", 400},
		{"client credentials", func(q url.Values) { q.Set("grant_type", "client_credentials") }, "unsupported_grant_type", 400},
		{"no grant type", func(q url.Values) { q.Del("grant_type") }, "invalid_request", 400},
		{"code twice in the form", func(q url.Values) { q.Add("code", "x") }, "invalid_request", 400},
		{"unknown refresh token", func(q url.Values) {
			q.Set("grant_type", "refresh_token")
			q.Set("refresh_token", "wfr_"+strings.Repeat("a", 32))
		}, "invalid_grant", 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := url.Values{}
			for k, v := range good {
				q[k] = append([]string(nil), v...)
			}
			tc.edit(q)
			before := s.Fingerprint(t)
			tr := f.post("/token", q)
			if tr.Status != tc.status || tr.Error != tc.code || tr.AccessToken != "" {
				t.Fatalf("got %d %q, want %d %s", tr.Status, tr.Error, tc.status, tc.code)
			}
			unchanged(t, s, before, tc.name)
		})
	}
	// Not a form: invalid_request.
	resp, _ := f.do("POST", "/token", strings.NewReader(`{"grant_type":"authorization_code"}`), map[string]string{"Content-Type": "application/json"})
	if resp.StatusCode != 400 {
		t.Fatalf("JSON body: %d", resp.StatusCode)
	}
	// A client with one redirect URI may leave it out of both requests.
	q := f.authorizeQuery("world:read")
	q.Del("redirect_uri")
	csrf, request := f.consentForm(q)
	resp, _ = f.decide(csrf, request, "approve", "world:read")
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if !strings.HasPrefix(loc.String(), f.redirect+"?") {
		t.Fatalf("without redirect_uri: redirected to %s", loc)
	}
	noRedirect := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "client_id": {f.clientID}, "code_verifier": {f.verifier}}
	if tr := f.post("/token", noRedirect); tr.Status != 200 {
		t.Fatalf("token without redirect_uri: %+v", tr)
	}
	// After all that the code still works, once.
	if tr := f.post("/token", good); tr.Status != 200 {
		t.Fatalf("the code after the refusals: %+v", tr)
	}
}

// TestCodeReuse: a code presented a second time is refused, and the
// tokens its first use made are revoked.
func TestCodeReuse(t *testing.T) {
	s := start(t, nil)
	f := newFlow(t, s)
	code := f.code("world:read")
	tr := f.exchange(code)
	if tr.Status != 200 {
		t.Fatalf("first use: %+v", tr)
	}
	if again := f.exchange(code); again.Error != "invalid_grant" {
		t.Fatalf("second use: %+v", again)
	}
	if status, _, _ := f.mcpCall(tr.AccessToken, "read_world", map[string]any{"id": s.World.ID}); status != 401 {
		t.Fatalf("access token of a reused code: %d", status)
	}
	if r := f.refresh(tr.RefreshToken); r.Error != "invalid_grant" {
		t.Fatalf("refresh token of a reused code: %+v", r)
	}
}

// TestCodeExpired: a code past its lifetime is invalid_grant and stays
// unused.
func TestCodeExpired(t *testing.T) {
	var skew atomic.Int64
	s := start(t, func(o *authserver.Options) {
		o.Now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	})
	f := newFlow(t, s)
	code := f.code("world:read")
	skew.Store(int64(authserver.DefaultCodeTTL + time.Second))
	before := s.Fingerprint(t)
	if tr := f.exchange(code); tr.Error != "invalid_grant" {
		t.Fatalf("expired code: %+v", tr)
	}
	unchanged(t, s, before, "an expired code")
}

// TestRefreshReuse: a rotated refresh token presented again is refused
// and revokes its whole family, the newest tokens included.
func TestRefreshReuse(t *testing.T) {
	s := start(t, nil)
	f := newFlow(t, s)
	tr := f.tokens("world:read")
	tr2 := f.refresh(tr.RefreshToken)
	if tr2.Status != 200 {
		t.Fatalf("refresh: %+v", tr2)
	}
	if r := f.refresh(tr.RefreshToken); r.Error != "invalid_grant" {
		t.Fatalf("reuse: %+v", r)
	}
	if status, _, _ := f.mcpCall(tr2.AccessToken, "read_world", map[string]any{"id": s.World.ID}); status != 401 {
		t.Fatalf("access token of a revoked family: %d", status)
	}
	if r := f.refresh(tr2.RefreshToken); r.Error != "invalid_grant" {
		t.Fatalf("newest refresh token of a revoked family: %+v", r)
	}
	// Another client cannot refresh or revoke the tokens of this one.
	g := newFlow(t, s)
	tr3 := f.tokens("world:read")
	if r := g.refresh(tr3.RefreshToken); r.Error != "invalid_grant" {
		t.Fatalf("refresh by another client: %+v", r)
	}
	if r := g.post("/revoke", url.Values{"token": {tr3.AccessToken}, "client_id": {g.clientID}}); r.Status != 200 {
		t.Fatalf("revoke by another client: %+v", r)
	}
	if status, _, _ := f.mcpCall(tr3.AccessToken, "read_world", map[string]any{"id": s.World.ID}); status != 200 {
		t.Fatalf("another client's revocation took effect: %d", status)
	}
}

// TestWrongResource: a token bound to this server's /mcp is refused by a
// server with another public URL on the same database.
func TestWrongResource(t *testing.T) {
	s := start(t, nil)
	f := newFlow(t, s)
	tr := f.tokens("world:read")
	other, err := auth.New(context.Background(), s.DB, &auth.Options{Resource: "https://other.example/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Authenticate(context.Background(), tr.AccessToken); !errors.Is(err, wf.ErrUnauthorized) {
		t.Fatalf("token for another resource: %v", err)
	}
	if a, err := s.Auth.Authenticate(context.Background(), tr.AccessToken); err != nil || a.Kind != wf.CredentialOAuth || len(a.Scopes) != 1 || a.Scopes[0] != "world:read" {
		t.Fatalf("token for this resource: %+v %v", a, err)
	}
	// A refresh token is not an access token.
	if _, err := s.Auth.Authenticate(context.Background(), tr.RefreshToken); !errors.Is(err, wf.ErrUnauthorized) {
		t.Fatalf("refresh token as bearer: %v", err)
	}
}

// TestRegisterBadInput: bad registrations get RFC 7591's errors and
// store nothing.
func TestRegisterBadInput(t *testing.T) {
	s := start(t, nil)
	f := &flow{t: t, s: s}
	cases := []struct{ name, body, code string }{
		{"http redirect", `{"redirect_uris":["http://example.com/cb"]}`, "invalid_redirect_uri"},
		{"javascript redirect", `{"redirect_uris":["javascript:alert(1)"]}`, "invalid_redirect_uri"},
		{"no redirect", `{"client_name":"x"}`, "invalid_redirect_uri"},
		{"malformed", `{"redirect_uris":`, "invalid_client_metadata"},
		{"not an object", `[1,2]`, "invalid_client_metadata"},
		{"implicit grant", `{"redirect_uris":["https://a.example/cb"],"grant_types":["implicit"]}`, "invalid_client_metadata"},
		{"oversized", `{"redirect_uris":["https://a.example/cb"],"client_name":"` + strings.Repeat("x", 20000) + `"}`, "invalid_client_metadata"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := s.Fingerprint(t)
			resp, b := f.do("POST", "/register", strings.NewReader(tc.body), map[string]string{"Content-Type": "application/json"})
			if resp.StatusCode != 400 || !strings.Contains(string(b), `"error":"`+tc.code+`"`) {
				t.Fatalf("got %d %s, want 400 %s", resp.StatusCode, b, tc.code)
			}
			unchanged(t, s, before, tc.name)
		})
	}
}

// TestMetadataDocumentClient: a client whose client_id is an https URL
// is read from its document; one that times out, answers garbage or
// names an internal address is refused (an error page: its redirect URIs
// are unknown) and nothing is stored.
func TestMetadataDocumentClient(t *testing.T) {
	var doc atomic.Value
	stall := make(chan struct{})
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-stall:
			}
		case "/garbage":
			w.Write([]byte("<html>not json</html>"))
		default:
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(doc.Load().(string)))
		}
	}))
	defer ts.Close()
	defer close(stall)
	s := start(t, func(o *authserver.Options) {
		o.Fetcher = &clientmeta.Fetcher{Client: ts.Client(), AllowInternal: true, Timeout: 300 * time.Millisecond}
	})
	f := newFlow(t, s)
	f.clientID = ts.URL + "/client.json"
	doc.Store(`{"client_id":"` + f.clientID + `","client_name":"Doc Agent","redirect_uris":["` + f.redirect + `"]}`)
	tr := f.tokens("world:read")
	if status, _, body := f.mcpCall(tr.AccessToken, "read_world", map[string]any{"id": s.World.ID}); status != 200 {
		t.Fatalf("read_world: %d %s", status, body)
	}
	for _, id := range []string{ts.URL + "/slow", ts.URL + "/garbage"} {
		f.clientID = id
		before := s.Fingerprint(t)
		resp, b := f.do("GET", "/authorize?"+f.authorizeQuery("world:read").Encode(), nil, nil)
		if resp.StatusCode != 400 || resp.Header.Get("Location") != "" || !strings.Contains(string(b), "invalid_client") {
			t.Fatalf("%s: %d %q %s", id, resp.StatusCode, resp.Header.Get("Location"), b)
		}
		unchanged(t, s, before, id)
	}

	// Without AllowInternal, a document on a loopback address is never
	// fetched.
	s2 := start(t, func(o *authserver.Options) { o.Fetcher = &clientmeta.Fetcher{Client: ts.Client()} })
	g := newFlow(t, s2)
	g.clientID = ts.URL + "/client.json"
	resp, _ := g.do("GET", "/authorize?"+g.authorizeQuery("world:read").Encode(), nil, nil)
	if resp.StatusCode != 400 || resp.Header.Get("Location") != "" {
		t.Fatalf("internal document: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestRevocationReplicas: a grant revoked through one server is refused
// by another server on the same database once its cached answer (at
// most the cache TTL old) expires, and by the revoking server at once;
// an access token past its lifetime is refused.
func TestRevocationReplicas(t *testing.T) {
	s := start(t, nil)
	f := newFlow(t, s)
	tr := f.tokens("world:read")
	var skew atomic.Int64
	replica, err := auth.New(context.Background(), s.DB, &auth.Options{Resource: s.URL + "/mcp",
		Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := replica.Authenticate(context.Background(), tr.AccessToken); err != nil {
		t.Fatalf("replica before revocation: %v", err)
	}
	if r := f.post("/revoke", url.Values{"token": {tr.AccessToken}, "client_id": {f.clientID}}); r.Status != 200 {
		t.Fatalf("revoke: %+v", r)
	}
	if _, err := s.Auth.Authenticate(context.Background(), tr.AccessToken); !errors.Is(err, wf.ErrUnauthorized) {
		t.Fatalf("revoking server: %v", err)
	}
	skew.Store(int64(auth.DefaultCacheTTL))
	if _, err := replica.Authenticate(context.Background(), tr.AccessToken); !errors.Is(err, wf.ErrUnauthorized) {
		t.Fatalf("replica one cache TTL after revocation: %v", err)
	}

	tr2 := f.tokens("world:read")
	skew.Store(int64(authserver.DefaultAccessTTL + time.Second))
	if _, err := replica.Authenticate(context.Background(), tr2.AccessToken); !errors.Is(err, wf.ErrUnauthorized) {
		t.Fatalf("expired access token: %v", err)
	}
}

// TestDisconnectApp: the keys page's Revoke ends every token the app
// holds for the person; the app is no longer listed.
func TestDisconnectApp(t *testing.T) {
	s := start(t, nil)
	f := newFlow(t, s)
	audited := s.AuditCount(t)
	tr := f.tokens("world:read")
	tr2 := f.tokens("world:read")
	if n := s.AuditCount(t) - audited; n != 2 {
		t.Fatalf("two consents wrote %d audit rows, want 2", n)
	}
	resp, b := f.do("GET", "/keys", nil, map[string]string{"Cookie": "wf_session=" + f.cookie})
	m := csrfRE.FindSubmatch(b)
	if resp.StatusCode != 200 || m == nil || strings.Count(string(b), `class="app"`) != 1 {
		t.Fatalf("keys page: %d, want one connected app", resp.StatusCode)
	}
	form := url.Values{"csrf": {string(m[1])}, "client": {f.clientID}}
	resp, _ = f.do("POST", "/keys/apps/revoke", strings.NewReader(form.Encode()),
		map[string]string{"Cookie": "wf_session=" + f.cookie, "Content-Type": "application/x-www-form-urlencoded"})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke app: %d", resp.StatusCode)
	}
	if n := s.AuditCount(t) - audited; n != 3 {
		t.Fatalf("consents and disconnect wrote %d audit rows, want 3", n)
	}
	for _, tok := range []string{tr.AccessToken, tr2.AccessToken} {
		if status, _, _ := f.mcpCall(tok, "read_world", map[string]any{"id": s.World.ID}); status != 401 {
			t.Fatalf("token of a disconnected app: %d", status)
		}
	}
	if r := f.refresh(tr2.RefreshToken); r.Error != "invalid_grant" {
		t.Fatalf("refresh of a disconnected app: %+v", r)
	}
	_, b = f.do("GET", "/keys", nil, map[string]string{"Cookie": "wf_session=" + f.cookie})
	if strings.Contains(string(b), `class="app"`) {
		t.Fatal("disconnected app still listed")
	}
}

// TestChallenges: 401s from REST and /mcp name the resource metadata.
func TestChallenges(t *testing.T) {
	s := start(t, nil)
	f := &flow{t: t, s: s}
	want := `resource_metadata="` + s.URL + `/.well-known/oauth-protected-resource/mcp"`
	for _, h := range []map[string]string{nil, {"Authorization": "Bearer wfa_" + strings.Repeat("a", 32)}, {"Authorization": "Basic eDp5"}} {
		resp, _ := f.do("GET", "/me", nil, h)
		if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), want) {
			t.Fatalf("GET /me %v: %d %q", h, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
	resp, _ := f.do("GET", "/mcp", nil, map[string]string{"Accept": "text/event-stream"})
	if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), want) {
		t.Fatalf("GET /mcp: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	// A REST route's 401 names the scopes a token for it needs.
	resp, _ = f.do("POST", "/auto-accept-rules", strings.NewReader(`{}`), map[string]string{"Content-Type": "application/json"})
	if wa := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || !strings.Contains(wa, want) || !strings.Contains(wa, `scope="world:write"`) {
		t.Fatalf("POST /auto-accept-rules: %d %q", resp.StatusCode, wa)
	}
}

// TestConcurrentClaims sends one code, then one refresh token, to
// /token from many goroutines at once: exactly one request wins, every
// other is invalid_grant, and the winner's tokens end revoked (a second
// use means a copy exists).
func TestConcurrentClaims(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) { testConcurrentClaims(t, startOn(t, db, nil)) })
}

func testConcurrentClaims(t *testing.T, s *testserver.Server) {
	f := newFlow(t, s)
	const n = 16
	claim := func(send func() tokenResp) (winner tokenResp) {
		t.Helper()
		results := make(chan tokenResp, n)
		start := make(chan struct{})
		for range n {
			go func() {
				<-start
				results <- send()
			}()
		}
		close(start)
		wins := 0
		for range n {
			r := <-results
			switch {
			case r.Status == 200:
				wins++
				winner = r
			case r.Error != "invalid_grant":
				t.Errorf("a losing request got %+v, want invalid_grant", r)
			}
		}
		if wins != 1 {
			t.Fatalf("%d requests won, want 1", wins)
		}
		return winner
	}
	code := f.code("world:read")
	won := claim(func() tokenResp { return f.exchange(code) })
	if status, _, _ := f.mcpCall(won.AccessToken, "read_world", map[string]any{"id": s.World.ID}); status != 401 {
		t.Fatalf("token of a code used %d times: %d", n, status)
	}
	tr := f.tokens("world:read")
	won = claim(func() tokenResp { return f.refresh(tr.RefreshToken) })
	if status, _, _ := f.mcpCall(won.AccessToken, "read_world", map[string]any{"id": s.World.ID}); status != 401 {
		t.Fatalf("token of a refresh token used %d times: %d", n, status)
	}
}
