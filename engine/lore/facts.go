package lore

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// FactsVersion numbers the rules by which Analyze works out an entity's
// facts: the schemas, the validation and the reference graph. A store that
// keeps facts keeps this number with them, and analyses again every entity
// analysed under another one (say after a schema change), so that facts
// never describe an entity by rules it was not checked against.
const FactsVersion = 1

// Facts is what the integrity checks need to know of one stored entity,
// worked out once when it is written, so that a world's issues can be found
// without reading (or validating) its documents again: Issues is a function
// of the facts of a world's entities alone. A store keeps them in indexed
// columns and a table of references, and finds the issues with joins.
type Facts struct {
	// Invalid says why the entity is not valid, "" when it is: the detail
	// of its invalid_entity issue. An invalid entity has no references or
	// years.
	Invalid string
	// NameKey is the entity's name folded: two names of one collection are
	// duplicates exactly when their keys are equal. "" for no name.
	NameKey string
	// Refs are the references of a valid entity, in field order, then in
	// position order within a list field.
	Refs []RefFact
	// EraID and Year are an event's eraId and year; StartYear and EndYear
	// an era's bounds. Nil when absent, or when the entity is not an event
	// (an era) or not valid.
	EraID              string
	Year               *int64
	StartYear, EndYear *int64
}

// RefFact is one reference held by an entity: field Field, position Pos in
// the field's list (0 for a single id), pointing at To.
type RefFact struct {
	Field string
	Pos   int
	To    Ref
}

// Analyze works out the facts of a stored entity: its collection, its
// stored id and name, and its JSON. It validates the JSON as Issues does
// (an unknown collection, a document that does not validate or whose id or
// name differs from the stored ones is Invalid).
func Analyze(collection, id, name string, raw json.RawMessage) Facts {
	e := Entity{Collection: collection, ID: id, Name: name, JSON: raw}
	r := parseRecord(&e)
	return factsOf(&r)
}

func factsOf(r *record) Facts {
	var f Facts
	if r.e.Name != "" {
		f.NameKey = foldKey(r.e.Name)
	}
	switch {
	case r.c == nil:
		f.Invalid = unknownCollectionDetail(r.e.Collection)
		return f
	case r.m == nil:
		f.Invalid = r.bad
		return f
	}
	for _, fl := range r.c.fields {
		if !fl.isRef() {
			continue
		}
		forEachRef(r.m[fl.name], fl, func(pos int, to Ref) {
			f.Refs = append(f.Refs, RefFact{Field: fl.name, Pos: pos, To: to})
		})
	}
	switch r.c.name {
	case "eras":
		if y, ok := yearOf(r.m, "startYear"); ok {
			f.StartYear = &y
		}
		if y, ok := yearOf(r.m, "endYear"); ok {
			f.EndYear = &y
		}
	case "events":
		if y, ok := yearOf(r.m, "year"); ok {
			f.Year = &y
		}
		f.EraID, _ = r.m["eraId"].(string)
	}
	return f
}

func unknownCollectionDetail(name string) string {
	return fmt.Sprintf("unknown lore collection %q", name)
}

// The issue of each kind, as Issues reports it. A store that finds issues
// from facts builds them with these, so that both say the same.

// InvalidEntityIssue is the invalid_entity issue of an entity whose facts
// say Invalid: reason.
func InvalidEntityIssue(collection, id, reason string) Issue {
	return Issue{Collection: collection, ID: id, Kind: KindInvalidEntity, Detail: reason}
}

// DuplicateNameIssue is the duplicate_name issue of an entity named name
// whose folded name is also held by firstID, the smallest id of its
// collection with that folded name.
func DuplicateNameIssue(collection, id, name, firstID string) Issue {
	return Issue{Collection: collection, ID: id, Kind: KindDuplicateName, Field: "name",
		Detail: fmt.Sprintf("name %q is also used by %s/%s", name, collection, firstID),
		Ref:    &Ref{collection, firstID}}
}

// SelfReferenceIssue is the self_reference issue of a reference in field
// that names the entity itself.
func SelfReferenceIssue(collection, id, field string) Issue {
	return Issue{Collection: collection, ID: id, Kind: KindSelfReference, Field: field,
		Detail: fmt.Sprintf("%s refers to the entity itself", field), Ref: &Ref{collection, id}}
}

// DanglingReferenceIssue is the dangling_reference issue of a reference
// in field to an entity that does not exist.
func DanglingReferenceIssue(collection, id, field string, to Ref) Issue {
	return Issue{Collection: collection, ID: id, Kind: KindDanglingReference, Field: field,
		Detail: fmt.Sprintf("no %s entity with id %q", to.Collection, to.ID), Ref: &to}
}

// EraOrderIssue is the era_order issue of an era that starts after it ends.
func EraOrderIssue(collection, id string, start, end int64) Issue {
	return Issue{Collection: collection, ID: id, Kind: KindEraOrder, Field: "startYear",
		Detail: fmt.Sprintf("startYear %d is after endYear %d", start, end)}
}

// EventOutsideEraIssue is the event_outside_era issue of an event of year
// in era eraID, whose bounds (nil: open) it is outside.
func EventOutsideEraIssue(collection, id string, year int64, eraID string, start, end *int64) Issue {
	var s, e int64
	if start != nil {
		s = *start
	}
	if end != nil {
		e = *end
	}
	return Issue{Collection: collection, ID: id, Kind: KindEventOutsideEra, Field: "year",
		Detail: fmt.Sprintf("year %d is outside era %s (%s)", year, eraID, span(s, start != nil, e, end != nil)),
		Ref:    &Ref{"eras", eraID}}
}

// Placed is an issue with the position of its reference within its field
// (0 for issues that are not about a list item), the sort key Issue does
// not carry.
type Placed struct {
	Issue
	Pos int
}

// ComparePlaced orders issues as Issues returns them: by collection
// (canonical order, unknown collections last by name), id, field, position
// within the field, kind and detail; strings compare bytewise.
func ComparePlaced(a, b Placed) int {
	return cmp.Or(
		cmp.Compare(rankOfName(a.Collection), rankOfName(b.Collection)),
		strings.Compare(a.Collection, b.Collection),
		strings.Compare(a.ID, b.ID),
		strings.Compare(a.Field, b.Field),
		cmp.Compare(a.Pos, b.Pos),
		strings.Compare(a.Kind, b.Kind),
		strings.Compare(a.Detail, b.Detail),
	)
}

// SortPlaced sorts issues with ComparePlaced.
func SortPlaced(list []Placed) { slices.SortFunc(list, ComparePlaced) }

// CollectionRank is the position of collection in the canonical order, or
// 17 (after every collection) for an unknown one.
func CollectionRank(collection string) int { return rankOfName(collection) }

func rankOfName(name string) int { return rankOf(byName[name]) }
