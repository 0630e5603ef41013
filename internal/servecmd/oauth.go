package servecmd

import (
	"flag"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/worldforge-go/worldforge/authserver"
	"github.com/worldforge-go/worldforge/internal/cli"
)

// oauthFlags are serve's OAuth flags: the built-in authorization server
// (package authserver) and its token lifetimes.
type oauthFlags struct {
	on                    *bool
	accessTTL, refreshTTL *time.Duration
}

func addOAuthFlags(fs *flag.FlagSet) *oauthFlags {
	return &oauthFlags{
		on:         fs.Bool("oauth", true, "serve the OAuth 2.1 endpoints (discovery, /register, /authorize, /token, /revoke), so MCP clients can connect by URL alone; needs the console (its consent page), and --public-url unless --addr is a loopback address"),
		accessTTL:  fs.Duration("oauth-access-ttl", authserver.DefaultAccessTTL, "lifetime of an OAuth access token"),
		refreshTTL: fs.Duration("oauth-refresh-ttl", authserver.DefaultRefreshTTL, "lifetime of an OAuth refresh token (each refresh issues a new one)"),
	}
}

func (f *oauthFlags) check() error {
	if *f.accessTTL < time.Second || *f.refreshTTL < time.Second {
		return cli.UsageErrorf("serve: --oauth-access-ttl and --oauth-refresh-ttl must be at least 1s")
	}
	if *f.refreshTTL < *f.accessTTL {
		return cli.UsageErrorf("serve: --oauth-refresh-ttl (%s) is shorter than --oauth-access-ttl (%s)", *f.refreshTTL, *f.accessTTL)
	}
	return nil
}

// oauthPublicURL is the OAuth issuer: --public-url, or on a loopback
// listener http://ADDR (the address actually bound); "" when OAuth is off
// or the server listens on a non-loopback address without --public-url.
func oauthPublicURL(on bool, publicURL string, ln net.Addr) string {
	if !on {
		return ""
	}
	if publicURL != "" {
		return strings.TrimSuffix(publicURL, "/")
	}
	tcp, ok := ln.(*net.TCPAddr)
	if !ok || !tcp.IP.IsLoopback() {
		return ""
	}
	return fmt.Sprintf("http://%s", ln.String())
}
