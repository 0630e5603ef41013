package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// readyReason is Ready's reason, or "" when ready.
func readyReason(t *testing.T, ctx context.Context, db *sqlstore.DB) string {
	t.Helper()
	err := db.Ready(ctx)
	if err == nil {
		return ""
	}
	var nr *sqlstore.NotReadyError
	if !errors.As(err, &nr) {
		t.Fatalf("Ready = %v (%T), want a *NotReadyError", err, err)
	}
	if nr.ReadyReason() != nr.Reason {
		t.Errorf("ReadyReason %q, Reason %q", nr.ReadyReason(), nr.Reason)
	}
	return nr.Reason
}

// TestReady: ready after Open; migrations_pending when the schema lacks
// this binary's last migration, ready again with it and with a newer
// schema; database_unreachable when the query cannot run; closed after
// Close.
func TestReady(t *testing.T) {
	t.Parallel()
	dbtest.ForEachDSN(t, func(t *testing.T, dsn string) {
		ctx := t.Context()
		db, err := sqlstore.Open(ctx, dsn, dbtest.Options())
		must(t, err)
		defer db.Close()
		if r := readyReason(t, ctx, db); r != "" {
			t.Fatalf("a fresh store is not ready: %s", r)
		}

		versions := db.MigrationVersionsForTest()
		last, prev := versions[len(versions)-1], versions[len(versions)-2]
		name, err := db.QueryStringForTest(ctx, "SELECT name FROM schema_migrations WHERE version = ?", last)
		must(t, err)
		must(t, db.ExecForTest(ctx, "DELETE FROM schema_migrations WHERE version = ?", last))
		if r := readyReason(t, ctx, db); r != sqlstore.ReasonMigrationsPending {
			t.Errorf("one migration behind: reason %q, want %s", r, sqlstore.ReasonMigrationsPending)
		}
		if err := db.Ready(ctx); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("version %d, this binary's migrations end at %d", prev, last)) {
			t.Errorf("one migration behind: %v, want both versions named", err)
		}
		must(t, db.ExecForTest(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, 0)", last, name))
		if r := readyReason(t, ctx, db); r != "" {
			t.Errorf("migrations restored: reason %q", r)
		}
		// A newer binary migrated further: this one still serves.
		must(t, db.ExecForTest(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, 0)", last+100, "from_the_future"))
		if r := readyReason(t, ctx, db); r != "" {
			t.Errorf("a newer schema: reason %q, want ready", r)
		}

		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		if r := readyReason(t, cancelled, db); r != sqlstore.ReasonDatabaseUnreachable {
			t.Errorf("with a cancelled context: reason %q, want %s", r, sqlstore.ReasonDatabaseUnreachable)
		}

		must(t, db.Close())
		if r := readyReason(t, ctx, db); r != sqlstore.ReasonClosed {
			t.Errorf("after Close: reason %q, want %s", r, sqlstore.ReasonClosed)
		}
	})
}

// TestReadyWhileWriterBusy: on SQLite the probe reads through the reader
// pool, so a writer held by a long transaction does not make it fail.
func TestReadyWhileWriterBusy(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	ctx := t.Context()
	release, err := db.HoldWriterForTest(ctx)
	must(t, err)
	defer release()
	start := time.Now()
	if err := db.Ready(ctx); err != nil {
		t.Errorf("Ready with the writer busy: %v", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("Ready took %s with the writer busy", took)
	}
}

// TestPoolStats: SQLite reports its one-connection writer and its reader
// pool, PostgreSQL its one pool.
func TestPoolStats(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		must(t, db.Ping(t.Context()))
		st := db.PoolStats()
		switch db.Engine() {
		case sqlstore.EngineSQLite:
			w, okW := st[sqlstore.PoolWriter]
			r, okR := st[sqlstore.PoolReader]
			if len(st) != 2 || !okW || !okR {
				t.Fatalf("PoolStats = %v, want writer and reader", st)
			}
			if w.MaxOpenConnections != 1 || r.MaxOpenConnections < 4 {
				t.Errorf("max open: writer %d, reader %d; want 1 and at least 4", w.MaxOpenConnections, r.MaxOpenConnections)
			}
			if w.OpenConnections != 1 || r.OpenConnections < 1 {
				t.Errorf("open: writer %d, reader %d; want 1 and at least 1", w.OpenConnections, r.OpenConnections)
			}
		case sqlstore.EnginePostgres:
			m, ok := st[sqlstore.PoolMain]
			if len(st) != 1 || !ok || m.MaxOpenConnections != 25 || m.OpenConnections < 1 {
				t.Fatalf("PoolStats = %+v, want main with 25 max and a connection open", st)
			}
		}
	})
}

// TestAuditStats: the queue depth rises while the SQLite writer is held
// and falls to 0 once the callers are answered; the commit counts and
// their size buckets add up to the rows appended.
func TestAuditStats(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	ctx := t.Context()
	if d := db.AuditQueueDepth(); d != 0 {
		t.Fatalf("queue depth of a fresh store = %d", d)
	}
	c0, r0, _ := db.AuditCommits()
	if c0 != 0 || r0 != 0 {
		t.Fatalf("AuditCommits of a fresh store = %d, %d", c0, r0)
	}
	must(t, db.AppendAudit(ctx, &worldforge.AuditEntry{ActorID: "user_solo", Outcome: "ok"}))

	release, err := db.HoldWriterForTest(ctx)
	must(t, err)
	const callers = 40
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			if err := db.AppendAudit(ctx, &worldforge.AuditEntry{ActorID: fmt.Sprint("user_", i), Outcome: "ok"}); err != nil {
				t.Errorf("AppendAudit: %v", err)
			}
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	for db.AuditQueueDepth() < callers {
		if time.Now().After(deadline) {
			t.Fatalf("queue depth %d, want %d", db.AuditQueueDepth(), callers)
		}
		time.Sleep(time.Millisecond) // polled: the queue signals nothing a test could wait on
	}
	release()
	wg.Wait()
	if d := db.AuditQueueDepth(); d != 0 {
		t.Errorf("queue depth after every caller was answered = %d", d)
	}

	commits, rows, byRows := db.AuditCommits()
	if rows != callers+1 {
		t.Errorf("rows = %d, want %d", rows, callers+1)
	}
	if commits < 2 || commits > 3 {
		t.Errorf("commits = %d, want the solo one and 1 or 2 for the queued callers", commits)
	}
	// The solo one; the first queued caller may have been taken alone
	// before the others arrived.
	if byRows[1] < 1 || byRows[1] > 2 {
		t.Errorf("commits of 1 row = %d, want 1 or 2", byRows[1])
	}
	if byRows[64] != commits || byRows[16] > commits-1 {
		t.Errorf("commits of ≤16 rows %d, of ≤64 rows %d, of %d; want the queued callers' (more than 16 rows) in ≤64", byRows[16], byRows[64], commits)
	}
	if byRows[1024] != commits {
		t.Errorf("commits of at most 1024 rows = %d, want all %d", byRows[1024], commits)
	}
	prev := uint64(0)
	for _, b := range []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024} {
		if byRows[b] < prev {
			t.Errorf("bucket %v = %d, below the previous %d: not cumulative", b, byRows[b], prev)
		}
		prev = byRows[b]
	}
	if len(byRows) != 11 {
		t.Errorf("%d buckets: %v", len(byRows), byRows)
	}
	if b, r := db.AuditStatsForTest(); uint64(b) != commits || uint64(r) != rows {
		t.Errorf("AuditCommits %d/%d, the writer's counters %d/%d", commits, rows, b, r)
	}
}
