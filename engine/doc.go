// Package engine is the world engine: hex grids and their JSON form,
// world templates and generation, resizing and PNG rendering. It is pure
// Go with no I/O apart from the io.Writer given to Render.
//
// # Grid model
//
// A world's map is a hex grid of pointy-top hexes in odd-r offset
// coordinates: (x, y) is (column, row), both 0-based, and odd rows are
// shoved right by half a cell. Cells are stored row-major. Each cell has a
// terrain (one ASCII byte) and an elevation 0–9. Grids are 1–MaxSide (4096)
// cells on each side. The neighbours of a cell (Neighbors) are, in order,
// east, north-east, north-west, west, south-west and south-east; Distance
// counts hex steps and Adjacent is true for the cell itself and its six
// neighbours.
//
// # Terrain codes
//
//	code  name           code  name
//	'.'   empty          'x'   swamp
//	'g'   grass          'l'   lava
//	'f'   forest         'a'   ash
//	'j'   jungle         'c'   cave-floor
//	'h'   hills          'k'   solid-rock
//	'm'   mountain       'u'   building
//	'w'   deep-water     'p'   street
//	's'   shallows       'n'   dungeon-floor
//	'b'   beach          'v'   dungeon-wall
//	'd'   desert         'i'   snow
//	'r'   badlands       't'   wall      (city walls; added for starter-city)
//	                     'y'   farmland  (fields; added for starter-city)
//
// # The world document
//
// A world's document is a JSON object. Its "grid" member is
//
//	{"type":"hex","layout":"odd-r","cols":C,"rows":R,"cellSizePx":32,
//	 "terrain":["<C codes>", … R strings],"elevation":["<C digits>", … R strings]}
//
// (written without whitespace, in exactly this key order, by
// Grid.AppendJSON). A blank grid has only type, layout, cols, rows and
// cellSizePx: every cell is '.' at elevation 0, and its JSON stays small
// however large it is. Older documents may hold just {"cols":16,"rows":12}:
// a missing type means "hex", a missing layout "odd-r", missing arrays a
// blank grid (if only one array is present the other defaults to '.' or 0),
// a missing cellSizePx 32. {"type":"freeform",…} is a freeform (image) map
// with no cells: grid operations refuse it with freeform_grid. Unknown keys
// inside "grid" are accepted and not kept when the grid is rewritten.
//
// Every other top-level member of the document ("template", "seed",
// "size", anything an author added) is kept by every operation here
// exactly as written — same key and value bytes, same order.
//
// # Templates and sizes
//
// Generate makes a world from a template: starter-jungle, starter-dungeon,
// starter-city, starter-desert, starter-wetland, starter-archipelago,
// starter-volcanic, starter-caverns or empty-hex ("" is a blank grid; any
// other id is unknown_template). Sizes are
//
//	small    32 × 24
//	medium   64 × 48  (the default)
//	large   128 × 96
//
// Generation is deterministic: the same template, seed, size and populate
// flag give a byte-identical document and identical POIs, places and
// pages. It uses integer arithmetic only (value noise in fixed point,
// cellular automata, room placement) and PCG streams from math/rand/v2
// seeded with the seed and the template id, so results do not depend on
// the platform. With Populate the world also gets POIs, an atlas tree (a
// level-1 region, four level-2 areas, level-3 places for its landmarks) and
// four starter wiki pages. Local keys ("poi-1", "place-1", "item-1") tie
// these together; the caller replaces POI and place keys with stored ids.
//
// # Errors
//
// Errors are *worldforge.Error values: bad_request (with a detail naming
// the problem, such as "grid.terrain[3] has 17 cells, want 16"),
// unknown_template, and the resize codes no_grid, freeform_grid, no_size,
// non_integer, too_small and out_of_bounds_cap, which render as the bare
// code.
package engine
