// Package interop drives software none of us wrote — the official
// TypeScript MCP clients, the MCP Inspector CLI and the MCP conformance
// suite, pinned in package-lock.json next to this file — against a real
// WorldForge server (internal/testserver). Every test is opt-in: it runs
// only when its environment variable is set (.ci/run sets them after
// `npm ci` succeeded) and node_modules holds the package.
package interop

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// requireNodePackage skips the test unless env is set to a non-empty value
// and node_modules/<pkg> exists; it returns the absolute interop directory.
func requireNodePackage(t *testing.T, env string, pkgs ...string) string {
	t.Helper()
	if os.Getenv(env) == "" {
		t.Skipf("set %s=1 (and run `npm ci` in interop/) to run this test", env)
	}
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(p), "package.json")); err != nil {
			t.Skipf("%s is set but node_modules/%s is missing: run `npm ci` in interop/", env, p)
		}
	}
	return dir
}

// node finds the node binary on PATH (Node 20 is enough for the clients).
func node(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	return p
}

// run runs a command in dir with a deadline and returns its combined
// output and error. The output is logged either way.
func run(t *testing.T, dir string, timeout time.Duration, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0")
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	t.Logf("$ %s %s\n%s", filepath.Base(name), strings.Join(args, " "), out.String())
	return out.String(), err
}
