package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/worldforge-go/worldforge"
)

// Wiki search without walking the world.
//
// What a search matches is fixed by the plain query (searchWikiScan):
// LOWER(title) LIKE p OR LOWER(body) LIKE p, p being containsPattern(q),
// over the live pages of the worlds (and kind), in (title, id) order, at
// most limit rows. Every plan below runs that very condition on the rows it
// returns, so the answers are the same; the plans differ only in the rows
// they read.
//
// The text index (migration 005) finds the pages holding a substring of
// three characters or more without reading the others: on SQLite the FTS5
// table wiki_search (trigram tokenizer) over the live pages, kept in step by
// triggers, each world's pages one rowid range of it; on PostgreSQL pg_trgm
// GIN indexes on LOWER(title) and LOWER(body). It answers rare texts at
// once, but a common text gives it thousands of candidates to read and
// sort, where walking the world's pages in title order (the (world_id[,
// kind], title, id) indexes of migration 003) stops after limit matches.
// Neither engine can tell which is cheaper beforehand (PostgreSQL's estimate
// for LIKE '%tower%' is 80 rows when 12,500 match), so each world searched
// races the two plans, with budgets that grow fourfold each round:
//
//   - walk: the world's first k live pages in title order, with the
//     condition; it answers when it finds limit matches or the world has
//     fewer than k pages;
//   - index: count the index's candidates in the world, at most c; fewer
//     than c means the index plan (the candidates, then the condition,
//     kind and liveness, sorted) reads fewer than c pages: run it.
//
// A world is answered by the first plan to finish; the answers of several
// worlds are merged. One world starts with the walk (a common word is then
// answered as fast as before the index); several worlds start with the
// index count, a walk of each costing more. The work is bounded by a few
// times the cheaper of the two plans: a common word costs one short walk, a
// rare one a short walk and two index reads, and a text common in the world
// but not in the kind searched the smaller of walking the kind's pages and
// reading the world's candidates.
//
// Texts shorter than three characters (after lower-casing) cannot use a
// trigram index and texts holding NUL are matched by SQLite's LIKE up to the
// NUL only (PostgreSQL refuses them): both take the plain query, as do, on
// PostgreSQL, texts without three letters or digits in a row (pg_trgm
// indexes words only) and all searches without pg_trgm. Searches of more than
// wikiWalkMaxWorlds worlds use the index over all of them when it finds
// few candidates, else the plain query.
//
// A search of several statements reads each in its own snapshot (as any
// two reads of the store do): under concurrent edits it may mix states no
// single statement would; it never returns a page that did not match.

// Budgets of the race, and the limits of the index queries.
const (
	wikiIndexMinRunes = 3   // trigrams: a shorter text cannot use the index
	wikiIndexMaxRunes = 12  // the longest piece of the text the FTS5 index is asked for
	wikiWalkMin       = 64  // first walk budget, pages…
	wikiWalkPerResult = 8   // …or this many per result asked for, if more
	wikiIndexFirst    = 256 // first index budget, candidates
	wikiRoundGrowth   = 4   // budgets grow this much each round
	wikiWalkMaxWorlds = 16  // more worlds are not searched one by one
)

// Plans a search may be answered by, counted in wikiSearchState.plans.
const (
	wikiPlanScan  = iota // searches answered by the plain query
	wikiPlanWalk         // worlds answered by a bounded walk
	wikiPlanIndex        // worlds (or many-world searches) answered by the text index
	wikiPlanCount
)

// wikiSearchState is the store's wiki search configuration and counters.
type wikiSearchState struct {
	noIndex    bool // PostgreSQL without the pg_trgm indexes: plain queries only
	walkFirst  int  // tests: first walk budget (0: the default)
	indexFirst int  // tests: first index budget (0: the default)
	plans      [wikiPlanCount]atomic.Int64
}

// SearchWikiPages finds live pages of s.WorldIDs (none → no result) whose
// title or body holds s.Q, case-insensitive, of kind s.Kind when set, by
// title. Limit defaults to 20 and is capped at 100. See the comment at the
// top of wiki_search.go for the plans.
func (db *DB) SearchWikiPages(ctx context.Context, s worldforge.WikiSearch) ([]worldforge.WikiPageSummary, error) {
	if len(s.WorldIDs) == 0 {
		return []worldforge.WikiPageSummary{}, nil
	}
	limit := clampLimit(s.Limit, wikiSearchDefault, wikiSearchMax)
	lq := strings.ToLower(s.Q)
	if s.Q == "" || db.wiki.noIndex || !wikiIndexable(lq) || (db.reader.d == dialectPostgres && !trigramWord(lq)) {
		db.wiki.plans[wikiPlanScan].Add(1)
		out, err := db.searchWikiScan(ctx, s, limit)
		return out, wrap("search wiki pages", err)
	}
	out, err := db.searchWikiRace(ctx, s, limit, lq)
	return out, wrap("search wiki pages", err)
}

// wikiIndexable reports whether the lower-cased text lq can be searched
// through the trigram index.
func wikiIndexable(lq string) bool {
	return strings.IndexByte(lq, 0) < 0 && utf8.ValidString(lq) && utf8.RuneCountInString(lq) >= wikiIndexMinRunes
}

// trigramWord reports whether lq holds three letters or digits in a row.
// pg_trgm takes trigrams from the words of a LIKE pattern only: without
// one, its index would be read whole.
func trigramWord(lq string) bool {
	run := 0
	for _, c := range lq {
		if !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			run = 0
			continue
		}
		if run++; run == 3 {
			return true
		}
	}
	return false
}

// searchWikiScan is the plain query, one statement: the world's pages are
// walked in title order (one world) or all read and sorted (several).
func (db *DB) searchWikiScan(ctx context.Context, s worldforge.WikiSearch, limit int) ([]worldforge.WikiPageSummary, error) {
	var b strings.Builder
	b.WriteString("SELECT " + wikiSummaryCols + " FROM wiki_pages WHERE deleted_at IS NULL AND world_id IN (")
	b.WriteString(placeholders(len(s.WorldIDs)))
	b.WriteString(")")
	args := make([]any, 0, len(s.WorldIDs)+4)
	for _, id := range s.WorldIDs {
		args = append(args, id)
	}
	if s.Kind != "" {
		b.WriteString(" AND kind = ?")
		args = append(args, s.Kind)
	}
	if s.Q != "" {
		b.WriteString(` AND (LOWER(title) LIKE ? ESCAPE '\' OR LOWER(body) LIKE ? ESCAPE '\')`)
		pat := containsPattern(s.Q)
		args = append(args, pat, pat)
	}
	b.WriteString(" ORDER BY title, id LIMIT ?")
	args = append(args, limit)
	return collect(scanWikiSummary)(db.reader.q().queryOnce(ctx, b.String(), args...))
}

// wikiWorld is one world's state in the race.
type wikiWorld struct {
	id   string
	hits []worldforge.WikiPageSummary
	done bool // hits are the world's answer
}

// searchWikiRace answers a text search world by world, each by the first
// of the walk and the index plans to finish within its budget.
func (db *DB) searchWikiRace(ctx context.Context, s worldforge.WikiSearch, limit int, lq string) ([]worldforge.WikiPageSummary, error) {
	worlds := make([]wikiWorld, 0, len(s.WorldIDs))
	for _, id := range s.WorldIDs {
		if !slices.ContainsFunc(worlds, func(w wikiWorld) bool { return w.id == id }) {
			worlds = append(worlds, wikiWorld{id: id})
		}
	}
	pat := containsPattern(s.Q)
	match := ""
	if db.reader.d == dialectSQLite {
		match = wikiMatchPhrase(lq)
	}
	walkBudget := max(wikiWalkMin, wikiWalkPerResult*limit)
	if db.wiki.walkFirst > 0 {
		walkBudget = db.wiki.walkFirst
	}
	indexBudget := cmp.Or(db.wiki.indexFirst, wikiIndexFirst)

	if len(worlds) > wikiWalkMaxWorlds {
		// Too many worlds to search one by one: the index over all of
		// them if it finds few candidates, else the plain query.
		ids := make([]string, len(worlds))
		for i, w := range worlds {
			ids[i] = w.id
		}
		out, ok, err := db.wikiIndexPlan(ctx, ids, s.Kind, match, pat, indexBudget, limit)
		if ok || err != nil {
			db.wiki.plans[wikiPlanIndex].Add(1)
			return out, err
		}
		db.wiki.plans[wikiPlanScan].Add(1)
		return db.searchWikiScan(ctx, s, limit)
	}

	walk := func(w *wikiWorld) error {
		hits, err := db.walkWiki(ctx, w.id, s.Kind, pat, walkBudget, limit)
		if err != nil {
			return err
		}
		if len(hits) < limit {
			n, err := db.countWikiLive(ctx, w.id, s.Kind, walkBudget)
			if err != nil || n >= walkBudget {
				return err // not all walked: no answer yet
			}
		}
		w.hits, w.done = hits, true
		db.wiki.plans[wikiPlanWalk].Add(1)
		return nil
	}
	index := func(w *wikiWorld) error {
		hits, ok, err := db.wikiIndexPlan(ctx, []string{w.id}, s.Kind, match, pat, indexBudget, limit)
		if !ok || err != nil {
			return err // too many candidates for this round
		}
		w.hits, w.done = hits, true
		db.wiki.plans[wikiPlanIndex].Add(1)
		return nil
	}
	steps := [2]func(*wikiWorld) error{walk, index}
	if len(worlds) > 1 {
		steps[0], steps[1] = index, walk
	}
	for {
		pending := false
		for i := range worlds {
			w := &worlds[i]
			for _, step := range steps {
				if w.done {
					break
				}
				if err := step(w); err != nil {
					return nil, err
				}
			}
			pending = pending || !w.done
		}
		if !pending {
			return db.mergeWikiHits(ctx, worlds, limit)
		}
		walkBudget *= wikiRoundGrowth
		indexBudget *= wikiRoundGrowth
	}
}

// wikiMatchPhrase returns the FTS5 query for the lower-cased text lq
// (wikiIndexable): one phrase, a piece of lq of at most wikiIndexMaxRunes
// characters, the one with the fewest spaces (trigrams with spaces are the
// most common ones). A page holding lq holds the piece, so the phrase finds
// a superset of the matches; the cost of an FTS5 phrase grows with the
// pages holding each of its trigrams, so a long text is not asked in full.
func wikiMatchPhrase(lq string) string {
	r := []rune(lq)
	n := min(len(r), wikiIndexMaxRunes)
	spaces := 0 // in the window r[i-n+1 : i+1]
	best, fewest := 0, n+1
	for i, c := range r {
		if unicode.IsSpace(c) {
			spaces++
		}
		if i >= n && unicode.IsSpace(r[i-n]) {
			spaces--
		}
		if i >= n-1 && spaces < fewest {
			best, fewest = i-n+1, spaces
		}
	}
	return `"` + strings.ReplaceAll(string(r[best:best+n]), `"`, `""`) + `"`
}

// pgCustomPlan prefixes the arguments of a PostgreSQL statement whose plan
// depends on the LIKE pattern's value: pgx then sends it unnamed, so the
// server plans it for that value (a cached statement falls back to a
// generic plan after five runs, which cannot tell a rare pattern from a
// common one).
func pgCustomPlan(args []any) []any {
	return append([]any{pgx.QueryExecModeExec}, args...)
}

// wikiIndexPlan answers the search in worlds (one world, or every world of
// a search of many) through the text index when it has fewer than most
// candidates there; ok is false when it has more.
//
// On SQLite the candidates' docids are read once (in the world's rowid
// range when there is one world), then their pages: the phrase query is the
// costly part. On PostgreSQL one statement does both (searchWikiTrigram).
func (db *DB) wikiIndexPlan(ctx context.Context, worlds []string, kind, match, pat string, most, limit int) (_ []worldforge.WikiPageSummary, ok bool, _ error) {
	if db.reader.d == dialectSQLite {
		docids, err := db.wikiCandidates(ctx, worlds, match, most)
		if err != nil || len(docids) >= most {
			return nil, false, err
		}
		out, err := db.wikiPagesOf(ctx, docids, worlds, kind, pat, limit)
		return out, err == nil, err
	}
	return searchWikiTrigram(ctx, db.reader.q(), worlds, kind, pat, most, limit)
}

// wikiCandidates returns the docids of the FTS5 index's candidates (SQLite),
// in the world's rowid range when there is one world, at most most of them.
func (db *DB) wikiCandidates(ctx context.Context, worlds []string, match string, most int) ([]int64, error) {
	scan := func(s scanner) (int64, error) {
		var id int64
		err := s.Scan(&id)
		return id, err
	}
	if len(worlds) == 1 {
		return collect(scan)(db.reader.q().query(ctx, `SELECT rowid FROM wiki_search WHERE wiki_search MATCH ?
			AND rowid >= (SELECT seq << 32 FROM wiki_search_worlds WHERE world_id = ?)
			AND rowid < (SELECT (seq + 1) << 32 FROM wiki_search_worlds WHERE world_id = ?) LIMIT ?`,
			match, worlds[0], worlds[0], most))
	}
	return collect(scan)(db.reader.q().query(ctx, "SELECT rowid FROM wiki_search WHERE wiki_search MATCH ? LIMIT ?", match, most))
}

// Pages of candidate docids (SQLite), given as a JSON array: one statement
// text whatever their number.
const (
	wikiDocidsQuery = `SELECT p.id, p.world_id, p.title, p.kind, p.audience, p.version, p.updated_at
		FROM json_each(?) AS j CROSS JOIN wiki_search_docs d CROSS JOIN wiki_pages p
		WHERE d.docid = j.value AND p.id = d.page_id AND p.deleted_at IS NULL AND p.world_id = ?
		AND (LOWER(p.title) LIKE ? ESCAPE '\' OR LOWER(p.body) LIKE ? ESCAPE '\')
		ORDER BY p.title, p.id LIMIT ?`
	wikiDocidsKindQuery = `SELECT p.id, p.world_id, p.title, p.kind, p.audience, p.version, p.updated_at
		FROM json_each(?) AS j CROSS JOIN wiki_search_docs d CROSS JOIN wiki_pages p
		WHERE d.docid = j.value AND p.id = d.page_id AND p.deleted_at IS NULL AND p.world_id = ? AND p.kind = ?
		AND (LOWER(p.title) LIKE ? ESCAPE '\' OR LOWER(p.body) LIKE ? ESCAPE '\')
		ORDER BY p.title, p.id LIMIT ?`
)

// wikiPagesOf returns the pages of the candidate docids that match the
// search: the condition, the worlds, kind and liveness, sorted.
func (db *DB) wikiPagesOf(ctx context.Context, docids []int64, worlds []string, kind, pat string, limit int) ([]worldforge.WikiPageSummary, error) {
	if len(docids) == 0 {
		return []worldforge.WikiPageSummary{}, nil
	}
	buf := make([]byte, 0, 2+len(docids)*12)
	buf = append(buf, '[')
	for i, id := range docids {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendInt(buf, id, 10)
	}
	list := string(append(buf, ']'))
	if len(worlds) == 1 {
		if kind == "" {
			return collect(scanWikiSummary)(db.reader.q().query(ctx, wikiDocidsQuery, list, worlds[0], pat, pat, limit))
		}
		return collect(scanWikiSummary)(db.reader.q().query(ctx, wikiDocidsKindQuery, list, worlds[0], kind, pat, pat, limit))
	}
	in := "p.world_id IN (" + placeholders(len(worlds)) + ")"
	args := make([]any, 0, len(worlds)+5)
	args = append(args, list)
	for _, id := range worlds {
		args = append(args, id)
	}
	if kind != "" {
		in += " AND p.kind = ?"
		args = append(args, kind)
	}
	args = append(args, pat, pat, limit)
	query := strings.Replace(wikiDocidsQuery, "p.world_id = ?", in, 1)
	return collect(scanWikiSummary)(db.reader.q().queryOnce(ctx, query, args...))
}

// searchWikiTrigram is the index plan on PostgreSQL, one statement: the
// pages holding the text, found through the trigram indexes (OFFSET 0 keeps
// the worlds and kind out of the inner query, whose only conditions are
// then those the indexes serve: the world's own (world_id, title) index
// would be walked otherwise), in the worlds and kind, at most most of them,
// counted, sorted. ok is false when there are most or more: the plan would
// read too many pages this round.
//
// The planner chooses the indexes from the statistics ANALYZE gathers
// (autovacuum, and migration 005 for the pages it finds); a table filled
// since it last ran may be scanned instead, with the same answer.
func searchWikiTrigram(ctx context.Context, q querier, worlds []string, kind, pat string, most, limit int) (_ []worldforge.WikiPageSummary, ok bool, _ error) {
	var b strings.Builder
	b.WriteString(`SELECT ` + wikiSummaryCols + `, COUNT(*) OVER () FROM (SELECT ` + wikiSummaryCols + ` FROM (SELECT ` + wikiSummaryCols + ` FROM wiki_pages
		WHERE deleted_at IS NULL AND (LOWER(title) LIKE ? ESCAPE '\' OR LOWER(body) LIKE ? ESCAPE '\') OFFSET 0) AS c
		WHERE world_id IN (`)
	b.WriteString(placeholders(len(worlds)))
	b.WriteString(")")
	args := make([]any, 0, len(worlds)+5)
	args = append(args, pat, pat)
	for _, id := range worlds {
		args = append(args, id)
	}
	if kind != "" {
		b.WriteString(" AND kind = ?")
		args = append(args, kind)
	}
	b.WriteString(" LIMIT ?) AS p ORDER BY title, id LIMIT ?")
	args = append(args, most, limit)
	n := 0
	out, err := collect(func(s scanner) (worldforge.WikiPageSummary, error) {
		var (
			p       worldforge.WikiPageSummary
			updated int64
		)
		err := s.Scan(&p.ID, &p.WorldID, &p.Title, &p.Kind, &p.Audience, &p.Version, &updated, &n)
		p.UpdatedAt = fromMS(updated)
		return p, err
	})(q.queryOnce(ctx, b.String(), pgCustomPlan(args)...))
	if err != nil || n >= most {
		return nil, false, err
	}
	return out, true, nil
}

// Bounded walks of one world, with and without a kind.
const (
	wikiWalkQuery = `SELECT ` + wikiSummaryCols + ` FROM (SELECT ` + wikiSummaryCols + `, body FROM wiki_pages
		WHERE world_id = ? AND deleted_at IS NULL ORDER BY title, id LIMIT ?) AS w
		WHERE (LOWER(title) LIKE ? ESCAPE '\' OR LOWER(body) LIKE ? ESCAPE '\') ORDER BY title, id LIMIT ?`
	wikiWalkKindQuery = `SELECT ` + wikiSummaryCols + ` FROM (SELECT ` + wikiSummaryCols + `, body FROM wiki_pages
		WHERE world_id = ? AND kind = ? AND deleted_at IS NULL ORDER BY title, id LIMIT ?) AS w
		WHERE (LOWER(title) LIKE ? ESCAPE '\' OR LOWER(body) LIKE ? ESCAPE '\') ORDER BY title, id LIMIT ?`
	wikiLiveQuery     = `SELECT COUNT(*) FROM (SELECT 1 FROM wiki_pages WHERE world_id = ? AND deleted_at IS NULL ORDER BY title, id LIMIT ?) AS w`
	wikiLiveKindQuery = `SELECT COUNT(*) FROM (SELECT 1 FROM wiki_pages WHERE world_id = ? AND kind = ? AND deleted_at IS NULL ORDER BY title, id LIMIT ?) AS w`
)

// walkWiki returns the matches among the world's first most live pages
// (of the kind) in title order, at most limit of them.
func (db *DB) walkWiki(ctx context.Context, worldID, kind, pat string, most, limit int) ([]worldforge.WikiPageSummary, error) {
	if kind == "" {
		return collect(scanWikiSummary)(db.reader.q().query(ctx, wikiWalkQuery, worldID, most, pat, pat, limit))
	}
	return collect(scanWikiSummary)(db.reader.q().query(ctx, wikiWalkKindQuery, worldID, kind, most, pat, pat, limit))
}

// countWikiLive counts the world's live pages (of the kind), up to most.
// The order makes PostgreSQL walk the world's index as the walk did, not
// scan the table for a world of few pages.
func (db *DB) countWikiLive(ctx context.Context, worldID, kind string, most int) (int, error) {
	var n int
	var err error
	if kind == "" {
		err = db.reader.q().queryRow(ctx, wikiLiveQuery, worldID, most).Scan(&n)
	} else {
		err = db.reader.q().queryRow(ctx, wikiLiveKindQuery, worldID, kind, most).Scan(&n)
	}
	return n, err
}

// mergeWikiHits merges the answers of the walked worlds: the first limit
// by (title, id). SQLite compares text bytewise, as Go does; PostgreSQL
// compares by the column's collation, so it sorts them itself.
func (db *DB) mergeWikiHits(ctx context.Context, worlds []wikiWorld, limit int) ([]worldforge.WikiPageSummary, error) {
	var all []worldforge.WikiPageSummary
	withHits := 0
	for _, w := range worlds {
		if len(w.hits) > 0 {
			withHits++
			all = append(all, w.hits...)
		}
	}
	if withHits <= 1 {
		if all == nil {
			all = []worldforge.WikiPageSummary{}
		}
		return all, nil
	}
	if db.reader.d == dialectSQLite {
		slices.SortFunc(all, func(a, b worldforge.WikiPageSummary) int {
			return cmp.Or(strings.Compare(a.Title, b.Title), strings.Compare(a.ID, b.ID))
		})
		return all[:min(limit, len(all))], nil
	}
	args := make([]any, 0, len(all)+1)
	for _, p := range all {
		args = append(args, p.ID)
	}
	args = append(args, limit)
	return collect(scanWikiSummary)(db.reader.q().queryOnce(ctx,
		"SELECT "+wikiSummaryCols+" FROM wiki_pages WHERE id IN ("+placeholders(len(all))+") ORDER BY title, id LIMIT ?", args...))
}

// ensureWikiTrigram checks, on PostgreSQL, that migration 005 could create
// the pg_trgm indexes of the wiki search, and tries again when it could not
// (the extension may have been installed since), under the migration lock.
// Without them searches take the plain query, and a warning says so.
func (db *DB) ensureWikiTrigram(ctx context.Context) {
	if db.writer.d != dialectPostgres {
		return
	}
	have := func() (bool, error) {
		var ok bool
		err := db.writer.q().queryRowOnce(ctx,
			"SELECT to_regclass('wiki_pages_title_trgm') IS NOT NULL AND to_regclass('wiki_pages_body_trgm') IS NOT NULL").Scan(&ok)
		return ok, err
	}
	ok, err := have()
	if err == nil && !ok {
		var text []byte
		if text, err = migrationFS.ReadFile("migrations/postgres/005_wiki_search_index.sql"); err == nil {
			err = db.writer.tx(ctx, func(q querier) error {
				if _, err := q.execOnce(ctx, "SELECT pg_advisory_xact_lock(?)", migrationLockKey); err != nil {
					return fmt.Errorf("lock: %w", err)
				}
				_, err := q.execOnce(ctx, string(text))
				return err
			})
		}
		if err == nil {
			ok, err = have()
		}
	}
	if !ok {
		db.wiki.noIndex = true
		db.log.Warn("wiki search has no pg_trgm index: a text search reads every page of the worlds searched; install the pg_trgm extension (CREATE EXTENSION pg_trgm) and restart",
			"err", err)
	}
}

// queryRowOnce is the uncached form of queryRow.
func (q querier) queryRowOnce(ctx context.Context, query string, args ...any) *sql.Row {
	if q.tx != nil {
		return q.tx.QueryRowContext(ctx, q.p.d.rebind(query), args...)
	}
	return q.p.db.QueryRowContext(ctx, q.p.d.rebind(query), args...)
}
