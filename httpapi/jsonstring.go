package httpapi

import (
	"io"
	"slices"
	"unicode/utf8"
)

// jsonStringWriter writes the bytes given to it as the inside of a JSON
// string (no quotes), escaped exactly as encoding/json escapes a string
// with HTML escaping on (json.Marshal, json.NewEncoder's default): ", \ and
// control characters escaped (\b \f \n \r \t by name), <, > and & as \u003c
// \u003e \u0026, U+2028 and U+2029 as \u2028 \u2029, and each byte of
// invalid UTF-8 as \ufffd. A character whose bytes are split between two
// writes is escaped as a whole: up to three bytes wait for the next write,
// and Close escapes what is left as the end of the string.
//
// The escaped text collects in a buffer of its own (appending is cheaper
// than a bufio.Writer call per run), written on to w when it holds size
// bytes, and by Close; a run longer than that goes to w directly.
type jsonStringWriter struct {
	w       io.Writer
	size    int // the buffer's size
	buf     []byte
	pending [utf8.UTFMax]byte
	np      int
	err     error
}

// newJSONStringWriter returns a jsonStringWriter on w holding up to size
// bytes of escaped text.
func newJSONStringWriter(w io.Writer, size int) *jsonStringWriter {
	return &jsonStringWriter{w: w, size: size, buf: make([]byte, 0, size+2*utf8.UTFMax)}
}

const hexDigits = "0123456789abcdef"

// htmlSafe marks the ASCII bytes encoding/json writes as they are with
// HTML escaping on (its htmlSafeSet).
var htmlSafe = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		switch b {
		case '"', '\\', '<', '>', '&':
		default:
			t[b] = true
		}
	}
	return t
}()

// htmlSafeByte is htmlSafe over every byte value (false from
// utf8.RuneSelf up), for a lookup without a bounds check.
var htmlSafeByte = func() (t [256]bool) {
	copy(t[:], htmlSafe[:])
	return t
}()

// Write escapes p. Its errors are the underlying writer's.
func (e *jsonStringWriter) Write(p []byte) (int, error) {
	n := len(p)
	if e.np > 0 {
		// The last write ended inside a character. encoding/json decides
		// what a character is from at most utf8.UTFMax bytes, so the
		// kept bytes and the first three of p settle every character
		// beginning among the kept ones (the last may end in p).
		var tmp [2*utf8.UTFMax - 1]byte
		k := copy(tmp[:], e.pending[:e.np])
		k += copy(tmp[k:], p[:min(len(p), utf8.UTFMax-1)])
		kept := e.np
		e.np = 0
		i := 0
		for i < kept {
			if !utf8.FullRune(tmp[i:k]) {
				// p is shorter than the character: all of it is in tmp.
				e.np = copy(e.pending[:], tmp[i:k])
				return n, nil
			}
			size := 1
			if tmp[i] >= utf8.RuneSelf {
				_, size = utf8.DecodeRune(tmp[i:k])
			}
			if err := e.escape(tmp[i:i+size], false); err != nil {
				return 0, err
			}
			i += size
		}
		p = p[i-kept:]
	}
	return n, e.escape(p, true)
}

// Close escapes the bytes a last Write left waiting (an incomplete
// character at the end of the string: \ufffd for each byte, as
// encoding/json writes them) and writes the buffer on to w.
func (e *jsonStringWriter) Close() error {
	np := e.np
	e.np = 0
	if err := e.escape(e.pending[:np], false); err != nil {
		return err
	}
	return e.flush()
}

// flush writes the buffer on to w.
func (e *jsonStringWriter) flush() error {
	if e.err == nil && len(e.buf) > 0 {
		_, e.err = e.w.Write(e.buf)
	}
	e.buf = e.buf[:0]
	return e.err
}

// escape appends the escaped form of p to the buffer, writing it on when
// full; a run of bytes written as they are that does not fit goes to w
// directly, after the buffer. With more set, an incomplete character at
// p's end is kept for the next write instead.
func (e *jsonStringWriter) escape(p []byte, more bool) error {
	buf, size := e.buf, e.size
	// run appends the run p[start:i] and makes room for an escape.
	run := func(r []byte) bool {
		if len(buf)+len(r) <= size {
			buf = append(buf, r...)
			if len(buf) < size {
				return true
			}
			r = nil
		}
		e.buf = buf
		if e.flush() == nil && len(r) > 0 {
			_, e.err = e.w.Write(r)
		}
		buf = e.buf
		return e.err == nil
	}
	start := 0
	for i := 0; i < len(p); {
		b := p[i]
		if htmlSafeByte[b] {
			i++
			continue
		}
		if b < utf8.RuneSelf {
			if !run(p[start:i]) {
				return e.err
			}
			buf = appendEscapedASCII(buf, b)
			i++
			start = i
			continue
		}
		if more && !utf8.FullRune(p[i:]) {
			ok := run(p[start:i])
			e.buf = buf
			if !ok {
				return e.err
			}
			e.np = copy(e.pending[:], p[i:])
			return nil
		}
		c, n := utf8.DecodeRune(p[i:])
		if c == utf8.RuneError && n == 1 {
			if !run(p[start:i]) {
				return e.err
			}
			buf = append(buf, `\ufffd`...)
			i++
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			if !run(p[start:i]) {
				return e.err
			}
			buf = append(buf, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += n
			start = i
			continue
		}
		i += n
	}
	run(p[start:])
	e.buf = buf
	return e.err
}

// appendJSONText appends s to dst as encoding/json encodes a string with
// HTML escaping on, quotes included: the escapes of jsonStringWriter, for
// a text held whole. It writes byte by byte into room grown once, where
// encoding/json copies each run between escapes — a world document quotes
// every key, so its runs are a few bytes long (measured: 4× faster on a
// small world's read_world answer).
func appendJSONText(dst []byte, s string) []byte {
	dst = slices.Grow(dst, len(s)+len(s)/4+2)
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		b := s[i]
		if htmlSafeByte[b] { // one lookup, no bounds check, for most bytes
			dst = append(dst, b)
			i++
			continue
		}
		if b < utf8.RuneSelf {
			i++
			dst = appendEscapedASCII(dst, b)
			continue
		}
		c, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && n == 1:
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
		default:
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return append(dst, '"')
}

// appendEscapedASCII appends the escape encoding/json writes for the ASCII
// byte b, which htmlSafe does not pass as it is.
func appendEscapedASCII(dst []byte, b byte) []byte {
	switch b {
	case '\\', '"':
		return append(dst, '\\', b)
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
}
