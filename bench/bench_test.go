package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var protocols = []string{Protocol20260728, Protocol20251125}

// serve starts h at /mcp on a real listener on 127.0.0.1:0 and returns the
// endpoint URL.
func serve(t testing.TB, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: mux}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

var readArgs = map[string]any{"id": "w_bench00000001"}

func post(t *testing.T, url string, header http.Header, body []byte) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

func TestToolCallShape(t *testing.T) {
	for _, p := range protocols {
		t.Run(p, func(t *testing.T) {
			var req struct {
				JSONRPC string `json:"jsonrpc"`
				ID      int    `json:"id"`
				Method  string `json:"method"`
				Params  struct {
					Meta      map[string]json.RawMessage `json:"_meta"`
					Name      string                     `json:"name"`
					Arguments map[string]string          `json:"arguments"`
				} `json:"params"`
			}
			if err := json.Unmarshal(ToolCallBody(7, p, "read_world", readArgs), &req); err != nil {
				t.Fatal(err)
			}
			if req.JSONRPC != "2.0" || req.ID != 7 || req.Method != "tools/call" ||
				req.Params.Name != "read_world" || req.Params.Arguments["id"] != "w_bench00000001" {
				t.Errorf("bad request: %+v", req)
			}
			h := ToolCallHeaders(p, "read_world")
			if h.Get("Content-Type") != "application/json" || h.Get("Accept") != "application/json, text/event-stream" ||
				h.Get("MCP-Protocol-Version") != p {
				t.Errorf("bad headers: %v", h)
			}
			if p == Protocol20260728 {
				if string(req.Params.Meta[mcp.MetaKeyProtocolVersion]) != `"2026-07-28"` ||
					req.Params.Meta[mcp.MetaKeyClientCapabilities] == nil || req.Params.Meta[mcp.MetaKeyClientInfo] == nil {
					t.Errorf("bad _meta: %v", req.Params.Meta)
				}
				if h.Get("Mcp-Method") != "tools/call" || h.Get("Mcp-Name") != "read_world" {
					t.Errorf("bad headers: %v", h)
				}
			} else {
				if req.Params.Meta != nil {
					t.Errorf("unexpected _meta: %v", req.Params.Meta)
				}
				if h.Get("Mcp-Method") != "" || h.Get("Mcp-Name") != "" {
					t.Errorf("unexpected headers: %v", h)
				}
			}
		})
	}
}

func TestBaselinePayload(t *testing.T) {
	p := BaselinePayload()
	if len(p) != BaselinePayloadSize {
		t.Fatalf("payload is %d bytes, want %d", len(p), BaselinePayloadSize)
	}
	var w struct {
		ID, OwnerID, Name string
		Cols, Rows        int
		JSON              struct {
			Grid struct{ Cells []json.RawMessage }
		}
	}
	if err := json.Unmarshal([]byte(p), &w); err != nil {
		t.Fatal(err)
	}
	if w.ID == "" || w.OwnerID == "" || w.Name == "" || w.Cols == 0 || w.Rows == 0 || len(w.JSON.Grid.Cells) < 10 {
		t.Errorf("payload does not look like a world row: %+v", w)
	}
}

// toolText returns result.content[0].text and result._meta of a JSON-RPC
// tools/call response.
func toolText(t *testing.T, msg []byte) (string, map[string]json.RawMessage) {
	t.Helper()
	var resp struct {
		Result struct {
			Meta    map[string]json.RawMessage `json:"_meta"`
			Content []struct{ Type, Text string }
		}
	}
	if err := json.Unmarshal(msg, &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.Result.Content) != 1 || resp.Result.Content[0].Type != "text" {
		t.Fatalf("bad content: %s", msg)
	}
	return resp.Result.Content[0].Text, resp.Result.Meta
}

// TestSingleCall checks, against the real go-sdk server, that the bodies
// and headers built here are accepted as they are.
func TestSingleCall(t *testing.T) {
	url := serve(t, NewBaselineHandler())
	for _, p := range protocols {
		t.Run(p, func(t *testing.T) {
			status, h, body := post(t, url, ToolCallHeaders(p, BaselineTool), ToolCallBody(1, p, BaselineTool, readArgs))
			if err := DefaultVerify(status, h, body); err != nil {
				t.Fatal(err)
			}
			if ct := h.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			text, meta := toolText(t, body)
			if text != BaselinePayload() {
				t.Errorf("wrong payload: %.80s…", text)
			}
			// The server annotates results of 2026-07-28 requests (and only
			// those) with serverInfo: proof it took the sessionless path.
			_, annotated := meta[mcp.MetaKeyServerInfo]
			if annotated != (p == Protocol20260728) {
				t.Errorf("serverInfo in result _meta = %v for %s", annotated, p)
			}
		})
	}
}

// TestProtocol20260728Requirements documents what the go-sdk server
// enforces for a sessionless request: every mutation below is rejected.
func TestProtocol20260728Requirements(t *testing.T) {
	url := serve(t, NewBaselineHandler())
	const p = Protocol20260728
	good := ToolCallBody(1, p, BaselineTool, readArgs)
	withMeta := func(meta map[string]any) []byte {
		return mustJSON(t, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
			"params": map[string]any{"name": BaselineTool, "arguments": readArgs, "_meta": meta}})
	}
	tests := []struct {
		name   string
		header func(http.Header)
		body   []byte
		status int
	}{
		{"no Mcp-Method header", func(h http.Header) { h.Del("Mcp-Method") }, good, 400},
		{"no Mcp-Name header", func(h http.Header) { h.Del("Mcp-Name") }, good, 400},
		{"Mcp-Name mismatch", func(h http.Header) { h.Set("Mcp-Name", "other") }, good, 400},
		{"no MCP-Protocol-Version header", func(h http.Header) { h.Del("Mcp-Protocol-Version") }, good, 400},
		{"header/_meta version mismatch", func(h http.Header) { h.Set("Mcp-Protocol-Version", "2099-01-01") }, good, 400},
		{"no _meta", nil, ToolCallBody(1, Protocol20251125, BaselineTool, readArgs), 400},
		{"no clientCapabilities", nil, withMeta(map[string]any{mcp.MetaKeyProtocolVersion: p}), 0},
		{"no Accept text/event-stream", func(h http.Header) { h.Set("Accept", "application/json") }, good, 400},
		{"wrong Content-Type", func(h http.Header) { h.Set("Content-Type", "text/plain") }, good, 415},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := ToolCallHeaders(p, BaselineTool)
			if tt.header != nil {
				tt.header(h)
			}
			status, rh, body := post(t, url, h, tt.body)
			err := DefaultVerify(status, rh, body)
			if err == nil {
				t.Fatalf("accepted: %d %s", status, body)
			}
			if tt.status != 0 && status != tt.status {
				t.Errorf("status %d, want %d (%v)", status, tt.status, err)
			}
			t.Logf("%d: %v", status, err)
		})
	}
	// clientInfo is optional.
	body := withMeta(map[string]any{mcp.MetaKeyProtocolVersion: p, mcp.MetaKeyClientCapabilities: map[string]any{}})
	if err := DefaultVerify(post(t, url, ToolCallHeaders(p, BaselineTool), body)); err != nil {
		t.Errorf("without clientInfo: %v", err)
	}
}

// TestLegacyStatelessCall: an initialize-less 2025-11-25 call needs no
// _meta and no Mcp-Method/Mcp-Name; even MCP-Protocol-Version is optional
// (the server assumes 2025-03-26 without it).
func TestLegacyStatelessCall(t *testing.T) {
	url := serve(t, NewBaselineHandler())
	body := ToolCallBody(1, Protocol20251125, BaselineTool, readArgs)
	h := ToolCallHeaders(Protocol20251125, BaselineTool)
	h.Del("Mcp-Protocol-Version")
	if err := DefaultVerify(post(t, url, h, body)); err != nil {
		t.Error(err)
	}
	h.Set("Mcp-Protocol-Version", "2020-01-01")
	if status, _, _ := post(t, url, h, body); status != http.StatusBadRequest {
		t.Errorf("unsupported version: status %d, want 400", status)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLoadBaseline(t *testing.T) {
	url := serve(t, NewBaselineHandler())
	for _, p := range protocols {
		t.Run(p, func(t *testing.T) {
			res, err := Load(context.Background(), LoadConfig{
				Target:      ToolCallTarget(url, p, BaselineTool),
				Body:        ToolCallBody(1, p, BaselineTool, readArgs),
				Concurrency: 4,
				Duration:    300 * time.Millisecond,
				Warmup:      50 * time.Millisecond,
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Log(res)
			if res.Requests == 0 || res.Errors != 0 {
				t.Fatalf("requests %d, errors %d (%s)", res.Requests, res.Errors, res.FirstError)
			}
			if res.RPS <= 0 || res.P50 <= 0 || res.P50 > res.P90 || res.P90 > res.P99 || res.P99 > res.Max {
				t.Errorf("inconsistent result: %+v", res)
			}
		})
	}
}

// TestLoadSSE runs against the same server answering with
// text/event-stream, which the default verifier must parse.
func TestLoadSSE(t *testing.T) {
	shared := NewBaselineServer()
	url := serve(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return shared },
		&mcp.StreamableHTTPOptions{Stateless: true}))
	for _, p := range protocols {
		t.Run(p, func(t *testing.T) {
			status, h, body := post(t, url, ToolCallHeaders(p, BaselineTool), ToolCallBody(1, p, BaselineTool, readArgs))
			if ct := h.Get("Content-Type"); ct != "text/event-stream" {
				t.Fatalf("Content-Type = %q", ct)
			}
			msg, err := ResponseMessage(h, body)
			if err != nil {
				t.Fatal(err)
			}
			if text, _ := toolText(t, msg); text != BaselinePayload() || status != 200 {
				t.Fatalf("status %d, bad payload", status)
			}
			res, err := Load(context.Background(), LoadConfig{
				Target:      ToolCallTarget(url, p, BaselineTool),
				BodyFunc:    func(i int) []byte { return ToolCallBody(i, p, BaselineTool, readArgs) },
				Concurrency: 4,
				Duration:    200 * time.Millisecond,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests == 0 || res.Errors != 0 {
				t.Fatalf("requests %d, errors %d (%s)", res.Requests, res.Errors, res.FirstError)
			}
		})
	}
}

func TestLoadMaxRequests(t *testing.T) {
	url := serve(t, NewBaselineHandler())
	var n atomic.Int64
	res, err := Load(context.Background(), LoadConfig{
		Target: ToolCallTarget(url, Protocol20260728, BaselineTool),
		BodyFunc: func(i int) []byte {
			n.Add(1)
			return ToolCallBody(i, Protocol20260728, BaselineTool, readArgs)
		},
		Concurrency: 4,
		Duration:    10 * time.Second,
		MaxRequests: 25,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 25 || res.Errors != 0 || n.Load() != 25 {
		t.Fatalf("requests %d, errors %d, bodies %d; want 25, 0, 25", res.Requests, res.Errors, n.Load())
	}
	if res.Elapsed > 5*time.Second {
		t.Errorf("MaxRequests did not end the run: %v", res.Elapsed)
	}
}

func TestVerifyCatchesIsError(t *testing.T) {
	url := serve(t, NewBaselineHandler())
	for _, p := range protocols {
		t.Run(p, func(t *testing.T) {
			// read_world without an id answers with isError: true.
			body := ToolCallBody(1, p, BaselineTool, map[string]any{})
			status, h, rb := post(t, url, ToolCallHeaders(p, BaselineTool), body)
			if status != 200 {
				t.Fatalf("status %d", status)
			}
			if err := DefaultVerify(status, h, rb); err == nil || !strings.Contains(err.Error(), "isError") {
				t.Fatalf("DefaultVerify = %v, want isError", err)
			}
			res, err := Load(context.Background(), LoadConfig{
				Target:      ToolCallTarget(url, p, BaselineTool),
				Body:        body,
				Concurrency: 2,
				Duration:    100 * time.Millisecond,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests == 0 || res.Errors != res.Requests || !strings.Contains(res.FirstError, "id is required") {
				t.Fatalf("requests %d errors %d first %q", res.Requests, res.Errors, res.FirstError)
			}
		})
	}
}

func TestVerifyCatchesHTTP500(t *testing.T) {
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError)
	}))
	res, err := Load(context.Background(), LoadConfig{
		Target:      ToolCallTarget(url, Protocol20251125, BaselineTool),
		Body:        ToolCallBody(1, Protocol20251125, BaselineTool, readArgs),
		Concurrency: 2,
		Duration:    100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || res.Errors != res.Requests || !strings.Contains(res.FirstError, "HTTP 500") {
		t.Fatalf("requests %d errors %d first %q", res.Requests, res.Errors, res.FirstError)
	}
}

func TestDefaultVerify(t *testing.T) {
	jsonH := http.Header{"Content-Type": {"application/json"}}
	sseH := http.Header{"Content-Type": {"text/event-stream"}}
	ok := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"say \"isError\":true"}]}}`
	tests := []struct {
		name   string
		status int
		h      http.Header
		body   string
		bad    string // substring of the error; "" = must pass
	}{
		{"json ok", 200, jsonH, ok, ""},
		{"json ok with charset", 200, http.Header{"Content-Type": {"application/json; charset=utf-8"}}, ok, ""},
		{"isError false", 200, jsonH, `{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false}}`, ""},
		{"isError", 200, jsonH, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"nope"}],"isError":true}}`, "nope"},
		{"isError spaced", 200, jsonH, `{"jsonrpc":"2.0","id":1,"result":{"isError" : true}}`, "isError"},
		{"rpc error", 200, jsonH, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}`, "-32602"},
		{"no result", 200, jsonH, `{"jsonrpc":"2.0","id":1}`, "no result"},
		{"null result", 200, jsonH, `{"jsonrpc":"2.0","id":1,"result":null}`, "no result"},
		{"garbage", 200, jsonH, `<html>`, "not a JSON-RPC"},
		{"status", 500, jsonH, ok, "HTTP 500"},
		{"content type", 200, http.Header{"Content-Type": {"text/plain"}}, ok, "Content-Type"},
		{"sse ok", 200, sseH, "event: message\nid: 1\ndata: " + ok + "\n\n", ""},
		{"sse crlf, notification first", 200, sseH,
			"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\r\n\r\n" +
				"event: message\r\ndata: " + ok + "\r\n\r\n", ""},
		{"sse multi-line data, no final blank line", 200, sseH,
			"data: {\"jsonrpc\":\"2.0\",\n" + "data: \"id\":1,\"result\":{}}", ""},
		{"sse isError", 200, sseH, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"isError\":true}}\n\n", "isError"},
		{"sse only notification", 200, sseH, "data: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\n", "no JSON-RPC response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := DefaultVerify(tt.status, tt.h, []byte(tt.body))
			switch {
			case tt.bad == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tt.bad != "" && (err == nil || !strings.Contains(err.Error(), tt.bad)):
				t.Errorf("error = %v, want one containing %q", err, tt.bad)
			}
		})
	}
}

func TestLoadConfigChecks(t *testing.T) {
	body := ToolCallBody(1, Protocol20251125, BaselineTool, readArgs)
	for _, cfg := range []LoadConfig{
		{Target: Target{URL: "http://example.com/mcp"}, Body: body, Duration: time.Second},
		{Target: Target{URL: "http://10.0.0.1:8080/mcp"}, Body: body, Duration: time.Second},
		{Target: Target{URL: "ftp://127.0.0.1/mcp"}, Body: body, Duration: time.Second},
		{Target: Target{URL: "http://127.0.0.1:1/mcp"}, Body: body},
		{Target: Target{URL: "http://127.0.0.1:1/mcp"}, Body: body, Duration: time.Hour},
		{Target: Target{URL: "http://127.0.0.1:1/mcp"}, Duration: time.Second},
		{Target: Target{URL: "http://127.0.0.1:1/mcp"}, Body: body, Duration: time.Second, Concurrency: -1},
	} {
		if _, err := Load(context.Background(), cfg); err == nil {
			t.Errorf("Load(%+v) succeeded", cfg)
		}
	}
	for _, u := range []string{"http://127.0.0.1:1/mcp", "http://[::1]:1/mcp", "http://localhost:1/mcp", "https://127.1.2.3/"} {
		if err := checkLoopbackURL(u); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
}

func TestLoadCancel(t *testing.T) {
	url := serve(t, NewBaselineHandler())
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := Load(ctx, LoadConfig{
		Target:      ToolCallTarget(url, Protocol20260728, BaselineTool),
		Body:        ToolCallBody(1, Protocol20260728, BaselineTool, readArgs),
		Concurrency: 2,
		Duration:    time.Minute,
	})
	if err == nil || res == nil {
		t.Fatalf("Load = %v, %v; want partial result and error", res, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("cancel took %v", d)
	}
	if res.Errors != 0 {
		t.Errorf("cancellation counted as errors: %s", res.FirstError)
	}
}

func TestHistogram(t *testing.T) {
	for i := range numBuckets {
		lo, hi := bucketBounds(i)
		if bucketOf(lo) != i || bucketOf(hi) != i {
			t.Fatalf("bucket %d: [%d,%d] maps to %d,%d", i, lo, hi, bucketOf(lo), bucketOf(hi))
		}
		if i > 0 {
			if _, prevHi := bucketBounds(i - 1); prevHi+1 != lo {
				t.Fatalf("gap before bucket %d", i)
			}
		}
	}
	var h histogram
	vals := make([]time.Duration, 100000)
	for i := range vals {
		vals[i] = time.Duration(rand.Int64N(int64(50*time.Millisecond))) + time.Microsecond
		h.record(vals[i])
	}
	slices.Sort(vals)
	for _, q := range []float64{0.5, 0.9, 0.99} {
		exact := vals[int(q*float64(len(vals)))-1]
		got := h.quantile(q)
		if rel := float64(got-exact) / float64(exact); rel > 0.02 || rel < -0.02 {
			t.Errorf("q%.2f = %v, exact %v", q, got, exact)
		}
	}
	var m histogram
	m.merge(&h)
	if m.n != h.n || m.max != int64(vals[len(vals)-1]) || m.quantile(1) != vals[len(vals)-1] {
		t.Errorf("merge: n %d max %d", m.n, m.max)
	}
	var one histogram
	one.record(3 * time.Millisecond)
	if one.quantile(0.5) != 3*time.Millisecond {
		t.Errorf("single sample p50 = %v", one.quantile(0.5))
	}
}

func TestRSS(t *testing.T) {
	rss, err := RSS(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if rss < 1<<20 || rss > 1<<40 {
		t.Fatalf("RSS = %d bytes", rss)
	}
	if _, err := RSS(-1); err == nil {
		t.Error("RSS(-1) succeeded")
	}
	// The sampler's ticker runs in a synctest bubble: its fake clock
	// passes 2.5 intervals at once, so the loop samples twice for sure.
	synctest.Test(t, func(t *testing.T) {
		s := StartRSSSampler(os.Getpid())
		garbage := make([][]byte, 0, 16)
		for range 16 {
			garbage = append(garbage, bytes.Repeat([]byte{1}, 1<<20)) // touch 16 MiB
		}
		time.Sleep(5 * RSSInterval / 2)
		synctest.Wait()
		if n := s.Samples(); n < 3 {
			t.Errorf("%d samples after 2.5 intervals: the loop did not sample", n)
		}
		peak, last, err := s.Stop()
		runtimeKeepAlive(garbage)
		if err != nil {
			t.Fatal(err)
		}
		if s.Samples() < 2 || last <= 0 || peak < last {
			t.Errorf("samples %d, peak %d, last %d", s.Samples(), peak, last)
		}
		if p2, l2, _ := s.Stop(); p2 != peak || l2 != last {
			t.Error("second Stop changed the values")
		}
	})
}

var sink atomic.Pointer[[][]byte]

func runtimeKeepAlive(v [][]byte) { sink.Store(&v) }

func TestFormatTable(t *testing.T) {
	rows := []Row{
		{Name: "baseline", Concurrency: 8, Result: &Result{RPS: 40000, P50: 180 * time.Microsecond, P99: 2500 * time.Microsecond}, RSS: 30 << 20},
		{Name: "worldforge", Concurrency: 8, Result: &Result{RPS: 10000, P50: 700 * time.Microsecond, P99: 12 * time.Millisecond, Errors: 3}, CPUShare: 0.995},
		{Name: "worldforge", Concurrency: 64, CPUShare: 0.764, Note: "PostgreSQL not pinned"},
	}
	SetRatios(rows, "baseline")
	if rows[1].Ratio != 0.25 || rows[0].Ratio != 1 {
		t.Fatalf("ratios %v %v", rows[0].Ratio, rows[1].Ratio)
	}
	var b strings.Builder
	FormatTable(&b, rows)
	out := b.String()
	t.Log("\n" + out)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, want := range []string{"req/s", "CPU %", "p50", "p99", "errors", "RSS MiB", "ratio", "40000", "180µs", "12.00ms", "30.0", "0.25",
		" 100 ", " 76 ", "client-bound; PostgreSQL not pinned"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Count(out, "client-bound") != 1 {
		t.Errorf("want only the 76 %% row marked client-bound")
	}
	// Every column but the free-text note lines up.
	width := strings.Index(lines[0], "vs limit") + len("vs limit")
	for _, l := range lines {
		if len([]rune(l)) < width || strings.TrimRight(string([]rune(l)[:width]), " ") == "" {
			t.Errorf("misaligned line %q", l)
		}
	}
}

// TestOfficialClient proves the baseline is a real MCP server: the go-sdk
// client connects (server/discover for 2026-07-28, initialize for
// 2025-11-25), lists the tool and calls it.
func TestOfficialClient(t *testing.T) {
	url := serve(t, NewBaselineHandler())
	for _, p := range protocols {
		t.Run(p, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: "bench-test", Version: "0"}, nil)
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: p})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != p {
				t.Errorf("negotiated %q, want %q", got, p)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(tools.Tools) != 1 || tools.Tools[0].Name != BaselineTool {
				t.Fatalf("tools: %+v", tools.Tools)
			}
			schema, _ := json.Marshal(tools.Tools[0].InputSchema)
			if !strings.Contains(string(schema), `"required":["id"]`) {
				t.Errorf("input schema %s", schema)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: BaselineTool, Arguments: readArgs})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || len(res.Content) != 1 {
				t.Fatalf("result: %+v", res)
			}
			if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != BaselinePayload() {
				t.Fatalf("content: %#v", res.Content[0])
			}
		})
	}
}

// TestBaselineMatrix is not a test but a quick measurement: with
// WORLDFORGE_BENCH=1 it loads the baseline for WORLDFORGE_BENCH_DURATION
// (default 3s) at c=8 and c=64 with both protocol revisions and prints a
// table. The load generator shares the process (and the CPUs) with the
// server, so RSS is the whole test process's.
func TestBaselineMatrix(t *testing.T) {
	if os.Getenv("WORLDFORGE_BENCH") != "1" {
		t.Skip("set WORLDFORGE_BENCH=1 to run")
	}
	d := 3 * time.Second
	if s := os.Getenv("WORLDFORGE_BENCH_DURATION"); s != "" {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			t.Fatal(err)
		}
	}
	url := serve(t, NewBaselineHandler())
	var rows []Row
	for _, c := range []int{8, 64} {
		for _, p := range protocols {
			s := StartRSSSampler(os.Getpid())
			res, err := Load(context.Background(), LoadConfig{
				Target:      ToolCallTarget(url, p, BaselineTool),
				Body:        ToolCallBody(1, p, BaselineTool, readArgs),
				Concurrency: c,
				Duration:    d,
				Warmup:      500 * time.Millisecond,
			})
			peak, _, _ := s.Stop()
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, Row{Name: "baseline " + p, Concurrency: c, Result: res, RSS: peak})
		}
	}
	SetRatios(rows, "baseline "+Protocol20251125)
	var b strings.Builder
	FormatTable(&b, rows)
	t.Log("\n" + b.String())
	for _, r := range rows {
		if r.Result.Errors != 0 {
			t.Errorf("%s c=%d: %d errors (%s)", r.Name, r.Concurrency, r.Result.Errors, r.Result.FirstError)
		}
	}
}

// BenchmarkBaselineToolCall measures one read_world call against the
// baseline over real HTTP on loopback, from GOMAXPROCS goroutines sharing
// one keep-alive transport.
func BenchmarkBaselineToolCall(b *testing.B) {
	url := serve(b, NewBaselineHandler())
	for _, p := range protocols {
		b.Run(p, func(b *testing.B) {
			tr := &http.Transport{MaxIdleConnsPerHost: 1024, DisableCompression: true}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr}
			body := ToolCallBody(1, p, BaselineTool, readArgs)
			header := ToolCallHeaders(p, BaselineTool)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				var buf bytes.Buffer
				for pb.Next() {
					req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
					if err != nil {
						b.Fatal(err)
					}
					req.Header = header
					resp, err := client.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					buf.Reset()
					_, err = buf.ReadFrom(resp.Body)
					resp.Body.Close()
					if err != nil {
						b.Fatal(err)
					}
					if err := DefaultVerify(resp.StatusCode, resp.Header, buf.Bytes()); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// TestRawHandler: the raw limit answers a tools/call as DefaultVerify
// expects, with the caller's id, and refuses what is not JSON-RPC.
func TestRawHandler(t *testing.T) {
	srv := httptest.NewServer(NewRawHandler())
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(string(ToolCallBody(42, Protocol20251125, BaselineTool, map[string]any{"id": "w"}))))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := DefaultVerify(resp.StatusCode, resp.Header, body); err != nil {
		t.Fatalf("verify: %v: %s", err, body)
	}
	if !strings.HasPrefix(string(body), `{"jsonrpc":"2.0","id":42,`) || !strings.Contains(string(body), "notes") {
		t.Errorf("body %.120s", body)
	}
	resp, err = http.Post(srv.URL, "application/json", strings.NewReader(`{"id":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("not JSON-RPC: %d", resp.StatusCode)
	}
}
