package mcpkit

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/worldforge-go/worldforge/mcpkit/oauth"
)

// testAS is a real OAuth 2.1 authorization server for the tests: RFC 8414
// metadata, dynamic client registration, an authorization endpoint that
// approves at once (redirecting with code, state and iss), PKCE S256
// verification, refresh tokens, and the client credentials grant with
// client_secret_basic or private_key_jwt (ES256).
type testAS struct {
	t   testing.TB
	srv *httptest.Server

	// Set before use.
	metadataIssuer string   // default: the server's URL
	pkceMethods    []string // default S256; "-" for none
	ttl            int      // expires_in, seconds (default 3600)
	refresh        bool     // issue refresh tokens
	wrongIss       bool     // redirect with another issuer's iss
	brokenMetadata bool
	noRegistration bool
	ccClient       string // client credentials: the client's ID
	ccSecret       string // … and secret (client_secret_basic)
	ccKey          *ecdsa.PublicKey

	mu            sync.Mutex
	clients       map[string]testClient // client_id → registration
	codes         map[string]testCode
	tokens        map[string]testToken // access tokens
	refreshTokens map[string]testToken
	authorizeReqs []url.Values
	tokenReqs     []url.Values
	registrations int
	pkceVerified  int
	refreshes     int
	seenSecrets   []string // client secrets presented at the token endpoint
}

type testClient struct{ secret, redirect string }

type testCode struct {
	client, redirect, challenge, resource string
	scopes                                []string
}

type testToken struct {
	scopes   []string
	resource string
	expiry   time.Time
}

// newTestAS starts an authorization server; opts set its knobs before
// it serves.
func newTestAS(t testing.TB, opts ...func(*testAS)) *testAS {
	as := &testAS{t: t, ttl: 3600, clients: map[string]testClient{}, codes: map[string]testCode{},
		tokens: map[string]testToken{}, refreshTokens: map[string]testToken{}}
	for _, o := range opts {
		o(as)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", as.metadata)
	mux.HandleFunc("POST /register", as.register)
	mux.HandleFunc("GET /authorize", as.authorize)
	mux.HandleFunc("POST /token", as.token)
	as.srv = startServer(t, mux)
	return as
}

// startServer serves h on a loopback port; the server's fields are all
// set before it serves.
func startServer(t testing.TB, h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	srv.Start()
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

// requests returns copies of the authorization and token requests seen.
func (as *testAS) requests() (authorize, token []url.Values) {
	as.mu.Lock()
	defer as.mu.Unlock()
	return slices.Clone(as.authorizeReqs), slices.Clone(as.tokenReqs)
}

func (as *testAS) issuer() string {
	if as.metadataIssuer != "" {
		return as.metadataIssuer
	}
	return as.srv.URL
}

func (as *testAS) metadata(w http.ResponseWriter, _ *http.Request) {
	if as.brokenMetadata {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{not json")
		return
	}
	u := as.srv.URL
	m := map[string]any{
		"issuer": as.issuer(), "authorization_endpoint": u + "/authorize", "token_endpoint": u + "/token",
		"response_types_supported":                         []string{"code"},
		"grant_types_supported":                            []string{"authorization_code", "refresh_token", "client_credentials"},
		"token_endpoint_auth_methods_supported":            []string{"none", "client_secret_basic", "private_key_jwt"},
		"token_endpoint_auth_signing_alg_values_supported": []string{"ES256"},
		"authorization_response_iss_parameter_supported":   true,
	}
	if !as.noRegistration {
		m["registration_endpoint"] = u + "/register"
	}
	switch {
	case as.pkceMethods == nil:
		m["code_challenge_methods_supported"] = []string{"S256"}
	case as.pkceMethods[0] != "-":
		m["code_challenge_methods_supported"] = as.pkceMethods
	}
	writeJSON(w, http.StatusOK, m)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func (as *testAS) register(w http.ResponseWriter, r *http.Request) {
	var m oauthex.ClientRegistrationMetadata
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil || len(m.RedirectURIs) != 1 {
		oauthError(w, 400, "invalid_client_metadata", "want one redirect URI")
		return
	}
	id, secret := "client-"+rand.Text()[:8], ""
	if m.TokenEndpointAuthMethod != "none" {
		secret = "secret-" + rand.Text()
	}
	as.mu.Lock()
	as.clients[id] = testClient{secret: secret, redirect: m.RedirectURIs[0]}
	as.registrations++
	as.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{
		"client_id": id, "client_secret": secret, "redirect_uris": m.RedirectURIs,
		"token_endpoint_auth_method": m.TokenEndpointAuthMethod,
	})
}

func (as *testAS) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	as.mu.Lock()
	defer as.mu.Unlock()
	as.authorizeReqs = append(as.authorizeReqs, q)
	cl, ok := as.clients[q.Get("client_id")]
	if !ok || q.Get("redirect_uri") != cl.redirect || q.Get("response_type") != "code" {
		http.Error(w, "bad client or redirect", http.StatusBadRequest)
		return
	}
	if q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256" {
		http.Error(w, "PKCE S256 required", http.StatusBadRequest)
		return
	}
	code := rand.Text()
	as.codes[code] = testCode{client: q.Get("client_id"), redirect: cl.redirect, challenge: q.Get("code_challenge"),
		resource: q.Get("resource"), scopes: strings.Fields(q.Get("scope"))}
	back, _ := url.Parse(cl.redirect)
	bq := back.Query()
	bq.Set("code", code)
	bq.Set("state", q.Get("state"))
	bq.Set("iss", as.issuer())
	if as.wrongIss {
		bq.Set("iss", "https://evil.example")
	}
	back.RawQuery = bq.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// clientAuth authenticates the token request's client.
func (as *testAS) clientAuth(r *http.Request) (string, bool) {
	if id, secret, ok := r.BasicAuth(); ok {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
		as.seenSecrets = append(as.seenSecrets, secret)
		if id == as.ccClient && as.ccSecret != "" {
			return id, secret == as.ccSecret
		}
		cl, known := as.clients[id]
		return id, known && cl.secret != "" && cl.secret == secret
	}
	if r.PostForm.Get("client_assertion_type") == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
		tok, err := jwt.Parse(r.PostForm.Get("client_assertion"), func(*jwt.Token) (any, error) { return as.ccKey, nil },
			jwt.WithValidMethods([]string{"ES256"}), jwt.WithAudience(as.issuer()), jwt.WithIssuer(as.ccClient),
			jwt.WithSubject(as.ccClient), jwt.WithExpirationRequired())
		return as.ccClient, err == nil && tok.Valid && as.ccKey != nil
	}
	id := r.PostForm.Get("client_id")
	cl, known := as.clients[id]
	return id, known && cl.secret == ""
}

func (as *testAS) token(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	as.mu.Lock()
	defer as.mu.Unlock()
	f := r.PostForm
	as.tokenReqs = append(as.tokenReqs, f)
	client, ok := as.clientAuth(r)
	if !ok {
		oauthError(w, 401, "invalid_client", "client authentication failed")
		return
	}
	var grant testToken
	switch f.Get("grant_type") {
	case "authorization_code":
		c, known := as.codes[f.Get("code")]
		delete(as.codes, f.Get("code"))
		if !known || c.client != client || c.redirect != f.Get("redirect_uri") {
			oauthError(w, 400, "invalid_grant", "unknown code")
			return
		}
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge {
			oauthError(w, 400, "invalid_grant", "PKCE verification failed")
			return
		}
		as.pkceVerified++
		if f.Get("resource") != c.resource {
			oauthError(w, 400, "invalid_target", "resource differs from the authorization request's")
			return
		}
		grant = testToken{scopes: c.scopes, resource: c.resource}
	case "refresh_token":
		rt, known := as.refreshTokens[f.Get("refresh_token")]
		if !known {
			oauthError(w, 400, "invalid_grant", "unknown refresh token")
			return
		}
		delete(as.refreshTokens, f.Get("refresh_token"))
		if f.Get("resource") != rt.resource {
			oauthError(w, 400, "invalid_target", "resource differs")
			return
		}
		as.refreshes++
		grant = rt
	case "client_credentials":
		if client != as.ccClient {
			oauthError(w, 400, "unauthorized_client", "not a client credentials client")
			return
		}
		grant = testToken{scopes: strings.Fields(f.Get("scope")), resource: f.Get("resource")}
	default:
		oauthError(w, 400, "unsupported_grant_type", f.Get("grant_type"))
		return
	}
	access := "at-" + rand.Text()
	grant.expiry = time.Now().Add(time.Duration(as.ttl) * time.Second)
	as.tokens[access] = grant
	resp := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": as.ttl,
		"scope": strings.Join(grant.scopes, " ")}
	if as.refresh && f.Get("grant_type") != "client_credentials" {
		rt := "rt-" + rand.Text()
		as.refreshTokens[rt] = grant
		resp["refresh_token"] = rt
	}
	writeJSON(w, http.StatusOK, resp)
}

// verifier is the resource server's token check (for auth.RequireBearerToken):
// a token this server issued for resource.
func (as *testAS) verifier(resource string) auth.TokenVerifier {
	return func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		as.mu.Lock()
		defer as.mu.Unlock()
		tok, ok := as.tokens[token]
		if !ok || tok.resource != resource {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Scopes: tok.scopes, Expiration: tok.expiry}, nil
	}
}

func (as *testAS) revokeAccessTokens() {
	as.mu.Lock()
	clear(as.tokens)
	as.mu.Unlock()
}

func (as *testAS) counts() (authorizations, tokenRequests, registrations, pkce, refreshes int) {
	as.mu.Lock()
	defer as.mu.Unlock()
	return len(as.authorizeReqs), len(as.tokenReqs), as.registrations, as.pkceVerified, as.refreshes
}

// testRS is an MCP server behind auth.RequireBearerToken, with protected
// resource metadata at the path-based well-known location.
type testRS struct {
	url  string // the server's base URL
	prm  oauthex.ProtectedResourceMetadata
	path string // the MCP endpoint's path
}

// rsOptions shape a testRS.
type rsOptions struct {
	sse       bool
	scopes    func(method string) []string // required scopes per JSON-RPC method
	supported []string                     // scopes_supported
	resource  string                       // override the PRM's resource
	noAS      bool                         // PRM without authorization servers
	asURL     string                       // override the PRM's authorization server
}

func newTestRS(t testing.TB, as *testAS, o rsOptions) *testRS {
	rs := &testRS{path: "/mcp"}
	if o.sse {
		rs.path = "/sse"
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1.0.0"}, nil)
	type echoIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	var inner http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	if o.sse {
		inner = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource"+rs.path, func(w http.ResponseWriter, r *http.Request) {
		auth.ProtectedResourceMetadataHandler(&rs.prm).ServeHTTP(w, r)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		var scopes []string
		if o.scopes != nil {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
			}
			json.Unmarshal(body, &msg)
			scopes = o.scopes(msg.Method)
		}
		auth.RequireBearerToken(as.verifier(rs.prm.Resource), &auth.RequireBearerTokenOptions{
			ResourceMetadataURL: rs.url + "/.well-known/oauth-protected-resource" + rs.path,
			Scopes:              scopes,
		})(inner).ServeHTTP(w, r)
	})
	hs := httptest.NewUnstartedServer(mux) // its listener is open: the URL is known
	rs.url = "http://" + hs.Listener.Addr().String()
	rs.prm = oauthex.ProtectedResourceMetadata{Resource: rs.url + rs.path, AuthorizationServers: []string{as.srv.URL},
		ScopesSupported: o.supported}
	if o.resource != "" {
		rs.prm.Resource = o.resource
	}
	if o.noAS {
		rs.prm.AuthorizationServers = nil
	}
	if o.asURL != "" {
		rs.prm.AuthorizationServers = []string{o.asURL}
	}
	hs.Start()
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	return rs
}

func (rs *testRS) config(o *oauth.Config) ServerConfig {
	kind := TransportHTTP
	if rs.path == "/sse" {
		kind = TransportSSE
	}
	return ServerConfig{Name: "protected", Kind: kind, URL: rs.url + rs.path, OAuth: o}
}

// quietOAuth gives the client a logger that discards (the flow logs at info).
func quietOAuth(o *ClientOptions) *ClientOptions {
	if o == nil {
		o = &ClientOptions{}
	}
	o.Logger = quiet
	return o
}

func echo(t testing.TB, c *Client, text string) {
	t.Helper()
	res, err := c.CallTool(ctxTimeout(t, 20*time.Second), "echo", map[string]any{"text": text})
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	if got := resultText(res); got != text {
		t.Fatalf("echo = %q, want %q", got, text)
	}
}

func TestOAuthAuthorizationCode(t *testing.T) {
	t.Parallel()
	for _, sse := range []bool{false, true} {
		t.Run(map[bool]string{false: "streamable", true: "sse"}[sse], func(t *testing.T) {
			t.Parallel()
			as := newTestAS(t)
			rs := newTestRS(t, as, rsOptions{sse: sse, supported: []string{"mcp:read", "mcp:write"}})
			c := connected(t, rs.config(&oauth.Config{}), quietOAuth(nil))
			echo(t, c, "one")
			echo(t, c, "two")

			authz, tokens, regs, pkce, _ := as.counts()
			if authz != 1 || tokens != 1 || regs != 1 || pkce != 1 {
				t.Errorf("authorizations %d, token requests %d, registrations %d, PKCE verified %d: want 1 each", authz, tokens, regs, pkce)
			}
			authReqs, tokenReqs := as.requests()
			q := authReqs[0]
			if q.Get("resource") != rs.prm.Resource || tokenReqs[0].Get("resource") != rs.prm.Resource {
				t.Errorf("resource = %q / %q, want %q", q.Get("resource"), tokenReqs[0].Get("resource"), rs.prm.Resource)
			}
			if q.Get("scope") != "mcp:read mcp:write" {
				t.Errorf("scope = %q, want the PRM's scopes_supported", q.Get("scope"))
			}
			if q.Get("code_challenge_method") != "S256" || q.Get("redirect_uri") != oauth.DefaultRedirectURI {
				t.Errorf("authorization request %v", q)
			}

			// Tokens belong to the Client: another one authorizes anew.
			c.Close()
			c2 := NewClient(rs.config(&oauth.Config{}), quietOAuth(nil))
			defer c2.Close()
			if err := c2.Connect(ctxTimeout(t, 20*time.Second)); err != nil {
				t.Fatal(err)
			}
			if authz, _, _, _, _ := as.counts(); authz != 2 {
				t.Errorf("a new Client authorized %d times in all, want 2 (tokens are per Client)", authz)
			}
		})
	}
}

func TestOAuthScopeFromChallenge(t *testing.T) {
	t.Parallel()
	as := newTestAS(t)
	rs := newTestRS(t, as, rsOptions{
		supported: []string{"mcp:read", "mcp:write", "mcp:admin"},
		scopes:    func(string) []string { return []string{"mcp:read"} },
	})
	c := connected(t, rs.config(&oauth.Config{Scopes: []string{"profile"}}), quietOAuth(nil))
	echo(t, c, "x")
	if authReqs, _ := as.requests(); authReqs[0].Get("scope") != "profile mcp:read" {
		got := authReqs[0].Get("scope")
		t.Errorf("scope = %q, want the configured scope and the challenge's", got)
	}
}

func TestOAuthRefresh(t *testing.T) {
	t.Parallel()
	t.Run("expired", func(t *testing.T) {
		t.Parallel()
		// x/oauth2 refreshes 10 s before expiry: at once.
		as := newTestAS(t, func(as *testAS) { as.ttl, as.refresh = 1, true })
		rs := newTestRS(t, as, rsOptions{})
		c := connected(t, rs.config(&oauth.Config{}), quietOAuth(nil))
		echo(t, c, "a")
		echo(t, c, "b")
		authz, _, _, _, refreshes := as.counts()
		if authz != 1 || refreshes < 2 {
			t.Errorf("authorizations %d, refreshes %d: want 1 and at least 2", authz, refreshes)
		}
		_, tokenReqs := as.requests()
		for _, f := range tokenReqs {
			if f.Get("grant_type") == "refresh_token" && f.Get("resource") != rs.prm.Resource {
				t.Errorf("refresh without the resource indicator: %v", f)
			}
		}
	})
	t.Run("revoked", func(t *testing.T) {
		t.Parallel()
		as := newTestAS(t, func(as *testAS) { as.refresh = true })
		rs := newTestRS(t, as, rsOptions{})
		c := connected(t, rs.config(&oauth.Config{}), quietOAuth(nil))
		as.revokeAccessTokens() // the server now answers 401 to the token we hold
		echo(t, c, "after revocation")
		authz, _, _, _, refreshes := as.counts()
		if authz != 1 || refreshes != 1 {
			t.Errorf("authorizations %d, refreshes %d: want the refresh token used, no new authorization", authz, refreshes)
		}
	})
}

func TestOAuthStepUp(t *testing.T) {
	t.Parallel()
	as := newTestAS(t)
	rs := newTestRS(t, as, rsOptions{scopes: func(method string) []string {
		if method == "tools/call" {
			return []string{"mcp:read", "mcp:write"}
		}
		return []string{"mcp:read"}
	}})
	c := connected(t, rs.config(&oauth.Config{}), quietOAuth(nil))
	echo(t, c, "needs write")
	echo(t, c, "again")
	authReqs, _ := as.requests()
	if len(authReqs) != 2 {
		t.Fatalf("%d authorizations, want 2", len(authReqs))
	}
	if first, second := authReqs[0].Get("scope"), authReqs[1].Get("scope"); first != "mcp:read" || second != "mcp:read mcp:write" {
		t.Errorf("scopes %q then %q, want mcp:read then the union", first, second)
	}

	// A server that always wants a scope it never grants: the client gives
	// up after a bounded number of tries.
	as2 := newTestAS(t)
	rs2 := newTestRS(t, as2, rsOptions{scopes: func(method string) []string {
		if method == "tools/call" {
			return []string{"mcp:" + rand.Text()} // a new scope every time
		}
		return nil
	}})
	c2 := connected(t, rs2.config(&oauth.Config{}), quietOAuth(nil))
	_, err := c2.CallTool(ctxTimeout(t, 20*time.Second), "echo", map[string]any{"text": "x"})
	wantError(t, err, CodeSessionError, "")
	if authReqs, _ := as2.requests(); len(authReqs) != 1+oauth.MaxStepUps {
		n := len(authReqs)
		t.Errorf("%d authorizations, want %d", n, 1+oauth.MaxStepUps)
	}
}

func TestOAuthClientCredentials(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	for _, tt := range []struct {
		name string
		cfg  oauth.Config
	}{
		{"client_secret_basic", oauth.Config{Grant: oauth.ClientCredentials, ClientID: "robot", ClientSecret: "s3cret"}},
		{"private_key_jwt", oauth.Config{Grant: oauth.ClientCredentials, ClientID: "robot", PrivateKey: keyPEM}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			as := newTestAS(t, func(as *testAS) { as.ccClient, as.ccSecret, as.ccKey = "robot", "s3cret", &key.PublicKey })
			rs := newTestRS(t, as, rsOptions{supported: []string{"mcp:read"}})
			cfg := tt.cfg
			c := connected(t, rs.config(&cfg), quietOAuth(nil))
			echo(t, c, "machine")
			authz, tokens, regs, _, _ := as.counts()
			if authz != 0 || regs != 0 || tokens != 1 {
				t.Errorf("authorizations %d, registrations %d, token requests %d: want 0, 0, 1", authz, regs, tokens)
			}
			_, tokenReqs := as.requests()
			f := tokenReqs[0]
			if f.Get("grant_type") != "client_credentials" || f.Get("scope") != "mcp:read" || f.Get("resource") != rs.prm.Resource {
				t.Errorf("token request %v", f)
			}
		})
	}
	t.Run("wrong secret", func(t *testing.T) {
		t.Parallel()
		as := newTestAS(t, func(as *testAS) { as.ccClient, as.ccSecret = "robot", "s3cret" })
		rs := newTestRS(t, as, rsOptions{})
		c := NewClient(rs.config(&oauth.Config{Grant: oauth.ClientCredentials, ClientID: "robot", ClientSecret: "hunter2"}), quietOAuth(nil))
		defer c.Close()
		err := c.Connect(ctxTimeout(t, 20*time.Second))
		e := wantError(t, err, CodeSessionError, "")
		if !strings.Contains(e.Error(), "invalid_client") || strings.Contains(e.Error(), "hunter2") {
			t.Errorf("error %q: want invalid_client, without the secret", e)
		}
	})
}

func TestOAuthBadMetadata(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		as    func(*testAS)
		rs    rsOptions
		cfg   oauth.Config
		want  string
		token bool // whether the token endpoint may be reached
	}{
		{name: "issuer mismatch", as: func(as *testAS) { as.metadataIssuer = "https://evil.example" }, want: `is for issuer "https://evil.example"`},
		{name: "no PKCE", as: func(as *testAS) { as.pkceMethods = []string{"-"} }, want: "does not support PKCE"},
		{name: "plain PKCE only", as: func(as *testAS) { as.pkceMethods = []string{"plain"} }, want: "does not support PKCE"},
		{name: "broken metadata", as: func(as *testAS) { as.brokenMetadata = true }, want: "bad metadata"},
		{name: "resource mismatch", rs: rsOptions{resource: "https://other.example/mcp"}, want: "which is not the server"},
		{name: "no authorization server", rs: rsOptions{noAS: true}, want: "lists no authorization server"},
		{name: "wrong iss", as: func(as *testAS) { as.wrongIss = true }, want: `issuer "https://evil.example"`},
		{name: "no way to register", as: func(as *testAS) { as.noRegistration = true }, want: "configure oauth.clientId"},
		{
			name: "client of another issuer",
			as:   func(as *testAS) { as.noRegistration = true },
			cfg:  oauth.Config{ClientID: "mine", ClientSecret: "topsecret", Issuer: "https://other-as.example"},
			want: "belongs to https://other-as.example",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var opts []func(*testAS)
			if tt.as != nil {
				opts = append(opts, tt.as)
			}
			as := newTestAS(t, opts...)
			rs := newTestRS(t, as, tt.rs)
			cfg := tt.cfg
			c := NewClient(rs.config(&cfg), quietOAuth(nil))
			defer c.Close()
			err := c.Connect(ctxTimeout(t, 20*time.Second))
			e := wantError(t, err, CodeSessionError, "")
			if !strings.Contains(e.Error(), tt.want) || !strings.Contains(e.Error(), "OAuth") {
				t.Errorf("error %q does not say %q", e, tt.want)
			}
			if strings.Contains(e.Error(), "topsecret") {
				t.Errorf("error %q shows the secret", e)
			}
			if _, tokens, _, _, _ := as.counts(); tokens > 0 {
				t.Errorf("the token endpoint was reached %d times", tokens)
			}
			if c.Phase() != PhaseFaulted {
				t.Errorf("phase %s, want faulted", c.Phase())
			}
		})
	}
}

func TestOAuthLoopbackAuthorizer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	redirect := fmt.Sprintf("http://%s/oauth/callback", ln.Addr())
	ln.Close()

	as := newTestAS(t)
	rs := newTestRS(t, as, rsOptions{})
	var opened []string
	var mu sync.Mutex
	browser := func(u string) error { // a browser: follows the redirect to the loopback listener
		mu.Lock()
		opened = append(opened, u)
		mu.Unlock()
		go func() {
			if resp, err := http.Get(u); err == nil {
				resp.Body.Close()
			}
		}()
		return nil
	}
	c := connected(t, rs.config(&oauth.Config{RedirectURI: redirect}), quietOAuth(&ClientOptions{OAuthAuthorize: oauth.LoopbackAuthorizer(browser)}))
	echo(t, c, "via browser")
	if len(opened) != 1 || !strings.HasPrefix(opened[0], as.srv.URL+"/authorize?") {
		t.Errorf("opened %v", opened)
	}

	// A hook that fails fails the connect with its error.
	as2 := newTestAS(t)
	rs2 := newTestRS(t, as2, rsOptions{})
	c2 := NewClient(rs2.config(&oauth.Config{}), quietOAuth(&ClientOptions{OAuthAuthorize: func(context.Context, *oauth.Authorization) (*url.URL, error) {
		return nil, errors.New("user closed the window")
	}}))
	defer c2.Close()
	e := wantError(t, c2.Connect(ctxTimeout(t, 20*time.Second)), CodeSessionError, "")
	if !strings.Contains(e.Error(), "user closed the window") {
		t.Errorf("error %q", e)
	}

	// Without a hook, an authorization endpoint that shows a page fails
	// clearly.
	page := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-authorization-server" {
			writeJSON(w, 200, map[string]any{"issuer": "http://" + r.Host, "authorization_endpoint": "http://" + r.Host + "/login",
				"token_endpoint": "http://" + r.Host + "/token", "code_challenge_methods_supported": []string{"S256"}})
			return
		}
		if r.URL.Path == "/login" { // a login form elsewhere, not the redirect URI
			http.Redirect(w, r, "/signin", http.StatusFound)
			return
		}
		io.WriteString(w, "<html>log in</html>")
	}))
	as3 := newTestAS(t)
	rs3 := newTestRS(t, as3, rsOptions{asURL: page.URL})
	c3 := NewClient(rs3.config(&oauth.Config{ClientID: "pre"}), quietOAuth(nil))
	defer c3.Close()
	e = wantError(t, c3.Connect(ctxTimeout(t, 20*time.Second)), CodeSessionError, "")
	if !strings.Contains(e.Error(), "OAuthAuthorize") {
		t.Errorf("error %q does not point at ClientOptions.OAuthAuthorize", e)
	}
}

func TestOAuthConfigRejectedAtConnect(t *testing.T) {
	t.Parallel()
	c := NewClient(ServerConfig{Name: "x", URL: "http://127.0.0.1:1/mcp", OAuth: &oauth.Config{Grant: "password"}}, quietOAuth(nil))
	defer c.Close()
	e := wantError(t, c.Connect(ctxTimeout(t, 10*time.Second)), CodeConfigError, "")
	if !strings.Contains(e.Error(), "oauth.grant") {
		t.Errorf("error %q does not name oauth.grant", e)
	}
}

func TestLoadConfigOAuth(t *testing.T) {
	env := newConfigEnv(t)
	env.vars["CC_SECRET"] = "from-env"
	env.vars["SECRET"] = "expanded"
	dir := t.TempDir()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	writeFile(t, filepath.Join(dir, "keys", "robot.pem"), keyPEM)
	path := writeFile(t, filepath.Join(dir, "mcp.json"), `{
		"mcpServers": {
			"user": {"type": "http", "url": "https://mcp.example.com/mcp",
			         "oauth": {"scopes": ["mcp:read", "mcp:write"], "redirectUri": "http://127.0.0.1:8976/cb",
			                   "clientMetadataUrl": "https://app.example.com/client.json", "dpop": true}},
			"robot": {"url": "https://mcp.example.com/mcp",
			          "oauth": {"grant": "client_credentials", "clientId": "robot", "clientSecretEnv": "CC_SECRET",
			                    "tokenEndpointAuthMethod": "client_secret_post"}}
		},
		"servers": [
			{"name": "keyed", "type": "sse", "url": "https://mcp.example.com/sse",
			 "oauth": {"grant": "client_credentials", "clientId": "k", "privateKeyFile": "keys/robot.pem"}},
			{"name": "pre", "url": "https://mcp.example.com/mcp",
			 "oauth": {"clientId": "app", "clientSecret": "${SECRET}", "issuer": "https://as.example.com"}},
			{"name": "workload", "url": "https://mcp.example.com/mcp",
			 "oauth": {"grant": "jwt_bearer", "clientId": "w", "assertionFile": "/var/run/token"}},
			{"name": "enterprise", "url": "https://mcp.example.com/mcp",
			 "oauth": {"grant": "jwt_bearer", "clientId": "app", "clientSecretEnv": "CC_SECRET",
			           "idp": {"tokenEndpoint": "https://idp.example.com/token", "clientId": "idp-app", "idTokenFile": "id.jwt"}}}
		]}`)
	cfg, err := env.load(path)
	if err != nil || len(cfg.Errors) > 0 {
		t.Fatal(err, cfg.Errors)
	}
	got := map[string]*oauth.Config{}
	for _, s := range cfg.Servers {
		got[s.Name] = s.OAuth
	}
	want := map[string]*oauth.Config{
		"user": {Scopes: []string{"mcp:read", "mcp:write"}, RedirectURI: "http://127.0.0.1:8976/cb",
			ClientMetadataURL: "https://app.example.com/client.json", DPoP: true},
		"robot":    {Grant: oauth.ClientCredentials, ClientID: "robot", ClientSecret: "from-env", TokenEndpointAuthMethod: oauth.AuthMethodClientSecretPost},
		"keyed":    {Grant: oauth.ClientCredentials, ClientID: "k", PrivateKey: keyPEM},
		"pre":      {ClientID: "app", ClientSecret: "expanded", Issuer: "https://as.example.com"},
		"workload": {Grant: oauth.JWTBearer, ClientID: "w", AssertionFile: "/var/run/token"},
		"enterprise": {Grant: oauth.JWTBearer, ClientID: "app", ClientSecret: "from-env", IdentityProvider: &oauth.IdentityProvider{
			TokenEndpoint: "https://idp.example.com/token", ClientID: "idp-app", IDTokenFile: filepath.Join(dir, "id.jwt")}},
	}
	for name, w := range want {
		g := got[name]
		if g == nil {
			t.Errorf("%s: no OAuth config", name)
			continue
		}
		gj, _ := json.Marshal(g)
		wj, _ := json.Marshal(w)
		if !bytes.Equal(gj, wj) {
			t.Errorf("%s:\n got %s\nwant %s", name, gj, wj)
		}
	}

	// SaveConfig writes the oauth section back.
	file := &ConfigFile{MCPServers: map[string]ServerEntry{"s": {URL: "https://h/mcp",
		OAuth: &oauth.Entry{ClientID: "c", ClientSecretEnv: "CC_SECRET", Scopes: []string{"a"}}}}}
	out := filepath.Join(t.TempDir(), "saved.json")
	if err := SaveConfig(out, file); err != nil {
		t.Fatal(err)
	}
	cfg, err = LoadConfig(LoadOptions{ExplicitFile: out, Getenv: env.getenv})
	if err != nil || len(cfg.Servers) != 1 || cfg.Servers[0].OAuth.ClientSecret != "from-env" {
		t.Errorf("saved and loaded: %+v, %v", cfg, err)
	}
}

func TestLoadConfigBadOAuth(t *testing.T) {
	const secret = "s3cr3t-value"
	tests := []struct {
		name  string
		entry string
		field string // expected ConfigIssue.Field
	}{
		{"not an object", `{"url": "http://h/", "oauth": "yes"}`, "oauth"},
		{"unknown key", `{"url": "http://h/", "oauth": {"clientID": "x"}}`, "oauth.clientID"},
		{"unknown idp key", `{"url": "http://h/", "oauth": {"grant": "jwt_bearer", "idp": {"token": "x"}}}`, "oauth.idp.token"},
		{"stdio server", `{"command": "x", "oauth": {}}`, "oauth"},
		{"with an Authorization header", `{"url": "http://h/", "headers": {"authorization": "Bearer x"}, "oauth": {}}`, "oauth"},
		{"scopes not a list", `{"url": "http://h/", "oauth": {"scopes": "a b"}}`, "oauth.scopes"},
		{"dpop not a bool", `{"url": "http://h/", "oauth": {"dpop": "yes"}}`, "oauth.dpop"},
		{"bad scope", `{"url": "http://h/", "oauth": {"scopes": ["a b"]}}`, "oauth.scopes[0]"},
		{"unknown grant", `{"url": "http://h/", "oauth": {"grant": "password"}}`, "oauth.grant"},
		{"unknown auth method", `{"url": "http://h/", "oauth": {"clientId": "c", "tokenEndpointAuthMethod": "tls_client_auth"}}`, "oauth.tokenEndpointAuthMethod"},
		{"secret without client id", `{"url": "http://h/", "oauth": {"clientSecret": "` + secret + `"}}`, "oauth.clientId"},
		{"http redirect off loopback", `{"url": "http://h/", "oauth": {"redirectUri": "http://example.com/cb"}}`, "oauth.redirectUri"},
		{"bad redirect", `{"url": "http://h/", "oauth": {"redirectUri": "::nope"}}`, "oauth.redirectUri"},
		{"http metadata document", `{"url": "http://h/", "oauth": {"clientMetadataUrl": "http://app.example.com/c.json"}}`, "oauth.clientMetadataUrl"},
		{"root metadata document", `{"url": "http://h/", "oauth": {"clientMetadataUrl": "https://app.example.com/"}}`, "oauth.clientMetadataUrl"},
		{"bad issuer", `{"url": "http://h/", "oauth": {"issuer": "as.example.com"}}`, "oauth.issuer"},
		{"client credentials without client id", `{"url": "http://h/", "oauth": {"grant": "client_credentials"}}`, "oauth.clientId"},
		{"client credentials without secret", `{"url": "http://h/", "oauth": {"grant": "client_credentials", "clientId": "c"}}`, "oauth.clientSecret"},
		{"client credentials with redirect", `{"url": "http://h/", "oauth": {"grant": "client_credentials", "clientId": "c", "clientSecret": "` + secret + `", "redirectUri": "http://127.0.0.1:1/cb"}}`, "oauth.redirectUri"},
		{"basic without secret", `{"url": "http://h/", "oauth": {"clientId": "c", "tokenEndpointAuthMethod": "client_secret_basic"}}`, "oauth.clientSecret"},
		{"none with secret", `{"url": "http://h/", "oauth": {"clientId": "c", "clientSecret": "` + secret + `", "tokenEndpointAuthMethod": "none"}}`, "oauth.tokenEndpointAuthMethod"},
		{"private_key_jwt without key", `{"url": "http://h/", "oauth": {"grant": "client_credentials", "clientId": "c", "tokenEndpointAuthMethod": "private_key_jwt"}}`, "oauth.privateKeyFile"},
		{"missing key file", `{"url": "http://h/", "oauth": {"grant": "client_credentials", "clientId": "c", "privateKeyFile": "/nonexistent/k.pem"}}`, "oauth.privateKeyFile"},
		{"key not PEM", `{"url": "http://h/", "oauth": {"grant": "client_credentials", "clientId": "c", "privateKeyEnv": "NOT_PEM"}}`, "oauth.privateKeyEnv"},
		{"secret and key", `{"url": "http://h/", "oauth": {"grant": "client_credentials", "clientId": "c", "clientSecret": "` + secret + `", "privateKeyEnv": "NOT_PEM"}}`, "oauth.privateKeyEnv"},
		{"secret twice", `{"url": "http://h/", "oauth": {"clientId": "c", "clientSecret": "` + secret + `", "clientSecretEnv": "S"}}`, "oauth.clientSecretEnv"},
		{"unset secret variable", `{"url": "http://h/", "oauth": {"clientId": "c", "clientSecretEnv": "UNSET_SECRET"}}`, "oauth.clientSecretEnv"},
		{"bad secret reference", `{"url": "http://h/", "oauth": {"clientId": "c", "clientSecret": "` + secret + `${"}}`, "oauth.clientSecret"},
		{"jwt bearer without assertion", `{"url": "http://h/", "oauth": {"grant": "jwt_bearer", "clientId": "c"}}`, "oauth.assertionFile"},
		{"assertion with auth code", `{"url": "http://h/", "oauth": {"assertionFile": "/t"}}`, "oauth.grant"},
		{"idp without token endpoint", `{"url": "http://h/", "oauth": {"grant": "jwt_bearer", "idp": {"clientId": "i", "idTokenFile": "/t"}}}`, "oauth.idp.tokenEndpoint"},
		{"idp without id token", `{"url": "http://h/", "oauth": {"grant": "jwt_bearer", "idp": {"tokenEndpoint": "https://idp/token", "clientId": "i"}}}`, "oauth.idp.idTokenFile"},
		{"signing algorithm without key", `{"url": "http://h/", "oauth": {"signingAlgorithm": "ES256"}}`, "oauth.signingAlgorithm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newConfigEnv(t)
			env.vars["NOT_PEM"] = secret
			path := writeFile(t, filepath.Join(t.TempDir(), "mcp.json"),
				fmt.Sprintf(`{"mcpServers": {"bad": %s, "good": {"command": "ok"}}}`, tt.entry))
			cfg, err := env.load(path)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(serverNames(cfg), []string{"good"}) || !slices.Equal(cfg.Disabled, []string{"bad"}) {
				t.Errorf("servers %v, disabled %v: want [good], [bad]", serverNames(cfg), cfg.Disabled)
			}
			if len(cfg.Errors) != 1 {
				t.Fatalf("errors = %v, want 1", cfg.Errors)
			}
			var e *Error
			if !errors.As(cfg.Errors[0], &e) || e.Code != CodeConfigError || e.Server != "bad" {
				t.Fatalf("error = %#v, want CONFIG_ERROR for server bad", cfg.Errors[0])
			}
			is, _ := e.Details.(ConfigIssue)
			if is.File != path || is.Field != tt.field {
				t.Errorf("details = %+v, want field %q", is, tt.field)
			}
			if msg := e.Error(); strings.Contains(msg, secret) || !strings.Contains(msg, tt.field) {
				t.Errorf("message %q: want the field named and no secret", msg)
			}
		})
	}
}

// TestLoadConfigOAuthReadmeExample loads the README's oauth example.
func TestLoadConfigOAuthReadmeExample(t *testing.T) {
	path := writeFile(t, filepath.Join(t.TempDir(), "mcp.json"), `{"mcpServers": {
  "notes": {"type": "http", "url": "https://notes.example.com/mcp",
            "oauth": {"scopes": ["notes:read"], "redirectUri": "http://127.0.0.1:33418/callback"}},
  "ci-bot": {"type": "http", "url": "https://build.example.com/mcp",
             "oauth": {"grant": "client_credentials", "clientId": "ci-bot",
                       "clientSecretEnv": "CI_BOT_SECRET", "tokenEndpointAuthMethod": "client_secret_basic"}}}}`)
	getenv := func(k string) string { return map[string]string{"CI_BOT_SECRET": "cbs"}[k] }
	cfg, err := LoadConfig(LoadOptions{ExplicitFile: path, Getenv: getenv})
	if err != nil || len(cfg.Errors) > 0 || len(cfg.Servers) != 2 {
		t.Fatal(err, cfg)
	}
	bot, notes := cfg.Servers[0].OAuth, cfg.Servers[1].OAuth
	if bot.Grant != oauth.ClientCredentials || bot.ClientSecret != "cbs" || notes.Scopes[0] != "notes:read" {
		t.Errorf("ci-bot %+v, notes %+v", bot, notes)
	}
}
