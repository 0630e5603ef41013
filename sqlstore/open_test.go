package sqlstore_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

func TestSQLitePath(t *testing.T) {
	t.Parallel()
	cases := []struct {
		dsn, want string
		ok        bool
	}{
		{"sqlite:data/wf.db", "data/wf.db", true},
		{"sqlite:/var/lib/wf/wf.db", "/var/lib/wf/wf.db", true},
		{"sqlite:///var/lib/wf/wf.db", "/var/lib/wf/wf.db", true},
		{"sqlite:wf", "wf", true},
		{"wf.db", "wf.db", true},
		{"/tmp/wf.SQLITE3", "/tmp/wf.SQLITE3", true},
		{"sqlite:", "", false},
		{"wf.txt", "", false},
		{"mysql://x", "", false},
	}
	for _, c := range cases {
		t.Run(c.dsn, func(t *testing.T) {
			got, ok := sqlstore.SQLitePathForTest(c.dsn)
			if got != c.want || ok != c.ok {
				t.Errorf("sqlitePath(%q) = %q, %v; want %q, %v", c.dsn, got, ok, c.want, c.ok)
			}
		})
	}
}

func TestOpenSQLite(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "a", "b")
	path := filepath.Join(dir, "wf.db")

	// A bare path; the missing parent directories are created.
	db := dbtest.MustOpen(t, path)
	if db.Engine() != sqlstore.EngineSQLite {
		t.Errorf("Engine() = %q", db.Engine())
	}
	u := newUser(t, db, "Ada")
	must(t, db.Close())

	// Reopening keeps the data and applies no migration twice.
	again := dbtest.MustOpen(t, "sqlite:"+path)
	got, err := again.FindUserByID(ctx, u.ID)
	must(t, err)
	diff(t, u, got)
	n, err := again.QueryIntForTest(ctx, "SELECT COUNT(*) FROM schema_migrations")
	must(t, err)
	if want := again.MigrationCountForTest(); n != want || want < 2 {
		t.Errorf("%d migrations recorded, want %d", n, want)
	}
	mode, err := again.QueryStringForTest(ctx, "PRAGMA journal_mode")
	must(t, err)
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Errorf("no WAL file: %v", err)
	}

	bad := []string{"sqlite::memory:", "sqlite:file:x.db?mode=ro", "notadb", "mysql://localhost/x"}
	for _, dsn := range bad {
		if db, err := sqlstore.Open(ctx, dsn, dbtest.Options()); err == nil {
			db.Close()
			t.Errorf("Open(%q) succeeded", dsn)
		}
	}
}

func TestOpenPostgresUnreachable(t *testing.T) {
	t.Parallel()
	if db, err := sqlstore.Open(t.Context(), "postgres://nobody@127.0.0.1:1/none?connect_timeout=2", dbtest.Options()); err == nil {
		db.Close()
		t.Fatal("Open of an unreachable server succeeded")
	}
}

// TestOpenConcurrently opens one fresh database from several goroutines at
// once, as replicas starting together do: every Open succeeds and each
// migration is applied once.
func TestOpenConcurrently(t *testing.T) {
	t.Parallel()
	dbtest.ForEachDSN(t, func(t *testing.T, dsn string) {
		const replicas = 4
		dbs := make([]*sqlstore.DB, replicas)
		errs := make([]error, replicas)
		var wg sync.WaitGroup
		for i := range replicas {
			wg.Go(func() { dbs[i], errs[i] = sqlstore.Open(t.Context(), dsn, dbtest.Options()) })
		}
		wg.Wait()
		for i := range replicas {
			if errs[i] != nil {
				t.Errorf("replica %d: %v", i, errs[i])
				continue
			}
			defer dbs[i].Close()
		}
		if t.Failed() {
			return
		}
		n, err := dbs[0].QueryIntForTest(t.Context(), "SELECT COUNT(*) FROM schema_migrations")
		must(t, err)
		if want := dbs[0].MigrationCountForTest(); n != want || want < 2 {
			t.Errorf("%d migrations recorded, want %d", n, want)
		}
		// Every replica sees the others' writes.
		u := newUser(t, dbs[1], "shared")
		for i, db := range dbs {
			if _, err := db.FindUserByID(t.Context(), u.ID); err != nil {
				t.Errorf("replica %d: %v", i, err)
			}
		}
	})
}
