package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Health and statistics: what a readiness probe and a metrics collector
// read. None of it writes.

// ReadyTimeout bounds Ready's query when the caller's context allows more.
const ReadyTimeout = 2 * time.Second

// Reasons a store is not ready (NotReadyError.Reason).
const (
	ReasonClosed              = "closed"               // Close has begun
	ReasonDatabaseUnreachable = "database_unreachable" // the query failed or timed out
	ReasonMigrationsPending   = "migrations_pending"   // the schema is older than this binary's migrations
)

// NotReadyError is Ready's error: a short, fixed reason that is safe to
// show to anyone (a readiness probe is unauthenticated) and the underlying
// error, for the logs.
type NotReadyError struct {
	Reason string
	Err    error
}

func (e *NotReadyError) Error() string {
	if e.Err == nil {
		return "store not ready: " + e.Reason
	}
	return "store not ready: " + e.Reason + ": " + e.Err.Error()
}

func (e *NotReadyError) Unwrap() error { return e.Err }

// ReadyReason returns Reason; the HTTP layer shows it without knowing the
// type.
func (e *NotReadyError) ReadyReason() string { return e.Reason }

// Ready checks that the store can serve: it is not closed, a real query
// answers within ReadyTimeout (on the reader pool, so that a busy SQLite
// writer does not make the probe fail), and every migration this binary
// embeds has been applied. A schema migrated further by a newer binary is
// ready: this one already runs against it (Open does not refuse it), and a
// rolling upgrade must not take the old replicas out of service. A failure
// is a *NotReadyError.
func (db *DB) Ready(ctx context.Context) error {
	if db.audit.isClosed() {
		return &NotReadyError{Reason: ReasonClosed}
	}
	want, err := latestMigration(db.reader.d)
	if err != nil {
		return &NotReadyError{Reason: ReasonMigrationsPending, Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	defer cancel()
	var have sql.NullInt64
	if err := db.reader.db.QueryRowContext(ctx, "SELECT MAX(version) FROM schema_migrations").Scan(&have); err != nil {
		return &NotReadyError{Reason: ReasonDatabaseUnreachable, Err: err}
	}
	if int(have.Int64) < want {
		return &NotReadyError{Reason: ReasonMigrationsPending, Err: fmt.Errorf("schema at version %d, this binary's migrations end at %d", have.Int64, want)}
	}
	return nil
}

// latestMigration is the highest version of the dialect's embedded
// migrations, read once.
func latestMigration(d dialect) (int, error) {
	return latestMigrations[d]()
}

var latestMigrations = map[dialect]func() (int, error){
	dialectSQLite:   sync.OnceValues(func() (int, error) { return lastVersion(dialectSQLite) }),
	dialectPostgres: sync.OnceValues(func() (int, error) { return lastVersion(dialectPostgres) }),
}

func lastVersion(d dialect) (int, error) {
	ms, err := migrations(d)
	if err != nil || len(ms) == 0 {
		return 0, fmt.Errorf("embedded migrations: %d, %v", len(ms), err)
	}
	return ms[len(ms)-1].version, nil
}

// Pool names, as PoolStats reports them.
const (
	PoolWriter = "writer" // SQLite's one-connection writer
	PoolReader = "reader" // SQLite's query_only reader pool
	PoolMain   = "main"   // PostgreSQL's one pool, for reads and writes
)

// PoolStats returns the database/sql statistics of each connection pool:
// "writer" and "reader" on SQLite, "main" on PostgreSQL.
func (db *DB) PoolStats() map[string]sql.DBStats {
	if db.reader == db.writer {
		return map[string]sql.DBStats{PoolMain: db.writer.db.Stats()}
	}
	return map[string]sql.DBStats{PoolWriter: db.writer.db.Stats(), PoolReader: db.reader.db.Stats()}
}

// AuditQueueDepth is the number of audit entries waiting for their group
// commit or in the one being written.
func (db *DB) AuditQueueDepth() int {
	return len(db.audit.queue) + int(db.audit.inflight.Load())
}

// auditCommitBounds are the upper bounds of AuditCommits' buckets, in rows.
var auditCommitBounds = [...]float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}

// AuditCommits reports the audit group commits so far: how many
// transactions committed, the rows they wrote, and for each bound (1, 2,
// 4, … 1024 rows) the number of commits of at most that many rows
// (cumulative, as a Prometheus histogram's buckets). commits is never less
// than any bucket.
func (db *DB) AuditCommits() (commits, rows uint64, byRows map[float64]uint64) {
	byRows = make(map[float64]uint64, len(auditCommitBounds))
	var sum uint64
	// Buckets first: write counts a commit in its bucket before it counts
	// it in batches, so batches read afterwards covers every bucket.
	for i, b := range auditCommitBounds {
		sum += db.audit.byRows[i].Load()
		byRows[b] = sum
	}
	return uint64(db.audit.batches.Load()), uint64(db.audit.rows.Load()), byRows
}

// countCommit counts a committed batch of n rows in its bucket.
func (a *auditor) countCommit(n int) {
	i, _ := slices.BinarySearch(auditCommitBounds[:], float64(n))
	if i < len(a.byRows) {
		a.byRows[i].Add(1)
	}
}

// isClosed reports whether close has begun.
func (a *auditor) isClosed() bool {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.closed
}
