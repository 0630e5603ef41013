package authserver

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/auth"
	"github.com/worldforge-go/worldforge/authserver/clientmeta"
)

// codePrefix starts every authorization code.
const codePrefix = "wfc_"

// Request is a checked authorization request, as the consent page shows
// it.
type Request struct {
	ClientID    string
	ClientName  string
	ClientURI   string
	RedirectURI string
	// RedirectHost is the host the code will be sent to; for a native
	// app's private-use scheme, which has none, the scheme ("com.example.app:").
	RedirectHost string
	State        string
	Challenge    string
	Scopes       []string
	Resource     string
	// Query is the request's query string, which the consent form sends
	// back.
	Query string
	doc   *document
	// givenRedirect is the redirect_uri parameter ("" when left out),
	// which the token request must repeat.
	givenRedirect string
}

// AuthorizeError is a refused authorization request. With RedirectURI
// set the refusal goes back to the client (Location); without, the
// client or its redirect URI could not be trusted and the person sees an
// error page instead.
type AuthorizeError struct {
	Code, Description  string
	RedirectURI, State string
	issuer             string
}

func (e *AuthorizeError) Error() string { return e.Code + ": " + e.Description }

// Location is the redirect carrying the error to the client (RFC 6749
// §4.1.2.1, with RFC 9207's iss); "" when it must not be redirected.
func (e *AuthorizeError) Location() string {
	if e.RedirectURI == "" {
		return ""
	}
	return withParams(e.RedirectURI, "error", e.Code, "error_description", e.Description, "state", e.State, "iss", e.issuer)
}

// withParams adds query parameters (those with a value) to a URI that
// may have a query already.
func withParams(uri string, pairs ...string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return ""
	}
	q := u.Query()
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			q.Set(pairs[i], pairs[i+1])
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// isPKCE reports whether s is a valid S256 challenge or verifier alphabet
// string of 43 to 128 characters (RFC 7636 §4.1).
func isPKCE(s string) bool {
	if len(s) < 43 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

// ParseScope splits a space-separated scope parameter and checks every
// name against Scopes. An empty parameter asks for every scope.
func ParseScope(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return Scopes(), nil
	}
	var out []string
	for _, name := range strings.Fields(s) {
		if !slices.Contains(Scopes(), name) {
			return nil, fmt.Errorf("unknown scope %q", name)
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// checkResource accepts a resource indicator naming this server: its
// /mcp endpoint or its base URL (the root protected resource metadata's
// resource). Either way the token is bound to Resource().
func (s *Server) checkResource(values []string) (string, string, string) {
	switch {
	case len(values) == 0 || values[0] == "":
		return "", "invalid_request", "the resource parameter (RFC 8707) is required: " + s.resource
	case len(values) > 1:
		return "", "invalid_target", "one resource only: " + s.resource
	}
	r := strings.TrimSuffix(values[0], "/")
	if r != s.resource && r != s.issuer {
		return "", "invalid_target", "tokens of this server are for " + s.resource
	}
	return s.resource, "", ""
}

// CheckAuthorize checks an authorization request's parameters: the
// client and its redirect URI first (a failure there is an
// AuthorizeError without RedirectURI: never redirect to a URI that is
// not the client's), then the rest (an AuthorizeError sent back to the
// client). A failure to reach the store is another error.
func (s *Server) CheckAuthorize(ctx context.Context, q url.Values) (*Request, error) {
	for _, name := range []string{"client_id", "redirect_uri", "response_type", "state", "scope", "code_challenge", "code_challenge_method"} {
		if len(q[name]) > 1 {
			return nil, &AuthorizeError{Code: "invalid_request", Description: name + " is given more than once"}
		}
	}
	clientID := q.Get("client_id")
	if clientID == "" {
		return nil, &AuthorizeError{Code: "invalid_request", Description: "client_id is required"}
	}
	doc, err := s.client(ctx, clientID)
	if err != nil {
		var ce *clientmeta.Error
		if errors.As(err, &ce) {
			return nil, &AuthorizeError{Code: ce.Code, Description: ce.Description}
		}
		return nil, err
	}
	// A client with one redirect URI may leave it out (OAuth 2.1 §4.1.1);
	// the token request then leaves it out too.
	given := q.Get("redirect_uri")
	redirect := given
	if redirect == "" && len(doc.RedirectURIs) == 1 {
		redirect = doc.RedirectURIs[0]
	}
	if redirect == "" {
		return nil, &AuthorizeError{Code: "invalid_request", Description: "redirect_uri is required"}
	}
	if !clientmeta.RedirectMatches(doc.RedirectURIs, redirect) {
		return nil, &AuthorizeError{Code: "invalid_request", Description: "redirect_uri is not one the client registered"}
	}
	ru, err := url.Parse(redirect)
	if err != nil {
		return nil, &AuthorizeError{Code: "invalid_request", Description: "redirect_uri is not a URI"}
	}
	state := q.Get("state")
	fail := func(code, desc string) error {
		return &AuthorizeError{Code: code, Description: desc, RedirectURI: redirect, State: state, issuer: s.issuer}
	}
	if rt := q.Get("response_type"); rt != "code" {
		if rt == "" {
			return nil, fail("invalid_request", "response_type is required (code)")
		}
		return nil, fail("unsupported_response_type", "only response_type=code is supported")
	}
	challenge, method := q.Get("code_challenge"), q.Get("code_challenge_method")
	switch {
	case challenge == "":
		return nil, fail("invalid_request", "code_challenge is required (PKCE S256)")
	case method != "S256":
		return nil, fail("invalid_request", "code_challenge_method must be S256")
	case !isPKCE(challenge) || len(challenge) != 43:
		return nil, fail("invalid_request", "code_challenge is not an S256 challenge")
	}
	resource, code, desc := s.checkResource(q["resource"])
	if code != "" {
		return nil, fail(code, desc)
	}
	scopes, err := ParseScope(q.Get("scope"))
	if err != nil {
		return nil, fail("invalid_scope", err.Error())
	}
	name := doc.ClientName
	if name == "" {
		name = clientID
	}
	host := ru.Host
	if host == "" {
		host = ru.Scheme + ":"
	}
	return &Request{
		ClientID: clientID, ClientName: name, ClientURI: doc.ClientURI, RedirectURI: redirect, RedirectHost: host,
		State: state, Challenge: challenge, Scopes: scopes, Resource: resource, Query: q.Encode(), doc: doc, givenRedirect: given,
	}, nil
}

// Approve records the person's consent to the request with the scopes
// they kept (a non-empty subset of those asked for) and returns where to
// send the browser: the redirect URI with the code, the state and the
// issuer.
func (s *Server) Approve(ctx context.Context, req *Request, userID string, scopes []string) (string, error) {
	if len(scopes) == 0 {
		return "", wf.BadRequest("choose at least one scope")
	}
	for _, sc := range scopes {
		if !slices.Contains(req.Scopes, sc) {
			return "", wf.BadRequest("scope %q was not asked for", sc)
		}
	}
	if req.doc != nil {
		if err := s.saveClient(ctx, req.doc); err != nil {
			return "", fmt.Errorf("approve: %w", err)
		}
	}
	code, hash, err := auth.NewOAuthSecret(codePrefix)
	if err != nil {
		return "", fmt.Errorf("approve: %w", err)
	}
	now := s.now()
	c := &wf.OAuthCode{
		Hash: hash, ClientID: req.ClientID, UserID: userID, RedirectURI: req.givenRedirect, Resource: req.Resource,
		Challenge: req.Challenge, Scopes: scopes, GrantID: wf.NewID("grant"), CreatedAt: now, ExpiresAt: now.Add(s.o.CodeTTL),
	}
	if err := s.store.CreateOAuthCode(ctx, c); err != nil {
		return "", fmt.Errorf("approve: %w", err)
	}
	s.log.InfoContext(ctx, "oauth consent given", "client_id", req.ClientID, "user_id", userID, "scopes", strings.Join(scopes, " "))
	return withParams(req.RedirectURI, "code", code, "state", req.State, "iss", s.issuer), nil
}

// Deny returns where to send the browser when the person refuses:
// the redirect URI with error=access_denied.
func (s *Server) Deny(req *Request) string {
	return (&AuthorizeError{Code: "access_denied", Description: "the person refused", RedirectURI: req.RedirectURI, State: req.State, issuer: s.issuer}).Location()
}

// authorize checks the request and sends the browser to the consent
// page with it; a refusal goes back to the client, or, when the client
// or its redirect URI is in doubt, is an error page.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	_, err := s.CheckAuthorize(r.Context(), r.URL.Query())
	if err != nil {
		s.AuthorizeFailed(w, r, err)
		return
	}
	http.Redirect(w, r, s.o.ConsentPath+"?"+r.URL.RawQuery, http.StatusSeeOther)
}

// AuthorizeFailed answers an authorization request CheckAuthorize
// refused: a redirect to the client when it may be, else an error page.
func (s *Server) AuthorizeFailed(w http.ResponseWriter, r *http.Request, err error) {
	var ae *AuthorizeError
	if !errors.As(err, &ae) {
		s.log.ErrorContext(r.Context(), "oauth authorize", "err", err)
		ErrorPage(w, http.StatusServiceUnavailable, "server_error", "The server could not check this request. Try again in a moment.")
		return
	}
	if loc := ae.Location(); loc != "" {
		http.Redirect(w, r, loc, http.StatusSeeOther)
		return
	}
	ErrorPage(w, http.StatusBadRequest, ae.Code, ae.Description)
}

var errorPage = template.Must(template.New("error").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Authorization refused</title></head>
<body><main><h1>This app cannot be authorized</h1>
<p>The request to connect an app to WorldForge was refused, and nothing was changed: {{.Description}} (<code>{{.Code}}</code>).</p>
<p>Go back to the app and try connecting again; if this keeps happening, the app is misconfigured.</p>
</main></body></html>
`))

// ErrorPage writes the page a person sees for an authorization request
// that must not be sent back to its client.
func ErrorPage(w http.ResponseWriter, status int, code, desc string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	h.Set("X-Frame-Options", "DENY")
	w.WriteHeader(status)
	_ = errorPage.Execute(w, struct{ Code, Description string }{code, desc})
}
