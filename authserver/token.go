package authserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/auth"
)

// tokenResponse is RFC 6749 §5.1's answer.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token,omitempty"`
	Scope        string `json:"scope"`
}

// readForm parses a bounded application/x-www-form-urlencoded body. A
// parameter given twice is invalid_request (RFC 6749 §3.1).
func readForm(w http.ResponseWriter, r *http.Request) (map[string]string, bool) {
	ct := r.Header.Get("Content-Type")
	if mt, _, _ := strings.Cut(ct, ";"); !strings.EqualFold(strings.TrimSpace(mt), "application/x-www-form-urlencoded") {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "the body must be application/x-www-form-urlencoded")
		return nil, false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "unreadable form body")
		return nil, false
	}
	out := map[string]string{}
	for k, v := range r.PostForm {
		if len(v) > 1 {
			writeOAuthError(w, http.StatusBadRequest, "invalid_request", k+" is given more than once")
			return nil, false
		}
		out[k] = v[0]
	}
	// A public client may still send its id by HTTP Basic (with an empty
	// secret).
	if id, _, ok := r.BasicAuth(); ok && out["client_id"] == "" {
		out["client_id"] = id
	}
	return out, true
}

// token is the token endpoint: the authorization_code and refresh_token
// grants. Every refusal is an RFC 6749 §5.2 error and changes nothing,
// except the two that reveal a stolen credential: a code used twice and
// a rotated refresh token presented again revoke their grant.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	f, ok := readForm(w, r)
	if !ok {
		return
	}
	switch f["grant_type"] {
	case "authorization_code":
		s.exchangeCode(w, r, f)
	case "refresh_token":
		s.refresh(w, r, f)
	case "":
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "grant_type is required")
	default:
		writeOAuthError(w, http.StatusBadRequest, "unsupported_grant_type", "supported grant types: authorization_code, refresh_token")
	}
}

// newTokens makes an access and a refresh token valid from now.
func (s *Server) newTokens(now time.Time) (access, refresh string, toks []*wf.OAuthToken, err error) {
	access, ah, err := auth.NewOAuthSecret(auth.AccessPrefix)
	if err != nil {
		return "", "", nil, err
	}
	refresh, rh, err := auth.NewOAuthSecret(auth.RefreshPrefix)
	if err != nil {
		return "", "", nil, err
	}
	return access, refresh, []*wf.OAuthToken{
		{Hash: ah, Kind: wf.OAuthAccess, CreatedAt: now, ExpiresAt: now.Add(s.o.AccessTTL)},
		{Hash: rh, Kind: wf.OAuthRefresh, CreatedAt: now, ExpiresAt: now.Add(s.o.RefreshTTL)},
	}, nil
}

func (s *Server) issued(w http.ResponseWriter, access, refresh string, scopes []string) {
	s.maybePrune()
	writeJSON(w, http.StatusOK, tokenResponse{
		AccessToken: access, TokenType: "Bearer", ExpiresIn: int64(s.o.AccessTTL / time.Second),
		RefreshToken: refresh, Scope: strings.Join(scopes, " "),
	})
}

// verifierMatches checks an S256 PKCE verifier against the challenge
// (RFC 7636 §4.6), in constant time.
func verifierMatches(verifier, challenge string) bool {
	if !isPKCE(verifier) {
		return false
	}
	sum := sha256.Sum256([]byte(verifier))
	got := base64.RawURLEncoding.EncodeToString(sum[:])
	return subtle.ConstantTimeCompare([]byte(got), []byte(challenge)) == 1
}

func (s *Server) exchangeCode(w http.ResponseWriter, r *http.Request, f map[string]string) {
	code := f["code"]
	if code == "" || f["client_id"] == "" || f["code_verifier"] == "" {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "code, client_id and code_verifier are required")
		return
	}
	ctx := r.Context()
	invalid := func(desc string) { writeOAuthError(w, http.StatusBadRequest, "invalid_grant", desc) }
	if !auth.WellFormedOAuth(codePrefix, code) {
		invalid("unknown authorization code")
		return
	}
	hash := auth.HashOAuth(code)
	c, err := s.store.FindOAuthCode(ctx, hash)
	if errors.Is(err, wf.ErrNotFound) {
		invalid("unknown authorization code")
		return
	} else if err != nil {
		s.serverError(w, r, err)
		return
	}
	// Checks that change nothing come before the claim: a wrong client,
	// redirect URI, resource or verifier leaves the code as it was.
	switch {
	case c.ClientID != f["client_id"]:
		invalid("the code was issued to another client")
		return
	case f["redirect_uri"] != c.RedirectURI:
		invalid("redirect_uri does not match the authorization request's")
		return
	case !verifierMatches(f["code_verifier"], c.Challenge):
		invalid("code_verifier does not match the code_challenge")
		return
	}
	if res, ok := f["resource"]; ok {
		got, code, desc := s.checkResource([]string{res})
		if code != "" || got != c.Resource {
			writeOAuthError(w, http.StatusBadRequest, "invalid_target", cmpOr(desc, "the code was issued for "+c.Resource))
			return
		}
	}
	now := s.now()
	access, refresh, toks, err := s.newTokens(now)
	if err != nil {
		s.serverError(w, r, err)
		return
	}
	var g wf.OAuthGrant
	err = s.store.ExchangeOAuthCode(ctx, hash, now, &g, toks...)
	if err != nil {
		var e *wf.Error
		if errors.As(err, &e) && e.Code == wf.EConflict {
			switch e.Detail {
			case wf.DetailCodeUsed:
				s.forget()
				s.log.WarnContext(ctx, "oauth code used twice: its tokens are revoked", "client_id", c.ClientID, "grant", c.GrantID)
				invalid("the authorization code was used already; the tokens issued from it are revoked")
				return
			case wf.DetailCodeExpired:
				invalid("the authorization code has expired")
				return
			}
		}
		if errors.Is(err, wf.ErrNotFound) {
			invalid("unknown authorization code")
			return
		}
		s.serverError(w, r, err)
		return
	}
	s.issued(w, access, refresh, g.Scopes)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (s *Server) refresh(w http.ResponseWriter, r *http.Request, f map[string]string) {
	rt := f["refresh_token"]
	if rt == "" || f["client_id"] == "" {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "refresh_token and client_id are required")
		return
	}
	ctx := r.Context()
	invalid := func(desc string) { writeOAuthError(w, http.StatusBadRequest, "invalid_grant", desc) }
	if !auth.WellFormedOAuth(auth.RefreshPrefix, rt) {
		invalid("unknown refresh token")
		return
	}
	hash := auth.HashOAuth(rt)
	tok, g, err := s.store.FindOAuthToken(ctx, hash)
	if errors.Is(err, wf.ErrNotFound) || (err == nil && tok.Kind != wf.OAuthRefresh) {
		invalid("unknown refresh token")
		return
	} else if err != nil {
		s.serverError(w, r, err)
		return
	}
	if g.ClientID != f["client_id"] {
		invalid("the refresh token was issued to another client")
		return
	}
	if sc := f["scope"]; sc != "" {
		want, err := ParseScope(sc)
		if err != nil || !sameSet(want, g.Scopes) {
			writeOAuthError(w, http.StatusBadRequest, "invalid_scope", "a refresh keeps the scopes granted: "+strings.Join(g.Scopes, " "))
			return
		}
	}
	if res, ok := f["resource"]; ok {
		if got, code, desc := s.checkResource([]string{res}); code != "" || got != g.Resource {
			writeOAuthError(w, http.StatusBadRequest, "invalid_target", cmpOr(desc, "the grant is for "+g.Resource))
			return
		}
	}
	now := s.now()
	access, refresh, toks, err := s.newTokens(now)
	if err != nil {
		s.serverError(w, r, err)
		return
	}
	g, err = s.store.RotateOAuthRefresh(ctx, hash, now, toks...)
	if err != nil {
		var e *wf.Error
		if errors.As(err, &e) && e.Code == wf.EConflict {
			switch e.Detail {
			case wf.DetailRefreshReused:
				s.forget()
				s.log.WarnContext(ctx, "oauth refresh token reused after rotation: its grant is revoked", "client_id", f["client_id"], "grant", tok.GrantID)
				invalid("the refresh token was used already; every token of its grant is revoked")
			case wf.DetailRefreshExpired:
				invalid("the refresh token has expired")
			default:
				invalid("the grant was revoked")
			}
			return
		}
		s.serverError(w, r, err)
		return
	}
	s.issued(w, access, refresh, g.Scopes)
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// forget drops this server's cached access tokens after a revocation.
func (s *Server) forget() {
	if s.o.Auth != nil {
		s.o.Auth.ForgetOAuth()
	}
}

// revoke is RFC 7009's endpoint. Revoking an access or a refresh token
// revokes its whole grant: the app is disconnected. An unknown token, or
// one issued to another client, is 200 and changes nothing (§2.2).
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	f, ok := readForm(w, r)
	if !ok {
		return
	}
	token := f["token"]
	if token == "" {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "token is required")
		return
	}
	if f["client_id"] == "" {
		writeOAuthError(w, http.StatusUnauthorized, "invalid_client", "client_id is required")
		return
	}
	if !auth.WellFormedOAuth(auth.AccessPrefix, token) && !auth.WellFormedOAuth(auth.RefreshPrefix, token) {
		w.WriteHeader(http.StatusOK)
		return
	}
	_, g, err := s.store.FindOAuthToken(r.Context(), auth.HashOAuth(token))
	if errors.Is(err, wf.ErrNotFound) {
		w.WriteHeader(http.StatusOK)
		return
	} else if err != nil {
		s.serverError(w, r, err)
		return
	}
	if g.ClientID != f["client_id"] {
		w.WriteHeader(http.StatusOK)
		return
	}
	if err := s.revokeGrant(r.Context(), g.ID); err != nil {
		s.serverError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (s *Server) revokeGrant(ctx context.Context, id string) error {
	if err := s.store.RevokeOAuthGrant(ctx, id); err != nil && !errors.Is(err, wf.ErrNotFound) {
		return err
	}
	s.forget()
	return nil
}

// ConnectedApp is a client a person granted access, with its live grants
// taken together.
type ConnectedApp struct {
	ClientID, Name string
	Scopes         []string
	CreatedAt      time.Time
	LastUsedAt     *time.Time
}

// ConnectedApps lists the clients with a live grant of the person, most
// recently granted first.
func (s *Server) ConnectedApps(ctx context.Context, userID string) ([]ConnectedApp, error) {
	grants, err := s.store.ListOAuthGrants(ctx, userID)
	if err != nil {
		return nil, err
	}
	var out []ConnectedApp
	at := map[string]int{}
	for _, g := range grants {
		i, ok := at[g.ClientID]
		if !ok {
			at[g.ClientID] = len(out)
			out = append(out, ConnectedApp{ClientID: g.ClientID, Name: cmpOr(g.ClientName, g.ClientID), CreatedAt: g.CreatedAt})
			i = len(out) - 1
		}
		a := &out[i]
		for _, sc := range g.Scopes {
			if !slices.Contains(a.Scopes, sc) {
				a.Scopes = append(a.Scopes, sc)
			}
		}
		if g.LastUsedAt != nil && (a.LastUsedAt == nil || g.LastUsedAt.After(*a.LastUsedAt)) {
			t := *g.LastUsedAt
			a.LastUsedAt = &t
		}
	}
	return out, nil
}

// Disconnect revokes every grant of the client for the person (every
// token it holds for them); not_found when there is none.
func (s *Server) Disconnect(ctx context.Context, userID, clientID string) error {
	n, err := s.store.RevokeUserOAuthClient(ctx, userID, clientID)
	if err != nil {
		return err
	}
	s.forget()
	if n == 0 {
		return wf.ErrNotFound
	}
	s.log.InfoContext(ctx, "oauth app disconnected", "client_id", clientID, "user_id", userID)
	return nil
}

// Expired codes and tokens are deleted once they are pruneAfter past
// their expiry (until then a replayed code or refresh token is still
// recognised, and revokes), at most once per pruneEvery per server, in
// the background of a token request.
const (
	pruneAfter = 24 * time.Hour
	pruneEvery = time.Hour
)

func (s *Server) maybePrune() {
	now := s.now()
	last := s.lastPrune.Load()
	if last != 0 && now.Sub(time.Unix(0, last)) < pruneEvery {
		return
	}
	if !s.lastPrune.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		n, err := s.store.PruneOAuth(ctx, now.Add(-pruneAfter))
		if err != nil {
			s.log.Warn("oauth: pruning expired codes and tokens failed", "err", err)
			return
		}
		if n > 0 {
			s.log.Info("oauth: pruned expired codes and tokens", "rows", n)
		}
	}()
}
