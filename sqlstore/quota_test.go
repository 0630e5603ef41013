package sqlstore_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// wantQuota fails unless err is quota_exceeded naming what, with the
// exact text of the tool error.
func wantQuota(t *testing.T, err error, what string) {
	t.Helper()
	var e *worldforge.Error
	if !errors.As(err, &e) || e.Error() != "quota_exceeded: "+what || !errors.Is(err, worldforge.QuotaExceeded(what)) {
		t.Fatalf("error %v, want quota_exceeded: %s", err, what)
	}
}

// count runs a one-integer query.
func count(t *testing.T, db *sqlstore.DB, query string, args ...any) int {
	t.Helper()
	n, err := db.QueryIntForTest(t.Context(), query, args...)
	must(t, err)
	return n
}

// sizedWorld is a world of cols×rows for owner (not stored).
func sizedWorld(owner string, cols, rows int) *worldforge.World {
	return &worldforge.World{OwnerID: owner, Name: "w", Cols: cols, Rows: rows,
		JSON: json.RawMessage(fmt.Sprintf(`{"grid":{"cols":%d,"rows":%d}}`, cols, rows))}
}

// resizeTo is a ResizeFunc setting the size and keeping the document.
func resizeTo(cols, rows int) worldforge.ResizeFunc {
	return func(w *worldforge.World, _ []worldforge.POI, _ *worldforge.WorldRuntime) (*worldforge.ResizePlan, error) {
		return &worldforge.ResizePlan{Doc: w.JSON, Cols: cols, Rows: rows}, nil
	}
}

func TestQuotaWorldsAndCells(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		alice, bob := newUser(t, db, "alice"), newUser(t, db, "bob")
		db.SetQuotas(worldforge.Quotas{Worlds: 2, Cells: 100})
		if got := db.Quotas(); got.Worlds != 2 || got.Cells != 100 {
			t.Fatalf("Quotas() = %+v", got)
		}
		w1 := sizedWorld(alice.ID, 5, 10) // 50 cells
		must(t, db.CreateWorld(ctx, w1))
		// CreateWorldContent (the tool's path) counts the same.
		w2 := sizedWorld(alice.ID, 5, 10) // 100 cells: at the quota
		must(t, db.CreateWorldContent(ctx, w2, &worldforge.WorldContent{}, alice.ID))
		wantQuota(t, db.CreateWorld(ctx, sizedWorld(alice.ID, 1, 1)), worldforge.QuotaWorlds)
		wantQuota(t, db.CreateWorldContent(ctx, sizedWorld(alice.ID, 1, 1), nil, alice.ID), worldforge.QuotaWorlds)
		if n := count(t, db, "SELECT COUNT(*) FROM worlds WHERE owner_id = ?", alice.ID); n != 2 {
			t.Fatalf("alice owns %d worlds after refusals", n)
		}
		// Another user's quota is their own.
		must(t, db.CreateWorld(ctx, sizedWorld(bob.ID, 10, 10)))
		wantQuota(t, db.CreateWorld(ctx, sizedWorld(bob.ID, 1, 1)), worldforge.QuotaCells)

		// A growing resize over the cells quota is refused and changes
		// nothing; shrinking, and growing back within it, are not.
		// The advance check agrees, before any resize work.
		wantQuota(t, db.CheckResizeQuota(ctx, w1.ID, 6, 10), worldforge.QuotaCells)
		must(t, db.CheckResizeQuota(ctx, w1.ID, 5, 10))
		must(t, db.CheckResizeQuota(ctx, w1.ID, 1, 1))
		if err := db.CheckResizeQuota(ctx, "world_missing", 6, 10); !errors.Is(err, worldforge.ErrNotFound) {
			t.Fatalf("CheckResizeQuota of a missing world: %v, want not_found", err)
		}
		_, err := db.ResizeWorld(ctx, w1.ID, resizeTo(6, 10))
		wantQuota(t, err, worldforge.QuotaCells)
		got, err := db.FindWorldHeader(ctx, w1.ID)
		must(t, err)
		if got.Cols != 5 || got.Rows != 10 || got.Version != 1 {
			t.Fatalf("refused resize changed the world: %+v", got)
		}
		_, err = db.ResizeWorld(ctx, w1.ID, resizeTo(4, 10))
		must(t, err)
		_, err = db.ResizeWorld(ctx, w1.ID, resizeTo(5, 10))
		must(t, err)
		// Over the quota already (it was lowered): shrinking still works.
		db.SetQuotas(worldforge.Quotas{Cells: 10})
		_, err = db.ResizeWorld(ctx, w1.ID, resizeTo(5, 9))
		must(t, err)
		_, err = db.ResizeWorld(ctx, w1.ID, resizeTo(5, 9)) // same size: not growing
		must(t, err)

		// Quotas off: no limit.
		db.SetQuotas(worldforge.Quotas{})
		must(t, db.CreateWorld(ctx, sizedWorld(alice.ID, 100, 100)))
		_, err = db.ResizeWorld(ctx, w1.ID, resizeTo(100, 100))
		must(t, err)
	})
}

func TestQuotaKeys(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		u := newUser(t, db, "u")
		db.SetQuotas(worldforge.Quotas{Keys: 2})
		key := func(i int) *worldforge.APIKey {
			return &worldforge.APIKey{UserID: u.ID, Hash: fmt.Appendf(nil, "hash-%d", i), Scopes: []string{"*"}}
		}
		must(t, db.CreateAPIKey(ctx, key(1)))
		must(t, db.CreateAPIKey(ctx, key(2)))
		wantQuota(t, db.CreateAPIKey(ctx, key(3)), worldforge.QuotaKeys)
		if n := count(t, db, "SELECT COUNT(*) FROM api_keys WHERE user_id = ?", u.ID); n != 2 {
			t.Fatalf("%d keys after a refusal", n)
		}
		// Revoked keys do not count.
		must(t, db.RevokeAPIKey(ctx, []byte("hash-1")))
		must(t, db.CreateAPIKey(ctx, key(3)))
		wantQuota(t, db.CreateAPIKey(ctx, key(4)), worldforge.QuotaKeys)
		wantCode(t, db.CreateAPIKey(ctx, &worldforge.APIKey{UserID: "nobody", Hash: []byte("h"), Scopes: []string{"*"}}), worldforge.ENotFound)
		db.SetQuotas(worldforge.Quotas{})
		must(t, db.CreateAPIKey(ctx, key(4)))
	})
}

func TestQuotaPendingProposals(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner, agent := newUser(t, db, "owner"), newUser(t, db, "agent")
		w := newWorld(t, db, owner.ID, "w")
		db.SetQuotas(worldforge.Quotas{PendingProposals: 2})
		page := func() *worldforge.Proposal {
			return &worldforge.Proposal{WorldID: w.ID, Kind: worldforge.ProposalWikiPage, ActorID: agent.ID, DiffSummary: "d",
				Payload: payload(t, worldforge.WikiPagePayload{Title: "T"})}
		}
		p1 := propose(t, db, page())
		propose(t, db, page())
		before := count(t, db, "SELECT COUNT(*) FROM audit_log")
		wantQuota(t, db.CreateProposal(ctx, page(), &worldforge.AuditEntry{ActorID: agent.ID, Tool: "propose_wiki_page", Outcome: "ok"}), worldforge.QuotaPendingProposals)
		if n := count(t, db, "SELECT COUNT(*) FROM proposals WHERE actor_id = ?", agent.ID); n != 2 {
			t.Fatalf("%d proposals after a refusal", n)
		}
		if n := count(t, db, "SELECT COUNT(*) FROM audit_log"); n != before {
			t.Fatalf("a refused proposal wrote %d audit rows", n-before)
		}
		// Another filer has a quota of their own; a decided proposal
		// leaves the count.
		propose(t, db, &worldforge.Proposal{WorldID: w.ID, Kind: worldforge.ProposalWikiPage, ActorID: owner.ID,
			Payload: payload(t, worldforge.WikiPagePayload{Title: "O"})})
		_, err := db.RejectProposal(ctx, p1.ID, owner.ID, "", nil, nil)
		must(t, err)
		propose(t, db, page())
		wantQuota(t, db.CreateProposal(ctx, page(), nil), worldforge.QuotaPendingProposals)
		db.SetQuotas(worldforge.Quotas{})
		p4 := propose(t, db, page())
		_, err = db.CommitProposal(ctx, p4.ID, owner.ID, nil, nil)
		must(t, err)
		// The counts the check reads (kept by triggers) are the pending
		// proposals, after filings, a rejection, a commit, and the
		// deletion of their world.
		same := func(when string) {
			t.Helper()
			for _, u := range []string{owner.ID, agent.ID} {
				want := count(t, db, "SELECT COUNT(*) FROM proposals WHERE actor_id = ? AND status = 'pending'", u)
				got := count(t, db, "SELECT COALESCE((SELECT n FROM pending_proposal_counts WHERE actor_id = ?), 0)", u)
				if got != want {
					t.Errorf("%s: counted %d pending proposals, there are %d", when, got, want)
				}
			}
		}
		same("filed and decided")
		must(t, db.ExecForTest(ctx, "DELETE FROM worlds WHERE id = ?", w.ID))
		same("world deleted")
	})
}

func TestQuotaLoreEntities(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner := newUser(t, db, "owner")
		w := newWorld(t, db, owner.ID, "w")
		entity := func(id string) *worldforge.LoreEntity {
			return &worldforge.LoreEntity{WorldID: w.ID, Collection: "deities", ID: id, Name: id, JSON: json.RawMessage(`{"id":"` + id + `","name":"` + id + `"}`)}
		}
		lore := func(changeset string, ids ...string) *worldforge.Proposal {
			var ops []worldforge.StoredLoreOp
			for _, id := range ids {
				ops = append(ops, worldforge.StoredLoreOp{Op: worldforge.LoreOpUpsert, Collection: "deities", ID: id, Name: id,
					Entity: json.RawMessage(`{"id":"` + id + `","name":"` + id + `"}`)})
			}
			return propose(t, db, &worldforge.Proposal{WorldID: w.ID, Kind: worldforge.ProposalWorld, TargetID: w.ID, BaseVersion: 1,
				ActorID: owner.ID, ChangesetID: changeset, Payload: payload(t, worldforge.LorePayload{Operations: ops})})
		}
		loreCount := func() int { return count(t, db, "SELECT COUNT(*) FROM lore_entities WHERE world_id = ?", w.ID) }
		db.SetQuotas(worldforge.Quotas{LoreEntities: 3})
		must(t, db.UpsertLore(ctx, entity("a")))

		// A commit adding entities past the quota rolls back: the proposal
		// stays pending, the world keeps its version, no audit row.
		over := lore("", "b", "c", "d")
		_, err := db.CommitProposal(ctx, over.ID, owner.ID, nil, commitAudit(owner.ID))
		wantQuota(t, err, worldforge.QuotaLoreEntities)
		wantStatus(t, db, over.ID, worldforge.ProposalPending)
		// A changeset whose proposals together go past it, too.
		cs1, cs2 := lore("cs-1", "b", "c"), lore("cs-1", "d")
		_, err = db.CommitChangeset(ctx, w.ID, "cs-1", owner.ID, nil, nil)
		wantQuota(t, err, worldforge.QuotaLoreEntities)
		wantStatus(t, db, cs1.ID, worldforge.ProposalPending)
		wantStatus(t, db, cs2.ID, worldforge.ProposalPending)
		if n := loreCount(); n != 1 {
			t.Fatalf("%d entities after refused commits", n)
		}
		if n := count(t, db, "SELECT COUNT(*) FROM audit_log"); n != 0 {
			t.Fatalf("refused commits wrote %d audit rows", n)
		}
		if got, _ := db.FindWorldHeader(ctx, w.ID); got.Version != 1 {
			t.Fatalf("refused commits raised the world's version to %d", got.Version)
		}
		// Up to the quota commits.
		ok := lore("", "b", "c")
		_, err = db.CommitProposal(ctx, ok.ID, owner.ID, nil, commitAudit(owner.ID))
		must(t, err)
		// At the quota: replacing an entity is fine, adding one is not.
		must(t, db.UpsertLore(ctx, entity("a")))
		wantQuota(t, db.UpsertLore(ctx, entity("z")), worldforge.QuotaLoreEntities)
		if n := loreCount(); n != 3 {
			t.Fatalf("%d entities, want 3", n)
		}
		db.SetQuotas(worldforge.Quotas{})
		must(t, db.UpsertLore(ctx, entity("z")))
	})
}

// TestQuotaConcurrent races many writers at each quota: exactly the quota
// of them succeed, the others get quota_exceeded, on both engines.
func TestQuotaConcurrent(t *testing.T) {
	t.Parallel()
	const writers, limit = 24, 5
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner := newUser(t, db, "owner")
		// The worlds the resizes grow, one cell each, made before the
		// quotas are on.
		small := make([]*worldforge.World, writers)
		for i := range small {
			small[i] = sizedWorld(owner.ID, 1, 1)
			must(t, db.CreateWorld(ctx, small[i]))
		}
		lw := newWorld(t, db, owner.ID, "lore")
		race := func(name, what string, write func(i int) error) {
			t.Helper()
			var (
				wg      sync.WaitGroup
				ok, out atomic.Int64
				start   = make(chan struct{})
			)
			for i := range writers {
				wg.Go(func() {
					<-start
					err := write(i)
					switch {
					case err == nil:
						ok.Add(1)
					case errors.Is(err, worldforge.QuotaExceeded(what)):
						out.Add(1)
					default:
						t.Errorf("%s %d: %v", name, i, err)
					}
				})
			}
			close(start)
			wg.Wait()
			if ok.Load() != limit || out.Load() != writers-limit {
				t.Errorf("%s: %d succeeded, %d refused; want %d and %d", name, ok.Load(), out.Load(), limit, writers-limit)
			}
		}

		worlds := newUser(t, db, "worlds")
		db.SetQuotas(worldforge.Quotas{Worlds: limit})
		race("create world", worldforge.QuotaWorlds, func(int) error {
			return db.CreateWorldContent(ctx, sizedWorld(worlds.ID, 2, 2), &worldforge.WorldContent{}, worlds.ID)
		})
		db.SetQuotas(worldforge.Quotas{Cells: writers + limit + 64*48}) // the 1×1 worlds, lw, and room for limit resizes
		race("resize", worldforge.QuotaCells, func(i int) error {
			_, err := db.ResizeWorld(ctx, small[i].ID, resizeTo(2, 1))
			return err
		})
		keys := newUser(t, db, "keys")
		db.SetQuotas(worldforge.Quotas{Keys: limit})
		race("create key", worldforge.QuotaKeys, func(i int) error {
			return db.CreateAPIKey(ctx, &worldforge.APIKey{UserID: keys.ID, Hash: fmt.Appendf(nil, "race-%d", i), Scopes: []string{"*"}})
		})
		agent := newUser(t, db, "agent")
		db.SetQuotas(worldforge.Quotas{PendingProposals: limit})
		race("propose", worldforge.QuotaPendingProposals, func(i int) error {
			return db.CreateProposal(ctx, &worldforge.Proposal{WorldID: lw.ID, Kind: worldforge.ProposalWikiPage, ActorID: agent.ID,
				DiffSummary: "d", Payload: payload(t, worldforge.WikiPagePayload{Title: fmt.Sprint(i)})}, nil)
		})
		db.SetQuotas(worldforge.Quotas{LoreEntities: limit})
		race("upsert lore", worldforge.QuotaLoreEntities, func(i int) error {
			id := fmt.Sprintf("e%d", i)
			return db.UpsertLore(ctx, &worldforge.LoreEntity{WorldID: lw.ID, Collection: "deities", ID: id, Name: id,
				JSON: json.RawMessage(`{"id":"` + id + `","name":"` + id + `"}`)})
		})
	})
}
