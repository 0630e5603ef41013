package mcpkit

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/worldforge-go/worldforge/mcpkit/oauth"
)

func TestPhasePredicates(t *testing.T) {
	for _, tc := range []struct {
		p                Phase
		usable, terminal bool
	}{
		{PhaseIdle, false, false},
		{PhaseConnecting, false, false},
		{PhaseReady, true, false},
		{PhaseClosing, false, false},
		{PhaseClosed, false, true},
		// A faulted client can connect again, so it is not at an end.
		{PhaseFaulted, false, false},
	} {
		if got := tc.p.Usable(); got != tc.usable {
			t.Errorf("%s.Usable() = %v", tc.p, got)
		}
		if got := tc.p.Terminal(); got != tc.terminal {
			t.Errorf("%s.Terminal() = %v", tc.p, got)
		}
	}
}

// TestFaultedClientReconnects checks what Terminal promises: a real child
// that crashed leaves its client faulted, and Connect brings it back.
func TestFaultedClientReconnects(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fx := newFixture(t, "crashy", fxNormal)
	c := NewClient(fx.cfg, opts())
	defer c.Close()
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	c.CallTool(ctx, "crash", nil) // the child exits in the call
	if p := c.Phase(); p != PhaseFaulted || p.Terminal() {
		t.Fatalf("phase after the crash: %s (terminal %v)", p, p.Terminal())
	}
	if err := c.Connect(ctx); err != nil {
		t.Fatalf("reconnect: %v", err)
	}
	if res, err := c.CallTool(ctx, "echo", map[string]any{"text": "back"}); err != nil || res.IsError {
		t.Fatalf("echo after reconnect: %v %+v", err, res)
	}
	c.Close()
	if p := c.Phase(); !p.Terminal() {
		t.Errorf("closed client: Terminal() = false")
	}
}

func TestSameServerConfigOAuth(t *testing.T) {
	base := ServerConfig{Name: "a", URL: "https://mcp.example.com/", OAuth: &oauth.Config{ClientID: "c1", Scopes: []string{"read"}}}
	same := base
	same.OAuth = &oauth.Config{ClientID: "c1", Scopes: []string{"read"}}
	if !SameServerConfig(base, same) {
		t.Error("equal oauth blocks differ")
	}
	for name, o := range map[string]*oauth.Config{
		"removed":   nil,
		"client id": {ClientID: "c2", Scopes: []string{"read"}},
		"scopes":    {ClientID: "c1", Scopes: []string{"read", "write"}},
		"idp":       {ClientID: "c1", Scopes: []string{"read"}, IdentityProvider: &oauth.IdentityProvider{TokenEndpoint: "https://idp.example.com/token"}},
	} {
		other := base
		other.OAuth = o
		if SameServerConfig(base, other) {
			t.Errorf("oauth change %q not noticed", name)
		}
	}
	noAuth := base
	noAuth.OAuth = nil
	if !SameServerConfig(noAuth, noAuth) {
		t.Error("nil oauth blocks differ")
	}
}

// TestReloadReplacesClientOnOAuthChange reloads a fleet whose only change
// is the oauth block of an HTTP server: the client is replaced, and an
// unchanged reload keeps it.
func TestReloadReplacesClientOnOAuthChange(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hf := newHTTPFixture(t)
	cfg := ServerConfig{Name: "web", URL: hf.streamable.URL, OAuth: &oauth.Config{ClientID: "c1"}}
	f := NewFleet([]ServerConfig{cfg}, &FleetOptions{Client: opts()})
	defer f.Close()
	f.Start(ctx) // the fixture asks for no token; the outcome does not matter here
	first := f.Client("web")
	same := cfg
	same.OAuth = &oauth.Config{ClientID: "c1"}
	f.Reload(ctx, []ServerConfig{same})
	if f.Client("web") != first {
		t.Fatal("an unchanged oauth block replaced the client")
	}
	changed := cfg
	changed.OAuth = &oauth.Config{ClientID: "c2"}
	f.Reload(ctx, []ServerConfig{changed})
	if f.Client("web") == first {
		t.Fatal("a changed oauth block kept the old client")
	}
	if p := first.Phase(); p != PhaseClosed {
		t.Errorf("replaced client: phase %s", p)
	}
}

func TestRegistryAddMetadata(t *testing.T) {
	exec := func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) { return nil, nil }
	r := NewRegistry()
	ann := &mcp.ToolAnnotations{ReadOnlyHint: true}
	if err := r.Add(Tool{Name: "ok", Title: "OK", OutputSchema: json.RawMessage(` {"type": "object"} `), Annotations: ann, Execute: exec}); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Get("ok"); got.Title != "OK" || string(got.OutputSchema) != `{"type":"object"}` || got.Annotations != ann {
		t.Errorf("stored %+v", got)
	}
	for name, out := range map[string]string{"not json": `{nope`, "cut": `{"type":`} {
		if err := r.Add(Tool{Name: "bad", OutputSchema: json.RawMessage(out), Execute: exec}); !errors.Is(err, ErrSchemaConversion) {
			t.Errorf("%s output schema: %v", name, err)
		}
	}
	if _, ok := r.Get("bad"); ok {
		t.Error("a refused tool was added")
	}
}
