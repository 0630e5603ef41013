package console

import (
	"errors"
	"net/http"
	"strings"

	wf "github.com/worldforge-go/worldforge"
)

// Signing in and out: a one-time login link, or a pasted API key or
// session JWT.

func init() { routeSets = append(routeSets, signinRoutes, staticRoutes) }

func signinRoutes(c *Console) []route {
	return []route{
		{pattern: "GET /signin", public: true, h: c.signinPage},
		{pattern: "POST /signin", public: true, h: c.signin},
		{pattern: "GET /login/{token}", public: true, h: c.loginPage},
		{pattern: "POST /login/{token}", public: true, h: c.login},
		{pattern: "POST /signout", h: c.signout},
	}
}

type signinData struct {
	Next string
}

// nextPath is where to go after signing in: the next parameter if it is
// a path of this site, else the worlds page.
func nextPath(r *http.Request) string {
	n := r.FormValue("next")
	if n == "" || localPath(n) != n || strings.HasPrefix(n, "/signin") || strings.HasPrefix(n, "/login/") {
		return "/"
	}
	return n
}

func (c *Console) signinPage(w http.ResponseWriter, r *http.Request, v *visit) {
	if v.Session != nil {
		http.Redirect(w, r, nextPath(r), http.StatusSeeOther)
		return
	}
	c.render(w, r, v, http.StatusOK, "signin", "Sign in", &signinData{Next: nextPath(r)})
}

// maxCredential bounds a pasted credential (as the bearer check does).
const maxCredential = 4096

func (c *Console) signin(w http.ResponseWriter, r *http.Request, v *visit) {
	cred := strings.TrimSpace(r.PostFormValue("credential"))
	data := &signinData{Next: nextPath(r)}
	if cred == "" || len(cred) > maxCredential {
		v.flash = &flash{Kind: "error", Text: "Paste an API key (wk_live_…) or a session token."}
		c.render(w, r, v, http.StatusBadRequest, "signin", "Sign in", data)
		return
	}
	secret, s, err := c.auth.SignIn(r.Context(), cred)
	if errors.Is(err, wf.ErrUnauthorized) {
		v.flash = &flash{Kind: "error", Text: "That key or token is not valid (unknown, revoked or expired)."}
		c.render(w, r, v, http.StatusUnauthorized, "signin", "Sign in", data)
		return
	}
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	http.SetCookie(w, c.cookie(r, sessionCookie, secret, s.ExpiresAt))
	c.redirect(w, r, data.Next, "")
}

type loginData struct {
	Token string
}

// loginPage shows the login link's page: one button that spends the
// link (login.js presses it). Spending it on GET would let a mail
// scanner that follows links burn it.
func (c *Console) loginPage(w http.ResponseWriter, r *http.Request, v *visit) {
	c.render(w, r, v, http.StatusOK, "login", "Sign in", &loginData{Token: r.PathValue("token")})
}

func (c *Console) login(w http.ResponseWriter, r *http.Request, v *visit) {
	secret, s, err := c.auth.UseLoginLink(r.Context(), r.PathValue("token"))
	if err != nil {
		var e *wf.Error
		switch {
		case errors.As(err, &e) && e.Code == wf.EConflict && (e.Detail == wf.DetailLinkUsed || e.Detail == wf.DetailLinkExpired):
			c.renderError(w, r, v, http.StatusGone, "Sign-in link refused", errorText(err))
		case errors.Is(err, wf.ErrNotFound):
			c.renderError(w, r, v, http.StatusNotFound, "Sign-in link refused", "This sign-in link is not valid. Check that it was copied whole, or ask for a new one.")
		default:
			c.fail(w, r, v, err)
		}
		return
	}
	if v.secret != "" {
		// Signing in as someone else ends the session this browser had.
		if err := c.auth.EndSession(r.Context(), v.secret); err != nil {
			c.log.ErrorContext(r.Context(), "console: end replaced session", "err", err)
		}
	}
	http.SetCookie(w, c.cookie(r, sessionCookie, secret, s.ExpiresAt))
	c.redirect(w, r, "/", "Signed in.")
}

func (c *Console) signout(w http.ResponseWriter, r *http.Request, v *visit) {
	if err := c.auth.EndSession(r.Context(), v.secret); err != nil {
		c.fail(w, r, v, err)
		return
	}
	c.clearCookie(w, r, sessionCookie)
	c.setFlash(w, r, "ok", "Signed out.")
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
}
