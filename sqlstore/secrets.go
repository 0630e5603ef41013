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
