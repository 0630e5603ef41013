package httpapi

// Operations: health, readiness, metrics and the request log.
//
//	GET /healthz   200 {"status":"ok"} while the process serves HTTP
//	GET /readyz    200 {"status":"ready"}; 503 {"status":"unavailable","reason":…}
//	               when the readiness check fails (the store's: a real query
//	               with a short timeout, and its migrations) or the server is
//	               shutting down
//	GET /metrics   Prometheus metrics of this server's private registry
//
// None of the three needs a credential, but like every route they pass
// the Host/Origin check first (limits.go): a DNS-rebinding page must not
// read a local server's metrics. With Options.SeparateMetrics, /metrics is
// served by MetricsHandler on a listener of its own instead, behind the
// same check. Every request, these included,
// gets a request id (the client's X-Request-Id when it is sane, else a
// fresh one), returned as the X-Request-Id response header and carried in
// the request context (package obs), and one log line at Info once it is
// answered: request id, method, route pattern, path, for an MCP POST the
// path that answered it (mcp_path: fast or sdk) and, for sdk, why the fast
// path declined it (fast_declined: one of the fixed codes of fastDecline),
// the tool names and error codes of a tools/call, the actor's user id and
// key id (never the credential), status and duration. The metric
// worldforge_mcp_requests_total{path,reason} counts the MCP POSTs the same
// way.

import (
	"context"
	"errors"
	"log/slog"
	mrand "math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/metrics"
	"github.com/worldforge-go/worldforge/internal/obs"
)

// HeaderRequestID is the request id header, read from requests and set on
// every response.
const HeaderRequestID = "X-Request-Id"

// maxRequestIDLen bounds an accepted incoming request id.
const maxRequestIDLen = 128

// readyTimeout bounds the readiness check.
const readyTimeout = 2 * time.Second

// Readiness reasons of the HTTP layer itself (the store gives its own).
const (
	reasonShuttingDown = "shutting_down"
	reasonNotReady     = "not_ready"
)

// initOperations sets up the metrics registry and the readiness check and
// mounts the operations routes; New calls it.
func (s *Server) initOperations() {
	s.ready = s.opts.Ready
	if s.ready == nil {
		if r, ok := s.opts.Store.(interface{ Ready(context.Context) error }); ok {
			s.ready = r.Ready
		}
	}
	if !s.opts.DisableMetrics {
		s.metrics = metrics.New()
		if st, ok := s.opts.Store.(metrics.Store); ok {
			if err := s.metrics.RegisterStore(st); err != nil {
				s.log.Error("metrics: store collector", "err", err)
			}
		}
		for d := range numFastDeclines {
			path := mcpPathSDK
			if d == fastServed {
				path = mcpPathFast
			}
			s.mcpRequests[d] = s.metrics.MCPRequests(path, d.String())
		}
		if !s.opts.SeparateMetrics {
			s.mux.Handle("GET /metrics", s.metrics.Handler())
		}
	}
	s.mux.HandleFunc("GET /healthz", s.serveHealth)
	s.mux.HandleFunc("GET /readyz", s.serveReady)
}

func (s *Server) serveHealth(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) serveReady(w http.ResponseWriter, r *http.Request) {
	select {
	case <-s.closing:
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "reason": reasonShuttingDown})
		return
	default:
	}
	if s.ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		err := s.ready(ctx)
		cancel()
		if err != nil {
			// The reason is a fixed word safe for anyone; the error (which
			// may name hosts or files) goes to the log only.
			reason := reasonNotReady
			var rr interface{ ReadyReason() string }
			if errors.As(err, &rr) {
				reason = rr.ReadyReason()
			}
			s.log.WarnContext(r.Context(), "not ready", "reason", reason, "err", err)
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "reason": reason})
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// MetricsHandler serves GET /metrics alone, behind the Host/Origin check,
// for a listener of its own (Options.SeparateMetrics; serve
// --metrics-addr); any other request there is 404 not_found. It is nil
// when metrics are disabled.
func (s *Server) MetricsHandler() http.Handler {
	if s.metrics == nil {
		return nil
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.metrics.Handler())
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { writeError(w, worldforge.ErrNotFound) })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hosts.allowed(r) {
			writeForbiddenHost(w)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// observe serves r through the mux with a request id and its observability
// record in the context, then logs the request and records its metrics.
func (s *Server) observe(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	// The record, the status writer and the id header's value in one
	// allocation.
	o := &struct {
		rec obs.Request
		sw  statusWriter
		id  [1]string
	}{}
	rec, sw := &o.rec, &o.sw
	rec.ID = requestID(r.Header.Get(HeaderRequestID))
	o.id[0] = rec.ID
	w.Header()[HeaderRequestID] = o.id[:] // Header.Set, without its slice
	if s.metrics != nil {
		s.metrics.Started()
		defer s.metrics.Finished()
	}
	sw.ResponseWriter = w
	r = r.WithContext(obs.NewContext(r.Context(), rec))
	if s.hosts.allowed(r) {
		if s.mcpRoute != nil && r.Method == http.MethodPost && r.URL.Path == mcpPattern {
			r.Pattern = mcpPattern // as the mux would set it
			s.mcpRoute.ServeHTTP(sw, r)
		} else {
			s.mux.ServeHTTP(sw, r)
		}
	} else {
		// Refused before any route runs; the metrics and the log still
		// name the route the request was for.
		_, r.Pattern = s.mux.Handler(r)
		writeForbiddenHost(sw)
	}
	took := time.Since(start)

	// The mux set r.Pattern on the request it was given: the route
	// pattern, never the raw path ("" when no pattern matched).
	route, status := r.Pattern, sw.code()
	var tools [2]obs.ToolCall
	snap, calls := rec.SnapshotTo(tools[:0])
	if s.metrics != nil {
		s.metrics.ObserveHTTP(route, r.Method, status, took)
		for _, c := range calls {
			s.metrics.ObserveTool(c.Tool, c.Code, c.Duration)
		}
	}
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelError
	}
	// Logged without the request's context: the id is an attribute here
	// already, and obs.NewHandler would add it again.
	ctx := context.Background()
	if !s.log.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, 0, 13)
	attrs = append(attrs,
		slog.String(obs.KeyRequestID, snap.ID),
		slog.String("method", r.Method),
		slog.String("route", route),
		slog.String("path", r.URL.Path),
	)
	if snap.MCPPath != "" {
		attrs = append(attrs, slog.String("mcp_path", snap.MCPPath))
		if snap.FastDeclined != "" {
			attrs = append(attrs, slog.String("fast_declined", snap.FastDeclined))
		}
	}
	if len(calls) == 1 { // the usual case, without the joins
		c := calls[0]
		attrs = append(attrs, slog.String("tool", c.Tool))
		if c.Code != "" {
			attrs = append(attrs, slog.String("tool_error", c.Code))
		}
	} else if len(calls) > 0 {
		names, codes := make([]string, 0, len(calls)), []string(nil)
		for _, c := range calls {
			names = append(names, c.Tool)
			if c.Code != "" {
				codes = append(codes, c.Code)
			}
		}
		attrs = append(attrs, slog.String("tool", strings.Join(names, ",")))
		if len(codes) > 0 {
			attrs = append(attrs, slog.String("tool_error", strings.Join(codes, ",")))
		}
	}
	if snap.UserID != "" {
		attrs = append(attrs, slog.String("user_id", snap.UserID))
	}
	if snap.KeyID != "" {
		attrs = append(attrs, slog.String("key_id", snap.KeyID))
	}
	attrs = append(attrs,
		slog.Int("status", status),
		slog.Float64("duration_ms", float64(took.Microseconds())/1000),
	)
	// The record goes to the handler directly, without the caller's pc
	// that Logger.LogAttrs takes with runtime.Callers for every record:
	// the request line has no source to name. Its time is the request's
	// end, as LogAttrs's would be.
	line := slog.NewRecord(start.Add(took), level, "request", 0)
	line.AddAttrs(attrs...)
	_ = s.log.Handler().Handle(ctx, line) // a handler's error is its own to report, as with LogAttrs
}

// requestID returns the incoming id if it is sane (1–128 characters of
// letters, digits and -_.:+/=@), else a fresh random one.
func requestID(in string) string {
	if in != "" && len(in) <= maxRequestIDLen && saneID(in) {
		return in
	}
	return newRequestID()
}

// newRequestID returns 26 random characters of the base32 alphabet, the
// shape of crypto/rand.Text: 128 bits from math/rand/v2, whose generator
// is seeded from the operating system's and needs no system call. A
// request id names a request in logs; it guards nothing, so it need not
// be a secret, only unique.
func newRequestID() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	var b [26]byte
	hi, lo := mrand.Uint64(), mrand.Uint64()
	for i := range 13 {
		b[i], b[13+i] = alphabet[hi&31], alphabet[lo&31]
		hi, lo = hi>>5, lo>>5
	}
	return string(b[:])
}

func saneID(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-_.:+/=@", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// statusWriter remembers the status a handler answered with. It passes
// Flush through (GET /mcp streams need it) and unwraps for
// http.ResponseController.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// code is the status sent: 200 when the handler wrote nothing.
func (w *statusWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}
