package httpapi_test

import (
	"strings"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// TestBadArguments: every malformed argument is a clear bad_request tool
// error and writes nothing (not even an audit row).
func TestBadArguments(t *testing.T) {
	dbtest.ForEachEngine(t, testBadArguments)
}

func testBadArguments(t *testing.T, db *sqlstore.DB) {
	s := testserver.Start(t, db)
	cs := connect(t, s, s.Key(t, s.Owner, wf.ScopeAll), "")
	w := s.World.ID
	cases := []struct {
		name string
		tool string
		args map[string]any
		want string // a part of the error text after "bad_request: "
	}{
		{"missing required id", "read_world", map[string]any{}, "id"},
		{"id of wrong type", "read_world", map[string]any{"id": 5}, "id"},
		{"empty id", "read_quest", map[string]any{"id": ""}, "id"},
		{"overlong id", "read_campaign", map[string]any{"id": strings.Repeat("x", 101)}, "id"},
		{"missing world_id", "list_wiki_pages", map[string]any{}, "world_id"},
		{"unknown wiki kind", "list_wiki_pages", map[string]any{"world_id": w, "kind": "bogus"}, "kind"},
		{"limit above 100", "search_wiki_pages", map[string]any{"limit": 101}, "limit"},
		{"limit zero", "search_wiki_pages", map[string]any{"limit": 0}, "limit"},
		{"limit not an integer", "search_atlas_nodes", map[string]any{"limit": 1.5}, "limit"},
		{"limit a string", "search_atlas_nodes", map[string]any{"limit": "10"}, "limit"},
		{"history limit above 200", "wiki_page_history", map[string]any{"id": s.Page.ID, "limit": 201}, "limit"},
		{"atlas level 0", "list_atlas_places", map[string]any{"world_id": w, "level": 0}, "level"},
		{"atlas level 6", "list_atlas_places", map[string]any{"world_id": w, "level": 6}, "level"},
		{"unknown lore collection", "list_lore", map[string]any{"world_id": w, "collection": "dragons"}, "collection"},
		{"poi request not an object", "search_pois", map[string]any{"world_id": w, "request": "chest"}, "request"},
		{"poi limit above 200", "search_pois", map[string]any{"world_id": w, "request": map[string]any{"limit": 500}}, "limit"},
		{"poi negative radius", "search_pois", map[string]any{"world_id": w, "request": map[string]any{"x": 1, "y": 1, "radiusPx": -5}}, "radiusPx"},
		{"poi x without y", "search_pois", map[string]any{"world_id": w, "request": map[string]any{"x": 1}}, "x and request.y"},
		{"poi tags not strings", "search_pois", map[string]any{"world_id": w, "request": map[string]any{"tags": []any{1}}}, "tags"},
		{"query too long", "search_wiki_pages", map[string]any{"q": strings.Repeat("q", 201)}, "q"},
		{"NUL in an id", "read_world", map[string]any{"id": "world_a\x00b"}, "NUL"},
		{"NUL in a query", "search_wiki_pages", map[string]any{"q": "a\x00"}, "NUL"},
		{"NUL in a POI tag", "search_pois", map[string]any{"world_id": w, "request": map[string]any{"tags": []any{"\x00"}}}, "NUL"},
		{"campaign filter of wrong type", "list_quests", map[string]any{"campaign_id": []any{}}, "campaign_id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := s.AuditCount(t)
			text, isErr := callTool(t, cs, tc.tool, tc.args)
			if !isErr || !strings.HasPrefix(text, "bad_request: ") || !strings.Contains(text, tc.want) {
				t.Errorf("got %q (isError=%v), want a bad_request naming %q", text, isErr, tc.want)
			}
			if got := s.AuditCount(t); got != before {
				t.Errorf("audit rows %d, want %d", got, before)
			}
		})
	}

	// Extra keys inside search_pois' request pass through and are ignored.
	text, isErr := callTool(t, cs, "search_pois", map[string]any{"world_id": w, "request": map[string]any{"name": "chest", "shinyNewField": 1}})
	if isErr || !strings.Contains(text, s.POI.ID) {
		t.Errorf("search_pois with an extra request key: %q (isError=%v)", text, isErr)
	}
}
