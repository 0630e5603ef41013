package servecmd

import (
	"strings"
	"testing"
	"time"

	"github.com/worldforge-go/worldforge/httpapi"
	"github.com/worldforge-go/worldforge/internal/cli"
)

// TestServeLimitFlagsParse: the flags' defaults (rate and concurrency off,
// the connection limits of httpapi.DefaultConnLimits) and values, and the
// warning case: listening beyond loopback without --allowed-hosts.
func TestServeLimitFlagsParse(t *testing.T) {
	t.Parallel()
	parse := func(t *testing.T, addr string, args ...string) *serveLimits {
		t.Helper()
		fs := cli.NewFlags("serve")
		lf := addLimitFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		l, err := lf.resolve(addr)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	d := parse(t, "127.0.0.1:8080")
	if d.api.Rate != 0 || d.api.Burst != 0 || d.api.MaxConcurrent != 0 || d.api.AllowedHosts != nil {
		t.Errorf("default limits %+v, want all off", d.api)
	}
	if want := defaultMaxStreams(openFileLimit()); d.api.MaxStreamsPerCredential != 8 || d.api.MaxStreams != want || want < 1 || want > 1024 {
		t.Errorf("default stream caps %d per credential, %d in all; want 8 and %d (a quarter of RLIMIT_NOFILE %d, 1–1024)",
			d.api.MaxStreamsPerCredential, d.api.MaxStreams, want, openFileLimit())
	}
	if s := parse(t, "127.0.0.1:0", "--max-streams", "3", "--max-streams-per-credential", "0").api; s.MaxStreams != 3 || s.MaxStreamsPerCredential != 0 {
		t.Errorf("--max-streams 3 --max-streams-per-credential 0: %d, %d", s.MaxStreams, s.MaxStreamsPerCredential)
	}
	for _, c := range []struct {
		nofile uint64
		want   int
	}{{0, 256}, {1, 1}, {3, 1}, {256, 64}, {1024, 256}, {4096, 1024}, {1 << 20, 1024}, {^uint64(0), 1024}} {
		if got := defaultMaxStreams(c.nofile); got != c.want {
			t.Errorf("defaultMaxStreams(%d) = %d, want %d", c.nofile, got, c.want)
		}
	}
	if d.conn != httpapi.DefaultConnLimits() || d.maxBody != httpapi.DefaultMaxBodyBytes {
		t.Errorf("default conn limits %+v, body %d", d.conn, d.maxBody)
	}
	l := parse(t, "127.0.0.1:0", "--rate-limit", "2.5", "--rate-burst", "10", "--max-concurrent", "4",
		"--allowed-hosts", " wf.example.com , [::1]:8443,*", "--max-body-bytes", "1000",
		"--max-header-bytes", "8192", "--read-header-timeout", "2s", "--read-timeout", "0", "--write-timeout", "5s", "--idle-timeout", "1m")
	want := httpapi.Limits{Rate: 2.5, Burst: 10, MaxConcurrent: 4, AllowedHosts: []string{"wf.example.com", "[::1]:8443", "*"}}
	if l.api.Rate != want.Rate || l.api.Burst != want.Burst || l.api.MaxConcurrent != want.MaxConcurrent || strings.Join(l.api.AllowedHosts, "|") != strings.Join(want.AllowedHosts, "|") {
		t.Errorf("limits %+v, want %+v", l.api, want)
	}
	if (l.conn != httpapi.ConnLimits{MaxHeaderBytes: 8192, ReadHeaderTimeout: 2 * time.Second, WriteTimeout: 5 * time.Second, IdleTimeout: time.Minute}) || l.maxBody != 1000 {
		t.Errorf("conn limits %+v, body %d", l.conn, l.maxBody)
	}
	for _, c := range []struct {
		addr  string
		hosts []string
		want  bool
	}{
		{"127.0.0.1:8080", nil, false},
		{"localhost:8080", nil, false},
		{"[::1]:8080", nil, false},
		{"0.0.0.0:8080", nil, true},
		{":8080", nil, true},
		{"192.0.2.7:8080", nil, true},
		{"0.0.0.0:8080", []string{"--allowed-hosts", "wf.example.com"}, false},
	} {
		if got := parse(t, c.addr, c.hosts...).unchecked; got != c.want {
			t.Errorf("--addr %s %v: unchecked %v, want %v", c.addr, c.hosts, got, c.want)
		}
	}
	// --metrics-addr beyond loopback is unchecked too without --allowed-hosts.
	fs := cli.NewFlags("serve")
	lf := addLimitFlags(fs)
	if l, err := lf.resolve("127.0.0.1:8080", "0.0.0.0:9090"); err != nil || !l.unchecked {
		t.Errorf("--metrics-addr 0.0.0.0:9090: unchecked %v (%v), want true", l != nil && l.unchecked, err)
	}
}
