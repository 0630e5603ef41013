package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/app"
	"github.com/worldforge-go/worldforge/internal/worldjson"
)

// read_world's answer: rendered whole, or streamed from the store.

// readWorld is read_world: the app layer checks and audits the read;
// this renders it. A document kept in pieces is left in the store, to be
// read from one snapshot once the audit row is committed (worldText).
//
// An answer rendered whole is kept (worldAnswers) with the store's stamp of
// the state it shows; the next read of the world asks the store only
// whether that stamp is still the world's, and sends the kept answer if so.
func (s *Server) readWorld(ctx context.Context, c *call, in *wf.IDArgs) (any, error) {
	var (
		out   any
		known app.KnownWorld
	)
	kept := s.answers.get(in.ID)
	if kept != nil {
		known = app.KnownWorld{Stamp: kept.stamp, Owner: kept.owner}
	}
	_, err := s.app.ReadWorldSince(ctx, c.req, in, known, func(rd *app.WorldRead) error {
		if rd.Unchanged {
			out = kept.text
			return nil
		}
		w, rt, doc := rd.World, rd.Runtime, rd.Doc
		if doc != nil && !doc.Inline {
			s.answers.drop(w.ID)
			if err := checkBuffered(*doc, c.buffered, s.maxBuffered); err != nil {
				return err
			}
			out = &worldText{store: s.store, id: w.ID, owner: rd.Owner, buffered: c.buffered, limit: s.maxBuffered}
			return nil
		}
		render := worldjson.Render
		if doc != nil && doc.SplicesRuntime {
			render = worldjson.RenderSpliced // checked when written: no validation per read
		}
		b, err := render(w, rt)
		if err != nil {
			return err
		}
		text := keptText(b)
		s.answers.put(w.ID, &worldAnswer{stamp: rd.Stamp, owner: w.OwnerID, text: text})
		out = text
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
		return worldjson.Stream(w, rt, doc)
	}
	if doc != nil {
		// Not spliceable (worldjson.Merge decodes it): read it whole and
		// render as for a small world.
		w.JSON, err = readAllDoc(doc)
		if err != nil {
			return nil, 0, err
		}
	}
	out, err := worldjson.Render(w, rt)
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

// storeErr passes domain errors through and wraps the rest.
func storeErr(err error) error {
	var e *wf.Error
	if errors.As(err, &e) {
		return e
	}
	return fmt.Errorf("store: %w", err)
}
