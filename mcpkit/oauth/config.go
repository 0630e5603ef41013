package oauth

import (
	"crypto"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Grant names how a client obtains access tokens.
type Grant string

// The grants.
const (
	// AuthorizationCode is the authorization code grant with PKCE: a
	// user approves the client in a browser (FlowOptions.Authorize).
	AuthorizationCode Grant = "authorization_code"
	// ClientCredentials is the client credentials grant for clients
	// acting on their own behalf (a client secret or a private key).
	ClientCredentials Grant = "client_credentials"
	// JWTBearer is the JWT bearer grant (RFC 7523): the client
	// presents an assertion, either one it is given (a workload identity
	// token) or one an enterprise identity provider issues for an ID token
	// (an identity assertion authorization grant).
	JWTBearer Grant = "jwt_bearer"
)

// Token endpoint client authentication methods (RFC 7591 names).
const (
	AuthMethodClientSecretBasic = "client_secret_basic"
	AuthMethodClientSecretPost  = "client_secret_post"
	AuthMethodNone              = "none"
	AuthMethodPrivateKeyJWT     = "private_key_jwt"
)

// DefaultRedirectURI is the redirect URI of the authorization code
// grant when Config.RedirectURI is empty. LoopbackAuthorizer
// listens on it.
const DefaultRedirectURI = "http://127.0.0.1:33418/callback"

// Config configures OAuth for an HTTP or SSE server. The zero value
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
type Config struct {
	// Grant is how tokens are obtained (default AuthorizationCode).
	Grant Grant

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
	// back (default DefaultRedirectURI): https, http on a loopback
	// host, or a private-use scheme such as com.example.app:/callback.
	RedirectURI string

	// Scopes, if set, are always requested (with any challenged ones).
	Scopes []string

	// DPoP makes the client ask for DPoP-bound tokens (RFC 9449) whenever
	// the authorization server supports ES256 proofs. Without it the
	// client does so only when the server asks for DPoP (a DPoP challenge
	// or dpop_bound_access_tokens_required).
	DPoP bool

	// For JWTBearer, the assertion: Assertion itself, AssertionFile
	// (read for each token request, as rotating workload identity tokens
	// are), or one exchanged at IdentityProvider.
	Assertion        string
	AssertionFile    string
	IdentityProvider *IdentityProvider
}

// IdentityProvider is an enterprise identity provider that exchanges
// the user's ID token for an identity assertion grant (ID-JAG, RFC 8693
// token exchange) that the MCP server's authorization server accepts.
type IdentityProvider struct {
	TokenEndpoint string // the identity provider's token endpoint
	ClientID      string // the client's ID at the identity provider
	ClientSecret  string // optional
	// The user's ID token: IDToken itself, or IDTokenFile (read for each
	// exchange).
	IDToken     string
	IDTokenFile string
}

// ConfigError is a bad OAuth configuration. Its message never contains a
// secret.
type ConfigError struct {
	Field   string // the offending field as a configuration file names it: "oauth.grant", "oauth.idp.clientId"
	Message string
}

func (e *ConfigError) Error() string { return e.Field + ": " + e.Message }

func errf(field, format string, args ...any) *ConfigError {
	return &ConfigError{Field: "oauth." + field, Message: fmt.Sprintf(format, args...)}
}

// validate checks the configuration; it returns the parsed private key.
func (o *Config) validate() (crypto.Signer, string, *ConfigError) {
	grant := o.Grant
	if grant == "" {
		grant = AuthorizationCode
	}
	switch grant {
	case AuthorizationCode, ClientCredentials, JWTBearer:
	default:
		return nil, "", errf("grant", "unknown grant %q (want authorization_code, client_credentials or jwt_bearer)", o.Grant)
	}
	switch o.TokenEndpointAuthMethod {
	case "", AuthMethodClientSecretBasic, AuthMethodClientSecretPost, AuthMethodNone, AuthMethodPrivateKeyJWT:
	default:
		return nil, "", errf("tokenEndpointAuthMethod", "unknown method %q (want client_secret_basic, client_secret_post, none or private_key_jwt)", o.TokenEndpointAuthMethod)
	}
	hasSecret, hasKey := o.ClientSecret != "", o.PrivateKey != ""
	if (hasSecret || hasKey) && o.ClientID == "" {
		return nil, "", errf("clientId", "required with a client secret or private key")
	}
	if hasSecret && hasKey {
		return nil, "", errf("privateKeyFile", "use either a client secret or a private key, not both")
	}
	switch o.TokenEndpointAuthMethod {
	case AuthMethodClientSecretBasic, AuthMethodClientSecretPost:
		if !hasSecret {
			return nil, "", errf("clientSecret", "required by tokenEndpointAuthMethod %s", o.TokenEndpointAuthMethod)
		}
	case AuthMethodPrivateKeyJWT:
		if !hasKey {
			return nil, "", errf("privateKeyFile", "required by tokenEndpointAuthMethod private_key_jwt")
		}
	case AuthMethodNone:
		if hasSecret || hasKey {
			return nil, "", errf("tokenEndpointAuthMethod", "none, but a client secret or private key is set")
		}
	}
	var key crypto.Signer
	alg := o.SigningAlgorithm
	if hasKey {
		var err error
		if key, err = parsePrivateKey(o.PrivateKey); err != nil {
			return nil, "", errf("privateKeyFile", "%v", err)
		}
		if alg == "" {
			alg = defaultSigningAlg(key)
		}
		if err := checkSigningAlg(alg, key); err != nil {
			return nil, "", errf("signingAlgorithm", "%v", err)
		}
	} else if alg != "" {
		return nil, "", errf("signingAlgorithm", "set without a private key")
	}
	if o.RedirectURI != "" {
		if err := checkRedirectURI(o.RedirectURI); err != nil {
			return nil, "", errf("redirectUri", "%v", err)
		}
	}
	if o.ClientMetadataURL != "" {
		u, err := url.Parse(o.ClientMetadataURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" || u.Fragment != "" {
			return nil, "", errf("clientMetadataUrl", "want an https URL with a path and no fragment, got %q", o.ClientMetadataURL)
		}
	}
	if o.Issuer != "" {
		if u, err := url.Parse(o.Issuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, "", errf("issuer", "want an http or https URL, got %q", o.Issuer)
		}
	}
	for i, s := range o.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\r\n\"\\") {
			return nil, "", errf(fmt.Sprintf("scopes[%d]", i), "bad scope %q", s)
		}
	}
	hasAssertion := o.Assertion != "" || o.AssertionFile != "" || o.IdentityProvider != nil
	switch grant {
	case AuthorizationCode:
		if hasKey {
			return nil, "", errf("privateKeyFile", "private_key_jwt needs grant client_credentials or jwt_bearer")
		}
		if hasAssertion {
			return nil, "", errf("grant", "an assertion or idp needs grant jwt_bearer")
		}
	case ClientCredentials, JWTBearer:
		if o.RedirectURI != "" {
			return nil, "", errf("redirectUri", "not used by grant %s", grant)
		}
		if o.ClientMetadataURL != "" {
			return nil, "", errf("clientMetadataUrl", "not used by grant %s", grant)
		}
		if grant == ClientCredentials {
			if o.ClientID == "" {
				return nil, "", errf("clientId", "required by grant client_credentials")
			}
			if !hasSecret && !hasKey {
				return nil, "", errf("clientSecret", "grant client_credentials needs clientSecret or privateKeyFile")
			}
			if hasAssertion {
				return nil, "", errf("grant", "an assertion or idp needs grant jwt_bearer")
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
			return nil, "", errf("assertionFile", "grant jwt_bearer needs exactly one of assertionFile, assertionEnv or idp")
		}
		if p := o.IdentityProvider; p != nil {
			if u, err := url.Parse(p.TokenEndpoint); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				return nil, "", errf("idp.tokenEndpoint", "want an http or https URL, got %q", p.TokenEndpoint)
			}
			if p.ClientID == "" {
				return nil, "", errf("idp.clientId", "required")
			}
			if (p.IDToken == "") == (p.IDTokenFile == "") {
				return nil, "", errf("idp.idTokenFile", "want exactly one of idTokenFile or idTokenEnv")
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
