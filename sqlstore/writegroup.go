package sqlstore

import (
	"context"
	"sync"
)

// writeGroup is the group commit of SQLite's small write transactions
// (filing a proposal with its audit row): one goroutine runs the queued
// writes of many callers in one transaction on the single writer
// connection, each inside a savepoint of its own, and commits once. A
// commit writes each page it changed to the WAL once, so writes that touch
// the same pages (the proposals table, its indexes, the audit log) share
// that cost instead of each paying it. A write that fails is rolled back
// to its savepoint and fails alone; a caller is answered only once the
// transaction holding its write has committed (or failed), so an
// acknowledged write is as durable as one committed alone.
type writeGroup struct {
	p        *pool
	maxBatch int

	mu     sync.RWMutex // held for reading while sending on queue, for writing by close
	closed bool
	queue  chan *groupWrite
	done   chan struct{} // closed when run returns
}

// groupWrite is one queued write: fn runs in the group's transaction with
// the group's context (a caller's cancellation must not interrupt the
// others' statements); ctx is the caller's, checked before fn runs.
type groupWrite struct {
	ctx  context.Context
	fn   func(ctx context.Context, q querier) error
	done chan error // buffered: the writer never blocks on a caller
}

func startWriteGroup(p *pool, maxBatch int) *writeGroup {
	g := &writeGroup{p: p, maxBatch: maxBatch, queue: make(chan *groupWrite, 4*maxBatch), done: make(chan struct{})}
	go g.run()
	return g
}

// do runs fn in the next group transaction and returns its error, or the
// commit's. Once queued, the write is waited for even if ctx ends (its
// outcome is then known): ctx only keeps a write that has not started from
// running.
func (g *writeGroup) do(ctx context.Context, fn func(ctx context.Context, q querier) error) error {
	w := &groupWrite{ctx: ctx, fn: fn, done: make(chan error, 1)}
	g.mu.RLock()
	if g.closed {
		g.mu.RUnlock()
		return ErrClosed
	}
	select {
	case g.queue <- w:
	case <-ctx.Done():
		g.mu.RUnlock()
		return ctx.Err()
	}
	g.mu.RUnlock()
	return <-w.done
}

// close refuses new writes, lets run commit those queued, and waits for it.
func (g *writeGroup) close() {
	g.mu.Lock()
	if !g.closed {
		g.closed = true
		close(g.queue)
	}
	g.mu.Unlock()
	<-g.done
}

func (g *writeGroup) run() {
	defer close(g.done)
	batch := make([]*groupWrite, 0, g.maxBatch)
	for {
		w, ok := <-g.queue
		if !ok {
			return
		}
		batch, _ = gather(g.queue, append(batch[:0], w), g.maxBatch)
		g.flush(batch)
		clear(batch)
	}
}

// flush runs the batch in one transaction and answers every caller.
func (g *writeGroup) flush(batch []*groupWrite) {
	ctx, cancel := context.WithTimeout(context.Background(), auditWriteTime)
	defer cancel()
	errs := make([]error, len(batch))
	err := g.p.tx(ctx, func(q querier) error {
		if len(batch) == 1 { // alone: the transaction is its savepoint
			if errs[0] = batch[0].ctx.Err(); errs[0] == nil {
				errs[0] = batch[0].fn(ctx, q)
			}
			return errs[0]
		}
		for i, w := range batch {
			if errs[i] = w.ctx.Err(); errs[i] != nil {
				continue
			}
			if _, err := q.exec(ctx, "SAVEPOINT group_write"); err != nil {
				return err
			}
			if errs[i] = w.fn(ctx, q); errs[i] != nil {
				if _, err := q.exec(ctx, "ROLLBACK TO group_write"); err != nil {
					return err
				}
			}
			if _, err := q.exec(ctx, "RELEASE group_write"); err != nil {
				return err
			}
		}
		return nil
	})
	for i, w := range batch {
		switch {
		case errs[i] != nil:
			w.done <- errs[i]
		default:
			w.done <- err // nil once committed
		}
	}
}
