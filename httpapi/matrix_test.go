package httpapi_test

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/mcpserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// matrixFixture is what the access matrix calls the tools on: the test
// server's cast and rows, plus a generated world (for resize) and an
// owner session for filing proposals to commit.
type matrixFixture struct {
	*testserver.Server
	t        *testing.T
	resize   string // a generated world of the owner's, GM and player members
	ownerJWT *mcp.ClientSession
	n        atomic.Int64
}

// matrixArgs builds one tool's arguments for a call by the given user.
// Builders may prepare state first (a fresh POI and the caller's
// presence, a pending proposal); the matrix counts audit rows only after.
type matrixArgs struct {
	// access names a row of someone else's (the owner's world or rows).
	access func(f *matrixFixture, caller *wf.User) map[string]any
	// own, for tools any caller may use, names nothing of anyone else's:
	// every caller succeeds and sees only their own rows.
	own func(f *matrixFixture) map[string]any
	// refused is the answer to a caller the row's rule refuses: the
	// answer for a missing id, not_found unless given.
	refused string
}

func idArg(id func(f *matrixFixture) string) func(*matrixFixture, *wf.User) map[string]any {
	return func(f *matrixFixture, _ *wf.User) map[string]any { return map[string]any{"id": id(f)} }
}

func worldArg(f *matrixFixture, _ *wf.User) map[string]any {
	return map[string]any{"world_id": f.World.ID}
}

func noArgs(*matrixFixture) map[string]any { return map[string]any{} }

// matrixCases has one entry per tool; TestAccessMatrix fails when a tool
// of the access table has none (or this has one too many).
var matrixCases = map[string]matrixArgs{
	wf.ToolReadWorld:     {access: idArg(func(f *matrixFixture) string { return f.World.ID })},
	wf.ToolReadCampaign:  {access: idArg(func(f *matrixFixture) string { return f.Campaign.ID })},
	wf.ToolListCampaigns: {own: noArgs},
	wf.ToolReadQuest:     {access: idArg(func(f *matrixFixture) string { return f.Quest.ID })},
	wf.ToolListQuests: {own: func(f *matrixFixture) map[string]any {
		return map[string]any{"campaign_id": f.Campaign.ID}
	}},
	wf.ToolReadEncounter:   {access: idArg(func(f *matrixFixture) string { return f.Encounter.ID })},
	wf.ToolListEncounters:  {own: noArgs},
	wf.ToolListWikiPages:   {access: worldArg},
	wf.ToolReadWikiPage:    {access: idArg(func(f *matrixFixture) string { return f.Page.ID })},
	wf.ToolWikiPageHistory: {access: idArg(func(f *matrixFixture) string { return f.Page.ID })},
	wf.ToolSearchWikiPages: {
		access: func(f *matrixFixture, _ *wf.User) map[string]any {
			return map[string]any{"world_id": f.World.ID, "q": "warden"}
		},
		own: func(*matrixFixture) map[string]any { return map[string]any{"q": "warden"} },
	},
	wf.ToolListFactions:    {access: worldArg},
	wf.ToolGetWorldSummary: {access: worldArg},
	wf.ToolListAtlasPlaces: {access: worldArg},
	wf.ToolReadAtlasNode:   {access: idArg(func(f *matrixFixture) string { return f.Node.ID })},
	wf.ToolSearchAtlasNodes: {
		access: func(f *matrixFixture, _ *wf.User) map[string]any {
			return map[string]any{"world_id": f.World.ID, "q": "ald"}
		},
		own: func(*matrixFixture) map[string]any { return map[string]any{"q": "ald"} },
	},
	wf.ToolSearchPOIs: {access: worldArg},
	wf.ToolListLore:   {access: worldArg},

	wf.ToolCreateWorld: {own: func(f *matrixFixture) map[string]any {
		return map[string]any{"name": "Made in the matrix", "template": "starter-city", "size": "small", "seed": 5}
	}},
	wf.ToolResizeWorld: {access: func(f *matrixFixture, _ *wf.User) map[string]any {
		return map[string]any{"world_id": f.resize, "cols": 32, "rows": 24}
	}},
	wf.ToolPlayerPickup: {access: func(f *matrixFixture, caller *wf.User) map[string]any {
		item := fmt.Sprintf("item-%d", f.n.Add(1))
		poi := f.poiNextTo(caller, &wf.POI{Name: "Crate", Pickable: true, Items: []wf.POIItem{{ID: item, Name: "Coin"}}})
		return map[string]any{"world_id": f.World.ID, "poi_id": poi.ID, "item_id": item, "cell": map[string]any{"x": poi.X, "y": poi.Y}}
	}},
	wf.ToolPlayerOpen: {access: func(f *matrixFixture, caller *wf.User) map[string]any {
		poi := f.poiNextTo(caller, &wf.POI{Name: "Door", Openable: true})
		return map[string]any{"world_id": f.World.ID, "poi_id": poi.ID, "cell": map[string]any{"x": poi.X, "y": poi.Y}}
	}},
	wf.ToolProposeQuest: {
		access: func(f *matrixFixture, _ *wf.User) map[string]any {
			return map[string]any{"id": f.Quest.ID, "payload": map[string]any{"name": "Renamed"}, "diff_summary": "rename"}
		},
		own: func(*matrixFixture) map[string]any {
			return map[string]any{"payload": map[string]any{"name": "New quest"}, "diff_summary": "new"}
		},
	},
	wf.ToolProposeEncounter: {
		access: func(f *matrixFixture, _ *wf.User) map[string]any {
			return map[string]any{"id": f.Encounter.ID, "payload": map[string]any{"name": "Renamed"}, "diff_summary": "rename"}
		},
		own: func(*matrixFixture) map[string]any {
			return map[string]any{"payload": map[string]any{"name": "New encounter"}, "diff_summary": "new"}
		},
	},
	wf.ToolProposeWikiPage: {access: func(f *matrixFixture, _ *wf.User) map[string]any {
		return map[string]any{"world_id": f.World.ID, "payload": map[string]any{"title": "Rumours"}, "diff_summary": "new page"}
	}},
	wf.ToolProposeWikiEdit: {access: func(f *matrixFixture, _ *wf.User) map[string]any {
		return map[string]any{"page_id": f.Page.ID, "payload": map[string]any{"body": "Keepers of the gate."}, "diff_summary": "body"}
	}},
	wf.ToolProposeAtlasPlace: {access: func(f *matrixFixture, _ *wf.User) map[string]any {
		return map[string]any{"world_id": f.World.ID, "payload": map[string]any{"name": "Fenwick"}, "diff_summary": "new place"}
	}},
	wf.ToolProposeLore: {access: func(f *matrixFixture, _ *wf.User) map[string]any {
		return map[string]any{"world_id": f.World.ID, "diff_summary": "lore",
			"operations": []any{map[string]any{"op": "upsert", "collection": "factions", "entity": map[string]any{"id": "wardens", "name": "The Wardens"}}}}
	}},
	wf.ToolCommitQuest: {access: func(f *matrixFixture, _ *wf.User) map[string]any {
		return map[string]any{"proposal_id": f.pending(wf.ToolProposeQuest, f.Quest.ID), "confirm": true}
	}, refused: "proposal_not_found"},
	wf.ToolCommitEncounter: {access: func(f *matrixFixture, _ *wf.User) map[string]any {
		return map[string]any{"proposal_id": f.pending(wf.ToolProposeEncounter, f.Encounter.ID), "confirm": true}
	}, refused: "proposal_not_found"},
	wf.ToolCreateCampaign: {
		access: func(f *matrixFixture, _ *wf.User) map[string]any {
			return map[string]any{"name": "Side campaign", "world_id": f.World.ID}
		},
		own: func(*matrixFixture) map[string]any { return map[string]any{"name": "My campaign"} },
	},
}

// poiNextTo places a new POI of the shared world, visible to the party,
// on a free cell and stands the caller next to it.
func (f *matrixFixture) poiNextTo(caller *wf.User, poi *wf.POI) *wf.POI {
	f.t.Helper()
	i := int(f.n.Add(1))
	poi.WorldID, poi.X, poi.Y, poi.Visibility = f.World.ID, 1+i%14, 1+(i/14)%10, wf.AudienceParty
	if err := f.DB.CreatePOI(f.t.Context(), poi); err != nil {
		f.t.Fatal(err)
	}
	// A stranger's presence is refused or ignored by the tool either way.
	_ = f.DB.SetPresence(f.t.Context(), &wf.Presence{WorldID: f.World.ID, UserID: caller.ID, X: poi.X, Y: poi.Y})
	return poi
}

// pending files a change to the owner's quest or encounter and returns
// the pending proposal's id.
func (f *matrixFixture) pending(tool, id string) string {
	f.t.Helper()
	return propose(f.t, f.ownerJWT, tool, map[string]any{"id": id, "payload": map[string]any{"name": fmt.Sprintf("Take %d", f.n.Add(1))}, "diff_summary": "to commit"}).ProposalID
}

// TestAccessMatrix checks every tool against its row of the access table
// (mcpserver.AccessTable, which also writes the tools' descriptions): a
// key without the tool's scopes gets missing_scopes with exactly the
// scopes missing; a stranger holding every scope gets not_found for
// anything of someone else's (proposal_not_found from the commit tools:
// the answer for a missing proposal); the player, the GM and the owner, each
// holding exactly the tool's scopes, get what the row's Who allows; and
// the audit log gains one row per success and none per failure.
func TestAccessMatrix(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := testserver.Start(t, db)
		f := &matrixFixture{Server: s, t: t, ownerJWT: connect(t, s, s.Token(t, s.Owner), "")}
		text, isErr := callTool(t, f.ownerJWT, wf.ToolCreateWorld, map[string]any{"name": "Resizable", "template": "starter-jungle", "seed": 3, "size": "small"})
		if isErr {
			t.Fatal(text)
		}
		var created wf.CreateWorldResult
		mustDecode(t, text, &created)
		f.resize = created.ID
		for _, m := range []struct {
			u    *wf.User
			role string
		}{{s.GM, wf.RoleGM}, {s.Player, wf.RolePlayer}} {
			if err := db.AddWorldMember(t.Context(), created.ID, m.u.ID, m.role); err != nil {
				t.Fatal(err)
			}
		}

		table := s.Tools.AccessTable()
		if len(table) != 31 {
			t.Fatalf("access table has %d tools, the spec 31", len(table))
		}
		listed := map[string]*mcp.Tool{}
		for tl, err := range f.ownerJWT.Tools(t.Context(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			listed[tl.Name] = tl
		}
		for _, row := range table {
			if _, ok := matrixCases[row.Tool]; !ok {
				t.Errorf("%s: no matrix case", row.Tool)
			}
		}
		if len(matrixCases) != len(table) {
			t.Errorf("%d matrix cases for %d tools", len(matrixCases), len(table))
		}
		everyScope := slices.DeleteFunc(slices.Clone(wf.AllScopes), func(sc string) bool { return sc == wf.ScopeAll })
		stranger := connect(t, s, s.Key(t, s.Stranger, everyScope...), "")

		for _, row := range table {
			t.Run(row.Tool, func(t *testing.T) {
				f.t = t
				tc := matrixCases[row.Tool]
				// The description states the row.
				sep := " and "
				if row.AnyScope {
					sep = " or "
				}
				note := "Scope: " + strings.Join(row.Scopes, sep) + ". Caller: " + row.Who.String() + "."
				if tl := listed[row.Tool]; tl == nil || !strings.HasSuffix(tl.Description, note) {
					t.Errorf("tools/list description does not end with %q", note)
				}

				expect := func(cs *mcp.ClientSession, who string, args map[string]any, want string) string {
					t.Helper()
					before := s.AuditCount(t)
					text, isErr := callTool(t, cs, row.Tool, args)
					rows := 0
					switch {
					case want == "" && isErr:
						t.Errorf("%s: got %q, want success", who, text)
					case want != "" && (!isErr || text != want):
						t.Errorf("%s: got %q (isError=%v), want %q", who, text, isErr, want)
					}
					if !isErr {
						rows = 1
					}
					if got := s.AuditCount(t) - before; got != rows {
						t.Errorf("%s: %d new audit rows, want %d", who, got, rows)
					}
					return text
				}
				args := func(caller *wf.User) map[string]any {
					if tc.access != nil {
						return tc.access(f, caller)
					}
					return tc.own(f)
				}

				// Without the scopes.
				unrelated := slices.IndexFunc(everyScope, func(sc string) bool { return !slices.Contains(row.Scopes, sc) })
				noScope := connect(t, s, s.Key(t, s.Owner, everyScope[unrelated]), "")
				expect(noScope, "key without the scopes", args(s.Owner), "missing_scopes:"+strings.Join(row.Scopes, ","))
				if len(row.Scopes) > 1 {
					for _, sc := range row.Scopes {
						cs := connect(t, s, s.Key(t, s.Owner, sc), "")
						want := ""
						if !row.AnyScope {
							rest := slices.DeleteFunc(slices.Clone(row.Scopes), func(o string) bool { return o == sc })
							want = "missing_scopes:" + strings.Join(rest, ",")
						}
						expect(cs, "owner with only "+sc, args(s.Owner), want)
					}
				}

				as := func(u *wf.User) *mcp.ClientSession { return connect(t, s, s.Key(t, u, row.Scopes...), "") }
				// Who may reach the owner's rows: player, GM, owner.
				allowed := map[mcpserver.Who][3]bool{
					mcpserver.WhoOwner:        {false, false, true},
					mcpserver.WhoOwnerOrGM:    {false, true, true},
					mcpserver.WhoGMWorlds:     {false, true, true},
					mcpserver.WhoRowOwnerOrGM: {false, true, true},
					mcpserver.WhoMember:       {true, true, true},
					mcpserver.WhoAnyone:       {false, true, true}, // a world named as parent
				}[row.Who]
				refused := tc.refused
				if refused == "" {
					refused = "not_found"
				}
				if tc.access != nil {
					expect(stranger, "stranger with every scope", args(s.Stranger), refused)
					for i, u := range []*wf.User{s.Player, s.GM, s.Owner} {
						want := refused
						if allowed[i] {
							want = ""
						}
						expect(as(u), u.Name, args(u), want)
					}
				}
				if tc.own != nil {
					if row.Who != mcpserver.WhoAnyone && row.Who != mcpserver.WhoGMWorlds && row.Who != mcpserver.WhoRowOwnerOrGM {
						t.Fatalf("a tool with own-rows arguments is %v", row.Who)
					}
					text := expect(stranger, "stranger, own rows", tc.own(f), "")
					if containsAny(text, s.World.ID, f.resize, s.Campaign.ID, s.Quest.ID, s.Encounter.ID, s.Page.ID, s.Node.ID) {
						t.Errorf("stranger sees someone else's rows: %s", text)
					}
					for _, u := range []*wf.User{s.Player, s.GM, s.Owner} {
						expect(as(u), u.Name+", own rows", tc.own(f), "")
					}
				}
			})
		}
	})
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if sub != "" && strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
