package authserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/worldforge-go/worldforge/authserver"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// FuzzParseScope: a scope parameter either parses into distinct known
// scope names or is refused; it never panics.
func FuzzParseScope(f *testing.F) {
	for _, s := range []string{"", "world:read", "world:read  campaign:read", "*", "world:read world:read", "x\x00y", " \t\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := authserver.ParseScope(s)
		if err != nil {
			return
		}
		if len(got) == 0 {
			t.Fatalf("%q: no scopes and no error", s)
		}
		for i, sc := range got {
			if !slices.Contains(authserver.Scopes(), sc) || slices.Contains(got[:i], sc) {
				t.Fatalf("%q: scope %q unknown or repeated", s, sc)
			}
		}
	})
}

// FuzzTokenRequest posts arbitrary form bodies to /token and /revoke of
// a real server: the answer is never a 5xx, and a refusal is JSON with
// one of RFC 6749 §5.2's error codes.
func FuzzTokenRequest(f *testing.F) {
	db, err := sqlstore.Open(context.Background(), filepath.Join(f.TempDir(), "wf.db"), nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	s := testserver.StartWith(f, db, testserver.Config{OAuth: true})
	for _, seed := range []string{
		"grant_type=authorization_code&code=wfc_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa&client_id=x&code_verifier=" + strings.Repeat("v", 43),
		"grant_type=refresh_token&refresh_token=wfr_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa&client_id=x&scope=world:read",
		"grant_type=password&username=a&password=b", "grant_type=&&&", "%zz", "token=wfa_x&client_id=y", "",
	} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	known := []string{"invalid_request", "invalid_client", "invalid_grant", "unauthorized_client", "unsupported_grant_type", "invalid_scope", "invalid_target"}
	f.Fuzz(func(t *testing.T, body string, revoke bool) {
		path := "/token"
		if revoke {
			path = "/revoke"
		}
		resp, err := http.Post(s.URL+path, "application/x-www-form-urlencoded", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 500 {
			t.Fatalf("%q: %d %s", body, resp.StatusCode, b)
		}
		if resp.StatusCode == 200 {
			if !revoke {
				t.Fatalf("%q: a token was issued", body)
			}
			return
		}
		var e struct {
			Error string `json:"error"`
		}
		if err := json.Unmarshal(b, &e); err != nil || !slices.Contains(known, e.Error) {
			t.Fatalf("%q: %d %s", body, resp.StatusCode, b)
		}
	})
}
