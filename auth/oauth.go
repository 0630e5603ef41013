package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/worldforge-go/worldforge"
)

// OAuth access tokens.
//
// The built-in authorization server (package authserver) issues opaque
// access tokens "wfa_<32 base32 characters>" (160 random bits) and
// refresh tokens "wfr_…"; the store keeps only their SHA-256, in a grant
// (token family) that names the client, the person, the resource and
// the scopes granted. Authenticate accepts an access token that is
// unexpired, of a live grant, and bound to this server's resource
// (Options.Resource): the actor is the grant's person with exactly the
// grant's scopes, its KeyID the grant's id (so audit rows and rate
// limits tell one connected app from another). Verified tokens are
// cached for CacheTTL like API keys, so a revoked grant is refused by
// every replica within it.

// OAuth secret prefixes.
const (
	AccessPrefix  = "wfa_"
	RefreshPrefix = "wfr_"
)

// NewOAuthSecret returns prefix + 32 base32 characters (160 random bits)
// and its stored hash.
func NewOAuthSecret(prefix string) (string, []byte, error) {
	s, err := newSecret(prefix)
	if err != nil {
		return "", nil, err
	}
	return s, hashSecret(s), nil
}

// WellFormedOAuth reports whether s is prefix + 32 base32 characters.
func WellFormedOAuth(prefix, s string) bool { return wellFormed(prefix, s) }

// HashOAuth is the stored form of an OAuth code or token.
func HashOAuth(s string) []byte { return hashSecret(s) }

func (a *Authenticator) oauthStore() (worldforge.OAuthStore, error) {
	s, ok := a.store.(worldforge.OAuthStore)
	if !ok {
		return nil, errors.New("auth: the store keeps no oauth tokens")
	}
	return s, nil
}

// verifyAccess checks an OAuth access token.
func (a *Authenticator) verifyAccess(ctx context.Context, token string) (*worldforge.Actor, time.Time, error) {
	if a.resource == "" || !wellFormed(AccessPrefix, token) {
		return nil, time.Time{}, worldforge.ErrUnauthorized
	}
	st, err := a.oauthStore()
	if err != nil {
		return nil, time.Time{}, worldforge.ErrUnauthorized
	}
	tok, g, err := st.FindOAuthToken(ctx, hashSecret(token))
	if errors.Is(err, worldforge.ErrNotFound) {
		return nil, time.Time{}, worldforge.ErrUnauthorized
	} else if err != nil {
		return nil, time.Time{}, fmt.Errorf("verify access token: %w", err)
	}
	now := a.now()
	if tok.Kind != worldforge.OAuthAccess || g.RevokedAt != nil || !now.Before(tok.ExpiresAt) || g.Resource != a.resource {
		return nil, time.Time{}, worldforge.ErrUnauthorized
	}
	owner, err := a.resolveOwner(ctx, g.UserID)
	if err != nil {
		return nil, time.Time{}, err
	}
	a.touchWith(ctx, "grant:"+g.ID, func(at time.Time) error { return st.TouchOAuthGrant(ctx, g.ID, at) })
	return &worldforge.Actor{UserID: owner, KeyID: g.ID, Kind: worldforge.CredentialOAuth, Scopes: g.Scopes}, tok.ExpiresAt, nil
}

// ForgetOAuth drops every cached OAuth access token of this server, so
// that a revocation made here is honoured here at once (other replicas
// within the cache TTL).
func (a *Authenticator) ForgetOAuth() {
	a.mu.Lock()
	for k := range a.cache {
		if strings.HasPrefix(k, AccessPrefix) {
			delete(a.cache, k)
		}
	}
	a.mu.Unlock()
}
