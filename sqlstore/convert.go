package sqlstore

import (
	"database/sql"
	"encoding/json"
	"time"
)

// now is the current time as the store keeps it: UTC, milliseconds.
func now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// stamp returns t in the store's precision, or now when t is zero.
func stamp(t time.Time) time.Time {
	if t.IsZero() {
		return now()
	}
	return t.UTC().Truncate(time.Millisecond)
}

// ms is t as stored: unix milliseconds.
func ms(t time.Time) int64 { return t.UnixMilli() }

// fromMS is a stored timestamp as a UTC time.
func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

// fromNullMS is a nullable stored timestamp.
func fromNullMS(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMS(v.Int64)
	return &t
}

// nullMS stores an optional time (nil → NULL).
func nullMS(t *time.Time) any {
	if t == nil {
		return nil
	}
	return ms(*t)
}

// nullStr stores an optional string ("" → NULL).
func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// jsonArg stores a JSON document as TEXT (empty → NULL).
func jsonArg(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return string(raw)
}

// fromNullJSON reads a JSON document back (NULL → nil).
func fromNullJSON(s sql.NullString) json.RawMessage {
	if !s.Valid {
		return nil
	}
	return json.RawMessage(s.String)
}

// b2i stores a boolean as INTEGER 0/1.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// marshalList encodes a list as JSON text; nil encodes as [].
func marshalList[T any](v []T) (string, error) {
	if v == nil {
		return "[]", nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}
