package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/worldforge-go/worldforge"
)

// ErrClosed is returned by AppendAudit once Close has begun.
var ErrClosed = errors.New("sqlstore: store is closed")

// Conflict details.
const detailExists = "already_exists"

// wrap normalises a driver error and adds the operation's name:
//
//	sql.ErrNoRows              → not_found
//	unique / primary key       → conflict: already_exists
//	foreign key (missing row)  → not_found
//	check / not null           → bad_request
//	database unreachable       → unavailable (PostgreSQL down, restarting or
//	                             refusing connections; a dropped connection)
//	SQLite file read-only      → unavailable: database_read_only
//	disk full                  → unavailable: disk_full
//
// The driver's own error stays in the chain (errors.As still finds it) for
// the logs; callers show only the code. Other errors (context, syntax) are
// wrapped as they are. A nil err stays nil.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", op, err)
	}
	var we *worldforge.Error
	if errors.As(err, &we) {
		return fmt.Errorf("%s: %w", op, err)
	}
	if d := domainError(err); d != nil {
		if d.Code == worldforge.EUnavailable {
			// Keep the cause for the logs.
			return fmt.Errorf("%s: %w: %w", op, d, err)
		}
		return fmt.Errorf("%s: %w", op, d)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// Unavailability details.
const (
	detailReadOnly = "database_read_only"
	detailDiskFull = "disk_full"
)

// unreachable reports whether err means the database cannot be reached or
// has dropped the connection: nothing about the request itself is wrong,
// and the same request may succeed once the database is back.
func unreachable(err error) bool {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Class 08: connection exception; 57P01–57P03: admin shutdown,
		// crash shutdown, cannot connect now (starting up).
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	if pgconn.SafeToRetry(err) || pgconn.Timeout(err) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
		return true
	}
	// A connection that died mid-query surfaces from pgx as a plain
	// "conn closed" or an EOF.
	return errors.Is(err, io.EOF) || strings.Contains(err.Error(), "conn closed")
}

// domainError maps a driver error to a *worldforge.Error, or nil.
func domainError(err error) *worldforge.Error {
	if errors.Is(err, sql.ErrNoRows) {
		return &worldforge.Error{Code: worldforge.ENotFound}
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return &worldforge.Error{Code: worldforge.EConflict, Detail: detailExists}
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return &worldforge.Error{Code: worldforge.ENotFound}
		case sqlite3.SQLITE_CONSTRAINT_CHECK, sqlite3.SQLITE_CONSTRAINT_NOTNULL:
			return &worldforge.Error{Code: worldforge.EBadRequest, Detail: "constraint_failed"}
		}
		switch se.Code() & 0xff { // the primary code of an extended one
		case sqlite3.SQLITE_READONLY:
			return &worldforge.Error{Code: worldforge.EUnavailable, Detail: detailReadOnly}
		case sqlite3.SQLITE_FULL:
			return &worldforge.Error{Code: worldforge.EUnavailable, Detail: detailDiskFull}
		}
		return nil
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "23505": // unique_violation
			return &worldforge.Error{Code: worldforge.EConflict, Detail: detailExists}
		case "23503": // foreign_key_violation
			return &worldforge.Error{Code: worldforge.ENotFound}
		case "23514", "23502": // check_violation, not_null_violation
			return &worldforge.Error{Code: worldforge.EBadRequest, Detail: "constraint_failed"}
		case "53100": // disk_full
			return &worldforge.Error{Code: worldforge.EUnavailable, Detail: detailDiskFull}
		case "25006": // read_only_sql_transaction (a standby or a read-only database)
			return &worldforge.Error{Code: worldforge.EUnavailable, Detail: detailReadOnly}
		}
	}
	if unreachable(err) {
		return &worldforge.Error{Code: worldforge.EUnavailable}
	}
	return nil
}
