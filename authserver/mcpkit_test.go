package authserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/worldforge-go/worldforge/authserver"
	"github.com/worldforge-go/worldforge/authserver/clientmeta"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/mcpkit"
	"github.com/worldforge-go/worldforge/mcpkit/oauth"
)

// wireLog is the base transport of an mcpkit client: it records every
// request the client sends (the MCP requests and the OAuth flow's
// discovery, registration and token requests) with its answer, and keeps
// the token endpoint's answers.
type wireLog struct {
	mu      sync.Mutex
	entries []wireEntry
	tokens  []map[string]any // the token endpoint's JSON answers, in order
	reg     map[string]any   // the registration answer
}

type wireEntry struct {
	Method, Path, Grant string // Grant: a token request's grant_type
	ClientID            string // an authorization or token request's client_id
	Status              int
}

func (w *wireLog) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b strings.Builder
	for _, e := range w.entries {
		fmt.Fprintf(&b, "%s %s %s → %d\n", e.Method, e.Path, e.Grant, e.Status)
	}
	return b.String()
}

func (w *wireLog) RoundTrip(r *http.Request) (*http.Response, error) {
	e := wireEntry{Method: r.Method, Path: r.URL.Path}
	if r.URL.Path == "/token" && r.Body != nil {
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		form, _ := url.ParseQuery(string(body))
		e.Grant, e.ClientID = form.Get("grant_type"), form.Get("client_id")
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	e.Status = resp.StatusCode
	if r.URL.Path == "/token" || r.URL.Path == "/register" {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		var m map[string]any
		json.Unmarshal(body, &m)
		w.mu.Lock()
		if r.URL.Path == "/token" && resp.StatusCode == 200 {
			w.tokens = append(w.tokens, m)
		} else if r.URL.Path == "/register" {
			w.reg = m
		}
		w.mu.Unlock()
	}
	w.mu.Lock()
	w.entries = append(w.entries, e)
	w.mu.Unlock()
	return resp, nil
}

// count counts the requests to path (with the grant type, for /token).
func (w *wireLog) count(method, path, grant string, status int) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, e := range w.entries {
		if e.Method == method && e.Path == path && (grant == "" || e.Grant == grant) && (status == 0 || e.Status == status) {
			n++
		}
	}
	return n
}

func (w *wireLog) lastRefreshToken() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.tokens) == 0 {
		return ""
	}
	s, _ := w.tokens[len(w.tokens)-1]["refresh_token"].(string)
	return s
}

func callText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// mcpkitClient is an mcpkit client of s's /mcp, given nothing but the URL
// (and, for a metadata document client, its document's URL), whose user
// agent is the browser.
func mcpkitClient(t *testing.T, s *testserver.Server, b *testserver.Browser, wire *wireLog, cfg oauth.Config) *mcpkit.Client {
	t.Helper()
	c := mcpkit.NewClient(mcpkit.ServerConfig{
		Name: "worldforge", Kind: mcpkit.TransportHTTP, URL: s.MCPURL(), OAuth: &cfg,
		HTTPClient: &http.Client{Transport: wire, Timeout: 30 * time.Second},
	}, &mcpkit.ClientOptions{
		Implementation: &mcp.Implementation{Name: "mcpkit e2e", Version: "1.0"},
		Logger:         slog.New(slog.DiscardHandler),
		OAuthAuthorize: func(ctx context.Context, a *oauth.Authorization) (*url.URL, error) {
			return b.Approve(ctx, a.URL)
		},
	})
	t.Cleanup(func() { c.Close() })
	return c
}

func readWorld(t *testing.T, c *mcpkit.Client, s *testserver.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, "read_world", map[string]any{"id": s.World.ID})
	if err != nil {
		t.Fatalf("read_world: %v", err)
	}
	if res.IsError || !strings.Contains(callText(res), s.World.Name) {
		t.Fatalf("read_world: isError=%v %s", res.IsError, callText(res))
	}
}

// TestMcpkitConnectsByURL runs mcpkit's OAuth client (the one that passes
// the conformance suite's client authorization scenarios) against the real
// server, given only its URL: the 401 names the protected resource
// metadata, which names the authorization server; the client registers,
// the person approves on the console's consent page (narrowing the
// scopes), the client gets tokens and calls tools with exactly the scopes
// granted, refreshes its short-lived access token without asking the
// person again, and after a revocation (RFC 7009 by the client's refresh
// token, then the console's "connected apps" revoke button) has to ask the
// person again.
func TestMcpkitConnectsByURL(t *testing.T) {
	s := testserver.StartWith(t, dbtest.Open(t), testserver.Config{Console: true, OAuth: true,
		OAuthOptions: func(o *authserver.Options) { o.AccessTTL = 5 * time.Second }}) // under x/oauth2's 10 s margin: every call refreshes
	b := s.Browser(t, s.Owner)
	b.Scopes = []string{"world:read", "wiki:read"} // the person unticks the rest
	wire := &wireLog{}
	c := mcpkitClient(t, s, b, wire, oauth.Config{})

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.Connect(ctx); err != nil {
		t.Fatalf("Connect: %v\n%s", err, wire)
	}
	if b.Visits() != 1 {
		t.Fatalf("consent pages shown: %d, want 1", b.Visits())
	}
	for _, want := range []struct {
		method, path, grant string
		status              int
	}{
		{"POST", "/mcp", "", http.StatusUnauthorized},
		{"GET", authserver.PathResourceMetadataMCP, "", http.StatusOK},
		{"GET", authserver.PathServerMetadata, "", http.StatusOK},
		{"POST", authserver.PathRegister, "", http.StatusCreated},
		{"POST", authserver.PathToken, "authorization_code", http.StatusOK},
	} {
		if wire.count(want.method, want.path, want.grant, want.status) == 0 {
			t.Errorf("no %s %s %s answered %d:\n%s", want.method, want.path, want.grant, want.status, wire)
		}
	}
	page := b.ConsentPages()[0]
	for _, want := range []string{"mcpkit e2e", "127.0.0.1", "world:read", "wiki:propose", "lore:read"} {
		if !strings.Contains(page, want) {
			t.Errorf("consent page lacks %q", want)
		}
	}
	clientID, _ := wire.reg["client_id"].(string)
	if clientID == "" || wire.reg["token_endpoint_auth_method"] != "none" {
		t.Fatalf("registration answer %v", wire.reg)
	}
	if got, _ := wire.tokens[0]["scope"].(string); got != "world:read wiki:read" {
		t.Errorf("granted scope %q, want the two the person kept", got)
	}

	tools, err := c.ListTools(ctx)
	if err != nil || len(tools) == 0 {
		t.Fatalf("ListTools: %d tools, %v", len(tools), err)
	}
	readWorld(t, c, s)
	// A scope the person unticked: the tool answers an error naming it,
	// exactly as for an API key without it.
	res, err := c.CallTool(ctx, "propose_wiki_page", map[string]any{"world_id": s.World.ID, "payload": map[string]any{"title": "T"}, "diff_summary": "d"})
	if err != nil {
		t.Fatalf("propose_wiki_page: %v", err)
	}
	if !res.IsError || !strings.Contains(callText(res), "wiki:propose") {
		t.Errorf("propose_wiki_page without wiki:propose: isError=%v %s", res.IsError, callText(res))
	}

	// Refresh: the access token lives 5 s, so the client refreshes it
	// (rotating the refresh token) instead of asking the person again.
	readWorld(t, c, s)
	if n := wire.count("POST", "/token", "refresh_token", http.StatusOK); n == 0 {
		t.Errorf("no refresh:\n%s", wire)
	}
	if b.Visits() != 1 {
		t.Errorf("consent pages shown after refresh: %d, want 1", b.Visits())
	}
	for i, tok := range wire.tokens {
		if rt, _ := tok["refresh_token"].(string); !strings.HasPrefix(rt, "wfr_") {
			t.Errorf("token answer %d has refresh_token %q", i, rt)
		}
	}

	// RFC 7009: revoking the refresh token ends the grant; the client's
	// next call is refused and it asks the person again.
	form := url.Values{"token": {wire.lastRefreshToken()}, "client_id": {clientID}}
	resp, err := http.PostForm(s.URL+authserver.PathRevoke, form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %s", resp.Status)
	}
	readWorld(t, c, s)
	if b.Visits() != 2 {
		t.Errorf("consent pages shown after revocation: %d, want 2\n%s", b.Visits(), wire)
	}

	// The console lists the app; its revoke button ends the new grant too.
	if err := b.Disconnect(ctx, clientID); err != nil {
		t.Fatal(err)
	}
	readWorld(t, c, s)
	if b.Visits() != 3 {
		t.Errorf("consent pages shown after disconnecting: %d, want 3\n%s", b.Visits(), wire)
	}
	if n := wire.count("POST", "/register", "", 0); n != 1 {
		t.Errorf("registrations: %d, want 1 (the client keeps its client_id)", n)
	}
}

// TestMcpkitClientIDMetadataDocument runs mcpkit with a client ID
// metadata document instead of dynamic registration: the server fetches
// the document (from a real TLS server, which the test's Fetcher may
// reach on loopback) at /authorize and never sees a registration.
func TestMcpkitClientIDMetadataDocument(t *testing.T) {
	var docURL string
	doc := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/mcpkit-e2e/client.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"client_id": docURL, "client_name": "mcpkit by document",
			"redirect_uris": []string{oauth.DefaultRedirectURI}, "grant_types": []string{"authorization_code", "refresh_token"},
			"response_types": []string{"code"}, "token_endpoint_auth_method": "none",
		})
	}))
	defer doc.Close()
	docURL = doc.URL + "/mcpkit-e2e/client.json"

	s := testserver.StartWith(t, dbtest.Open(t), testserver.Config{Console: true, OAuth: true,
		OAuthOptions: func(o *authserver.Options) {
			o.Fetcher = &clientmeta.Fetcher{Client: doc.Client(), AllowInternal: true}
		}})
	b := s.Browser(t, s.Owner)
	wire := &wireLog{}
	c := mcpkitClient(t, s, b, wire, oauth.Config{ClientMetadataURL: docURL})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.Connect(ctx); err != nil {
		t.Fatalf("Connect: %v\n%s", err, wire)
	}
	readWorld(t, c, s)
	if n := wire.count("POST", "/register", "", 0); n != 0 {
		t.Errorf("registrations: %d, want none", n)
	}
	wire.mu.Lock()
	var ids []string
	for _, e := range wire.entries {
		if e.Path == "/token" {
			ids = append(ids, e.ClientID)
		}
	}
	wire.mu.Unlock()
	if len(ids) == 0 || ids[0] != docURL {
		t.Errorf("token requests' client_id %v, want the document URL", ids)
	}
	if page := b.ConsentPages()[0]; !strings.Contains(page, "mcpkit by document") {
		t.Errorf("consent page does not name the document's client: %s", page)
	}
}

// TestMcpkitConcurrentClients connects many mcpkit clients at once, each
// through the whole flow (its own registration, consent in the same
// person's browser, refreshes on every call), and checks that each ends
// with a client of its own and working tools.
func TestMcpkitConcurrentClients(t *testing.T) {
	s := testserver.StartWith(t, dbtest.Open(t), testserver.Config{Console: true, OAuth: true,
		OAuthOptions: func(o *authserver.Options) { o.AccessTTL = 5 * time.Second }})
	b := s.Browser(t, s.Owner)
	const n = 8
	wires := make([]*wireLog, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wires[i] = &wireLog{}
		c := mcpkitClient(t, s, b, wires[i], oauth.Config{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if err := c.Connect(ctx); err != nil {
				errs <- fmt.Errorf("client %d: Connect: %w", i, err)
				return
			}
			for range 3 {
				res, err := c.CallTool(ctx, "read_world", map[string]any{"id": s.World.ID})
				if err != nil || res.IsError {
					errs <- fmt.Errorf("client %d: read_world: %v %v", i, err, res)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	ids := map[string]bool{}
	for i, w := range wires {
		id, _ := w.reg["client_id"].(string)
		ids[id] = true
		if w.count("POST", "/token", "refresh_token", http.StatusOK) == 0 {
			t.Errorf("client %d never refreshed:\n%s", i, w)
		}
	}
	if len(ids) != n || b.Visits() != n {
		t.Errorf("%d distinct client ids, %d consents: want %d each", len(ids), b.Visits(), n)
	}
	apps, err := s.OAuth.ConnectedApps(context.Background(), s.Owner.ID)
	if err != nil || len(apps) != n {
		t.Errorf("connected apps: %d, %v; want %d", len(apps), err, n)
	}
}
