package sqlstore

import (
	"context"
	"slices"

	"github.com/worldforge-go/worldforge"
)

// Quotas (worldforge.Quotas) are checked here, inside the transaction of
// the write they limit, so that every adapter (MCP tools, REST routes, the
// admin CLI) meets the same rule and no two writes race past a limit: the
// count and the insert are one transaction, serialized per user. On SQLite
// every write transaction is BEGIN IMMEDIATE on the one writer connection,
// so they run one at a time; on PostgreSQL the transaction first locks the
// user's row (lockUser), or for lore the world's row (lockWorldLore), and
// counts after the lock, when READ COMMITTED shows every write that held
// it before. A refused write returns worldforge.QuotaExceeded and rolls
// back: nothing of it, its audit row included, is stored.

// SetQuotas sets the quotas the store enforces from its next write on; the
// zero Quotas (a new store's) enforces none.
func (db *DB) SetQuotas(q worldforge.Quotas) { db.quotas.Store(&q) }

// Quotas returns the quotas the store enforces.
func (db *DB) Quotas() worldforge.Quotas {
	if q := db.quotas.Load(); q != nil {
		return *q
	}
	return worldforge.Quotas{}
}

// lockUserQuery locks a user's row on PostgreSQL. FOR NO KEY UPDATE
// conflicts with itself but not with the FOR KEY SHARE locks that inserts
// referencing the user take, so it serializes quota checks of one user
// without blocking anything else.
const lockUserQuery = "SELECT 1 FROM users WHERE id = ? FOR NO KEY UPDATE"

// lockUser takes the user's quota lock for the transaction (see above); a
// missing user is not_found.
func lockUser(ctx context.Context, q querier, userID string) error {
	query := "SELECT 1 FROM users WHERE id = ?"
	if q.p.d == dialectPostgres {
		query = lockUserQuery
	}
	var one int
	err := q.queryRow(ctx, query, userID).Scan(&one)
	if errNoRows(err) {
		return worldforge.ErrNotFound
	}
	return err
}

// ownedCells counts the worlds ownerID owns, except the world except
// (none when ""), and sums their cells.
func ownedCells(ctx context.Context, q querier, ownerID, except string) (worlds, cells int64, err error) {
	err = q.queryRow(ctx,
		`SELECT COUNT(*), COALESCE(SUM(CAST(grid_cols AS BIGINT) * CAST(grid_rows AS BIGINT)), 0)
		FROM worlds WHERE owner_id = ? AND id <> ?`, ownerID, except).Scan(&worlds, &cells)
	return worlds, cells, err
}

// checkNewWorld refuses a new world of w's size for its owner over the
// worlds quota, then the cells quota. It runs in the transaction that
// inserts the world.
func (db *DB) checkNewWorld(ctx context.Context, q querier, w *worldforge.World) error {
	qs := db.Quotas()
	if qs.Worlds <= 0 && qs.Cells <= 0 {
		return nil
	}
	if err := lockUser(ctx, q, w.OwnerID); err != nil {
		return err
	}
	n, cells, err := ownedCells(ctx, q, w.OwnerID, "")
	if err != nil {
		return err
	}
	if qs.Worlds > 0 && n+1 > qs.Worlds {
		return worldforge.QuotaExceeded(worldforge.QuotaWorlds)
	}
	if qs.Cells > 0 && cells+int64(w.Cols)*int64(w.Rows) > qs.Cells {
		return worldforge.QuotaExceeded(worldforge.QuotaCells)
	}
	return nil
}

// checkResize refuses resizing w (as it is now) to cols×rows when that
// grows it and brings its owner's cells over the quota.
func (db *DB) checkResize(ctx context.Context, q querier, w *worldforge.World, cols, rows int) error {
	limit := db.Quotas().Cells
	grown := int64(cols) * int64(rows)
	if limit <= 0 || grown <= int64(w.Cols)*int64(w.Rows) {
		return nil
	}
	if err := lockUser(ctx, q, w.OwnerID); err != nil {
		return err
	}
	_, others, err := ownedCells(ctx, q, w.OwnerID, w.ID)
	if err != nil {
		return err
	}
	if others+grown > limit {
		return worldforge.QuotaExceeded(worldforge.QuotaCells)
	}
	return nil
}

// CheckResizeQuota implements worldforge.WorldStore: the cells quota of
// checkResize, read through the reader pool without locks (advice ahead
// of the resize's work; ResizeWorld checks again in its transaction).
func (db *DB) CheckResizeQuota(ctx context.Context, worldID string, cols, rows int) error {
	limit := db.Quotas().Cells
	if limit <= 0 {
		return nil
	}
	var owner string
	var oldCols, oldRows int64
	q := db.reader.q()
	err := q.queryRow(ctx, "SELECT owner_id, grid_cols, grid_rows FROM worlds WHERE id = ?", worldID).Scan(&owner, &oldCols, &oldRows)
	if errNoRows(err) {
		return wrap("check resize quota", worldforge.ErrNotFound)
	}
	if err != nil {
		return wrap("check resize quota", err)
	}
	grown := int64(cols) * int64(rows)
	if grown <= oldCols*oldRows {
		return nil
	}
	_, others, err := ownedCells(ctx, q, owner, worldID)
	if err != nil {
		return wrap("check resize quota", err)
	}
	if others+grown > limit {
		return wrap("check resize quota", worldforge.QuotaExceeded(worldforge.QuotaCells))
	}
	return nil
}

// checkNewLore refuses a new world's lore over the lore quota: the
// distinct entities of c (a world is created with its lore).
func (db *DB) checkNewLore(c *worldforge.WorldContent) error {
	limit := db.Quotas().LoreEntities
	if limit <= 0 || c == nil || int64(len(c.Lore)) <= limit {
		return nil
	}
	type key struct{ collection, id string }
	seen := make(map[key]bool, len(c.Lore))
	unnamed := 0 // an id assigned on insert: a new entity each
	for _, e := range c.Lore {
		if e.ID == "" {
			unnamed++
			continue
		}
		seen[key{e.Collection, e.ID}] = true
	}
	if int64(len(seen)+unnamed) > limit {
		return worldforge.QuotaExceeded(worldforge.QuotaLoreEntities)
	}
	return nil
}

// checkNewKey refuses an API key for userID once the user has the keys
// quota of unrevoked keys.
func (db *DB) checkNewKey(ctx context.Context, q querier, userID string) error {
	limit := db.Quotas().Keys
	if limit <= 0 {
		return nil
	}
	if err := lockUser(ctx, q, userID); err != nil {
		return err
	}
	var n int64
	if err := q.queryRow(ctx, "SELECT COUNT(*) FROM api_keys WHERE user_id = ? AND revoked_at IS NULL", userID).Scan(&n); err != nil {
		return err
	}
	if n >= limit {
		return worldforge.QuotaExceeded(worldforge.QuotaKeys)
	}
	return nil
}

// checkNewProposal refuses a proposal by actorID once the user has the
// pending-proposals quota of proposals pending.
func (db *DB) checkNewProposal(ctx context.Context, q querier, actorID string) error {
	limit := db.Quotas().PendingProposals
	if limit <= 0 {
		return nil
	}
	if err := lockUser(ctx, q, actorID); err != nil {
		return err
	}
	var n int64
	// Kept by triggers on proposals (migration 011).
	if err := q.queryRow(ctx, "SELECT COALESCE((SELECT n FROM pending_proposal_counts WHERE actor_id = ?), 0)", actorID).Scan(&n); err != nil {
		return err
	}
	if n >= limit {
		return worldforge.QuotaExceeded(worldforge.QuotaPendingProposals)
	}
	return nil
}

// loreGuard holds the lore counts of worlds before a write to their lore;
// check refuses the write if it added entities to a world and left it over
// the quota. A nil guard checks nothing.
type loreGuard struct {
	limit  int64
	before map[string]int64
}

// countLore counts the world's lore entities.
func countLore(ctx context.Context, q querier, worldID string) (int64, error) {
	var n int64
	err := q.queryRow(ctx, "SELECT COUNT(*) FROM lore_entities WHERE world_id = ?", worldID).Scan(&n)
	return n, err
}

// guardLore takes the lore lock of each world (in id order) and counts its
// entities, when the lore quota is on.
func (db *DB) guardLore(ctx context.Context, q querier, worldIDs ...string) (*loreGuard, error) {
	limit := db.Quotas().LoreEntities
	if limit <= 0 || len(worldIDs) == 0 {
		return nil, nil
	}
	ids := slices.Compact(slices.Sorted(slices.Values(worldIDs)))
	g := &loreGuard{limit: limit, before: make(map[string]int64, len(ids))}
	for _, id := range ids {
		if err := lockWorldLore(ctx, q, id); err != nil {
			return nil, err
		}
		n, err := countLore(ctx, q, id)
		if err != nil {
			return nil, err
		}
		g.before[id] = n
	}
	return g, nil
}

// guardLoreOf is guardLore for the worlds whose lore the proposals change
// (world proposals).
func (db *DB) guardLoreOf(ctx context.Context, q querier, ps ...worldforge.Proposal) (*loreGuard, error) {
	if db.Quotas().LoreEntities <= 0 {
		return nil, nil
	}
	var ids []string
	for _, p := range ps {
		if p.Kind != worldforge.ProposalWorld {
			continue
		}
		id := p.WorldID
		if id == "" {
			id = p.TargetID
		}
		if id != "" {
			ids = append(ids, id)
		}
	}
	return db.guardLore(ctx, q, ids...)
}

// check counts the guarded worlds' lore again, in the same transaction.
func (g *loreGuard) check(ctx context.Context, q querier) error {
	if g == nil {
		return nil
	}
	for id, before := range g.before {
		n, err := countLore(ctx, q, id)
		if err != nil {
			return err
		}
		if n > g.limit && n > before {
			return worldforge.QuotaExceeded(worldforge.QuotaLoreEntities)
		}
	}
	return nil
}
