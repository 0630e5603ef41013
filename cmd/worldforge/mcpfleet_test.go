package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/mcpkit"
)

// TestMCPConfigCommands drives the config-file forms of the mcp commands
// against a real WorldForge server (in mcpServers format, with its bearer
// header) and a server that cannot start.
func TestMCPConfigCommands(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, dbtest.Open(t))
	key := ts.Key(t, ts.Owner, wf.ScopeAll)
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	file := map[string]any{"mcpServers": map[string]any{
		"wf":     map[string]any{"type": "http", "url": ts.MCPURL(), "headers": map[string]string{"Authorization": "Bearer ${WF_KEY}"}},
		"broken": map[string]any{"command": filepath.Join(t.TempDir(), "no-such-server")},
	}}
	data, _ := json.Marshal(file)
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"WF_KEY": key}

	r := runMain(t, env, "mcp", "servers", "--config", cfg)
	if exitCode(r.err) != 1 || !regexp.MustCompile(`(?m)^wf\s+http\s+ready\s+31\s`).MatchString(r.stdout) ||
		!regexp.MustCompile(`(?m)^broken\s+stdio\s+faulted\s+0\s`).MatchString(r.stdout) {
		t.Errorf("mcp servers: exit %d\n%s\nstderr: %s", exitCode(r.err), r.stdout, r.stderr)
	}

	out := MustRunMain(t, env, "mcp", "tools", "--config", cfg, "wf")
	if n := strings.Count(out, "\n"); n != 31 || !strings.Contains(out, "wf\tread_world\t") {
		t.Errorf("mcp tools wf: %d lines\n%s", n, out)
	}

	// --format: the tools as each model API takes them, parsed back.
	for _, format := range []string{"openai", "openai-responses", "anthropic", "gemini"} {
		r := runMain(t, env, "mcp", "tools", "--config", cfg, "--format", format, "wf")
		var tools []map[string]any
		if r.err != nil || json.Unmarshal([]byte(r.stdout), &tools) != nil {
			t.Fatalf("--format %s: %v\n%s", format, r.err, r.stdout)
		}
		n := len(tools)
		if format == "gemini" {
			decls, _ := tools[0]["functionDeclarations"].([]any)
			n = len(decls)
		}
		if n != 31 || !strings.Contains(r.stdout, `"wf_read_world"`) || !strings.Contains(r.stdout, "[wf] ") {
			t.Errorf("--format %s: %d tools\n%s", format, n, r.stdout)
		}
	}
	for _, bad := range [][]string{
		{"mcp", "tools", "--config", cfg, "--format", "claude", "wf"},
		{"mcp", "tools", "--url", ts.MCPURL(), "--api-key", key, "--format", "openai"},
	} {
		if r := runMain(t, env, bad...); exitCode(r.err) != 2 || r.stdout != "" {
			t.Errorf("%q: exit %d, %v, stdout %q", bad, exitCode(r.err), r.err, r.stdout)
		}
	}

	out = MustRunMain(t, env, "mcp", "call", "--config", cfg, "wf", "read_world", `{"id":"`+ts.World.ID+`"}`)
	var w wf.World
	if err := json.Unmarshal([]byte(out), &w); err != nil || w.ID != ts.World.ID {
		t.Errorf("mcp call: %v\n%s", err, out)
	}
	r = runMain(t, env, "mcp", "call", "--config", cfg, "wf", "read_world", `{"id":"world_aaaaaaaaaaaaaaaaaaaa"}`)
	if exitCode(r.err) != 1 || !strings.Contains(r.err.Error(), "MCP tool read_world failed: not_found") {
		t.Errorf("tool error: exit %d, %v", exitCode(r.err), r.err)
	}
	r = runMain(t, env, "mcp", "call", "--config", cfg, "broken", "x")
	if exitCode(r.err) != 1 || !strings.Contains(r.err.Error(), "CONNECTION_FAILED") {
		t.Errorf("broken server: exit %d, %v", exitCode(r.err), r.err)
	}
	r = runMain(t, env, "mcp", "call", "--config", cfg, "nobody", "x")
	if exitCode(r.err) != 2 {
		t.Errorf("unknown server: exit %d, %v", exitCode(r.err), r.err)
	}
	r = runMain(t, env, "mcp", "tools", "--config", filepath.Join(t.TempDir(), "missing.json"))
	if exitCode(r.err) != 1 || !strings.Contains(r.err.Error(), "CONFIG_ERROR") {
		t.Errorf("missing config: exit %d, %v", exitCode(r.err), r.err)
	}
}

// TestMCPGateway serves the configured WorldForge server through `mcp
// gateway --http` and calls it with a go-sdk client under its qualified
// name.
func TestMCPGateway(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, dbtest.Open(t))
	key := ts.Key(t, ts.Owner, wf.ScopeAll)
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	data, _ := json.Marshal(map[string]any{"servers": []any{map[string]any{"name": "wf", "url": ts.MCPURL(), "headers": map[string]string{"Authorization": "Bearer " + key}}}})
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"mcp", "gateway", "--config", cfg, "--http", "127.0.0.1:0"}, getenvFrom(nil), &stdout, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the gateway did not stop")
		}
	})
	re := regexp.MustCompile(`listening on (http://127\.0\.0\.1:[0-9]+/)`)
	waitFor(t, "the gateway", 20*time.Second, done, &stderr, func() bool { return re.MatchString(stderr.String()) })
	url := re.FindStringSubmatch(stderr.String())[1]
	cctx, ccancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer ccancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(cctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect to the gateway: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	list, err := cs.ListTools(cctx, nil)
	if err != nil || len(list.Tools) != 31 {
		t.Fatalf("gateway tools: %v, %d", err, len(list.Tools))
	}
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "wf_read_world", Arguments: map[string]any{"id": ts.World.ID}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, ts.World.ID) {
		t.Fatalf("wf_read_world through the gateway: %v %+v", err, res)
	}
	// Each tool is served with the title, annotations and output schema
	// the server lists, and a call's structured content comes through.
	direct := mcpkit.NewClient(mcpkit.ServerConfig{Name: "wf", URL: ts.MCPURL(), Headers: map[string]string{"Authorization": "Bearer " + key}}, nil)
	defer direct.Close()
	if err := direct.Connect(cctx); err != nil {
		t.Fatal(err)
	}
	served := map[string]*mcp.Tool{}
	for _, tool := range list.Tools {
		served[tool.Name] = tool
	}
	annotated := 0
	for _, up := range direct.Tools() {
		got := served["wf_"+up.Name]
		if got == nil {
			t.Errorf("%s not served", up.Name)
			continue
		}
		if up.Annotations != nil {
			annotated++
		}
		for what, pair := range map[string][2]any{"title": {up.Title, got.Title}, "annotations": {up.Annotations, got.Annotations}, "output schema": {up.OutputSchema, got.OutputSchema}} {
			want, _ := json.Marshal(pair[0])
			have, _ := json.Marshal(pair[1])
			if string(want) != string(have) {
				t.Errorf("%s: %s %s, upstream %s", up.Name, what, have, want)
			}
		}
	}
	if annotated == 0 {
		t.Error("no WorldForge tool has annotations; the check above saw none")
	}
	want, err := direct.CallTool(cctx, "read_world", map[string]any{"id": ts.World.ID})
	if err != nil {
		t.Fatal(err)
	}
	wantSC, _ := json.Marshal(want.StructuredContent)
	haveSC, _ := json.Marshal(res.StructuredContent)
	if string(wantSC) != string(haveSC) {
		t.Errorf("structuredContent through the gateway %s, direct %s", haveSC, wantSC)
	}
	res, err = cs.CallTool(cctx, &mcp.CallToolParams{Name: "wf_read_world", Arguments: map[string]any{"id": "world_aaaaaaaaaaaaaaaaaaaa"}})
	if err != nil || !res.IsError || res.Content[0].(*mcp.TextContent).Text != "not_found" {
		t.Errorf("tool error through the gateway: %v %+v", err, res)
	}
}

// TestMCPConfigAloneAndFiltered: --config F is read alone (a user file
// is not), and a server's disabledTools hide tools from mcp servers (the
// HIDDEN column), mcp tools and mcp call.
func TestMCPConfigAloneAndFiltered(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, dbtest.Open(t))
	key := ts.Key(t, ts.Owner, wf.ScopeAll)
	xdg := t.TempDir()
	if err := os.MkdirAll(filepath.Join(xdg, "worldforge"), 0o700); err != nil {
		t.Fatal(err)
	}
	user, _ := json.Marshal(map[string]any{"servers": []any{map[string]any{"name": "from-user", "url": ts.MCPURL()}}})
	if err := os.WriteFile(filepath.Join(xdg, "worldforge", "mcp.json"), user, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "explicit.json")
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"wf": map[string]any{"url": ts.MCPURL(), "headers": map[string]string{"Authorization": "Bearer " + key},
			"disabledTools": []string{"read_world"}},
	}})
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_CONFIG_HOME": xdg}

	out := MustRunMain(t, env, "mcp", "servers", "--config", cfg)
	if !regexp.MustCompile(`(?m)^SERVER\s+TRANSPORT\s+PHASE\s+TOOLS\s+HIDDEN\s+RESOURCES\s+PROMPTS\s+ERROR$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^wf\s+http\s+ready\s+30\s+1\s`).MatchString(out) || strings.Contains(out, "from-user") {
		t.Errorf("mcp servers --config:\n%s", out)
	}
	// Without --config the user file is read.
	r := runMain(t, env, "mcp", "servers")
	if !strings.Contains(r.stdout, "from-user") {
		t.Errorf("mcp servers without --config does not read the user file: %v\n%s", r.err, r.stdout)
	}

	out = MustRunMain(t, env, "mcp", "tools", "--config", cfg)
	if n := strings.Count(out, "\n"); n != 30 || strings.Contains(out, "\tread_world\t") {
		t.Errorf("mcp tools: %d lines\n%s", n, out)
	}
	r = runMain(t, env, "mcp", "call", "--config", cfg, "wf", "read_world", `{"id":"`+ts.World.ID+`"}`)
	if exitCode(r.err) != 1 || !strings.Contains(r.err.Error(), "TOOL_NOT_FOUND") || !strings.Contains(r.err.Error(), `unknown tool "read_world"`) {
		t.Errorf("call of a hidden tool: exit %d, %v", exitCode(r.err), r.err)
	}

	// A bad pattern is a config error naming the entry and the field.
	bad := filepath.Join(t.TempDir(), "bad.json")
	data, _ = json.Marshal(map[string]any{"mcpServers": map[string]any{
		"wf": map[string]any{"url": ts.MCPURL(), "allowedTools": []string{"read_*", "list?"}},
	}})
	if err := os.WriteFile(bad, data, 0o600); err != nil {
		t.Fatal(err)
	}
	r = runMain(t, env, "mcp", "servers", "--config", bad)
	if exitCode(r.err) != 2 || !strings.Contains(r.stderr, "allowedTools[1]") || !strings.Contains(r.stderr, "wf") {
		t.Errorf("bad pattern: exit %d, %v\nstderr: %s", exitCode(r.err), r.err, r.stderr)
	}
}
