package auth_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/auth"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

func wantCode(t testing.TB, err error, code, detail string) {
	t.Helper()
	var e *wf.Error
	if !errors.As(err, &e) || e.Code != code || (detail != "" && e.Detail != detail) {
		t.Fatalf("error %v, want %s: %s", err, code, detail)
	}
}

// TestLoginLinks: a link signs in once, within its ttl, with every scope.
func TestLoginLinks(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		clk := newClock()
		a := newAuth(t, db, &auth.Options{Now: clk.Now, SessionTTL: time.Hour})
		u := newUser(t, db, "Linda")

		link, l, err := a.CreateLoginLink(ctx, u.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(link, auth.LinkPrefix) || l.ExpiresAt.Sub(l.CreatedAt) != auth.DefaultLinkTTL {
			t.Fatalf("link %q, %+v", link, l)
		}
		secret, s, err := a.UseLoginLink(ctx, link)
		if err != nil {
			t.Fatal(err)
		}
		if s.UserID != u.ID || s.KeyID != "" || !strings.HasPrefix(secret, auth.SessionPrefix) || s.ExpiresAt.Sub(s.CreatedAt) != time.Hour {
			t.Fatalf("session %+v", s)
		}
		in, err := a.Session(ctx, secret)
		if err != nil || in.Actor.UserID != u.ID || !in.Actor.HasScope(wf.ScopeWorldWrite) || in.User.Name != "Linda" || in.Session.ID != s.ID {
			t.Fatalf("session %+v, %v", in, err)
		}
		// Once only.
		_, _, err = a.UseLoginLink(ctx, link)
		wantCode(t, err, wf.EConflict, wf.DetailLinkUsed)

		// Expiry.
		late, _, err := a.CreateLoginLink(ctx, u.ID, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Minute)
		_, _, err = a.UseLoginLink(ctx, late)
		wantCode(t, err, wf.EConflict, wf.DetailLinkExpired)

		// Nonsense and links never made.
		for _, bad := range []string{"", "wfl_", "wfl_short", linkLike('A'), "wk_live_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", linkLike('a')} {
			if _, _, err := a.UseLoginLink(ctx, bad); !errors.Is(err, wf.ErrNotFound) {
				t.Errorf("link %q: %v, want not_found", bad, err)
			}
		}
		// Bad ttl and unknown user.
		for _, ttl := range []time.Duration{-time.Second, auth.MaxLinkTTL + time.Second} {
			if _, _, err := a.CreateLoginLink(ctx, u.ID, ttl); wf.ErrorCode(err) != wf.EBadRequest {
				t.Errorf("ttl %v: %v", ttl, err)
			}
		}
		if _, _, err := a.CreateLoginLink(ctx, "user_aaaaaaaaaaaaaaaaaaaa", 0); !errors.Is(err, wf.ErrNotFound) {
			t.Errorf("unknown user: %v", err)
		}
	})
}

// linkLike is a well-formed login link secret made of one letter.
func linkLike(c byte) string { return auth.LinkPrefix + strings.Repeat(string(c), 32) }

// TestSessions: expiry, sign-out, revocation of a user's sessions, and a
// key session that ends with its key.
func TestSessions(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		clk := newClock()
		a := newAuth(t, db, &auth.Options{Now: clk.Now, SessionTTL: time.Hour})
		u := newUser(t, db, "Sam")
		start := func() string {
			t.Helper()
			link, _, err := a.CreateLoginLink(ctx, u.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			s, _, err := a.UseLoginLink(ctx, link)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		live := func(secret string) bool {
			_, err := a.Session(ctx, secret)
			if err != nil && !errors.Is(err, wf.ErrUnauthorized) {
				t.Fatal(err)
			}
			return err == nil
		}

		s2 := start()
		if err := a.EndSession(ctx, s2); err != nil || live(s2) {
			t.Errorf("signed out session: live %v, %v", live(s2), err)
		}

		s3, s4 := start(), start()
		n, err := a.RevokeSessions(ctx, u.ID)
		if err != nil || n != 2 || live(s3) || live(s4) {
			t.Errorf("revoke: %d, %v", n, err)
		}

		s1 := start()
		clk.Advance(time.Hour)
		if live(s1) {
			t.Error("a session outlived its ttl")
		}

		// A session signed in with a key has its scopes, until it is
		// revoked.
		key := createKey(t, a, u.ID, wf.ScopeWikiRead)
		ks, s, err := a.SignIn(ctx, "  "+key+"\n")
		if err != nil || s.KeyID == "" {
			t.Fatalf("sign in with key: %+v, %v", s, err)
		}
		in, err := a.Session(ctx, ks)
		if err != nil {
			t.Fatalf("key session: %v", err)
		}
		if actor := in.Actor; actor.HasScope(wf.ScopeWorldRead) || !actor.HasScope(wf.ScopeWikiRead) || actor.KeyID != s.KeyID {
			t.Fatalf("key session actor %+v", actor)
		}
		if err := a.RevokeKey(ctx, key); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Second) // past the session cache
		if live(ks) {
			t.Error("a key session outlived its key")
		}

		// Credentials that do not sign in.
		for _, bad := range []string{"", "nonsense", "wk_live_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", key} {
			if _, _, err := a.SignIn(ctx, bad); !errors.Is(err, wf.ErrUnauthorized) {
				t.Errorf("sign in with %q: %v", bad, err)
			}
		}
		for _, bad := range []string{"", "wfs_", auth.SessionPrefix + strings.Repeat("a", 32), key} {
			if live(bad) {
				t.Errorf("session %q is live", bad)
			}
		}
	})
}
