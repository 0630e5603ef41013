package llm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// GeminiTool is a Gemini API tool carrying function declarations, in the
// JSON shape of the generateContent request ("tools": [{
// "functionDeclarations": [...]}]) and of google.golang.org/genai's Tool.
type GeminiTool struct {
	FunctionDeclarations []GeminiFunctionDeclaration `json:"functionDeclarations"`
	// Names maps each declared name that differs from the tool's own
	// (GeminiName) back to the registry's name. It is not sent; give it to
	// Caller.Names so that the model's calls reach the right tool.
	Names map[string]string `json:"-"`
}

// Original returns the registry's name of the function the model called
// by name (name itself when it was not changed).
func (t GeminiTool) Original(name string) string {
	if orig, ok := t.Names[name]; ok {
		return orig
	}
	return name
}

// geminiNameMax is the longest function name Gemini takes.
const geminiNameMax = 64

// validGeminiName reports whether name follows Gemini's rule for function
// names: 1 to 64 of a-z, A-Z, 0-9, underscores, dots, colons and dashes,
// starting with a letter or an underscore.
func validGeminiName(name string) bool {
	if name == "" || len(name) > geminiNameMax {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if i == 0 && !letter {
			return false
		}
		if !letter && !(c >= '0' && c <= '9') && c != '.' && c != ':' && c != '-' {
			return false
		}
	}
	return true
}

// GeminiName returns name as Gemini takes it: unchanged when it is valid;
// otherwise every other character becomes '_', a name that starts with
// neither a letter nor an underscore gets a leading '_', and a name
// longer than 64 is cut, with a hash of the whole name at its end so
// that names cut alike stay apart.
func GeminiName(name string) string {
	if validGeminiName(name) {
		return name
	}
	var b strings.Builder
	for i := 0; i < len(name); {
		c := name[i]
		if c < 0x80 {
			if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == ':' || c == '-' {
				b.WriteByte(c)
			} else {
				b.WriteByte('_')
			}
			i++
			continue
		}
		// A multi-byte character becomes one '_'.
		b.WriteByte('_')
		i++
		for i < len(name) && name[i]&0xC0 == 0x80 {
			i++
		}
	}
	out := b.String()
	if out == "" || !(out[0] >= 'a' && out[0] <= 'z' || out[0] >= 'A' && out[0] <= 'Z' || out[0] == '_') {
		out = "_" + out
	}
	if len(out) > geminiNameMax {
		sum := sha256.Sum256([]byte(name))
		tag := hex.EncodeToString(sum[:4])
		out = out[:geminiNameMax-len(tag)-1] + "_" + tag
	}
	return out
}

// geminiNames gives each tool a Gemini name, distinct from the others',
// and returns the names that differ from the tools' own, mapped back.
func geminiNames(names []string, notes *[]Note) (declared []string, back map[string]string) {
	taken := make(map[string]bool, len(names))
	for _, n := range names {
		if validGeminiName(n) {
			taken[n] = true
		}
	}
	declared = make([]string, len(names))
	for i, n := range names {
		if validGeminiName(n) {
			declared[i] = n
			continue
		}
		g := GeminiName(n)
		for k := 2; taken[g]; k++ {
			suffix := fmt.Sprintf("_%d", k)
			base := GeminiName(n)
			if len(base)+len(suffix) > geminiNameMax {
				base = base[:geminiNameMax-len(suffix)]
			}
			g = base + suffix
		}
		taken[g] = true
		declared[i] = g
		if back == nil {
			back = map[string]string{}
		}
		back[g] = n
		*notes = append(*notes, Note{Tool: n, Message: fmt.Sprintf("name does not follow Gemini's rule (letters, digits, _ . : -, starting with a letter or _, at most 64); declared as %q (GeminiTool.Names maps it back)", g)})
	}
	return declared, back
}

// GeminiFunctionDeclaration is one function a Gemini model may call.
// Parameters is nil for a function without parameters.
type GeminiFunctionDeclaration struct {
	Name        string        `json:"name"`
	Description string        `json:"description,omitempty"`
	Parameters  *GeminiSchema `json:"parameters,omitempty"`
}

// GeminiSchema is Gemini's Schema object: the OpenAPI 3.0 subset the API
// takes, field for field (type names upper case, "nullable" instead of
// type lists, no $ref, no additionalProperties).
type GeminiSchema struct {
	Type             string                   `json:"type,omitempty"`
	Format           string                   `json:"format,omitempty"`
	Title            string                   `json:"title,omitempty"`
	Description      string                   `json:"description,omitempty"`
	Nullable         *bool                    `json:"nullable,omitempty"`
	Enum             []string                 `json:"enum,omitempty"`
	Items            *GeminiSchema            `json:"items,omitempty"`
	MinItems         *int64                   `json:"minItems,omitempty"`
	MaxItems         *int64                   `json:"maxItems,omitempty"`
	Properties       map[string]*GeminiSchema `json:"properties,omitempty"`
	PropertyOrdering []string                 `json:"propertyOrdering,omitempty"`
	Required         []string                 `json:"required,omitempty"`
	MinProperties    *int64                   `json:"minProperties,omitempty"`
	MaxProperties    *int64                   `json:"maxProperties,omitempty"`
	MinLength        *int64                   `json:"minLength,omitempty"`
	MaxLength        *int64                   `json:"maxLength,omitempty"`
	Pattern          string                   `json:"pattern,omitempty"`
	Minimum          *float64                 `json:"minimum,omitempty"`
	Maximum          *float64                 `json:"maximum,omitempty"`
	AnyOf            []*GeminiSchema          `json:"anyOf,omitempty"`
	Default          any                      `json:"default,omitempty"`
	Example          any                      `json:"example,omitempty"`
}

// geminiSchema builds a GeminiSchema from a schema normalized with
// profileGemini (which keeps only the fields above). Gemini refuses an
// OBJECT without properties ("should be non-empty for OBJECT type") and
// an ARRAY without items ("items: missing field"): a property that is such
// a free-form object (or an array of them) is left out, and so is an anyOf
// branch that is one; an array without items becomes an array of
// strings. Each change is noted through add.
func geminiSchema(s map[string]any, path string, add func(path, msg string)) *GeminiSchema {
	g := &GeminiSchema{}
	g.Type, _ = s["type"].(string)
	g.Format, _ = s["format"].(string)
	g.Title, _ = s["title"].(string)
	g.Description, _ = s["description"].(string)
	g.Pattern, _ = s["pattern"].(string)
	if b, ok := s["nullable"].(bool); ok && b {
		g.Nullable = &b
	}
	if e, ok := s["enum"].([]any); ok {
		g.Enum = stringList(e)
	}
	required := stringList(s["required"])
	if it, ok := s["items"].(map[string]any); ok {
		g.Items = geminiSchema(it, path+"/items", add)
	} else if g.Type == "ARRAY" {
		// Gemini refuses an ARRAY without items ("items: missing field").
		g.Items = &GeminiSchema{Type: "STRING"}
		add(path, "an array without items is not a schema Gemini takes; declared as an array of strings")
	}
	if props, ok := s["properties"].(map[string]any); ok {
		g.Properties = make(map[string]*GeminiSchema, len(props))
		for name, p := range props {
			pm, ok := p.(map[string]any)
			if !ok {
				continue
			}
			if freeForm(pm) {
				add(path+"/properties/"+name, "an object without properties (or an array of them) is not a schema Gemini takes; the property is left out, so the model cannot send it")
				required = slices.DeleteFunc(required, func(r string) bool { return r == name })
				continue
			}
			g.Properties[name] = geminiSchema(pm, path+"/properties/"+name, add)
		}
		for name := range g.Properties {
			g.PropertyOrdering = append(g.PropertyOrdering, name)
		}
		slices.Sort(g.PropertyOrdering)
	}
	if len(required) > 0 {
		g.Required = required
	}
	if list, ok := s["anyOf"].([]any); ok {
		for i, b := range list {
			bm, ok := b.(map[string]any)
			if !ok {
				continue
			}
			if freeForm(bm) {
				add(fmt.Sprintf("%s/anyOf/%d", path, i), "an object without properties is not a schema Gemini takes; the branch is left out")
				continue
			}
			g.AnyOf = append(g.AnyOf, geminiSchema(bm, fmt.Sprintf("%s/anyOf/%d", path, i), add))
		}
	}
	if g.Type == "" && len(g.AnyOf) == 0 && path != "" {
		// Gemini's schema needs a type: a value of any type is offered as
		// the scalar types (a free-form object or array it cannot take).
		g.AnyOf = []*GeminiSchema{{Type: "STRING"}, {Type: "NUMBER"}, {Type: "BOOLEAN"}}
		add(path, "a schema without a type is not one Gemini takes; declared as a string, number or boolean")
	}
	g.MinItems, g.MaxItems = intField(s, "minItems"), intField(s, "maxItems")
	g.MinProperties, g.MaxProperties = intField(s, "minProperties"), intField(s, "maxProperties")
	g.MinLength, g.MaxLength = intField(s, "minLength"), intField(s, "maxLength")
	g.Minimum, g.Maximum = floatField(s, "minimum"), floatField(s, "maximum")
	g.Default, g.Example = cloneValue(s["default"]), cloneValue(s["example"])
	return g
}

// freeForm reports whether a (normalized) schema is an OBJECT without
// properties, or an ARRAY of those.
func freeForm(s map[string]any) bool {
	switch s["type"] {
	case "OBJECT":
		props, _ := s["properties"].(map[string]any)
		return len(props) == 0
	case "ARRAY":
		it, ok := s["items"].(map[string]any)
		return ok && freeForm(it)
	}
	return false
}

func intField(s map[string]any, k string) *int64 {
	f, ok := s[k].(float64)
	if !ok {
		return nil
	}
	i := int64(f)
	return &i
}

func floatField(s map[string]any, k string) *float64 {
	f, ok := s[k].(float64)
	if !ok {
		return nil
	}
	return &f
}
