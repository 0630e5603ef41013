package llm

import (
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"weak"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/worldforge-go/worldforge/mcpkit"
)

// Format names a model API's tool format.
type Format string

// The formats.
const (
	FormatOpenAI          Format = "openai"           // Chat Completions function tools
	FormatOpenAIResponses Format = "openai-responses" // Responses API function tools
	FormatAnthropic       Format = "anthropic"        // Messages API tools (input_schema)
	FormatGemini          Format = "gemini"           // Gemini function declarations
)

// Formats lists every format.
var Formats = []Format{FormatOpenAI, FormatOpenAIResponses, FormatAnthropic, FormatGemini}

// ParseFormat returns the Format named s, or an error naming the formats.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("llm: unknown format %q (want openai, openai-responses, anthropic or gemini)", s)
}

// Options adjust a conversion. The zero value (or nil) is the default.
type Options struct {
	// Strict turns on OpenAI strict mode (Structured Outputs) for the
	// OpenAI formats: every property required, optional ones nullable,
	// additionalProperties false everywhere, keywords strict mode does not
	// take removed. Ignored by the other formats.
	Strict bool
	// ServerTag puts "[server] " in front of the description of each tool
	// that a server serves (mcpkit.Registry.Remote), so that the model
	// knows where a tool comes from.
	ServerTag bool
}

func (o *Options) orZero() Options {
	if o == nil {
		return Options{}
	}
	return *o
}

// prepared is one tool's name, description and schema (decoded JSON)
// before a format's normalization.
type prepared struct {
	name, description string
	entry             *cacheEntry
}

// prepare reads the registry's tools, sorted by name. Decoding a schema
// never fails a tool: what cannot be read becomes an empty object schema,
// with a note.
func prepare(reg *mcpkit.Registry, opts Options, notes *[]Note) []prepared {
	tools := reg.List()
	out := make([]prepared, 0, len(tools))
	for _, t := range tools {
		p := prepared{name: t.Name, description: t.Description}
		if opts.ServerTag {
			if ref, ok := reg.Remote(t.Name); ok {
				p.description = "[" + ref.Server + "] " + p.description
			}
		}
		p.entry = decoded(t.Name, t.InputSchema, reg, notes)
		out = append(out, p)
	}
	return out
}

// convert builds one format's tools from the registry's tools, sorted by
// name: each tool's schema is normalized for prof, and build receives that
// schema (shared with the cache: a builder that keeps it must copy it) and
// returns the format's tool. The notes of every step are gathered.
func convert[T any](reg *mcpkit.Registry, o Options, prof *profile, build func(t prepared, schema map[string]any) T) ([]T, []Note) {
	var notes []Note
	tools := prepare(reg, o, &notes)
	out := make([]T, 0, len(tools))
	for _, t := range tools {
		schema, ns := t.normalized(prof)
		notes = append(notes, ns...)
		out = append(out, build(t, schema))
	}
	return out, notes
}

// openAIProfile is the normalization of the OpenAI formats.
func openAIProfile(o Options) *profile {
	if o.Strict {
		return profileStrict
	}
	return profileFull
}

// OpenAITools converts the registry's tools, sorted by name, to Chat
// Completions function tools. Every tool is converted; notes list what the
// conversion changed or lost.
func OpenAITools(reg *mcpkit.Registry, opts *Options) ([]openai.ChatCompletionToolUnionParam, []Note) {
	o := opts.orZero()
	return convert(reg, o, openAIProfile(o), func(t prepared, schema map[string]any) openai.ChatCompletionToolUnionParam {
		def := shared.FunctionDefinitionParam{Name: t.name, Parameters: shared.FunctionParameters(cloneValue(schema).(map[string]any))}
		if t.description != "" {
			def.Description = openai.String(t.description)
		}
		if o.Strict {
			def.Strict = openai.Bool(true)
		}
		return openai.ChatCompletionFunctionTool(def)
	})
}

// OpenAIResponsesTools converts the registry's tools, sorted by name, to
// Responses API function tools (strict is always sent: the API requires
// it).
func OpenAIResponsesTools(reg *mcpkit.Registry, opts *Options) ([]responses.ToolUnionParam, []Note) {
	o := opts.orZero()
	return convert(reg, o, openAIProfile(o), func(t prepared, schema map[string]any) responses.ToolUnionParam {
		u := responses.ToolParamOfFunction(t.name, cloneValue(schema).(map[string]any), o.Strict)
		if t.description != "" {
			u.OfFunction.Description = openai.String(t.description)
		}
		return u
	})
}

// AnthropicTools converts the registry's tools, sorted by name, to
// Messages API tools: the schema's properties and required go to
// input_schema's own fields, every other keyword to its extra fields.
func AnthropicTools(reg *mcpkit.Registry, opts *Options) ([]anthropic.ToolUnionParam, []Note) {
	return convert(reg, opts.orZero(), profileFull, func(t prepared, schema map[string]any) anthropic.ToolUnionParam {
		in := anthropic.ToolInputSchemaParam{}
		for k, v := range cloneValue(schema).(map[string]any) {
			switch k {
			case "type": // always "object" (flattenRoot)
			case "properties":
				in.Properties = v
			case "required":
				in.Required = stringList(v)
			default:
				if in.ExtraFields == nil {
					in.ExtraFields = map[string]any{}
				}
				in.ExtraFields[k] = v
			}
		}
		u := anthropic.ToolUnionParamOfTool(in, t.name)
		if t.description != "" {
			u.OfTool.Description = anthropic.String(t.description)
		}
		return u
	})
}

// GeminiTools converts the registry's tools, sorted by name, to one Gemini
// tool holding a function declaration for each. A name Gemini would
// refuse is declared as GeminiName makes it, and GeminiTool.Names maps it
// back (give it to Caller.Names).
func GeminiTools(reg *mcpkit.Registry, opts *Options) (GeminiTool, []Note) {
	var built []Note // notes of the build step, named per tool
	decls, notes := convert(reg, opts.orZero(), profileGemini, func(t prepared, schema map[string]any) GeminiFunctionDeclaration {
		d := GeminiFunctionDeclaration{Name: t.name, Description: t.description}
		// geminiSchema copies what it keeps.
		params := geminiSchema(schema, "", func(path, msg string) {
			built = append(built, Note{Tool: t.name, Path: path, Message: msg})
		})
		// Gemini refuses an OBJECT without properties: a tool without
		// parameters has none.
		if len(params.Properties) > 0 {
			d.Parameters = params
		}
		return d
	})
	names := make([]string, len(decls))
	for i, d := range decls {
		names[i] = d.Name
	}
	declared, back := geminiNames(names, &notes)
	for i := range decls {
		decls[i].Name = declared[i]
	}
	return GeminiTool{FunctionDeclarations: decls, Names: back}, append(notes, built...)
}

// Tools converts the registry's tools to format f and returns them as the
// value a host puts in its request's "tools" field: a slice of the SDK's
// tool type, or for Gemini a one-element []GeminiTool.
func Tools(reg *mcpkit.Registry, f Format, opts *Options) (any, []Note, error) {
	switch f {
	case FormatOpenAI:
		t, n := OpenAITools(reg, opts)
		return t, n, nil
	case FormatOpenAIResponses:
		t, n := OpenAIResponsesTools(reg, opts)
		return t, n, nil
	case FormatAnthropic:
		t, n := AnthropicTools(reg, opts)
		return t, n, nil
	case FormatGemini:
		t, n := GeminiTools(reg, opts)
		return []GeminiTool{t}, n, nil
	}
	_, err := ParseFormat(string(f))
	return nil, nil, err
}

// The decoded and normalized forms of each schema are kept while the
// schema lives: a Registry's schemas do not change once added
// (mcpkit.Tool), and marshaling a *jsonschema.Schema costs more than all
// the rest of a conversion. Callers get a copy of a normalized schema.
var (
	cacheMu sync.Mutex
	cache   = map[weak.Pointer[jsonschema.Schema]]*cacheEntry{}
)

// cacheEntry is one schema's decoded JSON (read-only) and its normalized
// forms; notes carry no tool name.
type cacheEntry struct {
	schema map[string]any
	notes  []Note
	norm   map[*profile]normalizedSchema // guarded by cacheMu
}

type normalizedSchema struct {
	schema map[string]any
	notes  []Note
}

// decoded returns the cache entry of tool's schema s (an empty schema for
// nil). The registry keeps the schema decoded and as JSON, which spares
// marshaling s (the costliest step by far) and decoding it again.
func decoded(tool string, s *jsonschema.Schema, reg *mcpkit.Registry, notes *[]Note) *cacheEntry {
	if s == nil {
		return &cacheEntry{schema: map[string]any{}}
	}
	key := weak.Make(s)
	cacheMu.Lock()
	c, ok := cache[key]
	cacheMu.Unlock()
	if !ok {
		c = &cacheEntry{}
		held, raw, m := reg.InputSchemaJSON(tool)
		var err error
		if held != s { // replaced since it was listed
			raw, m = nil, nil
		}
		if raw == nil && m == nil {
			raw, err = json.Marshal(s)
		}
		switch {
		case m != nil:
			c.schema = m // read-only, as c.schema is
		case err != nil:
			c.schema = map[string]any{}
			c.notes = []Note{{Message: "input schema does not marshal; replaced by an empty object schema: " + err.Error()}}
		default:
			c.schema = schemaMap(raw, "", &c.notes)
		}
		cacheMu.Lock()
		if old, raced := cache[key]; raced {
			c = old
		} else {
			cache[key] = c
			runtime.AddCleanup(s, func(k weak.Pointer[jsonschema.Schema]) {
				cacheMu.Lock()
				delete(cache, k)
				cacheMu.Unlock()
			}, key)
		}
		cacheMu.Unlock()
	}
	for _, n := range c.notes {
		n.Tool = tool
		*notes = append(*notes, n)
	}
	return c
}

// normalized returns the tool's schema normalized for prof (shared:
// callers copy it before handing it out) and the notes, named for the
// tool.
func (p prepared) normalized(prof *profile) (map[string]any, []Note) {
	cacheMu.Lock()
	ns, ok := p.entry.norm[prof]
	cacheMu.Unlock()
	if !ok {
		ns.schema, ns.notes = normalize("", p.entry.schema, prof)
		cacheMu.Lock()
		if p.entry.norm == nil {
			p.entry.norm = map[*profile]normalizedSchema{}
		}
		p.entry.norm[prof] = ns
		cacheMu.Unlock()
	}
	notes := make([]Note, len(ns.notes))
	for i, n := range ns.notes {
		n.Tool = p.name
		notes[i] = n
	}
	return ns.schema, notes
}
