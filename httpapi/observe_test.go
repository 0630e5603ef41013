package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/httpapi"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/obs"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/mcpserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// getJSON sends an unauthenticated GET and decodes the JSON answer.
func getJSON(t testing.TB, url string) (int, http.Header, map[string]any) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	var body map[string]any
	data, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(data, &body); err != nil {
		t.Fatalf("GET %s: %d %q is not a JSON object: %v", url, resp.StatusCode, data, err)
	}
	return resp.StatusCode, resp.Header, body
}

// TestHealthAndReadiness: /healthz and /readyz answer without a
// credential; /readyz turns 503 with a reason when the database is closed
// and when the server shuts down, while /healthz stays 200. (A schema
// behind this binary's migrations is sqlstore's TestReady.)
func TestHealthAndReadiness(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := testserver.Start(t, db)
		check := func(path string, wantStatus int, want map[string]any) {
			t.Helper()
			status, h, body := getJSON(t, s.URL+path)
			if status != wantStatus || len(body) != len(want) {
				t.Errorf("GET %s = %d %v, want %d %v", path, status, body, wantStatus, want)
			}
			for k, v := range want {
				if body[k] != v {
					t.Errorf("GET %s: %s = %v, want %v", path, k, body[k], v)
				}
			}
			if h.Get("X-Request-Id") == "" {
				t.Errorf("GET %s: no X-Request-Id", path)
			}
			if ct := h.Get("Content-Type"); ct != "application/json" {
				t.Errorf("GET %s: Content-Type %q", path, ct)
			}
		}
		ok := map[string]any{"status": "ok"}
		check("/healthz", 200, ok)
		check("/readyz", 200, map[string]any{"status": "ready"})

		// The database closed under the server.
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		check("/readyz", 503, map[string]any{"status": "unavailable", "reason": sqlstore.ReasonClosed})
		check("/healthz", 200, ok)

		// Shutting down.
		s.API.Close()
		check("/readyz", 503, map[string]any{"status": "unavailable", "reason": "shutting_down"})
		check("/healthz", 200, ok)
	})
}

// TestReadyUnreachable: a readiness check that fails with an error of its
// own (no reason) is 503 not_ready, and the error text, which may name
// hosts, stays out of the answer.
func TestReadyUnreachable(t *testing.T) {
	ts := testserver.Start(t, dbtest.Open(t))
	api := httpapi.New(httpapi.Options{Auth: ts.Auth, MCP: ts.Tools.MCP(), Store: ts.DB,
		Ready: func(context.Context) error { return fmt.Errorf("dial tcp 10.1.2.3:5432: i/o timeout") }})
	url := testserver.Listen(t, api)
	status, _, body := getJSON(t, url+"/readyz")
	if status != 503 || body["reason"] != "not_ready" || len(body) != 2 {
		t.Errorf("GET /readyz = %d %v, want 503 not_ready", status, body)
	}
}

// rpcCall posts a tools/call (protocol 2025-11-25, which the fast path
// takes) and returns the tool's text, isError and the response.
func rpcCall(t testing.TB, url, token, tool string, args any, header map[string]string) (string, bool, *http.Response) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("tools/call %s: %v", tool, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out struct {
		Result struct {
			Content []struct{ Text string }
			IsError bool
		}
	}
	if resp.StatusCode != 200 || json.Unmarshal(data, &out) != nil || len(out.Result.Content) != 1 {
		t.Fatalf("tools/call %s: %d %s", tool, resp.StatusCode, data)
	}
	return out.Result.Content[0].Text, out.Result.IsError, resp
}

// TestMetricsToolCalls: a tools/call moves the per-tool counters and the
// latency histogram on the fast path and on the go-sdk path alike; a failed
// call moves the error counter of its code; the HTTP counter has the /mcp
// route.
func TestMetricsToolCalls(t *testing.T) {
	ts := testserver.Start(t, dbtest.Open(t))
	sdk := httpapi.New(httpapi.Options{Auth: ts.Auth, MCP: ts.Tools.MCP(), Store: ts.DB}) // no Tools: --fast-path=false
	sdkURL := testserver.Listen(t, sdk)
	key := ts.Key(t, ts.Owner, wf.ScopeAll)
	narrow := ts.Key(t, ts.Owner, wf.ScopeCampaignRead)

	for _, tc := range []struct {
		name string
		base string
		api  *httpapi.Server
		fast bool
	}{
		{"fast path", ts.URL, ts.API, true},
		{"go-sdk path", sdkURL, sdk, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fastBefore := tc.api.FastPathCalls()
			mcpURL := tc.base + "/mcp"
			if text, isErr, _ := rpcCall(t, mcpURL, key, wf.ToolReadWorld, map[string]any{"id": ts.World.ID}, nil); isErr {
				t.Fatalf("read_world: %s", text)
			}
			if text, isErr, _ := rpcCall(t, mcpURL, key, wf.ToolReadWorld, map[string]any{"id": "world_nope"}, nil); !isErr || text != "not_found" {
				t.Fatalf("read_world of a missing world = %q (isError %v)", text, isErr)
			}
			if text, isErr, _ := rpcCall(t, mcpURL, narrow, wf.ToolReadWorld, map[string]any{"id": ts.World.ID}, nil); !isErr || !strings.HasPrefix(text, "missing_scopes:") {
				t.Fatalf("read_world without world:read = %q (isError %v)", text, isErr)
			}
			if text, isErr, _ := rpcCall(t, mcpURL, key, wf.ToolReadWorld, map[string]any{"id": 7}, nil); !isErr || !strings.HasPrefix(text, "bad_request") {
				t.Fatalf("read_world with a numeric id = %q (isError %v)", text, isErr)
			}
			// The official client too (stateless 2026-07-28).
			cs := testserver.Connect(t, mcpURL, key, "")
			if text, isErr := testserver.CallText(t, cs, wf.ToolListCampaigns, map[string]any{}); isErr {
				t.Fatalf("list_campaigns: %s", text)
			}
			if got := tc.api.FastPathCalls() - fastBefore; (got == 5) != tc.fast || (!tc.fast && got != 0) {
				t.Fatalf("the fast path answered %d of the 5 calls (fast path on: %v)", got, tc.fast)
			}

			m := testserver.Scrape(t, tc.base+"/metrics")
			for _, c := range []struct {
				name   string
				labels []string
				want   float64
			}{
				{"worldforge_tool_calls_total", []string{"tool", "read_world", "outcome", "ok"}, 1},
				{"worldforge_tool_calls_total", []string{"tool", "read_world", "outcome", "error"}, 3},
				{"worldforge_tool_calls_total", []string{"tool", "list_campaigns", "outcome", "ok"}, 1},
				{"worldforge_tool_errors_total", []string{"tool", "read_world", "code", wf.ENotFound}, 1},
				{"worldforge_tool_errors_total", []string{"tool", "read_world", "code", wf.EMissingScopes}, 1},
				{"worldforge_tool_errors_total", []string{"tool", "read_world", "code", wf.EBadRequest}, 1},
				{"worldforge_tool_errors_total", []string{"tool", "list_campaigns"}, 0},
				{"worldforge_tool_call_duration_seconds_count", []string{"tool", "read_world"}, 4},
				{"worldforge_tool_call_duration_seconds_count", []string{"tool", "list_campaigns"}, 1},
				// The four calls, the client's server/discover and its call.
				{"worldforge_http_requests_total", []string{"route", "/mcp", "method", "POST", "code", "200"}, 6},
				{"worldforge_http_request_duration_seconds_count", []string{"route", "/mcp", "method", "POST"}, 6},
			} {
				if got := m.Value(c.name, c.labels...); got != c.want {
					t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
				}
			}
			if !m.Has("worldforge_tool_call_duration_seconds_bucket", "tool", "read_world", "le", "+Inf") {
				t.Error("no latency histogram buckets for read_world")
			}
		})
	}
}

// TestMetricsRoutesAndStore: REST requests are counted by route pattern,
// never by raw path; the store's pools, audit queue and group-commit sizes
// and the Go and process collectors are exported.
func TestMetricsRoutesAndStore(t *testing.T) {
	dbtest.ForEachEngine(t, testMetricsRoutesAndStore)
}

func testMetricsRoutesAndStore(t *testing.T, db *sqlstore.DB) {
	ts := testserver.Start(t, db)
	key := ts.Key(t, ts.Owner, wf.ScopeAll)
	client := &http.Client{Transport: &testserver.BearerTransport{Token: key}, Timeout: 10 * time.Second}
	do := func(method, path, body string) int {
		t.Helper()
		req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := do("GET", "/me", ""); st != 200 {
		t.Fatalf("GET /me = %d", st)
	}
	if st := do("PUT", "/worlds/"+ts.World.ID+"/presence", `{"x":1,"y":1}`); st != 200 {
		t.Fatalf("PUT presence = %d", st)
	}
	if st := do("PUT", "/worlds/world_unknownxyz/presence", `{"x":1,"y":1}`); st != 404 {
		t.Fatalf("PUT presence of an unknown world = %d", st)
	}
	if st := do("GET", "/no/such/path", ""); st != 404 {
		t.Fatalf("GET /no/such/path = %d", st)
	}
	if _, _, resp := rpcCall(t, ts.MCPURL(), key, wf.ToolReadWorld, map[string]any{"id": ts.World.ID}, nil); resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}

	m := testserver.Scrape(t, ts.URL+"/metrics")
	for _, c := range []struct {
		labels []string
		want   float64
	}{
		{[]string{"route", "GET /me", "method", "GET", "code", "200"}, 1},
		{[]string{"route", "PUT /worlds/{id}/presence", "method", "PUT", "code", "200"}, 1},
		{[]string{"route", "PUT /worlds/{id}/presence", "method", "PUT", "code", "404"}, 1},
		{[]string{"route", "/", "method", "GET", "code", "404"}, 1},
	} {
		if got := m.Value("worldforge_http_requests_total", c.labels...); got != c.want {
			t.Errorf("worldforge_http_requests_total%v = %v, want %v", c.labels, got, c.want)
		}
	}
	for _, s := range m {
		for k, v := range s.Labels {
			if strings.Contains(v, ts.World.ID) || strings.Contains(v, "world_unknownxyz") || strings.Contains(v, "/no/such") {
				t.Errorf("%s has a raw path in label %s=%q", s.Name, k, v)
			}
		}
	}

	// The store: its pools (SQLite's writer and reader, PostgreSQL's one),
	// the audit queue, the commit sizes (the presence update and read_world
	// each wrote an audit row).
	pools := []string{sqlstore.PoolWriter, sqlstore.PoolReader}
	if db.Engine() == sqlstore.EnginePostgres {
		pools = []string{sqlstore.PoolMain}
	}
	for _, pool := range pools {
		if !m.Has("worldforge_db_open_connections", "pool", pool) || m.Value("worldforge_db_max_open_connections", "pool", pool) < 1 {
			t.Errorf("no connection gauges for pool %s", pool)
		}
		for _, name := range []string{"worldforge_db_in_use_connections", "worldforge_db_idle_connections", "worldforge_db_wait_count_total", "worldforge_db_wait_duration_seconds_total"} {
			if !m.Has(name, "pool", pool) {
				t.Errorf("no %s{pool=%s}", name, pool)
			}
		}
	}
	if db.Engine() == sqlstore.EngineSQLite && m.Value("worldforge_db_max_open_connections", "pool", sqlstore.PoolWriter) != 1 {
		t.Errorf("the SQLite writer pool's max is %v, want 1", m.Value("worldforge_db_max_open_connections", "pool", sqlstore.PoolWriter))
	}
	if !m.Has("worldforge_audit_queue_depth") {
		t.Error("no worldforge_audit_queue_depth")
	}
	commits := m.Value("worldforge_audit_commit_rows_count")
	rows := m.Value("worldforge_audit_commit_rows_sum")
	if commits < 1 || rows < 2 || m.Value("worldforge_audit_commit_rows_bucket", "le", "+Inf") != commits {
		t.Errorf("audit commits: count %v, sum %v, +Inf bucket %v; want at least 1 commit of the 2 rows", commits, rows, m.Value("worldforge_audit_commit_rows_bucket", "le", "+Inf"))
	}
	if !m.Has("go_goroutines") || !m.Has("process_start_time_seconds") {
		t.Error("no Go or process collector metrics")
	}
	if m.Value("worldforge_http_requests_in_flight") != 1 { // the scrape itself
		t.Errorf("requests in flight = %v during the scrape, want 1", m.Value("worldforge_http_requests_in_flight"))
	}
}

// TestMetricsDisabled: DisableMetrics removes /metrics.
func TestMetricsDisabled(t *testing.T) {
	ts := testserver.Start(t, dbtest.Open(t))
	url := testserver.Listen(t, httpapi.New(httpapi.Options{Auth: ts.Auth, MCP: ts.Tools.MCP(), Store: ts.DB, DisableMetrics: true}))
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics with metrics disabled = %d, want 404", resp.StatusCode)
	}
}

// logBuffer collects JSON log lines.
type logBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	written chan struct{} // closed at the next Write; nil until next asks
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.written != nil {
		close(b.written)
		b.written = nil
	}
	return b.buf.Write(p)
}

// next returns a channel closed at the buffer's next write.
func (b *logBuffer) next() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.written == nil {
		b.written = make(chan struct{})
	}
	return b.written
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// lines decodes every line.
func (b *logBuffer) lines(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(b.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line %q is not JSON: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// find returns the lines with msg whose attributes include want.
func (b *logBuffer) find(t testing.TB, msg string, want map[string]any) []map[string]any {
	t.Helper()
	var out []map[string]any
next:
	for _, l := range b.lines(t) {
		if l["msg"] != msg {
			continue
		}
		for k, v := range want {
			if l[k] != v {
				continue next
			}
		}
		out = append(out, l)
	}
	return out
}

// await returns the lines find returns once there is one, looking again
// at each write to the buffer; after 10 s it returns none.
func (b *logBuffer) await(t testing.TB, msg string, want map[string]any) []map[string]any {
	t.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		written := b.next() // before looking: a write meanwhile is not missed
		if lines := b.find(t, msg, want); len(lines) > 0 {
			return lines
		}
		select {
		case <-written:
		case <-timeout.C:
			return b.find(t, msg, want)
		}
	}
}

func jsonLogger(b *logBuffer) *slog.Logger {
	return slog.New(obs.NewHandler(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})))
}

// TestRequestLog: one line per request with the request id (the client's
// when sane, returned as X-Request-Id), method, route, the MCP path that
// answered (mcp_path, fast_declined), tool, the actor's user and key ids,
// status and duration; the credential never appears.
func TestRequestLog(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprintf("fast=%v", fast), func(t *testing.T) {
			logs := &logBuffer{}
			ts := testserver.StartWith(t, dbtest.Open(t), testserver.Config{Logger: jsonLogger(logs), NoFastPath: !fast})
			secret, k, err := ts.Auth.CreateKey(context.Background(), ts.Owner.ID, []string{wf.ScopeAll})
			if err != nil {
				t.Fatal(err)
			}
			jwt := ts.Token(t, ts.GM)

			// A sane incoming id is kept and echoed.
			_, _, resp := rpcCall(t, ts.MCPURL(), secret, wf.ToolReadWorld, map[string]any{"id": ts.World.ID}, map[string]string{"X-Request-Id": "req-42.abc"})
			if got := resp.Header.Get("X-Request-Id"); got != "req-42.abc" {
				t.Errorf("X-Request-Id = %q, want the client's req-42.abc", got)
			}
			lines := logs.find(t, "request", map[string]any{"request_id": "req-42.abc"})
			if len(lines) != 1 {
				t.Fatalf("%d request lines with the id, want 1:\n%s", len(lines), logs)
			}
			for k, v := range map[string]any{"level": "INFO", "method": "POST", "route": "/mcp", "path": "/mcp", "tool": "read_world",
				"user_id": ts.Owner.ID, "key_id": k.ID, "status": float64(200)} {
				if lines[0][k] != v {
					t.Errorf("request line %s = %v, want %v", k, lines[0][k], v)
				}
			}
			// Which path answered: the fast path, or the go-sdk handler
			// because this server runs without it.
			wantPath, wantDeclined := "fast", any(nil)
			if !fast {
				wantPath, wantDeclined = "sdk", "disabled"
			}
			if lines[0]["mcp_path"] != wantPath || lines[0]["fast_declined"] != wantDeclined {
				t.Errorf("request line mcp_path %v, fast_declined %v; want %s, %v", lines[0]["mcp_path"], lines[0]["fast_declined"], wantPath, wantDeclined)
			}
			if d, ok := lines[0]["duration_ms"].(float64); !ok || d < 0 {
				t.Errorf("request line duration_ms = %v", lines[0]["duration_ms"])
			}
			if _, ok := lines[0]["tool_error"]; ok {
				t.Errorf("a successful call logged tool_error: %v", lines[0])
			}

			// An insane one is replaced; a tool error is logged with its code;
			// a JWT actor has no key id.
			for _, bad := range []string{"has space", strings.Repeat("x", 129), "quote\"d", "é"} {
				_, _, resp = rpcCall(t, ts.MCPURL(), jwt, wf.ToolReadWorld, map[string]any{"id": "world_nope"}, map[string]string{"X-Request-Id": bad})
				id := resp.Header.Get("X-Request-Id")
				if id == bad || len(id) < 16 || strings.ContainsAny(id, " \n") {
					t.Errorf("incoming X-Request-Id %q answered with %q, want a fresh id", bad, id)
				}
				lines = logs.find(t, "request", map[string]any{"request_id": id})
				if len(lines) != 1 || lines[0]["tool_error"] != wf.ENotFound || lines[0]["user_id"] != ts.GM.ID || lines[0]["key_id"] != nil {
					t.Errorf("request line of %s = %v, want tool_error not_found, the GM, no key", id, lines)
				}
			}

			// REST, and an unauthenticated request.
			req, _ := http.NewRequest("GET", ts.URL+"/me", nil)
			req.Header.Set("Authorization", "Bearer "+secret)
			if resp, err := http.DefaultClient.Do(req); err != nil {
				t.Fatal(err)
			} else {
				resp.Body.Close()
				if lines := logs.find(t, "request", map[string]any{"request_id": resp.Header.Get("X-Request-Id"), "route": "GET /me", "user_id": ts.Owner.ID, "status": float64(200)}); len(lines) != 1 {
					t.Errorf("GET /me: %d request lines", len(lines))
				} else if _, ok := lines[0]["mcp_path"]; ok {
					t.Errorf("GET /me logged an MCP path: %v", lines[0])
				}
			}
			req, _ = http.NewRequest("GET", ts.URL+"/me", nil)
			req.Header.Set("Authorization", "Bearer wk_live_"+strings.Repeat("z", 32))
			if resp, err := http.DefaultClient.Do(req); err != nil {
				t.Fatal(err)
			} else {
				resp.Body.Close()
				lines := logs.find(t, "request", map[string]any{"request_id": resp.Header.Get("X-Request-Id"), "status": float64(401)})
				if len(lines) != 1 || lines[0]["user_id"] != nil {
					t.Errorf("401: request lines %v", lines)
				}
			}

			all := logs.String()
			for _, cred := range []string{secret, jwt, strings.Repeat("z", 32)} {
				if strings.Contains(all, cred) {
					t.Fatalf("the logs contain a credential:\n%s", all)
				}
			}
			if n := len(logs.find(t, "request", nil)); n != 7 {
				t.Errorf("%d request lines for 7 requests:\n%s", n, all)
			}
		})
	}
}

// staticAuth authenticates every token as one actor, without the store.
type staticAuth struct{ actor *wf.Actor }

func (a staticAuth) Authenticate(context.Context, string) (*wf.Actor, error) { return a.actor, nil }

// TestToolErrorLogCarriesRequestID: an internal tool failure (the
// database closed under the server) is logged deep in the tool pipeline
// with the request's id, on both paths.
func TestToolErrorLogCarriesRequestID(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprintf("fast=%v", fast), func(t *testing.T) {
			logs := &logBuffer{}
			log := jsonLogger(logs)
			db := dbtest.Open(t)
			owner := &wf.User{Name: "Owner"}
			if err := db.CreateUser(context.Background(), owner); err != nil {
				t.Fatal(err)
			}
			tools, err := mcpserver.New(db, &mcpserver.Options{Logger: log})
			if err != nil {
				t.Fatal(err)
			}
			opts := httpapi.Options{Auth: staticAuth{&wf.Actor{UserID: owner.ID, Kind: wf.CredentialSession, Scopes: []string{wf.ScopeAll}}},
				MCP: tools.MCP(), Store: db, Logger: log}
			if fast {
				opts.Tools = tools
			}
			api := httpapi.New(opts)
			url := testserver.Listen(t, api) + "/mcp"
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			text, isErr, resp := rpcCall(t, url, "any", wf.ToolListCampaigns, map[string]any{}, map[string]string{"X-Request-Id": "deep-1"})
			if !isErr || text != "internal_error" {
				t.Fatalf("list_campaigns on a closed database = %q (isError %v), want internal_error", text, isErr)
			}
			if got := api.FastPathCalls(); (got == 1) != fast {
				t.Errorf("fast path calls = %d", got)
			}
			if resp.Header.Get("X-Request-Id") != "deep-1" {
				t.Errorf("X-Request-Id = %q", resp.Header.Get("X-Request-Id"))
			}
			if lines := logs.find(t, "tool failed", map[string]any{"request_id": "deep-1", "tool": wf.ToolListCampaigns, "level": "ERROR"}); len(lines) != 1 {
				t.Errorf("tool failed lines with the request id: %d, want 1:\n%s", len(lines), logs)
			}
			if lines := logs.find(t, "request", map[string]any{"request_id": "deep-1", "tool_error": wf.EInternal}); len(lines) != 1 {
				t.Errorf("request lines: %d, want 1:\n%s", len(lines), logs)
			}
			m := testserver.Scrape(t, strings.TrimSuffix(url, "/mcp")+"/metrics")
			if got := m.Value("worldforge_tool_errors_total", "tool", wf.ToolListCampaigns, "code", wf.EInternal); got != 1 {
				t.Errorf("internal errors counted: %v, want 1", got)
			}
		})
	}
}
