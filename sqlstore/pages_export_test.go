package sqlstore

import (
	"context"
	"fmt"
	"strings"
)

// PageSQLForTest returns the statement of one page of a paged list:
// "campaigns", "quests", "encounters" (filtered: of one campaign), "wiki"
// (filtered: of one kind), "atlas" (filtered: of one level) or "factions";
// after: a page after the first.
func PageSQLForTest(list string, filtered, after bool) string {
	const docCols = "id, name, campaign_id, world_id, version, updated_at"
	switch list {
	case "campaigns":
		return docPageSQL("campaigns", "id, name, NULL, world_id, version, updated_at", false, after)
	case "quests", "encounters":
		return docPageSQL(list, docCols, filtered, after)
	case "wiki":
		return wikiPageSQL(filtered, after)
	case "atlas":
		return atlasPageSQL(filtered, after)
	case "factions":
		return loreNamePageSQL("factions", after)
	}
	panic("unknown list " + list)
}

// QueryPlanForTest returns the plan the reader's engine makes for a
// ?-placeholder query, one line per step: EXPLAIN QUERY PLAN's details on
// SQLite; on PostgreSQL EXPLAIN's lines with sorting disabled
// (enable_sort off), so that the plan has a Sort step only when no index
// gives the order, whatever the table's size and statistics.
func (db *DB) QueryPlanForTest(ctx context.Context, query string, args ...any) ([]string, error) {
	conn, err := db.reader.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	explain := "EXPLAIN QUERY PLAN "
	if db.reader.d == dialectPostgres {
		explain = "EXPLAIN "
		if _, err := conn.ExecContext(ctx, "SET enable_sort = off"); err != nil {
			return nil, err
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "RESET enable_sort")
	}
	rows, err := conn.QueryContext(ctx, db.reader.d.rebind(explain+query), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, strings.TrimSpace(fmt.Sprint(vals[len(vals)-1])))
	}
	return out, rows.Err()
}
