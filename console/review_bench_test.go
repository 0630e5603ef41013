package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// BenchmarkQueuePage serves the first page of the review queue (50
// proposals, grouped, with who filed them and the total) to the owner of
// a world with 10,000 pending proposals, straight through the console's
// handler.
func BenchmarkQueuePage(b *testing.B) {
	db := dbtest.Open(b)
	s := testserver.StartWith(b, db, testserver.Config{Console: true})
	ctx := context.Background()
	_, k, err := s.Auth.MintKey(ctx, s.GM.ID, "gm-agent", []string{wf.ScopeAll})
	if err != nil {
		b.Fatal(err)
	}
	const n = 10_000
	for i := range n {
		payload, _ := json.Marshal(wf.WikiPagePayload{Title: fmt.Sprintf("Page %d", i), Body: "Some text.", Kind: wf.WikiKindLore, Audience: wf.AudienceGM})
		p := &wf.Proposal{Kind: wf.ProposalWikiPage, WorldID: s.World.ID, Payload: payload, DiffSummary: fmt.Sprintf("add page %d", i),
			ActorID: s.GM.ID, KeyID: k.ID}
		if i%10 < 3 {
			p.ChangesetID = fmt.Sprintf("cs-%d", i/10)
		}
		if err := db.CreateProposal(ctx, p, nil); err != nil {
			b.Fatal(err)
		}
	}
	br := newBrowser(b, s.URL)
	br.signIn(s.LoginLink(b, s.Owner))
	u, _ := url.Parse(s.URL)
	req := httptest.NewRequest("GET", "/queue", nil)
	for _, c := range br.c.Jar.Cookies(u) {
		req.AddCookie(c)
	}
	serve := func() *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		s.Console.ServeHTTP(rec, req)
		return rec
	}
	if rec := serve(); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), fmt.Sprintf("Showing 50 of %d pending", n)) ||
		!strings.Contains(rec.Body.String(), `rel="next"`) {
		b.Fatalf("queue: %d\n%s", rec.Code, rec.Body.String())
	}
	b.ReportAllocs()
	for b.Loop() {
		if rec := serve(); rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}
