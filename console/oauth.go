package console

import (
	"errors"
	"net/http"
	"net/url"
	"slices"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/authserver"
)

// Connecting apps by OAuth (package authserver): the consent page an
// app's /authorize request leads to, and the connected apps on the keys
// page. The consent page is a console page like the others (a session,
// CSRF on its form); its form posts here and the answer redirects the
// browser to the app, so its Content-Security-Policy's form-action also
// names the app's redirect origin (browsers check it on the redirect).

func init() { routeSets = append(routeSets, oauthRoutes) }

func oauthRoutes(c *Console) []route {
	if c.opts.OAuth == nil {
		return nil
	}
	return []route{
		{pattern: "GET " + authserver.DefaultConsentPath, h: c.consentPage},
		{pattern: "POST " + authserver.DefaultConsentPath, h: c.consent},
		{pattern: "POST /keys/apps/revoke", h: c.disconnectApp},
	}
}

// consentScope is one scope the app asks for, and whether the session
// may grant it.
type consentScope struct {
	Name      string
	Grantable bool
}

type consentData struct {
	Req    *authserver.Request
	Scopes []consentScope
}

// formAction allows the consent form's redirect to the app.
func formAction(w http.ResponseWriter, redirect string) {
	u, err := url.Parse(redirect)
	if err != nil {
		return
	}
	src := u.Scheme + ":"
	if u.Host != "" {
		src = u.Scheme + "://" + u.Host
	}
	w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self' "+src+"; frame-ancestors 'none'; base-uri 'none'; object-src 'none'")
}

func (c *Console) consentPage(w http.ResponseWriter, r *http.Request, v *visit) {
	req, err := c.opts.OAuth.CheckAuthorize(r.Context(), r.URL.Query())
	if err != nil {
		c.opts.OAuth.AuthorizeFailed(w, r, err)
		return
	}
	c.renderConsent(w, r, v, http.StatusOK, req)
}

func (c *Console) renderConsent(w http.ResponseWriter, r *http.Request, v *visit, status int, req *authserver.Request) {
	d := &consentData{Req: req}
	for _, s := range req.Scopes {
		d.Scopes = append(d.Scopes, consentScope{Name: s, Grantable: v.Can(s)})
	}
	formAction(w, req.RedirectURI)
	c.render(w, r, v, status, "consent", "Connect "+req.ClientName, d)
}

// consent answers the consent form: deny sends access_denied to the app;
// approve grants the scopes ticked (each one asked for and held by the
// session) and sends the app its code.
func (c *Console) consent(w http.ResponseWriter, r *http.Request, v *visit) {
	if err := r.ParseForm(); err != nil {
		c.fail(w, r, v, wf.BadRequest("unreadable form: %v", err))
		return
	}
	q, err := url.ParseQuery(r.PostForm.Get("request"))
	if err != nil {
		c.fail(w, r, v, wf.BadRequest("the authorization request is not a query string"))
		return
	}
	req, err := c.opts.OAuth.CheckAuthorize(r.Context(), q)
	if err != nil {
		c.opts.OAuth.AuthorizeFailed(w, r, err)
		return
	}
	if r.PostForm.Get("decision") != "approve" {
		http.Redirect(w, r, c.opts.OAuth.Deny(req), http.StatusSeeOther)
		return
	}
	var scopes []string
	for _, s := range r.PostForm["scope"] {
		if !slices.Contains(req.Scopes, s) || !v.Can(s) {
			c.fail(w, r, v, wf.BadRequest("scope %q cannot be granted here", s))
			return
		}
		if !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	if len(scopes) == 0 {
		v.flash = &flash{Kind: "error", Text: "Choose at least one scope to grant, or deny."}
		c.renderConsent(w, r, v, http.StatusBadRequest, req)
		return
	}
	loc, err := c.app.GrantOAuthApp(r.Context(), v.req(), req.ClientID, func(userID string) (string, error) {
		return c.opts.OAuth.Approve(r.Context(), req, userID, scopes)
	})
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	http.Redirect(w, r, loc, http.StatusSeeOther)
}

func (c *Console) disconnectApp(w http.ResponseWriter, r *http.Request, v *visit) {
	if err := r.ParseForm(); err != nil {
		c.fail(w, r, v, wf.BadRequest("unreadable form: %v", err))
		return
	}
	err := c.app.DisconnectOAuthApp(r.Context(), v.req(), r.PostForm.Get("client"), func(userID, clientID string) error {
		return c.opts.OAuth.Disconnect(r.Context(), userID, clientID)
	})
	if errors.Is(err, wf.ErrNotFound) {
		c.redirectErr(w, r, "/keys", err)
		return
	} else if err != nil {
		c.fail(w, r, v, err)
		return
	}
	c.redirect(w, r, "/keys", "App disconnected: every token it held is revoked.")
}
