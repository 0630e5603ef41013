package diffview

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	wf "github.com/worldforge-go/worldforge"
)

func payload(t *testing.T, v any) json.RawMessage {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func ptr(s string) *string { return &s }

// fieldsOf is a view's fields as "name: old → new (change)".
func fieldsOf(fs []Field) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name+": "+f.Old+" → "+f.New+" ("+string(f.Change)+")")
	}
	return out
}

func TestProposal(t *testing.T) {
	quest := &wf.Quest{ID: "qst_1", Name: "Old", JSON: json.RawMessage(`{"step":1,"goal":"find","gone":true,"n":1.0}`), Version: 3}
	page := &wf.WikiPage{ID: "wiki_1", Title: "Harbor", Body: "one\ntwo\nthree\n", Audience: wf.AudienceGM, Version: 2}
	parent := &wf.AtlasNode{ID: "atl_1", Name: "Aldmere", Level: 2}
	cases := []struct {
		name    string
		p       wf.Proposal
		cur     State
		summary string
		target  string
		gone    bool
		fields  []string
		body    string
		problem string
	}{
		{
			name:    "new quest",
			p:       wf.Proposal{Kind: wf.ProposalQuest, Payload: payload(t, wf.QuestPayload{Name: "Hunt", JSON: json.RawMessage(`{"step":1}`)})},
			summary: "New quest “Hunt”",
			fields:  []string{"name:  → Hunt (added)", "step:  → 1 (added)"},
		},
		{
			name: "quest change",
			p: wf.Proposal{Kind: wf.ProposalQuest, TargetID: "qst_1", BaseVersion: 3,
				Payload: payload(t, wf.QuestPayload{Name: "New", JSON: json.RawMessage(`{"step":2,"goal":"find","n":1,"extra":[1, 2]}`)})},
			cur:     State{Doc: quest},
			summary: "Change of quest “Old”",
			target:  "Quest “Old” (version 3)",
			fields: []string{"name: Old → New (changed)", "step: 1 → 2 (changed)", "goal: find → find (same)", "n: 1.0 → 1 (same)",
				"extra:  → [1,2] (added)", "gone: true →  (removed)"},
		},
		{
			name:    "encounter gone",
			p:       wf.Proposal{Kind: wf.ProposalEncounter, TargetID: "enc_1", Payload: payload(t, wf.QuestPayload{Name: "Ambush"})},
			summary: "Change of an encounter that no longer exists",
			gone:    true,
			fields:  []string{"name:  → Ambush (added)"},
		},
		{
			name:    "quest document not an object",
			p:       wf.Proposal{Kind: wf.ProposalQuest, TargetID: "qst_1", Payload: json.RawMessage(`{"name":"Old","json":[1]}`)},
			cur:     State{Doc: quest},
			summary: "Change of quest “Old”",
			target:  "Quest “Old” (version 3)",
			fields:  []string{"name: Old → Old (same)", `json: {"step":1,"goal":"find","gone":true,"n":1.0} → [1] (changed)`},
		},
		{
			name:    "new wiki page",
			p:       wf.Proposal{Kind: wf.ProposalWikiPage, Payload: payload(t, wf.WikiPagePayload{Title: "<b>Docks</b>", Body: "a\nb", Kind: "place", Audience: "party"})},
			summary: "New wiki page “<b>Docks</b>”",
			fields:  []string{"title:  → <b>Docks</b> (added)", "kind:  → place (added)", "audience:  → party (added)"},
			body:    "@@ -0,0 +1,2 @@\n+a\n+b\\\n",
		},
		{
			name:    "wiki edit of title and body",
			p:       wf.Proposal{Kind: wf.ProposalWikiEdit, TargetID: "wiki_1", Payload: payload(t, wf.WikiEditPayload{Title: ptr("Port"), Body: ptr("one\n2\nthree\n")})},
			cur:     State{Page: page},
			summary: "Edit of wiki page “Harbor”",
			target:  "Wiki page “Harbor” (version 2)",
			fields:  []string{"title: Harbor → Port (changed)", "audience: gm → gm (same)"},
			body:    "@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n",
		},
		{
			name:    "wiki edit of a deleted page",
			p:       wf.Proposal{Kind: wf.ProposalWikiEdit, TargetID: "wiki_1", Payload: payload(t, wf.WikiEditPayload{Audience: ptr("party")})},
			summary: "Edit of a wiki page that no longer exists",
			gone:    true,
			fields:  []string{"title:  →  (same)", "audience:  → party (added)"},
		},
		{
			name:    "atlas place under a parent",
			p:       wf.Proposal{Kind: wf.ProposalAtlas, Payload: payload(t, wf.AtlasPlacePayload{Name: "Quay", TerrainType: "coast", ParentID: "atl_1"})},
			cur:     State{Parent: parent},
			summary: "New atlas place “Quay”",
			fields:  []string{"name:  → Quay (added)", "terrainType:  → coast (added)", "parent:  → Aldmere (atl_1, level 2) (added)", "level:  → 3 (added)"},
		},
		{
			name:    "atlas place whose parent is gone",
			p:       wf.Proposal{Kind: wf.ProposalAtlas, Payload: payload(t, wf.AtlasPlacePayload{Name: "Quay", ParentID: "atl_9"})},
			summary: "New atlas place “Quay”",
			gone:    true,
			fields:  []string{"name:  → Quay (added)", "terrainType:  →  (same)", "parent:  → atl_9 (no longer exists) (added)", "level:  → ? (added)"},
		},
		{
			name:    "payload that is not JSON",
			p:       wf.Proposal{Kind: wf.ProposalWikiPage, Payload: json.RawMessage(`{"title":`)},
			problem: "the payload cannot be read: unexpected end of JSON input",
		},
		{
			name:    "unknown kind",
			p:       wf.Proposal{Kind: "spell", Payload: json.RawMessage(`{}`)},
			problem: `unknown proposal kind "spell"`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := Proposal(&tc.p, tc.cur)
			if v.Summary != tc.summary || v.Target != tc.target || v.Gone != tc.gone || v.Problem != tc.problem {
				t.Errorf("summary %q target %q gone %v problem %q,\nwant %q %q %v %q", v.Summary, v.Target, v.Gone, v.Problem,
					tc.summary, tc.target, tc.gone, tc.problem)
			}
			if diff := cmp.Diff(tc.fields, fieldsOf(v.Fields), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
			body := ""
			if v.Body != nil {
				body = render(v.Body)
			}
			if body != tc.body {
				t.Errorf("body:\n%s\nwant:\n%s", body, tc.body)
			}
		})
	}
}

// TestLoreOps checks the per-operation entity diffs: each operation is
// compared with the entity as the stored lore and the proposal's earlier
// operations left it, with the schema's verdict on new entities.
func TestLoreOps(t *testing.T) {
	stored := []wf.LoreEntity{
		{Collection: "factions", ID: "wardens", Name: "Wardens", JSON: json.RawMessage(`{"id":"wardens","name":"Wardens","leader":"Ada"}`)},
		{Collection: "deities", ID: "sol", Name: "Sol", JSON: json.RawMessage(`{"id":"sol","name":"Sol"}`)},
	}
	ops := []wf.StoredLoreOp{
		{Op: "upsert", Collection: "factions", ID: "wardens", Name: "Wardens", Entity: json.RawMessage(`{"id":"wardens","name":"Wardens","leader":"Bo","kind":"guild"}`)},
		{Op: "add", Collection: "deities", ID: "sol", Name: "Sol", Entity: json.RawMessage(`{"id":"sol","name":"Sun"}`), PresetID: "classic-pantheon"},
		{Op: "add", Collection: "deities", ID: "luna", Name: "Luna", Entity: json.RawMessage(`{"id":"luna","name":"Luna"}`)},
		{Op: "remove", Collection: "deities", ID: "sol"},
		{Op: "remove", Collection: "deities", ID: "sol"},
		{Op: "upsert", Collection: "deities", ID: "bad", Name: "Bad", Entity: json.RawMessage(`{"id":"bad","name":"Bad","colour":"<script>alert(1)</script>"}`)},
		{Op: "upsert", Collection: "deities", ID: "luna", Name: "Luna", Entity: json.RawMessage(`{"id":"luna","name":"Luna"}`)},
		{Op: "upsert", Collection: "deities", ID: "other", Name: "X", Entity: json.RawMessage(`{"id":"x","name":"X"}`)},
		{Op: "rename", Collection: "deities", ID: "x"},
	}
	p := &wf.Proposal{Kind: wf.ProposalWorld, Payload: payload(t, wf.LorePayload{Operations: ops})}
	v := Proposal(p, State{Lore: stored})
	if v.Problem != "" {
		t.Fatal(v.Problem)
	}
	type row struct {
		Effect  string
		Valid   bool
		Verdict string
		Name    string
		Fields  []string
	}
	want := []row{
		{"replace", true, "valid", "Wardens", []string{"id: wardens → wardens (same)", "name: Wardens → Wardens (same)", "leader: Ada → Bo (changed)", "kind:  → guild (added)"}},
		{"keep existing", true, "valid", "Sol", []string{"id: sol → sol (same)", "name: Sol → Sol (same)"}},
		{"create", true, "valid", "Luna", []string{"id:  → luna (added)", "name:  → Luna (added)"}},
		{"delete", false, "", "Sol", []string{"id: sol →  (removed)", "name: Sol →  (removed)"}},
		{"nothing to remove", false, "", "", nil},
		{"create", false, `deities/bad: unknown field "colour" (allowed: id, name, summary, pantheonId, parentIds, domains, alignment, symbol, rank, tags, notes)`, "Bad",
			[]string{"id:  → bad (added)", "name:  → Bad (added)", "colour:  → <script>alert(1)</script> (added)"}},
		{"unchanged", true, "valid", "Luna", []string{"id: luna → luna (same)", "name: Luna → Luna (same)"}},
		{"create", false, `the entity's id "x" is not the operation's "other"`, "X", []string{"id:  → x (added)", "name:  → X (added)"}},
		{"unknown operation", false, `unknown operation "rename"`, "", nil},
	}
	var got []row
	for _, o := range v.Ops {
		got = append(got, row{o.Effect, o.Valid, o.Verdict, o.Name, fieldsOf(o.Fields)})
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}
	if want := "Lore: 9 operations (3 create, 1 replace, 1 delete, 1 unchanged, 1 keep existing, 1 nothing to remove, 1 unknown operation)"; v.Summary != want {
		t.Errorf("summary %q, want %q", v.Summary, want)
	}
	if v.Ops[1].PresetID != "classic-pantheon" || v.Ops[8].Index != 8 {
		t.Errorf("op fields: %+v", v.Ops[1])
	}
}

// TestMultilineField checks that a changed multi-line value (a lore
// entity's notes) carries a line diff.
func TestMultilineField(t *testing.T) {
	fs := objectFields(json.RawMessage(`{"notes":"a\nb\nc"}`), json.RawMessage(`{"notes":"a\nB\nc"}`))
	if len(fs) != 1 || fs[0].Lines == nil || !strings.Contains(render(fs[0].Lines), "-b\n+B\n") {
		t.Fatalf("fields %+v", fs)
	}
	if fs := objectFields(json.RawMessage(`{"notes":"a\nb"}`), json.RawMessage(`{"notes":"a\nb"}`)); fs[0].Lines != nil {
		t.Fatalf("an unchanged value has a line diff")
	}
}

// FuzzProposal checks that no payload, however malformed, makes a view
// panic, for every kind.
func FuzzProposal(f *testing.F) {
	f.Add(0, `{"name":"a","json":{"x":1}}`, `{"x":"a\nb"}`)
	f.Add(3, `{"title":"t","body":"a\nb"}`, "a\nc")
	f.Add(5, `{"operations":[{"op":"upsert","collection":"deities","id":"a","entity":{"id":"a","name":"A"}},{"op":"remove","collection":"deities","id":"a"}]}`, `{"id":"a","name":"B"}`)
	f.Add(5, `{"operations":[{"op":"add","collection":"nope","id":"a","entity":[1,{"x":null}]}]}`, `[`)
	kinds := []string{wf.ProposalQuest, wf.ProposalEncounter, wf.ProposalWikiPage, wf.ProposalWikiEdit, wf.ProposalAtlas, wf.ProposalWorld, "other"}
	f.Fuzz(func(t *testing.T, kind int, raw, cur string) {
		if kind < 0 {
			kind = -kind
		}
		p := &wf.Proposal{Kind: kinds[kind%len(kinds)], TargetID: "x", Payload: json.RawMessage(raw)}
		st := State{
			Doc:    &wf.Quest{Name: "q", JSON: json.RawMessage(cur)},
			Page:   &wf.WikiPage{Title: "t", Body: cur},
			Parent: &wf.AtlasNode{Name: "p", Level: 1},
			Lore:   []wf.LoreEntity{{Collection: "deities", ID: "a", JSON: json.RawMessage(cur)}},
		}
		v := Proposal(p, st)
		if v.Kind != p.Kind {
			t.Fatalf("kind %q", v.Kind)
		}
		Proposal(p, State{})
	})
}

func TestBrief(t *testing.T) {
	for _, tc := range []struct {
		p    wf.Proposal
		want string
	}{
		{wf.Proposal{Kind: wf.ProposalQuest, Payload: json.RawMessage(`{"name":"Hunt"}`)}, "New quest “Hunt”"},
		{wf.Proposal{Kind: wf.ProposalEncounter, TargetID: "enc_1", Payload: json.RawMessage(`{"name":"Ambush"}`)}, "Change of an encounter, named “Ambush”"},
		{wf.Proposal{Kind: wf.ProposalWikiPage, Payload: json.RawMessage(`{"title":"Docks"}`)}, "New wiki page “Docks”"},
		{wf.Proposal{Kind: wf.ProposalWikiEdit, TargetID: "wiki_1", Payload: json.RawMessage(`{"title":"A","body":"B"}`)}, "Edit of a wiki page: title, body"},
		{wf.Proposal{Kind: wf.ProposalAtlas, Payload: json.RawMessage(`{"name":"Quay"}`)}, "New atlas place “Quay”"},
		{wf.Proposal{Kind: wf.ProposalWorld, Payload: json.RawMessage(`{"operations":[{"op":"upsert"},{"op":"remove"},{"op":"upsert"}]}`)}, "Lore: 3 operations (2 upsert, 1 remove)"},
		{wf.Proposal{Kind: wf.ProposalWorld, Payload: json.RawMessage(`[`)}, "Unreadable payload"},
		{wf.Proposal{Kind: "spell"}, `Unknown kind "spell"`},
	} {
		if got := Brief(&tc.p); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.p.Kind, got, tc.want)
		}
	}
}
