package console_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// BenchmarkWorldPage4096 serves the world page of a 4096×4096 world and
// its overview PNG through the console (the real server and store): one
// op is GET /w/{world} plus GET /w/{world}/map.png.
//
//   - warm: the picture is cached (the usual view of a world).
//   - moved: a player moved before each op, so the overview is drawn
//     again (from the cached grid).
//
// first-ms is the very first op, which also reads and parses the 33 MB
// document.
func BenchmarkWorldPage4096(b *testing.B) {
	db := dbtest.Open(b)
	s := testserver.StartWith(b, db, testserver.Config{Console: true})
	w := gridWorld(b, s, "Huge", 4096, 4096)
	if err := db.AddWorldMember(context.Background(), w.ID, s.Player.ID, wf.RolePlayer); err != nil {
		b.Fatal(err)
	}
	br := newBrowser(b, s.URL)
	br.signIn(s.LoginLink(b, s.Owner))
	base := "/w/" + w.ID
	op := func() {
		if p := br.get(base); p.status != http.StatusOK {
			b.Fatalf("world page: %d", p.status)
		}
		if p := br.get(base + "/map.png"); p.status != http.StatusOK || len(p.body) == 0 {
			b.Fatalf("map.png: %d", p.status)
		}
	}
	start := time.Now()
	op()
	first := time.Since(start)

	b.Run("warm", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			op()
		}
		b.ReportMetric(float64(first.Milliseconds()), "first-ms")
	})
	b.Run("moved", func(b *testing.B) {
		b.ReportAllocs()
		x := 0
		for b.Loop() {
			b.StopTimer()
			x = (x + 37) % 4096
			if err := db.SetPresence(context.Background(), &wf.Presence{WorldID: w.ID, UserID: s.Player.ID, X: x, Y: x}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			op()
		}
	})
}
