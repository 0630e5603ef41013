package engine

import "image/color"

// Terrain is the terrain of one cell: a single printable ASCII byte, the
// character stored in the grid's terrain rows.
type Terrain byte

// The terrain codes. See the package documentation for the table.
const (
	Empty        Terrain = '.'
	Grass        Terrain = 'g'
	Forest       Terrain = 'f'
	Jungle       Terrain = 'j'
	Hills        Terrain = 'h'
	Mountain     Terrain = 'm'
	DeepWater    Terrain = 'w'
	Shallows     Terrain = 's'
	Beach        Terrain = 'b'
	Desert       Terrain = 'd'
	Badlands     Terrain = 'r'
	Swamp        Terrain = 'x'
	Lava         Terrain = 'l'
	Ash          Terrain = 'a'
	CaveFloor    Terrain = 'c'
	Rock         Terrain = 'k'
	Building     Terrain = 'u'
	Street       Terrain = 'p'
	DungeonFloor Terrain = 'n'
	DungeonWall  Terrain = 'v'
	Snow         Terrain = 'i'
	Wall         Terrain = 't'
	Farmland     Terrain = 'y'
)

type terrainInfo struct {
	code  Terrain
	name  string
	color color.NRGBA
}

// terrainTable is the terrain list in its documented order. Its order is
// also the order of Terrains and of the render palette.
var terrainTable = [...]terrainInfo{
	{Empty, "empty", rgb(0xd9, 0xd6, 0xcc)},
	{Grass, "grass", rgb(0x7c, 0xb3, 0x42)},
	{Forest, "forest", rgb(0x2e, 0x7d, 0x32)},
	{Jungle, "jungle", rgb(0x0f, 0x5e, 0x3a)},
	{Hills, "hills", rgb(0xa3, 0x8b, 0x5c)},
	{Mountain, "mountain", rgb(0x8a, 0x86, 0x82)},
	{DeepWater, "deep-water", rgb(0x1e, 0x4f, 0x91)},
	{Shallows, "shallows", rgb(0x4f, 0xa3, 0xd1)},
	{Beach, "beach", rgb(0xec, 0xdc, 0xa4)},
	{Desert, "desert", rgb(0xe3, 0xc1, 0x6f)},
	{Badlands, "badlands", rgb(0xb5, 0x65, 0x3a)},
	{Swamp, "swamp", rgb(0x5b, 0x6b, 0x3a)},
	{Lava, "lava", rgb(0xe2, 0x40, 0x1c)},
	{Ash, "ash", rgb(0x7d, 0x77, 0x70)},
	{CaveFloor, "cave-floor", rgb(0x8a, 0x7b, 0x6a)},
	{Rock, "solid-rock", rgb(0x3a, 0x36, 0x33)},
	{Building, "building", rgb(0xa0, 0x52, 0x2d)},
	{Street, "street", rgb(0xb4, 0xb0, 0xa8)},
	{DungeonFloor, "dungeon-floor", rgb(0xc2, 0xb2, 0x80)},
	{DungeonWall, "dungeon-wall", rgb(0x4a, 0x44, 0x40)},
	{Snow, "snow", rgb(0xf2, 0xf6, 0xfa)},
	{Wall, "wall", rgb(0x6d, 0x6a, 0x66)},
	{Farmland, "farmland", rgb(0xc8, 0xb4, 0x5a)},
}

func rgb(r, g, b uint8) color.NRGBA { return color.NRGBA{r, g, b, 0xff} }

// terrainIndex maps a byte to its index in terrainTable plus one; zero
// means the byte is not a terrain code.
var terrainIndex [256]uint8

func init() {
	for i, t := range terrainTable {
		terrainIndex[t.code] = uint8(i + 1)
	}
}

// Valid reports whether t is one of the terrain codes.
func (t Terrain) Valid() bool { return terrainIndex[t] != 0 }

// Name returns the terrain's name ("grass", "deep-water", …), or "" if t is
// not a terrain code.
func (t Terrain) Name() string {
	if i := terrainIndex[t]; i != 0 {
		return terrainTable[i-1].name
	}
	return ""
}

// String returns the name, or the quoted byte for an unknown code.
func (t Terrain) String() string {
	if n := t.Name(); n != "" {
		return n
	}
	return "Terrain(" + quoteByte(byte(t)) + ")"
}

// Color returns the colour the renderer fills the terrain with at middle
// elevation; unknown codes are magenta.
func (t Terrain) Color() color.NRGBA {
	if i := terrainIndex[t]; i != 0 {
		return terrainTable[i-1].color
	}
	return rgb(0xff, 0x00, 0xff)
}

// TerrainByName returns the terrain with the given name.
func TerrainByName(name string) (Terrain, bool) {
	for _, t := range terrainTable {
		if t.name == name {
			return t.code, true
		}
	}
	return 0, false
}

// Terrains returns every terrain code in table order.
func Terrains() []Terrain {
	out := make([]Terrain, len(terrainTable))
	for i, t := range terrainTable {
		out[i] = t.code
	}
	return out
}

func quoteByte(b byte) string {
	const hex = "0123456789abcdef"
	if b >= 0x20 && b < 0x7f && b != '\'' && b != '\\' {
		return "'" + string(rune(b)) + "'"
	}
	return `'\x` + string(hex[b>>4]) + string(hex[b&15]) + "'"
}
