package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/worldforge-go/worldforge"
)

// The OAuth store (worldforge.OAuthStore). A code's use and a refresh
// token's rotation are each one UPDATE whose predicate (unused,
// unexpired, of a live grant) the engine re-checks under the row's write
// lock, so of concurrent attempts exactly one succeeds; the loser reads
// the row afterwards to say why, and a second use revokes the grant.

// SaveOAuthClient implements worldforge.OAuthStore.
func (db *DB) SaveOAuthClient(ctx context.Context, c *worldforge.OAuthClient) error {
	if c.ID == "" || len(c.Document) == 0 {
		return wrap("save oauth client", worldforge.BadRequest("an oauth client needs an id and a document"))
	}
	c.CreatedAt = stamp(c.CreatedAt)
	c.UpdatedAt = stamp(c.UpdatedAt)
	_, err := db.writer.q().exec(ctx,
		`INSERT INTO oauth_clients (id, name, document, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, document = excluded.document, updated_at = excluded.updated_at`,
		c.ID, c.Name, string(c.Document), ms(c.CreatedAt), ms(c.UpdatedAt))
	return wrap("save oauth client", err)
}

// FindOAuthClient implements worldforge.OAuthStore.
func (db *DB) FindOAuthClient(ctx context.Context, id string) (*worldforge.OAuthClient, error) {
	var (
		c                worldforge.OAuthClient
		doc              string
		created, updated int64
	)
	err := db.reader.q().queryRow(ctx, "SELECT id, name, document, created_at, updated_at FROM oauth_clients WHERE id = ?", id).
		Scan(&c.ID, &c.Name, &doc, &created, &updated)
	if err != nil {
		return nil, wrap("find oauth client", err)
	}
	c.Document = json.RawMessage(doc)
	c.CreatedAt, c.UpdatedAt = fromMS(created), fromMS(updated)
	return &c, nil
}

const codeCols = "hash, client_id, user_id, redirect_uri, resource, challenge, scopes, grant_id, created_at, expires_at, used_at"

func scanCode(s scanner) (*worldforge.OAuthCode, error) {
	var (
		c                worldforge.OAuthCode
		scopes           string
		created, expires int64
		used             sql.NullInt64
	)
	if err := s.Scan(&c.Hash, &c.ClientID, &c.UserID, &c.RedirectURI, &c.Resource, &c.Challenge, &scopes, &c.GrantID,
		&created, &expires, &used); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(scopes), &c.Scopes); err != nil {
		return nil, fmt.Errorf("scopes: %w", err)
	}
	c.CreatedAt, c.ExpiresAt, c.UsedAt = fromMS(created), fromMS(expires), fromNullMS(used)
	return &c, nil
}

// CreateOAuthCode implements worldforge.OAuthStore.
func (db *DB) CreateOAuthCode(ctx context.Context, c *worldforge.OAuthCode) error {
	c.CreatedAt = stamp(c.CreatedAt)
	c.ExpiresAt = stamp(c.ExpiresAt)
	if err := checkSpan("oauth code", c.Hash, c.CreatedAt, c.ExpiresAt); err != nil {
		return wrap("create oauth code", err)
	}
	if c.GrantID == "" {
		return wrap("create oauth code", worldforge.BadRequest("an oauth code needs a grant id"))
	}
	scopes, err := marshalList(c.Scopes)
	if err != nil {
		return fmt.Errorf("create oauth code: %w", err)
	}
	_, err = db.writer.q().exec(ctx, "INSERT INTO oauth_codes ("+codeCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		c.Hash, c.ClientID, c.UserID, c.RedirectURI, c.Resource, c.Challenge, scopes, c.GrantID, ms(c.CreatedAt), ms(c.ExpiresAt), nil)
	return wrap("create oauth code", err)
}

// FindOAuthCode implements worldforge.OAuthStore.
func (db *DB) FindOAuthCode(ctx context.Context, hash []byte) (*worldforge.OAuthCode, error) {
	c, err := scanCode(db.writer.q().queryRow(ctx, "SELECT "+codeCols+" FROM oauth_codes WHERE hash = ?", hash))
	if err != nil {
		return nil, wrap("find oauth code", err)
	}
	return c, nil
}

func insertToken(ctx context.Context, q querier, t *worldforge.OAuthToken) error {
	t.CreatedAt = stamp(t.CreatedAt)
	t.ExpiresAt = stamp(t.ExpiresAt)
	if err := checkSpan("oauth token", t.Hash, t.CreatedAt, t.ExpiresAt); err != nil {
		return err
	}
	_, err := q.exec(ctx, "INSERT INTO oauth_tokens (hash, grant_id, kind, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?, ?)",
		t.Hash, t.GrantID, t.Kind, ms(t.CreatedAt), ms(t.ExpiresAt), nil)
	return err
}

// ExchangeOAuthCode implements worldforge.OAuthStore.
func (db *DB) ExchangeOAuthCode(ctx context.Context, hash []byte, at time.Time, g *worldforge.OAuthGrant, tokens ...*worldforge.OAuthToken) error {
	if at.IsZero() {
		return wrap("exchange oauth code", worldforge.BadRequest("no time of use"))
	}
	t := ms(stamp(at))
	var claimed *worldforge.OAuthCode
	err := db.writer.tx(ctx, func(q querier) error {
		c, err := scanCode(q.queryRow(ctx,
			"UPDATE oauth_codes SET used_at = ? WHERE hash = ? AND used_at IS NULL AND expires_at > ? RETURNING "+codeCols, t, hash, t))
		if errNoRows(err) {
			return nil
		} else if err != nil {
			return err
		}
		claimed = c
		g.ID, g.ClientID, g.UserID, g.Resource, g.Scopes = c.GrantID, c.ClientID, c.UserID, c.Resource, c.Scopes
		g.CreatedAt = stamp(at)
		scopes, err := marshalList(g.Scopes)
		if err != nil {
			return err
		}
		if _, err := q.exec(ctx, "INSERT INTO oauth_grants (id, client_id, user_id, resource, scopes, created_at, last_used_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			g.ID, g.ClientID, g.UserID, g.Resource, scopes, ms(g.CreatedAt), nil, nil); err != nil {
			return err
		}
		for _, tok := range tokens {
			tok.GrantID = g.ID
			if err := insertToken(ctx, q, tok); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return wrap("exchange oauth code", err)
	}
	if claimed != nil {
		return nil
	}
	c, err := scanCode(db.writer.q().queryRow(ctx, "SELECT "+codeCols+" FROM oauth_codes WHERE hash = ?", hash))
	switch {
	case err != nil:
		return wrap("exchange oauth code", err)
	case c.UsedAt != nil:
		// A code presented twice was stolen or replayed: the tokens its
		// first use made are revoked.
		if _, err := db.writer.q().exec(ctx, "UPDATE oauth_grants SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?", t, c.GrantID); err != nil {
			return wrap("exchange oauth code", err)
		}
		return wrap("exchange oauth code", &worldforge.Error{Code: worldforge.EConflict, Detail: worldforge.DetailCodeUsed})
	default:
		return wrap("exchange oauth code", &worldforge.Error{Code: worldforge.EConflict, Detail: worldforge.DetailCodeExpired})
	}
}

const grantCols = "g.id, g.client_id, g.user_id, g.resource, g.scopes, g.created_at, g.last_used_at, g.revoked_at, COALESCE(c.name, '')"

func scanGrant(s scanner, extra ...any) (*worldforge.OAuthGrant, error) {
	var (
		g             worldforge.OAuthGrant
		scopes        string
		created       int64
		used, revoked sql.NullInt64
	)
	dest := append([]any{&g.ID, &g.ClientID, &g.UserID, &g.Resource, &scopes, &created, &used, &revoked, &g.ClientName}, extra...)
	if err := s.Scan(dest...); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(scopes), &g.Scopes); err != nil {
		return nil, fmt.Errorf("scopes: %w", err)
	}
	g.CreatedAt, g.LastUsedAt, g.RevokedAt = fromMS(created), fromNullMS(used), fromNullMS(revoked)
	return &g, nil
}

// RotateOAuthRefresh implements worldforge.OAuthStore.
func (db *DB) RotateOAuthRefresh(ctx context.Context, hash []byte, at time.Time, tokens ...*worldforge.OAuthToken) (*worldforge.OAuthGrant, error) {
	if at.IsZero() {
		return nil, wrap("rotate oauth refresh", worldforge.BadRequest("no time of use"))
	}
	t := ms(stamp(at))
	var grant *worldforge.OAuthGrant
	err := db.writer.tx(ctx, func(q querier) error {
		grantID, err := scanString(q.queryRow(ctx,
			`UPDATE oauth_tokens SET used_at = ? WHERE hash = ? AND kind = 'refresh' AND used_at IS NULL AND expires_at > ?
			AND grant_id IN (SELECT id FROM oauth_grants WHERE revoked_at IS NULL) RETURNING grant_id`, t, hash, t))
		if errNoRows(err) {
			return nil
		} else if err != nil {
			return err
		}
		g, err := scanGrant(q.queryRow(ctx, "SELECT "+grantCols+" FROM oauth_grants g LEFT JOIN oauth_clients c ON c.id = g.client_id WHERE g.id = ?", grantID))
		if err != nil {
			return err
		}
		for _, tok := range tokens {
			tok.GrantID = g.ID
			if err := insertToken(ctx, q, tok); err != nil {
				return err
			}
		}
		grant = g
		return nil
	})
	if err != nil {
		return nil, wrap("rotate oauth refresh", err)
	}
	if grant != nil {
		return grant, nil
	}
	tok, g, err := db.FindOAuthToken(ctx, hash)
	switch {
	case err != nil:
		return nil, wrap("rotate oauth refresh", err)
	case tok.Kind != worldforge.OAuthRefresh:
		return nil, wrap("rotate oauth refresh", worldforge.ErrNotFound)
	case tok.UsedAt != nil:
		// A rotated refresh token presented again: someone holds a copy.
		// The whole family goes.
		if err := db.RevokeOAuthGrant(ctx, g.ID); err != nil {
			return nil, wrap("rotate oauth refresh", err)
		}
		return nil, wrap("rotate oauth refresh", &worldforge.Error{Code: worldforge.EConflict, Detail: worldforge.DetailRefreshReused})
	case g.RevokedAt != nil:
		return nil, wrap("rotate oauth refresh", &worldforge.Error{Code: worldforge.EConflict, Detail: worldforge.DetailGrantRevoked})
	default:
		return nil, wrap("rotate oauth refresh", &worldforge.Error{Code: worldforge.EConflict, Detail: worldforge.DetailRefreshExpired})
	}
}

// FindOAuthToken implements worldforge.OAuthStore, in one query.
func (db *DB) FindOAuthToken(ctx context.Context, hash []byte) (*worldforge.OAuthToken, *worldforge.OAuthGrant, error) {
	var (
		tok              worldforge.OAuthToken
		created, expires int64
		used             sql.NullInt64
	)
	g, err := scanGrant(db.reader.q().queryRow(ctx,
		"SELECT "+grantCols+", t.hash, t.kind, t.created_at, t.expires_at, t.used_at FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id LEFT JOIN oauth_clients c ON c.id = g.client_id WHERE t.hash = ?", hash),
		&tok.Hash, &tok.Kind, &created, &expires, &used)
	if err != nil {
		return nil, nil, wrap("find oauth token", err)
	}
	tok.GrantID = g.ID
	tok.CreatedAt, tok.ExpiresAt, tok.UsedAt = fromMS(created), fromMS(expires), fromNullMS(used)
	return &tok, g, nil
}

// RevokeOAuthGrant implements worldforge.OAuthStore.
func (db *DB) RevokeOAuthGrant(ctx context.Context, id string) error {
	err := affectedOne(db.writer.q().exec(ctx, "UPDATE oauth_grants SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?", ms(now()), id))
	return wrap("revoke oauth grant", err)
}

// RevokeUserOAuthClient implements worldforge.OAuthStore.
func (db *DB) RevokeUserOAuthClient(ctx context.Context, userID, clientID string) (int, error) {
	res, err := db.writer.q().exec(ctx, "UPDATE oauth_grants SET revoked_at = ? WHERE user_id = ? AND client_id = ? AND revoked_at IS NULL",
		ms(now()), userID, clientID)
	if err != nil {
		return 0, wrap("revoke oauth client", err)
	}
	n, err := res.RowsAffected()
	return int(n), wrap("revoke oauth client", err)
}

// TouchOAuthGrant implements worldforge.OAuthStore.
func (db *DB) TouchOAuthGrant(ctx context.Context, id string, at time.Time) error {
	if at.IsZero() {
		return wrap("touch oauth grant", worldforge.BadRequest("no time of use"))
	}
	t := ms(stamp(at))
	err := affectedOne(db.writer.q().exec(ctx,
		`UPDATE oauth_grants SET last_used_at = CASE WHEN last_used_at IS NULL OR last_used_at < ? THEN ? ELSE last_used_at END
		WHERE id = ?`, t, t, id))
	return wrap("touch oauth grant", err)
}

// ListOAuthGrants implements worldforge.OAuthStore.
func (db *DB) ListOAuthGrants(ctx context.Context, userID string) ([]worldforge.OAuthGrant, error) {
	out, err := collect(func(s scanner) (worldforge.OAuthGrant, error) {
		g, err := scanGrant(s)
		if err != nil {
			return worldforge.OAuthGrant{}, err
		}
		return *g, nil
	})(db.reader.q().query(ctx,
		"SELECT "+grantCols+" FROM oauth_grants g LEFT JOIN oauth_clients c ON c.id = g.client_id WHERE g.user_id = ? AND g.revoked_at IS NULL ORDER BY g.created_at DESC, g.id DESC", userID))
	return out, wrap("list oauth grants", err)
}

// PruneOAuth implements worldforge.OAuthStore.
func (db *DB) PruneOAuth(ctx context.Context, before time.Time) (int, error) {
	t := ms(before)
	n := 0
	for _, q := range []string{"DELETE FROM oauth_codes WHERE expires_at < ?", "DELETE FROM oauth_tokens WHERE expires_at < ?"} {
		res, err := db.writer.q().exec(ctx, q, t)
		if err != nil {
			return n, wrap("prune oauth", err)
		}
		k, err := res.RowsAffected()
		if err != nil {
			return n, wrap("prune oauth", err)
		}
		n += int(k)
	}
	return n, nil
}
