package httpapi_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/httpapi"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// The abuse limits (limits.go), end to end: the real SQLite store, the
// real handler on 127.0.0.1:0.

// limitedServer serves ts's store, tools and authenticator through a
// second handler with the given limits, on an http.Server with conn's
// limits (the defaults when nil), and returns its base URL.
func limitedServer(t *testing.T, ts *testserver.Server, lim httpapi.Limits, conn *httpapi.ConnLimits) string {
	t.Helper()
	return limitedServerLogged(t, ts, lim, conn, nil)
}

// limitedServerLogged is limitedServer logging as jsonLogger to logs
// (nil: no log).
func limitedServerLogged(t *testing.T, ts *testserver.Server, lim httpapi.Limits, conn *httpapi.ConnLimits, logs *logBuffer) string {
	t.Helper()
	opts := httpapi.Options{Auth: ts.Auth, MCP: ts.Tools.MCP(), Tools: ts.Tools, Store: ts.DB, Limits: lim}
	if logs != nil {
		opts.Logger = jsonLogger(logs)
	}
	api := httpapi.New(opts)
	c := httpapi.DefaultConnLimits()
	if conn != nil {
		c = *conn
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: api}
	c.Apply(srv)
	go srv.Serve(ln)
	t.Cleanup(func() {
		api.Close()
		srv.Close()
	})
	return "http://" + ln.Addr().String()
}

// reply is a response as a test sees it.
type reply struct {
	status int
	header http.Header
	body   string
}

// request sends one request; host and origin replace the Host and Origin
// headers when not empty; h adds headers.
func request(t *testing.T, method, url, token, host, origin, body string, h http.Header) reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if host != "" {
		req.Host = host
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, string(b)}
}

// wantRateLimited checks a 429: Retry-After a whole number of seconds of
// at least 1, and the JSON body {"error":"rate_limited"[,"detail":…]}.
func wantRateLimited(t *testing.T, what string, r reply, detail string) {
	t.Helper()
	if r.status != http.StatusTooManyRequests {
		t.Fatalf("%s: %d %s, want 429", what, r.status, r.body)
	}
	if n, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || n < 1 {
		t.Errorf("%s: Retry-After %q, want whole seconds >= 1", what, r.header.Get("Retry-After"))
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q", what, ct)
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(r.body), &got); err != nil || got["error"] != wf.ERateLimited || !strings.Contains(got["detail"], detail) || (detail == "" && len(got) != 1) {
		t.Errorf("%s: body %s, want {\"error\":\"rate_limited\"} (detail containing %q)", what, r.body, detail)
	}
}

// TestRateLimit: each credential has its own token bucket on REST and
// /mcp alike; a request over it is 429 with Retry-After and runs nothing;
// failed authentications are limited per remote IP without locking out
// valid credentials; and with no limits set nothing is limited.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, dbtest.Open(t))
	// One token per 100 s: nothing refills while the test runs.
	base := limitedServer(t, ts, httpapi.Limits{Rate: 0.01, Burst: 3}, nil)
	world := mustJSON(map[string]string{"id": ts.World.ID})

	t.Run("REST", func(t *testing.T) {
		keyA, keyB := ts.Key(t, ts.Owner, wf.ScopeAll), ts.Key(t, ts.Owner, wf.ScopeAll)
		for i := range 3 {
			if r := request(t, "GET", base+"/me", keyA, "", "", "", nil); r.status != 200 {
				t.Fatalf("request %d of the burst: %d %s", i+1, r.status, r.body)
			}
		}
		before := ts.AuditCount(t)
		wantRateLimited(t, "4th GET /me", request(t, "GET", base+"/me", keyA, "", "", "", nil), "")
		wantRateLimited(t, "POI search over the limit", request(t, "GET", base+"/worlds/"+ts.World.ID+"/pois/search", keyA, "", "", "", nil), "")
		if got := ts.AuditCount(t); got != before {
			t.Errorf("refused requests wrote %d audit rows", got-before)
		}
		if r := request(t, "GET", base+"/me", keyB, "", "", "", nil); r.status != 200 {
			t.Errorf("another key of the same user: %d %s, want 200 (buckets are per credential)", r.status, r.body)
		}
		// A session JWT is limited per user.
		jwt := ts.Token(t, ts.GM)
		for range 3 {
			request(t, "GET", base+"/me", jwt, "", "", "", nil)
		}
		wantRateLimited(t, "4th request of a JWT", request(t, "GET", base+"/me", ts.Token(t, ts.GM), "", "", "", nil), "")
	})

	t.Run("MCP", func(t *testing.T) {
		key := ts.Key(t, ts.Owner, wf.ScopeAll)
		for _, v := range []string{"2025-11-25", "2026-07-28", "2025-11-25"} {
			r := request(t, "POST", base+"/mcp", "", "", "", callBody("1", v, wf.ToolReadWorld, world, ""), headers(key, v, wf.ToolReadWorld, nil))
			if r.status != 200 || strings.Contains(r.body, `"isError"`) {
				t.Fatalf("call within the burst: %d %s", r.status, r.body)
			}
		}
		before := ts.AuditCount(t)
		for _, v := range []string{"2025-11-25", "2026-07-28"} {
			r := request(t, "POST", base+"/mcp", "", "", "", callBody("1", v, wf.ToolReadWorld, world, ""), headers(key, v, wf.ToolReadWorld, nil))
			wantRateLimited(t, "tools/call over the limit, "+v, r, "")
		}
		// The go-sdk client sees the 429 as a transport error.
		cs := testserver.Connect(t, base+"/mcp", ts.Key(t, ts.Owner, wf.ScopeAll), "")
		for range 3 {
			if _, err := cs.ListTools(t.Context(), nil); err != nil {
				// discover/initialize took a token too: fine, the
				// limit is what the next loop checks.
				break
			}
		}
		if _, err := cs.ListTools(t.Context(), nil); err == nil {
			t.Error("the go-sdk client got past the rate limit")
		}
		if got := ts.AuditCount(t); got != before {
			t.Errorf("refused calls wrote %d audit rows", got-before)
		}
	})

	t.Run("failed authentications per IP", func(t *testing.T) {
		ghost := "wk_live_" + strings.Repeat("a", 32)
		for i := range 3 {
			if r := request(t, "GET", base+"/me", ghost, "", "", "", nil); r.status != 401 {
				t.Fatalf("failed attempt %d: %d %s, want 401", i+1, r.status, r.body)
			}
		}
		wantRateLimited(t, "4th bad key", request(t, "GET", base+"/me", ghost, "", "", "", nil), "failed authentications")
		wantRateLimited(t, "no credential", request(t, "GET", base+"/me", "", "", "", "", nil), "failed authentications")
		r := request(t, "POST", base+"/mcp", "", "", "", callBody("1", "2025-11-25", wf.ToolReadWorld, world, ""), headers("garbage", "2025-11-25", wf.ToolReadWorld, nil))
		wantRateLimited(t, "bad credential on /mcp", r, "failed authentications")
		// A guesser does not lock out the valid credentials of its address.
		if r := request(t, "GET", base+"/me", ts.Key(t, ts.Player, wf.ScopeAll), "", "", "", nil); r.status != 200 {
			t.Errorf("a valid key from the same address: %d %s, want 200", r.status, r.body)
		}
	})

	t.Run("off by default", func(t *testing.T) {
		key := ts.Key(t, ts.Owner, wf.ScopeAll)
		for i := range 50 {
			if r := request(t, "GET", ts.URL+"/me", key, "", "", "", nil); r.status != 200 {
				t.Fatalf("request %d on the server without limits: %d %s", i+1, r.status, r.body)
			}
		}
	})
}

// TestConcurrencyCap: a credential with MaxConcurrent requests in progress
// (here open GET /mcp streams) gets 429 with Retry-After: 1 at once; others
// are unaffected; a finished request frees its slot.
func TestConcurrencyCap(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, dbtest.Open(t))
	logs := &logBuffer{}
	base := limitedServerLogged(t, ts, httpapi.Limits{MaxConcurrent: 2}, nil, logs)
	key := ts.Key(t, ts.Owner, wf.ScopeAll)
	var streams []io.Closer
	for range 2 {
		req, _ := http.NewRequest("GET", base+"/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 {
			t.Fatalf("stream: %d", resp.StatusCode)
		}
		streams = append(streams, resp.Body)
	}
	before := ts.AuditCount(t)
	start := time.Now()
	r := request(t, "GET", base+"/me", key, "", "", "", nil)
	wantRateLimited(t, "third request", r, "concurrent")
	if r.header.Get("Retry-After") != "1" {
		t.Errorf("Retry-After %q, want 1", r.header.Get("Retry-After"))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the refusal took %v: a request over the cap must not wait", d)
	}
	r = request(t, "POST", base+"/mcp", "", "", "", callBody("1", "2025-11-25", wf.ToolReadWorld, mustJSON(map[string]string{"id": ts.World.ID}), ""), headers(key, "2025-11-25", wf.ToolReadWorld, nil))
	wantRateLimited(t, "tools/call over the cap", r, "concurrent")
	if got := ts.AuditCount(t); got != before {
		t.Errorf("refused requests wrote %d audit rows", got-before)
	}
	if r := request(t, "GET", base+"/me", ts.Key(t, ts.Owner, wf.ScopeAll), "", "", "", nil); r.status != 200 {
		t.Errorf("another credential: %d %s", r.status, r.body)
	}
	// The closed stream's request line is logged after its slot is freed.
	streams[0].Close()
	if len(logs.await(t, "request", streamEnded)) == 0 {
		t.Fatal("no request line for the closed stream within 10s")
	}
	if r := request(t, "GET", base+"/me", key, "", "", "", nil); r.status != 200 {
		t.Fatalf("the closed stream's slot was not freed: %d %s", r.status, r.body)
	}
	streams[1].Close()
}

// TestHostCheck: one Host/Origin check in front of /mcp and REST. By
// default (a loopback listener) only loopback names pass; with
// AllowedHosts the listed names pass too, on both the fast path and the
// go-sdk path. A refused request is 403 forbidden_host before any
// authentication and writes nothing.
func TestHostCheck(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, dbtest.Open(t))
	key := ts.Key(t, ts.Owner, wf.ScopeAll)
	listed := limitedServer(t, ts, httpapi.Limits{AllowedHosts: []string{"wf.example.com", "admin.example.com:8443"}}, nil)
	world := mustJSON(map[string]string{"id": ts.World.ID})
	port := ts.URL[strings.LastIndex(ts.URL, ":")+1:]
	call := callBody("1", "2025-11-25", wf.ToolReadWorld, world, "")
	callH := headers(key, "2025-11-25", wf.ToolReadWorld, nil)
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
	listH := headers(key, "2025-11-25", "", nil)
	cases := []struct {
		name, base, method, path, host, origin, body string
		h                                            http.Header
		token                                        string
		want                                         int
	}{
		{"default: loopback ip", ts.URL, "GET", "/me", "", "", "", nil, key, 200},
		{"default: localhost and a loopback origin", ts.URL, "GET", "/me", "localhost:" + port, "http://localhost:5173", "", nil, key, 200},
		{"default: tools/call from localhost", ts.URL, "POST", "/mcp", "localhost:" + port, "", call, callH, "", 200},
		{"default: foreign host, REST", ts.URL, "GET", "/me", "evil.example", "", "", nil, key, 403},
		{"default: foreign host, tools/call", ts.URL, "POST", "/mcp", "evil.example:" + port, "", call, callH, "", 403},
		{"default: foreign host, tools/list", ts.URL, "POST", "/mcp", "evil.example", "", list, listH, "", 403},
		{"default: foreign host, GET stream", ts.URL, "GET", "/mcp", "evil.example", "", "", http.Header{"Accept": {"text/event-stream"}}, key, 403},
		{"default: foreign origin", ts.URL, "POST", "/mcp", "", "http://evil.example", call, callH, "", 403},
		{"default: null origin", ts.URL, "GET", "/me", "", "null", "", nil, key, 403},
		{"default: foreign host before authentication", ts.URL, "GET", "/me", "evil.example", "", "", nil, "wk_live_" + strings.Repeat("b", 32), 403},
		{"listed host, go-sdk path", listed, "POST", "/mcp", "wf.example.com", "https://wf.example.com", list, listH, "", 200},
		{"listed host, fast path", listed, "POST", "/mcp", "wf.example.com:443", "https://wf.example.com", call, callH, "", 200},
		{"listed host:port, REST", listed, "GET", "/me", "admin.example.com:8443", "https://admin.example.com:8443", "", nil, key, 200},
		{"listed host:port, another port", listed, "GET", "/me", "admin.example.com:9000", "", "", nil, key, 403},
		{"listed: loopback still allowed", listed, "GET", "/me", "", "", "", nil, key, 200},
		{"listed: foreign host", listed, "POST", "/mcp", "evil.example", "", call, callH, "", 403},
		{"listed: foreign origin", listed, "GET", "/me", "wf.example.com", "https://evil.example", "", nil, key, 403},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := ts.AuditCount(t)
			r := request(t, c.method, c.base+c.path, c.token, c.host, c.origin, c.body, c.h)
			if r.status != c.want {
				t.Fatalf("%d %s, want %d", r.status, r.body, c.want)
			}
			if c.want == 403 {
				if strings.TrimSpace(r.body) != `{"error":"forbidden_host"}` {
					t.Errorf("body %s, want {\"error\":\"forbidden_host\"}", r.body)
				}
				if got := ts.AuditCount(t); got != before {
					t.Errorf("a refused request wrote %d audit rows", got-before)
				}
			} else if c.body != "" && strings.Contains(r.body, `"isError"`) {
				t.Errorf("tool error: %s", r.body)
			}
		})
	}
}

// TestHeaderLimit: a header block over MaxHeaderBytes is 431 and the
// server goes on serving.
func TestHeaderLimit(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, dbtest.Open(t))
	conn := httpapi.DefaultConnLimits()
	conn.MaxHeaderBytes = 4 << 10
	base := limitedServer(t, ts, httpapi.Limits{}, &conn)
	key := ts.Key(t, ts.Owner, wf.ScopeAll)
	before := ts.AuditCount(t)
	big := http.Header{"X-Padding": {strings.Repeat("p", 32<<10)}}
	if r := request(t, "GET", base+"/me", key, "", "", "", big); r.status != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("32 KiB header: %d %s, want 431", r.status, r.body)
	}
	world := mustJSON(map[string]string{"id": ts.World.ID})
	r := request(t, "POST", base+"/mcp", "", "", "", callBody("1", "2025-11-25", wf.ToolReadWorld, world, ""), headers(key, "2025-11-25", wf.ToolReadWorld, func(h http.Header) { h.Set("X-Padding", strings.Repeat("p", 32<<10)) }))
	if r.status != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("tools/call with a 32 KiB header: %d %s, want 431", r.status, r.body)
	}
	if got := ts.AuditCount(t); got != before {
		t.Errorf("refused requests wrote %d audit rows", got-before)
	}
	if r := request(t, "GET", base+"/me", key, "", "", "", http.Header{"X-Padding": {strings.Repeat("p", 1<<10)}}); r.status != 200 {
		t.Errorf("1 KiB header: %d %s, want 200", r.status, r.body)
	}
}

// TestSlowClient: a client that sends its headers or its body too slowly
// has its connection closed by the read timeouts while the server goes on
// serving others; an open GET /mcp stream, which is meant to stay open, is
// not cut by them. (Small timeouts; nothing is asserted about speed.)
func TestSlowClient(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, dbtest.Open(t))
	conn := httpapi.ConnLimits{
		MaxHeaderBytes:    1 << 20,
		ReadHeaderTimeout: 300 * time.Millisecond,
		ReadTimeout:       600 * time.Millisecond,
		WriteTimeout:      600 * time.Millisecond,
		IdleTimeout:       600 * time.Millisecond,
	}
	base := limitedServer(t, ts, httpapi.Limits{}, &conn)
	addr := strings.TrimPrefix(base, "http://")
	key := ts.Key(t, ts.Owner, wf.ScopeAll)
	world := mustJSON(map[string]string{"id": ts.World.ID})

	dial := func(t *testing.T) net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// closedByServer reads until the server closes the connection; the
	// deadline is only there so that a broken timeout fails the test
	// instead of hanging it.
	closedByServer := func(t *testing.T, c net.Conn) string {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		got, err := io.ReadAll(c)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("the server kept the slow connection open (read %q)", got)
		}
		return string(got)
	}
	othersServed := func(t *testing.T) {
		t.Helper()
		if r := request(t, "GET", base+"/me", key, "", "", "", nil); r.status != 200 {
			t.Errorf("another client while a slow one hangs: %d %s", r.status, r.body)
		}
	}

	t.Run("slow headers", func(t *testing.T) {
		c := dial(t)
		fmt.Fprintf(c, "GET /me HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n", addr, key) // no blank line
		othersServed(t)
		if got := closedByServer(t, c); strings.Contains(got, "200 OK") {
			t.Errorf("the incomplete request was answered: %q", got)
		}
	})

	t.Run("slow body", func(t *testing.T) {
		before := ts.AuditCount(t)
		body := callBody("1", "2025-11-25", wf.ToolReadWorld, world, "")
		c := dial(t)
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2025-11-25\r\nContent-Length: %d\r\n\r\n%s",
			addr, key, len(body), body[:10]) // the rest never comes
		othersServed(t)
		if got := closedByServer(t, c); strings.Contains(got, "200 OK") {
			t.Errorf("the incomplete request was answered: %q", got)
		}
		if got := ts.AuditCount(t); got != before {
			t.Errorf("the cut-off call wrote %d audit rows", got-before)
		}
	})

	t.Run("GET stream outlives the timeouts", func(t *testing.T) {
		c := dial(t)
		fmt.Fprintf(c, "GET /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\n\r\n", addr, key)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("stream: %v %v", resp, err)
		}
		time.Sleep(3 * conn.ReadTimeout) // real time past the server's connection timeouts, which must not end a quiet stream
		c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		_, err = br.ReadByte()
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("the quiet stream ended (%v); want it still open", err)
		}
		othersServed(t)
	})
}

// TestResultsPerPageCap: every tool and route with a limit has a hard cap;
// a limit at the cap gives at most the cap even when more rows match, one
// over it is a clear bad_request (a tool error on /mcp, 400 on REST), and
// no limit gives the default page.
func TestResultsPerPageCap(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, dbtest.Open(t))
	ctx := t.Context()
	w := ts.World.ID
	for i := range wf.MaxSearchLimit + 10 {
		if err := ts.DB.CreateWikiPage(ctx, &wf.WikiPage{WorldID: w, Title: fmt.Sprintf("Page %03d", i), Kind: wf.WikiKindLore, Audience: wf.AudienceParty}, ts.Owner.ID); err != nil {
			t.Fatal(err)
		}
		if err := ts.DB.CreateAtlasNode(ctx, &wf.AtlasNode{WorldID: w, Name: fmt.Sprintf("Place %03d", i), Level: 2, TerrainType: "plains"}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range wf.MaxPOILimit + 10 {
		if err := ts.DB.CreatePOI(ctx, &wf.POI{WorldID: w, Name: fmt.Sprintf("Cache %03d", i), Category: "container", X: i % 16, Y: i % 12, Visibility: wf.AudienceParty}); err != nil {
			t.Fatal(err)
		}
		if err := ts.DB.CreateProposal(ctx, &wf.Proposal{WorldID: w, Kind: wf.ProposalWikiPage, ActorID: ts.Owner.ID,
			Payload: json.RawMessage(`{"title":"T"}`), DiffSummary: "a change"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	key := ts.Key(t, ts.Owner, wf.ScopeAll)
	cs := connect(t, ts, key, "")

	count := func(t *testing.T, text, field string) int {
		t.Helper()
		var m map[string]json.RawMessage
		mustDecode(t, text, &m)
		var items []json.RawMessage
		if err := json.Unmarshal(m[field], &items); err != nil {
			t.Fatalf("%s in %.200s: %v", field, text, err)
		}
		return len(items)
	}
	tools := []struct {
		tool, field string
		args        func(limit int) map[string]any
		def, max    int
	}{
		{wf.ToolSearchWikiPages, "pages", func(n int) map[string]any { return withLimit(map[string]any{"world_id": w}, n) }, wf.DefaultSearchLimit, wf.MaxSearchLimit},
		{wf.ToolSearchAtlasNodes, "places", func(n int) map[string]any { return withLimit(map[string]any{"world_id": w}, n) }, wf.DefaultSearchLimit, wf.MaxSearchLimit},
		{wf.ToolSearchPOIs, "pois", func(n int) map[string]any {
			return map[string]any{"world_id": w, "request": withLimit(map[string]any{}, n)}
		}, wf.DefaultPOILimit, wf.MaxPOILimit},
	}
	for _, c := range tools {
		t.Run(c.tool, func(t *testing.T) {
			for _, tc := range []struct{ limit, want int }{{0, c.def}, {c.max, c.max}, {1, 1}} {
				text, isErr := callTool(t, cs, c.tool, c.args(tc.limit))
				if isErr {
					t.Fatalf("limit %d: %s", tc.limit, text)
				}
				if got := count(t, text, c.field); got != tc.want {
					t.Errorf("limit %d: %d results, want %d", tc.limit, got, tc.want)
				}
			}
			before := ts.AuditCount(t)
			text, isErr := callTool(t, cs, c.tool, c.args(c.max+1))
			if !isErr || !strings.HasPrefix(text, "bad_request: ") || !strings.Contains(text, "limit") {
				t.Errorf("limit %d: %q (isError %v), want a bad_request naming limit", c.max+1, text, isErr)
			}
			if got := ts.AuditCount(t); got != before {
				t.Errorf("the refused call wrote %d audit rows", got-before)
			}
		})
	}
	t.Run(wf.ToolWikiPageHistory, func(t *testing.T) {
		text, isErr := callTool(t, cs, wf.ToolWikiPageHistory, map[string]any{"id": ts.Page.ID, "limit": wf.MaxHistoryLimit + 1})
		if !isErr || !strings.HasPrefix(text, "bad_request: ") || !strings.Contains(text, "limit") {
			t.Errorf("limit %d: %q (isError %v), want a bad_request naming limit", wf.MaxHistoryLimit+1, text, isErr)
		}
		if text, isErr := callTool(t, cs, wf.ToolWikiPageHistory, map[string]any{"id": ts.Page.ID, "limit": wf.MaxHistoryLimit}); isErr {
			t.Errorf("limit at the cap: %s", text)
		}
	})

	routes := []struct {
		name, method, url, body, field string
		want                           int
	}{
		{"POI search, default", "GET", "/worlds/" + w + "/pois/search", "", "pois", wf.DefaultPOILimit},
		{"POI search, at the cap", "GET", "/worlds/" + w + "/pois/search?limit=200", "", "pois", wf.MaxPOILimit},
		{"POI search, over the cap", "GET", "/worlds/" + w + "/pois/search?limit=201", "", "", 400},
		{"POI search POST, at the cap", "POST", "/worlds/" + w + "/pois/search", `{"limit":200}`, "pois", wf.MaxPOILimit},
		{"POI search POST, over the cap", "POST", "/worlds/" + w + "/pois/search", `{"limit":201}`, "", 400},
		{"proposals, default", "GET", "/worlds/" + w + "/proposals", "", "proposals", 50},
		{"proposals, at the cap", "GET", "/worlds/" + w + "/proposals?limit=200", "", "proposals", 200},
		{"proposals, over the cap", "GET", "/worlds/" + w + "/proposals?limit=201", "", "", 400},
		{"proposals, zero", "GET", "/worlds/" + w + "/proposals?limit=0", "", "", 400},
	}
	for _, c := range routes {
		t.Run(c.name, func(t *testing.T) {
			status, body := rest(t, c.method, ts.URL+c.url, key, c.body)
			if c.field == "" {
				if status != 400 || !strings.Contains(body, `"bad_request"`) || !strings.Contains(body, "limit") {
					t.Errorf("%d %s, want 400 bad_request naming limit", status, body)
				}
				return
			}
			if status != 200 {
				t.Fatalf("%d %s", status, body)
			}
			if got := count(t, body, c.field); got != c.want {
				t.Errorf("%d results, want %d", got, c.want)
			}
		})
	}
}

func withLimit(m map[string]any, n int) map[string]any {
	if n != 0 {
		m["limit"] = n
	}
	return m
}

// TestBodyLimit: a body over MaxBodyBytes is 413 on /mcp (a JSON-RPC
// error) and on REST ({"error":"too_large"}), and runs nothing.
func TestBodyLimit(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, dbtest.Open(t))
	api := httpapi.New(httpapi.Options{Auth: ts.Auth, MCP: ts.Tools.MCP(), Tools: ts.Tools, Store: ts.DB, MaxBodyBytes: 1024})
	base := testserver.Listen(t, api)
	key := ts.Key(t, ts.Owner, wf.ScopeAll)
	pad := strings.Repeat("p", 2048)
	before := ts.AuditCount(t)
	r := request(t, "POST", base+"/worlds/"+ts.World.ID+"/pois/search", key, "", "", `{"name":"`+pad+`"}`, http.Header{"Content-Type": {"application/json"}})
	if r.status != http.StatusRequestEntityTooLarge || !strings.Contains(r.body, `"error":"too_large"`) || !strings.Contains(r.body, "1024") {
		t.Errorf("REST: %d %s, want 413 too_large naming the limit", r.status, r.body)
	}
	r = request(t, "PUT", base+"/worlds/"+ts.World.ID+"/presence", key, "", "", `{"x":1,"y":1,"pad":"`+pad+`"}`, http.Header{"Content-Type": {"application/json"}})
	if r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("REST PUT: %d %s, want 413", r.status, r.body)
	}
	world := `{"id":"` + ts.World.ID + `","pad":"` + pad + `"}`
	r = request(t, "POST", base+"/mcp", "", "", "", callBody("1", "2025-11-25", wf.ToolReadWorld, world, ""), headers(key, "2025-11-25", wf.ToolReadWorld, nil))
	if r.status != http.StatusRequestEntityTooLarge || !strings.Contains(r.body, `"jsonrpc":"2.0"`) {
		t.Errorf("/mcp: %d %s, want 413 with a JSON-RPC error", r.status, r.body)
	}
	if got := ts.AuditCount(t); got != before {
		t.Errorf("refused requests wrote %d audit rows", got-before)
	}
	if r := request(t, "POST", base+"/worlds/"+ts.World.ID+"/pois/search", key, "", "", `{"name":"chest"}`, http.Header{"Content-Type": {"application/json"}}); r.status != 200 {
		t.Errorf("a small body: %d %s", r.status, r.body)
	}
}
