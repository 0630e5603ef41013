package lore

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	wf "github.com/worldforge-go/worldforge"
)

// SlugPattern is the pattern of every entity id and of every reference to one.
const SlugPattern = `^[a-z0-9][a-z0-9_-]{0,63}$`

// Limits of the schemas.
const (
	MaxNameLen    = 200   // name: 1–200 characters, at least one non-space
	MaxSummaryLen = 2000  // summary
	MaxNotesLen   = 20000 // notes
	MaxTagLen     = 50    // one tag: 1–50 characters
	MaxTags       = 32    // tags per entity
	MaxRefs       = 64    // ids or {collection,id} refs in one list field
	MinYear       = -1_000_000_000
	MaxYear       = 1_000_000_000
	MaxPopulation = 1_000_000_000

	// MaxEntityBytes bounds the raw JSON of one entity. It leaves room for
	// the longest notes written entirely in escaped characters.
	MaxEntityBytes = 256 << 10
)

// namePattern asks for at least one non-space character.
const namePattern = `\S`

// referencesKeyword is the schema extension keyword naming the collection
// that a reference field points into, for agents reading the schema.
const referencesKeyword = "x-references"

type kind int

const (
	kID      kind = iota // the entity's own id (slug)
	kText                // string, minLen..maxLen
	kInt                 // integer, lo..hi
	kBool                // boolean
	kEnum                // one of enum
	kRef                 // id of an entity in target
	kRefs                // unique ids of entities in target, ≤ maxItems
	kTexts               // unique strings of 1..maxLen, ≤ maxItems
	kEnums               // unique values of enum, ≤ len(enum)
	kAnyRefs             // unique {"collection","id"} refs, ≤ maxItems
)

// field describes one property of a collection. The schemas, the error
// messages' field order, the canonical key order of stored entities, the
// reference graph that Issues walks and the table in the package doc are all
// derived from these descriptors.
type field struct {
	name     string
	kind     kind
	minLen   int
	maxLen   int
	maxItems int
	lo, hi   float64
	enum     []string
	target   string
	required bool
	desc     string
}

func idField() field {
	return field{name: "id", kind: kID, required: true, desc: "Unique id of the entity within its collection (slug)."}
}

func text(name string, maxLen int, desc string) field {
	return field{name: name, kind: kText, maxLen: maxLen, desc: desc}
}

func integer(name string, lo, hi float64, desc string) field {
	return field{name: name, kind: kInt, lo: lo, hi: hi, desc: desc}
}

func year(name, desc string) field { return integer(name, MinYear, MaxYear, desc) }

func boolean(name, desc string) field { return field{name: name, kind: kBool, desc: desc} }

func enum(name string, values []string, desc string) field {
	return field{name: name, kind: kEnum, enum: values, desc: desc}
}

func enums(name string, values []string, desc string) field {
	return field{name: name, kind: kEnums, enum: values, maxItems: len(values), desc: desc}
}

func ref(name, target, desc string) field {
	return field{name: name, kind: kRef, target: target, desc: desc}
}

func refs(name, target string, maxItems int, desc string) field {
	return field{name: name, kind: kRefs, target: target, maxItems: maxItems, desc: desc}
}

func texts(name string, maxLen, maxItems int, desc string) field {
	return field{name: name, kind: kTexts, minLen: 1, maxLen: maxLen, maxItems: maxItems, desc: desc}
}

func anyRefs(name, desc string) field {
	return field{name: name, kind: kAnyRefs, maxItems: MaxRefs, desc: desc}
}

// isRef reports whether values of f point at other entities.
func (f field) isRef() bool { return f.kind == kRef || f.kind == kRefs || f.kind == kAnyRefs }

// spec is one collection: its description and its own fields, which sit
// between the common head (id, name, summary) and tail (tags, notes).
type spec struct {
	name   string
	desc   string
	fields []field
}

var (
	sourceValues     = []string{"arcane", "divine", "primal", "occult", "psionic", "other"}
	componentValues  = []string{"verbal", "somatic", "material"}
	rarityValues     = []string{"common", "uncommon", "rare", "very-rare", "legendary", "artifact"}
	truthValues      = []string{"true", "false", "partial", "unknown"}
	collectionValues = wf.LoreCollections
)

// specs lists the collections in the order of wf.LoreCollections.
var specs = []spec{
	{"pantheons", "A family or court of gods worshipped together.", []field{
		ref("headDeityId", "deities", "The deity who rules the pantheon."),
		text("realm", 200, "Where the gods of the pantheon dwell."),
	}},
	{"deities", "A god, demigod, saint or great spirit.", []field{
		ref("pantheonId", "pantheons", "The pantheon the deity belongs to."),
		refs("parentIds", "deities", 16, "The deity's divine parents."),
		texts("domains", 50, 16, "Domains or portfolios, such as war or the sea."),
		text("alignment", 50, "Alignment or moral outlook."),
		text("symbol", 200, "Holy symbol."),
		text("rank", 50, "Standing, such as greater, lesser, demigod or saint."),
	}},
	{"faiths", "An organised religion or cult and its teachings.", []field{
		refs("deityIds", "deities", MaxRefs, "Deities the faith worships."),
		texts("tenets", 500, 32, "Core teachings."),
		text("clergy", 200, "What its priests are called and how they live."),
		ref("holySiteId", "strongholds", "The faith's holiest site."),
	}},
	{"orders", "A religious, knightly or monastic order.", []field{
		ref("faithId", "faiths", "The faith the order serves."),
		ref("headquartersId", "strongholds", "Where the order is based."),
		text("leader", 200, "Who leads the order."),
		texts("vows", 500, 32, "Vows its members swear."),
	}},
	{"traditions", "A tradition of magic: where its power comes from and who practises it.", []field{
		enum("source", sourceValues, "Where the tradition's power comes from."),
		text("practitioners", 200, "Who practises it."),
		boolean("forbidden", "Whether the tradition is outlawed or taboo."),
		ref("cultureId", "cultures", "The culture the tradition comes from."),
	}},
	{"spells", "A spell or ritual of a magic tradition.", []field{
		ref("traditionId", "traditions", "The tradition that teaches the spell."),
		integer("level", 0, 9, "Spell level, 0 (cantrip) to 9."),
		text("school", 50, "School of magic, such as evocation."),
		enums("components", componentValues, "Components the casting needs."),
		text("effect", 2000, "What the spell does."),
	}},
	{"factions", "A guild, army, cult, house or other organisation.", []field{
		text("kind", 50, "What kind of faction, such as guild or cult."),
		ref("headquartersId", "strongholds", "Where the faction is based."),
		text("leader", 200, "Who leads the faction."),
		refs("allies", "factions", MaxRefs, "Allied factions."),
		refs("rivals", "factions", MaxRefs, "Rival factions."),
		ref("faithId", "faiths", "The faith the faction follows."),
	}},
	{"entries", "A free encyclopedia entry.", []field{
		text("category", 50, "A category for the entry, such as geography."),
		anyRefs("related", "Entities of any collection the entry is about."),
	}},
	{"artifacts", "A named item of power.", []field{
		ref("creatorId", "deities", "The deity who made or blessed the artifact; mortal makers go in notes."),
		ref("keeperId", "factions", "The faction that holds or guards it."),
		ref("locationId", "strongholds", "Where it lies."),
		enum("rarity", rarityValues, "How rare it is."),
		boolean("cursed", "Whether it is cursed."),
		texts("powers", 500, 16, "What it can do."),
	}},
	{"rumours", "Something people say, true or not.", []field{
		anyRefs("subjects", "Entities of any collection the rumour is about."),
		enum("truth", truthValues, "How true the rumour is (GM only); absent means unknown."),
		text("source", 200, "Who spreads it."),
	}},
	{"dynasties", "A ruling house or noble bloodline.", []field{
		ref("cultureId", "cultures", "The culture the dynasty belongs to."),
		ref("seatId", "strongholds", "The dynasty's seat."),
		year("founded", "Year the dynasty was founded."),
		text("head", 200, "The current head of the house."),
		text("motto", 200, "The house's motto."),
	}},
	{"creatures", "A kind of monster, beast or people.", []field{
		text("kind", 50, "What kind of creature, such as beast or undead."),
		text("habitat", 200, "Where it lives."),
		integer("dangerLevel", 0, 10, "How dangerous it is, 0 (harmless) to 10 (world-ending)."),
		boolean("intelligent", "Whether it can reason and speak."),
		ref("lairId", "strongholds", "A known lair."),
	}},
	{"festivals", "A feast, holy day or celebration.", []field{
		ref("faithId", "faiths", "The faith that keeps the festival."),
		ref("cultureId", "cultures", "The culture that keeps the festival."),
		text("date", 100, "When it falls, such as the first full moon of spring."),
		texts("customs", 500, 32, "What people do."),
	}},
	{"strongholds", "A fortress, temple, city or other notable place.", []field{
		text("kind", 50, "What kind of place, such as fortress, temple or city."),
		ref("factionId", "factions", "The faction that holds it."),
		text("location", 200, "Where it is."),
		integer("population", 0, MaxPopulation, "How many people live there."),
	}},
	{"cultures", "A people and its ways.", []field{
		text("language", 100, "The language it speaks."),
		ref("pantheonId", "pantheons", "The pantheon it worships."),
		text("homeland", 200, "Where it lives."),
		texts("values", 200, 32, "What it holds dear."),
	}},
	{"eras", "An age of history; startYear ≤ endYear, either may be absent (open).", []field{
		year("startYear", "First year of the era."),
		year("endYear", "Last year of the era."),
	}},
	{"events", "Something that happened.", []field{
		ref("eraId", "eras", "The era the event belongs to."),
		year("year", "Year of the event; it should fall within its era."),
		ref("locationId", "strongholds", "Where it happened."),
		anyRefs("participants", "Entities of any collection that took part."),
	}},
}

// allFields returns every field of s in canonical order: id, name, summary,
// the collection's own fields, tags, notes.
func (s spec) allFields() []field {
	head := []field{
		idField(),
		{name: "name", kind: kText, minLen: 1, maxLen: MaxNameLen, required: true, desc: "Display name."},
		text("summary", MaxSummaryLen, "A short description."),
	}
	tail := []field{
		texts("tags", MaxTagLen, MaxTags, "Free tags."),
		text("notes", MaxNotesLen, "Longer notes for the GM."),
	}
	return slices.Concat(head, s.fields, tail)
}

// schema builds a fresh schema tree for f.
func (f field) schema() *jsonschema.Schema {
	var s *jsonschema.Schema
	switch f.kind {
	case kID:
		s = slugSchema()
	case kText:
		s = &jsonschema.Schema{Type: "string", MaxLength: jsonschema.Ptr(f.maxLen)}
		if f.minLen > 0 {
			s.MinLength = jsonschema.Ptr(f.minLen)
		}
		if f.name == "name" {
			s.Pattern = namePattern
		}
	case kInt:
		s = &jsonschema.Schema{Type: "integer", Minimum: jsonschema.Ptr(f.lo), Maximum: jsonschema.Ptr(f.hi)}
	case kBool:
		s = &jsonschema.Schema{Type: "boolean"}
	case kEnum:
		s = enumSchema(f.enum)
	case kRef:
		s = refSchema(f.target)
	case kRefs:
		s = arraySchema(refSchema(f.target), f.maxItems)
	case kTexts:
		s = arraySchema(&jsonschema.Schema{Type: "string", MinLength: jsonschema.Ptr(f.minLen), MaxLength: jsonschema.Ptr(f.maxLen)}, f.maxItems)
	case kEnums:
		s = arraySchema(enumSchema(f.enum), f.maxItems)
	case kAnyRefs:
		s = arraySchema(anyRefSchema(), f.maxItems)
	default:
		panic(fmt.Sprintf("lore: field %s: unknown kind %d", f.name, f.kind))
	}
	s.Description = f.desc
	return s
}

func slugSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: SlugPattern}
}

func refSchema(target string) *jsonschema.Schema {
	s := slugSchema()
	s.Extra = map[string]any{referencesKeyword: target}
	return s
}

func enumSchema(values []string) *jsonschema.Schema {
	e := make([]any, len(values))
	for i, v := range values {
		e[i] = v
	}
	return &jsonschema.Schema{Type: "string", Enum: e}
}

func arraySchema(items *jsonschema.Schema, maxItems int) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "array", Items: items, MaxItems: jsonschema.Ptr(maxItems), UniqueItems: true}
}

// anyRefSchema is a reference into any collection: {"collection":…, "id":…}.
func anyRefSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Type:        "object",
		Description: "A reference to an entity of any lore collection.",
		Properties: map[string]*jsonschema.Schema{
			"collection": enumSchema(collectionValues),
			"id":         slugSchema(),
		},
		PropertyOrder:        []string{"collection", "id"},
		Required:             []string{"collection", "id"},
		AdditionalProperties: falseSchema(),
	}
}

func falseSchema() *jsonschema.Schema { return &jsonschema.Schema{Not: &jsonschema.Schema{}} }

// schema builds a fresh schema tree for the collection.
func (s spec) schema() *jsonschema.Schema {
	all := s.allFields()
	root := &jsonschema.Schema{
		Schema:               "https://json-schema.org/draft/2020-12/schema",
		Title:                s.name,
		Description:          s.desc,
		Type:                 "object",
		Properties:           make(map[string]*jsonschema.Schema, len(all)),
		AdditionalProperties: falseSchema(),
	}
	for _, f := range all {
		root.Properties[f.name] = f.schema()
		root.PropertyOrder = append(root.PropertyOrder, f.name)
		if f.required {
			root.Required = append(root.Required, f.name)
		}
	}
	return root
}

// collection is a spec prepared for use: its schema resolved once, every
// subschema resolved on its own too (so that a failure can be pinned to the
// innermost value that fails), and its JSON rendering.
type collection struct {
	spec
	index    int
	fields   []field
	root     *jsonschema.Schema
	resolved *jsonschema.Resolved
	sub      map[*jsonschema.Schema]*jsonschema.Resolved
	json     []byte
}

// collections and byName are set up while the package's variables are
// initialised, so every init function and every other package-level variable
// (the presets) can rely on them.
var collections, byName = prepareAll()

func prepareAll() ([]*collection, map[string]*collection) {
	if len(specs) != len(wf.LoreCollections) {
		panic("lore: specs and wf.LoreCollections differ in length")
	}
	list := make([]*collection, 0, len(specs))
	m := make(map[string]*collection, len(specs))
	for i, s := range specs {
		if s.name != wf.LoreCollections[i] {
			panic(fmt.Sprintf("lore: spec %d is %q, want %q", i, s.name, wf.LoreCollections[i]))
		}
		c, err := prepare(i, s)
		if err != nil {
			panic(err)
		}
		list = append(list, c)
		m[s.name] = c
	}
	return list, m
}

func prepare(i int, s spec) (*collection, error) {
	c := &collection{spec: s, index: i, fields: s.allFields(), root: s.schema(), sub: map[*jsonschema.Schema]*jsonschema.Resolved{}}
	var err error
	if c.resolved, err = c.root.Resolve(nil); err != nil {
		return nil, fmt.Errorf("lore: resolving %s schema: %w", s.name, err)
	}
	var walk func(*jsonschema.Schema) error
	walk = func(p *jsonschema.Schema) error {
		for _, child := range p.Properties {
			if err := resolveSub(c, child, walk); err != nil {
				return err
			}
		}
		if p.Items != nil {
			return resolveSub(c, p.Items, walk)
		}
		return nil
	}
	if err := walk(c.root); err != nil {
		return nil, fmt.Errorf("lore: resolving %s subschemas: %w", s.name, err)
	}
	if c.json, err = json.Marshal(c.root); err != nil {
		return nil, fmt.Errorf("lore: rendering %s schema: %w", s.name, err)
	}
	return c, nil
}

func resolveSub(c *collection, s *jsonschema.Schema, walk func(*jsonschema.Schema) error) error {
	r, err := s.Resolve(nil)
	if err != nil {
		return err
	}
	c.sub[s] = r
	return walk(s)
}

// Collections returns the 17 lore collections in their canonical order (that
// of wf.LoreCollections).
func Collections() []string { return slices.Clone(wf.LoreCollections) }

// Schema returns a fresh copy of the JSON Schema of collection; changing it
// changes nothing here.
func Schema(collection string) (*jsonschema.Schema, bool) {
	c, ok := byName[collection]
	if !ok {
		return nil, false
	}
	return c.spec.schema(), true
}

// SchemaJSON returns the JSON Schema of collection, or nil if there is no
// such collection.
func SchemaJSON(collection string) json.RawMessage {
	c, ok := byName[collection]
	if !ok {
		return nil
	}
	return slices.Clone(c.json)
}
