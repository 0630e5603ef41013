package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// BenchmarkReadWorld runs read_world's domain work in-process (scope
// check, argument validation, store read, JSON rendering, audit row),
// without HTTP or MCP framing: what the tool adds to the protocol layer.
func BenchmarkReadWorld(b *testing.B) {
	s := testserver.Start(b, dbtest.Open(b))
	actor := &wf.Actor{UserID: s.Owner.ID, Kind: wf.CredentialAPIKey, KeyID: "key_bench", Scopes: []string{wf.ScopeAll}}
	args := json.RawMessage(`{"id":"` + s.World.ID + `"}`)
	ctx := context.Background()
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Tools.CallTool(ctx, actor, "read_world", args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := s.Tools.CallTool(ctx, actor, "read_world", args); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
