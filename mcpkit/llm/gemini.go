package llm

import "slices"

// GeminiTool is a Gemini API tool carrying function declarations, in the
// JSON shape of the generateContent request ("tools": [{
// "functionDeclarations": [...]}]) and of google.golang.org/genai's Tool.
type GeminiTool struct {
	FunctionDeclarations []GeminiFunctionDeclaration `json:"functionDeclarations"`
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
// profileGemini (which keeps only the fields above).
func geminiSchema(s map[string]any) *GeminiSchema {
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
	if r := stringList(s["required"]); len(r) > 0 {
		g.Required = r
	}
	if it, ok := s["items"].(map[string]any); ok {
		g.Items = geminiSchema(it)
	}
	if props, ok := s["properties"].(map[string]any); ok {
		g.Properties = make(map[string]*GeminiSchema, len(props))
		for name, p := range props {
			if pm, ok := p.(map[string]any); ok {
				g.Properties[name] = geminiSchema(pm)
			}
		}
		for name := range g.Properties {
			g.PropertyOrdering = append(g.PropertyOrdering, name)
		}
		slices.Sort(g.PropertyOrdering)
	}
	if list, ok := s["anyOf"].([]any); ok {
		for _, b := range list {
			if bm, ok := b.(map[string]any); ok {
				g.AnyOf = append(g.AnyOf, geminiSchema(bm))
			}
		}
	}
	g.MinItems, g.MaxItems = intField(s, "minItems"), intField(s, "maxItems")
	g.MinProperties, g.MaxProperties = intField(s, "minProperties"), intField(s, "maxProperties")
	g.MinLength, g.MaxLength = intField(s, "minLength"), intField(s, "maxLength")
	g.Minimum, g.Maximum = floatField(s, "minimum"), floatField(s, "maximum")
	g.Default, g.Example = cloneValue(s["default"]), cloneValue(s["example"])
	return g
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
