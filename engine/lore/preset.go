package lore

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"slices"
)

// Preset is a named bundle of lore entities that an agent can add to a world
// with the add_preset operation of propose_lore.
type Preset struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Entities    []Entity `json:"entities"`
}

//go:embed presets/*.json
var presetFiles embed.FS

// presetOrder is the order of Presets: one preset per starter template, in
// template order, then the generic ones.
var presetOrder = []struct{ id, template string }{
	{"serpent-jungle", "starter-jungle"},
	{"lich-dungeon", "starter-dungeon"},
	{"merchant-city", "starter-city"},
	{"sun-desert", "starter-desert"},
	{"drowned-wetland", "starter-wetland"},
	{"sea-kings-archipelago", "starter-archipelago"},
	{"fire-mountain", "starter-volcanic"},
	{"deep-caverns", "starter-caverns"},
	{"classic-pantheon", ""},
	{"thieves-guild", ""},
}

var presets, presetByID, byTemplate = loadPresets()

func loadPresets() (list []Preset, ids, templates map[string]int) {
	ids = make(map[string]int, len(presetOrder))
	templates = make(map[string]int, len(presetOrder))
	for i, o := range presetOrder {
		p, err := loadPreset(o.id)
		if err != nil {
			panic(err)
		}
		list = append(list, p)
		ids[p.ID] = i
		if o.template != "" {
			templates[o.template] = i
		}
	}
	return list, ids, templates
}

// presetFile is the shape of presets/<id>.json: entities grouped by
// collection, each group in the order the preset lists them.
type presetFile struct {
	ID          string                       `json:"id"`
	Name        string                       `json:"name"`
	Description string                       `json:"description"`
	Entities    map[string][]json.RawMessage `json:"entities"`
}

// loadPreset reads and validates presets/<id>.json. Its entities come out
// in collection order, then file order.
func loadPreset(id string) (Preset, error) {
	raw, err := presetFiles.ReadFile("presets/" + id + ".json")
	if err != nil {
		return Preset{}, fmt.Errorf("lore: preset %s: %w", id, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var f presetFile
	if err := dec.Decode(&f); err != nil {
		return Preset{}, fmt.Errorf("lore: preset %s: %w", id, err)
	}
	if f.ID != id {
		return Preset{}, fmt.Errorf("lore: preset file %s.json has id %q", id, f.ID)
	}
	p := Preset{ID: f.ID, Name: f.Name, Description: f.Description}
	for c := range f.Entities {
		if _, ok := byName[c]; !ok {
			return Preset{}, fmt.Errorf("lore: preset %s: %w", id, unknownCollection(c))
		}
	}
	for _, c := range collections {
		for _, raw := range f.Entities[c.name] {
			e, err := Validate(c.name, raw)
			if err != nil {
				return Preset{}, fmt.Errorf("lore: preset %s: %w", id, err)
			}
			p.Entities = append(p.Entities, e)
		}
	}
	return p, nil
}

// Presets returns every preset, template presets first in template order
// (starter-jungle … starter-caverns), then the generic ones. The result is a
// copy.
func Presets() []Preset {
	out := make([]Preset, len(presets))
	for i, p := range presets {
		out[i] = p.clone()
	}
	return out
}

// PresetByID returns a copy of the preset with the given id.
func PresetByID(id string) (Preset, bool) {
	i, ok := presetByID[id]
	if !ok {
		return Preset{}, false
	}
	return presets[i].clone(), true
}

// ForTemplate returns a copy of the preset that fits a world created from
// the given template: one per starter-* template; none for empty-hex, an
// empty template or an unknown one.
func ForTemplate(template string) (Preset, bool) {
	i, ok := byTemplate[template]
	if !ok {
		return Preset{}, false
	}
	return presets[i].clone(), true
}

// ApplyPreset says what add_preset does to a world whose lore is existing:
// every entity of p whose (collection, id) is not in existing is added, in
// the preset's order; every entity whose (collection, id) already exists is
// skipped, never overwritten (what the GM wrote wins, even if it has another
// name or content), and reported in skipped as "collection/id". References
// of added entities to a skipped id then point at the existing entity; if
// that leaves a problem (say a duplicate name), Issues reports it. Applying
// the same preset twice adds nothing the second time. The added entities are
// copies; neither argument is changed.
func ApplyPreset(existing []Entity, p Preset) (added []Entity, skipped []string) {
	have := make(map[Ref]bool, len(existing))
	for _, e := range existing {
		have[Ref{e.Collection, e.ID}] = true
	}
	for _, e := range p.Entities {
		k := Ref{e.Collection, e.ID}
		if have[k] {
			skipped = append(skipped, e.Collection+"/"+e.ID)
			continue
		}
		have[k] = true // a preset never holds an id twice, but stay safe
		e.JSON = slices.Clone(e.JSON)
		added = append(added, e)
	}
	return added, skipped
}

func (p Preset) clone() Preset {
	p.Entities = slices.Clone(p.Entities)
	for i := range p.Entities {
		p.Entities[i].JSON = slices.Clone(p.Entities[i].JSON)
	}
	return p
}
