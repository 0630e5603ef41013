package oauth

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// Flow runs OAuth for one server on behalf of one client and holds what it
// obtains — tokens, dynamic registrations, the DPoP key — for the client's
// life, across reconnects. Transport puts it beneath a session's HTTP
// client.
type Flow struct {
	name       string
	serverURL  string
	cfg        Config
	grant      Grant
	key        crypto.Signer // private_key_jwt
	alg        string
	clientName string
	authorize  AuthorizeFunc
	log        *slog.Logger
	base       http.RoundTripper // the configured transport, without the server's headers
	http       *http.Client      // discovery, registration, token requests
	noRedirect *http.Client      // fetching the authorization URL ourselves

	flow sync.Mutex // one authorization at a time

	mu        sync.Mutex
	tok       *token
	granted   map[string][]string  // issuer → scopes granted there
	clients   map[string]*clientID // issuer → dynamically registered client
	preIssuer string               // the issuer pre-registered credentials are bound to
	dpopKey   *ecdsa.PrivateKey
	nonces    map[string]string // origin → DPoP nonce
}

// token is a grant's token source and what it was granted for.
type token struct {
	ts       oauth2.TokenSource
	dpop     bool
	issuer   string
	scopes   []string
	conf     *oauth2.Config // the authorization code grant's, for a forced refresh
	tokenCtx context.Context
}

// FlowOptions says which server a Flow authorizes for and how it reaches
// the authorization servers.
type FlowOptions struct {
	// Server is the server's name, for logs, errors and Authorization.
	Server string
	// URL is the server's endpoint: tokens go to its origin only.
	URL string
	// HTTPClient, if set, lends its Transport and Timeout (default 30 s)
	// to discovery, registration and token requests.
	HTTPClient *http.Client
	// ClientName is the client_name of dynamic registration when
	// Config.ClientName is empty.
	ClientName string
	// Authorize shows the user authorization requests (see
	// LoopbackAuthorizer). Without it the flow fetches the authorization
	// URL itself and takes an immediate redirect, which serves only
	// authorization servers that need no user.
	Authorize AuthorizeFunc
	// Logger receives the flow's log lines (nil: slog.Default()).
	Logger *slog.Logger
}

// NewFlow checks cfg and returns a Flow that has no token yet: it
// authorizes when the server first answers 401. The error is a
// *ConfigError.
func NewFlow(cfg Config, opts FlowOptions) (*Flow, error) {
	key, alg, verr := cfg.validate()
	if verr != nil {
		return nil, verr
	}
	base := http.RoundTripper(http.DefaultTransport)
	timeout := 30 * time.Second
	if hc := opts.HTTPClient; hc != nil {
		if hc.Transport != nil {
			base = hc.Transport
		}
		if hc.Timeout > 0 {
			timeout = hc.Timeout
		}
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	st := &Flow{
		name: opts.Server, serverURL: opts.URL, cfg: cfg, grant: cfg.Grant, key: key, alg: alg,
		clientName: cfg.ClientName, authorize: opts.Authorize, log: log, base: base,
		http: &http.Client{Transport: base, Timeout: timeout},
		noRedirect: &http.Client{Transport: base, Timeout: timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		granted: map[string][]string{}, clients: map[string]*clientID{}, nonces: map[string]string{},
	}
	if st.grant == "" {
		st.grant = AuthorizationCode
	}
	if st.clientName == "" {
		st.clientName = opts.ClientName
	}
	if st.cfg.RedirectURI == "" {
		st.cfg.RedirectURI = DefaultRedirectURI
	}
	return st, nil
}

// Transport returns a round tripper that authorizes the requests it sends
// through base to the server's origin (others pass untouched), running
// the flow on a 401 and stepping up on a 403 insufficient_scope. When the
// flow fails it returns an *Error.
func (st *Flow) Transport(base http.RoundTripper) http.RoundTripper {
	return &transport{st: st, base: base}
}

// Error is a failed authorization: the flow could not obtain, refresh or
// present a token.
type Error struct {
	Server string // FlowOptions.Server
	Err    error
}

func (e *Error) Error() string { return "OAuth authorization failed: " + e.Err.Error() }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// sameOrigin reports whether u is on the configured server's origin.
func (st *Flow) sameOrigin(u *url.URL) bool {
	s, err := url.Parse(st.serverURL)
	return err == nil && strings.EqualFold(u.Scheme, s.Scheme) && strings.EqualFold(hostPort(u), hostPort(s))
}

func (st *Flow) current() *token {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.tok
}

func (st *Flow) fail(err error) *Error {
	return &Error{Server: st.name, Err: err}
}

// transport authorizes the session's requests.
type transport struct {
	st   *Flow
	base http.RoundTripper
}

// MaxStepUps bounds the re-authorizations for more scope (403
// insufficient_scope) per request.
const MaxStepUps = 2

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
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
			if stepUps >= MaxStepUps || isSubset(want, tok.scopes) {
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
func (st *Flow) apply(r *http.Request, tok *token) error {
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
func (st *Flow) authorizeFor(ctx context.Context, ch []oauthex.Challenge, seen *token, stepUp, mayRefresh bool) (bool, error) {
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
	var nt *token
	switch st.grant {
	case ClientCredentials, JWTBearer:
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

func (st *Flow) setToken(t *token) {
	st.mu.Lock()
	st.tok = t
	st.granted[t.issuer] = t.scopes
	st.mu.Unlock()
}
