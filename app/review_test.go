package app_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/app"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// TestWhoReviews checks who may read (and so commit or reject) a
// proposal: the world's owner and GMs for a world's; outside a world, the
// row's owner, or for a new row its proposer. Everyone else is told
// proposal_not_found, as for a missing proposal.
func TestWhoReviews(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		ctx := t.Context()
		loose := &wf.Quest{OwnerID: f.gm.ID, Name: "Loose quest"}
		if err := db.CreateQuest(ctx, loose); err != nil {
			t.Fatal(err)
		}
		propose := func(u *wf.User, id string) string {
			t.Helper()
			res, err := f.svc.ProposeQuest(ctx, as(u, app.Via{Tool: wf.ToolProposeQuest}, wf.ScopeQuestWrite),
				&wf.ProposeQuestArgs{ID: id, DiffSummary: "change", Payload: wf.QuestProposalFields{Name: "Named"}})
			if err != nil {
				t.Fatal(err)
			}
			return res.ProposalID
		}
		proposals := []struct {
			name    string
			id      string
			readers []*wf.User
		}{
			{"a world's", f.pending("").ID, []*wf.User{f.owner, f.gm}},
			{"a change outside any world", propose(f.gm, loose.ID), []*wf.User{f.gm}},
			{"a new row", propose(f.stranger, ""), []*wf.User{f.stranger}},
		}
		for _, p := range proposals {
			t.Run(p.name, func(t *testing.T) {
				f.t = t
				for _, u := range []*wf.User{f.stranger, f.observer, f.player, f.gm, f.owner} {
					want := "proposal_not_found"
					for _, r := range p.readers {
						if r == u {
							want = ""
						}
					}
					before := f.auditCount()
					got, err := f.svc.GetProposal(ctx, as(u, app.Via{Route: "GET /proposals/{id}"}, wf.ScopeWorldRead), p.id)
					if code(err) != want {
						t.Errorf("%s: got %q, want %q", u.Name, code(err), want)
					}
					if err == nil && got.ID != p.id {
						t.Errorf("%s: read %s", u.Name, got.ID)
					}
					if n := f.auditCount() - before; n != 0 {
						t.Errorf("%s: reading wrote %d audit rows", u.Name, n)
					}
				}
			})
		}
		f.t = t
		if _, err := f.svc.GetProposal(ctx, as(f.owner, app.Via{}, wf.ScopeWorldRead), "prop_missing"); code(err) != "proposal_not_found" {
			t.Errorf("a missing proposal: %v", err)
		}
		if _, err := f.svc.GetProposal(ctx, as(f.owner, app.Via{}, wf.ScopeWorldRead), "not a proposal"); code(err) != `bad_request: "not a proposal" is not a proposal id` {
			t.Errorf("a bad id: %v", err)
		}
	})
}

// TestCommitReject checks committing and rejecting over REST: the
// reviewer's audit row (outcome committed or rejected, the route, the
// proposal's kind and world), claim once, and nothing audited for a
// refusal.
func TestCommitReject(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		ctx := t.Context()
		commit := app.Via{Route: "POST /proposals/{id}/commit"}
		reject := app.Via{Route: "POST /proposals/{id}/reject"}

		p := f.pending("")
		before := f.auditCount()
		if _, err := f.svc.CommitProposal(ctx, as(f.player, commit, wf.ScopeWorldWrite), p.ID); code(err) != "proposal_not_found" {
			t.Errorf("player commits: %v", err)
		}
		if n := f.auditCount() - before; n != 0 {
			t.Errorf("a refused commit wrote %d audit rows", n)
		}
		res, err := f.svc.CommitProposal(ctx, as(f.gm, commit, wf.ScopeWorldWrite), p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if res.Proposal.Status != wf.ProposalCommitted {
			t.Errorf("status %s", res.Proposal.Status)
		}
		want := wf.AuditEntry{ActorID: f.gm.ID, KeyID: "key_" + f.gm.Name, Route: commit.Route, TargetType: wf.ProposalWikiPage, WorldID: f.world.ID, Outcome: "committed"}
		if diff := cmp.Diff(want, f.lastAudit(), auditFields, cmpopts.IgnoreFields(wf.AuditEntry{}, "TargetID")); diff != "" {
			t.Errorf("commit's audit row (-want +got):\n%s", diff)
		}
		if _, err := f.svc.CommitProposal(ctx, as(f.owner, commit, wf.ScopeWorldWrite), p.ID); code(err) != "conflict: not_pending" {
			t.Errorf("a second commit: %v", err)
		}

		q := f.pending("")
		if _, err := f.svc.RejectProposal(ctx, as(f.observer, reject, wf.ScopeWorldWrite), q.ID, ""); code(err) != "proposal_not_found" {
			t.Errorf("observer rejects: %v", err)
		}
		got, err := f.svc.RejectProposal(ctx, as(f.owner, reject, wf.ScopeWorldWrite), q.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != wf.ProposalRejected {
			t.Errorf("status %s", got.Status)
		}
		want = wf.AuditEntry{ActorID: f.owner.ID, KeyID: "key_" + f.owner.Name, Route: reject.Route, TargetType: wf.ProposalWikiPage, TargetID: q.ID, WorldID: f.world.ID, Outcome: "rejected"}
		if diff := cmp.Diff(want, f.lastAudit(), auditFields); diff != "" {
			t.Errorf("rejection's audit row (-want +got):\n%s", diff)
		}
		if _, err := f.svc.CommitProposal(ctx, as(f.owner, commit, wf.ScopeWorldWrite), "prop x"); code(err) != `bad_request: "prop x" is not a proposal id` {
			t.Errorf("a bad id: %v", err)
		}
	})
}

// TestCommitQuestTool checks commit_quest's stricter rule: only the
// quest's owner commits (a GM of its world is told proposal_not_found),
// confirm is checked first, and the commit audits itself under the tool.
func TestCommitQuestTool(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		ctx := t.Context()
		res, err := f.svc.ProposeQuest(ctx, as(f.gm, app.Via{Tool: wf.ToolProposeQuest}, wf.ScopeQuestWrite),
			&wf.ProposeQuestArgs{ID: f.quest.ID, DiffSummary: "rename", Payload: wf.QuestProposalFields{Name: "Renamed"}})
		if err != nil {
			t.Fatal(err)
		}
		via := app.Via{Tool: wf.ToolCommitQuest}
		cases := []struct {
			u       *wf.User
			confirm bool
			want    string
		}{
			{f.owner, false, "bad_request: confirm must be the literal true"},
			{f.gm, true, "proposal_not_found"},
			{f.stranger, true, "proposal_not_found"},
			{f.owner, true, ""},
		}
		for _, tc := range cases {
			_, err := f.svc.CommitQuest(ctx, as(tc.u, via, wf.ScopeQuestCommit), &wf.CommitArgs{ProposalID: res.ProposalID, Confirm: tc.confirm})
			if code(err) != tc.want {
				t.Errorf("%s (confirm %v): got %q, want %q", tc.u.Name, tc.confirm, code(err), tc.want)
			}
		}
		want := wf.AuditEntry{ActorID: f.owner.ID, KeyID: "key_" + f.owner.Name, Tool: wf.ToolCommitQuest, TargetType: wf.ProposalQuest, WorldID: f.world.ID, Outcome: "committed"}
		if diff := cmp.Diff(want, f.lastAudit(), auditFields, cmpopts.IgnoreFields(wf.AuditEntry{}, "TargetID")); diff != "" {
			t.Errorf("audit row (-want +got):\n%s", diff)
		}
		if _, err := f.svc.CommitEncounter(ctx, as(f.owner, app.Via{Tool: wf.ToolCommitEncounter}, wf.ScopeEncounterCommit), &wf.CommitArgs{ProposalID: f.pending("").ID, Confirm: true}); code(err) != "proposal_not_found" {
			t.Errorf("commit_encounter of a wiki page proposal: %v", err)
		}
	})
}

// TestAutoAccept checks filing: the rules that count are the reviewer's
// of record (the world's owner; outside a world, the row's owner), a
// matching proposal is committed at once with its own audit row, and
// anyone else's rule changes nothing.
func TestAutoAccept(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		ctx := t.Context()
		rules := app.Via{Route: "POST /auto-accept-rules"}
		trust := func(u *wf.User, actor string) {
			t.Helper()
			if _, err := f.svc.CreateAutoAcceptRule(ctx, as(u, rules, wf.ScopeWorldWrite), func(in *app.RuleArgs) error {
				in.ActorID, in.WorldID = actor, ""
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		proposePage := func() wf.ProposeResult {
			t.Helper()
			res, err := f.svc.ProposeWikiPage(ctx, as(f.gm, app.Via{Tool: wf.ToolProposeWikiPage}, wf.ScopeWikiPropose),
				&wf.ProposeWikiPageArgs{WorldID: f.world.ID, DiffSummary: "new page", Payload: wf.WikiPageProposalFs{Title: "Rumours"}})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}

		// The GM's own rule is not the reviewer's: the proposal waits.
		trust(f.gm, f.gm.ID)
		if res := proposePage(); res.AutoAccepted != nil {
			t.Errorf("accepted by a rule of the GM's: %+v", res)
		}
		want := wf.AuditEntry{ActorID: f.gm.ID, KeyID: "key_" + f.gm.Name, Tool: wf.ToolProposeWikiPage, TargetType: "proposal", WorldID: f.world.ID, Outcome: "ok"}
		if diff := cmp.Diff(want, f.lastAudit(), auditFields, cmpopts.IgnoreFields(wf.AuditEntry{}, "TargetID")); diff != "" {
			t.Errorf("filing's audit row (-want +got):\n%s", diff)
		}

		// The world owner's rule trusting the GM commits it at once.
		trust(f.owner, f.gm.ID)
		res := proposePage()
		if res.AutoAccepted == nil || !*res.AutoAccepted {
			t.Fatalf("not accepted: %+v", res)
		}
		p, err := db.FindProposal(ctx, res.ProposalID)
		if err != nil || p.Status != wf.ProposalCommitted {
			t.Fatalf("proposal %+v, %v", p, err)
		}
		want = wf.AuditEntry{ActorID: f.owner.ID, Route: "auto-accept", TargetType: wf.ProposalWikiPage, WorldID: f.world.ID, Outcome: "auto_accepted"}
		if diff := cmp.Diff(want, f.lastAudit(), auditFields, cmpopts.IgnoreFields(wf.AuditEntry{}, "TargetID")); diff != "" {
			t.Errorf("auto-accept's audit row (-want +got):\n%s", diff)
		}

		// Outside a world the row's owner is the reviewer: a new quest's
		// proposer, whose own rule trusting themselves accepts it.
		trust(f.stranger, f.stranger.ID)
		qres, err := f.svc.ProposeQuest(ctx, as(f.stranger, app.Via{Tool: wf.ToolProposeQuest}, wf.ScopeQuestWrite),
			&wf.ProposeQuestArgs{DiffSummary: "new", Payload: wf.QuestProposalFields{Name: "Mine"}})
		if err != nil || qres.AutoAccepted == nil {
			t.Errorf("a new quest under its proposer's rule: %+v, %v", qres, err)
		}
	})
}

// TestChangeset checks committing a changeset: the world's owner or a GM
// commits every pending proposal of it, all or none, with an audit row
// each; anyone else is not_found, and a malformed id bad_request.
func TestChangeset(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		ctx := t.Context()
		via := app.Via{Route: "POST /worlds/{id}/changesets/{changeset}/commit"}
		a, b := f.pending("cs1"), f.pending("cs1")
		f.pending("cs2")
		for _, u := range []*wf.User{f.stranger, f.observer, f.player} {
			if _, err := f.svc.CommitChangeset(ctx, as(u, via, wf.ScopeWorldWrite), f.world.ID, "cs1"); code(err) != "not_found" {
				t.Errorf("%s: %v", u.Name, err)
			}
		}
		if _, err := f.svc.CommitChangeset(ctx, as(f.gm, via, wf.ScopeWorldWrite), f.world.ID, "bad id!"); code(err) == "" || code(err)[:11] != "bad_request" {
			t.Errorf("a bad changeset id: %v", err)
		}
		if _, err := f.svc.CommitChangeset(ctx, as(f.gm, via, wf.ScopeWorldRead), f.world.ID, "cs1"); code(err) != "missing_scopes:world:write" {
			t.Errorf("without the scope: %v", err)
		}
		before := f.auditCount()
		res, err := f.svc.CommitChangeset(ctx, as(f.gm, via, wf.ScopeWorldWrite), f.world.ID, "cs1")
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range res {
			ids = append(ids, r.Proposal.ID)
		}
		if diff := cmp.Diff([]string{a.ID, b.ID}, ids, cmpopts.SortSlices(func(x, y string) bool { return x < y })); diff != "" {
			t.Errorf("committed (-want +got):\n%s", diff)
		}
		if n := f.auditCount() - before; n != 2 {
			t.Errorf("%d audit rows, want 2", n)
		}
		want := wf.AuditEntry{ActorID: f.gm.ID, KeyID: "key_" + f.gm.Name, Route: via.Route, TargetType: wf.ProposalWikiPage, WorldID: f.world.ID, Outcome: "committed"}
		if diff := cmp.Diff(want, f.lastAudit(), auditFields, cmpopts.IgnoreFields(wf.AuditEntry{}, "TargetID")); diff != "" {
			t.Errorf("audit row (-want +got):\n%s", diff)
		}
	})
}

// TestRules checks the auto-accept rules: the caller's own, naming whom
// they trust, in a world the caller owns; each change audited.
func TestRules(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		ctx := t.Context()
		create := app.Via{Route: "POST /auto-accept-rules"}
		cases := []struct {
			name string
			u    *wf.User
			in   app.RuleArgs
			want string
		}{
			{"trusting nobody", f.owner, app.RuleArgs{}, "bad_request: a rule must name the actorId or keyId whose proposals it accepts"},
			{"in a world the caller runs as GM", f.gm, app.RuleArgs{WorldID: f.world.ID, ActorID: f.player.ID}, "not_found"},
			{"in a world of the caller's", f.owner, app.RuleArgs{WorldID: f.world.ID, ActorID: f.gm.ID, Kinds: []string{wf.ProposalWikiPage}}, ""},
			{"in no world", f.gm, app.RuleArgs{KeyID: "key_1"}, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				f.t = t
				before := f.auditCount()
				rule, err := f.svc.CreateAutoAcceptRule(ctx, as(tc.u, create, wf.ScopeWorldWrite), func(in *app.RuleArgs) error {
					*in = tc.in
					return nil
				})
				if code(err) != tc.want {
					t.Fatalf("got %q, want %q", code(err), tc.want)
				}
				rows := 0
				if err == nil {
					rows = 1
					if rule.OwnerID != tc.u.ID || rule.Kinds == nil {
						t.Errorf("rule %+v", rule)
					}
					want := wf.AuditEntry{ActorID: tc.u.ID, KeyID: "key_" + tc.u.Name, Route: create.Route, TargetType: "auto_accept_rule", TargetID: rule.ID, WorldID: tc.in.WorldID, Outcome: "ok"}
					if diff := cmp.Diff(want, f.lastAudit(), auditFields); diff != "" {
						t.Errorf("audit row (-want +got):\n%s", diff)
					}
				}
				if n := f.auditCount() - before; n != rows {
					t.Errorf("%d audit rows, want %d", n, rows)
				}
			})
		}
		f.t = t
		list, err := f.svc.ListAutoAcceptRules(ctx, as(f.owner, app.Via{Route: "GET /auto-accept-rules"}, wf.ScopeWorldRead))
		if err != nil || len(list) != 1 {
			t.Fatalf("the owner's rules: %+v, %v", list, err)
		}
		del := app.Via{Route: "DELETE /auto-accept-rules/{id}"}
		if err := f.svc.DeleteAutoAcceptRule(ctx, as(f.gm, del, wf.ScopeWorldWrite), list[0].ID); code(err) != "not_found" {
			t.Errorf("someone else's rule deleted: %v", err)
		}
		if err := f.svc.DeleteAutoAcceptRule(ctx, as(f.owner, del, wf.ScopeWorldWrite), list[0].ID); err != nil {
			t.Fatal(err)
		}
		want := wf.AuditEntry{ActorID: f.owner.ID, KeyID: "key_" + f.owner.Name, Route: del.Route, TargetType: "auto_accept_rule", TargetID: list[0].ID, Outcome: "ok"}
		if diff := cmp.Diff(want, f.lastAudit(), auditFields); diff != "" {
			t.Errorf("audit row (-want +got):\n%s", diff)
		}
	})
}
