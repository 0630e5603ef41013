package authserver_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// TestFlow runs the whole MCP authorization flow by plain HTTP against a
// real server: discovery, registration, authorization with a console
// session, consent narrowing the scopes, code, token, tool calls on /mcp
// with exactly the granted scopes, refresh, revocation.
func TestFlow(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) { testFlow(t, startOn(t, db, nil)) })
}

func testFlow(t *testing.T, s *testserver.Server) {
	f := newFlow(t, s)

	// Discovery: the 401 names the resource metadata, which names the
	// authorization server, whose metadata names the endpoints.
	status, challenge, _ := f.mcpCall("", "read_world", map[string]any{"id": s.World.ID})
	want := `resource_metadata="` + s.URL + `/.well-known/oauth-protected-resource/mcp"`
	if status != http.StatusUnauthorized || !strings.Contains(challenge, want) {
		t.Fatalf("unauthenticated /mcp: %d %q, want 401 with %s", status, challenge, want)
	}
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported"`
	}
	f.getJSON("/.well-known/oauth-protected-resource/mcp", &prm)
	if prm.Resource != s.URL+"/mcp" || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != s.URL {
		t.Fatalf("protected resource metadata: %+v", prm)
	}
	var asm map[string]any
	f.getJSON("/.well-known/oauth-authorization-server", &asm)
	for k, v := range map[string]string{"issuer": s.URL, "authorization_endpoint": s.URL + "/authorize", "token_endpoint": s.URL + "/token",
		"registration_endpoint": s.URL + "/register", "revocation_endpoint": s.URL + "/revoke"} {
		if asm[k] != v {
			t.Errorf("metadata %s = %v, want %s", k, asm[k], v)
		}
	}
	if m, _ := asm["code_challenge_methods_supported"].([]any); len(m) != 1 || m[0] != "S256" {
		t.Errorf("code_challenge_methods_supported = %v", asm["code_challenge_methods_supported"])
	}
	var oidc map[string]any
	f.getJSON("/.well-known/openid-configuration", &oidc)
	if oidc["issuer"] != s.URL {
		t.Errorf("openid-configuration issuer = %v", oidc["issuer"])
	}

	// Consent: asked for world:read and campaign:read, the person keeps
	// world:read only.
	csrf, request := f.consentForm(f.authorizeQuery("world:read campaign:read"))
	resp, b := f.decide(csrf, request, "approve", "world:read")
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("consent: %d %s", resp.StatusCode, b)
	}
	loc, _ := url.Parse(resp.Header.Get("Location"))
	tr := f.exchange(loc.Query().Get("code"))
	if tr.Status != 200 || tr.TokenType != "Bearer" || tr.Scope != "world:read" || tr.ExpiresIn <= 0 {
		t.Fatalf("token: %+v", tr)
	}

	// Tool calls: granted scope works, the other is the tool's
	// missing_scopes, as for an API key.
	status, _, body := f.mcpCall(tr.AccessToken, "read_world", map[string]any{"id": s.World.ID})
	if status != 200 || strings.Contains(body, `"isError":true`) {
		t.Fatalf("read_world: %d %s", status, body)
	}
	status, _, body = f.mcpCall(tr.AccessToken, "list_campaigns", map[string]any{})
	if status != 200 || !strings.Contains(body, "missing_scopes:campaign:read") {
		t.Fatalf("list_campaigns without campaign:read: %d %s", status, body)
	}
	// REST: a route needing a scope not granted is 403 insufficient_scope.
	resp, _ = f.do("POST", "/auto-accept-rules", strings.NewReader(`{}`), map[string]string{"Authorization": "Bearer " + tr.AccessToken, "Content-Type": "application/json"})
	if wa := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusForbidden || !strings.Contains(wa, `error="insufficient_scope"`) || !strings.Contains(wa, `scope="world:write"`) {
		t.Fatalf("REST without world:write: %d %q", resp.StatusCode, wa)
	}

	// The use is recorded for the keys page.
	apps, err := s.OAuth.ConnectedApps(context.Background(), s.Owner.ID)
	if err != nil || len(apps) != 1 || apps[0].Name != "Test Agent" || apps[0].LastUsedAt == nil || len(apps[0].Scopes) != 1 {
		t.Fatalf("connected apps: %+v %v", apps, err)
	}
	// The console lists the app.
	resp, b = f.do("GET", "/keys", nil, map[string]string{"Cookie": "wf_session=" + f.cookie})
	if resp.StatusCode != 200 || !strings.Contains(string(b), "Connected apps") || !strings.Contains(string(b), "Test Agent") {
		t.Fatalf("keys page: %d, no connected app", resp.StatusCode)
	}

	// Refresh: new tokens; the old access token stays valid until it
	// expires; the new one works.
	tr2 := f.refresh(tr.RefreshToken)
	if tr2.Status != 200 || tr2.RefreshToken == tr.RefreshToken || tr2.Scope != "world:read" {
		t.Fatalf("refresh: %+v", tr2)
	}
	if status, _, body := f.mcpCall(tr2.AccessToken, "read_world", map[string]any{"id": s.World.ID}); status != 200 {
		t.Fatalf("read_world with the refreshed token: %d %s", status, body)
	}

	// Revoke: every token of the grant is refused at once.
	if r := f.post("/revoke", url.Values{"token": {tr2.RefreshToken}, "client_id": {f.clientID}}); r.Status != 200 {
		t.Fatalf("revoke: %+v", r)
	}
	for _, tok := range []string{tr.AccessToken, tr2.AccessToken} {
		if status, challenge, _ := f.mcpCall(tok, "read_world", map[string]any{"id": s.World.ID}); status != 401 || !strings.Contains(challenge, "resource_metadata=") {
			t.Fatalf("revoked token: %d %q", status, challenge)
		}
	}
	if r := f.refresh(tr2.RefreshToken); r.Error != "invalid_grant" {
		t.Fatalf("refresh after revoke: %+v", r)
	}

	// API keys keep working.
	key := s.Key(t, s.Owner, "world:read")
	if status, _, body := f.mcpCall(key, "read_world", map[string]any{"id": s.World.ID}); status != 200 {
		t.Fatalf("api key: %d %s", status, body)
	}
}
