package interop

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/worldforge-go/worldforge/authserver"
	"github.com/worldforge-go/worldforge/authserver/clientmeta"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// TestTypeScriptOAuthClient runs tsoauth.mjs: the official TypeScript
// SDK's client (v1, @modelcontextprotocol/sdk, and v2,
// @modelcontextprotocol/client) with an OAuth client provider connects to the server by
// its URL alone — 401, protected resource and authorization server
// discovery, dynamic registration, the person's consent (this test is the
// browser: a console session approves, then the redirect goes back to the
// script's loopback listener), the code exchange, tools, a refresh after
// the access token expired, and revocation.
func TestTypeScriptOAuthClient(t *testing.T) {
	dir := requireNodePackage(t, "WORLDFORGE_TEST_NODE_INTEROP", "@modelcontextprotocol/sdk", "@modelcontextprotocol/client")
	nodeBin := node(t)
	for _, sdk := range []string{"sdk-1", "client-2"} {
		for _, cimd := range []bool{false, true} {
			t.Run(sdk+map[bool]string{false: "", true: "-metadata-document"}[cimd], func(t *testing.T) { tsOAuth(t, dir, nodeBin, sdk, cimd) })
		}
	}
}

// tsOAuth runs tsoauth.mjs with one SDK; with cimd the client's
// client_id is the URL of a metadata document on a TLS server of the
// test's, which the server's Fetcher may reach on loopback. The document
// registers the loopback callback without a port (RFC 8252 §7.3: the
// script's listener takes any).
func tsOAuth(t *testing.T, dir, nodeBin, sdk string, cimd bool) {
	var docURL string
	args := []string{}
	clientName := "TypeScript " + sdk + " e2e"
	fetcher := &clientmeta.Fetcher{}
	if cimd {
		clientName = "TypeScript " + sdk + " by document"
		doc := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{
				"client_id": docURL, "client_name": clientName, "redirect_uris": []string{"http://127.0.0.1/callback"},
				"grant_types": []string{"authorization_code", "refresh_token"}, "token_endpoint_auth_method": "none",
			})
		}))
		defer doc.Close()
		docURL = doc.URL + "/ts/client.json"
		args = append(args, docURL)
		fetcher = &clientmeta.Fetcher{Client: doc.Client(), AllowInternal: true}
	}
	s := testserver.StartWith(t, dbtest.Open(t), testserver.Config{Console: true, OAuth: true,
		OAuthOptions: func(o *authserver.Options) { o.AccessTTL, o.Fetcher = time.Second, fetcher }})
	b := s.Browser(t, s.Owner)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// The script waits 1.5 s for its access token (1 s) to expire.
	authURL := func(line string) (string, bool) { return strings.CutPrefix(line, "AUTHORIZE ") }
	output, werr := runAuthorizing(t, ctx, b, authURL, dir, nodeBin, append([]string{"tsoauth.mjs", sdk, s.MCPURL(), s.World.ID, "1500"}, args...)...)
	if werr != nil {
		t.Fatalf("tsoauth.mjs: %v", werr)
	}
	registered := "ok registered as a public client"
	if cimd {
		registered = "ok metadata document URL as client_id"
	}
	for _, want := range []string{
		"ok 401 starts authorization", registered, "ok authorization request", "ok callback state",
		"ok callback iss", "ok tokens", "ok tools/list", "ok read_world", "ok read_world after expiry", "ok refreshed",
		"ok no second authorization", "ok revoke", "ok revoked token refused", "PASS",
	} {
		if !strings.Contains(output, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if b.Visits() != 1 {
		t.Errorf("consent pages shown: %d, want 1", b.Visits())
	}
	if page := b.ConsentPages(); len(page) == 0 || !strings.Contains(page[0], clientName) {
		t.Errorf("the consent page does not name the client")
	}
}
