package obs_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/worldforge-go/worldforge/internal/obs"
)

func TestRecord(t *testing.T) {
	var nilRec *obs.Request // outside any request: every method is a no-op
	nilRec.SetActor("u", "k")
	nilRec.AddToolCall(obs.ToolCall{Tool: "x"})
	if s := nilRec.Snapshot(); s.ID != "" || s.Tools != nil {
		t.Errorf("nil snapshot = %+v", s)
	}
	if obs.FromContext(context.Background()) != nil || obs.RequestID(context.Background()) != "" {
		t.Error("a bare context has a record")
	}

	r := &obs.Request{ID: "r1"}
	ctx := obs.NewContext(context.Background(), r)
	if obs.FromContext(ctx) != r || obs.RequestID(ctx) != "r1" {
		t.Fatal("the record is not in the context")
	}
	r.SetActor("user_1", "key_1")
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() { obs.FromContext(ctx).AddToolCall(obs.ToolCall{Tool: "t", Duration: time.Millisecond}) })
	}
	wg.Wait()
	s := r.Snapshot()
	if s.ID != "r1" || s.UserID != "user_1" || s.KeyID != "key_1" || len(s.Tools) != 50 {
		t.Errorf("snapshot = %+v", s)
	}
	s.Tools[0].Tool = "changed"
	if r.Snapshot().Tools[0].Tool != "t" {
		t.Error("the snapshot shares the record's calls")
	}
}

func TestHandler(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(obs.NewHandler(slog.NewTextHandler(&buf, nil))).With("component", "c").WithGroup("g")
	ctx := obs.NewContext(context.Background(), &obs.Request{ID: "abc"})
	l.InfoContext(ctx, "with", "k", 1)
	l.Info("without")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "g.request_id=abc") || !strings.Contains(lines[0], "component=c") || strings.Contains(lines[1], "request_id") {
		t.Errorf("logs = %q", lines)
	}
}
