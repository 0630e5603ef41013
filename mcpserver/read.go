package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/app"
)

// read_world's answer: rendered whole, or streamed from the store.

// readWorld is read_world: the app layer checks and audits the read;
// this renders it. A document kept in pieces is left in the store, to be
// read from one snapshot once the audit row is committed (worldText).
func (s *Server) readWorld(ctx context.Context, c *call, in *wf.IDArgs) (any, error) {
	var out any
	_, err := s.app.ReadWorld(ctx, c.req, in, func(rd *app.WorldRead) error {
		w, rt, doc := rd.World, rd.Runtime, rd.Doc
		if doc != nil && !doc.Inline {
			if err := checkBuffered(*doc, c.buffered, s.maxBuffered); err != nil {
				return err
			}
			out = &worldText{store: s.store, id: w.ID, owner: rd.Owner, buffered: c.buffered, limit: s.maxBuffered}
			return nil
		}
		render := wf.WorldWithRuntimeJSON
		if doc != nil && doc.SplicesRuntime {
			render = wf.SplicedWorldJSON // checked when written: no validation per read
		}
		b, err := render(w, rt)
		if err != nil {
			return err
		}
		out = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkBuffered refuses, before anything of it is read (in readWorld:
// before the call is audited), a document kept in pieces that would have
// to be held whole — buffered (the go-sdk path), or one that does not
// splice — and is over limit: too_large, naming the limit and how to get
// the world.
func checkBuffered(doc wf.DocInfo, buffered bool, limit int64) error {
	if doc.Len <= limit {
		return nil
	}
	if !doc.SplicesRuntime {
		return wf.Errorf(wf.ETooLarge, "the world's document is %d bytes and cannot be streamed (it mentions \"runtime\" or has a \\u escape); read_world builds such an answer in memory only up to %d bytes",
			doc.Len, limit)
	}
	if buffered {
		return wf.Errorf(wf.ETooLarge, "the world's document is %d bytes, over the %d bytes of an answer built in memory (a JSON-RPC batch or another request the go-sdk answers); send read_world as a single tools/call (MCP-Protocol-Version 2025-11-25 or any supported revision, or none), which is streamed without that limit",
			doc.Len, limit)
	}
	return nil
}

// worldText is read_world's result for a world whose document the store
// keeps in pieces: rendered, or sent, from one snapshot of the store once
// the call's audit row is committed, without holding the document whole
// when the runtime state can be spliced into it.
type worldText struct {
	store wf.WorldStore
	id    string
	owner string
	// buffered and limit are checkBuffered's, checked again on the
	// snapshot (a resize may have grown the document since).
	buffered bool
	limit    int64
}

func (t *worldText) open(ctx context.Context) (func(io.Writer) error, int64, error) {
	w, rt, doc, err := t.store.StreamWorld(ctx, t.id)
	if err != nil {
		return nil, 0, storeErr(err)
	}
	if w.OwnerID != t.owner { // checked already; owners do not change
		if doc != nil {
			doc.Close()
		}
		return nil, 0, wf.ErrNotFound
	}
	if doc != nil {
		if err := checkBuffered(doc.Info(), t.buffered, t.limit); err != nil {
			doc.Close()
			return nil, 0, err
		}
	}
	if doc != nil && doc.Info().SplicesRuntime {
		return spliceWorld(w, rt, doc)
	}
	if doc != nil {
		// Not spliceable (MergeRuntime decodes it): read it whole and
		// render as for a small world.
		w.JSON, err = readAllDoc(doc)
		if err != nil {
			return nil, 0, err
		}
	}
	out, err := wf.WorldWithRuntimeJSON(w, rt)
	if err != nil {
		return nil, 0, err
	}
	return func(dst io.Writer) error {
		_, err := dst.Write(out)
		return err
	}, int64(len(out)), nil
}

func readAllDoc(doc wf.DocReader) ([]byte, error) {
	defer doc.Close()
	b := bytes.NewBuffer(make([]byte, 0, doc.Info().Len+bytes.MinRead))
	if _, err := b.ReadFrom(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// spliceWorld returns the writer of read_world's text for a document that
// splices: what WorldWithRuntimeJSON makes, written piece by piece — the
// row up to "json":, the document without its closing brace as the store
// reads it, the runtime key, the brace and the rest of the row. The writer
// closes doc.
func spliceWorld(w *wf.World, rt *wf.WorldRuntime, doc wf.DocReader) (func(io.Writer) error, int64, error) {
	head, tail, err := wf.WorldJSONParts(w)
	if err == nil {
		var r []byte
		if r, err = json.Marshal(rt); err == nil {
			n := doc.Info().Len
			mid := make([]byte, 0, len(`,"runtime":`)+len(r)+1+len(tail))
			if n > 2 {
				mid = append(mid, ',')
			}
			mid = append(mid, `"runtime":`...)
			mid = append(mid, r...)
			mid = append(mid, '}')
			mid = append(mid, tail...)
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
	}
	doc.Close()
	return nil, 0, err
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

// storeErr passes domain errors through and wraps the rest.
func storeErr(err error) error {
	var e *wf.Error
	if errors.As(err, &e) {
		return e
	}
	return fmt.Errorf("store: %w", err)
}
