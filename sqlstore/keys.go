package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/worldforge-go/worldforge"
)

// CreateAPIKey stores k. A missing user is not_found; a hash already stored
// is conflict; a key for a user with the keys quota of unrevoked keys is
// quota_exceeded.
func (db *DB) CreateAPIKey(ctx context.Context, k *worldforge.APIKey) error {
	if len(k.Hash) == 0 {
		return wrap("create api key", worldforge.BadRequest("empty key hash"))
	}
	if k.ID == "" {
		k.ID = worldforge.NewID("key")
	}
	k.CreatedAt = stamp(k.CreatedAt)
	if k.RevokedAt != nil {
		t := stamp(*k.RevokedAt)
		k.RevokedAt = &t
	}
	if k.LastUsedAt != nil {
		t := stamp(*k.LastUsedAt)
		k.LastUsedAt = &t
	}
	scopes, err := marshalList(k.Scopes)
	if err != nil {
		return fmt.Errorf("create api key: %w", err)
	}
	insert := func(q querier) error {
		_, err := q.exec(ctx,
			`INSERT INTO api_keys (`+keyCols+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			k.ID, k.UserID, k.Hash, k.Prefix, scopes, ms(k.CreatedAt), nullMS(k.RevokedAt), k.Name, nullMS(k.LastUsedAt))
		return err
	}
	if db.Quotas().Keys <= 0 || k.RevokedAt != nil {
		return wrap("create api key", insert(db.writer.q()))
	}
	return wrap("create api key", db.writer.tx(ctx, func(q querier) error {
		if err := db.checkNewKey(ctx, q, k.UserID); err != nil {
			return err
		}
		return insert(q)
	}))
}

// keyCols are an API key row's columns, in scanKey's order.
const keyCols = "id, user_id, hash, prefix, scopes, created_at, revoked_at, name, last_used_at"

func scanKey(s scanner) (worldforge.APIKey, error) {
	var (
		k                 worldforge.APIKey
		scopes            string
		created           int64
		revoked, lastUsed sql.NullInt64
	)
	if err := s.Scan(&k.ID, &k.UserID, &k.Hash, &k.Prefix, &scopes, &created, &revoked, &k.Name, &lastUsed); err != nil {
		return k, err
	}
	if err := json.Unmarshal([]byte(scopes), &k.Scopes); err != nil {
		return k, fmt.Errorf("scopes: %w", err)
	}
	k.CreatedAt = fromMS(created)
	k.RevokedAt = fromNullMS(revoked)
	k.LastUsedAt = fromNullMS(lastUsed)
	return k, nil
}

// FindAPIKeyByHash returns the key with that hash, revoked or not.
func (db *DB) FindAPIKeyByHash(ctx context.Context, hash []byte) (*worldforge.APIKey, error) {
	k, err := scanKey(db.reader.q().queryRow(ctx, "SELECT "+keyCols+" FROM api_keys WHERE hash = ?", hash))
	if err != nil {
		return nil, wrap("find api key", err)
	}
	return &k, nil
}

// FindAPIKeyByID implements worldforge.KeyStore: the key with that id,
// revoked or not, or not_found.
func (db *DB) FindAPIKeyByID(ctx context.Context, id string) (*worldforge.APIKey, error) {
	k, err := scanKey(db.reader.q().queryRow(ctx, "SELECT "+keyCols+" FROM api_keys WHERE id = ?", id))
	if err != nil {
		return nil, wrap("find api key", err)
	}
	return &k, nil
}

// ListAPIKeys implements worldforge.KeyStore: the user's keys, revoked
// ones included, newest first (then by id). A user without keys, or an
// unknown one, has none.
func (db *DB) ListAPIKeys(ctx context.Context, userID string) ([]worldforge.APIKey, error) {
	out, err := collect(scanKey)(db.reader.q().query(ctx,
		"SELECT "+keyCols+" FROM api_keys WHERE user_id = ? ORDER BY created_at DESC, id DESC", userID))
	return out, wrap("list api keys", err)
}

// RevokeAPIKey sets the key's revoked_at, keeping the first revocation time.
func (db *DB) RevokeAPIKey(ctx context.Context, hash []byte) error {
	err := affectedOne(db.writer.q().exec(ctx,
		"UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE hash = ?", ms(now()), hash))
	return wrap("revoke api key", err)
}

// RevokeUserAPIKey implements worldforge.KeyStore: it revokes the key if
// userID owns it, keeping the first revocation time. Another user's key
// and a missing one are both not_found.
func (db *DB) RevokeUserAPIKey(ctx context.Context, userID, id string) error {
	err := affectedOne(db.writer.q().exec(ctx,
		"UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? AND user_id = ?", ms(now()), id, userID))
	return wrap("revoke api key", err)
}

// TouchAPIKey implements worldforge.KeyStore: last_used_at becomes at
// unless it is already later. A zero time is bad_request, an unknown key
// not_found.
func (db *DB) TouchAPIKey(ctx context.Context, id string, at time.Time) error {
	if at.IsZero() {
		return wrap("touch api key", worldforge.BadRequest("no time of use"))
	}
	t := ms(stamp(at))
	err := affectedOne(db.writer.q().exec(ctx,
		`UPDATE api_keys SET last_used_at = CASE WHEN last_used_at IS NULL OR last_used_at < ? THEN ? ELSE last_used_at END
		WHERE id = ?`, t, t, id))
	return wrap("touch api key", err)
}
