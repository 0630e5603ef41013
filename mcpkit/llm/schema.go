package llm

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Note records what a conversion changed or dropped in one tool's schema
// because the target format cannot take it. Nothing in a note stops the
// tool from being sent; a host logs notes so that a model's odd calls can be
// traced back to a constraint it was never shown.
type Note struct {
	Tool    string // the tool's name
	Path    string // JSON pointer into the tool's input schema; "" is the root
	Message string // what was changed or lost
}

// String renders "tool /path: message".
func (n Note) String() string {
	p := n.Path
	if p == "" {
		p = "/"
	}
	return n.Tool + " " + p + ": " + n.Message
}

// profile is what one target format takes.
type profile struct {
	// keep lists the keywords kept; nil keeps every keyword.
	keep map[string]bool
	// combos: allOf is merged and oneOf becomes anyOf (formats without
	// them).
	mergeCombos bool
	// strict applies OpenAI strict mode.
	strict bool
	// gemini turns type lists into nullable and anyOf, and keeps only
	// string enums.
	gemini bool
	// formats, if set, are the string formats kept.
	formats map[string]bool
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

var (
	// Anthropic and OpenAI without strict mode take JSON Schema as it is;
	// references are inlined all the same, so that no format depends on a
	// provider's $ref support.
	profileFull = &profile{}
	// OpenAI strict mode (Structured Outputs' supported subset).
	profileStrict = &profile{
		keep: set("type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf",
			"description", "title", "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
			"multipleOf", "minItems", "maxItems"),
		mergeCombos: true,
		strict:      true,
		formats:     set("date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"),
	}
	// Gemini's OpenAPI 3.0 subset (the fields of its Schema object).
	profileGemini = &profile{
		keep: set("type", "format", "title", "description", "nullable", "enum", "items", "minItems", "maxItems",
			"properties", "required", "minProperties", "maxProperties", "minLength", "maxLength", "pattern",
			"example", "anyOf", "default", "minimum", "maximum"),
		mergeCombos: true,
		gemini:      true,
		formats:     set("enum", "date-time", "float", "double", "int32", "int64"),
	}
)

// maxRefDepth bounds how many references are expanded inside one another,
// so that a schema whose references fan out cannot grow without end.
const maxRefDepth = 16

// anyValue is what strict mode puts where a schema allows any value: strict
// mode needs a type everywhere, and objects and arrays would need their
// shape.
func anyValue() map[string]any {
	return map[string]any{"type": []any{"string", "number", "boolean", "null"}}
}

type normalizer struct {
	tool  string
	root  map[string]any
	prof  *profile
	notes []Note
	refs  []string // references being expanded, innermost last

	expansions int
}

func (n *normalizer) note(path *jpath, format string, args ...any) {
	n.notes = append(n.notes, Note{Tool: n.tool, Path: path.String(), Message: fmt.Sprintf(format, args...)})
}

// jpath is a JSON pointer into the schema being walked, rendered only when
// a note needs it: each step points to its parent (nil is the root), and
// steps live on the walk's stack.
type jpath struct {
	parent *jpath
	tok    string
	idx    int
	isIdx  bool
}

// String renders the pointer ("" for the root).
func (p *jpath) String() string {
	if p == nil {
		return ""
	}
	var stack [16]*jpath
	steps := stack[:0]
	for q := p; q != nil; q = q.parent {
		steps = append(steps, q)
	}
	var b strings.Builder
	for i := len(steps) - 1; i >= 0; i-- {
		q := steps[i]
		b.WriteByte('/')
		if q.isIdx {
			b.WriteString(strconv.Itoa(q.idx))
		} else if strings.ContainsAny(q.tok, "~/") {
			b.WriteString(strings.ReplaceAll(strings.ReplaceAll(q.tok, "~", "~0"), "/", "~1"))
		} else {
			b.WriteString(q.tok)
		}
	}
	return b.String()
}

// schemaMap decodes a schema (JSON) into a map; anything that is not an
// object becomes an empty schema, with a note.
func schemaMap(raw []byte, tool string, notes *[]Note) map[string]any {
	var v any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &v); err != nil {
			*notes = append(*notes, Note{Tool: tool, Message: "input schema is not JSON; replaced by an empty object schema"})
			return map[string]any{}
		}
	}
	switch s := v.(type) {
	case map[string]any:
		return s
	case nil, bool:
		return map[string]any{}
	}
	*notes = append(*notes, Note{Tool: tool, Message: "input schema is not a JSON object; replaced by an empty object schema"})
	return map[string]any{}
}

// normalize returns schema (decoded JSON) made fit for prof: local
// references inlined, the root an object schema without combinators, and
// what prof cannot take changed or removed, each change noted. It never
// fails and does not modify schema.
func normalize(tool string, schema map[string]any, prof *profile) (map[string]any, []Note) {
	n := &normalizer{tool: tool, root: schema, prof: prof}
	if hasRef(schema) {
		schema, _ = n.inline(schema, nil).(map[string]any)
	}
	out := n.walk(n.flattenRoot(schema), nil, true)
	return out, n.notes
}

// flattenRoot makes the root one object schema: model APIs refuse anything
// else at the top of a tool's parameters.
func (n *normalizer) flattenRoot(s map[string]any) map[string]any {
	s = maps.Clone(s)
	for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
		branches, ok := s[kw].([]any)
		if !ok {
			continue
		}
		delete(s, kw)
		props, _ := s["properties"].(map[string]any)
		props = maps.Clone(props)
		if props == nil {
			props = map[string]any{}
		}
		required := stringList(s["required"])
		var common []string // required in every branch (anyOf, oneOf)
		for i, b := range branches {
			bm, ok := b.(map[string]any)
			if !ok {
				continue
			}
			bp, _ := bm["properties"].(map[string]any)
			for k, v := range bp {
				if _, ok := props[k]; !ok {
					props[k] = v
				}
			}
			br := stringList(bm["required"])
			if kw == "allOf" {
				required = appendNew(required, br...)
			} else if i == 0 {
				common = br
			} else {
				common = slices.DeleteFunc(common, func(r string) bool { return !slices.Contains(br, r) })
			}
		}
		required = appendNew(required, common...)
		if len(props) > 0 {
			s["properties"] = props
		}
		if len(required) > 0 {
			s["required"] = toAnyList(required)
		}
		if kw == "allOf" {
			n.note(nil, "top-level allOf merged into one object schema")
		} else {
			n.note(nil, "top-level %s merged into one object schema: which combinations of properties are valid is lost", kw)
		}
	}
	for _, kw := range []string{"not", "enum", "const", "if", "then", "else"} {
		if _, ok := s[kw]; ok {
			delete(s, kw)
			n.note(nil, "top-level %q removed", kw)
		}
	}
	switch t := s["type"].(type) {
	case nil:
		s["type"] = "object"
	case string:
		if t != "object" {
			n.note(nil, "input schema is of type %q, not an object; replaced by an empty object schema", t)
			return map[string]any{"type": "object", "properties": map[string]any{}}
		}
	case []any:
		if !slices.Contains(t, any("object")) {
			n.note(nil, "input schema is of type %v, not an object; replaced by an empty object schema", t)
			return map[string]any{"type": "object", "properties": map[string]any{}}
		}
		s["type"] = "object"
	default:
		s["type"] = "object"
	}
	return s
}

// resolve looks up a local reference ("#", "#/$defs/x", any JSON pointer
// into the root).
func (n *normalizer) resolve(ref string) (map[string]any, bool) {
	if !strings.HasPrefix(ref, "#") {
		return nil, false
	}
	var cur any = n.root
	ptr := strings.TrimPrefix(ref, "#")
	if ptr != "" {
		if !strings.HasPrefix(ptr, "/") {
			return nil, false // an anchor: not supported
		}
		for _, tok := range strings.Split(ptr[1:], "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			switch c := cur.(type) {
			case map[string]any:
				var ok bool
				if cur, ok = c[tok]; !ok {
					return nil, false
				}
			case []any:
				i := 0
				if _, err := fmt.Sscan(tok, &i); err != nil || i < 0 || i >= len(c) {
					return nil, false
				}
				cur = c[i]
			default:
				return nil, false
			}
		}
	}
	switch c := cur.(type) {
	case map[string]any:
		return c, true
	case bool:
		return map[string]any{}, true
	}
	return nil, false
}

// subschema keywords whose value is one schema, a map of schemas, or a
// list of schemas.
var (
	oneSchema  = set("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "additionalItems")
	mapSchemas = set("properties", "patternProperties", "dependentSchemas")
	listSchema = set("anyOf", "oneOf", "allOf", "prefixItems")
)

// dropped keywords that only hold definitions or metadata: inlining makes
// them useless, and losing them loses nothing.
var silentDrop = set("$defs", "definitions", "$schema", "$id", "$anchor", "$dynamicAnchor", "$comment", "$vocabulary")

// keyword kinds, as kind returns them.
const (
	kwOther = iota
	kwDrop  // silentDrop
	kwOne   // oneSchema
	kwMap   // mapSchemas
	kwList  // listSchema
)

// kind classifies a keyword with one switch, sparing a lookup in each of
// the sets above for every keyword of every node.
func kind(k string) int {
	switch k {
	case "$defs", "definitions", "$schema", "$id", "$anchor", "$dynamicAnchor", "$comment", "$vocabulary":
		return kwDrop
	case "items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "additionalItems":
		return kwOne
	case "properties", "patternProperties", "dependentSchemas":
		return kwMap
	case "anyOf", "oneOf", "allOf", "prefixItems":
		return kwList
	}
	return kwOther
}

// walk returns a normalized copy of the schema value v at path.
func (n *normalizer) walk(v any, path *jpath, isRoot bool) map[string]any {
	var s map[string]any
	switch t := v.(type) {
	case map[string]any:
		s = t
	case bool:
		if !t {
			n.note(path, "schema false (no value allowed) replaced by an unconstrained schema")
		}
		s = map[string]any{}
	default:
		n.note(path, "schema is not an object; replaced by an unconstrained schema")
		s = map[string]any{}
	}

	out := make(map[string]any, len(s))
	var removed []string
	for k, val := range s {
		kk := kind(k)
		switch {
		case kk == kwDrop:
			continue
		case n.prof.mergeCombos && k == "allOf":
			continue // merged below
		case n.prof.mergeCombos && k == "oneOf":
			if n.prof.keep != nil && !n.prof.keep["anyOf"] {
				removed = append(removed, k)
				continue
			}
			if _, both := s["anyOf"]; both {
				removed = append(removed, k)
				continue
			}
			n.note(path, "oneOf became anyOf: that exactly one alternative must match is lost")
			out["anyOf"] = n.walkList(val, &jpath{parent: path, tok: k})
			continue
		case n.prof.keep != nil && !n.prof.keep[k]:
			removed = append(removed, k)
			continue
		}
		switch kk {
		case kwOne:
			if b, ok := val.(bool); ok && k == "additionalProperties" {
				out[k] = b
			} else if list, ok := val.([]any); ok && k == "items" {
				// Tuple form (draft 4 to 2019-09): one schema for all.
				n.note(path, "items as a list (tuple) became the schema of its first element")
				if len(list) > 0 {
					kp := jpath{parent: path, tok: k}
					out[k] = n.walk(list[0], &jpath{parent: &kp, isIdx: true}, false)
				} else {
					out[k] = map[string]any{}
				}
			} else {
				out[k] = n.walk(val, &jpath{parent: path, tok: k}, false)
			}
		case kwMap:
			m, ok := val.(map[string]any)
			if !ok {
				removed = append(removed, k)
				continue
			}
			mo := make(map[string]any, len(m))
			kp := jpath{parent: path, tok: k}
			for name, sub := range m {
				mo[name] = n.walk(sub, &jpath{parent: &kp, tok: name}, false)
			}
			out[k] = mo
		case kwList:
			out[k] = n.walkList(val, &jpath{parent: path, tok: k})
		default:
			out[k] = cloneValue(val)
		}
	}
	if len(removed) > 0 {
		slices.Sort(removed)
		n.note(path, "removed unsupported keywords: %s", strings.Join(removed, ", "))
	}
	if n.prof.mergeCombos {
		if list, ok := s["allOf"].([]any); ok {
			n.mergeAllOf(out, list, path)
		}
	}
	if f, ok := out["format"].(string); ok && n.prof.formats != nil && !n.prof.formats[f] {
		delete(out, "format")
		n.note(path, "removed unsupported format %q", f)
	}
	if n.prof.strict {
		n.strictify(out, path, isRoot)
	}
	if n.prof.gemini {
		n.geminify(out, path)
	}
	return out
}

func (n *normalizer) walkList(v any, path *jpath) []any {
	list, ok := v.([]any)
	if !ok {
		n.note(path, "not a list of schemas; removed")
		return nil
	}
	out := make([]any, len(list))
	for i, sub := range list {
		out[i] = n.walk(sub, &jpath{parent: path, idx: i, isIdx: true}, false)
	}
	return out
}

// maxExpansions bounds the references expanded in one schema, so that a
// schema whose references fan out cannot grow without end.
const maxExpansions = 1000

// inline returns v with every local $ref replaced by a copy of its target
// (the referring schema's own keywords win). A remote, unresolvable or
// recursive reference is cut: the schema keeps only its own keywords.
func (n *normalizer) inline(v any, path *jpath) any {
	s, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if ref, ok := s["$ref"].(string); ok {
		own := maps.Clone(s)
		delete(own, "$ref")
		switch target, found := n.resolve(ref); {
		case slices.Contains(n.refs, ref) || len(n.refs) >= maxRefDepth || n.expansions >= maxExpansions:
			n.note(path, "recursive $ref %q cut here: the value is not described further", ref)
			return n.inline(own, path)
		case !found:
			n.note(path, "$ref %q does not resolve to a schema in this document; removed", ref)
			return n.inline(own, path)
		default:
			n.expansions++
			merged := make(map[string]any, len(target)+len(own))
			maps.Copy(merged, target)
			maps.Copy(merged, own)
			if inner, ok := target["$ref"].(string); ok && own["$ref"] == nil {
				merged["$ref"] = inner
			}
			n.refs = append(n.refs, ref)
			out := n.inline(merged, path)
			n.refs = n.refs[:len(n.refs)-1]
			return out
		}
	}
	out := make(map[string]any, len(s))
	for k, val := range s {
		kp := jpath{parent: path, tok: k}
		switch kind(k) {
		case kwDrop:
			continue // definitions: inlined where used
		case kwOne:
			if list, ok := val.([]any); ok { // tuple items
				lo := make([]any, len(list))
				for i, sub := range list {
					lo[i] = n.inline(sub, &jpath{parent: &kp, idx: i, isIdx: true})
				}
				out[k] = lo
			} else {
				out[k] = n.inline(val, &kp)
			}
		case kwMap:
			m, ok := val.(map[string]any)
			if !ok {
				out[k] = val
				continue
			}
			mo := make(map[string]any, len(m))
			for name, sub := range m {
				mo[name] = n.inline(sub, &jpath{parent: &kp, tok: name})
			}
			out[k] = mo
		case kwList:
			list, ok := val.([]any)
			if !ok {
				out[k] = val
				continue
			}
			lo := make([]any, len(list))
			for i, sub := range list {
				lo[i] = n.inline(sub, &jpath{parent: &kp, idx: i, isIdx: true})
			}
			out[k] = lo
		default:
			out[k] = val
		}
	}
	return out
}

// mergeAllOf folds allOf branches (already normalized where they were
// walked) into out: properties and required are united, other keywords
// taken from the first branch that has them.
func (n *normalizer) mergeAllOf(out map[string]any, list []any, path *jpath) {
	props, _ := out["properties"].(map[string]any)
	required := stringList(out["required"])
	kp := jpath{parent: path, tok: "allOf"}
	for i, b := range list {
		bm := n.walk(b, &jpath{parent: &kp, idx: i, isIdx: true}, false)
		for k, v := range bm {
			switch k {
			case "properties":
				if props == nil {
					props = map[string]any{}
				}
				for name, sub := range v.(map[string]any) {
					if _, ok := props[name]; !ok {
						props[name] = sub
					}
				}
			case "required":
				required = appendNew(required, stringList(v)...)
			default:
				if _, ok := out[k]; !ok {
					out[k] = v
				}
			}
		}
	}
	if props != nil {
		out["properties"] = props
	}
	if len(required) > 0 {
		out["required"] = toAnyList(required)
	}
	n.note(path, "allOf merged into one schema")
}

func isType(s map[string]any, t string) bool {
	switch v := s["type"].(type) {
	case string:
		return v == t
	case []any:
		return slices.Contains(v, any(t))
	}
	return false
}

// strictify applies OpenAI strict mode to a walked schema: objects list
// every property as required (optional ones made nullable) and allow no
// other keys; every schema has a type.
func (n *normalizer) strictify(s map[string]any, path *jpath, isRoot bool) {
	_, hasProps := s["properties"]
	if isType(s, "object") || hasProps {
		if _, ok := s["type"]; !ok {
			s["type"] = "object"
		}
		props, _ := s["properties"].(map[string]any)
		if props == nil {
			props = map[string]any{}
			s["properties"] = props
			if !isRoot {
				n.note(path, "strict mode: an object without properties takes no keys")
			}
		}
		switch ap := s["additionalProperties"].(type) {
		case nil:
		case bool:
			if ap && len(props) > 0 {
				n.note(path, "strict mode: additional properties no longer allowed")
			}
		default:
			n.note(path, "strict mode: additionalProperties schema removed; additional properties no longer allowed")
		}
		s["additionalProperties"] = false
		required := stringList(s["required"])
		names := slices.Sorted(maps.Keys(props))
		var madeNullable []string
		for _, name := range names {
			if !slices.Contains(required, name) {
				props[name] = nullable(props[name].(map[string]any))
				madeNullable = append(madeNullable, name)
			}
		}
		s["required"] = toAnyList(names)
		if len(madeNullable) > 0 {
			n.note(path, "strict mode: optional properties made required and nullable: %s", strings.Join(madeNullable, ", "))
		}
		return
	}
	if isType(s, "array") {
		if _, ok := s["items"]; !ok {
			s["items"] = anyValue()
			n.note(path, "strict mode: array without items takes strings, numbers, booleans and null")
		}
		return
	}
	_, hasType := s["type"]
	_, hasAny := s["anyOf"]
	_, hasEnum := s["enum"]
	_, hasConst := s["const"]
	if !hasType && !hasAny && !hasEnum && !hasConst {
		maps.Copy(s, anyValue())
		n.note(path, "strict mode: schema without a type takes strings, numbers, booleans and null (no objects or arrays)")
	}
}

// nullable returns s allowing null too.
func nullable(s map[string]any) map[string]any {
	switch t := s["type"].(type) {
	case string:
		if t == "null" {
			return s
		}
		s["type"] = []any{t, "null"}
		if e, ok := s["enum"].([]any); ok && !slices.Contains(e, nil) {
			s["enum"] = append(slices.Clone(e), nil)
		}
		return s
	case []any:
		if !slices.Contains(t, any("null")) {
			s["type"] = append(slices.Clone(t), "null")
		}
		if e, ok := s["enum"].([]any); ok && !slices.Contains(e, nil) {
			s["enum"] = append(slices.Clone(e), nil)
		}
		return s
	}
	if list, ok := s["anyOf"].([]any); ok {
		for _, b := range list {
			if bm, ok := b.(map[string]any); ok && bm["type"] == "null" {
				return s
			}
		}
		s["anyOf"] = append(slices.Clone(list), map[string]any{"type": "null"})
		return s
	}
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
}

var geminiTypes = map[string]string{
	"string": "STRING", "number": "NUMBER", "integer": "INTEGER", "boolean": "BOOLEAN",
	"array": "ARRAY", "object": "OBJECT", "null": "NULL",
}

// geminify applies Gemini's OpenAPI subset to a walked schema: type lists
// become nullable (and anyOf for several types), enums hold strings only.
func (n *normalizer) geminify(s map[string]any, path *jpath) {
	switch t := s["type"].(type) {
	case []any:
		var types []string
		null := false
		for _, x := range t {
			if x == "null" {
				null = true
			} else if xs, ok := x.(string); ok {
				types = append(types, xs)
			}
		}
		if null {
			s["nullable"] = true
		}
		switch len(types) {
		case 0:
			delete(s, "type")
		case 1:
			s["type"] = types[0]
		default:
			delete(s, "type")
			alts := make([]any, len(types))
			for i, x := range types {
				alts[i] = map[string]any{"type": geminiTypes[x]}
			}
			if _, ok := s["anyOf"]; !ok {
				s["anyOf"] = alts
				n.note(path, "type list %v became anyOf", types)
			} else {
				n.note(path, "type list %v removed (the schema already has anyOf)", types)
			}
		}
	case string:
		if t == "null" {
			delete(s, "type")
			s["nullable"] = true
		}
	}
	if t, ok := s["type"].(string); ok {
		if g, ok := geminiTypes[t]; ok {
			s["type"] = g
		} else if t != strings.ToUpper(t) || geminiTypes[strings.ToLower(t)] == "" {
			delete(s, "type")
			n.note(path, "unknown type %q removed", t)
		}
	}
	if c, ok := s["const"]; ok {
		delete(s, "const")
		if cs, ok := c.(string); ok {
			s["enum"] = []any{cs}
		} else {
			n.note(path, "non-string const %v removed", c)
		}
	}
	if e, ok := s["enum"].([]any); ok {
		vals := make([]any, 0, len(e))
		allStrings := true
		for _, x := range e {
			switch xs := x.(type) {
			case string:
				vals = append(vals, xs)
			case nil:
				s["nullable"] = true
			default:
				allStrings = false
			}
		}
		if !allStrings || len(vals) == 0 {
			delete(s, "enum")
			n.note(path, "enum of non-string values removed")
		} else {
			s["enum"] = vals
			if s["type"] == nil {
				s["type"] = "STRING"
			}
		}
	}
}

func stringList(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func appendNew(list []string, add ...string) []string {
	for _, a := range add {
		if !slices.Contains(list, a) {
			list = append(list, a)
		}
	}
	return list
}

func toAnyList(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}

// cloneValue deep-copies decoded JSON, so that no output shares a value
// with the cached input.
func cloneValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = cloneValue(x)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, x := range t {
			l[i] = cloneValue(x)
		}
		return l
	}
	return v
}

// hasRef reports whether a $ref occurs anywhere in v.
func hasRef(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		if _, ok := t["$ref"]; ok {
			return true
		}
		for _, x := range t {
			if hasRef(x) {
				return true
			}
		}
	case []any:
		for _, x := range t {
			if hasRef(x) {
				return true
			}
		}
	}
	return false
}
