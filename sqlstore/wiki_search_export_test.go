package sqlstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/worldforge-go/worldforge"
)

// SearchWikiPagesScanForTest runs the plain query of a wiki search, one
// statement and no text index: the reference the search plans must agree
// with.
func (db *DB) SearchWikiPagesScanForTest(ctx context.Context, s worldforge.WikiSearch) ([]worldforge.WikiPageSummary, error) {
	if len(s.WorldIDs) == 0 {
		return []worldforge.WikiPageSummary{}, nil
	}
	out, err := db.searchWikiScan(ctx, s, clampLimit(s.Limit, wikiSearchDefault, wikiSearchMax))
	return out, wrap("search wiki pages", err)
}

// SetWikiSearchBudgetsForTest sets the first walk and index budgets of the
// search race (0: the default), so that small worlds take several rounds.
func (db *DB) SetWikiSearchBudgetsForTest(walk, index int) {
	db.wiki.walkFirst, db.wiki.indexFirst = walk, index
}

// WikiSearchPlansForTest counts the searches answered by the plain query,
// the walks and the text index so far.
func (db *DB) WikiSearchPlansForTest() (scan, walk, index int64) {
	return db.wiki.plans[wikiPlanScan].Load(), db.wiki.plans[wikiPlanWalk].Load(), db.wiki.plans[wikiPlanIndex].Load()
}

// WikiSearchIndexedForTest reports whether text searches may use the text
// index (false on PostgreSQL without pg_trgm).
func (db *DB) WikiSearchIndexedForTest() bool { return !db.wiki.noIndex }

// WikiMatchPhraseForTest exposes the FTS5 query of a lower-cased text.
func WikiMatchPhraseForTest(lq string) string { return wikiMatchPhrase(lq) }

// CheckWikiSearchIndexForTest checks the SQLite text index against the
// pages: one wiki_search_docs row per live page and none other, and every
// live page found by the index under the start of its title and of its
// body. It does nothing on PostgreSQL, whose indexes the server keeps.
func (db *DB) CheckWikiSearchIndexForTest(ctx context.Context) error {
	if db.writer.d != dialectSQLite {
		return nil
	}
	q := db.writer.q()
	live, err := collect(scanString)(q.queryOnce(ctx, "SELECT id FROM wiki_pages WHERE deleted_at IS NULL ORDER BY id"))
	if err != nil {
		return err
	}
	docs, err := collect(scanString)(q.queryOnce(ctx, "SELECT page_id FROM wiki_search_docs ORDER BY page_id"))
	if err != nil {
		return err
	}
	if !slices.Equal(live, docs) {
		return fmt.Errorf("wiki_search_docs holds %d pages, %d are live: %v / %v", len(docs), len(live), docs, live)
	}
	var rows, outside int
	if err := q.queryRowOnce(ctx, "SELECT COUNT(*) FROM wiki_search").Scan(&rows); err != nil {
		return err
	}
	if err := q.queryRowOnce(ctx, `SELECT COUNT(*) FROM wiki_search_docs d JOIN wiki_pages p ON p.id = d.page_id
		LEFT JOIN wiki_search_worlds w ON w.world_id = p.world_id
		WHERE w.seq IS NULL OR d.docid <= w.seq << 32 OR d.docid >= (w.seq + 1) << 32`).Scan(&outside); err != nil {
		return err
	}
	if outside != 0 {
		return fmt.Errorf("%d pages have a docid outside their world's range", outside)
	}
	if rows != len(live) {
		return fmt.Errorf("wiki_search holds %d rows, %d pages are live", rows, len(live))
	}
	type page struct{ id, title, body string }
	pages, err := collect(func(s scanner) (page, error) {
		var p page
		err := s.Scan(&p.id, &p.title, &p.body)
		return p, err
	})(q.queryOnce(ctx, "SELECT id, title, body FROM wiki_pages WHERE deleted_at IS NULL"))
	if err != nil {
		return err
	}
	for _, p := range pages {
		for _, text := range []string{p.title, p.body} {
			r := []rune(text)
			if len(r) < wikiIndexMinRunes || !wikiIndexable(string(r)) {
				continue
			}
			phrase := wikiMatchPhrase(string(r[:min(len(r), wikiIndexMaxRunes)]))
			var n int
			if err := q.queryRowOnce(ctx, `SELECT COUNT(*) FROM wiki_search s JOIN wiki_search_docs d ON d.docid = s.rowid
				WHERE s.wiki_search MATCH ? AND d.page_id = ?`, phrase, p.id).Scan(&n); err != nil {
				return fmt.Errorf("page %s, %s: %w", p.id, phrase, err)
			}
			if n != 1 {
				return fmt.Errorf("page %s is not found by %s", p.id, phrase)
			}
		}
	}
	return db.writer.q().execOnceErr(ctx, "INSERT INTO wiki_search (wiki_search) VALUES ('integrity-check')")
}

func (q querier) execOnceErr(ctx context.Context, query string, args ...any) error {
	_, err := q.execOnce(ctx, query, args...)
	return err
}
