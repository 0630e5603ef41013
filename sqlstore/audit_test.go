package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

func TestAuditAppendList(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		e1 := &worldforge.AuditEntry{ActorID: "user_a", KeyID: "key_1", Tool: "read_world", TargetType: "world",
			TargetID: "world_1", WorldID: "world_1", Outcome: "ok", CreatedAt: at(0)}
		e2 := &worldforge.AuditEntry{ActorID: "user_a", Route: "POST /proposals/:id/commit", WorldID: "world_2", Outcome: "committed", CreatedAt: at(1)}
		e3 := &worldforge.AuditEntry{ActorID: "user_b", Tool: "read_world", Outcome: "ok"} // ID and time filled
		for _, e := range []*worldforge.AuditEntry{e1, e2, e3} {
			must(t, db.AppendAudit(ctx, e))
		}
		if !worldforge.ValidID("aud", e3.ID) || e3.CreatedAt.IsZero() {
			t.Errorf("filled entry: %+v", e3)
		}

		lists := []struct {
			name string
			f    worldforge.AuditFilter
			want []worldforge.AuditEntry
		}{
			{"all, newest first", worldforge.AuditFilter{}, []worldforge.AuditEntry{*e3, *e2, *e1}},
			{"actor", worldforge.AuditFilter{ActorID: "user_a"}, []worldforge.AuditEntry{*e2, *e1}},
			{"tool", worldforge.AuditFilter{Tool: "read_world"}, []worldforge.AuditEntry{*e3, *e1}},
			{"world", worldforge.AuditFilter{WorldID: "world_2"}, []worldforge.AuditEntry{*e2}},
			{"actor and tool", worldforge.AuditFilter{ActorID: "user_a", Tool: "read_world"}, []worldforge.AuditEntry{*e1}},
			{"limit", worldforge.AuditFilter{Limit: 1}, []worldforge.AuditEntry{*e3}},
			{"none", worldforge.AuditFilter{ActorID: "user_z"}, []worldforge.AuditEntry{}},
		}
		for _, c := range lists {
			t.Run(c.name, func(t *testing.T) {
				got, err := db.ListAudit(ctx, c.f)
				must(t, err)
				diff(t, c.want, got, cmpopts.IgnoreFields(worldforge.AuditEntry{}, "Seq"))
				for i := range got {
					if got[i].Seq <= 0 || i > 0 && got[i].Seq >= got[i-1].Seq {
						t.Errorf("seqs not positive and decreasing: %d at %d", got[i].Seq, i)
					}
				}
				n, err := db.CountAudit(ctx, worldforge.AuditFilter{ActorID: c.f.ActorID, Tool: c.f.Tool, WorldID: c.f.WorldID})
				must(t, err)
				if c.f.Limit == 0 && n != len(c.want) {
					t.Errorf("CountAudit = %d, want %d", n, len(c.want))
				}
			})
		}

		// A caller whose context is over before its entry is written gets the
		// context's error, and the entry is not written.
		done, cancel := context.WithCancel(ctx)
		cancel()
		dead := &worldforge.AuditEntry{ActorID: "user_dead", Outcome: "ok"}
		if err := db.AppendAudit(done, dead); !errors.Is(err, context.Canceled) {
			t.Errorf("AppendAudit(cancelled) = %v, want context.Canceled", err)
		}
		if n, err := db.CountAudit(ctx, worldforge.AuditFilter{ActorID: "user_dead"}); err != nil || n != 0 {
			t.Errorf("cancelled entry written: count %d, err %v", n, err)
		}
	})
}

// TestAuditGroupCommit appends from 50 goroutines at once: every
// acknowledged row is stored exactly once.
func TestAuditGroupCommit(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		const workers, each = 50, 20
		batches0, rows0 := db.AuditStatsForTest()
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			acked = map[string]string{} // id → actor
		)
		for w := range workers {
			wg.Go(func() {
				actor := fmt.Sprintf("user_%02d", w)
				for i := range each {
					e := &worldforge.AuditEntry{ActorID: actor, Tool: "t", TargetID: fmt.Sprint(i), Outcome: "ok"}
					if err := db.AppendAudit(ctx, e); err != nil {
						t.Errorf("AppendAudit: %v", err)
						return
					}
					mu.Lock()
					acked[e.ID] = actor
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(acked) != workers*each {
			t.Fatalf("%d acknowledged ids, want %d", len(acked), workers*each)
		}
		n, err := db.CountAudit(ctx, worldforge.AuditFilter{Tool: "t"})
		must(t, err)
		if n != workers*each {
			t.Errorf("%d rows stored, want %d", n, workers*each)
		}
		seen := map[string]int{}
		for w := range workers {
			rows, err := db.ListAudit(ctx, worldforge.AuditFilter{ActorID: fmt.Sprintf("user_%02d", w), Limit: 1000})
			must(t, err)
			for _, r := range rows {
				seen[r.ID]++
				if acked[r.ID] != r.ActorID {
					t.Errorf("row %s of %s was not acknowledged to that actor", r.ID, r.ActorID)
				}
			}
		}
		for id := range acked {
			if seen[id] != 1 {
				t.Errorf("acknowledged row %s stored %d times", id, seen[id])
			}
		}
		batches1, rows1 := db.AuditStatsForTest()
		t.Logf("%d rows in %d group commits", rows1-rows0, batches1-batches0)
		if rows1-rows0 != workers*each {
			t.Errorf("writer counted %d rows, want %d", rows1-rows0, workers*each)
		}
	})
}

// TestAuditBatches holds the SQLite writer while 50 callers queue: once it
// is released they commit together, in at most two transactions.
func TestAuditBatches(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	ctx := t.Context()
	release, err := db.HoldWriterForTest(ctx)
	must(t, err)
	batches0, _ := db.AuditStatsForTest()
	const callers = 50
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			if err := db.AppendAudit(ctx, &worldforge.AuditEntry{ActorID: fmt.Sprint("user_", i), Outcome: "ok"}); err != nil {
				t.Errorf("AppendAudit: %v", err)
			}
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	for db.AuditPendingForTest() < callers {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d entries queued", db.AuditPendingForTest(), callers)
		}
		time.Sleep(time.Millisecond) // polled: the queue signals nothing a test could wait on
	}
	release()
	wg.Wait()
	batches1, _ := db.AuditStatsForTest()
	if got := batches1 - batches0; got < 1 || got > 2 {
		t.Errorf("%d callers committed in %d transactions, want 1 or 2", callers, got)
	}
	n, err := db.CountAudit(ctx, worldforge.AuditFilter{})
	must(t, err)
	if n != callers {
		t.Errorf("%d rows, want %d", n, callers)
	}
}

// TestAuditClose closes the store while 50 goroutines append: Close commits
// everything queued, every acknowledged row is there exactly once, nothing
// else is, and appending after Close fails at once.
func TestAuditClose(t *testing.T) {
	t.Parallel()
	dbtest.ForEachDSN(t, func(t *testing.T, dsn string) {
		ctx := t.Context()
		db, err := sqlstore.Open(ctx, dsn, dbtest.Options())
		must(t, err)

		const workers, most = 50, 200
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			acked   = map[string]bool{}
			started = make(chan struct{}, workers)
		)
		for w := range workers {
			wg.Go(func() {
				signal := sync.OnceFunc(func() { started <- struct{}{} })
				defer signal()
				for range most {
					e := &worldforge.AuditEntry{ActorID: fmt.Sprintf("user_%02d", w), Outcome: "ok"}
					err := db.AppendAudit(ctx, e)
					if errors.Is(err, sqlstore.ErrClosed) {
						return
					}
					if err != nil {
						t.Errorf("AppendAudit: %v", err)
						return
					}
					mu.Lock()
					acked[e.ID] = true
					mu.Unlock()
					signal()
				}
			})
		}
		for range workers {
			<-started
		}
		must(t, db.Close())
		wg.Wait()
		must(t, db.Close()) // a second Close is harmless

		late := make(chan error, 1)
		go func() { late <- db.AppendAudit(ctx, &worldforge.AuditEntry{ActorID: "user_late", Outcome: "ok"}) }()
		select {
		case err := <-late:
			if !errors.Is(err, sqlstore.ErrClosed) {
				t.Errorf("AppendAudit after Close = %v, want ErrClosed", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("AppendAudit after Close hangs")
		}

		again := dbtest.MustOpen(t, dsn)
		n, err := again.CountAudit(ctx, worldforge.AuditFilter{})
		must(t, err)
		if n != len(acked) {
			t.Errorf("%d rows stored, %d acknowledged", n, len(acked))
		}
		seen := map[string]int{}
		for w := range workers {
			rows, err := again.ListAudit(ctx, worldforge.AuditFilter{ActorID: fmt.Sprintf("user_%02d", w), Limit: 1000})
			must(t, err)
			for _, r := range rows {
				seen[r.ID]++
			}
		}
		for id := range acked {
			if seen[id] != 1 {
				t.Errorf("acknowledged row %s stored %d times", id, seen[id])
			}
		}
		t.Logf("%d rows acknowledged before Close", len(acked))
	})
}
