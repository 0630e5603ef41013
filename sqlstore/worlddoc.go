package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"weak"

	"github.com/worldforge-go/worldforge"
)

// World documents in pieces (issue 8, migration 006).
//
// A world's document of up to DocChunkBytes is kept in worlds.doc, as it
// always was. A larger one is kept in world_doc_chunks: its bytes exactly
// as given (nothing is re-encoded, so every reader gets back what was
// written), cut into pieces of DocChunkBytes numbered from 0; worlds.doc is
// then NULL, worlds.doc_len holds the length and worlds.doc_splice whether
// worldforge.SplicesRuntime holds for it. Documents written before the
// migration stay inline, whatever their size: a reader takes both forms.
//
// The two writers of a document (insertWorld, ResizeWorld) replace the
// chunks in their own transaction. A world's document changes only with
// its version (a new world is version 1; a resize raises it).
//
// Readers that need the whole document (FindWorldByID, ReadWorld,
// ResizeWorld) read the world row as before; only when it says "chunked"
// do they read the row again with the chunks in one read transaction (a
// snapshot: REPEATABLE READ on PostgreSQL, a deferred transaction on the
// SQLite reader in WAL mode), so a concurrent resize never tears a
// document. A small world costs exactly the queries it did. StreamWorld
// keeps that snapshot open while its caller sends the document on, so the
// memory a read takes is one chunk, not the world.

// DocChunkBytes is the size of the pieces a world document larger than it
// is stored in, and so the most a streamed read_world holds of it at once.
const DocChunkBytes = 256 << 10

// chunkQuery reads a world's chunks in order.
const chunkQuery = "SELECT data FROM world_doc_chunks WHERE world_id = ? ORDER BY seq"

// storeState is what a DB keeps for its world documents beyond its pools:
// the chunk size (tests lower it) and the bound on concurrent streams.
type storeState struct {
	chunkBytes int
	streams    chan struct{}
}

// storeStates maps weak pointers to DBs to their *storeState. (DB itself is
// declared in db.go; this keeps the world-document state beside the code
// that uses it.) An entry goes when its DB is collected.
var storeStates sync.Map

func (db *DB) docState() *storeState {
	key := weak.Make(db)
	if v, ok := storeStates.Load(key); ok {
		return v.(*storeState)
	}
	// Streams hold a reader connection each until the client has read the
	// document: at most half the reader pool, so that other reads always
	// find one.
	n := max(1, db.reader.db.Stats().MaxOpenConnections/2)
	v, loaded := storeStates.LoadOrStore(key, &storeState{chunkBytes: DocChunkBytes, streams: make(chan struct{}, n)})
	if !loaded {
		runtime.AddCleanup(db, func(k weak.Pointer[DB]) { storeStates.Delete(k) }, key)
	}
	return v.(*storeState)
}

// SetDocChunkBytesForTest makes db store documents larger than n bytes in
// pieces of n bytes (DocChunkBytes by default), so that tests exercise the
// chunked form with small documents. It affects writes made after it.
func (db *DB) SetDocChunkBytesForTest(n int) {
	if n <= 0 {
		n = DocChunkBytes
	}
	st := db.docState()
	storeStates.Store(weak.Make(db), &storeState{chunkBytes: n, streams: st.streams})
}

// docMeta is how a world row says its document is kept.
type docMeta struct {
	chunked bool
	len     int64
	splice  bool
}

func (m docMeta) info() *worldforge.DocInfo {
	return &worldforge.DocInfo{Len: m.len, SplicesRuntime: m.splice}
}

// scanDocMeta turns the doc_len and doc_splice columns into a docMeta.
func scanDocMeta(n sql.NullInt64, splice int64) docMeta {
	return docMeta{chunked: n.Valid, len: n.Int64, splice: splice != 0}
}

// docWrite is a document ready to be stored: the values of the doc,
// doc_len and doc_splice columns, and the chunks (none when inline).
type docWrite struct {
	doc, docLen any
	splice      int
	chunks      [][]byte
}

// planDoc decides how doc is stored: inline up to the chunk size, else in
// chunks (subslices of doc, not copies).
func (db *DB) planDoc(doc []byte) docWrite {
	size := db.docState().chunkBytes
	if len(doc) <= size {
		// doc_splice is recorded for a whole document too, so that a read
		// need not validate it again (documents written before it was
		// say 0: not known, validated on each read as before).
		return docWrite{doc: jsonArg(doc), splice: b2i(worldforge.SplicesRuntime(doc))}
	}
	d := docWrite{docLen: int64(len(doc)), splice: b2i(worldforge.SplicesRuntime(doc))}
	for i := 0; i < len(doc); i += size {
		d.chunks = append(d.chunks, doc[i:min(i+size, len(doc))])
	}
	return d
}

// writeChunks stores the document's chunks (run in the transaction that
// writes the world row; the old chunks, if any, deleted first).
func (d docWrite) writeChunks(ctx context.Context, q querier, worldID string) error {
	for i, c := range d.chunks {
		if _, err := q.exec(ctx, "INSERT INTO world_doc_chunks (world_id, seq, data) VALUES (?, ?, ?)", worldID, i, c); err != nil {
			return err
		}
	}
	return nil
}

// deleteChunks deletes a world's chunks.
func deleteChunks(ctx context.Context, q querier, worldID string) error {
	_, err := q.exec(ctx, "DELETE FROM world_doc_chunks WHERE world_id = ?", worldID)
	return err
}

// errDocLength is a chunked document whose chunks do not add up to its
// recorded length: a store written by something else than this package.
var errDocLength = errors.New("world document: chunks do not match its length")

// readChunks reads a chunked document whole, with q (a transaction).
func readChunks(ctx context.Context, q querier, worldID string, n int64) ([]byte, error) {
	rows, err := q.query(ctx, chunkQuery, worldID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	doc := make([]byte, 0, n)
	for rows.Next() {
		var b sql.RawBytes
		if err := rows.Scan(&b); err != nil {
			return nil, err
		}
		if int64(len(doc)+len(b)) > n {
			return nil, errDocLength
		}
		doc = append(doc, b...)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if int64(len(doc)) != n {
		return nil, errDocLength
	}
	return doc, nil
}

// snapshotOptions begin a read transaction that sees one snapshot: on
// PostgreSQL REPEATABLE READ (READ COMMITTED takes one per statement); on
// SQLite a deferred BEGIN, whose first read fixes the snapshot (WAL).
func (db *DB) snapshotOptions() *sql.TxOptions {
	if db.engine == EnginePostgres {
		return &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	return &sql.TxOptions{ReadOnly: true}
}

// snapshot runs fn in a read transaction on the reader pool.
func (db *DB) snapshot(ctx context.Context, fn func(q querier) error) error {
	tx, err := db.reader.db.BeginTx(ctx, db.snapshotOptions())
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback() // read only: nothing to commit
	return fn(querier{p: db.reader, tx: tx})
}

// findWorldSnapshot is FindWorldByID for a world whose document was seen
// chunked: the row again and its chunks, from one snapshot.
func (db *DB) findWorldSnapshot(ctx context.Context, id string) (*worldforge.World, error) {
	var w *worldforge.World
	err := db.snapshot(ctx, func(q querier) error {
		var (
			m   docMeta
			err error
		)
		if w, m, err = scanWorld(q.queryRow(ctx, "SELECT "+worldCols+" FROM worlds WHERE id = ?", id)); err != nil {
			return err
		}
		if m.chunked {
			w.JSON, err = readChunks(ctx, q, id, m.len)
		}
		return err
	})
	return w, err
}

// readWorldSnapshot is ReadWorld for a world whose document was seen
// chunked.
func (db *DB) readWorldSnapshot(ctx context.Context, id string) (w *worldforge.World, rt *worldforge.WorldRuntime, err error) {
	err = db.snapshot(ctx, func(q querier) error {
		var m docMeta
		if w, rt, m, err = readWorld(ctx, q, id, true); err != nil {
			return err
		}
		if m.chunked {
			w.JSON, err = readChunks(ctx, q, id, m.len)
		}
		return err
	})
	return w, rt, err
}

// ReadWorldDeferred implements worldforge.WorldStreamer: ReadWorld (the
// same one query), except that a chunked document is not read. A whole
// document written since doc_splice is recorded for every document comes
// with its DocInfo (Inline) when it splices.
func (db *DB) ReadWorldDeferred(ctx context.Context, worldID string) (*worldforge.World, *worldforge.WorldRuntime, *worldforge.DocInfo, error) {
	w, rt, m, err := readWorld(ctx, db.reader.q(), worldID, true)
	if err != nil {
		return nil, nil, nil, wrap("read world", err)
	}
	if !m.chunked {
		if m.splice && w.JSON != nil {
			return w, rt, &worldforge.DocInfo{Len: int64(len(w.JSON)), SplicesRuntime: true, Inline: true}, nil
		}
		return w, rt, nil, nil
	}
	return w, rt, m.info(), nil
}

// StreamWorld implements worldforge.WorldStreamer. A chunked document is
// read through a read transaction held until the DocReader is closed; at
// most half the reader pool's connections serve streams at once (a stream
// waits for its turn, without a connection, until ctx ends). The snapshot
// stays open while the caller sends the document: on SQLite it keeps the
// WAL from being checkpointed past it, on PostgreSQL it holds back VACUUM,
// for as long as the slowest client takes (bounded by the HTTP server's
// write timeout).
func (db *DB) StreamWorld(ctx context.Context, worldID string) (*worldforge.World, *worldforge.WorldRuntime, worldforge.DocReader, error) {
	sem := db.docState().streams
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, nil, wrap("stream world", ctx.Err())
	}
	release := func() { <-sem }
	tx, err := db.reader.db.BeginTx(ctx, db.snapshotOptions())
	if err != nil {
		release()
		return nil, nil, nil, wrap("stream world", fmt.Errorf("begin: %w", err))
	}
	fail := func(err error) (*worldforge.World, *worldforge.WorldRuntime, worldforge.DocReader, error) {
		tx.Rollback()
		release()
		return nil, nil, nil, wrap("stream world", err)
	}
	q := querier{p: db.reader, tx: tx}
	w, rt, m, err := readWorld(ctx, q, worldID, true)
	if err != nil {
		return fail(err)
	}
	if !m.chunked {
		tx.Rollback()
		release()
		return w, rt, nil, nil
	}
	rows, err := q.query(ctx, chunkQuery, worldID)
	if err != nil {
		return fail(err)
	}
	return w, rt, &docReader{tx: tx, rows: rows, meta: m, release: release}, nil
}

// docReader reads a chunked document from an open snapshot, one chunk at
// a time (each is the driver's buffer for the row, valid until the next).
type docReader struct {
	tx      *sql.Tx
	rows    *sql.Rows
	meta    docMeta
	release func()

	cur    []byte
	read   int64
	err    error
	closed bool
}

func (r *docReader) Info() worldforge.DocInfo { return *r.meta.info() }

func (r *docReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	for len(r.cur) == 0 {
		if !r.rows.Next() {
			err := r.rows.Err()
			if err == nil && r.read != r.meta.len {
				err = errDocLength
			}
			if err != nil {
				r.err = wrap("stream world", err)
			} else {
				r.err = io.EOF
			}
			return 0, r.err
		}
		var b sql.RawBytes
		if err := r.rows.Scan(&b); err != nil {
			r.err = wrap("stream world", err)
			return 0, r.err
		}
		if r.read+int64(len(b)) > r.meta.len {
			r.err = wrap("stream world", errDocLength)
			return 0, r.err
		}
		r.cur = b
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	r.read += int64(n)
	return n, nil
}

// WriteTo writes the rest of the document to w chunk by chunk, without
// copying it through a buffer of io.Copy's.
func (r *docReader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for {
		if len(r.cur) > 0 {
			n, err := w.Write(r.cur)
			total += int64(n)
			r.read += int64(n)
			r.cur = r.cur[n:]
			if err != nil {
				return total, err
			}
		}
		// Read with an empty buffer fetches the next chunk into r.cur.
		if _, err := r.Read(nil); err != nil {
			if err == io.EOF {
				return total, nil
			}
			return total, err
		}
	}
}

// Close ends the snapshot.
func (r *docReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.cur = nil
	err := r.rows.Close()
	if rerr := r.tx.Rollback(); err == nil && !errors.Is(rerr, sql.ErrTxDone) {
		err = rerr
	}
	r.release()
	return wrap("stream world", err)
}
