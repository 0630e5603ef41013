// Package interop drives software none of us wrote — the official
// TypeScript MCP clients, the MCP Inspector CLI and the MCP conformance
// suite, pinned in package-lock.json next to this file — against a real
// WorldForge server (internal/testserver). Every test is opt-in: it runs
// only when its environment variable is set (.ci/run sets them after
// `npm ci` succeeded) and node_modules holds the package.
package interop

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/worldforge-go/worldforge/internal/testserver"
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

// runAuthorizing runs a command in dir, as run does, that prints
// authorization URLs for a person to open: for each output line that
// authURL recognises, b (the person) approves on the consent page and
// follows the redirect back to the command's loopback listener. The
// listener may start only after the URL is printed, so following is
// retried for up to 10 s. It returns the combined output (logged too) and
// the command's error; a browser that failed fails the test.
func runAuthorizing(t *testing.T, ctx context.Context, b *testserver.Browser, authURL func(line string) (string, bool), dir, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0")
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout // the same pipe
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		out       strings.Builder
		wg        sync.WaitGroup
		mu        sync.Mutex
		browseErr error
	)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		out.WriteString(line + "\n")
		u, ok := authURL(line)
		if !ok {
			continue
		}
		wg.Add(1)
		go func() { // the person's browser
			defer wg.Done()
			back, err := b.Approve(ctx, u)
			for tries := 0; err == nil; tries++ {
				ferr := b.Follow(ctx, back)
				if ferr == nil {
					break
				}
				if tries == 100 || ctx.Err() != nil {
					err = ferr
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err != nil {
				mu.Lock()
				browseErr = err
				mu.Unlock()
			}
		}()
	}
	werr := cmd.Wait()
	wg.Wait()
	t.Logf("$ %s %s\n%s", filepath.Base(name), strings.Join(args, " "), out.String())
	if browseErr != nil {
		t.Errorf("browser: %v", browseErr)
	}
	return out.String(), werr
}
