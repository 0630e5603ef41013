package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRawClientRealServers: the raw client drives the plain net/http
// limit (Content-Length answers) and the go-sdk baseline (chunked
// answers, on both revisions) with many workers, every answer verified.
func TestRawClientRealServers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		h        http.Handler
		protocol string
	}{
		{"raw handler", NewRawHandler(), Protocol20260728},
		{"go-sdk baseline 2026-07-28", NewBaselineHandler(), Protocol20260728},
		{"go-sdk baseline 2025-11-25", NewBaselineHandler(), Protocol20251125},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := serve(t, tc.h)
			for _, client := range []string{ClientRaw, ClientNetHTTP} {
				res, err := Load(context.Background(), LoadConfig{
					Target:      ToolCallTarget(url, tc.protocol, BaselineTool),
					Body:        ToolCallBody(1, tc.protocol, BaselineTool, readArgs),
					Client:      client,
					Concurrency: 32,
					Duration:    300 * time.Millisecond,
					Warmup:      50 * time.Millisecond,
				})
				if err != nil {
					t.Fatal(err)
				}
				if res.Requests == 0 || res.Errors != 0 {
					t.Errorf("%s client: %v", client, res)
				}
			}
		})
	}
}

// TestRawClientSequencedBodies: with AppendBody every request carries its
// own body; the server sees each sequence number once.
func TestRawClientSequencedBodies(t *testing.T) {
	var (
		mu   sync.Mutex
		seen = map[string]int{}
	)
	raw := NewRawHandler()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Params struct {
				Arguments struct {
					Title string `json:"title"`
				} `json:"arguments"`
			} `json:"params"`
		}
		json.Unmarshal(body, &req)
		mu.Lock()
		seen[req.Params.Arguments.Title]++
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		raw.ServeHTTP(w, r)
	})
	url := serve(t, h)
	appendBody, err := SequencedBody(1, Protocol20260728, BaselineTool, map[string]any{"title": "PLACE"}, "PLACE", "page #")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Load(context.Background(), LoadConfig{
		Target:      ToolCallTarget(url, Protocol20260728, BaselineTool),
		AppendBody:  appendBody,
		Concurrency: 16,
		Duration:    5 * time.Second,
		MaxRequests: 500,
	})
	if err != nil || res.Errors != 0 {
		t.Fatalf("%v %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	for title, n := range seen {
		if n != 1 || !strings.HasPrefix(title, "page #") {
			t.Errorf("title %q sent %d times", title, n)
		}
	}
	if len(seen) < 500 {
		t.Errorf("%d distinct titles, want at least 500", len(seen))
	}
	if _, err := SequencedBody(1, Protocol20260728, BaselineTool, map[string]any{"a": "X", "b": "X"}, "X", "t"); err == nil {
		t.Error("a placeholder that occurs twice was accepted")
	}
	if _, err := SequencedBody(1, Protocol20260728, BaselineTool, map[string]any{"a": "X"}, "X", `"`); err == nil {
		t.Error("a tag that needs escaping was accepted")
	}
}

// cannedServer answers every request on 127.0.0.1:0 with the bytes resp
// returns for the request's number (from 0), then closes the connection
// if it returns close.
func cannedServer(t testing.TB, resp func(n int) (out []byte, close bool)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var (
		mu sync.Mutex
		n  int
	)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				br := bufio.NewReader(conn)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					mu.Lock()
					i := n
					n++
					mu.Unlock()
					out, closeAfter := resp(i)
					if _, err := conn.Write(out); err != nil || closeAfter {
						return
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/mcp"
}

const okBody = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`

func lengthResponse(status, body string, extra ...string) []byte {
	return []byte("HTTP/1.1 " + status + "\r\nContent-Type: application/json\r\n" + strings.Join(extra, "") +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}

// TestRawClientResponses: the raw client reads well-formed answers of
// every framing, and counts every bad one as an error with a clear
// message, a connection cut short included.
func TestRawClientResponses(t *testing.T) {
	chunked := func(body string, chunk int) string {
		var b strings.Builder
		for len(body) > 0 {
			n := min(chunk, len(body))
			b.WriteString(strconv.FormatInt(int64(n), 16) + "\r\n" + body[:n] + "\r\n")
			body = body[n:]
		}
		return b.String() + "0\r\n\r\n"
	}
	head := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	for _, tc := range []struct {
		name  string
		resp  []byte
		close bool
		err   string // "" = every answer verified
	}{
		{"content-length", lengthResponse("200 OK", okBody), false, ""},
		{"content-length, connection close", lengthResponse("200 OK", okBody, "Connection: close\r\n"), true, ""},
		{"chunked", []byte(head + "Transfer-Encoding: chunked\r\n\r\n" + chunked(okBody, 7)), false, ""},
		{"chunked with extension and trailer", []byte(head + "Transfer-Encoding: chunked\r\n\r\n" +
			strconv.FormatInt(int64(len(okBody)), 16) + ";x=1\r\n" + okBody + "\r\n0\r\nX-Trailer: 1\r\n\r\n"), false, ""},
		{"to the end of the connection", []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" + okBody), true, ""},
		{"100 continue first", append([]byte("HTTP/1.1 100 Continue\r\n\r\n"), lengthResponse("200 OK", okBody)...), false, ""},
		{"wrong status", lengthResponse("500 Internal Server Error", okBody), false, "HTTP 500"},
		{"truncated body", lengthResponse("200 OK", okBody)[:len(lengthResponse("200 OK", okBody))-10], true, "connection closed before the response ended"},
		{"truncated head", []byte("HTTP/1.1 200 OK\r\nContent-Le"), true, "connection closed before the response ended"},
		{"no response", nil, true, "connection closed before the response ended"},
		{"truncated chunk", []byte(head + "Transfer-Encoding: chunked\r\n\r\n" + chunked(okBody, 7)[:30]), true, "connection closed before the response ended"},
		{"bad chunk size", []byte(head + "Transfer-Encoding: chunked\r\n\r\nzz\r\n" + okBody + "\r\n0\r\n\r\n"), false, "bad chunk size"},
		{"chunk without CRLF", []byte(head + "Transfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n"), false, "chunk data not followed by CRLF"},
		{"gzip coding", []byte(head + "Transfer-Encoding: gzip\r\n\r\n"), false, "unsupported Transfer-Encoding"},
		{"length and coding", []byte(head + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"), false, "both Content-Length and Transfer-Encoding"},
		{"two lengths", []byte(head + "Content-Length: 5\r\nContent-Length: 6\r\n\r\n{}{}{}"), false, "two different Content-Length"},
		{"bad length", []byte(head + "Content-Length: -1\r\n\r\n"), false, "bad Content-Length"},
		{"bad status line", []byte("HTTP/2 200 OK\r\nContent-Length: 0\r\n\r\n"), false, "bad status line"},
		{"bytes after the body", append(lengthResponse("200 OK", okBody), "junk"...), false, "bytes after its end"},
		{"not JSON", lengthResponse("200 OK", "<html>"), false, "not a JSON-RPC response"},
		{"JSON-RPC error", lengthResponse("200 OK", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}`), false, "JSON-RPC error -32602"},
		{"isError", lengthResponse("200 OK", `{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"boom"}]}}`), false, "tool error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := cannedServer(t, func(int) ([]byte, bool) { return tc.resp, tc.close })
			res, err := Load(context.Background(), LoadConfig{
				Target:      ToolCallTarget(url, Protocol20260728, BaselineTool),
				Body:        ToolCallBody(1, Protocol20260728, BaselineTool, readArgs),
				Concurrency: 2,
				Duration:    10 * time.Second,
				MaxRequests: 20,
				Timeout:     5 * time.Second,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != 20 {
				t.Fatalf("%d requests, want 20", res.Requests)
			}
			switch {
			case tc.err == "" && res.Errors != 0:
				t.Errorf("%d errors: %s", res.Errors, res.FirstError)
			case tc.err != "" && (res.Errors != res.Requests || !strings.Contains(res.FirstError, tc.err)):
				t.Errorf("%d of %d failed, first %q; want all failing with %q", res.Errors, res.Requests, res.FirstError, tc.err)
			}
		})
	}
}

// TestRawClientRecovers: after a bad answer the worker dials again and
// the next answers count as good.
func TestRawClientRecovers(t *testing.T) {
	good := lengthResponse("200 OK", okBody)
	url := cannedServer(t, func(n int) ([]byte, bool) {
		if n%5 == 0 {
			return good[:len(good)-3], true
		}
		return good, false
	})
	res, err := Load(context.Background(), LoadConfig{
		Target:      ToolCallTarget(url, Protocol20260728, BaselineTool),
		Body:        ToolCallBody(1, Protocol20260728, BaselineTool, readArgs),
		Concurrency: 1,
		Duration:    10 * time.Second,
		MaxRequests: 50,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 50 || res.Errors != 10 {
		t.Errorf("%d requests, %d errors; want 50 and 10", res.Requests, res.Errors)
	}
}

// TestRawClientTimeoutAndCancel: a server that never answers costs a
// request its timeout, and cancelling the run ends it at once.
func TestRawClientTimeoutAndCancel(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go io.Copy(io.Discard, conn) // reads, never answers
		}
	}()
	url := "http://" + ln.Addr().String() + "/mcp"
	res, err := Load(context.Background(), LoadConfig{
		Target:      ToolCallTarget(url, Protocol20260728, BaselineTool),
		Body:        ToolCallBody(1, Protocol20260728, BaselineTool, readArgs),
		Duration:    50 * time.Millisecond,
		Timeout:     100 * time.Millisecond,
		MaxRequests: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 1 || !strings.Contains(res.FirstError, "timeout") {
		t.Errorf("%v; want one timeout", res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	res, err = Load(ctx, LoadConfig{
		Target:      ToolCallTarget(url, Protocol20260728, BaselineTool),
		Body:        ToolCallBody(1, Protocol20260728, BaselineTool, readArgs),
		Concurrency: 4,
		Duration:    time.Minute,
	})
	if err != context.Canceled {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if res.Errors != 0 {
		t.Errorf("cancelled requests counted as errors: %v", res)
	}
}

// TestRawClientConfig: a target the raw client cannot speak to is an
// error before any request.
func TestRawClientConfig(t *testing.T) {
	for _, cfg := range []LoadConfig{
		{Target: Target{URL: "https://127.0.0.1:1/mcp"}, Body: []byte("{}"), Duration: time.Second},
		{Target: Target{URL: "http://127.0.0.1:1/mcp", Header: http.Header{"X": {"a\r\nb"}}}, Body: []byte("{}"), Duration: time.Second},
		{Target: Target{URL: "http://127.0.0.1:1/mcp"}, Body: []byte("{}"), Duration: time.Second, Client: "curl"},
	} {
		if _, err := Load(context.Background(), cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}

// headCases are response heads for TestParseResponseHead and the fuzz
// corpus.
var headCases = []struct {
	head string
	want responseHead
	err  string
}{
	{"HTTP/1.1 200 OK\r\nContent-Length: 12\r\nContent-Type: application/json", responseHead{status: 200, contentLength: 12, contentType: []byte("application/json")}, ""},
	{"HTTP/1.1 200\r\ncontent-length:  0 ", responseHead{status: 200, contentLength: 0}, ""},
	{"HTTP/1.0 404 Not Found", responseHead{status: 404, contentLength: -1, close: true}, ""},
	{"HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\nConnection: keep-alive, close", responseHead{status: 200, contentLength: -1, chunked: true, close: true}, ""},
	{"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5", responseHead{status: 200, contentLength: 5}, ""},
	{"HTTP/1.1 20 OK", responseHead{}, "bad status line"},
	{"HTTP/1.1 600 Nope", responseHead{}, "bad status line"},
	{"HTTP/1.1 2x0 OK", responseHead{}, "bad status line"},
	{"HTTP/2 200 OK", responseHead{}, "bad status line"},
	{"HTTP/1.1 200 OK\r\n folded", responseHead{}, "folded header line"},
	{"HTTP/1.1 200 OK\r\nNo-Colon", responseHead{}, "bad header line"},
	{"HTTP/1.1 200 OK\r\nBad Name: x", responseHead{}, "bad header line"},
	{"HTTP/1.1 200 OK\r\nContent-Length: 1e3", responseHead{}, "bad Content-Length"},
	{"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999", responseHead{}, "bad Content-Length"},
	{"HTTP/1.1 200 OK\r\nContent-Length: 999999999999", responseHead{}, "over the"},
	{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked", responseHead{}, "unsupported Transfer-Encoding"},
	{"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked", responseHead{}, "unsupported Transfer-Encoding"},
	{"HTTP/1.1 200 OK\r\n\r\nX: y", responseHead{}, "empty line"},
	{"HTTP/1.0 200 0\n\n00", responseHead{}, "bare CR or LF"},
	{"HTTP/1.1 200 OK\r\nX: a\rb", responseHead{}, "bare CR or LF"},
}

func TestParseResponseHead(t *testing.T) {
	for _, tc := range headCases {
		h, err := parseResponseHead([]byte(tc.head))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.head, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.head, err)
			continue
		}
		if h.status != tc.want.status || h.contentLength != tc.want.contentLength || h.chunked != tc.want.chunked ||
			h.close != tc.want.close || string(h.contentType) != string(tc.want.contentType) {
			t.Errorf("%q: got %+v, want %+v", tc.head, h, tc.want)
		}
	}
}

// FuzzReadResponse feeds arbitrary bytes to the raw client's response
// reader: it never panics, a body it returns is within the limits and as
// long as a Content-Length says, and where net/http reads the same bytes
// to the same status, the bodies agree.
func FuzzReadResponse(f *testing.F) {
	for _, tc := range headCases {
		f.Add([]byte(tc.head + "\r\n\r\n" + okBody))
	}
	f.Add(lengthResponse("200 OK", okBody))
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n0\r\nT: 1\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rr := newResponseReader(bytes.NewReader(data))
		rr.buf = make([]byte, 64) // small, to exercise the buffer's moves
		h, body, err := rr.readResponse()
		if err != nil {
			return
		}
		if len(body) > MaxResponseBody {
			t.Fatalf("body of %d bytes", len(body))
		}
		if !h.chunked && h.contentLength >= 0 && h.status != 204 && h.status != 304 && int64(len(body)) != h.contentLength {
			t.Fatalf("body of %d bytes, Content-Length %d", len(body), h.contentLength)
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(data)), nil)
		if err != nil || resp.StatusCode != h.status {
			return
		}
		want, err := io.ReadAll(resp.Body)
		if err != nil {
			return
		}
		if !bytes.Equal(body, want) {
			t.Fatalf("body %q, net/http reads %q", body, want)
		}
	})
}

// BenchmarkRawRoundTrip measures the raw client's hot loop (send, read
// the answer, verify it, record its latency) against a server that
// answers with canned bytes: its allocations per request must be 0.
func BenchmarkRawRoundTrip(b *testing.B) {
	text, _ := json.Marshal(BaselinePayload())
	resp := lengthResponse("200 OK", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":`+string(text)+`}]}}`)
	conn, done := rawLoop(b, resp)
	defer done()
	body := ToolCallBody(1, Protocol20260728, BaselineTool, readArgs)
	var h histogram
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(resp)))
	for b.Loop() {
		t0 := time.Now()
		status, header, respBody, err := conn.roundTrip(ctx, t0, body)
		if err == nil {
			err = DefaultVerify(status, header, respBody)
		}
		if err != nil {
			b.Fatal(err)
		}
		h.record(time.Since(t0))
	}
}

// TestRawRoundTripAllocs: the raw client's hot loop allocates nothing per
// request once its buffers are grown.
func TestRawRoundTripAllocs(t *testing.T) {
	conn, done := rawLoop(t, lengthResponse("200 OK", okBody))
	defer done()
	body := ToolCallBody(1, Protocol20260728, BaselineTool, readArgs)
	var h histogram
	ctx := context.Background()
	allocs := testing.AllocsPerRun(500, func() {
		t0 := time.Now()
		status, header, respBody, err := conn.roundTrip(ctx, t0, body)
		if err == nil {
			err = DefaultVerify(status, header, respBody)
		}
		if err != nil {
			t.Fatal(err)
		}
		h.record(time.Since(t0))
	})
	if allocs != 0 {
		t.Errorf("%v allocations per request", allocs)
	}
}

// rawLoop returns a raw connection to a server that answers each request
// (of the size ToolCallBody's read_world makes) with resp, allocating
// nothing per request.
func rawLoop(t testing.TB, resp []byte) (*rawConn, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/mcp"
	req, err := newRawRequest(ToolCallTarget(url, Protocol20260728, BaselineTool))
	if err != nil {
		t.Fatal(err)
	}
	body := ToolCallBody(1, Protocol20260728, BaselineTool, readArgs)
	reqLen := len(req.prefix) + len(strconv.Itoa(len(body))) + 4 + len(body)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		buf := make([]byte, reqLen)
		for {
			if _, err := io.ReadFull(conn, buf); err != nil {
				return
			}
			if _, err := conn.Write(resp); err != nil {
				return
			}
		}
	}()
	c := newRawConn(req, 10*time.Second, true)
	return c, func() { c.close(); ln.Close() }
}

// TestVerifyProposal: a propose answer passes only with a proposal id.
func TestVerifyProposal(t *testing.T) {
	h := http.Header{"Content-Type": {"application/json"}}
	wrap := func(text string) []byte {
		q, _ := json.Marshal(text)
		return []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":` + string(q) + `}]}}`)
	}
	for _, tc := range []struct {
		name string
		body []byte
		err  string
	}{
		{"proposal", wrap(`{"proposal_id":"p_1","audit_id":"p_1"}`), ""},
		{"empty id", wrap(`{"proposal_id":""}`), "no proposal_id"},
		{"not JSON", wrap(`filed`), "no proposal_id"},
		{"no content", []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`), "no text content"},
		{"tool error", []byte(`{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"quota"}]}}`), "tool error"},
	} {
		err := VerifyProposal(200, h, tc.body)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.err)
		}
	}
}

// TestCoreTimes reads CPU 0's times from /proc/stat (Linux only).
func TestCoreTimes(t *testing.T) {
	busy, total, err := CoreTimes(0)
	if err != nil {
		t.Skipf("no /proc/stat: %v", err)
	}
	if total <= 0 || busy < 0 || busy > total {
		t.Errorf("busy %v, total %v", busy, total)
	}
	if _, _, err := CoreTimes(1 << 20); err == nil {
		t.Error("no error for a CPU that does not exist")
	}
}
