package auth_test

import (
	"context"
	"errors"
	"testing"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/auth"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

const testResource = "https://wf.example/mcp"

// grantToken stores a grant for the user with an access token valid for
// ttl and returns the token.
func grantToken(t testing.TB, db *sqlstore.DB, userID, resource string, ttl time.Duration, scopes ...string) string {
	t.Helper()
	ctx := context.Background()
	if err := db.SaveOAuthClient(ctx, &wf.OAuthClient{ID: "client_t", Name: "T", Document: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	_, codeHash, err := auth.NewOAuthSecret("wfc_")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := db.CreateOAuthCode(ctx, &wf.OAuthCode{Hash: codeHash, ClientID: "client_t", UserID: userID, Resource: resource,
		Challenge: "c", Scopes: scopes, GrantID: wf.NewID("grant"), CreatedAt: now, ExpiresAt: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	tok, hash, err := auth.NewOAuthSecret(auth.AccessPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.ExchangeOAuthCode(ctx, codeHash, now, &wf.OAuthGrant{},
		&wf.OAuthToken{Hash: hash, Kind: wf.OAuthAccess, CreatedAt: now, ExpiresAt: now.Add(ttl)}); err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestOAuthAccessToken: an access token authenticates with exactly its
// grant's scopes on its resource only; without a resource configured no
// access token does.
func TestOAuthAccessToken(t *testing.T) {
	db := dbtest.Open(t)
	u := newUser(t, db, "Ada")
	tok := grantToken(t, db, u.ID, testResource, time.Hour, wf.ScopeWorldRead, wf.ScopeWikiRead)
	a := newAuth(t, db, &auth.Options{Resource: testResource})
	actor, err := a.Authenticate(context.Background(), tok)
	if err != nil || actor.UserID != u.ID || actor.Kind != wf.CredentialOAuth || len(actor.Scopes) != 2 || !actor.HasScope(wf.ScopeWikiRead) || actor.HasScope(wf.ScopeWorldWrite) {
		t.Fatalf("access token: %+v %v", actor, err)
	}
	for name, opts := range map[string]*auth.Options{"no resource": nil, "another resource": {Resource: "https://other.example/mcp"}} {
		if _, err := newAuth(t, db, opts).Authenticate(context.Background(), tok); !errors.Is(err, wf.ErrUnauthorized) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// BenchmarkAuthenticateOAuth compares an uncached check of an OAuth
// access token (one indexed join) with an API key's.
func BenchmarkAuthenticateOAuth(b *testing.B) {
	db := dbtest.Open(b)
	u := newUser(b, db, "Ada")
	tok := grantToken(b, db, u.ID, testResource, time.Hour, wf.ScopeWorldRead)
	a := newAuth(b, db, &auth.Options{Resource: testResource, CacheTTL: -1})
	key := createKey(b, a, u.ID, wf.ScopeWorldRead)
	for _, c := range []struct{ name, cred string }{{"access-token", tok}, {"api-key", key}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := a.Authenticate(context.Background(), c.cred); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
