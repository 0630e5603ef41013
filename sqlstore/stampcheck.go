package sqlstore

import (
	"context"
	"strings"
	"sync"
	"time"
)

// stampChecks bounds the worlds one stamp query reads, and stampCheckTime
// the time it may take.
const (
	maxStampChecks = 64
	stampCheckTime = 30 * time.Second
)

// stampChecker reads world stamps for concurrent callers in shared
// queries: one goroutine takes the worlds queued while the previous query
// ran and reads all their stamps with one statement on the reader pool.
// Every caller's stamp is read after it asked (the query starts after its
// request is queued) and before it is answered, so it is the world's stamp
// at a moment within the call, as a query of its own would be; a busy
// server pays one statement (one round trip on PostgreSQL) for many calls.
type stampChecker struct {
	p *pool

	mu     sync.RWMutex // held for reading while sending on queue, for writing by close
	closed bool
	queue  chan *stampCheck
	done   chan struct{} // closed when run returns
}

// stampCheck is one queued read of a world's stamp.
type stampCheck struct {
	id    string
	stamp int64 // 0: the world has no stamp (no such world)
	err   error
	done  chan struct{}
}

func startStampChecker(p *pool) *stampChecker {
	c := &stampChecker{p: p, queue: make(chan *stampCheck, 4*maxStampChecks), done: make(chan struct{})}
	go c.run()
	return c
}

// read returns the world's stamp now (0 if it has none).
func (c *stampChecker) read(ctx context.Context, id string) (int64, error) {
	r := &stampCheck{id: id, done: make(chan struct{})}
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		return 0, ErrClosed
	}
	select {
	case c.queue <- r:
	case <-ctx.Done():
		c.mu.RUnlock()
		return 0, ctx.Err()
	}
	c.mu.RUnlock()
	select {
	case <-r.done:
		return r.stamp, r.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (c *stampChecker) close() {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.queue)
	}
	c.mu.Unlock()
	<-c.done
}

func (c *stampChecker) run() {
	defer close(c.done)
	var (
		batch []*stampCheck
		ids   []string
	)
	for {
		r, ok := <-c.queue
		if !ok {
			return
		}
		batch, _ = gather(c.queue, append(batch[:0], r), maxStampChecks)
		ids = ids[:0]
		for _, r := range batch {
			if !contains(ids, r.id) {
				ids = append(ids, r.id)
			}
		}
		stamps, err := c.query(ids)
		for _, r := range batch {
			r.stamp, r.err = stamps[r.id], err
			close(r.done)
		}
		clear(batch)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// stampQueries caches the query text of each number of placeholders.
var stampQueries sync.Map // int → string

// query reads the stamps of the worlds (a world without one is left out).
// The IN list has a power of two of places, the last world repeated in
// the spare ones, so that at most 7 texts go through the pool's statement
// cache.
func (c *stampChecker) query(ids []string) (map[string]int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), stampCheckTime)
	defer cancel()
	n := 1
	for n < len(ids) {
		n *= 2
	}
	q, ok := stampQueries.Load(n)
	if !ok {
		q = "SELECT world_id, stamp FROM world_stamps WHERE world_id IN (" +
			strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
		stampQueries.Store(n, q)
	}
	args := make([]any, n)
	for i := range args {
		args[i] = ids[min(i, len(ids)-1)]
	}
	rows, err := c.p.q().query(ctx, q.(string), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string]int64, len(ids))
	for rows.Next() {
		var (
			id    string
			stamp int64
		)
		if err := rows.Scan(&id, &stamp); err != nil {
			return nil, err
		}
		out[id] = stamp
	}
	return out, rows.Err()
}
