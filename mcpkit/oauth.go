package mcpkit

// OAuth 2.1 for HTTP and SSE servers (the MCP authorization spec,
// 2025-03-26 to 2026-07-28, and the client-credentials, workload-identity
// and enterprise-managed extensions).
//
// The flow lives in an http.RoundTripper under the session's transport
// rather than in the go-sdk's auth.OAuthHandler, because the handler
// interface covers only part of it: it retries a request once, always
// presents a "Bearer" token, and only the streamable transport consults
// it. The round tripper serves both transports, retries after a step-up
// (403 insufficient_scope), presents DPoP-bound tokens with a fresh proof
// per request, and answers DPoP nonce challenges. The pieces the go-sdk
// and golang.org/x/oauth2 do provide are used: oauthex's metadata types,
// WWW-Authenticate parser, dynamic client registration and RFC 8693 token
// exchange; x/oauth2's PKCE, authorization URL, code exchange, refresh and
// client-credentials requests.

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// OAuthGrant names how a client obtains access tokens.
type OAuthGrant string

// The grants.
const (
	// OAuthAuthorizationCode is the authorization code grant with PKCE: a
	// user approves the client in a browser (ClientOptions.OAuthAuthorize).
	OAuthAuthorizationCode OAuthGrant = "authorization_code"
	// OAuthClientCredentials is the client credentials grant for clients
	// acting on their own behalf (a client secret or a private key).
	OAuthClientCredentials OAuthGrant = "client_credentials"
	// OAuthJWTBearer is the JWT bearer grant (RFC 7523): the client
	// presents an assertion, either one it is given (a workload identity
	// token) or one an enterprise identity provider issues for an ID token
	// (an identity assertion authorization grant).
	OAuthJWTBearer OAuthGrant = "jwt_bearer"
)

// Token endpoint client authentication methods (RFC 7591 names).
const (
	AuthMethodClientSecretBasic = "client_secret_basic"
	AuthMethodClientSecretPost  = "client_secret_post"
	AuthMethodNone              = "none"
	AuthMethodPrivateKeyJWT     = "private_key_jwt"
)

// DefaultOAuthRedirectURI is the redirect URI of the authorization code
// grant when OAuthConfig.RedirectURI is empty. OAuthLoopbackAuthorizer
// listens on it.
const DefaultOAuthRedirectURI = "http://127.0.0.1:33418/callback"

// OAuthConfig configures OAuth for an HTTP or SSE server. The zero value
// is the common case: the authorization code grant with PKCE, the client
// registered dynamically (or by a client ID metadata document when
// ClientMetadataURL is set), scopes chosen as the MCP specification says
// (the 401 challenge's, else those the protected resource metadata lists).
//
// The client authorizes when the server first answers 401, finds the
// authorization server through the protected resource metadata (or, for
// 2025-03-26 servers, at the server's origin), and keeps the tokens in
// memory for the Client's life, refreshing them when they expire. A 403
// insufficient_scope answer makes it ask again for the union of the
// scopes it holds and those challenged (at most twice per request).
type OAuthConfig struct {
	// Grant is how tokens are obtained (default OAuthAuthorizationCode).
	Grant OAuthGrant

	// ClientID and ClientSecret are credentials registered with the
	// authorization server in advance. With the authorization code grant
	// they are optional (without them the client registers itself).
	ClientID     string
	ClientSecret string
	// TokenEndpointAuthMethod forces the client authentication method
	// (AuthMethodClientSecretBasic …); empty picks one the authorization
	// server supports for the credentials at hand.
	TokenEndpointAuthMethod string
	// PrivateKey is a PEM private key (PKCS #8, SEC 1 EC or PKCS #1 RSA)
	// for private_key_jwt client authentication, with SigningAlgorithm
	// (default: ES256, ES384, ES512, RS256 or EdDSA by the key's type).
	PrivateKey       string
	SigningAlgorithm string
	// Issuer, if set, is the authorization server ClientID belongs to:
	// the credentials are never sent to another one. Unset, they are bound
	// to the first authorization server they are used with.
	Issuer string

	// ClientMetadataURL is the client's ID metadata document (an https
	// URL with a path), used as its client_id with authorization servers
	// that support such documents.
	ClientMetadataURL string
	// ClientName is the client_name sent in dynamic registration
	// (default: the client's implementation name).
	ClientName string
	// RedirectURI is where the authorization server sends the browser
	// back (default DefaultOAuthRedirectURI): https, http on a loopback
	// host, or a private-use scheme such as com.example.app:/callback.
	RedirectURI string

	// Scopes, if set, are always requested (with any challenged ones).
	Scopes []string

	// DPoP makes the client ask for DPoP-bound tokens (RFC 9449) whenever
	// the authorization server supports ES256 proofs. Without it the
	// client does so only when the server asks for DPoP (a DPoP challenge
	// or dpop_bound_access_tokens_required).
	DPoP bool

	// For OAuthJWTBearer, the assertion: Assertion itself, AssertionFile
	// (read for each token request, as rotating workload identity tokens
	// are), or one exchanged at IdentityProvider.
	Assertion        string
	AssertionFile    string
	IdentityProvider *OAuthIdentityProvider
}

// OAuthIdentityProvider is an enterprise identity provider that exchanges
// the user's ID token for an identity assertion grant (ID-JAG, RFC 8693
// token exchange) that the MCP server's authorization server accepts.
type OAuthIdentityProvider struct {
	TokenEndpoint string // the identity provider's token endpoint
	ClientID      string // the client's ID at the identity provider
	ClientSecret  string // optional
	// The user's ID token: IDToken itself, or IDTokenFile (read for each
	// exchange).
	IDToken     string
	IDTokenFile string
}

// OAuthAuthorization is one authorization request for the user to approve.
type OAuthAuthorization struct {
	Server      string // the server's name
	URL         string // the authorization request: open it in a browser
	RedirectURI string // where the authorization server sends the browser back
}

// OAuthAuthorizeFunc shows the user an authorization request and returns
// the URL the authorization server sent the browser back to: the redirect
// URI with code, state and iss (or error) in its query.
type OAuthAuthorizeFunc func(ctx context.Context, a *OAuthAuthorization) (*url.URL, error)

// OAuthLoopbackAuthorizer returns an OAuthAuthorizeFunc for desktop hosts:
// it listens on the redirect URI (an http loopback URI with a port, such as
// DefaultOAuthRedirectURI), calls open with the authorization URL (open it
// in the user's browser) and waits for the browser to come back.
func OAuthLoopbackAuthorizer(open func(authURL string) error) OAuthAuthorizeFunc {
	return func(ctx context.Context, a *OAuthAuthorization) (*url.URL, error) {
		ru, err := url.Parse(a.RedirectURI)
		if err != nil || ru.Scheme != "http" || !isLoopbackHost(ru.Hostname()) || ru.Port() == "" {
			return nil, fmt.Errorf("loopback authorizer: redirect URI %q is not an http loopback URI with a port", a.RedirectURI)
		}
		ln, err := net.Listen("tcp", ru.Host)
		if err != nil {
			return nil, fmt.Errorf("loopback authorizer: %w", err)
		}
		path := ru.Path
		if path == "" {
			path = "/"
		}
		got := make(chan *url.URL, 1)
		srv := &http.Server{
			ReadHeaderTimeout: 10 * time.Second,
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != path {
					http.NotFound(w, r)
					return
				}
				io.WriteString(w, "Authorization finished: you may close this window.\n")
				cb := *ru
				cb.RawQuery = r.URL.RawQuery
				select {
				case got <- &cb:
				default:
				}
			}),
		}
		go srv.Serve(ln)
		defer srv.Close()
		if err := open(a.URL); err != nil {
			return nil, fmt.Errorf("loopback authorizer: open browser: %w", err)
		}
		select {
		case u := <-got:
			return u, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// ---- validation ----

// oauthConfigError names the offending field of an OAuth configuration.
// Its message never contains a secret.
type oauthConfigError struct {
	field, msg string
}

func (e *oauthConfigError) Error() string { return e.field + ": " + e.msg }

func oauthErrf(field, format string, args ...any) *oauthConfigError {
	return &oauthConfigError{field: "oauth." + field, msg: fmt.Sprintf(format, args...)}
}

// validate checks the configuration; it returns the parsed private key.
func (o *OAuthConfig) validate() (crypto.Signer, string, *oauthConfigError) {
	grant := o.Grant
	if grant == "" {
		grant = OAuthAuthorizationCode
	}
	switch grant {
	case OAuthAuthorizationCode, OAuthClientCredentials, OAuthJWTBearer:
	default:
		return nil, "", oauthErrf("grant", "unknown grant %q (want authorization_code, client_credentials or jwt_bearer)", o.Grant)
	}
	switch o.TokenEndpointAuthMethod {
	case "", AuthMethodClientSecretBasic, AuthMethodClientSecretPost, AuthMethodNone, AuthMethodPrivateKeyJWT:
	default:
		return nil, "", oauthErrf("tokenEndpointAuthMethod", "unknown method %q (want client_secret_basic, client_secret_post, none or private_key_jwt)", o.TokenEndpointAuthMethod)
	}
	hasSecret, hasKey := o.ClientSecret != "", o.PrivateKey != ""
	if (hasSecret || hasKey) && o.ClientID == "" {
		return nil, "", oauthErrf("clientId", "required with a client secret or private key")
	}
	if hasSecret && hasKey {
		return nil, "", oauthErrf("privateKeyFile", "use either a client secret or a private key, not both")
	}
	switch o.TokenEndpointAuthMethod {
	case AuthMethodClientSecretBasic, AuthMethodClientSecretPost:
		if !hasSecret {
			return nil, "", oauthErrf("clientSecret", "required by tokenEndpointAuthMethod %s", o.TokenEndpointAuthMethod)
		}
	case AuthMethodPrivateKeyJWT:
		if !hasKey {
			return nil, "", oauthErrf("privateKeyFile", "required by tokenEndpointAuthMethod private_key_jwt")
		}
	case AuthMethodNone:
		if hasSecret || hasKey {
			return nil, "", oauthErrf("tokenEndpointAuthMethod", "none, but a client secret or private key is set")
		}
	}
	var key crypto.Signer
	alg := o.SigningAlgorithm
	if hasKey {
		var err error
		if key, err = parsePrivateKey(o.PrivateKey); err != nil {
			return nil, "", oauthErrf("privateKeyFile", "%v", err)
		}
		if alg == "" {
			alg = defaultSigningAlg(key)
		}
		if err := checkSigningAlg(alg, key); err != nil {
			return nil, "", oauthErrf("signingAlgorithm", "%v", err)
		}
	} else if alg != "" {
		return nil, "", oauthErrf("signingAlgorithm", "set without a private key")
	}
	if o.RedirectURI != "" {
		if err := checkRedirectURI(o.RedirectURI); err != nil {
			return nil, "", oauthErrf("redirectUri", "%v", err)
		}
	}
	if o.ClientMetadataURL != "" {
		u, err := url.Parse(o.ClientMetadataURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" || u.Fragment != "" {
			return nil, "", oauthErrf("clientMetadataUrl", "want an https URL with a path and no fragment, got %q", o.ClientMetadataURL)
		}
	}
	if o.Issuer != "" {
		if u, err := url.Parse(o.Issuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, "", oauthErrf("issuer", "want an http or https URL, got %q", o.Issuer)
		}
	}
	for i, s := range o.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\r\n\"\\") {
			return nil, "", oauthErrf(fmt.Sprintf("scopes[%d]", i), "bad scope %q", s)
		}
	}
	hasAssertion := o.Assertion != "" || o.AssertionFile != "" || o.IdentityProvider != nil
	switch grant {
	case OAuthAuthorizationCode:
		if hasKey {
			return nil, "", oauthErrf("privateKeyFile", "private_key_jwt needs grant client_credentials or jwt_bearer")
		}
		if hasAssertion {
			return nil, "", oauthErrf("grant", "an assertion or idp needs grant jwt_bearer")
		}
	case OAuthClientCredentials, OAuthJWTBearer:
		if o.RedirectURI != "" {
			return nil, "", oauthErrf("redirectUri", "not used by grant %s", grant)
		}
		if o.ClientMetadataURL != "" {
			return nil, "", oauthErrf("clientMetadataUrl", "not used by grant %s", grant)
		}
		if grant == OAuthClientCredentials {
			if o.ClientID == "" {
				return nil, "", oauthErrf("clientId", "required by grant client_credentials")
			}
			if !hasSecret && !hasKey {
				return nil, "", oauthErrf("clientSecret", "grant client_credentials needs clientSecret or privateKeyFile")
			}
			if hasAssertion {
				return nil, "", oauthErrf("grant", "an assertion or idp needs grant jwt_bearer")
			}
			break
		}
		n := 0
		for _, set := range []bool{o.Assertion != "", o.AssertionFile != "", o.IdentityProvider != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			return nil, "", oauthErrf("assertionFile", "grant jwt_bearer needs exactly one of assertionFile, assertionEnv or idp")
		}
		if p := o.IdentityProvider; p != nil {
			if u, err := url.Parse(p.TokenEndpoint); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				return nil, "", oauthErrf("idp.tokenEndpoint", "want an http or https URL, got %q", p.TokenEndpoint)
			}
			if p.ClientID == "" {
				return nil, "", oauthErrf("idp.clientId", "required")
			}
			if (p.IDToken == "") == (p.IDTokenFile == "") {
				return nil, "", oauthErrf("idp.idTokenFile", "want exactly one of idTokenFile or idTokenEnv")
			}
		}
	}
	return key, alg, nil
}

func checkRedirectURI(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("bad URL %q", s)
	}
	if u.Fragment != "" {
		return fmt.Errorf("redirect URI %q has a fragment", s)
	}
	switch {
	case u.Scheme == "https" && u.Host != "":
	case u.Scheme == "http" && isLoopbackHost(u.Hostname()):
	case u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https" && strings.Contains(u.Scheme, "."):
		// A private-use scheme (RFC 8252 §7.1), reverse domain name.
	default:
		return fmt.Errorf("want https, http on a loopback host, or a private-use scheme, got %q", s)
	}
	return nil
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// checkEndpoint requires an absolute https URL, or http on a loopback host.
func checkEndpoint(name, s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%s %q is not an absolute URL", name, s)
	}
	if u.Scheme == "https" || u.Scheme == "http" && isLoopbackHost(u.Hostname()) {
		return nil
	}
	return fmt.Errorf("%s %q must use https (http only on a loopback host)", name, s)
}

func parsePrivateKey(pemText string) (crypto.Signer, error) {
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		return nil, errors.New("not a PEM private key")
	}
	var (
		k   any
		err error
	)
	switch block.Type {
	case "PRIVATE KEY":
		k, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("PEM block %q is not a private key", block.Type)
	}
	if err != nil {
		return nil, errors.New("cannot parse the private key")
	}
	switch k := k.(type) {
	case *ecdsa.PrivateKey:
		return k, nil
	case *rsa.PrivateKey:
		return k, nil
	case ed25519.PrivateKey:
		return k, nil
	}
	return nil, fmt.Errorf("unsupported private key type %T", k)
}

func defaultSigningAlg(k crypto.Signer) string {
	switch k := k.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P384():
			return "ES384"
		case elliptic.P521():
			return "ES512"
		}
		return "ES256"
	case ed25519.PrivateKey:
		return "EdDSA"
	}
	return "RS256"
}

func checkSigningAlg(alg string, k crypto.Signer) error {
	ok := false
	switch k := k.(type) {
	case *ecdsa.PrivateKey:
		ok = alg == "ES256" && k.Curve == elliptic.P256() || alg == "ES384" && k.Curve == elliptic.P384() ||
			alg == "ES512" && k.Curve == elliptic.P521()
	case *rsa.PrivateKey:
		ok = slices.Contains([]string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}, alg)
	case ed25519.PrivateKey:
		ok = alg == "EdDSA"
	}
	if !ok {
		return fmt.Errorf("algorithm %q does not fit the private key (%s)", alg, defaultSigningAlg(k)+" family")
	}
	return nil
}

// ---- configuration files ----

// OAuthEntry is the "oauth" object of a server entry in a configuration
// file. Secrets may come from the environment (clientSecretEnv …, or
// ${VAR} in clientSecret); relative file names are taken relative to the
// configuration file's directory.
type OAuthEntry struct {
	Grant                   string              `json:"grant,omitempty"`
	ClientID                string              `json:"clientId,omitempty"`
	ClientSecret            string              `json:"clientSecret,omitempty"`
	ClientSecretEnv         string              `json:"clientSecretEnv,omitempty"`
	TokenEndpointAuthMethod string              `json:"tokenEndpointAuthMethod,omitempty"`
	PrivateKeyFile          string              `json:"privateKeyFile,omitempty"`
	PrivateKeyEnv           string              `json:"privateKeyEnv,omitempty"`
	SigningAlgorithm        string              `json:"signingAlgorithm,omitempty"`
	Issuer                  string              `json:"issuer,omitempty"`
	ClientMetadataURL       string              `json:"clientMetadataUrl,omitempty"`
	ClientName              string              `json:"clientName,omitempty"`
	RedirectURI             string              `json:"redirectUri,omitempty"`
	Scopes                  []string            `json:"scopes,omitempty"`
	DPoP                    bool                `json:"dpop,omitempty"`
	AssertionFile           string              `json:"assertionFile,omitempty"`
	AssertionEnv            string              `json:"assertionEnv,omitempty"`
	IdentityProvider        *OAuthIdentityEntry `json:"idp,omitempty"`
}

// OAuthIdentityEntry is the "idp" object of an OAuthEntry.
type OAuthIdentityEntry struct {
	TokenEndpoint   string `json:"tokenEndpoint,omitempty"`
	ClientID        string `json:"clientId,omitempty"`
	ClientSecret    string `json:"clientSecret,omitempty"`
	ClientSecretEnv string `json:"clientSecretEnv,omitempty"`
	IDTokenFile     string `json:"idTokenFile,omitempty"`
	IDTokenEnv      string `json:"idTokenEnv,omitempty"`
}

// jsonKeys returns the JSON names of a struct's fields.
func jsonKeys(v any) map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeOf(v)
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		keys[name] = true
	}
	return keys
}

// checkKeys rejects members of a JSON object that dst does not have.
func checkKeys(data json.RawMessage, prefix string, dst any) *oauthConfigError {
	var m map[string]json.RawMessage
	if firstByte(data) != '{' || json.Unmarshal(data, &m) != nil {
		return &oauthConfigError{field: strings.TrimSuffix(prefix, "."), msg: "want an object"}
	}
	known := jsonKeys(dst)
	var unknown []string
	for k := range m {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return &oauthConfigError{field: prefix + unknown[0], msg: "unknown field"}
	}
	return nil
}

// parseOAuthEntry turns an entry's "oauth" object into an OAuthConfig.
// Errors name the field and never show a secret.
func parseOAuthEntry(data json.RawMessage, file string, kind TransportKind, getenv func(string) string) (*OAuthConfig, *oauthConfigError) {
	if kind == TransportStdio {
		return nil, &oauthConfigError{field: "oauth", msg: "only http and sse servers use OAuth"}
	}
	if e := checkKeys(data, "oauth.", OAuthEntry{}); e != nil {
		return nil, e
	}
	var raw struct {
		OAuthEntry
		IDP json.RawMessage `json:"idp"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		field := "oauth"
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			field += "." + strings.TrimPrefix(te.Field, "OAuthEntry.")
		}
		return nil, &oauthConfigError{field: field, msg: "wrong type"}
	}
	ent := raw.OAuthEntry
	if len(raw.IDP) > 0 && !isJSONNull(raw.IDP) {
		if e := checkKeys(raw.IDP, "oauth.idp.", OAuthIdentityEntry{}); e != nil {
			return nil, e
		}
		ent.IdentityProvider = &OAuthIdentityEntry{}
		if err := json.Unmarshal(raw.IDP, ent.IdentityProvider); err != nil {
			return nil, &oauthConfigError{field: "oauth.idp", msg: "want an object of strings"}
		}
	} else {
		ent.IdentityProvider = nil
	}

	var bad *oauthConfigError
	expand := func(field, s string, secret bool) string {
		if bad != nil || s == "" {
			return s
		}
		out, err := expandVars(s, getenv)
		if err != nil {
			msg := err.Error()
			if secret {
				msg = "bad or unset ${VAR} reference (value not shown)"
			}
			bad = &oauthConfigError{field: "oauth." + field, msg: msg}
		}
		return out
	}
	fromEnv := func(field, name string) string {
		if bad != nil || name == "" {
			return ""
		}
		if !validVarName(name) {
			bad = &oauthConfigError{field: "oauth." + field, msg: fmt.Sprintf("bad variable name %q", name)}
			return ""
		}
		v := getenv(name)
		if v == "" {
			bad = &oauthConfigError{field: "oauth." + field, msg: fmt.Sprintf("variable %s is not set", name)}
		}
		return v
	}
	path := func(field, p string) string {
		p = expand(field, p, false)
		if p != "" && !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(file), p)
		}
		return p
	}
	both := func(a, b string) bool { return a != "" && b != "" }

	o := &OAuthConfig{
		Grant:                   OAuthGrant(ent.Grant),
		ClientID:                expand("clientId", ent.ClientID, false),
		TokenEndpointAuthMethod: ent.TokenEndpointAuthMethod,
		SigningAlgorithm:        ent.SigningAlgorithm,
		Issuer:                  expand("issuer", ent.Issuer, false),
		ClientMetadataURL:       expand("clientMetadataUrl", ent.ClientMetadataURL, false),
		ClientName:              ent.ClientName,
		RedirectURI:             expand("redirectUri", ent.RedirectURI, false),
		DPoP:                    ent.DPoP,
	}
	for i, s := range ent.Scopes {
		o.Scopes = append(o.Scopes, expand(fmt.Sprintf("scopes[%d]", i), s, false))
	}
	if both(ent.ClientSecret, ent.ClientSecretEnv) {
		return nil, oauthErrf("clientSecretEnv", "set both clientSecret and clientSecretEnv")
	}
	o.ClientSecret = expand("clientSecret", ent.ClientSecret, true) + fromEnv("clientSecretEnv", ent.ClientSecretEnv)
	if both(ent.PrivateKeyFile, ent.PrivateKeyEnv) {
		return nil, oauthErrf("privateKeyEnv", "set both privateKeyFile and privateKeyEnv")
	}
	o.PrivateKey = fromEnv("privateKeyEnv", ent.PrivateKeyEnv)
	if keyFile := path("privateKeyFile", ent.PrivateKeyFile); keyFile != "" && bad == nil {
		data, err := os.ReadFile(keyFile)
		if err != nil {
			return nil, oauthErrf("privateKeyFile", "cannot read %s", keyFile)
		}
		o.PrivateKey = string(data)
	}
	if both(ent.AssertionFile, ent.AssertionEnv) {
		return nil, oauthErrf("assertionEnv", "set both assertionFile and assertionEnv")
	}
	o.AssertionFile = path("assertionFile", ent.AssertionFile)
	o.Assertion = fromEnv("assertionEnv", ent.AssertionEnv)
	if p := ent.IdentityProvider; p != nil {
		if both(p.ClientSecret, p.ClientSecretEnv) {
			return nil, oauthErrf("idp.clientSecretEnv", "set both clientSecret and clientSecretEnv")
		}
		if both(p.IDTokenFile, p.IDTokenEnv) {
			return nil, oauthErrf("idp.idTokenEnv", "set both idTokenFile and idTokenEnv")
		}
		o.IdentityProvider = &OAuthIdentityProvider{
			TokenEndpoint: expand("idp.tokenEndpoint", p.TokenEndpoint, false),
			ClientID:      expand("idp.clientId", p.ClientID, false),
			ClientSecret:  expand("idp.clientSecret", p.ClientSecret, true) + fromEnv("idp.clientSecretEnv", p.ClientSecretEnv),
			IDToken:       fromEnv("idp.idTokenEnv", p.IDTokenEnv),
			IDTokenFile:   path("idp.idTokenFile", p.IDTokenFile),
		}
	}
	if bad != nil {
		return nil, bad
	}
	if _, _, e := o.validate(); e != nil {
		if e.field == "oauth.privateKeyFile" && ent.PrivateKeyEnv != "" {
			e.field = "oauth.privateKeyEnv" // name the key the file used
		}
		return nil, e
	}
	return o, nil
}

// ---- the client side ----

// oauthHolder is a Client's OAuth state, made on first use and kept
// across reconnects.
type oauthHolder struct {
	once sync.Once
	st   *oauthState
	err  error
}

// sessionHTTPClient returns the HTTP client of one HTTP or SSE session:
// the configured headers, with the OAuth layer beneath them when the
// server has an OAuth configuration.
func (c *Client) sessionHTTPClient(w *httpWatch) (*http.Client, *Error) {
	hc := httpClient(&c.cfg, w)
	if c.cfg.OAuth == nil {
		return hc, nil
	}
	c.oauth.once.Do(func() { c.oauth.st, c.oauth.err = newOAuthState(c) })
	if c.oauth.err != nil {
		return nil, c.newError(CodeConfigError, "", errOp{}, "bad OAuth configuration", c.oauth.err)
	}
	ht := hc.Transport.(*headerTransport)
	ht.base = &oauthTransport{st: c.oauth.st, base: ht.base}
	return hc, nil
}

// oauthState holds one client's OAuth tokens and registrations.
type oauthState struct {
	name       string
	serverURL  string
	cfg        OAuthConfig
	grant      OAuthGrant
	key        crypto.Signer // private_key_jwt
	alg        string
	clientName string
	authorize  OAuthAuthorizeFunc
	log        *slog.Logger
	base       http.RoundTripper // the configured transport, without the server's headers
	http       *http.Client      // discovery, registration, token requests
	noRedirect *http.Client      // fetching the authorization URL ourselves

	flow sync.Mutex // one authorization at a time

	mu        sync.Mutex
	tok       *oauthToken
	granted   map[string][]string       // issuer → scopes granted there
	clients   map[string]*oauthClientID // issuer → dynamically registered client
	preIssuer string                    // the issuer pre-registered credentials are bound to
	dpopKey   *ecdsa.PrivateKey
	nonces    map[string]string // origin → DPoP nonce
}

// oauthToken is a grant's token source and what it was granted for.
type oauthToken struct {
	ts       oauth2.TokenSource
	dpop     bool
	issuer   string
	scopes   []string
	conf     *oauth2.Config // the authorization code grant's, for a forced refresh
	tokenCtx context.Context
}

func newOAuthState(c *Client) (*oauthState, error) {
	o := *c.cfg.OAuth
	key, alg, verr := o.validate()
	if verr != nil {
		return nil, verr
	}
	base := http.RoundTripper(http.DefaultTransport)
	timeout := 30 * time.Second
	if hc := c.cfg.HTTPClient; hc != nil {
		if hc.Transport != nil {
			base = hc.Transport
		}
		if hc.Timeout > 0 {
			timeout = hc.Timeout
		}
	}
	st := &oauthState{
		name: c.cfg.Name, serverURL: c.cfg.URL, cfg: o, grant: o.Grant, key: key, alg: alg,
		clientName: o.ClientName, authorize: c.opts.OAuthAuthorize, log: c.log, base: base,
		http: &http.Client{Transport: base, Timeout: timeout},
		noRedirect: &http.Client{Transport: base, Timeout: timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		granted: map[string][]string{}, clients: map[string]*oauthClientID{}, nonces: map[string]string{},
	}
	if st.grant == "" {
		st.grant = OAuthAuthorizationCode
	}
	if st.clientName == "" {
		st.clientName = c.opts.Implementation.Name
	}
	if st.cfg.RedirectURI == "" {
		st.cfg.RedirectURI = DefaultOAuthRedirectURI
	}
	return st, nil
}

// sameOrigin reports whether u is on the configured server's origin.
func (st *oauthState) sameOrigin(u *url.URL) bool {
	s, err := url.Parse(st.serverURL)
	return err == nil && strings.EqualFold(u.Scheme, s.Scheme) && strings.EqualFold(hostPort(u), hostPort(s))
}

func (st *oauthState) current() *oauthToken {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.tok
}

func (st *oauthState) fail(err error) *Error {
	return &Error{Code: CodeSessionError, Server: st.name, Message: "OAuth authorization failed", Err: err}
}

// oauthTransport authorizes the session's requests.
type oauthTransport struct {
	st   *oauthState
	base http.RoundTripper
}

// maxStepUps bounds the re-authorizations for more scope per request.
const maxStepUps = 2

func (t *oauthTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	st := t.st
	if !st.sameOrigin(req.URL) {
		// Tokens go to the configured server only (a legacy SSE server
		// names its message endpoint, which could be anywhere).
		return t.base.RoundTrip(req)
	}
	ctx := req.Context()
	getBody := req.GetBody
	if req.Body != nil && req.Body != http.NoBody {
		if getBody == nil {
			data, err := io.ReadAll(req.Body)
			req.Body.Close()
			if err != nil {
				return nil, err
			}
			getBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
		} else {
			req.Body.Close()
		}
	}
	var (
		fullFlow, refreshed, nonceRetried bool
		stepUps                           int
	)
	for range 8 {
		tok := st.current()
		out := req.Clone(ctx)
		if getBody != nil {
			body, err := getBody()
			if err != nil {
				return nil, err
			}
			out.Body = body
		}
		if err := st.apply(out, tok); err != nil {
			return nil, st.fail(err)
		}
		resp, err := t.base.RoundTrip(out)
		if err != nil {
			return nil, err
		}
		if tok != nil && tok.dpop {
			st.noteNonce(out.URL, resp)
		}
		if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
			return resp, nil
		}
		ch, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
		if resp.StatusCode == http.StatusUnauthorized && tok != nil && tok.dpop && !nonceRetried &&
			resp.Header.Get("DPoP-Nonce") != "" && challengeParam(ch, "error") == "use_dpop_nonce" {
			nonceRetried = true
			discard(resp)
			continue
		}
		stepUp := false
		if resp.StatusCode == http.StatusForbidden && tok != nil {
			want := strings.Fields(challengeParam(ch, "scope"))
			if challengeParam(ch, "error") != "insufficient_scope" && len(want) == 0 {
				return resp, nil // forbidden for a reason more scope won't fix
			}
			if stepUps >= maxStepUps || isSubset(want, tok.scopes) {
				return resp, nil
			}
			stepUps++
			stepUp = true
		} else if fullFlow {
			return resp, nil // a token fresh from the flow was refused
		}
		discard(resp)
		full, err := st.authorizeFor(ctx, ch, tok, stepUp, !refreshed)
		if err != nil {
			return nil, err
		}
		fullFlow = fullFlow || full
		refreshed = refreshed || !full
	}
	return nil, st.fail(errors.New("too many authorization rounds for one request"))
}

func discard(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// apply sets the request's Authorization (and DPoP proof) from tok.
func (st *oauthState) apply(r *http.Request, tok *oauthToken) error {
	if tok == nil {
		return nil
	}
	t, err := tok.ts.Token()
	if err != nil {
		// The refresh failed (an expired refresh token, say): go on
		// without a token, and authorize again on the 401.
		st.log.Warn("mcpkit: OAuth token refresh failed", "server", st.name, "error", err)
		st.mu.Lock()
		if st.tok == tok {
			st.tok = nil
		}
		st.mu.Unlock()
		return nil
	}
	if !tok.dpop {
		r.Header.Set("Authorization", "Bearer "+t.AccessToken)
		return nil
	}
	proof, err := st.dpopProof(r.Method, r.URL, t.AccessToken)
	if err != nil {
		return err
	}
	r.Header.Set("Authorization", "DPoP "+t.AccessToken)
	r.Header.Set("DPoP", proof)
	return nil
}

// authorizeFor gets a new token after the server refused seen (nil: no
// token was sent). It reports whether it ran a whole grant (false: a
// refresh, or another request's authorization, sufficed).
func (st *oauthState) authorizeFor(ctx context.Context, ch []oauthex.Challenge, seen *oauthToken, stepUp, mayRefresh bool) (bool, error) {
	st.flow.Lock()
	defer st.flow.Unlock()
	if cur := st.current(); cur != nil && cur != seen {
		// Another request authorized meanwhile: try its token first.
		if !stepUp || isSubset(strings.Fields(challengeParam(ch, "scope")), cur.scopes) {
			return false, nil
		}
	}
	d, err := st.discover(ctx, ch)
	if err != nil {
		return false, st.fail(err)
	}
	if cur := st.current(); mayRefresh && !stepUp && cur != nil && cur.conf != nil && cur.issuer == d.as.Issuer {
		// A 401 on a token we hold: its refresh token may do.
		if t, err := cur.ts.Token(); err == nil && t.RefreshToken != "" {
			expired := *t
			expired.AccessToken, expired.Expiry = "", time.Unix(1, 0)
			ts := cur.conf.TokenSource(cur.tokenCtx, &expired)
			if _, err := ts.Token(); err == nil {
				nt := *cur
				nt.ts = ts
				st.setToken(&nt)
				st.log.Info("mcpkit: OAuth token refreshed", "server", st.name, "issuer", d.as.Issuer)
				return false, nil
			} else {
				st.log.Debug("mcpkit: OAuth refresh failed; authorizing again", "server", st.name, "error", err)
			}
		}
	}
	var nt *oauthToken
	switch st.grant {
	case OAuthClientCredentials, OAuthJWTBearer:
		nt, err = st.assertionGrant(ctx, d)
	default:
		nt, err = st.authorizationCode(ctx, d)
	}
	if err != nil {
		return true, st.fail(err)
	}
	st.setToken(nt)
	st.log.Info("mcpkit: OAuth authorized", "server", st.name, "issuer", d.as.Issuer, "grant", string(st.grant),
		"scopes", strings.Join(nt.scopes, " "), "dpop", nt.dpop)
	return true, nil
}

func (st *oauthState) setToken(t *oauthToken) {
	st.mu.Lock()
	st.tok = t
	st.granted[t.issuer] = t.scopes
	st.mu.Unlock()
}

// ---- discovery ----

// authServerMeta is RFC 8414 metadata with the DPoP field oauthex lacks.
type authServerMeta struct {
	oauthex.AuthServerMeta
	DPoPSigningAlgValuesSupported []string `json:"dpop_signing_alg_values_supported,omitempty"`
}

// oauthDiscovery is what the client learned before asking for a token.
type oauthDiscovery struct {
	resource        string // the resource indicator (RFC 8707)
	prm             *oauthex.ProtectedResourceMetadata
	as              *authServerMeta
	noMetadata      bool // the 2025-03-26 fallback endpoints
	challengeScopes []string
	rsWantsDPoP     bool
}

func challengeParam(ch []oauthex.Challenge, name string) string {
	for _, c := range ch {
		if (c.Scheme == "bearer" || c.Scheme == "dpop") && c.Params[name] != "" {
			return c.Params[name]
		}
	}
	return ""
}

// discover finds the protected resource metadata and the authorization
// server's metadata, falling back to the 2025-03-26 rules (the server's
// origin is the authorization server, at the default endpoints when it
// publishes no metadata).
func (st *oauthState) discover(ctx context.Context, ch []oauthex.Challenge) (*oauthDiscovery, error) {
	d := &oauthDiscovery{challengeScopes: strings.Fields(challengeParam(ch, "scope"))}
	for _, c := range ch {
		if c.Scheme == "dpop" {
			d.rsWantsDPoP = true
		}
	}
	server, err := url.Parse(st.serverURL)
	if err != nil {
		return nil, err
	}
	origin := server.Scheme + "://" + server.Host
	prm, err := st.fetchPRM(ctx, challengeParam(ch, "resource_metadata"), server, origin)
	if err != nil {
		return nil, err
	}
	asURL := origin
	d.resource = st.serverURL
	if prm != nil {
		d.prm = prm
		d.resource = prm.Resource
		if prm.DPOPBoundAccessTokensRequired {
			d.rsWantsDPoP = true
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, errors.New("protected resource metadata lists no authorization server")
		}
		asURL = prm.AuthorizationServers[0]
		if err := checkEndpoint("authorization server", asURL); err != nil {
			return nil, err
		}
	}
	as, err := st.fetchASMeta(ctx, asURL)
	if err != nil {
		return nil, err
	}
	if as == nil {
		base := strings.TrimSuffix(asURL, "/")
		as = &authServerMeta{AuthServerMeta: oauthex.AuthServerMeta{
			Issuer: base, AuthorizationEndpoint: base + "/authorize",
			TokenEndpoint: base + "/token", RegistrationEndpoint: base + "/register",
		}}
		d.noMetadata = true
	}
	d.as = as
	return d, nil
}

// getJSON fetches a metadata document: (nil, status, nil) when the
// server answers with an error status.
func getJSON[T any](ctx context.Context, hc *http.Client, u string) (*T, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, resp.StatusCode, nil
	}
	var v T
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&v); err != nil {
		return nil, resp.StatusCode, fmt.Errorf("bad metadata at %s: %v", u, err)
	}
	return &v, resp.StatusCode, nil
}

// fetchPRM tries the challenge's resource_metadata URL, then the
// path-based and the root well-known locations (RFC 9728). It returns nil
// when none has a document.
func (st *oauthState) fetchPRM(ctx context.Context, fromChallenge string, server *url.URL, origin string) (*oauthex.ProtectedResourceMetadata, error) {
	var urls []string
	if fromChallenge != "" {
		if err := checkEndpoint("resource_metadata", fromChallenge); err != nil {
			return nil, err
		}
		urls = append(urls, fromChallenge)
	}
	if p := strings.TrimSuffix(server.Path, "/"); p != "" {
		urls = append(urls, origin+"/.well-known/oauth-protected-resource"+p)
	}
	urls = append(urls, origin+"/.well-known/oauth-protected-resource")
	for _, u := range urls {
		prm, _, err := getJSON[oauthex.ProtectedResourceMetadata](ctx, st.http, u)
		if err != nil {
			return nil, fmt.Errorf("protected resource metadata: %w", err)
		}
		if prm == nil {
			continue
		}
		if !resourceCovers(prm.Resource, server) {
			return nil, fmt.Errorf("protected resource metadata at %s names resource %q, which is not the server %s", u, prm.Resource, st.serverURL)
		}
		return prm, nil
	}
	return nil, nil
}

// resourceCovers reports whether the resource identifier names the server:
// the same origin, and a path that is the server's or a parent of it.
func resourceCovers(resource string, server *url.URL) bool {
	r, err := url.Parse(resource)
	if err != nil || r.Fragment != "" || !strings.EqualFold(r.Scheme, server.Scheme) || !strings.EqualFold(hostPort(r), hostPort(server)) {
		return false
	}
	rp, sp := strings.TrimSuffix(r.Path, "/"), strings.TrimSuffix(server.Path, "/")
	return rp == "" || sp == rp || strings.HasPrefix(sp, rp+"/")
}

func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return u.Host + ":443"
	case "http":
		return u.Host + ":80"
	}
	return u.Host
}

// fetchASMeta tries the RFC 8414 and OpenID Connect well-known locations
// for the issuer (path-inserted, then path-appended). It returns nil when
// none has a document; a document for another issuer is an error.
func (st *oauthState) fetchASMeta(ctx context.Context, issuer string) (*authServerMeta, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil, fmt.Errorf("bad authorization server URL %q", issuer)
	}
	origin := u.Scheme + "://" + u.Host
	var urls []string
	if p := strings.Trim(u.Path, "/"); p == "" {
		urls = []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"}
	} else {
		urls = []string{
			origin + "/.well-known/oauth-authorization-server/" + p,
			origin + "/.well-known/openid-configuration/" + p,
			origin + "/" + p + "/.well-known/openid-configuration",
		}
	}
	for _, mu := range urls {
		as, _, err := getJSON[authServerMeta](ctx, st.http, mu)
		if err != nil {
			return nil, fmt.Errorf("authorization server metadata: %w", err)
		}
		if as == nil {
			continue
		}
		if strings.TrimSuffix(as.Issuer, "/") != strings.TrimSuffix(issuer, "/") {
			return nil, fmt.Errorf("authorization server metadata at %s is for issuer %q, not %q", mu, as.Issuer, issuer)
		}
		if as.TokenEndpoint == "" {
			return nil, fmt.Errorf("authorization server metadata at %s has no token_endpoint", mu)
		}
		for _, e := range []struct{ name, u string }{
			{"authorization_endpoint", as.AuthorizationEndpoint}, {"token_endpoint", as.TokenEndpoint},
			{"registration_endpoint", as.RegistrationEndpoint},
		} {
			if e.u != "" {
				if err := checkEndpoint(e.name, e.u); err != nil {
					return nil, err
				}
			}
		}
		return as, nil
	}
	return nil, nil
}

// ---- the grants ----

// oauthClientID is the client's identity at one authorization server.
type oauthClientID struct {
	id, secret, method string
}

// scopesFor picks the scopes to ask for: the configured ones with any
// challenged, else the challenge's, else those the protected resource
// metadata lists; plus what this issuer granted before (SEP-2350), plus
// offline_access for a refresh token when the authorization server
// offers it (SEP-2207).
func (st *oauthState) scopesFor(d *oauthDiscovery) []string {
	var s []string
	switch {
	case len(st.cfg.Scopes) > 0:
		s = unionScopes(st.cfg.Scopes, d.challengeScopes)
	case len(d.challengeScopes) > 0:
		s = d.challengeScopes
	case d.prm != nil:
		s = d.prm.ScopesSupported
	}
	st.mu.Lock()
	s = unionScopes(st.granted[d.as.Issuer], s)
	st.mu.Unlock()
	if st.grant == OAuthAuthorizationCode && slices.Contains(d.as.ScopesSupported, "offline_access") {
		s = unionScopes(s, []string{"offline_access"})
	}
	return s
}

func unionScopes(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func isSubset(a, b []string) bool {
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	return true
}

// authMethod picks the token endpoint authentication for credentials.
func authMethod(configured string, hasSecret, hasKey bool, supported []string) string {
	switch {
	case configured != "":
		return configured
	case hasKey:
		return AuthMethodPrivateKeyJWT
	case !hasSecret:
		return AuthMethodNone
	case len(supported) == 0 || slices.Contains(supported, AuthMethodClientSecretBasic):
		return AuthMethodClientSecretBasic // RFC 8414's default
	case slices.Contains(supported, AuthMethodClientSecretPost):
		return AuthMethodClientSecretPost
	}
	return AuthMethodClientSecretBasic
}

func authStyle(method string) oauth2.AuthStyle {
	if method == AuthMethodClientSecretBasic {
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleInParams
}

// preregistered returns the configured client if it may be used with as:
// pinned to as by OAuthConfig.Issuer, or bound to the first issuer it
// meets (credentials are never carried to another authorization server).
func (st *oauthState) preregistered(as *authServerMeta) (*oauthClientID, string) {
	if st.cfg.ClientID == "" {
		return nil, ""
	}
	if st.cfg.Issuer != "" && strings.TrimSuffix(st.cfg.Issuer, "/") != strings.TrimSuffix(as.Issuer, "/") {
		return nil, fmt.Sprintf("the configured client belongs to %s", st.cfg.Issuer)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.preIssuer == "" {
		st.preIssuer = as.Issuer
	} else if st.preIssuer != as.Issuer {
		return nil, fmt.Sprintf("the configured client was used with %s", st.preIssuer)
	}
	return &oauthClientID{
		id: st.cfg.ClientID, secret: st.cfg.ClientSecret,
		method: authMethod(st.cfg.TokenEndpointAuthMethod, st.cfg.ClientSecret != "", st.key != nil, as.TokenEndpointAuthMethodsSupported),
	}, ""
}

// clientFor finds the client's identity for the authorization code grant:
// the configured client, a client ID metadata document, or a dynamic
// registration (once per issuer).
func (st *oauthState) clientFor(ctx context.Context, as *authServerMeta) (*oauthClientID, error) {
	pre, why := st.preregistered(as)
	if pre != nil {
		return pre, nil
	}
	if st.cfg.ClientMetadataURL != "" && as.ClientIDMetadataDocumentSupported {
		return &oauthClientID{id: st.cfg.ClientMetadataURL, method: AuthMethodNone}, nil
	}
	if as.RegistrationEndpoint == "" {
		msg := fmt.Sprintf("authorization server %s supports neither client ID metadata documents nor dynamic registration: configure oauth.clientId", as.Issuer)
		if why != "" {
			msg += " (" + why + ")"
		}
		return nil, errors.New(msg)
	}
	st.mu.Lock()
	reg := st.clients[as.Issuer]
	st.mu.Unlock()
	if reg != nil {
		return reg, nil
	}
	supported := as.TokenEndpointAuthMethodsSupported
	method := AuthMethodClientSecretBasic
	switch {
	case slices.Contains(supported, AuthMethodNone):
		method = AuthMethodNone
	case len(supported) == 0 || slices.Contains(supported, AuthMethodClientSecretBasic):
	case slices.Contains(supported, AuthMethodClientSecretPost):
		method = AuthMethodClientSecretPost
	}
	appType := "native"
	if u, err := url.Parse(st.cfg.RedirectURI); err == nil && u.Scheme == "https" && !isLoopbackHost(u.Hostname()) {
		appType = "web"
	}
	resp, err := oauthex.RegisterClient(ctx, as.RegistrationEndpoint, &oauthex.ClientRegistrationMetadata{
		RedirectURIs:            []string{st.cfg.RedirectURI},
		TokenEndpointAuthMethod: method,
		GrantTypes:              []string{"authorization_code", "refresh_token"},
		ResponseTypes:           []string{"code"},
		ClientName:              st.clientName,
		ApplicationType:         appType,
	}, st.http)
	if err != nil {
		return nil, fmt.Errorf("dynamic client registration at %s: %w", as.RegistrationEndpoint, err)
	}
	reg = &oauthClientID{id: resp.ClientID, secret: resp.ClientSecret, method: resp.TokenEndpointAuthMethod}
	switch {
	case reg.method != "":
	case reg.secret == "":
		reg.method = AuthMethodNone
	case method != AuthMethodNone:
		reg.method = method
	default:
		reg.method = AuthMethodClientSecretBasic
	}
	st.mu.Lock()
	st.clients[as.Issuer] = reg
	st.mu.Unlock()
	st.log.Info("mcpkit: OAuth client registered", "server", st.name, "issuer", as.Issuer, "client_id", reg.id)
	return reg, nil
}

// wantsDPoP reports whether to ask for DPoP-bound tokens.
func (st *oauthState) wantsDPoP(d *oauthDiscovery) bool {
	return slices.Contains(d.as.DPoPSigningAlgValuesSupported, "ES256") && (st.cfg.DPoP || d.rsWantsDPoP)
}

// tokenContext is the context for x/oauth2's token requests: its HTTP
// client adds DPoP proofs and the resource indicator (also to refreshes).
func (st *oauthState) tokenContext(ctx context.Context, dpop bool, resource string) context.Context {
	hc := &http.Client{Transport: &tokenTransport{st: st, base: st.base, dpop: dpop, resource: resource}, Timeout: st.http.Timeout}
	return context.WithValue(ctx, oauth2.HTTPClient, hc)
}

// authorizationCode runs the authorization code grant with PKCE (S256),
// the resource indicator and the RFC 9207 issuer check.
func (st *oauthState) authorizationCode(ctx context.Context, d *oauthDiscovery) (*oauthToken, error) {
	as := d.as
	if as.AuthorizationEndpoint == "" {
		return nil, fmt.Errorf("authorization server %s has no authorization_endpoint", as.Issuer)
	}
	if !d.noMetadata && !slices.Contains(as.CodeChallengeMethodsSupported, "S256") {
		return nil, fmt.Errorf("authorization server %s does not support PKCE with S256 (code_challenge_methods_supported %v)", as.Issuer, as.CodeChallengeMethodsSupported)
	}
	client, err := st.clientFor(ctx, as)
	if err != nil {
		return nil, err
	}
	scopes := st.scopesFor(d)
	dpop := st.wantsDPoP(d)
	conf := &oauth2.Config{
		ClientID:     client.id,
		ClientSecret: client.secret,
		Endpoint:     oauth2.Endpoint{AuthURL: as.AuthorizationEndpoint, TokenURL: as.TokenEndpoint, AuthStyle: authStyle(client.method)},
		RedirectURL:  st.cfg.RedirectURI,
		Scopes:       scopes,
	}
	if client.method == AuthMethodNone {
		conf.ClientSecret = ""
	}
	verifier, state := oauth2.GenerateVerifier(), rand.Text()
	authURL := conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", d.resource))
	cb, err := st.userAuthorization(ctx, authURL)
	if err != nil {
		return nil, err
	}
	q := cb.Query()
	if e := q.Get("error"); e != "" {
		msg := "authorization refused: " + e
		if desc := q.Get("error_description"); desc != "" {
			msg += ": " + desc
		}
		return nil, errors.New(msg)
	}
	if q.Get("state") != state {
		return nil, errors.New("authorization response has the wrong state")
	}
	// RFC 9207: a present iss must be the issuer, compared as strings; an
	// issuer that promises iss must send it.
	if q.Has("iss") && q.Get("iss") != as.Issuer {
		return nil, fmt.Errorf("authorization response comes from issuer %q, not %q", q.Get("iss"), as.Issuer)
	}
	if !q.Has("iss") && as.AuthorizationResponseIssParameterSupported {
		return nil, fmt.Errorf("authorization response lacks the iss that %s promises", as.Issuer)
	}
	code := q.Get("code")
	if code == "" {
		return nil, errors.New("authorization response has no code")
	}
	tctx := st.tokenContext(context.Background(), dpop, d.resource)
	xctx, cancel := context.WithCancel(tctx)
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	defer cancel()
	t, err := conf.Exchange(xctx, code, oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", d.resource))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_client" {
			st.mu.Lock()
			if st.clients[as.Issuer] == client {
				delete(st.clients, as.Issuer) // register anew next time
			}
			st.mu.Unlock()
		}
		return nil, fmt.Errorf("token request: %w", err)
	}
	return &oauthToken{
		ts: conf.TokenSource(tctx, t), dpop: strings.EqualFold(t.TokenType, "DPoP"), issuer: as.Issuer,
		scopes: grantedScopes(t, scopes), conf: conf, tokenCtx: tctx,
	}, nil
}

func grantedScopes(t *oauth2.Token, requested []string) []string {
	if s, ok := t.Extra("scope").(string); ok {
		return strings.Fields(s)
	}
	return requested
}

// userAuthorization sends the user to authURL and returns the redirect.
// Without an OAuthAuthorize hook it fetches authURL itself and takes an
// immediate redirect (authorization servers that need no user).
func (st *oauthState) userAuthorization(ctx context.Context, authURL string) (*url.URL, error) {
	if st.authorize != nil {
		u, err := st.authorize(ctx, &OAuthAuthorization{Server: st.name, URL: authURL, RedirectURI: st.cfg.RedirectURI})
		if err != nil {
			return nil, fmt.Errorf("user authorization: %w", err)
		}
		return u, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := st.noRedirect.Do(req)
	if err != nil {
		return nil, fmt.Errorf("authorization request: %w", err)
	}
	discard(resp)
	loc, err := resp.Location()
	if resp.StatusCode < 300 || resp.StatusCode > 399 || err != nil {
		return nil, fmt.Errorf("the authorization endpoint answered HTTP %d without redirecting: it needs a user (set ClientOptions.OAuthAuthorize)", resp.StatusCode)
	}
	if ru, err := url.Parse(st.cfg.RedirectURI); err != nil || loc.Scheme != ru.Scheme || loc.Host != ru.Host || loc.Path != ru.Path {
		return nil, errors.New("the authorization endpoint redirected elsewhere than the redirect URI: it needs a user (set ClientOptions.OAuthAuthorize)")
	}
	return loc, nil
}

// assertionGrant runs the client credentials or JWT bearer grant. The
// token source runs the grant again when the token expires (with a fresh
// client assertion and, for a file, a freshly read assertion).
func (st *oauthState) assertionGrant(ctx context.Context, d *oauthDiscovery) (*oauthToken, error) {
	as := d.as
	if gts := as.GrantTypesSupported; len(gts) > 0 {
		want := "client_credentials"
		if st.grant == OAuthJWTBearer {
			want = jwtBearerGrantType
		}
		if !slices.Contains(gts, want) {
			st.log.Warn("mcpkit: authorization server does not list the grant", "server", st.name, "grant", want, "grant_types_supported", gts)
		}
	}
	var (
		client = &oauthClientID{id: st.cfg.ClientID, secret: st.cfg.ClientSecret}
		why    string
	)
	if st.cfg.ClientID != "" {
		if client, why = st.preregistered(as); client == nil {
			return nil, errors.New("cannot use the configured client with " + as.Issuer + ": " + why)
		}
	}
	client.method = authMethod(st.cfg.TokenEndpointAuthMethod, st.cfg.ClientSecret != "", st.key != nil, as.TokenEndpointAuthMethodsSupported)
	if client.method == AuthMethodPrivateKeyJWT {
		if algs := as.TokenEndpointAuthSigningAlgValuesSupported; len(algs) > 0 && !slices.Contains(algs, st.alg) {
			return nil, fmt.Errorf("authorization server %s does not accept %s client assertions (it lists %v)", as.Issuer, st.alg, algs)
		}
	}
	scopes := st.scopesFor(d)
	dpop := st.wantsDPoP(d)
	tctx := st.tokenContext(context.Background(), dpop, d.resource)
	fetch := func(ctx context.Context) (*oauth2.Token, error) {
		cc := &clientcredentials.Config{
			ClientID: client.id, TokenURL: as.TokenEndpoint, Scopes: scopes, AuthStyle: authStyle(client.method),
			EndpointParams: url.Values{"resource": {d.resource}},
		}
		switch client.method {
		case AuthMethodClientSecretBasic, AuthMethodClientSecretPost:
			cc.ClientSecret = client.secret
		case AuthMethodPrivateKeyJWT:
			aud := as.Issuer
			if d.noMetadata {
				aud = as.TokenEndpoint
			}
			a, err := st.clientAssertion(aud)
			if err != nil {
				return nil, err
			}
			cc.EndpointParams.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
			cc.EndpointParams.Set("client_assertion", a)
		}
		if st.grant == OAuthJWTBearer {
			a, err := st.grantAssertion(ctx, d, scopes)
			if err != nil {
				return nil, err
			}
			cc.EndpointParams.Set("grant_type", jwtBearerGrantType)
			cc.EndpointParams.Set("assertion", a)
		}
		xctx, cancel := context.WithCancel(tctx)
		stop := context.AfterFunc(ctx, cancel)
		defer stop()
		defer cancel()
		t, err := cc.Token(xctx)
		if err != nil {
			return nil, fmt.Errorf("token request: %w", err)
		}
		return t, nil
	}
	t, err := fetch(ctx)
	if err != nil {
		return nil, err
	}
	again := tokenSourceFunc(func() (*oauth2.Token, error) {
		ctx, cancel := context.WithTimeout(context.Background(), st.http.Timeout)
		defer cancel()
		return fetch(ctx)
	})
	return &oauthToken{
		ts: oauth2.ReuseTokenSource(t, again), dpop: strings.EqualFold(t.TokenType, "DPoP"),
		issuer: as.Issuer, scopes: grantedScopes(t, scopes),
	}, nil
}

const jwtBearerGrantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"

type tokenSourceFunc func() (*oauth2.Token, error)

func (f tokenSourceFunc) Token() (*oauth2.Token, error) { return f() }

// grantAssertion returns the JWT bearer grant's assertion: the configured
// one, the file's current contents, or an ID-JAG from the identity
// provider (RFC 8693 token exchange, SEP-990).
func (st *oauthState) grantAssertion(ctx context.Context, d *oauthDiscovery, scopes []string) (string, error) {
	switch {
	case st.cfg.Assertion != "":
		return st.cfg.Assertion, nil
	case st.cfg.AssertionFile != "":
		data, err := os.ReadFile(st.cfg.AssertionFile)
		if err != nil {
			return "", fmt.Errorf("read assertion: %w", err)
		}
		return strings.TrimSpace(string(data)), nil
	}
	idp := st.cfg.IdentityProvider
	idToken := idp.IDToken
	if idp.IDTokenFile != "" {
		data, err := os.ReadFile(idp.IDTokenFile)
		if err != nil {
			return "", fmt.Errorf("read ID token: %w", err)
		}
		idToken = strings.TrimSpace(string(data))
	}
	creds := &oauthex.ClientCredentials{ClientID: idp.ClientID}
	if idp.ClientSecret != "" {
		creds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: idp.ClientSecret}
	}
	t, err := oauthex.ExchangeToken(ctx, idp.TokenEndpoint, &oauthex.TokenExchangeRequest{
		RequestedTokenType: oauthex.TokenTypeIDJAG,
		Audience:           d.as.Issuer,
		Resource:           d.resource,
		Scope:              scopes,
		SubjectToken:       idToken,
		SubjectTokenType:   oauthex.TokenTypeIDToken,
	}, creds, st.http)
	if err != nil {
		return "", fmt.Errorf("identity provider token exchange: %w", err)
	}
	return t.AccessToken, nil
}

// clientAssertion signs a private_key_jwt client assertion (RFC 7523
// §2.2) for the audience (the issuer).
func (st *oauthState) clientAssertion(aud string) (string, error) {
	now := time.Now()
	t := jwt.NewWithClaims(jwt.GetSigningMethod(st.alg), jwt.MapClaims{
		"iss": st.cfg.ClientID, "sub": st.cfg.ClientID, "aud": aud,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "jti": rand.Text(),
	})
	s, err := t.SignedString(st.key)
	if err != nil {
		return "", fmt.Errorf("sign client assertion: %w", err)
	}
	return s, nil
}

// ---- DPoP (RFC 9449) ----

// dpopProof signs a proof for a request; accessToken binds it to a token.
func (st *oauthState) dpopProof(method string, u *url.URL, accessToken string) (string, error) {
	st.mu.Lock()
	if st.dpopKey == nil {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			st.mu.Unlock()
			return "", err
		}
		st.dpopKey = k
	}
	key := st.dpopKey
	nonce := st.nonces[u.Scheme+"://"+u.Host]
	st.mu.Unlock()
	pub, err := key.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		return "", err
	}
	htu := *u
	htu.RawQuery, htu.Fragment, htu.RawFragment = "", "", ""
	claims := jwt.MapClaims{"jti": rand.Text(), "htm": method, "htu": htu.String(), "iat": time.Now().Unix()}
	if nonce != "" {
		claims["nonce"] = nonce
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	t := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	t.Header["typ"] = "dpop+jwt"
	t.Header["jwk"] = map[string]string{
		"kty": "EC", "crv": "P-256",
		"x": base64.RawURLEncoding.EncodeToString(pub[1:33]),
		"y": base64.RawURLEncoding.EncodeToString(pub[33:65]),
	}
	return t.SignedString(key)
}

// noteNonce remembers a DPoP-Nonce the server sent.
func (st *oauthState) noteNonce(u *url.URL, resp *http.Response) {
	if n := resp.Header.Get("DPoP-Nonce"); n != "" {
		st.mu.Lock()
		st.nonces[u.Scheme+"://"+u.Host] = n
		st.mu.Unlock()
	}
}

// tokenTransport carries x/oauth2's token requests: it adds the resource
// indicator to refreshes (x/oauth2 sends none) and, for DPoP, a proof,
// retrying once with the server's nonce on use_dpop_nonce.
type tokenTransport struct {
	st       *oauthState
	base     http.RoundTripper
	dpop     bool
	resource string
}

func (t *tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
	}
	if form, err := url.ParseQuery(string(body)); err == nil && form.Get("grant_type") == "refresh_token" && !form.Has("resource") && t.resource != "" {
		form.Set("resource", t.resource)
		body = []byte(form.Encode())
	}
	for attempt := 0; ; attempt++ {
		out := req.Clone(req.Context())
		out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		if t.dpop {
			proof, err := t.st.dpopProof(req.Method, req.URL, "")
			if err != nil {
				return nil, err
			}
			out.Header.Set("DPoP", proof)
		}
		resp, err := t.base.RoundTrip(out)
		if err != nil || !t.dpop {
			return resp, err
		}
		t.st.noteNonce(req.URL, resp)
		if attempt > 0 || resp.StatusCode != http.StatusBadRequest || resp.Header.Get("DPoP-Nonce") == "" {
			return resp, nil
		}
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(data, &e) != nil || e.Error != "use_dpop_nonce" {
			resp.Body = io.NopCloser(bytes.NewReader(data))
			return resp, nil
		}
	}
}

// headerValue looks a header up in a configured header map, ignoring case.
func headerValue(h map[string]string, name string) (string, bool) {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// oauthFailure returns the OAuth flow's error inside err, if any.
func oauthFailure(err error) *Error {
	var e *Error
	if errors.As(err, &e) && e.Code == CodeSessionError && strings.HasPrefix(e.Message, "OAuth") {
		return e
	}
	return nil
}
