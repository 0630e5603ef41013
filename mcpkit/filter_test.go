package mcpkit

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestToolPatterns(t *testing.T) {
	for _, tt := range []struct {
		pattern, name string
		match         bool
	}{
		{"echo", "echo", true},
		{"echo", "echo2", false},
		{"echo", "ech", false},
		{"*", "", true},
		{"*", "anything", true},
		{"e*", "echo", true},
		{"e*", "e", true},
		{"e*", "add", false},
		{"*_hidden", "echo_hidden", true},
		{"*_hidden", "echo_hidden_not", false},
		{"a*b*c", "abc", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "acb", false},
		{"*ab*ab", "abab", true},
		{"*ab*ab", "ab", false},
		{"a**b", "ab", true},
		{"file.read", "file.read", true},
		{"file.*", "fileXread", false},
	} {
		if got := globMatch(tt.pattern, tt.name); got != tt.match {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.match)
		}
	}
	for _, tt := range []struct {
		pattern string
		ok      bool
	}{
		{"echo", true},
		{"*", true},
		{"github_*_issue", true},
		{"files/read.v2", true},
		{"", false},
		{" echo", false},
		{"ech o", false},
		{"echo\n", false},
		{"ech?", false},
		{"[ab]*", false},
		{"{a,b}", false},
		{`a\*`, false},
	} {
		if err := ValidToolPattern(tt.pattern); (err == nil) != tt.ok {
			t.Errorf("ValidToolPattern(%q) = %v, want ok %v", tt.pattern, err, tt.ok)
		}
	}
	for _, tt := range []struct {
		allowed, disabled []string
		name              string
		keep              bool
	}{
		{nil, nil, "x", true},
		{[]string{"a*"}, nil, "abc", true},
		{[]string{"a*"}, nil, "b", false},
		{nil, []string{"b"}, "b", false},
		{nil, []string{"b"}, "a", true},
		{[]string{"*"}, []string{"secret_*"}, "secret_x", false},
		{[]string{"x", "y"}, []string{"y"}, "y", false},
		{[]string{"x", "y"}, []string{"y"}, "x", true},
	} {
		f, err := newToolFilter(&ServerConfig{AllowedTools: tt.allowed, DisabledTools: tt.disabled})
		if err != nil {
			t.Fatal(err)
		}
		if got := f.keeps(tt.name); got != tt.keep {
			t.Errorf("allowed %q, disabled %q: keeps(%q) = %v, want %v", tt.allowed, tt.disabled, tt.name, got, tt.keep)
		}
	}
}

// TestToolFilterClient filters a real stdio server's tools: the client's
// list, its status, a refreshed list after the server adds tools, and a
// call to a hidden tool, which never reaches the server and is answered
// as an unknown tool is.
func TestToolFilterClient(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fx := newFixture(t, "local", fxNormal)
	fx.cfg.AllowedTools = []string{"e*", "add*", "block"}
	fx.cfg.DisabledTools = []string{"env", "block", "*_hidden"}
	c := NewClient(fx.cfg, nil)
	t.Cleanup(func() { c.Close() })
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	toolNames := func(ts []*mcp.Tool) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.Name)
		}
		slices.Sort(out)
		return out
	}
	want := []string{"add", "add_prompt", "add_tool", "echo"}
	if got := toolNames(c.Tools()); !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}
	if st := c.Status(); st.Tools != len(want) || st.HiddenTools != fixtureTools-len(want) {
		t.Errorf("status: %d tools, %d hidden; want %d, %d", st.Tools, st.HiddenTools, len(want), fixtureTools-len(want))
	}

	// A hidden tool is refused before the server sees it, with the answer
	// the server gives for a tool it does not have.
	_, hiddenErr := c.CallTool(ctx, "block", nil)
	_, unknownErr := c.CallTool(ctx, "no_such_tool", nil)
	var he, ue *Error
	if !errors.As(hiddenErr, &he) || !errors.As(unknownErr, &ue) {
		t.Fatalf("errors: hidden %v, unknown %v", hiddenErr, unknownErr)
	}
	if !errors.Is(hiddenErr, ErrToolNotFound) || he.Code != ue.Code || he.Kind != ue.Kind || he.Server != ue.Server || he.Tool != "block" {
		t.Errorf("hidden: %#v\nunknown: %#v", he, ue)
	}
	if got, want := he.Error(), strings.ReplaceAll(ue.Error(), "no_such_tool", "block"); got != want {
		t.Errorf("hidden tool's error %q, want %q (the unknown tool's)", got, want)
	}
	hw, _ := he.Details.(*WireError)
	uw, _ := ue.Details.(*WireError)
	if hw == nil || uw == nil || hw.Code != uw.Code || hw.Message != strings.ReplaceAll(uw.Message, "no_such_tool", "block") {
		t.Errorf("wire details: hidden %+v, unknown %+v", hw, uw)
	}
	if n := fx.blocked(); n != 0 {
		t.Errorf("the hidden tool ran %d times", n)
	}
	if _, err := c.CallTool(ctx, "echo", map[string]any{"text": "hi"}); err != nil {
		t.Errorf("allowed tool: %v", err)
	}

	// Tools the server adds later are filtered the same way.
	for _, name := range []string{"echo_hidden", "extra"} {
		if _, err := c.CallTool(ctx, "add_tool", map[string]any{"name": name}); err != nil {
			t.Fatal(err)
		}
	}
	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"add", "add_prompt", "add_tool", "echo", "extra"}
	if got := toolNames(tools); !slices.Equal(got, want) {
		t.Errorf("after adding tools: %v, want %v", got, want)
	}
	if st := c.Status(); st.HiddenTools != fixtureTools+2-len(want) {
		t.Errorf("hidden after adding tools: %d, want %d", st.HiddenTools, fixtureTools+2-len(want))
	}
	if _, err := c.CallTool(ctx, "echo_hidden", nil); !errors.Is(err, ErrToolNotFound) {
		t.Errorf("hidden added tool: %v", err)
	}
}

// TestToolFilterGateway mounts a filtered stdio server and a filtered
// HTTP server: hidden tools are absent from the registry and from the
// gateway's tools/list, and a call to one gets the gateway's answer to an
// unknown tool.
func TestToolFilterGateway(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hf := newHTTPFixture(t)
	fx := newFixture(t, "local", fxNormal)
	fx.cfg.DisabledTools = []string{"block", "a*"}
	fleet := NewFleet([]ServerConfig{
		fx.cfg,
		{Name: "remote", URL: hf.streamable.URL, AllowedTools: []string{"echo"}},
	}, nil)
	t.Cleanup(func() { fleet.Close() })
	if err := fleet.Start(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := Mount(ctx, fleet, nil)
	if err != nil {
		t.Fatal(err)
	}
	var registered []string
	for _, tool := range b.Registry().List() {
		registered = append(registered, tool.Name)
	}
	for _, name := range []string{"local_block", "local_add", "local_ask", "remote_add", "remote_block"} {
		if slices.Contains(registered, name) {
			t.Errorf("hidden tool %s registered: %v", name, registered)
		}
	}
	for _, name := range []string{"local_echo", "local_env", "remote_echo"} {
		if !slices.Contains(registered, name) {
			t.Errorf("allowed tool %s missing: %v", name, registered)
		}
	}
	if n := len(registered); n != fixtureTools-5+1 { // local: all but block, add, add_tool, add_prompt, ask; remote: echo
		t.Errorf("%d tools registered: %v", n, registered)
	}
	_, hiddenErr := b.Registry().Call(ctx, "local_block", nil)
	_, unknownErr := b.Registry().Call(ctx, "local_nosuch", nil)
	if !errors.Is(hiddenErr, ErrToolNotFound) || hiddenErr.Error() != strings.ReplaceAll(unknownErr.Error(), "local_nosuch", "local_block") {
		t.Errorf("registry: hidden %v, unknown %v", hiddenErr, unknownErr)
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
	if !slices.Equal(sorted(listed), sorted(registered)) {
		t.Errorf("gateway lists %v, registry has %v", listed, registered)
	}
	_, hiddenErr = cs.CallTool(ctx, &mcp.CallToolParams{Name: "local_block", Arguments: map[string]any{}})
	_, unknownErr = cs.CallTool(ctx, &mcp.CallToolParams{Name: "local_nosuch", Arguments: map[string]any{}})
	if hiddenErr == nil || unknownErr == nil || hiddenErr.Error() != strings.ReplaceAll(unknownErr.Error(), "local_nosuch", "local_block") {
		t.Errorf("gateway: hidden %v, unknown %v", hiddenErr, unknownErr)
	}
	if n := fx.blocked(); n != 0 {
		t.Errorf("the hidden tool ran %d times", n)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "remote_echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError {
		t.Errorf("remote_echo: %v %+v", err, res)
	}
}

// TestToolFilterBadPattern: a ServerConfig built in code with a bad
// pattern fails Connect with CONFIG_ERROR, without starting the server.
func TestToolFilterBadPattern(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fx := newFixture(t, "local", fxNormal)
	fx.cfg.DisabledTools = []string{"ok", "bad?"}
	c := NewClient(fx.cfg, nil)
	defer c.Close()
	err := c.Connect(ctx)
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "disabledTools[1]") {
		t.Fatalf("Connect: %v, want CONFIG_ERROR naming disabledTools[1]", err)
	}
	if n := fx.spawns(); n != 0 {
		t.Errorf("%d processes started", n)
	}
}

// TestToolFilterReload: a changed filter replaces the client; the same
// filter keeps it.
func TestToolFilterReload(t *testing.T) {
	a := ServerConfig{Name: "s", Command: "x", AllowedTools: []string{"a*"}}
	b := a
	b.AllowedTools = []string{"a*"}
	if !SameServerConfig(a, b) {
		t.Error("equal filters differ")
	}
	b.DisabledTools = []string{"a1"}
	if SameServerConfig(a, b) {
		t.Error("a changed disabledTools is the same config")
	}
	b = a
	b.AllowedTools = []string{"b*"}
	if SameServerConfig(a, b) {
		t.Error("a changed allowedTools is the same config")
	}
}

// TestToolFilterEverything filters the reference "everything" server's
// tools (opt-in, as TestServerEverything).
func TestToolFilterEverything(t *testing.T) {
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
	cfg := ServerConfig{Name: "everything", Command: node, Args: []string{entry, "stdio"}}
	all := NewClient(cfg, opts())
	defer all.Close()
	if err := all.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	cfg.AllowedTools = []string{"echo", "get-*"}
	cfg.DisabledTools = []string{"get-env"}
	c := NewClient(cfg, opts())
	defer c.Close()
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	var kept, hidden []string
	for _, tool := range all.Tools() {
		if tool.Name == "echo" || strings.HasPrefix(tool.Name, "get-") && tool.Name != "get-env" {
			kept = append(kept, tool.Name)
		} else {
			hidden = append(hidden, tool.Name)
		}
	}
	var got []string
	for _, tool := range c.Tools() {
		got = append(got, tool.Name)
	}
	if !slices.Equal(sorted(got), sorted(kept)) || len(hidden) == 0 || c.Status().HiddenTools != len(hidden) {
		t.Fatalf("kept %v, want %v; hidden %d, want %v", got, kept, c.Status().HiddenTools, hidden)
	}
	_, hiddenErr := c.CallTool(ctx, hidden[0], nil)
	if !errors.Is(hiddenErr, ErrToolNotFound) {
		t.Errorf("call of hidden %s: %v", hidden[0], hiddenErr)
	}
	_, unknownErr := c.CallTool(ctx, "no-such-tool", nil)
	if unknownErr == nil || hiddenErr.Error() != strings.ReplaceAll(unknownErr.Error(), "no-such-tool", hidden[0]) {
		t.Errorf("hidden: %v\nunknown: %v", hiddenErr, unknownErr)
	}

	// Through a gateway the two answers are the same.
	fleet := NewFleet([]ServerConfig{cfg}, &FleetOptions{Client: opts()})
	defer fleet.Close()
	if err := fleet.Start(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := Mount(ctx, fleet, nil)
	if err != nil {
		t.Fatal(err)
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
	hiddenName := QualifiedName("everything", hidden[0], "")
	_, hiddenErr = cs.CallTool(ctx, &mcp.CallToolParams{Name: hiddenName, Arguments: map[string]any{}})
	_, unknownErr = cs.CallTool(ctx, &mcp.CallToolParams{Name: "everything_nosuch", Arguments: map[string]any{}})
	if hiddenErr == nil || unknownErr == nil || hiddenErr.Error() != strings.ReplaceAll(unknownErr.Error(), "everything_nosuch", hiddenName) {
		t.Errorf("gateway: hidden %v, unknown %v", hiddenErr, unknownErr)
	}
}
