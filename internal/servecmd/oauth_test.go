package servecmd

import (
	"net"
	"testing"
)

func TestOAuthPublicURL(t *testing.T) {
	loop := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	any := &net.TCPAddr{IP: net.IPv4zero, Port: 8080}
	for _, c := range []struct {
		on     bool
		public string
		addr   net.Addr
		want   string
	}{
		{true, "", loop, "http://127.0.0.1:8080"},
		{true, "https://wf.example/", loop, "https://wf.example"},
		{true, "https://wf.example", any, "https://wf.example"},
		{true, "", any, ""},
		{true, "", &net.TCPAddr{IP: net.IPv6loopback, Port: 1}, "http://[::1]:1"},
		{false, "https://wf.example", loop, ""},
	} {
		if got := oauthPublicURL(c.on, c.public, c.addr); got != c.want {
			t.Errorf("oauthPublicURL(%v, %q, %v) = %q, want %q", c.on, c.public, c.addr, got, c.want)
		}
	}
}
