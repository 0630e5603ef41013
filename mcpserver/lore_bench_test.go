package mcpserver_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/loretest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// BenchmarkListLore runs list_lore in-process (no HTTP), result rendered to
// JSON, on a world of n entities in 17 collections that refer to each
// other, with an issue of every kind in one row of 17 entities out of
// 1,000. Run with
// go test -run XXX -bench ListLore -benchtime 20x ./mcpserver
func BenchmarkListLore(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		s := testserver.Start(b, dbtest.Open(b))
		ctx := context.Background()
		w := &wf.World{OwnerID: s.Owner.ID, Name: "Lore"}
		if err := s.DB.CreateWorldContent(ctx, w, &wf.WorldContent{Lore: loretest.World(n, 1000)}, s.Owner.ID); err != nil {
			b.Fatal(err)
		}
		actor := &wf.Actor{UserID: s.Owner.ID, Kind: wf.CredentialSession, Scopes: []string{wf.ScopeAll}}
		for _, c := range []struct{ name, args string }{
			{"overview", `{"world_id":"` + w.ID + `"}`},
			{"one-collection", `{"world_id":"` + w.ID + `","collection":"deities"}`},
			// The page after deity x<rows/2>: a cursor into the middle.
			{"next-page", `{"world_id":"` + w.ID + `","cursor":"` +
				base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "lore1:deities:x%d", n/17/2)) + `"}`},
		} {
			b.Run(fmt.Sprintf("%s/entities=%d", c.name, n), func(b *testing.B) {
				b.ReportAllocs()
				size := 0
				for b.Loop() {
					text, isErr, ok := s.Tools.CallToolText(ctx, actor, wf.ToolListLore, json.RawMessage(c.args))
					if !ok || isErr {
						b.Fatalf("list_lore: %.300s", text)
					}
					size = len(text)
				}
				b.ReportMetric(float64(size), "bytes/answer")
			})
		}
	}
}
