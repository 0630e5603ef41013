package lore

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestAnalyze(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	tests := []struct {
		name, coll, id, entName, json string
		want                          Facts
	}{
		{"references in field then position order", "factions", "f", "Guild",
			`{"id":"f","name":"Guild","allies":["b","a"],"headquartersId":"hq","rivals":["f"]}`,
			Facts{NameKey: "GUILD", Refs: []RefFact{
				{"headquartersId", 0, Ref{"strongholds", "hq"}},
				{"allies", 0, Ref{"factions", "b"}},
				{"allies", 1, Ref{"factions", "a"}},
				{"rivals", 0, Ref{"factions", "f"}},
			}}},
		{"any-collection references", "rumours", "r", "R",
			`{"id":"r","name":"R","subjects":[{"collection":"eras","id":"e"},{"collection":"rumours","id":"r"}]}`,
			Facts{NameKey: "R", Refs: []RefFact{{"subjects", 0, Ref{"eras", "e"}}, {"subjects", 1, Ref{"rumours", "r"}}}}},
		{"era bounds", "eras", "e", "Old", `{"id":"e","name":"Old","startYear":-5,"endYear":7}`,
			Facts{NameKey: "OLD", StartYear: i64(-5), EndYear: i64(7)}},
		{"open era", "eras", "e", "Open", `{"id":"e","name":"Open","endYear":7}`,
			Facts{NameKey: "OPEN", EndYear: i64(7)}},
		{"event", "events", "v", "Battle", `{"id":"v","name":"Battle","eraId":"e","year":3}`,
			Facts{NameKey: "BATTLE", EraID: "e", Year: i64(3), Refs: []RefFact{{"eraId", 0, Ref{"eras", "e"}}}}},
		{"invalid: no references or years", "events", "v", "Battle", `{"id":"v","name":"Battle","eraId":"e","year":3.5}`,
			Facts{NameKey: "BATTLE", Invalid: "year: must be an integer from -1000000000 to 1000000000, got 3.5"}},
		{"invalid: stored name differs", "deities", "d", "Old", `{"id":"d","name":"New"}`,
			Facts{NameKey: "OLD", Invalid: `stored name "Old" differs from the name "New" in its JSON`}},
		{"unknown collection", "gods", "d", "", `{"id":"d","name":"D"}`,
			Facts{Invalid: `unknown lore collection "gods"`}},
		{"folded name", "creatures", "k", "\u212araken", `{"id":"k","name":"\u212araken"}`,
			Facts{NameKey: foldKey("kraken")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Analyze(tt.coll, tt.id, tt.entName, []byte(tt.json))
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Analyze (-want +got):\n%s", diff)
			}
		})
	}
}

// issuesFromFacts finds the issues of a world whose (collection, id) pairs
// are unique from the entities' facts alone, as a store does with its
// queries: the facts hold everything Issues needs.
func issuesFromFacts(entities []Entity) []Issue {
	type key struct{ c, id string }
	facts := make([]Facts, len(entities))
	exists := map[key]bool{}
	first := map[key]string{} // (collection, name key) → smallest id
	eras := map[string]Facts{}
	for i, e := range entities {
		f := Analyze(e.Collection, e.ID, e.Name, e.JSON)
		facts[i] = f
		exists[key{e.Collection, e.ID}] = true
		if f.NameKey != "" {
			k := key{e.Collection, f.NameKey}
			if id, ok := first[k]; !ok || e.ID < id {
				first[k] = e.ID
			}
		}
		if e.Collection == "eras" && f.Invalid == "" {
			eras[e.ID] = f
		}
	}
	var out []Placed
	for i, e := range entities {
		f := facts[i]
		if f.Invalid != "" {
			out = append(out, Placed{Issue: InvalidEntityIssue(e.Collection, e.ID, f.Invalid)})
		}
		if f.NameKey != "" {
			if id := first[key{e.Collection, f.NameKey}]; id != e.ID {
				out = append(out, Placed{Issue: DuplicateNameIssue(e.Collection, e.ID, e.Name, id)})
			}
		}
		for _, r := range f.Refs {
			switch {
			case r.To == Ref{e.Collection, e.ID}:
				out = append(out, Placed{SelfReferenceIssue(e.Collection, e.ID, r.Field), r.Pos})
			case !exists[key{r.To.Collection, r.To.ID}]:
				out = append(out, Placed{DanglingReferenceIssue(e.Collection, e.ID, r.Field, r.To), r.Pos})
			}
		}
		if f.StartYear != nil && f.EndYear != nil && *f.StartYear > *f.EndYear {
			out = append(out, Placed{Issue: EraOrderIssue(e.Collection, e.ID, *f.StartYear, *f.EndYear)})
		}
		if era, ok := eras[f.EraID]; ok && f.Year != nil &&
			(era.StartYear != nil && *f.Year < *era.StartYear || era.EndYear != nil && *f.Year > *era.EndYear) {
			out = append(out, Placed{Issue: EventOutsideEraIssue(e.Collection, e.ID, *f.Year, f.EraID, era.StartYear, era.EndYear)})
		}
	}
	SortPlaced(out)
	issues := []Issue{}
	for _, p := range out {
		issues = append(issues, p.Issue)
	}
	return issues
}

// TestIssuesFromFacts: Issues is a function of the entities' facts: on a
// world broken in every way (unique ids), the issues found from facts alone
// are Issues'.
func TestIssuesFromFacts(t *testing.T) {
	world := genWorld(340)
	world = append(world,
		ent(t, "deities", `{"id":"y5","name":"Deity 7","pantheonId":"nowhere","parentIds":["y5","x6"]}`),
		ent(t, "eras", `{"id":"y9","name":"Era nine","startYear":100,"endYear":1}`),
		ent(t, "events", `{"id":"y1","name":"Late","eraId":"x3","year":-4}`),
		ent(t, "events", `{"id":"y2","name":"In a bad era","eraId":"y9","year":50}`),
		ent(t, "rumours", `{"id":"zz","name":"Rumour 3","subjects":[{"collection":"eras","id":"x1"},{"collection":"rumours","id":"zz"},{"collection":"eras","id":"x999"}]}`),
		Entity{Collection: "spells", ID: "bad", Name: "Bad", JSON: []byte(`{"id":"bad","name":"Bad","level":99}`)},
		Entity{Collection: "eras", ID: "broken", Name: "Broken", JSON: []byte(`{"id":"broken"`)},
		ent(t, "events", `{"id":"y3","name":"In a broken era","eraId":"broken","year":50}`),
		Entity{Collection: "zzz", ID: "a", Name: "A", JSON: []byte(`{}`)},
	)
	want := Issues(world)
	if len(want) < 10 {
		t.Fatalf("only %d issues", len(want))
	}
	if diff := cmp.Diff(want, issuesFromFacts(world)); diff != "" {
		t.Errorf("issues from facts (-Issues +facts):\n%s", diff)
	}
}
