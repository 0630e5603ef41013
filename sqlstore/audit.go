package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/worldforge-go/worldforge"
)

// Audit list limits and the time one group commit may take.
const (
	auditListDefault = 100
	auditListMax     = 1000
	auditWriteTime   = 30 * time.Second
	auditCols        = "id, actor_id, key_id, tool, route, target_type, target_id, world_id, outcome, created_at"
	auditNumCols     = 10
)

// auditReq is one queued AppendAudit: its entry and where its result goes.
type auditReq struct {
	ctx  context.Context
	e    *worldforge.AuditEntry
	done chan error // buffered: the writer never blocks on a caller
}

// auditor is the group commit of the audit log: one goroutine writes the
// queued entries of many callers in one transaction.
type auditor struct {
	db       *DB
	maxBatch int

	mu     sync.RWMutex // held for reading while sending on queue, for writing by close
	closed bool
	queue  chan *auditReq
	done   chan struct{} // closed when run returns

	inflight atomic.Int64 // entries taken from the queue and not yet answered
	batches  atomic.Int64 // transactions committed
	rows     atomic.Int64 // rows committed
	// byRows counts the commits by size, bucket i holding those of more
	// than auditCommitBounds[i-1] and at most auditCommitBounds[i] rows
	// (see AuditCommits).
	byRows [len(auditCommitBounds)]atomic.Uint64
}

func startAuditor(db *DB, maxBatch int) *auditor {
	a := &auditor{
		db:       db,
		maxBatch: maxBatch,
		queue:    make(chan *auditReq, 4*maxBatch),
		done:     make(chan struct{}),
	}
	go a.run()
	return a
}

// AppendAudit queues the entry for the next group commit and waits until
// that transaction commits. It fills an empty ID (NewID("aud")) and a zero
// CreatedAt. It returns the commit's error, ctx's error if ctx ends first
// (the entry may then still be written, once), or ErrClosed after Close.
func (db *DB) AppendAudit(ctx context.Context, e *worldforge.AuditEntry) error {
	if e.ID == "" {
		e.ID = worldforge.NewID("aud")
	}
	e.CreatedAt = stamp(e.CreatedAt)
	req := &auditReq{ctx: ctx, e: e, done: make(chan error, 1)}
	if err := db.audit.enqueue(ctx, req); err != nil {
		return fmt.Errorf("append audit: %w", err)
	}
	select {
	case err := <-req.done:
		return wrap("append audit", err)
	case <-ctx.Done():
		select {
		case err := <-req.done: // answered at the same moment: report the write
			return wrap("append audit", err)
		default:
			return fmt.Errorf("append audit: %w", ctx.Err())
		}
	}
}

func (a *auditor) enqueue(ctx context.Context, req *auditReq) error {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.closed {
		return ErrClosed
	}
	select {
	case a.queue <- req:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// close refuses new entries, lets run commit those queued, and waits for it.
func (a *auditor) close() {
	a.mu.Lock()
	if !a.closed {
		a.closed = true
		close(a.queue)
	}
	a.mu.Unlock()
	<-a.done
}

// run takes the first queued entry, then what else is queued (gather, up
// to maxBatch), writes them in one transaction and releases their callers. The
// entries that arrive meanwhile form the next batch. It returns once the
// queue is closed and drained.
func (a *auditor) run() {
	defer close(a.done)
	batch := make([]*auditReq, 0, a.maxBatch)
	for {
		req, ok := <-a.queue
		if !ok {
			return
		}
		batch, _ = gather(a.queue, append(batch[:0], req), a.maxBatch)
		a.inflight.Store(int64(len(batch)))
		a.flush(batch)
		a.inflight.Store(0)
		clear(batch) // drop references for the garbage collector
	}
}

// flush writes the batch's live entries (a caller that gave up before the
// write is answered with its context's error and not written). When the
// batch statement fails it writes the entries one by one, so that one bad
// entry fails alone; the failed statement wrote nothing,
// so nothing is written twice.
func (a *auditor) flush(batch []*auditReq) {
	live := batch[:0:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.done <- err
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return
	}
	err := a.write(live)
	if err == nil || len(live) == 1 {
		for _, r := range live {
			r.done <- err
		}
		return
	}
	a.db.log.Warn("audit group commit failed; writing entries one by one", "rows", len(live), "err", err)
	for _, r := range live {
		r.done <- a.write([]*auditReq{r})
	}
}

// write inserts the entries with one multi-row INSERT.
func (a *auditor) write(reqs []*auditReq) error {
	ctx, cancel := context.WithTimeout(context.Background(), auditWriteTime)
	defer cancel()
	args := make([]any, 0, len(reqs)*auditNumCols)
	for _, r := range reqs {
		args = appendAuditArgs(args, r.e)
	}
	// One multi-row INSERT is one atomic statement (its own transaction),
	// and its text depends only on the batch size, so it is prepared once
	// per size through the statement cache.
	_, err := a.db.writer.q().exec(ctx, auditInsert(len(reqs)), args...)
	if err != nil {
		a.db.log.Error("audit write failed", "rows", len(reqs), "err", err)
		return err
	}
	a.countCommit(len(reqs)) // before batches: see AuditCommits
	a.batches.Add(1)
	a.rows.Add(int64(len(reqs)))
	return nil
}

// appendAuditArgs appends the auditNumCols column values of e, in the
// order of auditCols.
func appendAuditArgs(args []any, e *worldforge.AuditEntry) []any {
	return append(args, e.ID, e.ActorID, nullStr(e.KeyID), nullStr(e.Tool), nullStr(e.Route),
		nullStr(e.TargetType), nullStr(e.TargetID), nullStr(e.WorldID), e.Outcome, ms(e.CreatedAt))
}

// insertAudit writes one audit row through q: the audit row of a commit,
// inside the commit's transaction (not through the group commit, which
// would acknowledge it apart from the change it records). It fills an empty
// ID and a zero CreatedAt like AppendAudit.
func insertAudit(ctx context.Context, q querier, e *worldforge.AuditEntry) error {
	if e.ID == "" {
		e.ID = worldforge.NewID("aud")
	}
	e.CreatedAt = stamp(e.CreatedAt)
	_, err := q.exec(ctx, auditInsert(1), appendAuditArgs(make([]any, 0, auditNumCols), e)...)
	return err
}

// auditInserts caches the INSERT text of each batch size.
var auditInserts sync.Map // int → string

func auditInsert(n int) string {
	if s, ok := auditInserts.Load(n); ok {
		return s.(string)
	}
	row := "(" + placeholders(auditNumCols) + ")"
	var b strings.Builder
	b.WriteString("INSERT INTO audit_log (" + auditCols + ") VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
	s := b.String()
	auditInserts.Store(n, s)
	return s
}

// auditConds are the conditions of an audit filter other than Viewer
// and BeforeSeq. Since not before Until is bad_request.
func auditConds(f worldforge.AuditFilter) ([]string, []any, error) {
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		return nil, nil, worldforge.BadRequest("audit time range: since %s is not before until %s",
			f.Since.Format(time.RFC3339), f.Until.Format(time.RFC3339))
	}
	var (
		conds []string
		args  []any
	)
	for _, c := range []struct{ col, v string }{
		{"actor_id", f.ActorID}, {"key_id", f.KeyID}, {"tool", f.Tool}, {"route", f.Route},
		{"world_id", f.WorldID}, {"outcome", f.Outcome},
	} {
		if c.v != "" {
			conds = append(conds, c.col+" = ?")
			args = append(args, c.v)
		}
	}
	if !f.Since.IsZero() {
		conds = append(conds, "created_at >= ?")
		args = append(args, ms(f.Since))
	}
	if !f.Until.IsZero() {
		conds = append(conds, "created_at < ?")
		args = append(args, ms(f.Until))
	}
	return conds, args, nil
}

// auditBranch is one part of a viewer's audit rows: its own conditions
// and arguments, ANDed with the filter's.
type auditBranch struct {
	cond string
	args []any
}

// viewerBranches splits the rows a viewer may read into branches, each
// read through an index in seq order (see the note at the top of
// console.go): the viewer's own rows (actor_id), and each world they own
// or run as GM (world_id; one IN list past maxBranches worlds). Branches
// the filter's actor or world excludes are left out; none left means no
// row.
func (db *DB) viewerBranches(ctx context.Context, f worldforge.AuditFilter) ([]auditBranch, error) {
	worlds, err := db.WorldsWhereGM(ctx, f.Viewer)
	if err != nil {
		return nil, err
	}
	if f.WorldID != "" {
		if slices.Contains(worlds, f.WorldID) {
			// Every row of the world is the viewer's to read, their own
			// included: one branch.
			return []auditBranch{{"world_id = ?", []any{f.WorldID}}}, nil
		}
		worlds = nil
	}
	var out []auditBranch
	if f.ActorID == "" || f.ActorID == f.Viewer {
		out = append(out, auditBranch{"actor_id = ?", []any{f.Viewer}})
	}
	if len(worlds) > maxBranches {
		return append(out, auditBranch{"world_id IN (" + placeholders(len(worlds)) + ")", anys(worlds)}), nil
	}
	for _, w := range worlds {
		out = append(out, auditBranch{"world_id = ?", []any{w}})
	}
	return out, nil
}

// auditSelect is ListAudit's column list: the sequence, then auditCols.
const auditSelect = "seq, " + auditCols

// ListAudit lists the rows the filter selects, newest first (by seq),
// below BeforeSeq when it is positive. Limit defaults to 100 and is capped
// at 1000. With a Viewer, the rows are read branch by branch
// (viewerBranches) and the first page of their union kept.
func (db *DB) ListAudit(ctx context.Context, f worldforge.AuditFilter) ([]worldforge.AuditEntry, error) {
	conds, args, err := auditConds(f)
	if err != nil {
		return nil, wrap("list audit", err)
	}
	if f.BeforeSeq > 0 {
		conds = append(conds, "seq < ?")
		args = append(args, f.BeforeSeq)
	}
	limit := clampLimit(f.Limit, auditListDefault, auditListMax)
	var branches []auditBranch
	if f.Viewer != "" {
		if branches, err = db.viewerBranches(ctx, f); err != nil || len(branches) == 0 {
			return []worldforge.AuditEntry{}, wrap("list audit", err)
		}
	}
	query, args, cached := auditPage(conds, args, branches, limit)
	run := db.reader.q().queryOnce
	if cached {
		run = db.reader.q().query
	}
	out, err := collect(scanAuditEntry)(run(ctx, query, args...))
	return out, wrap("list audit", err)
}

// auditPage returns the query of a page of audit rows, its arguments and
// whether its text is one of few (to keep in the statement cache):
// without branches, the rows the conditions select; with them, the first
// page of their union.
func auditPage(conds []string, args []any, branches []auditBranch, limit int) (string, []any, bool) {
	const order = " ORDER BY seq DESC"
	if len(branches) == 0 {
		return "SELECT " + auditSelect + " FROM audit_log" + where(conds) + order + " LIMIT ?", append(args, limit), true
	}
	var (
		b   strings.Builder
		all []any
	)
	// UNION ALL then DISTINCT (a row of the viewer's in one of their
	// worlds is in two branches): a UNION would sort every branch.
	b.WriteString("SELECT " + auditSelect + " FROM audit_log WHERE seq IN (SELECT DISTINCT seq FROM (")
	for i, br := range branches {
		if i > 0 {
			b.WriteString(" UNION ALL ")
		}
		b.WriteString("SELECT seq FROM (SELECT seq FROM audit_log" + where(conds, br.cond) + order +
			" LIMIT ?) AS b" + strconv.Itoa(i))
		all = append(append(append(all, args...), br.args...), limit)
	}
	b.WriteString(") AS u" + order + " LIMIT ?)" + order)
	return b.String(), append(all, limit), false
}

// CountAudit counts the rows the filter selects (Limit and BeforeSeq do
// not apply).
func (db *DB) CountAudit(ctx context.Context, f worldforge.AuditFilter) (int, error) {
	conds, args, err := auditConds(f)
	if err != nil {
		return 0, wrap("count audit", err)
	}
	var n int
	if f.Viewer == "" {
		err := db.reader.q().queryRow(ctx, "SELECT COUNT(*) FROM audit_log"+where(conds), args...).Scan(&n)
		return n, wrap("count audit", err)
	}
	branches, err := db.viewerBranches(ctx, f)
	if err != nil || len(branches) == 0 {
		return 0, wrap("count audit", err)
	}
	var (
		b   strings.Builder
		all []any
	)
	b.WriteString("SELECT COUNT(*) FROM (")
	for i, br := range branches {
		if i > 0 {
			b.WriteString(" UNION ")
		}
		b.WriteString("SELECT seq FROM audit_log" + where(conds, br.cond))
		all = append(append(all, args...), br.args...)
	}
	b.WriteString(") AS u")
	err = db.reader.q().queryRowOnce(ctx, b.String(), all...).Scan(&n)
	return n, wrap("count audit", err)
}

func scanAuditEntry(s scanner) (worldforge.AuditEntry, error) {
	var (
		e                                               worldforge.AuditEntry
		key, tool, route, targetType, targetID, worldID sql.NullString
		created                                         int64
	)
	err := s.Scan(&e.Seq, &e.ID, &e.ActorID, &key, &tool, &route, &targetType, &targetID, &worldID, &e.Outcome, &created)
	e.KeyID, e.Tool, e.Route = key.String, tool.String, route.String
	e.TargetType, e.TargetID, e.WorldID = targetType.String, targetID.String, worldID.String
	e.CreatedAt = fromMS(created)
	return e, err
}
