package sqlstore

import (
	"context"
	"database/sql"

	"github.com/worldforge-go/worldforge"
)

// Keyset pages. A paged list reads one page at a time: the rows
// strictly after the sort key of the previous page's last row, in the
// list's order, at most the page's limit, through an index in exactly that
// order (migrations 003 and 007), so that a page costs the same at the
// start and at the end of a list of any length. The order always ends in
// the row's id, which makes the key unique: a row inserted while a list is
// walked shows up once or not at all, never twice, and no row present
// throughout the walk with an unchanged key is missed.
//
// Keys compare as the list orders: a row value (a, b) > (?, ?) where every
// part ascends (both engines read it as an index range), and for the
// newest-first lists, whose time descends and id ascends,
// updated_at <= ? AND (updated_at < ? OR id > ?), whose first term is the
// range.

// pageLimit is q's limit: DefaultPageLimit when not positive, capped at
// MaxPageLimit.
func pageLimit(q worldforge.PageQuery) int {
	return clampLimit(q.Limit, worldforge.DefaultPageLimit, worldforge.MaxPageLimit)
}

// errRowLeft is the answer to a PageKey.FromRow naming a row that is no
// longer in the list.
func errRowLeft() error {
	return worldforge.BadRequest("cursor: the row it continues from has left the list; list again from the start")
}

// readPage reads a page from rows selected with LIMIT limit+1: at most
// limit rows, More when another follows. With maxBytes positive, a row
// whose document (docLen) would bring the page's total over it ends the
// page early, unless it is the first.
func readPage[T any](rows *sql.Rows, err error, scan func(scanner) (T, error), limit, maxBytes int, docLen func(*T) int) (*worldforge.Page[T], error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	page := &worldforge.Page[T]{Items: []T{}}
	size := 0
	for rows.Next() {
		if len(page.Items) == limit {
			page.More = true
			break
		}
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		if maxBytes > 0 && docLen != nil {
			n := docLen(&v)
			if len(page.Items) > 0 && size+n > maxBytes {
				page.More = true
				break
			}
			size += n
		}
		page.Items = append(page.Items, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return page, nil
}

// docPage reads a page of the owner's rows of a campaigns-shaped table
// (campaigns, quests, encounters), newest first then by id. cols selects
// the summary's columns; campaignID, when set, keeps one campaign's rows.
func docPage(ctx context.Context, db *DB, table, cols, ownerID, campaignID string, q worldforge.PageQuery) (*worldforge.Page[worldforge.DocSummary], error) {
	limit := pageLimit(q)
	args := []any{ownerID}
	if campaignID != "" {
		args = []any{campaignID, ownerID}
	}
	if a := q.After; a != nil {
		args = append(args, a.UpdatedAt, a.UpdatedAt, a.ID)
	}
	args = append(args, limit+1)
	rows, err := db.reader.q().query(ctx, docPageSQL(table, cols, campaignID != "", q.After != nil), args...)
	return readPage(rows, err, scanSummary, limit, 0, nil)
}

// docPageSQL is docPage's statement. Its arguments: the owner (or the
// campaign and the owner), the previous key's time twice and id (after),
// and the limit.
func docPageSQL(table, cols string, campaign, after bool) string {
	query := "SELECT " + cols + " FROM " + table + " WHERE owner_id = ?"
	if campaign {
		query = "SELECT " + cols + " FROM " + table + " WHERE campaign_id = ? AND owner_id = ?"
	}
	if after {
		query += " AND updated_at <= ? AND (updated_at < ? OR id > ?)"
	}
	return query + " ORDER BY updated_at DESC, id LIMIT ?"
}
