package app_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/app"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

var (
	viaReview = app.Via{Route: "console GET /p/{id}"}
	viaQueue  = app.Via{Route: "console GET /queue"}
	viaEdit   = app.Via{Tool: wf.ToolProposeWikiEdit}
	viaLore   = app.Via{Tool: wf.ToolProposeLore}
	viaCommit = app.Via{Route: "console POST /p/{id}/commit"}
)

// proposeEdit files a wiki edit of page by the GM (title change).
func (f *fixture) proposeEdit(page *wf.WikiPage, title, cs string) string {
	f.t.Helper()
	res, err := f.svc.ProposeWikiEdit(f.t.Context(), as(f.gm, viaEdit, wf.ScopeWikiPropose),
		&wf.ProposeWikiEditArgs{PageID: page.ID, DiffSummary: "retitle", ChangesetID: cs, Payload: wf.WikiEditProposalFs{Title: &title}})
	if err != nil {
		f.t.Fatal(err)
	}
	return res.ProposalID
}

// proposeLore files a lore proposal by the GM.
func (f *fixture) proposeLore(cs string, ops ...wf.LoreOpInput) string {
	f.t.Helper()
	res, err := f.svc.ProposeLore(f.t.Context(), as(f.gm, viaLore, wf.ScopeLorePropose),
		&wf.ProposeLoreArgs{WorldID: f.world.ID, DiffSummary: "lore", ChangesetID: cs, Operations: ops})
	if err != nil {
		f.t.Fatal(err)
	}
	return res.ProposalID
}

func (f *fixture) commitNow(id string) {
	f.t.Helper()
	if _, err := f.svc.CommitProposal(f.t.Context(), as(f.owner, viaCommit, wf.ScopeWorldWrite), id); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) review(id string) *app.ProposalReview {
	f.t.Helper()
	rv, err := f.svc.ReviewProposal(f.t.Context(), as(f.owner, viaReview, wf.ScopeWorldRead), id)
	if err != nil {
		f.t.Fatal(err)
	}
	return rv
}

func (f *fixture) page(title string) *wf.WikiPage {
	f.t.Helper()
	p := &wf.WikiPage{WorldID: f.world.ID, Title: title, Body: "body", Kind: wf.WikiKindLore, Audience: wf.AudienceGM}
	if err := f.db.CreateWikiPage(f.t.Context(), p, f.owner.ID); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// TestReviewProposalWho checks who may review a proposal in the console:
// the world's owner and GMs; players, observers and strangers are told
// proposal_not_found, as for a missing id; nothing is audited.
func TestReviewProposalWho(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		p := f.pending("")
		for _, tc := range []struct {
			u    *wf.User
			want string
		}{
			{f.stranger, "proposal_not_found"}, {f.observer, "proposal_not_found"}, {f.player, "proposal_not_found"},
			{f.gm, ""}, {f.owner, ""},
		} {
			before := f.auditCount()
			rv, err := f.svc.ReviewProposal(t.Context(), as(tc.u, viaReview, wf.ScopeWorldRead), p.ID)
			if code(err) != tc.want {
				t.Errorf("%s: got %q, want %q", tc.u.Name, code(err), tc.want)
			}
			if err == nil && (rv.Proposal.ID != p.ID || rv.Conflict != nil) {
				t.Errorf("%s: review %+v", tc.u.Name, rv)
			}
			if n := f.auditCount() - before; n != 0 {
				t.Errorf("%s: a review wrote %d audit rows", tc.u.Name, n)
			}
		}
		for _, tc := range []struct {
			name string
			r    app.Request
			id   string
			want string
		}{
			{"without the scope", as(f.owner, viaReview, wf.ScopeWikiRead), p.ID, "missing_scopes:world:read"},
			{"a missing proposal", as(f.owner, viaReview, wf.ScopeWorldRead), "prop_missing", "proposal_not_found"},
			{"a bad id", as(f.owner, viaReview, wf.ScopeWorldRead), "p/../x", `bad_request: "p/../x" is not a proposal id`},
		} {
			if _, err := f.svc.ReviewProposal(t.Context(), tc.r, tc.id); code(err) != tc.want {
				t.Errorf("%s: got %q, want %q", tc.name, code(err), tc.want)
			}
		}
	})
}

// TestReviewProposalConflicts checks the current state a review shows and
// the conflict it foresees, for each kind, before anyone commits.
func TestReviewProposalConflicts(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		ctx := t.Context()

		// A wiki edit: none, then version_conflict once the page changed.
		page := f.page("Harbor")
		edit := f.proposeEdit(page, "Port", "")
		rv := f.review(edit)
		if rv.Conflict != nil || rv.Target.Page == nil || rv.Target.Page.Title != "Harbor" {
			t.Fatalf("fresh edit: conflict %v, page %+v", rv.Conflict, rv.Target.Page)
		}
		f.commitNow(f.proposeEdit(page, "Quay", ""))
		rv = f.review(edit)
		if ecode(rv.Conflict) != "version_conflict" || rv.Target.Page.Title != "Quay" {
			t.Errorf("stale edit: conflict %v, page %+v", rv.Conflict, rv.Target.Page)
		}
		// The commit meets what the review foresaw, and changes nothing.
		if _, err := f.svc.CommitProposal(ctx, as(f.owner, viaCommit, wf.ScopeWorldWrite), edit); code(err) != "version_conflict" {
			t.Errorf("committing a stale edit: %v", err)
		}

		// A quest change: version_conflict once the quest changed.
		rename := func(name string) string {
			res, err := f.svc.ProposeQuest(ctx, as(f.gm, app.Via{Tool: wf.ToolProposeQuest}, wf.ScopeQuestWrite),
				&wf.ProposeQuestArgs{ID: f.quest.ID, DiffSummary: "rename", Payload: wf.QuestProposalFields{Name: name}})
			if err != nil {
				t.Fatal(err)
			}
			return res.ProposalID
		}
		q1, q2 := rename("One"), rename("Two")
		if rv := f.review(q1); rv.Conflict != nil || rv.Target.Doc == nil || rv.Target.Doc.Name != "Quest" {
			t.Fatalf("quest: conflict %v, doc %+v", rv.Conflict, rv.Target.Doc)
		}
		f.commitNow(q2)
		if rv := f.review(q1); ecode(rv.Conflict) != "version_conflict" || rv.Target.Doc.Name != "Two" {
			t.Errorf("stale quest change: conflict %v, doc %+v", rv.Conflict, rv.Target.Doc)
		}
		if rv := f.review(q2); ecode(rv.Conflict) != "conflict: not_pending" {
			t.Errorf("committed: conflict %v", rv.Conflict)
		}

		// Targets that are gone: not_found.
		raw := func(kind, target string, payload any) string {
			b, _ := json.Marshal(payload)
			p := &wf.Proposal{Kind: kind, WorldID: f.world.ID, TargetID: target, BaseVersion: 1, Payload: b, DiffSummary: "x", ActorID: f.gm.ID}
			if err := db.CreateProposal(ctx, p, nil); err != nil {
				t.Fatal(err)
			}
			return p.ID
		}
		title := "T"
		for _, tc := range []struct {
			name, id, want string
		}{
			{"quest gone", raw(wf.ProposalQuest, "quest_gone", wf.QuestPayload{Name: "Q"}), "not_found"},
			{"page gone", raw(wf.ProposalWikiEdit, "wiki_gone", wf.WikiEditPayload{Title: &title}), "not_found"},
			{"parent gone", raw(wf.ProposalAtlas, "", wf.AtlasPlacePayload{Name: "P", ParentID: "atlas_gone"}), "not_found"},
			{"a payload that does not fit", raw(wf.ProposalWikiPage, "", []int{1}), "bad_request: wiki_page payload: json: cannot unmarshal array into Go value of type worldforge.WikiPagePayload"},
			{"a new page", raw(wf.ProposalWikiPage, "", wf.WikiPagePayload{Title: "New"}), ""},
		} {
			if got := ecode(f.review(tc.id).Conflict); got != tc.want {
				t.Errorf("%s: conflict %q, want %q", tc.name, got, tc.want)
			}
		}

		// An atlas place: its parent, and bad_request under the deepest
		// level.
		parent := &wf.AtlasNode{WorldID: f.world.ID, Name: "Deep", Level: wf.MaxAtlasLevel}
		if err := db.CreateAtlasNode(ctx, parent); err != nil {
			t.Fatal(err)
		}
		top := &wf.AtlasNode{WorldID: f.world.ID, Name: "Top", Level: 1}
		if err := db.CreateAtlasNode(ctx, top); err != nil {
			t.Fatal(err)
		}
		place := func(parentID string) string {
			res, err := f.svc.ProposeAtlasPlace(ctx, as(f.gm, app.Via{Tool: wf.ToolProposeAtlasPlace}, wf.ScopeAtlasPropose),
				&wf.ProposeAtlasPlaceArgs{WorldID: f.world.ID, DiffSummary: "place", Payload: wf.AtlasPlaceProposalFs{Name: "Quay", ParentID: parentID}})
			if err != nil {
				t.Fatal(err)
			}
			return res.ProposalID
		}
		if rv := f.review(place(top.ID)); rv.Conflict != nil || rv.Target.Parent == nil || rv.Target.Parent.ID != top.ID {
			t.Errorf("place: conflict %v, parent %+v", rv.Conflict, rv.Target.Parent)
		}
		deep := raw(wf.ProposalAtlas, "", wf.AtlasPlacePayload{Name: "P", ParentID: parent.ID})
		if got := ecode(f.review(deep).Conflict); got != "bad_request: parent is at level 5, the deepest" {
			t.Errorf("under the deepest level: %q", got)
		}
	})
}

// TestReviewLore checks a lore proposal's review: the world it is pinned
// to, every stored entity its operations touch (found by id, whatever
// ids sort next to it), and version_conflict once the world's lore
// changed.
func TestReviewLore(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		ctx := t.Context()
		// Neighbours in id order around each id looked up.
		stored := []string{"a", "a-", "a0", "a00", "a_", "b", "wardens", "wardens0", "wardenr", "z9"}
		for _, id := range stored {
			e := &wf.LoreEntity{WorldID: f.world.ID, Collection: "factions", ID: id, Name: "N " + id,
				JSON: json.RawMessage(fmt.Sprintf(`{"id":%q,"name":"N %s"}`, id, id))}
			if err := db.UpsertLore(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		var ops []wf.LoreOpInput
		for _, id := range []string{"a", "a-", "a0", "a_", "b", "wardens", "z9", "missing", "a1", "c"} {
			ops = append(ops, wf.LoreOpInput{Op: "remove", Collection: "factions", ID: id})
		}
		ops = append(ops, wf.LoreOpInput{Op: "upsert", Collection: "factions", Entity: map[string]any{"id": "wardens", "name": "Wardens"}})
		id := f.proposeLore("", ops...)
		rv := f.review(id)
		if rv.Conflict != nil || rv.Target.World == nil || rv.Target.World.ID != f.world.ID {
			t.Fatalf("conflict %v, world %+v", rv.Conflict, rv.Target.World)
		}
		var found []string
		for _, e := range rv.Target.Lore {
			found = append(found, e.ID)
			if e.Collection != "factions" || e.Name != "N "+e.ID {
				t.Errorf("entity %+v", e)
			}
		}
		if diff := cmp.Diff([]string{"a", "a-", "a0", "a_", "b", "wardens", "z9"}, found); diff != "" {
			t.Errorf("entities found (-want +got):\n%s", diff)
		}
		f.commitNow(f.proposeLore("", wf.LoreOpInput{Op: "remove", Collection: "factions", ID: "b"}))
		if rv := f.review(id); ecode(rv.Conflict) != "version_conflict" {
			t.Errorf("after another lore commit: %v", rv.Conflict)
		}
	})
}

// TestReviewChangeset checks the changeset a review lists: its pending
// proposals oldest first, each with the conflict a commit of the whole
// changeset would meet — proposals of the changeset on one target count
// each other's changes, a change from outside does not.
func TestReviewChangeset(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		page, other := f.page("Harbor"), f.page("Docks")
		l1 := f.proposeLore("cs1", wf.LoreOpInput{Op: "upsert", Collection: "factions", Entity: map[string]any{"id": "x", "name": "X"}})
		l2 := f.proposeLore("cs1", wf.LoreOpInput{Op: "upsert", Collection: "factions", Entity: map[string]any{"id": "y", "name": "Y"}})
		e1 := f.proposeEdit(page, "Port", "cs1")
		e2 := f.proposeEdit(other, "Pier", "cs1")
		f.proposeEdit(page, "Elsewhere", "cs2")
		type entry struct{ ID, Conflict string }
		// entries are the review's, in the order of want (the review's
		// own order is checked: the store's, created_at then id).
		entries := func(rv *app.ProposalReview, want []entry) []entry {
			t.Helper()
			by := map[string]string{}
			for i, e := range rv.Changeset {
				by[e.Proposal.ID] = ecode(e.Conflict)
				if i > 0 {
					a, b := rv.Changeset[i-1].Proposal, e.Proposal
					if a.CreatedAt.After(b.CreatedAt) || a.CreatedAt.Equal(b.CreatedAt) && a.ID > b.ID {
						t.Errorf("%s listed before %s", a.ID, b.ID)
					}
				}
			}
			if len(by) != len(want) {
				t.Errorf("%d entries, want %d", len(by), len(want))
			}
			var out []entry
			for _, w := range want {
				out = append(out, entry{w.ID, by[w.ID]})
			}
			return out
		}
		rv := f.review(l2)
		want := []entry{{l1, ""}, {l2, ""}, {e1, ""}, {e2, ""}}
		if diff := cmp.Diff(want, entries(rv, want)); diff != "" {
			t.Errorf("changeset (-want +got):\n%s", diff)
		}
		// Alone, the second lore proposal commits too.
		if rv.Conflict != nil {
			t.Errorf("alone: %v", rv.Conflict)
		}
		// A change from outside the changeset to the other page.
		f.commitNow(f.proposeEdit(other, "Wharf", ""))
		rv = f.review(e1)
		want = []entry{{l1, ""}, {l2, ""}, {e1, ""}, {e2, "version_conflict"}}
		if diff := cmp.Diff(want, entries(rv, want)); diff != "" {
			t.Errorf("changeset after an outside change (-want +got):\n%s", diff)
		}
		// The changeset commit fails as foreseen, and applies nothing.
		_, err := f.svc.CommitChangeset(t.Context(), as(f.owner, app.Via{Route: "console POST /w/{world}/changesets/{cs}/commit"}, wf.ScopeWorldWrite), f.world.ID, "cs1")
		if code(err) != "version_conflict" {
			t.Errorf("changeset commit: %v", err)
		}
		if rv := f.review(l1); rv.Conflict != nil || len(rv.Changeset) != 4 {
			t.Errorf("after the failed commit: conflict %v, %d pending", rv.Conflict, len(rv.Changeset))
		}
		// A proposal outside any changeset lists none.
		if rv := f.review(f.pending("").ID); len(rv.Changeset) != 0 {
			t.Errorf("no changeset: %d entries", len(rv.Changeset))
		}
	})
}

// TestReviewQueue checks the queue: the proposals of the worlds the
// caller owns or runs as GM only, newest first, pending by default,
// filtered, paginated, counted; a world named must be one of them.
func TestReviewQueue(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		ctx := t.Context()
		// Another world, the stranger's, with its own proposal.
		far := &wf.World{OwnerID: f.stranger.ID, Name: "Far", Cols: 4, Rows: 4, JSON: json.RawMessage(`{"grid":{"cols":4,"rows":4}}`)}
		if err := db.CreateWorld(ctx, far); err != nil {
			t.Fatal(err)
		}
		farP := &wf.Proposal{Kind: wf.ProposalWikiPage, WorldID: far.ID, Payload: json.RawMessage(`{"title":"F"}`), DiffSummary: "far", ActorID: f.stranger.ID}
		if err := db.CreateProposal(ctx, farP, nil); err != nil {
			t.Fatal(err)
		}
		var ids []string // newest first
		for range 5 {
			ids = append([]string{f.pending("").ID}, ids...)
		}
		page := f.page("Harbor")
		edit := f.proposeEdit(page, "Port", "") // the GM's, with the GM's key
		ids = append([]string{edit}, ids...)
		// The queue's order: newest first, then by id (several may share
		// a millisecond).
		sort.Slice(ids, func(i, j int) bool {
			a, err := db.FindProposal(ctx, ids[i])
			if err != nil {
				t.Fatal(err)
			}
			b, err := db.FindProposal(ctx, ids[j])
			if err != nil {
				t.Fatal(err)
			}
			if !a.CreatedAt.Equal(b.CreatedAt) {
				return a.CreatedAt.After(b.CreatedAt)
			}
			return a.ID > b.ID
		})
		rejected := f.pending("")
		if _, err := f.svc.RejectProposal(ctx, as(f.owner, app.Via{Route: "x"}, wf.ScopeWorldWrite), rejected.ID, "no"); err != nil {
			t.Fatal(err)
		}
		queue := func(u *wf.User, q app.QueueQuery) (*app.QueuePage, error) {
			return f.svc.ReviewQueue(ctx, as(u, viaQueue, wf.ScopeWorldRead), q)
		}
		idsOf := func(pg *app.QueuePage) []string {
			var out []string
			for _, p := range pg.Proposals {
				out = append(out, p.ID)
			}
			return out
		}
		before := f.auditCount()
		for _, u := range []*wf.User{f.owner, f.gm} {
			pg, err := queue(u, app.QueueQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ids, idsOf(pg)); diff != "" || pg.Total != 6 || pg.Next != nil {
				t.Errorf("%s: total %d next %v, ids (-want +got):\n%s", u.Name, pg.Total, pg.Next, diff)
			}
		}
		for _, u := range []*wf.User{f.player, f.observer} {
			pg, err := queue(u, app.QueueQuery{})
			if err != nil || len(pg.Proposals) != 0 || pg.Total != 0 {
				t.Errorf("%s sees %v (%v)", u.Name, pg, err)
			}
		}
		if pg, err := queue(f.stranger, app.QueueQuery{}); err != nil || len(pg.Proposals) != 1 || pg.Proposals[0].ID != farP.ID {
			t.Errorf("stranger's own world: %v (%v)", pg, err)
		}
		if n := f.auditCount() - before; n != 0 {
			t.Errorf("the queue wrote %d audit rows", n)
		}

		// Pages of two, walked with Next.
		var walked []string
		q := app.QueueQuery{Limit: 2}
		for {
			pg, err := queue(f.owner, q)
			if err != nil {
				t.Fatal(err)
			}
			if pg.Total != 6 || len(pg.Proposals) > 2 {
				t.Fatalf("page of %d, total %d", len(pg.Proposals), pg.Total)
			}
			walked = append(walked, idsOf(pg)...)
			if pg.Next == nil {
				break
			}
			q.Before = pg.Next
		}
		if diff := cmp.Diff(ids, walked); diff != "" {
			t.Errorf("pages (-want +got):\n%s", diff)
		}

		// Filters.
		for _, tc := range []struct {
			name string
			q    app.QueueQuery
			want []string
		}{
			{"kind", app.QueueQuery{Kind: wf.ProposalWikiEdit}, []string{edit}},
			{"actor", app.QueueQuery{ActorID: f.gm.ID}, []string{edit}},
			{"key", app.QueueQuery{KeyID: "key_" + f.gm.Name}, []string{edit}},
			{"status", app.QueueQuery{Status: wf.ProposalRejected}, []string{rejected.ID}},
			{"world", app.QueueQuery{WorldID: f.world.ID, Kind: wf.ProposalWikiEdit}, []string{edit}},
			{"nothing matches", app.QueueQuery{ActorID: f.stranger.ID}, nil},
		} {
			pg, err := queue(f.owner, tc.q)
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
				continue
			}
			if diff := cmp.Diff(tc.want, idsOf(pg)); diff != "" || pg.Total != len(tc.want) {
				t.Errorf("%s: total %d, (-want +got):\n%s", tc.name, pg.Total, diff)
			}
		}

		// Refusals.
		long := string(make([]byte, 101))
		for _, tc := range []struct {
			name string
			u    *wf.User
			q    app.QueueQuery
			want string
		}{
			{"a world of someone else's", f.owner, app.QueueQuery{WorldID: far.ID}, "not_found"},
			{"a player's world", f.player, app.QueueQuery{WorldID: f.world.ID}, "not_found"},
			{"a missing world", f.owner, app.QueueQuery{WorldID: "world_missing"}, "not_found"},
			{"an unknown status", f.owner, app.QueueQuery{Status: "open"}, "bad_request: status must be one of pending, committed, rejected"},
			{"an unknown kind", f.owner, app.QueueQuery{Kind: "spell"}, "bad_request: kind must be one of quest, encounter, wiki_page, wiki_edit, atlas_place, world"},
			{"a limit too large", f.owner, app.QueueQuery{Limit: 201}, "bad_request: limit must be 1–200"},
			{"a negative limit", f.owner, app.QueueQuery{Limit: -1}, "bad_request: limit must be 1–200"},
			{"a long actor", f.owner, app.QueueQuery{ActorID: long}, code(wf.CheckLength("actor", long, wf.MaxIDLength))},
			{"a bad cursor", f.owner, app.QueueQuery{Before: &wf.ProposalCursor{ID: "x", CreatedAt: time.Now()}}, "bad_request: the page cursor is not a proposal's position"},
		} {
			if _, err := queue(tc.u, tc.q); code(err) != tc.want {
				t.Errorf("%s: got %q, want %q", tc.name, code(err), tc.want)
			}
		}
		if _, err := f.svc.ReviewQueue(ctx, as(f.owner, viaQueue, wf.ScopeWikiRead), app.QueueQuery{}); code(err) != "missing_scopes:world:read" {
			t.Errorf("without the scope: %v", err)
		}
	})
}

// TestReviewQueueFullPages checks the largest page: 200 proposals, and
// Next only when more follow.
func TestReviewQueueFullPages(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newFixture(t, db)
		for range app.MaxQueueLimit {
			f.pending("")
		}
		q := app.QueueQuery{Limit: app.MaxQueueLimit}
		pg, err := f.svc.ReviewQueue(t.Context(), as(f.owner, viaQueue, wf.ScopeWorldRead), q)
		if err != nil {
			t.Fatal(err)
		}
		if len(pg.Proposals) != app.MaxQueueLimit || pg.Next != nil || pg.Total != app.MaxQueueLimit {
			t.Fatalf("exactly one full page: %d, next %v, total %d", len(pg.Proposals), pg.Next, pg.Total)
		}
		f.pending("")
		pg, err = f.svc.ReviewQueue(t.Context(), as(f.owner, viaQueue, wf.ScopeWorldRead), q)
		if err != nil {
			t.Fatal(err)
		}
		if len(pg.Proposals) != app.MaxQueueLimit || pg.Next == nil {
			t.Fatalf("one more: %d, next %v", len(pg.Proposals), pg.Next)
		}
		q.Before = pg.Next
		pg, err = f.svc.ReviewQueue(t.Context(), as(f.owner, viaQueue, wf.ScopeWorldRead), q)
		if err != nil || len(pg.Proposals) != 1 || pg.Next != nil {
			t.Fatalf("second page: %v, %v", pg, err)
		}
	})
}

// ecode is the wire text of a foreseen conflict ("" for none).
func ecode(e *wf.Error) string {
	if e == nil {
		return ""
	}
	return e.Error()
}
