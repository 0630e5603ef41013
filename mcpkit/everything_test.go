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
)

// envEverything names the server-everything entry point (dist/index.js of
// @modelcontextprotocol/server-everything, installed by `npm ci` in
// interop/); .ci/run sets it when npm could install it.
const envEverything = "MCPKIT_TEST_EVERYTHING"

// TestServerEverything drives the reference "everything" server of the MCP
// project over stdio: a server none of us wrote. Opt-in: it runs only when
// MCPKIT_TEST_EVERYTHING names its entry point and node is on PATH.
func TestServerEverything(t *testing.T) {
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
	c := NewClient(ServerConfig{Name: "everything", Command: node, Args: []string{entry, "stdio"}}, opts())
	defer c.Close()
	if err := c.Connect(ctx); err != nil {
		t.Fatalf("connect: %v", err)
	}
	if info := c.InitializeResult(); info == nil || !strings.Contains(info.ServerInfo.Name, "everything") {
		t.Fatalf("server info: %+v", info)
	}
	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "echo") {
		t.Fatalf("tools: %v", names)
	}
	res, err := c.CallTool(ctx, "echo", map[string]any{"message": "hello from mcpkit"})
	if err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("echo: %v %+v", err, res)
	}
	// A wrong argument type is refused: a JSON-RPC error or an isError
	// result, never a plain success.
	if r, err := c.CallTool(ctx, "echo", map[string]any{"message": 5}); err == nil && !r.IsError {
		t.Errorf("echo with a number was accepted: %+v", r)
	}
	// Its long-running operation (4 s, progress every 0.5 s) outlasts a
	// 1.5 s timeout unless progress restarts it.
	long := map[string]any{"duration": 4, "steps": 8}
	res, err = c.CallTool(WithRequestTimeout(ctx, RequestTimeout{Timeout: 1500 * time.Millisecond, ResetOnProgress: true}), "trigger-long-running-operation", long)
	if err != nil || res.IsError || !strings.Contains(resultText(res), "completed") {
		t.Errorf("long-running operation with the timeout restarted on progress: %v %+v", err, res)
	}
	_, err = c.CallTool(WithRequestTimeout(ctx, RequestTimeout{Timeout: 1500 * time.Millisecond}), "trigger-long-running-operation", long)
	if e := (*Error)(nil); !errors.As(err, &e) || e.Code != CodeTimeout {
		t.Errorf("long-running operation without restarts: %v, want TIMEOUT", err)
	}
	resources, err := c.ListResources(ctx) // paginated by the server
	if err != nil || len(resources) == 0 {
		t.Fatalf("resources: %v, %d", err, len(resources))
	}
	if _, err := c.ReadResource(ctx, resources[0].URI); err != nil {
		t.Errorf("read %s: %v", resources[0].URI, err)
	}
	prompts, err := c.ListPrompts(ctx)
	if err != nil || len(prompts) == 0 {
		t.Fatalf("prompts: %v, %d", err, len(prompts))
	}
	t.Logf("server-everything: %d tools, %d resources, %d prompts", len(tools), len(resources), len(prompts))
	if err := c.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if p := c.Phase(); p != PhaseClosed {
		t.Errorf("phase after close: %s", p)
	}
}
