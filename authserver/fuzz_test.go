package authserver_test

import (
	"slices"
	"testing"

	"github.com/worldforge-go/worldforge/authserver"
)

// FuzzParseScope: a scope parameter either parses into distinct known
// scope names or is refused; it never panics.
func FuzzParseScope(f *testing.F) {
	for _, s := range []string{"", "world:read", "world:read  campaign:read", "*", "world:read world:read", "x\x00y", " \t\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := authserver.ParseScope(s)
		if err != nil {
			return
		}
		if len(got) == 0 {
			t.Fatalf("%q: no scopes and no error", s)
		}
		for i, sc := range got {
			if !slices.Contains(authserver.Scopes(), sc) || slices.Contains(got[:i], sc) {
				t.Fatalf("%q: scope %q unknown or repeated", s, sc)
			}
		}
	})
}
