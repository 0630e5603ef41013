package client_test

import (
	"fmt"
	"slices"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/client"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// TestListWikiPagesFrom walks a world of 230 wiki pages with the typed
// helpers: three pages of the default size, every page once, by title.
func TestListWikiPagesFrom(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, dbtest.Open(t))
	ctx := testContext(t)
	w := &wf.World{OwnerID: s.Owner.ID, Name: "Many pages"}
	var content wf.WorldContent
	for i := range 230 {
		content.WikiPages = append(content.WikiPages, wf.WikiPage{Title: fmt.Sprintf("Page %03d", 229-i), Kind: wf.WikiKindLore, Audience: wf.AudienceGM})
	}
	if err := s.DB.CreateWorldContent(ctx, w, &content, s.Owner.ID); err != nil {
		t.Fatal(err)
	}
	c := connect(t, client.Options{BaseURL: s.URL, APIKey: s.Key(t, s.Owner, wf.ScopeAll)})
	var titles []string
	cursor, calls := "", 0
	for {
		page, err := c.ListWikiPagesFrom(ctx, w.ID, wf.WikiKindLore, cursor)
		if err != nil {
			t.Fatal(err)
		}
		calls++
		for _, p := range page.Pages {
			titles = append(titles, p.Title)
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if calls != 3 || len(titles) != 230 || !slices.IsSorted(titles) || titles[0] != "Page 000" {
		t.Errorf("%d calls, %d titles (sorted %v), first %q", calls, len(titles), slices.IsSorted(titles), titles[0])
	}
}
