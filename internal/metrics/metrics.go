// Package metrics is WorldForge's Prometheus instrumentation: one private
// registry per server (never the global one, so that servers in one process
// — tests — do not collide), holding the Go and process collectors, the
// HTTP and tool metrics the HTTP layer observes, and a collector that reads
// the store's pool and audit statistics at each scrape.
//
// Labels are bounded: routes are ServeMux patterns (never raw paths),
// methods one of a fixed list or "other", tools the registered tool names,
// error codes the worldforge error codes, the MCP path fast or sdk and the
// fast path's fixed list of decline reasons. The README's Operations section
// lists every metric.
package metrics

import (
	"database/sql"
	"maps"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every WorldForge metric.
const Namespace = "worldforge"

// RouteUnmatched is the route label of a request no route pattern matched
// (the mux answered it itself: 404 for an unknown path, 405 for a known
// path with another method).
const RouteUnmatched = "unmatched"

// Metrics is one server's registry and metrics.
type Metrics struct {
	reg *prometheus.Registry

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
	httpInFlight prometheus.GaugeFunc
	inFlight     atomic.Int64 // what httpInFlight reports
	toolCalls    *prometheus.CounterVec
	toolDuration *prometheus.HistogramVec
	toolErrors   *prometheus.CounterVec
	mcpRequests  *prometheus.CounterVec

	// The children of label values seen before (see seen).
	httpSeen seen[httpKey, httpChildren]
	toolSeen seen[toolKey, toolChildren]
}

// maxSeen bounds the label sets a seen remembers; beyond it, a new set's
// metrics are looked up in their vector each time.
const maxSeen = 1024

// seen remembers the metrics (a vector's children) of label sets observed
// before, so that observing them again is a map read without a lock
// instead of WithLabelValues's hashing of the values and locked lookup
// (four of them per tool call: half a microsecond of a request's CPU). The
// map is immutable, replaced by a copy with one more entry; the labels are
// bounded (see the package comment), so it stops growing.
type seen[K comparable, V any] struct {
	mu sync.Mutex // serializes put
	m  atomic.Pointer[map[K]V]
}

func (s *seen[K, V]) get(k K) (V, bool) {
	if m := s.m.Load(); m != nil {
		v, ok := (*m)[k]
		return v, ok
	}
	var zero V
	return zero, false
}

func (s *seen[K, V]) put(k K, v V) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.m.Load()
	var n int
	if old != nil {
		if _, ok := (*old)[k]; ok {
			return
		}
		n = len(*old)
	}
	if n >= maxSeen {
		return
	}
	m := make(map[K]V, n+1)
	if old != nil {
		maps.Copy(m, *old)
	}
	m[k] = v
	s.m.Store(&m)
}

// New returns a registry with the Go and process collectors and the HTTP
// and tool metrics.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "http", Name: "requests_total",
		Help: "HTTP requests answered, by route pattern, method and status code.",
	}, []string{"route", "method", "code"})
	m.httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "http", Name: "request_duration_seconds",
		Help:    "Time to answer an HTTP request, by route pattern and method.",
		Buckets: prometheus.DefBuckets,
	}, []string{"route", "method"})
	// A gauge read at scrape time from an atomic count: a request adds and
	// subtracts one, where a prometheus.Gauge would run two
	// compare-and-swap loops on a float.
	m.httpInFlight = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "http", Name: "requests_in_flight",
		Help: "HTTP requests being served.",
	}, func() float64 { return float64(m.inFlight.Load()) })
	m.toolCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "tool", Name: "calls_total",
		Help: "MCP tool calls over /mcp (fast path and go-sdk path), by tool and outcome (ok or error).",
	}, []string{"tool", "outcome"})
	m.toolDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "tool", Name: "call_duration_seconds",
		Help:    "Time the tool pipeline took (scope check to committed audit row), by tool.",
		Buckets: prometheus.DefBuckets,
	}, []string{"tool"})
	m.toolErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "tool", Name: "errors_total",
		Help: "MCP tool calls that failed, by tool and error code (not_found, missing_scopes, bad_request, internal, …).",
	}, []string{"tool", "code"})
	m.mcpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "mcp", Name: "requests_total",
		Help: "MCP POSTs to /mcp by the path that answered them (fast: the HTTP layer's fast path; sdk: the go-sdk handler) and, for sdk, the code of why the fast path declined (\"\" for fast).",
	}, []string{"path", "reason"})
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.httpRequests, m.httpDuration, m.httpInFlight, m.mcpRequests,
		m.toolCalls, m.toolDuration, m.toolErrors,
	)
	return m
}

// Registry is the server's private registry.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Started counts a request in flight; call Finished when it is answered.
func (m *Metrics) Started() { m.inFlight.Add(1) }

// Finished counts a request in flight as answered.
func (m *Metrics) Finished() { m.inFlight.Add(-1) }

// ObserveHTTP records an answered HTTP request. route is the ServeMux
// pattern that served it ("" for none).
func (m *Metrics) ObserveHTTP(route, method string, status int, d time.Duration) {
	if route == "" {
		route = RouteUnmatched
	}
	method = Method(method)
	k := httpKey{route, method, status}
	c, ok := m.httpSeen.get(k)
	if !ok {
		c = httpChildren{
			requests: m.httpRequests.WithLabelValues(route, method, strconv.Itoa(status)),
			duration: m.httpDuration.WithLabelValues(route, method),
		}
		m.httpSeen.put(k, c)
	}
	c.requests.Inc()
	c.duration.Observe(d.Seconds())
}

// httpKey is the labels of an answered request.
type httpKey struct {
	route, method string
	status        int
}

// httpChildren is the metrics of one httpKey.
type httpChildren struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// toolKey is the labels of a finished tool call.
type toolKey struct{ tool, code string }

// toolChildren is the metrics of one toolKey.
type toolChildren struct {
	calls, errors prometheus.Counter // errors: nil for a success
	duration      prometheus.Observer
}

// ObserveTool records a finished tool call; code is "" for a success, else
// the worldforge error code.
func (m *Metrics) ObserveTool(tool, code string, d time.Duration) {
	k := toolKey{tool, code}
	c, ok := m.toolSeen.get(k)
	if !ok {
		outcome := "ok"
		if code != "" {
			outcome = "error"
			c.errors = m.toolErrors.WithLabelValues(tool, code)
		}
		c.calls = m.toolCalls.WithLabelValues(tool, outcome)
		c.duration = m.toolDuration.WithLabelValues(tool)
		m.toolSeen.put(k, c)
	}
	if c.errors != nil {
		c.errors.Inc()
	}
	c.calls.Inc()
	c.duration.Observe(d.Seconds())
}

// MCPRequests returns the counter of the MCP POSTs answered by path
// ("fast" or "sdk") for reason (why the fast path declined; "" for fast),
// creating it at 0. Callers take the counters of a fixed list of reasons
// once, so that counting a request is one atomic add.
func (m *Metrics) MCPRequests(path, reason string) prometheus.Counter {
	return m.mcpRequests.WithLabelValues(path, reason)
}

// Method is the method label of an HTTP method: the standard methods as
// they are, anything else "other".
func Method(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
		http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}

// Store is what the store collector reads at each scrape (sqlstore.DB
// implements it).
type Store interface {
	// PoolStats returns each connection pool's statistics by pool name.
	PoolStats() map[string]sql.DBStats
	// AuditQueueDepth is the number of audit entries waiting for their
	// group commit or in the one being written.
	AuditQueueDepth() int
	// AuditCommits reports the audit group commits so far: how many, the
	// rows they wrote, and for each bucket's upper bound the cumulative
	// number of commits of at most that many rows.
	AuditCommits() (commits, rows uint64, byRows map[float64]uint64)
}

// RegisterStore adds the collector of st's statistics to the registry.
func (m *Metrics) RegisterStore(st Store) error {
	return m.reg.Register(newStoreCollector(st))
}

// storeCollector reads a Store's statistics at each scrape.
type storeCollector struct {
	st Store

	maxOpen, open, inUse, idle  *prometheus.Desc
	waitCount, waitSeconds      *prometheus.Desc
	auditQueue, auditCommitRows *prometheus.Desc
}

func newStoreCollector(st Store) *storeCollector {
	pool := []string{"pool"}
	d := func(name, help string, labels []string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", name), help, labels, nil)
	}
	return &storeCollector{
		st:              st,
		maxOpen:         d("db_max_open_connections", "Maximum number of open connections of the pool.", pool),
		open:            d("db_open_connections", "Established connections of the pool, in use and idle.", pool),
		inUse:           d("db_in_use_connections", "Connections of the pool in use.", pool),
		idle:            d("db_idle_connections", "Idle connections of the pool.", pool),
		waitCount:       d("db_wait_count_total", "Times a caller waited for a connection of the pool.", pool),
		waitSeconds:     d("db_wait_duration_seconds_total", "Time callers spent waiting for a connection of the pool.", pool),
		auditQueue:      d("audit_queue_depth", "Audit entries waiting for their group commit or in the one being written.", nil),
		auditCommitRows: d("audit_commit_rows", "Rows written per audit group commit (one transaction).", nil),
	}
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.maxOpen, c.open, c.inUse, c.idle, c.waitCount, c.waitSeconds, c.auditQueue, c.auditCommitRows} {
		ch <- d
	}
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	for name, s := range c.st.PoolStats() {
		ch <- prometheus.MustNewConstMetric(c.maxOpen, prometheus.GaugeValue, float64(s.MaxOpenConnections), name)
		ch <- prometheus.MustNewConstMetric(c.open, prometheus.GaugeValue, float64(s.OpenConnections), name)
		ch <- prometheus.MustNewConstMetric(c.inUse, prometheus.GaugeValue, float64(s.InUse), name)
		ch <- prometheus.MustNewConstMetric(c.idle, prometheus.GaugeValue, float64(s.Idle), name)
		ch <- prometheus.MustNewConstMetric(c.waitCount, prometheus.CounterValue, float64(s.WaitCount), name)
		ch <- prometheus.MustNewConstMetric(c.waitSeconds, prometheus.CounterValue, s.WaitDuration.Seconds(), name)
	}
	ch <- prometheus.MustNewConstMetric(c.auditQueue, prometheus.GaugeValue, float64(c.st.AuditQueueDepth()))
	commits, rows, byRows := c.st.AuditCommits()
	ch <- prometheus.MustNewConstHistogram(c.auditCommitRows, commits, float64(rows), byRows)
}
