package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/httpapi"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// boundsServer is one store behind two HTTP servers, one with the fast
// path and one that sends every tool call through the go-sdk handler,
// with an owner's sessions on both and a record of the ERROR log lines.
type boundsServer struct {
	ts         *testserver.Server
	sdkAPI     *httpapi.Server
	key        string
	fast, slow *mcp.ClientSession
	errors     *errorLog
}

func startBounds(t *testing.T, db *sqlstore.DB) *boundsServer {
	t.Helper()
	logs := &errorLog{}
	logger := slog.New(logs)
	ts := testserver.StartWith(t, db, testserver.Config{Logger: logger})
	sdk := httpapi.New(httpapi.Options{Auth: ts.Auth, MCP: ts.Tools.MCP(), Store: ts.DB, Logger: logger})
	sdkURL := testserver.Listen(t, sdk) + "/mcp"
	key := ts.Key(t, ts.Owner, wf.ScopeAll)
	return &boundsServer{ts: ts, sdkAPI: sdk, key: key,
		fast: testserver.Connect(t, ts.MCPURL(), key, ""), slow: testserver.Connect(t, sdkURL, key, ""), errors: logs}
}

// errorLog is a slog handler that counts records at ERROR and above.
type errorLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *errorLog) Enabled(_ context.Context, lv slog.Level) bool { return lv >= slog.LevelError }
func (l *errorLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, r.Message)
	return nil
}
func (l *errorLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *errorLog) WithGroup(string) slog.Handler      { return l }

func (l *errorLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines)
}

// boundCall is one request that exercises a bound: a tool call (tool
// and args) or a REST request (method, path, body).
type boundCall struct {
	tool         string
	args         map[string]any
	method, path string
	body         any
}

// boundCallFor builds the request that puts the argument of b at n items
// (a list) or n characters (a string), everything else valid.
func boundCallFor(t *testing.T, s *testserver.Server, b wf.Bound, n int) boundCall {
	t.Helper()
	w := s.World.ID
	tags := func() []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("tag%d", i)
		}
		return out
	}
	// A string of n characters of two bytes each: bounds count
	// characters, not bytes.
	text := strings.Repeat("é", n)
	poiQuery := map[string]any{}
	switch b.Field {
	case "request.tags":
		poiQuery["tags"] = tags()
	case "request.tags[]":
		poiQuery["tags"] = []string{text}
	case "request.name":
		poiQuery["name"] = text
	case "request.category":
		poiQuery["category"] = text
	}
	rule := map[string]any{"actorId": s.GM.ID}
	switch b.Field {
	case "kinds":
		kinds := append([]string{}, wf.ProposalKinds...)
		for len(kinds) < n {
			kinds = append(kinds, wf.ProposalQuest)
		}
		rule["kinds"] = kinds[:n]
	case "worldId", "actorId", "keyId":
		rule[b.Field] = strings.Repeat("x", n)
	}
	switch b.Where {
	case wf.ToolSearchPOIs:
		return boundCall{tool: b.Where, args: map[string]any{"world_id": w, "request": poiQuery}}
	case wf.ToolProposeLore:
		ops := make([]any, n)
		for i := range ops {
			ops[i] = map[string]any{"op": "remove", "collection": "factions", "id": fmt.Sprintf("gone-%d", i)}
		}
		return boundCall{tool: b.Where, args: map[string]any{"world_id": w, "operations": ops, "diff_summary": "remove"}}
	case "GET /worlds/{id}/pois/search":
		v := url.Values{}
		for k, val := range poiQuery {
			switch val := val.(type) {
			case string:
				v.Set(k, val)
			case []string:
				v.Set(k, strings.Join(val, ","))
			}
		}
		return boundCall{method: http.MethodGet, path: "/worlds/" + w + "/pois/search?" + v.Encode()}
	case "POST /worlds/{id}/pois/search":
		return boundCall{method: http.MethodPost, path: "/worlds/" + w + "/pois/search", body: poiQuery}
	case "POST /auto-accept-rules":
		return boundCall{method: http.MethodPost, path: "/auto-accept-rules", body: rule}
	}
	t.Fatalf("no request for the bound %+v: add one here", b)
	return boundCall{}
}

// boundError is the exact error text of b one over its bound.
func boundError(b wf.Bound) string {
	if b.Items {
		return fmt.Sprintf("bad_request: %s has %d items; at most %d", b.Field, b.Max+1, b.Max)
	}
	return fmt.Sprintf("bad_request: %s has %d characters; at most %d", strings.Replace(b.Field, "[]", "[0]", 1), b.Max+1, b.Max)
}

// rest sends a REST request as the owner and returns its status and body.
func (bs *boundsServer) rest(t *testing.T, c boundCall) (int, string) {
	t.Helper()
	var body io.Reader
	if c.body != nil {
		raw, err := json.Marshal(c.body)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(c.method, bs.ts.URL+c.path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+bs.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", c.method, c.path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(raw)
}

// answers runs c on every path it has (a tool: the fast path and the
// go-sdk path; REST) and calls check with each answer: the text of the
// tool result or the REST error ("" for a REST success), whether it is an
// error, and the HTTP status (200 for tool results).
func (bs *boundsServer) answers(t *testing.T, c boundCall, check func(t *testing.T, path, text string, isErr bool, status int)) {
	t.Helper()
	if c.tool != "" {
		f0 := bs.ts.API.FastPathCalls()
		text, isErr := testserver.CallText(t, bs.fast, c.tool, c.args)
		if bs.ts.API.FastPathCalls() != f0+1 {
			t.Errorf("%s: the fast path did not answer the call", c.tool)
		}
		check(t, "fast path", text, isErr, http.StatusOK)
		text, isErr = testserver.CallText(t, bs.slow, c.tool, c.args)
		if bs.sdkAPI.FastPathCalls() != 0 {
			t.Errorf("the go-sdk-only server took the fast path")
		}
		check(t, "go-sdk path", text, isErr, http.StatusOK)
		return
	}
	status, raw := bs.rest(t, c)
	text := ""
	if status >= 400 {
		var e struct{ Error, Detail string }
		if err := json.Unmarshal([]byte(raw), &e); err != nil {
			t.Fatalf("%s %s: %d %s: not an error body: %v", c.method, c.path, status, raw, err)
		}
		text = e.Error
		if e.Detail != "" {
			text += ": " + e.Detail
		}
	}
	check(t, "REST", text, status >= 400, status)
}

// TestBoundsRefused sends every bounded argument of wf.Bounds one over
// its bound, over MCP (the fast path and the go-sdk path) and REST: the
// exact bad_request (REST: 400 with that error and detail), no audit row,
// nothing written, no ERROR log line. At the bound the same request is
// not refused for its size. Both engines.
func TestBoundsRefused(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		bs := startBounds(t, db)
		s := bs.ts
		for _, b := range wf.Bounds {
			t.Run(b.Where+" "+b.Field, func(t *testing.T) {
				want := boundError(b)
				over := boundCallFor(t, s, b, b.Max+1)
				audit, fp, errs := s.AuditCount(t), s.Fingerprint(t), bs.errors.count()
				bs.answers(t, over, func(t *testing.T, path, text string, isErr bool, status int) {
					wantStatus := http.StatusOK
					if over.tool == "" {
						wantStatus = http.StatusBadRequest
					}
					if text != want || !isErr || status != wantStatus {
						t.Errorf("%s: got %d %q (isError %v), want %d %q", path, status, text, isErr, wantStatus, want)
					}
				})
				if got := s.AuditCount(t); got != audit {
					t.Errorf("audit rows went %d → %d", audit, got)
				}
				if changed := testserver.Changed(fp, s.Fingerprint(t)); len(changed) > 0 {
					t.Errorf("refused, but changed %v", changed)
				}
				if got := bs.errors.count(); got != errs {
					t.Errorf("%d ERROR log lines", got-errs)
				}

				at := boundCallFor(t, s, b, b.Max)
				bs.answers(t, at, func(t *testing.T, path, text string, isErr bool, status int) {
					if status >= 500 || strings.HasPrefix(text, "bad_request") || strings.HasPrefix(text, "internal") {
						t.Errorf("%s at the bound: %d %q", path, status, text)
					}
				})
			})
		}
	})
}

// TestPOISearchTenThousandTags: 10,000 tags (on SQLite, 934 made the
// query too deep to run: a 500) are a bad_request on every path, never a
// 5xx or an ERROR log line. Both engines.
func TestPOISearchTenThousandTags(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		bs := startBounds(t, db)
		const n = 10_000
		want := fmt.Sprintf("bad_request: request.tags has %d items; at most %d", n, wf.MaxPOITags)
		for _, where := range []string{wf.ToolSearchPOIs, "GET /worlds/{id}/pois/search", "POST /worlds/{id}/pois/search"} {
			c := boundCallFor(t, bs.ts, wf.Bound{Where: where, Field: "request.tags", Max: wf.MaxPOITags, Items: true}, n)
			bs.answers(t, c, func(t *testing.T, path, text string, isErr bool, status int) {
				if status >= 500 || text != want {
					t.Errorf("%s %s: %d %q, want %q", where, path, status, text, want)
				}
			})
		}
		if got := bs.errors.count(); got != 0 {
			t.Errorf("%d ERROR log lines: %q", got, bs.errors.lines)
		}
	})
}

// TestBoundsInToolsList: tools/list shows every tool bound of wf.Bounds
// in the input schema, as maxItems or maxLength.
func TestBoundsInToolsList(t *testing.T) {
	s := testserver.Start(t, dbtest.Open(t))
	cs := testserver.Connect(t, s.MCPURL(), s.Key(t, s.Owner, wf.ScopeAll), "")
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]map[string]any{}
	for _, tool := range res.Tools {
		raw, err := json.Marshal(tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		schemas[tool.Name] = m
	}
	tools := 0
	for _, b := range wf.Bounds {
		schema, ok := schemas[b.Where]
		if !ok {
			continue // a REST route
		}
		tools++
		node := any(schema)
		for part := range strings.SplitSeq(b.Field, ".") {
			name, each := strings.CutSuffix(part, "[]")
			node = node.(map[string]any)["properties"].(map[string]any)[name]
			if each {
				node = node.(map[string]any)["items"]
			}
		}
		keyword := "maxLength"
		if b.Items {
			keyword = "maxItems"
		}
		if got := node.(map[string]any)[keyword]; got != float64(b.Max) {
			t.Errorf("%s %s: %s is %v, want %d", b.Where, b.Field, keyword, got, b.Max)
		}
	}
	if tools == 0 {
		t.Error("no tool bound found in tools/list")
	}
}
