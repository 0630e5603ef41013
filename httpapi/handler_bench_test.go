package httpapi_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/bench"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/obs"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// BenchmarkServeMCP calls the HTTP handler in process (no sockets, no
// client), so that its allocations per request are the server's alone,
// from 32 callers per CPU so that audit rows commit in groups as under load:
// read_world through the fast path and through the go-sdk handler, on both
// protocol revisions the fast path serves.
func BenchmarkServeMCP(b *testing.B) {
	for _, fast := range []bool{true, false} {
		path := "fast"
		if !fast {
			path = "sdk"
		}
		for _, protocol := range []string{bench.Protocol20251125, bench.Protocol20260728} {
			b.Run(path+"/"+protocol, func(b *testing.B) {
				s := testserver.StartWith(b, dbtest.Open(b), testserver.Config{NoFastPath: !fast})
				h := bench.ToolCallHeaders(protocol, "read_world")
				h.Set("Authorization", "Bearer "+s.Key(b, s.Owner, wf.ScopeAll))
				body := bench.ToolCallBody(1, protocol, "read_world", map[string]any{"id": s.World.ID})
				b.ReportAllocs()
				b.SetParallelism(32) // 64 callers on 2 CPUs: audit rows commit in groups, as under load
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
						req.Header = h.Clone()
						rec := httptest.NewRecorder()
						s.API.ServeHTTP(rec, req)
						if err := bench.DefaultVerify(rec.Code, rec.Header(), rec.Body.Bytes()); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

// BenchmarkServeNoop calls the HTTP handler in process with the bench-only
// tool bench_noop (serve --bench-noop): API-key auth, the limits, the
// request log (text, batched, as serve writes it), the metrics and the
// fast path, with no store and no audit row. Its allocations per request
// are the protocol layer's.
func BenchmarkServeNoop(b *testing.B) {
	for _, protocol := range []string{bench.Protocol20251125, bench.Protocol20260728} {
		b.Run(protocol, func(b *testing.B) {
			bw := obs.NewBufferedWriter(io.Discard, 100*time.Millisecond)
			defer bw.Close()
			log := slog.New(obs.NewHandler(obs.NewFlushingHandler(slog.NewTextHandler(bw, nil), bw, slog.LevelWarn)))
			s := testserver.StartWith(b, dbtest.Open(b), testserver.Config{Logger: log, BenchNoopPayload: bench.BaselinePayload()})
			h := bench.ToolCallHeaders(protocol, "bench_noop")
			h.Set("Authorization", "Bearer "+s.Key(b, s.Owner, wf.ScopeAll))
			body := bench.ToolCallBody(1, protocol, "bench_noop", map[string]any{"id": "x"})
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
				req.Header = h.Clone()
				rec := httptest.NewRecorder()
				s.API.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte(`"result"`)) {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
		})
	}
}
