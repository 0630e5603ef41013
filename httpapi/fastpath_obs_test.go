package httpapi_test

import (
	"fmt"
	"io"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/bench"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// fastDeclineCodes is the fixed list of reasons the fast path gives for
// leaving an MCP POST to the go-sdk handler (fast_declined in the request
// log, reason on worldforge_mcp_requests_total).
var fastDeclineCodes = []string{
	"disabled", "protocol_version", "content_type", "accept", "last_event_id",
	"batch", "not_object", "not_request", "notification", "not_tools_call",
	"params", "mcp_headers", "id", "unknown_tool",
}

// TestFastPathObservability: every MCP POST's request log line says which
// path answered it (mcp_path fast or sdk) and, for sdk, why the fast path
// declined (fast_declined, one code per reason), and
// worldforge_mcp_requests_total{path,reason} counts the same, every series
// of the fixed list present from the start. One request per reason goes
// through the real server; none of them is a 5xx.
func TestFastPathObservability(t *testing.T) {
	logs := &logBuffer{}
	ts := testserver.StartWith(t, dbtest.Open(t), testserver.Config{Logger: jsonLogger(logs)})
	key := ts.Key(t, ts.Owner, wf.ScopeAll)

	// Every series exists, at 0, before any MCP request.
	m := testserver.Scrape(t, ts.URL+"/metrics")
	if !m.Has("worldforge_mcp_requests_total", "path", "fast", "reason", "") {
		t.Error("no worldforge_mcp_requests_total{path=fast} before the first request")
	}
	for _, code := range fastDeclineCodes {
		if !m.Has("worldforge_mcp_requests_total", "path", "sdk", "reason", code) {
			t.Errorf("no worldforge_mcp_requests_total{path=sdk,reason=%s} before the first request", code)
		}
	}

	const legacy, v2 = bench.Protocol20251125, bench.Protocol20260728
	call := func(protocol, tool string) string {
		return string(bench.ToolCallBody(1, protocol, tool, map[string]any{"id": ts.World.ID}))
	}
	headers := func(protocol, tool string, extra ...string) map[string]string {
		h := map[string]string{}
		for k, v := range bench.ToolCallHeaders(protocol, tool) {
			h[k] = v[0]
		}
		for i := 0; i+1 < len(extra); i += 2 {
			h[extra[i]] = extra[i+1]
		}
		return h
	}
	cases := []struct {
		name     string
		body     string
		header   map[string]string
		declined string // "" for the fast path
	}{
		{"fast", call(legacy, wf.ToolReadWorld), headers(legacy, wf.ToolReadWorld), ""},
		{"fast 2026-07-28", call(v2, wf.ToolReadWorld), headers(v2, wf.ToolReadWorld), ""},
		{"fast without a protocol header", call("", wf.ToolReadWorld), headers("", wf.ToolReadWorld), ""},
		{"unknown protocol version", call(legacy, wf.ToolReadWorld), headers(legacy, wf.ToolReadWorld, "Mcp-Protocol-Version", "1999-01-01"), "protocol_version"},
		{"content type", call(legacy, wf.ToolReadWorld), headers(legacy, wf.ToolReadWorld, "Content-Type", "text/plain"), "content_type"},
		{"accept", call(legacy, wf.ToolReadWorld), headers(legacy, wf.ToolReadWorld, "Accept", "application/json"), "accept"},
		{"last event id", call(legacy, wf.ToolReadWorld), headers(legacy, wf.ToolReadWorld, "Last-Event-ID", "1"), "last_event_id"},
		{"batch", "[" + call(legacy, wf.ToolReadWorld) + "]", headers(legacy, wf.ToolReadWorld), "batch"},
		{"not an object", `"tools/call"`, headers(legacy, wf.ToolReadWorld), "not_object"},
		{"not a request", `{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"read_world","arguments":{}}}`, headers(legacy, wf.ToolReadWorld), "not_request"},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, headers(legacy, wf.ToolReadWorld), "notification"},
		{"another method", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, headers(legacy, wf.ToolReadWorld), "not_tools_call"},
		{"params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_world","arguments":{"id":"x"},"task":{}}}`, headers(legacy, wf.ToolReadWorld), "params"},
		{"mcp headers", call(v2, wf.ToolReadWorld), headers(v2, wf.ToolReadWorld, "Mcp-Name", wf.ToolListCampaigns), "mcp_headers"},
		{"unknown tool", call(legacy, "no_such_tool"), headers(legacy, "no_such_tool"), "unknown_tool"},
	}
	want := map[string]float64{}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := fmt.Sprintf("fastobs-%d", i)
			c.header["X-Request-Id"] = id
			resp := post(t, ts, key, c.body, c.header)
			io.Copy(io.Discard, resp.Body)
			if resp.StatusCode >= 500 {
				t.Errorf("status %d", resp.StatusCode)
			}
			lines := awaitRequestLine(t, logs, id)
			if len(lines) != 1 {
				t.Fatalf("%d request lines for %s:\n%s", len(lines), id, logs)
			}
			wantPath, wantDeclined := "sdk", any(c.declined)
			if c.declined == "" {
				wantPath, wantDeclined = "fast", nil
			}
			if got := lines[0]["mcp_path"]; got != wantPath {
				t.Errorf("mcp_path = %v, want %s", got, wantPath)
			}
			if got := lines[0]["fast_declined"]; got != wantDeclined {
				t.Errorf("fast_declined = %v, want %v", got, wantDeclined)
			}
			if lines[0]["path"] != "/mcp" {
				t.Errorf("path = %v, want the URL path /mcp", lines[0]["path"])
			}
		})
		want[c.declined]++
	}

	// The one reason a working server never gives through HTTP: a server
	// without the fast path.
	sdkLogs := &logBuffer{}
	sdk := testserver.StartWith(t, dbtest.Open(t), testserver.Config{Logger: jsonLogger(sdkLogs), NoFastPath: true})
	sdkKey := sdk.Key(t, sdk.Owner, wf.ScopeAll)
	resp := post(t, sdk, sdkKey, call(legacy, wf.ToolReadWorld), headers(legacy, wf.ToolReadWorld, "X-Request-Id", "fastobs-off"))
	io.Copy(io.Discard, resp.Body)
	if lines := awaitRequestLine(t, sdkLogs, "fastobs-off"); len(lines) != 1 || lines[0]["mcp_path"] != "sdk" || lines[0]["fast_declined"] != "disabled" {
		t.Errorf("without the fast path: request lines %v, want mcp_path sdk, fast_declined disabled", lines)
	}
	if got := testserver.Scrape(t, sdk.URL+"/metrics").Value("worldforge_mcp_requests_total", "path", "sdk", "reason", "disabled"); got != 1 {
		t.Errorf("worldforge_mcp_requests_total{path=sdk,reason=disabled} = %v, want 1", got)
	}

	// Requests that are no MCP POST carry no mcp_path.
	for _, l := range logs.find(t, "request", nil) {
		if l["route"] != "/mcp" && (l["mcp_path"] != nil || l["fast_declined"] != nil) {
			t.Errorf("a request outside /mcp logged an MCP path: %v", l)
		}
	}

	m = testserver.Scrape(t, ts.URL+"/metrics")
	if got := m.Value("worldforge_mcp_requests_total", "path", "fast", "reason", ""); got != want[""] {
		t.Errorf("worldforge_mcp_requests_total{path=fast} = %v, want %v", got, want[""])
	}
	for _, code := range fastDeclineCodes {
		if got := m.Value("worldforge_mcp_requests_total", "path", "sdk", "reason", code); got != want[code] {
			t.Errorf("worldforge_mcp_requests_total{path=sdk,reason=%s} = %v, want %v", code, got, want[code])
		}
	}
	if got := m.Value("worldforge_mcp_requests_total", "path", "fast"); got != want[""] {
		t.Errorf("fast series with a reason: total %v, want %v", got, want[""])
	}
}

// awaitRequestLine returns the request log lines of request id once there
// is one (none after 10 s): the line is written when the handler returns,
// which the client may see its answer before.
func awaitRequestLine(t *testing.T, logs *logBuffer, id string) []map[string]any {
	t.Helper()
	return logs.await(t, "request", map[string]any{"request_id": id})
}
