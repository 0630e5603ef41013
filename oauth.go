package worldforge

import (
	"context"
	"encoding/json"
	"time"
)

// OAuth records (package authserver issues them, package auth accepts the
// access tokens). Codes and tokens are stored as the SHA-256 of their
// secret only.

// OAuthClient is a registered OAuth client: one made by dynamic client
// registration, or one known by its client ID metadata document URL.
type OAuthClient struct {
	ID   string
	Name string
	// Document is the client's validated metadata (JSON), as registered
	// or as last fetched.
	Document  json.RawMessage
	CreatedAt time.Time
	UpdatedAt time.Time
}

// OAuthCode is an authorization code: granted by a person on the consent
// page, spent once at the token endpoint.
type OAuthCode struct {
	Hash        []byte
	ClientID    string
	UserID      string
	RedirectURI string
	Resource    string
	// Challenge is the PKCE S256 code challenge.
	Challenge string
	Scopes    []string
	// GrantID names the token family its exchange makes (and that a
	// second use of the code revokes).
	GrantID   string
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
}

// OAuthGrant is a token family: what one consent granted one client, for
// one person and one resource. Every access and refresh token issued
// from one code belongs to it; revoking it ends them all.
type OAuthGrant struct {
	ID         string
	ClientID   string
	UserID     string
	Resource   string
	Scopes     []string
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
	// ClientName is the client's name (read with the grant, for lists).
	ClientName string
}

// OAuth token kinds.
const (
	OAuthAccess  = "access"
	OAuthRefresh = "refresh"
)

// OAuthToken is an access or refresh token of a grant.
type OAuthToken struct {
	Hash      []byte
	GrantID   string
	Kind      string
	CreatedAt time.Time
	ExpiresAt time.Time
	// UsedAt is when a refresh token was rotated (spent).
	UsedAt *time.Time
}

// OAuth conflict details (conflict: <detail>).
const (
	DetailCodeUsed       = "oauth_code_used"
	DetailCodeExpired    = "oauth_code_expired"
	DetailRefreshReused  = "oauth_refresh_reused"
	DetailRefreshExpired = "oauth_refresh_expired"
	DetailGrantRevoked   = "oauth_grant_revoked"
)

// OAuthStore keeps OAuth clients, codes, grants and tokens.
type OAuthStore interface {
	// SaveOAuthClient stores c, replacing the name and document of a
	// client with the same id.
	SaveOAuthClient(ctx context.Context, c *OAuthClient) error
	// FindOAuthClient returns the client, or not_found.
	FindOAuthClient(ctx context.Context, id string) (*OAuthClient, error)
	// CreateOAuthCode stores an unused code.
	CreateOAuthCode(ctx context.Context, c *OAuthCode) error
	// FindOAuthCode returns the code with that hash, used or expired
	// included, or not_found.
	FindOAuthCode(ctx context.Context, hash []byte) (*OAuthCode, error)
	// ExchangeOAuthCode spends the code (once: of concurrent calls one
	// wins) and stores the grant (code.GrantID) with its first tokens. A
	// code used before is conflict: oauth_code_used, and the grant made
	// by its first use is revoked; one past its expiry at now is
	// conflict: oauth_code_expired; an unknown one not_found.
	ExchangeOAuthCode(ctx context.Context, hash []byte, now time.Time, g *OAuthGrant, tokens ...*OAuthToken) error
	// RotateOAuthRefresh spends the refresh token (once) and stores the
	// new tokens in its grant, which it returns. A refresh token spent
	// before is conflict: oauth_refresh_reused, and its whole grant is
	// revoked; an expired one conflict: oauth_refresh_expired; one of a
	// revoked grant conflict: oauth_grant_revoked; an unknown one
	// not_found.
	RotateOAuthRefresh(ctx context.Context, hash []byte, now time.Time, tokens ...*OAuthToken) (*OAuthGrant, error)
	// FindOAuthToken returns the token with that hash and its grant, or
	// not_found.
	FindOAuthToken(ctx context.Context, hash []byte) (*OAuthToken, *OAuthGrant, error)
	// RevokeOAuthGrant revokes the grant (keeping the first revocation
	// time); not_found when there is none.
	RevokeOAuthGrant(ctx context.Context, id string) error
	// RevokeUserOAuthClient revokes every live grant of the client for
	// the user and returns how many.
	RevokeUserOAuthClient(ctx context.Context, userID, clientID string) (int, error)
	// TouchOAuthGrant records the grant's use at now (unless a later use
	// is recorded).
	TouchOAuthGrant(ctx context.Context, id string, at time.Time) error
	// ListOAuthGrants returns the user's live grants, newest first, with
	// their clients' names.
	ListOAuthGrants(ctx context.Context, userID string) ([]OAuthGrant, error)
	// PruneOAuth deletes the codes and tokens that expired before
	// before, and returns how many. Grants stay (the connected apps'
	// history).
	PruneOAuth(ctx context.Context, before time.Time) (int, error)
}
