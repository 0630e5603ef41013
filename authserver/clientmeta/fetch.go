package clientmeta

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The defaults of a Fetcher.
const (
	DefaultFetchTimeout  = 5 * time.Second
	DefaultFetchMaxBytes = 5 << 10 // the draft's recommended cap on a metadata document
)

// Fetcher reads client ID metadata documents. Its zero value is ready to
// use; set its fields before the first Fetch and do not copy it after.
type Fetcher struct {
	// Client makes the requests. Nil means a client of the Fetcher's own.
	// Its *http.Transport (or http.DefaultTransport) is cloned with
	// the Fetcher's dialer, no proxy, and its redirects are never
	// followed; any other RoundTripper is refused unless AllowInternal is
	// set, since the dial-time address check could not be applied.
	Client *http.Client
	// Timeout bounds one fetch, from dial to the last byte
	// (DefaultFetchTimeout if zero).
	Timeout time.Duration
	// MaxBytes caps the document (DefaultFetchMaxBytes if zero).
	MaxBytes int64
	// AllowInternal lets a fetch reach loopback, private, link-local and
	// other non-public addresses: for tests and private deployments only.
	AllowInternal bool

	once  sync.Once
	hc    *http.Client
	hcErr error
}

// IsClientIDURL reports whether s has the shape of a client ID metadata
// document URL: https, a host, a path other than "/", no dot segments, no
// fragment, no user information, at most MaxURILength bytes.
func IsClientIDURL(s string) bool {
	if len(s) > MaxURILength || !strings.HasPrefix(s, "https://") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '#' {
			return false
		}
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Opaque != "" {
		return false
	}
	if u.Hostname() == "" || u.Path == "" || u.Path == "/" {
		return false
	}
	for seg := range strings.SplitSeq(u.EscapedPath(), "/") {
		if seg == "." || seg == ".." || strings.EqualFold(seg, "%2e") || strings.EqualFold(seg, "%2e%2e") ||
			strings.EqualFold(seg, ".%2e") || strings.EqualFold(seg, "%2e.") {
			return false
		}
	}
	return true
}

// Fetch reads and validates the metadata document clientID names. Every
// refusal — a clientID that is not a document URL, an address the Fetcher
// may not dial, a timeout, a status other than 200 (redirects included),
// a document larger than MaxBytes, one that is not valid client metadata
// or whose client_id is not clientID — is an *Error with code
// invalid_client, wrapping the cause where there is one.
func (f *Fetcher) Fetch(ctx context.Context, clientID string) (*Metadata, error) {
	if !IsClientIDURL(clientID) {
		return nil, &Error{Code: CodeInvalidClient, Description: "client_id is not an https URL with a path"}
	}
	f.once.Do(f.init)
	if f.hcErr != nil {
		return nil, f.hcErr
	}
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = DefaultFetchTimeout
	}
	maxBytes := f.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultFetchMaxBytes
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, clientID, nil)
	if err != nil {
		return nil, fetchError(err, "client_id is not a URL the server can fetch")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := f.hc.Do(req)
	if err != nil {
		return nil, fetchError(err, "fetching the client metadata document failed: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fetchError(nil, "the client metadata document answered %s (want 200; redirects are not followed)", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return nil, fetchError(err, "reading the client metadata document failed: %v", err)
	}
	if int64(len(body)) > maxBytes {
		return nil, fetchError(nil, "the client metadata document is larger than %d bytes", maxBytes)
	}
	md, err := parseDocument(body, clientID)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, fetchError(e, "the client metadata document is not usable: %s", e.Description)
		}
		return nil, fetchError(err, "the client metadata document is not usable: %v", err)
	}
	return md, nil
}

func fetchError(cause error, format string, args ...any) *Error {
	return &Error{Code: CodeInvalidClient, Description: fmt.Sprintf(format, args...), err: cause}
}

// parseDocument validates a metadata document served at clientID.
func parseDocument(body []byte, clientID string) (*Metadata, error) {
	f, err := decodeFields(body)
	if err != nil {
		return nil, err
	}
	if f.clientID != clientID {
		return nil, metadataError("its client_id %q is not the URL it was fetched from", f.clientID)
	}
	if f.hasSecret {
		return nil, metadataError("a metadata document must not carry a client_secret")
	}
	if f.authMethod != "" && f.authMethod != AuthMethodNone {
		return nil, metadataError("token_endpoint_auth_method %q is not supported (supported: none)", f.authMethod)
	}
	return f.validate()
}

// ErrInternalAddress is the cause of a fetch refused because the client
// ID's host resolved to an address the Fetcher may not dial.
var ErrInternalAddress = errors.New("clientmeta: address is not a public one")

// init builds the http.Client the Fetcher uses.
func (f *Fetcher) init() {
	base := f.Client
	if base == nil {
		base = &http.Client{}
	}
	hc := *base
	hc.Jar = nil
	hc.Timeout = 0 // the context's deadline bounds a fetch
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	tr, ok := rt.(*http.Transport)
	switch {
	case ok:
		tr = tr.Clone()
		tr.Proxy = nil // a proxy would dial the address on our behalf, unchecked
		tr.DialTLSContext = nil
		tr.DialTLS = nil // cleared so that DialContext is the only way out
		dialer := &net.Dialer{Timeout: DefaultFetchTimeout}
		if !f.AllowInternal {
			dialer.Control = refuseInternal
		}
		tr.DialContext = dialer.DialContext
		hc.Transport = tr
	case !f.AllowInternal:
		f.hcErr = fmt.Errorf("clientmeta: Fetcher.Client's transport is a %T, not an *http.Transport: the address check cannot be applied", rt)
		return
	}
	f.hc = &hc
}

// refuseInternal is a net.Dialer's Control: it refuses to connect to an
// address that is not a public unicast one, after name resolution, so a
// host name that resolves (or is rebound) to an internal address is caught.
func refuseInternal(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %q", ErrInternalAddress, address)
	}
	if !isPublic(ap.Addr()) {
		return fmt.Errorf("%w: %s", ErrInternalAddress, ap.Addr())
	}
	return nil
}

// nonPublic are special-purpose ranges (RFC 6890 and its successors) that
// netip's predicates do not cover and that no client's metadata should be
// served from.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),   // NAT64: may reach any IPv4 address
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("2001::/32"), // Teredo
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("2002::/16"), // 6to4: embeds an IPv4 address
	netip.MustParsePrefix("fec0::/10"),
}

// isPublic reports whether a is a public unicast address.
func isPublic(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || !a.IsGlobalUnicast() || a.IsPrivate() || a.IsLoopback() ||
		a.IsLinkLocalUnicast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}
