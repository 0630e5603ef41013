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
	res, err = cs.CallTool(cctx, &mcp.CallToolParams{Name: "wf_read_world", Arguments: map[string]any{"id": "world_aaaaaaaaaaaaaaaaaaaa"}})
	if err != nil || !res.IsError || res.Content[0].(*mcp.TextContent).Text != "not_found" {
		t.Errorf("tool error through the gateway: %v %+v", err, res)
	}
}
