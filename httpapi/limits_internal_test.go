package httpapi

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a clock tests move by hand, safe for concurrent use.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}
func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// TestLimiterBucket: a bucket gives Burst requests at once, then one per
// 1/Rate seconds, and says how long to wait.
func TestLimiterBucket(t *testing.T) {
	clk := newFakeClock()
	l := newLimiter(2, 3, 0, clk.now) // 2/s, burst 3
	for i := range 3 {
		if ok, _ := l.allow("a"); !ok {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	ok, wait := l.allow("a")
	if ok || wait <= 0 || wait > 500*time.Millisecond {
		t.Fatalf("4th request: ok %v, wait %v; want refused with a wait in (0, 500ms]", ok, wait)
	}
	if got := retryAfterSeconds(wait); got != 1 {
		t.Errorf("Retry-After for %v = %d, want 1 (rounded up, at least 1)", wait, got)
	}
	if ok, _ := l.allow("b"); !ok {
		t.Error("another key shares the bucket")
	}
	clk.advance(500 * time.Millisecond)
	if ok, _ := l.allow("a"); !ok {
		t.Error("refused after the refill of one token")
	}
	if ok, _ := l.allow("a"); ok {
		t.Error("two requests from one refilled token")
	}
	clk.advance(time.Hour)
	for i := range 3 {
		if ok, _ := l.allow("a"); !ok {
			t.Fatalf("after an hour, request %d refused: the bucket should be full (3), not more", i+1)
		}
	}
	if ok, _ := l.allow("a"); ok {
		t.Error("the bucket refilled beyond its burst")
	}

	// Defaults and the off switch.
	if l := newLimiter(0.5, 0, 0, clk.now); l.burst != 1 {
		t.Errorf("burst for rate 0.5 = %v, want 1", l.burst)
	}
	if l := newLimiter(7.5, 0, 0, clk.now); l.burst != 8 {
		t.Errorf("burst for rate 7.5 = %v, want 8", l.burst)
	}
	off := newLimiter(0, 0, 0, clk.now)
	for range 1000 {
		if ok, _ := off.allow("a"); !ok || !off.acquire("a") {
			t.Fatal("a limiter with no rate and no cap refused")
		}
	}
	if off.size() != 0 {
		t.Errorf("a limiter that limits nothing holds %d entries", off.size())
	}
	for _, c := range []struct {
		d    time.Duration
		want int
	}{{0, 1}, {time.Millisecond, 1}, {time.Second, 1}, {1001 * time.Millisecond, 2}, {90 * time.Second, 90}, {1e6 * time.Hour, 86400}} {
		if got := retryAfterSeconds(c.d); got != c.want {
			t.Errorf("retryAfterSeconds(%v) = %d, want %d", c.d, got, c.want)
		}
	}
}

// TestLimiterConcurrent hammers one limiter from many goroutines under
// -race: with the clock stopped, each key gets exactly Burst requests, the
// in-flight count of a key never passes the cap, and once the buckets are
// full again a sweep empties the map.
func TestLimiterConcurrent(t *testing.T) {
	clk := newFakeClock()
	const (
		keys, workers, tries = 50, 32, 200
		burst, maxConc       = 20, 3
	)
	l := newLimiter(1, burst, maxConc, clk.now)
	var allowed [keys]atomic.Int64
	var inflight [keys]atomic.Int64
	var overCap atomic.Bool
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range tries {
				k := (w + i) % keys
				key := fmt.Sprintf("key:%d", k)
				if ok, _ := l.allow(key); ok {
					allowed[k].Add(1)
				}
				if l.acquire(key) {
					if inflight[k].Add(1) > maxConc {
						overCap.Store(true)
					}
					inflight[k].Add(-1)
					l.release(key)
				}
			}
		})
	}
	wg.Wait()
	if overCap.Load() {
		t.Error("a key had more requests in flight than the cap")
	}
	for k := range keys {
		if n := allowed[k].Load(); n != burst {
			t.Errorf("key %d: %d requests allowed, want exactly the burst %d", k, n, burst)
		}
	}
	// The cap holds when requests stay in flight.
	for range maxConc {
		if !l.acquire("held") {
			t.Fatal("refused under the cap")
		}
	}
	if l.acquire("held") {
		t.Error("acquired over the cap")
	}
	l.release("held")
	if !l.acquire("held") {
		t.Error("refused after a release")
	}

	// Full buckets with nothing in flight are forgotten; "held" stays.
	clk.advance(burst * time.Second)
	clk.advance(sweepEvery)
	l.allow("trigger")
	if got := l.size(); got != 2 {
		t.Errorf("after the refill and a sweep the map holds %d entries, want 2 (the one in flight, the new one)", got)
	}
}

// TestLimiterBounded: a stream of distinct keys (a client spraying
// credentials or addresses) does not grow the map without bound.
func TestLimiterBounded(t *testing.T) {
	clk := newFakeClock()
	l := newLimiter(10, 10, 0, clk.now)
	most := 0
	for i := range 100_000 {
		l.allow(fmt.Sprintf("ip:%d", i))
		if i%100 == 0 {
			clk.advance(time.Second) // a bucket refills in 1s
		}
		most = max(most, l.size())
	}
	if most > 2*minSweepSize {
		t.Errorf("the map reached %d entries for keys each idle after a second; want at most %d", most, 2*minSweepSize)
	}
}

// TestHostPolicy is the Host/Origin decision table.
func TestHostPolicy(t *testing.T) {
	loop := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	public := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 10), Port: 8080}
	cases := []struct {
		name   string
		hosts  []string
		local  net.Addr
		host   string
		origin string
		want   bool
	}{
		{"default, loopback ip", nil, loop, "127.0.0.1:8080", "", true},
		{"default, localhost", nil, loop, "localhost:8080", "", true},
		{"default, ::1", nil, loop, "[::1]:8080", "", true},
		{"default, other loopback ip", nil, loop, "127.1.2.3", "", true},
		{"default, foreign host", nil, loop, "evil.example:8080", "", false},
		{"default, localhost as a suffix", nil, loop, "localhost.evil.example", "", false},
		{"default, empty host", nil, loop, "", "", false},
		{"default, loopback origin on another port", nil, loop, "127.0.0.1:8080", "http://localhost:3000", true},
		{"default, foreign origin", nil, loop, "127.0.0.1:8080", "http://evil.example", false},
		{"default, null origin", nil, loop, "127.0.0.1:8080", "null", false},
		{"default, origin not a URL", nil, loop, "127.0.0.1:8080", "::", false},
		{"default, non-loopback address not checked", nil, public, "evil.example", "http://evil.example", true},
		{"listed host", []string{"wf.example.com"}, public, "wf.example.com", "", true},
		{"listed host, any port", []string{"wf.example.com"}, public, "wf.example.com:8443", "https://wf.example.com", true},
		{"listed host, case", []string{"WF.example.com"}, public, "wf.EXAMPLE.com", "", true},
		{"listed host:port, that port", []string{"wf.example.com:8443"}, public, "wf.example.com:8443", "https://wf.example.com:8443", true},
		{"listed host:port, another port", []string{"wf.example.com:8443"}, public, "wf.example.com:9000", "", false},
		{"listed host:port, no port", []string{"wf.example.com:8443"}, public, "wf.example.com", "", false},
		{"listed, foreign host", []string{"wf.example.com"}, public, "evil.example", "", false},
		{"listed, foreign origin", []string{"wf.example.com"}, public, "wf.example.com", "https://evil.example", false},
		{"listed, subdomain is not the host", []string{"example.com"}, public, "evil.example.com", "", false},
		{"listed, on loopback too", []string{"wf.example.com"}, loop, "wf.example.com", "", true},
		{"listed, loopback names still allowed", []string{"wf.example.com"}, public, "localhost:8080", "", true},
		{"listed ip", []string{"192.0.2.10"}, public, "192.0.2.10:8080", "", true},
		{"listed ipv6", []string{"[2001:db8::1]"}, public, "[2001:db8::1]:8080", "", true},
		{"star", []string{"*"}, loop, "evil.example", "http://evil.example", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, c.local))
			r.Host = c.host
			if c.origin != "" {
				r.Header.Set("Origin", c.origin)
			}
			if got := newHostPolicy(c.hosts).allowed(r); got != c.want {
				t.Errorf("allowed = %v, want %v", got, c.want)
			}
		})
	}
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.Addr(loop)))
	r.Host = "localhost"
	r.Header.Add("Origin", "http://localhost")
	r.Header.Add("Origin", "http://evil.example")
	if newHostPolicy(nil).allowed(r) {
		t.Error("two Origin headers were allowed")
	}
}

func TestValidAllowedHost(t *testing.T) {
	for _, h := range []string{"*", "localhost", "wf.example.com", "wf.example.com:443", "192.0.2.1", "192.0.2.1:80", "[::1]", "[::1]:80", "2001:db8::1", "my_host"} {
		if !ValidAllowedHost(h) {
			t.Errorf("%q refused", h)
		}
	}
	for _, h := range []string{"", "http://wf.example.com", "wf.example.com/", "wf.example.com:0", "wf.example.com:99999", "wf.example.com:x", "*.example.com", "a..b", "a b", "user@host", ":80", "[::1", "host:"} {
		if ValidAllowedHost(h) {
			t.Errorf("%q accepted", h)
		}
	}
}
