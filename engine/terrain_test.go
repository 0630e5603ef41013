package engine

import "testing"

func TestTerrainTable(t *testing.T) {
	all := Terrains()
	if len(all) != 23 {
		t.Fatalf("len(Terrains()) = %d, want 23", len(all))
	}
	names := map[string]bool{}
	colors := map[[3]uint8]Terrain{}
	for _, tr := range all {
		if tr < 0x21 || tr > 0x7e || tr == '"' || tr == '\\' {
			t.Errorf("terrain code %q is not a plain printable character", byte(tr))
		}
		n := tr.Name()
		if n == "" || names[n] {
			t.Errorf("terrain %q: empty or duplicate name %q", byte(tr), n)
		}
		names[n] = true
		if got, ok := TerrainByName(n); !ok || got != tr {
			t.Errorf("TerrainByName(%q) = %q, %v", n, byte(got), ok)
		}
		c := tr.Color()
		if o, dup := colors[[3]uint8{c.R, c.G, c.B}]; dup {
			t.Errorf("terrains %s and %s share a colour", o, tr)
		}
		colors[[3]uint8{c.R, c.G, c.B}] = tr
		if !tr.Valid() || tr.String() != n {
			t.Errorf("terrain %q: Valid=%v String=%q", byte(tr), tr.Valid(), tr.String())
		}
	}
	for code, name := range map[Terrain]string{
		'.': "empty", 'g': "grass", 'f': "forest", 'j': "jungle", 'h': "hills", 'm': "mountain",
		'w': "deep-water", 's': "shallows", 'b': "beach", 'd': "desert", 'r': "badlands", 'x': "swamp",
		'l': "lava", 'a': "ash", 'c': "cave-floor", 'k': "solid-rock", 'u': "building", 'p': "street",
		'n': "dungeon-floor", 'v': "dungeon-wall", 'i': "snow", 't': "wall", 'y': "farmland",
	} {
		if code.Name() != name {
			t.Errorf("%q.Name() = %q, want %q", byte(code), code.Name(), name)
		}
	}
	if Terrain('Z').Valid() || Terrain('Z').Name() != "" || Terrain('Z').String() != "Terrain('Z')" {
		t.Errorf("unknown terrain: Valid=%v Name=%q String=%q", Terrain('Z').Valid(), Terrain('Z').Name(), Terrain('Z').String())
	}
	if _, ok := TerrainByName("lava-lake"); ok {
		t.Error("TerrainByName accepted an unknown name")
	}
}
