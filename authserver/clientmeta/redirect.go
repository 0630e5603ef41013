package clientmeta

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// loopbackHosts are the hosts an http redirect URI may name (RFC 8252
// §7.3, and localhost, which §8.3 discourages but clients still use).
var loopbackHosts = []string{"127.0.0.1", "[::1]", "localhost"}

// validRedirectURIs checks a client's redirect URIs (see the package
// comment for the rules).
func validRedirectURIs(uris []string) ([]string, error) {
	if len(uris) == 0 {
		return nil, redirectError("redirect_uris is required")
	}
	if len(uris) > MaxRedirectURIs {
		return nil, redirectError("at most %d redirect_uris are allowed", MaxRedirectURIs)
	}
	for i, u := range uris {
		if err := validRedirectURI(u); err != nil {
			return nil, err
		}
		if slices.Contains(uris[:i], u) {
			return nil, redirectError("redirect URI %q is listed twice", u)
		}
	}
	return slices.Clone(uris), nil
}

func validRedirectURI(s string) *Error {
	if len(s) > MaxURILength {
		return redirectError("redirect URI is longer than %d bytes", MaxURILength)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f {
			return redirectError("%q has a space, control or non-ASCII character (percent-encode it)", s)
		}
	}
	u, err := url.Parse(s)
	if err != nil || s == "" {
		return redirectError("%q is not a URI", s)
	}
	if u.Scheme == "" {
		return redirectError("%q is not an absolute URI", s)
	}
	if u.Fragment != "" || strings.Contains(s, "#") {
		return redirectError("%q has a fragment", s)
	}
	if u.User != nil {
		return redirectError("%q has user information", s)
	}
	switch {
	case u.Scheme == "https":
		if u.Host == "" || u.Opaque != "" {
			return redirectError("%q has no host", s)
		}
	case u.Scheme == "http":
		if u.Opaque != "" || !isLoopbackHTTP(s) {
			return redirectError("%q: an http redirect URI must be on a loopback host (127.0.0.1, [::1] or localhost); use https", s)
		}
	case strings.Contains(u.Scheme, "."):
		// A native app's private-use scheme (RFC 8252 §7.1): a reverse
		// domain name, so never javascript:, data:, file: or the like.
		if u.Host != "" {
			return redirectError("%q: a private-use scheme URI takes no host (write %s:/path)", s, u.Scheme)
		}
	default:
		return redirectError("%q: a redirect URI must be https, http on a loopback host, or a native app's reverse-domain scheme", s)
	}
	return nil
}

// splitLoopback splits the raw URI s into its loopback host, its port
// ("" if none) and what follows the authority, if s is
// "http://" + loopback host [":" port] + rest, with rest empty or
// starting with '/' or '?'.
func splitLoopback(s string) (host, port, rest string, ok bool) {
	after, found := strings.CutPrefix(s, "http://")
	if !found {
		return "", "", "", false
	}
	end := strings.IndexAny(after, "/?#")
	if end < 0 {
		end = len(after)
	}
	authority, rest := after[:end], after[end:]
	for _, h := range loopbackHosts {
		p, found := strings.CutPrefix(authority, h)
		if !found {
			continue
		}
		if p == "" {
			return h, "", rest, true
		}
		port, found := strings.CutPrefix(p, ":")
		if !found || !validPort(port) {
			return "", "", "", false
		}
		return h, port, rest, true
	}
	return "", "", "", false
}

// validPort reports whether s is a decimal port 1-65535 without leading
// zeros.
func validPort(s string) bool {
	if s == "" || len(s) > 5 || s[0] == '0' {
		return false
	}
	n, err := strconv.Atoi(s)
	return err == nil && n >= 1 && n <= 65535 && strconv.Itoa(n) == s
}

func isLoopbackHTTP(s string) bool {
	_, _, _, ok := splitLoopback(s)
	return ok
}

// RedirectMatches reports whether got may be used as the redirect URI of
// a client that registered the redirect URIs registered: it equals one of
// them exactly, or both are http loopback URIs on the same host that
// differ only in the port (RFC 8252 §7.3: a native app listens on
// whichever port it can get).
func RedirectMatches(registered []string, got string) bool {
	if slices.Contains(registered, got) {
		return true
	}
	gh, _, grest, ok := splitLoopback(got)
	if !ok || strings.ContainsAny(grest, "#") {
		return false
	}
	for _, r := range registered {
		if rh, _, rrest, ok := splitLoopback(r); ok && rh == gh && rrest == grest {
			return true
		}
	}
	return false
}
