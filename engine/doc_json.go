package engine

import (
	"encoding/json"
	"errors"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/jsonscan"
)

// A world document is a JSON object. This file reads its "grid" and writes a
// new one while keeping every other member exactly as written (key and
// value bytes, and order; whitespace between members is not kept).

// splitDoc returns the members of a world document and the index of its
// "grid" member (-1 if none). An empty or null document has no members.
// Members other than "grid" are checked to be valid JSON. A document that
// is valid JSON but not an object returns errNotObject.
func splitDoc(doc []byte) ([]member, int, error) {
	if i := jsonscan.SkipSpace(doc, 0); i == len(doc) || isNull(jsonscan.TrimSpace(doc)) {
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

// The document is read with jsonscan's Loose scan: it checks the structure
// of the object it splits and delimits the values without checking them,
// and the callers validate the values they keep (json.Valid) or decode them
// strictly (the grid rows), so that an error can name the member that is
// wrong. It copies nothing but keys: members point into the input.

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

// scanObject returns the members of the object that b holds (whitespace
// around it allowed). It returns errNotObject when b does not start with
// '{', and errSyntax when the object is malformed.
func scanObject(b []byte) ([]member, error) {
	var ms []member
	it := jsonscan.Loose.Members(b)
	for it.Next() {
		m := it.Member()
		ms = append(ms, member{rawKey: m.RawKey, key: m.Key(), val: m.Value})
	}
	switch err := it.Err(); {
	case err == nil:
		return ms, nil
	case errors.Is(err, jsonscan.ErrNotObject):
		return nil, errNotObject
	default:
		return nil, errSyntax
	}
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
