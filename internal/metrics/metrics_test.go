package metrics_test

import (
	"database/sql"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/worldforge-go/worldforge/internal/metrics"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

type fakeStore struct{}

func (fakeStore) PoolStats() map[string]sql.DBStats {
	return map[string]sql.DBStats{"main": {MaxOpenConnections: 25, OpenConnections: 3, InUse: 1, Idle: 2, WaitCount: 4, WaitDuration: 1500 * time.Millisecond}}
}
func (fakeStore) AuditQueueDepth() int { return 7 }
func (fakeStore) AuditCommits() (uint64, uint64, map[float64]uint64) {
	return 3, 10, map[float64]uint64{1: 1, 8: 3}
}

// TestMetrics: labels are bounded (unknown methods are "other", a request
// no pattern matched is route "unmatched"), tool errors count by code, and
// the store collector exports what the store reports. Two registries in
// one process do not collide.
func TestMetrics(t *testing.T) {
	m := metrics.New()
	_ = metrics.New() // a second server's registry
	m.ObserveHTTP("GET /me", "GET", 200, time.Millisecond)
	m.ObserveHTTP("", "BREW", 404, time.Millisecond)
	m.ObserveTool("read_world", "", time.Millisecond)
	m.ObserveTool("read_world", "not_found", time.Millisecond)
	m.Started()
	if err := m.RegisterStore(fakeStore{}); err != nil {
		t.Fatal(err)
	}
	if err := m.RegisterStore(fakeStore{}); err == nil {
		t.Error("a second store collector registered on the same registry")
	}

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	m.Finished()
	got, err := testserver.ParseMetrics(rec.Body.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"worldforge_http_requests_total", []string{"route", "GET /me", "method", "GET", "code", "200"}, 1},
		{"worldforge_http_requests_total", []string{"route", metrics.RouteUnmatched, "method", "other", "code", "404"}, 1},
		{"worldforge_http_requests_in_flight", nil, 1},
		{"worldforge_tool_calls_total", []string{"tool", "read_world", "outcome", "ok"}, 1},
		{"worldforge_tool_calls_total", []string{"tool", "read_world", "outcome", "error"}, 1},
		{"worldforge_tool_errors_total", []string{"tool", "read_world", "code", "not_found"}, 1},
		{"worldforge_tool_call_duration_seconds_count", []string{"tool", "read_world"}, 2},
		{"worldforge_db_max_open_connections", []string{"pool", "main"}, 25},
		{"worldforge_db_open_connections", []string{"pool", "main"}, 3},
		{"worldforge_db_in_use_connections", []string{"pool", "main"}, 1},
		{"worldforge_db_idle_connections", []string{"pool", "main"}, 2},
		{"worldforge_db_wait_count_total", []string{"pool", "main"}, 4},
		{"worldforge_db_wait_duration_seconds_total", []string{"pool", "main"}, 1.5},
		{"worldforge_audit_queue_depth", nil, 7},
		{"worldforge_audit_commit_rows_count", nil, 3},
		{"worldforge_audit_commit_rows_sum", nil, 10},
		{"worldforge_audit_commit_rows_bucket", []string{"le", "1"}, 1},
		{"worldforge_audit_commit_rows_bucket", []string{"le", "8"}, 3},
		{"worldforge_audit_commit_rows_bucket", []string{"le", "+Inf"}, 3},
	} {
		if v := got.Value(c.name, c.labels...); v != c.want || !got.Has(c.name, c.labels...) {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, v, c.want)
		}
	}
	if !strings.Contains(rec.Body.String(), "go_goroutines") {
		t.Error("no Go collector")
	}
}
