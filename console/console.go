// Package console is WorldForge's web console: the pages on `worldforge
// serve` where the people who run worlds review what agents propose,
// look at their worlds, manage members, auto-accept rules and API keys,
// and read the audit log.
//
// It is server-rendered html/template with its templates and assets
// embedded (embed.FS): no build step, and every core flow works without
// JavaScript; the few scripts (the live queue, copy buttons, map zoom,
// the login link's auto-submit) are files under static/, never inline,
// so the Content-Security-Policy forbids inline script outright.
//
// Every action goes through package app — the same operations, access
// rules and audit rows as MCP and REST — with a route name that starts
// with "console ", so the audit log tells a console action from an API
// call.
//
// Sessions. A browser signs in with a one-time login link (`worldforge
// login-link`, or the one `serve --demo` prints), or by pasting an API key
// (the session acts with that key's scopes only) or a session JWT. It then
// holds an HttpOnly, SameSite=Lax cookie (Secure under TLS or an https
// public URL) naming a server-side session (package auth), which sign-out,
// expiry and `worldforge sessions revoke` end. Every state-changing
// request carries a CSRF token bound to the session; a forged or missing
// one is refused with 403 before anything runs.
package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/app"
	"github.com/worldforge-go/worldforge/auth"
	"github.com/worldforge-go/worldforge/authserver"
)

// DefaultLiveInterval is how often the live review queue looks for new
// proposals.
const DefaultLiveInterval = 2 * time.Second

// Options configure a Console.
type Options struct {
	Store wf.Store
	Auth  *auth.Authenticator
	// App is the application layer; nil makes one on Store.
	App    *app.Service
	Logger *slog.Logger
	// PublicURL is the console's address as people reach it
	// ("https://worlds.example.com"); it makes the session cookie Secure
	// when https, and is the base of the URLs the console shows (login
	// links, the mcpServers snippet). Empty: the request's own host.
	PublicURL string
	// Now replaces the clock (tests).
	Now func() time.Time
	// LiveInterval is how often the live queue polls the store; 0 means
	// DefaultLiveInterval.
	LiveInterval time.Duration
	// OAuth, when set, is the authorization server whose consent page
	// and connected apps the console shows (oauth.go).
	OAuth *authserver.Server
}

// Console is the web console's HTTP handler.
type Console struct {
	opts    Options
	store   wf.Store
	auth    *auth.Authenticator
	app     *app.Service
	log     *slog.Logger
	now     func() time.Time
	public  *url.URL
	secure  bool
	csrfKey []byte
	mux     *http.ServeMux
	pages   *pages
	routes  []route
	// closing ends the open live-queue streams (Close).
	closing   chan struct{}
	closeOnce sync.Once
}

// route is one of the console's routes. Unless public, the request must
// carry a live session (else it is sent to the sign-in page), and unless
// its method is GET or HEAD, a valid CSRF token.
type route struct {
	pattern string
	h       func(w http.ResponseWriter, r *http.Request, v *visit)
	public  bool
	// raw: no session, cookies or CSRF at all (static assets).
	raw bool
}

// routeSets are the functions that list each page file's routes; each
// file adds its own in an init function.
var routeSets []func(c *Console) []route

// New returns the console for the given parts.
func New(ctx context.Context, o Options) (*Console, error) {
	if o.Store == nil || o.Auth == nil {
		return nil, errors.New("console: Store and Auth are required")
	}
	c := &Console{opts: o, store: o.Store, auth: o.Auth, app: o.App, log: o.Logger, now: o.Now, mux: http.NewServeMux(), closing: make(chan struct{})}
	if c.app == nil {
		c.app = app.New(o.Store)
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.opts.LiveInterval <= 0 {
		c.opts.LiveInterval = DefaultLiveInterval
	}
	if o.PublicURL != "" {
		u, err := url.Parse(o.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("console: public URL %q is not an http(s) URL", o.PublicURL)
		}
		u.Path = strings.TrimSuffix(u.Path, "/")
		c.public, c.secure = u, u.Scheme == "https"
	}
	key, err := o.Store.Secret(ctx, "console-csrf-key", func() ([]byte, error) {
		b := make([]byte, 32)
		_, err := rand.Read(b)
		return b, err
	})
	if err != nil {
		return nil, fmt.Errorf("console: csrf key: %w", err)
	}
	c.csrfKey = key
	if c.pages, err = loadPages(); err != nil {
		return nil, err
	}
	for _, set := range routeSets {
		c.routes = append(c.routes, set(c)...)
	}
	for _, rt := range c.routes {
		c.mux.Handle(rt.pattern, c.wrap(rt))
	}
	return c, nil
}

// Patterns are the ServeMux patterns the console serves, for the server
// that mounts it next to /mcp and the REST routes.
func (c *Console) Patterns() []string {
	out := make([]string, len(c.routes))
	for i, rt := range c.routes {
		out[i] = rt.pattern
	}
	return out
}

// Close ends the open live-queue streams, so that a graceful shutdown of
// the server need not wait for them; browsers reconnect elsewhere.
func (c *Console) Close() { c.closeOnce.Do(func() { close(c.closing) }) }

// ServeHTTP serves the console's routes.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	c.mux.ServeHTTP(w, r)
}

// wrap runs a route: the session (unless public), then the CSRF check
// (unless a safe method), then the handler.
func (c *Console) wrap(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := &visit{Pattern: rt.pattern, c: c}
		if rt.raw {
			rt.h(w, r, v)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		if !rt.public {
			if !c.signedIn(w, r, v) {
				return
			}
		} else {
			c.preSession(w, r, v)
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if !c.checkCSRF(r, v) {
				c.renderError(w, r, v, http.StatusForbidden, "Forbidden", "This form has expired or did not come from this site (its security token is missing or wrong). Nothing was changed. Go back, reload the page and try again.")
				return
			}
		}
		rt.h(w, r, v)
	})
}

// baseURL is the console's address as people reach it: the public URL,
// or the request's own scheme and host.
func (c *Console) baseURL(r *http.Request) string {
	if c.public != nil {
		return c.public.String()
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// mac is the HMAC-SHA256 of parts under the console's key.
func (c *Console) mac(parts ...string) []byte {
	m := hmac.New(sha256.New, c.csrfKey)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return m.Sum(nil)
}
