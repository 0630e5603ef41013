package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

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
	scopes, err := marshalList(k.Scopes)
	if err != nil {
		return fmt.Errorf("create api key: %w", err)
	}
	insert := func(q querier) error {
		_, err := q.exec(ctx,
			`INSERT INTO api_keys (id, user_id, hash, prefix, scopes, created_at, revoked_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`,
			k.ID, k.UserID, k.Hash, k.Prefix, scopes, ms(k.CreatedAt), nullMS(k.RevokedAt))
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

// FindAPIKeyByHash returns the key with that hash, revoked or not.
func (db *DB) FindAPIKeyByHash(ctx context.Context, hash []byte) (*worldforge.APIKey, error) {
	var (
		k       worldforge.APIKey
		scopes  string
		created int64
		revoked sql.NullInt64
	)
	err := db.reader.q().queryRow(ctx,
		"SELECT id, user_id, hash, prefix, scopes, created_at, revoked_at FROM api_keys WHERE hash = ?", hash).
		Scan(&k.ID, &k.UserID, &k.Hash, &k.Prefix, &scopes, &created, &revoked)
	if err != nil {
		return nil, wrap("find api key", err)
	}
	if err := json.Unmarshal([]byte(scopes), &k.Scopes); err != nil {
		return nil, fmt.Errorf("find api key: scopes: %w", err)
	}
	k.CreatedAt = fromMS(created)
	k.RevokedAt = fromNullMS(revoked)
	return &k, nil
}

// RevokeAPIKey sets the key's revoked_at, keeping the first revocation time.
func (db *DB) RevokeAPIKey(ctx context.Context, hash []byte) error {
	err := affectedOne(db.writer.q().exec(ctx,
		"UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE hash = ?", ms(now()), hash))
	return wrap("revoke api key", err)
}
