// Package loretest generates lore for tests and benchmarks: worlds of any
// size whose entities validate and reference each other, with integrity
// issues of every kind planted where asked.
package loretest

import (
	"fmt"
	"strings"

	wf "github.com/worldforge-go/worldforge"
)

// rowTemplates hold one entity per collection, in the order of
// wf.LoreCollections; %[1]d is the row, %[2]d the previous row (for
// references within a collection), %[3]d a small number, %[4]d a year
// inside the row's era, %[5]d and %[6]d the era's bounds. Every entity is
// in canonical form (see engine/lore).
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

// brokenTemplates replace the row's entity of some collections in a broken
// row, each with one issue of its own kind: a dangling reference, a self
// reference, a duplicate name (of the previous row's creature), an era
// whose start is after its end, an event outside its era, and an entity
// that does not validate (a spell of level 99) or whose stored name
// differs from its JSON (a culture).
var brokenTemplates = map[string]string{
	"deities":   `{"id":"x%[1]d","name":"Deity %[1]d","pantheonId":"gone%[1]d"}`,
	"factions":  `{"id":"x%[1]d","name":"Faction %[1]d","allies":["x%[1]d"]}`,
	"creatures": `{"id":"x%[1]d","name":"CREATURE %[2]d"}`,
	"eras":      `{"id":"x%[1]d","name":"Era %[1]d","startYear":%[6]d,"endYear":%[5]d}`,
	"events":    `{"id":"x%[1]d","name":"Event %[1]d","eraId":"x%[1]d","year":%[7]d}`,
	"spells":    `{"id":"x%[1]d","name":"Spell %[1]d","level":99}`,
	"cultures":  `{"id":"x%[1]d","name":"Culture %[1]d, renamed"}`,
}

// World returns about n entities (whole rows of 17, at least 2 rows) of
// one world, without WorldID. Row r holds one entity of every collection,
// all with id "x<r>", referring to each other and to row r-1 (row 0 to the
// last row). With every > 0, every every-th row (0, every, 2·every, …) is
// broken: it holds one issue of each kind list_lore reports (see
// brokenTemplates), the rest of the world none.
func World(n, every int) []wf.LoreEntity {
	rows := max(2, (n+16)/17)
	out := make([]wf.LoreEntity, 0, rows*17)
	for r := range rows {
		prev := (r + rows - 1) % rows
		broken := every > 0 && r%every == 0
		for ci, c := range wf.LoreCollections {
			tmpl := rowTemplates[ci]
			if b, ok := brokenTemplates[c]; ok && broken {
				tmpl = b
			}
			js := fmt.Sprintf(tmpl, r, prev, r%10, r*10+5, r*10, r*10+9, r*10+50)
			name := js[strings.Index(js, `"name":"`)+8:]
			name = name[:strings.IndexByte(name, '"')]
			if broken && c == "cultures" {
				name = fmt.Sprintf("Culture %d", r) // differs from the JSON's name
			}
			out = append(out, wf.LoreEntity{Collection: c, ID: fmt.Sprint("x", r), Name: name, JSON: []byte(js)})
		}
	}
	return out
}
