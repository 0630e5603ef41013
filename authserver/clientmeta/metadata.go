package clientmeta

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/worldforge-go/worldforge/internal/jsonscan"
)

// The limits on what a client may say about itself.
const (
	MaxRegistrationBytes = 16 << 10 // a registration request body
	MaxRedirectURIs      = 10
	MaxURILength         = 2000 // bytes, for every URI
	MaxNameLength        = 200  // characters, for client_name and the software fields
	MaxScopeLength       = 1000 // bytes
)

// The error codes an *Error carries.
const (
	CodeInvalidClientMetadata = "invalid_client_metadata" // RFC 7591 §3.2.2
	CodeInvalidRedirectURI    = "invalid_redirect_uri"    // RFC 7591 §3.2.2
	CodeInvalidClient         = "invalid_client"          // RFC 6749 §5.2: a metadata document that cannot be used
)

// The grant types, response type and token endpoint authentication method
// a client may register.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantRefreshToken      = "refresh_token"
	ResponseTypeCode       = "code"
	AuthMethodNone         = "none"
)

// Metadata is a client's validated metadata (RFC 7591 §2). ClientID is
// empty for a registration (the server assigns one) and the document's URL
// for a metadata document. GrantTypes and ResponseTypes are filled in with
// their defaults when the client left them out, and
// TokenEndpointAuthMethod is always "none".
type Metadata struct {
	ClientID, ClientName, ClientURI, LogoURI, Scope, TokenEndpointAuthMethod, SoftwareID, SoftwareVersion string
	RedirectURIs, GrantTypes, ResponseTypes                                                               []string
}

// Error is a refusal with its OAuth error code (one of the Code…
// constants) and a description for the error_description member.
type Error struct {
	Code, Description string
	err               error // the cause, for errors.Is (a fetch's timeout)
}

func (e *Error) Error() string { return e.Code + ": " + e.Description }

// Unwrap returns the cause of a fetch failure, if there is one.
func (e *Error) Unwrap() error { return e.err }

func metadataError(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidClientMetadata, Description: fmt.Sprintf(format, args...)}
}

func redirectError(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidRedirectURI, Description: fmt.Sprintf(format, args...)}
}

// ParseRegistration validates an RFC 7591 client registration request
// body and returns the metadata to register. A refusal is an *Error with
// code invalid_client_metadata or invalid_redirect_uri.
func ParseRegistration(body []byte) (*Metadata, error) {
	if len(body) > MaxRegistrationBytes {
		return nil, metadataError("registration request is larger than %d bytes", MaxRegistrationBytes)
	}
	f, err := decodeFields(body)
	if err != nil {
		return nil, err
	}
	switch f.authMethod {
	case "", AuthMethodNone, "client_secret_post", "client_secret_basic":
		// Every client is public: see the package comment.
	default:
		return nil, metadataError("token_endpoint_auth_method %q is not supported (supported: none)", f.authMethod)
	}
	f.clientID = "" // the server assigns it
	return f.validate()
}

// fields are the members of a registration or metadata document that
// clientmeta reads, as written (strings) and whether each was present.
type fields struct {
	clientID, clientName, clientURI, logoURI, scope, authMethod, softwareID, softwareVersion string
	redirectURIs, grantTypes, responseTypes                                                  []string
	hasClientID, hasSecret                                                                   bool
}

// decodeFields reads the known members of the JSON object body by their
// exact keys. It refuses invalid UTF-8, anything but one object, a repeated
// key, and a known member of the wrong type; null counts as absent.
func decodeFields(body []byte) (*fields, error) {
	if !utf8.Valid(body) {
		return nil, metadataError("body is not valid UTF-8")
	}
	trimmed := jsonscan.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, metadataError("body is not a JSON object")
	}
	members, err := jsonscan.Strict.Split(trimmed)
	if err != nil {
		return nil, metadataError("body is not a JSON object: %v", err)
	}
	var f fields
	seen := make(map[string]bool, len(members))
	for _, m := range members {
		key := m.Key()
		if seen[key] {
			return nil, metadataError("member %q appears more than once", key)
		}
		seen[key] = true
		if string(m.Value) == "null" {
			continue
		}
		var dst any
		switch key {
		case "client_id":
			dst, f.hasClientID = &f.clientID, true
		case "client_name":
			dst = &f.clientName
		case "client_uri":
			dst = &f.clientURI
		case "logo_uri":
			dst = &f.logoURI
		case "scope":
			dst = &f.scope
		case "token_endpoint_auth_method":
			dst = &f.authMethod
		case "software_id":
			dst = &f.softwareID
		case "software_version":
			dst = &f.softwareVersion
		case "redirect_uris":
			dst = &f.redirectURIs
		case "grant_types":
			dst = &f.grantTypes
		case "response_types":
			dst = &f.responseTypes
		case "client_secret", "client_secret_expires_at":
			f.hasSecret = true
			continue
		default:
			continue
		}
		if err := json.Unmarshal(m.Value, dst); err != nil {
			want := "a string"
			if _, ok := dst.(*[]string); ok {
				want = "an array of strings"
			}
			return nil, metadataError("%s must be %s", key, want)
		}
	}
	return &f, nil
}

// validate checks the fields shared by registrations and metadata
// documents and returns the metadata (ClientID and the authentication
// method are the caller's to check).
func (f *fields) validate() (*Metadata, error) {
	md := &Metadata{ClientID: f.clientID, TokenEndpointAuthMethod: AuthMethodNone}
	var err error
	if md.RedirectURIs, err = validRedirectURIs(f.redirectURIs); err != nil {
		return nil, err
	}
	for _, t := range []struct {
		name  string
		value string
		dst   *string
	}{
		{"client_name", f.clientName, &md.ClientName},
		{"software_id", f.softwareID, &md.SoftwareID},
		{"software_version", f.softwareVersion, &md.SoftwareVersion},
	} {
		if *t.dst, err = validName(t.name, t.value); err != nil {
			return nil, err
		}
	}
	for _, t := range []struct {
		name  string
		value string
		dst   *string
	}{
		{"client_uri", f.clientURI, &md.ClientURI},
		{"logo_uri", f.logoURI, &md.LogoURI},
	} {
		if t.value == "" {
			continue
		}
		if err := validWebURL(t.value); err != nil {
			return nil, metadataError("%s: %s", t.name, err.Description)
		}
		*t.dst = t.value
	}
	if md.Scope, err = validScope(f.scope); err != nil {
		return nil, err
	}
	if md.GrantTypes, err = validList("grant_types", f.grantTypes, []string{GrantAuthorizationCode}, GrantAuthorizationCode, GrantRefreshToken); err != nil {
		return nil, err
	}
	if !slices.Contains(md.GrantTypes, GrantAuthorizationCode) {
		return nil, metadataError("grant_types must include authorization_code")
	}
	if md.ResponseTypes, err = validList("response_types", f.responseTypes, []string{ResponseTypeCode}, ResponseTypeCode); err != nil {
		return nil, err
	}
	return md, nil
}

// validList checks a list whose values come from allowed, dropping
// repeats; an absent or empty list is def.
func validList(name string, got, def []string, allowed ...string) ([]string, error) {
	if len(got) == 0 {
		return def, nil
	}
	if len(got) > len(allowed)*4 {
		return nil, metadataError("%s has too many values", name)
	}
	var out []string
	for _, v := range got {
		if !slices.Contains(allowed, v) {
			return nil, metadataError("%s: %q is not supported (supported: %s)", name, v, strings.Join(allowed, ", "))
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out, nil
}

// validName checks a display string: trimmed, at most MaxNameLength
// characters, no control or bidirectional-override characters.
func validName(name, s string) (string, error) {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > MaxNameLength {
		return "", metadataError("%s is longer than %d characters", name, MaxNameLength)
	}
	for _, r := range s {
		if unicode.IsControl(r) || isBidiControl(r) || r == utf8.RuneError {
			return "", metadataError("%s contains a control character", name)
		}
	}
	return s, nil
}

func isBidiControl(r rune) bool {
	return r == 0x061C || r == 0x200E || r == 0x200F || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

// validScope checks a space-separated list of scope tokens (RFC 6749
// §3.3: NQCHAR) and returns it with single spaces and no repeats.
func validScope(s string) (string, error) {
	if len(s) > MaxScopeLength {
		return "", metadataError("scope is longer than %d bytes", MaxScopeLength)
	}
	var out []string
	for tok := range strings.SplitSeq(s, " ") {
		if tok == "" {
			continue
		}
		for i := 0; i < len(tok); i++ {
			if c := tok[i]; c < 0x21 || c == '"' || c == '\\' || c > 0x7e {
				return "", metadataError("scope %q contains a character a scope token cannot", tok)
			}
		}
		if !slices.Contains(out, tok) {
			out = append(out, tok)
		}
	}
	return strings.Join(out, " "), nil
}

// validWebURL checks an https URL shown to or followed by a person.
func validWebURL(s string) *Error {
	if len(s) > MaxURILength {
		return metadataError("URL is longer than %d bytes", MaxURILength)
	}
	u, err := url.Parse(s)
	if err != nil {
		return metadataError("%q is not a URL", s)
	}
	if u.Scheme != "https" || u.Host == "" || u.Opaque != "" {
		return metadataError("%q is not an absolute https URL", s)
	}
	if u.User != nil {
		return metadataError("%q has user information", s)
	}
	return nil
}
