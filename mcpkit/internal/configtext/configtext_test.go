package configtext

import "testing"

func TestExpandVars(t *testing.T) {
	vars := map[string]string{"A": "1", "B_2": "two", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	tests := []struct {
		in, want string
		err      bool
	}{
		{in: "plain", want: "plain"},
		{in: "${A}", want: "1"},
		{in: "x${A}y${B_2}z", want: "x1ytwoz"},
		{in: "${NOPE:-d}", want: "d"},
		{in: "${NOPE:-}", want: ""},
		{in: "${A:-d}", want: "1"},
		{in: "${EMPTY:-d}", want: "d"},
		{in: "${NOPE:-a:-b}", want: "a:-b"},
		{in: "$A ${A}", want: "$A 1"},
		{in: "${NOPE}", err: true},
		{in: "${EMPTY}", want: ""},
		{in: "a${EMPTY}b", want: "ab"},
		{in: "${A", err: true},
		{in: "${}", err: true},
		{in: "${A-B}", err: true},
		{in: "${9}", err: true},
	}
	for _, tt := range tests {
		got, err := ExpandVars(tt.in, lookup)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ExpandVars(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}
