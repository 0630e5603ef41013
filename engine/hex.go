package engine

// Hex geometry for pointy-top hexes in odd-r offset coordinates: (x, y) is
// (column, row) and odd rows sit half a cell to the right.

// neighborOffsets[y&1] lists the (dx, dy) of the six neighbours of a cell in
// an even (0) or odd (1) row, in the order east, north-east, north-west,
// west, south-west, south-east.
var neighborOffsets = [2][6][2]int{
	{{+1, 0}, {0, -1}, {-1, -1}, {-1, 0}, {-1, +1}, {0, +1}},
	{{+1, 0}, {+1, -1}, {0, -1}, {-1, 0}, {0, +1}, {+1, +1}},
}

// Neighbors returns the six neighbours of (x, y) in the order east,
// north-east, north-west, west, south-west, south-east. They are not
// clipped to any grid: use (*Grid).InBounds.
func Neighbors(x, y int) [6][2]int {
	var out [6][2]int
	for i, d := range neighborOffsets[y&1] {
		out[i] = [2]int{x + d[0], y + d[1]}
	}
	return out
}

// Adjacent reports whether b is a or one of its six neighbours.
func Adjacent(ax, ay, bx, by int) bool { return Distance(ax, ay, bx, by) <= 1 }

// Distance returns the number of hex steps between two cells.
func Distance(ax, ay, bx, by int) int {
	aq, ar := toAxial(ax, ay)
	bq, br := toAxial(bx, by)
	dq, dr := aq-bq, ar-br
	return (abs(dq) + abs(dr) + abs(dq+dr)) / 2
}

// toAxial converts odd-r offset coordinates to axial (q, r). y&1 is 1 for
// odd negative rows too (two's complement), so the division is exact.
func toAxial(x, y int) (q, r int) { return x - (y-(y&1))/2, y }

// fromAxial converts axial (q, r) to odd-r offset coordinates.
func fromAxial(q, r int) (x, y int) { return q + (r-(r&1))/2, r }

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
