package oauth

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"golang.org/x/oauth2"
)

// TestTokenStaysOnOrigin checks that the token goes to the configured
// server's origin only.
func TestTokenStaysOnOrigin(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]string{} // server → Authorization
	record := func(name string) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen[name] = r.Header.Get("Authorization")
			mu.Unlock()
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	home, other := record("home"), record("other")
	f, err := NewFlow(Config{}, FlowOptions{Server: "s", URL: home.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: f.Transport(http.DefaultTransport)}
	f.setToken(&token{ts: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "tok"}), issuer: "i"})
	for _, u := range []string{home.URL + "/mcp", other.URL + "/message"} {
		resp, err := hc.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if seen["home"] != "Bearer tok" || seen["other"] != "" {
		t.Errorf("Authorization seen: %v", seen)
	}
}
