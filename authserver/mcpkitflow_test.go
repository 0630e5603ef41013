package authserver_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/mcpkit/oauth"
)

// TestMCPKitClient connects mcpkit's OAuth client (discovery, dynamic
// registration, PKCE, resource indicator) to the server by its URL alone;
// its "browser" approves on the consent page with a console session.
func TestMCPKitClient(t *testing.T) {
	s := start(t, nil)
	f := newFlow(t, s)
	approve := func(ctx context.Context, a *oauth.Authorization) (*url.URL, error) {
		u, err := url.Parse(a.URL)
		if err != nil {
			return nil, err
		}
		q := u.Query()
		f.clientID, f.redirect = q.Get("client_id"), q.Get("redirect_uri")
		csrf, request := f.consentForm(q)
		rq, _ := url.ParseQuery(request)
		resp, b := f.decide(csrf, request, "approve", strings.Fields(rq.Get("scope"))...)
		if resp.StatusCode != http.StatusSeeOther {
			return nil, fmt.Errorf("consent: %d %s", resp.StatusCode, b)
		}
		return url.Parse(resp.Header.Get("Location"))
	}
	flow, err := oauth.NewFlow(oauth.Config{Scopes: []string{"world:read"}, RedirectURI: "http://127.0.0.1:9/callback"},
		oauth.FlowOptions{Server: "worldforge", URL: s.MCPURL(), Authorize: approve, ClientName: "mcpkit test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpkit-oauth-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: s.MCPURL(), HTTPClient: &http.Client{Transport: flow.Transport(http.DefaultTransport)}, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	if text, isErr := testserver.CallText(t, cs, "read_world", map[string]any{"id": s.World.ID}); isErr {
		t.Fatalf("read_world: %s", text)
	}
	if text, isErr := testserver.CallText(t, cs, "list_campaigns", map[string]any{}); !isErr || !strings.Contains(text, "missing_scopes:campaign:read") {
		t.Fatalf("list_campaigns: %v %s", isErr, text)
	}
}
