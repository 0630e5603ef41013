package app

import (
	"context"
	"slices"
	"strings"

	wf "github.com/worldforge-go/worldforge"
)

// The console's account operations: the caller's own API keys (listed,
// not audited; minted and revoked, audited with target api_key) and the
// audit log as the caller may read it (their own rows and those of the
// worlds they own or run as GM).

// Minter makes and stores an API key for a user and returns its secret
// (shown once) and its row. auth.(*Authenticator).MintKey is one; it
// checks the name (at most auth.MaxKeyName characters, no control
// characters) and answers bad_request for a bad one. The Service is given
// it by the caller so that this package does not depend on package auth.
type Minter func(ctx context.Context, userID, name string, scopes []string) (string, *wf.APIKey, error)

// Audit log pages: AuditQuery.Limit defaults to AuditPageDefault and may
// be at most AuditPageMax. An export pages through every row.
const (
	AuditPageDefault = 50
	AuditPageMax     = 500
)

// AuditOutcomes are the outcomes an audit row may have, the values
// AuditQuery.Outcome accepts.
var AuditOutcomes = []string{"ok", "committed", "rejected", "auto_accepted"}

// ListAPIKeys lists the caller's API keys, revoked ones included, newest
// first.
func (s *Service) ListAPIKeys(ctx context.Context, r Request) ([]wf.APIKey, error) {
	return run(ctx, s, r, OpListAPIKeys, func(c *call) ([]wf.APIKey, error) {
		keys, err := s.store.ListAPIKeys(ctx, c.owner)
		if err != nil {
			return nil, storeErr(err)
		}
		if keys == nil {
			keys = []wf.APIKey{}
		}
		return keys, nil
	})
}

// CreateAPIKey mints an API key of the caller's with mint. The scopes
// must be known ones (bad_request otherwise, as for none) and ones the
// caller holds: a session signed in with a limited key cannot mint a
// wider one (missing_scopes naming each scope it lacks). The secret is in
// the result only; the audit row names the key (target api_key).
func (s *Service) CreateAPIKey(ctx context.Context, r Request, args KeyArgs, mint Minter) (*NewKey, error) {
	return run(ctx, s, r, OpCreateAPIKey, func(c *call) (*NewKey, error) {
		scopes, err := keyScopes(args.Scopes)
		if err != nil {
			return nil, err
		}
		if err := r.Actor.RequireScopes(scopes...); err != nil {
			return nil, err
		}
		secret, k, err := mint(ctx, c.owner, args.Name, scopes)
		if err != nil {
			return nil, storeErr(err)
		}
		c.target("api_key", k.ID, "")
		return &NewKey{Secret: secret, Key: k}, nil
	})
}

// keyScopes checks a new key's scopes: each a known scope, at least one;
// duplicates are dropped.
func keyScopes(in []string) ([]string, error) {
	var out []string
	for _, s := range in {
		s = strings.TrimSpace(s)
		if !slices.Contains(wf.AllScopes, s) {
			return nil, wf.BadRequest("unknown scope %q (known: %s)", s, strings.Join(wf.AllScopes, ","))
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, wf.BadRequest("an API key needs at least one scope")
	}
	return out, nil
}

// RevokeAPIKey revokes one of the caller's keys; anyone else's, or a
// missing one, is not_found (a malformed id is bad_request). Revoking a revoked key is not an error. The
// servers stop accepting it within their credential cache's TTL.
func (s *Service) RevokeAPIKey(ctx context.Context, r Request, keyID string) error {
	_, err := run(ctx, s, r, OpRevokeAPIKey, func(c *call) (struct{}, error) {
		if !wf.ValidID("key", keyID) {
			return struct{}{}, wf.BadRequest("%q is not an API key id", keyID)
		}
		if err := s.store.RevokeUserAPIKey(ctx, c.owner, keyID); err != nil {
			return struct{}{}, storeErr(err)
		}
		c.target("api_key", keyID, "")
		return struct{}{}, nil
	})
	return err
}

// ListAudit answers a page of the audit rows the caller may read — their
// own and those of the worlds they own or run as GM — newest first. A
// WorldID must be such a world (not_found otherwise, as for a missing
// one); Outcome must be one of AuditOutcomes; Since must be before Until
// when both are set; Limit is 0 (AuditPageDefault) to AuditPageMax.
func (s *Service) ListAudit(ctx context.Context, r Request, q AuditQuery) (*AuditPage, error) {
	return run(ctx, s, r, OpListAudit, func(c *call) (*AuditPage, error) {
		if err := q.check(); err != nil {
			return nil, err
		}
		if q.WorldID != "" {
			if err := s.ownerOrGM(ctx, c, q.WorldID); err != nil {
				return nil, err
			}
		}
		limit := q.Limit
		if limit == 0 {
			limit = AuditPageDefault
		}
		rows, err := s.store.ListAudit(ctx, wf.AuditFilter{
			ActorID: q.ActorID, KeyID: q.KeyID, Tool: q.Tool, Route: q.Route, WorldID: q.WorldID, Outcome: q.Outcome,
			Since: q.Since, Until: q.Until, Viewer: c.owner, BeforeSeq: q.BeforeSeq, Limit: limit + 1,
		})
		if err != nil {
			return nil, storeErr(err)
		}
		page := &AuditPage{Entries: rows}
		if len(rows) > limit {
			page.Entries = rows[:limit]
			page.NextSeq = rows[limit-1].Seq
		}
		if page.Entries == nil {
			page.Entries = []wf.AuditEntry{}
		}
		return page, nil
	})
}

// maxAuditRoute bounds a route filter (a route pattern, perhaps with
// "console " before it).
const maxAuditRoute = 200

// check refuses a query no page can answer.
func (q *AuditQuery) check() error {
	for _, f := range []struct {
		name, value string
		max         int
	}{{"world", q.WorldID, wf.MaxIDLength}, {"actor", q.ActorID, wf.MaxIDLength}, {"key", q.KeyID, wf.MaxIDLength},
		{"tool", q.Tool, wf.MaxIDLength}, {"route", q.Route, maxAuditRoute}} {
		if err := wf.CheckLength(f.name, f.value, f.max); err != nil {
			return err
		}
	}
	switch {
	case q.Outcome != "" && !slices.Contains(AuditOutcomes, q.Outcome):
		return wf.BadRequest("unknown outcome %q (known: %s)", q.Outcome, strings.Join(AuditOutcomes, ", "))
	case !q.Since.IsZero() && !q.Until.IsZero() && !q.Since.Before(q.Until):
		return wf.BadRequest("since (%s) must be before until (%s)", q.Since.UTC().Format("2006-01-02 15:04:05"), q.Until.UTC().Format("2006-01-02 15:04:05"))
	case q.Limit < 0 || q.Limit > AuditPageMax:
		return wf.BadRequest("limit must be between 1 and %d", AuditPageMax)
	case q.BeforeSeq < 0:
		return wf.BadRequest("before must be a positive position in the log")
	}
	return nil
}
