package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/obs"
	"github.com/worldforge-go/worldforge/mcpserver"
)

// TestToolCallRecorded: every call through the pipeline (CallToolText is
// the fast path's entry; the go-sdk handler runs the same code) adds the
// tool, its error code and its duration to the request's obs record; an
// internal failure is logged with the request id; a call outside any
// request records nothing and does not fail.
func TestToolCallRecorded(t *testing.T) {
	db := dbtest.Open(t)
	ctx := context.Background()
	owner := &wf.User{Name: "Owner"}
	if err := db.CreateUser(ctx, owner); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	s, err := mcpserver.New(db, &mcpserver.Options{Logger: slog.New(obs.NewHandler(slog.NewTextHandler(&logs, nil)))})
	if err != nil {
		t.Fatal(err)
	}
	actor := &wf.Actor{UserID: owner.ID, Kind: wf.CredentialSession, Scopes: []string{wf.ScopeAll}}
	narrow := &wf.Actor{UserID: owner.ID, Kind: wf.CredentialAPIKey, KeyID: "key_x", Scopes: []string{wf.ScopeQuestRead}}

	rec := &obs.Request{ID: "req-1"}
	rctx := obs.NewContext(ctx, rec)
	call := func(a *wf.Actor, tool, args string) {
		t.Helper()
		if _, _, ok := s.CallToolText(rctx, a, tool, json.RawMessage(args)); !ok {
			t.Fatalf("%s: no such tool", tool)
		}
	}
	call(actor, wf.ToolListCampaigns, `{}`)
	call(actor, wf.ToolReadWorld, `{"id":"world_nope"}`)
	call(narrow, wf.ToolListCampaigns, `{}`)
	call(actor, wf.ToolReadWorld, `{"id":7}`)
	if _, _, ok := s.CallToolText(rctx, actor, "no_such_tool", nil); ok {
		t.Fatal("an unknown tool ran")
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.Close())
	call(actor, wf.ToolListCampaigns, `{}`)

	got := rec.Snapshot().Tools
	want := []obs.ToolCall{
		{Tool: wf.ToolListCampaigns},
		{Tool: wf.ToolReadWorld, Code: wf.ENotFound},
		{Tool: wf.ToolListCampaigns, Code: wf.EMissingScopes},
		{Tool: wf.ToolReadWorld, Code: wf.EBadRequest},
		{Tool: wf.ToolListCampaigns, Code: wf.EInternal},
	}
	if len(got) != len(want) {
		t.Fatalf("recorded %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Tool != want[i].Tool || got[i].Code != want[i].Code || got[i].Duration <= 0 {
			t.Errorf("call %d recorded %+v, want %+v with a duration", i, got[i], want[i])
		}
	}
	if out := logs.String(); strings.Count(out, "msg=\"tool failed\"") != 1 || !strings.Contains(out, "request_id=req-1") {
		t.Errorf("internal failure log = %q, want one line with request_id=req-1", out)
	}

	// Outside any request: nothing to record into, and no panic.
	if _, isErr, ok := s.CallToolText(ctx, actor, wf.ToolListCampaigns, nil); !ok || !isErr {
		t.Errorf("list_campaigns on a closed store outside a request: isError %v ok %v", isErr, ok)
	}
}
