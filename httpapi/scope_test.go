package httpapi_test

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// Who may call a read tool beyond its scope.
const (
	ownerOnly = iota // the row's owner
	ownerGM          // the world's owner or a GM
	ownList          // anyone: lists the caller's own rows
	gmSearch         // anyone: searches the worlds the caller owns or runs as GM
)

type readCase struct {
	tool    string
	args    func(s *testserver.Server) map[string]any
	scopes  []string // every scope the tool needs
	anyOf   bool     // any one of scopes suffices
	missing string   // the error text a key with none of them gets
	who     int
}

func readCases() []readCase {
	world := func(s *testserver.Server) map[string]any { return map[string]any{"world_id": s.World.ID} }
	id := func(f func(s *testserver.Server) string) func(s *testserver.Server) map[string]any {
		return func(s *testserver.Server) map[string]any { return map[string]any{"id": f(s)} }
	}
	none := func(*testserver.Server) map[string]any { return map[string]any{} }
	return []readCase{
		{"read_world", id(func(s *testserver.Server) string { return s.World.ID }), []string{"world:read"}, false, "missing_scopes:world:read", ownerOnly},
		{"read_campaign", id(func(s *testserver.Server) string { return s.Campaign.ID }), []string{"campaign:read"}, false, "missing_scopes:campaign:read", ownerOnly},
		{"list_campaigns", none, []string{"campaign:read"}, false, "missing_scopes:campaign:read", ownList},
		{"read_quest", id(func(s *testserver.Server) string { return s.Quest.ID }), []string{"quest:read"}, false, "missing_scopes:quest:read", ownerOnly},
		{"list_quests", func(s *testserver.Server) map[string]any { return map[string]any{"campaign_id": s.Campaign.ID} }, []string{"quest:read"}, false, "missing_scopes:quest:read", ownList},
		{"read_encounter", id(func(s *testserver.Server) string { return s.Encounter.ID }), []string{"encounter:read"}, false, "missing_scopes:encounter:read", ownerOnly},
		{"list_encounters", none, []string{"encounter:read"}, false, "missing_scopes:encounter:read", ownList},
		{"list_wiki_pages", world, []string{"wiki:read"}, false, "missing_scopes:wiki:read", ownerGM},
		{"read_wiki_page", id(func(s *testserver.Server) string { return s.Page.ID }), []string{"wiki:read"}, false, "missing_scopes:wiki:read", ownerGM},
		{"search_wiki_pages", func(s *testserver.Server) map[string]any { return map[string]any{"q": "warden"} }, []string{"wiki:read"}, false, "missing_scopes:wiki:read", gmSearch},
		{"wiki_page_history", id(func(s *testserver.Server) string { return s.Page.ID }), []string{"wiki:read"}, false, "missing_scopes:wiki:read", ownerGM},
		{"list_factions", world, []string{"wiki:read"}, false, "missing_scopes:wiki:read", ownerGM},
		{"get_world_summary", world, []string{"wiki:read", "atlas:read"}, false, "missing_scopes:wiki:read,atlas:read", ownerGM},
		{"list_atlas_places", world, []string{"atlas:read"}, false, "missing_scopes:atlas:read", ownerGM},
		{"read_atlas_node", id(func(s *testserver.Server) string { return s.Node.ID }), []string{"atlas:read"}, false, "missing_scopes:atlas:read", ownerGM},
		{"search_atlas_nodes", func(s *testserver.Server) map[string]any { return map[string]any{"q": "ald"} }, []string{"atlas:read"}, false, "missing_scopes:atlas:read", gmSearch},
		{"search_pois", world, []string{"world:read"}, false, "missing_scopes:world:read", ownerOnly},
		{"list_lore", world, []string{"lore:read", "world:read"}, true, "missing_scopes:lore:read,world:read", ownerGM},
	}
}

// TestScopeMatrix calls each read tool as: a key lacking its scope, a
// stranger, a player, the GM and the owner (each holding exactly the
// tool's scopes), and checks the answer and the audit log after each.
func TestScopeMatrix(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := testserver.Start(t, db)
		if len(readCases()) != len(readTools) {
			t.Fatalf("matrix covers %d tools, want %d", len(readCases()), len(readTools))
		}
		// A key with an unrelated scope only.
		noScope := connect(t, s, s.Key(t, s.Owner, wf.ScopeCampaignWrite), "")
		for _, tc := range readCases() {
			t.Run(tc.tool, func(t *testing.T) {
				args := tc.args(s)
				expect := func(cs *mcp.ClientSession, who string, wantErr string) {
					t.Helper()
					before := s.AuditCount(t)
					text, isErr := callTool(t, cs, tc.tool, args)
					wantRows := before
					if wantErr == "" {
						wantRows++
						if isErr {
							t.Errorf("%s: got error %q, want success", who, text)
						}
					} else if !isErr || text != wantErr {
						t.Errorf("%s: got %q (isError=%v), want %q", who, text, isErr, wantErr)
					}
					if got := s.AuditCount(t); got != wantRows {
						t.Errorf("%s: audit rows %d, want %d", who, got, wantRows)
					}
				}
				expect(noScope, "key without scope", tc.missing)
				if tc.anyOf && len(tc.scopes) > 1 {
					// Each one alone suffices.
					for _, sc := range tc.scopes {
						expect(connect(t, s, s.Key(t, s.Owner, sc), ""), "owner with "+sc, "")
					}
				} else if len(tc.scopes) > 1 {
					// Each one alone names the other as missing.
					for i, sc := range tc.scopes {
						other := tc.scopes[1-i]
						expect(connect(t, s, s.Key(t, s.Owner, sc), ""), "owner with only "+sc, "missing_scopes:"+other)
					}
				}
				as := func(u *wf.User) *mcp.ClientSession { return connect(t, s, s.Key(t, u, tc.scopes...), "") }
				switch tc.who {
				case ownerOnly:
					expect(as(s.Stranger), "stranger", "not_found")
					expect(as(s.Player), "player", "not_found")
					expect(as(s.GM), "gm", "not_found")
				case ownerGM:
					expect(as(s.Stranger), "stranger", "not_found")
					expect(as(s.Player), "player", "not_found")
					expect(as(s.GM), "gm", "")
				case ownList, gmSearch:
					// A stranger sees only their own (empty) rows.
					text, isErr := callTool(t, as(s.Stranger), tc.tool, args)
					if isErr || containsAny(text, s.World.ID, s.Campaign.ID, s.Quest.ID, s.Encounter.ID, s.Page.ID, s.Node.ID) {
						t.Errorf("stranger: %q (isError=%v) shows someone else's rows", text, isErr)
					}
				}
				expect(as(s.Owner), "owner", "")
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
