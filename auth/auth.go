// Package auth turns bearer credentials into actors.
//
// Three kinds of credential are accepted:
//
//   - API keys "wk_live_<32 base32 characters>" (160 random bits). Only the
//     SHA-256 of a key is stored; a plain hash is enough because the secret
//     has full entropy. The lookup is an indexed equality on the hash, and
//     the hash found is compared again with subtle.ConstantTimeCompare; the
//     secret itself is never compared, logged or stored. A verified key is
//     cached for at most CacheTTL (default 500 ms), which bounds how long a
//     revocation through another replica takes to be honoured. A key's
//     use is recorded in the store (LastUsedAt) when it is verified, at
//     most once per TouchEvery per key and server.
//   - Session JWTs (HS256, via github.com/golang-jwt/jwt/v5) signed with a
//     key kept in the store (secret "jwt-signing-key", made on first start),
//     so a token minted by the CLI validates in every server on that
//     database. A session carries scope "*" and an expiry, and names its
//     key in the "kid" header. RotateKey (worldforge token rotate-key)
//     replaces the key: every token signed with the old one is refused from
//     then on. Each server re-reads the key at most CacheTTL after it last
//     did, and at once (at most every keyRecheck) when a token names a key
//     it does not hold, so a rotation through one replica reaches the
//     others within about a second.
//   - OAuth access tokens "wfa_…" that the built-in authorization server
//     (package authserver) issues, bound to this server's resource and
//     carrying the scopes a person granted (oauth.go).
//
// Either way the actor's effective owner is a user id checked to exist; a
// credential whose user is gone authenticates with an empty owner, and the
// tools answer missing_scopes:unresolved_owner.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"

	"github.com/worldforge-go/worldforge"
)

// KeyPrefix starts every API key.
const KeyPrefix = "wk_live_"

const (
	keyRandomBytes = 20 // 160 bits
	keyBodyLen     = 32 // base32 characters of 20 bytes
	secretName     = "jwt-signing-key"
	issuer         = "worldforge"
	// keyRecheck limits how often a token naming an unknown key makes the
	// server re-read the signing key.
	keyRecheck = 100 * time.Millisecond
)

// DefaultCacheTTL bounds how long a verified credential is trusted without
// asking the store again.
const DefaultCacheTTL = 500 * time.Millisecond

var keyEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// Store is what the authenticator needs of the store.
type Store interface {
	worldforge.UserStore
	worldforge.KeyStore
	Secret(ctx context.Context, name string, gen func() ([]byte, error)) ([]byte, error)
	ReplaceSecret(ctx context.Context, name string, value []byte) error
}

// Options configure an Authenticator. The zero value is usable.
type Options struct {
	// CacheTTL is how long a verified credential is cached; 0 means
	// DefaultCacheTTL, a negative value disables the cache.
	CacheTTL time.Duration
	// Now replaces the clock (tests).
	Now func() time.Time
	// SessionTTL is how long a console session lasts; 0 means
	// DefaultSessionTTL.
	SessionTTL time.Duration
	// Logger receives the errors of recording a key's use (nil:
	// slog.Default()).
	Logger *slog.Logger
	// Resource is the resource indicator OAuth access tokens must be
	// bound to (this server's MCP endpoint URL); "" refuses them all.
	Resource string
}

// Authenticator verifies credentials and mints them.
type Authenticator struct {
	store      Store
	ttl        time.Duration
	now        func() time.Time
	sessionTTL time.Duration

	mu    sync.Mutex
	cache map[string]cacheEntry

	log        *slog.Logger
	touchMu    sync.Mutex
	touched    map[string]time.Time // key id → when its use was last recorded
	maxTouched int

	keyMu     sync.Mutex
	jwtKey    signingKey
	keyLoaded time.Time

	resource string
}

// signingKey is the JWT signing key with its id.
type signingKey struct {
	secret []byte
	id     string
}

func newSigningKey(secret []byte) (signingKey, error) {
	if len(secret) < 32 {
		return signingKey{}, fmt.Errorf("jwt signing key is %d bytes, want 32", len(secret))
	}
	sum := sha256.Sum256(secret)
	return signingKey{secret: secret, id: hex.EncodeToString(sum[:8])}, nil
}

func randomKey() ([]byte, error) {
	b := make([]byte, 32)
	_, err := rand.Read(b)
	return b, err
}

type cacheEntry struct {
	actor   *worldforge.Actor
	session *SignedIn // for a console session
	expires time.Time
}

const maxCacheEntries = 10000

// TouchEvery is how often a key's use is recorded (TouchAPIKey) at most,
// per key and per server: LastUsedAt is right to within about that.
const TouchEvery = time.Minute

// maxTouched bounds the map of keys recently recorded.
const maxTouched = 10000

// New loads (or makes) the JWT signing key and returns an Authenticator.
func New(ctx context.Context, store Store, opts *Options) (*Authenticator, error) {
	a := &Authenticator{store: store, ttl: DefaultCacheTTL, now: time.Now, cache: map[string]cacheEntry{}, sessionTTL: DefaultSessionTTL,
		log: slog.Default(), touched: map[string]time.Time{}, maxTouched: maxTouched}
	if opts != nil {
		if opts.SessionTTL > 0 {
			a.sessionTTL = opts.SessionTTL
		}
		if opts.Logger != nil {
			a.log = opts.Logger
		}
		if opts.CacheTTL != 0 {
			a.ttl = opts.CacheTTL
		}
		if opts.Now != nil {
			a.now = opts.Now
		}
		a.resource = opts.Resource
	}
	if _, err := a.loadKey(ctx); err != nil {
		return nil, err
	}
	return a, nil
}

// loadKey reads the signing key from the store (making it on first use).
func (a *Authenticator) loadKey(ctx context.Context) (signingKey, error) {
	raw, err := a.store.Secret(ctx, secretName, randomKey)
	if err != nil {
		return signingKey{}, fmt.Errorf("load jwt signing key: %w", err)
	}
	k, err := newSigningKey(raw)
	if err != nil {
		return signingKey{}, fmt.Errorf("load jwt signing key: %w", err)
	}
	a.keyMu.Lock()
	a.jwtKey, a.keyLoaded = k, a.now()
	a.keyMu.Unlock()
	return k, nil
}

// currentKey returns the signing key, re-reading it when it is older than
// the cache TTL, or when wantID names another key and the last read is
// older than keyRecheck.
func (a *Authenticator) currentKey(ctx context.Context, wantID string) (signingKey, error) {
	a.keyMu.Lock()
	k, age := a.jwtKey, a.now().Sub(a.keyLoaded)
	a.keyMu.Unlock()
	stale := age >= a.ttl || (wantID != "" && wantID != k.id && age >= keyRecheck)
	if !stale {
		return k, nil
	}
	return a.loadKey(ctx)
}

// RotateKey replaces the JWT signing key with a new random one and returns
// its id. Every token signed with the old key is refused from then on (by
// other servers on the same database within about a second).
func (a *Authenticator) RotateKey(ctx context.Context) (string, error) {
	raw, err := randomKey()
	if err != nil {
		return "", fmt.Errorf("rotate jwt signing key: %w", err)
	}
	k, err := newSigningKey(raw)
	if err != nil {
		return "", err
	}
	if err := a.store.ReplaceSecret(ctx, secretName, raw); err != nil {
		return "", fmt.Errorf("rotate jwt signing key: %w", err)
	}
	a.keyMu.Lock()
	a.jwtKey, a.keyLoaded = k, a.now()
	a.keyMu.Unlock()
	a.mu.Lock()
	clear(a.cache)
	a.mu.Unlock()
	return k.id, nil
}

// HashKey returns the stored form of an API key.
func HashKey(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// WellFormedKey reports whether s has the shape of an API key.
func WellFormedKey(s string) bool {
	body, ok := strings.CutPrefix(s, KeyPrefix)
	if !ok || len(body) != keyBodyLen {
		return false
	}
	for _, c := range body {
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// CreateKey makes an API key for the user with the given scopes and returns
// its secret, which is shown this once and never stored.
func (a *Authenticator) CreateKey(ctx context.Context, userID string, scopes []string) (string, *worldforge.APIKey, error) {
	return a.MintKey(ctx, userID, "", scopes)
}

// MaxKeyName is the longest key name, in characters.
const MaxKeyName = 100

// MintKey is CreateKey for a key with a name (at most MaxKeyName
// characters, no control characters; "" for none).
func (a *Authenticator) MintKey(ctx context.Context, userID, name string, scopes []string) (string, *worldforge.APIKey, error) {
	name = strings.TrimSpace(name)
	if utf8.RuneCountInString(name) > MaxKeyName || !utf8.ValidString(name) || strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return "", nil, worldforge.BadRequest("a key name is at most %d characters, without control characters", MaxKeyName)
	}
	if len(scopes) == 0 {
		return "", nil, worldforge.BadRequest("an API key needs at least one scope")
	}
	for _, s := range scopes {
		if _, err := worldforge.ParseScopes(s); err != nil {
			return "", nil, err
		}
	}
	b := make([]byte, keyRandomBytes)
	if _, err := rand.Read(b); err != nil {
		return "", nil, fmt.Errorf("create key: %w", err)
	}
	secret := KeyPrefix + keyEncoding.EncodeToString(b)
	k := &worldforge.APIKey{
		ID:     worldforge.NewID("key"),
		UserID: userID,
		Hash:   HashKey(secret),
		Prefix: secret[:len(KeyPrefix)+4],
		Scopes: scopes,
		Name:   name,
	}
	if err := a.store.CreateAPIKey(ctx, k); err != nil {
		return "", nil, fmt.Errorf("create key: %w", err)
	}
	return secret, k, nil
}

// RevokeKey revokes the key with the given secret. The local cache forgets
// it at once; other replicas stop accepting it within the cache TTL.
func (a *Authenticator) RevokeKey(ctx context.Context, secret string) error {
	if !WellFormedKey(secret) {
		return worldforge.BadRequest("not an API key")
	}
	if err := a.store.RevokeAPIKey(ctx, HashKey(secret)); err != nil {
		return fmt.Errorf("revoke key: %w", err)
	}
	a.mu.Lock()
	delete(a.cache, secret)
	a.mu.Unlock()
	return nil
}

// claims are a session JWT's claims.
type claims struct {
	Scope string `json:"scope"`
	jwt.RegisteredClaims
}

// IssueToken mints a session JWT for the user, valid for ttl.
func (a *Authenticator) IssueToken(ctx context.Context, userID string, ttl time.Duration) (string, error) {
	if ttl <= 0 {
		return "", worldforge.BadRequest("token ttl must be positive")
	}
	if _, err := a.store.FindUserByID(ctx, userID); err != nil {
		return "", fmt.Errorf("issue token: %w", err)
	}
	now := a.now()
	c := claims{
		Scope: worldforge.ScopeAll,
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    issuer,
			Subject:   userID,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
			ID:        worldforge.NewID("jti"),
		},
	}
	k, err := a.currentKey(ctx, "")
	if err != nil {
		return "", err
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, c)
	tok.Header["kid"] = k.id
	return tok.SignedString(k.secret)
}

// Authenticate verifies a bearer token and returns its actor. Any failure
// to verify is ErrUnauthorized; store failures are returned wrapped.
func (a *Authenticator) Authenticate(ctx context.Context, token string) (*worldforge.Actor, error) {
	if token == "" || len(token) > 4096 {
		return nil, worldforge.ErrUnauthorized
	}
	now := a.now()
	if a.ttl > 0 {
		a.mu.Lock()
		e, ok := a.cache[token]
		a.mu.Unlock()
		if ok && now.Before(e.expires) && e.session == nil {
			return e.actor, nil
		}
	}
	var (
		actor   *worldforge.Actor
		expires time.Time
		err     error
	)
	if strings.HasPrefix(token, KeyPrefix) {
		actor, err = a.verifyKey(ctx, token)
		expires = now.Add(a.ttl)
	} else if strings.HasPrefix(token, AccessPrefix) {
		actor, expires, err = a.verifyAccess(ctx, token)
		if ttlEnd := now.Add(a.ttl); ttlEnd.Before(expires) {
			expires = ttlEnd
		}
	} else {
		actor, expires, err = a.verifyJWT(ctx, token)
		if ttlEnd := now.Add(a.ttl); ttlEnd.Before(expires) {
			expires = ttlEnd
		}
	}
	if err != nil {
		return nil, err
	}
	if a.ttl > 0 {
		a.remember(token, cacheEntry{actor: actor, expires: expires}, now)
	}
	return actor, nil
}

// remember caches a verified credential or session, making room first
// when the cache is full.
func (a *Authenticator) remember(secret string, e cacheEntry, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.cache) >= maxCacheEntries {
		for k, old := range a.cache {
			if !now.Before(old.expires) || len(a.cache) >= maxCacheEntries {
				delete(a.cache, k)
			}
		}
	}
	a.cache[secret] = e
}

func (a *Authenticator) verifyKey(ctx context.Context, secret string) (*worldforge.Actor, error) {
	if !WellFormedKey(secret) {
		return nil, worldforge.ErrUnauthorized
	}
	k, err := a.store.FindAPIKeyByHash(ctx, HashKey(secret))
	if errors.Is(err, worldforge.ErrNotFound) {
		return nil, worldforge.ErrUnauthorized
	} else if err != nil {
		return nil, fmt.Errorf("verify key: %w", err)
	}
	// The lookup was by hash; compare it again in constant time so that no
	// code path compares credential material byte by byte.
	if subtle.ConstantTimeCompare(k.Hash, HashKey(secret)) != 1 || k.RevokedAt != nil {
		return nil, worldforge.ErrUnauthorized
	}
	owner, err := a.resolveOwner(ctx, k.UserID)
	if err != nil {
		return nil, err
	}
	a.touch(ctx, k.ID)
	return &worldforge.Actor{UserID: owner, KeyID: k.ID, Kind: worldforge.CredentialAPIKey, Scopes: k.Scopes}, nil
}

// touch records the key's use in the store, unless this server recorded
// it less than TouchEvery ago (answers from the cache are not recorded
// either: the cache lives far shorter than TouchEvery). A failure is
// logged and the request goes on: the record is informational. The map
// of recent records is bounded: when full, the entries older than
// TouchEvery go, and if none is, all of them (a few extra writes).
func (a *Authenticator) touch(ctx context.Context, keyID string) {
	a.touchWith(ctx, keyID, func(at time.Time) error { return a.store.TouchAPIKey(ctx, keyID, at) })
}

// touchWith is touch for any credential: id names it in the map of
// recent records, record writes the use.
func (a *Authenticator) touchWith(ctx context.Context, keyID string, record func(time.Time) error) {
	now := a.now()
	a.touchMu.Lock()
	if last, ok := a.touched[keyID]; ok && !now.Before(last) && now.Sub(last) < TouchEvery {
		a.touchMu.Unlock()
		return
	}
	if len(a.touched) >= a.maxTouched {
		for k, t := range a.touched {
			if now.Sub(t) >= TouchEvery || now.Before(t) {
				delete(a.touched, k)
			}
		}
		if len(a.touched) >= a.maxTouched {
			clear(a.touched)
		}
	}
	a.touched[keyID] = now
	a.touchMu.Unlock()
	if err := record(now); err != nil {
		a.log.WarnContext(ctx, "auth: recording a credential's use failed", "key", keyID, "err", err)
	}
}

func (a *Authenticator) verifyJWT(ctx context.Context, token string) (*worldforge.Actor, time.Time, error) {
	var c claims
	var keyErr error
	_, err := jwt.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		k, err := a.currentKey(ctx, kid)
		if err != nil {
			keyErr = err
			return nil, err
		}
		if kid != "" && kid != k.id {
			return nil, worldforge.ErrUnauthorized
		}
		return k.secret, nil
	},
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(issuer),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(a.now),
		jwt.WithStrictDecoding(), // one spelling per signature: no variants of an issued token
	)
	if keyErr != nil {
		return nil, time.Time{}, keyErr
	}
	if err != nil || c.Subject == "" || c.Scope != worldforge.ScopeAll {
		return nil, time.Time{}, worldforge.ErrUnauthorized
	}
	owner, err := a.resolveOwner(ctx, c.Subject)
	if err != nil {
		return nil, time.Time{}, err
	}
	actor := &worldforge.Actor{UserID: owner, Kind: worldforge.CredentialSession, Scopes: []string{worldforge.ScopeAll}}
	return actor, c.ExpiresAt.Time, nil
}

// resolveOwner returns userID if that user exists, "" if not.
func (a *Authenticator) resolveOwner(ctx context.Context, userID string) (string, error) {
	if userID == "" {
		return "", nil
	}
	_, err := a.store.FindUserByID(ctx, userID)
	if errors.Is(err, worldforge.ErrNotFound) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("resolve owner: %w", err)
	}
	return userID, nil
}
