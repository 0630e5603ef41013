// Package sqlstore implements worldforge.Store on two engines behind
// database/sql: SQLite, the embedded default, and PostgreSQL, for several
// server replicas sharing one database.
//
//	db, err := sqlstore.Open(ctx, "sqlite:/var/lib/worldforge/worldforge.db", nil)
//	db, err := sqlstore.Open(ctx, "postgres://wf@db:5432/worldforge", &sqlstore.Options{Logger: log})
//
// # Drivers
//
// SQLite runs on modernc.org/sqlite, a translation of SQLite to pure Go: the
// binary stays CGO-free, cross-compiles, and needs no system library.
// PostgreSQL runs on github.com/jackc/pgx/v5 through its database/sql
// adapter (stdlib): the maintained, fast PostgreSQL driver, with a
// per-connection statement cache of its own.
//
// Both engines share one SQL code path. Queries are written with ?
// placeholders and rebound to $1…$n for PostgreSQL once per query text.
// What differs is kept small and in one place each: the column type of
// binary values (BLOB, BYTEA) in the two migration sets, the migration lock,
// the JSON array test of the POI tag filter (dialect.go), and the wiki
// search's text index: an FTS5 trigram table on SQLite, pg_trgm GIN indexes
// on PostgreSQL (migration 005, wiki_search.go). Static
// statements are prepared once per pool and kept in a statement cache;
// texts built with a variable number of placeholders (IN lists, audit
// batches) run unprepared.
//
// # SQLite: WAL and two pools
//
// The database file is opened in WAL mode with busy_timeout, foreign_keys=ON
// and synchronous=NORMAL. In WAL mode NORMAL is durable across a crash of the
// process (a committed transaction is in the WAL file before COMMIT returns)
// but the last transactions may be lost if the machine loses power; set
// Options.SQLiteSyncFull for synchronous=FULL.
//
// SQLite allows one writer at a time, so the store keeps two *sql.DB pools on
// the file: a writer with exactly one connection, whose transactions start
// with BEGIN IMMEDIATE (so a transaction never has to upgrade a read lock and
// fail with SQLITE_BUSY), and a reader pool of several query_only
// connections. In WAL mode readers see the last committed snapshot and never
// wait for the writer, and writers in this process queue on the Go side
// instead of spinning on the file lock. Another process on the same file is
// handled by busy_timeout.
//
// # PostgreSQL
//
// One pgx pool serves reads and writes. Migrations take a transaction-scoped
// advisory lock, so replicas starting together apply each migration once.
//
// # Schema
//
// Migrations are embedded (migrations/sqlite, migrations/postgres), applied
// in order at Open, each in its own transaction, and recorded in
// schema_migrations. Timestamps are BIGINT unix milliseconds (times read back
// are UTC, millisecond precision), JSON documents are TEXT, booleans are
// INTEGER 0/1 on both engines. Lore entities carry their integrity facts,
// kept by the writes and the triggers of migration 004 (lore_facts.go),
// so that list_lore reads issues and pages, never a whole world.
//
// # Audit group commit
//
// AppendAudit returns only once its row is committed, yet concurrent callers
// must not pay for one transaction each. A single goroutine, started by Open
// and stopped by Close, takes the queued entries (up to Options.AuditBatch at
// a time), writes them with one multi-row INSERT in one transaction, and then
// releases every caller of the batch with the commit's result. Close stops
// new entries (AppendAudit then returns ErrClosed) and commits every entry
// already queued before it returns.
//
// # Errors
//
// Driver errors are normalised in one place (errors.go): a missing row is
// worldforge not_found, a unique violation is conflict, a foreign key naming
// a missing parent is not_found, a check violation is bad_request. Match them
// with errors.Is(err, worldforge.ErrNotFound) or worldforge.ErrorCode.
//
// # Lists and missing worlds
//
// List methods return an empty slice, never nil, when nothing matches; each
// method's comment gives its order. List, search and count methods keyed by
// a world do not check that the world exists (an unknown world gives empty
// results and zero counts): callers check access first with WorldRole, which
// is not_found for a missing world. WorldRuntime is not_found too.
//
// # Identifiers
//
// Create methods fill an empty ID with worldforge.NewID and these prefixes:
// user, key, world, campaign, quest, encounter, wiki, atlas, poi, lore, aud.
// A zero CreatedAt/UpdatedAt is set to the current time; timestamps are
// truncated to milliseconds and written back to the record in UTC.
package sqlstore
