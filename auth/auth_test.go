package auth_test

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/auth"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// clock is a settable clock for Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newAuth(t testing.TB, db *sqlstore.DB, opts *auth.Options) *auth.Authenticator {
	t.Helper()
	a, err := auth.New(context.Background(), db, opts)
	if err != nil {
		t.Fatalf("auth.New: %v", err)
	}
	return a
}

func newUser(t testing.TB, db *sqlstore.DB, name string) *wf.User {
	t.Helper()
	u := &wf.User{Name: name}
	if err := db.CreateUser(context.Background(), u); err != nil {
		t.Fatalf("create user: %v", err)
	}
	return u
}

func createKey(t testing.TB, a *auth.Authenticator, userID string, scopes ...string) string {
	t.Helper()
	secret, _, err := a.CreateKey(context.Background(), userID, scopes)
	if err != nil {
		t.Fatalf("create key: %v", err)
	}
	return secret
}

func issueToken(t testing.TB, a *auth.Authenticator, userID string, ttl time.Duration) string {
	t.Helper()
	tok, err := a.IssueToken(context.Background(), userID, ttl)
	if err != nil {
		t.Fatalf("issue token: %v", err)
	}
	return tok
}

func wantUnauthorized(t testing.TB, a *auth.Authenticator, token, what string) {
	t.Helper()
	actor, err := a.Authenticate(context.Background(), token)
	if !errors.Is(err, wf.ErrUnauthorized) {
		t.Errorf("%s: Authenticate = %v, %v; want unauthorized", what, actor, err)
	}
	if actor != nil {
		t.Errorf("%s: got an actor %v with the error", what, actor)
	}
}

var keyShape = regexp.MustCompile(`^wk_live_[a-z2-7]{32}$`)

func TestCreateKey(t *testing.T) {
	db := dbtest.Open(t)
	a := newAuth(t, db, nil)
	u := newUser(t, db, "Ada")
	ctx := context.Background()

	seen := map[string]bool{}
	for range 20 {
		secret, k, err := a.CreateKey(ctx, u.ID, []string{wf.ScopeWorldRead, wf.ScopeWikiRead})
		if err != nil {
			t.Fatal(err)
		}
		if !keyShape.MatchString(secret) || len(secret) != len(auth.KeyPrefix)+32 {
			t.Fatalf("key %q does not have the shape wk_live_ + 32 base32 characters", secret)
		}
		if !auth.WellFormedKey(secret) {
			t.Fatalf("WellFormedKey(%q) = false", secret)
		}
		if seen[secret] {
			t.Fatalf("key repeated: %q", secret)
		}
		seen[secret] = true
		if k.UserID != u.ID || !wf.ValidID("key", k.ID) || !slices.Equal(k.Scopes, []string{wf.ScopeWorldRead, wf.ScopeWikiRead}) {
			t.Errorf("APIKey = %+v", k)
		}
		if k.Prefix != secret[:len(auth.KeyPrefix)+4] {
			t.Errorf("prefix %q of %q", k.Prefix, secret)
		}
		// Only the hash is stored, and it finds the key.
		if strings.Contains(string(k.Hash), secret) || string(k.Hash) != string(auth.HashKey(secret)) {
			t.Errorf("stored hash is not SHA-256 of the secret")
		}
		stored, err := db.FindAPIKeyByHash(ctx, auth.HashKey(secret))
		if err != nil || stored.ID != k.ID || stored.RevokedAt != nil {
			t.Errorf("FindAPIKeyByHash = %+v, %v", stored, err)
		}
	}

	for _, tc := range []struct {
		name   string
		user   string
		scopes []string
		code   string
	}{
		{"no scopes", u.ID, nil, wf.EBadRequest},
		{"unknown scope", u.ID, []string{wf.ScopeWorldRead, "dragons:tame"}, wf.EBadRequest},
		{"scope list in one string", u.ID, []string{"world:read,nope"}, wf.EBadRequest},
		{"unknown user", "user_nobodyatall", []string{wf.ScopeAll}, wf.ENotFound},
	} {
		secret, k, err := a.CreateKey(ctx, tc.user, tc.scopes)
		if err == nil || wf.ErrorCode(err) != tc.code || secret != "" || k != nil {
			t.Errorf("%s: CreateKey = %q, %v, %v; want code %s", tc.name, secret, k, err, tc.code)
		}
	}
}

func TestWellFormedKey(t *testing.T) {
	body := strings.Repeat("a", 32)
	cases := []struct {
		s    string
		want bool
	}{
		{"wk_live_" + body, true},
		{"wk_live_abcdefghijklmnopqrstuvwxyz234567", true},
		{"wk_live_" + strings.Repeat("7", 32), true},
		{"wk_live_" + body[:31], false},
		{"wk_live_" + body + "a", false},
		{"wk_live_" + strings.Repeat("A", 32), false},
		{"wk_live_" + strings.Repeat("a", 31) + "1", false},
		{"wk_live_" + strings.Repeat("a", 31) + "8", false},
		{"wk_live_" + strings.Repeat("a", 31) + "=", false},
		{"wk_live_" + strings.Repeat("a", 31) + "é", false},
		{"wk_live_" + body + "\n", false},
		{" wk_live_" + body, false},
		{"WK_LIVE_" + body, false},
		{"wk_test_" + body, false},
		{body, false},
		{"wk_live_", false},
		{"", false},
	}
	for _, tc := range cases {
		if got := auth.WellFormedKey(tc.s); got != tc.want {
			t.Errorf("WellFormedKey(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

func TestAuthenticateKey(t *testing.T) {
	db := dbtest.Open(t)
	a := newAuth(t, db, nil)
	u := newUser(t, db, "Ada")
	ctx := context.Background()
	secret, k, err := a.CreateKey(ctx, u.ID, []string{wf.ScopeQuestRead, wf.ScopeLoreRead})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // the second answer comes from the cache
		actor, err := a.Authenticate(ctx, secret)
		if err != nil {
			t.Fatalf("Authenticate #%d: %v", i, err)
		}
		if actor.UserID != u.ID || actor.KeyID != k.ID || actor.Kind != wf.CredentialAPIKey ||
			!slices.Equal(actor.Scopes, []string{wf.ScopeQuestRead, wf.ScopeLoreRead}) {
			t.Errorf("actor #%d = %+v", i, actor)
		}
		if strings.Contains(actor.String(), secret) {
			t.Errorf("actor.String() reveals the key: %s", actor)
		}
	}

	// A second key of the same user is a different actor (key id).
	other := createKey(t, a, u.ID, wf.ScopeAll)
	if actor, err := a.Authenticate(ctx, other); err != nil || actor.KeyID == k.ID || !actor.HasScope(wf.ScopeQuestCommit) {
		t.Errorf("second key: %+v, %v", actor, err)
	}

	// Unknown, malformed and near-miss keys.
	unknown := auth.KeyPrefix + strings.Repeat("a", 32)
	flipped := secret[:len(secret)-1] + string("ab"[boolInt(secret[len(secret)-1] == 'a')])
	for name, tok := range map[string]string{
		"empty":           "",
		"unknown":         unknown,
		"one char off":    flipped,
		"upper case":      strings.ToUpper(secret),
		"truncated":       secret[:len(secret)-1],
		"extended":        secret + "a",
		"trailing space":  secret + " ",
		"leading space":   " " + secret,
		"trailing lf":     secret + "\n",
		"prefix only":     auth.KeyPrefix,
		"bad characters":  auth.KeyPrefix + strings.Repeat("!", 32),
		"without prefix":  strings.TrimPrefix(secret, auth.KeyPrefix),
		"other prefix":    "wk_test_" + strings.TrimPrefix(secret, auth.KeyPrefix),
		"very long":       auth.KeyPrefix + strings.Repeat("a", 5000),
		"hash of the key": string(auth.HashKey(secret)),
		"stored prefix":   k.Prefix,
	} {
		wantUnauthorized(t, a, tok, name)
	}

	// Revocation through the same authenticator is seen at once, even though
	// the key is cached.
	if err := a.RevokeKey(ctx, secret); err != nil {
		t.Fatal(err)
	}
	wantUnauthorized(t, a, secret, "revoked")
	if err := a.RevokeKey(ctx, secret); err != nil {
		t.Errorf("revoking twice: %v", err)
	}
	if err := a.RevokeKey(ctx, "not-a-key"); wf.ErrorCode(err) != wf.EBadRequest {
		t.Errorf("RevokeKey(malformed) = %v, want bad_request", err)
	}
	if err := a.RevokeKey(ctx, unknown); !errors.Is(err, wf.ErrNotFound) {
		t.Errorf("RevokeKey(unknown) = %v, want not_found", err)
	}
	// The other key is untouched, and a fresh authenticator agrees.
	fresh := newAuth(t, db, nil)
	wantUnauthorized(t, fresh, secret, "revoked, fresh authenticator")
	if _, err := fresh.Authenticate(ctx, other); err != nil {
		t.Errorf("other key after revoking the first: %v", err)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestSessionToken(t *testing.T) {
	db := dbtest.Open(t)
	a := newAuth(t, db, nil)
	u := newUser(t, db, "Ada")
	ctx := context.Background()

	tok := issueToken(t, a, u.ID, time.Hour)
	if strings.HasPrefix(tok, auth.KeyPrefix) || strings.Count(tok, ".") != 2 {
		t.Fatalf("token %q is not a JWT", tok)
	}
	for i := range 2 {
		actor, err := a.Authenticate(ctx, tok)
		if err != nil {
			t.Fatalf("Authenticate #%d: %v", i, err)
		}
		if actor.UserID != u.ID || actor.KeyID != "" || actor.Kind != wf.CredentialSession || !slices.Equal(actor.Scopes, []string{wf.ScopeAll}) {
			t.Errorf("actor #%d = %+v", i, actor)
		}
		if !actor.HasScope(wf.ScopeEncounterCommit) {
			t.Error("session lacks a scope")
		}
	}
	if tok2 := issueToken(t, a, u.ID, time.Hour); tok2 == tok {
		t.Error("two tokens are identical (no jti?)")
	}

	// Tokens cannot be issued for nobody, or for no time.
	if tok, err := a.IssueToken(ctx, "user_doesnotexist", time.Hour); err == nil || tok != "" || !errors.Is(err, wf.ErrNotFound) {
		t.Errorf("IssueToken(unknown user) = %q, %v; want not_found", tok, err)
	}
	if _, err := a.IssueToken(ctx, "", time.Hour); err == nil {
		t.Error("IssueToken(empty user) succeeded")
	}
	for _, ttl := range []time.Duration{0, -time.Second} {
		if _, err := a.IssueToken(ctx, u.ID, ttl); wf.ErrorCode(err) != wf.EBadRequest {
			t.Errorf("IssueToken(ttl %v) = %v, want bad_request", ttl, err)
		}
	}

	// Forged, altered and foreign tokens.
	key, err := db.Secret(ctx, "jwt-signing-key", nil)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(m jwt.SigningMethod, k any, c jwt.MapClaims) string {
		s, err := jwt.NewWithClaims(m, c).SignedString(k)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	exp := time.Now().Add(time.Hour).Unix()
	good := jwt.MapClaims{"iss": "worldforge", "sub": u.ID, "scope": "*", "exp": exp}
	with := func(k string, v any) jwt.MapClaims {
		c := jwt.MapClaims{}
		for kk, vv := range good {
			c[kk] = vv
		}
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	if _, err := a.Authenticate(ctx, sign(jwt.SigningMethodHS256, key, good)); err != nil {
		t.Fatalf("hand-signed good token: %v", err)
	}
	parts := strings.Split(tok, ".")
	for name, bad := range map[string]string{
		"alg none":         sign(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, good),
		"other key":        sign(jwt.SigningMethodHS256, []byte(strings.Repeat("k", 32)), good),
		"HS512":            sign(jwt.SigningMethodHS512, key, good),
		"expired":          sign(jwt.SigningMethodHS256, key, with("exp", time.Now().Add(-time.Minute).Unix())),
		"no expiry":        sign(jwt.SigningMethodHS256, key, with("exp", nil)),
		"other issuer":     sign(jwt.SigningMethodHS256, key, with("iss", "evil")),
		"no issuer":        sign(jwt.SigningMethodHS256, key, with("iss", nil)),
		"narrow scope":     sign(jwt.SigningMethodHS256, key, with("scope", wf.ScopeWorldRead)),
		"no scope":         sign(jwt.SigningMethodHS256, key, with("scope", nil)),
		"no subject":       sign(jwt.SigningMethodHS256, key, with("sub", nil)),
		"not yet valid":    sign(jwt.SigningMethodHS256, key, with("nbf", time.Now().Add(time.Hour).Unix())),
		"tampered payload": parts[0] + "." + parts[1] + "x." + parts[2],
		"no signature":     parts[0] + "." + parts[1] + ".",
		"two parts":        parts[0] + "." + parts[1],
		"four parts":       tok + ".x",
		"padded":           tok + "=",
		"trailing space":   tok + " ",
		"garbage":          "!!!",
		"dots":             "..",
	} {
		wantUnauthorized(t, a, bad, name)
	}

	// A well-signed token of a user that does not exist authenticates with
	// no owner (the tools then answer missing_scopes:unresolved_owner).
	ghost, err := a.Authenticate(ctx, sign(jwt.SigningMethodHS256, key, with("sub", "user_ghost")))
	if err != nil || ghost.UserID != "" || ghost.Kind != wf.CredentialSession {
		t.Errorf("ghost token: %+v, %v", ghost, err)
	} else if _, err := ghost.Owner(); err == nil || err.Error() != "missing_scopes:unresolved_owner" {
		t.Errorf("ghost Owner() = %v", err)
	}
}

// TestTokenSignatureNotMalleable: a JWT's signature segment written with
// other (non-canonical) trailing bits decodes to the same bytes; it is not
// the token that was issued and must not authenticate.
func TestTokenSignatureNotMalleable(t *testing.T) {
	db := dbtest.Open(t)
	a := newAuth(t, db, &auth.Options{CacheTTL: -1})
	u := newUser(t, db, "Ada")
	tok := issueToken(t, a, u.ID, time.Hour)
	if _, err := a.Authenticate(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	// An HS256 signature is 32 bytes: 43 base64url characters whose last
	// one carries 4 bits of data and 2 bits that must be zero.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, tok[len(tok)-1])
	if last < 0 || last&3 != 0 {
		t.Fatalf("unexpected token end %q", tok[len(tok)-1])
	}
	for bits := 1; bits < 4; bits++ {
		variant := tok[:len(tok)-1] + string(alphabet[last|bits])
		wantUnauthorized(t, a, variant, "signature with non-zero trailing bits")
	}
}

func TestTokenExpiry(t *testing.T) {
	db := dbtest.Open(t)
	clk := newClock()
	a := newAuth(t, db, &auth.Options{Now: clk.Now})
	u := newUser(t, db, "Ada")
	ctx := context.Background()
	tok := issueToken(t, a, u.ID, time.Minute)

	steps := []struct {
		advance time.Duration
		ok      bool
	}{
		{0, true},
		{30 * time.Second, true},
		{29 * time.Second, true}, // 59 s
		{time.Second, false},     // 60 s: expired (cached or not)
		{time.Hour, false},
	}
	for i, st := range steps {
		clk.Advance(st.advance)
		actor, err := a.Authenticate(ctx, tok)
		if st.ok && (err != nil || actor.UserID != u.ID) {
			t.Errorf("step %d: Authenticate = %+v, %v; want valid", i, actor, err)
		}
		if !st.ok && !errors.Is(err, wf.ErrUnauthorized) {
			t.Errorf("step %d: Authenticate = %+v, %v; want unauthorized", i, actor, err)
		}
	}

	// The same holds for an authenticator that never cached the token.
	b := newAuth(t, db, &auth.Options{Now: clk.Now, CacheTTL: -1})
	tok2 := issueToken(t, b, u.ID, time.Minute)
	if _, err := b.Authenticate(ctx, tok2); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	wantUnauthorized(t, b, tok2, "uncached token after its ttl")
	// And a key does not expire.
	key := createKey(t, b, u.ID, wf.ScopeAll)
	clk.Advance(24 * 365 * time.Hour)
	if _, err := b.Authenticate(ctx, key); err != nil {
		t.Errorf("key a year on: %v", err)
	}
}

func TestRevocationThroughAnotherAuthenticator(t *testing.T) {
	db := dbtest.Open(t)
	ctx := context.Background()
	u := newUser(t, db, "Ada")

	t.Run("cached until the TTL passes", func(t *testing.T) {
		clk := newClock()
		first := newAuth(t, db, &auth.Options{CacheTTL: 50 * time.Millisecond, Now: clk.Now})
		second := newAuth(t, db, nil)
		key := createKey(t, second, u.ID, wf.ScopeWorldRead)
		if _, err := first.Authenticate(ctx, key); err != nil {
			t.Fatal(err)
		}
		if err := second.RevokeKey(ctx, key); err != nil {
			t.Fatal(err)
		}
		wantUnauthorized(t, second, key, "revoked, on the revoking authenticator")
		// Within the TTL the first one may still answer from its cache…
		clk.Advance(49 * time.Millisecond)
		if _, err := first.Authenticate(ctx, key); err != nil {
			t.Errorf("within the cache TTL: %v (the cache was expected to answer)", err)
		}
		// …and once it has passed, it asks the store again.
		clk.Advance(time.Millisecond)
		wantUnauthorized(t, first, key, "revoked, once the cache TTL passed")
		clk.Advance(time.Second)
		wantUnauthorized(t, first, key, "revoked, later")
	})

	t.Run("the default TTL bounds it too", func(t *testing.T) {
		clk := newClock()
		first := newAuth(t, db, &auth.Options{Now: clk.Now})
		second := newAuth(t, db, nil)
		key := createKey(t, second, u.ID, wf.ScopeWorldRead)
		if _, err := first.Authenticate(ctx, key); err != nil {
			t.Fatal(err)
		}
		if err := second.RevokeKey(ctx, key); err != nil {
			t.Fatal(err)
		}
		clk.Advance(auth.DefaultCacheTTL)
		wantUnauthorized(t, first, key, "revoked, after DefaultCacheTTL")
	})

	t.Run("a negative TTL disables the cache", func(t *testing.T) {
		first := newAuth(t, db, &auth.Options{CacheTTL: -1})
		second := newAuth(t, db, nil)
		key := createKey(t, second, u.ID, wf.ScopeWorldRead)
		for range 3 {
			if _, err := first.Authenticate(ctx, key); err != nil {
				t.Fatal(err)
			}
		}
		if err := second.RevokeKey(ctx, key); err != nil {
			t.Fatal(err)
		}
		wantUnauthorized(t, first, key, "revoked, uncached")
	})
}

func TestSigningKeySharedOnOneDatabase(t *testing.T) {
	db := dbtest.Open(t)
	ctx := context.Background()
	u := newUser(t, db, "Ada")
	a1 := newAuth(t, db, nil)
	a2 := newAuth(t, db, nil)
	for name, pair := range map[string][2]*auth.Authenticator{"1→2": {a1, a2}, "2→1": {a2, a1}} {
		tok := issueToken(t, pair[0], u.ID, time.Hour)
		actor, err := pair[1].Authenticate(ctx, tok)
		if err != nil || actor.UserID != u.ID || actor.Kind != wf.CredentialSession {
			t.Errorf("%s: %+v, %v", name, actor, err)
		}
	}
	// Keys, too, are the database's, not the authenticator's.
	key := createKey(t, a1, u.ID, wf.ScopeAtlasRead)
	if actor, err := a2.Authenticate(ctx, key); err != nil || actor.UserID != u.ID {
		t.Errorf("key across authenticators: %+v, %v", actor, err)
	}

	// Another database has another signing key and other keys.
	otherDB := dbtest.Open(t)
	newUser(t, otherDB, "Ada") // another id, but a user exists there
	other := newAuth(t, otherDB, nil)
	wantUnauthorized(t, other, issueToken(t, a1, u.ID, time.Hour), "token of another database")
	wantUnauthorized(t, other, key, "key of another database")
}

// FuzzAuthenticate: no input panics, and only the exact key and token that
// were made authenticate.
func FuzzAuthenticate(f *testing.F) {
	db := dbtest.Open(f)
	ctx := context.Background()
	u := newUser(f, db, "Ada")
	a := newAuth(f, db, nil)
	key := createKey(f, a, u.ID, wf.ScopeWorldRead, wf.ScopeWikiRead)
	token := issueToken(f, a, u.ID, 24*time.Hour)
	revoked := createKey(f, a, u.ID, wf.ScopeAll)
	if err := a.RevokeKey(ctx, revoked); err != nil {
		f.Fatal(err)
	}
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{
		"iss": "worldforge", "sub": u.ID, "scope": "*", "exp": time.Now().Add(time.Hour).Unix(),
	}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	parts := strings.Split(token, ".")

	for _, seed := range []string{
		key, token, revoked, none,
		"", "garbage", "Bearer " + key, key + "\x00",
		auth.KeyPrefix, auth.KeyPrefix + "junk", auth.KeyPrefix + strings.Repeat("a", 32), auth.KeyPrefix + strings.Repeat("Z", 32),
		parts[0] + "." + parts[1] + ".", parts[0] + ".." + parts[2], token[:len(token)-1],
		"eyJhbGciOiJIUzI1NiJ9.e30.", "a.b.c", "..",
		auth.AccessPrefix + strings.Repeat("a", 32), auth.RefreshPrefix + strings.Repeat("a", 32), auth.AccessPrefix + "junk",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		actor, err := a.Authenticate(ctx, tok)
		switch {
		case tok == key:
			if err != nil || actor.UserID != u.ID || actor.Kind != wf.CredentialAPIKey {
				t.Fatalf("the key: %+v, %v", actor, err)
			}
		case tok == token:
			if err != nil || actor.UserID != u.ID || actor.Kind != wf.CredentialSession {
				t.Fatalf("the token: %+v, %v", actor, err)
			}
		default:
			if err == nil || actor != nil {
				t.Fatalf("Authenticate(%q) = %+v, %v; only the issued key and token may authenticate", tok, actor, err)
			}
			if !errors.Is(err, wf.ErrUnauthorized) {
				t.Fatalf("Authenticate(%q) = %v, want unauthorized", tok, err)
			}
		}
	})
}

// TestRotateKey: after a rotation every token signed with the old key is
// refused, by the rotating authenticator at once and by another one on
// the same database once its cache TTL has passed; tokens signed with the
// new key pass both at once.
func TestRotateKey(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		u := newUser(t, db, "Ada")
		clk := newClock()
		a1 := newAuth(t, db, &auth.Options{Now: clk.Now})
		a2 := newAuth(t, db, &auth.Options{Now: clk.Now})
		old := issueToken(t, a1, u.ID, time.Hour)
		for _, a := range []*auth.Authenticator{a1, a2} {
			if _, err := a.Authenticate(ctx, old); err != nil {
				t.Fatal(err)
			}
		}
		kid, err := a1.RotateKey(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(kid) {
			t.Errorf("key id %q", kid)
		}
		wantUnauthorized(t, a1, old, "old token, rotating authenticator")
		fresh := issueToken(t, a1, u.ID, time.Hour)
		if tok, _, err := jwt.NewParser().ParseUnverified(fresh, jwt.MapClaims{}); err != nil || tok.Header["kid"] != kid {
			t.Errorf("new token's kid = %v (%v), want %s", tok.Header["kid"], err, kid)
		}
		clk.Advance(100 * time.Millisecond)
		if actor, err := a2.Authenticate(ctx, fresh); err != nil || actor.UserID != u.ID {
			t.Errorf("new token on the other authenticator: %v, %v", actor, err)
		}
		clk.Advance(auth.DefaultCacheTTL)
		wantUnauthorized(t, a2, old, "old token, other authenticator after the cache TTL")
		// One that saw no new token re-reads the key on its own schedule.
		a3 := newAuth(t, db, &auth.Options{Now: clk.Now})
		wantUnauthorized(t, a3, old, "old token, a fresh authenticator")
		// A token naming the new key but signed with the old one fails.
		forged := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": u.ID, "iss": "worldforge", "scope": "*", "exp": clk.Now().Add(time.Hour).Unix()})
		forged.Header["kid"] = kid
		oldKey := []byte("not the key at all, 32 bytes lon")
		if s, err := forged.SignedString(oldKey); err == nil {
			wantUnauthorized(t, a2, s, "token naming the new key, signed with another")
		}
		// A second rotation makes the first new token old as well.
		if _, err := a2.RotateKey(ctx); err != nil {
			t.Fatal(err)
		}
		clk.Advance(auth.DefaultCacheTTL)
		wantUnauthorized(t, a1, fresh, "after a second rotation elsewhere")
	})
}

// TestKeyUseRecorded checks that a verified key's use is written to the
// store at most once per TouchEvery per key, and that the map of recent
// records stays bounded.
func TestKeyUseRecorded(t *testing.T) {
	db := dbtest.Open(t)
	clk := newClock()
	// The cache is off so that every Authenticate verifies the key.
	a := newAuth(t, db, &auth.Options{CacheTTL: -1, Now: clk.Now})
	u := newUser(t, db, "Ada")
	ctx := context.Background()
	secret, k, err := a.MintKey(ctx, u.ID, "laptop", []string{wf.ScopeAll})
	if err != nil {
		t.Fatal(err)
	}
	lastUsed := func() *time.Time {
		t.Helper()
		got, err := db.FindAPIKeyByID(ctx, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.LastUsedAt
	}
	if lu := lastUsed(); lu != nil {
		t.Fatalf("a new key has LastUsedAt %v", lu)
	}
	authenticate := func() {
		t.Helper()
		if _, err := a.Authenticate(ctx, secret); err != nil {
			t.Fatal(err)
		}
	}
	first := clk.Now()
	authenticate()
	if lu := lastUsed(); lu == nil || !lu.Equal(first) {
		t.Fatalf("LastUsedAt = %v, want %v", lu, first)
	}
	// Within the minute: verified again, not recorded again.
	clk.Advance(auth.TouchEvery - time.Second)
	authenticate()
	if lu := lastUsed(); !lu.Equal(first) {
		t.Errorf("LastUsedAt = %v within a minute, want %v", lu, first)
	}
	// A minute after the record: recorded.
	clk.Advance(time.Second)
	authenticate()
	if lu := lastUsed(); !lu.Equal(clk.Now()) {
		t.Errorf("LastUsedAt = %v after a minute, want %v", lu, clk.Now())
	}
	// A refused key records nothing.
	if err := a.RevokeKey(ctx, secret); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * auth.TouchEvery)
	before := lastUsed()
	wantUnauthorized(t, a, secret, "revoked")
	if lu := lastUsed(); !lu.Equal(*before) {
		t.Errorf("a refused key's use was recorded: %v", lu)
	}

	// The map is bounded: with room for two, a third key makes room.
	a.SetMaxTouchedForTest(2)
	var secrets []string
	for range 3 {
		secrets = append(secrets, createKey(t, a, u.ID, wf.ScopeAll))
	}
	for _, s := range secrets {
		if _, err := a.Authenticate(ctx, s); err != nil {
			t.Fatal(err)
		}
		if n := a.TouchedForTest(); n > 2 {
			t.Errorf("%d keys remembered, bound 2", n)
		}
	}
	for i, s := range secrets {
		k, err := db.FindAPIKeyByHash(ctx, auth.HashKey(s))
		if err != nil {
			t.Fatal(err)
		}
		if k.LastUsedAt == nil || !k.LastUsedAt.Equal(clk.Now()) {
			t.Errorf("key %d: LastUsedAt %v, want %v", i, k.LastUsedAt, clk.Now())
		}
	}
}
