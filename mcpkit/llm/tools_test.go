package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/mcpkit"
)

// envEverything names the server-everything entry point (see
// mcpkit/everything_test.go).
const envEverything = "MCPKIT_TEST_EVERYTHING"

// connect connects a mcpkit client to cfg (closed with the test) and adds
// its tools to a new registry under server__tool names.
func connect(t testing.TB, cfg mcpkit.ServerConfig) (*mcpkit.Registry, *mcpkit.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := mcpkit.NewClient(cfg, nil)
	t.Cleanup(func() { c.Close() })
	if err := c.Connect(ctx); err != nil {
		t.Fatalf("connect %s: %v", cfg.Name, err)
	}
	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatalf("list tools of %s: %v", cfg.Name, err)
	}
	reg := mcpkit.NewRegistry()
	call := func(ctx context.Context, ref mcpkit.RemoteRef, args json.RawMessage) (*mcp.CallToolResult, error) {
		return c.CallTool(ctx, ref.Tool, args)
	}
	added, _, err := reg.AddRemote(cfg.Name, tools, call, mcpkit.Qualifier)
	if err != nil {
		t.Fatalf("add tools of %s: %v", cfg.Name, err)
	}
	if len(added) != len(tools) {
		t.Fatalf("%s: %d of %d tools added", cfg.Name, len(added), len(tools))
	}
	return reg, c
}

// worldforge starts a real WorldForge server and returns its 31 tools in a
// registry.
func worldforge(t testing.TB) (*mcpkit.Registry, *mcpkit.Client, *testserver.Server) {
	t.Helper()
	s := testserver.Start(t, dbtest.Open(t))
	key := s.Key(t, s.Owner, wf.ScopeAll)
	reg, c := connect(t, mcpkit.ServerConfig{Name: "worldforge", URL: s.MCPURL(), Headers: map[string]string{"Authorization": "Bearer " + key}})
	if reg.Len() != 31 {
		t.Fatalf("worldforge: %d tools, want 31", reg.Len())
	}
	return reg, c, s
}

// everything connects to the reference everything server over stdio, or
// skips the test when MCPKIT_TEST_EVERYTHING is not set.
func everything(t testing.TB) (*mcpkit.Registry, *mcpkit.Client) {
	t.Helper()
	entry := os.Getenv(envEverything)
	if entry == "" {
		t.Skip("set " + envEverything + " to interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH")
	}
	entry, _ = filepath.Abs(entry)
	return connect(t, mcpkit.ServerConfig{Name: "everything", Command: node, Args: []string{entry, "stdio"}})
}

// converted is one format's output as JSON: the tools' names and their
// parameter schemas.
type converted struct {
	names   []string
	schemas []map[string]any
}

// convertAll converts reg to every format (and OpenAI strict), marshals the
// SDK values, unmarshals them back into the SDK types, checks that nothing
// changed on the way and returns the JSON of each.
func convertAll(t *testing.T, reg *mcpkit.Registry) map[string]converted {
	t.Helper()
	out := map[string]converted{}
	opts := &Options{ServerTag: true}
	strict := &Options{Strict: true, ServerTag: true}

	oa, _ := OpenAITools(reg, opts)
	out["openai"] = roundTrip[[]openai.ChatCompletionToolUnionParam](t, "openai", oa, "/function/name", "/function/parameters")
	oas, _ := OpenAITools(reg, strict)
	out["openai strict"] = roundTrip[[]openai.ChatCompletionToolUnionParam](t, "openai strict", oas, "/function/name", "/function/parameters")
	or, _ := OpenAIResponsesTools(reg, opts)
	out["openai-responses"] = roundTrip[[]responses.ToolUnionParam](t, "openai-responses", or, "/name", "/parameters")
	ors, _ := OpenAIResponsesTools(reg, strict)
	out["openai-responses strict"] = roundTrip[[]responses.ToolUnionParam](t, "openai-responses strict", ors, "/name", "/parameters")
	an, _ := AnthropicTools(reg, opts)
	out["anthropic"] = roundTrip[[]anthropic.ToolUnionParam](t, "anthropic", an, "/name", "/input_schema")
	ge, _ := GeminiTools(reg, opts)
	out["gemini"] = roundTrip[[]GeminiTool](t, "gemini", []GeminiTool{ge}, "", "")
	return out
}

// roundTrip marshals v, unmarshals the JSON into a new T, marshals that
// again and checks that both JSON texts are equal. It returns each tool's
// name and schema read from the JSON at the given pointers (for Gemini:
// the function declarations).
func roundTrip[T any](t *testing.T, format string, v T, namePtr, schemaPtr string) converted {
	t.Helper()
	first, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s: marshal: %v", format, err)
	}
	var back T
	if err := json.Unmarshal(first, &back); err != nil {
		t.Fatalf("%s: unmarshal into %T: %v", format, back, err)
	}
	second, err := json.Marshal(back)
	if err != nil {
		t.Fatalf("%s: marshal again: %v", format, err)
	}
	if !jsonEqual(first, second) {
		t.Fatalf("%s: JSON changed through %T:\n%s\n%s", format, back, first, second)
	}
	var list []map[string]any
	if err := json.Unmarshal(first, &list); err != nil {
		t.Fatal(err)
	}
	var c converted
	if namePtr == "" { // Gemini
		if len(list) != 1 {
			t.Fatalf("gemini: %d tools, want 1", len(list))
		}
		for _, d := range list[0]["functionDeclarations"].([]any) {
			dm := d.(map[string]any)
			c.names = append(c.names, dm["name"].(string))
			p, _ := dm["parameters"].(map[string]any)
			c.schemas = append(c.schemas, p)
		}
		return c
	}
	for _, tool := range list {
		c.names = append(c.names, pointer(tool, namePtr).(string))
		s, _ := pointer(tool, schemaPtr).(map[string]any)
		c.schemas = append(c.schemas, s)
	}
	return c
}

func pointer(v any, p string) any {
	for _, tok := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[tok]
	}
	return v
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// checkFormats checks every format's output for reg: each tool present
// once, under its own name, and each schema within what its format takes.
func checkFormats(t *testing.T, reg *mcpkit.Registry) {
	t.Helper()
	var want []string
	for _, tool := range reg.List() {
		want = append(want, tool.Name)
	}
	for format, c := range convertAll(t, reg) {
		if !slices.Equal(c.names, want) {
			t.Errorf("%s: tools %v, want %v", format, c.names, want)
			continue
		}
		for i, s := range c.schemas {
			var problems []string
			switch format {
			case "gemini":
				if s != nil {
					checkGemini(s, "", &problems)
				}
			case "openai strict", "openai-responses strict":
				checkRoot(s, &problems)
				checkStrict(s, "", &problems)
			default:
				checkRoot(s, &problems)
				checkNoRef(s, "", &problems)
			}
			for _, p := range problems {
				t.Errorf("%s: %s: %s", format, c.names[i], p)
			}
		}
	}
}

func checkRoot(s map[string]any, problems *[]string) {
	if s == nil || s["type"] != "object" {
		*problems = append(*problems, "root is not an object schema")
	}
	for _, kw := range []string{"anyOf", "oneOf", "allOf", "not", "enum"} {
		if _, ok := s[kw]; ok {
			*problems = append(*problems, "root has "+kw)
		}
	}
}

// subschemas calls fn for each schema directly under s.
func subschemas(s map[string]any, path string, fn func(sub map[string]any, path string)) {
	for k, v := range s {
		switch {
		case mapSchemas[k]:
			m, _ := v.(map[string]any)
			for name, sub := range m {
				if sm, ok := sub.(map[string]any); ok {
					fn(sm, path+"/"+k+"/"+name)
				}
			}
		case listSchema[k]:
			l, _ := v.([]any)
			for i, sub := range l {
				if sm, ok := sub.(map[string]any); ok {
					fn(sm, path+"/"+k+"/"+string(rune('0'+i)))
				}
			}
		case oneSchema[k]:
			if sm, ok := v.(map[string]any); ok {
				fn(sm, path+"/"+k)
			}
		}
	}
}

func checkNoRef(s map[string]any, path string, problems *[]string) {
	if _, ok := s["$ref"]; ok {
		*problems = append(*problems, path+": $ref left")
	}
	subschemas(s, path, func(sub map[string]any, p string) { checkNoRef(sub, p, problems) })
}

// checkStrict checks OpenAI strict mode's rules at s and below.
func checkStrict(s map[string]any, path string, problems *[]string) {
	for k := range s {
		if !profileStrict.keep[k] {
			*problems = append(*problems, path+": keyword "+k+" in strict mode")
		}
	}
	_, hasType := s["type"]
	_, hasAnyOf := s["anyOf"]
	_, hasEnum := s["enum"]
	_, hasConst := s["const"]
	if !hasType && !hasAnyOf && !hasEnum && !hasConst {
		*problems = append(*problems, path+": no type")
	}
	if isType(s, "object") {
		if s["additionalProperties"] != false {
			*problems = append(*problems, path+": additionalProperties is not false")
		}
		props, _ := s["properties"].(map[string]any)
		req := stringList(s["required"])
		slices.Sort(req)
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		slices.Sort(names)
		if !slices.Equal(req, names) {
			*problems = append(*problems, path+": required "+strings.Join(req, ",")+" is not every property "+strings.Join(names, ","))
		}
	}
	if isType(s, "array") && s["items"] == nil {
		*problems = append(*problems, path+": array without items")
	}
	subschemas(s, path, func(sub map[string]any, p string) { checkStrict(sub, p, problems) })
}

// checkGemini checks Gemini's OpenAPI subset at s and below.
func checkGemini(s map[string]any, path string, problems *[]string) {
	for k := range s {
		if !profileGemini.keep[k] && k != "propertyOrdering" {
			*problems = append(*problems, path+": keyword "+k+" not in Gemini's schema")
		}
	}
	if t, ok := s["type"]; ok {
		ts, isString := t.(string)
		if !isString || ts != strings.ToUpper(ts) {
			*problems = append(*problems, path+": type is not one upper-case name")
		}
	}
	if path == "" {
		if props, _ := s["properties"].(map[string]any); s["type"] != "OBJECT" || len(props) == 0 {
			*problems = append(*problems, "parameters are not an OBJECT with properties")
		}
	}
	subschemas(s, path, func(sub map[string]any, p string) { checkGemini(sub, p, problems) })
}

// TestWorldForgeTools converts the 31 tools of a real WorldForge server,
// listed through a mcpkit client over streamable HTTP, to every format.
func TestWorldForgeTools(t *testing.T) {
	reg, _, _ := worldforge(t)
	checkFormats(t, reg)

	// The server tag leads each description.
	oa, _ := OpenAITools(reg, &Options{ServerTag: true})
	if d := oa[0].OfFunction.Function.Description.Value; !strings.HasPrefix(d, "[worldforge] ") {
		t.Errorf("description without the server tag: %q", d)
	}
	// Strict mode made some optional property nullable and said so.
	_, notes := OpenAITools(reg, &Options{Strict: true})
	found := false
	for _, n := range notes {
		if strings.Contains(n.Message, "made required and nullable") {
			found = true
		}
	}
	if !found {
		t.Errorf("strict mode noted no optional property: %v", notes)
	}
}

// TestEverythingTools converts the reference everything server's tools to
// every format.
func TestEverythingTools(t *testing.T) {
	reg, _ := everything(t)
	checkFormats(t, reg)
	t.Logf("everything: %d tools", reg.Len())

	// Its image tool's result keeps the image for Anthropic.
	name := mcpkit.QualifiedName("everything", "get-tiny-image", mcpkit.Qualifier)
	if _, ok := reg.Get(name); !ok {
		t.Fatalf("no %s", name)
	}
	r := (&Caller{Registry: reg}).Call(context.Background(), ToolCall{ID: "img", Name: name})
	b, _ := json.Marshal(r.AnthropicBlock())
	if r.IsError || !strings.Contains(string(b), `"type":"image"`) {
		t.Errorf("get-tiny-image: %+v", r)
	}
	checkShapes(t, r)
}

// TestSchemaCases converts schemas that each format must change, through a
// registry, and checks the result and the notes.
func TestSchemaCases(t *testing.T) {
	cases := []struct {
		name   string
		schema string
		// what each check expects, as JSON of the converted parameters
		openai, strict, gemini string
		notes                  []string // substrings some note must contain (any format)
	}{
		{
			name:   "refs and defs",
			schema: `{"type":"object","$defs":{"pt":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"]}},"properties":{"a":{"$ref":"#/$defs/pt"}},"required":["a"]}`,
			openai: `{"type":"object","properties":{"a":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"]}},"required":["a"]}`,
			strict: `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"object","additionalProperties":false,"properties":{"x":{"type":"number"}},"required":["x"]}},"required":["a"]}`,
			gemini: `{"type":"OBJECT","properties":{"a":{"type":"OBJECT","properties":{"x":{"type":"NUMBER"}},"propertyOrdering":["x"],"required":["x"]}},"propertyOrdering":["a"],"required":["a"]}`,
		},
		{
			name:   "recursive ref",
			schema: `{"type":"object","$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"child":{"$ref":"#/$defs/node"}}}},"properties":{"root":{"$ref":"#/$defs/node"}}}`,
			openai: `{"type":"object","properties":{"root":{"type":"object","properties":{"name":{"type":"string"},"child":{}}}}}`,
			notes:  []string{`recursive $ref "#/$defs/node" cut`},
		},
		{
			name:   "type list and optional",
			schema: `{"type":"object","properties":{"n":{"type":["integer","null"],"minimum":1},"s":{"type":"string","minLength":2,"format":"uri"}},"required":["n"],"additionalProperties":false}`,
			strict: `{"type":"object","additionalProperties":false,"properties":{"n":{"type":["integer","null"],"minimum":1},"s":{"type":["string","null"]}},"required":["n","s"]}`,
			gemini: `{"type":"OBJECT","properties":{"n":{"type":"INTEGER","nullable":true,"minimum":1},"s":{"type":"STRING","minLength":2}},"propertyOrdering":["n","s"],"required":["n"]}`,
			notes:  []string{"made required and nullable: s", "removed unsupported keywords: minLength", `removed unsupported format "uri"`, "removed unsupported keywords: additionalProperties"},
		},
		{
			name:   "oneOf, allOf, enum",
			schema: `{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"integer"}]},"m":{"allOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"properties":{"b":{"type":"integer","enum":[1,2]}}}]}}}`,
			gemini: `{"type":"OBJECT","properties":{"m":{"type":"OBJECT","properties":{"a":{"type":"STRING"},"b":{"type":"INTEGER"}},"propertyOrdering":["a","b"]},"v":{"anyOf":[{"type":"STRING"},{"type":"INTEGER"}]}},"propertyOrdering":["m","v"]}`,
			notes:  []string{"oneOf became anyOf", "allOf merged", "enum of non-string values removed"},
		},
		{
			name:   "top-level anyOf",
			schema: `{"type":"object","anyOf":[{"properties":{"id":{"type":"string"}},"required":["id"]},{"properties":{"id":{"type":"string"},"name":{"type":"string"}},"required":["id","name"]}]}`,
			openai: `{"type":"object","properties":{"id":{"type":"string"},"name":{"type":"string"}},"required":["id"]}`,
			notes:  []string{"top-level anyOf merged"},
		},
		{
			name:   "free-form",
			schema: `{"type":"object","properties":{"any":{},"obj":{"type":"object"},"list":{"type":"array"}},"required":["any","obj","list"]}`,
			strict: `{"type":"object","additionalProperties":false,"properties":{"any":{"type":["string","number","boolean","null"]},"list":{"type":"array","items":{"type":["string","number","boolean","null"]}},"obj":{"type":"object","additionalProperties":false,"properties":{},"required":[]}},"required":["any","list","obj"]}`,
			gemini: `{"type":"OBJECT","properties":{"any":{"anyOf":[{"type":"STRING"},{"type":"NUMBER"},{"type":"BOOLEAN"}]},"list":{"type":"ARRAY","items":{"type":"STRING"}}},"propertyOrdering":["any","list"],"required":["any","list"]}`,
			notes:  []string{"schema without a type", "array without items", "object without properties takes no keys", "not a schema Gemini takes; the property is left out", "declared as an array of strings", "declared as a string, number or boolean"},
		},
		{
			name:   "gemini nested free-form",
			schema: `{"type":"object","properties":{"q":{"type":"string"},"meta":{"type":"object","additionalProperties":{"type":"string"}},"rows":{"type":"array","items":{"type":"object"}},"v":{"anyOf":[{"type":"string"},{"type":"object"}]}},"required":["q","meta"]}`,
			gemini: `{"type":"OBJECT","properties":{"q":{"type":"STRING"},"v":{"anyOf":[{"type":"STRING"}]}},"propertyOrdering":["q","v"],"required":["q"]}`,
			notes:  []string{"not a schema Gemini takes; the property is left out", "the branch is left out"},
		},
		{
			name:   "gemini only free-form",
			schema: `{"type":"object","properties":{"meta":{"type":"object"}}}`,
			gemini: `null`,
			notes:  []string{"not a schema Gemini takes"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s jsonschema.Schema
			if err := json.Unmarshal([]byte(tc.schema), &s); err != nil {
				t.Fatal(err)
			}
			reg := mcpkit.NewRegistry()
			if err := reg.Add(mcpkit.Tool{Name: "t", InputSchema: &s, Execute: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) { return nil, nil }}); err != nil {
				t.Fatal(err)
			}
			checkFormats(t, reg)
			var notes []Note
			oa, n := OpenAITools(reg, nil)
			notes = append(notes, n...)
			st, n := OpenAITools(reg, &Options{Strict: true})
			notes = append(notes, n...)
			ge, n := GeminiTools(reg, nil)
			notes = append(notes, n...)
			_, n = AnthropicTools(reg, nil)
			notes = append(notes, n...)
			check := func(what string, got any, want string) {
				t.Helper()
				if want == "" {
					return
				}
				b, _ := json.Marshal(got)
				if !jsonEqual(b, []byte(want)) {
					t.Errorf("%s:\n got %s\nwant %s", what, b, want)
				}
			}
			check("openai", oa[0].OfFunction.Function.Parameters, tc.openai)
			check("strict", st[0].OfFunction.Function.Parameters, tc.strict)
			check("gemini", ge.FunctionDeclarations[0].Parameters, tc.gemini)
			for _, want := range tc.notes {
				if !slices.ContainsFunc(notes, func(n Note) bool { return strings.Contains(n.Message, want) }) {
					t.Errorf("no note saying %q in %v", want, notes)
				}
			}
		})
	}
}

// TestNormalizeNeverFails feeds schemas the registry would refuse straight
// to the normalizer: each comes out an object schema, with a note.
func TestNormalizeNeverFails(t *testing.T) {
	cases := []struct {
		name, raw, note string
	}{
		{"string root", `{"type":"string"}`, "not an object"},
		{"type list without object", `{"type":["string","null"]}`, "not an object"},
		{"unresolved ref", `{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`, "does not resolve"},
		{"remote ref", `{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`, "does not resolve"},
		{"self ref at root", `{"type":"object","properties":{"next":{"$ref":"#"}}}`, "recursive"},
		{"array", `[1,2]`, "not a JSON object"},
		{"not JSON", `{`, "not JSON"},
		{"false subschema", `{"type":"object","properties":{"x":false}}`, "schema false"},
	}
	for _, tc := range cases {
		for _, prof := range []*profile{profileFull, profileStrict, profileGemini} {
			var notes []Note
			m := schemaMap([]byte(tc.raw), "t", &notes)
			out, ns := normalize("t", m, prof)
			notes = append(notes, ns...)
			if out["type"] != "object" && out["type"] != "OBJECT" {
				t.Errorf("%s: root %v", tc.name, out)
			}
			if !slices.ContainsFunc(notes, func(n Note) bool { return strings.Contains(n.Message, tc.note) }) {
				t.Errorf("%s: no note with %q: %v", tc.name, tc.note, notes)
			}
			var problems []string
			checkNoRef(out, "", &problems)
			if prof == profileStrict {
				checkStrict(out, "", &problems)
			}
			if len(problems) > 0 {
				t.Errorf("%s: %v", tc.name, problems)
			}
		}
	}
}

// TestParseFormat accepts the four names and refuses others.
func TestParseFormat(t *testing.T) {
	for _, f := range Formats {
		if got, err := ParseFormat(string(f)); err != nil || got != f {
			t.Errorf("%s: %v %v", f, got, err)
		}
	}
	for _, bad := range []string{"", "OpenAI", "claude", "gemini "} {
		if _, err := ParseFormat(bad); err == nil || !strings.Contains(err.Error(), "unknown format") {
			t.Errorf("%q: %v", bad, err)
		}
		if _, _, err := Tools(mcpkit.NewRegistry(), Format(bad), nil); err == nil {
			t.Errorf("Tools(%q) did not fail", bad)
		}
	}
}

// TestConversionsIndependent changes one conversion's output and checks
// that the next conversion (from the cache) is unchanged, notes included.
func TestConversionsIndependent(t *testing.T) {
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{"a":{"type":"string","enum":["x","y"],"default":"x"}}}`), &s); err != nil {
		t.Fatal(err)
	}
	reg := mcpkit.NewRegistry()
	if err := reg.Add(mcpkit.Tool{Name: "t", InputSchema: &s, Execute: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) { return nil, nil }}); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []*Options{nil, {Strict: true}} {
		first, n1 := OpenAITools(reg, opts)
		want, _ := json.Marshal(first)
		a := first[0].OfFunction.Function.Parameters["properties"].(map[string]any)["a"].(map[string]any)
		a["enum"].([]any)[0] = "changed"
		a["type"] = "number"
		second, n2 := OpenAITools(reg, opts)
		got, _ := json.Marshal(second)
		if string(got) != string(want) || len(n1) != len(n2) {
			t.Errorf("second conversion changed:\n%s\n%s\n%v\n%v", want, got, n1, n2)
		}
	}
	g1, _ := GeminiTools(reg, nil)
	want, _ := json.Marshal(g1)
	g1.FunctionDeclarations[0].Parameters.Properties["a"].Enum[0] = "changed"
	g2, _ := GeminiTools(reg, nil)
	if got, _ := json.Marshal(g2); string(got) != string(want) {
		t.Errorf("gemini changed: %s", got)
	}
}

// TestKindMatchesSets checks that the keyword classifier agrees with the
// keyword sets.
func TestKindMatchesSets(t *testing.T) {
	for want, set := range map[int]map[string]bool{kwDrop: silentDrop, kwOne: oneSchema, kwMap: mapSchemas, kwList: listSchema} {
		for k := range set {
			if got := kind(k); got != want {
				t.Errorf("kind(%q) = %d, want %d", k, got, want)
			}
		}
	}
	for _, k := range []string{"type", "description", "enum", "$ref", "required"} {
		if got := kind(k); got != kwOther {
			t.Errorf("kind(%q) = %d, want other", k, got)
		}
	}
}
