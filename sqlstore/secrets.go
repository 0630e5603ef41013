package sqlstore

import (
	"context"
	"errors"
	"fmt"
)

// Secret returns the named secret. On first use it calls gen and stores the
// value with INSERT … ON CONFLICT DO NOTHING, then reads the row back: when
// replicas race, every one of them returns the value that won.
func (db *DB) Secret(ctx context.Context, name string, gen func() ([]byte, error)) ([]byte, error) {
	const sel = "SELECT value FROM secrets WHERE name = ?"
	var v []byte
	err := db.reader.q().queryRow(ctx, sel, name).Scan(&v)
	if err == nil {
		return v, nil
	}
	if !errNoRows(err) {
		return nil, wrap("read secret", err)
	}
	fresh, err := gen()
	if err != nil {
		return nil, fmt.Errorf("generate secret %s: %w", name, err)
	}
	if len(fresh) == 0 {
		return nil, errors.New("generate secret " + name + ": empty value")
	}
	if _, err := db.writer.q().exec(ctx,
		"INSERT INTO secrets (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING",
		name, fresh, ms(now())); err != nil {
		return nil, wrap("store secret", err)
	}
	// Read back on the writer: it has just committed (or lost to) the row.
	if err := db.writer.q().queryRow(ctx, sel, name).Scan(&v); err != nil {
		return nil, wrap("read secret", err)
	}
	return v, nil
}

// ReplaceSecret stores a new value for a named secret, creating it if
// absent. Readers of the old value see the new one on their next Secret.
func (db *DB) ReplaceSecret(ctx context.Context, name string, value []byte) error {
	if len(value) == 0 {
		return errors.New("replace secret " + name + ": empty value")
	}
	if _, err := db.writer.q().exec(ctx,
		"INSERT INTO secrets (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value, created_at = excluded.created_at",
		name, value, ms(now())); err != nil {
		return wrap("replace secret", err)
	}
	return nil
}
