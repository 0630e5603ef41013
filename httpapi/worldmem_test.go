package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// TestReadWorldBufferedCap: a world whose document the store keeps in
// pieces and that is over the limit of an answer built in memory is still
// answered whole to a plain tools/call on every protocol revision (the
// fast path streams it), but a request the go-sdk answers (a JSON-RPC
// batch) gets too_large naming the limit and the way to get the world,
// with no audit row; a document that cannot be streamed is too_large on
// every path. Under the limit, the batch answers as before.
func TestReadWorldBufferedCap(t *testing.T) {
	const chunk, limit = 256, 2000
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		db.SetDocChunkBytesForTest(chunk)
		ts := testserver.StartWith(t, db, testserver.Config{MaxBufferedAnswerBytes: limit})
		key := ts.Key(t, ts.Owner, wf.ScopeAll)
		ctx := context.Background()
		mk := func(doc string) string {
			w := &wf.World{OwnerID: ts.Owner.ID, Name: "Capped", Cols: 3, Rows: 2, JSON: json.RawMessage(doc)}
			if err := ts.DB.CreateWorld(ctx, w); err != nil {
				t.Fatal(err)
			}
			return w.ID
		}
		big := mk(`{"grid":{"cols":3,"rows":2},"fill":"` + strings.Repeat("<x>", limit) + `"}`)
		small := mk(`{"grid":{"cols":3,"rows":2},"fill":"` + strings.Repeat("y", chunk*3) + `"}`)
		unspliceable := mk(`{"runtime":"authored","fill":"` + strings.Repeat("z", limit) + `"}`)

		for i, proto := range allProtocols {
			body := callBody(strconv.Itoa(i+1), proto, wf.ToolReadWorld, mustJSON(map[string]string{"id": big}), "")
			before := ts.API.FastPathCalls()
			got := send(t, ts.MCPURL(), headers(key, proto, wf.ToolReadWorld, nil), "", body)
			if ts.API.FastPathCalls() == before {
				t.Errorf("%q: the fast path did not take read_world", proto)
			}
			if text, isErr := resultText(t, got.body); isErr || text != inMemoryAnswer(t, ts.DB, big) {
				t.Errorf("%q: text %.80q… (isError %v), want the whole world", proto, text, isErr)
			}
		}

		batch := func(proto, id string) (string, bool) {
			t.Helper()
			body := `[` + callBody("1", proto, wf.ToolReadWorld, mustJSON(map[string]string{"id": id}), "") + `]`
			got := send(t, ts.MCPURL(), headers(key, proto, wf.ToolReadWorld, nil), "", body)
			var resp []json.RawMessage
			if err := json.Unmarshal([]byte(got.body), &resp); err != nil || len(resp) != 1 {
				t.Fatalf("batch answer %d %.200q: %v", got.status, got.body, err)
			}
			return resultText(t, string(resp[0]))
		}
		for _, proto := range []string{"", "2024-11-05", "2025-03-26"} {
			audits := ts.AuditCount(t)
			text, isErr := batch(proto, big)
			if !isErr || !strings.HasPrefix(text, wf.ETooLarge+": ") || !strings.Contains(text, fmt.Sprint(limit)) ||
				!strings.Contains(text, "MCP-Protocol-Version") {
				t.Errorf("%q: batch read_world of a world over the limit: %q (isError %v), want too_large naming %d and the header", proto, text, isErr, limit)
			}
			if n := ts.AuditCount(t) - audits; n != 0 {
				t.Errorf("%q: the refused read wrote %d audit rows", proto, n)
			}
			if text, isErr := batch(proto, small); isErr || text != inMemoryAnswer(t, ts.DB, small) {
				t.Errorf("%q: batch read_world under the limit: %.80q… (isError %v), want the world", proto, text, isErr)
			}
		}
		for _, proto := range allProtocols {
			body := callBody("9", proto, wf.ToolReadWorld, mustJSON(map[string]string{"id": unspliceable}), "")
			got := send(t, ts.MCPURL(), headers(key, proto, wf.ToolReadWorld, nil), "", body)
			if text, isErr := resultText(t, got.body); !isErr || !strings.HasPrefix(text, wf.ETooLarge+": ") || !strings.Contains(text, fmt.Sprint(limit)) {
				t.Errorf("%q: read_world of an unstreamable world over the limit: %q (isError %v), want too_large", proto, text, isErr)
			}
		}
	})
}
