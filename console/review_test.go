package console_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/app"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// agent is the GM's agent: proposals filed with a named API key of the
// GM's, as over MCP.
type agent struct {
	t   testing.TB
	s   *testserver.Server
	svc *app.Service
	r   app.Request
	key *wf.APIKey
}

func newAgent(t testing.TB, s *testserver.Server, name string) *agent {
	t.Helper()
	_, k, err := s.Auth.MintKey(context.Background(), s.GM.ID, name, []string{wf.ScopeAll})
	if err != nil {
		t.Fatal(err)
	}
	return &agent{t: t, s: s, svc: app.New(s.DB), key: k,
		r: app.Request{Actor: &wf.Actor{UserID: s.GM.ID, KeyID: k.ID, Kind: wf.CredentialAPIKey, Scopes: []string{wf.ScopeAll}}, Via: app.Via{Tool: "test"}}}
}

func (a *agent) page(title, body, summary, cs string) string {
	a.t.Helper()
	res, err := a.svc.ProposeWikiPage(context.Background(), a.r, &wf.ProposeWikiPageArgs{WorldID: a.s.World.ID, DiffSummary: summary, ChangesetID: cs,
		Payload: wf.WikiPageProposalFs{Title: title, Body: body}})
	if err != nil {
		a.t.Fatal(err)
	}
	return res.ProposalID
}

func (a *agent) edit(page *wf.WikiPage, body, summary, cs string) string {
	a.t.Helper()
	res, err := a.svc.ProposeWikiEdit(context.Background(), a.r, &wf.ProposeWikiEditArgs{PageID: page.ID, DiffSummary: summary, ChangesetID: cs,
		Payload: wf.WikiEditProposalFs{Body: &body}})
	if err != nil {
		a.t.Fatal(err)
	}
	return res.ProposalID
}

func (a *agent) lore(summary, cs string, ops ...wf.LoreOpInput) string {
	a.t.Helper()
	res, err := a.svc.ProposeLore(context.Background(), a.r, &wf.ProposeLoreArgs{WorldID: a.s.World.ID, DiffSummary: summary, ChangesetID: cs, Operations: ops})
	if err != nil {
		a.t.Fatal(err)
	}
	return res.ProposalID
}

// commitNow commits a proposal as the owner, outside the console.
func commitNow(t testing.TB, s *testserver.Server, id string) {
	t.Helper()
	r := app.Request{Actor: &wf.Actor{UserID: s.Owner.ID, Kind: wf.CredentialSession, Scopes: []string{wf.ScopeAll}}, Via: app.Via{Route: "test"}}
	if _, err := app.New(s.DB).CommitProposal(context.Background(), r, id); err != nil {
		t.Fatal(err)
	}
}

func status(t testing.TB, s *testserver.Server, id string) string {
	t.Helper()
	p, err := s.DB.FindProposal(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return p.Status
}

func mustContain(t testing.TB, what, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
}

// inlineRE finds inline script and style, which the CSP forbids.
var inlineRE = regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]|\son[a-z]+\s*=|style="`)

func noInline(t testing.TB, what, body string) {
	t.Helper()
	if m := inlineRE.FindString(body); m != "" {
		t.Errorf("%s: inline script or style %q", what, m)
	}
}

var rowRE = regexp.MustCompile(`<tr id="p-(prop_[a-z0-9]+)"`)

func rows(body string) []string {
	var out []string
	for _, m := range rowRE.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

var nextRE = regexp.MustCompile(`<a rel="next" href="([^"]+)">Next page</a>`)

func TestQueuePage(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := startConsole(t, db)
		a := newAgent(t, s, "gm-agent")
		lone := a.page("Docks", "Piers.", "add the docks", "")
		c1 := a.page("Harbor", "Ships.", "add the harbor", "harbor-cs")
		c2 := a.lore("harbor lore", "harbor-cs", wf.LoreOpInput{Op: "upsert", Collection: "factions", Entity: map[string]any{"id": "pilots", "name": "Pilots"}})
		b := newBrowser(t, s.URL)
		b.signIn(s.LoginLink(t, s.Owner))

		p := b.get("/queue")
		if p.status != http.StatusOK {
			t.Fatalf("queue: %d\n%s", p.status, p.body)
		}
		mustContain(t, "queue", p.body, "<h1>Review queue</h1>", `id="p-`+lone+`"`, `id="p-`+c1+`"`, `id="p-`+c2+`"`,
			"add the docks", "Changeset <code>harbor-cs</code>", "GM", "gm-agent", "New wiki page “Docks”", "Lore: 1 operation (1 upsert)",
			"Showing 3 of 3 pending proposals", `id="queue-live"`, `src="/static/queue.js"`, `<label for="f-kind">`)
		noInline(t, "queue", p.body)
		// The changeset's proposals are listed together under its header.
		head := strings.Index(p.body, "harbor-cs</code>")
		if i, j := strings.Index(p.body, `id="p-`+c1+`"`), strings.Index(p.body, `id="p-`+c2+`"`); !(head < i && head < j) {
			t.Errorf("changeset rows not under its header")
		}
		if strings.Contains(p.body, `rel="next"`) {
			t.Error("a single page links a next page")
		}

		// Filters.
		for _, tc := range []struct {
			query string
			want  []string
		}{
			{"kind=world", []string{c2}},
			{"kind=wiki_page&world=" + s.World.ID, nil}, // checked by count below
			{"actor=" + s.Owner.ID, nil},
			{"key=" + a.key.ID + "&kind=world", []string{c2}},
			{"status=committed", nil},
		} {
			p := b.get("/queue?" + tc.query)
			if p.status != http.StatusOK {
				t.Errorf("%s: %d", tc.query, p.status)
				continue
			}
			got := rows(p.body)
			if tc.want != nil && fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("%s: rows %v, want %v", tc.query, got, tc.want)
			}
			if strings.HasPrefix(tc.query, "kind=wiki_page") && len(got) != 2 {
				t.Errorf("%s: rows %v", tc.query, got)
			}
			if (strings.HasPrefix(tc.query, "actor=") || strings.HasPrefix(tc.query, "status=")) && len(got) != 0 {
				t.Errorf("%s: rows %v", tc.query, got)
			}
		}

		// Bad filters: a clear 400 page.
		for query, want := range map[string]string{
			"kind=spell":         "Kind must be one of quest, encounter",
			"status=open":        "Status must be one of pending, committed, rejected",
			"before=123.nope":    "The page link is broken",
			"before=x":           "The page link is broken",
			"world=world_nope12": "Not found",
		} {
			p := b.get("/queue?" + query)
			wantStatus := http.StatusBadRequest
			if strings.HasPrefix(query, "world=") {
				wantStatus = http.StatusNotFound
			}
			if p.status != wantStatus || !strings.Contains(p.body, want) {
				t.Errorf("%s: %d, want %d with %q\n%s", query, p.status, wantStatus, want, p.body)
			}
		}

		// Pages: 60 more proposals make two pages of 50, linked by
		// rel=next, each proposal on exactly one.
		for i := range 60 {
			a.page(fmt.Sprintf("Page %d", i), "", fmt.Sprintf("summary %d", i), "")
		}
		seen := map[string]bool{}
		path, pages := "/queue", 0
		for path != "" {
			p := b.get(html.UnescapeString(path))
			if p.status != http.StatusOK {
				t.Fatalf("%s: %d", path, p.status)
			}
			pages++
			for _, id := range rows(p.body) {
				if seen[id] {
					t.Errorf("%s twice", id)
				}
				seen[id] = true
			}
			mustContain(t, path, p.body, "of 63 pending proposals")
			path = ""
			if m := nextRE.FindStringSubmatch(p.body); m != nil {
				path = m[1]
			}
		}
		if pages != 2 || len(seen) != 63 {
			t.Errorf("%d pages, %d proposals", pages, len(seen))
		}
	})
}

// TestQueueEvents checks the live queue's event stream: the state at
// once, then an event when a proposal arrives.
func TestQueueEvents(t *testing.T) {
	db := dbtest.Open(t)
	s := testserver.StartWith(t, db, testserver.Config{Console: true, LiveInterval: 20 * time.Millisecond})
	a := newAgent(t, s, "gm-agent")
	first := a.page("Docks", "", "add the docks", "")
	b := newBrowser(t, s.URL)
	b.signIn(s.LoginLink(t, s.Owner))

	p := b.get("/queue/events?once=1")
	if p.status != http.StatusOK || !strings.HasPrefix(p.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("once: %d %s\n%s", p.status, p.header.Get("Content-Type"), p.body)
	}
	want := fmt.Sprintf("event: queue\ndata: {\"total\":1,\"newest\":%q}\n\n", first)
	if !strings.Contains(p.body, want) {
		t.Errorf("once:\n%s\nwant %q", p.body, want)
	}
	if p := b.get("/queue/events?kind=spell"); p.status != http.StatusBadRequest {
		t.Errorf("bad filter: %d", p.status)
	}

	// A stream: the first event, then one when another proposal comes.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/queue/events", nil)
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := make(chan string)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		name := ""
		for sc.Scan() {
			if e, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				name = e
			}
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				if name != "queue" {
					d = name
				}
				select {
				case events <- d:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	var st struct {
		Total  int    `json:"total"`
		Newest string `json:"newest"`
	}
	json.Unmarshal([]byte(<-events), &st)
	if st.Total != 1 || st.Newest != first {
		t.Fatalf("first event %+v", st)
	}
	second := a.page("Harbor", "", "add the harbor", "")
	json.Unmarshal([]byte(<-events), &st)
	if st.Total != 2 || st.Newest != second {
		t.Fatalf("after a new proposal: %+v", st)
	}
	// Committing one changes the set again.
	commitNow(t, s, second)
	json.Unmarshal([]byte(<-events), &st)
	if st.Total != 1 || st.Newest != first {
		t.Fatalf("after a commit: %+v", st)
	}
	// The session ends: the stream says so and closes.
	if _, err := s.DB.RevokeUserSessions(context.Background(), s.Owner.ID); err != nil {
		t.Fatal(err)
	}
	if e := <-events; e != "signout" {
		t.Errorf("after sign-out: %q", e)
	}
	if e, ok := <-events; ok {
		t.Errorf("the stream goes on: %q", e)
	}
}

func TestProposalPage(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := startConsole(t, db)
		a := newAgent(t, s, "gm-agent")
		page := &wf.WikiPage{WorldID: s.World.ID, Title: "Harbor", Body: "line one\nline two\nline three\n", Kind: wf.WikiKindPlace, Audience: wf.AudienceGM}
		if err := db.CreateWikiPage(context.Background(), page, s.Owner.ID); err != nil {
			t.Fatal(err)
		}
		edit := a.edit(page, "line one\nline 2\nline three\n"+xss+"\n", xss, "")
		lore := a.lore("lore ops", "", wf.LoreOpInput{Op: "upsert", Collection: "factions", Entity: map[string]any{"id": "wardens", "name": "Wardens", "leader": xss}},
			wf.LoreOpInput{Op: "remove", Collection: "factions", ID: "nobody"})
		b := newBrowser(t, s.URL)
		b.signIn(s.LoginLink(t, s.Owner))

		p := b.get("/p/" + edit)
		if p.status != http.StatusOK {
			t.Fatalf("proposal: %d\n%s", p.status, p.body)
		}
		esc := html.EscapeString(xss)
		mustContain(t, "edit page", p.body, "<h1>Edit of wiki page “Harbor”</h1>", `<td class="text">line two</td>`, `<td class="text">line 2</td>`,
			`<tr class="del">`, `<tr class="add">`, "@@ -1,3 &#43;1,4 @@", "gm-agent", `id="commit"`, `name="reason"`, "Wiki page “Harbor” (version 1)")
		if strings.Contains(p.body, xss) || strings.Count(p.body, strings.ReplaceAll(esc, "&#34;", "&#34;")) < 2 {
			t.Errorf("script in a summary or body is not shown as text")
		}
		if strings.Contains(p.body, `id="conflict"`) {
			t.Error("a conflict shown for a fresh proposal")
		}

		// A lore proposal: one section per operation, the schema's verdict.
		p = b.get("/p/" + lore)
		mustContain(t, "lore page", p.body, `id="op-0"`, `id="op-1"`, "schema: valid", "nothing to remove", "<code>leader</code>", "<code>factions/wardens</code>", "replace")
		if strings.Contains(p.body, xss) {
			t.Error("script in a lore entity is not escaped")
		}

		// Once the page changed, the conflict is shown before any click.
		commitNow(t, s, a.edit(page, "other\n", "other", ""))
		p = b.get("/p/" + edit)
		mustContain(t, "stale edit", p.body, `id="conflict"`, "A commit would fail now.", "Version conflict")

		// Ids that are not a proposal the caller may see: the 404 page.
		for _, path := range []string{"/p/prop_missing", "/p/nonsense", "/p/" + strings.Repeat("x", 300)} {
			if p := b.get(path); p.status != http.StatusNotFound || !strings.Contains(p.body, "<h1>Not found</h1>") {
				t.Errorf("%s: %d", path, p.status)
			}
		}
	})
}

func auditRoute(t testing.TB, s *testserver.Server, outcome string) wf.AuditEntry {
	t.Helper()
	rows, err := s.DB.ListAudit(context.Background(), wf.AuditFilter{Outcome: outcome, Limit: 1})
	if err != nil || len(rows) == 0 {
		t.Fatalf("audit %s: %v %d", outcome, err, len(rows))
	}
	return rows[0]
}

func TestCommitRejectForms(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := startConsole(t, db)
		a := newAgent(t, s, "gm-agent")
		one := a.page("Docks", "Piers.", "add the docks", "")
		two := a.page("Harbor", "Ships.", "add the harbor", "")
		b := newBrowser(t, s.URL)
		b.signIn(s.LoginLink(t, s.Owner))

		noInline(t, "proposal", b.get("/p/"+one).body)
		// A forged token: 403, nothing changed.
		before := s.Fingerprint(t)
		for _, path := range []string{"/p/" + one + "/commit", "/p/" + one + "/reject", "/w/" + s.World.ID + "/changesets/cs/commit"} {
			for _, tok := range []string{"", "forged"} {
				form := url.Values{"reason": {"x"}}
				if tok != "" {
					form.Set("csrf", tok)
				}
				if p := b.do("POST", path, form); p.status != http.StatusForbidden {
					t.Errorf("%s with token %q: %d", path, tok, p.status)
				}
			}
		}
		if changed := testserver.Changed(before, s.Fingerprint(t)); len(changed) != 0 {
			t.Errorf("forged forms changed %v", changed)
		}

		// Commit: back to the proposal, committed, audited as the console.
		p := b.post("/p/"+one, "/p/"+one+"/commit", nil)
		if p.status != http.StatusSeeOther || p.header.Get("Location") != "/p/"+one {
			t.Fatalf("commit: %d %s\n%s", p.status, p.header.Get("Location"), p.body)
		}
		if st := status(t, s, one); st != wf.ProposalCommitted {
			t.Errorf("status %s", st)
		}
		if r := auditRoute(t, s, "committed"); r.Route != "console POST /p/{id}/commit" || r.ActorID != s.Owner.ID {
			t.Errorf("audit row %+v", r)
		}
		p = b.get("/p/" + one)
		mustContain(t, "committed page", p.body, "Committed: wiki_", `<span class="badge committed" id="status">committed</span>`)
		if strings.Contains(p.body, `id="commit"`) {
			t.Error("a committed proposal offers a commit button")
		}
		// Again: a clear 409, nothing more applied.
		audits := s.AuditCount(t)
		p = b.post("/", "/p/"+one+"/commit", nil)
		if p.status != http.StatusConflict || !strings.Contains(p.body, "Already decided") {
			t.Errorf("double commit: %d\n%s", p.status, p.body)
		}
		if s.AuditCount(t) != audits {
			t.Error("a refused commit was audited")
		}

		// Reject with a reason; the reason is shown.
		reason := "Not canon.\n" + xss
		long := strings.Repeat("r", app.MaxRejectReason+1)
		p = b.post("/", "/p/"+two+"/reject", url.Values{"reason": {long}})
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, "Reason must be 0–2000 characters") || status(t, s, two) != wf.ProposalPending {
			t.Errorf("a reason too long: %d %s", p.status, status(t, s, two))
		}
		p = b.post("/", "/p/"+two+"/reject", url.Values{"reason": {reason}})
		if p.status != http.StatusSeeOther {
			t.Fatalf("reject: %d\n%s", p.status, p.body)
		}
		if r := auditRoute(t, s, "rejected"); r.Route != "console POST /p/{id}/reject" {
			t.Errorf("audit row %+v", r)
		}
		p = b.get("/p/" + two)
		mustContain(t, "rejected page", p.body, "Rejected.", `id="reason"`, "Not canon.", html.EscapeString("<script>alert(1)</script>"))
		if strings.Contains(p.body, xss) {
			t.Error("the reason is not escaped")
		}

		// Bad ids: the 404 page.
		for _, path := range []string{"/p/prop_missing/commit", "/p/nonsense/reject", "/w/" + s.World.ID + "/changesets/nope!/commit", "/w/world_missing/changesets/cs/commit"} {
			if p := b.post("/", path, nil); p.status != http.StatusNotFound {
				t.Errorf("%s: %d", path, p.status)
			}
		}
	})
}

func TestChangesetForm(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := startConsole(t, db)
		a := newAgent(t, s, "gm-agent")
		page := &wf.WikiPage{WorldID: s.World.ID, Title: "Harbor", Body: "one\n", Kind: wf.WikiKindPlace, Audience: wf.AudienceGM}
		if err := db.CreateWikiPage(context.Background(), page, s.Owner.ID); err != nil {
			t.Fatal(err)
		}
		newPage := a.page("Docks", "Piers.", "add the docks", "cs1")
		stale := a.edit(page, "two\n", "change the harbor", "cs1")
		commitNow(t, s, a.edit(page, "three\n", "outside change", ""))
		b := newBrowser(t, s.URL)
		b.signIn(s.LoginLink(t, s.Owner))

		p := b.get("/p/" + newPage)
		mustContain(t, "changeset member", p.body, "Commit whole changeset", `id="cs-`+stale+`"`, "1 of these would fail now", `name="from" value="`+newPage+`"`)

		// (A rolled-back transaction counts in SQLite's change count, so
		// what it would have written is checked instead of a fingerprint.)
		pagesBefore, audits := wikiCount(t, s), s.AuditCount(t)
		p = b.post("/p/"+newPage, "/w/"+s.World.ID+"/changesets/cs1/commit", url.Values{"from": {newPage}})
		if p.status != http.StatusConflict {
			t.Fatalf("changeset with a conflict: %d\n%s", p.status, p.body)
		}
		noInline(t, "changeset conflict", p.body)
		mustContain(t, "conflict page", p.body, "nothing of it was applied", "Proposal "+stale, "Version conflict", `class="has-conflict failed"`)
		if wikiCount(t, s) != pagesBefore || s.AuditCount(t) != audits {
			t.Errorf("a failed changeset commit wrote a page or an audit row")
		}
		if status(t, s, newPage) != wf.ProposalPending || status(t, s, stale) != wf.ProposalPending {
			t.Error("a failed changeset commit decided a proposal")
		}

		// Without the conflicting one, the changeset commits whole.
		if p := b.post("/p/"+stale, "/p/"+stale+"/reject", url.Values{"reason": {"stale"}}); p.status != http.StatusSeeOther {
			t.Fatalf("reject: %d", p.status)
		}
		p = b.post("/p/"+newPage, "/w/"+s.World.ID+"/changesets/cs1/commit", url.Values{"from": {newPage}})
		if p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/queue") {
			t.Fatalf("changeset commit: %d %s\n%s", p.status, p.header.Get("Location"), p.body)
		}
		if status(t, s, newPage) != wf.ProposalCommitted {
			t.Error("not committed")
		}
		if r := auditRoute(t, s, "committed"); r.Route != "console POST /w/{world}/changesets/{cs}/commit" {
			t.Errorf("audit row %+v", r)
		}
		mustContain(t, "queue after", b.get(p.header.Get("Location")).body, "Changeset cs1 committed: 1 proposal applied.")
		// Nothing pending left in it.
		p = b.post("/p/"+newPage, "/w/"+s.World.ID+"/changesets/cs1/commit", url.Values{"from": {newPage}})
		if p.status != http.StatusConflict || !strings.Contains(p.body, "no pending proposals left") {
			t.Errorf("an empty changeset: %d", p.status)
		}
	})
}

func wikiCount(t testing.TB, s *testserver.Server) int {
	t.Helper()
	counts, err := s.DB.CountWikiPages(context.Background(), s.World.ID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

// TestReviewWithLimitedKey: a session signed in with a key that can read
// but not write sees the queue and the diff, no decision forms, and a
// commit or rejection it posts anyway is refused with 403 naming the
// scope, changing nothing. One without world:read cannot read the queue.
func TestReviewWithLimitedKey(t *testing.T) {
	db := dbtest.Open(t)
	s := startConsole(t, db)
	a := newAgent(t, s, "gm-agent")
	id := a.page("Docks", "Piers.", "add the docks", "cs1")

	b := newBrowser(t, s.URL)
	if p := b.post("/signin", "/signin", url.Values{"credential": {s.Key(t, s.Owner, wf.ScopeWorldRead)}}); p.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", p.status)
	}
	if p := b.get("/queue"); p.status != http.StatusOK || len(rows(p.body)) != 1 {
		t.Errorf("queue: %d, rows %v", p.status, rows(p.body))
	}
	p := b.get("/p/" + id)
	if p.status != http.StatusOK || strings.Contains(p.body, `id="commit"`) || strings.Contains(p.body, `id="commit-changeset"`) ||
		!strings.Contains(p.body, "cannot commit or reject") {
		t.Errorf("proposal page of a read-only session: %d", p.status)
	}
	audits := s.AuditCount(t)
	for _, path := range []string{"/p/" + id + "/commit", "/p/" + id + "/reject", "/w/" + s.World.ID + "/changesets/cs1/commit"} {
		p := b.post("/queue", path, url.Values{"reason": {"no"}, "from": {id}})
		if p.status != http.StatusForbidden || !strings.Contains(p.body, "world:write") {
			t.Errorf("%s: %d", path, p.status)
		}
	}
	if status(t, s, id) != wf.ProposalPending || s.AuditCount(t) != audits {
		t.Error("a read-only session decided a proposal")
	}

	nb := newBrowser(t, s.URL)
	if p := nb.post("/signin", "/signin", url.Values{"credential": {s.Key(t, s.Owner, wf.ScopeWikiRead)}}); p.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", p.status)
	}
	for _, path := range []string{"/queue", "/queue/events?once=1", "/p/" + id} {
		if p := nb.get(path); p.status != http.StatusForbidden || !strings.Contains(p.body, "world:read") || strings.Contains(p.body, "add the docks") {
			t.Errorf("%s without world:read: %d", path, p.status)
		}
	}
}
