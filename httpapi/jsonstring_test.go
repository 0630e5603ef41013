package httpapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// escapeInPieces escapes data written to a jsonStringWriter with a buffer
// of bufSize bytes in pieces of the given sizes (cycling; the rest in one
// piece when sizes is empty), in quotes.
func escapeInPieces(t testing.TB, data []byte, sizes []int, bufSize int) string {
	t.Helper()
	var out bytes.Buffer
	bw := bufio.NewWriterSize(&out, 16) // small: many flushes
	bw.WriteByte('"')
	e := newJSONStringWriter(bw, bufSize)
	for i := 0; len(data) > 0; i++ {
		n := len(data)
		if len(sizes) > 0 {
			n = min(n, sizes[i%len(sizes)])
		}
		if m, err := e.Write(data[:n]); m != n || err != nil {
			t.Fatalf("Write(%d bytes) = %d, %v", n, m, err)
		}
		data = data[n:]
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	bw.WriteByte('"')
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// encodingJSON is what json.NewEncoder(buf).Encode(string(data)) writes,
// without the newline: the fast path's reference.
func encodingJSON(t testing.TB, data []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(string(data)); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func TestJSONStringWriter(t *testing.T) {
	inputs := []string{
		"",
		"plain ascii",
		`quote " backslash \ slash /`,
		"<script>&amp;</script>",
		"\x00\x01\b\f\n\r\t\x1f\x7f",
		"é€😀 mixed ascii",
		"line\u2028para\u2029end",
		"\xff\xfe bad bytes \xc3",
		"\xe2\x82",          // a truncated euro sign at the end
		"\xf0\x9f\x98",      // a truncated emoji at the end
		"\xf0\x9fA\x98\x80", // a lead byte broken by ASCII
		"\xed\xa0\x80",      // a surrogate half: invalid
		"\xc0\xaf",          // overlong
		strings.Repeat("日本語\u2028<", 50),
	}
	for _, in := range inputs {
		want := encodingJSON(t, []byte(in))
		for _, sizes := range [][]int{nil, {1}, {2}, {3}, {1, 2, 3, 4, 5}, {7}, {4, 1}} {
			for _, bufSize := range []int{1, 5, 64, streamBufferSize} {
				if got := escapeInPieces(t, []byte(in), sizes, bufSize); got != want {
					t.Errorf("%q in pieces %v, buffer %d:\n got %s\nwant %s", in, sizes, bufSize, got, want)
				}
			}
		}
	}
}

// FuzzJSONStringWriter: for any bytes cut at any points, the streaming
// escaper writes what encoding/json writes for the whole string.
func FuzzJSONStringWriter(f *testing.F) {
	f.Add([]byte("hello <world> & \u2028 é€😀"), []byte{1, 2, 3})
	f.Add([]byte("\xf0\x9f\x98\x80\xe2\x82\xac\xc3\xa9"), []byte{1})
	f.Add([]byte("\xf0\x9f\x98"), []byte{2, 1})
	f.Add([]byte("\xe2\x80\xa8\xe2\x80\xa9\"\\\x00"), []byte{})
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		sizes := make([]int, 0, len(cuts))
		for _, c := range cuts {
			sizes = append(sizes, int(c%9)+1)
		}
		bufSize := 1 + len(cuts)%13
		want := encodingJSON(t, data)
		if got := escapeInPieces(t, data, sizes, bufSize); got != want {
			t.Fatalf("%q in pieces %v, buffer %d:\n got %s\nwant %s", data, sizes, bufSize, got, want)
		}
		if got := escapeInPieces(t, data, sizes, streamBufferSize); got != want {
			t.Fatalf("%q in pieces %v:\n got %s\nwant %s", data, sizes, got, want)
		}
		if utf8.Valid(data) {
			var back string
			if err := json.Unmarshal([]byte(want), &back); err != nil || back != string(data) {
				t.Fatalf("round trip of %q: %q, %v", data, back, err)
			}
		}
	})
}

func BenchmarkJSONStringWriter(b *testing.B) {
	doc := bytes.Repeat([]byte(`{"terrain":"sand","h":12,"name":"Dune <3> & co é"},`), 1<<14)
	b.SetBytes(int64(len(doc)))
	bw := bufio.NewWriterSize(discard{}, streamBufferSize)
	for b.Loop() {
		e := newJSONStringWriter(bw, streamBufferSize)
		for i := 0; i < len(doc); i += 256 << 10 {
			e.Write(doc[i:min(i+256<<10, len(doc))])
		}
		e.Close()
		bw.Flush()
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// FuzzAppendJSONText holds appendJSONText, which the fast path encodes a
// tool's text with, to encoding/json's encoding of the same string.
func FuzzAppendJSONText(f *testing.F) {
	f.Add([]byte("hello <world> & \u2028 é€😀"))
	f.Add([]byte("\xf0\x9f\x98\x80\xe2\x82\xac\xc3\xa9\xf0\x9f\x98"))
	f.Add([]byte("\xe2\x80\xa8\xe2\x80\xa9\"\\\x00\b\f\n\r\t\x1f\x7f"))
	f.Add([]byte(`{"grid":{"cells":[{"t":"plains","x":1}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		want := encodingJSON(t, data)
		prefix := []byte("head:")
		got := appendJSONText(prefix, string(data))
		if string(got) != "head:"+want {
			t.Fatalf("%q:\n got %s\nwant head:%s", data, got, want)
		}
	})
}

// BenchmarkEncodeText: the fast path's encoding of a small world's
// read_world text (an 8×8 grid, every key quoted) as a JSON string.
func BenchmarkEncodeText(b *testing.B) {
	var doc strings.Builder
	doc.WriteString(`{"id":"world_x","owner_id":"user_y","name":"Bench World","json":{"grid":{"type":"hex","cols":8,"rows":8,"cells":[`)
	for i := range 64 {
		if i > 0 {
			doc.WriteByte(',')
		}
		doc.WriteString(`{"e":3,"t":"plains","x":4,"y":5}`)
	}
	doc.WriteString(`]},"runtime":{"presence":[],"opened_pois":[],"picked_items":[]}}}`)
	text := doc.String()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	var buf bytes.Buffer
	f := &fastResponder{}
	for b.Loop() {
		buf.Reset()
		f.encodeText(&buf, text)
	}
}
