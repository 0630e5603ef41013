package console

import (
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/app"
	"github.com/worldforge-go/worldforge/auth"
)

// Cookies the console sets. All are HttpOnly and SameSite=Lax, and Secure
// under TLS or an https public URL.
const (
	sessionCookie = "wf_session"
	// preCookie binds the CSRF token of the forms shown before a session
	// exists (sign-in, login link).
	preCookie   = "wf_pre"
	flashCookie = "wf_flash"
)

// visit is one request's view of who is signed in.
type visit struct {
	c       *Console
	Session *wf.Session
	Actor   *wf.Actor
	User    *wf.User
	// CSRF is the token every form of the page carries.
	CSRF string
	// Pattern is the route that serves the request.
	Pattern string
	secret  string
	pre     string
	flash   *flash
}

// req is the app layer's view of the request: the session's actor, and
// the console route (for the audit row). The reads a GET page makes to
// show itself are page views, which write no audit row; every form's
// action is audited as its API call is.
func (v *visit) req() app.Request {
	return app.Request{Actor: v.Actor, Via: app.Via{Route: "console " + v.Pattern}, PageView: strings.HasPrefix(v.Pattern, "GET ")}
}

// Cannot lists the scopes the session lacks (a session signed in with a
// limited API key): what the console cannot do for it.
func (v *visit) Cannot() []string {
	if v.Actor == nil || v.Actor.HasScope(wf.ScopeAll) {
		return nil
	}
	var out []string
	for _, s := range wf.AllScopes {
		if s != wf.ScopeAll && !v.Actor.HasScope(s) {
			out = append(out, s)
		}
	}
	return out
}

// Can reports whether the session holds the scope.
func (v *visit) Can(scope string) bool { return v.Actor != nil && v.Actor.HasScope(scope) }

func (c *Console) cookie(r *http.Request, name, value string, expires time.Time) *http.Cookie {
	ck := &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: c.secure || r.TLS != nil}
	if !expires.IsZero() {
		ck.Expires = expires
	}
	return ck
}

func (c *Console) clearCookie(w http.ResponseWriter, r *http.Request, name string) {
	ck := c.cookie(r, name, "", time.Time{})
	ck.MaxAge = -1
	http.SetCookie(w, ck)
}

// signedIn loads the request's session into v, or sends the browser to
// the sign-in page (for a GET, with the page to come back to) and
// reports false.
func (c *Console) signedIn(w http.ResponseWriter, r *http.Request, v *visit) bool {
	c.readFlash(w, r, v)
	ck, err := r.Cookie(sessionCookie)
	if err == nil {
		in, err := c.auth.Session(r.Context(), ck.Value)
		if err == nil {
			v.signIn(in, ck.Value)
			return true
		}
		if !errors.Is(err, wf.ErrUnauthorized) {
			c.log.ErrorContext(r.Context(), "console session", "err", err)
			c.renderError(w, r, v, http.StatusServiceUnavailable, "Unavailable", "The server could not check your session. Try again in a moment.")
			return false
		}
		c.clearCookie(w, r, sessionCookie)
	}
	to := "/signin"
	if r.Method == http.MethodGet && r.URL.Path != "/" {
		to += "?next=" + url.QueryEscape(r.URL.RequestURI())
	}
	if ck != nil {
		c.setFlash(w, r, "error", "Your session has ended. Sign in again.")
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
	return false
}

// preSession gives a public page a CSRF token bound to a random cookie,
// made on first visit.
func (c *Console) preSession(w http.ResponseWriter, r *http.Request, v *visit) {
	c.readFlash(w, r, v)
	if ck, err := r.Cookie(preCookie); err == nil && len(ck.Value) == 43 {
		v.pre = ck.Value
	} else {
		b := make([]byte, 32)
		rand.Read(b)
		v.pre = base64.RawURLEncoding.EncodeToString(b)
		http.SetCookie(w, c.cookie(r, preCookie, v.pre, time.Time{}))
	}
	v.CSRF = c.token("p", v.pre)
	// A signed-in visitor of a public page (the sign-in page) is still
	// signed in.
	if ck, err := r.Cookie(sessionCookie); err == nil {
		if in, err := c.auth.Session(r.Context(), ck.Value); err == nil {
			v.signIn(in, ck.Value)
			v.CSRF = c.token("p", v.pre) // the page's forms are the pre-session ones
		}
	}
}

// signIn records a live session in the visit, with the CSRF token of its
// forms.
func (v *visit) signIn(in *auth.SignedIn, secret string) {
	v.Session, v.Actor, v.User, v.secret = in.Session, in.Actor, in.User, secret
	v.CSRF = v.c.token("s", in.Session.ID)
}

func (c *Console) token(kind, id string) string {
	return base64.RawURLEncoding.EncodeToString(c.mac("csrf", kind, id))
}

// checkCSRF compares the request's token (form field csrf or header
// X-CSRF-Token) with the one bound to its session, or on a public page to
// its pre-session cookie.
func (c *Console) checkCSRF(r *http.Request, v *visit) bool {
	got := r.Header.Get("X-CSRF-Token")
	if got == "" {
		got = r.PostFormValue("csrf")
	}
	if got == "" {
		return false
	}
	var want string
	switch {
	case v.Session != nil && v.pre == "":
		want = c.token("s", v.Session.ID)
	case v.pre != "":
		want = c.token("p", v.pre)
		if v.Session != nil && hmac.Equal([]byte(got), []byte(c.token("s", v.Session.ID))) {
			return true
		}
	default:
		return false
	}
	return hmac.Equal([]byte(got), []byte(want))
}

// flash is a one-shot message shown on the next page.
type flash struct {
	Kind string // "ok" or "error"
	Text string
}

func (c *Console) setFlash(w http.ResponseWriter, r *http.Request, kind, text string) {
	if len(text) > 1500 {
		text = text[:1500] + "…"
	}
	v := base64.RawURLEncoding.EncodeToString([]byte(kind + "\n" + text))
	http.SetCookie(w, c.cookie(r, flashCookie, v, time.Time{}))
}

func (c *Console) readFlash(w http.ResponseWriter, r *http.Request, v *visit) {
	ck, err := r.Cookie(flashCookie)
	if err != nil {
		return
	}
	c.clearCookie(w, r, flashCookie)
	b, err := base64.RawURLEncoding.DecodeString(ck.Value)
	if err != nil {
		return
	}
	kind, text, ok := strings.Cut(string(b), "\n")
	if !ok || !slices.Contains([]string{"ok", "error"}, kind) {
		return
	}
	v.flash = &flash{Kind: kind, Text: text}
}

// redirect answers a form with 303 to a console page, with a message for
// it. A target that is not a path of this site is replaced with "/".
func (c *Console) redirect(w http.ResponseWriter, r *http.Request, to, message string) {
	if message != "" {
		c.setFlash(w, r, "ok", message)
	}
	http.Redirect(w, r, localPath(to), http.StatusSeeOther)
}

// redirectErr answers a refused form with 303 back to a page, with the
// error's message.
func (c *Console) redirectErr(w http.ResponseWriter, r *http.Request, to string, err error) {
	c.setFlash(w, r, "error", errorText(err))
	http.Redirect(w, r, localPath(to), http.StatusSeeOther)
}

// localPath keeps a redirect on this site: a path starting with one
// slash, or "/".
func localPath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") || strings.ContainsAny(p, "\r\n") {
		return "/"
	}
	return p
}
