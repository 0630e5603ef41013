package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// maxCachedStmts bounds a pool's statement cache. The static queries of the
// store are far fewer; queries built with a variable number of placeholders
// go through the uncached path, and once the cache is full further queries
// simply run unprepared.
const maxCachedStmts = 256

// pool is one *sql.DB with its dialect and statement cache.
type pool struct {
	db *sql.DB
	d  dialect

	mu    sync.Mutex
	stmts map[string]*sql.Stmt // keyed by the ?-placeholder text
}

func newPool(db *sql.DB, d dialect) *pool {
	return &pool{db: db, d: d, stmts: make(map[string]*sql.Stmt)}
}

// stmt returns the prepared statement of query, preparing it on first use,
// or nil when it cannot be cached (cache full, or preparing failed; the
// caller then runs the query unprepared and meets the error there).
func (p *pool) stmt(ctx context.Context, query string) *sql.Stmt {
	p.mu.Lock()
	st, ok := p.stmts[query]
	full := len(p.stmts) >= maxCachedStmts
	p.mu.Unlock()
	if ok {
		return st
	}
	if full {
		return nil
	}
	st, err := p.db.PrepareContext(ctx, p.d.rebind(query))
	if err != nil {
		return nil
	}
	p.mu.Lock()
	prev, ok := p.stmts[query]
	if !ok {
		p.stmts[query] = st
	}
	p.mu.Unlock()
	if ok {
		// Another caller prepared it first. Close ours without holding
		// p.mu: Close waits for the connection it was prepared on, which
		// may be running a statement blocked on a row lock held by a
		// transaction that needs p.mu for its next statement.
		st.Close()
		return prev
	}
	return st
}

func (p *pool) close() error {
	p.mu.Lock()
	for k, st := range p.stmts {
		st.Close()
		delete(p.stmts, k)
	}
	p.mu.Unlock()
	return p.db.Close()
}

// q returns a querier on the pool outside any transaction.
func (p *pool) q() querier { return querier{p: p} }

// tx runs fn in a transaction on the pool (BEGIN IMMEDIATE on the SQLite
// writer) and commits when fn returns nil.
func (p *pool) tx(ctx context.Context, fn func(q querier) error) (err error) {
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	wanted := new(wantedStmts)
	defer func() {
		if err != nil {
			tx.Rollback()
		}
		p.prepareWanted(ctx, wanted)
	}()
	if err = fn(querier{p: p, tx: tx, wanted: wanted}); err != nil {
		return err
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// wantedStmts are the texts a transaction ran unprepared because the
// cache did not hold them yet.
type wantedStmts []string

// maxWanted bounds the texts one transaction asks to have prepared.
const maxWanted = 16

// prepareWanted caches the statements a transaction wanted, once it has
// ended and its connection is free. Statements a program runs only in
// transactions (a proposal's INSERT, the write group's savepoints) are
// prepared once this way instead of at every use: SQLite's prepare was a
// seventh of the server's CPU under a load of proposals.
func (p *pool) prepareWanted(ctx context.Context, wanted *wantedStmts) {
	for _, query := range *wanted {
		p.stmt(ctx, query)
	}
}

// querier runs queries written with ? placeholders on a pool, inside a
// transaction when tx is set, through the pool's statement cache.
type querier struct {
	p      *pool
	tx     *sql.Tx
	wanted *wantedStmts // in a transaction: texts to prepare after it
}

func (q querier) prepared(ctx context.Context, query string) *sql.Stmt {
	if q.tx == nil {
		return q.p.stmt(ctx, query)
	}
	// In a transaction only an already cached statement is used: preparing
	// a new one on the pool would wait for a connection, and the SQLite
	// writer's only connection is the one this transaction holds.
	q.p.mu.Lock()
	st := q.p.stmts[query]
	q.p.mu.Unlock()
	if st == nil {
		if w := q.wanted; w != nil && len(*w) < maxWanted && !slices.Contains(*w, query) {
			*w = append(*w, query)
		}
		return nil
	}
	return q.tx.StmtContext(ctx, st) // closed with the transaction
}

func (q querier) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := q.prepared(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return q.execOnce(ctx, query, args...)
}

func (q querier) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := q.prepared(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return q.queryOnce(ctx, query, args...)
}

func (q querier) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	if st := q.prepared(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	if q.tx != nil {
		return q.tx.QueryRowContext(ctx, q.p.d.rebind(query), args...)
	}
	return q.p.db.QueryRowContext(ctx, q.p.d.rebind(query), args...)
}

// execOnce runs query without caching a prepared statement: for texts
// built with a variable number of placeholders.
func (q querier) execOnce(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if q.tx != nil {
		return q.tx.ExecContext(ctx, q.p.d.rebind(query), args...)
	}
	return q.p.db.ExecContext(ctx, q.p.d.rebind(query), args...)
}

// queryOnce is the uncached form of query.
func (q querier) queryOnce(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if q.tx != nil {
		return q.tx.QueryContext(ctx, q.p.d.rebind(query), args...)
	}
	return q.p.db.QueryContext(ctx, q.p.d.rebind(query), args...)
}

// affectedOne turns an UPDATE that matched no row into not_found.
func affectedOne(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return sql.ErrNoRows
	}
	return nil
}

// scanner is *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// collect returns a function that scans every row of a query with scan,
// used as collect(scan)(q.query(…)). The result is empty, not nil, when no
// row matches.
func collect[T any](scan func(scanner) (T, error)) func(*sql.Rows, error) ([]T, error) {
	return func(rows *sql.Rows, err error) ([]T, error) {
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		out := []T{}
		for rows.Next() {
			v, err := scan(rows)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
		return out, nil
	}
}

// scanString scans a one-column string row.
func scanString(s scanner) (string, error) {
	var v string
	err := s.Scan(&v)
	return v, err
}

// placeholders returns "?, ?, …" with n marks.
func placeholders(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat("?, ", n-1) + "?"
}

// rebindCache remembers the PostgreSQL form of each query text.
var rebindCache sync.Map // string → string

// rebindDollar rewrites ? placeholders as $1…$n. The store's SQL never has a
// ? inside a literal or an identifier.
func rebindDollar(query string) string {
	if v, ok := rebindCache.Load(query); ok {
		return v.(string)
	}
	n := strings.Count(query, "?")
	var b strings.Builder
	b.Grow(len(query) + n*3)
	i := 0
	for _, c := range []byte(query) {
		if c == '?' {
			i++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(i))
			continue
		}
		b.WriteByte(c)
	}
	out := b.String()
	if n < 64 { // long texts are the variable ones (IN lists, batches); don't keep them
		rebindCache.Store(query, out)
	}
	return out
}

// errNoRows reports whether err means no row.
func errNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }
