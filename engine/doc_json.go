package engine

import (
	"bytes"
	"encoding/json"
	"errors"

	wf "github.com/worldforge-go/worldforge"
)

// A world document is a JSON object. This file reads its "grid" and writes a
// new one while keeping every other member exactly as written (key and
// value bytes, and order; whitespace between members is not kept).

// splitDoc returns the members of a world document and the index of its
// "grid" member (-1 if none). An empty or null document has no members.
// Members other than "grid" are checked to be valid JSON. A document that
// is valid JSON but not an object returns errNotObject.
func splitDoc(doc []byte) ([]member, int, error) {
	if i := skipWS(doc, 0); i == len(doc) || isNull(trimWS(doc)) {
		return nil, -1, nil
	}
	ms, err := scanObject(doc)
	if err != nil {
		if err == errNotObject && json.Valid(doc) {
			return nil, -1, errNotObject
		}
		return nil, -1, wf.BadRequest("world document is not valid JSON")
	}
	gi := lastMember(ms, "grid")
	for i, m := range ms {
		if i != gi && !json.Valid(m.val) {
			return nil, -1, wf.BadRequest("world document is not valid JSON (at key %q)", clip(m.key))
		}
	}
	return ms, gi, nil
}

func trimWS(b []byte) []byte {
	i := skipWS(b, 0)
	j := len(b)
	for j > i && isWS(b[j-1]) {
		j--
	}
	return b[i:j]
}

// DocGrid returns the grid of a world document. Errors: no_grid (the
// document is empty, null, not an object, or has no "grid" or a null one),
// freeform_grid (a freeform map), no_size (the grid has no positive
// cols/rows), bad_request (anything else wrong, as ParseGrid).
func DocGrid(doc json.RawMessage) (*Grid, error) {
	ms, gi, err := splitDoc(doc)
	if err == errNotObject {
		return nil, &wf.Error{Code: wf.ENoGrid}
	}
	if err != nil {
		return nil, err
	}
	if gi < 0 {
		return nil, &wf.Error{Code: wf.ENoGrid}
	}
	return gridOfMember(ms[gi].val)
}

func gridOfMember(v []byte) (*Grid, error) {
	if isNull(v) {
		return nil, &wf.Error{Code: wf.ENoGrid}
	}
	gms, err := scanObject(v)
	if err == errNotObject {
		return nil, wf.BadRequest("grid must be a JSON object")
	}
	if err != nil {
		return nil, wf.BadRequest("grid is not valid JSON")
	}
	if err := checkGridType(gms); err != nil {
		return nil, err
	}
	for _, k := range []string{"cols", "rows"} {
		i := lastMember(gms, k)
		if i < 0 {
			return nil, &wf.Error{Code: wf.ENoSize}
		}
		if f, ok := number(gms[i].val); !ok || f <= 0 {
			return nil, &wf.Error{Code: wf.ENoSize}
		}
	}
	return gridFromMembers(gms)
}

// SetGrid returns doc with its "grid" replaced by g, every other member
// kept as written and in place. A document without a grid gets one at the
// end; an empty or null document becomes {"grid":…}. A document that is
// not a JSON object is a bad_request.
func SetGrid(doc json.RawMessage, g *Grid) (json.RawMessage, error) {
	ms, gi, err := splitDoc(doc)
	if err == errNotObject {
		return nil, wf.BadRequest("world document must be a JSON object")
	}
	if err != nil {
		return nil, err
	}
	return joinDoc(ms, gi, g), nil
}

// joinDoc writes the members back with the grid member (index gi, or
// appended when gi < 0) set to g. Earlier duplicate "grid" members are
// dropped.
func joinDoc(ms []member, gi int, g *Grid) json.RawMessage {
	n := 2 + len(`"grid":`) + g.jsonLen()
	for _, m := range ms {
		if m.key != "grid" {
			n += len(m.rawKey) + 1 + len(m.val) + 1
		}
	}
	out := make([]byte, 0, n)
	out = append(out, '{')
	first := true
	sep := func() {
		if !first {
			out = append(out, ',')
		}
		first = false
	}
	for i, m := range ms {
		if i == gi {
			sep()
			out = append(out, m.rawKey...)
			out = append(out, ':')
			out = g.AppendJSON(out)
			continue
		}
		if m.key == "grid" {
			continue
		}
		sep()
		out = append(out, m.rawKey...)
		out = append(out, ':')
		out = append(out, m.val...)
	}
	if gi < 0 {
		sep()
		out = append(out, `"grid":`...)
		out = g.AppendJSON(out)
	}
	return append(out, '}')
}

// A small scanner over JSON text that finds the members of an object and the
// extent of values without decoding them. It copies nothing: members point
// into the input. It checks structure only; callers validate the values they
// keep (json.Valid) or decode them strictly (the grid rows).

var (
	errSyntax    = errors.New("invalid JSON")
	errNotObject = errors.New("not a JSON object")
)

// member is one member of a JSON object.
type member struct {
	rawKey []byte // the key as written, quotes included
	key    string // the decoded key
	val    []byte // the value as written, without surrounding whitespace
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipWS(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
}

// scanString scans the string that starts at b[i] == '"' and returns the
// index just past its closing quote and whether it holds a backslash.
func scanString(b []byte, i int) (end int, esc bool, err error) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, false, errSyntax
		}
		q := j + k
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, bytes.IndexByte(b[i+1:q], '\\') >= 0, nil
		}
		j = q + 1
	}
}

// skipValue returns the index just past the value that starts at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errSyntax
	}
	switch b[i] {
	case '"':
		end, _, err := scanString(b, i)
		return end, err
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				end, _, err := scanString(b, i)
				if err != nil {
					return 0, err
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return 0, errSyntax
	case '}', ']', ',', ':':
		return 0, errSyntax
	default:
		j := i
		for j < len(b) && !isWS(b[j]) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ':' {
			j++
		}
		if j == i {
			return 0, errSyntax
		}
		return j, nil
	}
}

// scanObject returns the members of the object that b holds (whitespace
// around it allowed). It returns errNotObject when b does not start with
// '{', and errSyntax when the object is malformed.
func scanObject(b []byte) ([]member, error) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, errNotObject
	}
	i = skipWS(b, i+1)
	var ms []member
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			if i >= len(b) || b[i] != '"' {
				return nil, errSyntax
			}
			ke, esc, err := scanString(b, i)
			if err != nil {
				return nil, err
			}
			m := member{rawKey: b[i:ke]}
			if esc || hasControl(m.rawKey) {
				if err := json.Unmarshal(m.rawKey, &m.key); err != nil {
					return nil, errSyntax
				}
			} else {
				m.key = string(m.rawKey[1 : len(m.rawKey)-1])
			}
			i = skipWS(b, ke)
			if i >= len(b) || b[i] != ':' {
				return nil, errSyntax
			}
			i = skipWS(b, i+1)
			ve, err := skipValue(b, i)
			if err != nil {
				return nil, err
			}
			m.val = b[i:ve]
			ms = append(ms, m)
			i = skipWS(b, ve)
			if i >= len(b) {
				return nil, errSyntax
			}
			if b[i] == ',' {
				i = skipWS(b, i+1)
				continue
			}
			if b[i] != '}' {
				return nil, errSyntax
			}
			i++
			break
		}
	}
	if skipWS(b, i) != len(b) {
		return nil, errSyntax
	}
	return ms, nil
}

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// isNull reports whether the value is absent or JSON null.
func isNull(v []byte) bool { return v == nil || string(v) == "null" }

// lastMember returns the index of the last member with the given key, or
// -1. Like encoding/json, the last of duplicate keys wins.
func lastMember(ms []member, key string) int {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].key == key {
			return i
		}
	}
	return -1
}
