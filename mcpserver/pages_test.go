package mcpserver_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// pagedTool is one paged list tool under test.
type pagedTool struct {
	tool string
	args map[string]any // its other arguments
	// parts are the answer's lists of rows ("campaigns", …; list_factions:
	// "pages" and "lore"), each walked to its end.
	parts []string
	// whole lists every part's ids in order, as the unpaged store methods
	// list them.
	whole func(t *testing.T) map[string][]string
	// insert adds rows to the list (before, among and after those listed).
	insert func(t *testing.T, n int)
}

// pageAnswer is a decoded answer: each part's ids, and next_cursor.
type pageAnswer struct {
	ids  map[string][]string
	next string
	hasN bool // the answer has the next_cursor key
}

func decodePageAnswer(t *testing.T, text string, parts []string) pageAnswer {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("decode %.300s: %v", text, err)
	}
	a := pageAnswer{ids: map[string][]string{}}
	for _, p := range parts {
		var rows []struct{ ID string }
		if err := json.Unmarshal(m[p], &rows); err != nil || rows == nil {
			t.Fatalf("part %s of %.300s: %v (null: %v)", p, text, err, rows == nil)
		}
		for _, r := range rows {
			a.ids[p] = append(a.ids[p], r.ID)
		}
	}
	if raw, ok := m["next_cursor"]; ok {
		a.hasN = true
		if err := json.Unmarshal(raw, &a.next); err != nil || a.next == "" {
			t.Fatalf("next_cursor %s: %v", raw, err)
		}
	}
	return a
}

// pagedServer is a test server with an in-process caller: the owner, with
// every scope.
type pagedServer struct {
	*testserver.Server
	actor *wf.Actor
}

func (s *pagedServer) call(t *testing.T, tool string, args map[string]any) (string, bool) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	text, isErr, ok := s.Tools.CallToolText(t.Context(), s.actor, tool, raw)
	if !ok {
		t.Fatalf("no tool %s", tool)
	}
	return text, isErr
}

// page calls one page and checks its audit row.
func (s *pagedServer) page(t *testing.T, pt pagedTool, limit int, cursor string) pageAnswer {
	t.Helper()
	args := maps.Clone(pt.args)
	if limit > 0 {
		args["limit"] = limit
	}
	if cursor != "" {
		args["cursor"] = cursor
	}
	before := s.AuditCount(t)
	text, isErr := s.call(t, pt.tool, args)
	if isErr {
		t.Fatalf("%s %v: %s", pt.tool, args, text)
	}
	if n := s.AuditCount(t) - before; n != 1 {
		t.Errorf("%s %v: %d audit rows, want 1", pt.tool, args, n)
	}
	a := decodePageAnswer(t, text, pt.parts)
	for _, p := range pt.parts {
		if lim := cmpOr(limit, wf.DefaultPageLimit); len(a.ids[p]) > lim {
			t.Fatalf("%s: %d %s in a page of %d", pt.tool, len(a.ids[p]), p, lim)
		}
	}
	return a
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// walk reads every page; between runs after each page but the last.
func (s *pagedServer) walk(t *testing.T, pt pagedTool, limit int, between func(n int)) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	cursor := ""
	for n := 1; ; n++ {
		a := s.page(t, pt, limit, cursor)
		for _, p := range pt.parts {
			out[p] = append(out[p], a.ids[p]...)
		}
		if !a.hasN {
			return out
		}
		if n > 1000 {
			t.Fatalf("%s: no end after %d pages", pt.tool, n)
		}
		cursor = a.next
		if between != nil {
			between(n)
		}
	}
}

func idsOf[T any](t *testing.T, list []T, err error, id func(*T) string) []string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for i := range list {
		out = append(out, id(&list[i]))
	}
	return out
}

func docSummaryID(d *wf.DocSummary) string       { return d.ID }
func wikiSummaryID(p *wf.WikiPageSummary) string { return p.ID }
func atlasNodeID(n *wf.AtlasNode) string         { return n.ID }
func loreEntityID(e *wf.LoreEntity) string       { return e.ID }

// pagedTools returns the six paged tools over s's seeded world and
// campaign, with their unpaged lists and inserters.
func pagedTools(s *pagedServer) []pagedTool {
	ctx := context.Background()
	db, owner, w, camp := s.DB, s.Owner.ID, s.World.ID, s.Campaign.ID
	must := func(t *testing.T, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	return []pagedTool{
		{tool: wf.ToolListCampaigns, args: map[string]any{}, parts: []string{"campaigns"},
			whole: func(t *testing.T) map[string][]string {
				l, err := dbtest.Campaigns(ctx, db, owner)
				return map[string][]string{"campaigns": idsOf(t, l, err, docSummaryID)}
			},
			insert: func(t *testing.T, n int) {
				for _, m := range []int{-100, 0, 100} {
					must(t, db.CreateCampaign(ctx, &wf.Campaign{OwnerID: owner, Name: fmt.Sprint("new ", n), UpdatedAt: tBase.Add(minutes(m))}))
				}
			}},
		{tool: wf.ToolListQuests, args: map[string]any{"campaign_id": camp}, parts: []string{"quests"},
			whole: func(t *testing.T) map[string][]string {
				l, err := dbtest.Quests(ctx, db, owner, camp)
				return map[string][]string{"quests": idsOf(t, l, err, docSummaryID)}
			},
			insert: func(t *testing.T, n int) {
				for _, m := range []int{-100, 0, 100} {
					must(t, db.CreateQuest(ctx, &wf.Quest{OwnerID: owner, CampaignID: camp, Name: fmt.Sprint("new ", n), UpdatedAt: tBase.Add(minutes(m))}))
				}
			}},
		{tool: wf.ToolListEncounters, args: map[string]any{}, parts: []string{"encounters"},
			whole: func(t *testing.T) map[string][]string {
				l, err := dbtest.Encounters(ctx, db, owner, "")
				return map[string][]string{"encounters": idsOf(t, l, err, docSummaryID)}
			},
			insert: func(t *testing.T, n int) {
				for _, m := range []int{-100, 0, 100} {
					must(t, db.CreateEncounter(ctx, &wf.Encounter{OwnerID: owner, Name: fmt.Sprint("new ", n), UpdatedAt: tBase.Add(minutes(m))}))
				}
			}},
		{tool: wf.ToolListWikiPages, args: map[string]any{"world_id": w}, parts: []string{"pages"},
			whole: func(t *testing.T) map[string][]string {
				l, err := dbtest.WikiPages(ctx, db, w, "")
				return map[string][]string{"pages": idsOf(t, l, err, wikiSummaryID)}
			},
			insert: func(t *testing.T, n int) {
				for _, title := range []string{"A", "Page 3", "Zz"} {
					must(t, db.CreateWikiPage(ctx, &wf.WikiPage{WorldID: w, Title: title, Kind: wf.WikiKindLore, Audience: wf.AudienceGM}, owner))
				}
			}},
		{tool: wf.ToolListAtlasPlaces, args: map[string]any{"world_id": w}, parts: []string{"places"},
			whole: func(t *testing.T) map[string][]string {
				l, err := dbtest.AtlasNodes(ctx, db, w, 0)
				return map[string][]string{"places": idsOf(t, l, err, atlasNodeID)}
			},
			insert: func(t *testing.T, n int) {
				for _, lv := range []int{1, 2, 3} {
					must(t, db.CreateAtlasNode(ctx, &wf.AtlasNode{WorldID: w, Name: "Place 2", Level: lv}))
				}
			}},
		{tool: wf.ToolListFactions, args: map[string]any{"world_id": w}, parts: []string{"pages", "lore"},
			whole: func(t *testing.T) map[string][]string {
				p, err := dbtest.WikiPages(ctx, db, w, wf.WikiKindFaction)
				l, err2 := dbtest.Lore(ctx, db, w, "factions")
				return map[string][]string{"pages": idsOf(t, p, err, wikiSummaryID), "lore": idsOf(t, l, err2, loreEntityID)}
			},
			insert: func(t *testing.T, n int) {
				for _, title := range []string{"A", "Page 3", "Zz"} {
					must(t, db.CreateWikiPage(ctx, &wf.WikiPage{WorldID: w, Title: title, Kind: wf.WikiKindFaction, Audience: wf.AudienceGM}, owner))
					must(t, db.UpsertLore(ctx, &wf.LoreEntity{WorldID: w, Collection: "factions", ID: fmt.Sprintf("new%d%s", n, title[:1]), Name: title}))
				}
			}},
	}
}

var tBase = time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)

func minutes(n int) time.Duration { return time.Duration(n) * time.Minute }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// addPagedRows adds n rows to every paged list of s, with ties in every
// sort key but the id, and rows of other lists mixed in.
func addPagedRows(t *testing.T, s *pagedServer, n int) {
	t.Helper()
	ctx := t.Context()
	db := s.DB
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		at := tBase.Add(minutes(i / 3))
		must(db.CreateCampaign(ctx, &wf.Campaign{OwnerID: s.Owner.ID, Name: fmt.Sprint("c", i), UpdatedAt: at}))
		must(db.CreateQuest(ctx, &wf.Quest{OwnerID: s.Owner.ID, CampaignID: s.Campaign.ID, Name: fmt.Sprint("q", i), UpdatedAt: at}))
		must(db.CreateQuest(ctx, &wf.Quest{OwnerID: s.Owner.ID, Name: fmt.Sprint("other q", i), UpdatedAt: at}))
		must(db.CreateEncounter(ctx, &wf.Encounter{OwnerID: s.Owner.ID, Name: fmt.Sprint("e", i), UpdatedAt: at}))
		must(db.CreateCampaign(ctx, &wf.Campaign{OwnerID: s.Stranger.ID, Name: fmt.Sprint("s", i), UpdatedAt: at}))
		kind := wf.WikiKindLore
		if i%2 == 0 {
			kind = wf.WikiKindFaction
		}
		must(db.CreateWikiPage(ctx, &wf.WikiPage{WorldID: s.World.ID, Title: fmt.Sprint("Page ", i%4), Kind: kind, Audience: wf.AudienceGM}, s.Owner.ID))
		must(db.CreateAtlasNode(ctx, &wf.AtlasNode{WorldID: s.World.ID, Name: fmt.Sprint("Place ", i%3), Level: 1 + i%2, JSON: json.RawMessage(`{"i":1}`)}))
		id := fmt.Sprintf("f%03d", (i*7)%n)
		must(db.UpsertLore(ctx, &wf.LoreEntity{WorldID: s.World.ID, Collection: "factions", ID: id, Name: fmt.Sprint("Faction ", i%5),
			JSON: json.RawMessage(fmt.Sprintf(`{"id":%q,"name":"Faction %d"}`, id, i%5))}))
	}
}

func startPaged(t *testing.T, db *sqlstore.DB) *pagedServer {
	s := testserver.Start(t, db)
	return &pagedServer{Server: s, actor: &wf.Actor{UserID: s.Owner.ID, KeyID: "key_pages", Kind: wf.CredentialAPIKey, Scopes: []string{wf.ScopeAll}}}
}

// TestPagedToolsSmallAnswersUnchanged: on the seeded world every list fits
// one page, and each tool answers exactly what it answered before paging
// (the old result types, rendered from the unpaged store lists).
func TestPagedToolsSmallAnswersUnchanged(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := startPaged(t, db)
		ctx := t.Context()
		w := s.World.ID
		render := func(v any) string {
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
		campaigns, err := dbtest.Campaigns(ctx, db, s.Owner.ID)
		must(t, err)
		quests, err := dbtest.Quests(ctx, db, s.Owner.ID, s.Campaign.ID)
		must(t, err)
		encounters, err := dbtest.Encounters(ctx, db, s.Owner.ID, "")
		must(t, err)
		pages, err := dbtest.WikiPages(ctx, db, w, "")
		must(t, err)
		factionPages, err := dbtest.WikiPages(ctx, db, w, wf.WikiKindFaction)
		must(t, err)
		lore, err := dbtest.Lore(ctx, db, w, "factions")
		must(t, err)
		places, err := dbtest.AtlasNodes(ctx, db, w, 1)
		must(t, err)
		var loreRaw []json.RawMessage
		for _, e := range lore {
			loreRaw = append(loreRaw, e.JSON)
		}
		for _, c := range []struct {
			tool string
			args map[string]any
			want any
		}{
			{wf.ToolListCampaigns, map[string]any{}, struct {
				Campaigns []wf.DocSummary `json:"campaigns"`
			}{campaigns}},
			{wf.ToolListQuests, map[string]any{"campaign_id": s.Campaign.ID}, struct {
				Quests []wf.DocSummary `json:"quests"`
			}{quests}},
			{wf.ToolListEncounters, map[string]any{}, struct {
				Encounters []wf.DocSummary `json:"encounters"`
			}{encounters}},
			{wf.ToolListWikiPages, map[string]any{"world_id": w}, struct {
				Pages []wf.WikiPageSummary `json:"pages"`
			}{pages}},
			{wf.ToolListFactions, map[string]any{"world_id": w}, struct {
				WorldID string               `json:"worldId"`
				Pages   []wf.WikiPageSummary `json:"pages"`
				Lore    []json.RawMessage    `json:"lore"`
			}{w, factionPages, loreRaw}},
			{wf.ToolListAtlasPlaces, map[string]any{"world_id": w, "level": 1}, struct {
				Places []wf.AtlasNode `json:"places"`
			}{places}},
		} {
			text, isErr := s.call(t, c.tool, c.args)
			if want := render(c.want); isErr || text != want {
				t.Errorf("%s: %v\n got %s\nwant %s", c.tool, isErr, text, want)
			}
		}
	})
}

// TestPagedToolsWalk walks each paged tool with several limits: every
// walk lists exactly the unpaged list in its order, one audit row a page;
// then walks again while rows are inserted between pages: nothing twice,
// nothing present from the start missed.
func TestPagedToolsWalk(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := startPaged(t, db)
		addPagedRows(t, s, 31)
		for _, pt := range pagedTools(s) {
			want := pt.whole(t)
			for _, limit := range []int{1, 4, 13, 0, wf.MaxPageLimit} {
				got := s.walk(t, pt, limit, nil)
				for _, p := range pt.parts {
					if !slices.Equal(got[p], want[p]) {
						t.Errorf("%s limit %d, %s:\n got %v\nwant %v", pt.tool, limit, p, got[p], want[p])
					}
				}
			}

			n := 0
			got := s.walk(t, pt, 5, func(int) { n++; pt.insert(t, n) })
			after := pt.whole(t)
			for _, p := range pt.parts {
				seen := map[string]bool{}
				for _, id := range got[p] {
					if seen[id] {
						t.Errorf("%s with inserts, %s: %s listed twice", pt.tool, p, id)
					}
					seen[id] = true
				}
				for _, id := range want[p] {
					if !seen[id] {
						t.Errorf("%s with inserts, %s: %s missed", pt.tool, p, id)
					}
				}
				if !slices.Equal(got[p], slices.DeleteFunc(slices.Clone(after[p]), func(id string) bool { return !seen[id] })) {
					t.Errorf("%s with inserts, %s: out of order", pt.tool, p)
				}
			}
			if n == 0 {
				t.Errorf("%s: the walk with inserts had one page", pt.tool)
			}
		}
	})
}

// TestPagedToolsRefusals: limits out of range and anything that is not a
// cursor of the same tool with the same other arguments are bad_request,
// with no audit row and nothing written; a good cursor does not open a
// world to a stranger.
func TestPagedToolsRefusals(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := startPaged(t, db)
		addPagedRows(t, s, 9)
		w := s.World.ID
		world2 := &wf.World{OwnerID: s.Owner.ID, Name: "Second"}
		must(t, db.CreateWorld(t.Context(), world2))

		// A valid cursor of each tool (limit 2), to forge others from.
		cursors := map[string]string{}
		for _, pt := range pagedTools(s) {
			a := s.page(t, pt, 2, "")
			if !a.hasN {
				t.Fatalf("%s: one page of 2 holds everything", pt.tool)
			}
			cursors[pt.tool] = a.next
		}
		b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
		// The decoded wiki cursor, to tamper with.
		var wikiCursor map[string]any
		raw, err := base64.RawURLEncoding.DecodeString(cursors[wf.ToolListWikiPages])
		must(t, err)
		must(t, json.Unmarshal(raw, &wikiCursor))
		tamper := func(edit func(m map[string]any)) string {
			m := map[string]any{}
			b, _ := json.Marshal(wikiCursor)
			json.Unmarshal(b, &m)
			edit(m)
			b, _ = json.Marshal(m)
			return b64(string(b))
		}
		key := func(m map[string]any) map[string]any { return m["k"].([]any)[0].(map[string]any) }

		cases := []struct {
			name string
			tool string
			args map[string]any
			want string // the error text's prefix
		}{
			{"limit 0", wf.ToolListCampaigns, map[string]any{"limit": 0}, "bad_request: invalid arguments"},
			{"limit over the maximum", wf.ToolListWikiPages, map[string]any{"world_id": w, "limit": wf.MaxPageLimit + 1}, "bad_request: invalid arguments"},
			{"negative limit", wf.ToolListAtlasPlaces, map[string]any{"world_id": w, "limit": -5}, "bad_request: invalid arguments"},
			{"fractional limit", wf.ToolListFactions, map[string]any{"world_id": w, "limit": 2.5}, "bad_request: invalid arguments"},
			{"limit as text", wf.ToolListQuests, map[string]any{"limit": "10"}, "bad_request: invalid arguments"},
			{"cursor as a number", wf.ToolListEncounters, map[string]any{"cursor": 5}, "bad_request: invalid arguments"},
			{"cursor too long", wf.ToolListWikiPages, map[string]any{"world_id": w, "cursor": strings.Repeat("A", wf.MaxPageCursorLength+1)}, "bad_request: invalid arguments"},
			{"not base64", wf.ToolListCampaigns, map[string]any{"cursor": "not a cursor!"}, "bad_request: cursor"},
			{"base64 of nothing JSON", wf.ToolListCampaigns, map[string]any{"cursor": b64("hello")}, "bad_request: cursor"},
			{"a list_lore cursor", wf.ToolListFactions, map[string]any{"world_id": w, "cursor": b64("lore1:factions:x")}, "bad_request: cursor"},
			{"another tool's cursor", wf.ToolListCampaigns, map[string]any{"cursor": cursors[wf.ToolListQuests]}, "bad_request: cursor"},
			{"wiki cursor to factions", wf.ToolListFactions, map[string]any{"world_id": w, "cursor": cursors[wf.ToolListWikiPages]}, "bad_request: cursor"},
			{"encounters cursor to quests", wf.ToolListQuests, map[string]any{"cursor": cursors[wf.ToolListEncounters]}, "bad_request: cursor"},
			{"another world", wf.ToolListWikiPages, map[string]any{"world_id": world2.ID, "cursor": cursors[wf.ToolListWikiPages]}, "bad_request: cursor"},
			{"another kind", wf.ToolListWikiPages, map[string]any{"world_id": w, "kind": wf.WikiKindPlace, "cursor": cursors[wf.ToolListWikiPages]}, "bad_request: cursor"},
			{"another level", wf.ToolListAtlasPlaces, map[string]any{"world_id": w, "level": 2, "cursor": cursors[wf.ToolListAtlasPlaces]}, "bad_request: cursor"},
			{"another campaign", wf.ToolListQuests, map[string]any{"campaign_id": "campaign_other", "cursor": cursors[wf.ToolListQuests]}, "bad_request: cursor"},
			{"version 2", wf.ToolListWikiPages, map[string]any{"world_id": w, "cursor": tamper(func(m map[string]any) { m["v"] = 2 })}, "bad_request: cursor"},
			{"unknown field", wf.ToolListWikiPages, map[string]any{"world_id": w, "cursor": tamper(func(m map[string]any) { m["x"] = 1 })}, "bad_request: cursor"},
			{"unknown key field", wf.ToolListWikiPages, map[string]any{"world_id": w, "cursor": tamper(func(m map[string]any) { key(m)["zz"] = 1 })}, "bad_request: cursor"},
			{"no id", wf.ToolListWikiPages, map[string]any{"world_id": w, "cursor": tamper(func(m map[string]any) { delete(key(m), "i") })}, "bad_request: cursor"},
			{"NUL in the id", wf.ToolListWikiPages, map[string]any{"world_id": w, "cursor": tamper(func(m map[string]any) { key(m)["i"] = "a\x00b" })}, "bad_request: cursor"},
			{"NUL in the name", wf.ToolListWikiPages, map[string]any{"world_id": w, "cursor": tamper(func(m map[string]any) { key(m)["n"] = "a\x00b" })}, "bad_request: cursor"},
			{"no name", wf.ToolListWikiPages, map[string]any{"world_id": w, "cursor": tamper(func(m map[string]any) { delete(key(m), "n") })}, "bad_request: cursor"},
			{"a time in a name key", wf.ToolListWikiPages, map[string]any{"world_id": w, "cursor": tamper(func(m map[string]any) { key(m)["u"] = 5 })}, "bad_request: cursor"},
			{"a level in a name key", wf.ToolListWikiPages, map[string]any{"world_id": w, "cursor": tamper(func(m map[string]any) { key(m)["lv"] = 1 })}, "bad_request: cursor"},
			{"name and from-row", wf.ToolListWikiPages, map[string]any{"world_id": w, "cursor": tamper(func(m map[string]any) { key(m)["r"] = true })}, "bad_request: cursor"},
			{"a finished single part", wf.ToolListWikiPages, map[string]any{"world_id": w, "cursor": tamper(func(m map[string]any) { m["k"] = []any{map[string]any{"e": true}} })}, "bad_request: cursor"},
			{"two keys", wf.ToolListWikiPages, map[string]any{"world_id": w, "cursor": tamper(func(m map[string]any) { m["k"] = append(m["k"].([]any), key(m)) })}, "bad_request: cursor"},
			{"no keys", wf.ToolListWikiPages, map[string]any{"world_id": w, "cursor": tamper(func(m map[string]any) { m["k"] = []any{} })}, "bad_request: cursor"},
			{"keys null", wf.ToolListWikiPages, map[string]any{"world_id": w, "cursor": tamper(func(m map[string]any) { m["k"] = nil })}, "bad_request: cursor"},
			{"trailing data", wf.ToolListWikiPages, map[string]any{"world_id": w, "cursor": b64(string(raw) + "{}")}, "bad_request: cursor"},
			{"a row that left the list", wf.ToolListWikiPages, map[string]any{"world_id": w, "cursor": tamper(func(m map[string]any) {
				delete(key(m), "n")
				key(m)["r"], key(m)["i"] = true, "wiki_gone"
			})}, "bad_request: cursor: the row it continues from has left the list"},
			{"factions, both parts finished", wf.ToolListFactions, map[string]any{"world_id": w, "cursor": tamper(func(m map[string]any) {
				m["l"] = factionsDigest(t, cursors[wf.ToolListFactions])
				m["k"] = []any{map[string]any{"e": true}, map[string]any{"e": true}}
			})}, "bad_request: cursor"},
			{"factions, one part", wf.ToolListFactions, map[string]any{"world_id": w, "cursor": tamper(func(m map[string]any) {
				m["l"] = factionsDigest(t, cursors[wf.ToolListFactions])
			})}, "bad_request: cursor"},
			{"factions, a finished part with a key", wf.ToolListFactions, map[string]any{"world_id": w, "cursor": tamper(func(m map[string]any) {
				m["l"] = factionsDigest(t, cursors[wf.ToolListFactions])
				k := key(m)
				k["e"] = true
				m["k"] = []any{k, key(m)}
			})}, "bad_request: cursor"},
			{"atlas level out of range", wf.ToolListAtlasPlaces, map[string]any{"world_id": w, "cursor": retarget(t, cursors[wf.ToolListAtlasPlaces], func(k map[string]any) { k["lv"] = 9 })}, "bad_request: cursor"},
			{"atlas without a level", wf.ToolListAtlasPlaces, map[string]any{"world_id": w, "cursor": retarget(t, cursors[wf.ToolListAtlasPlaces], func(k map[string]any) { delete(k, "lv") })}, "bad_request: cursor"},
			{"campaigns without a time", wf.ToolListCampaigns, map[string]any{"cursor": retarget(t, cursors[wf.ToolListCampaigns], func(k map[string]any) { delete(k, "u") })}, "bad_request: cursor"},
			{"campaigns with a name", wf.ToolListCampaigns, map[string]any{"cursor": retarget(t, cursors[wf.ToolListCampaigns], func(k map[string]any) { k["n"] = "x" })}, "bad_request: cursor"},
			{"campaigns, a fractional time", wf.ToolListCampaigns, map[string]any{"cursor": retarget(t, cursors[wf.ToolListCampaigns], func(k map[string]any) { k["u"] = 1.5 })}, "bad_request: cursor"},
		}
		for _, c := range cases {
			before, fp := s.AuditCount(t), s.Fingerprint(t)
			text, isErr := s.call(t, c.tool, c.args)
			if !isErr || !strings.HasPrefix(text, c.want) {
				t.Errorf("%s: %s %v: %v %q, want %q…", c.name, c.tool, c.args, isErr, text, c.want)
			}
			if n := s.AuditCount(t) - before; n != 0 {
				t.Errorf("%s: %d audit rows", c.name, n)
			}
			if changed := testserver.Changed(fp, s.Fingerprint(t)); len(changed) > 0 {
				t.Errorf("%s: changed %v", c.name, changed)
			}
		}
		// The cursor refusal names the tool.
		if text, _ := s.call(t, wf.ToolListCampaigns, map[string]any{"cursor": "x"}); text != "bad_request: cursor: not a next_cursor of list_campaigns with these arguments" {
			t.Errorf("cursor refusal: %q", text)
		}
		// A valid cursor does not open someone else's world.
		stranger := &wf.Actor{UserID: s.Stranger.ID, KeyID: "key_stranger", Kind: wf.CredentialAPIKey, Scopes: []string{wf.ScopeAll}}
		for _, tool := range []string{wf.ToolListWikiPages, wf.ToolListFactions, wf.ToolListAtlasPlaces} {
			raw, _ := json.Marshal(map[string]any{"world_id": w, "cursor": cursors[tool]})
			before := s.AuditCount(t)
			if text, isErr, _ := s.Tools.CallToolText(t.Context(), stranger, tool, raw); !isErr || text != "not_found" {
				t.Errorf("stranger, %s: %v %q", tool, isErr, text)
			}
			if n := s.AuditCount(t) - before; n != 0 {
				t.Errorf("stranger, %s: %d audit rows", tool, n)
			}
		}
		// Someone else's campaign cursor lists the caller's own rows only.
		raw, _ = json.Marshal(map[string]any{"cursor": cursors[wf.ToolListCampaigns]})
		if text, isErr, _ := s.Tools.CallToolText(t.Context(), stranger, wf.ToolListCampaigns, raw); isErr || strings.Contains(text, s.Campaign.ID) {
			t.Errorf("stranger's campaigns: %v %.200s", isErr, text)
		}
	})
}

// factionsDigest is the list digest of a list_factions cursor.
func factionsDigest(t *testing.T, cursor string) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	must(t, err)
	var m map[string]any
	must(t, json.Unmarshal(raw, &m))
	return m["l"].(string)
}

// retarget returns cursor with its first key edited.
func retarget(t *testing.T, cursor string, edit func(k map[string]any)) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	must(t, err)
	var m map[string]any
	must(t, json.Unmarshal(raw, &m))
	edit(m["k"].([]any)[0].(map[string]any))
	b, err := json.Marshal(m)
	must(t, err)
	return base64.RawURLEncoding.EncodeToString(b)
}

// TestPagedToolsOverHTTP walks list_wiki_pages and list_factions through
// the real HTTP server and the go-sdk client, and checks that tools/list
// shows the paging arguments.
func TestPagedToolsOverHTTP(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := startPaged(t, db)
		addPagedRows(t, s, 12)
		cs := testserver.Connect(t, s.MCPURL(), s.Token(t, s.Owner), "")
		for _, pt := range pagedTools(s) {
			if pt.tool != wf.ToolListWikiPages && pt.tool != wf.ToolListFactions {
				continue
			}
			want := pt.whole(t)
			got := map[string][]string{}
			cursor, pages := "", 0
			for {
				args := maps.Clone(pt.args)
				args["limit"] = 5
				if cursor != "" {
					args["cursor"] = cursor
				}
				text, isErr := testserver.CallText(t, cs, pt.tool, args)
				if isErr {
					t.Fatalf("%s: %s", pt.tool, text)
				}
				a := decodePageAnswer(t, text, pt.parts)
				for _, p := range pt.parts {
					got[p] = append(got[p], a.ids[p]...)
				}
				pages++
				if cursor = a.next; cursor == "" {
					break
				}
			}
			for _, p := range pt.parts {
				if !slices.Equal(got[p], want[p]) {
					t.Errorf("%s over HTTP, %s: %v, want %v", pt.tool, p, got[p], want[p])
				}
			}
			if pages < 2 {
				t.Errorf("%s: %d pages", pt.tool, pages)
			}
		}
		tools, err := cs.ListTools(t.Context(), nil)
		must(t, err)
		paged := []string{wf.ToolListCampaigns, wf.ToolListQuests, wf.ToolListEncounters, wf.ToolListWikiPages, wf.ToolListFactions, wf.ToolListAtlasPlaces}
		for _, tool := range tools.Tools {
			if !slices.Contains(paged, tool.Name) {
				continue
			}
			schema, _ := json.Marshal(tool.InputSchema)
			if !strings.Contains(string(schema), `"limit"`) || !strings.Contains(string(schema), `"cursor"`) ||
				!strings.Contains(string(schema), `"maximum":1000`) || !strings.Contains(tool.Description, "next_cursor") {
				t.Errorf("%s: schema %s, description %q", tool.Name, schema, tool.Description)
			}
		}
	})
}

// TestPagedToolsLongNames walks lists whose sort keys are too long for a
// cursor (titles and names of thousands of bytes, written straight to the
// store): the cursors stay under wf.MaxPageCursorLength by naming their
// rows, and the walk is whole.
func TestPagedToolsLongNames(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := startPaged(t, db)
		ctx := t.Context()
		w := s.World.ID
		for i := range 5 {
			long := strings.Repeat(fmt.Sprint("ü", i%2), 1000) // 3,000 bytes
			must(t, db.CreateWikiPage(ctx, &wf.WikiPage{WorldID: w, Title: long, Kind: wf.WikiKindFaction, Audience: wf.AudienceGM}, s.Owner.ID))
			must(t, db.CreateAtlasNode(ctx, &wf.AtlasNode{WorldID: w, Name: long, Level: 2}))
			must(t, db.UpsertLore(ctx, &wf.LoreEntity{WorldID: w, Collection: "factions", ID: fmt.Sprint("long", i), Name: long}))
		}
		for _, pt := range pagedTools(s) {
			if pt.tool != wf.ToolListWikiPages && pt.tool != wf.ToolListFactions && pt.tool != wf.ToolListAtlasPlaces {
				continue
			}
			want := pt.whole(t)
			got := map[string][]string{}
			cursor, byRow := "", 0
			for {
				a := s.page(t, pt, 1, cursor)
				for _, p := range pt.parts {
					got[p] = append(got[p], a.ids[p]...)
				}
				if cursor = a.next; cursor == "" {
					break
				}
				if len(cursor) > wf.MaxPageCursorLength {
					t.Fatalf("%s: a cursor of %d bytes", pt.tool, len(cursor))
				}
				if raw, _ := base64.RawURLEncoding.DecodeString(cursor); strings.Contains(string(raw), `"r":true`) {
					byRow++
				}
			}
			for _, p := range pt.parts {
				if !slices.Equal(got[p], want[p]) {
					t.Errorf("%s, %s: %v, want %v", pt.tool, p, got[p], want[p])
				}
			}
			if byRow == 0 {
				t.Errorf("%s: no cursor named its row", pt.tool)
			}
		}
	})
}
