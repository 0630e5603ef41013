package httpapi

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/jsonscan"
)

// ToolRunner runs tool calls without MCP framing, for the fast path
// (package mcpserver implements it).
type ToolRunner interface {
	// CallToolStream runs the named tool for actor and returns the text
	// of the one content block the tool result holds and whether the
	// result is an error; ok is false, with nothing run, if no such tool
	// exists. A result too large to hold comes back as stream instead
	// (text "", isError false): the writer of the text, to be called
	// exactly once, after which the text is complete unless it failed.
	CallToolStream(ctx context.Context, actor *worldforge.Actor, name string, args json.RawMessage) (text string, stream func(io.Writer) error, isError, ok bool)
	// Implementation is the serverInfo the go-sdk server announces.
	Implementation() *mcp.Implementation
}

// The fast path.
//
// The go-sdk's stateless handler builds a whole server session for every
// POST: a connection, goroutines, a stream, and a JSON decoder with a fresh
// buffer per decode. For the one request that dominates an agent's traffic,
// a self-contained tools/call, none of that carries information: the answer
// depends only on the body, the actor and the tool. fastToolCall answers
// such requests itself, decoding the body once (with the go-sdk's own
// jsonrpc and mcp types and its JSON decoder) and encoding the reply once.
//
// It takes a request only when it is certain the go-sdk would hand that
// request unchanged to the tool handler and send back nothing but the
// handler's result; anything unusual — another method, a batch, an
// unsupported protocol version, a _meta or header the SDK would reject, an
// unknown tool, a parameter the SDK would interpret — goes to the go-sdk
// handler, which then owns the answer. The differential tests in
// fastpath_test.go send one corpus to both paths and require byte-identical
// responses.

// fastProtocols are the protocol versions the fast path serves (the
// Mcp-Protocol-Version header), with whether each is the stateless
// per-request-_meta revision: every revision the go-sdk accepts. No header
// ("") is 2025-03-26, as the MCP spec's backwards-compatibility rule and
// the go-sdk have it; on it and on 2024-11-05 the go-sdk answers a single
// tools/call exactly as on 2025-06-18 (it differs only in accepting
// batches, which the fast path leaves to it). So every plain read_world,
// whatever the client's revision, is streamed rather than built whole.
var fastProtocols = map[string]bool{
	"":           false,
	"2024-11-05": false,
	"2025-03-26": false,
	"2025-06-18": false,
	"2025-11-25": false,
	"2026-07-28": true,
}

const (
	methodToolsCall = "tools/call"
	// newProtocol is the revision whose requests carry their own _meta.
	newProtocol = "2026-07-28"
)

// newProtocolMetaKeys are the _meta keys a 2026-07-28 request may carry on
// the fast path; any other key sends the request to the go-sdk.
var newProtocolMetaKeys = map[string]bool{
	mcp.MetaKeyProtocolVersion:    true,
	mcp.MetaKeyClientInfo:         true,
	mcp.MetaKeyClientCapabilities: true,
	mcp.MetaKeyLogLevel:           true,
}

// clientCapabilitiesV2 has the shape the go-sdk decodes a 2026-07-28
// request's _meta client capabilities into (its own type is unexported), so
// that the fast path refuses exactly what the SDK refuses.
type clientCapabilitiesV2 struct {
	mcp.ClientCapabilities
	Roots *mcp.RootCapabilities `json:"roots,omitempty"`
}

// fastResponder holds what the fast path precomputes.
type fastResponder struct {
	tools ToolRunner
	// metaPrefix opens a 2026-07-28 result: {"_meta":{serverInfo},
	metaPrefix []byte
	// escapes keeps the escaping of long texts answered again
	// (escapememo.go).
	escapes *escapeMemo
}

func newFastResponder(tools ToolRunner) (*fastResponder, error) {
	meta, err := json.Marshal(mcp.Meta{mcp.MetaKeyServerInfo: tools.Implementation()})
	if err != nil {
		return nil, err
	}
	prefix := append([]byte(`{"_meta":`), meta...)
	prefix = append(prefix, ',')
	return &fastResponder{tools: tools, metaPrefix: prefix, escapes: newEscapeMemo()}, nil
}

// fastDecline says why fastToolCall left a request to the go-sdk handler:
// one code per place it declines, from a fixed list (fastDeclineCodes),
// which the request log (fast_declined) and the metric
// worldforge_mcp_requests_total (reason) carry. fastServed: it answered.
type fastDecline uint8

const (
	fastServed fastDecline = iota
	// The server runs without the fast path (serve --fast-path=false).
	declineDisabled
	// Mcp-Protocol-Version names a revision the fast path does not serve.
	declineProtocolVersion
	// Content-Type is not application/json.
	declineContentType
	// Accept does not take both application/json and text/event-stream.
	declineAccept
	// The request carries Last-Event-ID (a resumption).
	declineLastEventID
	// The body is a JSON array: a batch.
	declineBatch
	// The body is JSON but neither an object nor an array.
	declineNotObject
	// The body is not a JSON-RPC request the SDK would decode as one
	// (no "jsonrpc":"2.0", a bad id or method, a response, too deep).
	declineNotRequest
	// The request has no id: a notification.
	declineNotification
	// The method is not tools/call (initialize, tools/list, …).
	declineNotToolsCall
	// The tools/call params are not the plain shape the fast path takes
	// (keys other than name, arguments and _meta, escaped keys, a _meta
	// the SDK checks or refuses).
	declineParams
	// A 2026-07-28 request whose Mcp-Method or Mcp-Name header does not
	// match its body.
	declineMCPHeaders
	// The request id cannot be encoded as the fast path writes ids.
	declineID
	// The tool is not one the server has: the SDK's error.
	declineUnknownTool

	numFastDeclines
)

// fastDeclineCodes are the codes of the fastDecline values, by value;
// fastServed's is "".
var fastDeclineCodes = [numFastDeclines]string{
	fastServed:             "",
	declineDisabled:        "disabled",
	declineProtocolVersion: "protocol_version",
	declineContentType:     "content_type",
	declineAccept:          "accept",
	declineLastEventID:     "last_event_id",
	declineBatch:           "batch",
	declineNotObject:       "not_object",
	declineNotRequest:      "not_request",
	declineNotification:    "notification",
	declineNotToolsCall:    "not_tools_call",
	declineParams:          "params",
	declineMCPHeaders:      "mcp_headers",
	declineID:              "id",
	declineUnknownTool:     "unknown_tool",
}

// String returns the decline's code.
func (d fastDecline) String() string { return fastDeclineCodes[d] }

// fastToolCall answers r if it is a self-contained tools/call (see above)
// and returns fastServed; otherwise it has written nothing and returns why
// it declined.
func (s *Server) fastToolCall(w http.ResponseWriter, r *http.Request, body []byte) fastDecline {
	f := s.fast
	if f == nil {
		return declineDisabled
	}
	h := r.Header
	version := h.Get("Mcp-Protocol-Version")
	isNew, ok := fastProtocols[version]
	if !ok {
		return declineProtocolVersion
	}
	if baseMediaType(h.Get("Content-Type")) != "application/json" {
		return declineContentType
	}
	if !acceptsJSONAndStream(h.Values("Accept")) {
		return declineAccept
	}
	if len(h.Values("Last-Event-ID")) > 0 {
		return declineLastEventID
	}
	if i := firstNonSpace(body); i < 0 || body[i] != '{' {
		// A batch, or not an object: the SDK's.
		if i >= 0 && body[i] == '[' {
			return declineBatch
		}
		return declineNotObject
	}
	req, ok := decodeRequest(body)
	if !ok {
		return declineNotRequest
	}
	if !req.IsCall() {
		return declineNotification
	}
	if req.Method != methodToolsCall {
		return declineNotToolsCall
	}
	params, ok := decodeCallParams(req.Params, isNew)
	if !ok {
		return declineParams
	}
	if isNew && (h.Get("Mcp-Method") != methodToolsCall || h.Get("Mcp-Name") != params.Name) {
		return declineMCPHeaders
	}
	buf := responseBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	defer responseBuffers.Put(buf)
	if err := f.encodeHead(buf, req.ID, isNew); err != nil {
		// The SDK would fail the same way on an id it cannot encode; we
		// have written nothing and run nothing, so let the SDK answer.
		return declineID
	}
	actor := worldforge.ActorFromContext(r.Context())
	text, stream, isError, ok := f.tools.CallToolStream(r.Context(), actor, params.Name, params.Arguments)
	if !ok {
		return declineUnknownTool // the SDK's error
	}
	s.fastN.Add(1)
	if stream != nil {
		s.fastStream(w, r, buf, stream, isNew)
		return fastServed
	}
	f.encodeText(buf, text)
	f.encodeTail(buf, isError, isNew)
	writeFastHeader(w)
	w.Write(buf.Bytes())
	return fastServed
}

// writeFastHeader sends the fast path's status and headers. Their values
// are shared slices, set without Header.Set's slice per value: net/http
// only reads them, and an Add to the same key appends to a slice of
// length and capacity one, which copies it.
func writeFastHeader(w http.ResponseWriter) {
	wh := w.Header()
	wh["Cache-Control"] = fastCacheControl[:1:1]
	wh["Content-Type"] = fastContentType[:1:1]
	w.WriteHeader(http.StatusOK)
}

var (
	fastCacheControl = []string{"no-cache, no-transform"}
	fastContentType  = []string{"application/json"}
)

// streamBufferSize is what the fast path holds of a streamed answer
// before writing it on.
const streamBufferSize = 32 << 10

// DefaultStreamStall is how long one write of a streamed answer (at most
// streamBufferSize bytes) may wait for the client to take it before the
// answer is given up and the connection closed: a client that stops
// reading keeps its answer's resources (a goroutine, a connection, the
// store's spool file) for this long, not for the server's whole write
// timeout. The write timeout still bounds the whole answer.
const DefaultStreamStall = 10 * time.Second

// fastStream sends a result whose text is written by stream (read_world of
// a world the store keeps in pieces): the response's head (in buf), then
// the text escaped as encoding/json escapes a string, as stream writes it,
// through a buffer of streamBufferSize, then the tail: byte for byte what
// encodeText makes of the whole text, with memory bounded by the buffer and
// the store's chunk, not the text. net/http sends it chunked (as it does
// any answer over its 2 KB buffer), so an answer under the buffer's size
// still goes out in one write with a Content-Length, as encode's would.
//
// Every write to the connection must complete within the stream stall
// (Options.StreamStall) and before the server's WriteTimeout from the
// answer's start; a client that stops reading for longer has its answer
// cut and its connection closed, which ends the stream and releases what
// it holds.
//
// Once the first bytes have gone out, the status cannot change: if stream
// fails after that for any reason but the client's connection (a store
// error mid-document), the error is logged and the connection aborted
// (http.ErrAbortHandler), so the client sees a cut response, never a
// complete-looking wrong one. A failure before anything went out is
// answered as the go-sdk path answers it: an internal_error tool result.
func (s *Server) fastStream(w http.ResponseWriter, r *http.Request, buf *bytes.Buffer, stream func(io.Writer) error, isNew bool) {
	lw := &lazyResponse{w: w, rc: http.NewResponseController(w), stall: cmp.Or(s.opts.StreamStall, DefaultStreamStall)}
	if srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server); srv != nil && srv.WriteTimeout > 0 {
		lw.until = time.Now().Add(srv.WriteTimeout)
	}
	defer lw.done()
	bw := bufio.NewWriterSize(lw, streamBufferSize)
	bw.Write(buf.Bytes())
	bw.WriteByte('"')
	esc := newJSONStringWriter(bw, streamBufferSize)
	err := stream(esc)
	if err == nil {
		err = esc.Close()
	}
	if err == nil {
		var tail bytes.Buffer
		tail.WriteByte('"')
		s.fast.encodeTail(&tail, false, isNew)
		bw.Write(tail.Bytes())
		err = bw.Flush()
		if err == nil && lw.n > netHTTPUnchunked {
			err = lw.flush() // what net/http holds, under the deadline
		}
	}
	switch {
	case err == nil:
	case !lw.started:
		// Nothing sent: answer with the error result instead.
		head := buf.Bytes()
		var out bytes.Buffer
		out.Write(head)
		s.fast.encodeText(&out, worldforge.InternalErrorText)
		s.fast.encodeTail(&out, true, isNew)
		writeFastHeader(w)
		w.Write(out.Bytes())
	case lw.err != nil:
		// The client stopped reading or went away: nobody to tell.
	default:
		s.log.ErrorContext(r.Context(), "fast path: aborting a response cut short", "err", err)
		panic(http.ErrAbortHandler)
	}
}

// netHTTPUnchunked is the most net/http holds of an answer before it
// sends the headers (bufferBeforeChunkingSize): an answer no longer than
// that goes out with a Content-Length when the handler returns, as the
// go-sdk's does, so fastStream does not flush it.
const netHTTPUnchunked = 2048

// lazyResponse sends the fast path's status and headers on the first
// write, and remembers whether it wrote and the writer's first error.
// Each write gets the connection's write deadline set to the stall from
// now (no later than until, when set).
type lazyResponse struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	stall   time.Duration
	until   time.Time
	started bool
	n       int64 // bytes written
	err     error
}

// deadline sets the write deadline for the next write.
func (l *lazyResponse) deadline() {
	d := time.Now().Add(l.stall)
	if !l.until.IsZero() && l.until.Before(d) {
		d = l.until
	}
	_ = l.rc.SetWriteDeadline(d) // ErrNotSupported: a writer of no connection
}

func (l *lazyResponse) Write(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	if !l.started {
		l.started = true
		writeFastHeader(l.w)
	}
	l.deadline()
	n, err := l.w.Write(p)
	l.n += int64(n)
	if err != nil && l.err == nil {
		l.err = err
	}
	return n, err
}

// flush sends what net/http buffers of the answer, under the deadline.
func (l *lazyResponse) flush() error {
	l.deadline()
	err := l.rc.Flush()
	if err != nil && l.err == nil {
		l.err = err
	}
	return err
}

// done puts back the deadline the connection would have had: the
// server's write timeout from the answer's start, or none.
func (l *lazyResponse) done() {
	if l.started {
		_ = l.rc.SetWriteDeadline(l.until)
	}
}

var responseBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// The JSON-RPC response for a tool result is encodeHead, encodeText and
// encodeTail: byte for byte what the go-sdk writes, the envelope with the
// id (HTML characters not escaped), and the result as mcp.CallToolResult
// marshals it (HTML characters escaped), with _meta.serverInfo and
// resultType on the 2026-07-28 revision.

// encodeText writes the text as encoding/json writes a string
// (appendJSONText; FuzzAppendJSONText holds it to encoding/json), the
// escaping of a long text answered again taken from f.escapes.
func (f *fastResponder) encodeText(buf *bytes.Buffer, text string) {
	if f.escapes == nil {
		buf.Write(appendJSONText(buf.AvailableBuffer(), text))
		return
	}
	buf.Write(f.escapes.appendText(buf.AvailableBuffer(), text))
}

// encodeHead writes the response up to the text's opening quote.
func (f *fastResponder) encodeHead(buf *bytes.Buffer, id jsonrpc.ID, isNew bool) error {
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	switch v := id.Raw().(type) {
	case int64:
		var tmp [24]byte
		buf.Write(strconv.AppendInt(tmp[:0], v, 10))
	case string:
		enc := json.NewEncoder(buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
	default:
		return errUnencodableID
	}
	buf.WriteString(`,"result":`)
	if isNew {
		buf.Write(f.metaPrefix)
	} else {
		buf.WriteByte('{')
	}
	buf.WriteString(`"content":[{"type":"text","text":`)
	return nil
}

// encodeTail writes the response after the text's closing quote.
func (f *fastResponder) encodeTail(buf *bytes.Buffer, isError, isNew bool) {
	buf.WriteString(`}]`)
	if isError {
		buf.WriteString(`,"isError":true`)
	}
	if isNew {
		buf.WriteString(`,"resultType":"complete"`)
	}
	buf.WriteString(`}}`)
}

var errUnencodableID = &worldforge.Error{Code: worldforge.EInternal, Detail: "unencodable JSON-RPC id"}

// decodeCallParams decodes tools/call params as the go-sdk does and
// reports whether they are plain: an object with only name, arguments and
// _meta, no key twice, and a _meta the SDK accepts for this revision
// without acting on it.
//
// Whether a _meta passes is a function of its bytes and the revision
// alone, and a client sends the same _meta on every call: a _meta that
// passed is remembered (metaVerdicts) and the next request that carries
// the very same bytes decodes only name and arguments, with the same
// decoder and the same field types, skipping the _meta map and the two
// re-encodings of its values, which cost a tenth of the server's CPU on a
// no-op tool.
func decodeCallParams(raw json.RawMessage, isNew bool) (*mcp.CallToolParamsRaw, bool) {
	if i := firstNonSpace(raw); i < 0 || raw[i] != '{' {
		return nil, false
	}
	vals, ok := plainKeys(raw)
	if !ok {
		return nil, false
	}
	if metaVerdicts.passed(vals.meta, isNew) {
		if name, ok := plainString(vals.name); ok && !isNull(vals.arguments) {
			// What the decoder below makes of them: the name's text, and
			// the arguments as written (raw was checked valid JSON).
			return &mcp.CallToolParamsRaw{Name: name, Arguments: vals.arguments}, true
		}
		var p nameArgs
		if err := sdkUnmarshal(raw, &p); err != nil {
			return nil, false
		}
		return &mcp.CallToolParamsRaw{Name: p.Name, Arguments: p.Arguments}, true
	}
	p, ok := checkCallParams(raw, isNew)
	if ok {
		metaVerdicts.pass(vals.meta, isNew)
	}
	return p, ok
}

// nameArgs is mcp.CallToolParamsRaw's name and arguments, with their JSON
// names and types.
type nameArgs struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// checkCallParams is decodeCallParams's whole decoding and check, for
// params plainKeys passed.
func checkCallParams(raw json.RawMessage, isNew bool) (*mcp.CallToolParamsRaw, bool) {
	var p *mcp.CallToolParamsRaw
	if err := sdkUnmarshal(raw, &p); err != nil || p == nil {
		return nil, false
	}
	if !isNew {
		// A legacy request that names a protocol version in _meta is
		// checked against the header by the SDK.
		if _, ok := p.Meta[mcp.MetaKeyProtocolVersion]; ok {
			return nil, false
		}
		return p, true
	}
	if p.Meta == nil {
		return nil, false
	}
	for k := range p.Meta {
		if !newProtocolMetaKeys[k] {
			return nil, false
		}
	}
	if v, _ := p.Meta[mcp.MetaKeyProtocolVersion].(string); v != newProtocol {
		return nil, false
	}
	if v, ok := p.Meta[mcp.MetaKeyClientInfo]; ok {
		var impl *mcp.Implementation
		if v == nil || remarshal(v, &impl) != nil {
			return nil, false
		}
	}
	v := p.Meta[mcp.MetaKeyClientCapabilities]
	var caps *clientCapabilitiesV2
	if v == nil || remarshal(v, &caps) != nil {
		return nil, false
	}
	return p, true
}

// metaVerdictMax bounds what metaVerdicts holds: this many _meta values,
// each at most metaVerdictMaxLen bytes. A _meta beyond either is checked
// in full every time.
const (
	metaVerdictMax    = 256
	metaVerdictMaxLen = 1024
)

// metaVerdicts remembers the _meta values (their bytes as sent, with the
// revision) that passed checkCallParams: at most metaVerdictMax of them,
// the first seen, never evicted, so that a client cycling through values
// cannot make it grow or churn.
var metaVerdicts metaVerdictSet

// metaVerdictSet is a set read without a lock or an allocation: an
// immutable map per revision, replaced by a copy with one more entry.
type metaVerdictSet struct {
	mu  sync.Mutex                             // serializes pass
	set [2]atomic.Pointer[map[string]struct{}] // by isNew
}

func revision(isNew bool) int {
	if isNew {
		return 1
	}
	return 0
}

// passed reports whether meta (nil: no _meta) passed before on this
// revision.
func (v *metaVerdictSet) passed(meta []byte, isNew bool) bool {
	m := v.set[revision(isNew)].Load()
	if m == nil {
		return false
	}
	_, ok := (*m)[string(meta)] // the conversion does not allocate
	return ok
}

// pass remembers that meta passed on this revision, while there is room.
func (v *metaVerdictSet) pass(meta []byte, isNew bool) {
	if len(meta) > metaVerdictMaxLen {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	p := &v.set[revision(isNew)]
	old := p.Load()
	var n int
	if old != nil {
		if _, ok := (*old)[string(meta)]; ok {
			return
		}
		n = len(*old)
	}
	if n >= metaVerdictMax {
		return
	}
	m := make(map[string]struct{}, n+1)
	if old != nil {
		for k := range *old {
			m[k] = struct{}{}
		}
	}
	m[string(meta)] = struct{}{}
	p.Store(&m)
}

// paramValues are the values of a tools/call's params, as written (nil
// when absent).
type paramValues struct {
	name, arguments, meta []byte
}

// plainKeys reports whether the JSON object raw has only the keys name,
// arguments and _meta, each at most once, spelled without escapes, and
// returns their values' bytes. raw is a value the request's decoding
// accepted, so jsonscan's Loose scan, which delimits the members' values
// without checking them, reads it as encoding/json does; anything
// unexpected, or a key with an escape (which then names none of the
// three), is "not plain": the go-sdk handler takes the request. (It was an
// encoding/json Decoder, whose buffer and tokens cost 3 % of the server's
// CPU.)
func plainKeys(raw []byte) (vals paramValues, ok bool) {
	var seen [3]bool
	it := jsonscan.Loose.Members(raw)
	for it.Next() {
		m := it.Member()
		key := m.RawKey
		var k int
		switch string(key[1 : len(key)-1]) {
		case "name":
			k = 0
			vals.name = m.Value
		case "arguments":
			k = 1
			vals.arguments = m.Value
		case "_meta":
			k = 2
			vals.meta = m.Value
		default:
			return paramValues{}, false
		}
		if seen[k] {
			return paramValues{}, false
		}
		seen[k] = true
	}
	if it.Err() != nil {
		return paramValues{}, false
	}
	return vals, true
}

// plainString returns the text of the valid JSON value v when it is a
// string written without escapes in valid UTF-8: what decoding it gives,
// byte for byte.
func plainString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 || !utf8.Valid(v) {
		return "", false
	}
	return string(v[1 : len(v)-1]), true
}

// isNull reports whether the JSON value v is null.
func isNull(v []byte) bool { return string(v) == "null" }

// remarshal converts a decoded _meta value into a typed one, as the go-sdk
// does.
func remarshal(from, to any) error {
	data, err := json.Marshal(from)
	if err != nil {
		return err
	}
	return sdkUnmarshal(data, to)
}

// isLoopback mirrors the go-sdk's test of a loopback address or host
// (internal/util.IsLoopback). The Host/Origin check itself (the go-sdk's
// DNS-rebinding guard, which is turned off there) runs in front of both
// paths: see hostPolicy in limits.go.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

func baseMediaType(v string) string {
	if v == "application/json" {
		return v // what mime.ParseMediaType gives, without its map
	}
	mt, _, err := mime.ParseMediaType(v)
	if err != nil {
		return ""
	}
	return mt
}

// acceptsJSONAndStream reports whether the Accept values admit both
// application/json and text/event-stream, as the go-sdk requires.
func acceptsJSONAndStream(values []string) bool {
	var jsonOK, streamOK bool
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
}

// firstNonSpace returns the index of b's first byte that is not JSON
// whitespace, or -1.
func firstNonSpace(b []byte) int {
	if i := jsonscan.SkipSpace(b, 0); i < len(b) {
		return i
	}
	return -1
}
