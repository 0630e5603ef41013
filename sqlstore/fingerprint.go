package sqlstore

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
)

// Fingerprint returns, for every table of the schema, a digest of its
// rows (their count and a SHA-256 of their sorted contents): a summary of
// everything stored, which tests compare before and after a request that
// must change nothing (a rejected input, a refused credential). It reads
// on the writer, so it sees every committed write. Its cost grows with the
// data: it is for tests and diagnostics, not for serving requests.
func (db *DB) Fingerprint(ctx context.Context) (map[string]string, error) {
	list := "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
	if db.engine == EnginePostgres {
		list = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
	}
	tables, err := queryStrings(ctx, db, list)
	if err != nil {
		return nil, wrap("fingerprint: list tables", err)
	}
	out := make(map[string]string, len(tables))
	for _, t := range tables {
		// The names come from the catalogue; quote them all the same.
		digest, err := tableDigest(ctx, db, `SELECT * FROM "`+strings.ReplaceAll(t, `"`, `""`)+`"`)
		if err != nil {
			return nil, wrap(fmt.Sprintf("fingerprint: read %s", t), err)
		}
		out[t] = digest
	}
	return out, nil
}

func queryStrings(ctx context.Context, db *DB, q string) ([]string, error) {
	rows, err := db.writer.db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// tableDigest is "<rows>:<sha256 of the rows, each printed, sorted>".
func tableDigest(ctx context.Context, db *DB, q string) (string, error) {
	printed, err := printRows(ctx, db, q)
	if err != nil {
		return "", err
	}
	slices.Sort(printed)
	h := sha256.New()
	for _, p := range printed {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return fmt.Sprintf("%d:%x", len(printed), h.Sum(nil)), nil
}

// printRows prints each row of q's result, its columns quoted.
func printRows(ctx context.Context, db *DB, q string) ([]string, error) {
	rows, err := db.writer.db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var printed []string
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		printed = append(printed, fmt.Sprintf("%q", vals))
	}
	return printed, rows.Err()
}

// TablesContaining lists the tables of the schema with a row in which
// text appears (in any column, as Fingerprint prints it): for tests that
// check that something sent was not stored. Like Fingerprint, it reads
// every row, and is for tests and diagnostics only.
func (db *DB) TablesContaining(ctx context.Context, text string) ([]string, error) {
	list := "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
	if db.engine == EnginePostgres {
		list = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
	}
	tables, err := queryStrings(ctx, db, list)
	if err != nil {
		return nil, wrap("tables containing: list tables", err)
	}
	var out []string
	for _, t := range tables {
		printed, err := printRows(ctx, db, `SELECT * FROM "`+strings.ReplaceAll(t, `"`, `""`)+`"`)
		if err != nil {
			return nil, wrap(fmt.Sprintf("tables containing: read %s", t), err)
		}
		if slices.ContainsFunc(printed, func(p string) bool { return strings.Contains(p, text) }) {
			out = append(out, t)
		}
	}
	return out, nil
}

// TotalChanges returns, on SQLite, how many rows have been inserted,
// changed or deleted through the writer connection since it opened: every
// write of the store goes through that one connection, so an unchanged
// count means nothing was written. It is the cheap form of Fingerprint for
// tests that compare before and after many times (the fuzz targets). ok is
// false on PostgreSQL.
func (db *DB) TotalChanges(ctx context.Context) (n int64, ok bool, err error) {
	if db.engine != EngineSQLite {
		return 0, false, nil
	}
	if err := db.writer.db.QueryRowContext(ctx, "SELECT total_changes()").Scan(&n); err != nil {
		return 0, true, wrap("total changes", err)
	}
	return n, true, nil
}
