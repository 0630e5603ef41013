package worldforge_test

import (
	"errors"
	"testing"

	wf "github.com/worldforge-go/worldforge"
)

// TestParseSeed: digits (after an optional minus) are that integer within
// ±2^53; any other text is SeedOfWord's integer, pinned here so that the
// mapping never changes across versions and platforms; larger integers are
// a bad_request.
func TestParseSeed(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"42", 42}, {"-7", -7}, {"007", 7}, {"-0", 0}, {"0", 0},
		{"9007199254740992", 1 << 53}, {"-9007199254740992", -1 << 53},
		{"dragon", -1054273131029940},
		{"", wf.SeedOfWord("")}, {"+7", wf.SeedOfWord("+7")}, {" 42", wf.SeedOfWord(" 42")},
		{"-", wf.SeedOfWord("-")}, {"4.2", wf.SeedOfWord("4.2")},
	} {
		got, err := wf.ParseSeed(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSeed(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	// FNV-1a 64 of "" is its offset basis 0xcbf29ce484222325; of "a",
	// 0xaf63dc4c8601ec8c: the top 54 bits, minus 2^53.
	for in, want := range map[string]int64{"": int64(uint64(0xcbf29ce484222325)>>10) - 1<<53, "a": int64(uint64(0xaf63dc4c8601ec8c)>>10) - 1<<53} {
		if got := wf.SeedOfWord(in); got != want {
			t.Errorf("SeedOfWord(%q) = %d, want %d", in, got, want)
		}
	}
	for _, in := range []string{"9007199254740993", "-9007199254740993", "99999999999999999999999"} {
		if _, err := wf.ParseSeed(in); !errors.Is(err, &wf.Error{Code: wf.EBadRequest}) {
			t.Errorf("ParseSeed(%q): %v, want bad_request", in, err)
		}
	}
	for _, n := range []int64{1<<53 + 1, -1<<53 - 1} {
		if err := wf.CheckSeed(n); !errors.Is(err, &wf.Error{Code: wf.EBadRequest}) {
			t.Errorf("CheckSeed(%d): %v", n, err)
		}
	}
	for _, w := range []string{"dragon", "", "🐉", "a long phrase of many words"} {
		if n := wf.SeedOfWord(w); n < -1<<53 || n >= 1<<53 {
			t.Errorf("SeedOfWord(%q) = %d, outside [-2^53, 2^53)", w, n)
		}
	}
}
