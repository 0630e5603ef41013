package sqlstore

import (
	"context"

	"github.com/worldforge-go/worldforge"
)

// World stamps (migration 011): triggers give a world a new stamp, from
// one counter (SQLite) or sequence (PostgreSQL) for the whole database,
// whenever its row, presence, opened POIs or inventory change, in the
// transaction that changes them. A stamp is therefore never reused, and
// two reads that see the same stamp for a world saw the same answer of
// read_world, whichever process wrote in between.

// stampCol is the world row's stamp in readWorld's statement (0 for a
// world that has none).
const stampCol = "COALESCE((SELECT stamp FROM world_stamps WHERE world_id = worlds.id), 0)"

// ReadWorldSince implements worldforge.WorldStore.ReadWorldSince: with a
// stamp (> 0) that is still the world's, it reads only the stamp, by
// primary key, and returns nil parts; otherwise it is ReadWorldDeferred
// with the stamp of the state it read, read in the same statement.
func (db *DB) ReadWorldSince(ctx context.Context, worldID string, stamp int64) (*worldforge.World, *worldforge.WorldRuntime, *worldforge.DocInfo, int64, error) {
	if stamp > 0 {
		// Read with the stamps other calls ask for at the same time
		// (stampcheck.go).
		now, err := db.stamps.read(ctx, worldID)
		if err != nil {
			return nil, nil, nil, 0, wrap("read world", err)
		}
		if now == stamp {
			return nil, nil, nil, stamp, nil
		}
		// Changed, or no stamp (a missing world): read it all.
	}
	return db.readWorldDeferred(ctx, worldID)
}
