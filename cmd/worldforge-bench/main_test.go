package main

// End-to-end tests of the command line: run is called in-process with a
// fake environment. The servers compare and soak start are this test
// binary re-executed with childEnv set: TestMain then runs the program
// instead of the tests.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/worldforge-go/worldforge/internal/cli"
)

// childEnv, set to "1", makes the test binary run the program with its
// arguments (os.Args[1:]) instead of the tests.
const childEnv = "WORLDFORGE_BENCH_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(childMain())
	}
	os.Exit(m.Run())
}

// childMain is main() for a child process. It also ends (gracefully) when
// its stdin reaches EOF, that is when the process that holds the other end
// is gone, so that a crashed or timed-out test leaves no server behind.
func childMain() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "worldforge-bench:", err)
		return cli.ExitCode(err)
	}
	return 0
}

// exitCode and usageError are main's view of an error.
var exitCode = cli.ExitCode

type usageError = cli.UsageError

// cmdTimeout bounds one command that starts no server.
const cmdTimeout = 30 * time.Second

// result is what one run of the program produced.
type result struct {
	stdout, stderr string
	err            error
}

// getenvFrom turns a map into a getenv function; a nil map is an empty
// environment.
func getenvFrom(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// runMain runs the program in-process with env as its environment.
func runMain(t testing.TB, env map[string]string, args ...string) result {
	t.Helper()
	return runMainWithin(t, cmdTimeout, env, args...)
}

// runMainWithin is runMain with another bound on how long the command may
// take, for a command that builds or starts other programs.
func runMainWithin(t testing.TB, limit time.Duration, env map[string]string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := run(ctx, args, getenvFrom(env), &stdout, &stderr)
	if ctx.Err() != nil {
		t.Fatalf("worldforge-bench %s: still running after %s (returned %v)", strings.Join(args, " "), limit, err)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// MustRunMain runs the program and fails the test unless it succeeded
// without writing anything to stderr. It returns stdout.
func MustRunMain(t testing.TB, env map[string]string, args ...string) string {
	t.Helper()
	r := runMain(t, env, args...)
	if r.err != nil {
		t.Fatalf("worldforge-bench %s: %v (exit %d)\nstdout: %q\nstderr: %q", strings.Join(args, " "), r.err, exitCode(r.err), r.stdout, r.stderr)
	}
	if r.stderr != "" {
		t.Errorf("worldforge-bench %s: wrote to stderr on success: %q", strings.Join(args, " "), r.stderr)
	}
	return r.stdout
}

// mustQuiet runs a command that prints nothing on success.
func mustQuiet(t testing.TB, env map[string]string, args ...string) {
	t.Helper()
	if out := MustRunMain(t, env, args...); out != "" {
		t.Fatalf("worldforge-bench %s: stdout = %q, want nothing", strings.Join(args, " "), out)
	}
}

// checkOneLineError checks that r failed with exit code wantCode and a
// one-line error containing each of want, nothing on stdout and nothing on
// stderr.
func checkOneLineError(t testing.TB, r result, wantCode int, want ...string) {
	t.Helper()
	if r.err == nil {
		t.Fatalf("succeeded (stdout %q, stderr %q), want an error", r.stdout, r.stderr)
	}
	msg := r.err.Error()
	if code := exitCode(r.err); code != wantCode {
		t.Errorf("exit code %d, want %d (error %q)", code, wantCode, msg)
	}
	if msg == "" || strings.ContainsAny(msg, "\r\n") {
		t.Errorf("error %q is not one line", msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not mention %q", msg, w)
		}
	}
	if r.stdout != "" {
		t.Errorf("stdout = %q, want nothing", r.stdout)
	}
	if r.stderr != "" {
		t.Errorf("stderr = %q, want nothing besides the error main prints", r.stderr)
	}
}

// TestBadInput: unknown commands and flags and bad values are one-line
// usage errors (exit 2) before any server starts.
func TestBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"unknown command", []string{"bench"}, []string{"unknown command", `"bench"`, "worldforge-bench help"}},
		{"compare undefined flag", []string{"compare", "-nope"}, []string{"compare", "-nope"}},
		{"compare zero concurrency", []string{"compare", "-c", "0"}, []string{"-c"}},
		{"compare unknown protocol", []string{"compare", "-protocol", "bogus"}, []string{"-protocol"}},
		{"compare argument", []string{"compare", "now"}, []string{"compare"}},
		{"soak undefined flag", []string{"soak", "-nope"}, []string{"soak", "-nope"}},
		{"soak zero rate", []string{"soak", "-rate", "0"}, []string{"-rate"}},
		{"soak sample longer than the run", []string{"soak", "-duration", "1s", "-sample", "1m"}, []string{"-sample"}},
		{"soak argument", []string{"soak", "now"}, []string{"soak"}},
		{"plot undefined flag", []string{"plot", "-nope"}, []string{"plot", "-nope"}},
		{"serve undefined flag", []string{"serve", "--nope"}, []string{"serve", "-nope"}},
		{"serve bad addr", []string{"serve", "--addr", "nonsense"}, []string{"--addr", "nonsense"}},
		{"raw undefined flag", []string{"raw", "--nope"}, []string{"raw", "-nope"}},
		{"baseline argument", []string{"baseline", "now", "--addr", "127.0.0.1:0"}, []string{"baseline"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkOneLineError(t, runMain(t, nil, tc.args...), 2, tc.want...)
		})
	}
}

// TestHelp: help prints the usage to stdout; no command prints it to
// stderr and exits 2; neither lists the hidden commands.
func TestHelp(t *testing.T) {
	t.Parallel()
	out := MustRunMain(t, nil, "help")
	if !strings.HasPrefix(out, "usage: worldforge-bench COMMAND") || out != program.Usage() {
		t.Errorf("help:\n%s", out)
	}
	for _, hidden := range []string{"\n  serve", "\n  raw", "\n  baseline"} {
		if strings.Contains(out, hidden) {
			t.Errorf("help lists the hidden command %q:\n%s", strings.TrimSpace(hidden), out)
		}
	}
	r := runMain(t, nil)
	if exitCode(r.err) != 2 || r.stderr != program.Usage() || r.stdout != "" {
		t.Errorf("no command: err %v, stdout %q, stderr %q", r.err, r.stdout, r.stderr)
	}
}

// TestSoakShort runs the soak command for two seconds against a real
// server child (this test binary re-executed as the program).
func TestSoakShort(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process; skipped with -short")
	}
	t.Setenv(childEnv, "1")
	r := runMain(t, nil, "soak", "-duration", "2s", "-rate", "50", "-sample", "500ms", "-pin=false")
	if r.err != nil || !strings.Contains(r.stdout, "soak: flat, no errors") || !strings.Contains(r.stdout, "errors 0") {
		t.Fatalf("soak: %v\nstdout:\n%s\nstderr:\n%s", r.err, r.stdout, r.stderr)
	}
}
