package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// propose calls a propose tool and returns the result, failing on a tool
// error.
func propose(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) wf.ProposeResult {
	t.Helper()
	text, isErr := callTool(t, cs, tool, args)
	if isErr {
		t.Fatalf("%s: %s", tool, text)
	}
	var res wf.ProposeResult
	mustDecode(t, text, &res)
	if !wf.ValidID("prop", res.ProposalID) || res.AuditID != res.ProposalID {
		t.Fatalf("%s: %s", tool, text)
	}
	return res
}

// proposalStatus reads a proposal straight from the store.
func proposalStatus(t *testing.T, db *sqlstore.DB, id string) string {
	t.Helper()
	p, err := db.FindProposal(t.Context(), id)
	if err != nil {
		t.Fatalf("find proposal %s: %v", id, err)
	}
	return p.Status
}

func TestProposeAndCommitQuest(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := testserver.Start(t, db)
		owner := connect(t, s, s.Token(t, s.Owner), "")
		gm := connect(t, s, s.Token(t, s.GM), "")

		// A new quest: proposed, nothing created until committed.
		before := s.AuditCount(t)
		res := propose(t, owner, wf.ToolProposeQuest, map[string]any{"payload": map[string]any{"name": "Find the bell", "json": map[string]any{"steps": 3}}, "diff_summary": "new quest"})
		if res.WorldID != "" || res.AutoAccepted != nil {
			t.Errorf("propose result %+v", res)
		}
		if n := s.AuditCount(t) - before; n != 1 {
			t.Errorf("propose: %d audit rows", n)
		}
		quests, _ := dbtest.Quests(t.Context(), db, s.Owner.ID, "")
		if len(quests) != 1 { // the seeded one only
			t.Fatalf("a proposal created a quest: %+v", quests)
		}
		// Someone else cannot commit it (and is told what a missing
		// proposal answers); the owner can, once.
		if text, isErr := callTool(t, gm, wf.ToolCommitQuest, map[string]any{"proposal_id": res.ProposalID, "confirm": true}); !isErr || text != "proposal_not_found" {
			t.Errorf("gm commit: %s", text)
		}
		if text, isErr := callTool(t, owner, wf.ToolCommitEncounter, map[string]any{"proposal_id": res.ProposalID, "confirm": true}); !isErr || text != "proposal_not_found" {
			t.Errorf("commit as encounter: %s", text)
		}
		before = s.AuditCount(t)
		text, isErr := callTool(t, owner, wf.ToolCommitQuest, map[string]any{"proposal_id": res.ProposalID, "confirm": true})
		if isErr {
			t.Fatal(text)
		}
		var cr wf.CommitResult
		mustDecode(t, text, &cr)
		if cr.Version != 1 || !wf.ValidID("quest", cr.TargetID) || cr.Proposal.Status != wf.ProposalCommitted || cr.AuditID == "" {
			t.Errorf("commit result %s", text)
		}
		if n := s.AuditCount(t) - before; n != 1 {
			t.Errorf("commit: %d audit rows", n)
		}
		q, err := db.FindQuestByID(t.Context(), cr.TargetID)
		if err != nil || q.Name != "Find the bell" || q.OwnerID != s.Owner.ID {
			t.Fatalf("committed quest %+v %v", q, err)
		}
		if text, isErr := callTool(t, owner, wf.ToolCommitQuest, map[string]any{"proposal_id": res.ProposalID, "confirm": true}); !isErr || text != "conflict: not_pending" {
			t.Errorf("second commit: %s", text)
		}

		// Two changes against the same version: the first wins, the second
		// is version_conflict and stays pending.
		a := propose(t, owner, wf.ToolProposeQuest, map[string]any{"id": q.ID, "payload": map[string]any{"name": "Ring the bell"}, "diff_summary": "rename"})
		b := propose(t, owner, wf.ToolProposeQuest, map[string]any{"id": q.ID, "payload": map[string]any{"json": map[string]any{"steps": 4}}, "diff_summary": "more steps"})
		if text, isErr := callTool(t, owner, wf.ToolCommitQuest, map[string]any{"proposal_id": a.ProposalID, "confirm": true}); isErr {
			t.Fatal(text)
		}
		before = s.AuditCount(t)
		if text, isErr := callTool(t, owner, wf.ToolCommitQuest, map[string]any{"proposal_id": b.ProposalID, "confirm": true}); !isErr || text != "version_conflict" {
			t.Errorf("stale commit: %s", text)
		}
		if n := s.AuditCount(t) - before; n != 0 {
			t.Errorf("failed commit wrote %d audit rows", n)
		}
		if st := proposalStatus(t, db, b.ProposalID); st != wf.ProposalPending {
			t.Errorf("stale proposal is %s", st)
		}
		q, _ = db.FindQuestByID(t.Context(), q.ID)
		if q.Version != 2 || q.Name != "Ring the bell" || string(q.JSON) != `{"steps":3}` {
			t.Errorf("quest after commits: %+v %s", q, q.JSON)
		}
	})
}

// TestConcurrentCommits: 100 clients commit one proposal at once over
// REST; exactly one succeeds, the others get 409, the quest's version rises
// by exactly one, and one commit audit row exists.
func TestConcurrentCommits(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := testserver.Start(t, db)
		token := s.Token(t, s.Owner)
		owner := connect(t, s, token, "")
		res := propose(t, owner, wf.ToolProposeQuest, map[string]any{"id": s.Quest.ID, "payload": map[string]any{"name": "Contested"}, "diff_summary": "race"})
		before := s.AuditCount(t)
		const n = 100
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			statuses = map[int]int{}
		)
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				status, _ := rest(t, http.MethodPost, s.URL+"/proposals/"+res.ProposalID+"/commit", token, "")
				mu.Lock()
				statuses[status]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		if statuses[200] != 1 || statuses[409] != n-1 {
			t.Fatalf("statuses %v, want one 200 and %d 409", statuses, n-1)
		}
		q, err := db.FindQuestByID(t.Context(), s.Quest.ID)
		if err != nil || q.Version != s.Quest.Version+1 || q.Name != "Contested" {
			t.Fatalf("quest %+v %v", q, err)
		}
		if got := s.AuditCount(t) - before; got != 1 {
			t.Fatalf("%d audit rows, want 1", got)
		}
	})
}

func TestReviewQueue(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := testserver.Start(t, db)
		ctx := t.Context()
		ownerTok, gmTok, playerTok := s.Token(t, s.Owner), s.Token(t, s.GM), s.Token(t, s.Player)
		gm := connect(t, s, gmTok, "")
		w := s.World.ID

		page := propose(t, gm, wf.ToolProposeWikiPage, map[string]any{"world_id": w, "payload": map[string]any{"title": "The Drowned Bell", "body": "It rings at low tide.", "kind": "lore", "audience": "party", "mood": "eerie"}, "diff_summary": "new page", "changeset_id": "tide-1"})
		edit := propose(t, gm, wf.ToolProposeWikiEdit, map[string]any{"page_id": s.Page.ID, "payload": map[string]any{"body": "Rewritten."}, "diff_summary": "edit", "changeset_id": "tide-1"})
		place := propose(t, gm, wf.ToolProposeAtlasPlace, map[string]any{"world_id": w, "payload": map[string]any{"name": "Bell Rock", "terrainType": "coast", "parentId": s.Node.ID}, "diff_summary": "new place"})
		lore := propose(t, gm, wf.ToolProposeLore, map[string]any{"world_id": w, "operations": []any{
			map[string]any{"op": "upsert", "collection": "deities", "entity": map[string]any{"id": "tide-mother", "name": "The Tide Mother"}},
			map[string]any{"op": "remove", "collection": "factions", "id": "wardens"},
			map[string]any{"op": "add_preset", "preset_id": "thieves-guild"},
		}, "diff_summary": "lore"})
		if page.ChangesetID != "tide-1" || page.WorldID != w {
			t.Errorf("page proposal %+v", page)
		}

		// The queue: owner and GM see it; a player and a stranger get 404.
		status, body := rest(t, "GET", s.URL+"/worlds/"+w+"/proposals?status=pending", ownerTok, "")
		var list struct{ Proposals []wf.Proposal }
		if status != 200 || json.Unmarshal([]byte(body), &list) != nil || len(list.Proposals) != 4 {
			t.Fatalf("queue: %d %s", status, body)
		}
		if status, _ := rest(t, "GET", s.URL+"/worlds/"+w+"/proposals?changeset=tide-1", gmTok, ""); status != 200 {
			t.Errorf("changeset filter: %d", status)
		}
		for _, tok := range []string{playerTok, s.Token(t, s.Stranger)} {
			if status, _ := rest(t, "GET", s.URL+"/worlds/"+w+"/proposals", tok, ""); status != 404 {
				t.Errorf("non-reviewer listed the queue: %d", status)
			}
			if status, _ := rest(t, "POST", s.URL+"/proposals/"+place.ProposalID+"/commit", tok, ""); status != 404 {
				t.Errorf("non-reviewer committed: %d", status)
			}
		}
		if status, body := rest(t, "GET", s.URL+"/proposals/"+lore.ProposalID, gmTok, ""); status != 200 || !strings.Contains(body, `"presetId":"thieves-guild"`) {
			t.Errorf("show lore proposal: %d %.300s", status, body)
		}
		if status, _ := rest(t, "GET", s.URL+"/proposals/not-an-id", gmTok, ""); status != 400 {
			t.Errorf("bad id shape: %d", status)
		}
		if status, _ := rest(t, "GET", s.URL+"/proposals/prop_aaaaaaaaaaaaaaaaaaaa", gmTok, ""); status != 404 {
			t.Errorf("missing proposal: %d", status)
		}

		// The changeset commits as a unit.
		before := s.AuditCount(t)
		status, body = rest(t, "POST", s.URL+"/worlds/"+w+"/changesets/tide-1/commit", ownerTok, "")
		if status != 200 || strings.Count(body, `"status":"committed"`) != 2 {
			t.Fatalf("changeset commit: %d %s", status, body)
		}
		if n := s.AuditCount(t) - before; n != 2 {
			t.Errorf("changeset commit: %d audit rows", n)
		}
		if st := proposalStatus(t, db, edit.ProposalID); st != wf.ProposalCommitted {
			t.Errorf("edit proposal is %s after its changeset was committed", st)
		}
		pg, _ := db.FindWikiPageByID(ctx, s.Page.ID)
		if pg.Body != "Rewritten." || pg.Version != 2 {
			t.Errorf("edited page %+v", pg)
		}
		// Atlas and lore commits one by one; a reject.
		if status, body := rest(t, "POST", s.URL+"/proposals/"+place.ProposalID+"/commit", gmTok, ""); status != 200 {
			t.Fatalf("atlas commit: %d %s", status, body)
		}
		nodes, _ := dbtest.AtlasNodes(ctx, db, w, 0)
		found := false
		for _, n := range nodes {
			if n.Name == "Bell Rock" && n.ParentID == s.Node.ID && n.Level == s.Node.Level+1 {
				found = true
			}
		}
		if !found {
			t.Errorf("atlas place not committed: %+v", nodes)
		}
		if status, body := rest(t, "POST", s.URL+"/proposals/"+lore.ProposalID+"/commit", ownerTok, ""); status != 200 {
			t.Fatalf("lore commit: %d %s", status, body)
		}
		entities, _ := dbtest.Lore(ctx, db, w, "")
		have := map[string]bool{}
		for _, e := range entities {
			have[e.Collection+"/"+e.ID] = true
		}
		if !have["deities/tide-mother"] || have["factions/wardens"] || len(entities) < 5 {
			t.Errorf("lore after commit: %v", have)
		}
		rej := propose(t, gm, wf.ToolProposeAtlasPlace, map[string]any{"world_id": w, "payload": map[string]any{"name": "Nowhere"}, "diff_summary": "bad idea"})
		if status, body := rest(t, "POST", s.URL+"/proposals/"+rej.ProposalID+"/reject", ownerTok, ""); status != 200 || !strings.Contains(body, `"status":"rejected"`) {
			t.Errorf("reject: %d %s", status, body)
		}
		if status, _ := rest(t, "POST", s.URL+"/proposals/"+rej.ProposalID+"/commit", ownerTok, ""); status != 409 {
			t.Errorf("commit after reject: %d", status)
		}

		// The path-level gate: an API key without world:write cannot commit.
		readKey := s.Key(t, s.Owner, wf.ScopeWorldRead)
		if status, body := rest(t, "POST", s.URL+"/proposals/"+page.ProposalID+"/commit", readKey, ""); status != 403 || !strings.Contains(body, "missing_scopes") {
			t.Errorf("gate: %d %s", status, body)
		}
	})
}

func TestAutoAccept(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, dbtest.Open(t))
	ownerTok := s.Token(t, s.Owner)
	gmKey := s.Key(t, s.GM, wf.ScopeAtlasPropose, wf.ScopeWikiPropose)
	gm := connect(t, s, gmKey, "")
	// Before the rule: pending.
	res := propose(t, gm, wf.ToolProposeAtlasPlace, map[string]any{"world_id": s.World.ID, "payload": map[string]any{"name": "Before"}, "diff_summary": "x"})
	if res.AutoAccepted != nil {
		t.Fatalf("auto-accepted without a rule: %+v", res)
	}
	bad := []string{`{}`, `{"actorId":"` + s.GM.ID + `","kinds":["bogus"]}`, `{"actorId":"` + s.GM.ID + `","worldId":"world_aaaaaaaaaaaaaaaaaaaa"}`, `{"actorId":1}`}
	for _, b := range bad {
		if status, body := rest(t, "POST", s.URL+"/auto-accept-rules", ownerTok, b); status != 400 && status != 404 {
			t.Errorf("rule %s: %d %s", b, status, body)
		}
	}
	status, body := rest(t, "POST", s.URL+"/auto-accept-rules", ownerTok, `{"worldId":"`+s.World.ID+`","actorId":"`+s.GM.ID+`","kinds":["atlas_place"]}`)
	if status != 201 {
		t.Fatalf("create rule: %d %s", status, body)
	}
	var rule wf.AutoAcceptRule
	mustDecode(t, body, &rule)
	res = propose(t, gm, wf.ToolProposeAtlasPlace, map[string]any{"world_id": s.World.ID, "payload": map[string]any{"name": "After"}, "diff_summary": "x"})
	if res.AutoAccepted == nil || !*res.AutoAccepted {
		t.Fatalf("not auto-accepted: %+v", res)
	}
	p, err := s.DB.FindProposal(t.Context(), res.ProposalID)
	if err != nil || p.Status != wf.ProposalCommitted {
		t.Fatalf("auto-accepted proposal: %+v %v", p, err)
	}
	// Another kind is not covered.
	res = propose(t, gm, wf.ToolProposeWikiPage, map[string]any{"world_id": s.World.ID, "payload": map[string]any{"title": "T"}, "diff_summary": "x"})
	if res.AutoAccepted != nil {
		t.Errorf("wiki page auto-accepted by an atlas rule")
	}
	if status, body := rest(t, "GET", s.URL+"/auto-accept-rules", ownerTok, ""); status != 200 || !strings.Contains(body, rule.ID) {
		t.Errorf("list rules: %d %s", status, body)
	}
	if status, _ := rest(t, "DELETE", s.URL+"/auto-accept-rules/"+rule.ID, s.Token(t, s.GM), ""); status != 404 {
		t.Errorf("someone else deleted the rule: %d", status)
	}
	if status, _ := rest(t, "DELETE", s.URL+"/auto-accept-rules/"+rule.ID, ownerTok, ""); status != 204 {
		t.Errorf("delete rule: %d", status)
	}
}

// TestWriteToolsBadInput: each refused call is a clear tool error, stores
// no proposal and writes no audit row.
func TestWriteToolsBadInput(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, dbtest.Open(t))
	owner := connect(t, s, s.Token(t, s.Owner), "")
	w := s.World.ID
	ops := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = map[string]any{"op": "remove", "collection": "deities", "id": fmt.Sprintf("d%d", i)}
		}
		return out
	}
	cases := []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"diff summary too long", wf.ToolProposeQuest, map[string]any{"payload": map[string]any{"name": "Q"}, "diff_summary": strings.Repeat("x", 501)}, "bad_request"},
		{"diff summary missing", wf.ToolProposeQuest, map[string]any{"payload": map[string]any{"name": "Q"}}, "bad_request"},
		{"diff summary blank", wf.ToolProposeQuest, map[string]any{"payload": map[string]any{"name": "Q"}, "diff_summary": "   "}, "bad_request: diff_summary is required"},
		{"new quest without name", wf.ToolProposeQuest, map[string]any{"payload": map[string]any{}, "diff_summary": "x"}, "bad_request: payload.name is required"},
		{"name too long", wf.ToolProposeQuest, map[string]any{"payload": map[string]any{"name": strings.Repeat("n", 121)}, "diff_summary": "x"}, "bad_request"},
		{"json not an object", wf.ToolProposeQuest, map[string]any{"payload": map[string]any{"name": "Q", "json": []int{1}}, "diff_summary": "x"}, "bad_request: payload.json must be a JSON object"},
		{"bad changeset id", wf.ToolProposeQuest, map[string]any{"payload": map[string]any{"name": "Q"}, "diff_summary": "x", "changeset_id": "no spaces please"}, "bad_request"},
		{"stranger's quest", wf.ToolProposeQuest, map[string]any{"id": "quest_aaaaaaaaaaaaaaaaaaaa", "payload": map[string]any{"name": "Q"}, "diff_summary": "x"}, "not_found"},
		{"page without title", wf.ToolProposeWikiPage, map[string]any{"world_id": w, "payload": map[string]any{"body": "b"}, "diff_summary": "x"}, "bad_request: payload.title is required"},
		{"page bad kind", wf.ToolProposeWikiPage, map[string]any{"world_id": w, "payload": map[string]any{"title": "T", "kind": "poem"}, "diff_summary": "x"}, "bad_request"},
		{"edit nothing", wf.ToolProposeWikiEdit, map[string]any{"page_id": s.Page.ID, "payload": map[string]any{}, "diff_summary": "x"}, "bad_request: payload must change at least one of title, body, audience"},
		{"terrain too long", wf.ToolProposeAtlasPlace, map[string]any{"world_id": w, "payload": map[string]any{"name": "P", "terrainType": strings.Repeat("t", 51)}, "diff_summary": "x"}, "bad_request"},
		{"parent elsewhere", wf.ToolProposeAtlasPlace, map[string]any{"world_id": w, "payload": map[string]any{"name": "P", "parentId": "atlas_aaaaaaaaaaaaaaaaaaaa"}, "diff_summary": "x"}, "not_found"},
		{"no operations", wf.ToolProposeLore, map[string]any{"world_id": w, "operations": []any{}, "diff_summary": "x"}, "bad_request"},
		{"101 operations", wf.ToolProposeLore, map[string]any{"world_id": w, "operations": ops(101), "diff_summary": "x"}, "bad_request"},
		{"unknown op", wf.ToolProposeLore, map[string]any{"world_id": w, "operations": []any{map[string]any{"op": "rename", "collection": "deities", "id": "x"}}, "diff_summary": "x"}, "bad_request"},
		{"entity fails its schema", wf.ToolProposeLore, map[string]any{"world_id": w, "operations": []any{map[string]any{"op": "upsert", "collection": "spells", "entity": map[string]any{"id": "fireball", "name": "Fireball", "level": 12}}}, "diff_summary": "x"}, "bad_request: operations[0]: spells/fireball: level"},
		{"entity with a bad id", wf.ToolProposeLore, map[string]any{"world_id": w, "operations": []any{map[string]any{"op": "upsert", "collection": "deities", "entity": map[string]any{"id": "Not A Slug", "name": "X"}}}, "diff_summary": "x"}, "bad_request: operations[0]"},
		{"unknown preset", wf.ToolProposeLore, map[string]any{"world_id": w, "operations": []any{map[string]any{"op": "add_preset", "preset_id": "nope"}}, "diff_summary": "x"}, "bad_request: operations[0]: unknown preset"},
		{"confirm missing", wf.ToolCommitQuest, map[string]any{"proposal_id": "prop_aaaaaaaaaaaaaaaaaaaa"}, "bad_request"},
		{"confirm false", wf.ToolCommitQuest, map[string]any{"proposal_id": "prop_aaaaaaaaaaaaaaaaaaaa", "confirm": false}, "bad_request: confirm must be the literal true"},
		{"confirm a string", wf.ToolCommitQuest, map[string]any{"proposal_id": "prop_aaaaaaaaaaaaaaaaaaaa", "confirm": "true"}, "bad_request"},
		{"proposal id shape", wf.ToolCommitQuest, map[string]any{"proposal_id": "quest_aaaaaaaaaaaaaaaaaaaa", "confirm": true}, "bad_request"},
		{"proposal missing", wf.ToolCommitQuest, map[string]any{"proposal_id": "prop_aaaaaaaaaaaaaaaaaaaa", "confirm": true}, "proposal_not_found"},
		{"campaign without name", wf.ToolCreateCampaign, map[string]any{"name": ""}, "bad_request"},
		{"campaign in a stranger's world", wf.ToolCreateCampaign, map[string]any{"name": "C", "world_id": "world_aaaaaaaaaaaaaaaaaaaa"}, "not_found"},
	}
	for _, c := range cases {
		beforeAudit := s.AuditCount(t)
		beforeProps, _ := s.DB.ListProposals(t.Context(), wf.ProposalFilter{ActorID: s.Owner.ID, Limit: 200})
		text, isErr := callTool(t, owner, c.tool, c.args)
		if !isErr || !strings.HasPrefix(text, c.want) {
			t.Errorf("%s: %v %q, want %q…", c.name, isErr, text, c.want)
		}
		if n := s.AuditCount(t) - beforeAudit; n != 0 {
			t.Errorf("%s: %d audit rows", c.name, n)
		}
		afterProps, _ := s.DB.ListProposals(t.Context(), wf.ProposalFilter{ActorID: s.Owner.ID, Limit: 200})
		if len(afterProps) != len(beforeProps) {
			t.Errorf("%s: a proposal was stored", c.name)
		}
	}
	text, isErr := callTool(t, owner, wf.ToolCreateCampaign, map[string]any{"name": "The Long Tide", "world_id": w, "json": map[string]any{"session": 0}})
	if isErr || !strings.Contains(text, `"version":1`) {
		t.Errorf("create_campaign: %s", text)
	}
}
