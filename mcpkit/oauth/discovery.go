package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// authServerMeta is RFC 8414 metadata with the DPoP field oauthex lacks.
type authServerMeta struct {
	oauthex.AuthServerMeta
	DPoPSigningAlgValuesSupported []string `json:"dpop_signing_alg_values_supported,omitempty"`
}

// discovery is what the client learned before asking for a token.
type discovery struct {
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
func (st *Flow) discover(ctx context.Context, ch []oauthex.Challenge) (*discovery, error) {
	d := &discovery{challengeScopes: strings.Fields(challengeParam(ch, "scope"))}
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
func (st *Flow) fetchPRM(ctx context.Context, fromChallenge string, server *url.URL, origin string) (*oauthex.ProtectedResourceMetadata, error) {
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
func (st *Flow) fetchASMeta(ctx context.Context, issuer string) (*authServerMeta, error) {
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
