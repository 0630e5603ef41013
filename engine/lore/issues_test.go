package lore

import (
	stdcmp "cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// ent validates a test entity, failing the test if it does not.
func ent(t testing.TB, collection, entity string) Entity {
	t.Helper()
	e, err := Validate(collection, []byte(entity))
	if err != nil {
		t.Fatalf("Validate(%s, %s): %v", collection, entity, err)
	}
	return e
}

func TestIssues(t *testing.T) {
	type E = struct{ c, j string }
	tests := []struct {
		name     string
		entities []E
		raw      []Entity // added as is, unvalidated
		want     []Issue
	}{
		{name: "empty"},
		{
			name: "clean",
			entities: []E{
				{"pantheons", `{"id":"olympians","name":"Olympians","headDeityId":"zeus"}`},
				{"deities", `{"id":"zeus","name":"Zeus","pantheonId":"olympians","parentIds":["kronos"]}`},
				{"deities", `{"id":"kronos","name":"Kronos"}`},
				{"rumours", `{"id":"r","name":"R","subjects":[{"collection":"deities","id":"zeus"},{"collection":"rumours","id":"r2"}]}`},
				{"rumours", `{"id":"r2","name":"R2"}`},
			},
		},
		{
			name: "dangling single reference",
			entities: []E{
				{"deities", `{"id":"zeus","name":"Zeus","pantheonId":"olympians"}`},
			},
			want: []Issue{{Collection: "deities", ID: "zeus", Kind: KindDanglingReference, Field: "pantheonId", Detail: `no pantheons entity with id "olympians"`, Ref: &Ref{"pantheons", "olympians"}}},
		},
		{
			name: "dangling: the id exists in another collection only",
			entities: []E{
				{"pantheons", `{"id":"zeus","name":"Zeus's court"}`},
				{"faiths", `{"id":"f","name":"F","deityIds":["zeus"]}`},
			},
			want: []Issue{{Collection: "faiths", ID: "f", Kind: KindDanglingReference, Field: "deityIds", Detail: `no deities entity with id "zeus"`, Ref: &Ref{"deities", "zeus"}}},
		},
		{
			name: "dangling list references in position order",
			entities: []E{
				{"factions", `{"id":"f","name":"F","allies":["z","g","a"],"rivals":["b"],"headquartersId":"hq"}`},
				{"factions", `{"id":"g","name":"G"}`},
			},
			want: []Issue{
				{Collection: "factions", ID: "f", Kind: KindDanglingReference, Field: "allies", Detail: `no factions entity with id "z"`, Ref: &Ref{"factions", "z"}},
				{Collection: "factions", ID: "f", Kind: KindDanglingReference, Field: "allies", Detail: `no factions entity with id "a"`, Ref: &Ref{"factions", "a"}},
				{Collection: "factions", ID: "f", Kind: KindDanglingReference, Field: "headquartersId", Detail: `no strongholds entity with id "hq"`, Ref: &Ref{"strongholds", "hq"}},
				{Collection: "factions", ID: "f", Kind: KindDanglingReference, Field: "rivals", Detail: `no factions entity with id "b"`, Ref: &Ref{"factions", "b"}},
			},
		},
		{
			name: "dangling any-collection references",
			entities: []E{
				{"entries", `{"id":"e","name":"E","related":[{"collection":"eras","id":"gone"}]}`},
				{"events", `{"id":"ev","name":"Ev","participants":[{"collection":"cultures","id":"gone"}]}`},
			},
			want: []Issue{
				{Collection: "entries", ID: "e", Kind: KindDanglingReference, Field: "related", Detail: `no eras entity with id "gone"`, Ref: &Ref{"eras", "gone"}},
				{Collection: "events", ID: "ev", Kind: KindDanglingReference, Field: "participants", Detail: `no cultures entity with id "gone"`, Ref: &Ref{"cultures", "gone"}},
			},
		},
		{
			name: "self references",
			entities: []E{
				{"deities", `{"id":"zeus","name":"Zeus","parentIds":["zeus"]}`},
				{"factions", `{"id":"f","name":"F","allies":["f"],"rivals":["f"]}`},
				{"entries", `{"id":"e","name":"E","related":[{"collection":"entries","id":"e"}]}`},
				{"rumours", `{"id":"r","name":"R","subjects":[{"collection":"rumours","id":"r"}]}`},
				// Same id in another collection is not a self reference.
				{"rumours", `{"id":"zeus","name":"Zeus rumour","subjects":[{"collection":"deities","id":"zeus"}]}`},
			},
			want: []Issue{
				{Collection: "deities", ID: "zeus", Kind: KindSelfReference, Field: "parentIds", Detail: "parentIds refers to the entity itself", Ref: &Ref{"deities", "zeus"}},
				{Collection: "factions", ID: "f", Kind: KindSelfReference, Field: "allies", Detail: "allies refers to the entity itself", Ref: &Ref{"factions", "f"}},
				{Collection: "factions", ID: "f", Kind: KindSelfReference, Field: "rivals", Detail: "rivals refers to the entity itself", Ref: &Ref{"factions", "f"}},
				{Collection: "entries", ID: "e", Kind: KindSelfReference, Field: "related", Detail: "related refers to the entity itself", Ref: &Ref{"entries", "e"}},
				{Collection: "rumours", ID: "r", Kind: KindSelfReference, Field: "subjects", Detail: "subjects refers to the entity itself", Ref: &Ref{"rumours", "r"}},
			},
		},
		{
			name: "duplicate names, case-insensitive, within one collection",
			entities: []E{
				{"deities", `{"id":"b","name":"zeus"}`},
				{"deities", `{"id":"a","name":"Zeus"}`},
				{"deities", `{"id":"c","name":"ZEUS"}`},
				{"deities", `{"id":"d","name":"Zeus "}`},
				{"pantheons", `{"id":"a","name":"Zeus"}`},
				{"creatures", `{"id":"k1","name":"Kraken"}`},
				{"creatures", `{"id":"k2","name":"\u212araken"}`},
				{"creatures", `{"id":"ae1","name":"Æther"}`},
				{"creatures", `{"id":"ae2","name":"æTHER"}`},
			},
			want: []Issue{
				{Collection: "deities", ID: "b", Kind: KindDuplicateName, Field: "name", Detail: `name "zeus" is also used by deities/a`, Ref: &Ref{"deities", "a"}},
				{Collection: "deities", ID: "c", Kind: KindDuplicateName, Field: "name", Detail: `name "ZEUS" is also used by deities/a`, Ref: &Ref{"deities", "a"}},
				{Collection: "creatures", ID: "ae2", Kind: KindDuplicateName, Field: "name", Detail: `name "æTHER" is also used by creatures/ae1`, Ref: &Ref{"creatures", "ae1"}},
				{Collection: "creatures", ID: "k2", Kind: KindDuplicateName, Field: "name", Detail: "name \"\u212araken\" is also used by creatures/k1", Ref: &Ref{"creatures", "k1"}},
			},
		},
		{
			name: "duplicate ids",
			entities: []E{
				{"deities", `{"id":"zeus","name":"Zeus"}`},
				{"deities", `{"id":"zeus","name":"Zeus"}`},
				{"deities", `{"id":"zeus","name":"Zeus"}`},
				{"pantheons", `{"id":"zeus","name":"Zeus"}`},
			},
			want: []Issue{{Collection: "deities", ID: "zeus", Kind: KindDuplicateID, Field: "id", Detail: "id appears 3 times"}},
		},
		{
			name: "era order",
			entities: []E{
				{"eras", `{"id":"bad","name":"Bad","startYear":500,"endYear":300}`},
				{"eras", `{"id":"instant","name":"Instant","startYear":5,"endYear":5}`},
				{"eras", `{"id":"open","name":"Open","startYear":900}`},
				{"eras", `{"id":"old","name":"Old","endYear":-100}`},
			},
			want: []Issue{{Collection: "eras", ID: "bad", Kind: KindEraOrder, Field: "startYear", Detail: "startYear 500 is after endYear 300"}},
		},
		{
			name: "events outside their era",
			entities: []E{
				{"eras", `{"id":"bronze","name":"Bronze","startYear":-3000,"endYear":-1100}`},
				{"eras", `{"id":"now","name":"Now","startYear":1000}`},
				{"eras", `{"id":"myth","name":"Myth","endYear":-5000}`},
				{"eras", `{"id":"any","name":"Any"}`},
				{"events", `{"id":"before","name":"Before","eraId":"bronze","year":-3001}`},
				{"events", `{"id":"first","name":"First","eraId":"bronze","year":-3000}`},
				{"events", `{"id":"last","name":"Last","eraId":"bronze","year":-1100}`},
				{"events", `{"id":"after","name":"After","eraId":"bronze","year":-1099}`},
				{"events", `{"id":"late","name":"Late","eraId":"now","year":999999}`},
				{"events", `{"id":"early","name":"Early","eraId":"now","year":999}`},
				{"events", `{"id":"myth-late","name":"Myth late","eraId":"myth","year":0}`},
				{"events", `{"id":"anytime","name":"Anytime","eraId":"any","year":7}`},
				{"events", `{"id":"no-year","name":"No year","eraId":"bronze"}`},
				{"events", `{"id":"lost","name":"Lost","eraId":"gone","year":1}`},
			},
			want: []Issue{
				{Collection: "events", ID: "after", Kind: KindEventOutsideEra, Field: "year", Detail: "year -1099 is outside era bronze (-3000 to -1100)", Ref: &Ref{"eras", "bronze"}},
				{Collection: "events", ID: "before", Kind: KindEventOutsideEra, Field: "year", Detail: "year -3001 is outside era bronze (-3000 to -1100)", Ref: &Ref{"eras", "bronze"}},
				{Collection: "events", ID: "early", Kind: KindEventOutsideEra, Field: "year", Detail: "year 999 is outside era now (from 1000)", Ref: &Ref{"eras", "now"}},
				{Collection: "events", ID: "lost", Kind: KindDanglingReference, Field: "eraId", Detail: `no eras entity with id "gone"`, Ref: &Ref{"eras", "gone"}},
				{Collection: "events", ID: "myth-late", Kind: KindEventOutsideEra, Field: "year", Detail: "year 0 is outside era myth (until -5000)", Ref: &Ref{"eras", "myth"}},
			},
		},
		{
			name: "invalid entities",
			entities: []E{
				// A reference to an invalid entity is not dangling.
				{"faiths", `{"id":"f","name":"F","deityIds":["broken"]}`},
			},
			raw: []Entity{
				{Collection: "deities", ID: "broken", Name: "Broken", JSON: []byte(`{"id":"broken","name":"Broken","pantheonId":"Not A Slug","parentIds":["ghost"]}`)},
				{Collection: "deities", ID: "garbage", Name: "Garbage", JSON: []byte(`{"id":`)},
				{Collection: "deities", ID: "other", Name: "Other", JSON: []byte(`{"id":"not-other","name":"Other"}`)},
				{Collection: "deities", ID: "renamed", Name: "Old name", JSON: []byte(`{"id":"renamed","name":"New name"}`)},
				{Collection: "gods", ID: "odin", Name: "Odin", JSON: []byte(`{"id":"odin","name":"Odin"}`)},
			},
			want: []Issue{
				{Collection: "deities", ID: "broken", Kind: KindInvalidEntity, Detail: `pantheonId: must be the id of an entity in pantheons, a slug matching ^[a-z0-9][a-z0-9_-]{0,63}$ (lowercase letters, digits, _ and -), got "Not A Slug"`},
				{Collection: "deities", ID: "garbage", Kind: KindInvalidEntity, Detail: "entity is not valid JSON: unexpected end of JSON input (at byte 6)"},
				{Collection: "deities", ID: "other", Kind: KindInvalidEntity, Detail: `stored id "other" differs from the id "not-other" in its JSON`},
				{Collection: "deities", ID: "renamed", Kind: KindInvalidEntity, Detail: `stored name "Old name" differs from the name "New name" in its JSON`},
				{Collection: "gods", ID: "odin", Kind: KindInvalidEntity, Detail: `unknown lore collection "gods"`},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in []Entity
			for _, e := range tt.entities {
				in = append(in, ent(t, e.c, e.j))
			}
			in = append(in, tt.raw...)
			got := Issues(in)
			if got == nil {
				t.Error("Issues returned nil")
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Issues (-want +got):\n%s", diff)
			}
			// The order of the input does not matter.
			slices.Reverse(in)
			if diff := cmp.Diff(got, Issues(in)); diff != "" {
				t.Errorf("Issues of reversed input (-first +reversed):\n%s", diff)
			}
		})
	}
}

func TestIssuesDeterministic(t *testing.T) {
	world := genWorld(200)
	// Break things all over the place.
	world = append(world,
		ent(t, "deities", `{"id":"x5","name":"Deity 7","pantheonId":"nowhere","parentIds":["x5","x6"]}`),
		ent(t, "eras", `{"id":"x9","name":"Era nine","startYear":100,"endYear":1}`),
		ent(t, "rumours", `{"id":"zz","name":"Rumour 3","subjects":[{"collection":"eras","id":"x1"},{"collection":"eras","id":"x999"}]}`),
		Entity{Collection: "spells", ID: "bad", Name: "Bad", JSON: []byte(`{"id":"bad","name":"Bad","level":99}`)},
		Entity{Collection: "zzz", ID: "a", Name: "A", JSON: []byte(`{}`)},
		Entity{Collection: "aaa", ID: "a", Name: "A", JSON: []byte(`{}`)},
	)
	want := Issues(world)
	if len(want) < 10 {
		t.Fatalf("only %d issues: %v", len(want), want)
	}
	rank := func(c string) int {
		if i := slices.Index(Collections(), c); i >= 0 {
			return i
		}
		return len(Collections())
	}
	for i := 1; i < len(want); i++ {
		a, b := want[i-1], want[i]
		if c := stdcmp.Compare(rank(a.Collection), rank(b.Collection)); c > 0 || c == 0 && (a.Collection > b.Collection || a.Collection == b.Collection && (a.ID > b.ID || a.ID == b.ID && a.Field > b.Field)) {
			t.Errorf("issues %d and %d out of order: %+v, %+v", i-1, i, a, b)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		rng.Shuffle(len(world), func(i, j int) { world[i], world[j] = world[j], world[i] })
		if diff := cmp.Diff(want, Issues(world)); diff != "" {
			t.Fatalf("Issues of shuffled input differ (-first +shuffled):\n%s", diff)
		}
	}
}

func TestCounts(t *testing.T) {
	got := Counts(nil)
	if len(got) != 17 {
		t.Errorf("Counts(nil) has %d keys", len(got))
	}
	for _, c := range Collections() {
		if v, ok := got[c]; !ok || v != 0 {
			t.Errorf("Counts(nil)[%s] = %d, %v", c, v, ok)
		}
	}
	got = Counts([]Entity{
		{Collection: "deities", ID: "a"}, {Collection: "deities", ID: "b"},
		{Collection: "events", ID: "a"}, {Collection: "gods", ID: "a"},
	})
	want := map[string]int{}
	for _, c := range Collections() {
		want[c] = 0
	}
	want["deities"], want["events"] = 2, 1
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Counts (-want +got):\n%s", diff)
	}
}

// rowTemplates hold one entity per collection; %[1]d is the row, %[2]d the
// previous row (for references within a collection), %[3]d a small number
// and %[4]d a year inside the row's era.
var rowTemplates = [...]string{
	`{"id":"x%[1]d","name":"Pantheon %[1]d","summary":"The gods of row %[1]d.","headDeityId":"x%[1]d","realm":"Above","tags":["gods"]}`,
	`{"id":"x%[1]d","name":"Deity %[1]d","summary":"A god.","pantheonId":"x%[1]d","parentIds":["x%[2]d"],"domains":["war","sea"],"symbol":"A spear","rank":"greater"}`,
	`{"id":"x%[1]d","name":"Faith %[1]d","deityIds":["x%[1]d","x%[2]d"],"tenets":["Be good."],"holySiteId":"x%[1]d"}`,
	`{"id":"x%[1]d","name":"Order %[1]d","faithId":"x%[1]d","headquartersId":"x%[1]d","leader":"Someone"}`,
	`{"id":"x%[1]d","name":"Tradition %[1]d","source":"arcane","forbidden":false,"cultureId":"x%[1]d"}`,
	`{"id":"x%[1]d","name":"Spell %[1]d","traditionId":"x%[1]d","level":%[3]d,"components":["verbal"]}`,
	`{"id":"x%[1]d","name":"Faction %[1]d","kind":"guild","headquartersId":"x%[1]d","allies":["x%[2]d"],"rivals":["x%[2]d"],"faithId":"x%[1]d"}`,
	`{"id":"x%[1]d","name":"Entry %[1]d","category":"history","related":[{"collection":"deities","id":"x%[1]d"},{"collection":"entries","id":"x%[2]d"}]}`,
	`{"id":"x%[1]d","name":"Artifact %[1]d","creatorId":"x%[1]d","keeperId":"x%[1]d","locationId":"x%[1]d","rarity":"rare","cursed":true}`,
	`{"id":"x%[1]d","name":"Rumour %[1]d","subjects":[{"collection":"factions","id":"x%[1]d"}],"truth":"unknown","notes":"Heard in a tavern in row %[1]d, repeated by everyone who drank there that night."}`,
	`{"id":"x%[1]d","name":"Dynasty %[1]d","cultureId":"x%[1]d","seatId":"x%[1]d","founded":%[4]d}`,
	`{"id":"x%[1]d","name":"Creature %[1]d","kind":"beast","dangerLevel":%[3]d,"intelligent":false,"lairId":"x%[1]d"}`,
	`{"id":"x%[1]d","name":"Festival %[1]d","faithId":"x%[1]d","cultureId":"x%[1]d","date":"Midwinter"}`,
	`{"id":"x%[1]d","name":"Stronghold %[1]d","kind":"fortress","factionId":"x%[1]d","population":%[1]d}`,
	`{"id":"x%[1]d","name":"Culture %[1]d","language":"Common","pantheonId":"x%[1]d","values":["Honour"]}`,
	`{"id":"x%[1]d","name":"Era %[1]d","startYear":%[5]d,"endYear":%[6]d}`,
	`{"id":"x%[1]d","name":"Event %[1]d","eraId":"x%[1]d","year":%[4]d,"locationId":"x%[1]d","participants":[{"collection":"factions","id":"x%[1]d"},{"collection":"events","id":"x%[2]d"}]}`,
}

// genWorld returns about n entities (whole rows of 17, at least 2 rows)
// without issues, in canonical form but not validated (Issues does that).
func genWorld(n int) []Entity {
	rows := max(2, (n+16)/17)
	out := make([]Entity, 0, rows*17)
	for r := range rows {
		prev := (r + rows - 1) % rows
		for ci, c := range Collections() {
			js := fmt.Sprintf(rowTemplates[ci], r, prev, r%10, r*10+5, r*10, r*10+9)
			name := js[strings.Index(js, `"name":"`)+8:]
			name = name[:strings.IndexByte(name, '"')]
			out = append(out, Entity{Collection: c, ID: fmt.Sprint("x", r), Name: name, JSON: []byte(js)})
		}
	}
	return out
}

func TestGenWorldIsClean(t *testing.T) {
	w := genWorld(170)
	for _, e := range w {
		v := ent(t, e.Collection, string(e.JSON))
		if string(v.JSON) != string(e.JSON) || v.Name != e.Name {
			t.Fatalf("generated entity not canonical:\n%s\n%s", e.JSON, v.JSON)
		}
	}
	if got := Issues(w); len(got) != 0 {
		t.Fatalf("generated world has issues: %v", got[:min(5, len(got))])
	}
}

func TestIssues100k(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	w := genWorld(100_000)
	// One dangling reference and one event outside its era every 1000 rows.
	var want int
	for i := range w {
		r := i / 17
		if r%1000 != 0 {
			continue
		}
		switch w[i].Collection {
		case "deities":
			w[i] = ent(t, "deities", fmt.Sprintf(`{"id":"x%d","name":"Deity %d","pantheonId":"gone"}`, r, r))
			want++
		case "events":
			w[i] = ent(t, "events", fmt.Sprintf(`{"id":"x%d","name":"Event %d","eraId":"x%d","year":-1}`, r, r, r))
			want++
		}
	}
	start := time.Now()
	got := Issues(w)
	t.Logf("Issues of %d entities: %d issues in %v", len(w), len(got), time.Since(start))
	if len(got) != want {
		t.Errorf("got %d issues, want %d: %v", len(got), want, got[:min(5, len(got))])
	}
}

func BenchmarkIssues(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		w := genWorld(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				Issues(w)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(w)), "ns/entity")
		})
	}
}
