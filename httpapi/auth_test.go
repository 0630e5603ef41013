package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/auth"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// TestUnauthorized: every bad credential is 401 {"error":"unauthorized"}
// with a WWW-Authenticate: Bearer header, on every /mcp method and REST.
func TestUnauthorized(t *testing.T) {
	s := testserver.Start(t, dbtest.Open(t))
	revoked := s.Key(t, s.Owner, wf.ScopeAll)
	if err := s.Auth.RevokeKey(context.Background(), revoked); err != nil {
		t.Fatal(err)
	}
	good := s.Token(t, s.Owner)
	parts := strings.Split(good, ".")
	tampered := parts[0] + "." + parts[1] + "x." + parts[2]
	expired := signJWT(t, s, jwt.MapClaims{"iss": "worldforge", "sub": s.Owner.ID, "scope": "*", "exp": time.Now().Add(-time.Minute).Unix()})
	noExpiry := signJWT(t, s, jwt.MapClaims{"iss": "worldforge", "sub": s.Owner.ID, "scope": "*"})
	otherKey, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iss": "worldforge", "sub": s.Owner.ID, "scope": "*", "exp": time.Now().Add(time.Hour).Unix()}).SignedString([]byte("not-the-servers-key-not-the-servers-key"))
	noneAlg, _ := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"iss": "worldforge", "sub": s.Owner.ID, "scope": "*", "exp": time.Now().Add(time.Hour).Unix()}).SignedString(jwt.UnsafeAllowNoneSignatureType)

	cases := []struct{ name, header string }{
		{"no header", ""},
		{"wrong scheme", "Basic " + good},
		{"bearer without token", "Bearer "},
		{"unknown key", "Bearer " + auth.KeyPrefix + strings.Repeat("a", 32)},
		{"malformed key", "Bearer " + auth.KeyPrefix + "short"},
		{"revoked key", "Bearer " + revoked},
		{"expired JWT", "Bearer " + expired},
		{"JWT without expiry", "Bearer " + noExpiry},
		{"tampered JWT", "Bearer " + tampered},
		{"JWT signed with another key", "Bearer " + otherKey},
		{"unsigned JWT", "Bearer " + noneAlg},
		{"garbage", "Bearer !!!"},
	}
	requests := []struct{ method, path string }{
		{http.MethodPost, "/mcp"}, {http.MethodGet, "/mcp"}, {http.MethodDelete, "/mcp"}, {http.MethodGet, "/me"},
	}
	for _, tc := range cases {
		for _, rq := range requests {
			t.Run(tc.name+"/"+rq.method+rq.path, func(t *testing.T) {
				body := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
				req, _ := http.NewRequest(rq.method, s.URL+rq.path, body)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				if tc.header != "" {
					req.Header.Set("Authorization", tc.header)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				data, _ := io.ReadAll(resp.Body)
				var got map[string]any
				json.Unmarshal(data, &got)
				if resp.StatusCode != http.StatusUnauthorized || got["error"] != "unauthorized" {
					t.Errorf("status %d body %s, want 401 {\"error\":\"unauthorized\"}", resp.StatusCode, data)
				}
				if h := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(h, "Bearer") {
					t.Errorf("WWW-Authenticate = %q", h)
				}
			})
		}
	}

	// The same credentials that work: a key and a JWT reach /me.
	for name, tok := range map[string]string{"key": s.Key(t, s.Owner, wf.ScopeWorldRead), "jwt": good} {
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/me", nil)
		req.Header.Set("Authorization", "bearer "+tok) // the scheme is case-insensitive
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var me map[string]any
		json.NewDecoder(resp.Body).Decode(&me)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || me["userId"] != s.Owner.ID {
			t.Errorf("%s: /me status %d %v", name, resp.StatusCode, me)
		}
	}
}

// TestRevocationAcrossReplicas: a key revoked through one replica (another
// Authenticator on the same database) is refused by this one within a
// second. The server's authenticator runs a second ahead instead of the
// test sleeping one.
func TestRevocationAcrossReplicas(t *testing.T) {
	var ahead atomic.Int64 // added to the server authenticator's clock
	s := testserver.StartWith(t, dbtest.Open(t), testserver.Config{
		AuthNow: func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) },
	})
	key := s.Key(t, s.Owner, wf.ScopeAll)
	if resp := post(t, s, key, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Mcp-Protocol-Version": "2025-06-18"}); resp.StatusCode != http.StatusOK {
		t.Fatalf("before revocation: status %d", resp.StatusCode)
	}
	other, err := auth.New(context.Background(), s.DB, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.RevokeKey(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	ahead.Add(int64(time.Second))
	if resp := post(t, s, key, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Mcp-Protocol-Version": "2025-06-18"}); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("1 s after revocation on another replica: status %d, want 401", resp.StatusCode)
	}
}
