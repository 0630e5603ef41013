package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	wf "github.com/worldforge-go/worldforge"
)

// startLowFDChild is startCrashChild with the child's RLIMIT_NOFILE (soft
// and hard) set to nofile by a shell in front of it.
func startLowFDChild(t *testing.T, nofile int, dsn string, flags ...string) *crashChild {
	t.Helper()
	c := &crashChild{stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	args := append([]string{"-c", `ulimit -n "$1" && shift && exec "$@"`, "sh", strconv.Itoa(nofile),
		os.Args[0], "serve", "--addr", "127.0.0.1:0", "--db", dsn, "--log-level", "warn"}, flags...)
	c.cmd = exec.Command("sh", args...)
	c.cmd.Env = append(os.Environ(), crashChildEnv+"=1")
	c.cmd.Stdout, c.cmd.Stderr = c.stdout, c.stderr
	if _, err := c.cmd.StdinPipe(); err != nil {
		t.Fatalf("child stdin: %v", err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start the server child: %v", err)
	}
	go func() {
		c.waitErr = c.cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		select {
		case <-c.done:
			return
		default:
		}
		_ = c.cmd.Process.Kill()
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			t.Errorf("server child %d not reaped within 10s of SIGKILL", c.cmd.Process.Pid)
		}
	})
	timeout := time.NewTimer(20 * time.Second)
	defer timeout.Stop()
	for {
		written := c.stderr.next() // before looking: a write meanwhile is not missed
		if m := listeningRe.FindStringSubmatch(c.stderr.String()); m != nil {
			c.url = m[1]
			c.base = strings.TrimSuffix(c.url, "/mcp")
			return c
		}
		select {
		case <-written:
		case <-c.done:
			t.Fatalf("server child exited before listening: %v\nstderr:\n%s", c.waitErr, c.stderr.String())
		case <-timeout.C:
			t.Fatalf("server child not listening after 20s\nstderr:\n%s", c.stderr.String())
		}
	}
}

// TestStreamCapsLowFD runs `worldforge serve` with 256 file descriptors and
// the default stream caps, and has one user open GET /mcp streams far
// beyond them: from one key (the per-credential cap, 8), then from ten
// keys (the global cap, a quarter of the descriptors: 64). Streams over a
// cap are 429 rate_limited; the server never runs out of descriptors, and
// another user's /healthz, /me, tools/call and (once streams close) a
// stream of their own are served throughout.
func TestStreamCapsLowFD(t *testing.T) {
	t.Parallel()
	const (
		nofile  = 256
		perCred = 8  // the default --max-streams-per-credential
		global  = 64 // nofile/4: the default --max-streams
	)
	dsn, _ := newDSN(t)
	attacker := mustValue(t, nil, userIDRe, "user", "create", "Attacker", "--db", dsn)
	victim := mustValue(t, nil, userIDRe, "user", "create", "Victim", "--db", dsn)
	victimKey := mustValue(t, nil, keyRe, "key", "create", "--user", victim, "--scopes", "*", "--db", dsn)
	var keys []string
	for range 10 {
		keys = append(keys, mustValue(t, nil, keyRe, "key", "create", "--user", attacker, "--scopes", "*", "--db", dsn))
	}
	c := startLowFDChild(t, nofile, dsn)

	// Each stream is a connection of its own; a refusal's connection is
	// reused for the next attempt.
	client := &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: 10 * time.Second, DisableCompression: true}}
	t.Cleanup(client.CloseIdleConnections)
	var open []io.Closer
	t.Cleanup(func() {
		for _, b := range open {
			b.Close()
		}
	})
	// stream opens one stream; it reports whether the stream is open, and
	// fails the test on anything but 200 or 429 rate_limited.
	stream := func(key string) bool {
		t.Helper()
		req, _ := http.NewRequest("GET", c.url, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("stream %d: %v\nserver stderr:\n%s", len(open)+1, err, tail(c.stderr.String(), 30))
		}
		if resp.StatusCode == http.StatusOK {
			open = append(open, resp.Body)
			return true
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e struct {
			Error string `json:"error"`
		}
		if resp.StatusCode != http.StatusTooManyRequests || json.Unmarshal(body, &e) != nil || e.Error != wf.ERateLimited || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("stream over the cap: %d %s (Retry-After %q), want 429 rate_limited", resp.StatusCode, body, resp.Header.Get("Retry-After"))
		}
		return false
	}
	served := func(what string) {
		t.Helper()
		for _, path := range []string{"/healthz", "/me"} {
			req, _ := http.NewRequest("GET", c.base+path, nil)
			req.Header.Set("Authorization", "Bearer "+victimKey)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("%s: GET %s: %v\nserver stderr:\n%s", what, path, err, tail(c.stderr.String(), 30))
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: GET %s = %d, want 200", what, path, resp.StatusCode)
			}
		}
		o := mcpCall(t.Context(), client, c.url, victimKey, wf.ToolListCampaigns, map[string]any{})
		if o.err != nil || o.status != http.StatusOK || o.isError {
			t.Fatalf("%s: tools/call list_campaigns = %d %q (err %v), want a result", what, o.status, o.text, o.err)
		}
	}

	served("before any stream")
	// One key, 300 streams (237 exhausted the descriptors before the caps).
	n := 0
	for range 300 {
		if stream(keys[0]) {
			n++
		}
	}
	if n != perCred {
		t.Errorf("one key opened %d streams, want the per-credential cap %d", n, perCred)
	}
	served("one key at its cap")
	// Ten keys of one user: the global cap.
	for _, k := range keys[1:] {
		for range perCred + 2 {
			if stream(k) {
				n++
			}
		}
	}
	if n != global {
		t.Errorf("%d streams open, want the global cap %d", n, global)
	}
	served("the server at its global cap")
	if stream(victimKey) {
		t.Errorf("another user opened a stream beyond the global cap")
	}
	// A closed stream frees its slot (the server notices the closed
	// connection; bounded wait).
	open[0].Close()
	open = open[1:]
	deadline := time.Now().Add(10 * time.Second)
	for !stream(victimKey) {
		if time.Now().After(deadline) {
			t.Fatal("a closed stream's slot was not freed within 10s")
		}
		time.Sleep(20 * time.Millisecond) // polled: the child process tells nothing when it sees the connection close
	}
	served("after all that")
	if out := c.stderr.String(); strings.Contains(out, "too many open files") {
		t.Errorf("the server ran out of file descriptors:\n%s", tail(out, 30))
	}
}

// metricsRe finds the metrics line serve prints with --metrics-addr.
var metricsRe = regexp.MustCompile(`worldforge: metrics on (http://\S+/metrics)`)

// TestServeMetricsAddr: with --metrics-addr, /metrics is served on that
// listener only, behind the Host/Origin check; the API listener answers it
// 404 and goes on serving the probes, which check the Host too.
func TestServeMetricsAddr(t *testing.T) {
	t.Parallel()
	dsn, _ := newDSN(t)
	s := startServe(t, dsn, "--log-level", "warn", "--metrics-addr", "127.0.0.1:0")
	m := metricsRe.FindStringSubmatch(s.stderr.String())
	if m == nil {
		t.Fatalf("no metrics line on stderr:\n%s", s.stderr.String())
	}
	base := strings.TrimSuffix(s.url, "/mcp")
	get := func(url, host string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", url, nil)
		if host != "" {
			req.Host = host
			req.Header.Set("Origin", "http://"+host)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, body := get(m[1], ""); st != 200 || !strings.Contains(body, "worldforge_http_requests_in_flight") {
		t.Errorf("GET %s = %d %.100q, want the metrics", m[1], st, body)
	}
	if st, body := get(m[1], "attacker.example"); st != 403 || strings.TrimSpace(body) != `{"error":"forbidden_host"}` {
		t.Errorf("GET %s with a foreign Host = %d %.100q, want 403 forbidden_host", m[1], st, body)
	}
	if st, _ := get(base+"/metrics", ""); st != 404 {
		t.Errorf("GET /metrics on --addr = %d, want 404", st)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if st, _ := get(base+path, ""); st != 200 {
			t.Errorf("GET %s = %d", path, st)
		}
		if st, body := get(base+path, "attacker.example"); st != 403 {
			t.Errorf("GET %s with a foreign Host = %d %.100q, want 403", path, st, body)
		}
	}
	s.stop(t)
}
