package authserver_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/worldforge-go/worldforge/authserver"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// start runs a server with the console and OAuth on a fresh SQLite store.
func start(t *testing.T, adjust func(*authserver.Options)) *testserver.Server {
	t.Helper()
	db, err := sqlstore.Open(context.Background(), filepath.Join(t.TempDir(), "wf.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return startOn(t, db, adjust)
}

// startOn is start on the given store.
func startOn(t *testing.T, db *sqlstore.DB, adjust func(*authserver.Options)) *testserver.Server {
	t.Helper()
	return testserver.StartWith(t, db, testserver.Config{Console: true, OAuth: true, OAuthOptions: adjust})
}

// flow is one client's run through the authorization code flow.
type flow struct {
	t        *testing.T
	s        *testserver.Server
	cookie   string // the person's console session
	clientID string
	redirect string
	verifier string
	state    string
}

func newFlow(t *testing.T, s *testserver.Server) *flow {
	t.Helper()
	secret, _, err := s.Auth.CreateLoginLink(context.Background(), s.Owner.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	session, _, err := s.Auth.UseLoginLink(context.Background(), secret)
	if err != nil {
		t.Fatal(err)
	}
	f := &flow{t: t, s: s, cookie: session, redirect: "http://127.0.0.1:9/callback",
		verifier: strings.Repeat("v", 20) + "-verifier-0123456789abcdefghij", state: "st-1"}
	f.register()
	return f
}

func (f *flow) challenge() string {
	sum := sha256.Sum256([]byte(f.verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// do sends a request and returns the response with its body read.
func (f *flow) do(method, path string, body io.Reader, header map[string]string) (*http.Response, []byte) {
	f.t.Helper()
	u := path
	if strings.HasPrefix(path, "/") {
		u = f.s.URL + path
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		f.t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func (f *flow) getJSON(path string, v any) {
	f.t.Helper()
	resp, b := f.do("GET", path, nil, nil)
	if resp.StatusCode != 200 {
		f.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		f.t.Fatalf("GET %s: %v", path, err)
	}
}

func (f *flow) register() {
	f.t.Helper()
	resp, b := f.do("POST", "/register", strings.NewReader(`{"client_name":"Test Agent","redirect_uris":["`+f.redirect+`"],"grant_types":["authorization_code","refresh_token"],"response_types":["code"],"token_endpoint_auth_method":"none"}`),
		map[string]string{"Content-Type": "application/json"})
	if resp.StatusCode != http.StatusCreated {
		f.t.Fatalf("register: %d %s", resp.StatusCode, b)
	}
	var reg struct {
		ClientID string `json:"client_id"`
	}
	json.Unmarshal(b, &reg)
	f.clientID = reg.ClientID
}

// authorizeQuery is a valid authorization request's query.
func (f *flow) authorizeQuery(scope string) url.Values {
	return url.Values{
		"response_type": {"code"}, "client_id": {f.clientID}, "redirect_uri": {f.redirect}, "state": {f.state},
		"code_challenge": {f.challenge()}, "code_challenge_method": {"S256"}, "scope": {scope}, "resource": {f.s.URL + "/mcp"},
	}
}

var (
	csrfRE    = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	requestRE = regexp.MustCompile(`name="request" value="([^"]+)"`)
)

// consentForm follows /authorize to the consent page and returns its
// form's csrf and request fields.
func (f *flow) consentForm(q url.Values) (csrf, request string) {
	f.t.Helper()
	resp, b := f.do("GET", "/authorize?"+q.Encode(), nil, nil)
	if resp.StatusCode != http.StatusSeeOther {
		f.t.Fatalf("authorize: %d %s", resp.StatusCode, b)
	}
	loc := resp.Header.Get("Location")
	resp, b = f.do("GET", loc, nil, map[string]string{"Cookie": "wf_session=" + f.cookie})
	if resp.StatusCode != http.StatusOK {
		f.t.Fatalf("consent page: %d %s", resp.StatusCode, b)
	}
	m1, m2 := csrfRE.FindSubmatch(b), requestRE.FindSubmatch(b)
	if m1 == nil || m2 == nil {
		f.t.Fatalf("consent page has no form: %s", b)
	}
	return html.UnescapeString(string(m1[1])), html.UnescapeString(string(m2[1]))
}

// decide posts the consent form and returns the redirect it answers.
func (f *flow) decide(csrf, request, decision string, scopes ...string) (*http.Response, []byte) {
	f.t.Helper()
	form := url.Values{"csrf": {csrf}, "request": {request}, "decision": {decision}, "scope": scopes}
	return f.do("POST", authserver.DefaultConsentPath, strings.NewReader(form.Encode()),
		map[string]string{"Cookie": "wf_session=" + f.cookie, "Content-Type": "application/x-www-form-urlencoded"})
}

// code runs authorize and consent and returns the code.
func (f *flow) code(scopes ...string) string {
	f.t.Helper()
	csrf, request := f.consentForm(f.authorizeQuery(strings.Join(scopes, " ")))
	resp, b := f.decide(csrf, request, "approve", scopes...)
	if resp.StatusCode != http.StatusSeeOther {
		f.t.Fatalf("consent: %d %s", resp.StatusCode, b)
	}
	u, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(u.String(), f.redirect+"?") {
		f.t.Fatalf("consent redirected to %q", resp.Header.Get("Location"))
	}
	if u.Query().Get("state") != f.state || u.Query().Get("iss") != f.s.URL {
		f.t.Fatalf("redirect %s: wrong state or iss", u)
	}
	return u.Query().Get("code")
}

// tokenResp is the token endpoint's answer, success or error.
type tokenResp struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	Scope        string `json:"scope"`
	Error        string `json:"error"`
	Status       int    `json:"-"`
}

func (f *flow) post(path string, form url.Values) tokenResp {
	f.t.Helper()
	resp, b := f.do("POST", path, strings.NewReader(form.Encode()), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	var tr tokenResp
	if len(b) > 0 {
		if err := json.Unmarshal(b, &tr); err != nil {
			f.t.Fatalf("POST %s: %d %q", path, resp.StatusCode, b)
		}
	}
	tr.Status = resp.StatusCode
	return tr
}

func (f *flow) exchange(code string) tokenResp {
	f.t.Helper()
	return f.post("/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {f.clientID},
		"redirect_uri": {f.redirect}, "code_verifier": {f.verifier}, "resource": {f.s.URL + "/mcp"}})
}

func (f *flow) refresh(rt string) tokenResp {
	f.t.Helper()
	return f.post("/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {f.clientID}})
}

// tokens runs the whole flow and returns its tokens.
func (f *flow) tokens(scopes ...string) tokenResp {
	f.t.Helper()
	tr := f.exchange(f.code(scopes...))
	if tr.Status != 200 || tr.AccessToken == "" || tr.RefreshToken == "" {
		f.t.Fatalf("token: %+v", tr)
	}
	return tr
}

// mcpCall posts a tools/call to /mcp and returns the status, the
// WWW-Authenticate header and the body.
func (f *flow) mcpCall(token, tool string, args map[string]any) (int, string, string) {
	f.t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	resp, b := f.do("POST", "/mcp", strings.NewReader(string(body)), h)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)
}
