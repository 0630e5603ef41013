package sqlstore

import (
	"context"
)

// ExecForTest runs a ?-placeholder statement on the writer, for tests that
// need rows no Store method writes yet (opened POIs, inventory, extra wiki
// revisions). Its errors are normalised like the store's.
func (db *DB) ExecForTest(ctx context.Context, query string, args ...any) error {
	_, err := db.writer.q().execOnce(ctx, query, args...)
	return wrap("exec", err)
}

// QueryIntForTest runs a one-integer query on the writer.
func (db *DB) QueryIntForTest(ctx context.Context, query string, args ...any) (int, error) {
	var n int
	err := db.writer.db.QueryRowContext(ctx, db.writer.d.rebind(query), args...).Scan(&n)
	return n, err
}

// QueryStringForTest runs a one-string query on the writer.
func (db *DB) QueryStringForTest(ctx context.Context, query string, args ...any) (string, error) {
	var s string
	err := db.writer.db.QueryRowContext(ctx, db.writer.d.rebind(query), args...).Scan(&s)
	return s, err
}

// AuditStatsForTest reports the group commits and rows written so far.
func (db *DB) AuditStatsForTest() (batches, rows int64) {
	return db.audit.batches.Load(), db.audit.rows.Load()
}

// AuditPendingForTest reports the entries queued or being written.
func (db *DB) AuditPendingForTest() int {
	return len(db.audit.queue) + int(db.audit.inflight.Load())
}

// HoldWriterForTest takes the SQLite writer's only connection, so that
// writes queue until release is called.
func (db *DB) HoldWriterForTest(ctx context.Context) (release func(), err error) {
	c, err := db.writer.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return func() { c.Close() }, nil
}

// SQLitePathForTest exposes the dsn parser.
func SQLitePathForTest(dsn string) (string, bool) { return sqlitePath(dsn) }

// MigrationVersionsForTest are the versions of the embedded migrations of
// the store's engine, in order (numbers may be skipped).
func (db *DB) MigrationVersionsForTest() []int {
	ms, err := migrations(db.writer.d)
	if err != nil {
		panic(err)
	}
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = m.version
	}
	return out
}

// MigrationCountForTest is the number of embedded migrations of the
// store's engine.
func (db *DB) MigrationCountForTest() int {
	ms, err := migrations(db.writer.d)
	if err != nil {
		panic(err)
	}
	return len(ms)
}
