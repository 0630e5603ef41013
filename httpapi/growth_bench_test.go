package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// BenchmarkReadWorldGrowth measures tools/call read_world over real HTTP
// (a server on 127.0.0.1:0, the fast path, the SQLite store in a temporary
// directory) on square worlds of growing side: a generated large jungle
// resized through the tools to side×side, as TestReadWorldStreamRealWorld
// makes its world. Each call reads the whole answer to the end; B/op
// counts what server and client allocate for it, and SetBytes the
// answer's length, so MB/s is the answer's rate. Run with
// go test -run XXX -bench ReadWorldGrowth -benchtime 3x ./httpapi
func BenchmarkReadWorldGrowth(b *testing.B) {
	ts := testserver.Start(b, dbtest.Open(b))
	key := ts.Key(b, ts.Owner, wf.ScopeAll)
	ctx := context.Background()
	actor := &wf.Actor{UserID: ts.Owner.ID, Kind: wf.CredentialSession, Scopes: []string{wf.ScopeAll}}
	const proto = "2025-11-25"
	h := headers(key, proto, wf.ToolReadWorld, nil)
	client := &http.Client{Timeout: 5 * time.Minute}
	for _, side := range []int{256, 512, 1024, 2048, 4096} {
		start := time.Now()
		res, err := ts.Tools.CallTool(ctx, actor, wf.ToolCreateWorld, json.RawMessage(`{"name":"Big <one>","template":"starter-jungle","seed":11,"size":"large"}`))
		if err != nil {
			b.Fatal(err)
		}
		id := res.(wf.CreateWorldResult).ID
		if _, err := ts.Tools.CallTool(ctx, actor, wf.ToolResizeWorld, json.RawMessage(fmt.Sprintf(`{"world_id":%q,"cols":%d,"rows":%d}`, id, side, side))); err != nil {
			b.Fatal(err)
		}
		built := time.Since(start)
		body := callBody("1", proto, wf.ToolReadWorld, mustJSON(map[string]string{"id": id}), "")
		// Once, outside the measurement: the answer is a world of that size.
		text, isErr, err := readWorldText(ts.MCPURL(), h, body)
		if err != nil || isErr {
			b.Fatalf("side %d: read_world: %v (isError %v) %.200s", side, err, isErr, text)
		}
		var w struct {
			Cols, Rows int
			JSON       struct {
				Grid struct{ Cols, Rows int }
			}
		}
		if err := json.Unmarshal([]byte(text), &w); err != nil || w.Cols != side || w.Rows != side || w.JSON.Grid.Cols != side || w.JSON.Grid.Rows != side {
			b.Fatalf("side %d: the answer is a %d×%d world with a %+v grid (%v)", side, w.Cols, w.Rows, w.JSON.Grid, err)
		}
		b.Run(fmt.Sprintf("side=%d", side), func(b *testing.B) {
			b.ReportAllocs()
			var n int64
			for b.Loop() {
				n = readWorldAnswer(b, client, ts.MCPURL(), h, body)
			}
			b.SetBytes(n)
			b.ReportMetric(float64(n), "bytes/answer")
			b.ReportMetric(built.Seconds()*1000, "ms-to-build")
		})
	}
}

// readWorldAnswer posts body and reads the whole response to the end,
// returning its length; anything but a 200 fails the benchmark.
func readWorldAnswer(b *testing.B, client *http.Client, url string, h http.Header, body string) int64 {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header = h.Clone()
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("read_world: status %d, %d bytes, %v", resp.StatusCode, n, err)
	}
	return n
}
