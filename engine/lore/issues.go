package lore

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Issue kinds. Issues are reported, never enforced: a GM may keep a world
// with dangling references while writing it.
const (
	// KindDanglingReference: a reference names an id that does not exist in
	// its target collection. Field is the referring field, Ref the target.
	KindDanglingReference = "dangling_reference"
	// KindSelfReference: an entity refers to itself (an ally of itself, its
	// own parent, a rumour about itself). Field is the referring field.
	KindSelfReference = "self_reference"
	// KindDuplicateName: two entities of one collection share a name,
	// compared case-insensitively (Unicode simple folding). Reported on each
	// entity but the one with the smallest id, which Ref names.
	KindDuplicateName = "duplicate_name"
	// KindDuplicateID: the same (collection, id) appears more than once in
	// the input. A store never produces this; reported once per id.
	KindDuplicateID = "duplicate_id"
	// KindEraOrder: an era whose startYear is after its endYear.
	KindEraOrder = "era_order"
	// KindEventOutsideEra: an event whose year falls outside the years of
	// its era (bounds inclusive; an absent bound is open). Ref is the era.
	KindEventOutsideEra = "event_outside_era"
	// KindInvalidEntity: an entity that does not validate (any more), has an
	// unknown collection, or whose stored id or name differs from its JSON.
	// Its references are not checked.
	KindInvalidEntity = "invalid_entity"
)

// Ref names one entity. It is also the shape of the {"collection","id"}
// references in entries.related, rumours.subjects and events.participants.
type Ref struct {
	Collection string `json:"collection"`
	ID         string `json:"id"`
}

// Issue is one integrity problem of a world's lore.
type Issue struct {
	Collection string `json:"collection"`
	ID         string `json:"id"`
	Kind       string `json:"kind"`
	Field      string `json:"field,omitempty"`
	Detail     string `json:"detail"`
	Ref        *Ref   `json:"ref,omitempty"`
}

// record is an entity as Issues sees it.
type record struct {
	e   *Entity
	c   *collection    // nil: unknown collection
	m   map[string]any // nil: invalid
	bad string         // why it is invalid
}

type entityKey struct {
	c  *collection
	id string
}

// parallelMin is the number of entities from which Issues validates on
// several goroutines.
const parallelMin = 2048

// Issues checks the integrity of a world's lore and returns every issue
// found (an empty, non-nil slice if none), sorted by collection (canonical order; unknown collections last, by
// name), id, field, position within the field, kind and detail. The order
// does not depend on the order of entities.
//
// Each entity is validated again (stored JSON may predate a schema change),
// then references, names and years are checked with hash maps: the cost is
// linear in the size of the lore plus the sort of the issues. Validation runs
// on up to GOMAXPROCS goroutines for large inputs.
func Issues(entities []Entity) []Issue {
	recs := make([]record, len(entities))
	parse := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			recs[i] = parseRecord(&entities[i])
		}
	}
	if workers := min(runtime.GOMAXPROCS(0), len(entities)/parallelMin); workers > 1 {
		var wg sync.WaitGroup
		step := (len(entities) + workers - 1) / workers
		for lo := 0; lo < len(entities); lo += step {
			wg.Go(func() { parse(lo, min(lo+step, len(entities))) })
		}
		wg.Wait()
	} else {
		parse(0, len(entities))
	}

	var out []Placed
	add := func(pos int, is Issue) { out = append(out, Placed{Issue: is, Pos: pos}) }

	// Index ids and names.
	seen := make(map[entityKey]int, len(recs))
	type nameKey struct {
		c    *collection
		name string
	}
	firstByName := make(map[nameKey]string, len(recs))
	for i := range recs {
		r := &recs[i]
		if r.c == nil {
			continue
		}
		seen[entityKey{r.c, r.e.ID}]++
		if r.e.Name == "" {
			continue
		}
		k := nameKey{r.c, foldKey(r.e.Name)}
		if id, ok := firstByName[k]; !ok || r.e.ID < id {
			firstByName[k] = r.e.ID
		}
	}

	// Valid eras by id. An era id held twice (a duplicate_id) is ambiguous:
	// events in it are not checked, whatever the order of the input.
	eras := make(map[string]*record)
	for i := range recs {
		r := &recs[i]
		if r.c != nil && r.c.name == "eras" && r.m != nil {
			if seen[entityKey{r.c, r.e.ID}] > 1 {
				continue
			}
			eras[r.e.ID] = r
		}
	}

	for i := range recs {
		r := &recs[i]
		coll, id := r.e.Collection, r.e.ID
		if r.c == nil {
			add(0, InvalidEntityIssue(coll, id, unknownCollectionDetail(coll)))
			continue
		}
		k := entityKey{r.c, r.e.ID}
		if n := seen[k]; n > 1 {
			add(0, Issue{Collection: coll, ID: id, Kind: KindDuplicateID, Field: "id", Detail: fmt.Sprintf("id appears %d times", n)})
			seen[k] = -n // report once
		}
		if r.e.Name != "" {
			if first := firstByName[nameKey{r.c, foldKey(r.e.Name)}]; first != r.e.ID {
				add(0, DuplicateNameIssue(coll, id, r.e.Name, first))
			}
		}
		if r.m == nil {
			add(0, InvalidEntityIssue(coll, id, r.bad))
			continue
		}
		for _, f := range r.c.fields {
			if !f.isRef() {
				continue
			}
			forEachRef(r.m[f.name], f, func(pos int, to Ref) {
				tc := byName[to.Collection]
				switch {
				case tc == r.c && to.ID == r.e.ID:
					add(pos, SelfReferenceIssue(coll, id, f.name))
				case seen[entityKey{tc, to.ID}] == 0:
					add(pos, DanglingReferenceIssue(coll, id, f.name, to))
				}
			})
		}
		switch r.c.name {
		case "eras":
			start, hasStart := yearOf(r.m, "startYear")
			end, hasEnd := yearOf(r.m, "endYear")
			if hasStart && hasEnd && start > end {
				add(0, EraOrderIssue(coll, id, start, end))
			}
		case "events":
			y, ok := yearOf(r.m, "year")
			eraID, _ := r.m["eraId"].(string)
			era := eras[eraID]
			if !ok || era == nil {
				break
			}
			start, hasStart := yearOf(era.m, "startYear")
			end, hasEnd := yearOf(era.m, "endYear")
			if hasStart && y < start || hasEnd && y > end {
				var sp, ep *int64
				if hasStart {
					sp = &start
				}
				if hasEnd {
					ep = &end
				}
				add(0, EventOutsideEraIssue(coll, id, y, eraID, sp, ep))
			}
		}
	}

	SortPlaced(out)
	issues := make([]Issue, len(out)) // never nil: "issues": [] in JSON
	for i, s := range out {
		issues[i] = s.Issue
	}
	return issues
}

func rankOf(c *collection) int {
	if c == nil {
		return len(collections)
	}
	return c.index
}

func parseRecord(e *Entity) record {
	r := record{e: e, c: byName[e.Collection]}
	if r.c == nil {
		return r
	}
	m, _, msg := r.c.check(e.JSON)
	switch {
	case msg != "":
		r.bad = msg
	case m["id"] != e.ID:
		r.bad = fmt.Sprintf("stored id %q differs from the id %q in its JSON", e.ID, m["id"])
	case m["name"] != e.Name:
		r.bad = fmt.Sprintf("stored name %q differs from the name %q in its JSON", e.Name, m["name"])
	default:
		r.m = m
	}
	return r
}

// forEachRef calls fn for each reference held by v, a validated value of
// the reference field f, with its position in the list (0 for a single id).
func forEachRef(v any, f field, fn func(pos int, to Ref)) {
	switch f.kind {
	case kRef:
		if id, ok := v.(string); ok {
			fn(0, Ref{f.target, id})
		}
	case kRefs:
		a, _ := v.([]any)
		for i, x := range a {
			fn(i, Ref{f.target, x.(string)})
		}
	case kAnyRefs:
		a, _ := v.([]any)
		for i, x := range a {
			o := x.(map[string]any)
			fn(i, Ref{o["collection"].(string), o["id"].(string)})
		}
	}
}

func yearOf(m map[string]any, k string) (int64, bool) {
	f, ok := m[k].(float64)
	if !ok || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return int64(f), true
}

func span(start int64, hasStart bool, end int64, hasEnd bool) string {
	switch {
	case hasStart && hasEnd:
		return fmt.Sprintf("%d to %d", start, end)
	case hasStart:
		return fmt.Sprintf("from %d", start)
	default:
		return fmt.Sprintf("until %d", end)
	}
}

// foldKey maps s to a key equal for exactly the strings that
// strings.EqualFold treats as equal: each rune becomes the smallest rune of
// its simple case-folding orbit.
func foldKey(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToUpper(s) // 'A' < 'a', and no other rune folds to an ASCII letter but K/S, whose orbit minima are ASCII
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		b.WriteRune(m)
	}
	return b.String()
}

// Counts returns the number of entities in each of the 17 collections; every
// collection has a key. Entities of unknown collections are not counted.
func Counts(entities []Entity) map[string]int {
	counts := make(map[string]int, len(collections))
	for _, c := range collections {
		counts[c.name] = 0
	}
	for _, e := range entities {
		if _, ok := counts[e.Collection]; ok {
			counts[e.Collection]++
		}
	}
	return counts
}
