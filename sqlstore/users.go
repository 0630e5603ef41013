package sqlstore

import (
	"context"

	"github.com/worldforge-go/worldforge"
)

// CreateUser stores u, filling an empty ID and a zero CreatedAt. A taken ID
// is conflict.
func (db *DB) CreateUser(ctx context.Context, u *worldforge.User) error {
	if u.ID == "" {
		u.ID = worldforge.NewID("user")
	}
	u.CreatedAt = stamp(u.CreatedAt)
	_, err := db.writer.q().exec(ctx,
		"INSERT INTO users (id, name, created_at) VALUES (?, ?, ?)",
		u.ID, u.Name, ms(u.CreatedAt))
	return wrap("create user", err)
}

// FindUserByID returns the user, or not_found.
func (db *DB) FindUserByID(ctx context.Context, id string) (*worldforge.User, error) {
	var (
		u       worldforge.User
		created int64
	)
	err := db.reader.q().queryRow(ctx,
		"SELECT id, name, created_at FROM users WHERE id = ?", id).
		Scan(&u.ID, &u.Name, &created)
	if err != nil {
		return nil, wrap("find user", err)
	}
	u.CreatedAt = fromMS(created)
	return &u, nil
}
