package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

var fuzzClient = &http.Client{Timeout: 30 * time.Second}

// countToolCalls bounds from above the tools/call requests in a JSON-RPC
// body: a message, or a batch of them, whose "method" (in any letter case,
// in case a decoder were lenient) is "tools/call".
func countToolCalls(body []byte) int {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return 0
	}
	msgs := []any{v}
	if arr, ok := v.([]any); ok {
		msgs = arr
	}
	n := 0
	for _, m := range msgs {
		obj, ok := m.(map[string]any)
		if !ok {
			continue
		}
		for k, val := range obj {
			if strings.EqualFold(k, "method") && val == "tools/call" {
				n++
				break
			}
		}
	}
	return n
}

// FuzzMCPBody posts arbitrary bytes to /mcp with a valid key. The server
// never fails with 5xx; a body that is not JSON is 400 with a JSON-RPC parse
// error; no answer names Go types or packages; and no more audit rows
// appear than the body has tools/call requests.
func FuzzMCPBody(f *testing.F) {
	s := testserver.Start(f, dbtest.Open(f))
	key := s.Key(f, s.Owner, wf.ScopeAll)
	w := s.World.ID

	call := func(id, tool, args string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
	}
	for _, seed := range []string{
		call("1", "read_world", `{"id":"`+w+`"}`),
		call(`"abc"`, "search_pois", `{"world_id":"`+w+`","request":{"name":"chest"}}`),
		call("2", "read_world", `{"id":5}`),
		call("3", "no_such_tool", `{}`),
		call("4", "list_lore", `{"world_id":"`+w+`","collection":"factions"}`),
		call("5", "read_world", `{"id":"`+w+`","extra":{"a":1},"ID":"x"}`),
		call("6", "worldforge_create_world", `{"name":"W","size":"small","seed":"dragon"}`),
		call("7", "search_pois", `{"world_id":"`+w+`","request":{"x":1e30,"y":1.0}}`),
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}`,
		`{"jsonrpc":2,"id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"server/discover"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`[` + call("1", "read_world", `{"id":"`+w+`"}`) + `,{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`,
		`[]`,
		`[1,2]`,
		`{"jsonrpc":"2.0","id":1,"method":`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`,
		``,
		`   `,
		`null`,
		`"tools/call"`,
		`{}`,
		`{"jsonrpc":"1.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":-9223372036854775809,"method":"tools/call","params":{"name":"list_campaigns","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":{},"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_world","arguments":[]}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_world","arguments":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/call","params":{"name":"list_campaigns"}}`,
		`{"jsonrpc":"2.0","id":1,"Method":"tools/call","params":{"name":"list_campaigns"}}`,
		strings.Repeat("[", 2000) + strings.Repeat("]", 2000),
		strings.Repeat("[", 20000) + strings.Repeat("]", 20000),
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"a":` + strings.Repeat(`{"a":`, 1500) + `1` + strings.Repeat(`}`, 1500) + `}}`,
		"\xff\xfe{}",
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	} {
		f.Add([]byte(seed))
	}

	f.Fuzz(func(t *testing.T, body []byte) {
		before := s.AuditCount(t)
		req, err := http.NewRequest(http.MethodPost, s.MCPURL(), bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := fuzzClient.Do(req)
		if err != nil {
			t.Fatalf("post: %v", err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("read response: %v", err)
		}
		if resp.StatusCode >= 500 {
			t.Fatalf("body %q: status %d: %s", body, resp.StatusCode, data)
		}
		if !json.Valid(body) {
			var msg struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(data, &msg) != nil ||
				msg.JSONRPC != "2.0" || msg.Error == nil || msg.Error.Code != -32700 {
				t.Fatalf("invalid JSON %q: status %d %s; want 400 with a JSON-RPC parse error (-32700)", body, resp.StatusCode, data)
			}
		}
		if leak := leaksGo(string(data), string(body)); leak != "" {
			t.Fatalf("body %q: the answer names Go internals (%s): %s", body, leak, data)
		}
		after := s.AuditCount(t)
		if calls := countToolCalls(body); after < before || after-before > calls {
			t.Fatalf("body %q (%d tools/call): audit rows went %d → %d", body, calls, before, after)
		}
	})
}

// bearerAccepted is the credential syntax the server accepts: the scheme
// "Bearer" in any letter case, a space, then the token, with blanks allowed
// around the whole and around the token (HTTP strips spaces and tabs around
// a header value; the server also trims Unicode blanks).
func bearerAccepted(value, key string) bool {
	v := strings.TrimSpace(value)
	if len(v) < len("Bearer ") || !strings.EqualFold(v[:6], "Bearer") || v[6] != ' ' {
		return false
	}
	return strings.TrimSpace(v[7:]) == key
}

// FuzzBearerHeader sends arbitrary Authorization values to GET /me: only
// the valid key in the Bearer syntax gets in (200, its owner); everything
// else is 401 {"error":"unauthorized"}; nothing is 5xx.
func FuzzBearerHeader(f *testing.F) {
	s := testserver.Start(f, dbtest.Open(f))
	key := s.Key(f, s.Owner, wf.ScopeWorldRead)
	for _, seed := range []string{
		"Bearer " + key,
		"bearer " + key,
		"BEARER " + key,
		"Bearer  " + key + " ",
		"  Bearer " + key,
		"Bearer\t" + key,
		"Bearer " + key + " x",
		"Bearer " + key + "x",
		"Bearer " + key[:len(key)-1],
		"Bearer " + strings.ToUpper(key),
		"Basic " + key,
		"Bearer",
		"Bearer ",
		"Bearer wk_live_" + strings.Repeat("a", 32),
		"Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.",
		key,
		"",
		"Bearer " + strings.Repeat("x", 5000),
		"Bearer \u00a0" + key,
		"Bearer " + key + ",Bearer " + key,
	} {
		f.Add(seed)
	}

	f.Fuzz(func(t *testing.T, value string) {
		req, err := http.NewRequest(http.MethodGet, s.URL+"/me", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", value)
		resp, err := fuzzClient.Do(req)
		if err != nil {
			if strings.Contains(err.Error(), "invalid header field value") {
				return // the client will not send it (control characters)
			}
			t.Fatalf("GET /me with %q: %v", value, err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("read response: %v", err)
		}
		if resp.StatusCode >= 500 {
			t.Fatalf("Authorization %q: status %d: %s", value, resp.StatusCode, data)
		}
		var got map[string]any
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatalf("Authorization %q: status %d, body %q is not JSON", value, resp.StatusCode, data)
		}
		if bearerAccepted(value, key) {
			if resp.StatusCode != http.StatusOK || got["userId"] != s.Owner.ID || got["kind"] != string(wf.CredentialAPIKey) {
				t.Fatalf("Authorization %q: status %d %s; want 200 for the owner", value, resp.StatusCode, data)
			}
			return
		}
		if resp.StatusCode != http.StatusUnauthorized || len(got) != 1 || got["error"] != "unauthorized" {
			t.Fatalf("Authorization %q: status %d %s; want 401 {\"error\":\"unauthorized\"}", value, resp.StatusCode, data)
		}
		if h := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(h, "Bearer") {
			t.Fatalf("Authorization %q: WWW-Authenticate %q", value, h)
		}
	})
}
