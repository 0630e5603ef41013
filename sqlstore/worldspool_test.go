package sqlstore_test

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/sqlstoretest"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// TestStreamWorldHoldsNoSlot: a DocReader that is open but not read holds
// neither a reader connection nor a stream slot (the document is copied
// out of its snapshot before StreamWorld returns): with four connections
// (two slots), eight readers opened one after another and left unread all
// open, other reads still run, and each reader then reads its document
// whole, on both engines.
func TestStreamWorldHoldsNoSlot(t *testing.T) {
	t.Parallel()
	const size, readers = 64, 8
	dbtest.ForEachDSN(t, func(t *testing.T, dsn string) {
		opts := dbtest.Options()
		opts.MaxOpenConns = 4
		db, err := sqlstore.Open(t.Context(), dsn, opts)
		must(t, err)
		t.Cleanup(func() { db.Close() })
		sqlstoretest.SetDocChunkBytes(db, size)
		owner := newUser(t, db, "owner")
		doc := `{"v":"` + strings.Repeat("s", 40*size) + `"}`
		w := &worldforge.World{OwnerID: owner.ID, Name: "Spool", Cols: 1, Rows: 1, JSON: json.RawMessage(doc)}
		must(t, db.CreateWorld(t.Context(), w))
		var open []worldforge.DocReader
		for i := range readers {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			_, _, r, err := db.StreamWorld(ctx, w.ID)
			cancel()
			if err != nil || r == nil {
				t.Fatalf("stream %d with %d open and unread: %v, %v", i, len(open), r, err)
			}
			open = append(open, r)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if _, err := dbtest.World(ctx, db, w.ID); err != nil {
			t.Fatalf("a read with %d streams open: %v", readers, err)
		}
		for i, r := range open {
			b, err := io.ReadAll(r)
			must(t, err)
			must(t, r.Close())
			if string(b) != doc {
				t.Errorf("stream %d: %d bytes, want %d", i, len(b), len(doc))
			}
		}
	})
}
