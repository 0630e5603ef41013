package cli

import "testing"

// TestParseBytes reads the sizes -max-rss takes.
func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"128MiB": 128 << 20, "1GiB": 1 << 30, "512KiB": 512 << 10, "2MB": 2e6, "4096": 4096, "10 B": 10} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "-1MiB", "0", "1.5GiB", "1TiB", "99999999999GiB"} {
		if _, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) succeeded", in)
		}
	}
}
