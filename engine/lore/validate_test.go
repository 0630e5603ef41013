package lore

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"

	wf "github.com/worldforge-go/worldforge"
)

// full holds, per collection, a valid entity that uses every field.
var full = map[string]string{
	"pantheons":   `{"id":"olympians","name":"The Olympians","headDeityId":"zeus","realm":"Mount Olympus"}`,
	"deities":     `{"id":"zeus","name":"Zeus","pantheonId":"olympians","parentIds":["kronos","rhea"],"domains":["sky","thunder"],"alignment":"neutral","symbol":"Thunderbolt","rank":"greater"}`,
	"faiths":      `{"id":"olympic-cult","name":"The Olympic Cult","deityIds":["zeus"],"tenets":["Honour the gods"],"clergy":"Priests","holySiteId":"delphi"}`,
	"orders":      `{"id":"pythia","name":"The Pythia","faithId":"olympic-cult","headquartersId":"delphi","leader":"The Oracle","vows":["Speak only truth"]}`,
	"traditions":  `{"id":"oracle-craft","name":"Oracle-craft","source":"divine","practitioners":"Oracles","forbidden":false,"cultureId":"hellenes"}`,
	"spells":      `{"id":"prophecy","name":"Prophecy","traditionId":"oracle-craft","level":9,"school":"divination","components":["verbal","material"],"effect":"Foretells one thing."}`,
	"factions":    `{"id":"athens","name":"Athens","kind":"city-state","headquartersId":"acropolis","leader":"Pericles","allies":["plataea"],"rivals":["sparta"],"faithId":"olympic-cult"}`,
	"entries":     `{"id":"the-aegean","name":"The Aegean","category":"geography","related":[{"collection":"strongholds","id":"delphi"}]}`,
	"artifacts":   `{"id":"aegis","name":"Aegis","creatorId":"zeus","keeperId":"athens","locationId":"acropolis","rarity":"artifact","cursed":false,"powers":["Terrifies"]}`,
	"rumours":     `{"id":"zeus-swan","name":"Zeus was a swan","subjects":[{"collection":"deities","id":"zeus"}],"truth":"partial","source":"Leda"}`,
	"dynasties":   `{"id":"atreids","name":"House of Atreus","cultureId":"hellenes","seatId":"mycenae","founded":-1250,"head":"Agamemnon","motto":"Blood calls to blood"}`,
	"creatures":   `{"id":"minotaur","name":"Minotaur","kind":"monstrosity","habitat":"Labyrinth","dangerLevel":7,"intelligent":true,"lairId":"labyrinth"}`,
	"festivals":   `{"id":"panathenaia","name":"Panathenaia","faithId":"olympic-cult","cultureId":"hellenes","date":"Midsummer","customs":["A new robe for Athena"]}`,
	"strongholds": `{"id":"delphi","name":"Delphi","kind":"temple","factionId":"athens","location":"Mount Parnassus","population":1000}`,
	"cultures":    `{"id":"hellenes","name":"The Hellenes","language":"Greek","pantheonId":"olympians","homeland":"Hellas","values":["Arete"]}`,
	"eras":        `{"id":"bronze-age","name":"The Bronze Age","startYear":-3000,"endYear":-1100}`,
	"events":      `{"id":"fall-of-troy","name":"The Fall of Troy","eraId":"bronze-age","year":-1184,"locationId":"troy","participants":[{"collection":"dynasties","id":"atreids"}]}`,
}

// common adds the common optional fields to a full entity.
func withCommon(s string) string {
	return strings.TrimSuffix(s, "}") + `,"summary":"Short.","tags":["greek","myth"],"notes":"Long notes."}`
}

func TestCollections(t *testing.T) {
	want := []string{"pantheons", "deities", "faiths", "orders", "traditions", "spells", "factions", "entries", "artifacts", "rumours", "dynasties", "creatures", "festivals", "strongholds", "cultures", "eras", "events"}
	if diff := cmp.Diff(want, Collections()); diff != "" {
		t.Errorf("Collections (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wf.LoreCollections, Collections()); diff != "" {
		t.Errorf("Collections vs wf.LoreCollections (-want +got):\n%s", diff)
	}
	c := Collections()
	c[0] = "changed"
	if Collections()[0] != "pantheons" {
		t.Error("Collections returned shared state")
	}
}

func TestSchemas(t *testing.T) {
	for _, name := range Collections() {
		t.Run(name, func(t *testing.T) {
			s, ok := Schema(name)
			if !ok {
				t.Fatal("no schema")
			}
			if _, err := s.Resolve(nil); err != nil {
				t.Fatalf("Schema does not resolve: %v", err)
			}
			// The rendered JSON resolves too and describes the same schema.
			raw := SchemaJSON(name)
			var fromJSON jsonschema.Schema
			if err := json.Unmarshal(raw, &fromJSON); err != nil {
				t.Fatalf("SchemaJSON does not unmarshal: %v", err)
			}
			rs, err := fromJSON.Resolve(nil)
			if err != nil {
				t.Fatalf("SchemaJSON does not resolve: %v", err)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(withCommon(full[name])), &m); err != nil {
				t.Fatal(err)
			}
			if err := rs.Validate(m); err != nil {
				t.Errorf("full entity fails the rendered schema: %v", err)
			}
			if s.Schema != "https://json-schema.org/draft/2020-12/schema" {
				t.Errorf("$schema = %q", s.Schema)
			}
			if s.AdditionalProperties == nil || s.AdditionalProperties.Not == nil {
				t.Error("additionalProperties is not false")
			}
			if diff := cmp.Diff([]string{"id", "name"}, s.Required); diff != "" {
				t.Errorf("required (-want +got):\n%s", diff)
			}
			// Every field is documented and every reference names its target.
			for _, f := range byName[name].fields {
				p := s.Properties[f.name]
				if p == nil || p.Description == "" {
					t.Errorf("%s: missing or undocumented", f.name)
					continue
				}
				if f.kind == kRef && p.Extra[referencesKeyword] != f.target {
					t.Errorf("%s: %s = %v, want %s", f.name, referencesKeyword, p.Extra[referencesKeyword], f.target)
				}
				if _, ok := byName[f.target]; f.target != "" && !ok {
					t.Errorf("%s: target %q is not a collection", f.name, f.target)
				}
			}
			hasRef := slices.ContainsFunc(byName[name].fields, func(f field) bool { return f.kind == kRef || f.kind == kRefs })
			if hasRef != strings.Contains(string(raw), `"x-references"`) {
				t.Errorf("SchemaJSON has no x-references: %s", raw)
			}
			// Schema hands out copies.
			s.Properties["id"].Pattern = "changed"
			again, _ := Schema(name)
			if again.Properties["id"].Pattern != SlugPattern {
				t.Error("Schema returned shared state")
			}
			if _, err := Validate(name, []byte(full[name])); err != nil {
				t.Errorf("Validate after changing a copy: %v", err)
			}
		})
	}
	if _, ok := Schema("gods"); ok {
		t.Error(`Schema("gods") found`)
	}
	if SchemaJSON("gods") != nil {
		t.Error(`SchemaJSON("gods") not nil`)
	}
}

func TestFullEntitiesUseEveryField(t *testing.T) {
	for _, name := range Collections() {
		var m map[string]any
		if err := json.Unmarshal([]byte(withCommon(full[name])), &m); err != nil {
			t.Fatal(err)
		}
		for _, f := range byName[name].fields {
			if _, ok := m[f.name]; !ok {
				t.Errorf("%s: full entity lacks %s", name, f.name)
			}
		}
	}
}

type badCase struct {
	name, entity, want string
}

// commonBad are failures every collection shares. Their want strings are
// checked exactly (after "bad_request: <collection>").
var commonBad = []badCase{
	{"missing id", `{"name":"X"}`, ": missing required field id"},
	{"missing name", `{"id":"x"}`, "/x: missing required field name"},
	{"bad slug", `{"id":"Not A Slug","name":"X"}`, `: id: must be a slug matching ^[a-z0-9][a-z0-9_-]{0,63}$ (lowercase letters, digits, _ and -), got "Not A Slug"`},
	{"slug starts with dash", `{"id":"-x","name":"X"}`, `: id: must be a slug matching ^[a-z0-9][a-z0-9_-]{0,63}$ (lowercase letters, digits, _ and -), got "-x"`},
	{"slug too long", `{"id":"` + strings.Repeat("a", 65) + `","name":"X"}`, `: id: must be a slug matching ^[a-z0-9][a-z0-9_-]{0,63}$ (lowercase letters, digits, _ and -), got "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"… (65 characters)`},
	{"id not a string", `{"id":7,"name":"X"}`, `: id: must be a slug matching ^[a-z0-9][a-z0-9_-]{0,63}$ (lowercase letters, digits, _ and -), got 7`},
	{"name wrong type", `{"id":"x","name":["X"]}`, `/x: name: must be a string of 1 to 200 characters, not all spaces, got an array of 1 item`},
	{"name empty", `{"id":"x","name":""}`, `/x: name: must be a string of 1 to 200 characters, not all spaces, got ""`},
	{"name blank", `{"id":"x","name":" \t "}`, `/x: name: must be a string of 1 to 200 characters, not all spaces, got " \t "`},
	{"name too long", `{"id":"x","name":"` + strings.Repeat("é", 201) + `"}`, `/x: name: must be a string of 1 to 200 characters, not all spaces, got "éééééééééééééééééééééééééééééééé"… (201 characters)`},
	{"summary too long", `{"id":"x","name":"X","summary":"` + strings.Repeat("s", 2001) + `"}`, `/x: summary: must be a string of at most 2000 characters, got "ssssssssssssssssssssssssssssssss"… (2001 characters)`},
	{"notes too long", `{"id":"x","name":"X","notes":"` + strings.Repeat("n", 20001) + `"}`, `/x: notes: must be a string of at most 20000 characters, got "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"… (20001 characters)`},
	{"tags not array", `{"id":"x","name":"X","tags":"a"}`, `/x: tags: must be an array of at most 32 items, got "a"`},
	{"tag too long", `{"id":"x","name":"X","tags":["ok","` + strings.Repeat("t", 51) + `"]}`, `/x: tags[1]: must be a string of 1 to 50 characters, got "tttttttttttttttttttttttttttttttt"… (51 characters)`},
	{"tag empty", `{"id":"x","name":"X","tags":[""]}`, `/x: tags[0]: must be a string of 1 to 50 characters, got ""`},
	{"tag not string", `{"id":"x","name":"X","tags":[1]}`, `/x: tags[0]: must be a string of 1 to 50 characters, got 1`},
	{"too many tags", `{"id":"x","name":"X","tags":[` + quotedList(33) + `]}`, `/x: tags: has 33 items, at most 32 allowed`},
	{"duplicate tags", `{"id":"x","name":"X","tags":["a","b","a"]}`, `/x: tags: items 0 and 2 are the same; items must be unique`},
	{"null optional", `{"id":"x","name":"X","summary":null}`, `/x: summary: must be a string of at most 2000 characters, got null`},
	{"extra property", `{"id":"x","name":"X","zzz":1,"colour":"red"}`, `/x: unknown field "colour" (allowed: id, name, summary, `},
	{"NUL in name", `{"id":"x","name":"a\u0000b"}`, `/x: name: must not contain NUL characters`},
	{"NUL in tag", `{"id":"x","name":"X","tags":["ok","\u0000"]}`, `/x: tags[1]: must not contain NUL characters`},
	{"NUL in key", `{"id":"x","name":"X","a\u0000":1}`, `/x: field names must not contain NUL characters`},
	{"duplicate key", `{"id":"x","name":"X","name":"Y"}`, `: duplicate field "name"`},
	{"not an object", `["x"]`, `: entity must be a JSON object, got an array of 1 item`},
	{"string", `"x"`, `: entity must be a JSON object, got "x"`},
	{"null", `null`, `: entity must be a JSON object, got null`},
	{"empty", ``, `: entity is not valid JSON: unexpected end of JSON input (at byte 0)`},
	{"truncated", `{"id":"x"`, `: entity is not valid JSON: unexpected end of JSON input (at byte 9)`},
	{"trailing data", `{"id":"x","name":"X"} {}`, `: entity is not valid JSON: invalid character '{' after top-level value (at byte 23)`},
	{"invalid UTF-8", "{\"id\":\"x\",\"name\":\"\xff\"}", `: entity is not valid UTF-8`},
	{"too deep", `{"id":"x","name":"X","zzz":` + strings.Repeat("[", 20) + strings.Repeat("]", 20) + `}`, `: entity is nested more than 16 levels deep`},
	{"too big", `{"id":"x","name":"X","notes":"` + strings.Repeat("n", MaxEntityBytes) + `"}`, fmt.Sprintf(": entity is %d bytes, more than %d", MaxEntityBytes+32, MaxEntityBytes)},
	{"number too big", `{"id":"x","name":"X","zzz":1e999}`, `: entity is not valid JSON: `},
}

func quotedList(n int) string {
	q := make([]string, n)
	for i := range q {
		q[i] = fmt.Sprintf("%q", fmt.Sprint("t", i))
	}
	return strings.Join(q, ",")
}

// specificBad are failures of collection fields; want is a substring.
var specificBad = map[string][]badCase{
	"pantheons": {
		{"head not slug", `{"id":"p","name":"P","headDeityId":"Zeus"}`, `pantheons/p: headDeityId: must be the id of an entity in deities, a slug matching`},
		{"realm type", `{"id":"p","name":"P","realm":1}`, `pantheons/p: realm: must be a string of at most 200 characters, got 1`},
	},
	"deities": {
		{"pantheon not slug", `{"id":"zeus","name":"Zeus","pantheonId":"Olympus!"}`, `deities/zeus: pantheonId: must be the id of an entity in pantheons, a slug matching ^[a-z0-9][a-z0-9_-]{0,63}$ (lowercase letters, digits, _ and -), got "Olympus!"`},
		{"parents not array", `{"id":"zeus","name":"Zeus","parentIds":"kronos"}`, `deities/zeus: parentIds: must be an array of at most 16 items, got "kronos"`},
		{"parent bad", `{"id":"zeus","name":"Zeus","parentIds":["kronos","R"]}`, `deities/zeus: parentIds[1]: must be the id of an entity in deities`},
		{"parents repeat", `{"id":"zeus","name":"Zeus","parentIds":["kronos","kronos"]}`, `deities/zeus: parentIds: items 0 and 1 are the same`},
		{"too many domains", `{"id":"zeus","name":"Zeus","domains":[` + quotedList(17) + `]}`, `deities/zeus: domains: has 17 items, at most 16 allowed`},
	},
	"faiths": {
		{"deities not array", `{"id":"f","name":"F","deityIds":{}}`, `faiths/f: deityIds: must be an array of at most 64 items, got an object`},
		{"tenet too long", `{"id":"f","name":"F","tenets":["` + strings.Repeat("x", 501) + `"]}`, `faiths/f: tenets[0]: must be a string of 1 to 500 characters`},
	},
	"orders": {
		{"faith type", `{"id":"o","name":"O","faithId":true}`, `orders/o: faithId: must be the id of an entity in faiths, a slug matching ^[a-z0-9][a-z0-9_-]{0,63}$ (lowercase letters, digits, _ and -), got true`},
	},
	"traditions": {
		{"bad source", `{"id":"t","name":"T","source":"Arcane"}`, `traditions/t: source: must be one of "arcane", "divine", "primal", "occult", "psionic", "other", got "Arcane"`},
		{"forbidden type", `{"id":"t","name":"T","forbidden":"yes"}`, `traditions/t: forbidden: must be true or false, got "yes"`},
	},
	"spells": {
		{"level high", `{"id":"fireball","name":"Fireball","level":10}`, `spells/fireball: level: must be an integer from 0 to 9, got 10`},
		{"level negative", `{"id":"fireball","name":"Fireball","level":-1}`, `spells/fireball: level: must be an integer from 0 to 9, got -1`},
		{"level fraction", `{"id":"fireball","name":"Fireball","level":1.5}`, `spells/fireball: level: must be an integer from 0 to 9, got 1.5`},
		{"level string", `{"id":"fireball","name":"Fireball","level":"3"}`, `spells/fireball: level: must be an integer from 0 to 9, got "3"`},
		{"bad component", `{"id":"fireball","name":"Fireball","components":["verbal","focus"]}`, `spells/fireball: components[1]: must be one of "verbal", "somatic", "material", got "focus"`},
		{"component twice", `{"id":"fireball","name":"Fireball","components":["verbal","verbal"]}`, `spells/fireball: components: items 0 and 1 are the same`},
	},
	"factions": {
		{"ally bad", `{"id":"f","name":"F","allies":["ok","Not ok"]}`, `factions/f: allies[1]: must be the id of an entity in factions`},
		{"too many rivals", `{"id":"f","name":"F","rivals":[` + slugList(65) + `]}`, `factions/f: rivals: has 65 items, at most 64 allowed`},
	},
	"entries": {
		{"related not objects", `{"id":"e","name":"E","related":["deities/zeus"]}`, `entries/e: related[0]: must be an object with fields collection, id, got "deities/zeus"`},
		{"related bad collection", `{"id":"e","name":"E","related":[{"collection":"gods","id":"zeus"}]}`, `entries/e: related[0].collection: must be one of "pantheons", "deities",`},
		{"related missing id", `{"id":"e","name":"E","related":[{"collection":"deities"}]}`, `entries/e: related[0]: missing required field id`},
		{"related extra", `{"id":"e","name":"E","related":[{"collection":"deities","id":"zeus","why":"x"}]}`, `entries/e: related[0]: unknown field "why" (allowed: collection, id)`},
		{"related repeat", `{"id":"e","name":"E","related":[{"collection":"deities","id":"zeus"},{"id":"zeus","collection":"deities"}]}`, `entries/e: related: items 0 and 1 are the same`},
	},
	"artifacts": {
		{"bad rarity", `{"id":"a","name":"A","rarity":"mythic"}`, `artifacts/a: rarity: must be one of "common", "uncommon", "rare", "very-rare", "legendary", "artifact", got "mythic"`},
		{"cursed type", `{"id":"a","name":"A","cursed":1}`, `artifacts/a: cursed: must be true or false, got 1`},
	},
	"rumours": {
		{"bad truth", `{"id":"r","name":"R","truth":"maybe"}`, `rumours/r: truth: must be one of "true", "false", "partial", "unknown", got "maybe"`},
		{"truth bool", `{"id":"r","name":"R","truth":true}`, `rumours/r: truth: must be one of "true", "false", "partial", "unknown", got true`},
		{"subject id bad", `{"id":"r","name":"R","subjects":[{"collection":"deities","id":"Zeus"}]}`, `rumours/r: subjects[0].id: must be a slug matching`},
	},
	"dynasties": {
		{"founded fraction", `{"id":"d","name":"D","founded":10.5}`, `dynasties/d: founded: must be an integer from -1000000000 to 1000000000, got 10.5`},
		{"founded huge", `{"id":"d","name":"D","founded":1e10}`, `dynasties/d: founded: must be an integer from -1000000000 to 1000000000, got 10000000000`},
	},
	"creatures": {
		{"danger high", `{"id":"c","name":"C","dangerLevel":11}`, `creatures/c: dangerLevel: must be an integer from 0 to 10, got 11`},
		{"danger low", `{"id":"c","name":"C","dangerLevel":-3}`, `creatures/c: dangerLevel: must be an integer from 0 to 10, got -3`},
	},
	"festivals": {
		{"culture bad", `{"id":"f","name":"F","cultureId":""}`, `festivals/f: cultureId: must be the id of an entity in cultures, a slug matching ^[a-z0-9][a-z0-9_-]{0,63}$ (lowercase letters, digits, _ and -), got ""`},
	},
	"strongholds": {
		{"population negative", `{"id":"s","name":"S","population":-1}`, `strongholds/s: population: must be an integer from 0 to 1000000000, got -1`},
	},
	"cultures": {
		{"language too long", `{"id":"c","name":"C","language":"` + strings.Repeat("l", 101) + `"}`, `cultures/c: language: must be a string of at most 100 characters`},
	},
	"eras": {
		{"start fraction", `{"id":"e","name":"E","startYear":0.5}`, `eras/e: startYear: must be an integer from -1000000000 to 1000000000, got 0.5`},
		{"end too small", `{"id":"e","name":"E","endYear":-1000000001}`, `eras/e: endYear: must be an integer from -1000000000 to 1000000000, got -1000000001`},
	},
	"events": {
		{"year string", `{"id":"e","name":"E","year":"1184 BC"}`, `events/e: year: must be an integer from -1000000000 to 1000000000, got "1184 BC"`},
		{"participant not object", `{"id":"e","name":"E","participants":[1]}`, `events/e: participants[0]: must be an object with fields collection, id, got 1`},
	},
}

func slugList(n int) string {
	q := make([]string, n)
	for i := range q {
		q[i] = fmt.Sprintf(`"f%d"`, i)
	}
	return strings.Join(q, ",")
}

func TestValidate(t *testing.T) {
	for _, name := range Collections() {
		t.Run(name, func(t *testing.T) {
			for _, good := range []string{
				`{"id":"x","name":"X"}`,
				`{"id":"0","name":"0"}`,
				`{"id":"a_b-c","name":"x","summary":"","tags":[],"notes":""}`,
				`{"id":"` + strings.Repeat("z", 64) + `","name":"` + strings.Repeat("é", 200) + `"}`,
				full[name],
				withCommon(full[name]),
			} {
				e, err := Validate(name, []byte(good))
				if err != nil {
					t.Errorf("Validate(%s): %v", good, err)
					continue
				}
				var m map[string]any
				if err := json.Unmarshal([]byte(good), &m); err != nil {
					t.Fatal(err)
				}
				if e.Collection != name || e.ID != m["id"] || e.Name != m["name"] {
					t.Errorf("Validate(%s) = %+v", good, e)
				}
				again, err := Validate(name, e.JSON)
				if err != nil || string(again.JSON) != string(e.JSON) {
					t.Errorf("canonical JSON does not re-validate to itself: %s → %s, %v", e.JSON, again.JSON, err)
				}
			}
			for _, bc := range commonBad {
				want := "bad_request: " + name + bc.want
				checkBad(t, name, bc.name, bc.entity, want, bc.name == "extra property" || bc.name == "number too big")
			}
			for _, bc := range specificBad[name] {
				checkBad(t, name, bc.name, bc.entity, "bad_request: "+bc.want, true)
			}
		})
	}
}

func checkBad(t *testing.T, collection, name, entity, want string, prefix bool) {
	t.Helper()
	_, err := Validate(collection, []byte(entity))
	if err == nil {
		t.Errorf("%s: no error", name)
		return
	}
	var we *wf.Error
	if !errors.As(err, &we) || we.Code != wf.EBadRequest || !errors.Is(err, &wf.Error{Code: wf.EBadRequest}) {
		t.Errorf("%s: error %v (%T) is not a bad_request *wf.Error", name, err, err)
	}
	if got := err.Error(); prefix && !strings.HasPrefix(got, want) || !prefix && got != want {
		t.Errorf("%s:\n got %s\nwant %s", name, got, want)
	}
}

func TestValidateUnknownCollection(t *testing.T) {
	_, err := Validate("gods", []byte(`{"id":"x","name":"X"}`))
	if wf.ErrorCode(err) != wf.EBadRequest || !strings.HasPrefix(err.Error(), `bad_request: unknown lore collection "gods" (want one of pantheons, deities,`) {
		t.Errorf("got %v", err)
	}
}

func TestValidateCanonical(t *testing.T) {
	in := ` { "notes" : "n", "tags":["b","a"], "level": 3.0, "traditionId":"arcana",
		"name":"Fire <&> Ball", "id":"fireball", "components":["material","verbal"],
		"summary":"caf\u00e9 \u2028" } `
	want := `{"id":"fireball","name":"Fire <&> Ball","summary":"café \u2028","traditionId":"arcana","level":3,"components":["material","verbal"],"tags":["b","a"],"notes":"n"}`
	e, err := Validate("spells", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if string(e.JSON) != want {
		t.Errorf("canonical JSON\n got %s\nwant %s", e.JSON, want)
	}
	refs := `{"subjects":[{"id":"zeus","collection":"deities"}],"name":"R","id":"r"}`
	e, err = Validate("rumours", []byte(refs))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":"r","name":"R","subjects":[{"collection":"deities","id":"zeus"}]}`; string(e.JSON) != want {
		t.Errorf("canonical JSON\n got %s\nwant %s", e.JSON, want)
	}
	// The input is not changed.
	raw := []byte(in)
	before := string(raw)
	Validate("spells", raw)
	if string(raw) != before {
		t.Error("Validate changed its input")
	}
}

// TestExplainCoversSchema checks that every failure found by jsonschema-go
// gets a message of ours, not the library's fallback, for a range of
// mutations of the full entities.
func TestExplainCoversSchema(t *testing.T) {
	values := []any{nil, true, -1.0, 0.5, 1e10, "", "Bad Slug", strings.Repeat("x", 3000), []any{}, []any{1.0}, []any{"a", "a"}, map[string]any{}, map[string]any{"collection": "deities"}}
	for _, name := range Collections() {
		c := byName[name]
		for _, f := range c.fields {
			for _, v := range values {
				var m map[string]any
				json.Unmarshal([]byte(full[name]), &m)
				m[f.name] = v
				raw, _ := json.Marshal(m)
				_, err := Validate(name, raw)
				if err == nil {
					continue
				}
				msg := err.Error()
				if !strings.Contains(msg, "must be") && !strings.Contains(msg, "missing required") &&
					!strings.Contains(msg, "items must be unique") && !strings.Contains(msg, "at most") {
					t.Errorf("%s.%s = %v: unexplained: %s", name, f.name, v, msg)
				}
				if strings.Contains(msg, "validating") {
					t.Errorf("%s.%s = %v: library message leaked: %s", name, f.name, v, msg)
				}
			}
		}
	}
}

func FuzzValidate(f *testing.F) {
	for i, name := range Collections() {
		f.Add(uint8(i), []byte(full[name]))
		f.Add(uint8(i), []byte(withCommon(full[name])))
	}
	for _, bc := range commonBad {
		if len(bc.entity) < 4096 {
			f.Add(uint8(3), []byte(bc.entity))
		}
	}
	for _, seed := range []string{
		`{"id":"x","name":"X","tags":["a:b"],"summary":"\\\":"}`,
		`{"id":"x","name":"X","related":[{"collection":"deities","id":"a","id":"b"}]}`,
		`{"id":"x","name":"X","summary":"\u0000"}`,
		`{"id":"x","name":"X","summary":"\\u0000"}`,
		`{"a":{"b":{"c":[[[[[[[[[[[[[[]]]]]]]]]]]]]]}}`,
	} {
		f.Add(uint8(7), []byte(seed))
	}
	for _, p := range Presets() {
		for _, e := range p.Entities {
			f.Add(uint8(slices.Index(Collections(), e.Collection)), []byte(e.JSON))
		}
	}
	f.Fuzz(func(t *testing.T, ci uint8, raw []byte) {
		name := wf.LoreCollections[int(ci)%len(wf.LoreCollections)]
		// The fast decoding path agrees with the token-by-token one.
		fast, ferr := decodeObject(raw)
		slow, serr := decodeObjectSlow(raw)
		if fmt.Sprint(ferr) != fmt.Sprint(serr) || !reflect.DeepEqual(fast, slow) {
			t.Fatalf("decoders differ on %q:\nfast %v %v\nslow %v %v", raw, fast, ferr, slow, serr)
		}
		e, err := Validate(name, raw)
		if err != nil {
			if wf.ErrorCode(err) != wf.EBadRequest {
				t.Fatalf("error %v is not bad_request", err)
			}
			return
		}
		if !json.Valid(e.JSON) {
			t.Fatalf("invalid JSON out: %q", e.JSON)
		}
		again, err := Validate(name, e.JSON)
		if err != nil {
			t.Fatalf("accepted %q but not its canonical form %q: %v", raw, e.JSON, err)
		}
		if diff := cmp.Diff(e, again); diff != "" {
			t.Fatalf("re-validation differs (-first +second):\n%s", diff)
		}
	})
}
