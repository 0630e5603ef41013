package httpapi_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"syscall"
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
				defer reportCPU(b)()
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

// reportCPU reports the process's user+system CPU time per operation
// ("cpu-ns/op") from now until the returned function is called: unlike
// ns/op, it does not count the time spent waiting for other processes on
// a shared machine.
func reportCPU(b *testing.B) func() {
	start := processCPU()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkServeMCPPropose is BenchmarkServeMCP for a write:
// propose_wiki_page through the fast path, 64 callers, each call a new
// pending proposal with its audit row in the proposal's transaction, with
// and without the serve command's default quota of pending proposals per
// user (the count is checked in the filing's transaction).
func BenchmarkServeMCPPropose(b *testing.B) {
	for _, quota := range []bool{false, true} {
		name := "noquota"
		if quota {
			name = "quota"
		}
		b.Run(name, func(b *testing.B) {
			db := dbtest.Open(b)
			if quota {
				db.SetQuotas(wf.Quotas{PendingProposals: 1 << 30})
			}
			s := testserver.Start(b, db)
			protocol := bench.Protocol20251125
			h := bench.ToolCallHeaders(protocol, "propose_wiki_page")
			h.Set("Authorization", "Bearer "+s.Key(b, s.Owner, wf.ScopeAll))
			body := bench.ToolCallBody(1, protocol, "propose_wiki_page", map[string]any{"world_id": s.World.ID,
				"payload": map[string]any{"title": "A page", "body": "Some text about the place."}, "diff_summary": "bench"})
			b.ReportAllocs()
			b.SetParallelism(32)
			defer reportCPU(b)()
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
			log := slog.New(obs.NewHandler(obs.NewFlushingHandler(obs.NewTextHandler(bw, nil), bw, slog.LevelWarn)))
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
