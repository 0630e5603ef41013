package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

var readTools = []string{
	"read_world", "read_campaign", "list_campaigns", "read_quest", "list_quests",
	"read_encounter", "list_encounters", "list_wiki_pages", "read_wiki_page",
	"search_wiki_pages", "wiki_page_history", "list_factions", "get_world_summary",
	"list_atlas_places", "read_atlas_node", "search_atlas_nodes", "search_pois", "list_lore",
}

// TestGoSDKClient drives the server with the official go-sdk client over
// streamable HTTP, statelessly (2026-07-28: server/discover, no
// initialize) and with the initialize handshake of older revisions.
func TestGoSDKClient(t *testing.T) {
	s := testserver.Start(t, dbtest.Open(t))
	key := s.Key(t, s.Owner, wf.ScopeAll)
	for _, protocol := range []string{"2026-07-28", "2025-11-25", "2025-06-18"} {
		t.Run(protocol, func(t *testing.T) {
			cs := connect(t, s, key, protocol)
			if got := cs.InitializeResult().ServerInfo.Name; got != "worldforge" {
				t.Errorf("server name = %q", got)
			}
			tools, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
				if tool.Description == "" {
					t.Errorf("tool %s has no description", tool.Name)
				}
				if tool.InputSchema == nil {
					t.Errorf("tool %s has no input schema", tool.Name)
				}
			}
			// The spec's 31 tools: 18 read, 6 propose, 7 commit and
			// direct-write; nothing else.
			all := append(slices.Clone(readTools), wf.ToolProposeQuest, wf.ToolProposeEncounter, wf.ToolProposeWikiPage,
				wf.ToolProposeWikiEdit, wf.ToolProposeAtlasPlace, wf.ToolProposeLore, wf.ToolCommitQuest,
				wf.ToolCommitEncounter, wf.ToolCreateCampaign, wf.ToolCreateWorld, wf.ToolResizeWorld,
				wf.ToolPlayerPickup, wf.ToolPlayerOpen)
			slices.Sort(all)
			slices.Sort(names)
			if len(all) != 31 || !slices.Equal(names, all) {
				t.Errorf("tools/list = %v, want the 31 of the spec %v", names, all)
			}

			before := s.AuditCount(t)
			text, isErr := callTool(t, cs, "read_world", map[string]any{"id": s.World.ID})
			if isErr {
				t.Fatalf("read_world failed: %s", text)
			}
			var w wf.World
			mustDecode(t, text, &w)
			if w.ID != s.World.ID || w.OwnerID != s.Owner.ID {
				t.Errorf("read_world = %+v", w)
			}
			var doc map[string]json.RawMessage
			mustDecode(t, string(w.JSON), &doc)
			if _, ok := doc["runtime"]; !ok {
				t.Errorf("read_world json has no runtime: %s", w.JSON)
			}
			if _, ok := doc["grid"]; !ok {
				t.Errorf("read_world json lost the authored grid: %s", w.JSON)
			}
			if got := s.AuditCount(t); got != before+1 {
				t.Errorf("audit rows = %d, want %d", got, before+1)
			}

			text, isErr = callTool(t, cs, "read_world", map[string]any{"id": "world_doesnotexist"})
			if !isErr || text != "not_found" {
				t.Errorf("missing world: %q isError=%v, want not_found", text, isErr)
			}
			if got := s.AuditCount(t); got != before+1 {
				t.Errorf("not_found wrote an audit row: %d, want %d", got, before+1)
			}
		})
	}
}

// TestSessionJWT calls a tool with a session JWT, which carries scope *.
func TestSessionJWT(t *testing.T) {
	s := testserver.Start(t, dbtest.Open(t))
	cs := connect(t, s, s.Token(t, s.Owner), "")
	if text, isErr := callTool(t, cs, "get_world_summary", map[string]any{"world_id": s.World.ID}); isErr {
		t.Fatalf("get_world_summary: %s", text)
	}
}

// TestUnresolvedOwner: a valid JWT whose user no longer exists (or never
// did) authenticates, but every tool answers missing_scopes:unresolved_owner.
func TestUnresolvedOwner(t *testing.T) {
	s := testserver.Start(t, dbtest.Open(t))
	tok := signJWT(t, s, jwt.MapClaims{
		"iss": "worldforge", "sub": "user_ghostwhoneverwas", "scope": "*",
		"exp": time.Now().Add(time.Hour).Unix(),
	})
	cs := connect(t, s, tok, "")
	text, isErr := callTool(t, cs, "list_campaigns", map[string]any{})
	if !isErr || text != "missing_scopes:unresolved_owner" {
		t.Fatalf("got %q isError=%v, want missing_scopes:unresolved_owner", text, isErr)
	}
}

// TestTransport checks the HTTP shape of /mcp itself.
func TestTransport(t *testing.T) {
	s := testserver.Start(t, dbtest.Open(t))
	key := s.Key(t, s.Owner, wf.ScopeAll)

	do := func(method string, header map[string]string) *http.Response {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, method, s.MCPURL(), nil)
		req.Header.Set("Authorization", "Bearer "+key)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}

	t.Run("GET without event-stream is 406", func(t *testing.T) {
		if resp := do(http.MethodGet, map[string]string{"Accept": "application/json"}); resp.StatusCode != http.StatusNotAcceptable {
			t.Errorf("status %d, want 406", resp.StatusCode)
		}
	})
	t.Run("GET with event-stream opens a stream", func(t *testing.T) {
		resp := do(http.MethodGet, map[string]string{"Accept": "text/event-stream"})
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Errorf("status %d content-type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	})
	t.Run("DELETE is 200", func(t *testing.T) {
		if resp := do(http.MethodDelete, nil); resp.StatusCode != http.StatusOK {
			t.Errorf("status %d, want 200", resp.StatusCode)
		}
	})
	t.Run("PUT is 405", func(t *testing.T) {
		if resp := do(http.MethodPut, nil); resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("status %d, want 405", resp.StatusCode)
		}
	})
	t.Run("initialize issues no session id", func(t *testing.T) {
		resp := post(t, s, key, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`, nil)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
			t.Errorf("got Mcp-Session-Id %q from a stateless server", sid)
		}
		if !strings.Contains(string(body), `"protocolVersion":"2025-06-18"`) {
			t.Errorf("initialize result: %s", body)
		}
	})
	t.Run("tools/call without initialize", func(t *testing.T) {
		resp := post(t, s, key, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_world","arguments":{"id":"`+s.World.ID+`"}}}`,
			map[string]string{"Mcp-Protocol-Version": "2025-06-18"})
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), s.World.ID) {
			t.Errorf("status %d: %s", resp.StatusCode, body)
		}
	})
	t.Run("oversized body is 413 and changes nothing", func(t *testing.T) {
		before := s.AuditCount(t)
		big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_world","arguments":{"id":"` + strings.Repeat("x", 5<<20) + `"}}}`
		resp := post(t, s, key, big, nil)
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("status %d, want 413", resp.StatusCode)
		}
		if got := s.AuditCount(t); got != before {
			t.Errorf("audit rows %d, want %d", got, before)
		}
	})
	t.Run("malformed JSON is a parse error", func(t *testing.T) {
		resp := post(t, s, key, `{"jsonrpc":"2.0","id":1,"method":`, nil)
		body, _ := io.ReadAll(resp.Body)
		var msg struct {
			Error struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(body, &msg); err != nil || msg.Error.Code != -32700 {
			t.Errorf("status %d body %s: want a JSON-RPC parse error (-32700)", resp.StatusCode, body)
		}
	})
	t.Run("unknown route is 404 JSON", func(t *testing.T) {
		resp, err := http.Get(s.URL + "/nope")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("status %d", resp.StatusCode)
		}
	})
}

// TestUndeclaredCapabilities: the server declares tools only, so prompts
// and resources methods are "method not found", on every revision.
func TestUndeclaredCapabilities(t *testing.T) {
	s := testserver.Start(t, dbtest.Open(t))
	key := s.Key(t, s.Owner, wf.ScopeAll)
	for _, protocol := range []string{"2026-07-28", "2025-11-25"} {
		cs := connect(t, s, key, protocol)
		if caps := cs.InitializeResult().Capabilities; caps.Prompts != nil || caps.Resources != nil || caps.Tools == nil {
			t.Errorf("%s: capabilities %+v", protocol, caps)
		}
		if _, err := cs.ListPrompts(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("%s: prompts/list: %v", protocol, err)
		}
		if _, err := cs.ListResources(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("%s: resources/list: %v", protocol, err)
		}
	}
}
