package main

import (
	"strings"
	"testing"
)

// TestSoakLargeWorld runs the large-world mode of soak small (a 128×128
// world, two clients, a short run per revision) against a real server
// child: every revision gets a row and the run passes under a generous
// limit; under a limit no server can meet it exits 1 naming the revision
// and the limit. No timing is asserted.
func TestSoakLargeWorld(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes; skipped with -short")
	}
	t.Setenv(childEnv, "1")
	args := []string{"soak", "-large-world", "128", "-clients", "2", "-duration", "300ms", "-pin=false"}
	r := runMain(t, nil, append(args, "-max-rss", "4GiB")...)
	if r.err != nil || !strings.Contains(r.stdout, "within 4GiB on every revision; no errors") {
		t.Fatalf("soak: %v\nstdout:\n%s\nstderr:\n%s", r.err, r.stdout, r.stderr)
	}
	for _, row := range []string{"\nnone ", "\n2024-11-05 ", "\n2025-03-26 ", "\n2025-06-18 ", "\n2025-11-25 ", "\n2026-07-28 ", "\nbatch 2025-03-26 "} {
		if !strings.Contains(r.stdout, row) {
			t.Errorf("no row %q in:\n%s", strings.TrimSpace(row), r.stdout)
		}
	}
	r = runMain(t, nil, append(args, "-max-rss", "1MiB")...)
	if r.err == nil || exitCode(r.err) != 1 || !strings.Contains(r.err.Error(), "none: peak RSS") || !strings.Contains(r.err.Error(), "over the limit of 1MiB") {
		t.Fatalf("soak under an impossible limit: %v (exit %d)\nstdout:\n%s", r.err, exitCode(r.err), r.stdout)
	}
}

// TestSoakLargeWorldUsage: bad large-world flags are usage errors (exit 2)
// naming the flag.
func TestSoakLargeWorldUsage(t *testing.T) {
	for _, args := range [][]string{
		{"soak", "-large-world", "5000"},
		{"soak", "-large-world", "-1"},
		{"soak", "-large-world", "64", "-clients", "0"},
		{"soak", "-large-world", "64", "-max-rss", "lots"},
		{"soak", "-large-world", "64", "-max-rss", "0MiB"},
		{"soak", "-large-world", "64", "-max-rss", "0"},
	} {
		r := runMain(t, nil, args...)
		if exitCode(r.err) != 2 || !strings.Contains(r.err.Error()+r.stderr, "-") {
			t.Errorf("%v: %v (exit %d), want a usage error", args, r.err, exitCode(r.err))
		}
	}
}
