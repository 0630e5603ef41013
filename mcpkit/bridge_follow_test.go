package mcpkit

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// newStructuredServer is the fxStructured fixture: one tool with a title,
// annotations and an output schema, whose results carry structured
// content.
func newStructuredServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "structured", Version: "1.0.0"}, nil)
	type in struct {
		City string `json:"city" jsonschema:"the city"`
	}
	type out struct {
		City    string  `json:"city"`
		Celsius float64 `json:"celsius"`
	}
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "weather",
		Title:       "Current weather",
		Description: "the weather in a city",
		Annotations: &mcp.ToolAnnotations{Title: "Weather", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool)},
	}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, out, error) {
		return nil, out{City: a.City, Celsius: 21.5}, nil
	})
	return srv
}

// gatewayClient serves b through a gateway to a go-sdk client over an
// in-memory transport; changed receives a value for each
// notifications/tools/list_changed (or prompts/list_changed) the client
// gets.
func gatewayClient(t *testing.T, ctx context.Context, b *Bridge) (cs *mcp.ClientSession, changed chan struct{}) {
	t.Helper()
	gw, err := NewGateway(b, &GatewayOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	go gw.Serve(ctx, st)
	changed = make(chan struct{}, 100)
	signal := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	cs, err = mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler:   func(context.Context, *mcp.ToolListChangedRequest) { signal() },
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) { signal() },
	}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, changed
}

func listedTools(t *testing.T, ctx context.Context, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	out := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		out[tool.Name] = tool
	}
	return out
}

// waitTools waits (up to the test's context) for a tools/list_changed
// after which the downstream list satisfies ok.
func waitTools(t *testing.T, ctx context.Context, cs *mcp.ClientSession, changed chan struct{}, what string, ok func(map[string]*mcp.Tool) bool) map[string]*mcp.Tool {
	t.Helper()
	for {
		if tools := listedTools(t, ctx, cs); ok(tools) {
			return tools
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		}
	}
}

func asGeneric(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkToolKept compares what the gateway serves for a tool with what the
// upstream lists: title, annotations and output schema unchanged.
func checkToolKept(t *testing.T, up, served *mcp.Tool) {
	t.Helper()
	if served == nil {
		t.Fatalf("%s not served", up.Name)
	}
	if served.Title != up.Title {
		t.Errorf("%s: title %q, upstream %q", up.Name, served.Title, up.Title)
	}
	if !reflect.DeepEqual(asGeneric(t, served.Annotations), asGeneric(t, up.Annotations)) {
		t.Errorf("%s: annotations %+v, upstream %+v", up.Name, served.Annotations, up.Annotations)
	}
	if up.OutputSchema == nil || !reflect.DeepEqual(asGeneric(t, served.OutputSchema), asGeneric(t, up.OutputSchema)) {
		t.Errorf("%s: output schema %v, upstream %v", up.Name, asGeneric(t, served.OutputSchema), asGeneric(t, up.OutputSchema))
	}
}

// TestGatewayKeepsToolMetadata serves a real child's tool with a title,
// annotations and an output schema through a gateway: the downstream sees
// them as the upstream lists them, and a call's structuredContent arrives.
func TestGatewayKeepsToolMetadata(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fx := newFixture(t, "meta", fxStructured)
	fleet := NewFleet([]ServerConfig{fx.cfg}, &FleetOptions{Client: opts()})
	t.Cleanup(func() { fleet.Close() })
	if err := fleet.Start(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := Mount(ctx, fleet, &BridgeOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	up := fleet.Client("meta").Tools()[0]
	if up.Title == "" || up.Annotations == nil || up.OutputSchema == nil {
		t.Fatalf("the fixture's tool lacks what this test checks: %+v", up)
	}
	if tool, _ := b.Registry().Get("meta_weather"); tool.Title != up.Title || tool.Annotations == nil || tool.OutputSchema == nil {
		t.Errorf("registry tool: %+v", tool)
	}
	cs, _ := gatewayClient(t, ctx, b)
	checkToolKept(t, up, listedTools(t, ctx, cs)["meta_weather"])
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "meta_weather", Arguments: map[string]any{"city": "Oslo"}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	want := map[string]any{"city": "Oslo", "celsius": 21.5}
	if got := asGeneric(t, res.StructuredContent); !reflect.DeepEqual(got, any(want)) {
		t.Errorf("structuredContent = %v, want %v", got, want)
	}
}

// TestGatewayKeepsEverythingStructured does the same with the reference
// everything server's get-structured-content (opt-in, as
// TestServerEverything).
func TestGatewayKeepsEverythingStructured(t *testing.T) {
	entry := os.Getenv(envEverything)
	if entry == "" {
		t.Skip("set " + envEverything + " to interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH")
	}
	entry, _ = filepath.Abs(entry)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	fleet := NewFleet([]ServerConfig{{Name: "everything", Command: node, Args: []string{entry, "stdio"}}}, &FleetOptions{Client: opts()})
	t.Cleanup(func() { fleet.Close() })
	if err := fleet.Start(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := Mount(ctx, fleet, &BridgeOptions{Logger: quiet, NoPrefix: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var up *mcp.Tool
	for _, tool := range fleet.Client("everything").Tools() {
		if tool.Name == "get-structured-content" {
			up = tool
		}
	}
	if up == nil {
		t.Fatal("everything lists no get-structured-content")
	}
	cs, _ := gatewayClient(t, ctx, b)
	served := listedTools(t, ctx, cs)
	checkToolKept(t, up, served["get-structured-content"])
	if len(served) != len(fleet.Client("everything").Tools()) {
		t.Errorf("gateway serves %d tools, everything lists %d", len(served), len(fleet.Client("everything").Tools()))
	}
	var args map[string]any
	if props, _ := asGeneric(t, up.InputSchema).(map[string]any)["properties"].(map[string]any); props != nil {
		if loc, _ := props["location"].(map[string]any); loc != nil {
			if enum, _ := loc["enum"].([]any); len(enum) > 0 {
				args = map[string]any{"location": enum[0]}
			}
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-structured-content", Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	if res.StructuredContent == nil {
		t.Errorf("no structuredContent through the gateway: %+v", res)
	}
}

// TestBridgeFollowsByItself mounts a real child server with no callbacks
// wired and never calls Refresh: a tool the server adds appears
// downstream (with notifications/tools/list_changed); when the child is
// killed its tools are withdrawn, and they return when the client
// reconnects; a server added to the fleet is mounted, a removed one
// withdrawn.
func TestBridgeFollowsByItself(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	fx := newFixture(t, "local", fxNormal)
	other := newFixture(t, "other", fxNormal)
	fleet := NewFleet([]ServerConfig{fx.cfg, other.cfg}, &FleetOptions{Client: opts()})
	t.Cleanup(func() { fleet.Close() })
	if err := fleet.Start(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := Mount(ctx, fleet, &BridgeOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cs, changed := gatewayClient(t, ctx, b)
	if tools := listedTools(t, ctx, cs); tools["local_echo"] == nil || tools["other_echo"] == nil {
		t.Fatalf("not mounted: %v", slices.Sorted(maps.Keys(tools)))
	}

	// A new upstream tool.
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "local_add_tool", Arguments: map[string]any{"name": "fresh"}}); err != nil || res.IsError {
		t.Fatalf("add_tool: %v %+v", err, res)
	}
	waitTools(t, ctx, cs, changed, "local_fresh", func(m map[string]*mcp.Tool) bool { return m["local_fresh"] != nil })
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "local_fresh"}); err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "I am fresh" {
		t.Fatalf("local_fresh: %v %+v", err, res)
	}

	// A new upstream prompt, the same way.
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "local_add_prompt", Arguments: map[string]any{"name": "hello"}}); err != nil || res.IsError {
		t.Fatalf("add_prompt: %v %+v", err, res)
	}
	for {
		res, err := cs.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(res.Prompts, func(p *mcp.Prompt) bool { return p.Name == "local_hello" }) {
			break
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatal("local_hello never served")
		}
	}

	// Kill the child: its tools are withdrawn, the other server's stay.
	pid := spawnedPid(t, fx, 1)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	tools := waitTools(t, ctx, cs, changed, "local's tools withdrawn", func(m map[string]*mcp.Tool) bool { return m["local_echo"] == nil })
	for name := range tools {
		if strings.HasPrefix(name, "local_") {
			t.Errorf("%s still served after its server died", name)
		}
	}
	if tools["other_echo"] == nil {
		t.Error("the other server's tools went too")
	}
	if p := fleet.Client("local").Phase(); p != PhaseFaulted {
		t.Errorf("killed server's phase: %s", p)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "local_echo", Arguments: map[string]any{"text": "x"}})
	if err == nil && !res.IsError {
		t.Errorf("a withdrawn tool answered: %+v", res)
	}

	// Reconnect (a new child): the tools come back.
	if err := fleet.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitTools(t, ctx, cs, changed, "local's tools back", func(m map[string]*mcp.Tool) bool { return m["local_echo"] != nil })
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "local_echo", Arguments: map[string]any{"text": "back"}}); err != nil || res.IsError {
		t.Fatalf("local_echo after reconnect: %v %+v", err, res)
	}

	// Fleet membership: added and removed servers.
	third := newFixture(t, "third", fxNormal)
	if err := fleet.Add(ctx, third.cfg); err != nil {
		t.Fatal(err)
	}
	waitTools(t, ctx, cs, changed, "third mounted", func(m map[string]*mcp.Tool) bool { return m["third_echo"] != nil })
	fleet.Remove("other")
	waitTools(t, ctx, cs, changed, "other withdrawn", func(m map[string]*mcp.Tool) bool { return m["other_echo"] == nil })

	// After Close the bridge no longer follows.
	b.Close()
	fleet.Remove("third")
	// Close waits out a refresh in flight, and a closed bridge starts
	// none, so the registry is as Close left it.
	if _, ok := b.Registry().Get("third_echo"); !ok {
		t.Error("a closed bridge still followed the fleet")
	}
}

// TestReconnectPolicyBringsToolsBack kills a child whose client has a
// reconnect policy: the bridge shows its tools again without anyone
// calling Connect or Refresh.
func TestReconnectPolicyBringsToolsBack(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	fx := newFixture(t, "local", fxNormal)
	fleet := NewFleet([]ServerConfig{fx.cfg}, &FleetOptions{Client: opts(func(o *ClientOptions) {
		o.Reconnect = &ReconnectPolicy{MaxAttempts: 5}
	})})
	t.Cleanup(func() { fleet.Close() })
	if err := fleet.Start(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := Mount(ctx, fleet, &BridgeOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cs, changed := gatewayClient(t, ctx, b)
	if err := syscall.Kill(spawnedPid(t, fx, 1), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Wait for the second child, then for its tools downstream.
	for fx.spawns() < 2 || !fleet.Client("local").Phase().Usable() {
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("no reconnect: phase %s", fleet.Client("local").Phase())
		case <-time.After(50 * time.Millisecond): // polling the spawn log, which has no notification
		}
	}
	waitTools(t, ctx, cs, changed, "tools back", func(m map[string]*mcp.Tool) bool { return m["local_echo"] != nil })
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "local_echo", Arguments: map[string]any{"text": "back"}}); err != nil || res.IsError {
		t.Fatalf("local_echo after reconnect: %v %+v", err, res)
	}
}

// TestBridgeDescriptionPrefix checks the "[server] " description prefix
// option, through the gateway.
func TestBridgeDescriptionPrefix(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fx := newFixture(t, "local", fxNormal)
	fleet := NewFleet([]ServerConfig{fx.cfg}, &FleetOptions{Client: opts()})
	t.Cleanup(func() { fleet.Close() })
	if err := fleet.Start(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := Mount(ctx, fleet, &BridgeOptions{Logger: quiet, NoPrefix: true, DescriptionPrefix: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cs, _ := gatewayClient(t, ctx, b)
	tools := listedTools(t, ctx, cs)
	if d := tools["echo"].Description; d != "[local] echoes text" {
		t.Errorf("echo description %q", d)
	}
	if d := tools["mixed"].Description; d != "[local]" {
		t.Errorf("mixed (no description) %q", d)
	}
	if up := fleet.Client("local").Tools(); up[0].Description == "" || strings.HasPrefix(up[0].Description, "[") {
		t.Errorf("the client's own tool list was changed: %q", up[0].Description)
	}
}

// spawnedPid returns the pid of the n-th process (from 1) the fixture
// started.
func spawnedPid(t *testing.T, fx *fixture, n int) int {
	t.Helper()
	data, _ := os.ReadFile(fx.spawnLog)
	lines := strings.Fields(string(data))
	if len(lines) < n {
		t.Fatalf("fixture started %d processes, want %d", len(lines), n)
	}
	pid, err := strconv.Atoi(lines[n-1])
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// TestGatewayServesLossySchemas mounts a real HTTP server whose tools have
// input schemas that loop or do not resolve: the bridge keeps them, the
// gateway serves them with the schema as given, and calls go through.
func TestGatewayServesLossySchemas(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "lossy", Version: "1"}, nil)
	schemas := map[string]string{
		"loop":     `{"type":"object","properties":{"x":{"$ref":"#/$defs/a"}},"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`,
		"dangling": `{"type":"object","properties":{"x":{"$ref":"#/$defs/missing"}}}`,
	}
	for name, schema := range schemas {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(schema)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return fxText("%s ran", name), nil
		})
	}
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	fleet := NewFleet([]ServerConfig{{Name: "lossy", URL: hs.URL}}, &FleetOptions{Client: opts()})
	t.Cleanup(func() { fleet.Close() })
	if err := fleet.Start(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := Mount(ctx, fleet, &BridgeOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cs, _ := gatewayClient(t, ctx, b)
	served := listedTools(t, ctx, cs)
	for name, schema := range schemas {
		tool := served["lossy_"+name]
		if tool == nil {
			t.Errorf("%s dropped", name)
			continue
		}
		var want any
		json.Unmarshal([]byte(schema), &want)
		if got := asGeneric(t, tool.InputSchema); !reflect.DeepEqual(got, want) {
			t.Errorf("%s served with schema %v, want %v", name, got, want)
		}
		if len(b.Registry().SchemaNotes("lossy_"+name)) == 0 {
			t.Errorf("%s: no schema notes", name)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "lossy_" + name, Arguments: map[string]any{"x": 1}})
		if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != name+" ran" {
			t.Errorf("%s: %v %+v", name, err, res)
		}
	}
}
