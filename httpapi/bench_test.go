package httpapi_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/bench"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// BenchmarkToolCall drives tools/call read_world over real HTTP with
// parallel keep-alive clients, against the bare go-sdk floor and against
// the full WorldForge stack (auth + store read + audit row) on SQLite, in
// the same run. Compare the two req/s figures as a ratio.
func BenchmarkToolCall(b *testing.B) {
	for _, protocol := range []string{bench.Protocol20251125, bench.Protocol20260728} {
		b.Run("baseline/"+protocol, func(b *testing.B) {
			srv := httptest.NewServer(bench.NewBaselineHandler())
			defer srv.Close()
			runToolCalls(b, srv.URL+"/mcp", bench.ToolCallHeaders(protocol, "read_world"),
				bench.ToolCallBody(1, protocol, "read_world", map[string]any{"id": "world_x"}))
		})
		b.Run("worldforge/"+protocol, func(b *testing.B) {
			s := testserver.Start(b, dbtest.Open(b))
			h := bench.ToolCallHeaders(protocol, "read_world")
			h.Set("Authorization", "Bearer "+s.Key(b, s.Owner, wf.ScopeAll))
			runToolCalls(b, s.MCPURL(), h, bench.ToolCallBody(1, protocol, "read_world", map[string]any{"id": s.World.ID}))
		})
	}
}

func runToolCalls(b *testing.B, url string, header http.Header, body []byte) {
	tr := &http.Transport{MaxIdleConnsPerHost: 256, DialContext: (&net.Dialer{}).DialContext}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	b.SetParallelism(4)
	b.ReportAllocs()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
			req.Header = header.Clone()
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err := bench.DefaultVerify(resp.StatusCode, resp.Header, data); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}
