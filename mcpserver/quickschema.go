package mcpserver

import (
	"encoding/json"
	"math"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// quickSchema checks arguments against a tool input schema made only of
// what it understands exactly — an object of named properties, each of
// one or more of the types string, integer, boolean and null, with string
// lengths, integer bounds or a list of strings allowed, some properties
// required, others refused or not — without the general validator, which
// costs more than the rest of a small read (measured: 6 % of a server's
// CPU under read_world load, for an object with one string).
//
// It only ever accepts: arguments it does not accept go to the general
// validator, which decides and words the error. So it can be wrong only
// by accepting what the validator would refuse; it accepts only values
// whose JSON type it tells the way jsonschema-go does (an integer is a
// number without a fraction, as in its jsonType) and checks each keyword
// as jsonschema-go's validate does (lengths in code points, inclusive
// bounds). Schemas with any other keyword (pattern, exclusive bounds,
// nesting, …) get no quickSchema: compileQuick returns nil.
// TestQuickSchemaAgreesWithValidator and FuzzToolArguments hold it to
// that.
type quickSchema struct {
	props    map[string]*quickProp
	required []string
	closed   bool // additionalProperties: false
}

// quickProp is one property's schema.
type quickProp struct {
	types          quickTypes
	minLen, maxLen int // -1: none
	min, max       float64
	hasMin, hasMax bool
	enum           map[string]bool // nil: none
}

// quickTypes is a set of JSON types.
type quickTypes uint8

const (
	qString quickTypes = 1 << iota
	qInteger
	qBoolean
	qNull
)

var quickTypeNames = map[string]quickTypes{"string": qString, "integer": qInteger, "boolean": qBoolean, "null": qNull}

// Keywords that do not constrain a value (annotations; the validator does
// not apply defaults), at either level.
var quickAnnotations = map[string]bool{"description": true, "title": true, "default": true}

// compileQuick returns the quickSchema of s, or nil when s uses anything
// it does not understand. It reads s as JSON, so every keyword s has is
// seen, whatever the Go type spells it.
func compileQuick(s *jsonschema.Schema) *quickSchema {
	b, err := json.Marshal(s)
	if err != nil {
		return nil
	}
	var top map[string]any
	if json.Unmarshal(b, &top) != nil {
		return nil
	}
	q := &quickSchema{props: map[string]*quickProp{}}
	for k, v := range top {
		switch {
		case quickAnnotations[k]:
		case k == "type":
			if v != "object" {
				return nil
			}
		case k == "properties":
			props, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			for name, ps := range props {
				p := quickProperty(ps)
				if p == nil {
					return nil
				}
				q.props[name] = p
			}
		case k == "required":
			req, ok := v.([]any)
			if !ok {
				return nil
			}
			for _, r := range req {
				name, ok := r.(string)
				if !ok {
					return nil
				}
				q.required = append(q.required, name)
			}
		case k == "additionalProperties":
			if v != false {
				return nil
			}
			q.closed = true
		default:
			return nil
		}
	}
	if top["type"] != "object" {
		return nil
	}
	return q
}

// quickProperty reads a property's schema, or returns nil when it has a
// keyword quickProp does not model.
func quickProperty(v any) *quickProp {
	ps, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	p := &quickProp{minLen: -1, maxLen: -1}
	for k, v := range ps {
		switch {
		case quickAnnotations[k]:
		case k == "type":
			switch v := v.(type) {
			case string:
				if p.types = quickTypeNames[v]; p.types == 0 {
					return nil
				}
			case []any:
				for _, n := range v {
					name, _ := n.(string)
					t := quickTypeNames[name]
					if t == 0 {
						return nil
					}
					p.types |= t
				}
			default:
				return nil
			}
		case k == "minLength" || k == "maxLength":
			n, ok := v.(float64)
			if !ok || n < 0 || n != math.Trunc(n) || n > math.MaxInt32 {
				return nil
			}
			if k == "minLength" {
				p.minLen = int(n)
			} else {
				p.maxLen = int(n)
			}
		case k == "minimum" || k == "maximum":
			n, ok := v.(float64)
			if !ok {
				return nil
			}
			if k == "minimum" {
				p.min, p.hasMin = n, true
			} else {
				p.max, p.hasMax = n, true
			}
		case k == "enum":
			list, ok := v.([]any)
			if !ok {
				return nil
			}
			p.enum = map[string]bool{}
			for _, e := range list {
				s, ok := e.(string)
				if !ok {
					return nil
				}
				p.enum[s] = true
			}
		default:
			return nil
		}
	}
	if p.types == 0 {
		return nil
	}
	return p
}

// accepts reports whether args (decoded by encoding/json) certainly
// satisfy the schema. false means "ask the validator", not "invalid".
func (q *quickSchema) accepts(args map[string]any) bool {
	for k, v := range args {
		p, ok := q.props[k]
		if !ok {
			if q.closed {
				return false
			}
			continue
		}
		if !p.accepts(v) {
			return false
		}
	}
	for _, r := range q.required {
		if _, ok := args[r]; !ok {
			return false
		}
	}
	return true
}

func (p *quickProp) accepts(v any) bool {
	if p.enum != nil {
		s, ok := v.(string)
		if !ok || !p.enum[s] {
			return false
		}
	}
	switch v := v.(type) {
	case string:
		if p.types&qString == 0 {
			return false
		}
		if p.minLen >= 0 || p.maxLen >= 0 {
			n := utf8.RuneCountInString(v)
			if n < p.minLen || p.maxLen >= 0 && n > p.maxLen {
				return false
			}
		}
		return true
	case bool:
		return p.types&qBoolean != 0
	case nil:
		return p.types&qNull != 0
	case float64:
		if _, frac := math.Modf(v); p.types&qInteger == 0 || frac != 0 {
			return false
		}
		return (!p.hasMin || v >= p.min) && (!p.hasMax || v <= p.max)
	}
	return false
}
