package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/httpapi"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/sqlstoretest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/internal/worldjson"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// newChunkedPair is newPair on a store that keeps documents over chunk
// bytes in pieces (0: the default size).
func newChunkedPair(t testing.TB, chunk int) *pair {
	t.Helper()
	db := dbtest.Open(t)
	sqlstoretest.SetDocChunkBytes(db, chunk)
	ts := testserver.Start(t, db)
	sdk := httpapi.New(httpapi.Options{Auth: ts.Auth, MCP: ts.Tools.MCP(), Store: ts.DB})
	return &pair{
		ts:      ts,
		sdkURL:  testserver.Listen(t, sdk) + "/mcp",
		sdkAPI:  sdk,
		ownerK:  ts.Key(t, ts.Owner, wf.ScopeAll),
		narrowK: ts.Key(t, ts.Owner, wf.ScopeCampaignRead),
	}
}

// inMemoryAnswer is read_world's text as it was built before streaming
// (the whole document read, the runtime merged, the row rendered), as a
// client decodes it from the answer.
func inMemoryAnswer(t testing.TB, db *sqlstore.DB, id string) string {
	t.Helper()
	ctx := context.Background()
	w, err := dbtest.World(ctx, db, id)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := dbtest.Runtime(ctx, db, id)
	if err != nil {
		t.Fatal(err)
	}
	out, err := worldjson.Render(w, rt)
	if err != nil {
		t.Fatal(err)
	}
	// As a client decodes it: invalid UTF-8 reads back as U+FFFD.
	b, err := json.Marshal(string(out))
	if err != nil {
		t.Fatal(err)
	}
	var text string
	if err := json.Unmarshal(b, &text); err != nil {
		t.Fatal(err)
	}
	return text
}

// resultText decodes a tools/call response body: its one text and isError.
func resultText(t testing.TB, body string) (string, bool) {
	t.Helper()
	var resp struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || len(resp.Result.Content) != 1 {
		t.Fatalf("response %.200q…: %v", body, err)
	}
	return resp.Result.Content[0].Text, resp.Result.IsError
}

// streamDocs are world documents that exercise the escaper at chunk
// boundaries: HTML characters, line and paragraph separators, runes of
// two, three and four bytes, quotes and backslashes, control characters
// as escapes, and documents worldjson.Merge cannot splice into.
func streamDocs(n int) map[string]string {
	fill := func(unit string, size int) string {
		return strings.Repeat(unit, size/len(unit)+1)
	}
	return map[string]string{
		"html":          `{"grid":{"cols":3},"name":"` + fill(`<b>&amp;</b>`, 3*n) + `"}`,
		"separators":    `{"text":"` + fill("a\u2028b\u2029", 4*n) + `","n":1}`,
		"runes":         `{"text":"` + fill("é€😀日", 5*n+1) + `"}`,
		"runes shifted": `{"t":"x` + fill("😀é", 5*n+2) + `"}`,
		"escapes":       `{"q":"` + fill(`\"\\\n\t`, 3*n) + `","nested":{"a":[1,2,{"b":null}]}}`,
		"small":         `{"grid":{"cols":1,"rows":1}}`,
		"spaced":        `{ "grid" : "` + fill("s", 2*n) + `" }`,
		"runtime":       `{"runtime":"authored","x":"` + fill("r", 2*n) + `"}`,
		"u escape":      `{"x":"\u00e9<` + fill("u", 2*n) + `"}`,
		"array":         `["` + fill("<é>", 2*n) + `"]`,
		"invalid utf-8": `{"x":"` + fill("ok\xff\xfe\xe2\x82", 3*n) + `"}`,
	}
}

// TestReadWorldStreamMatchesSDK: read_world of worlds kept in pieces (and
// of small ones) answers byte for byte the same over the fast path, which
// streams them, and over the go-sdk path, which builds the answer whole,
// on every protocol revision, and the text is what the in-memory
// rendering of before makes; the fast path takes every such request.
func TestReadWorldStreamMatchesSDK(t *testing.T) {
	for _, chunk := range []int{1, 7, 64, 1000} {
		t.Run(fmt.Sprintf("chunk %d", chunk), func(t *testing.T) {
			t.Parallel()
			p := newChunkedPair(t, chunk)
			ctx := context.Background()
			for name, doc := range streamDocs(chunk) {
				w := &wf.World{OwnerID: p.ts.Owner.ID, Name: "World <&> \u2028 " + name, Cols: 3, Rows: 2, JSON: json.RawMessage(doc)}
				if err := p.ts.DB.CreateWorld(ctx, w); err != nil {
					t.Fatal(err)
				}
				if err := p.ts.DB.SetPresence(ctx, &wf.Presence{WorldID: w.ID, UserID: p.ts.Owner.ID, X: 1, Y: 1}); err != nil {
					t.Fatal(err)
				}
				want := inMemoryAnswer(t, p.ts.DB, w.ID)
				for i, proto := range allProtocols {
					body := callBody(fmt.Sprint(i+1), proto, wf.ToolReadWorld, mustJSON(map[string]string{"id": w.ID}), "")
					h := headers(p.ownerK, proto, wf.ToolReadWorld, nil)
					if !p.compare(t, h, "", body) {
						t.Errorf("%s %s: the fast path did not take read_world", name, proto)
					}
					got := send(t, p.ts.MCPURL(), h, "", body)
					if text, isErr := resultText(t, got.body); isErr || text != want {
						t.Errorf("%s %s: text %.80q… (isError %v), want the in-memory rendering %.80q…", name, proto, text, isErr, want)
					}
				}
			}
		})
	}
}

// TestReadWorldStreamRealWorld: a generated world resized to 1024×1024
// through the tools (a 2 MB document, kept in pieces of the default size)
// answers the same over both paths.
func TestReadWorldStreamRealWorld(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 1024×1024 world")
	}
	p := newChunkedPair(t, 0)
	ctx := context.Background()
	actor := &wf.Actor{UserID: p.ts.Owner.ID, Kind: wf.CredentialSession, Scopes: []string{wf.ScopeAll}}
	res, err := p.ts.Tools.CallTool(ctx, actor, wf.ToolCreateWorld, json.RawMessage(`{"name":"Big <one>","template":"starter-jungle","seed":11,"size":"large"}`))
	if err != nil {
		t.Fatal(err)
	}
	id := res.(wf.CreateWorldResult).ID
	if _, err := p.ts.Tools.CallTool(ctx, actor, wf.ToolResizeWorld, json.RawMessage(`{"world_id":"`+id+`","cols":1024,"rows":1024}`)); err != nil {
		t.Fatal(err)
	}
	want := inMemoryAnswer(t, p.ts.DB, id)
	if len(want) < 4*sqlstore.DocChunkBytes {
		t.Fatalf("the world's answer is %d bytes: too small to test", len(want))
	}
	_, _, info, err := p.ts.DB.ReadWorldDeferred(ctx, id)
	if err != nil || info == nil || !info.SplicesRuntime {
		t.Fatalf("the world is not kept in pieces it can stream: %+v %v", info, err)
	}
	for i, proto := range []string{"2025-11-25", "2026-07-28"} {
		body := callBody(fmt.Sprint(i+1), proto, wf.ToolReadWorld, mustJSON(map[string]string{"id": id}), "")
		h := headers(p.ownerK, proto, wf.ToolReadWorld, nil)
		if !p.compare(t, h, "", body) {
			t.Errorf("%s: the fast path did not take read_world", proto)
		}
		got := send(t, p.ts.MCPURL(), h, "", body)
		if text, _ := resultText(t, got.body); text != want {
			t.Errorf("%s: the streamed text differs from the in-memory rendering (%d bytes, want %d)", proto, len(text), len(want))
		}
	}
}

// TestReadWorldStreamDuringResize: clients read a world kept in pieces
// over the fast path while another resizes it again and again through the
// tool: every answer is a complete, valid document of one version (its
// grid's size is the row's).
func TestReadWorldStreamDuringResize(t *testing.T) {
	p := newChunkedPair(t, 4096)
	ctx := context.Background()
	actor := &wf.Actor{UserID: p.ts.Owner.ID, Kind: wf.CredentialSession, Scopes: []string{wf.ScopeAll}}
	res, err := p.ts.Tools.CallTool(ctx, actor, wf.ToolCreateWorld, json.RawMessage(`{"name":"Busy","template":"starter-desert","seed":3,"size":"small"}`))
	if err != nil {
		t.Fatal(err)
	}
	id := res.(wf.CreateWorldResult).ID
	sizes := []int{40, 90, 20, 130, 64}
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		defer close(done)
		for i := range 20 {
			n := sizes[i%len(sizes)]
			if _, err := p.ts.Tools.CallTool(ctx, actor, wf.ToolResizeWorld, json.RawMessage(fmt.Sprintf(`{"world_id":%q,"cols":%d,"rows":%d}`, id, n, n))); err != nil {
				t.Error(err)
				return
			}
		}
	})
	body := callBody("1", "2025-11-25", wf.ToolReadWorld, mustJSON(map[string]string{"id": id}), "")
	h := headers(p.ownerK, "2025-11-25", wf.ToolReadWorld, nil)
	versions := make(chan int64, 1000)
	for range 3 {
		wg.Go(func() {
			for reads := 0; ; reads++ {
				select {
				case <-done:
					if reads > 0 {
						return
					}
				default:
				}
				text, isErr, err := readWorldText(p.ts.MCPURL(), h, body)
				if err != nil {
					t.Error(err)
					return
				}
				var w struct {
					Cols, Rows int
					Version    int64
					JSON       struct {
						Grid struct{ Cols, Rows int }
					}
				}
				if isErr || json.Unmarshal([]byte(text), &w) != nil || w.JSON.Grid.Cols != w.Cols || w.JSON.Grid.Rows != w.Rows {
					t.Errorf("answer of %d bytes (isError %v) is not one version's: %.120q…", len(text), isErr, text)
					return
				}
				versions <- w.Version
			}
		})
	}
	wg.Wait()
	close(versions)
	seen := map[int64]bool{}
	for v := range versions {
		seen[v] = true
	}
	t.Logf("%d versions seen", len(seen))
}

// readWorldText posts a tools/call and returns its text and isError (for
// goroutines: no t.Fatal).
func readWorldText(url string, h http.Header, body string) (string, bool, error) {
	return readWorldTextCtx(context.Background(), url, h, body)
}

// readWorldTextCtx is readWorldText, given up when ctx ends.
func readWorldTextCtx(ctx context.Context, url string, h http.Header, body string) (string, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return "", false, err
	}
	req.Header = h.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", false, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", false, err
	}
	var r struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &r); err != nil || len(r.Result.Content) != 1 {
		return "", false, fmt.Errorf("response %.200q…: %v", b, err)
	}
	return r.Result.Content[0].Text, r.Result.IsError, nil
}

// streamRunner is a ToolRunner whose every call streams through fn.
type streamRunner struct {
	impl *mcp.Implementation
	fn   func(io.Writer) error
}

func (r streamRunner) CallToolStream(context.Context, *wf.Actor, string, json.RawMessage) (string, func(io.Writer) error, bool, bool) {
	return "", r.fn, false, true
}

func (r streamRunner) Implementation() *mcp.Implementation { return r.impl }

// TestFastStreamFailure: a stream that fails before the first bytes go
// out (the buffer not yet full) is answered with internal_error; one that
// fails later cuts the response short (the connection is aborted), so the
// client never sees a complete answer.
func TestFastStreamFailure(t *testing.T) {
	ts := testserver.Start(t, dbtest.Open(t))
	key := ts.Key(t, ts.Owner, wf.ScopeAll)
	failAfter := func(n int) func(io.Writer) error {
		return func(w io.Writer) error {
			if _, err := w.Write(bytes.Repeat([]byte("<x>"), n/3)); err != nil {
				return err
			}
			return errors.New("the store went away")
		}
	}
	for _, tt := range []struct {
		name    string
		written int
		cut     bool
	}{
		{"at once", 0, false},
		{"within the buffer", 1000, false},
		{"after sending", 300 << 10, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			api := httpapi.New(httpapi.Options{Auth: ts.Auth, MCP: ts.Tools.MCP(), Store: ts.DB,
				Tools: streamRunner{impl: ts.Tools.Implementation(), fn: failAfter(tt.written)}})
			url := testserver.Listen(t, api) + "/mcp"
			req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(callBody("1", "2025-11-25", wf.ToolReadWorld, `{"id":"x"}`, "")))
			if err != nil {
				t.Fatal(err)
			}
			req.Header = headers(key, "2025-11-25", wf.ToolReadWorld, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if tt.cut {
				if err == nil {
					t.Fatalf("a stream failing after %d bytes gave a complete response of %d bytes", tt.written, len(b))
				}
				return
			}
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, %v", resp.StatusCode, err)
			}
			want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"internal_error"}],"isError":true}}`
			if string(b) != want {
				t.Errorf("answer %s, want %s", b, want)
			}
		})
	}
}
