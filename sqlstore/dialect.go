package sqlstore

import (
	"strings"
)

// dialect holds what differs between the engines. Everything else is one
// SQL text with ? placeholders.
type dialect int

const (
	dialectSQLite dialect = iota
	dialectPostgres
)

// rebind turns the ?-placeholder text into the engine's form.
func (d dialect) rebind(query string) string {
	if d == dialectPostgres {
		return rebindDollar(query)
	}
	return query
}

// jsonArrayHasAll is a condition true when the JSON array of strings in
// column col holds every string of a JSON array of distinct strings. Its
// placeholders take that array (one parameter, whatever its length) and
// the array's length. The column's strings are looked up in the array,
// which the engine hashes or indexes once per query, so a row costs time
// in proportion to its own number of strings.
func (d dialect) jsonArrayHasAll(col string) string {
	if d == dialectPostgres {
		return "(SELECT COUNT(DISTINCT have.v) FROM jsonb_array_elements_text(" + col + "::jsonb) AS have(v)" +
			" WHERE have.v IN (SELECT jsonb_array_elements_text(?::jsonb))) = ?"
	}
	return "(SELECT COUNT(DISTINCT have.value) FROM json_each(" + col + ") AS have" +
		" WHERE have.value IN (SELECT value FROM json_each(?))) = ?"
}

// bytewise is expr compared byte by byte, as Go compares strings: SQLite's
// default (BINARY); on PostgreSQL the "C" collation, whatever the
// database's locale.
func (d dialect) bytewise(expr string) string {
	if d == dialectPostgres {
		return expr + ` COLLATE "C"`
	}
	return expr
}

// distinct is the condition "a differs from b, NULL differing from any
// value": IS NOT on SQLite, IS DISTINCT FROM on PostgreSQL.
func (d dialect) distinct(a, b string) string {
	if d == dialectPostgres {
		return a + " IS DISTINCT FROM " + b
	}
	return a + " IS NOT " + b
}

// likeEscaper escapes the LIKE wildcards of a user string; every LIKE of the
// store is written "LIKE ? ESCAPE '\'".
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// containsPattern returns the LIKE pattern matching s anywhere, lower-cased
// to be compared with LOWER(column). SQLite's LOWER folds ASCII letters only;
// PostgreSQL's folds every letter of the database's locale.
func containsPattern(s string) string {
	return "%" + likeEscaper.Replace(strings.ToLower(s)) + "%"
}
