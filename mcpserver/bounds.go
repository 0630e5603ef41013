package mcpserver

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	wf "github.com/worldforge-go/worldforge"
)

// listBound is one list-valued argument of a tool's input schema with its
// maxItems, and the maxLength of its items when they are strings.
type listBound struct {
	path       []string // property names from the top, e.g. request, tags
	field      string   // the path as errors name it: request.tags
	maxItems   int
	maxItemLen int // -1: none
}

// listBounds are a tool's bounded lists, checked before the validator so
// that a list over its bound gets the exact error REST gives
// (wf.TooManyItems, wf.TooLong for an item), whatever else is wrong.
type listBounds []listBound

// collectListBounds finds the properties of s, at any depth of nested
// objects, that are lists with a maxItems. Lists inside list items are not
// looked into (no tool has one).
func collectListBounds(s *jsonschema.Schema) listBounds {
	var out listBounds
	var walk func(path []string, s *jsonschema.Schema)
	walk = func(path []string, s *jsonschema.Schema) {
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
			p := s.Properties[name]
			at := append(slices.Clone(path), name)
			if p.MaxItems != nil {
				b := listBound{path: at, field: strings.Join(at, "."), maxItems: *p.MaxItems, maxItemLen: -1}
				if p.Items != nil && p.Items.MaxLength != nil {
					b.maxItemLen = *p.Items.MaxLength
				}
				out = append(out, b)
				continue
			}
			walk(at, p)
		}
	}
	walk(nil, s)
	return out
}

// check returns the error of the first list in args over its bound, or of
// the first string item over its length; nil when every bounded list is
// within its bounds or is not a list at all (the validator words that).
func (bs listBounds) check(args map[string]any) error {
	for _, b := range bs {
		list, ok := lookup(args, b.path).([]any)
		if !ok {
			continue
		}
		if err := wf.CheckItems(b.field, len(list), b.maxItems); err != nil {
			return err
		}
		if b.maxItemLen < 0 {
			continue
		}
		for i, v := range list {
			if s, ok := v.(string); ok {
				if err := wf.CheckLength(b.field+"["+strconv.Itoa(i)+"]", s, b.maxItemLen); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// lookup follows path through nested objects; nil when it leads nowhere.
func lookup(v any, path []string) any {
	for _, name := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[name]
	}
	return v
}
