package sqlstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/sqlstoretest"
	"github.com/worldforge-go/worldforge/internal/worldjson"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// chunkCount is how many chunk rows the world has.
func chunkCount(t *testing.T, db *sqlstore.DB, worldID string) int {
	t.Helper()
	n, err := db.QueryIntForTest(t.Context(), "SELECT COUNT(*) FROM world_doc_chunks WHERE world_id = ?", worldID)
	must(t, err)
	return n
}

// docVariants are documents of many shapes around the chunk size n:
// spliceable objects, and ones the runtime cannot be spliced into.
func docVariants(n int) map[string]string {
	pad := func(prefix string, size int, fill string) string {
		var b strings.Builder
		b.WriteString(prefix)
		for b.Len() < size {
			b.WriteString(fill)
		}
		return b.String()
	}
	obj := func(size int, fill string) string {
		return `{"cells":"` + pad("", size-len(`{"cells":""}`), fill) + `"}`
	}
	return map[string]string{
		"tiny":             `{"a":1}`,
		"at the size":      obj(n, "x"),
		"one over":         obj(n+1, "x"),
		"many chunks":      obj(7*n+3, "ab"),
		"runes across":     obj(5*n+1, "é€😀<>&\u2028\u2029"),
		"spaced":           " { \"cells\" : \"" + pad("", 3*n, "y") + "\" } \n",
		"mentions runtime": `{"runtime":"` + pad("", 3*n, "z") + `"}`,
		"has an escape":    `{"u":"\u00e9` + pad("", 3*n, "w") + `"}`,
		"not an object":    `["` + pad("", 3*n, "v") + `"]`,
		"empty object":     `{}`,
	}
}

// TestWorldDocChunks: documents over the chunk size are kept in chunks
// and read back byte for byte by every reader, on both engines; smaller
// ones stay inline with no chunk row.
func TestWorldDocChunks(t *testing.T) {
	t.Parallel()
	const size = 64
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		sqlstoretest.SetDocChunkBytes(db, size)
		owner := newUser(t, db, "owner")
		for name, doc := range docVariants(size) {
			t.Run(name, func(t *testing.T) {
				w := &worldforge.World{OwnerID: owner.ID, Name: name, Cols: 2, Rows: 2, JSON: json.RawMessage(doc)}
				must(t, db.CreateWorld(ctx, w))
				chunked := len(doc) > size
				wantChunks := 0
				if chunked {
					wantChunks = (len(doc) + size - 1) / size
				}
				if got := chunkCount(t, db, w.ID); got != wantChunks {
					t.Errorf("%d chunk rows, want %d", got, wantChunks)
				}
				checkDoc(t, db, w.ID, doc, chunked)
			})
		}
	})
}

// checkDoc reads the world's document through every reader and requires
// doc back.
func checkDoc(t *testing.T, db *sqlstore.DB, worldID, doc string, chunked bool) {
	t.Helper()
	ctx := t.Context()
	got, err := dbtest.World(ctx, db, worldID)
	must(t, err)
	if string(got.JSON) != doc {
		t.Errorf("ReadWorld: %d bytes %.60q…, want %d bytes %.60q…", len(got.JSON), got.JSON, len(doc), doc)
	}
	rw, _, err := db.ReadWorld(ctx, worldID)
	must(t, err)
	if string(rw.JSON) != doc {
		t.Errorf("ReadWorld: %.60q…, want %.60q…", rw.JSON, doc)
	}
	if rw.Version != got.Version || rw.Cols != got.Cols {
		t.Errorf("ReadWorld read twice: %+v, then %+v", got, rw)
	}
	dw, _, info, err := db.ReadWorldDeferred(ctx, worldID)
	must(t, err)
	if chunked != (info != nil && !info.Inline) {
		t.Fatalf("ReadWorldDeferred: doc info %+v, want chunked %v", info, chunked)
	}
	if !chunked && (info != nil) != worldjson.Splices([]byte(doc)) {
		t.Errorf("ReadWorldDeferred: inline doc info %+v, SplicesRuntime %v", info, worldjson.Splices([]byte(doc)))
	}
	if chunked {
		if dw.JSON != nil || info.Len != int64(len(doc)) || info.SplicesRuntime != worldjson.Splices([]byte(doc)) {
			t.Errorf("ReadWorldDeferred: JSON %.20q, info %+v", dw.JSON, info)
		}
	} else if string(dw.JSON) != doc {
		t.Errorf("ReadWorldDeferred: %.60q…, want %.60q…", dw.JSON, doc)
	}
	sw, _, r, err := db.StreamWorld(ctx, worldID)
	must(t, err)
	if chunked != (r != nil) {
		t.Fatalf("StreamWorld: reader %v, want chunked %v", r, chunked)
	}
	if r != nil {
		if sw.JSON != nil || r.Info() != *info {
			t.Errorf("StreamWorld: JSON %.20q, info %+v, want %+v", sw.JSON, r.Info(), *info)
		}
		// Through Read with an odd buffer (the writer path is io.Copy's).
		var b bytes.Buffer
		buf := make([]byte, 5)
		for {
			n, err := r.Read(buf)
			b.Write(buf[:n])
			if err == io.EOF {
				break
			}
			must(t, err)
		}
		must(t, r.Close())
		must(t, r.Close()) // twice is fine
		if b.String() != doc {
			t.Errorf("StreamWorld: %.60q…, want %.60q…", b.String(), doc)
		}
	} else if string(sw.JSON) != doc {
		t.Errorf("StreamWorld: %.60q…, want %.60q…", sw.JSON, doc)
	}
}

// TestWorldDocChunksResize: a resize reads a chunked document back whole,
// and replaces the chunks: chunked → small → chunked → chunked leaves
// exactly the chunks of the last document, none of the earlier ones; a
// world's deletion takes its chunks along. Documents written inline before
// (an older binary, or a larger chunk size) are read at any size, and
// chunked ones after the size changes.
func TestWorldDocChunksResize(t *testing.T) {
	t.Parallel()
	const size = 100
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		owner := newUser(t, db, "owner")
		// Written with the default size: inline although "large" now.
		old := `{"grid":"` + strings.Repeat("o", 10*size) + `"}`
		w := &worldforge.World{OwnerID: owner.ID, Name: "Old", Cols: 1, Rows: 1, JSON: json.RawMessage(old)}
		must(t, db.CreateWorld(ctx, w))
		sqlstoretest.SetDocChunkBytes(db, size)
		if n := chunkCount(t, db, w.ID); n != 0 {
			t.Fatalf("%d chunks for an inline document", n)
		}
		checkDoc(t, db, w.ID, old, false)

		docs := []string{
			`{"grid":"` + strings.Repeat("a", 5*size) + `"}`,
			`{"grid":"small"}`,
			`{"grid":"` + strings.Repeat("é", 3*size) + `"}`,
			`{"grid":"` + strings.Repeat("b", 2*size) + `"}`,
		}
		prev := old
		for i, doc := range docs {
			got, err := db.ResizeWorld(ctx, w.ID, func(cur *worldforge.World, _ []worldforge.POI, _ *worldforge.WorldRuntime) (*worldforge.ResizePlan, error) {
				if string(cur.JSON) != prev {
					t.Errorf("resize %d saw %.40q…, want %.40q…", i, cur.JSON, prev)
				}
				return &worldforge.ResizePlan{Doc: []byte(doc), Cols: i + 2, Rows: i + 2}, nil
			})
			must(t, err)
			if string(got.JSON) != doc || got.Version != int64(i+2) {
				t.Errorf("resize %d returned %.40q… version %d", i, got.JSON, got.Version)
			}
			chunked := len(doc) > size
			want := 0
			if chunked {
				want = (len(doc) + size - 1) / size
			}
			if n := chunkCount(t, db, w.ID); n != want {
				t.Errorf("after resize %d: %d chunk rows, want %d", i, n, want)
			}
			checkDoc(t, db, w.ID, doc, chunked)
			prev = doc
		}
		// A larger size now: the chunked document is still read.
		sqlstoretest.SetDocChunkBytes(db, 0)
		checkDoc(t, db, w.ID, prev, true)

		// CreateWorldContent chunks too, in its transaction.
		sqlstoretest.SetDocChunkBytes(db, size)
		big := `{"grid":"` + strings.Repeat("c", 4*size) + `"}`
		w2 := &worldforge.World{OwnerID: owner.ID, Name: "Generated", JSON: json.RawMessage(big)}
		must(t, db.CreateWorldContent(ctx, w2, &worldforge.WorldContent{POIs: []worldforge.POI{{Name: "Well", X: 1, Y: 1}}}, owner.ID))
		checkDoc(t, db, w2.ID, big, true)

		must(t, db.ExecForTest(ctx, "DELETE FROM worlds WHERE id = ?", w.ID))
		if n := chunkCount(t, db, w.ID); n != 0 {
			t.Errorf("%d chunk rows left by a deleted world", n)
		}
		if n := chunkCount(t, db, w2.ID); n == 0 {
			t.Errorf("the other world lost its chunks")
		}
	})
}

// TestStreamWorldSnapshot: a stream opened before a resize commits reads
// the document, header and runtime state of before, whole, and a stream
// opened after reads the new ones.
func TestStreamWorldSnapshot(t *testing.T) {
	t.Parallel()
	const size = 50
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		sqlstoretest.SetDocChunkBytes(db, size)
		owner := newUser(t, db, "owner")
		v1 := `{"v":"` + strings.Repeat("1", 20*size) + `"}`
		v2 := `{"v":"` + strings.Repeat("2", 30*size) + `"}`
		w := &worldforge.World{OwnerID: owner.ID, Name: "Snap", Cols: 1, Rows: 1, JSON: json.RawMessage(v1)}
		must(t, db.CreateWorld(ctx, w))
		sw, _, r, err := db.StreamWorld(ctx, w.ID)
		must(t, err)
		first := make([]byte, 10)
		if _, err := io.ReadFull(r, first); err != nil {
			t.Fatal(err)
		}
		_, err = db.ResizeWorld(ctx, w.ID, func(*worldforge.World, []worldforge.POI, *worldforge.WorldRuntime) (*worldforge.ResizePlan, error) {
			return &worldforge.ResizePlan{Doc: []byte(v2), Cols: 9, Rows: 9}, nil
		})
		must(t, err)
		rest, err := io.ReadAll(r)
		must(t, err)
		must(t, r.Close())
		if got := string(first) + string(rest); got != v1 || sw.Version != 1 || sw.Cols != 1 {
			t.Errorf("stream across a resize: version %d, cols %d, %d bytes (want v1's %d)", sw.Version, sw.Cols, len(got), len(v1))
		}
		checkDoc(t, db, w.ID, v2, true)
	})
}

// TestStreamWorldConcurrentResize: readers stream a chunked world while a
// writer resizes it over and over; every document read is whole and the
// one of the version its header names (run with -race).
func TestStreamWorldConcurrentResize(t *testing.T) {
	t.Parallel()
	const size = 128
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		sqlstoretest.SetDocChunkBytes(db, size)
		owner := newUser(t, db, "owner")
		docOf := func(version int64) string {
			// Versions alternate between small and chunked documents.
			n := 3 * size * int(version%4)
			return fmt.Sprintf(`{"version":%d,"fill":"%s"}`, version, strings.Repeat(string(rune('a'+version%26)), n))
		}
		w := &worldforge.World{OwnerID: owner.ID, Name: "Busy", JSON: json.RawMessage(docOf(1))}
		must(t, db.CreateWorld(ctx, w))
		const resizes = 40
		var wg sync.WaitGroup
		done := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(done)
			for range resizes {
				_, err := db.ResizeWorld(ctx, w.ID, func(cur *worldforge.World, _ []worldforge.POI, _ *worldforge.WorldRuntime) (*worldforge.ResizePlan, error) {
					return &worldforge.ResizePlan{Doc: []byte(docOf(cur.Version + 1)), Cols: 1, Rows: 1}, nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for reads := 0; ; reads++ {
					select {
					case <-done:
						if reads > 0 {
							return
						}
					default:
					}
					if err := readOnce(ctx, db, w.ID, docOf); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
	})
}

func readOnce(ctx context.Context, db *sqlstore.DB, id string, docOf func(int64) string) error {
	w, _, r, err := db.StreamWorld(ctx, id)
	if err != nil {
		return err
	}
	doc := w.JSON
	if r != nil {
		doc, err = io.ReadAll(r)
		r.Close()
		if err != nil {
			return err
		}
	}
	if want := docOf(w.Version); string(doc) != want {
		return fmt.Errorf("version %d: read %.50q… (%d bytes), want %.50q… (%d bytes)", w.Version, doc, len(doc), want, len(want))
	}
	f, err := dbtest.World(ctx, db, id)
	if err != nil {
		return err
	}
	if want := docOf(f.Version); string(f.JSON) != want {
		return fmt.Errorf("ReadWorld version %d: %d bytes, want %d", f.Version, len(f.JSON), len(want))
	}
	return nil
}
