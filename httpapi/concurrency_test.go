package httpapi_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// TestConcurrentCalls runs many clients at once against the real server
// (both protocol revisions, several credentials, successes and failures
// mixed) and checks that every acknowledged success has exactly one audit
// row and no failure has any.
func TestConcurrentCalls(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := testserver.Start(t, db)
		ownerKey := s.Key(t, s.Owner, wf.ScopeAll)
		gmKey := s.Key(t, s.GM, wf.ScopeWikiRead, wf.ScopeAtlasRead)
		strangerKey := s.Key(t, s.Stranger, wf.ScopeAll)
		before := s.AuditCount(t)

		const workers, calls = 24, 15
		var ok, failed atomic.Int64
		perTool := make([]atomic.Int64, 3)
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				protocol := []string{"2026-07-28", "2025-11-25"}[w%2]
				owner := connect(t, s, ownerKey, protocol)
				gm := connect(t, s, gmKey, protocol)
				stranger := connect(t, s, strangerKey, protocol)
				for i := range calls {
					var (
						text  string
						isErr bool
						want  bool // success expected
					)
					switch (w + i) % 3 {
					case 0:
						text, isErr = callTool(t, owner, "read_world", map[string]any{"id": s.World.ID})
						want = true
					case 1:
						text, isErr = callTool(t, gm, "list_wiki_pages", map[string]any{"world_id": s.World.ID})
						want = true
					case 2:
						text, isErr = callTool(t, stranger, "read_world", map[string]any{"id": s.World.ID})
					}
					if isErr == want {
						errs <- fmt.Errorf("worker %d call %d: %q (isError=%v)", w, i, text, isErr)
						return
					}
					if want {
						ok.Add(1)
						perTool[(w+i)%3].Add(1)
					} else {
						failed.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if got, want := s.AuditCount(t), before+int(ok.Load()); got != want {
			t.Errorf("audit rows %d, want %d (%d successes, %d failures)", got, want, ok.Load(), failed.Load())
		}
		ctx := context.Background()
		for i, tool := range []string{"read_world", "list_wiki_pages"} {
			n, err := s.DB.CountAudit(ctx, wf.AuditFilter{Tool: tool})
			if err != nil {
				t.Fatal(err)
			}
			if int64(n) != perTool[i].Load() {
				t.Errorf("%s: %d audit rows, want %d", tool, n, perTool[i].Load())
			}
		}
		if n, _ := s.DB.CountAudit(ctx, wf.AuditFilter{ActorID: s.Stranger.ID}); n != 0 {
			t.Errorf("stranger's not_found calls left %d audit rows", n)
		}
	})
}
