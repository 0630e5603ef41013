package clientmeta

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseRegistration(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		want *Metadata
	}{
		{
			name: "minimal",
			body: `{"redirect_uris":["https://app.example.com/cb"]}`,
			want: &Metadata{
				RedirectURIs:            []string{"https://app.example.com/cb"},
				GrantTypes:              []string{"authorization_code"},
				ResponseTypes:           []string{"code"},
				TokenEndpointAuthMethod: "none",
			},
		},
		{
			name: "full",
			body: `{
				"redirect_uris": ["http://127.0.0.1:33418/callback", "http://[::1]/cb", "http://localhost:8080/cb?x=1", "com.example.app:/oauth2redirect"],
				"client_name": "  Example App  ",
				"client_uri": "https://example.com/",
				"logo_uri": "https://example.com/logo.png",
				"scope": "worlds:read  worlds:write worlds:read",
				"grant_types": ["authorization_code", "refresh_token", "refresh_token"],
				"response_types": ["code"],
				"token_endpoint_auth_method": "none",
				"software_id": "example-app",
				"software_version": "1.2.3",
				"contacts": ["admin@example.com"],
				"jwks": {"keys": [{"a": 1, "a": 2}]},
				"Redirect_URIs": 7,
				"client_id": "ignored"
			}`,
			want: &Metadata{
				ClientName:              "Example App",
				ClientURI:               "https://example.com/",
				LogoURI:                 "https://example.com/logo.png",
				Scope:                   "worlds:read worlds:write",
				TokenEndpointAuthMethod: "none",
				SoftwareID:              "example-app",
				SoftwareVersion:         "1.2.3",
				RedirectURIs:            []string{"http://127.0.0.1:33418/callback", "http://[::1]/cb", "http://localhost:8080/cb?x=1", "com.example.app:/oauth2redirect"},
				GrantTypes:              []string{"authorization_code", "refresh_token"},
				ResponseTypes:           []string{"code"},
			},
		},
		{
			name: "client_secret_post is registered as a public client",
			body: `{"redirect_uris":["https://a.example/cb"],"token_endpoint_auth_method":"client_secret_post","client_name":null}`,
			want: &Metadata{
				RedirectURIs:            []string{"https://a.example/cb"},
				GrantTypes:              []string{"authorization_code"},
				ResponseTypes:           []string{"code"},
				TokenEndpointAuthMethod: "none",
			},
		},
		{
			name: "client_secret_basic too",
			body: `{"redirect_uris":["https://a.example/cb"],"token_endpoint_auth_method":"client_secret_basic"}`,
			want: &Metadata{
				RedirectURIs:            []string{"https://a.example/cb"},
				GrantTypes:              []string{"authorization_code"},
				ResponseTypes:           []string{"code"},
				TokenEndpointAuthMethod: "none",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseRegistration([]byte(tc.body))
			if err != nil {
				t.Fatalf("ParseRegistration: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreUnexported(Metadata{})); diff != "" {
				t.Errorf("metadata (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseRegistrationRefusals(t *testing.T) {
	const ok = `"redirect_uris":["https://a.example/cb"]`
	many := make([]string, MaxRedirectURIs+1)
	for i := range many {
		many[i] = `"https://a.example/cb` + strings.Repeat("x", i) + `"`
	}
	for _, tc := range []struct {
		name, body, code, desc string
	}{
		{"empty body", ``, CodeInvalidClientMetadata, "not a JSON object"},
		{"array", `[` + "{" + ok + "}" + `]`, CodeInvalidClientMetadata, "not a JSON object"},
		{"string", `"x"`, CodeInvalidClientMetadata, "not a JSON object"},
		{"null", `null`, CodeInvalidClientMetadata, "not a JSON object"},
		{"garbage", `{` + ok + `,}`, CodeInvalidClientMetadata, "not a JSON object"},
		{"unterminated", `{` + ok, CodeInvalidClientMetadata, "not a JSON object"},
		{"trailing text", `{` + ok + `} {}`, CodeInvalidClientMetadata, "not a JSON object"},
		{"invalid UTF-8", "{" + ok + ",\"client_name\":\"\xff\"}", CodeInvalidClientMetadata, "UTF-8"},
		{"oversized", `{` + ok + `,"x":"` + strings.Repeat("a", MaxRegistrationBytes) + `"}`, CodeInvalidClientMetadata, "larger than"},
		{"duplicate key", `{` + ok + `,` + ok + `}`, CodeInvalidClientMetadata, "more than once"},
		{"duplicate unknown key", `{` + ok + `,"x":1,"x":2}`, CodeInvalidClientMetadata, "more than once"},
		{"escaped duplicate key", `{` + ok + `,"redirect\u005furis":["https://b.example/cb"]}`, CodeInvalidClientMetadata, "more than once"},
		{"redirect_uris missing", `{}`, CodeInvalidRedirectURI, "required"},
		{"redirect_uris empty", `{"redirect_uris":[]}`, CodeInvalidRedirectURI, "required"},
		{"redirect_uris a string", `{"redirect_uris":"https://a.example/cb"}`, CodeInvalidClientMetadata, "array of strings"},
		{"redirect_uris holds a number", `{"redirect_uris":[1]}`, CodeInvalidClientMetadata, "array of strings"},
		{"too many redirect_uris", `{"redirect_uris":[` + strings.Join(many, ",") + `]}`, CodeInvalidRedirectURI, "at most"},
		{"repeated redirect URI", `{"redirect_uris":["https://a.example/cb","https://a.example/cb"]}`, CodeInvalidRedirectURI, "twice"},
		{"non-https non-loopback", `{"redirect_uris":["http://evil.example/cb"]}`, CodeInvalidRedirectURI, "loopback"},
		{"http on a private address", `{"redirect_uris":["http://192.168.1.2/cb"]}`, CodeInvalidRedirectURI, "loopback"},
		{"http localhost lookalike", `{"redirect_uris":["http://localhost.evil.example/cb"]}`, CodeInvalidRedirectURI, "loopback"},
		{"http loopback with user info", `{"redirect_uris":["http://127.0.0.1:80@evil.example/cb"]}`, CodeInvalidRedirectURI, "user information"},
		{"relative", `{"redirect_uris":["/cb"]}`, CodeInvalidRedirectURI, "absolute"},
		{"fragment", `{"redirect_uris":["https://a.example/cb#x"]}`, CodeInvalidRedirectURI, "fragment"},
		{"empty fragment", `{"redirect_uris":["https://a.example/cb#"]}`, CodeInvalidRedirectURI, "fragment"},
		{"user info", `{"redirect_uris":["https://u:p@a.example/cb"]}`, CodeInvalidRedirectURI, "user information"},
		{"https without host", `{"redirect_uris":["https:/cb"]}`, CodeInvalidRedirectURI, "no host"},
		{"https opaque", `{"redirect_uris":["https:a.example"]}`, CodeInvalidRedirectURI, "no host"},
		{"javascript", `{"redirect_uris":["javascript:alert(1)"]}`, CodeInvalidRedirectURI, "reverse-domain"},
		{"data", `{"redirect_uris":["data:text/html,x"]}`, CodeInvalidRedirectURI, "reverse-domain"},
		{"file", `{"redirect_uris":["file:///etc/passwd"]}`, CodeInvalidRedirectURI, "reverse-domain"},
		{"custom scheme without a dot", `{"redirect_uris":["myapp:/cb"]}`, CodeInvalidRedirectURI, "reverse-domain"},
		{"private-use scheme with a host", `{"redirect_uris":["com.example.app://evil.example/cb"]}`, CodeInvalidRedirectURI, "takes no host"},
		{"space", `{"redirect_uris":["https://a.example/c b"]}`, CodeInvalidRedirectURI, "space"},
		{"non-ASCII", `{"redirect_uris":["https://a.example/cé"]}`, CodeInvalidRedirectURI, "non-ASCII"},
		{"overlong redirect URI", `{"redirect_uris":["https://a.example/` + strings.Repeat("a", MaxURILength) + `"]}`, CodeInvalidRedirectURI, "longer than"},
		{"bad host", `{"redirect_uris":["https://a example/cb"]}`, CodeInvalidRedirectURI, "space"},
		{"implicit grant", `{` + ok + `,"grant_types":["implicit"]}`, CodeInvalidClientMetadata, "implicit"},
		{"password grant", `{` + ok + `,"grant_types":["authorization_code","password"]}`, CodeInvalidClientMetadata, "password"},
		{"client_credentials grant", `{` + ok + `,"grant_types":["client_credentials"]}`, CodeInvalidClientMetadata, "client_credentials"},
		{"refresh_token alone", `{` + ok + `,"grant_types":["refresh_token"]}`, CodeInvalidClientMetadata, "must include authorization_code"},
		{"grant_types a string", `{` + ok + `,"grant_types":"authorization_code"}`, CodeInvalidClientMetadata, "array of strings"},
		{"too many grant types", `{` + ok + `,"grant_types":["authorization_code","authorization_code","authorization_code","authorization_code","authorization_code","authorization_code","authorization_code","authorization_code","authorization_code"]}`, CodeInvalidClientMetadata, "too many"},
		{"token response type", `{` + ok + `,"response_types":["token"]}`, CodeInvalidClientMetadata, "token"},
		{"code id_token response type", `{` + ok + `,"response_types":["code id_token"]}`, CodeInvalidClientMetadata, "code id_token"},
		{"private_key_jwt", `{` + ok + `,"token_endpoint_auth_method":"private_key_jwt"}`, CodeInvalidClientMetadata, "private_key_jwt"},
		{"auth method a number", `{` + ok + `,"token_endpoint_auth_method":1}`, CodeInvalidClientMetadata, "must be a string"},
		{"client_name a number", `{` + ok + `,"client_name":5}`, CodeInvalidClientMetadata, "must be a string"},
		{"client_name too long", `{` + ok + `,"client_name":"` + strings.Repeat("é", MaxNameLength+1) + `"}`, CodeInvalidClientMetadata, "longer than"},
		{"client_name control character", `{` + ok + `,"client_name":"a\u0007b"}`, CodeInvalidClientMetadata, "control"},
		{"client_name newline", `{` + ok + `,"client_name":"a\nb"}`, CodeInvalidClientMetadata, "control"},
		{"client_name bidi override", `{` + ok + `,"client_name":"a\u202eb"}`, CodeInvalidClientMetadata, "control"},
		{"client_name lone surrogate", `{` + ok + `,"client_name":"a\ud800b"}`, CodeInvalidClientMetadata, "control"},
		{"software_id too long", `{` + ok + `,"software_id":"` + strings.Repeat("a", MaxNameLength+1) + `"}`, CodeInvalidClientMetadata, "longer than"},
		{"software_version control", `{` + ok + `,"software_version":"1\u0000"}`, CodeInvalidClientMetadata, "control"},
		{"client_uri http", `{` + ok + `,"client_uri":"http://example.com/"}`, CodeInvalidClientMetadata, "client_uri"},
		{"client_uri javascript", `{` + ok + `,"client_uri":"javascript:alert(1)"}`, CodeInvalidClientMetadata, "client_uri"},
		{"logo_uri relative", `{` + ok + `,"logo_uri":"/logo.png"}`, CodeInvalidClientMetadata, "logo_uri"},
		{"logo_uri user info", `{` + ok + `,"logo_uri":"https://u@example.com/l.png"}`, CodeInvalidClientMetadata, "user information"},
		{"logo_uri too long", `{` + ok + `,"logo_uri":"https://example.com/` + strings.Repeat("a", MaxURILength) + `"}`, CodeInvalidClientMetadata, "longer than"},
		{"scope a list", `{` + ok + `,"scope":["a"]}`, CodeInvalidClientMetadata, "must be a string"},
		{"scope with a quote", `{` + ok + `,"scope":"a \"b"}`, CodeInvalidClientMetadata, "scope"},
		{"scope with a tab", `{` + ok + `,"scope":"a\tb"}`, CodeInvalidClientMetadata, "scope"},
		{"scope non-ASCII", `{` + ok + `,"scope":"wörlds"}`, CodeInvalidClientMetadata, "scope"},
		{"scope too long", `{` + ok + `,"scope":"` + strings.Repeat("a", MaxScopeLength+1) + `"}`, CodeInvalidClientMetadata, "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md, err := ParseRegistration([]byte(tc.body))
			if err == nil {
				t.Fatalf("ParseRegistration accepted it: %+v", md)
			}
			if md != nil {
				t.Errorf("metadata returned with an error: %+v", md)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T) is not an *Error", err, err)
			}
			if e.Code != tc.code || !strings.Contains(e.Description, tc.desc) {
				t.Errorf("got %q %q, want code %q with %q", e.Code, e.Description, tc.code, tc.desc)
			}
			if !strings.HasPrefix(err.Error(), tc.code+": ") {
				t.Errorf("Error() = %q, want it to start with the code", err.Error())
			}
		})
	}
}

// FuzzParseRegistration holds ParseRegistration to its rules on arbitrary
// bodies: it never panics, and what it accepts obeys every limit and
// parses again, from its own encoding, to the same metadata.
func FuzzParseRegistration(f *testing.F) {
	for _, s := range []string{
		`{"redirect_uris":["https://a.example/cb"]}`,
		`{"redirect_uris":["http://127.0.0.1:1234/cb","com.example.app:/cb"],"grant_types":["authorization_code","refresh_token"],"scope":"a b"}`,
		`{"redirect_uris":["http://[::1]/cb"],"client_name":"x","logo_uri":"https://a/l","token_endpoint_auth_method":"client_secret_post"}`,
		`{"redirect_uris":null,"a":{"b":[1,2,{"c":null}]}}`,
		`{"redirect_uris":["https://a.example/cb"],"redirect_uris":["https://b.example/cb"]}`,
		`[]`, `{`, `{"\u0072edirect_uris":["https://a.example/x#"]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		md, err := ParseRegistration(body)
		if err != nil {
			var e *Error
			if md != nil || !errors.As(err, &e) || (e.Code != CodeInvalidClientMetadata && e.Code != CodeInvalidRedirectURI) {
				t.Fatalf("refusal (%v, %v) is not a bare *Error with a registration code", md, err)
			}
			return
		}
		if len(md.RedirectURIs) == 0 || len(md.RedirectURIs) > MaxRedirectURIs {
			t.Fatalf("accepted %d redirect URIs", len(md.RedirectURIs))
		}
		for _, u := range md.RedirectURIs {
			if validRedirectURI(u) != nil || !RedirectMatches(md.RedirectURIs, u) {
				t.Fatalf("accepted redirect URI %q that fails its own check", u)
			}
		}
		if md.TokenEndpointAuthMethod != AuthMethodNone || len(md.ClientID) != 0 {
			t.Fatalf("accepted auth method %q, client_id %q", md.TokenEndpointAuthMethod, md.ClientID)
		}
		again, err := ParseRegistration(encode(t, md))
		if err != nil {
			t.Fatalf("its own encoding %s is refused: %v", encode(t, md), err)
		}
		if diff := cmp.Diff(md, again); diff != "" {
			t.Fatalf("re-parse differs (-first +second):\n%s", diff)
		}
	})
}

func encode(t *testing.T, md *Metadata) []byte {
	m := map[string]any{
		"redirect_uris":              md.RedirectURIs,
		"grant_types":                md.GrantTypes,
		"response_types":             md.ResponseTypes,
		"token_endpoint_auth_method": md.TokenEndpointAuthMethod,
	}
	for k, v := range map[string]string{
		"client_id": md.ClientID, "client_name": md.ClientName, "client_uri": md.ClientURI, "logo_uri": md.LogoURI,
		"scope": md.Scope, "software_id": md.SoftwareID, "software_version": md.SoftwareVersion,
	} {
		if v != "" {
			m[k] = v
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
