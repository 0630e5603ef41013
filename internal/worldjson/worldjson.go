// Package worldjson renders the answer of read_world: a world row with its
// runtime state (presence, opened POIs, picked items) merged into its
// document under the key "runtime".
//
// The document is spliced in as it is stored, never decoded and encoded
// again, so a client gets back the bytes its world was written with. A
// document that splices (Splices) can be rendered without looking at it
// at all: the store records that property when it writes a document
// (package sqlstore), and read_world then sends a large document piece by
// piece as the store reads it (Stream) instead of holding it whole.
//
// This is the serving side's business, not the Store contract's: the root
// package describes a stored document (worldforge.DocInfo,
// worldforge.DocReader) and this package turns it into an answer.
package worldjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	wf "github.com/worldforge-go/worldforge"
)

// Merge returns the world's authored JSON with the runtime state set under
// the key "runtime". A world whose JSON is not an object gets
// {"doc": <json>, "runtime": …}.
func Merge(doc json.RawMessage, rt *wf.WorldRuntime) (json.RawMessage, error) {
	r, err := json.Marshal(rt)
	if err != nil {
		return nil, err
	}
	// Fast path: an object that does not mention "runtime" takes the key by
	// splicing, without decoding the document. A \u escape could spell the
	// key ("\u0072untime"), so documents with one take the slow path.
	trimmed := bytes.TrimSpace(doc)
	if n := len(trimmed); n >= 2 && trimmed[0] == '{' && trimmed[n-1] == '}' && splicesObject(trimmed) {
		body := bytes.TrimSpace(trimmed[1 : n-1])
		out := make([]byte, 0, n+len(r)+16)
		out = append(out, '{')
		if len(body) > 0 {
			out = append(out, body...)
			out = append(out, ',')
		}
		out = append(out, `"runtime":`...)
		out = append(out, r...)
		return append(out, '}'), nil
	}
	var m map[string]json.RawMessage
	if len(trimmed) == 0 {
		m = map[string]json.RawMessage{}
	} else if err := json.Unmarshal(trimmed, &m); err != nil || m == nil {
		m = map[string]json.RawMessage{"doc": doc}
	}
	m["runtime"] = r
	return json.Marshal(m)
}

// splicesObject is Merge's fast-path test of an object (trimmed, in
// braces): it does not mention "runtime", has no \u escape and is valid
// JSON.
func splicesObject(obj []byte) bool {
	return !bytes.Contains(obj, []byte(`"runtime"`)) && !bytes.Contains(obj, []byte(`\u`)) && json.Valid(obj)
}

// Splices reports whether Merge(doc, rt) is, for every rt, doc without its
// closing brace, a comma (unless doc is {}), "runtime":, rt's JSON and the
// brace: doc is a JSON object with no white space around it or just
// inside its braces, that does not mention "runtime" and has no \u escape.
// A store records it when writing a document (worldforge.DocInfo), so
// that read_world can render or send the document without reading it.
func Splices(doc []byte) bool {
	n := len(doc)
	if n < 2 || doc[0] != '{' || doc[n-1] != '}' {
		return false
	}
	if n > 2 && (isSpace(doc[1]) || isSpace(doc[n-2])) {
		return false
	}
	// Valid JSON has no other white space where TrimSpace would look:
	// after "{" comes '"' or "}", before "}" the end of a value.
	return splicesObject(doc)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// Render renders the read_world result: the world row with its runtime
// state merged into json. The document is spliced in as it is stored
// rather than decoded and encoded again. w is not modified.
func Render(w *wf.World, rt *wf.WorldRuntime) (json.RawMessage, error) {
	doc, err := Merge(w.JSON, rt)
	if err != nil {
		return nil, err
	}
	head, tail, err := Parts(w)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(head)+len(doc)+len(tail))
	out = append(out, head...)
	out = append(out, doc...)
	return append(out, tail...), nil
}

// RenderSpliced is Render for a document the caller knows Splices holds
// for (the store checked it when it was written): the runtime is spliced
// in without looking at the document again, which Render does (a
// validation of every byte) on every read.
func RenderSpliced(w *wf.World, rt *wf.WorldRuntime) (json.RawMessage, error) {
	doc := w.JSON
	if len(doc) < 2 {
		return nil, errors.New("render world: not a spliceable document")
	}
	head, mid, err := spliceParts(w, rt, int64(len(doc)))
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(head)+len(doc)-1+len(mid))
	out = append(out, head...)
	out = append(out, doc[:len(doc)-1]...)
	return append(out, mid...), nil
}

// Parts returns the JSON of the world row w (as Render renders it) before
// and after the value of its "json" key: head ends with `"json":`. w.JSON
// is not read.
func Parts(w *wf.World) (head, tail []byte, err error) {
	h := *w
	h.JSON = json.RawMessage("0") // a placeholder: the only "json": key
	b, err := json.Marshal(&h)
	if err != nil {
		return nil, nil, err
	}
	const marker = `"json":0`
	i := bytes.Index(b, []byte(marker))
	if i < 0 {
		return nil, nil, errors.New("render world: placeholder not found")
	}
	return b[:i+len(`"json":`)], b[i+len(marker):], nil
}

// spliceParts returns what goes around a spliceable document of n bytes
// without its closing brace: the row up to "json":, and after the
// document, the runtime key, the brace and the rest of the row.
func spliceParts(w *wf.World, rt *wf.WorldRuntime, n int64) (head, mid []byte, err error) {
	head, tail, err := Parts(w)
	if err != nil {
		return nil, nil, err
	}
	r, err := json.Marshal(rt)
	if err != nil {
		return nil, nil, err
	}
	mid = make([]byte, 0, len(`,"runtime":`)+len(r)+1+len(tail))
	if n > 2 {
		mid = append(mid, ',')
	}
	mid = append(mid, `"runtime":`...)
	mid = append(mid, r...)
	mid = append(mid, '}')
	return head, append(mid, tail...), nil
}

// Stream returns the writer of the read_world text for a document kept in
// pieces that splices (doc.Info().SplicesRuntime): what Render makes,
// written piece by piece — the row up to "json":, the document without its
// closing brace as the store reads it, the runtime key, the brace and the
// rest of the row — and the text's length in bytes. The writer must be
// called once; it closes doc (as Stream does when it fails).
func Stream(w *wf.World, rt *wf.WorldRuntime, doc wf.DocReader) (write func(io.Writer) error, size int64, err error) {
	n := doc.Info().Len
	head, mid, err := spliceParts(w, rt, n)
	if err != nil {
		doc.Close()
		return nil, 0, err
	}
	return func(dst io.Writer) error {
		defer doc.Close()
		if _, err := dst.Write(head); err != nil {
			return err
		}
		body := &allButLast{w: dst, n: n - 1}
		if _, err := io.Copy(body, doc); err != nil {
			return err
		}
		if body.n != 0 || !body.held || body.last != '}' {
			return errors.New("read world: the stored document does not end as recorded")
		}
		_, err := dst.Write(mid)
		return err
	}, int64(len(head)) + n - 1 + int64(len(mid)), nil
}

// allButLast passes on the first n bytes written to it and keeps the
// next one (a document's closing brace) in last.
type allButLast struct {
	w    io.Writer
	n    int64
	last byte
	held bool
}

func (a *allButLast) Write(p []byte) (int, error) {
	total := len(p)
	if k := int64(len(p)); k > 0 && a.n > 0 {
		k = min(k, a.n)
		m, err := a.w.Write(p[:k])
		a.n -= int64(m)
		if err != nil {
			return m, err
		}
		p = p[k:]
	}
	if len(p) > 0 {
		if a.held || len(p) > 1 {
			return total - len(p), errors.New("read world: the stored document is longer than recorded")
		}
		a.last, a.held = p[0], true
	}
	return total, nil
}
