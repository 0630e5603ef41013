package lore

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var templates = []string{
	"starter-jungle", "starter-dungeon", "starter-city", "starter-desert",
	"starter-wetland", "starter-archipelago", "starter-volcanic", "starter-caverns",
}

func TestPresets(t *testing.T) {
	ps := Presets()
	var ids []string
	for _, p := range ps {
		ids = append(ids, p.ID)
	}
	want := []string{"serpent-jungle", "lich-dungeon", "merchant-city", "sun-desert", "drowned-wetland",
		"sea-kings-archipelago", "fire-mountain", "deep-caverns", "classic-pantheon", "thieves-guild"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("preset ids (-want +got):\n%s", diff)
	}
	owner := map[Ref]string{}       // (collection, id) → preset
	names := map[[2]string]string{} // (collection, folded name) → preset
	var all []Entity
	for _, p := range ps {
		t.Run(p.ID, func(t *testing.T) {
			if !slugRE.MatchString(p.ID) || p.Name == "" || p.Description == "" {
				t.Errorf("preset header: %q %q %q", p.ID, p.Name, p.Description)
			}
			if n := len(p.Entities); n < 8 || n > 20 {
				t.Errorf("%d entities, want 8 to 20", n)
			}
			colls := map[string]bool{}
			refs := 0
			for i, e := range p.Entities {
				colls[e.Collection] = true
				v, err := Validate(e.Collection, e.JSON)
				if err != nil {
					t.Errorf("%s/%s: %v", e.Collection, e.ID, err)
					continue
				}
				if diff := cmp.Diff(e, v); diff != "" {
					t.Errorf("%s/%s is not canonical (-stored +validated):\n%s", e.Collection, e.ID, diff)
				}
				if i > 0 && slices.Index(Collections(), p.Entities[i-1].Collection) > slices.Index(Collections(), e.Collection) {
					t.Errorf("entities not in collection order at %s/%s", e.Collection, e.ID)
				}
				k := Ref{e.Collection, e.ID}
				if o, ok := owner[k]; ok {
					t.Errorf("%s/%s also in preset %s", e.Collection, e.ID, o)
				}
				owner[k] = p.ID
				nk := [2]string{e.Collection, foldKey(e.Name)}
				if o, ok := names[nk]; ok && o != p.ID {
					t.Errorf("%s name %q also in preset %s", e.Collection, e.Name, o)
				}
				names[nk] = p.ID
				var m map[string]any
				json.Unmarshal(e.JSON, &m)
				for _, f := range byName[e.Collection].fields {
					if f.isRef() {
						forEachRef(m[f.name], f, func(int, Ref) { refs++ })
					}
				}
			}
			if len(colls) < 6 {
				t.Errorf("entities in %d collections, want at least 6", len(colls))
			}
			if refs < len(p.Entities)/2 {
				t.Errorf("only %d cross-references among %d entities", refs, len(p.Entities))
			}
			if is := Issues(p.Entities); len(is) != 0 {
				t.Errorf("issues: %+v", is)
			}
			t.Logf("%d entities in %d collections, %d references", len(p.Entities), len(colls), refs)
		})
		all = append(all, p.Entities...)
	}
	if is := Issues(all); len(is) != 0 {
		t.Errorf("all presets together have issues: %+v", is)
	}
}

func TestForTemplate(t *testing.T) {
	seen := map[string]bool{}
	for _, tmpl := range templates {
		p, ok := ForTemplate(tmpl)
		if !ok {
			t.Errorf("ForTemplate(%q): none", tmpl)
			continue
		}
		if seen[p.ID] {
			t.Errorf("ForTemplate(%q) = %s, already used by another template", tmpl, p.ID)
		}
		seen[p.ID] = true
		if q, ok := PresetByID(p.ID); !ok || !cmp.Equal(p, q) {
			t.Errorf("ForTemplate(%q) = %s differs from PresetByID", tmpl, p.ID)
		}
	}
	for _, tmpl := range []string{"empty-hex", "", "starter-moon", "STARTER-JUNGLE"} {
		if p, ok := ForTemplate(tmpl); ok {
			t.Errorf("ForTemplate(%q) = %s", tmpl, p.ID)
		}
	}
	if _, ok := PresetByID("nope"); ok {
		t.Error(`PresetByID("nope") found`)
	}
	for _, id := range []string{"classic-pantheon", "thieves-guild"} {
		if _, ok := PresetByID(id); !ok {
			t.Errorf("PresetByID(%q) not found", id)
		}
	}
}

func TestPresetsAreCopies(t *testing.T) {
	p, _ := PresetByID("thieves-guild")
	before := fmt.Sprint(p.Entities[0].JSON)
	p.Entities[0].JSON[2] = 'X'
	p.Entities[1] = Entity{}
	q, _ := PresetByID("thieves-guild")
	if fmt.Sprint(q.Entities[0].JSON) != before || q.Entities[1].ID == "" {
		t.Error("PresetByID returned shared state")
	}
	ps := Presets()
	ps[0].Entities = nil
	if len(Presets()[0].Entities) == 0 {
		t.Error("Presets returned shared state")
	}
}

func TestApplyPreset(t *testing.T) {
	p, _ := PresetByID("classic-pantheon")
	keys := func(es []Entity) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Collection+"/"+e.ID)
		}
		return out
	}

	added, skipped := ApplyPreset(nil, p)
	if diff := cmp.Diff(keys(p.Entities), keys(added)); diff != "" || skipped != nil {
		t.Errorf("into an empty world: added (-want +got):\n%s\nskipped %v", diff, skipped)
	}

	// The GM already has a deity "aurelion" (another one) and a pantheon
	// whose id matches a deity of the preset (not a collision).
	mine := []Entity{
		ent(t, "deities", `{"id":"aurelion","name":"Aurelion the Grey","summary":"Mine."}`),
		ent(t, "pantheons", `{"id":"veyra","name":"Veyra's court"}`),
		ent(t, "festivals", `{"id":"feast-of-first-light","name":"First Light"}`),
	}
	before := fmt.Sprint(mine)
	added, skipped = ApplyPreset(mine, p)
	if diff := cmp.Diff([]string{"deities/aurelion", "festivals/feast-of-first-light"}, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if len(added) != len(p.Entities)-2 || slices.Contains(keys(added), "deities/aurelion") || !slices.Contains(keys(added), "deities/veyra") {
		t.Errorf("added %v", keys(added))
	}
	if fmt.Sprint(mine) != before {
		t.Error("ApplyPreset changed existing")
	}
	// References of added entities to skipped ones resolve to the GM's.
	if is := Issues(append(slices.Clone(mine), added...)); len(is) != 0 {
		t.Errorf("issues after applying: %+v", is)
	}
	// Added entities are copies.
	added[0].JSON[0] = 'X'
	if q, _ := PresetByID("classic-pantheon"); q.Entities[0].JSON[0] != '{' || p.Entities[0].JSON[0] != '{' {
		t.Error("ApplyPreset returned shared JSON")
	}

	// Applying twice adds nothing.
	world := append(slices.Clone(mine), added...)
	again, skipped := ApplyPreset(world, p)
	if len(again) != 0 || len(skipped) != len(p.Entities) {
		t.Errorf("second apply: added %v, skipped %v", keys(again), skipped)
	}
}
