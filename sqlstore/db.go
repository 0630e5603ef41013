package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"             // registers the "sqlite" driver

	"github.com/worldforge-go/worldforge"
)

var _ worldforge.Store = (*DB)(nil)

// Engine names, as reported by DB.Engine.
const (
	EngineSQLite   = "sqlite"
	EnginePostgres = "postgres"
)

// Options tune Open. A nil *Options, and any zero field, means the default.
type Options struct {
	// Logger receives the store's logs (migrations, audit write failures).
	// Default: slog.Default().
	Logger *slog.Logger
	// MaxOpenConns bounds the PostgreSQL pool, or the SQLite reader pool
	// (the SQLite writer always has one connection). Default: 25 on
	// PostgreSQL, max(4, GOMAXPROCS) on SQLite.
	MaxOpenConns int
	// BusyTimeout is how long a SQLite statement waits for a lock held by
	// another process. Default: 5s.
	BusyTimeout time.Duration
	// SQLiteSyncFull sets synchronous=FULL instead of NORMAL: commits then
	// survive power loss, not only a process crash, at the cost of an fsync
	// per commit.
	SQLiteSyncFull bool
	// AuditBatch is the most audit rows one group commit writes. Default 256.
	AuditBatch int
}

func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	if r.BusyTimeout <= 0 {
		r.BusyTimeout = 5 * time.Second
	}
	if r.AuditBatch <= 0 {
		r.AuditBatch = 256
	}
	return r
}

// DB is the store. It is safe for concurrent use; create it with Open and
// release it with Close.
type DB struct {
	engine string
	writer *pool // every write; the single-connection writer on SQLite
	reader *pool // reads; the same pool as writer on PostgreSQL
	log    *slog.Logger
	audit  *auditor
	// group commits SQLite's proposal filings together (writegroup.go);
	// nil on PostgreSQL, where they run concurrently.
	group *writeGroup
	// stamps reads world stamps for concurrent callers together
	// (stampcheck.go).
	stamps *stampChecker
	wiki   wikiSearchState // wiki search plans (wiki_search.go)
	docs   docState        // world documents in pieces (worlddoc.go)

	quotas atomic.Pointer[worldforge.Quotas] // nil: none (quota.go)

	closeOnce sync.Once
	closeErr  error
}

// Open opens the database named by dsn, applies pending migrations and
// starts the audit writer. dsn is "sqlite:PATH" (or a bare PATH ending in
// .db, .sqlite or .sqlite3) or a "postgres://" / "postgresql://" URL. The
// parent directory of a SQLite file is created when missing.
func Open(ctx context.Context, dsn string, opts *Options) (*DB, error) {
	o := opts.withDefaults()
	var (
		db  *DB
		err error
	)
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		db, err = openPostgres(ctx, dsn, o)
	default:
		path, ok := sqlitePath(dsn)
		if !ok {
			return nil, fmt.Errorf("open store: unsupported dsn (want sqlite:PATH, PATH.db or postgres://…)")
		}
		db, err = openSQLite(ctx, path, o)
	}
	if err != nil {
		return nil, err
	}
	db.docs.init(db.reader.db)
	db.audit = startAuditor(db, o.AuditBatch)
	if db.engine == EngineSQLite {
		db.group = startWriteGroup(db.writer, o.AuditBatch)
	}
	db.stamps = startStampChecker(db.reader)
	return db, nil
}

// sqlitePath returns the file path of a SQLite dsn.
func sqlitePath(dsn string) (string, bool) {
	if rest, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		// sqlite:///abs/path and sqlite://rel/path are accepted too.
		rest = strings.TrimPrefix(rest, "//")
		return rest, rest != ""
	}
	switch strings.ToLower(filepath.Ext(dsn)) {
	case ".db", ".sqlite", ".sqlite3":
		return dsn, true
	}
	return "", false
}

func openSQLite(ctx context.Context, path string, o Options) (*DB, error) {
	if path == ":memory:" || strings.HasPrefix(path, "file:") || strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("open sqlite: %q: want a plain file path (the store keeps two pools on one file, so :memory: cannot work)", path)
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("open sqlite: create directory: %w", err)
		}
	}
	syncMode := "NORMAL"
	if o.SQLiteSyncFull {
		syncMode = "FULL"
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", o.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous("+syncMode+")")
	readerDSN := path + "?" + q.Encode() + "&_pragma=query_only(1)"
	q.Add("_pragma", "journal_mode(WAL)")
	// Checkpoint every ~40 MB of WAL rather than 4 MB: a page written by
	// many commits (the audit log's last page) is copied back once per
	// checkpoint, so fewer checkpoints write less (-10 % per commit, measured
	// with BenchmarkAppendAuditSerial).
	q.Add("_pragma", "wal_autocheckpoint(10000)")
	// Statement journals (a lore write's triggers need one) in memory, not
	// in temporary files: a write each, measured 15 % of a bulk lore write.
	q.Add("_pragma", "temp_store(memory)")
	q.Set("_txlock", "immediate")
	writerDSN := path + "?" + q.Encode()

	wdb, err := sql.Open("sqlite", writerDSN)
	if err != nil {
		return nil, fmt.Errorf("open sqlite writer: %w", err)
	}
	wdb.SetMaxOpenConns(1)
	wdb.SetMaxIdleConns(1)
	wdb.SetConnMaxIdleTime(0)
	wdb.SetConnMaxLifetime(0)
	db := &DB{engine: EngineSQLite, log: o.Logger, writer: newPool(wdb, dialectSQLite)}
	if err := wdb.PingContext(ctx); err != nil {
		wdb.Close()
		return nil, fmt.Errorf("open sqlite %s: %w%s", path, err, sqliteWriteHint(path))
	}
	if err := db.migrate(ctx); err != nil {
		wdb.Close()
		return nil, fmt.Errorf("%w%s", err, sqliteWriteHint(path))
	}

	rdb, err := sql.Open("sqlite", readerDSN)
	if err != nil {
		wdb.Close()
		return nil, fmt.Errorf("open sqlite reader: %w", err)
	}
	n := o.MaxOpenConns
	if n <= 0 {
		n = max(4, runtime.GOMAXPROCS(0))
	}
	rdb.SetMaxOpenConns(n)
	rdb.SetMaxIdleConns(n)
	rdb.SetConnMaxIdleTime(5 * time.Minute)
	if err := rdb.PingContext(ctx); err != nil {
		rdb.Close()
		wdb.Close()
		return nil, fmt.Errorf("open sqlite reader %s: %w", path, err)
	}
	db.reader = newPool(rdb, dialectSQLite)
	db.log.Debug("store opened", "engine", EngineSQLite, "path", path, "readers", n)
	return db, nil
}

// postgresConnectTimeout bounds the first connection to PostgreSQL at Open.
const postgresConnectTimeout = 10 * time.Second

func openPostgres(ctx context.Context, dsn string, o Options) (*DB, error) {
	pdb, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	n := o.MaxOpenConns
	if n <= 0 {
		n = 25
	}
	pdb.SetMaxOpenConns(n)
	pdb.SetMaxIdleConns(n)
	pdb.SetConnMaxIdleTime(5 * time.Minute)
	pdb.SetConnMaxLifetime(30 * time.Minute)
	// A server that drops packets would otherwise hold the first connection
	// for the operating system's TCP timeout (minutes).
	pingCtx, cancel := context.WithTimeout(ctx, postgresConnectTimeout)
	defer cancel()
	if err := pdb.PingContext(pingCtx); err != nil {
		pdb.Close()
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	p := newPool(pdb, dialectPostgres)
	db := &DB{engine: EnginePostgres, log: o.Logger, writer: p, reader: p}
	if err := db.migrate(ctx); err != nil {
		pdb.Close()
		return nil, err
	}
	db.ensureWikiTrigram(ctx)
	db.log.Debug("store opened", "engine", EnginePostgres, "max_conns", n)
	return db, nil
}

// Engine reports EngineSQLite or EnginePostgres.
func (db *DB) Engine() string { return db.engine }

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.writer.db.PingContext(ctx); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	if db.reader != db.writer {
		if err := db.reader.db.PingContext(ctx); err != nil {
			return fmt.Errorf("ping reader: %w", err)
		}
	}
	return nil
}

// Close commits the queued audit entries, then closes the pools. Later
// AppendAudit calls return ErrClosed; calling Close again returns nil.
func (db *DB) Close() error {
	closed := false
	db.closeOnce.Do(func() {
		closed = true
		db.stamps.close()
		if db.group != nil {
			db.group.close()
		}
		db.audit.close()
		if b := db.audit.batches.Load(); b > 0 {
			db.log.Info("audit log closed", "rows", db.audit.rows.Load(), "commits", b,
				"rows_per_commit", float64(db.audit.rows.Load())/float64(b))
		}
		var errs []error
		if db.reader != db.writer {
			errs = append(errs, db.reader.close())
		}
		errs = append(errs, db.writer.close())
		if err := errors.Join(errs...); err != nil {
			db.closeErr = fmt.Errorf("close store: %w", err)
		}
	})
	if !closed {
		return nil
	}
	return db.closeErr
}
