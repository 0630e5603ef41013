package mcpkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
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
// Anything else that is not an object schema, a schema that does not
// parse, and one whose references do not resolve (remote $refs are not
// fetched) are SCHEMA_CONVERSION_ERROR. The input is not modified.
func NormalizeSchema(raw any) (*jsonschema.Schema, error) {
	cs, err := compileSchema(raw)
	if err != nil {
		return nil, err
	}
	return cs.schema, nil
}

// compiledSchema is a normalized schema with what validation needs.
type compiledSchema struct {
	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved
	// relaxed is the root without its object-level constraints (required,
	// additionalProperties, …), used to check each property on its own so
	// that a failure can list every bad property.
	relaxed *jsonschema.Resolved
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

func compileSchema(raw any) (*compiledSchema, error) {
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
				return nil, schemaErr("cannot encode schema", err)
			}
			data = b
		}
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, schemaErr("cannot encode schema", err)
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
			return nil, schemaErr("schema is not valid JSON", err)
		}
	default:
		return nil, schemaErr("schema must be a JSON object, got %.40s", data)
	}

	switch t := m["type"].(type) {
	case nil:
		m["type"] = "object"
	case string:
		if t != "object" {
			return nil, schemaErr("input schema must describe an object, not %q", t)
		}
	case []any:
		if !slices.Contains(t, any("object")) {
			return nil, schemaErr("input schema must describe an object, not %v", t)
		}
		m["type"] = "object"
	default:
		return nil, schemaErr("bad \"type\": %v", t)
	}
	if d, ok := m["$schema"]; ok {
		if s, _ := d.(string); !slices.Contains(supportedDrafts, s) {
			delete(m, "$schema")
		}
	}

	b, err := json.Marshal(m)
	if err != nil {
		return nil, schemaErr("cannot encode schema", err)
	}
	s := new(jsonschema.Schema)
	if err := json.Unmarshal(b, s); err != nil {
		return nil, schemaErr("cannot read schema", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, schemaErr("cannot use schema", err)
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
	return &compiledSchema{schema: s, resolved: rs, relaxed: rr}, nil
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
