package engine

import (
	"testing"

	"pgregory.net/rapid"
)

func TestNeighbors(t *testing.T) {
	tests := []struct {
		x, y int
		want [6][2]int // E, NE, NW, W, SW, SE
	}{
		{2, 2, [6][2]int{{3, 2}, {2, 1}, {1, 1}, {1, 2}, {1, 3}, {2, 3}}},       // even row
		{2, 3, [6][2]int{{3, 3}, {3, 2}, {2, 2}, {1, 3}, {2, 4}, {3, 4}}},       // odd row: shoved right
		{0, 0, [6][2]int{{1, 0}, {0, -1}, {-1, -1}, {-1, 0}, {-1, 1}, {0, 1}}},  // not clipped
		{0, -1, [6][2]int{{1, -1}, {1, -2}, {0, -2}, {-1, -1}, {0, 0}, {1, 0}}}, // odd negative row
	}
	for _, tt := range tests {
		if got := Neighbors(tt.x, tt.y); got != tt.want {
			t.Errorf("Neighbors(%d, %d) = %v, want %v", tt.x, tt.y, got, tt.want)
		}
	}
}

func TestDistance(t *testing.T) {
	tests := []struct {
		ax, ay, bx, by, want int
	}{
		{0, 0, 0, 0, 0},
		{0, 0, 1, 0, 1},
		{0, 0, 0, 1, 1}, // (0,1) is south-east of (0,0)
		{1, 0, 0, 1, 1}, // (0,1) is south-west of (1,0)
		{0, 0, 1, 1, 2}, // SE then E
		{0, 0, 0, 2, 2}, // SE then SW: a zig-zag down column 0
		{0, 0, 3, 0, 3},
		{0, 0, 0, 4, 4},
		{0, 0, 2, 4, 4},   // four steps south-east
		{3, 3, 0, 0, 5},   // three south-east, two east
		{5, 2, 1, 2, 4},   // along a row
		{4, 1, 2, 5, 4},   // (4,1) SW (3,2) SW (3,3) SW (2,4) SE (2,5)
		{-1, -1, 0, 0, 1}, // negative coordinates work too
		{10, 10, 10, 10, 0},
	}
	for _, tt := range tests {
		if got := Distance(tt.ax, tt.ay, tt.bx, tt.by); got != tt.want {
			t.Errorf("Distance(%d,%d, %d,%d) = %d, want %d", tt.ax, tt.ay, tt.bx, tt.by, got, tt.want)
		}
		if got := Distance(tt.bx, tt.by, tt.ax, tt.ay); got != tt.want {
			t.Errorf("Distance(%d,%d, %d,%d) = %d, want %d (reversed)", tt.bx, tt.by, tt.ax, tt.ay, got, tt.want)
		}
	}
}

func TestAdjacent(t *testing.T) {
	tests := []struct {
		ax, ay, bx, by int
		want           bool
	}{
		{2, 2, 2, 2, true}, // the same cell
		{2, 2, 2, 1, true}, // NE of an even row
		{2, 2, 1, 1, true}, // NW of an even row
		{2, 2, 3, 1, false},
		{2, 3, 3, 2, true}, // NE of an odd row
		{2, 3, 1, 2, false},
		{2, 3, 3, 4, true},
		{2, 3, 1, 4, false},
		{0, 0, 2, 0, false},
	}
	for _, tt := range tests {
		if got := Adjacent(tt.ax, tt.ay, tt.bx, tt.by); got != tt.want {
			t.Errorf("Adjacent(%d,%d, %d,%d) = %v, want %v", tt.ax, tt.ay, tt.bx, tt.by, got, tt.want)
		}
	}
}

func TestHexProperties(t *testing.T) {
	coord := rapid.IntRange(-200, 200)
	rapid.Check(t, func(t *rapid.T) {
		ax, ay := coord.Draw(t, "ax"), coord.Draw(t, "ay")
		bx, by := coord.Draw(t, "bx"), coord.Draw(t, "by")
		cx, cy := coord.Draw(t, "cx"), coord.Draw(t, "cy")
		seen := map[[2]int]bool{}
		for _, n := range Neighbors(ax, ay) {
			if d := Distance(ax, ay, n[0], n[1]); d != 1 {
				t.Fatalf("neighbour %v of (%d,%d) at distance %d", n, ax, ay, d)
			}
			if !Adjacent(ax, ay, n[0], n[1]) || !Adjacent(n[0], n[1], ax, ay) {
				t.Fatalf("neighbour %v of (%d,%d) not adjacent", n, ax, ay)
			}
			seen[n] = true
		}
		if len(seen) != 6 {
			t.Fatalf("Neighbors(%d,%d) has duplicates", ax, ay)
		}
		dab := Distance(ax, ay, bx, by)
		if dab != Distance(bx, by, ax, ay) {
			t.Fatal("Distance is not symmetric")
		}
		if dab > Distance(ax, ay, cx, cy)+Distance(cx, cy, bx, by) {
			t.Fatal("triangle inequality fails")
		}
		if (dab == 0) != (ax == bx && ay == by) {
			t.Fatal("distance 0 iff same cell")
		}
		if Adjacent(ax, ay, bx, by) != (dab <= 1) {
			t.Fatal("Adjacent disagrees with Distance")
		}
		if x, y := fromAxial(toAxial(ax, ay)); x != ax || y != ay {
			t.Fatalf("axial round trip of (%d,%d) gave (%d,%d)", ax, ay, x, y)
		}
	})
}
