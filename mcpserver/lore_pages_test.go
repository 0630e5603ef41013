package mcpserver_test

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/loretest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// TestListLorePages drives list_lore through the real HTTP server and the
// go-sdk client on a world of 2,550 entities (150 per collection) with
// issues: the overview lists each collection's first page with a cursor for
// the rest; cursors (alone or with their collection) walk a collection
// once, in id order; limit bounds a page; bad cursors are
// "bad_request: cursor" and write no audit row; issues are capped with
// their total, and match the store's.
func TestListLorePages(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := testserver.Start(t, db)
		ctx := t.Context()
		w := &wf.World{OwnerID: s.Owner.ID, Name: "Big lore"}
		if err := s.DB.CreateWorldContent(ctx, w, &wf.WorldContent{Lore: loretest.World(150*17, 10)}, s.Owner.ID); err != nil {
			t.Fatal(err)
		}
		cs := testserver.Connect(t, s.MCPURL(), s.Token(t, s.Owner), "")
		call := func(args map[string]any, out any) {
			t.Helper()
			args["world_id"] = w.ID
			before := s.AuditCount(t)
			text, isErr := testserver.CallText(t, cs, wf.ToolListLore, args)
			if isErr {
				t.Fatalf("list_lore %v: %s", args, text)
			}
			if err := json.Unmarshal([]byte(text), out); err != nil {
				t.Fatalf("decode %.200s: %v", text, err)
			}
			if n := s.AuditCount(t) - before; n != 1 {
				t.Errorf("list_lore %v: %d audit rows, want 1", args, n)
			}
		}
		ids := func(items []wf.RawEntity) []string {
			var out []string
			for _, raw := range items {
				var e struct{ ID string }
				if err := json.Unmarshal(raw, &e); err != nil {
					t.Fatal(err)
				}
				out = append(out, e.ID)
			}
			return out
		}
		var all []string // the ids of every collection, in id order
		for _, e := range loretest.World(150*17, 10) {
			if e.Collection == "deities" {
				all = append(all, e.ID)
			}
		}
		slices.Sort(all)

		// The overview: first pages, cursors, counts, issues, presets.
		var ov wf.LoreOverview
		call(map[string]any{}, &ov)
		if len(ov.Lore) != 17 || len(ov.Counts) != 17 || len(ov.NextCursors) != 17 || len(ov.Presets) < 9 {
			t.Fatalf("overview: %d collections, %d counts, %d cursors, %d presets", len(ov.Lore), len(ov.Counts), len(ov.NextCursors), len(ov.Presets))
		}
		for _, c := range wf.LoreCollections {
			if ov.Counts[c] != 150 || len(ov.Lore[c]) != wf.DefaultLoreLimit {
				t.Errorf("%s: count %d, %d listed", c, ov.Counts[c], len(ov.Lore[c]))
			}
		}
		if got := ids(ov.Lore["deities"]); !slices.Equal(got, all[:100]) {
			t.Errorf("first page of deities: %v", got)
		}
		wantIssues, total, err := s.DB.LoreIssues(ctx, w.ID, "", wf.MaxLoreIssues)
		if err != nil {
			t.Fatal(err)
		}
		if total == 0 || ov.IssuesTotal != total || len(ov.Issues) != total {
			t.Errorf("overview: %d issues of %d, store %d", len(ov.Issues), ov.IssuesTotal, total)
		}
		if diff := cmp.Diff(wantIssues, ov.Issues); diff != "" {
			t.Errorf("overview issues (-store +tool):\n%s", diff)
		}

		// The cursor alone names its collection and goes on where the page
		// ended.
		var rest wf.LoreCollectionList
		call(map[string]any{"cursor": ov.NextCursors["deities"]}, &rest)
		if rest.Collection != "deities" || rest.NextCursor != "" || !slices.Equal(ids(rest.Items), all[100:]) {
			t.Errorf("second page: %s, %d items, cursor %q", rest.Collection, len(rest.Items), rest.NextCursor)
		}
		for _, is := range rest.Issues {
			if is.Collection != "deities" {
				t.Errorf("issue of another collection: %+v", is)
			}
		}

		// A walk with a limit: every entity once, in order.
		var walked []string
		cursor, pages := "", 0
		for {
			args := map[string]any{"collection": "deities", "limit": 40}
			if cursor != "" {
				args["cursor"] = cursor
			}
			var page wf.LoreCollectionList
			call(args, &page)
			pages++
			if len(page.Items) > 40 || page.Counts["deities"] != 150 {
				t.Fatalf("page of %d items, counts %v", len(page.Items), page.Counts)
			}
			walked = append(walked, ids(page.Items)...)
			if cursor = page.NextCursor; cursor == "" {
				break
			}
		}
		if pages != 4 || !slices.Equal(walked, all) {
			t.Errorf("walk: %d pages, %d ids", pages, len(walked))
		}
		var whole wf.LoreCollectionList
		call(map[string]any{"collection": "deities", "limit": wf.MaxLoreLimit}, &whole)
		if whole.NextCursor != "" || len(whole.Items) != 150 {
			t.Errorf("limit %d: %d items, cursor %q", wf.MaxLoreLimit, len(whole.Items), whole.NextCursor)
		}

		// Bad cursors and limits: refused, nothing audited.
		b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
		for _, args := range []map[string]any{
			{"cursor": "not a cursor!"},
			{"cursor": b64("lore1:dragons:x")},
			{"cursor": b64("lore2:deities:x")},
			{"cursor": b64("deities")},
			{"cursor": strings.Repeat("A", wf.MaxCursorLength+4)},
			{"cursor": ov.NextCursors["deities"], "collection": "events"},
		} {
			args["world_id"] = w.ID
			before := s.AuditCount(t)
			if text, isErr := testserver.CallText(t, cs, wf.ToolListLore, args); !isErr || text != "bad_request: cursor" {
				t.Errorf("%v: %v %q", args, isErr, text)
			}
			if n := s.AuditCount(t) - before; n != 0 {
				t.Errorf("%v: %d audit rows", args, n)
			}
		}
		for _, limit := range []int{0, wf.MaxLoreLimit + 1} {
			if text, isErr := testserver.CallText(t, cs, wf.ToolListLore, map[string]any{"world_id": w.ID, "limit": limit}); !isErr || !strings.HasPrefix(text, "bad_request: ") {
				t.Errorf("limit %d: %v %q", limit, isErr, text)
			}
		}
		// A valid cursor does not open someone else's world.
		stranger := testserver.Connect(t, s.MCPURL(), s.Token(t, s.Stranger), "")
		if text, isErr := testserver.CallText(t, stranger, wf.ToolListLore, map[string]any{"world_id": w.ID, "cursor": ov.NextCursors["deities"]}); !isErr || text != "not_found" {
			t.Errorf("stranger: %v %q", isErr, text)
		}

		// More issues than a page holds: the first MaxLoreIssues, and the
		// total.
		broken := &wf.World{OwnerID: s.Owner.ID, Name: "Broken lore"}
		if err := s.DB.CreateWorldContent(ctx, broken, &wf.WorldContent{Lore: loretest.World(120*17, 1)}, s.Owner.ID); err != nil {
			t.Fatal(err)
		}
		w = broken
		var many wf.LoreOverview
		call(map[string]any{}, &many)
		wantIssues, total, err = s.DB.LoreIssues(ctx, broken.ID, "", 1_000_000)
		if err != nil {
			t.Fatal(err)
		}
		if total <= wf.MaxLoreIssues || many.IssuesTotal != total || len(many.Issues) != wf.MaxLoreIssues {
			t.Fatalf("%d issues listed of %d, store %d", len(many.Issues), many.IssuesTotal, total)
		}
		if diff := cmp.Diff(wantIssues[:wf.MaxLoreIssues], many.Issues); diff != "" {
			t.Errorf("capped issues (-store +tool):\n%s", diff)
		}

		// A world listed whole answers as before pagination: no cursors.
		w = s.World
		text, isErr := testserver.CallText(t, cs, wf.ToolListLore, map[string]any{"world_id": s.World.ID})
		if isErr || strings.Contains(text, "next_cursor") || !strings.Contains(text, `"wardens"`) {
			t.Errorf("small world: %v %.300s", isErr, text)
		}
	})
}
