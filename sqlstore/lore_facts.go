package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/engine/lore"
)

// Lore facts (migration 004). Every write of a lore entity validates it
// once and stores what engine/lore.Analyze says of it next to it: why it is
// invalid, its folded name, its references (lore_refs, each resolved,
// dangling or a self reference), an era's bounds, an event's era and year
// and whether the year is outside the era. The triggers of migration 004
// carry the effects of one write on other entities (a new entity resolves
// the references to it, a deleted one leaves them dangling, names are
// counted per group, an era's bounds place its events). Each kind of issue
// is then a partial index holding exactly the entities (references, name
// groups) that have one, and LoreIssues reads the issues, not the world.
//
// On PostgreSQL the lore writes of one world are serialised by the world
// row's lock (lockWorldLore): the facts of one write depend on rows another
// write may be adding (does the referenced entity exist?), and under READ
// COMMITTED neither transaction would see the other's rows.

// lockWorldLore takes the world's lore lock for the transaction: on
// PostgreSQL the world row's FOR NO KEY UPDATE lock, which a lore proposal's
// commit also takes (it raises the world's version) and which does not
// block writes of other rows of the world. SQLite has one writer.
func lockWorldLore(ctx context.Context, q querier, worldID string) error {
	if q.p.d != dialectPostgres {
		return nil
	}
	_, err := q.exec(ctx, lockWorldLoreQuery, worldID)
	return err
}

const lockWorldLoreQuery = "SELECT 1 FROM worlds WHERE id = ? FOR NO KEY UPDATE"

// writeLore stores e with its facts: replacing an existing entity of the
// same id when replace is set, or else leaving it as it is and reporting
// false. It runs inside a transaction that holds the world's lore lock (or
// created the world).
func writeLore(ctx context.Context, q querier, e *worldforge.LoreEntity, replace bool) (bool, error) {
	if !slices.Contains(worldforge.LoreCollections, e.Collection) {
		return false, worldforge.BadRequest("unknown lore collection %q", e.Collection)
	}
	if e.ID == "" {
		e.ID = worldforge.NewID("lore")
	}
	e.UpdatedAt = stamp(e.UpdatedAt)
	f := lore.Analyze(e.Collection, e.ID, e.Name, e.JSON)
	outside, err := eventOutside(ctx, q, e.WorldID, &f)
	if err != nil {
		return false, err
	}
	query := loreInsertKeep
	if replace {
		query = loreInsertReplace
	}
	args := append([]any{e.WorldID, e.Collection, e.ID, e.Name, jsonArg(e.JSON), ms(e.UpdatedAt)}, factArgs(&f, outside)...)
	err = q.queryRow(ctx, query, args...).Scan(&e.Version)
	if !replace && errNoRows(err) {
		return false, nil // kept: the entity exists
	}
	if err != nil {
		return false, err
	}
	return true, writeLoreRefs(ctx, q, e.WorldID, e.Collection, e.ID, f.Refs, e.Version > 1)
}

// The facts columns of lore_entities, in factArgs order; facts_for, the
// version the facts describe, is set apart.
const loreFactCols = "name_key, invalid_reason, event_era, event_year, event_outside, era_start, era_end, facts_version"

const loreInsert = `INSERT INTO lore_entities (world_id, collection, id, name, doc, version, updated_at, ` + loreFactCols + `, facts_for)
	VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)
	ON CONFLICT (world_id, collection, id) `

const (
	loreInsertKeep    = loreInsert + `DO NOTHING RETURNING version`
	loreInsertReplace = loreInsert + `DO UPDATE SET
		name = excluded.name, doc = excluded.doc, updated_at = excluded.updated_at,
		version = lore_entities.version + 1,
		name_key = excluded.name_key, invalid_reason = excluded.invalid_reason,
		event_era = excluded.event_era, event_year = excluded.event_year, event_outside = excluded.event_outside,
		era_start = excluded.era_start, era_end = excluded.era_end,
		facts_version = excluded.facts_version, facts_for = lore_entities.version + 1
	RETURNING version`
)

// factArgs are the values of loreFactCols.
func factArgs(f *lore.Facts, outside bool) []any {
	return []any{nullStr(f.NameKey), nullStr(storableText(f.Invalid)), nullStr(f.EraID), nullInt64(f.Year),
		b2i(outside), nullInt64(f.StartYear), nullInt64(f.EndYear), lore.FactsVersion}
}

// eventOutside reports whether an event's year is outside its era's bounds
// as stored (an absent bound is open; an absent or invalid era has none).
func eventOutside(ctx context.Context, q querier, worldID string, f *lore.Facts) (bool, error) {
	if f.EraID == "" || f.Year == nil {
		return false, nil
	}
	var start, end sql.NullInt64
	err := q.queryRow(ctx, eventOutsideQuery, worldID, f.EraID).Scan(&start, &end)
	if errNoRows(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return start.Valid && *f.Year < start.Int64 || end.Valid && *f.Year > end.Int64, nil
}

const eventOutsideQuery = "SELECT era_start, era_end FROM lore_entities WHERE world_id = ? AND collection = 'eras' AND id = ?"

// storableText makes a message storable on every engine: valid UTF-8, and
// no NUL (which PostgreSQL text cannot hold).
func storableText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\ufffd"), "\x00", `\x00`)
}

func nullInt64(v *int64) any {
	if v == nil {
		return nil
	}
	return *v
}

// Reference states of lore_refs.
const (
	refResolved = 0
	refDangling = 1
	refSelf     = 2
)

// writeLoreRefs stores the references of an entity, replacing those it had
// when replace is set, each resolved or dangling as its target exists now
// (the triggers keep that up to date afterwards).
func writeLoreRefs(ctx context.Context, q querier, worldID, collection, id string, refs []lore.RefFact, replace bool) error {
	if replace {
		if _, err := q.exec(ctx, deleteLoreRefs, worldID, collection, id); err != nil {
			return err
		}
	}
	const perStatement = 64
	for len(refs) > 0 {
		batch := refs[:min(len(refs), perStatement)]
		refs = refs[len(batch):]
		args := make([]any, 0, 11*len(batch))
		for _, r := range batch {
			state := refResolved
			if r.To.Collection == collection && r.To.ID == id {
				state = refSelf
			}
			args = append(args, worldID, collection, id, r.Field, r.Pos, r.To.Collection, r.To.ID,
				state, worldID, r.To.Collection, r.To.ID)
		}
		var err error
		if len(batch) <= 4 { // the common sizes: cached statements
			_, err = q.exec(ctx, insertLoreRefs(len(batch)), args...)
		} else {
			_, err = q.execOnce(ctx, insertLoreRefs(len(batch)), args...)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

const deleteLoreRefs = "DELETE FROM lore_refs WHERE world_id = ? AND collection = ? AND id = ?"

// insertLoreRefs is the INSERT of n references, 11 values each: the
// reference (7), then 2 for a self reference (0 otherwise) and the target
// again (3), from which its state is worked out.
func insertLoreRefs(n int) string {
	const row = `(?, ?, ?, ?, ?, ?, ?, CASE WHEN CAST(? AS INTEGER) = 2 THEN 2
		WHEN EXISTS (SELECT 1 FROM lore_entities t WHERE t.world_id = ? AND t.collection = ? AND t.id = ?) THEN 0 ELSE 1 END)`
	return "INSERT INTO lore_refs (world_id, collection, id, field, pos, ref_collection, ref_id, state) VALUES " +
		strings.Repeat(row+", ", n-1) + row
}

// loreWriteStatements are the statements of writeLore. Preparing one is
// costly on SQLite (the triggers of lore_entities are compiled into every
// write), and a transaction only reuses statements the pool has cached,
// so warmLoreStatements caches them when the store opens.
var loreWriteStatements = []string{
	loreInsertKeep, loreInsertReplace, eventOutsideQuery, deleteLoreRefs,
	insertLoreRefs(1), insertLoreRefs(2), insertLoreRefs(3), insertLoreRefs(4),
}

// warmLoreStatements prepares and caches loreWriteStatements on p. A
// statement that cannot be prepared is left to fail where it is used.
func warmLoreStatements(ctx context.Context, p *pool) {
	for _, q := range loreWriteStatements {
		p.stmt(ctx, q)
	}
	if p.d == dialectPostgres {
		p.stmt(ctx, lockWorldLoreQuery)
	}
}

// staleLore is an entity whose facts are to be worked out again.
type staleLore struct {
	factsVersion               int
	world, coll, id, name, doc string
	version                    int64
}

func scanStaleLore(s scanner) (staleLore, error) {
	var (
		r   staleLore
		doc sql.NullString
	)
	err := s.Scan(&r.factsVersion, &r.world, &r.coll, &r.id, &r.name, &doc, &r.version)
	r.doc = doc.String
	return r, err
}

const staleLoreCols = "facts_version, world_id, collection, id, name, doc, version"

// staleBatch is how many entities one transaction of analyseStaleLore
// analyses.
const staleBatch = 256

// analyseStaleLore analyses the entities whose facts are missing or out of
// date — written before migration 004 or by an older binary (their
// facts_for is not their version), or analysed under another
// lore.FactsVersion — of one world or, with worldID "", of every world,
// and stores their facts. Each set is found through its index and walked
// once in key order, a batch per transaction; an entity changed meanwhile
// is left to its writer, who stored its facts. It returns how many
// entities it analysed.
func analyseStaleLore(ctx context.Context, p *pool, worldID string) (int, error) {
	if worldID != "" {
		return analyseWorldLore(ctx, p, worldID)
	}
	total := 0
	last := staleLore{factsVersion: -1}
	for {
		rows, err := collect(scanStaleLore)(p.q().query(ctx, `SELECT `+staleLoreCols+` FROM lore_entities
			WHERE facts_version < ? AND (facts_version, world_id, collection, id) > (?, ?, ?, ?)
			ORDER BY facts_version, world_id, collection, id LIMIT ?`,
			lore.FactsVersion, last.factsVersion, last.world, last.coll, last.id, staleBatch))
		if err != nil {
			return total, err
		}
		if err := refreshLore(ctx, p, rows); err != nil {
			return total, err
		}
		total += len(rows)
		if len(rows) < staleBatch {
			break
		}
		last = rows[len(rows)-1]
	}
	worlds, err := collect(scanString)(p.q().query(ctx,
		"SELECT DISTINCT world_id FROM lore_entities WHERE "+p.d.distinct("facts_for", "version")))
	if err != nil {
		return total, err
	}
	for _, w := range worlds {
		n, err := analyseWorldLore(ctx, p, w)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// analyseWorldLore is analyseStaleLore for one world.
func analyseWorldLore(ctx context.Context, p *pool, worldID string) (int, error) {
	total := 0
	var last staleLore
	for {
		rows, err := collect(scanStaleLore)(p.q().query(ctx, `SELECT `+staleLoreCols+` FROM lore_entities
			WHERE world_id = ? AND (facts_version < ? OR `+p.d.distinct("facts_for", "version")+`)
			AND (collection, id) > (?, ?) ORDER BY collection, id LIMIT ?`,
			worldID, lore.FactsVersion, last.coll, last.id, staleBatch))
		if err != nil {
			return total, err
		}
		if err := refreshLore(ctx, p, rows); err != nil {
			return total, err
		}
		total += len(rows)
		if len(rows) < staleBatch {
			return total, nil
		}
		last = rows[len(rows)-1]
	}
}

// refreshLore analyses rows and stores their facts in one transaction.
func refreshLore(ctx context.Context, p *pool, rows []staleLore) error {
	if len(rows) == 0 {
		return nil
	}
	var worlds []string
	for _, r := range rows {
		worlds = append(worlds, r.world)
	}
	slices.Sort(worlds)
	return p.tx(ctx, func(q querier) error {
		for _, w := range slices.Compact(worlds) { // in order: no deadlock between two of these
			if err := lockWorldLore(ctx, q, w); err != nil {
				return err
			}
		}
		for _, r := range rows {
			var raw json.RawMessage
			if r.doc != "" {
				raw = json.RawMessage(r.doc)
			}
			f := lore.Analyze(r.coll, r.id, r.name, raw)
			outside, err := eventOutside(ctx, q, r.world, &f)
			if err != nil {
				return err
			}
			res, err := q.exec(ctx, `UPDATE lore_entities SET name_key = ?, invalid_reason = ?, event_era = ?, event_year = ?,
				event_outside = ?, era_start = ?, era_end = ?, facts_version = ?, facts_for = version
				WHERE world_id = ? AND collection = ? AND id = ? AND version = ?`,
				append(factArgs(&f, outside), r.world, r.coll, r.id, r.version)...)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 0 {
				continue // changed meanwhile: its writer stored its facts
			}
			if err := writeLoreRefs(ctx, q, r.world, r.coll, r.id, f.Refs, true); err != nil {
				return err
			}
		}
		return nil
	})
}

// healWorldLore analyses the world's entities whose facts do not describe
// their version, if any: those a binary older than migration 004 wrote
// since the store opened (during a rolling upgrade). Finding none costs
// one probe of a partial index that holds only such entities. (Facts of an
// older lore.FactsVersion are analysed again when the store opens.)
func (db *DB) healWorldLore(ctx context.Context, worldID string) error {
	var one int
	err := db.reader.q().queryRow(ctx, `SELECT 1 FROM lore_entities WHERE world_id = ? AND `+
		db.reader.d.distinct("facts_for", "version")+` LIMIT 1`, worldID).Scan(&one)
	if errNoRows(err) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = analyseWorldLore(ctx, db.writer, worldID)
	return err
}

// ListLorePage implements worldforge.LoreStore: the primary key
// (world_id, collection, id) serves the page.
func (db *DB) ListLorePage(ctx context.Context, p worldforge.LorePageQuery) (*worldforge.LorePage, error) {
	if !slices.Contains(worldforge.LoreCollections, p.Collection) {
		return nil, wrap("list lore page", worldforge.BadRequest("unknown lore collection %q", p.Collection))
	}
	limit := p.Limit
	if limit <= 0 {
		limit = worldforge.DefaultLoreLimit
	}
	rows, err := db.reader.q().query(ctx,
		`SELECT world_id, collection, id, name, doc, version, updated_at FROM lore_entities
		WHERE world_id = ? AND collection = ? AND id > ? ORDER BY id LIMIT ?`,
		p.WorldID, p.Collection, p.After, limit+1)
	if err != nil {
		return nil, wrap("list lore page", err)
	}
	defer rows.Close()
	page := &worldforge.LorePage{Items: []worldforge.LoreEntity{}}
	size := 0
	for rows.Next() {
		if len(page.Items) == limit {
			page.More = true
			break
		}
		e, err := scanLoreEntity(rows)
		if err != nil {
			return nil, wrap("list lore page", err)
		}
		if p.MaxBytes > 0 && len(page.Items) > 0 && size+len(e.JSON) > p.MaxBytes {
			page.More = true
			break
		}
		size += len(e.JSON)
		page.Items = append(page.Items, e)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("list lore page", err)
	}
	return page, nil
}

// LoreIssues implements worldforge.LoreStore. Each kind of issue is read
// through a partial index that holds exactly the entities (or references,
// or name groups) that have one; one statement reads them all, sorts them
// as engine/lore.Issues does, and returns the first limit with the total.
// The cost grows with the number of issues, not with the world. Entities
// whose facts are out of date are analysed first.
func (db *DB) LoreIssues(ctx context.Context, worldID, collection string, limit int) ([]worldforge.LoreIssue, int, error) {
	if collection != "" && !slices.Contains(worldforge.LoreCollections, collection) {
		return nil, 0, wrap("lore issues", worldforge.BadRequest("unknown lore collection %q", collection))
	}
	if limit <= 0 {
		limit = worldforge.MaxLoreIssues
	}
	if err := db.healWorldLore(ctx, worldID); err != nil {
		return nil, 0, wrap("lore issues", err)
	}
	args := make([]any, 0, 2*loreIssueKinds+1)
	for range loreIssueKinds {
		args = append(args, worldID)
		if collection != "" {
			args = append(args, collection)
		}
	}
	args = append(args, limit)
	rows, err := db.reader.q().query(ctx, loreIssuesQuery(db.reader.d, collection != ""), args...)
	if err != nil {
		return nil, 0, wrap("lore issues", err)
	}
	defer rows.Close()
	issues := []worldforge.LoreIssue{}
	total := 0
	for rows.Next() {
		var (
			coll, id, kind, field, a, b string
			pos                         int
			y1, y2, y3                  sql.NullInt64
		)
		if err := rows.Scan(&coll, &id, &kind, &field, &pos, &a, &b, &y1, &y2, &y3, &total); err != nil {
			return nil, 0, wrap("lore issues", err)
		}
		var is lore.Issue
		switch kind {
		case lore.KindInvalidEntity:
			is = lore.InvalidEntityIssue(coll, id, a)
		case lore.KindDuplicateName:
			is = lore.DuplicateNameIssue(coll, id, a, b)
		case lore.KindSelfReference:
			is = lore.SelfReferenceIssue(coll, id, field)
		case lore.KindDanglingReference:
			is = lore.DanglingReferenceIssue(coll, id, field, lore.Ref{Collection: a, ID: b})
		case lore.KindEraOrder:
			is = lore.EraOrderIssue(coll, id, y1.Int64, y2.Int64)
		case lore.KindEventOutsideEra:
			is = lore.EventOutsideEraIssue(coll, id, y1.Int64, a, nullableInt(y2), nullableInt(y3))
		default:
			return nil, 0, fmt.Errorf("lore issues: unknown kind %q", kind)
		}
		li := worldforge.LoreIssue{Collection: is.Collection, ID: is.ID, Kind: is.Kind, Field: is.Field, Detail: is.Detail}
		if is.Ref != nil {
			li.Ref = &worldforge.LoreRef{Collection: is.Ref.Collection, ID: is.Ref.ID}
		}
		issues = append(issues, li)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, wrap("lore issues", err)
	}
	return issues, total, nil
}

func nullableInt(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

// loreIssueKinds is the number of branches of loreIssuesQuery, each with
// one world placeholder (and one collection placeholder when filtered).
const loreIssueKinds = 5

var loreIssuesQueries sync.Map // [2]any{dialect, filtered} → string

// loreIssuesQuery is the text of LoreIssues: every issue of a world (of one
// collection when filtered), sorted by collection in canonical order, id,
// field, position and kind, each row with the total count. Its
// placeholders: the world (then the collection when filtered) for each of
// the loreIssueKinds branches, then the limit. The branches drive their
// joins from the issue side (CROSS JOIN fixes the order on SQLite and is
// an inner join on PostgreSQL).
func loreIssuesQuery(d dialect, filtered bool) string {
	key := [2]any{d, filtered}
	if q, ok := loreIssuesQueries.Load(key); ok {
		return q.(string)
	}
	in := func(alias string) string {
		if filtered {
			return " AND " + alias + ".collection = ?"
		}
		return ""
	}
	var rank strings.Builder
	rank.WriteString("CASE i.collection")
	for i, c := range worldforge.LoreCollections {
		fmt.Fprintf(&rank, " WHEN '%s' THEN %d", c, i)
	}
	fmt.Fprintf(&rank, " ELSE %d END", len(worldforge.LoreCollections))
	q := `SELECT i.collection, i.id, i.kind, i.field, i.pos, i.a, i.b, i.y1, i.y2, i.y3, COUNT(*) OVER () FROM (
		SELECT e.collection, e.id, 'invalid_entity' AS kind, '' AS field, 0 AS pos, e.invalid_reason AS a, '' AS b,
			CAST(NULL AS BIGINT) AS y1, CAST(NULL AS BIGINT) AS y2, CAST(NULL AS BIGINT) AS y3
		FROM lore_entities e
		WHERE e.world_id = ?` + in("e") + ` AND e.invalid_reason IS NOT NULL
	UNION ALL
		SELECT d.collection, d.id, 'duplicate_name', 'name', 0, d.name, d.first_id, NULL, NULL, NULL
		FROM (SELECT e.collection, e.id, e.name,
				(SELECT MIN(f.id) FROM lore_entities f
					WHERE f.world_id = g.world_id AND f.collection = g.collection AND f.name_key = g.name_key) AS first_id
			FROM lore_names g CROSS JOIN lore_entities e
			WHERE g.world_id = ?` + in("g") + ` AND g.n > 1
				AND e.world_id = g.world_id AND e.collection = g.collection AND e.name_key = g.name_key) d
		WHERE d.id <> d.first_id
	UNION ALL
		SELECT r.collection, r.id, CASE WHEN r.state = 2 THEN 'self_reference' ELSE 'dangling_reference' END,
			r.field, r.pos, r.ref_collection, r.ref_id, NULL, NULL, NULL
		FROM lore_refs r
		WHERE r.world_id = ?` + in("r") + ` AND r.state <> 0
	UNION ALL
		SELECT e.collection, e.id, 'era_order', 'startYear', 0, '', '', e.era_start, e.era_end, NULL
		FROM lore_entities e
		WHERE e.world_id = ?` + in("e") + ` AND e.collection = 'eras' AND e.era_start > e.era_end
	UNION ALL
		SELECT e.collection, e.id, 'event_outside_era', 'year', 0, e.event_era, '', e.event_year, x.era_start, x.era_end
		FROM lore_entities e CROSS JOIN lore_entities x
		WHERE e.world_id = ?` + in("e") + ` AND e.collection = 'events' AND e.event_outside <> 0
			AND x.world_id = e.world_id AND x.collection = 'eras' AND x.id = e.event_era
	) i
	ORDER BY ` + rank.String() + `, ` + d.bytewise("i.id") + `, ` + d.bytewise("i.field") + `, i.pos, ` + d.bytewise("i.kind") + `
	LIMIT ?`
	loreIssuesQueries.Store(key, q)
	return q
}
