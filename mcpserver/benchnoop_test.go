package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/benchtool"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/mcpserver"
)

// TestBenchNoop: bench_noop exists only on a server whose options
// benchtool.EnableNoop set (serve --bench-noop); it answers the payload
// for any caller and is not in the access table.
func TestBenchNoop(t *testing.T) {
	db := dbtest.Open(t)
	ctx := context.Background()
	actor := &wf.Actor{UserID: "user_x", Kind: wf.CredentialAPIKey, KeyID: "key_x"}
	args := json.RawMessage(`{"id":"x"}`)

	plain, err := mcpserver.New(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := plain.CallToolText(ctx, actor, benchtool.NoopTool, args); ok {
		t.Fatal("bench_noop registered without EnableNoop")
	}

	const payload = `{"a":1}`
	opts := &mcpserver.Options{}
	benchtool.EnableNoop(opts, payload)
	s, err := mcpserver.New(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	text, isErr, ok := s.CallToolText(ctx, actor, benchtool.NoopTool, args)
	if !ok || isErr || text != payload {
		t.Fatalf("bench_noop = %q, isError %v, ok %v; want %q", text, isErr, ok, payload)
	}
	for _, row := range s.AccessTable() {
		if row.Tool == benchtool.NoopTool {
			t.Fatal("bench_noop is in the access table")
		}
	}
}
