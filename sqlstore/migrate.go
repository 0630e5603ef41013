package sqlstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrationFS embed.FS

// migrationLockKey is the PostgreSQL advisory lock key that serialises
// migrations of replicas starting together ("wfmigrat" in ASCII).
const migrationLockKey int64 = 0x77666d6967726174

type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations of the dialect, in order.
func migrations(d dialect) ([]migration, error) {
	dir := "migrations/sqlite"
	if d == dialectPostgres {
		dir = "migrations/postgres"
	}
	entries, err := fs.ReadDir(migrationFS, dir)
	if err != nil {
		return nil, err
	}
	var out []migration
	seen := map[int]string{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must be NNN_name.sql", name)
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations %s and %s share version %d", prev, name, v)
		}
		seen[v] = name
		b, err := migrationFS.ReadFile(path.Join(dir, name))
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: strings.TrimSuffix(name, ".sql"), sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// migrate applies the pending migrations, each in its own transaction on
// the writer. On SQLite the writer's BEGIN IMMEDIATE serialises processes;
// on PostgreSQL pg_advisory_xact_lock does, before schema_migrations is
// even created, so concurrent Opens on one database are safe.
func (db *DB) migrate(ctx context.Context) error {
	list, err := migrations(db.writer.d)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, m := range list {
		applied := false
		err := db.writer.tx(ctx, func(q querier) error {
			if db.writer.d == dialectPostgres {
				if _, err := q.execOnce(ctx, "SELECT pg_advisory_xact_lock(?)", migrationLockKey); err != nil {
					return fmt.Errorf("lock: %w", err)
				}
			}
			if _, err := q.execOnce(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
				version    INTEGER PRIMARY KEY,
				name       TEXT NOT NULL,
				applied_at BIGINT NOT NULL)`); err != nil {
				return fmt.Errorf("create schema_migrations: %w", err)
			}
			var n int
			if err := q.tx.QueryRowContext(ctx, db.writer.d.rebind(
				"SELECT COUNT(*) FROM schema_migrations WHERE version = ?"), m.version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := q.execOnce(ctx, m.sql); err != nil {
				return err
			}
			if _, err := q.execOnce(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
				m.version, m.name, ms(now())); err != nil {
				return err
			}
			applied = true
			return nil
		})
		if err != nil {
			return fmt.Errorf("migrate %s: %w", m.name, err)
		}
		if applied {
			db.log.Info("applied migration", "engine", db.engine, "migration", m.name)
		}
	}
	// Lore entities written before migration 004, by an older binary or
	// under older lore schemas get their facts now (sqlstore/lore.go).
	n, err := analyseStaleLore(ctx, db.writer, "")
	if err != nil {
		return fmt.Errorf("migrate: analyse lore: %w", err)
	}
	if n > 0 {
		db.log.Info("analysed lore entities", "engine", db.engine, "entities", n)
	}
	warmLoreStatements(ctx, db.writer)
	return nil
}
