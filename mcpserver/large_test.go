package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// bigWorld makes a large generated world and resizes it to side×side
// through the tools, as an agent would.
func bigWorld(tb testing.TB, s *testserver.Server, actor *wf.Actor, side int) string {
	tb.Helper()
	ctx := context.Background()
	res, err := s.Tools.CallTool(ctx, actor, wf.ToolCreateWorld, json.RawMessage(`{"name":"Huge","template":"starter-desert","seed":5,"size":"large"}`))
	if err != nil {
		tb.Fatal(err)
	}
	id := res.(wf.CreateWorldResult).ID
	if _, err := s.Tools.CallTool(ctx, actor, wf.ToolResizeWorld, json.RawMessage(fmt.Sprintf(`{"world_id":%q,"cols":%d,"rows":%d}`, id, side, side))); err != nil {
		tb.Fatal(err)
	}
	return id
}

// TestLargestWorld resizes a generated world up to 4096×4096, reads it
// with read_world and shrinks it again, and logs what each step cost in
// time and heap. (No timing assertions: the log is for the README.)
func TestLargestWorld(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 4096×4096 world")
	}
	s := testserver.Start(t, dbtest.Open(t))
	actor := &wf.Actor{UserID: s.Owner.ID, Kind: wf.CredentialSession, Scopes: []string{wf.ScopeAll}}
	ctx := context.Background()
	measure := func(what string, fn func() int) {
		t.Helper()
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		n := fn()
		d := time.Since(start)
		runtime.ReadMemStats(&after)
		t.Logf("%-34s %8s  %6.1f MB allocated  %6.1f MB result", what, d.Round(time.Millisecond),
			float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), float64(n)/(1<<20))
	}
	var id string
	measure("create large + resize to 4096×4096", func() int { id = bigWorld(t, s, actor, 4096); return 0 })
	args := json.RawMessage(`{"id":"` + id + `"}`)
	measure("read_world 4096×4096", func() int {
		text, isErr, ok := s.Tools.CallToolText(ctx, actor, wf.ToolReadWorld, args)
		if !ok || isErr {
			t.Fatalf("read_world: %.200s", text)
		}
		return len(text)
	})
	measure("resize 4096×4096 → 64×64", func() int {
		if _, err := s.Tools.CallTool(ctx, actor, wf.ToolResizeWorld, json.RawMessage(`{"world_id":"`+id+`","cols":64,"rows":64}`)); err != nil {
			t.Fatal(err)
		}
		return 0
	})
	w, err := s.DB.FindWorldHeader(ctx, id)
	if err != nil || w.Cols != 64 || w.Rows != 64 || w.Version != 3 {
		t.Fatalf("after shrinking: %+v %v", w, err)
	}
}
