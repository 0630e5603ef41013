package console

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/app"
	"github.com/worldforge-go/worldforge/authserver"
)

// The account pages: the caller's auto-accept rules, their API keys and
// the audit log as they may read it (their own rows and those of the
// worlds they own or run as GM), with its CSV and JSON Lines exports.
// Every action goes through the same app operation as its REST route or
// MCP tool, with the console route in the audit row.

func init() { routeSets = append(routeSets, accountRoutes) }

func accountRoutes(c *Console) []route {
	return []route{
		{pattern: "GET /rules", h: c.rules},
		{pattern: "POST /rules", h: c.createRule},
		{pattern: "POST /rules/{id}/delete", h: c.deleteRule},
		{pattern: "GET /keys", h: c.keys},
		{pattern: "POST /keys", h: c.createKey},
		{pattern: "POST /keys/{id}/revoke", h: c.revokeKey},
		{pattern: "GET /audit", h: c.audit},
		{pattern: "GET /audit.csv", h: c.auditCSV},
		{pattern: "GET /audit.jsonl", h: c.auditJSONL},
	}
}

// worldChoice is a world in a select.
type worldChoice struct {
	ID, Name, Role string
}

// reviewWorlds lists the worlds the caller owns or runs as GM, for the
// world selects; owned keeps only those they own.
func (c *Console) reviewWorlds(r *http.Request, v *visit, owned bool) ([]worldChoice, error) {
	ls, err := c.app.ListReviewWorlds(r.Context(), v.req())
	if err != nil {
		return nil, err
	}
	var out []worldChoice
	for _, l := range ls {
		if owned && l.Role != wf.RoleOwner {
			continue
		}
		out = append(out, worldChoice{ID: l.World.ID, Name: l.World.Name, Role: l.Role})
	}
	return out, nil
}

// worldNames maps world ids to names.
func worldNames(ws []worldChoice) map[string]string {
	m := make(map[string]string, len(ws))
	for _, w := range ws {
		m[w.ID] = w.Name
	}
	return m
}

// rulesData is the rules page.
type rulesData struct {
	Rules  []wf.AutoAcceptRule
	Worlds []worldChoice
	Names  map[string]string
	Kinds  []string
}

func (c *Console) rules(w http.ResponseWriter, r *http.Request, v *visit) {
	rules, err := c.app.ListAutoAcceptRules(r.Context(), v.req())
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	worlds, err := c.reviewWorlds(r, v, true)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	c.render(w, r, v, http.StatusOK, "rules", "Auto-accept rules", &rulesData{Rules: rules, Worlds: worlds, Names: worldNames(worlds), Kinds: wf.ProposalKinds})
}

func (c *Console) createRule(w http.ResponseWriter, r *http.Request, v *visit) {
	if err := r.ParseForm(); err != nil {
		c.fail(w, r, v, wf.BadRequest("unreadable form: %v", err))
		return
	}
	_, err := c.app.CreateAutoAcceptRule(r.Context(), v.req(), func(a *app.RuleArgs) error {
		a.WorldID = strings.TrimSpace(r.PostForm.Get("world"))
		a.ActorID = strings.TrimSpace(r.PostForm.Get("actor"))
		a.KeyID = strings.TrimSpace(r.PostForm.Get("key"))
		a.Kinds = r.PostForm["kind"]
		return nil
	})
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	c.redirect(w, r, "/rules", "Rule added.")
}

func (c *Console) deleteRule(w http.ResponseWriter, r *http.Request, v *visit) {
	if err := c.app.DeleteAutoAcceptRule(r.Context(), v.req(), r.PathValue("id")); err != nil {
		c.fail(w, r, v, err)
		return
	}
	c.redirect(w, r, "/rules", "Rule deleted.")
}

// mcpServer is an entry of an MCP client's mcpServers configuration,
// as `serve --demo` prints it (its fields in this order).
type mcpServer struct {
	Type    string            `json:"type"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// keysData is the API keys page; New is set on the answer to a create,
// the only page that ever shows the secret.
type keysData struct {
	Keys   []wf.APIKey
	Scopes []string
	New    *app.NewKey
	// Config is the new key's ready mcpServers snippet.
	Config string
	// Apps are the apps connected by OAuth (nil without it).
	Apps []authserver.ConnectedApp
}

func (c *Console) keysPage(w http.ResponseWriter, r *http.Request, v *visit, status int, nk *app.NewKey) {
	keys, err := c.app.ListAPIKeys(r.Context(), v.req())
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	d := &keysData{Keys: keys, Scopes: wf.AllScopes, New: nk}
	if c.opts.OAuth != nil {
		if d.Apps, err = c.opts.OAuth.ConnectedApps(r.Context(), v.User.ID); err != nil {
			c.fail(w, r, v, err)
			return
		}
	}
	if nk != nil {
		cfg, err := json.MarshalIndent(map[string]any{
			"mcpServers": map[string]mcpServer{
				"worldforge": {Type: "http", URL: c.baseURL(r) + "/mcp", Headers: map[string]string{"Authorization": "Bearer " + nk.Secret}},
			},
		}, "", "  ")
		if err != nil {
			c.fail(w, r, v, fmt.Errorf("mcpServers snippet: %w", err))
			return
		}
		d.Config = string(cfg)
	}
	c.render(w, r, v, status, "keys", "API keys", d)
}

func (c *Console) keys(w http.ResponseWriter, r *http.Request, v *visit) {
	c.keysPage(w, r, v, http.StatusOK, nil)
}

func (c *Console) createKey(w http.ResponseWriter, r *http.Request, v *visit) {
	if err := r.ParseForm(); err != nil {
		c.fail(w, r, v, wf.BadRequest("unreadable form: %v", err))
		return
	}
	nk, err := c.app.CreateAPIKey(r.Context(), v.req(), app.KeyArgs{Name: r.PostForm.Get("name"), Scopes: r.PostForm["scope"]}, c.auth.MintKey)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	c.keysPage(w, r, v, http.StatusCreated, nk)
}

func (c *Console) revokeKey(w http.ResponseWriter, r *http.Request, v *visit) {
	if err := c.app.RevokeAPIKey(r.Context(), v.req(), r.PathValue("id")); err != nil {
		c.fail(w, r, v, err)
		return
	}
	c.redirect(w, r, "/keys", "Key revoked.")
}

// auditForm is the audit page's filter form as submitted.
type auditForm struct {
	World, Actor, Key, Tool, Route, Outcome, Since, Until string
}

// auditData is the audit page.
type auditData struct {
	Form     auditForm
	Worlds   []worldChoice
	Names    map[string]string
	Outcomes []string
	Entries  []wf.AuditEntry
	// People and Keys name the rows' actors and keys.
	People, Keys map[string]string
	// Next is the next page's URL ("" on the last page); CSV and JSONL
	// the exports of the same filters.
	Next, CSV, JSONL string
}

// timeLayouts are the forms a since or until may take: a datetime-local
// field's value, RFC 3339, or a date (all UTC unless they say).
var timeLayouts = []string{"2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339, "2006-01-02"}

func parseTime(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, l := range timeLayouts {
		if t, err := time.ParseInLocation(l, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, wf.BadRequest("%s %q is not a time (use YYYY-MM-DDTHH:MM, UTC, or RFC 3339)", field, s)
}

// auditQuery reads the audit filters of r's query string.
func auditQuery(r *http.Request) (auditForm, app.AuditQuery, error) {
	get := func(k string) string { return strings.TrimSpace(r.URL.Query().Get(k)) }
	f := auditForm{World: get("world"), Actor: get("actor"), Key: get("key"), Tool: get("tool"), Route: get("route"),
		Outcome: get("outcome"), Since: get("since"), Until: get("until")}
	q := app.AuditQuery{WorldID: f.World, ActorID: f.Actor, KeyID: f.Key, Tool: f.Tool, Route: f.Route, Outcome: f.Outcome}
	var err error
	if q.Since, err = parseTime("since", f.Since); err != nil {
		return f, q, err
	}
	if q.Until, err = parseTime("until", f.Until); err != nil {
		return f, q, err
	}
	if b := get("before"); b != "" {
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n <= 0 {
			return f, q, wf.BadRequest("before %q is not a position in the log", b)
		}
		q.BeforeSeq = n
	}
	return f, q, nil
}

// pairs are the form's filters as query string pairs (key, value, …),
// for the next page's link and the exports.
func (f auditForm) pairs() []string {
	var out []string
	for _, kv := range [][2]string{{"world", f.World}, {"actor", f.Actor}, {"key", f.Key}, {"tool", f.Tool},
		{"route", f.Route}, {"outcome", f.Outcome}, {"since", f.Since}, {"until", f.Until}} {
		if kv[1] != "" {
			out = append(out, kv[0], kv[1])
		}
	}
	return out
}

func (c *Console) audit(w http.ResponseWriter, r *http.Request, v *visit) {
	f, q, err := auditQuery(r)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	page, err := c.app.ListAudit(r.Context(), v.req(), q)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	worlds, err := c.reviewWorlds(r, v, false)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	d := &auditData{Form: f, Worlds: worlds, Names: worldNames(worlds), Outcomes: app.AuditOutcomes, Entries: page.Entries,
		People: map[string]string{}, Keys: map[string]string{},
		CSV: withQuery("/audit.csv", f.pairs()...), JSONL: withQuery("/audit.jsonl", f.pairs()...)}
	n := c.names()
	for _, e := range page.Entries {
		d.People[e.ActorID] = n.user(r.Context(), e.ActorID)
		if e.KeyID != "" {
			d.Keys[e.KeyID] = n.key(r.Context(), e.KeyID)
		}
	}
	if page.NextSeq > 0 {
		d.Next = withQuery("/audit", append(f.pairs(), "before", strconv.FormatInt(page.NextSeq, 10))...)
	}
	c.render(w, r, v, http.StatusOK, "audit", "Audit log", d)
}

// auditExport streams every row the filters select, newest first: the
// first page is read before anything is written, so a bad filter is a
// 400 page; a failure later ends the download short (and is logged).
func (c *Console) auditExport(w http.ResponseWriter, r *http.Request, v *visit, ext, contentType string, begin func() error, row func(*wf.AuditEntry) error, flush func() error) {
	_, q, err := auditQuery(r)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	q.Limit = app.AuditPageMax
	page, err := c.app.ListAudit(r.Context(), v.req(), q)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="worldforge-audit-%s.%s"`, c.now().UTC().Format("20060102-150405"), ext))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	err = begin()
	for err == nil {
		for i := range page.Entries {
			if err = row(&page.Entries[i]); err != nil {
				break
			}
		}
		if err != nil || page.NextSeq == 0 {
			break
		}
		if err = flush(); err != nil {
			break
		}
		q.BeforeSeq = page.NextSeq
		page, err = c.app.ListAudit(r.Context(), v.req(), q)
	}
	if err == nil {
		err = flush()
	}
	if err != nil && !errors.Is(err, r.Context().Err()) {
		c.log.ErrorContext(r.Context(), "console: audit export cut short", "format", ext, "err", err)
	}
}

// auditCSVHeader is the CSV export's header row.
var auditCSVHeader = []string{"seq", "id", "created_at", "actor_id", "key_id", "tool", "route", "target_type", "target_id", "world_id", "outcome"}

// cell keeps a spreadsheet from reading a CSV value as a formula: one
// that starts with =, +, -, @, a tab or a carriage return (a changeset id
// an agent chose, say) gets a leading apostrophe. The ids and names the
// server makes never start with one.
func cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func (c *Console) auditCSV(w http.ResponseWriter, r *http.Request, v *visit) {
	cw := csv.NewWriter(w)
	c.auditExport(w, r, v, "csv", "text/csv; charset=utf-8",
		func() error { return cw.Write(auditCSVHeader) },
		func(e *wf.AuditEntry) error {
			return cw.Write([]string{strconv.FormatInt(e.Seq, 10), e.ID, e.CreatedAt.UTC().Format(time.RFC3339Nano), cell(e.ActorID), cell(e.KeyID),
				cell(e.Tool), cell(e.Route), cell(e.TargetType), cell(e.TargetID), cell(e.WorldID), cell(e.Outcome)})
		},
		func() error { cw.Flush(); return cw.Error() })
}

func (c *Console) auditJSONL(w http.ResponseWriter, r *http.Request, v *visit) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	c.auditExport(w, r, v, "jsonl", "application/jsonl; charset=utf-8",
		func() error { return nil },
		func(e *wf.AuditEntry) error { return enc.Encode(e) },
		func() error {
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
			return nil
		})
}
