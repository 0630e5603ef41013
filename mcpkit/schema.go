package mcpkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// NormalizeSchema turns a tool's input schema, in whatever form it is held
// — nil, json.RawMessage, []byte, a map[string]any as the go-sdk client
// returns it, a *jsonschema.Schema, or any value that marshals to JSON —
// into a *jsonschema.Schema for an object, ready to validate arguments.
//
// It changes as little as it can: optional properties stay optional
// ("required" is kept as given), "integer" stays "integer", and
// "additionalProperties": false stays false. A missing or empty schema
// (nil, null, {}, true) becomes {"type": "object"}, a schema without a
// "type" gets "type": "object", and a type list that includes "object"
// becomes "object". A "$schema" naming a draft the validator does not know
// (draft-04, draft-06, 2019-09) is dropped and the schema read as 2020-12.
//
// A schema it cannot use whole is still accepted, and arguments are then
// checked as far as they can be (see NormalizeSchemaNotes, which says what
// was lost): one that describes something other than an object
// ({"type": "string"}) or does not parse as a schema becomes
// {"type": "object"}; one whose references do not resolve (a dangling or
// remote $ref; remote schemas are not fetched), whose $refs loop without
// descending into the arguments ({"$ref": "#/$defs/a"} with a → b → a), or
// that the validator refuses (a bad regular expression) is kept as it is,
// and arguments are checked only for being a JSON object.
//
// It fails (SCHEMA_CONVERSION_ERROR) only for input that is not a JSON
// object at all: an array, false, text that is not JSON, a value that
// cannot be encoded. The input is not modified.
func NormalizeSchema(raw any) (*jsonschema.Schema, error) {
	cs, _, err := normalizeSchema(raw)
	if err != nil {
		return nil, err
	}
	return cs.schema, nil
}

// NormalizeSchemaNotes is NormalizeSchema that never fails: input that is
// not a JSON object also becomes {"type": "object"}. notes says, one short
// sentence each, what was lost on the way (nil when nothing was), for a
// host to log: a tool with a lossy schema is still a tool a model can
// call, with fewer of its arguments checked before the call.
func NormalizeSchemaNotes(raw any) (s *jsonschema.Schema, notes []string) {
	cs, notes := lenientSchema(raw)
	return cs.schema, notes
}

// compiledSchema is a normalized schema with what validation needs.
type compiledSchema struct {
	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved
	// relaxed is the root without its object-level constraints (required,
	// additionalProperties, …), used to check each property on its own so
	// that a failure can list every bad property.
	relaxed *jsonschema.Resolved
	// json is the schema as the JSON it was read from (compact), so that
	// whoever needs the JSON need not marshal schema again.
	json json.RawMessage
	// decoded is json decoded (read-only), for the same reason; nil for
	// the open object schema.
	decoded map[string]any
}

// supportedDrafts are the "$schema" values the validator understands.
var supportedDrafts = []string{
	"https://json-schema.org/draft/2020-12/schema",
	"http://json-schema.org/draft-07/schema#",
	"http://json-schema.org/draft-07/schema",
	"https://json-schema.org/draft-07/schema#",
	"https://json-schema.org/draft-07/schema",
}

func schemaErr(format string, args ...any) *Error {
	var cause error
	if n := len(args); n > 0 {
		if e, ok := args[n-1].(error); ok {
			cause = e
			args = args[:n-1]
		}
	}
	return &Error{Code: CodeSchemaConversionError, Message: fmt.Sprintf(format, args...), Err: cause}
}

// compileSchema is normalizeSchema for a local tool: a schema that loses
// anything is refused, so that the tool's author hears of it.
func compileSchema(raw any) (*compiledSchema, error) {
	cs, notes, err := normalizeSchema(raw)
	if err != nil {
		return nil, err
	}
	if len(notes) > 0 {
		return nil, schemaErr("%s", strings.Join(notes, "; "))
	}
	return cs, nil
}

// openObjectSchema is {"type": "object"}: any object.
func openObjectSchema() *compiledSchema {
	s := &jsonschema.Schema{Type: "object"}
	rs, err := s.Resolve(nil)
	if err != nil {
		panic(err) // cannot happen for this schema
	}
	return &compiledSchema{schema: s, resolved: rs, json: json.RawMessage(`{"type":"object"}`)}
}

// normalizeSchema does NormalizeSchema's work. err is set (and cs nil)
// only for input that is not a JSON object; any other schema yields cs,
// with notes saying what was lost.
func normalizeSchema(raw any) (cs *compiledSchema, notes []string, err error) {
	var data []byte
	switch v := raw.(type) {
	case nil:
	case json.RawMessage:
		data = v
	case []byte:
		data = v
	case *jsonschema.Schema:
		if v != nil {
			b, err := json.Marshal(v)
			if err != nil {
				return nil, nil, schemaErr("cannot encode schema", err)
			}
			data = b
		}
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, nil, schemaErr("cannot encode schema", err)
		}
		data = b
	}
	data = bytes.TrimSpace(data)

	var m map[string]any
	switch {
	case len(data) == 0, string(data) == "null", string(data) == "true":
		m = map[string]any{}
	case data[0] == '{':
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, nil, schemaErr("schema is not valid JSON", err)
		}
	default:
		return nil, nil, schemaErr("schema must be a JSON object, got %.40s", data)
	}

	switch t := m["type"].(type) {
	case nil:
		m["type"] = "object"
	case string:
		if t != "object" {
			return openObjectSchema(), []string{fmt.Sprintf("input schema describes %q, not an object; replaced by an open object schema, arguments are checked only for being an object", t)}, nil
		}
	case []any:
		if !slices.Contains(t, any("object")) {
			return openObjectSchema(), []string{fmt.Sprintf("input schema describes %v, not an object; replaced by an open object schema, arguments are checked only for being an object", t)}, nil
		}
		m["type"] = "object"
	default:
		return openObjectSchema(), []string{fmt.Sprintf("input schema has a bad \"type\" (%v); replaced by an open object schema, arguments are checked only for being an object", t)}, nil
	}
	if d, ok := m["$schema"]; ok {
		if s, _ := d.(string); !slices.Contains(supportedDrafts, s) {
			delete(m, "$schema")
		}
	}

	b, err := json.Marshal(m)
	if err != nil {
		return nil, nil, schemaErr("cannot encode schema", err)
	}
	s := new(jsonschema.Schema)
	if err := json.Unmarshal(b, s); err != nil {
		return openObjectSchema(), []string{"input schema cannot be read (" + err.Error() + "); replaced by an open object schema, arguments are checked only for being an object"}, nil
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return &compiledSchema{schema: s, json: b, decoded: m}, []string{"input schema cannot be used for validation (" + trimValidationPrefix(err.Error()) + "); arguments are checked only for being an object"}, nil
	}
	// Validation follows $refs without a stack bound: a loop of them that
	// never descends into the arguments would overflow the stack.
	if loop := refLoop(m); loop != "" {
		return &compiledSchema{schema: s, json: b, decoded: m}, []string{"input schema's references loop or cannot be followed (" + loop + "); arguments are checked only for being an object"}, nil
	}

	relaxed := *s
	relaxed.Required = nil
	relaxed.AdditionalProperties = nil
	relaxed.UnevaluatedProperties = nil
	relaxed.PropertyNames = nil
	relaxed.MinProperties, relaxed.MaxProperties = nil, nil
	relaxed.DependentRequired, relaxed.DependentSchemas = nil, nil
	relaxed.DependencySchemas, relaxed.DependencyStrings = nil, nil
	relaxed.AllOf, relaxed.AnyOf, relaxed.OneOf, relaxed.Not = nil, nil, nil, nil
	relaxed.If, relaxed.Then, relaxed.Else = nil, nil, nil
	relaxed.Ref, relaxed.DynamicRef = "", ""
	rr, err := relaxed.Resolve(nil)
	if err != nil {
		rr = nil // fall back to the whole-schema message only
	}
	return &compiledSchema{schema: s, resolved: rs, relaxed: rr, json: b, decoded: m}, nil, nil
}

// schemaKeywords are the keywords whose values are subschemas, by shape:
// one schema, an array of them, or an object of them. inPlace marks those
// applied to the same instance (following them does not descend into the
// arguments).
var schemaKeywords = map[string]struct {
	shape   byte // 's' schema, 'a' array, 'o' object
	inPlace bool
}{
	"allOf": {'a', true}, "anyOf": {'a', true}, "oneOf": {'a', true}, "not": {'s', true},
	"if": {'s', true}, "then": {'s', true}, "else": {'s', true}, "dependentSchemas": {'o', true},
	"properties": {'o', false}, "patternProperties": {'o', false}, "additionalProperties": {'s', false},
	"unevaluatedProperties": {'s', false}, "propertyNames": {'s', false}, "items": {'s', false},
	"prefixItems": {'a', false}, "additionalItems": {'s', false}, "unevaluatedItems": {'s', false},
	"contains": {'s', false}, "$defs": {'o', false}, "definitions": {'o', false}, "dependencies": {'o', true},
}

// refLoop looks for a cycle of in-place steps ($ref, $dynamicRef, allOf,
// not, if …) in the schema document root, and returns its path ("" if
// there is none). References are followed as JSON pointers ("#/$defs/a")
// or anchors ("#name"); one it cannot follow within the document (by an
// $id) might loop unseen, so it is returned as a possible loop. Call it
// only for a schema that resolves.
func refLoop(root map[string]any) string {
	anchors := map[string]string{} // anchor name → pointer
	var collect func(ptr string, node any)
	collect = func(ptr string, node any) {
		m, ok := node.(map[string]any)
		if !ok {
			return
		}
		for _, kw := range []string{"$anchor", "$dynamicAnchor"} {
			if a, ok := m[kw].(string); ok {
				if _, dup := anchors[a]; !dup {
					anchors[a] = ptr
				}
			}
		}
		for _, kw := range slices.Sorted(maps.Keys(m)) {
			if k, ok := schemaKeywords[kw]; ok {
				for sub, child := range subschemas(ptr+"/"+escapePointer(kw), m[kw], k.shape) {
					collect(sub, child)
				}
			}
		}
	}
	collect("", root)
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	var stack []string
	var visit func(ptr string, node any) string
	visit = func(ptr string, node any) string {
		m, ok := node.(map[string]any)
		if !ok {
			return ""
		}
		switch state[ptr] {
		case visiting:
			i := slices.Index(stack, ptr)
			return "#" + strings.Join(append(slices.Clone(stack[i:]), ptr), " → #")
		case done:
			return ""
		}
		state[ptr] = visiting
		stack = append(stack, ptr)
		defer func() {
			stack = stack[:len(stack)-1]
			state[ptr] = done
		}()
		for _, kw := range []string{"$ref", "$dynamicRef"} {
			ref, ok := m[kw].(string)
			if !ok {
				continue
			}
			if !strings.HasPrefix(ref, "#") {
				return fmt.Sprintf("#%s: %s %q", ptr, kw, ref)
			}
			frag := ref[1:]
			if a, ok := anchors[frag]; ok && frag != "" && frag[0] != '/' {
				frag = a
			}
			target, tptr, ok := lookupPointer(root, frag)
			if !ok {
				return fmt.Sprintf("#%s: %s %q", ptr, kw, ref)
			}
			if loop := visit(tptr, target); loop != "" {
				return loop
			}
		}
		for _, kw := range slices.Sorted(maps.Keys(m)) {
			k, ok := schemaKeywords[kw]
			if !ok || !k.inPlace {
				continue
			}
			for sub, child := range subschemas(ptr+"/"+escapePointer(kw), m[kw], k.shape) {
				if loop := visit(sub, child); loop != "" {
					return loop
				}
			}
		}
		return ""
	}
	// Every subschema can be entered from the arguments, so start from
	// each one.
	var walk func(ptr string, node any) string
	walk = func(ptr string, node any) string {
		m, ok := node.(map[string]any)
		if !ok {
			return ""
		}
		if loop := visit(ptr, m); loop != "" {
			return loop
		}
		for _, kw := range slices.Sorted(maps.Keys(m)) {
			k, ok := schemaKeywords[kw]
			if !ok {
				continue
			}
			for sub, child := range subschemas(ptr+"/"+escapePointer(kw), m[kw], k.shape) {
				if loop := walk(sub, child); loop != "" {
					return loop
				}
			}
		}
		return ""
	}
	return walk("", root)
}

// subschemas yields the subschemas under one keyword, by JSON pointer.
func subschemas(ptr string, v any, shape byte) iter.Seq2[string, any] {
	return func(yield func(string, any) bool) {
		switch shape {
		case 's':
			if _, ok := v.(map[string]any); ok {
				yield(ptr, v)
			} else if a, ok := v.([]any); ok { // the array form of items
				for i, x := range a {
					if !yield(ptr+"/"+strconv.Itoa(i), x) {
						return
					}
				}
			}
		case 'a':
			a, _ := v.([]any)
			for i, x := range a {
				if !yield(ptr+"/"+strconv.Itoa(i), x) {
					return
				}
			}
		case 'o':
			o, _ := v.(map[string]any)
			for _, k := range slices.Sorted(maps.Keys(o)) {
				if !yield(ptr+"/"+escapePointer(k), o[k]) {
					return
				}
			}
		}
	}
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// lookupPointer finds the value a JSON pointer fragment ("" or "/a/b",
// percent-encoded as in a URI) names in root, and returns it with the
// pointer in the form refLoop keys nodes by.
func lookupPointer(root map[string]any, frag string) (any, string, bool) {
	frag, err := url.PathUnescape(frag)
	if err != nil || (frag != "" && frag[0] != '/') {
		return nil, "", false
	}
	var node any = root
	ptr := ""
	if frag == "" {
		return node, ptr, true
	}
	for _, tok := range strings.Split(frag[1:], "/") {
		key := strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := node.(type) {
		case map[string]any:
			x, ok := v[key]
			if !ok {
				return nil, "", false
			}
			node = x
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(v) {
				return nil, "", false
			}
			node = v[i]
		default:
			return nil, "", false
		}
		ptr += "/" + escapePointer(key)
	}
	return node, ptr, true
}

// validate checks args against the schema. It returns the arguments to
// pass on ({} for empty or null arguments) and the problems found, each a
// short sentence, in a stable order.
func (cs *compiledSchema) validate(args json.RawMessage) (json.RawMessage, []string) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	var inst any
	if err := json.Unmarshal(args, &inst); err != nil {
		return args, []string{"arguments are not valid JSON: " + err.Error()}
	}
	obj, ok := inst.(map[string]any)
	if !ok {
		return args, []string{fmt.Sprintf("arguments must be a JSON object, not %s", jsonKind(inst))}
	}
	if cs.resolved == nil {
		return args, nil // a schema that cannot be checked: an object is all we know
	}
	err := cs.resolved.Validate(obj)
	if err == nil {
		return args, nil
	}

	// Find every problem at the top level, in a stable order.
	var problems []string
	s := cs.schema
	for _, name := range s.Required {
		if _, ok := obj[name]; !ok {
			problems = append(problems, fmt.Sprintf("missing required property %q", name))
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if ap := s.AdditionalProperties; ap != nil && ap.Not != nil && reflect.ValueOf(*ap.Not).IsZero() {
		for _, k := range keys {
			if _, ok := s.Properties[k]; !ok && !matchesPatternProperty(s, k) {
				problems = append(problems, fmt.Sprintf("unexpected property %q", k))
			}
		}
	}
	if cs.relaxed != nil {
		for _, k := range keys {
			if _, ok := s.Properties[k]; !ok {
				continue
			}
			if err := cs.relaxed.Validate(map[string]any{k: obj[k]}); err != nil {
				problems = append(problems, fmt.Sprintf("property %q: %s", k, trimValidationPrefix(err.Error())))
			}
		}
	}
	if len(problems) == 0 {
		problems = append(problems, trimValidationPrefix(err.Error()))
	}
	return args, problems
}

func matchesPatternProperty(s *jsonschema.Schema, name string) bool {
	for pat := range s.PatternProperties {
		if re, err := regexp.Compile(pat); err == nil && re.MatchString(name) {
			return true
		}
	}
	return false
}

// trimValidationPrefix drops the validator's "validating root: " and
// "validating /properties/x: " breadcrumbs, keeping the last message.
func trimValidationPrefix(msg string) string {
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			return msg
		}
		i := strings.Index(rest, ": ")
		if i < 0 {
			return msg
		}
		msg = rest[i+2:]
	}
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("%T", v)
}
