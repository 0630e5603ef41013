package mcpkit

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestBridgeAndGateway mounts a fleet of two real servers (a stdio child
// and streamable HTTP) plus one that cannot start, and serves them through
// a gateway to a go-sdk client: every ready server's tools appear under
// qualified names and calls reach the right server.
func TestBridgeAndGateway(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hf := newHTTPFixture(t)
	stdio := newFixture(t, "local", fxNormal)
	broken := newFixture(t, "broken", fxExitStart)
	fleet := NewFleet([]ServerConfig{
		stdio.cfg,
		{Name: "remote", URL: hf.streamable.URL},
		broken.cfg,
	}, nil)
	t.Cleanup(func() { fleet.Close() })
	if err := fleet.Start(ctx); err == nil {
		t.Fatal("Start: the broken server did not fail")
	}
	b, err := Mount(ctx, fleet, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := func(ts []Tool) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.Name)
		}
		return out
	}
	got := names(b.Registry().List())
	for _, want := range []string{"local_echo", "local_add", "remote_echo", "remote_add"} {
		if !slices.Contains(got, want) {
			t.Errorf("registry lacks %s: %v", want, got)
		}
	}
	for _, n := range got {
		if strings.HasPrefix(n, "broken") {
			t.Errorf("a server that is not ready was mounted: %s", n)
		}
	}
	if ref, ok := b.Registry().Remote("remote_echo"); !ok || ref != (RemoteRef{Server: "remote", Tool: "echo"}) {
		t.Errorf("route of remote_echo: %+v %v", ref, ok)
	}

	gw, err := NewGateway(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	go gw.Serve(ctx, st)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, tool := range list.Tools {
		listed = append(listed, tool.Name)
	}
	if !slices.Equal(sorted(listed), sorted(got)) {
		t.Errorf("gateway lists %v, registry has %v", listed, got)
	}
	for _, server := range []string{"local", "remote"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: server + "_echo", Arguments: map[string]any{"text": "hi " + server}})
		if err != nil || res.IsError {
			t.Fatalf("%s_echo: %v %+v", server, err, res)
		}
		if txt := res.Content[0].(*mcp.TextContent).Text; txt != "hi "+server {
			t.Errorf("%s_echo answered %q", server, txt)
		}
	}
	// Arguments are checked against the upstream's schema before the call.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "local_add", Arguments: map[string]any{"a": "one"}})
	if err != nil || !res.IsError {
		t.Errorf("bad arguments: %v %+v", err, res)
	}

	// A server removed from the fleet leaves the gateway when the refresh
	// returns (Fleet.Remove and the gateway's sync are synchronous).
	fleet.Remove("remote")
	if err := b.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	list, err = cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if strings.HasPrefix(tool.Name, "remote_") {
			t.Fatalf("remote tool %s still listed after the refresh", tool.Name)
		}
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
