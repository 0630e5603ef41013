// Package dbtest opens real stores for tests: SQLite in t.TempDir() always,
// and PostgreSQL when WORLDFORGE_TEST_POSTGRES_DSN names a server, each test
// in a schema of its own that is dropped when the test ends.
package dbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for schema setup

	"github.com/worldforge-go/worldforge/sqlstore"
)

// EnvPostgresDSN names the environment variable holding the PostgreSQL
// server the tests may use, such as
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
const EnvPostgresDSN = "WORLDFORGE_TEST_POSTGRES_DSN"

// Options returns the store options of tests: logs discarded unless the
// test runs with -v.
func Options() *sqlstore.Options {
	var w io.Writer = io.Discard
	if testing.Verbose() {
		w = os.Stderr
	}
	return &sqlstore.Options{Logger: slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))}
}

// Open opens a fresh SQLite store in tb.TempDir(), closed when the test ends.
func Open(tb testing.TB) *sqlstore.DB {
	tb.Helper()
	return MustOpen(tb, SQLiteDSN(tb))
}

// SQLiteDSN returns the DSN of a fresh SQLite file in tb.TempDir().
func SQLiteDSN(tb testing.TB) string {
	tb.Helper()
	return "sqlite:" + filepath.Join(tb.TempDir(), "data", "worldforge.db")
}

// PostgresDSN returns the DSN of a fresh, empty PostgreSQL schema on the
// server of WORLDFORGE_TEST_POSTGRES_DSN, dropped (with everything in it)
// when the test ends; it skips the test when the variable is unset. The
// schema is selected through the search_path runtime parameter.
func PostgresDSN(tb testing.TB) string {
	tb.Helper()
	base := os.Getenv(EnvPostgresDSN)
	if base == "" {
		tb.Skipf("%s is not set", EnvPostgresDSN)
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatal(err)
	}
	schema := "wf_test_" + hex.EncodeToString(b[:])

	admin, err := sql.Open("pgx", base)
	if err != nil {
		tb.Fatalf("open postgres: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		tb.Fatalf("create schema: %v", err)
	}
	tb.Cleanup(func() {
		defer admin.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
		}
	})
	dsn, err := withSearchPath(base, schema)
	if err != nil {
		tb.Fatal(err)
	}
	return dsn
}

// withSearchPath adds search_path=schema to a URL or key=value DSN.
func withSearchPath(dsn, schema string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("parse %s: %w", EnvPostgresDSN, err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
	return dsn + " search_path=" + schema, nil
}

// MustOpen opens the store of dsn, closed when the test ends.
func MustOpen(tb testing.TB, dsn string) *sqlstore.DB {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db, err := sqlstore.Open(ctx, dsn, Options())
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Errorf("close store: %v", err)
		}
	})
	return db
}

// Engines are the engines ForEachEngine runs, in order.
var Engines = []string{sqlstore.EngineSQLite, sqlstore.EnginePostgres}

// DSN returns a fresh database of the engine: a SQLite file, or a
// PostgreSQL schema (skipping the test when no server is configured).
func DSN(tb testing.TB, engine string) string {
	tb.Helper()
	if engine == sqlstore.EnginePostgres {
		return PostgresDSN(tb)
	}
	return SQLiteDSN(tb)
}

// ForEachDSN runs fn in the subtests "sqlite" and "postgres", each given
// the DSN of a fresh, unopened database, for tests that open (or reopen)
// the store themselves. The postgres subtest is skipped when
// WORLDFORGE_TEST_POSTGRES_DSN is unset.
func ForEachDSN(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Helper()
	for _, engine := range Engines {
		t.Run(engine, func(t *testing.T) {
			fn(t, DSN(t, engine))
		})
	}
}

// ForEachEngine runs fn in the subtests "sqlite" and "postgres", each on a
// fresh store closed when the subtest ends. The postgres subtest is skipped
// when WORLDFORGE_TEST_POSTGRES_DSN is unset.
func ForEachEngine(t *testing.T, fn func(t *testing.T, db *sqlstore.DB)) {
	t.Helper()
	ForEachDSN(t, func(t *testing.T, dsn string) {
		fn(t, MustOpen(t, dsn))
	})
}
