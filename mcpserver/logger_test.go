package mcpserver_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/worldforge-go/worldforge/mcpserver"
)

// TestSDKLogger: the go-sdk's per-session Info lines are dropped, its
// warnings and errors pass, with attributes and groups kept.
func TestSDKLogger(t *testing.T) {
	var buf bytes.Buffer
	base := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	l := mcpserver.SDKLogger(base).With("component", "sdk").WithGroup("g")
	l.Info("server session connected", "session_id", "x")
	l.Debug("noise")
	if buf.Len() != 0 {
		t.Fatalf("Info/Debug passed: %q", buf.String())
	}
	l.Warn("careful", "k", 1)
	l.Error("broken")
	out := buf.String()
	for _, want := range []string{"careful", "component=sdk", "g.k=1", "broken"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}
