package main

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBenchShort runs the compare command for a few hundred milliseconds a
// cell against real server children (this test binary re-executed as the
// program), with the mcp-go baseline built from bench/mcpgo and, where
// the interop packages are installed, the TypeScript SDK rows: every row
// must have answered requests, all verified, none failed, with the
// server's CPU share measured. It runs once with each client.
func TestBenchShort(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes and builds the mcp-go baseline; skipped with -short")
	}
	t.Setenv(childEnv, "1")
	ts := "off"
	base := []string{"net/http raw (limit)", "mcp-go v1.2.1", "go-sdk bare (floor)",
		"worldforge bench_noop", "worldforge read_world", "same, go-sdk path only", "worldforge propose_wiki_page"}
	want := base
	if os.Getenv("WORLDFORGE_TEST_NODE_INTEROP") == "1" {
		ts = "../../interop"
		want = append(slices.Clip(base), "TypeScript SDK, pooled", "TypeScript SDK, per request")
	}
	// It builds the mcp-go baseline and starts node: on a busy machine
	// that alone can take longer than runMain's bound.
	// The raw client sends the default stateless 2026-07-28 requests,
	// which the TypeScript SDK refuses; the net/http client sends
	// 2025-11-25 ones, with the TypeScript rows when node is there.
	t.Run("raw", func(t *testing.T) { benchShort(t, "raw", "2026-07-28", "off", base) })
	t.Run("nethttp", func(t *testing.T) { benchShort(t, "nethttp", "2025-11-25", ts, want) })
}

func benchShort(t *testing.T, client, protocol, ts string, want []string) {
	r := runMainWithin(t, 5*time.Minute, nil, "compare", "-c", "2", "-duration", "300ms", "-warmup", "100ms", "-reps", "1", "-pin=false",
		"-client", client, "-protocol", protocol, "-mcpgo", "../../bench/mcpgo", "-ts", ts)
	if r.err != nil {
		t.Fatalf("compare: %v\nstdout:\n%s\nstderr:\n%s", r.err, r.stdout, r.stderr)
	}
	table, legend, _ := strings.Cut(strings.TrimSpace(r.stdout), "\n\n")
	if !strings.Contains(legend, "client-bound: under 90 %") || !strings.Contains(legend, client+" client") {
		t.Errorf("legend:\n%s", legend)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(table, "\n")[1:] {
		// name  c  req/s  CPU %  p50  p99  errors  …: the name may hold
		// spaces, so the columns are counted from the concurrency on.
		f := strings.Fields(line)
		for i, w := range f {
			if w == "2" && i > 0 {
				rows[strings.Join(f[:i], " ")] = f[i:]
				break
			}
		}
	}
	for _, name := range want {
		cols, ok := rows[name]
		if !ok || len(cols) < 10 {
			t.Errorf("no row %q in\n%s", name, r.stdout)
			continue
		}
		if rps, err := strconv.ParseFloat(cols[1], 64); err != nil || rps <= 0 {
			t.Errorf("%s: req/s %q", name, cols[1])
		}
		if share, err := strconv.Atoi(cols[2]); err != nil || share <= 0 {
			t.Errorf("%s: CPU %% %q", name, cols[2])
		}
		if cols[5] != "0" {
			t.Errorf("%s: errors %q\nstderr:\n%s", name, cols[5], r.stderr)
		}
	}
	if len(rows) != len(want) {
		t.Errorf("%d rows, want %d:\n%s", len(rows), len(want), r.stdout)
	}
}

// TestBenchBadFlags: a baseline directory without its sources, or a
// -postgres that is not a PostgreSQL URL, is a usage error before any
// server starts.
func TestBenchBadFlags(t *testing.T) {
	empty := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"mcpgo dir without go.mod", []string{"compare", "-mcpgo", empty}, "-mcpgo"},
		{"ts dir without the SDK", []string{"compare", "-mcpgo", "off", "-ts", empty}, "-ts"},
		{"postgres not a URL", []string{"compare", "-postgres", "sqlite:/tmp/x.db"}, "-postgres"},
		{"reps out of range", []string{"compare", "-reps", "11"}, "-reps"},
		{"unknown client", []string{"compare", "-client", "curl"}, "-client"},
		{"nice out of range", []string{"compare", "-nice", "-30"}, "-nice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runMain(t, nil, tc.args...)
			if exitCode(r.err) != 2 || !strings.Contains(r.err.Error(), tc.want) {
				t.Fatalf("exit %d, err %v; want exit 2 naming %s", exitCode(r.err), r.err, tc.want)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q", r.stdout)
			}
		})
	}
}
