package httpapi

// Abuse limits.
//
// Every request passes the Host/Origin check (DNS-rebinding protection)
// before anything else, whatever its route (/mcp, REST, /healthz, /readyz,
// /metrics, an unknown path): 403 forbidden_host. Every /mcp and REST
// request then passes, in this order:
//
//  1. authentication: 401 unauthorized, or 429 rate_limited once the
//     remote IP has used up its budget of failed authentications;
//  2. the credential's token bucket: 429 rate_limited with Retry-After;
//  3. the credential's concurrency cap: 429 rate_limited with
//     Retry-After: 1 (a request over the cap is never queued);
//  4. for a GET /mcp stream, the stream caps, per credential and per
//     server (streams.go): 429 rate_limited with Retry-After: 5.
//
// A refused request reaches no handler, so it writes nothing (no audit
// row). Body, header and time limits are the transport's: MaxBodyBytes
// (413) in Options, and ConnLimits for the http.Server.

import (
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/worldforge-go/worldforge"
)

// Limits are the per-request abuse limits of a Server. The zero value
// limits no rate and no concurrency, and applies the default Host check.
type Limits struct {
	// Rate is the sustained number of requests per second one credential
	// (an API key, else a user) may make: a token bucket of Burst tokens
	// refilled at Rate per second. A request that finds the bucket empty
	// gets 429 rate_limited with Retry-After. Failed authentications are
	// limited the same way per remote IP. 0 turns rate limiting off.
	Rate float64
	// Burst is the bucket's size; 0 means max(1, ceil(Rate)).
	Burst int
	// MaxConcurrent caps the requests one credential may have in progress
	// (an open GET /mcp stream counts); one more gets 429 at once. 0 means
	// no cap.
	MaxConcurrent int
	// MaxStreamsPerCredential caps the GET /mcp streams one credential may
	// hold open; one more is 429 rate_limited at once. 0 means no cap.
	MaxStreamsPerCredential int
	// MaxStreams caps the GET /mcp streams open on the server, all
	// credentials together, so that streams cannot take the file
	// descriptors every other request needs; one more is 429 rate_limited
	// at once. 0 means no cap.
	MaxStreams int
	// AllowedHosts are the host names (or host:port) requests may name in
	// Host and Origin, besides the loopback names, which are always
	// allowed; "*" allows any. Empty: a request that arrived on a loopback
	// address must name a loopback host (the go-sdk's own rule), others
	// are not checked.
	AllowedHosts []string
}

// Defaults of the connection limits (ConnLimits).
const (
	DefaultMaxHeaderBytes    = 64 << 10
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 60 * time.Second
	DefaultWriteTimeout      = 120 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
)

// ConnLimits are the limits of the http.Server in front of the handler:
// header size (431 beyond) and the slow-client timeouts. A zero duration
// is no timeout (ReadHeaderTimeout 0 falls back to ReadTimeout, and
// IdleTimeout 0 to ReadTimeout, as in net/http).
type ConnLimits struct {
	MaxHeaderBytes    int
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
}

// DefaultConnLimits returns the connection limits `worldforge serve` uses
// unless told otherwise.
func DefaultConnLimits() ConnLimits {
	return ConnLimits{
		MaxHeaderBytes:    DefaultMaxHeaderBytes,
		ReadHeaderTimeout: DefaultReadHeaderTimeout,
		ReadTimeout:       DefaultReadTimeout,
		WriteTimeout:      DefaultWriteTimeout,
		IdleTimeout:       DefaultIdleTimeout,
	}
}

// Apply sets the limits on srv. The GET /mcp stream lifts the read and
// write deadlines for itself (it is meant to stay open).
func (c ConnLimits) Apply(srv *http.Server) {
	srv.MaxHeaderBytes = c.MaxHeaderBytes
	srv.ReadHeaderTimeout = c.ReadHeaderTimeout
	srv.ReadTimeout = c.ReadTimeout
	srv.WriteTimeout = c.WriteTimeout
	srv.IdleTimeout = c.IdleTimeout
}

// guarded wraps an /mcp or REST handler in the checks above after the
// Host/Origin check (which observe makes for every request).
func (s *Server) guarded(next http.Handler) http.Handler {
	return s.authenticated(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.limited(w, r, credentialKey(worldforge.ActorFromContext(r.Context()), r), next)
	}))
}

// limited serves the request under the rate and concurrency limits of
// key, or answers 429.
func (s *Server) limited(w http.ResponseWriter, r *http.Request, key string, next http.Handler) {
	if ok, wait := s.perCred.allow(key); !ok {
		writeRateLimited(w, wait, "")
		return
	}
	if !s.perCred.acquire(key) {
		writeRateLimited(w, time.Second, "too many concurrent requests")
		return
	}
	defer s.perCred.release(key)
	next.ServeHTTP(w, r)
}

// perIPLimited applies the rate and concurrency limits per remote IP to a
// handler that does its own authentication (the web console).
func (s *Server) perIPLimited(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.limited(w, r, "console-ip:"+remoteIP(r), next)
	})
}

// writeForbiddenHost answers a request the Host/Origin check refused.
func writeForbiddenHost(w http.ResponseWriter) {
	writeError(w, &worldforge.Error{Code: worldforge.EForbiddenHost})
}

// authFailed answers a request whose credential did not verify: 401, or
// 429 once its remote IP has no failed authentications left.
func (s *Server) authFailed(w http.ResponseWriter, r *http.Request, err error) {
	if worldforge.ErrorCode(err) == worldforge.EUnauthorized {
		if ok, wait := s.perIP.allow(remoteIP(r)); !ok {
			writeRateLimited(w, wait, "too many failed authentications")
			return
		}
		w.Header().Set("WWW-Authenticate", s.challenge(r))
	}
	writeError(w, err)
}

// writeRateLimited writes 429 rate_limited with Retry-After: wait in whole
// seconds, at least 1.
func writeRateLimited(w http.ResponseWriter, wait time.Duration, detail string) {
	w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(wait)))
	writeError(w, &worldforge.Error{Code: worldforge.ERateLimited, Detail: detail})
}

func retryAfterSeconds(d time.Duration) int {
	sec := math.Ceil(d.Seconds())
	if sec < 1 || math.IsNaN(sec) {
		return 1
	}
	if sec > 86400 {
		return 86400
	}
	return int(sec)
}

// credentialKey names the bucket of a request: its API key, else its user,
// else (a credential that names no user) its remote IP.
func credentialKey(a *worldforge.Actor, r *http.Request) string {
	switch {
	case a != nil && a.KeyID != "":
		return "key:" + a.KeyID
	case a != nil && a.UserID != "":
		return "user:" + a.UserID
	default:
		return "ip:" + remoteIP(r)
	}
}

// remoteIP is the address the request came from, without the port. The
// server does not trust forwarding headers: behind a proxy every client is
// the proxy.
func remoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// The Host/Origin check.

// hostPolicy decides which Host and Origin values a request may carry.
type hostPolicy struct {
	any       bool            // "*": no check
	explicit  bool            // AllowedHosts given: every request is checked
	names     map[string]bool // lower-case host names, any port
	hostPorts map[string]bool // lower-case host:port, that port only
}

func newHostPolicy(hosts []string) *hostPolicy {
	p := &hostPolicy{names: map[string]bool{}, hostPorts: map[string]bool{}}
	for _, h := range hosts {
		h = strings.ToLower(strings.TrimSpace(h))
		switch {
		case h == "":
		case h == "*":
			p.any = true
		default:
			p.explicit = true
			if host, port, err := net.SplitHostPort(h); err == nil && port != "" {
				p.hostPorts[net.JoinHostPort(host, port)] = true
			} else {
				p.names[strings.Trim(h, "[]")] = true
			}
		}
	}
	return p
}

// ValidAllowedHost reports whether h can be an entry of
// Limits.AllowedHosts: "*", a host name or IP, or either with a port.
func ValidAllowedHost(h string) bool {
	if h == "*" {
		return true
	}
	if h == "" || strings.ContainsAny(h, "/?#@ \t*") {
		return false
	}
	host := h
	if hp, port, err := net.SplitHostPort(h); err == nil {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return false
		}
		host = hp
	} else if strings.Count(h, ":") > 1 || strings.HasPrefix(h, "[") {
		// An IPv6 address without a port, bracketed or not.
		if strings.HasPrefix(h, "[") != strings.HasSuffix(h, "]") {
			return false
		}
		host = strings.Trim(h, "[]")
		if net.ParseIP(host) == nil {
			return false
		}
	} else if strings.Contains(h, ":") {
		return false
	}
	if host == "" {
		return false
	}
	if net.ParseIP(host) != nil {
		return true
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			if !(c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				return false
			}
		}
	}
	return true
}

// allowed reports whether r's Host and Origin (when present) are allowed.
// Without a list, a request on a loopback connection must name loopback
// hosts and any other passes, as in the go-sdk; with one, every request
// must name a loopback host or a listed one.
func (p *hostPolicy) allowed(r *http.Request) bool {
	if p.any {
		return true
	}
	if !p.explicit {
		local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		if !ok || local == nil || !addrIsLoopback(local) {
			return true
		}
	}
	if !p.hostOK(r.Host) {
		return false
	}
	origins := r.Header.Values("Origin")
	if len(origins) > 1 {
		return false
	}
	if len(origins) == 1 {
		u, err := url.Parse(origins[0])
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return false // including "null"
		}
		return p.hostOK(u.Host)
	}
	return true
}

// addrIsLoopback reports whether a is a loopback address, as isLoopback of
// its text does, without making the text of a TCP address.
func addrIsLoopback(a net.Addr) bool {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.IsLoopback()
	}
	return isLoopback(a.String())
}

// hostOK reports whether a host[:port] is a loopback host or allowed.
func (p *hostPolicy) hostOK(hostport string) bool {
	if isLoopback(hostport) {
		return true
	}
	h := strings.ToLower(hostport)
	if p.hostPorts[h] {
		return true
	}
	host, _, err := net.SplitHostPort(h)
	if err != nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	return host != "" && p.names[host]
}

// The buckets.

// limiter keeps one token bucket (a golang.org/x/time/rate.Limiter, asked
// with explicit times so that tests can move the clock) and one in-flight
// count per key. Entries whose bucket is full again and that have nothing
// in flight carry no information (a new entry starts the same way) and are
// dropped by sweeps, which run at most every sweepEvery or when the map
// has doubled since the last one, so the map holds about the keys active
// in the last burst/rate seconds.
type limiter struct {
	rate    float64 // tokens per second; 0: no rate limit
	burst   int
	maxConc int // 0: no cap
	now     func() time.Time

	mu        sync.Mutex
	entries   map[string]*bucket
	lastSweep time.Time
	sweepAt   int
}

type bucket struct {
	tokens   *rate.Limiter
	inflight int
}

const (
	sweepEvery   = time.Minute
	minSweepSize = 1024
)

func newLimiter(r float64, burst, maxConc int, now func() time.Time) *limiter {
	if r < 0 || math.IsNaN(r) || math.IsInf(r, 0) {
		r = 0
	}
	if burst <= 0 {
		burst = max(1, int(math.Ceil(r)))
	}
	if now == nil {
		now = time.Now
	}
	return &limiter{
		rate: r, burst: burst, maxConc: max(0, maxConc), now: now,
		entries: map[string]*bucket{}, sweepAt: minSweepSize,
	}
}

// entry returns key's bucket; l.mu is held. A new bucket starts full.
func (l *limiter) entry(key string, now time.Time) *bucket {
	l.maybeSweep(now)
	b, ok := l.entries[key]
	if !ok {
		b = &bucket{tokens: rate.NewLimiter(rate.Limit(l.rate), l.burst)}
		l.entries[key] = b
	}
	return b
}

// allow takes a token from key's bucket, or says how long until one is
// there.
func (l *limiter) allow(key string) (bool, time.Duration) {
	if l == nil || l.rate == 0 {
		return true, 0
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.entry(key, now)
	if b.tokens.AllowN(now, 1) {
		return true, 0
	}
	return false, time.Duration((1 - b.tokens.TokensAt(now)) / l.rate * float64(time.Second))
}

// acquire counts a request in flight for key unless key is at the cap.
func (l *limiter) acquire(key string) bool {
	if l == nil || l.maxConc == 0 {
		return true
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.entry(key, now)
	if b.inflight >= l.maxConc {
		return false
	}
	b.inflight++
	return true
}

// release ends a request acquire counted.
func (l *limiter) release(key string) {
	if l == nil || l.maxConc == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.entries[key]; ok && b.inflight > 0 {
		b.inflight--
	}
}

// maybeSweep drops the entries that carry no information; l.mu is held.
func (l *limiter) maybeSweep(now time.Time) {
	if len(l.entries) < l.sweepAt && now.Sub(l.lastSweep) < sweepEvery {
		return
	}
	for k, b := range l.entries {
		if b.inflight > 0 {
			continue
		}
		if l.rate == 0 || b.tokens.TokensAt(now) >= float64(l.burst) {
			delete(l.entries, k)
		}
	}
	l.lastSweep = now
	l.sweepAt = max(minSweepSize, 2*len(l.entries))
}

// size is the number of entries held.
func (l *limiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}
