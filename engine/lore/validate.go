package lore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	wf "github.com/worldforge-go/worldforge"
)

// Entity is one lore entity that passed Validate: its collection, its id and
// name as found in the JSON, and the JSON itself in canonical form (compact,
// keys in schema order, see the package doc).
type Entity struct {
	Collection string          `json:"collection"`
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	JSON       json.RawMessage `json:"entity"`
}

// maxDepth bounds the nesting of an entity's JSON. The schemas need 3.
const maxDepth = 16

var slugRE = regexp.MustCompile(SlugPattern)

// Validate checks entity against the schema of collection and returns it in
// canonical form. Every failure is a *wf.Error with code bad_request whose
// detail names the collection, the entity's id when it has a valid one, and
// the first offending field, e.g.
//
//	bad_request: deities/zeus: pantheonId: must be the id of an entity in pantheons, …, got "Olympus!"
//	bad_request: unknown lore collection "gods" (want one of pantheons, deities, …)
//
// Besides the schema, Validate refuses entities larger than MaxEntityBytes,
// invalid UTF-8, duplicate keys, NUL characters in any string or key, and
// nesting deeper than 16 levels.
func Validate(collection string, entity json.RawMessage) (Entity, error) {
	c, ok := byName[collection]
	if !ok {
		return Entity{}, unknownCollection(collection)
	}
	m, label, msg := c.check(entity)
	if msg != "" {
		return Entity{}, wf.BadRequest("%s: %s", label, msg)
	}
	return Entity{
		Collection: c.name,
		ID:         m["id"].(string),
		Name:       m["name"].(string),
		JSON:       c.encode(m),
	}, nil
}

func unknownCollection(name string) *wf.Error {
	return wf.BadRequest("unknown lore collection %q (want one of %s)", name, strings.Join(wf.LoreCollections, ", "))
}

// check decodes and validates raw. On failure it returns a message naming
// the offending field and the label to prefix it with: the collection, and
// its id when that is a valid slug.
func (c *collection) check(raw []byte) (m map[string]any, label, msg string) {
	label = c.name
	if len(raw) > MaxEntityBytes {
		return nil, label, fmt.Sprintf("entity is %d bytes, more than %d", len(raw), MaxEntityBytes)
	}
	if !utf8.Valid(raw) {
		return nil, label, "entity is not valid UTF-8"
	}
	m, err := decodeObject(raw)
	if err != nil {
		return nil, label, err.Error()
	}
	if id, ok := m["id"].(string); ok && slugRE.MatchString(id) {
		label += "/" + id
	}
	// In JSON text a NUL can only be written \u0000.
	if bytes.Contains(raw, []byte(`\u0000`)) {
		if msg := findNUL(m, ""); msg != "" {
			return nil, label, msg
		}
	}
	if err := c.resolved.Validate(m); err != nil {
		return nil, label, c.explain(m, c.root, "", err)
	}
	return m, label, ""
}

// decodeObject decodes a JSON object into a map[string]any, refusing
// duplicate keys and deep nesting.
//
// The fast path is json.Unmarshal plus one byte scan that counts the
// object members and the nesting depth of the text: if the decoded maps hold
// as many members as the text, no key was repeated. Anything else takes the
// slow path, a token-by-token decoder that finds the exact problem to report.
func decodeObject(raw []byte) (map[string]any, error) {
	if members, depth := scanShape(raw); depth <= maxDepth {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err == nil && m != nil && countMembers(m) == members {
			return m, nil
		}
	}
	return decodeObjectSlow(raw)
}

// scanShape counts the ':' outside strings (one per object member) and the
// deepest nesting of '{' and '[' in raw, which need not be valid JSON.
func scanShape(raw []byte) (members, depth int) {
	inString, escaped, d := false, false, 0
	for _, b := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == ':':
			members++
		case b == '{' || b == '[':
			d++
			depth = max(depth, d)
		case b == '}' || b == ']':
			d--
		}
	}
	return members, depth
}

// countMembers counts the members of every object in v.
func countMembers(v any) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		n += len(v)
		for _, e := range v {
			n += countMembers(e)
		}
	case []any:
		for _, e := range v {
			n += countMembers(e)
		}
	}
	return n
}

// decodeObjectSlow is decodeObject token by token.
func decodeObjectSlow(raw []byte) (map[string]any, error) {
	if !json.Valid(raw) {
		var v any
		err := json.Unmarshal(raw, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("entity is not valid JSON: %v (at byte %d)", se, se.Offset)
		}
		return nil, errors.New("entity is not valid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("entity is not valid JSON: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		v, err := decodeValue(dec, tok, "", 1)
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("entity must be a JSON object, got %s", gotValue(v))
	}
	v, err := decodeMembers(dec, "", 1)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("entity is not valid JSON: unexpected data after the object")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, tok json.Token, path string, depth int) (any, error) {
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, float64, bool or nil
	}
	if depth > maxDepth {
		return nil, fmt.Errorf("entity is nested more than %d levels deep", maxDepth)
	}
	switch d {
	case '{':
		return decodeMembers(dec, path, depth)
	case '[':
		a := []any{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, fmt.Errorf("entity is not valid JSON: %v", err)
			}
			v, err := decodeValue(dec, tok, index(path, len(a)), depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		if _, err := dec.Token(); err != nil { // ']'
			return nil, fmt.Errorf("entity is not valid JSON: %v", err)
		}
		return a, nil
	}
	return nil, fmt.Errorf("entity is not valid JSON: unexpected %v", d)
}

func decodeMembers(dec *json.Decoder, path string, depth int) (map[string]any, error) {
	m := map[string]any{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("entity is not valid JSON: %v", err)
		}
		k, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("entity is not valid JSON: unexpected %v", tok)
		}
		if _, dup := m[k]; dup {
			return nil, errors.New(at(path, fmt.Sprintf("duplicate field %q", k)))
		}
		tok, err = dec.Token()
		if err != nil {
			return nil, fmt.Errorf("entity is not valid JSON: %v", err)
		}
		v, err := decodeValue(dec, tok, member(path, k), depth+1)
		if err != nil {
			return nil, err
		}
		m[k] = v
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, fmt.Errorf("entity is not valid JSON: %v", err)
	}
	return m, nil
}

// findNUL returns a message for the first string or key, in sorted key
// order, that holds a NUL character, or "".
func findNUL(v any, path string) string {
	switch v := v.(type) {
	case string:
		if strings.IndexByte(v, 0) >= 0 {
			return at(path, "must not contain NUL characters")
		}
	case []any:
		for i, e := range v {
			if msg := findNUL(e, index(path, i)); msg != "" {
				return msg
			}
		}
	case map[string]any:
		keys := sortedKeys(v)
		for _, k := range keys {
			if strings.IndexByte(k, 0) >= 0 {
				return at(path, "field names must not contain NUL characters")
			}
		}
		for _, k := range keys {
			if msg := findNUL(v[k], member(path, k)); msg != "" {
				return msg
			}
		}
	}
	return ""
}

// explain says why v fails s, naming the innermost failing value. Objects
// are examined in a fixed order (required fields, unknown fields, then
// properties in schema order; array items in index order), so the message
// is deterministic; each part is checked with its own resolved subschema.
func (c *collection) explain(v any, s *jsonschema.Schema, path string, err error) string {
	switch s.Type {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			break
		}
		for _, r := range s.Required {
			if _, ok := m[r]; !ok {
				return at(path, "missing required field "+r)
			}
		}
		var unknown []string
		for k := range m {
			if _, ok := s.Properties[k]; !ok {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			slices.Sort(unknown)
			return at(path, fmt.Sprintf("unknown field %q (allowed: %s)", unknown[0], strings.Join(s.PropertyOrder, ", ")))
		}
		for _, k := range s.PropertyOrder {
			pv, ok := m[k]
			if !ok {
				continue
			}
			ps := s.Properties[k]
			if perr := c.sub[ps].Validate(pv); perr != nil {
				return c.explain(pv, ps, member(path, k), perr)
			}
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			break
		}
		for i, e := range a {
			if ierr := c.sub[s.Items].Validate(e); ierr != nil {
				return c.explain(e, s.Items, index(path, i), ierr)
			}
		}
		if s.MaxItems != nil && len(a) > *s.MaxItems {
			return at(path, fmt.Sprintf("has %d items, at most %d allowed", len(a), *s.MaxItems))
		}
		if s.UniqueItems {
			for j := range a {
				for i := range j {
					if jsonschema.Equal(a[i], a[j]) {
						return at(path, fmt.Sprintf("items %d and %d are the same; items must be unique", i, j))
					}
				}
			}
		}
	default:
		return at(path, fmt.Sprintf("must be %s, got %s", describe(s), gotValue(v)))
	}
	if jt := jsonTypeOf(v); jt != s.Type {
		return at(path, fmt.Sprintf("must be %s, got %s", describe(s), gotValue(v)))
	}
	// Not reached with our schemas; keep the library's words, trimmed.
	msg := err.Error()
	for strings.HasPrefix(msg, "validating ") {
		i := strings.Index(msg, ": ")
		if i < 0 {
			break
		}
		msg = msg[i+2:]
	}
	return at(path, truncate(msg, 200))
}

// describe says in words what s accepts.
func describe(s *jsonschema.Schema) string {
	switch s.Type {
	case "string":
		switch {
		case s.Enum != nil:
			q := make([]string, len(s.Enum))
			for i, e := range s.Enum {
				q[i] = strconv.Quote(fmt.Sprint(e))
			}
			return "one of " + strings.Join(q, ", ")
		case s.Pattern == SlugPattern:
			slug := "a slug matching " + SlugPattern + " (lowercase letters, digits, _ and -)"
			if t, ok := s.Extra[referencesKeyword]; ok {
				return fmt.Sprintf("the id of an entity in %s, %s", t, slug)
			}
			return slug
		}
		d := "a string of "
		if s.MinLength != nil && *s.MinLength > 0 {
			d += fmt.Sprintf("%d to %d characters", *s.MinLength, *s.MaxLength)
		} else {
			d += fmt.Sprintf("at most %d characters", *s.MaxLength)
		}
		if s.Pattern == namePattern {
			d += ", not all spaces"
		}
		return d
	case "integer":
		return fmt.Sprintf("an integer from %s to %s", formatNumber(*s.Minimum), formatNumber(*s.Maximum))
	case "boolean":
		return "true or false"
	case "array":
		return fmt.Sprintf("an array of at most %d items", *s.MaxItems)
	case "object":
		return "an object with fields " + strings.Join(s.PropertyOrder, ", ")
	}
	return s.Type
}

// gotValue shows a decoded JSON value briefly.
func gotValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return formatNumber(v)
	case string:
		if n := utf8.RuneCountInString(v); n > 40 {
			return fmt.Sprintf("%q… (%d characters)", truncate(v, 32), n)
		}
		return strconv.Quote(v)
	case []any:
		if len(v) == 1 {
			return "an array of 1 item"
		}
		return fmt.Sprintf("an array of %d items", len(v))
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func jsonTypeOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if v == math.Trunc(v) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

func formatNumber(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// truncate cuts s to at most n runes.
func truncate(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

func at(path, msg string) string {
	if path == "" {
		return msg
	}
	return path + ": " + msg
}

func member(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// encode renders m compactly with its top-level keys in schema order (id,
// name, summary, the collection's own fields, tags, notes); nested objects
// ({"collection","id"} refs) have sorted keys. HTML characters are not
// escaped.
func (c *collection) encode(m map[string]any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	put := func(v any) {
		if err := enc.Encode(v); err != nil {
			panic(fmt.Sprintf("lore: encoding a validated value: %v", err))
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
	}
	buf.WriteByte('{')
	for _, f := range c.fields {
		v, ok := m[f.name]
		if !ok {
			continue
		}
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		put(f.name)
		buf.WriteByte(':')
		put(v)
	}
	buf.WriteByte('}')
	return buf.Bytes()
}
