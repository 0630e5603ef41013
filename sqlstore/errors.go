package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

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
//
// Other errors (context, I/O, syntax) are wrapped as they are. A nil err
// stays nil.
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
		return fmt.Errorf("%s: %w", op, d)
	}
	return fmt.Errorf("%s: %w", op, err)
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
		}
	}
	return nil
}
