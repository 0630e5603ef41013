package console

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	wf "github.com/worldforge-go/worldforge"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// pages are the parsed templates: for each page file, the layout, the
// shared partials (files starting with "_") and the page.
type pages struct {
	byName map[string]*template.Template
}

var funcs = template.FuncMap{
	"when": func(t any) string {
		switch t := t.(type) {
		case time.Time:
			if t.IsZero() {
				return "—"
			}
			return t.UTC().Format("2006-01-02 15:04 UTC")
		case *time.Time:
			if t == nil || t.IsZero() {
				return "—"
			}
			return t.UTC().Format("2006-01-02 15:04 UTC")
		}
		return ""
	},
	"iso":  func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"join": func(sep string, list []string) string { return strings.Join(list, sep) },
	"short": func(id string) string {
		if len(id) > 12 {
			return id[:12] + "…"
		}
		return id
	},
	"add": func(a, b int) int { return a + b },
	// urlWith is base with the query parameters k1=v1, k2=v2, … (empty
	// values left out), escaped.
	"urlWith": func(base string, kv ...any) (template.URL, error) {
		if len(kv)%2 != 0 {
			return "", errors.New("urlWith: odd number of arguments")
		}
		q := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v := fmt.Sprint(kv[i+1])
			if v != "" {
				q.Set(fmt.Sprint(kv[i]), v)
			}
		}
		if len(q) == 0 {
			return template.URL(base), nil
		}
		return template.URL(base + "?" + q.Encode()), nil
	},
	"dict": func(kv ...any) (map[string]any, error) {
		if len(kv)%2 != 0 {
			return nil, errors.New("dict: odd number of arguments")
		}
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[fmt.Sprint(kv[i])] = kv[i+1]
		}
		return m, nil
	},
	"has": func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	},
}

// withQuery is path with the pairs k1, v1, k2, v2, … whose value is not
// empty as its query string, in their order, escaped.
func withQuery(path string, pairs ...string) string {
	var b strings.Builder
	b.WriteString(path)
	sep := byte('?')
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			continue
		}
		b.WriteByte(sep)
		sep = '&'
		b.WriteString(url.QueryEscape(pairs[i]))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(pairs[i+1]))
	}
	return b.String()
}

// loadPages parses every page template with the layout and partials.
func loadPages() (*pages, error) {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	base := template.New("layout.html").Funcs(funcs)
	var partials []string
	for _, n := range names {
		if strings.HasPrefix(path.Base(n), "_") {
			partials = append(partials, n)
		}
	}
	base, err = base.ParseFS(templateFS, append([]string{"templates/layout.html"}, partials...)...)
	if err != nil {
		return nil, fmt.Errorf("console: templates: %w", err)
	}
	p := &pages{byName: map[string]*template.Template{}}
	for _, n := range names {
		b := path.Base(n)
		if b == "layout.html" || strings.HasPrefix(b, "_") {
			continue
		}
		t, err := base.Clone()
		if err == nil {
			t, err = t.ParseFS(templateFS, n)
		}
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", b, err)
		}
		p.byName[strings.TrimSuffix(b, ".html")] = t
	}
	return p, nil
}

// pageData is what every page template sees as ".".
type pageData struct {
	V     *visit
	CSRF  string
	Title string
	Flash *flash
	// Nav is the section of the navigation the page belongs to.
	Nav  string
	Data any
}

// render writes a page: the template file page.html inside the layout.
func (c *Console) render(w http.ResponseWriter, r *http.Request, v *visit, status int, page, title string, data any) {
	t, ok := c.pages.byName[page]
	if !ok {
		c.log.ErrorContext(r.Context(), "console: no template", "page", page)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	d := &pageData{V: v, CSRF: v.CSRF, Title: title, Flash: v.flash, Nav: navOf(v.Pattern), Data: data}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout.html", d); err != nil {
		c.log.ErrorContext(r.Context(), "console: render", "page", page, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(buf.Bytes())
	}
}

// navOf is the navigation section of a route pattern.
func navOf(pattern string) string {
	_, p, _ := strings.Cut(pattern, " ")
	switch {
	case strings.HasPrefix(p, "/queue"), strings.HasPrefix(p, "/p/"), strings.Contains(p, "/changesets/"):
		return "queue"
	case strings.HasPrefix(p, "/rules"):
		return "rules"
	case strings.HasPrefix(p, "/keys"):
		return "keys"
	case strings.HasPrefix(p, "/audit"):
		return "audit"
	case p == "/{$}", strings.HasPrefix(p, "/w"):
		return "worlds"
	}
	return ""
}

// errorPage is the data of the error page.
type errorPage struct {
	Message string
	Scopes  []string
}

// renderError writes the error page with a status, a heading and a
// sentence for people.
func (c *Console) renderError(w http.ResponseWriter, r *http.Request, v *visit, status int, title, message string) {
	c.render(w, r, v, status, "error", title, &errorPage{Message: message})
}

// fail answers a request an operation refused: the error page with the
// status and words its code calls for.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, v *visit, err error) {
	var e *wf.Error
	if !errors.As(err, &e) {
		c.log.ErrorContext(r.Context(), "console", "route", v.Pattern, "err", err)
		c.renderError(w, r, v, http.StatusInternalServerError, "Something went wrong", "The server could not do that. Nothing was changed. Try again; if it keeps happening, the server's log says why.")
		return
	}
	switch e.Code {
	case wf.ENotFound, wf.EProposalNotFound:
		c.renderError(w, r, v, http.StatusNotFound, "Not found", "There is nothing here, or nothing you may see.")
	case wf.EMissingScopes:
		p := &errorPage{Message: "You signed in with an API key that cannot do this."}
		if e.Detail == wf.UnresolvedOwner {
			p.Message = "Your credential names no user."
		} else {
			p.Scopes = strings.Split(e.Detail, ",")
		}
		c.render(w, r, v, http.StatusForbidden, "error", "Not allowed", p)
	case wf.EBadRequest, wf.EUnknownTemplate, wf.ENoGrid, wf.EFreeformGrid, wf.ENoSize, wf.ETooSmall, wf.EOutOfBoundsCap, wf.ENonInteger:
		c.renderError(w, r, v, http.StatusBadRequest, "Bad request", errorText(err))
	case wf.EConflict, wf.EVersionConflict:
		c.renderError(w, r, v, http.StatusConflict, "Conflict", errorText(err))
	case wf.EQuotaExceeded:
		c.renderError(w, r, v, http.StatusTooManyRequests, "Quota exceeded", errorText(err))
	case wf.EUnavailable:
		c.renderError(w, r, v, http.StatusServiceUnavailable, "Unavailable", "The server is busy. Try again in a moment.")
	default:
		c.renderError(w, r, v, http.StatusInternalServerError, "Something went wrong", "The server could not do that. Nothing was changed.")
	}
}

// errorText is an error as a sentence for people.
func errorText(err error) string {
	var e *wf.Error
	if !errors.As(err, &e) {
		return "The server could not do that. Nothing was changed."
	}
	switch e.Code {
	case wf.ENotFound, wf.EProposalNotFound:
		return "Not found: there is nothing there, or nothing you may see."
	case wf.EMissingScopes:
		if e.Detail == wf.UnresolvedOwner {
			return "Your credential names no user."
		}
		return "Your session's API key lacks the scopes " + strings.ReplaceAll(e.Detail, ",", ", ") + "."
	case wf.EVersionConflict:
		return "Version conflict: what this changes was changed since it was proposed. Nothing was applied."
	case wf.EConflict:
		switch e.Detail {
		case wf.DetailNotPending:
			return "Already decided: this proposal was committed or rejected before."
		case wf.DetailLinkUsed:
			return "This sign-in link was used already. Ask for a new one."
		case wf.DetailLinkExpired:
			return "This sign-in link has expired. Ask for a new one."
		}
		if e.Detail != "" {
			return "Conflict: " + e.Detail
		}
		return "Conflict."
	case wf.EQuotaExceeded:
		return "Quota exceeded: " + e.Detail
	case wf.EInternal:
		return "The server could not do that. Nothing was changed."
	}
	if e.Detail != "" {
		return upperFirst(e.Detail) + "."
	}
	return upperFirst(strings.ReplaceAll(e.Code, "_", " ")) + "."
}

func upperFirst(s string) string {
	s = strings.TrimSuffix(s, ".")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// staticRoutes serves the embedded assets.
func staticRoutes(c *Console) []route {
	sub, _ := fs.Sub(staticFS, "static")
	files := http.FileServerFS(sub)
	return []route{{pattern: "GET /static/{file}", raw: true, h: func(w http.ResponseWriter, r *http.Request, v *visit) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		http.StripPrefix("/static/", files).ServeHTTP(w, r)
	}}}
}
