package sqlstore_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// oauthFixture stores a client and a code for user u.
func oauthFixture(t *testing.T, db *sqlstore.DB, u *worldforge.User, code string, expires time.Time) *worldforge.OAuthCode {
	t.Helper()
	ctx := t.Context()
	must(t, db.SaveOAuthClient(ctx, &worldforge.OAuthClient{ID: "client_" + code, Name: "App", Document: []byte(`{}`)}))
	c := &worldforge.OAuthCode{Hash: []byte(code), ClientID: "client_" + code, UserID: u.ID, RedirectURI: "https://app.example/cb",
		Resource: "https://wf.example/mcp", Challenge: "c", Scopes: []string{"world:read"}, GrantID: "grant_" + code, CreatedAt: expires.Add(-time.Minute), ExpiresAt: expires}
	must(t, db.CreateOAuthCode(ctx, c))
	return c
}

func tokensFor(tag string, n int) []*worldforge.OAuthToken {
	exp := time.Now().Add(time.Hour)
	return []*worldforge.OAuthToken{
		{Hash: fmt.Appendf(nil, "a-%s-%d", tag, n), Kind: worldforge.OAuthAccess, ExpiresAt: exp},
		{Hash: fmt.Appendf(nil, "r-%s-%d", tag, n), Kind: worldforge.OAuthRefresh, ExpiresAt: exp},
	}
}

// race runs fn from n goroutines released together and counts the nil
// results and the errors matching want; any other error fails the test.
func race(t *testing.T, n int, want error, fn func(i int) error) (wins, refused int) {
	t.Helper()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		others []error
		start  = make(chan struct{})
	)
	for i := range n {
		wg.Go(func() {
			<-start
			err := fn(i)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, want):
				refused++
			default:
				others = append(others, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if len(others) > 0 {
		t.Errorf("unexpected errors: %v", others)
	}
	return wins, refused
}

// TestOAuthCodeRace spends one code from many goroutines at once: one
// exchange succeeds, every other is conflict: oauth_code_used, and the
// grant the winner made ends revoked (a code used twice is stolen).
func TestOAuthCodeRace(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		u := newUser(t, db, "u")
		const n = 24
		for round := range 3 {
			tag := fmt.Sprintf("code-%d", round)
			c := oauthFixture(t, db, u, tag, time.Now().Add(time.Minute))
			wins, used := race(t, n, &worldforge.Error{Code: worldforge.EConflict, Detail: worldforge.DetailCodeUsed}, func(i int) error {
				return db.ExchangeOAuthCode(ctx, c.Hash, time.Now(), &worldforge.OAuthGrant{}, tokensFor(tag, i)...)
			})
			if wins != 1 || used != n-1 {
				t.Fatalf("round %d: %d exchanges succeeded, %d refused as used", round, wins, used)
			}
			tok, g, err := db.FindOAuthToken(ctx, tokensFor(tag, 0)[0].Hash)
			if err == nil && g.RevokedAt == nil {
				t.Fatalf("round %d: grant of a reused code not revoked (%+v)", round, tok)
			}
			grants, err := db.ListOAuthGrants(ctx, u.ID)
			must(t, err)
			if len(grants) != 0 {
				t.Fatalf("round %d: live grants %+v", round, grants)
			}
		}
	})
}

// TestOAuthRefreshRace rotates one refresh token from many goroutines at
// once: one rotation succeeds, every other is conflict:
// oauth_refresh_reused, and then the family is revoked.
func TestOAuthRefreshRace(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		u := newUser(t, db, "u")
		c := oauthFixture(t, db, u, "refresh", time.Now().Add(time.Minute))
		first := tokensFor("first", 0)
		var g worldforge.OAuthGrant
		must(t, db.ExchangeOAuthCode(ctx, c.Hash, time.Now(), &g, first...))
		const n = 24
		wins, reused := race(t, n, &worldforge.Error{Code: worldforge.EConflict, Detail: worldforge.DetailRefreshReused}, func(i int) error {
			_, err := db.RotateOAuthRefresh(ctx, first[1].Hash, time.Now(), tokensFor("rot", i)...)
			return err
		})
		if wins != 1 || reused != n-1 {
			t.Fatalf("%d rotations succeeded, %d refused as reused", wins, reused)
		}
		_, got, err := db.FindOAuthToken(ctx, first[0].Hash)
		must(t, err)
		if got.RevokedAt == nil {
			t.Fatal("family of a reused refresh token not revoked")
		}
	})
}

// TestOAuthStoreBadInput: refusals name their reason and change nothing.
func TestOAuthStoreBadInput(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		u := newUser(t, db, "u")
		c := oauthFixture(t, db, u, "bad", time.Now().Add(time.Minute))
		before := fingerprint(t, db)
		wantCode(t, db.SaveOAuthClient(ctx, &worldforge.OAuthClient{ID: "x"}), worldforge.EBadRequest)
		wantCode(t, db.CreateOAuthCode(ctx, &worldforge.OAuthCode{Hash: []byte("n"), ClientID: "client_bad", UserID: u.ID, GrantID: "g"}), worldforge.EBadRequest)
		wantCode(t, db.CreateOAuthCode(ctx, &worldforge.OAuthCode{Hash: []byte("n"), ClientID: "client_missing", UserID: u.ID, GrantID: "g", ExpiresAt: time.Now().Add(time.Minute)}), worldforge.ENotFound)
		wantCode(t, db.CreateOAuthCode(ctx, c), worldforge.EConflict)
		wantCode(t, db.ExchangeOAuthCode(ctx, []byte("nope"), time.Now(), &worldforge.OAuthGrant{}), worldforge.ENotFound)
		err := db.ExchangeOAuthCode(ctx, c.Hash, time.Now().Add(time.Hour), &worldforge.OAuthGrant{}, tokensFor("late", 0)...)
		if !errors.Is(err, &worldforge.Error{Code: worldforge.EConflict, Detail: worldforge.DetailCodeExpired}) {
			t.Fatalf("expired code: %v", err)
		}
		_, err = db.RotateOAuthRefresh(ctx, []byte("nope"), time.Now())
		wantCode(t, err, worldforge.ENotFound)
		_, _, err = db.FindOAuthToken(ctx, []byte("nope"))
		wantCode(t, err, worldforge.ENotFound)
		wantCode(t, db.RevokeOAuthGrant(ctx, "grant_missing"), worldforge.ENotFound)
		wantUnchanged(t, db, before)

		// An expired refresh token is refused and its family kept.
		var g worldforge.OAuthGrant
		toks := tokensFor("exp", 0)
		must(t, db.ExchangeOAuthCode(ctx, c.Hash, time.Now(), &g, toks...))
		_, err = db.RotateOAuthRefresh(ctx, toks[1].Hash, time.Now().Add(2*time.Hour), tokensFor("exp", 1)...)
		if !errors.Is(err, &worldforge.Error{Code: worldforge.EConflict, Detail: worldforge.DetailRefreshExpired}) {
			t.Fatalf("expired refresh token: %v", err)
		}
		// An access token cannot be rotated.
		_, err = db.RotateOAuthRefresh(ctx, toks[0].Hash, time.Now(), tokensFor("exp", 2)...)
		wantCode(t, err, worldforge.ENotFound)
		// Revoking the user's client revokes the grant; rotating is then
		// conflict: oauth_grant_revoked.
		n, err := db.RevokeUserOAuthClient(ctx, u.ID, "client_bad")
		must(t, err)
		if n != 1 {
			t.Fatalf("revoked %d grants, want 1", n)
		}
		_, err = db.RotateOAuthRefresh(ctx, toks[1].Hash, time.Now(), tokensFor("exp", 3)...)
		if !errors.Is(err, &worldforge.Error{Code: worldforge.EConflict, Detail: worldforge.DetailGrantRevoked}) {
			t.Fatalf("refresh of a revoked grant: %v", err)
		}
	})
}

// TestOAuthPrune deletes the codes and tokens expired before the cut,
// and nothing else.
func TestOAuthPrune(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		u := newUser(t, db, "u")
		now := time.Now()
		old := oauthFixture(t, db, u, "old", now.Add(-2*time.Hour))
		fresh := oauthFixture(t, db, u, "fresh", now.Add(time.Minute))
		var g worldforge.OAuthGrant
		toks := tokensFor("fresh", 0)
		toks[0].CreatedAt, toks[0].ExpiresAt = now.Add(-3*time.Hour), now.Add(-2*time.Hour) // an expired access token
		must(t, db.ExchangeOAuthCode(ctx, fresh.Hash, now, &g, toks...))
		n, err := db.PruneOAuth(ctx, now.Add(-time.Hour))
		must(t, err)
		if n != 2 {
			t.Fatalf("pruned %d rows, want 2 (the old code and the expired token)", n)
		}
		_, err = db.FindOAuthCode(ctx, old.Hash)
		wantCode(t, err, worldforge.ENotFound)
		if _, err := db.FindOAuthCode(ctx, fresh.Hash); err != nil {
			t.Fatalf("fresh code: %v", err)
		}
		_, _, err = db.FindOAuthToken(ctx, toks[0].Hash)
		wantCode(t, err, worldforge.ENotFound)
		if _, _, err := db.FindOAuthToken(ctx, toks[1].Hash); err != nil {
			t.Fatalf("live refresh token: %v", err)
		}
	})
}
