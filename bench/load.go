package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Limits that keep every run bounded.
const (
	// MaxConcurrency is the largest LoadConfig.Concurrency accepted.
	MaxConcurrency = 4096
	// MaxDuration is the longest LoadConfig.Duration (and Warmup) accepted.
	MaxDuration = 10 * time.Minute
	// DefaultRequestTimeout bounds one request when LoadConfig.Timeout is 0.
	DefaultRequestTimeout = 10 * time.Second
)

// LoadConfig describes one closed-loop load run: Concurrency workers each
// send a request, read and verify the whole response, and immediately send
// the next, until Duration has elapsed (or MaxRequests were sent).
type LoadConfig struct {
	// Target is the endpoint and the headers sent with every request. The
	// URL must point at a loopback address (127.0.0.0/8, ::1 or localhost);
	// redirects are not followed. If Header is nil, only Content-Type and
	// Accept are sent.
	Target

	// Body is the request body sent every time, unless BodyFunc or
	// AppendBody is set.
	Body []byte
	// BodyFunc, if set, returns the body for the i-th request of the run
	// (i counts from 0 over warmup and measured requests together). It is
	// called concurrently from all workers and must not retain or modify
	// the slices it returns after handing them out.
	BodyFunc func(i int) []byte
	// AppendBody, if set, appends the body of the i-th request to dst and
	// returns the extended slice, like BodyFunc but without allocating:
	// each worker passes a buffer of its own. It is called concurrently.
	AppendBody func(dst []byte, i int) []byte

	// Client is the HTTP client: [ClientRaw] (the default when empty) or
	// [ClientNetHTTP].
	Client string
	// ServerPID, if positive, is the server's process: Result.ServerCPU is
	// its CPU time over the measured phase (Linux only).
	ServerPID int
	// OnMeasure, if set, is called when the measured phase starts; the
	// function it returns is called when the phase ends. It brackets
	// other readings (a core's load, say) to the same window.
	OnMeasure func() (end func())

	// Concurrency is the number of workers, each with at most one request
	// in flight over a keep-alive connection of its own.
	// Zero means 1.
	Concurrency int
	// Duration is how long the measured phase runs. It must be positive.
	// Requests in flight when it ends are allowed to complete and are
	// counted.
	Duration time.Duration
	// Warmup is run first, with the same workers and connections; its
	// requests are not counted and not verified.
	Warmup time.Duration
	// Verify checks each measured response; nil means [DefaultVerify]. It is
	// called concurrently, and body is only valid during the call.
	Verify VerifyFunc
	// MaxRequests, if positive, caps the number of measured requests.
	MaxRequests int
	// Timeout bounds a single request; 0 means DefaultRequestTimeout. The
	// raw client moves its connection's deadline only every half Timeout,
	// so a request of its may run up to 1.5 × Timeout.
	Timeout time.Duration
}

// Result is the outcome of a [Load] run. Requests counts every measured
// request that was sent, Errors those that failed (transport error or
// Verify rejection). Latency is measured from sending the request to having
// read the whole response body, for every request that got a response;
// percentiles come from a log-linear histogram (error < 1.6%), Max is
// exact.
//
// ServerCPU is the CPU time (user and system) LoadConfig.ServerPID used
// over the measured phase, and ClientCPU this process's, the load
// generator's (both 0 when not measured). They are read from
// /proc/PID/stat at the phase's start and end, in ticks of 10 ms.
type Result struct {
	Requests   int64
	Errors     int64
	FirstError string
	Elapsed    time.Duration
	RPS        float64
	P50        time.Duration
	P90        time.Duration
	P99        time.Duration
	Max        time.Duration
	ServerCPU  time.Duration
	ClientCPU  time.Duration
}

// ServerCPUShare is the share of one core the server used over the
// measured phase: ServerCPU ÷ Elapsed (0 when not measured).
func (r *Result) ServerCPUShare() float64 {
	if r == nil || r.Elapsed <= 0 {
		return 0
	}
	return float64(r.ServerCPU) / float64(r.Elapsed)
}

func (r *Result) String() string {
	if r == nil {
		return "<nil>"
	}
	s := fmt.Sprintf("%d req in %v (%.0f req/s), p50 %v p90 %v p99 %v max %v, %d errors",
		r.Requests, r.Elapsed.Round(time.Millisecond), r.RPS, r.P50, r.P90, r.P99, r.Max, r.Errors)
	if r.ServerCPU > 0 {
		s += fmt.Sprintf(", server CPU %.0f %%", 100*r.ServerCPUShare())
	}
	if r.ClientCPU > 0 && r.Requests > 0 {
		s += fmt.Sprintf(", generator %v CPU/req", (r.ClientCPU / time.Duration(r.Requests)).Round(100*time.Nanosecond))
	}
	if r.FirstError != "" {
		s += " (first: " + r.FirstError + ")"
	}
	return s
}

// Load runs the configured load and returns its result. An error is
// returned, with a nil Result, for an invalid configuration; if ctx is
// cancelled the run stops early and the partial Result is returned together
// with ctx.Err().
func Load(ctx context.Context, cfg LoadConfig) (*Result, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	c := max(cfg.Concurrency, 1)
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	verify := cfg.Verify
	if verify == nil {
		verify = DefaultVerify
	}
	header := cfg.Header
	if header == nil {
		header = ToolCallHeaders("", "")
	}

	r := &runner{cfg: &cfg, verify: verify}
	workers := make([]*worker, c)
	switch cfg.Client {
	case "", ClientRaw:
		req, err := newRawRequest(Target{URL: cfg.URL, Header: header})
		if err != nil {
			return nil, err
		}
		fixed := cfg.BodyFunc == nil && cfg.AppendBody == nil
		for i := range workers {
			conn := newRawConn(req, timeout, fixed)
			defer conn.close()
			defer context.AfterFunc(ctx, conn.abort)()
			workers[i] = &worker{r: r, rt: conn}
		}
	case ClientNetHTTP:
		tr := &http.Transport{
			Proxy:               nil, // loopback only: never go through a proxy
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        2 * c,
			MaxIdleConnsPerHost: c,
			MaxConnsPerHost:     c,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		}
		defer tr.CloseIdleConnections()
		client := &http.Client{
			Transport: tr,
			Timeout:   timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		}
		for i := range workers {
			workers[i] = &worker{r: r, rt: &httpConn{client: client, url: cfg.URL, header: header.Clone()}}
		}
	}

	if cfg.Warmup > 0 {
		r.phase(ctx, workers, cfg.Warmup, false)
		if err := ctx.Err(); err != nil {
			return &Result{}, err
		}
	}
	var end func()
	if cfg.OnMeasure != nil {
		end = cfg.OnMeasure()
	}
	server0, client0 := cpuTimes(cfg.ServerPID)
	elapsed := r.phase(ctx, workers, cfg.Duration, true)
	server1, client1 := cpuTimes(cfg.ServerPID)
	if end != nil {
		end()
	}

	var h histogram
	res := &Result{Elapsed: elapsed}
	if server0 >= 0 && server1 >= 0 {
		res.ServerCPU = server1 - server0
	}
	if client0 >= 0 && client1 >= 0 {
		res.ClientCPU = client1 - client0
	}
	for _, w := range workers {
		h.merge(&w.hist)
		res.Requests += w.requests
		res.Errors += w.errors
	}
	if p := r.firstErr.Load(); p != nil {
		res.FirstError = *p
	}
	if elapsed > 0 {
		res.RPS = float64(res.Requests) / elapsed.Seconds()
	}
	res.P50 = h.quantile(0.50)
	res.P90 = h.quantile(0.90)
	res.P99 = h.quantile(0.99)
	res.Max = time.Duration(h.max)
	return res, ctx.Err()
}

func (cfg *LoadConfig) validate() error {
	if cfg.Duration <= 0 {
		return errors.New("bench: LoadConfig.Duration must be positive")
	}
	if cfg.Duration > MaxDuration || cfg.Warmup > MaxDuration {
		return fmt.Errorf("bench: Duration and Warmup are capped at %v", MaxDuration)
	}
	if cfg.Concurrency < 0 || cfg.Concurrency > MaxConcurrency {
		return fmt.Errorf("bench: Concurrency must be in [1, %d]", MaxConcurrency)
	}
	if cfg.MaxRequests < 0 {
		return errors.New("bench: MaxRequests must not be negative")
	}
	if cfg.Body == nil && cfg.BodyFunc == nil && cfg.AppendBody == nil {
		return errors.New("bench: LoadConfig needs Body, BodyFunc or AppendBody")
	}
	if cfg.Client != "" && cfg.Client != ClientRaw && cfg.Client != ClientNetHTTP {
		return fmt.Errorf("bench: unknown client %q (want %s or %s)", cfg.Client, ClientRaw, ClientNetHTTP)
	}
	return checkLoopbackURL(cfg.URL)
}

// checkLoopbackURL makes sure a run can only send traffic to this machine.
func checkLoopbackURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("bench: bad target URL: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("bench: target URL %q: scheme must be http or https", raw)
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("bench: target URL %q is not a loopback address", raw)
}

// cpuTimes returns the CPU time used so far by the server pid (-1 if pid
// is not positive or unreadable) and by this process (-1 if unreadable).
func cpuTimes(pid int) (server, self time.Duration) {
	server, self = -1, -1
	if pid > 0 {
		if d, err := CPUTime(pid); err == nil {
			server = d
		}
	}
	if d, err := CPUTime(os.Getpid()); err == nil {
		self = d
	}
	return server, self
}

type runner struct {
	cfg      *LoadConfig
	verify   VerifyFunc
	seq      atomic.Int64 // request sequence for BodyFunc and AppendBody
	issued   atomic.Int64 // measured requests started (for MaxRequests)
	firstErr atomic.Pointer[string]
}

// phase runs all workers for d and returns the wall time until the last of
// them finished.
func (r *runner) phase(ctx context.Context, workers []*worker, d time.Duration, measure bool) time.Duration {
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Go(func() { w.run(ctx, deadline, measure) })
	}
	wg.Wait()
	return time.Since(start)
}

// body returns the next request's body; w's buffer holds it if the
// config appends bodies.
func (r *runner) body(w *worker) []byte {
	switch {
	case r.cfg.AppendBody != nil:
		w.body = r.cfg.AppendBody(w.body[:0], int(r.seq.Add(1)-1))
		return w.body
	case r.cfg.BodyFunc != nil:
		return r.cfg.BodyFunc(int(r.seq.Add(1) - 1))
	}
	return r.cfg.Body
}

func (r *runner) noteError(err error) {
	if r.firstErr.Load() != nil {
		return
	}
	s := err.Error()
	r.firstErr.CompareAndSwap(nil, &s)
}

// roundTripper is a worker's connection to the server: roundTrip sends a
// request with body and reads the whole response, whose header and body
// are valid until the next call.
type roundTripper interface {
	roundTrip(ctx context.Context, now time.Time, body []byte) (status int, header http.Header, respBody []byte, err error)
}

// worker is one closed-loop client. Its counters and histogram are private,
// so the hot path shares nothing.
type worker struct {
	r        *runner
	rt       roundTripper
	body     []byte
	hist     histogram
	requests int64
	errors   int64
}

func (w *worker) run(ctx context.Context, deadline time.Time, measure bool) {
	r := w.r
	maxReq := int64(r.cfg.MaxRequests)
	for ctx.Err() == nil {
		t0 := time.Now()
		if !t0.Before(deadline) {
			return
		}
		if measure && maxReq > 0 && r.issued.Add(1) > maxReq {
			return
		}
		status, header, body, err := w.rt.roundTrip(ctx, t0, r.body(w))
		lat := time.Since(t0)
		if !measure {
			continue
		}
		if err != nil && ctx.Err() != nil {
			return // cancelled by the caller: not the server's fault
		}
		w.requests++
		if err == nil {
			w.hist.record(lat)
			err = r.verify(status, header, body)
		}
		if err != nil {
			w.errors++
			r.noteError(err)
		}
	}
}

// httpConn is a worker of the net/http client: the client's transport
// pools the connections.
type httpConn struct {
	client *http.Client
	url    string
	header http.Header
	buf    bytes.Buffer
}

func (c *httpConn) roundTrip(ctx context.Context, _ time.Time, body []byte) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header = c.header
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	c.buf.Reset()
	_, err = c.buf.ReadFrom(resp.Body)
	resp.Body.Close()
	if err != nil {
		return resp.StatusCode, resp.Header, nil, fmt.Errorf("reading response: %w", err)
	}
	return resp.StatusCode, resp.Header, c.buf.Bytes(), nil
}
