package oauth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// clientID is the client's identity at one authorization server.
type clientID struct {
	id, secret, method string
}

// scopesFor picks the scopes to ask for: the configured ones with any
// challenged, else the challenge's, else those the protected resource
// metadata lists; plus what this issuer granted before (SEP-2350), plus
// offline_access for a refresh token when the authorization server
// offers it (SEP-2207).
func (st *Flow) scopesFor(d *discovery) []string {
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
	if st.grant == AuthorizationCode && slices.Contains(d.as.ScopesSupported, "offline_access") {
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
// pinned to as by Config.Issuer, or bound to the first issuer it
// meets (credentials are never carried to another authorization server).
func (st *Flow) preregistered(as *authServerMeta) (*clientID, string) {
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
	return &clientID{
		id: st.cfg.ClientID, secret: st.cfg.ClientSecret,
		method: authMethod(st.cfg.TokenEndpointAuthMethod, st.cfg.ClientSecret != "", st.key != nil, as.TokenEndpointAuthMethodsSupported),
	}, ""
}

// clientFor finds the client's identity for the authorization code grant:
// the configured client, a client ID metadata document, or a dynamic
// registration (once per issuer).
func (st *Flow) clientFor(ctx context.Context, as *authServerMeta) (*clientID, error) {
	pre, why := st.preregistered(as)
	if pre != nil {
		return pre, nil
	}
	if st.cfg.ClientMetadataURL != "" && as.ClientIDMetadataDocumentSupported {
		return &clientID{id: st.cfg.ClientMetadataURL, method: AuthMethodNone}, nil
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
	reg = &clientID{id: resp.ClientID, secret: resp.ClientSecret, method: resp.TokenEndpointAuthMethod}
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
func (st *Flow) wantsDPoP(d *discovery) bool {
	return slices.Contains(d.as.DPoPSigningAlgValuesSupported, "ES256") && (st.cfg.DPoP || d.rsWantsDPoP)
}

// tokenContext is the context for x/oauth2's token requests: its HTTP
// client adds DPoP proofs and the resource indicator (also to refreshes).
func (st *Flow) tokenContext(ctx context.Context, dpop bool, resource string) context.Context {
	hc := &http.Client{Transport: &tokenTransport{st: st, base: st.base, dpop: dpop, resource: resource}, Timeout: st.http.Timeout}
	return context.WithValue(ctx, oauth2.HTTPClient, hc)
}

// authorizationCode runs the authorization code grant with PKCE (S256),
// the resource indicator and the RFC 9207 issuer check.
func (st *Flow) authorizationCode(ctx context.Context, d *discovery) (*token, error) {
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
	return &token{
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
// Without FlowOptions.Authorize it fetches authURL itself and takes an
// immediate redirect (authorization servers that need no user).
func (st *Flow) userAuthorization(ctx context.Context, authURL string) (*url.URL, error) {
	if st.authorize != nil {
		u, err := st.authorize(ctx, &Authorization{Server: st.name, URL: authURL, RedirectURI: st.cfg.RedirectURI})
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
func (st *Flow) assertionGrant(ctx context.Context, d *discovery) (*token, error) {
	as := d.as
	if gts := as.GrantTypesSupported; len(gts) > 0 {
		want := "client_credentials"
		if st.grant == JWTBearer {
			want = jwtBearerGrantType
		}
		if !slices.Contains(gts, want) {
			st.log.Warn("mcpkit: authorization server does not list the grant", "server", st.name, "grant", want, "grant_types_supported", gts)
		}
	}
	var (
		client = &clientID{id: st.cfg.ClientID, secret: st.cfg.ClientSecret}
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
		if st.grant == JWTBearer {
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
	return &token{
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
func (st *Flow) grantAssertion(ctx context.Context, d *discovery, scopes []string) (string, error) {
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
func (st *Flow) clientAssertion(aud string) (string, error) {
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
