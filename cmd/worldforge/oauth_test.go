package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestServeOAuth: `serve` on a loopback address serves the OAuth
// metadata with the bound address as issuer, and names it in 401s;
// --oauth=false and --console=false serve none.
func TestServeOAuth(t *testing.T) {
	t.Parallel()
	dsn, _ := newDSN(t)
	s := startServe(t, dsn, "--log-level", "warn")
	base := strings.TrimSuffix(s.url, "/mcp")
	resp, err := http.Get(base + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	var md map[string]any
	err = json.NewDecoder(resp.Body).Decode(&md)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || md["issuer"] != base || md["token_endpoint"] != base+"/token" {
		t.Fatalf("metadata: %d %v %v", resp.StatusCode, md, err)
	}
	resp, err = http.Post(s.url, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := `resource_metadata="` + base + `/.well-known/oauth-protected-resource/mcp"`; resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), want) {
		t.Fatalf("401: %d %q, want %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), want)
	}
	s.stop(t)

	for _, flag := range []string{"--oauth=false", "--console=false"} {
		off := startServe(t, dsn, "--log-level", "warn", flag)
		base = strings.TrimSuffix(off.url, "/mcp")
		resp, err = http.Get(base + "/.well-known/oauth-authorization-server")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Fatalf("%s: metadata answered %d", flag, resp.StatusCode)
		}
		off.stop(t)
	}
}
