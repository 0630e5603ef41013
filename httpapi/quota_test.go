package httpapi_test

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// TestQuotasOverMCPAndREST: each quota, hit over /mcp (a tool error with
// the exact text quota_exceeded: <what>) or REST (429 with the usual
// error body), changes nothing and writes no audit row; with the quotas
// off the same writes go through.
func TestQuotasOverMCPAndREST(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := testserver.Start(t, db)
		ctx := t.Context()
		// The owner's agent: a world:write API key, as in the threat.
		owner := connect(t, s, s.Key(t, s.Owner, wf.ScopeWorldWrite, wf.ScopeWorldRead), "")
		gm := connect(t, s, s.Token(t, s.GM), "")
		ownerTok := s.Token(t, s.Owner)
		ownedWorlds := func() int {
			ids, err := db.WorldsWhereGM(ctx, s.Owner.ID)
			if err != nil {
				t.Fatal(err)
			}
			return len(ids)
		}
		loreCount := func(world string) int {
			counts, err := db.CountLore(ctx, world)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, c := range counts {
				n += c
			}
			return n
		}
		pending := func(actor string) int {
			ps, err := db.ListProposals(ctx, wf.ProposalFilter{ActorID: actor, Status: wf.ProposalPending})
			if err != nil {
				t.Fatal(err)
			}
			return len(ps)
		}
		// refused calls a tool that must fail with want, leaving the
		// owner's worlds and the audit log as they were.
		refused := func(cs *mcp.ClientSession, tool string, args map[string]any, want string) {
			t.Helper()
			worlds, audit := ownedWorlds(), s.AuditCount(t)
			text, isErr := callTool(t, cs, tool, args)
			if !isErr || text != want {
				t.Fatalf("%s %v: isError %v %q, want %q", tool, args, isErr, text, want)
			}
			if n := ownedWorlds(); n != worlds {
				t.Errorf("%s: the owner has %d worlds, had %d", tool, n, worlds)
			}
			if n := s.AuditCount(t) - audit; n != 0 {
				t.Errorf("%s: a refusal wrote %d audit rows", tool, n)
			}
		}
		// restRefused posts to a REST route that must answer 429
		// quota_exceeded naming what, with no audit row.
		restRefused := func(url, what string) {
			t.Helper()
			audit := s.AuditCount(t)
			status, body := rest(t, "POST", url, ownerTok, "")
			var e struct{ Error, Detail string }
			if status != 429 || json.Unmarshal([]byte(body), &e) != nil || e.Error != wf.EQuotaExceeded || e.Detail != what {
				t.Fatalf("POST %s: %d %s, want 429 quota_exceeded %s", url, status, body, what)
			}
			if n := s.AuditCount(t) - audit; n != 0 {
				t.Errorf("POST %s: a refusal wrote %d audit rows", url, n)
			}
		}
		blank := map[string]any{"name": "Blank", "size": "small"} // 32×24, no lore

		// Worlds: the seed world and one more.
		db.SetQuotas(wf.Quotas{Worlds: 2})
		text, isErr := callTool(t, owner, wf.ToolCreateWorld, blank)
		if isErr {
			t.Fatal(text)
		}
		var w wf.CreateWorldResult
		mustDecode(t, text, &w)
		refused(owner, wf.ToolCreateWorld, blank, "quota_exceeded: worlds")

		// Cells: the seed world's 16×12 and w's 32×24, with room for 100.
		db.SetQuotas(wf.Quotas{Cells: 16*12 + 32*24 + 100})
		refused(owner, wf.ToolCreateWorld, blank, "quota_exceeded: cells")
		refused(owner, wf.ToolResizeWorld, map[string]any{"world_id": w.ID, "cols": 40, "rows": 24}, "quota_exceeded: cells")
		if h, err := db.FindWorldHeader(ctx, w.ID); err != nil || h.Cols != 32 || h.Rows != 24 || h.Version != 1 {
			t.Fatalf("a refused resize changed the world: %+v %v", h, err)
		}
		if text, isErr := callTool(t, owner, wf.ToolResizeWorld, map[string]any{"world_id": w.ID, "cols": 32, "rows": 27}); isErr {
			t.Fatalf("resize within the quota: %s", text)
		}

		// Lore entities, per world: a template's lore counts at creation.
		db.SetQuotas(wf.Quotas{LoreEntities: 1})
		refused(owner, wf.ToolCreateWorld, map[string]any{"name": "Jungle", "template": "starter-jungle", "size": "small"}, "quota_exceeded: lore_entities")
		// And at a commit over REST: the seed world holds one entity.
		db.SetQuotas(wf.Quotas{LoreEntities: 2})
		ops := []any{
			map[string]any{"op": "upsert", "collection": "deities", "entity": map[string]any{"id": "tide-mother", "name": "The Tide Mother"}},
			map[string]any{"op": "upsert", "collection": "deities", "entity": map[string]any{"id": "storm-father", "name": "The Storm Father"}},
		}
		lore := propose(t, gm, wf.ToolProposeLore, map[string]any{"world_id": s.World.ID, "operations": ops, "diff_summary": "two gods"})
		restRefused(s.URL+"/proposals/"+lore.ProposalID+"/commit", wf.QuotaLoreEntities)
		inSet := propose(t, gm, wf.ToolProposeLore, map[string]any{"world_id": s.World.ID, "operations": ops, "diff_summary": "two gods", "changeset_id": "gods-1"})
		restRefused(s.URL+"/worlds/"+s.World.ID+"/changesets/gods-1/commit", wf.QuotaLoreEntities)
		for _, id := range []string{lore.ProposalID, inSet.ProposalID} {
			if st := proposalStatus(t, db, id); st != wf.ProposalPending {
				t.Errorf("refused proposal %s is %s", id, st)
			}
		}
		if n := loreCount(s.World.ID); n != 1 {
			t.Errorf("%d lore entities after refused commits, want 1", n)
		}
		if h, _ := db.FindWorldHeader(ctx, s.World.ID); h.Version != s.World.Version {
			t.Errorf("refused commits raised the world's version to %d", h.Version)
		}

		// Pending proposals, per filer: the GM has two pending.
		db.SetQuotas(wf.Quotas{PendingProposals: 2})
		page := map[string]any{"world_id": s.World.ID, "payload": map[string]any{"title": "Flood"}, "diff_summary": "a page"}
		refused(gm, wf.ToolProposeWikiPage, page, "quota_exceeded: pending_proposals")
		if n := pending(s.GM.ID); n != 2 {
			t.Errorf("%d pending proposals after a refusal, want 2", n)
		}
		// The owner files under a quota of their own.
		propose(t, connect(t, s, ownerTok, ""), wf.ToolProposeWikiPage, page)
		// A decision frees a place.
		if status, body := rest(t, "POST", s.URL+"/proposals/"+inSet.ProposalID+"/reject", ownerTok, ""); status != 200 {
			t.Fatalf("reject: %d %s", status, body)
		}
		propose(t, gm, wf.ToolProposeWikiPage, page)
		refused(gm, wf.ToolProposeWikiPage, page, "quota_exceeded: pending_proposals")

		// Quotas off (serve --quotas=false): all of it goes through.
		db.SetQuotas(wf.Quotas{})
		if text, isErr := callTool(t, owner, wf.ToolCreateWorld, map[string]any{"name": "Jungle", "template": "starter-jungle", "size": "small"}); isErr {
			t.Fatalf("quotas off: create: %s", text)
		}
		if text, isErr := callTool(t, owner, wf.ToolResizeWorld, map[string]any{"world_id": w.ID, "cols": 64, "rows": 48}); isErr {
			t.Fatalf("quotas off: resize: %s", text)
		}
		if status, body := rest(t, "POST", s.URL+"/proposals/"+lore.ProposalID+"/commit", ownerTok, ""); status != 200 {
			t.Fatalf("quotas off: commit: %d %s", status, body)
		}
		propose(t, gm, wf.ToolProposeWikiPage, page)
	})
}

// TestQuotaRaceOverMCP: agents creating worlds at once over /mcp, at the
// worlds quota: exactly the quota's worth succeed.
func TestQuotaRaceOverMCP(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := testserver.Start(t, db)
		const agents, room = 12, 4
		db.SetQuotas(wf.Quotas{Worlds: 1 + room}) // the seed world and room more
		key := s.Key(t, s.Owner, wf.ScopeWorldWrite)
		var (
			wg        sync.WaitGroup
			mu        sync.Mutex
			ok, other int
			refusals  int
		)
		start := make(chan struct{})
		for range agents {
			cs := connect(t, s, key, "")
			wg.Go(func() {
				<-start
				text, isErr := callTool(t, cs, wf.ToolCreateWorld, map[string]any{"name": "Race", "size": "small"})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case !isErr:
					ok++
				case text == "quota_exceeded: worlds":
					refusals++
				default:
					other++
					t.Errorf("create: %s", text)
				}
			})
		}
		close(start)
		wg.Wait()
		if ok != room || refusals != agents-room || other != 0 {
			t.Fatalf("%d created, %d refused, %d other; want %d and %d", ok, refusals, other, room, agents-room)
		}
		if ids, _ := db.WorldsWhereGM(t.Context(), s.Owner.ID); len(ids) != 1+room {
			t.Fatalf("the owner has %d worlds, want %d", len(ids), 1+room)
		}
	})
}
