package sqlstore_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

var errNotPending = &worldforge.Error{Code: worldforge.EConflict, Detail: worldforge.DetailNotPending}

func payload(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err)
	return b
}

// propose files p (pending) and returns it.
func propose(t *testing.T, db *sqlstore.DB, p *worldforge.Proposal) *worldforge.Proposal {
	t.Helper()
	if p.DiffSummary == "" {
		p.DiffSummary = "a change"
	}
	must(t, db.CreateProposal(t.Context(), p, nil))
	return p
}

func commitAudit(decider string) *worldforge.AuditEntry {
	return &worldforge.AuditEntry{ActorID: decider, Route: "POST /proposals/:id/commit", Outcome: "committed"}
}

// auditRows counts the audit rows naming target.
func auditRows(t *testing.T, db *sqlstore.DB, target string) int {
	t.Helper()
	n, err := db.QueryIntForTest(t.Context(), "SELECT COUNT(*) FROM audit_log WHERE target_id = ?", target)
	must(t, err)
	return n
}

// wantStatus fails unless the proposal has the status.
func wantStatus(t *testing.T, db *sqlstore.DB, id, status string) *worldforge.Proposal {
	t.Helper()
	p, err := db.FindProposal(t.Context(), id)
	must(t, err)
	if p.Status != status {
		t.Fatalf("proposal %s status %q, want %q", id, p.Status, status)
	}
	return p
}

func TestProposalsCreateFindList(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner, agent := newUser(t, db, "owner"), newUser(t, db, "agent")
		w1, w2 := newWorld(t, db, owner.ID, "one"), newWorld(t, db, owner.ID, "two")

		p1 := propose(t, db, &worldforge.Proposal{WorldID: w1.ID, Kind: worldforge.ProposalWikiPage, ActorID: agent.ID, KeyID: "key_1",
			Payload: payload(t, worldforge.WikiPagePayload{Title: "T"}), ChangesetID: "cs-1", CreatedAt: at(0)})
		if !worldforge.ValidID("prop", p1.ID) || p1.Status != worldforge.ProposalPending {
			t.Fatalf("created: %+v", p1)
		}
		got, err := db.FindProposal(ctx, p1.ID)
		must(t, err)
		diff(t, p1, got)
		p2 := propose(t, db, &worldforge.Proposal{WorldID: w1.ID, Kind: worldforge.ProposalWorld, TargetID: w1.ID, BaseVersion: 1,
			ActorID: owner.ID, Payload: payload(t, worldforge.LorePayload{}), ChangesetID: "cs-1", CreatedAt: at(1)})
		p3 := propose(t, db, &worldforge.Proposal{WorldID: w2.ID, Kind: worldforge.ProposalAtlas, ActorID: agent.ID,
			Payload: json.RawMessage(`{"name":"N"}`), CreatedAt: at(2)})
		p4 := propose(t, db, &worldforge.Proposal{Kind: worldforge.ProposalQuest, ActorID: agent.ID,
			Payload: json.RawMessage(`{"name":"Q"}`), ChangesetID: "loose", CreatedAt: at(2)})

		_, err = db.FindProposal(ctx, "prop_missing")
		wantCode(t, err, worldforge.EProposalNotFound)
		if !errors.Is(err, worldforge.ErrProposalNotFound) || errors.Is(err, worldforge.ErrNotFound) {
			t.Errorf("FindProposal(missing) = %v, want proposal_not_found only", err)
		}

		for _, c := range []struct {
			name string
			p    worldforge.Proposal
			code string
		}{
			{"unknown kind", worldforge.Proposal{WorldID: w1.ID, Kind: "poem", ActorID: agent.ID, Payload: json.RawMessage(`{}`)}, worldforge.EBadRequest},
			{"no payload", worldforge.Proposal{WorldID: w1.ID, Kind: worldforge.ProposalAtlas, ActorID: agent.ID}, worldforge.EBadRequest},
			{"bad payload", worldforge.Proposal{WorldID: w1.ID, Kind: worldforge.ProposalAtlas, ActorID: agent.ID, Payload: json.RawMessage(`{`)}, worldforge.EBadRequest},
			{"bad changeset id", worldforge.Proposal{WorldID: w1.ID, Kind: worldforge.ProposalAtlas, ActorID: agent.ID, Payload: json.RawMessage(`{}`), ChangesetID: "-x"}, worldforge.EBadRequest},
			{"missing world", worldforge.Proposal{WorldID: "world_missing", Kind: worldforge.ProposalAtlas, ActorID: agent.ID, Payload: json.RawMessage(`{}`)}, worldforge.ENotFound},
			{"missing world, changeset", worldforge.Proposal{WorldID: "world_missing", Kind: worldforge.ProposalAtlas, ActorID: agent.ID, Payload: json.RawMessage(`{}`), ChangesetID: "cs-new"}, worldforge.ENotFound},
		} {
			p := c.p
			wantCode(t, db.CreateProposal(ctx, &p, nil), c.code)
		}
		n, err := db.QueryIntForTest(ctx, "SELECT COUNT(*) FROM changesets WHERE id = 'cs-new'")
		must(t, err)
		if n != 0 {
			t.Errorf("changeset of a failed proposal was kept")
		}

		ids := func(ps []worldforge.Proposal) []string {
			out := []string{}
			for _, p := range ps {
				out = append(out, p.ID)
			}
			return out
		}
		list := func(f worldforge.ProposalFilter) []string {
			t.Helper()
			ps, err := db.ListProposals(ctx, f)
			must(t, err)
			return ids(ps)
		}
		// p3 and p4 share a creation time: the larger id comes first.
		newest := []string{p3.ID, p4.ID}
		if p4.ID > p3.ID {
			newest = []string{p4.ID, p3.ID}
		}
		diff(t, append(newest, p2.ID, p1.ID), list(worldforge.ProposalFilter{}))
		diff(t, []string{p2.ID, p1.ID}, list(worldforge.ProposalFilter{WorldID: w1.ID}))
		diff(t, []string{p1.ID}, list(worldforge.ProposalFilter{WorldID: w1.ID, ActorID: agent.ID}))
		diff(t, []string{p2.ID, p1.ID}, list(worldforge.ProposalFilter{ChangesetID: "cs-1", Status: worldforge.ProposalPending}))
		diff(t, []string{}, list(worldforge.ProposalFilter{Status: worldforge.ProposalCommitted}))
		diff(t, newest[:1], list(worldforge.ProposalFilter{Limit: 1}))
	})
}

// TestCommitProposalKinds commits one proposal of each kind and checks the
// change, the proposal's decision and the audit row.
func TestCommitProposalKinds(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner, agent := newUser(t, db, "owner"), newUser(t, db, "agent")
		w := newWorld(t, db, owner.ID, "World")

		// commit commits p as owner and checks what every commit does.
		commit := func(t *testing.T, p *worldforge.Proposal) *worldforge.CommitResult {
			t.Helper()
			before := time.Now().Add(-time.Second)
			res, err := db.CommitProposal(ctx, p.ID, owner.ID, nil, commitAudit(owner.ID))
			must(t, err)
			got := wantStatus(t, db, p.ID, worldforge.ProposalCommitted)
			if got.DecidedBy != owner.ID || got.DecidedAt == nil || got.DecidedAt.Before(before) {
				t.Errorf("decision: by %q at %v", got.DecidedBy, got.DecidedAt)
			}
			diff(t, got, &res.Proposal)
			if res.TargetID == "" || !worldforge.ValidID("aud", res.AuditID) {
				t.Errorf("result: %+v", res)
			}
			entries, err := db.ListAudit(ctx, worldforge.AuditFilter{ActorID: owner.ID, Limit: 1000})
			must(t, err)
			found := 0
			for _, e := range entries {
				if e.ID == res.AuditID {
					found++
					if e.TargetID != res.TargetID || e.WorldID != p.WorldID || e.Outcome != "committed" {
						t.Errorf("audit row: %+v", e)
					}
				}
			}
			if found != 1 {
				t.Errorf("audit rows with id %s: %d", res.AuditID, found)
			}
			return res
		}

		for _, k := range []struct {
			kind, prefix string
			find         func(*sqlstore.DB, string) (*worldforge.Quest, error)
		}{
			{worldforge.ProposalQuest, "quest", func(db *sqlstore.DB, id string) (*worldforge.Quest, error) { return db.FindQuestByID(ctx, id) }},
			{worldforge.ProposalEncounter, "encounter", func(db *sqlstore.DB, id string) (*worldforge.Quest, error) { return db.FindEncounterByID(ctx, id) }},
		} {
			t.Run(k.kind, func(t *testing.T) {
				// New, in a world and outside any.
				for _, world := range []string{w.ID, ""} {
					p := propose(t, db, &worldforge.Proposal{WorldID: world, Kind: k.kind, ActorID: agent.ID,
						Payload: payload(t, worldforge.QuestPayload{Name: "Rescue", JSON: json.RawMessage(`{"steps":[1]}`)})})
					res := commit(t, p)
					q, err := k.find(db, res.TargetID)
					must(t, err)
					if !worldforge.ValidID(k.prefix, q.ID) || q.OwnerID != agent.ID || q.WorldID != world || q.Name != "Rescue" ||
						string(q.JSON) != `{"steps":[1]}` || q.Version != 1 || res.Version != 1 {
						t.Errorf("new %s: %+v", k.kind, q)
					}
				}
				// An update of an existing row.
				q := &worldforge.Quest{OwnerID: owner.ID, WorldID: w.ID, Name: "Old", JSON: json.RawMessage(`{}`)}
				if k.kind == worldforge.ProposalQuest {
					must(t, db.CreateQuest(ctx, q))
				} else {
					must(t, db.CreateEncounter(ctx, q))
				}
				p := propose(t, db, &worldforge.Proposal{WorldID: w.ID, Kind: k.kind, TargetID: q.ID, BaseVersion: 1, ActorID: agent.ID,
					Payload: payload(t, worldforge.QuestPayload{Name: "New", JSON: json.RawMessage(`{"v":2}`)})})
				res := commit(t, p)
				got, err := k.find(db, q.ID)
				must(t, err)
				if res.TargetID != q.ID || res.Version != 2 || got.Version != 2 || got.Name != "New" || string(got.JSON) != `{"v":2}` || got.OwnerID != owner.ID {
					t.Errorf("updated %s: %+v (result %+v)", k.kind, got, res)
				}
				if n := auditRows(t, db, q.ID); n != 1 {
					t.Errorf("audit rows for %s: %d", q.ID, n)
				}
				// A target that does not exist.
				gone := propose(t, db, &worldforge.Proposal{Kind: k.kind, TargetID: k.prefix + "_missing", BaseVersion: 1, ActorID: agent.ID,
					Payload: payload(t, worldforge.QuestPayload{Name: "X"})})
				_, err = db.CommitProposal(ctx, gone.ID, owner.ID, nil, commitAudit(owner.ID))
				wantCode(t, err, worldforge.ENotFound)
				wantStatus(t, db, gone.ID, worldforge.ProposalPending)
			})
		}

		t.Run("wiki_page", func(t *testing.T) {
			p := propose(t, db, &worldforge.Proposal{WorldID: w.ID, Kind: worldforge.ProposalWikiPage, ActorID: agent.ID,
				DiffSummary: "new page on the harbor",
				Payload:     payload(t, worldforge.WikiPagePayload{Title: "Harbor", Body: "Ships.", Kind: worldforge.WikiKindPlace, Audience: worldforge.AudienceParty})})
			res := commit(t, p)
			page, err := db.FindWikiPageByID(ctx, res.TargetID)
			must(t, err)
			if page.WorldID != w.ID || page.Title != "Harbor" || page.Body != "Ships." || page.Kind != worldforge.WikiKindPlace ||
				page.Audience != worldforge.AudienceParty || page.Version != 1 || res.Version != 1 {
				t.Errorf("page: %+v", page)
			}
			hist, err := db.WikiPageHistory(ctx, page.ID, 0)
			must(t, err)
			if len(hist) != 1 || hist[0].AuthorID != agent.ID || hist[0].DiffSummary != "new page on the harbor" {
				t.Errorf("history: %+v", hist)
			}
		})

		t.Run("wiki_edit", func(t *testing.T) {
			page := &worldforge.WikiPage{WorldID: w.ID, Title: "Guild", Body: "Old body.", Kind: worldforge.WikiKindFaction, Audience: worldforge.AudienceGM}
			must(t, db.CreateWikiPage(ctx, page, owner.ID))
			p := propose(t, db, &worldforge.Proposal{WorldID: w.ID, Kind: worldforge.ProposalWikiEdit, TargetID: page.ID, BaseVersion: 1,
				ActorID: agent.ID, DiffSummary: "new body", Payload: payload(t, worldforge.WikiEditPayload{Body: ptr("New body.")})})
			res := commit(t, p)
			got, err := db.FindWikiPageByID(ctx, page.ID)
			must(t, err)
			if res.Version != 2 || got.Version != 2 || got.Title != "Guild" || got.Body != "New body." || got.Audience != worldforge.AudienceGM {
				t.Errorf("edited page: %+v", got)
			}
			hist, err := db.WikiPageHistory(ctx, page.ID, 0)
			must(t, err)
			if len(hist) != 2 || hist[0].Version != 2 || hist[0].Body != "New body." || hist[0].Title != "Guild" ||
				hist[0].Kind != worldforge.WikiKindFaction || hist[0].AuthorID != agent.ID || hist[0].DiffSummary != "new body" {
				t.Errorf("history: %+v", hist)
			}

			// A deleted page is not_found.
			dead := &worldforge.WikiPage{WorldID: w.ID, Title: "Dead", Kind: worldforge.WikiKindLore, Audience: worldforge.AudienceGM, DeletedAt: ptr(t0)}
			must(t, db.CreateWikiPage(ctx, dead, owner.ID))
			p = propose(t, db, &worldforge.Proposal{WorldID: w.ID, Kind: worldforge.ProposalWikiEdit, TargetID: dead.ID, BaseVersion: 1,
				ActorID: agent.ID, Payload: payload(t, worldforge.WikiEditPayload{Title: ptr("Alive")})})
			_, err = db.CommitProposal(ctx, p.ID, owner.ID, nil, commitAudit(owner.ID))
			wantCode(t, err, worldforge.ENotFound)
			wantStatus(t, db, p.ID, worldforge.ProposalPending)
			if n := auditRows(t, db, dead.ID); n != 0 {
				t.Errorf("audit rows of a failed commit: %d", n)
			}
		})

		t.Run("atlas_place", func(t *testing.T) {
			place := func(parent string) *worldforge.Proposal {
				return propose(t, db, &worldforge.Proposal{WorldID: w.ID, Kind: worldforge.ProposalAtlas, ActorID: agent.ID,
					Payload: payload(t, worldforge.AtlasPlacePayload{Name: "Place", TerrainType: "forest", ParentID: parent})})
			}
			res := commit(t, place(""))
			top, err := db.FindAtlasNodeByID(ctx, res.TargetID)
			must(t, err)
			if top.Level != 1 || top.ParentID != "" || top.WorldID != w.ID || top.TerrainType != "forest" || res.Version != 1 {
				t.Errorf("top node: %+v", top)
			}
			res = commit(t, place(top.ID))
			child, err := db.FindAtlasNodeByID(ctx, res.TargetID)
			must(t, err)
			if child.Level != 2 || child.ParentID != top.ID {
				t.Errorf("child node: %+v", child)
			}

			site := &worldforge.AtlasNode{WorldID: w.ID, Name: "Site", Level: 5}
			must(t, db.CreateAtlasNode(ctx, site))
			p := place(site.ID)
			_, err = db.CommitProposal(ctx, p.ID, owner.ID, nil, commitAudit(owner.ID))
			wantCode(t, err, worldforge.EBadRequest)
			if err == nil || !errors.Is(err, worldforge.BadRequest("parent is at level 5, the deepest")) {
				t.Errorf("deepest parent: %v", err)
			}
			wantStatus(t, db, p.ID, worldforge.ProposalPending)

			elsewhere := newWorld(t, db, owner.ID, "Elsewhere")
			foreign := &worldforge.AtlasNode{WorldID: elsewhere.ID, Name: "Foreign", Level: 1}
			must(t, db.CreateAtlasNode(ctx, foreign))
			for _, parent := range []string{foreign.ID, "atlas_missing"} {
				p := place(parent)
				_, err = db.CommitProposal(ctx, p.ID, owner.ID, nil, commitAudit(owner.ID))
				wantCode(t, err, worldforge.ENotFound)
				wantStatus(t, db, p.ID, worldforge.ProposalPending)
			}
		})

		t.Run("world", func(t *testing.T) {
			lw := newWorld(t, db, owner.ID, "Lore")
			must(t, db.UpsertLore(ctx, &worldforge.LoreEntity{WorldID: lw.ID, Collection: "factions", ID: "keep", Name: "Kept", JSON: json.RawMessage(`{"id":"keep"}`)}))
			must(t, db.UpsertLore(ctx, &worldforge.LoreEntity{WorldID: lw.ID, Collection: "rumours", ID: "gone", Name: "Gone"}))
			p := propose(t, db, &worldforge.Proposal{WorldID: lw.ID, Kind: worldforge.ProposalWorld, TargetID: lw.ID, BaseVersion: 1, ActorID: agent.ID,
				Payload: payload(t, worldforge.LorePayload{Operations: []worldforge.StoredLoreOp{
					{Op: worldforge.LoreOpUpsert, Collection: "deities", ID: "sun", Name: "Sun", Entity: json.RawMessage(`{"id":"sun","name":"Sun"}`)},
					{Op: worldforge.LoreOpAdd, Collection: "factions", ID: "keep", Name: "Replaced?", Entity: json.RawMessage(`{"id":"keep","x":1}`), PresetID: "p"},
					{Op: worldforge.LoreOpAdd, Collection: "factions", ID: "new", Name: "New", Entity: json.RawMessage(`{"id":"new"}`), PresetID: "p"},
					{Op: worldforge.LoreOpRemove, Collection: "rumours", ID: "gone"},
					{Op: worldforge.LoreOpRemove, Collection: "rumours", ID: "never-was"},
					{Op: worldforge.LoreOpUpsert, Collection: "deities", ID: "sun", Name: "Sun II", Entity: json.RawMessage(`{"id":"sun","name":"Sun II"}`)},
				}})})
			res := commit(t, p)
			if res.TargetID != lw.ID || res.Version != 2 {
				t.Errorf("result: %+v", res)
			}
			got, err := db.FindWorldHeader(ctx, lw.ID)
			must(t, err)
			if got.Version != 2 {
				t.Errorf("world version %d, want 2", got.Version)
			}
			lore, err := dbtest.Lore(ctx, db, lw.ID, "")
			must(t, err)
			type ent struct{ Coll, ID, Name, JSON string }
			var ents []ent
			for _, e := range lore {
				ents = append(ents, ent{e.Collection, e.ID, e.Name, string(e.JSON)})
			}
			diff(t, []ent{
				{"deities", "sun", "Sun II", `{"id":"sun","name":"Sun II"}`},
				{"factions", "keep", "Kept", `{"id":"keep"}`},
				{"factions", "new", "New", `{"id":"new"}`},
			}, ents)
			if n := auditRows(t, db, lw.ID); n != 1 {
				t.Errorf("audit rows for the world: %d", n)
			}

			// An unknown collection rolls back the world's version too.
			bad := propose(t, db, &worldforge.Proposal{WorldID: lw.ID, Kind: worldforge.ProposalWorld, TargetID: lw.ID, BaseVersion: 2, ActorID: agent.ID,
				Payload: payload(t, worldforge.LorePayload{Operations: []worldforge.StoredLoreOp{
					{Op: worldforge.LoreOpUpsert, Collection: "deities", ID: "moon", Name: "Moon"},
					{Op: worldforge.LoreOpUpsert, Collection: "recipes", ID: "x"},
				}})})
			_, err = db.CommitProposal(ctx, bad.ID, owner.ID, nil, commitAudit(owner.ID))
			wantCode(t, err, worldforge.EBadRequest)
			got, err = db.FindWorldHeader(ctx, lw.ID)
			must(t, err)
			counts, err := db.CountLore(ctx, lw.ID)
			must(t, err)
			if got.Version != 2 || counts["deities"] != 1 {
				t.Errorf("after a failed commit: version %d, deities %d", got.Version, counts["deities"])
			}
			wantStatus(t, db, bad.ID, worldforge.ProposalPending)
		})
	})
}

// TestCommitConflicts covers what a commit refuses: a target changed since
// filing, a failed check, a decided or missing proposal.
func TestCommitConflicts(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner, agent := newUser(t, db, "owner"), newUser(t, db, "agent")
		w := newWorld(t, db, owner.ID, "World")
		page := &worldforge.WikiPage{WorldID: w.ID, Title: "Page", Kind: worldforge.WikiKindLore, Audience: worldforge.AudienceGM}
		must(t, db.CreateWikiPage(ctx, page, owner.ID))
		q := &worldforge.Quest{OwnerID: owner.ID, Name: "Quest"}
		must(t, db.CreateQuest(ctx, q))

		for _, c := range []struct {
			name    string
			kind    string
			target  string
			payload any
			version func() int64
		}{
			{"quest", worldforge.ProposalQuest, q.ID, worldforge.QuestPayload{Name: "Q"}, func() int64 {
				got, err := db.FindQuestByID(ctx, q.ID)
				must(t, err)
				return got.Version
			}},
			{"wiki_edit", worldforge.ProposalWikiEdit, page.ID, worldforge.WikiEditPayload{Body: ptr("b")}, func() int64 {
				got, err := db.FindWikiPageByID(ctx, page.ID)
				must(t, err)
				return got.Version
			}},
			{"world", worldforge.ProposalWorld, w.ID, worldforge.LorePayload{Operations: []worldforge.StoredLoreOp{
				{Op: worldforge.LoreOpUpsert, Collection: "eras", ID: "dawn", Name: "Dawn"}}}, func() int64 {
				got, err := db.FindWorldHeader(ctx, w.ID)
				must(t, err)
				return got.Version
			}},
		} {
			t.Run(c.name, func(t *testing.T) {
				base := c.version()
				mk := func() *worldforge.Proposal {
					return propose(t, db, &worldforge.Proposal{WorldID: w.ID, Kind: c.kind, TargetID: c.target, BaseVersion: base,
						ActorID: agent.ID, Payload: payload(t, c.payload)})
				}
				first, second := mk(), mk()

				// A failed check changes nothing and is returned as it is.
				refused := errors.New("refused by check")
				var checked *worldforge.Proposal
				_, err := db.CommitProposal(ctx, first.ID, owner.ID, func(p *worldforge.Proposal) error {
					checked = p
					return refused
				}, commitAudit(owner.ID))
				if !errors.Is(err, refused) {
					t.Fatalf("check error: %v", err)
				}
				if checked == nil || checked.ID != first.ID || string(checked.Payload) != string(first.Payload) {
					t.Errorf("check saw %+v", checked)
				}
				wantStatus(t, db, first.ID, worldforge.ProposalPending)
				if v := c.version(); v != base {
					t.Errorf("version after a failed check: %d, want %d", v, base)
				}

				res, err := db.CommitProposal(ctx, first.ID, owner.ID, func(*worldforge.Proposal) error { return nil }, commitAudit(owner.ID))
				must(t, err)
				if res.Version != base+1 || c.version() != base+1 {
					t.Errorf("first commit: result version %d, stored %d, want %d", res.Version, c.version(), base+1)
				}
				audits := auditRows(t, db, c.target)

				_, err = db.CommitProposal(ctx, second.ID, owner.ID, nil, commitAudit(owner.ID))
				wantCode(t, err, worldforge.EVersionConflict)
				if !errors.Is(err, worldforge.ErrVersionConflict) {
					t.Errorf("second commit: %v", err)
				}
				wantStatus(t, db, second.ID, worldforge.ProposalPending)
				if v := c.version(); v != base+1 {
					t.Errorf("version after a conflict: %d", v)
				}
				if n := auditRows(t, db, c.target); n != audits {
					t.Errorf("audit rows after a conflict: %d, want %d", n, audits)
				}

				// A decided proposal: not_pending, after the check.
				_, err = db.CommitProposal(ctx, first.ID, owner.ID, nil, commitAudit(owner.ID))
				if !errors.Is(err, errNotPending) {
					t.Errorf("commit again: %v", err)
				}
				_, err = db.RejectProposal(ctx, first.ID, owner.ID, "", nil, nil)
				if !errors.Is(err, errNotPending) {
					t.Errorf("reject committed: %v", err)
				}
				_, err = db.CommitProposal(ctx, first.ID, owner.ID, func(*worldforge.Proposal) error { return refused }, nil)
				if !errors.Is(err, refused) {
					t.Errorf("check on a decided proposal: %v", err)
				}
			})
		}

		_, err := db.CommitProposal(ctx, "prop_missing", owner.ID, nil, commitAudit(owner.ID))
		wantCode(t, err, worldforge.EProposalNotFound)
		_, err = db.RejectProposal(ctx, "prop_missing", owner.ID, "", nil, nil)
		wantCode(t, err, worldforge.EProposalNotFound)

		// A deleted target is not_found.
		lone := newWorld(t, db, owner.ID, "Lone")
		p := propose(t, db, &worldforge.Proposal{Kind: worldforge.ProposalWorld, TargetID: lone.ID, BaseVersion: 1, ActorID: agent.ID,
			Payload: payload(t, worldforge.LorePayload{})})
		must(t, db.ExecForTest(ctx, "DELETE FROM worlds WHERE id = ?", lone.ID))
		_, err = db.CommitProposal(ctx, p.ID, owner.ID, nil, nil)
		wantCode(t, err, worldforge.ENotFound)
		wantStatus(t, db, p.ID, worldforge.ProposalPending)
	})
}

// TestCommitProposalRace commits one proposal from many goroutines at once:
// exactly one commits it, the others are told not_pending, and the target
// changes and is audited once.
func TestCommitProposalRace(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner, agent := newUser(t, db, "owner"), newUser(t, db, "agent")
		w := newWorld(t, db, owner.ID, "World")
		q := &worldforge.Quest{OwnerID: owner.ID, WorldID: w.ID, Name: "Quest"}
		must(t, db.CreateQuest(ctx, q))
		p := propose(t, db, &worldforge.Proposal{WorldID: w.ID, Kind: worldforge.ProposalQuest, TargetID: q.ID, BaseVersion: 1,
			ActorID: agent.ID, Payload: payload(t, worldforge.QuestPayload{Name: "Raced"})})

		const callers = 100
		var (
			wg          sync.WaitGroup
			mu          sync.Mutex
			wins, loses int
			others      []error
			start       = make(chan struct{})
		)
		for range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				// The check reads the store, as access rules do: with more
				// callers than the PostgreSQL pool has connections, a check
				// run while holding the write transaction's connection
				// would wait forever.
				_, err := db.CommitProposal(ctx, p.ID, owner.ID, func(p *worldforge.Proposal) error {
					role, err := db.WorldRole(ctx, p.WorldID, owner.ID)
					if err == nil && role != worldforge.RoleOwner {
						err = fmt.Errorf("role %q", role)
					}
					return err
				}, commitAudit(owner.ID))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
				case errors.Is(err, errNotPending):
					loses++
				default:
					others = append(others, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if wins != 1 || loses != callers-1 || len(others) > 0 {
			t.Fatalf("wins %d, not_pending %d, other errors %v", wins, loses, others)
		}
		got, err := db.FindQuestByID(ctx, q.ID)
		must(t, err)
		if got.Version != 2 || got.Name != "Raced" {
			t.Errorf("quest: %+v", got)
		}
		if n := auditRows(t, db, q.ID); n != 1 {
			t.Errorf("audit rows: %d, want 1", n)
		}
		wantStatus(t, db, p.ID, worldforge.ProposalCommitted)
	})
}

func TestCommitChangeset(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner, agent := newUser(t, db, "owner"), newUser(t, db, "agent")
		w := newWorld(t, db, owner.ID, "World")
		page := &worldforge.WikiPage{WorldID: w.ID, Title: "Page", Kind: worldforge.WikiKindLore, Audience: worldforge.AudienceGM}
		must(t, db.CreateWikiPage(ctx, page, owner.ID))
		auditFn := func(p *worldforge.Proposal) *worldforge.AuditEntry {
			a := commitAudit(owner.ID)
			a.TargetType = p.Kind
			return a
		}
		worldVersion := func() int64 {
			got, err := db.FindWorldHeader(ctx, w.ID)
			must(t, err)
			return got.Version
		}
		lore := func(cs string, minute int, id string) *worldforge.Proposal {
			return propose(t, db, &worldforge.Proposal{WorldID: w.ID, Kind: worldforge.ProposalWorld, TargetID: w.ID, BaseVersion: worldVersion(),
				ActorID: agent.ID, ChangesetID: cs, CreatedAt: at(minute), Payload: payload(t, worldforge.LorePayload{Operations: []worldforge.StoredLoreOp{
					{Op: worldforge.LoreOpUpsert, Collection: "eras", ID: id, Name: id}}})})
		}

		t.Run("all or nothing", func(t *testing.T) {
			a := propose(t, db, &worldforge.Proposal{WorldID: w.ID, Kind: worldforge.ProposalAtlas, ActorID: agent.ID, ChangesetID: "cs-fail",
				CreatedAt: at(0), Payload: payload(t, worldforge.AtlasPlacePayload{Name: "Region"})})
			b := propose(t, db, &worldforge.Proposal{WorldID: w.ID, Kind: worldforge.ProposalWikiEdit, TargetID: page.ID, BaseVersion: 1,
				ActorID: agent.ID, ChangesetID: "cs-fail", CreatedAt: at(1), Payload: payload(t, worldforge.WikiEditPayload{Body: ptr("b")})})
			c := lore("cs-fail", 2, "dawn")
			// The page changes outside the changeset: b conflicts.
			other := propose(t, db, &worldforge.Proposal{WorldID: w.ID, Kind: worldforge.ProposalWikiEdit, TargetID: page.ID, BaseVersion: 1,
				ActorID: agent.ID, Payload: payload(t, worldforge.WikiEditPayload{Title: ptr("Renamed")})})
			_, err := db.CommitProposal(ctx, other.ID, owner.ID, nil, nil)
			must(t, err)

			v := worldVersion()
			_, err = db.CommitChangeset(ctx, w.ID, "cs-fail", owner.ID, nil, auditFn)
			wantCode(t, err, worldforge.EVersionConflict)
			for _, p := range []*worldforge.Proposal{a, b, c} {
				wantStatus(t, db, p.ID, worldforge.ProposalPending)
			}
			nodes, err := db.CountAtlasNodes(ctx, w.ID)
			must(t, err)
			counts, err := db.CountLore(ctx, w.ID)
			must(t, err)
			if nodes != 0 || counts["eras"] != 0 || worldVersion() != v {
				t.Errorf("after a failed changeset: %d nodes, %d eras, world version %d (was %d)", nodes, counts["eras"], worldVersion(), v)
			}
			if n := auditRows(t, db, w.ID); n != 0 {
				t.Errorf("audit rows of the world: %d", n)
			}

			// A failing check on any proposal commits none.
			refused := errors.New("refused")
			_, err = db.CommitChangeset(ctx, w.ID, "cs-fail", owner.ID, func(p *worldforge.Proposal) error {
				if p.ID == c.ID {
					return refused
				}
				return nil
			}, auditFn)
			if !errors.Is(err, refused) {
				t.Errorf("check error: %v", err)
			}
			wantStatus(t, db, a.ID, worldforge.ProposalPending)

			// Once the conflicting one is rejected, the rest commits.
			_, err = db.RejectProposal(ctx, b.ID, owner.ID, "", nil, nil)
			must(t, err)
			res, err := db.CommitChangeset(ctx, w.ID, "cs-fail", owner.ID, nil, auditFn)
			must(t, err)
			if len(res) != 2 || res[0].Proposal.ID != a.ID || res[1].Proposal.ID != c.ID ||
				res[0].Proposal.Status != worldforge.ProposalCommitted || res[1].Version != v+1 {
				t.Errorf("results: %+v", res)
			}
			for _, r := range res {
				if n := auditRows(t, db, r.TargetID); n != 1 {
					t.Errorf("audit rows of %s: %d", r.TargetID, n)
				}
			}
			_, err = db.CommitChangeset(ctx, w.ID, "cs-fail", owner.ID, nil, auditFn)
			wantCode(t, err, worldforge.EProposalNotFound)
		})

		t.Run("same target twice", func(t *testing.T) {
			// Two lore proposals filed at the same world version: the
			// second counts the first's change.
			v := worldVersion()
			p1, p2 := lore("cs-lore", 10, "first"), lore("cs-lore", 11, "second")
			if p1.BaseVersion != p2.BaseVersion {
				t.Fatalf("base versions %d, %d", p1.BaseVersion, p2.BaseVersion)
			}
			res, err := db.CommitChangeset(ctx, w.ID, "cs-lore", owner.ID, nil, nil)
			must(t, err)
			if len(res) != 2 || res[0].Version != v+1 || res[1].Version != v+2 || worldVersion() != v+2 {
				t.Errorf("results: %+v, world version %d", res, worldVersion())
			}
			counts, err := db.CountLore(ctx, w.ID)
			must(t, err)
			if counts["eras"] != 3 { // dawn, first, second
				t.Errorf("eras: %d", counts["eras"])
			}
		})

		t.Run("other world", func(t *testing.T) {
			// The same id in another world is another changeset: filing
			// into it works, and committing one commits only its own.
			w2 := newWorld(t, db, owner.ID, "Two")
			mine := lore("cs-w1", 20, "x")
			theirs := propose(t, db, &worldforge.Proposal{WorldID: w2.ID, Kind: worldforge.ProposalWorld, TargetID: w2.ID, BaseVersion: 1,
				ActorID: agent.ID, ChangesetID: "cs-w1", Payload: payload(t, worldforge.LorePayload{})})
			res, err := db.CommitChangeset(ctx, w2.ID, "cs-w1", owner.ID, nil, nil)
			must(t, err)
			if len(res) != 1 || res[0].Proposal.ID != theirs.ID {
				t.Errorf("committed %+v, want only %s", res, theirs.ID)
			}
			wantStatus(t, db, mine.ID, worldforge.ProposalPending)
			_, err = db.CommitChangeset(ctx, w2.ID, "cs-w1", owner.ID, nil, nil)
			wantCode(t, err, worldforge.EProposalNotFound)
			_, err = db.CommitChangeset(ctx, w.ID, "cs-none", owner.ID, nil, nil)
			wantCode(t, err, worldforge.EProposalNotFound)
			res, err = db.CommitChangeset(ctx, w.ID, "cs-w1", owner.ID, nil, nil)
			must(t, err)
			if len(res) != 1 || res[0].Proposal.ID != mine.ID {
				t.Errorf("committed %+v, want only %s", res, mine.ID)
			}
		})
	})
}

// TestChangesetScope: changeset ids are scoped to their world, and outside
// worlds to their proposer. Two tenants using the same id (in their own
// worlds, or for their own quests outside worlds) each get a changeset of
// their own, in any order; the changesets table holds one row per scope.
func TestChangesetScope(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		alice, bob := newUser(t, db, "alice"), newUser(t, db, "bob")
		wa, wb := newWorld(t, db, alice.ID, "Alice's"), newWorld(t, db, bob.ID, "Bob's")
		minute := 0 // filing times one minute apart: lists are in a fixed order
		place := func(w *worldforge.World, actor *worldforge.User, name string) *worldforge.Proposal {
			minute++
			return propose(t, db, &worldforge.Proposal{WorldID: w.ID, Kind: worldforge.ProposalAtlas, ActorID: actor.ID, ChangesetID: "cs1",
				CreatedAt: at(minute), Payload: payload(t, worldforge.AtlasPlacePayload{Name: name})})
		}
		quest := func(actor *worldforge.User, name string) *worldforge.Proposal {
			minute++
			return propose(t, db, &worldforge.Proposal{Kind: worldforge.ProposalQuest, ActorID: actor.ID, ChangesetID: "cs1",
				CreatedAt: at(minute), Payload: payload(t, worldforge.QuestPayload{Name: name})})
		}
		// Bob squats cs1 first, in his world and outside worlds.
		b1, bq := place(wb, bob, "Bob's place"), quest(bob, "Bob's quest")
		a1, a2, aq := place(wa, alice, "Alice's place"), place(wa, alice, "Alice's second"), quest(alice, "Alice's quest")
		for _, p := range []*worldforge.Proposal{a1, a2, aq, b1, bq} {
			if got := wantStatus(t, db, p.ID, worldforge.ProposalPending); got.ChangesetID != "cs1" {
				t.Errorf("%s: changeset %q", p.ID, got.ChangesetID)
			}
		}
		n, err := db.QueryIntForTest(ctx, "SELECT COUNT(*) FROM changesets WHERE id = 'cs1'")
		must(t, err)
		if n != 4 {
			t.Errorf("%d changesets named cs1, want 4 (two worlds, two users outside worlds)", n)
		}
		ids := func(f worldforge.ProposalFilter) []string {
			ps, err := db.ListProposals(ctx, f)
			must(t, err)
			out := []string{}
			for _, p := range ps {
				out = append(out, p.ID)
			}
			return out
		}
		diff(t, []string{a2.ID, a1.ID}, ids(worldforge.ProposalFilter{WorldID: wa.ID, ChangesetID: "cs1"}))
		diff(t, []string{b1.ID}, ids(worldforge.ProposalFilter{WorldID: wb.ID, ChangesetID: "cs1"}))
		diff(t, []string{aq.ID, a2.ID, a1.ID}, ids(worldforge.ProposalFilter{ActorID: alice.ID, ChangesetID: "cs1"}))

		res, err := db.CommitChangeset(ctx, wa.ID, "cs1", alice.ID, nil, nil)
		must(t, err)
		if len(res) != 2 || res[0].Proposal.ID != a1.ID || res[1].Proposal.ID != a2.ID {
			t.Errorf("Alice's commit: %+v", res)
		}
		for _, p := range []*worldforge.Proposal{b1, bq, aq} {
			wantStatus(t, db, p.ID, worldforge.ProposalPending)
		}
		// Another filing into the committed changeset reuses its row.
		place(wa, alice, "Alice's third")
		n, err = db.QueryIntForTest(ctx, "SELECT COUNT(*) FROM changesets WHERE id = 'cs1'")
		must(t, err)
		if n != 4 {
			t.Errorf("%d changesets named cs1 after a second filing, want 4", n)
		}
		// Deleting Bob's world removes its changeset only.
		must(t, db.ExecForTest(ctx, "DELETE FROM worlds WHERE id = ?", wb.ID))
		n, err = db.QueryIntForTest(ctx, "SELECT COUNT(*) FROM changesets WHERE id = 'cs1'")
		must(t, err)
		if n != 3 {
			t.Errorf("%d changesets named cs1 after deleting a world, want 3", n)
		}
	})
}

// TestChangesetScopeMigration opens a database whose changesets table has
// the schema before scoping (the id the primary key) and holds rows, in a
// world and outside worlds: Open migrates it, every row is kept, and the
// old ids are now scoped (another world may use them).
func TestChangesetScopeMigration(t *testing.T) {
	t.Parallel()
	dbtest.ForEachDSN(t, func(t *testing.T, dsn string) {
		ctx := t.Context()
		db, err := sqlstore.Open(ctx, dsn, dbtest.Options())
		must(t, err)
		owner, other := newUser(t, db, "owner"), newUser(t, db, "other")
		w, w2 := newWorld(t, db, owner.ID, "old"), newWorld(t, db, other.ID, "other")
		for _, q := range []string{
			"DROP TABLE changesets",
			"DROP INDEX proposals_changeset",
			`CREATE TABLE changesets (
				id         TEXT PRIMARY KEY,
				world_id   TEXT REFERENCES worlds (id) ON DELETE CASCADE,
				created_by TEXT NOT NULL,
				status     TEXT NOT NULL,
				created_at BIGINT NOT NULL)`,
			"CREATE INDEX proposals_changeset ON proposals (changeset_id)",
			"DELETE FROM schema_migrations WHERE version = 8",
		} {
			must(t, db.ExecForTest(ctx, q))
		}
		type row struct{ World, ID, By, Status string }
		old := []row{{w.ID, "cs1", owner.ID, "open"}, {w.ID, "cs2", owner.ID, "open"}, {"", "loose", owner.ID, "open"}}
		for i, r := range old {
			var world any
			if r.World != "" {
				world = r.World
			}
			must(t, db.ExecForTest(ctx, "INSERT INTO changesets (id, world_id, created_by, status, created_at) VALUES (?, ?, ?, ?, ?)",
				r.ID, world, r.By, r.Status, i))
		}
		old1 := propose(t, db, &worldforge.Proposal{WorldID: w.ID, Kind: worldforge.ProposalAtlas, ActorID: owner.ID, ChangesetID: "cs1",
			CreatedAt: at(0), Payload: payload(t, worldforge.AtlasPlacePayload{Name: "Old"})})
		must(t, db.Close())

		again := dbtest.MustOpen(t, dsn)
		n, err := again.QueryIntForTest(ctx, "SELECT COUNT(*) FROM schema_migrations WHERE version = 8")
		must(t, err)
		if n != 1 {
			t.Fatalf("migration 8 recorded %d times", n)
		}
		for i, r := range old {
			got, err := again.QueryStringForTest(ctx,
				"SELECT COALESCE(world_id, '') || '/' || id || '/' || created_by || '/' || status || '/' || CAST(created_at AS TEXT) FROM changesets WHERE id = ?", r.ID)
			must(t, err)
			if want := fmt.Sprintf("%s/%s/%s/%s/%d", r.World, r.ID, r.By, r.Status, i); got != want {
				t.Errorf("row %s after the migration: %q, want %q", r.ID, got, want)
			}
		}
		// The old ids are scoped now.
		theirs := propose(t, again, &worldforge.Proposal{WorldID: w2.ID, Kind: worldforge.ProposalAtlas, ActorID: other.ID, ChangesetID: "cs2",
			Payload: payload(t, worldforge.AtlasPlacePayload{Name: "Theirs"})})
		mine := propose(t, again, &worldforge.Proposal{WorldID: w.ID, Kind: worldforge.ProposalAtlas, ActorID: owner.ID, ChangesetID: "cs1",
			CreatedAt: at(1), Payload: payload(t, worldforge.AtlasPlacePayload{Name: "Mine"})})
		n, err = again.QueryIntForTest(ctx, "SELECT COUNT(*) FROM changesets")
		must(t, err)
		if n != 4 {
			t.Errorf("%d changesets, want the 3 old ones and the other world's cs2", n)
		}
		res, err := again.CommitChangeset(ctx, w.ID, "cs1", owner.ID, nil, nil)
		must(t, err)
		if len(res) != 2 || res[0].Proposal.ID != old1.ID || res[1].Proposal.ID != mine.ID {
			t.Errorf("commit of the old changeset: %+v", res)
		}
		wantStatus(t, again, theirs.ID, worldforge.ProposalPending)
	})
}

func TestRejectProposal(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner, agent := newUser(t, db, "owner"), newUser(t, db, "agent")
		w := newWorld(t, db, owner.ID, "World")
		p := propose(t, db, &worldforge.Proposal{WorldID: w.ID, Kind: worldforge.ProposalAtlas, ActorID: agent.ID,
			Payload: payload(t, worldforge.AtlasPlacePayload{Name: "Nowhere"})})

		refused := errors.New("refused")
		_, err := db.RejectProposal(ctx, p.ID, owner.ID, "", func(*worldforge.Proposal) error { return refused }, nil)
		if !errors.Is(err, refused) {
			t.Fatalf("check error: %v", err)
		}
		wantStatus(t, db, p.ID, worldforge.ProposalPending)

		audit := &worldforge.AuditEntry{ActorID: owner.ID, Route: "POST /proposals/:id/reject", Outcome: "rejected"}
		got, err := db.RejectProposal(ctx, p.ID, owner.ID, "", nil, audit)
		must(t, err)
		stored := wantStatus(t, db, p.ID, worldforge.ProposalRejected)
		diff(t, stored, got)
		if got.DecidedBy != owner.ID || got.DecidedAt == nil {
			t.Errorf("decision: %+v", got)
		}
		if !worldforge.ValidID("aud", audit.ID) || auditRows(t, db, p.ID) != 1 {
			t.Errorf("audit: %+v, rows %d", audit, auditRows(t, db, p.ID))
		}
		entries, err := db.ListAudit(ctx, worldforge.AuditFilter{WorldID: w.ID})
		must(t, err)
		if len(entries) != 1 || entries[0].ID != audit.ID || entries[0].Outcome != "rejected" {
			t.Errorf("audit rows of the world: %+v", entries)
		}
		n, err := db.CountAtlasNodes(ctx, w.ID)
		must(t, err)
		if n != 0 {
			t.Errorf("a rejected proposal was applied")
		}

		_, err = db.RejectProposal(ctx, p.ID, owner.ID, "", nil, nil)
		if !errors.Is(err, errNotPending) {
			t.Errorf("reject again: %v", err)
		}
		_, err = db.CommitProposal(ctx, p.ID, owner.ID, nil, nil)
		if !errors.Is(err, errNotPending) {
			t.Errorf("commit rejected: %v", err)
		}
	})
}

func TestAutoAcceptRules(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner, other, agent := newUser(t, db, "owner"), newUser(t, db, "other"), newUser(t, db, "agent")
		w1, w2 := newWorld(t, db, owner.ID, "one"), newWorld(t, db, owner.ID, "two")

		r1 := &worldforge.AutoAcceptRule{OwnerID: owner.ID, WorldID: w1.ID, ActorID: agent.ID,
			Kinds: []string{worldforge.ProposalWikiPage, worldforge.ProposalAtlas}, CreatedAt: at(0)}
		r2 := &worldforge.AutoAcceptRule{OwnerID: owner.ID, KeyID: "key_k", CreatedAt: at(1)}
		must(t, db.CreateAutoAcceptRule(ctx, r1))
		must(t, db.CreateAutoAcceptRule(ctx, r2))
		must(t, db.CreateAutoAcceptRule(ctx, &worldforge.AutoAcceptRule{OwnerID: other.ID}))
		if !worldforge.ValidID("rule", r1.ID) || r2.Kinds == nil {
			t.Errorf("created: %+v %+v", r1, r2)
		}
		wantCode(t, db.CreateAutoAcceptRule(ctx, &worldforge.AutoAcceptRule{OwnerID: owner.ID, Kinds: []string{"poem"}}), worldforge.EBadRequest)
		// Over the bounds, or a kind twice: refused by the store too.
		wantCode(t, db.CreateAutoAcceptRule(ctx, &worldforge.AutoAcceptRule{OwnerID: owner.ID, ActorID: strings.Repeat("a", worldforge.MaxIDLength+1)}), worldforge.EBadRequest)
		wantCode(t, db.CreateAutoAcceptRule(ctx, &worldforge.AutoAcceptRule{OwnerID: owner.ID, KeyID: strings.Repeat("k", worldforge.MaxIDLength+1)}), worldforge.EBadRequest)
		wantCode(t, db.CreateAutoAcceptRule(ctx, &worldforge.AutoAcceptRule{OwnerID: owner.ID, ActorID: agent.ID,
			Kinds: []string{worldforge.ProposalQuest, worldforge.ProposalQuest}}), worldforge.EBadRequest)
		wantCode(t, db.CreateAutoAcceptRule(ctx, &worldforge.AutoAcceptRule{OwnerID: "user_missing"}), worldforge.ENotFound)
		wantCode(t, db.CreateAutoAcceptRule(ctx, &worldforge.AutoAcceptRule{OwnerID: owner.ID, WorldID: "world_missing"}), worldforge.ENotFound)

		rules, err := db.ListAutoAcceptRules(ctx, owner.ID)
		must(t, err)
		diff(t, []worldforge.AutoAcceptRule{*r1, *r2}, rules)
		none, err := db.ListAutoAcceptRules(ctx, "user_nobody")
		must(t, err)
		if none == nil || len(none) != 0 {
			t.Errorf("rules of nobody: %#v", none)
		}

		for _, c := range []struct {
			name string
			p    worldforge.Proposal
			want bool
		}{
			{"r1: world, actor, kind", worldforge.Proposal{WorldID: w1.ID, ActorID: agent.ID, Kind: worldforge.ProposalAtlas}, true},
			{"r1: other kind", worldforge.Proposal{WorldID: w1.ID, ActorID: agent.ID, Kind: worldforge.ProposalWorld}, false},
			{"r1: other world", worldforge.Proposal{WorldID: w2.ID, ActorID: agent.ID, Kind: worldforge.ProposalAtlas}, false},
			{"r1: other actor", worldforge.Proposal{WorldID: w1.ID, ActorID: other.ID, Kind: worldforge.ProposalAtlas}, false},
			{"r1: no world", worldforge.Proposal{ActorID: agent.ID, Kind: worldforge.ProposalWikiPage}, false},
			{"r2: key, any world and kind", worldforge.Proposal{WorldID: w2.ID, ActorID: other.ID, KeyID: "key_k", Kind: worldforge.ProposalWorld}, true},
			{"r2: key, no world", worldforge.Proposal{KeyID: "key_k", Kind: worldforge.ProposalQuest}, true},
			{"r2: other key", worldforge.Proposal{WorldID: w2.ID, KeyID: "key_j", Kind: worldforge.ProposalWorld}, false},
			{"r2: no key", worldforge.Proposal{WorldID: w2.ID, Kind: worldforge.ProposalWorld}, false},
		} {
			got, err := db.MatchAutoAccept(ctx, owner.ID, &c.p)
			must(t, err)
			if got != c.want {
				t.Errorf("%s: match %v, want %v", c.name, got, c.want)
			}
		}
		ok, err := db.MatchAutoAccept(ctx, "user_nobody", &worldforge.Proposal{Kind: worldforge.ProposalQuest})
		must(t, err)
		if ok {
			t.Errorf("a user without rules matched")
		}

		wantCode(t, db.DeleteAutoAcceptRule(ctx, other.ID, r1.ID), worldforge.ENotFound)
		must(t, db.DeleteAutoAcceptRule(ctx, owner.ID, r1.ID))
		wantCode(t, db.DeleteAutoAcceptRule(ctx, owner.ID, r1.ID), worldforge.ENotFound)
		rules, err = db.ListAutoAcceptRules(ctx, owner.ID)
		must(t, err)
		diff(t, []worldforge.AutoAcceptRule{*r2}, rules)
		ok, err = db.MatchAutoAccept(ctx, owner.ID, &worldforge.Proposal{WorldID: w1.ID, ActorID: agent.ID, Kind: worldforge.ProposalAtlas})
		must(t, err)
		if ok {
			t.Errorf("a deleted rule still matches")
		}
	})
}

// TestCreateProposalWithAudit: the filing's audit row is stored with the
// proposal, and a refused proposal stores neither.
func TestCreateProposalWithAudit(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner := newUser(t, db, "owner")
		w := newWorld(t, db, owner.ID, "A")
		count := func() int {
			n, err := db.CountAudit(ctx, worldforge.AuditFilter{ActorID: owner.ID})
			must(t, err)
			return n
		}
		p := &worldforge.Proposal{WorldID: w.ID, Kind: worldforge.ProposalAtlas, ActorID: owner.ID, DiffSummary: "d",
			Payload: json.RawMessage(`{"name":"P"}`)}
		a := &worldforge.AuditEntry{ActorID: owner.ID, Tool: "propose_atlas_place", Outcome: "ok"}
		must(t, db.CreateProposal(ctx, p, a))
		if count() != 1 || a.TargetID != p.ID || a.WorldID != w.ID {
			t.Fatalf("audit %+v, %d rows", a, count())
		}
		bad := &worldforge.Proposal{WorldID: "world_missing0000000000", Kind: worldforge.ProposalAtlas, ActorID: owner.ID,
			Payload: json.RawMessage(`{"name":"P"}`)}
		wantCode(t, db.CreateProposal(ctx, bad, &worldforge.AuditEntry{ActorID: owner.ID, Outcome: "ok"}), worldforge.ENotFound)
		if count() != 1 {
			t.Fatalf("a refused proposal wrote an audit row")
		}
	})
}

// TestPreviewCommit: a preview answers what a commit would meet now and
// keeps nothing.
func TestPreviewCommit(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner, agent := newUser(t, db, "owner"), newUser(t, db, "agent")
		w := newWorld(t, db, owner.ID, "World")
		page := &worldforge.WikiPage{WorldID: w.ID, Title: "Page", Kind: worldforge.WikiKindLore, Audience: worldforge.AudienceGM}
		must(t, db.CreateWikiPage(ctx, page, owner.ID))
		edit := func() *worldforge.Proposal {
			return propose(t, db, &worldforge.Proposal{WorldID: w.ID, Kind: worldforge.ProposalWikiEdit, TargetID: page.ID, BaseVersion: 1,
				ActorID: agent.ID, Payload: payload(t, worldforge.WikiEditPayload{Body: ptr("new body")})})
		}
		first, second := edit(), edit()
		before, err := db.Fingerprint(ctx)
		must(t, err)

		for range 3 {
			if err := db.PreviewCommit(ctx, first.ID); err != nil {
				t.Fatalf("preview of a committable proposal: %v", err)
			}
		}
		after, err := db.Fingerprint(ctx)
		must(t, err)
		if changed := changedKeys(before, after); len(changed) != 0 {
			t.Errorf("previews changed %v", changed)
		}
		wantStatus(t, db, first.ID, worldforge.ProposalPending)
		if got, err := db.FindWikiPageByID(ctx, page.ID); err != nil || got.Body != "" || got.Version != 1 {
			t.Errorf("page after previews: %+v, %v", got, err)
		}
		if n := auditRows(t, db, page.ID); n != 0 {
			t.Errorf("%d audit rows after previews", n)
		}

		// What a commit would meet, once the first is committed: the
		// second's target moved on, and the first is decided.
		_, err = db.CommitProposal(ctx, first.ID, owner.ID, nil, commitAudit(owner.ID))
		must(t, err)
		if err := db.PreviewCommit(ctx, second.ID); !errors.Is(err, worldforge.ErrVersionConflict) {
			t.Errorf("preview after the target changed: %v", err)
		}
		if err := db.PreviewCommit(ctx, first.ID); worldforge.ErrorCode(err) != worldforge.EConflict {
			t.Errorf("preview of a committed proposal: %v", err)
		}
		if err := db.PreviewCommit(ctx, "prop_aaaaaaaaaaaaaaaaaaaa"); !errors.Is(err, worldforge.ErrProposalNotFound) {
			t.Errorf("preview of a missing proposal: %v", err)
		}
		wantStatus(t, db, second.ID, worldforge.ProposalPending)
	})
}

// changedKeys lists the keys whose values differ.
func changedKeys(before, after map[string]string) []string {
	var out []string
	for k, v := range after {
		if before[k] != v {
			out = append(out, k)
		}
	}
	return out
}
