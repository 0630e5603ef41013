package worldforge

import (
	"hash/fnv"
	"strconv"
)

// World seeds are integers within ±MaxSeed, which a JavaScript number
// holds exactly, so that every client can pass a seed back unchanged.
// worldforge_create_world also takes a seed as text (ParseSeed).
const MaxSeed = 1 << 53

// SeedRangeText names the seed range in errors and descriptions.
const SeedRangeText = "-9007199254740992 to 9007199254740992 (±2^53)"

// CheckSeed refuses a seed outside ±MaxSeed.
func CheckSeed(n int64) error {
	if n < -MaxSeed || n > MaxSeed {
		return BadRequest("seed %d is out of range: seeds are integers from %s, which JavaScript clients hold exactly", n, SeedRangeText)
	}
	return nil
}

// ParseSeed reads a seed given as text. Digits, optionally after one
// leading minus sign ("42", "-7", "007"), are that integer, which must be
// within ±MaxSeed. Any other text (a word such as "dragon", "+7", "",
// " 42") maps to SeedOfWord(s). The mapping never changes, so a text gives
// the same world in every version and on every platform.
func ParseSeed(s string) (int64, error) {
	if !isDecimal(s) {
		return SeedOfWord(s), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < -MaxSeed || n > MaxSeed {
		return 0, BadRequest("seed %q is out of range: seeds are integers from %s, which JavaScript clients hold exactly", s, SeedRangeText)
	}
	return n, nil
}

// SeedOfWord maps a text to a seed: the top 54 bits of the 64-bit FNV-1a
// hash of its UTF-8 bytes, minus 2^53, which lies in [-2^53, 2^53).
// SeedOfWord("dragon") is the seed a world created with seed "dragon" has.
func SeedOfWord(s string) int64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return int64(h.Sum64()>>10) - MaxSeed
}

// isDecimal reports whether s is digits after at most one leading minus.
func isDecimal(s string) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
