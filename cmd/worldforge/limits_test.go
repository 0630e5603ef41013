package main

import (
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestServeLimitFlagsBad: every bad value of serve's limit flags is a
// one-line usage error (exit 2) naming the flag, before the database is
// opened or anything listens.
func TestServeLimitFlagsBad(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"negative rate", []string{"--rate-limit", "-1"}, []string{"--rate-limit"}},
		{"rate not a number", []string{"--rate-limit", "fast"}, []string{"-rate-limit", "fast"}},
		{"rate NaN", []string{"--rate-limit", "NaN"}, []string{"--rate-limit"}},
		{"rate infinite", []string{"--rate-limit", "+Inf"}, []string{"--rate-limit"}},
		{"negative burst", []string{"--rate-limit", "5", "--rate-burst", "-2"}, []string{"--rate-burst"}},
		{"fractional burst", []string{"--rate-limit", "5", "--rate-burst", "1.5"}, []string{"-rate-burst", "1.5"}},
		{"burst without a rate", []string{"--rate-burst", "10"}, []string{"--rate-burst", "--rate-limit"}},
		{"negative max-concurrent", []string{"--max-concurrent", "-1"}, []string{"--max-concurrent"}},
		{"max-concurrent not a number", []string{"--max-concurrent", "many"}, []string{"-max-concurrent", "many"}},
		{"allowed host with a scheme", []string{"--allowed-hosts", "https://wf.example.com"}, []string{"--allowed-hosts", "https://wf.example.com"}},
		{"allowed host with a path", []string{"--allowed-hosts", "wf.example.com/mcp"}, []string{"--allowed-hosts", "wf.example.com/mcp"}},
		{"allowed hosts with an empty entry", []string{"--allowed-hosts", "a.example,,b.example"}, []string{"--allowed-hosts", `""`}},
		{"allowed host with a bad port", []string{"--allowed-hosts", "wf.example.com:99999"}, []string{"--allowed-hosts", "99999"}},
		{"allowed host wildcard", []string{"--allowed-hosts", "*.example.com"}, []string{"--allowed-hosts", "*.example.com"}},
		{"zero body limit", []string{"--max-body-bytes", "0"}, []string{"--max-body-bytes"}},
		{"negative body limit", []string{"--max-body-bytes", "-5"}, []string{"--max-body-bytes"}},
		{"tiny header limit", []string{"--max-header-bytes", "100"}, []string{"--max-header-bytes", "1024"}},
		{"header limit not a number", []string{"--max-header-bytes", "1MB"}, []string{"-max-header-bytes", "1MB"}},
		{"negative read timeout", []string{"--read-timeout", "-1s"}, []string{"--read-timeout"}},
		{"negative read-header timeout", []string{"--read-header-timeout", "-1s"}, []string{"--read-header-timeout"}},
		{"negative write timeout", []string{"--write-timeout", "-1ms"}, []string{"--write-timeout"}},
		{"negative idle timeout", []string{"--idle-timeout", "-3m"}, []string{"--idle-timeout"}},
		{"timeout not a duration", []string{"--write-timeout", "60"}, []string{"-write-timeout", "60"}},
		{"negative max-streams", []string{"--max-streams", "-1"}, []string{"--max-streams"}},
		{"memory limit not a size", []string{"--memory-limit", "lots"}, []string{"-memory-limit", "lots"}},
		{"negative memory limit", []string{"--memory-limit", "-64MiB"}, []string{"-memory-limit", "-64MiB"}},
		{"negative max-streams-per-credential", []string{"--max-streams-per-credential", "-3"}, []string{"--max-streams-per-credential"}},
		{"max-streams not a number", []string{"--max-streams", "lots"}, []string{"-max-streams", "lots"}},
		{"metrics-addr without a port", []string{"--metrics-addr", "127.0.0.1"}, []string{"--metrics-addr", "127.0.0.1"}},
		{"metrics-addr with metrics off", []string{"--metrics=false", "--metrics-addr", "127.0.0.1:0"}, []string{"--metrics-addr", "--metrics"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dsn, path := newDSN(t)
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", dsn}, tc.args...)
			r := runMain(t, nil, args...)
			checkOneLineError(t, r, 2, tc.want...)
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a usage error touched the database file (stat: %v)", err)
			}
		})
	}
}

// TestServeLimits runs `worldforge serve` with the limit flags set and
// checks each one end to end: the rate limit, the concurrency cap (held by
// an open stream), the allowed hosts and the header limit.
func TestServeLimits(t *testing.T) {
	t.Parallel()
	dsn, _ := newDSN(t)
	owner := mustValue(t, nil, userIDRe, "user", "create", "Owner", "--db", dsn)
	keyA := mustValue(t, nil, keyRe, "key", "create", "--user", owner, "--scopes", "*", "--db", dsn)
	keyB := mustValue(t, nil, keyRe, "key", "create", "--user", owner, "--scopes", "*", "--db", dsn)
	keyC := mustValue(t, nil, keyRe, "key", "create", "--user", owner, "--scopes", "*", "--db", dsn)
	s := startServe(t, dsn, "--log-level", "warn",
		"--rate-limit", "0.01", "--rate-burst", "2", "--max-concurrent", "1",
		"--allowed-hosts", "wf.example.com", "--max-header-bytes", "4096", "--max-body-bytes", "2048")
	base := strings.TrimSuffix(s.url, "/mcp")

	get := func(key, host string, h http.Header) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", base+"/me", nil)
		for k, v := range h {
			req.Header[k] = v
		}
		req.Header.Set("Authorization", "Bearer "+key)
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}

	// Rate: two requests, then 429 with Retry-After.
	for i := range 2 {
		if resp := get(keyA, "wf.example.com", nil); resp.StatusCode != 200 {
			t.Fatalf("request %d: %d", i+1, resp.StatusCode)
		}
	}
	resp := get(keyA, "", nil)
	if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); resp.StatusCode != 429 || err != nil || n < 1 {
		t.Errorf("3rd request: %d, Retry-After %q; want 429 with whole seconds", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	// Hosts: a foreign one is refused.
	if resp := get(keyB, "evil.example", nil); resp.StatusCode != 403 {
		t.Errorf("foreign host: %d, want 403", resp.StatusCode)
	}
	// Header size.
	if resp := get(keyB, "", http.Header{"X-Padding": {strings.Repeat("p", 16<<10)}}); resp.StatusCode != 431 {
		t.Errorf("16 KiB header: %d, want 431", resp.StatusCode)
	}
	// Body size: over --max-body-bytes is 413.
	req, _ := http.NewRequest("POST", s.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`+strings.Repeat("p", 4096)+`"}}`))
	req.Header.Set("Authorization", "Bearer "+keyB)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 413 {
		t.Errorf("4 KiB body: %v %v, want 413", resp, err)
	} else {
		resp.Body.Close()
	}
	// Concurrency: an open stream holds keyC's one slot.
	req, _ = http.NewRequest("GET", s.url, nil)
	req.Header.Set("Authorization", "Bearer "+keyC)
	req.Header.Set("Accept", "text/event-stream")
	stream, err := http.DefaultClient.Do(req)
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("stream: %v %v", stream, err)
	}
	if resp := get(keyC, "", nil); resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("a second request beside the stream: %d, Retry-After %q; want 429, 1", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	stream.Body.Close()
	s.stop(t)
}
