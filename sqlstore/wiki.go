package sqlstore

import (
	"context"
	"database/sql"
	"slices"

	"github.com/worldforge-go/worldforge"
)

// Wiki search and history limits.
const (
	wikiSearchDefault  = 20
	wikiSearchMax      = 100
	wikiHistoryDefault = 50
	wikiHistoryMax     = 200
)

// clampLimit returns def for n <= 0 and caps n at max.
func clampLimit(n, def, most int) int {
	if n <= 0 {
		return def
	}
	return min(n, most)
}

const wikiPageCols = "id, world_id, title, body, kind, audience, version, created_at, updated_at, deleted_at"

const wikiSummaryCols = "id, world_id, title, kind, audience, version, updated_at"

func scanWikiSummary(s scanner) (worldforge.WikiPageSummary, error) {
	var (
		p       worldforge.WikiPageSummary
		updated int64
	)
	err := s.Scan(&p.ID, &p.WorldID, &p.Title, &p.Kind, &p.Audience, &p.Version, &updated)
	p.UpdatedAt = fromMS(updated)
	return p, err
}

// CreateWikiPage stores the page at version 1 and its revision 1, by
// authorID, in one transaction. A missing world is not_found.
func (db *DB) CreateWikiPage(ctx context.Context, p *worldforge.WikiPage, authorID string) error {
	return wrap("create wiki page", db.writer.tx(ctx, func(q querier) error {
		return insertWikiPage(ctx, q, p, authorID, "")
	}))
}

// insertWikiPage inserts the page and its first revision, with diffSummary
// as the revision's summary; q must be in a transaction.
func insertWikiPage(ctx context.Context, q querier, p *worldforge.WikiPage, authorID, diffSummary string) error {
	if p.ID == "" {
		p.ID = worldforge.NewID("wiki")
	}
	p.Version = 1
	p.CreatedAt = stamp(p.CreatedAt)
	if p.UpdatedAt.IsZero() {
		p.UpdatedAt = p.CreatedAt
	}
	p.UpdatedAt = stamp(p.UpdatedAt)
	if p.DeletedAt != nil {
		t := stamp(*p.DeletedAt)
		p.DeletedAt = &t
	}
	if _, err := q.exec(ctx,
		"INSERT INTO wiki_pages ("+wikiPageCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		p.ID, p.WorldID, p.Title, p.Body, p.Kind, p.Audience, p.Version,
		ms(p.CreatedAt), ms(p.UpdatedAt), nullMS(p.DeletedAt)); err != nil {
		return err
	}
	_, err := q.exec(ctx,
		`INSERT INTO wiki_revisions (page_id, version, title, body, kind, audience, author_id, diff_summary, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ID, p.Version, p.Title, p.Body, p.Kind, p.Audience, nullStr(authorID), diffSummary, ms(p.CreatedAt))
	return err
}

// FindWikiPageByID returns the page, deleted or not (DeletedAt tells), or
// not_found.
func (db *DB) FindWikiPageByID(ctx context.Context, id string) (*worldforge.WikiPage, error) {
	var (
		p                worldforge.WikiPage
		created, updated int64
		deleted          sql.NullInt64
	)
	err := db.reader.q().queryRow(ctx, "SELECT "+wikiPageCols+" FROM wiki_pages WHERE id = ?", id).
		Scan(&p.ID, &p.WorldID, &p.Title, &p.Body, &p.Kind, &p.Audience, &p.Version, &created, &updated, &deleted)
	if err != nil {
		return nil, wrap("find wiki page", err)
	}
	p.CreatedAt, p.UpdatedAt = fromMS(created), fromMS(updated)
	p.DeletedAt = fromNullMS(deleted)
	return &p, nil
}

// ListWikiPagesPage implements worldforge.WikiStore: one page of the
// world's live pages, through the index (world_id, title, id), or (world_id,
// kind, title, id) for one kind (migration 003).
func (db *DB) ListWikiPagesPage(ctx context.Context, worldID, kind string, q worldforge.PageQuery) (*worldforge.Page[worldforge.WikiPageSummary], error) {
	limit := pageLimit(q)
	args := []any{worldID}
	if kind != "" {
		args = append(args, kind)
	}
	if a := q.After; a != nil {
		title := a.Name
		if a.FromRow {
			// The row must still be in the list: its title places it.
			err := db.reader.q().queryRow(ctx, "SELECT title"+wikiPageWhere(kind != "")+" AND id = ?",
				append(slices.Clip(args), a.ID)...).Scan(&title)
			if errNoRows(err) {
				err = errRowLeft()
			}
			if err != nil {
				return nil, wrap("list wiki pages", err)
			}
		}
		args = append(args, title, a.ID)
	}
	args = append(args, limit+1)
	rows, err := db.reader.q().query(ctx, wikiPageSQL(kind != "", q.After != nil), args...)
	page, err := readPage(rows, err, scanWikiSummary, limit, 0, nil)
	return page, wrap("list wiki pages", err)
}

func wikiPageWhere(kind bool) string {
	if kind {
		return " FROM wiki_pages WHERE world_id = ? AND deleted_at IS NULL AND kind = ?"
	}
	return " FROM wiki_pages WHERE world_id = ? AND deleted_at IS NULL"
}

// wikiPageSQL is ListWikiPagesPage's statement. Its arguments: the world,
// the kind (kind), the previous key's title and id (after), the limit.
func wikiPageSQL(kind, after bool) string {
	query := "SELECT " + wikiSummaryCols + wikiPageWhere(kind)
	if after {
		query += " AND (title, id) > (?, ?)"
	}
	return query + " ORDER BY title, id LIMIT ?"
}

// WikiPageHistory lists the page's revisions newest first. Limit defaults
// to 50 and is capped at 200. A page without revisions gives an empty list.
func (db *DB) WikiPageHistory(ctx context.Context, pageID string, limit int) ([]worldforge.WikiRevision, error) {
	out, err := collect(scanWikiRevision)(db.reader.q().query(ctx,
		`SELECT page_id, version, title, body, kind, audience, author_id, diff_summary, created_at
		FROM wiki_revisions WHERE page_id = ? ORDER BY version DESC LIMIT ?`,
		pageID, clampLimit(limit, wikiHistoryDefault, wikiHistoryMax)))
	return out, wrap("wiki page history", err)
}

// CountWikiPages counts the world's live pages by kind; every kind of
// worldforge.WikiKinds is present, zero included.
func (db *DB) CountWikiPages(ctx context.Context, worldID string) (map[string]int, error) {
	counts := make(map[string]int, len(worldforge.WikiKinds))
	for _, k := range worldforge.WikiKinds {
		counts[k] = 0
	}
	err := countBy(ctx, db.reader.q(), counts,
		"SELECT kind, COUNT(*) FROM wiki_pages WHERE world_id = ? AND deleted_at IS NULL GROUP BY kind", worldID)
	if err != nil {
		return nil, wrap("count wiki pages", err)
	}
	return counts, nil
}

// countBy adds the (key, count) rows of query to counts.
func countBy(ctx context.Context, q querier, counts map[string]int, query string, args ...any) error {
	rows, err := q.query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			k string
			n int
		)
		if err := rows.Scan(&k, &n); err != nil {
			return err
		}
		counts[k] += n
	}
	return rows.Err()
}

func scanWikiRevision(s scanner) (worldforge.WikiRevision, error) {
	var (
		r       worldforge.WikiRevision
		author  sql.NullString
		created int64
	)
	err := s.Scan(&r.PageID, &r.Version, &r.Title, &r.Body, &r.Kind, &r.Audience, &author, &r.DiffSummary, &created)
	r.AuthorID = author.String
	r.CreatedAt = fromMS(created)
	return r, err
}
