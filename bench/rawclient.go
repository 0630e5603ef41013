package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Clients a load run can use (LoadConfig.Client).
const (
	// ClientRaw is the cheap load generator: one keep-alive TCP connection
	// per worker, the request's bytes built once, the response read by a
	// minimal HTTP/1.1 parser into a buffer the worker reuses. It speaks
	// plain HTTP only.
	ClientRaw = "raw"
	// ClientNetHTTP is net/http's client with a pooled transport, as a Go
	// program calling the server would use it.
	ClientNetHTTP = "nethttp"
)

// Limits of the raw client's response parser.
const (
	// MaxResponseHead bounds a response's status line and headers.
	MaxResponseHead = 64 << 10
	// MaxResponseBody bounds a response body.
	MaxResponseBody = 256 << 20
)

// errTruncated is wrapped by the raw client's errors for a response the
// connection ended in the middle of.
var errTruncated = errors.New("connection closed before the response ended")

// responseHead is what the raw client keeps of a response's head.
type responseHead struct {
	status        int
	contentType   []byte // valid until the next read
	contentLength int64  // -1: none
	chunked       bool
	close         bool // Connection: close, or HTTP/1.0
}

// parseResponseHead parses a response's status line and header fields,
// head being everything before the blank line that ends them (without
// it). It knows Content-Length, Content-Type, Transfer-Encoding and
// Connection and skips the other fields; it refuses what a server should
// not send: an unknown transfer coding, both a length and a coding,
// conflicting lengths, folded lines, lines that do not end in CRLF.
func parseResponseHead(head []byte) (responseHead, error) {
	h := responseHead{contentLength: -1}
	if bytes.Count(head, []byte("\n")) != bytes.Count(head, crlf) || bytes.Count(head, []byte("\r")) != bytes.Count(head, crlf) {
		return h, errors.New("a bare CR or LF in the response head (lines must end in CRLF)")
	}
	line, rest, _ := bytes.Cut(head, crlf)
	proto, statusText, ok := bytes.Cut(line, []byte(" "))
	if !ok || (string(proto) != "HTTP/1.1" && string(proto) != "HTTP/1.0") {
		return h, fmt.Errorf("bad status line %q", snippet(line))
	}
	code, _, _ := bytes.Cut(statusText, []byte(" "))
	if len(code) != 3 || code[0] < '1' || code[0] > '5' || !allDigits(code) {
		return h, fmt.Errorf("bad status line %q", snippet(line))
	}
	h.status = int(code[0]-'0')*100 + int(code[1]-'0')*10 + int(code[2]-'0')
	h.close = string(proto) == "HTTP/1.0"
	for len(rest) > 0 {
		line, rest, _ = bytes.Cut(rest, crlf)
		if len(line) == 0 {
			return h, errors.New("empty line inside the response head")
		}
		if line[0] == ' ' || line[0] == '\t' {
			return h, fmt.Errorf("folded header line %q", snippet(line))
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok || len(name) == 0 || bytes.ContainsAny(name, " \t") {
			return h, fmt.Errorf("bad header line %q", snippet(line))
		}
		value = bytes.Trim(value, " \t")
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if !allDigits(value) || len(value) > 18 {
				return h, fmt.Errorf("bad Content-Length %q", snippet(value))
			}
			n, _ := strconv.ParseInt(string(value), 10, 64)
			if h.contentLength >= 0 && n != h.contentLength {
				return h, errors.New("two different Content-Length fields")
			}
			h.contentLength = n
		case bytes.EqualFold(name, []byte("Content-Type")):
			h.contentType = value
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			if string(proto) == "HTTP/1.0" {
				// Faulty framing (RFC 9112, section 6.1); net/http
				// ignores the field and reads to the end instead.
				return h, errors.New("Transfer-Encoding in an HTTP/1.0 response")
			}
			if !bytes.EqualFold(value, []byte("chunked")) || h.chunked {
				return h, fmt.Errorf("unsupported Transfer-Encoding %q", snippet(value))
			}
			h.chunked = true
		case bytes.EqualFold(name, []byte("Connection")):
			for tok := range bytes.SplitSeq(value, []byte(",")) {
				if bytes.EqualFold(bytes.TrimSpace(tok), []byte("close")) {
					h.close = true
				}
			}
		}
	}
	if h.chunked && h.contentLength >= 0 {
		return h, errors.New("both Content-Length and Transfer-Encoding")
	}
	if h.contentLength > MaxResponseBody {
		return h, fmt.Errorf("Content-Length %d over the %d-byte limit", h.contentLength, MaxResponseBody)
	}
	return h, nil
}

var crlf = []byte("\r\n")

func allDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// responseReader reads HTTP/1.1 responses from one connection into a
// buffer it reuses: a response's body is valid until the next read.
type responseReader struct {
	r    io.Reader
	buf  []byte
	lo   int // buf[lo:hi] is read and not yet consumed
	hi   int
	body []byte // a chunked body, decoded
	eof  bool
}

func newResponseReader(r io.Reader) *responseReader {
	return &responseReader{r: r, buf: make([]byte, 16<<10)}
}

// fill reads until at least n unconsumed bytes are buffered, moving them
// to the front or growing the buffer as needed. At the end of the stream
// it returns io.EOF (or io.ErrUnexpectedEOF if some bytes were buffered).
func (rr *responseReader) fill(n int) error {
	for rr.hi-rr.lo < n {
		if rr.eof {
			if rr.hi > rr.lo {
				return io.ErrUnexpectedEOF
			}
			return io.EOF
		}
		if rr.lo+n > len(rr.buf) {
			if n > len(rr.buf) {
				nb := make([]byte, max(n, 2*len(rr.buf)))
				copy(nb, rr.buf[rr.lo:rr.hi])
				rr.buf = nb
			} else {
				copy(rr.buf, rr.buf[rr.lo:rr.hi])
			}
			rr.hi -= rr.lo
			rr.lo = 0
		}
		m, err := rr.r.Read(rr.buf[rr.hi:])
		rr.hi += m
		if err == io.EOF {
			rr.eof = true
		} else if err != nil {
			return err
		}
	}
	return nil
}

// line returns the next CRLF-terminated line (without CRLF), consuming it;
// it is valid until the next call.
func (rr *responseReader) line(limit int) ([]byte, error) {
	for searched := 0; ; {
		if i := bytes.Index(rr.buf[rr.lo+searched:rr.hi], crlf); i >= 0 {
			end := rr.lo + searched + i
			l := rr.buf[rr.lo:end]
			rr.lo = end + 2
			return l, nil
		}
		searched = max(rr.hi-rr.lo-1, 0)
		if searched > limit {
			return nil, fmt.Errorf("line over %d bytes", limit)
		}
		if err := rr.fill(rr.hi - rr.lo + 1); err != nil {
			return nil, err
		}
	}
}

// readResponse reads one whole response. The head's content type and the
// body are valid until the next call. A response to a request the server
// answers with 1xx first is read past its interim responses.
func (rr *responseReader) readResponse() (responseHead, []byte, error) {
	for {
		h, err := rr.readHead()
		if err != nil {
			return h, nil, err
		}
		if h.status >= 200 {
			body, err := rr.readBody(&h)
			return h, body, err
		}
		if h.status == http.StatusSwitchingProtocols {
			return h, nil, errors.New("HTTP 101: the server switched protocols")
		}
	}
}

func (rr *responseReader) readHead() (responseHead, error) {
	searched := 0
	for {
		if i := bytes.Index(rr.buf[rr.lo+searched:rr.hi], []byte("\r\n\r\n")); i >= 0 {
			end := rr.lo + searched + i
			head := rr.buf[rr.lo:end]
			rr.lo = end + 4
			h, err := parseResponseHead(head)
			if err != nil {
				return h, fmt.Errorf("bad response: %w", err)
			}
			return h, nil
		}
		searched = max(rr.hi-rr.lo-3, 0)
		if rr.hi-rr.lo >= MaxResponseHead {
			return responseHead{}, fmt.Errorf("response head over %d bytes", MaxResponseHead)
		}
		if err := rr.fill(rr.hi - rr.lo + 1); err != nil {
			if err == io.EOF {
				return responseHead{}, fmt.Errorf("%w: no response", errTruncated)
			}
			if err == io.ErrUnexpectedEOF {
				return responseHead{}, fmt.Errorf("%w: in the head", errTruncated)
			}
			return responseHead{}, err
		}
	}
}

func (rr *responseReader) readBody(h *responseHead) ([]byte, error) {
	switch {
	case h.status == http.StatusNoContent || h.status == http.StatusNotModified:
		return nil, nil
	case h.chunked:
		return rr.readChunked()
	case h.contentLength >= 0:
		n := int(h.contentLength)
		if err := rr.fill(n); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return nil, fmt.Errorf("%w: %d of %d body bytes", errTruncated, rr.hi-rr.lo, n)
			}
			return nil, err
		}
		body := rr.buf[rr.lo : rr.lo+n]
		rr.lo += n
		return body, nil
	default:
		// No length: the body runs to the end of the connection.
		h.close = true
		for !rr.eof {
			if rr.hi-rr.lo > MaxResponseBody {
				return nil, fmt.Errorf("body over %d bytes", MaxResponseBody)
			}
			if err := rr.fill(rr.hi - rr.lo + 1); err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
				return nil, err
			}
		}
		body := rr.buf[rr.lo:rr.hi]
		rr.lo = rr.hi
		return body, nil
	}
}

// readChunked decodes a chunked body into rr.body.
func (rr *responseReader) readChunked() ([]byte, error) {
	rr.body = rr.body[:0]
	truncated := func(err error, where string) error {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return fmt.Errorf("%w: in the chunked body (%s)", errTruncated, where)
		}
		return err
	}
	for {
		l, err := rr.line(1024)
		if err != nil {
			return nil, truncated(err, "chunk size")
		}
		size, _, _ := bytes.Cut(l, []byte(";"))
		size = bytes.TrimRight(size, " \t")
		n, err := strconv.ParseUint(string(size), 16, 63)
		if err != nil || len(size) == 0 {
			return nil, fmt.Errorf("bad response: bad chunk size %q", snippet(l))
		}
		if n == 0 {
			break
		}
		if n > MaxResponseBody || len(rr.body)+int(n) > MaxResponseBody {
			return nil, fmt.Errorf("chunked body over %d bytes", MaxResponseBody)
		}
		if err := rr.fill(int(n) + 2); err != nil {
			return nil, truncated(err, "chunk data")
		}
		rr.body = append(rr.body, rr.buf[rr.lo:rr.lo+int(n)]...)
		rr.lo += int(n)
		if rr.buf[rr.lo] != '\r' || rr.buf[rr.lo+1] != '\n' {
			return nil, errors.New("bad response: chunk data not followed by CRLF")
		}
		rr.lo += 2
	}
	for { // trailer fields, up to the blank line
		l, err := rr.line(MaxResponseHead)
		if err != nil {
			return nil, truncated(err, "trailer")
		}
		if len(l) == 0 {
			return rr.body, nil
		}
	}
}

// buffered reports how many read bytes are not yet consumed.
func (rr *responseReader) buffered() int { return rr.hi - rr.lo }

// rawRequest is the fixed part of the raw client's requests: the request
// line and every header but Content-Length, which ends it.
type rawRequest struct {
	addr   string // host:port to dial
	prefix []byte // "POST /path HTTP/1.1\r\nHost: …\r\n…Content-Length: "
}

func newRawRequest(target Target) (*rawRequest, error) {
	u, err := url.Parse(target.URL)
	if err != nil {
		return nil, fmt.Errorf("bench: bad target URL: %v", err)
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("bench: the raw client speaks plain HTTP only, not %s (use the nethttp client)", u.Scheme)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\n", u.RequestURI(), u.Host)
	header := target.Header
	if header == nil {
		header = ToolCallHeaders("", "")
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range header {
			if !yield(k) {
				return
			}
		}
	}) {
		switch http.CanonicalHeaderKey(k) {
		case "Host", "Content-Length", "Connection", "Transfer-Encoding":
			continue // the client's own
		}
		for _, v := range header[k] {
			if strings.ContainsAny(k+v, "\r\n") {
				return nil, fmt.Errorf("bench: header %q holds a line break", k)
			}
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	b.WriteString("Content-Length: ")
	return &rawRequest{addr: addr, prefix: b.Bytes()}, nil
}

// rawConn is one worker's connection of the raw client. It dials on first
// use and again after an error or a response that closes the connection.
type rawConn struct {
	req     *rawRequest
	timeout time.Duration

	mu      sync.Mutex // guards conn and aborted against abort
	conn    net.Conn
	aborted bool

	rr       *responseReader
	deadline time.Time
	fixed    bool   // every request has the same body: out is built once
	out      []byte // the request being sent
	ct       string // the last Content-Type, kept to pass without allocating
	ctVals   []string
	header   http.Header
}

// newRawConn returns a connection for req; fixed says that every request
// will carry the same body.
func newRawConn(req *rawRequest, timeout time.Duration, fixed bool) *rawConn {
	return &rawConn{req: req, timeout: timeout, fixed: fixed, ctVals: make([]string, 1), header: http.Header{}}
}

// abort makes the request in flight, and every later one, fail at once.
func (c *rawConn) abort() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.aborted = true
	if c.conn != nil {
		c.conn.SetDeadline(time.Unix(1, 0))
	}
}

func (c *rawConn) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

func (c *rawConn) dial(ctx context.Context) error {
	d := net.Dialer{Timeout: min(c.timeout, 5*time.Second)}
	conn, err := d.DialContext(ctx, "tcp", c.req.addr)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.aborted {
		conn.Close()
		return context.Canceled
	}
	c.conn = conn
	c.deadline = time.Time{}
	if c.rr == nil {
		c.rr = newResponseReader(conn)
	} else {
		c.rr.r, c.rr.lo, c.rr.hi, c.rr.eof = conn, 0, 0, false
	}
	return nil
}

// roundTrip sends one request with body and reads its whole response. The
// header holds the response's Content-Type only; it and the body are valid
// until the next call.
func (c *rawConn) roundTrip(ctx context.Context, now time.Time, body []byte) (int, http.Header, []byte, error) {
	if c.conn == nil {
		if err := c.dial(ctx); err != nil {
			return 0, nil, nil, err
		}
	}
	// One deadline bounds each request to between timeout and 1.5×
	// timeout, without a timer update per request.
	if c.deadline.Sub(now) < c.timeout {
		c.deadline = now.Add(c.timeout + c.timeout/2)
		c.conn.SetDeadline(c.deadline)
		if ctx.Err() != nil { // abort may have run before this deadline
			c.close()
			return 0, nil, nil, ctx.Err()
		}
	}
	if !c.fixed || len(c.out) == 0 {
		c.out = append(c.out[:0], c.req.prefix...)
		c.out = strconv.AppendInt(c.out, int64(len(body)), 10)
		c.out = append(c.out, "\r\n\r\n"...)
		c.out = append(c.out, body...)
	}
	if _, err := c.conn.Write(c.out); err != nil {
		c.close()
		return 0, nil, nil, fmt.Errorf("writing the request: %w", err)
	}
	h, respBody, err := c.rr.readResponse()
	if err != nil {
		c.close()
		return h.status, nil, nil, err
	}
	if n := c.rr.buffered(); n > 0 {
		c.close()
		return h.status, nil, nil, fmt.Errorf("bad response: %d bytes after its end", n)
	}
	if h.close {
		c.close()
	}
	if string(h.contentType) != c.ct {
		c.ct = string(h.contentType)
	}
	if c.ct == "" {
		delete(c.header, "Content-Type")
	} else {
		c.ctVals[0] = c.ct
		c.header["Content-Type"] = c.ctVals
	}
	return h.status, c.header, respBody, nil
}
