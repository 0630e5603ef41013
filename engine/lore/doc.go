// Package lore holds the lore of a world: the JSON Schemas of the 17 lore
// collections, the validation of entities an agent proposes, the integrity
// issues of a world's lore, and the presets that add_preset can apply. It is
// pure Go and does no I/O.
//
// # Collections and schemas
//
// The collections, in canonical order (wf.LoreCollections): pantheons,
// deities, faiths, orders, traditions, spells, factions, entries, artifacts,
// rumours, dynasties, creatures, festivals, strongholds, cultures, eras,
// events. Every entity is a JSON object with no properties beyond those
// below. Every collection has the five common fields (first rows), then its
// own. A reference ("→") holds the id of an entity of the named collection;
// {collection,id} references may point into any collection. "[x] ≤n" is an
// array of at most n items, which must be distinct. Years are integers from
// -1e9 to 1e9 (exact as JSON numbers); absent era bounds are open.
//
//	collection   field           type                               references
//	(every)      id              slug, required
//	             name            text 1–200, required
//	             summary         text ≤2000
//	             tags            [text 1–50] ≤32
//	             notes           text ≤20000
//	pantheons    headDeityId     slug                               → deities
//	             realm           text ≤200
//	deities      pantheonId      slug                               → pantheons
//	             parentIds       [slug] ≤16                         → deities
//	             domains         [text 1–50] ≤16
//	             alignment       text ≤50
//	             symbol          text ≤200
//	             rank            text ≤50
//	faiths       deityIds        [slug] ≤64                         → deities
//	             tenets          [text 1–500] ≤32
//	             clergy          text ≤200
//	             holySiteId      slug                               → strongholds
//	orders       faithId         slug                               → faiths
//	             headquartersId  slug                               → strongholds
//	             leader          text ≤200
//	             vows            [text 1–500] ≤32
//	traditions   source          enum arcane|divine|primal|occult|psionic|other
//	             practitioners   text ≤200
//	             forbidden       boolean
//	             cultureId       slug                               → cultures
//	spells       traditionId     slug                               → traditions
//	             level           integer 0..9
//	             school          text ≤50
//	             components      [enum verbal|somatic|material]
//	             effect          text ≤2000
//	factions     kind            text ≤50
//	             headquartersId  slug                               → strongholds
//	             leader          text ≤200
//	             allies          [slug] ≤64                         → factions
//	             rivals          [slug] ≤64                         → factions
//	             faithId         slug                               → faiths
//	entries      category        text ≤50
//	             related         [{collection,id}] ≤64              → any collection
//	artifacts    creatorId       slug                               → deities
//	             keeperId        slug                               → factions
//	             locationId      slug                               → strongholds
//	             rarity          enum common|uncommon|rare|very-rare|legendary|artifact
//	             cursed          boolean
//	             powers          [text 1–500] ≤16
//	rumours      subjects        [{collection,id}] ≤64              → any collection
//	             truth           enum true|false|partial|unknown
//	             source          text ≤200
//	dynasties    cultureId       slug                               → cultures
//	             seatId          slug                               → strongholds
//	             founded         integer -1e9..1e9
//	             head            text ≤200
//	             motto           text ≤200
//	creatures    kind            text ≤50
//	             habitat         text ≤200
//	             dangerLevel     integer 0..10
//	             intelligent     boolean
//	             lairId          slug                               → strongholds
//	festivals    faithId         slug                               → faiths
//	             cultureId       slug                               → cultures
//	             date            text ≤100
//	             customs         [text 1–500] ≤32
//	strongholds  kind            text ≤50
//	             factionId       slug                               → factions
//	             location        text ≤200
//	             population      integer 0..1e9
//	cultures     language        text ≤100
//	             pantheonId      slug                               → pantheons
//	             homeland        text ≤200
//	             values          [text 1–200] ≤32
//	eras         startYear       integer -1e9..1e9
//	             endYear         integer -1e9..1e9
//	events       eraId           slug                               → eras
//	             year            integer -1e9..1e9
//	             locationId      slug                               → strongholds
//	             participants    [{collection,id}] ≤64              → any collection
//
// A slug matches ^[a-z0-9][a-z0-9_-]{0,63}$ (SlugPattern). A name needs one
// non-space character.
//
// Reference rules: every reference field has exactly one target collection.
// Where a link could be kept on either side it is kept on one: a culture
// names its pantheon (cultures.pantheonId), a deity its pantheon, a faith its
// deities, an order or festival its faith. artifacts.creatorId names a
// deity only; mortal makers go in the artifact's notes. A faction's
// headquartersId (where it is based) and a stronghold's factionId (who holds
// it) are different facts and may disagree. Free-form links use
// {collection,id} lists: entries.related, rumours.subjects,
// events.participants. References are not enforced by Validate (a GM may
// write a deity before its pantheon); Issues reports those that dangle.
//
// # Design choices
//
// Schemas are built in Go, not embedded as .json files. One table of field
// descriptors (schema.go) is the single source of the schemas, of the
// order in which errors are looked for, of the canonical key order of
// stored entities, of the reference graph that Issues walks and of the table
// above (a test pins it). Seventeen hand-written files would repeat the five
// common fields seventeen times and need a second, drifting copy of the
// reference graph. The schemas are draft 2020-12, built and resolved with
// github.com/google/jsonschema-go once, while the package is initialised;
// Schema hands out fresh copies and SchemaJSON their rendering, in which
// reference fields carry the extension keyword "x-references" naming their
// target collection.
//
// jsonschema-go alone decides whether an entity is valid. Its errors name a
// schema path and depend on map order, so Validate explains a failure itself:
// every subschema is also resolved on its own, and the explanation walks the
// entity in a fixed order (required fields, unknown fields in sorted order,
// then fields in schema order and array items in index order), checking each
// part with its own subschema, and describes the innermost part that fails:
//
//	bad_request: deities/zeus: pantheonId: must be the id of an entity in pantheons, a slug matching … , got "Olympus!"
//	bad_request: spells/fireball: level: must be an integer from 0 to 9, got 12
//	bad_request: rumours/r1: subjects[0]: missing required field id
//	bad_request: deities/zeus: unknown field "colour" (allowed: id, name, …)
//
// Besides its schema, an entity must be at most MaxEntityBytes of valid
// UTF-8, hold no duplicate keys, no NUL character in any string or key, and
// nest at most 16 levels. Optional fields are omitted, not null: null is
// refused like any other wrong type.
//
// Validated entities are stored in canonical form: compact JSON whose
// top-level keys follow the schema order (id, name, summary, the
// collection's own fields, tags, notes), nested {collection,id} objects in
// that order too, numbers as encoding/json renders a float64 (integers
// without a fraction), and <, > and & not escaped. Validating a canonical
// entity returns it unchanged.
//
// # Integrity issues
//
// Issues never block a write: they are what list_lore shows the GM. Their
// kinds are dangling_reference, self_reference, duplicate_name,
// duplicate_id, era_order, event_outside_era and invalid_entity (see the
// Kind constants). Issues sorts them by collection order, id, field,
// position in the field, kind and detail, whatever the order of its input,
// and runs in linear time plus the sort of the issues it finds. Most of the
// time goes to validating every entity again; that runs on up to GOMAXPROCS
// goroutines, and 100,000 entities take under a second on two cores (see
// BenchmarkIssues).
//
// A store does not call Issues on every read. Analyze works out the facts
// of one entity (why it is invalid, its folded name, its references, an
// era's bounds, an event's era and year) once, when the entity is written;
// Issues is a function of those facts alone (TestIssuesFromFacts), so a
// store keeps them in indexed columns and finds the issues with a few joins
// (sqlstore's LoreIssues), building each issue with the same constructors
// (InvalidEntityIssue, DuplicateNameIssue, …) and ordering them with
// ComparePlaced. FactsVersion numbers the rules: a schema change bumps it,
// and stores analyse their entities again.
//
// # Presets
//
// Presets are bundles of entities kept as JSON files under presets/,
// embedded, and validated while the package is initialised. There is one
// per starter template (ForTemplate) and two generic ones:
//
//	serpent-jungle         starter-jungle
//	lich-dungeon           starter-dungeon
//	merchant-city          starter-city
//	sun-desert             starter-desert
//	drowned-wetland        starter-wetland
//	sea-kings-archipelago  starter-archipelago
//	fire-mountain          starter-volcanic
//	deep-caverns           starter-caverns
//	classic-pantheon       (generic)
//	thieves-guild          (generic)
//
// Each preset on its own has no issues, and no two presets share a
// (collection, id) or a (collection, name), so presets can be combined
// freely. ApplyPreset says what add_preset does when ids collide with a
// world's lore: existing entities win and are reported as skipped.
package lore
