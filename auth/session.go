package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/worldforge-go/worldforge"
)

// Web console sessions and login links.
//
// A login link carries a one-time secret ("wfl_…"); using it makes a
// session. A session is a random secret ("wfs_…") the browser keeps in a
// cookie; the store keeps only its SHA-256, with the user, the scopes it
// acts with and its expiry. Signing in with an API key makes a session
// with that key's id and scopes only (and the session ends when the key
// is revoked); with a login link or a session JWT, one with every scope.
//
// Session (the check on each request) is cached for the authenticator's
// CacheTTL, like a credential: a revoked session (sign-out, `worldforge
// sessions revoke`, a revoked key) is refused by every replica within
// that time.

// Secret prefixes of login links and console sessions.
const (
	LinkPrefix    = "wfl_"
	SessionPrefix = "wfs_"
)

// Defaults for login links and sessions.
const (
	DefaultLinkTTL    = 15 * time.Minute
	MaxLinkTTL        = 7 * 24 * time.Hour
	DefaultSessionTTL = 12 * time.Hour
)

// newSecret returns prefix + 32 base32 characters (160 random bits).
func newSecret(prefix string) (string, error) {
	b := make([]byte, keyRandomBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return prefix + keyEncoding.EncodeToString(b), nil
}

// wellFormed reports whether s is prefix + 32 base32 characters.
func wellFormed(prefix, s string) bool {
	body, ok := strings.CutPrefix(s, prefix)
	if !ok || len(body) != 32 {
		return false
	}
	for _, c := range body {
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

func hashSecret(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// SessionStore is what sessions need of the store.
type SessionStore interface {
	worldforge.SessionStore
	FindUserByID(ctx context.Context, id string) (*worldforge.User, error)
	FindAPIKeyByID(ctx context.Context, id string) (*worldforge.APIKey, error)
}

func (a *Authenticator) sessions() (SessionStore, error) {
	s, ok := a.store.(SessionStore)
	if !ok {
		return nil, errors.New("auth: the store keeps no sessions")
	}
	return s, nil
}

// CreateLoginLink makes a one-time sign-in secret for the user, valid for
// ttl (DefaultLinkTTL when 0; at most MaxLinkTTL). The user must exist.
func (a *Authenticator) CreateLoginLink(ctx context.Context, userID string, ttl time.Duration) (string, *worldforge.LoginLink, error) {
	if ttl == 0 {
		ttl = DefaultLinkTTL
	}
	if ttl < 0 || ttl > MaxLinkTTL {
		return "", nil, worldforge.BadRequest("a login link lives between 1s and %s", MaxLinkTTL)
	}
	st, err := a.sessions()
	if err != nil {
		return "", nil, err
	}
	if _, err := st.FindUserByID(ctx, userID); err != nil {
		return "", nil, fmt.Errorf("login link: %w", err)
	}
	secret, err := newSecret(LinkPrefix)
	if err != nil {
		return "", nil, fmt.Errorf("login link: %w", err)
	}
	now := a.now()
	l := &worldforge.LoginLink{ID: worldforge.NewID("lnk"), Hash: hashSecret(secret), UserID: userID, CreatedAt: now, ExpiresAt: now.Add(ttl)}
	if err := st.CreateLoginLink(ctx, l); err != nil {
		return "", nil, fmt.Errorf("login link: %w", err)
	}
	return secret, l, nil
}

// UseLoginLink spends a login link and starts a session for its user
// with every scope. A link used before is conflict: login_link_used; one
// past its expiry conflict: login_link_expired; anything else that is
// not a live link is not_found.
func (a *Authenticator) UseLoginLink(ctx context.Context, link string) (string, *worldforge.Session, error) {
	if !wellFormed(LinkPrefix, link) {
		return "", nil, worldforge.ErrNotFound
	}
	st, err := a.sessions()
	if err != nil {
		return "", nil, err
	}
	l, err := st.UseLoginLink(ctx, hashSecret(link), a.now())
	if err != nil {
		return "", nil, err
	}
	return a.StartSession(ctx, &worldforge.Actor{UserID: l.UserID, Kind: worldforge.CredentialSession, Scopes: []string{worldforge.ScopeAll}})
}

// SignIn starts a session from a credential pasted into the sign-in
// form: an API key (the session acts with that key's scopes only) or a
// session JWT (every scope). A credential that does not verify is
// ErrUnauthorized.
func (a *Authenticator) SignIn(ctx context.Context, credential string) (string, *worldforge.Session, error) {
	actor, err := a.Authenticate(ctx, strings.TrimSpace(credential))
	if err != nil {
		return "", nil, err
	}
	if actor.UserID == "" {
		return "", nil, worldforge.ErrUnauthorized
	}
	return a.StartSession(ctx, actor)
}

// StartSession stores a new session for the actor (its user, key and
// scopes) and returns its secret.
func (a *Authenticator) StartSession(ctx context.Context, actor *worldforge.Actor) (string, *worldforge.Session, error) {
	st, err := a.sessions()
	if err != nil {
		return "", nil, err
	}
	secret, err := newSecret(SessionPrefix)
	if err != nil {
		return "", nil, fmt.Errorf("start session: %w", err)
	}
	now := a.now()
	s := &worldforge.Session{
		ID: worldforge.NewID("ses"), Hash: hashSecret(secret), UserID: actor.UserID, KeyID: actor.KeyID,
		Scopes: append([]string(nil), actor.Scopes...), CreatedAt: now, ExpiresAt: now.Add(a.sessionTTL),
	}
	if err := st.CreateSession(ctx, s); err != nil {
		return "", nil, fmt.Errorf("start session: %w", err)
	}
	return secret, s, nil
}

// SignedIn is a live console session: the session, the actor it acts as
// and its user.
type SignedIn struct {
	Session *worldforge.Session
	Actor   *worldforge.Actor
	User    *worldforge.User
}

// Session checks a session secret and returns the session, the actor it
// acts as and its user. An unknown, expired or revoked session, one whose
// API key has since been revoked, or one whose user is gone, is
// ErrUnauthorized.
func (a *Authenticator) Session(ctx context.Context, secret string) (*SignedIn, error) {
	if !wellFormed(SessionPrefix, secret) {
		return nil, worldforge.ErrUnauthorized
	}
	now := a.now()
	if a.ttl > 0 {
		a.mu.Lock()
		e, ok := a.cache[secret]
		a.mu.Unlock()
		if ok && now.Before(e.expires) && e.session != nil {
			return e.session, nil
		}
	}
	st, err := a.sessions()
	if err != nil {
		return nil, err
	}
	s, err := st.FindSessionByHash(ctx, hashSecret(secret))
	if errors.Is(err, worldforge.ErrNotFound) {
		return nil, worldforge.ErrUnauthorized
	} else if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	if s.RevokedAt != nil || !now.Before(s.ExpiresAt) {
		return nil, worldforge.ErrUnauthorized
	}
	kind := worldforge.CredentialSession
	if s.KeyID != "" {
		k, err := st.FindAPIKeyByID(ctx, s.KeyID)
		if errors.Is(err, worldforge.ErrNotFound) {
			return nil, worldforge.ErrUnauthorized
		} else if err != nil {
			return nil, fmt.Errorf("session: %w", err)
		}
		if k.RevokedAt != nil {
			return nil, worldforge.ErrUnauthorized
		}
		kind = worldforge.CredentialAPIKey
	}
	u, err := st.FindUserByID(ctx, s.UserID)
	if errors.Is(err, worldforge.ErrNotFound) {
		return nil, worldforge.ErrUnauthorized
	} else if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	in := &SignedIn{Session: s, User: u, Actor: &worldforge.Actor{UserID: u.ID, KeyID: s.KeyID, Kind: kind, Scopes: s.Scopes}}
	if a.ttl > 0 {
		expires := now.Add(a.ttl)
		if s.ExpiresAt.Before(expires) {
			expires = s.ExpiresAt
		}
		a.remember(secret, cacheEntry{actor: in.Actor, session: in, expires: expires}, now)
	}
	return in, nil
}

// EndSession revokes the session (sign-out). The local cache forgets it
// at once.
func (a *Authenticator) EndSession(ctx context.Context, secret string) error {
	if !wellFormed(SessionPrefix, secret) {
		return nil
	}
	st, err := a.sessions()
	if err != nil {
		return err
	}
	a.mu.Lock()
	delete(a.cache, secret)
	a.mu.Unlock()
	if err := st.RevokeSession(ctx, hashSecret(secret)); err != nil && !errors.Is(err, worldforge.ErrNotFound) {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}

// RevokeSessions revokes every live session of the user and returns how
// many. Every replica refuses them within the cache TTL.
func (a *Authenticator) RevokeSessions(ctx context.Context, userID string) (int, error) {
	st, err := a.sessions()
	if err != nil {
		return 0, err
	}
	n, err := st.RevokeUserSessions(ctx, userID)
	if err != nil {
		return 0, fmt.Errorf("revoke sessions: %w", err)
	}
	a.mu.Lock()
	for k, e := range a.cache {
		if e.session != nil && e.session.User.ID == userID {
			delete(a.cache, k)
		}
	}
	a.mu.Unlock()
	return n, nil
}
