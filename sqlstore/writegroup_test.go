package sqlstore_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// TestCreateProposalConcurrent files proposals from many goroutines at
// once (on SQLite they share group commits, each in a savepoint), two
// proposers against a quota that refuses some of them: every acknowledged
// filing is there with its audit row, no refused one is, and the quota
// holds exactly.
func TestCreateProposalConcurrent(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner, a, b := newUser(t, db, "owner"), newUser(t, db, "a"), newUser(t, db, "b")
		w := newWorld(t, db, owner.ID, "w")
		const limit, workers, each = 40, 32, 4
		db.SetQuotas(worldforge.Quotas{PendingProposals: limit})
		var (
			mu       sync.Mutex
			acked    = map[string]string{} // proposal id → proposer
			refused  []string
			wg       sync.WaitGroup
			failures = make(chan error, workers*each)
		)
		for i := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				actor := a.ID
				if i%2 == 1 {
					actor = b.ID
				}
				for range each {
					p := &worldforge.Proposal{WorldID: w.ID, Kind: worldforge.ProposalWikiPage, ActorID: actor, DiffSummary: "d",
						Payload: payload(t, worldforge.WikiPagePayload{Title: "T"})}
					err := db.CreateProposal(ctx, p, &worldforge.AuditEntry{ActorID: actor, Tool: "propose_wiki_page", Outcome: "ok"})
					mu.Lock()
					switch {
					case err == nil:
						acked[p.ID] = actor
					case errors.Is(err, worldforge.QuotaExceeded(worldforge.QuotaPendingProposals)):
						refused = append(refused, p.ID)
					default:
						failures <- err
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		close(failures)
		for err := range failures {
			t.Fatal(err)
		}
		if len(acked) != 2*limit || len(refused) != workers*each-2*limit {
			t.Fatalf("%d filings acknowledged and %d refused, want %d and %d", len(acked), len(refused), 2*limit, workers*each-2*limit)
		}
		for id, actor := range acked {
			if n := count(t, db, "SELECT COUNT(*) FROM proposals WHERE id = ? AND actor_id = ? AND status = 'pending'", id, actor); n != 1 {
				t.Errorf("acknowledged proposal %s missing", id)
			}
			if n := count(t, db, "SELECT COUNT(*) FROM audit_log WHERE target_id = ?", id); n != 1 {
				t.Errorf("acknowledged proposal %s has %d audit rows", id, n)
			}
		}
		for _, id := range refused {
			if n := count(t, db, "SELECT COUNT(*) FROM proposals WHERE id = ?", id); n != 0 {
				t.Errorf("refused proposal %s was written", id)
			}
		}
		if n := count(t, db, "SELECT COUNT(*) FROM audit_log WHERE tool = 'propose_wiki_page'"); n != 2*limit {
			t.Errorf("%d audit rows of filings, want %d", n, 2*limit)
		}
	})
}
