package worldforge

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Scopes an API key may carry. A session JWT carries ScopeAll.
const (
	ScopeAll             = "*"
	ScopeWorldRead       = "world:read"
	ScopeWorldWrite      = "world:write"
	ScopeCampaignRead    = "campaign:read"
	ScopeCampaignWrite   = "campaign:write"
	ScopeQuestRead       = "quest:read"
	ScopeQuestWrite      = "quest:write"
	ScopeQuestCommit     = "quest:commit"
	ScopeEncounterRead   = "encounter:read"
	ScopeEncounterWrite  = "encounter:write"
	ScopeEncounterCommit = "encounter:commit"
	ScopeWikiRead        = "wiki:read"
	ScopeWikiPropose     = "wiki:propose"
	ScopeAtlasRead       = "atlas:read"
	ScopeAtlasPropose    = "atlas:propose"
	ScopeLoreRead        = "lore:read"
	ScopeLorePropose     = "lore:propose"
)

// AllScopes lists every scope a key may be given, ScopeAll first.
var AllScopes = []string{
	ScopeAll,
	ScopeWorldRead, ScopeWorldWrite,
	ScopeCampaignRead, ScopeCampaignWrite,
	ScopeQuestRead, ScopeQuestWrite, ScopeQuestCommit,
	ScopeEncounterRead, ScopeEncounterWrite, ScopeEncounterCommit,
	ScopeWikiRead, ScopeWikiPropose,
	ScopeAtlasRead, ScopeAtlasPropose,
	ScopeLoreRead, ScopeLorePropose,
}

// ParseScopes splits a comma-separated scope list, trims blanks, drops
// duplicates and rejects unknown scopes and an empty list.
func ParseScopes(s string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !slices.Contains(AllScopes, part) {
			return nil, BadRequest("unknown scope %q (known: %s)", part, strings.Join(AllScopes, ","))
		}
		if !slices.Contains(out, part) {
			out = append(out, part)
		}
	}
	if len(out) == 0 {
		return nil, BadRequest("no scopes given")
	}
	return out, nil
}

// CredentialKind says how an actor authenticated.
type CredentialKind string

const (
	CredentialAPIKey  CredentialKind = "api_key"
	CredentialSession CredentialKind = "session"
	// CredentialOAuth is an OAuth access token (package authserver
	// issues them); the actor's KeyID is then its grant's id.
	CredentialOAuth CredentialKind = "oauth"
)

// Actor is the authenticated caller of a request.
type Actor struct {
	// UserID is the effective owner: the user of a session, or the user that
	// owns an API key. It is empty when the credential names no existing user
	// (tools then answer missing_scopes:unresolved_owner).
	UserID string
	// KeyID identifies the API key used, if any. It is not the secret.
	KeyID  string
	Kind   CredentialKind
	Scopes []string
}

// HasScope reports whether the actor holds scope s (or ScopeAll).
func (a *Actor) HasScope(s string) bool {
	for _, have := range a.Scopes {
		if have == s || have == ScopeAll {
			return true
		}
	}
	return false
}

// RequireScopes returns missing_scopes naming every scope in need that the
// actor lacks, or nil.
func (a *Actor) RequireScopes(need ...string) error {
	var missing []string
	for _, s := range need {
		if !a.HasScope(s) {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		return MissingScopes(missing...)
	}
	return nil
}

// RequireAnyScope passes when the actor holds at least one of the scopes;
// otherwise it names them all as missing.
func (a *Actor) RequireAnyScope(any ...string) error {
	for _, s := range any {
		if a.HasScope(s) {
			return nil
		}
	}
	return MissingScopes(any...)
}

// Owner returns the effective owner id, or missing_scopes:unresolved_owner.
func (a *Actor) Owner() (string, error) {
	if a == nil || a.UserID == "" {
		return "", MissingScopes(UnresolvedOwner)
	}
	return a.UserID, nil
}

// String names the actor for logs without revealing any credential.
func (a *Actor) String() string {
	if a.KeyID != "" {
		return fmt.Sprintf("user=%s key=%s", a.UserID, a.KeyID)
	}
	return fmt.Sprintf("user=%s session", a.UserID)
}

// TokenInfoActorKey is the key under which the HTTP layer stores the
// *Actor in the go-sdk's auth.TokenInfo.Extra, where the MCP tool handlers
// find it.
const TokenInfoActorKey = "worldforge.actor"

type actorKey struct{}

// NewContext returns a context carrying the actor.
func NewContext(ctx context.Context, a *Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFromContext returns the actor of the context, or nil.
func ActorFromContext(ctx context.Context) *Actor {
	a, _ := ctx.Value(actorKey{}).(*Actor)
	return a
}
