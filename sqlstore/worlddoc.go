package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/sqlstoretest"
	"github.com/worldforge-go/worldforge/internal/worldjson"
)

// World documents in pieces (migration 006).
//
// A world's document of up to DocChunkBytes is kept in worlds.doc, as it
// always was. A larger one is kept in world_doc_chunks: its bytes exactly
// as given (nothing is re-encoded, so every reader gets back what was
// written), cut into pieces of DocChunkBytes numbered from 0; worlds.doc is
// then NULL, worlds.doc_len holds the length and worlds.doc_splice whether
// worldjson.Splices holds for it. Documents written before the
// migration stay inline, whatever their size: a reader takes both forms.
//
// The two writers of a document (insertWorld, ResizeWorld) replace the
// chunks in their own transaction. A world's document changes only with
// its version (a new world is version 1; a resize raises it).
//
// Readers that need the whole document (ReadWorld, ResizeWorld) read the
// world row as before; only when it says "chunked"
// do they read the row again with the chunks in one read transaction (a
// snapshot: REPEATABLE READ on PostgreSQL, a deferred transaction on the
// SQLite reader in WAL mode), so a concurrent resize never tears a
// document. A small world costs exactly the queries it did. StreamWorld
// copies the document from that snapshot into a spool file and ends the
// snapshot before its caller sends the document on, so the memory a read
// takes is one chunk, not the world, and a slow client holds no
// database connection.

// DocChunkBytes is the size of the pieces a world document larger than it
// is stored in, and so the most a streamed read_world holds of it at once.
const DocChunkBytes = 256 << 10

// chunkQuery reads a world's chunks in order.
const chunkQuery = "SELECT data FROM world_doc_chunks WHERE world_id = ? ORDER BY seq"

// docState is what a DB keeps for its world documents beyond its pools:
// the chunk size (tests lower it, through package internal/sqlstoretest)
// and the bound on concurrent streams.
type docState struct {
	chunkBytes atomic.Int64
	streams    chan struct{}
}

// init sets the defaults for a store whose reader pool is readers.
func (st *docState) init(readers *sql.DB) {
	st.chunkBytes.Store(DocChunkBytes)
	// Streams hold a reader connection each while they copy the document
	// to their spool file: at most half the reader pool, so that other
	// reads always find one.
	st.streams = make(chan struct{}, max(1, readers.Stats().MaxOpenConnections/2))
}

func init() {
	sqlstoretest.Install(func(db any, n int) {
		if n <= 0 {
			n = DocChunkBytes
		}
		db.(*DB).docs.chunkBytes.Store(int64(n))
	})
}

// docMeta is how a world row says its document is kept.
type docMeta struct {
	chunked bool
	len     int64
	splice  bool
	// stamp is the world's stamp (world_stamps) read with the row, 0 if
	// it has none.
	stamp int64
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
	size := int(db.docs.chunkBytes.Load())
	if len(doc) <= size {
		// doc_splice is recorded for a whole document too, so that a read
		// need not validate it again (documents written before it was
		// say 0: not known, validated on each read as before).
		return docWrite{doc: jsonArg(doc), splice: b2i(worldjson.Splices(doc))}
	}
	d := docWrite{docLen: int64(len(doc)), splice: b2i(worldjson.Splices(doc))}
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

// ReadWorldDeferred implements WorldStore.ReadWorldDeferred: ReadWorld (the
// same one query), except that a chunked document is not read. A whole
// document written since doc_splice is recorded for every document comes
// with its DocInfo (Inline) when it splices.
func (db *DB) ReadWorldDeferred(ctx context.Context, worldID string) (*worldforge.World, *worldforge.WorldRuntime, *worldforge.DocInfo, error) {
	w, rt, doc, _, err := db.readWorldDeferred(ctx, worldID)
	return w, rt, doc, err
}

// readWorldDeferred is ReadWorldDeferred with the stamp of the state read.
func (db *DB) readWorldDeferred(ctx context.Context, worldID string) (*worldforge.World, *worldforge.WorldRuntime, *worldforge.DocInfo, int64, error) {
	w, rt, m, err := readWorld(ctx, db.reader.q(), worldID, true)
	if err != nil {
		return nil, nil, nil, 0, wrap("read world", err)
	}
	if !m.chunked {
		if m.splice && w.JSON != nil {
			return w, rt, &worldforge.DocInfo{Len: int64(len(w.JSON)), SplicesRuntime: true, Inline: true}, m.stamp, nil
		}
		return w, rt, nil, m.stamp, nil
	}
	return w, rt, m.info(), m.stamp, nil
}

// StreamWorld implements WorldStore.StreamWorld. A chunked document is
// copied, chunk by chunk, from one read transaction (a snapshot) into a
// spool file — an unlinked temporary file in os.TempDir() — and the
// transaction ends before StreamWorld returns: the DocReader reads the
// file. So the store's connection and snapshot are held for the time it
// takes to read the document from the database, never for as long as the
// client takes to receive it: a client that reads slowly, or stops
// reading, holds a file descriptor and the document's size on disk (until
// its writer gives up on it), not a database connection, and does not
// keep the WAL from being checkpointed (SQLite) or VACUUM from running
// (PostgreSQL). At most half the reader pool's connections copy documents
// at once (a copy waits for its turn, without a connection, until ctx
// ends), so that other reads always find one. Memory is one chunk.
func (db *DB) StreamWorld(ctx context.Context, worldID string) (*worldforge.World, *worldforge.WorldRuntime, worldforge.DocReader, error) {
	sem := db.docs.streams
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, nil, wrap("stream world", ctx.Err())
	}
	defer func() { <-sem }()
	var (
		w  *worldforge.World
		rt *worldforge.WorldRuntime
		r  *docReader
	)
	err := db.snapshot(ctx, func(q querier) error {
		var (
			m   docMeta
			err error
		)
		if w, rt, m, err = readWorld(ctx, q, worldID, true); err != nil || !m.chunked {
			return err
		}
		r, err = spoolDoc(ctx, q, worldID, m)
		return err
	})
	if err != nil {
		return nil, nil, nil, wrap("stream world", err)
	}
	if r == nil {
		return w, rt, nil, nil
	}
	return w, rt, r, nil
}

// spoolDoc copies a chunked document, read with q, into an unlinked
// temporary file and returns its reader, positioned at the start.
func spoolDoc(ctx context.Context, q querier, worldID string, m docMeta) (_ *docReader, err error) {
	f, err := os.CreateTemp("", "worldforge-doc-*")
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	// Unlinked at once where the system allows it (the space is freed
	// when the file is closed); otherwise removed by Close.
	removed := os.Remove(f.Name()) == nil
	r := &docReader{f: f, name: f.Name(), removed: removed, meta: m}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	rows, err := q.query(ctx, chunkQuery, worldID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var n int64
	for rows.Next() {
		var b sql.RawBytes
		if err := rows.Scan(&b); err != nil {
			return nil, err
		}
		if n+int64(len(b)) > m.len {
			return nil, errDocLength
		}
		if _, err := f.Write(b); err != nil {
			return nil, fmt.Errorf("spool: %w", err)
		}
		n += int64(len(b))
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if n != m.len {
		return nil, errDocLength
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	return r, nil
}

// docReader reads a chunked document from its spool file (spoolDoc):
// exactly meta.len bytes, then io.EOF.
type docReader struct {
	f       *os.File
	name    string
	removed bool
	meta    docMeta

	read   int64
	err    error
	closed bool
}

func (r *docReader) Info() worldforge.DocInfo { return *r.meta.info() }

func (r *docReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.closed {
		return 0, os.ErrClosed
	}
	if left := r.meta.len - r.read; int64(len(p)) > left {
		p = p[:left]
	}
	if len(p) == 0 {
		r.err = io.EOF
		return 0, io.EOF
	}
	n, err := r.f.Read(p)
	r.read += int64(n)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF // the file is shorter than was written
	}
	if err != nil {
		r.err = wrap("stream world", err)
		return n, r.err
	}
	return n, nil
}

// Close closes (and so deletes) the spool file.
func (r *docReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	err := r.f.Close()
	if !r.removed {
		if rerr := os.Remove(r.name); err == nil {
			err = rerr
		}
	}
	return wrap("stream world", err)
}
