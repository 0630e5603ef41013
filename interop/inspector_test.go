package interop

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// TestInspectorCLI runs the MCP Inspector's CLI mode (the
// @modelcontextprotocol/inspector-cli package's mcp-inspector-cli bin, as a
// user would through npx) against the server: tools/list, read_world, and
// read_world with an unknown id.
func TestInspectorCLI(t *testing.T) {
	dir := requireNodePackage(t, "WORLDFORGE_TEST_NODE_INTEROP", "@modelcontextprotocol/inspector-cli")
	nodeBin := node(t)
	ts := testserver.Start(t, dbtest.Open(t))
	key := ts.Key(t, ts.Owner, "*")
	bin := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector-cli", "build", "cli.js")
	inspect := func(t *testing.T, args ...string) (string, error) {
		t.Helper()
		base := []string{bin, "--cli", ts.MCPURL(), "--transport", "http", "--header", "Authorization: Bearer " + key}
		// inspector-cli (every version through 1.0.3) reads its own
		// package.json with fs.existsSync("../package.json") — relative to
		// the working directory — but imports it relative to the module; it
		// only finds it when the working directory's parent holds a
		// package.json. interop/node_modules is such a directory.
		return run(t, filepath.Join(dir, "node_modules"), 30*time.Second, nodeBin, append(base, args...)...)
	}
	// result is the JSON object the CLI prints (after any banner lines).
	result := func(t *testing.T, out string, v any) {
		t.Helper()
		i := strings.Index(out, "{")
		if i < 0 {
			t.Fatalf("no JSON in output")
		}
		if err := json.NewDecoder(strings.NewReader(out[i:])).Decode(v); err != nil {
			t.Fatalf("decode output: %v", err)
		}
	}
	type callResult struct {
		Content []struct{ Type, Text string }
		IsError bool
	}

	t.Run("tools/list", func(t *testing.T) {
		out, err := inspect(t, "--method", "tools/list")
		if err != nil {
			t.Fatalf("inspector: %v", err)
		}
		var res struct{ Tools []struct{ Name string } }
		result(t, out, &res)
		if len(res.Tools) != 31 {
			t.Errorf("%d tools, want 31", len(res.Tools))
		}
	})
	t.Run("read_world", func(t *testing.T) {
		out, err := inspect(t, "--method", "tools/call", "--tool-name", "read_world", "--tool-arg", "id="+ts.World.ID)
		if err != nil {
			t.Fatalf("inspector: %v", err)
		}
		var res callResult
		result(t, out, &res)
		if res.IsError || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, ts.World.ID) {
			t.Errorf("read_world: %+v", res)
		}
	})
	t.Run("read_world unknown id", func(t *testing.T) {
		out, err := inspect(t, "--method", "tools/call", "--tool-name", "read_world", "--tool-arg", "id=no-such-world")
		if err != nil {
			t.Fatalf("inspector: %v", err)
		}
		var res callResult
		result(t, out, &res)
		if !res.IsError || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, "not_found") {
			t.Errorf("read_world unknown id: %+v", res)
		}
	})
}
