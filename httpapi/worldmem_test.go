package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/httpapi"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/sqlstoretest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// TestReadWorldBufferedCap: a world whose document the store keeps in
// pieces and that is over the limit of an answer built in memory is still
// answered whole to a plain tools/call on every protocol revision (the
// fast path streams it), but a request the go-sdk answers (a JSON-RPC
// batch) gets too_large naming the limit and the way to get the world,
// with no audit row; a document that cannot be streamed is too_large on
// every path. Under the limit, the batch answers as before.
func TestReadWorldBufferedCap(t *testing.T) {
	const chunk, limit = 256, 2000
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		sqlstoretest.SetDocChunkBytes(db, chunk)
		ts := testserver.StartWith(t, db, testserver.Config{MaxBufferedAnswerBytes: limit})
		key := ts.Key(t, ts.Owner, wf.ScopeAll)
		ctx := context.Background()
		mk := func(doc string) string {
			w := &wf.World{OwnerID: ts.Owner.ID, Name: "Capped", Cols: 3, Rows: 2, JSON: json.RawMessage(doc)}
			if err := ts.DB.CreateWorld(ctx, w); err != nil {
				t.Fatal(err)
			}
			return w.ID
		}
		big := mk(`{"grid":{"cols":3,"rows":2},"fill":"` + strings.Repeat("<x>", limit) + `"}`)
		small := mk(`{"grid":{"cols":3,"rows":2},"fill":"` + strings.Repeat("y", chunk*3) + `"}`)
		unspliceable := mk(`{"runtime":"authored","fill":"` + strings.Repeat("z", limit) + `"}`)

		for i, proto := range allProtocols {
			body := callBody(strconv.Itoa(i+1), proto, wf.ToolReadWorld, mustJSON(map[string]string{"id": big}), "")
			before := ts.API.FastPathCalls()
			got := send(t, ts.MCPURL(), headers(key, proto, wf.ToolReadWorld, nil), "", body)
			if ts.API.FastPathCalls() == before {
				t.Errorf("%q: the fast path did not take read_world", proto)
			}
			if text, isErr := resultText(t, got.body); isErr || text != inMemoryAnswer(t, ts.DB, big) {
				t.Errorf("%q: text %.80q… (isError %v), want the whole world", proto, text, isErr)
			}
		}

		batch := func(proto, id string) (string, bool) {
			t.Helper()
			body := `[` + callBody("1", proto, wf.ToolReadWorld, mustJSON(map[string]string{"id": id}), "") + `]`
			got := send(t, ts.MCPURL(), headers(key, proto, wf.ToolReadWorld, nil), "", body)
			var resp []json.RawMessage
			if err := json.Unmarshal([]byte(got.body), &resp); err != nil || len(resp) != 1 {
				t.Fatalf("batch answer %d %.200q: %v", got.status, got.body, err)
			}
			return resultText(t, string(resp[0]))
		}
		for _, proto := range []string{"", "2024-11-05", "2025-03-26"} {
			audits := ts.AuditCount(t)
			text, isErr := batch(proto, big)
			if !isErr || !strings.HasPrefix(text, wf.ETooLarge+": ") || !strings.Contains(text, fmt.Sprint(limit)) ||
				!strings.Contains(text, "MCP-Protocol-Version") {
				t.Errorf("%q: batch read_world of a world over the limit: %q (isError %v), want too_large naming %d and the header", proto, text, isErr, limit)
			}
			if n := ts.AuditCount(t) - audits; n != 0 {
				t.Errorf("%q: the refused read wrote %d audit rows", proto, n)
			}
			if text, isErr := batch(proto, small); isErr || text != inMemoryAnswer(t, ts.DB, small) {
				t.Errorf("%q: batch read_world under the limit: %.80q… (isError %v), want the world", proto, text, isErr)
			}
		}
		for _, proto := range allProtocols {
			body := callBody("9", proto, wf.ToolReadWorld, mustJSON(map[string]string{"id": unspliceable}), "")
			got := send(t, ts.MCPURL(), headers(key, proto, wf.ToolReadWorld, nil), "", body)
			if text, isErr := resultText(t, got.body); !isErr || !strings.HasPrefix(text, wf.ETooLarge+": ") || !strings.Contains(text, fmt.Sprint(limit)) {
				t.Errorf("%q: read_world of an unstreamable world over the limit: %q (isError %v), want too_large", proto, text, isErr)
			}
		}
	})
}

// TestReadWorldStalledReaders: clients that ask for a large world over
// raw TCP connections, read its first bytes and then stop reading do not
// keep anyone else from reading a large world: with four of them stalled
// (twice the store's stream slots, on SQLite and PostgreSQL), a healthy
// client gets its whole, verified answer (of another large world) while
// they are still stalled (within the request's 10 s context, which is
// shorter than the time a stalled reader may hold its stream).
func TestReadWorldStalledReaders(t *testing.T) {
	const stalled = 4
	dbtest.ForEachDSN(t, func(t *testing.T, dsn string) {
		// Four connections for every engine: two stream slots (half).
		opts := dbtest.Options()
		opts.MaxOpenConns = 4
		ctx := context.Background()
		db, err := sqlstore.Open(ctx, dsn, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		ts := testserver.Start(t, db)
		key := ts.Key(t, ts.Owner, wf.ScopeAll)
		// Large enough that a client that reads nothing leaves most of it
		// unsent (the client's receive buffer is made small below, the
		// server's send buffer grows to 4 MB at most), in pieces of the
		// store's default size.
		w := &wf.World{OwnerID: ts.Owner.ID, Name: "Stalled", Cols: 3, Rows: 2,
			JSON: json.RawMessage(`{"grid":{"cols":3,"rows":2},"fill":"` + strings.Repeat("abcd", 3<<19) + `"}`)}
		if err := ts.DB.CreateWorld(ctx, w); err != nil {
			t.Fatal(err)
		}
		// The healthy client reads another world kept in pieces, of 1 MB
		// (what it must wait for is a stream slot, whatever the size).
		h := &wf.World{OwnerID: ts.Owner.ID, Name: "Healthy", Cols: 3, Rows: 2,
			JSON: json.RawMessage(`{"grid":{"cols":3,"rows":2},"fill":"` + strings.Repeat("efgh", 1<<18) + `"}`)}
		if err := ts.DB.CreateWorld(ctx, h); err != nil {
			t.Fatal(err)
		}
		if _, _, info, err := ts.DB.ReadWorldDeferred(ctx, h.ID); err != nil || info == nil || info.Inline {
			t.Fatalf("the healthy client's world is not kept in pieces: %+v %v", info, err)
		}
		want := inMemoryAnswer(t, ts.DB, h.ID)
		body := callBody("1", "2025-11-25", wf.ToolReadWorld, mustJSON(map[string]string{"id": w.ID}), "")
		healthy := callBody("2", "2025-11-25", wf.ToolReadWorld, mustJSON(map[string]string{"id": h.ID}), "")
		addr := strings.TrimPrefix(ts.URL, "http://")
		raw := "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + key +
			"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2025-11-25\r\nContent-Length: " +
			strconv.Itoa(len(body)) + "\r\n\r\n" + body
		for i := range stalled {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			if err := conn.(*net.TCPConn).SetReadBuffer(4 << 10); err != nil {
				t.Fatal(err)
			}
			if _, err := io.WriteString(conn, raw); err != nil {
				t.Fatal(err)
			}
			// Wait (a bounded while) for the answer to start, so that the
			// stream is open on the server; then never read again.
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.ReadFull(conn, make([]byte, 100)); err != nil {
				t.Logf("stalled reader %d: no answer yet: %v", i, err)
			}
		}
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		start := time.Now()
		text, isErr, err := readWorldTextCtx(rctx, ts.MCPURL(), headers(key, "2025-11-25", wf.ToolReadWorld, nil), healthy)
		elapsed := time.Since(start)
		if err != nil || isErr || text != want {
			t.Fatalf("healthy reader after %v: %d bytes (isError %v, err %v), want the whole world (%d bytes)", elapsed, len(text), isErr, err, len(want))
		}
		t.Logf("healthy reader: the whole world (%d bytes) in %v behind %d stalled readers", len(want), elapsed, stalled)
	})
}

// lineSignal is an io.Writer for a slog handler that passes on each line
// written to it that contains want.
type lineSignal struct {
	want  string
	lines chan string
}

func (l *lineSignal) Write(p []byte) (int, error) {
	if s := string(p); strings.Contains(s, l.want) {
		select {
		case l.lines <- s:
		default:
		}
	}
	return len(p), nil
}

// TestReadWorldStreamStall: a client that stops reading a streamed answer
// larger than the connection's buffers has it given up after the stream
// stall: the request ends (its log line is written, its connection is
// closed and the store's spool file with it) while the client still reads
// nothing. (The server's write timeout is off here, as in testserver.)
func TestReadWorldStreamStall(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ts := testserver.Start(t, db)
		sig := &lineSignal{want: `"tool":"read_world"`, lines: make(chan string, 1)}
		api := httpapi.New(httpapi.Options{Auth: ts.Auth, MCP: ts.Tools.MCP(), Tools: ts.Tools, Store: ts.DB,
			Logger: slog.New(slog.NewJSONHandler(sig, nil)), StreamStall: 200 * time.Millisecond})
		addr := strings.TrimPrefix(testserver.Listen(t, api), "http://")
		key := ts.Key(t, ts.Owner, wf.ScopeAll)
		w := &wf.World{OwnerID: ts.Owner.ID, Name: "Stall", Cols: 3, Rows: 2,
			JSON: json.RawMessage(`{"grid":{"cols":3,"rows":2},"fill":"` + strings.Repeat("abcd", 3<<19) + `"}`)}
		if err := ts.DB.CreateWorld(context.Background(), w); err != nil {
			t.Fatal(err)
		}
		body := callBody("1", "2025-11-25", wf.ToolReadWorld, mustJSON(map[string]string{"id": w.ID}), "")
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if err := conn.(*net.TCPConn).SetReadBuffer(4 << 10); err != nil {
			t.Fatal(err)
		}
		raw := "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + key +
			"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2025-11-25\r\nContent-Length: " +
			strconv.Itoa(len(body)) + "\r\n\r\n" + body
		if _, err := io.WriteString(conn, raw); err != nil {
			t.Fatal(err)
		}
		select {
		case line := <-sig.lines:
			t.Logf("request ended while the client read nothing: %s", line)
		case <-time.After(30 * time.Second):
			t.Fatal("the stalled answer was not given up")
		}
	})
}
