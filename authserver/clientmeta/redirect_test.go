package clientmeta

import (
	"strings"
	"testing"
)

func TestRedirectMatches(t *testing.T) {
	registered := []string{
		"https://app.example.com/cb",
		"http://127.0.0.1:33418/callback",
		"http://[::1]/cb?x=1",
		"http://localhost:8080/cb",
		"com.example.app:/oauth2redirect",
	}
	for _, tc := range []struct {
		got  string
		want bool
	}{
		{"https://app.example.com/cb", true},
		{"http://127.0.0.1:33418/callback", true},
		{"http://127.0.0.1:50000/callback", true},
		{"http://127.0.0.1/callback", true},
		{"http://[::1]:9/cb?x=1", true},
		{"http://[::1]/cb?x=1", true},
		{"http://localhost:1/cb", true},
		{"http://localhost/cb", true},
		{"com.example.app:/oauth2redirect", true},

		{"https://app.example.com/cb/", false},
		{"https://app.example.com/cb?x=1", false},
		{"https://app.example.com:443/cb", false},
		{"https://APP.example.com/cb", false},
		{"https://app.example.com/cb#f", false},
		{"https://app.example.com:8443/cb", false},
		{"http://app.example.com/cb", false},
		{"http://127.0.0.1:33418/callback/x", false},
		{"http://127.0.0.1:33418/callbac", false},
		{"http://127.0.0.1:33418/callback?x", false},
		{"http://127.0.0.1:33418/callback#", false},
		{"http://127.0.0.1:0/callback", false},
		{"http://127.0.0.1:65536/callback", false},
		{"http://127.0.0.1:080/callback", false},
		{"http://127.0.0.1:/callback", false},
		{"http://127.0.0.1:33418@evil.example/callback", false},
		{"http://127.0.0.1.evil.example/callback", false},
		{"http://localhost:1/callback", false}, // another host than the one registered
		{"http://[::1]:9/cb", false},
		{"https://127.0.0.1:33418/callback", false},
		{"HTTP://127.0.0.1:33418/callback", false},
		{"http://127.0.0.2:33418/callback", false},
		{"com.example.app:/oauth2redirect/x", false},
		{"com.example.evil:/oauth2redirect", false},
		{"", false},
	} {
		if got := RedirectMatches(registered, tc.got); got != tc.want {
			t.Errorf("RedirectMatches(%q) = %v, want %v", tc.got, got, tc.want)
		}
	}
	if RedirectMatches(nil, "http://127.0.0.1/cb") {
		t.Error("matched against no registered URIs")
	}
	if RedirectMatches([]string{"https://a.example/cb"}, "http://127.0.0.1/cb") {
		t.Error("a loopback URI matched a non-loopback registration")
	}
}

// FuzzRedirectMatches holds RedirectMatches to its definition: a URI
// always matches itself; a match is an exact one or an http loopback URI
// that differs from a registered one only in the port; and a match is
// never a URI with user information or a fragment unless registered so.
func FuzzRedirectMatches(f *testing.F) {
	f.Add("http://127.0.0.1:1234/cb", "http://127.0.0.1:5678/cb")
	f.Add("http://[::1]/cb", "http://[::1]:1/cb")
	f.Add("http://localhost/cb?a", "http://localhost:80/cb?a")
	f.Add("https://a.example/cb", "https://a.example/cb")
	f.Add("http://127.0.0.1/cb", "http://127.0.0.1:1@evil/cb")
	f.Fuzz(func(t *testing.T, registered, got string) {
		if !RedirectMatches([]string{registered}, registered) {
			t.Fatalf("%q does not match itself", registered)
		}
		if !RedirectMatches([]string{registered}, got) || got == registered {
			return
		}
		rh, _, rrest, rok := splitLoopback(registered)
		gh, gport, grest, gok := splitLoopback(got)
		if !rok || !gok || rh != gh || rrest != grest {
			t.Fatalf("%q matched %q without being a loopback port variant", got, registered)
		}
		if gport != "" && !validPort(gport) {
			t.Fatalf("%q matched with port %q", got, gport)
		}
		if strings.ContainsAny(got, "@#") && !strings.ContainsAny(registered, "@#") {
			t.Fatalf("%q matched %q with user information or a fragment", got, registered)
		}
	})
}
