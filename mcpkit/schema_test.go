package mcpkit

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// asJSON marshals a normalized schema back to a generic value.
func asJSON(t *testing.T, s *jsonschema.Schema) map[string]any {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestNormalizeSchemaKeepsMeaning(t *testing.T) {
	in := `{
		"type": "object",
		"properties": {
			"id":    {"type": "integer", "minimum": 1},
			"name":  {"type": "string", "description": "optional"},
			"tags":  {"type": "array", "items": {"type": "string"}},
			"mode":  {"enum": ["a", "b"]},
			"inner": {"type": "object", "properties": {"x": {"type": "number"}}, "additionalProperties": false}
		},
		"required": ["id"],
		"additionalProperties": false,
		"x-vendor": {"kept": true}
	}`
	s, err := NormalizeSchema(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	json.Unmarshal([]byte(in), &want)
	if got := asJSON(t, s); !reflect.DeepEqual(got, want) {
		t.Errorf("round trip changed the schema:\n got %v\nwant %v", got, want)
	}
	if !slices.Equal(s.Required, []string{"id"}) {
		t.Errorf("required = %v: optional properties must stay optional", s.Required)
	}
	if s.Properties["id"].Type != "integer" {
		t.Errorf("integer became %q", s.Properties["id"].Type)
	}
}

func TestNormalizeSchemaForms(t *testing.T) {
	object := map[string]any{"type": "object"}
	tests := []struct {
		name string
		in   any
		want map[string]any
	}{
		{"nil", nil, object},
		{"empty raw", json.RawMessage(""), object},
		{"null", json.RawMessage("null"), object},
		{"empty object", json.RawMessage("{}"), object},
		{"true", json.RawMessage("true"), object},
		{"bytes", []byte(`{"type":"object"}`), object},
		{"map from a go-sdk client", map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}},
			map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}},
		{"schema value", &jsonschema.Schema{Type: "object", Required: []string{"a"}}, map[string]any{"type": "object", "required": []any{"a"}}},
		{"nil schema", (*jsonschema.Schema)(nil), object},
		{"no type", json.RawMessage(`{"properties": {"a": {}}}`), map[string]any{"type": "object", "properties": map[string]any{"a": true}}},
		{"type list", json.RawMessage(`{"type": ["object", "null"]}`), object},
		{"draft-04 $schema dropped", json.RawMessage(`{"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}`), object},
		{"draft-07 $schema kept", json.RawMessage(`{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "definitions": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/definitions/n"}}}`),
			map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "definitions": map[string]any{"n": map[string]any{"type": "integer"}}, "properties": map[string]any{"a": map[string]any{"$ref": "#/definitions/n"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NormalizeSchema(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := asJSON(t, s); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNormalizeSchemaDoesNotModifyInput(t *testing.T) {
	in := &jsonschema.Schema{Properties: map[string]*jsonschema.Schema{"a": {Type: "string"}}}
	if _, err := NormalizeSchema(in); err != nil {
		t.Fatal(err)
	}
	if in.Type != "" {
		t.Errorf("input modified: type %q", in.Type)
	}
}

func TestNormalizeSchemaErrors(t *testing.T) {
	for name, in := range map[string]any{
		"array":         json.RawMessage(`[]`),
		"false":         json.RawMessage(`false`),
		"not json":      json.RawMessage(`{nope`),
		"unmarshalable": func() {},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := NormalizeSchema(in)
			if !errors.Is(err, ErrSchemaConversion) {
				t.Fatalf("err = %v, want SCHEMA_CONVERSION_ERROR", err)
			}
			// NormalizeSchemaNotes takes even these, and says so.
			s, notes := NormalizeSchemaNotes(in)
			if s == nil || s.Type != "object" || len(notes) == 0 {
				t.Fatalf("NormalizeSchemaNotes = %+v, %q", s, notes)
			}
		})
	}
}

// TestNormalizeSchemaLossy covers schemas that cannot be used whole: each
// is accepted, says what was lost, and validation checks what it still
// can: at least that the arguments are an object.
func TestNormalizeSchemaLossy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     string
		note   string // a word the note must contain
		object bool   // the schema is replaced by {"type":"object"}
	}{
		{"string schema", `{"type": "string"}`, "not an object", true},
		{"type list", `{"type": ["string", "number"]}`, "not an object", true},
		{"bad type", `{"type": 3}`, "bad \"type\"", true},
		{"bad property", `{"type": "object", "properties": {"a": 3}}`, "cannot be read", true},
		{"bad regex", `{"type": "object", "properties": {"a": {"type": "string", "pattern": "("}}}`, "validation", false},
		{"dangling ref", `{"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}`, "validation", false},
		{"remote ref", `{"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}}`, "validation", false},
		{"ref cycle", `{"type": "object", "properties": {"x": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}`, "loop", false},
		{"root ref cycle", `{"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}`, "loop", false},
		{"self ref", `{"type": "object", "$ref": "#"}`, "loop", false},
		{"anchor cycle", `{"type": "object", "$defs": {"a": {"$anchor": "a", "$ref": "#a"}}, "properties": {"p": {"$ref": "#/$defs/a"}}}`, "loop", false},
		{"allOf cycle", `{"type": "object", "$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}]}}, "properties": {"p": {"$ref": "#/$defs/a"}}}`, "loop", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NormalizeSchema(json.RawMessage(tc.in))
			if err != nil {
				t.Fatalf("NormalizeSchema: %v", err)
			}
			s2, notes := NormalizeSchemaNotes(json.RawMessage(tc.in))
			if len(notes) != 1 || !strings.Contains(notes[0], tc.note) {
				t.Fatalf("notes = %q, want one with %q", notes, tc.note)
			}
			if s.Type != "object" || s2.Type != "object" {
				t.Errorf("type %q / %q", s.Type, s2.Type)
			}
			if got := len(s.Properties) == 0 && s.Ref == "" && s.Defs == nil; got != tc.object {
				t.Errorf("replaced by an open object: %v, want %v (%+v)", got, tc.object, s)
			}
			// A registry keeps the tool and checks what it can; a local
			// tool with such a schema is refused.
			r := NewRegistry()
			added, _, err := r.AddRemote("srv", []*mcp.Tool{{Name: "t", InputSchema: json.RawMessage(tc.in)}}, (&remoteCalls{}).call, "")
			if err != nil || len(added) != 1 {
				t.Fatalf("AddRemote: %v %v", added, err)
			}
			if n := r.SchemaNotes("srv_t"); len(n) != 1 {
				t.Errorf("SchemaNotes = %q", n)
			}
			if _, err := r.Call(context.Background(), "srv_t", json.RawMessage(`{"x": {"y": 1}, "a": "z", "p": 1}`)); err != nil {
				t.Errorf("call with an object: %v", err)
			}
			if _, err := r.Call(context.Background(), "srv_t", json.RawMessage(`[1]`)); !errors.Is(err, ErrInvalidParameters) {
				t.Errorf("call with an array: %v", err)
			}
			if err := r.Add(Tool{Name: "local", InputSchema: s2, Execute: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) { return nil, nil }}); !tc.object && !errors.Is(err, ErrSchemaConversion) {
				t.Errorf("Add of a local tool with a lossy schema: %v", err)
			}
		})
	}
}

// FuzzNormalizeSchema feeds arbitrary JSON to the schema normalizer and
// validator: it must not panic or overflow the stack, must always give
// an object schema, and validating an object against it must return.
func FuzzNormalizeSchema(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"type":"string"}`, `{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#"}}}`, `{"type":"object","$ref":"#"}`,
		`{"anyOf":[{"$ref":"#/anyOf/0"}]}`, `{"type":"object","properties":{"x":{"$ref":"#/properties/x"}}}`,
		`{"$defs":{"a~1b":{"type":"integer"}},"properties":{"n":{"$ref":"#/$defs/a~01b"}}}`,
		`{"not":{"$ref":"#"}}`, `[]`, `{nope`, `{"$defs":{"a":{"$anchor":"a","$ref":"#a"}}}`,
		`{"$id":"https://example.com/s","$ref":"https://example.com/s"}`,
	} {
		f.Add([]byte(seed), []byte(`{"x":1,"a":"b"}`))
	}
	f.Fuzz(func(t *testing.T, schema, args []byte) {
		s, notes := NormalizeSchemaNotes(json.RawMessage(schema))
		if s == nil || s.Type != "object" {
			t.Fatalf("schema %+v (notes %q)", s, notes)
		}
		cs, _ := lenientSchema(json.RawMessage(schema))
		cs.validate(args)
		cs.validate(json.RawMessage(`{"x":{"y":[1,2]},"a":"b","p":null}`))
	})
}

func TestValidateArgs(t *testing.T) {
	cs, err := compileSchema(json.RawMessage(`{
		"type": "object",
		"properties": {
			"id":    {"type": "integer"},
			"name":  {"type": "string", "minLength": 2},
			"opt":   {"type": "boolean"},
			"item":  {"$ref": "#/$defs/item"}
		},
		"$defs": {"item": {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}},
		"required": ["id", "name"],
		"additionalProperties": false
	}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     string
		problems []string
	}{
		{"valid", `{"id": 1, "name": "ab"}`, nil},
		{"optional given", `{"id": 1, "name": "ab", "opt": true, "item": {"n": 1.5}}`, nil},
		{"integer as 2.0", `{"id": 2.0, "name": "ab"}`, nil},
		{"missing both required", `{}`, []string{`missing required property "id"`, `missing required property "name"`}},
		{"empty args", ``, []string{`missing required property "id"`, `missing required property "name"`}},
		{"null args", `null`, []string{`missing required property "id"`, `missing required property "name"`}},
		{"several problems", `{"id": 1.5, "name": "a", "zz": 1, "aa": 2}`, []string{
			`unexpected property "aa"`,
			`unexpected property "zz"`,
			`property "id": type: 1.5 has type "number", want "integer"`,
			`property "name": minLength: "a" contains 1 Unicode code points, fewer than 2`,
		}},
		{"through a ref", `{"id": 1, "name": "ab", "item": {}}`, []string{`property "item": required: missing properties: ["n"]`}},
		{"not an object", `[1]`, []string{"arguments must be a JSON object, not an array"}},
		{"not json", `{`, nil}, // checked below: one problem
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, problems := cs.validate(json.RawMessage(tt.args))
			if tt.name == "not json" {
				if len(problems) != 1 {
					t.Errorf("problems = %q, want one", problems)
				}
				return
			}
			if !slices.Equal(problems, tt.problems) {
				t.Errorf("problems:\n got %q\nwant %q", problems, tt.problems)
			}
		})
	}

	// A root-level constraint that no property check explains still
	// yields the validator's message.
	cs2, err := compileSchema(json.RawMessage(`{"type": "object", "minProperties": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, problems := cs2.validate(nil); len(problems) != 1 || problems[0] != "minProperties: object has 0 properties, less than 1" {
		t.Errorf("problems = %q", problems)
	}
}
