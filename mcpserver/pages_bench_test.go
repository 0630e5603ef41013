package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// BenchmarkListWikiPages runs list_wiki_pages in-process (no HTTP), result
// rendered to JSON, with its audit row, on a world of n live pages (issue
// 8): the first answer (before paging, every page of the world; now the
// first 100) and, when the tool pages, the answer for a cursor into the
// middle of the list. Run with
// go test -run XXX -bench ListWikiPages -benchtime 20x ./mcpserver
func BenchmarkListWikiPages(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		s := testserver.Start(b, dbtest.Open(b))
		ctx := context.Background()
		pages := make([]wf.WikiPage, n)
		for i := range pages {
			pages[i] = wf.WikiPage{Title: fmt.Sprintf("Page %d", i%(n/4)), Body: "Some text.", Kind: wf.WikiKinds[i%len(wf.WikiKinds)], Audience: wf.AudienceGM}
		}
		w := &wf.World{OwnerID: s.Owner.ID, Name: "Wiki"}
		if err := s.DB.CreateWorldContent(ctx, w, &wf.WorldContent{WikiPages: pages}, s.Owner.ID); err != nil {
			b.Fatal(err)
		}
		actor := &wf.Actor{UserID: s.Owner.ID, Kind: wf.CredentialSession, Scopes: []string{wf.ScopeAll}}
		call := func(args string) (pages int, next string, size int) {
			text, isErr, ok := s.Tools.CallToolText(ctx, actor, wf.ToolListWikiPages, json.RawMessage(args))
			if !ok || isErr {
				b.Fatalf("list_wiki_pages: %.300s", text)
			}
			var out struct {
				Pages      []wf.WikiPageSummary `json:"pages"`
				NextCursor string               `json:"next_cursor"`
			}
			if err := json.Unmarshal([]byte(text), &out); err != nil {
				b.Fatal(err)
			}
			return len(out.Pages), out.NextCursor, len(text)
		}
		first := `{"world_id":"` + w.ID + `"}`
		cases := []struct{ name, args string }{{"first", first}}
		// A cursor into the middle: walk there in pages of 1,000.
		if _, next, _ := call(first); next != "" {
			cursor := ""
			for range n / 2 / 1000 {
				_, cursor, _ = call(`{"world_id":"` + w.ID + `","limit":1000` + cursorArg(cursor) + `}`)
			}
			cases = append(cases, struct{ name, args string }{"middle", `{"world_id":"` + w.ID + `"` + cursorArg(cursor) + `}`})
		}
		for _, c := range cases {
			b.Run(fmt.Sprintf("%s/pages=%d", c.name, n), func(b *testing.B) {
				b.ReportAllocs()
				rows, size := 0, 0
				for b.Loop() {
					rows, _, size = call(c.args)
				}
				b.ReportMetric(float64(rows), "rows/answer")
				b.ReportMetric(float64(size), "bytes/answer")
			})
		}
	}
}

func cursorArg(c string) string {
	if c == "" {
		return ""
	}
	return `,"cursor":"` + c + `"`
}
