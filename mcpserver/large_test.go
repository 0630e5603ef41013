package mcpserver_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
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

// peakHeap samples the live heap every millisecond until stop is called,
// and returns the highest figure seen.
func peakHeap() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var (
		peak uint64
		wg   sync.WaitGroup
	)
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 { close(done); wg.Wait(); return peak }
}

// postReadWorld sends read_world over HTTP and returns the response body's
// length and SHA-256, reading it through a small buffer.
func postReadWorld(tb testing.TB, url, key, id string) (int64, [32]byte) {
	tb.Helper()
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_world","arguments":{"id":"` + id + `"}}}`
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("read_world over HTTP: %s", resp.Status)
	}
	h := sha256.New()
	n, err := io.CopyBuffer(h, resp.Body, make([]byte, 32<<10))
	if err != nil {
		tb.Fatal(err)
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return n, sum
}

// TestLargestWorld resizes a generated world up to 4096×4096, reads it
// with read_world (in process, and over HTTP through the fast path) and
// shrinks it again, and logs what each step cost in time, bytes allocated
// and peak live heap. (No timing assertions: the log is for the README.)
func TestLargestWorld(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 4096×4096 world")
	}
	s := testserver.Start(t, dbtest.Open(t))
	actor := &wf.Actor{UserID: s.Owner.ID, Kind: wf.CredentialSession, Scopes: []string{wf.ScopeAll}}
	key := s.Key(t, s.Owner, wf.ScopeAll)
	ctx := context.Background()
	measure := func(what string, fn func() int) {
		t.Helper()
		runtime.GC() // twice: sync.Pool victims go in the second
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		stop := peakHeap()
		start := time.Now()
		n := fn()
		d := time.Since(start)
		peak := stop()
		runtime.ReadMemStats(&after)
		t.Logf("%-34s %8s  %6.1f MB allocated  %6.1f MB peak heap (%5.1f MB before)  %6.1f MB result", what, d.Round(time.Millisecond),
			float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), float64(peak)/(1<<20), float64(before.HeapAlloc)/(1<<20), float64(n)/(1<<20))
	}
	var id string
	measure("create large + resize to 4096×4096", func() int { id = bigWorld(t, s, actor, 4096); return 0 })
	args := json.RawMessage(`{"id":"` + id + `"}`)
	var text string
	measure("read_world 4096×4096 (in process)", func() int {
		var isErr, ok bool
		text, isErr, ok = s.Tools.CallToolText(ctx, actor, wf.ToolReadWorld, args)
		if !ok || isErr {
			t.Fatalf("read_world: %.200s", text)
		}
		return len(text)
	})
	// What the fast path must send: the envelope around the text encoded
	// as encoding/json encodes a string.
	var want bytes.Buffer
	want.WriteString(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":`)
	if err := json.NewEncoder(&want).Encode(text); err != nil {
		t.Fatal(err)
	}
	want.Truncate(want.Len() - 1)
	want.WriteString(`}]}}`)
	wantLen, wantSum := int64(want.Len()), sha256.Sum256(want.Bytes())
	text, want = "", bytes.Buffer{}
	var gotLen int64
	var gotSum [32]byte
	measure("read_world 4096×4096 (HTTP, fast)", func() int {
		gotLen, gotSum = postReadWorld(t, s.MCPURL(), key, id)
		return int(gotLen)
	})
	if gotLen != wantLen || gotSum != wantSum {
		t.Errorf("fast path answer: %d bytes, want %d (or contents differ)", gotLen, wantLen)
	}
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
