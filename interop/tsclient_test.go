package interop

import (
	"strings"
	"testing"
	"time"

	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// TestTypeScriptClient runs tsclient.mjs: the official TypeScript SDK v1
// (initialize, 2025-11-25) and v2 client (legacy connect, and pinned to the
// stateless 2026-07-28 revision) list the tools, read the world, propose a
// wiki page and get not_found as an isError result.
func TestTypeScriptClient(t *testing.T) {
	dir := requireNodePackage(t, "WORLDFORGE_TEST_NODE_INTEROP", "@modelcontextprotocol/sdk", "@modelcontextprotocol/client")
	nodeBin := node(t)
	ts := testserver.Start(t, dbtest.Open(t))
	key := ts.Key(t, ts.Owner, "*")
	out, err := run(t, dir, 60*time.Second, nodeBin, "tsclient.mjs", ts.MCPURL(), key, ts.World.ID)
	if err != nil {
		t.Fatalf("tsclient.mjs: %v", err)
	}
	for _, want := range []string{
		"ok sdk-1 protocol", "ok sdk-1 tools/list", "ok sdk-1 read_world", "ok sdk-1 propose_wiki_page", "ok sdk-1 read_world unknown id",
		"ok client-2 tools/list", "ok client-2-stateless protocol", "ok client-2-stateless tools/list",
		"ok client-2-stateless read_world unknown id", "ok client-2-stateless no initialize", "ok sdk-1 initialize", "PASS",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}
