package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/app"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// accessFixture is the owner's world with something in every list the
// console shows: a pending proposal in a changeset, a rule, a named key
// and audit rows.
type accessFixture struct {
	*testserver.Server
	proposal *wf.Proposal
	ruleID   string
	keyID    string
	keyName  string
}

func newAccessFixture(t *testing.T, db *sqlstore.DB) *accessFixture {
	s := startConsole(t, db)
	f := &accessFixture{Server: s, keyName: "owner-agent-key"}
	ctx := context.Background()
	owner := app.Request{Actor: &wf.Actor{UserID: s.Owner.ID, Kind: wf.CredentialSession, Scopes: []string{wf.ScopeAll}}, Via: app.Via{Route: "test"}}
	svc := app.New(db)
	res, err := svc.ProposeWikiPage(ctx, owner, &wf.ProposeWikiPageArgs{WorldID: s.World.ID, DiffSummary: "secret-summary-of-owner",
		ChangesetID: "cs-owner", Payload: wf.WikiPageProposalFs{Title: "Hidden page", Body: "owner's draft", Kind: wf.WikiKindLore, Audience: wf.AudienceGM}})
	if err != nil {
		t.Fatal(err)
	}
	if f.proposal, err = db.FindProposal(ctx, res.ProposalID); err != nil {
		t.Fatal(err)
	}
	rule, err := svc.CreateAutoAcceptRule(ctx, owner, func(in *app.RuleArgs) error {
		in.WorldID, in.ActorID = s.World.ID, s.GM.ID
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f.ruleID = rule.ID
	_, k, err := s.Auth.MintKey(ctx, s.Owner.ID, f.keyName, []string{wf.ScopeWorldRead})
	if err != nil {
		t.Fatal(err)
	}
	f.keyID = k.ID
	return f
}

// consoleCase is how a console route is asked for in the access matrix.
type consoleCase struct {
	// path is the request's path (for the caller).
	path func(f *accessFixture, caller *wf.User) string
	// form is a POST's fields (a CSRF token is added).
	form url.Values
	// own: the route shows or changes only the caller's own rows, so
	// every caller gets an answer, which must hold nothing of the
	// owner's. Otherwise a player or stranger gets 404 and nothing
	// changes.
	own bool
	// public: served without a session (sign-in, assets).
	public bool
}

func fixed(p string) func(*accessFixture, *wf.User) string {
	return func(*accessFixture, *wf.User) string { return p }
}

func worldPath(suffix string) func(*accessFixture, *wf.User) string {
	return func(f *accessFixture, _ *wf.User) string { return "/w/" + f.World.ID + suffix }
}

// consoleCases has a case for every console route: TestConsoleAccessMatrix
// fails when a route has none.
var consoleCases = map[string]consoleCase{
	"GET /signin":         {path: fixed("/signin"), public: true},
	"POST /signin":        {path: fixed("/signin"), public: true},
	"GET /login/{token}":  {path: fixed("/login/wfl_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), public: true},
	"POST /login/{token}": {path: fixed("/login/wfl_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), public: true},
	"GET /static/{file}":  {path: fixed("/static/console.css"), public: true},
	"POST /signout":       {path: fixed("/signout"), own: true},
	"GET /{$}":            {path: fixed("/"), own: true},
	"POST /w":             {path: fixed("/w"), form: url.Values{"name": {"Mine"}, "size": {"small"}}, own: true},

	"GET /w/{world}":             {path: worldPath("")},
	"GET /w/{world}/map.png":     {path: worldPath("/map.png")},
	"GET /w/{world}/wiki/{page}": {path: func(f *accessFixture, _ *wf.User) string { return "/w/" + f.World.ID + "/wiki/" + f.Page.ID }},
	"POST /w/{world}/members":    {path: worldPath("/members"), form: url.Values{"user": {"Stranger"}, "role": {"gm"}}},
	"POST /w/{world}/members/{user}/remove": {path: func(f *accessFixture, _ *wf.User) string {
		return "/w/" + f.World.ID + "/members/" + f.Player.ID + "/remove"
	}},
	"POST /w/{world}/changesets/{cs}/commit": {path: worldPath("/changesets/cs-owner/commit")},

	"GET /queue":          {path: fixed("/queue"), own: true},
	"GET /queue/events":   {path: fixed("/queue/events?once=1"), own: true},
	"GET /p/{id}":         {path: func(f *accessFixture, _ *wf.User) string { return "/p/" + f.proposal.ID }},
	"POST /p/{id}/commit": {path: func(f *accessFixture, _ *wf.User) string { return "/p/" + f.proposal.ID + "/commit" }},
	"POST /p/{id}/reject": {path: func(f *accessFixture, _ *wf.User) string { return "/p/" + f.proposal.ID + "/reject" }, form: url.Values{"reason": {"no"}}},

	"GET /rules":              {path: fixed("/rules"), own: true},
	"POST /rules":             {path: fixed("/rules"), form: url.Values{"world": {""}, "actor": {"usr_x"}}, own: true},
	"POST /rules/{id}/delete": {path: func(f *accessFixture, _ *wf.User) string { return "/rules/" + f.ruleID + "/delete" }},
	"GET /keys":               {path: fixed("/keys"), own: true},
	"POST /keys":              {path: fixed("/keys"), form: url.Values{"name": {"mine"}, "scopes": {"world:read"}}, own: true},
	"POST /keys/{id}/revoke":  {path: func(f *accessFixture, _ *wf.User) string { return "/keys/" + f.keyID + "/revoke" }},
	"GET /audit":              {path: fixed("/audit"), own: true},
	"GET /audit.csv":          {path: fixed("/audit.csv"), own: true},
	"GET /audit.jsonl":        {path: fixed("/audit.jsonl"), own: true},
}

// TestConsoleAccessMatrix runs the access matrix over the console's
// routes: a player of the owner's world and a stranger see through the
// console nothing of the world they could not see over MCP (the world's
// pages, map, members, proposals and rules are owner-or-GM), and change
// nothing of it.
func TestConsoleAccessMatrix(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newAccessFixture(t, db)
		patterns := f.Console.Patterns()
		for _, p := range patterns {
			if _, ok := consoleCases[p]; !ok {
				t.Errorf("console route %s: no access matrix case", p)
			}
		}
		for p := range consoleCases {
			if !slices.Contains(patterns, p) {
				t.Errorf("access matrix case %s: no such console route", p)
			}
		}
		// What of the owner's world must not show to a player or a
		// stranger.
		secrets := []string{f.World.Name, f.World.ID, f.proposal.ID, "secret-summary-of-owner", f.ruleID, f.keyID, f.keyName, "Hidden page"}
		for _, who := range []*wf.User{f.Player, f.Stranger} {
			b := newBrowser(t, f.URL)
			b.signIn(f.LoginLink(t, who))
			for _, pattern := range patterns {
				tc := consoleCases[pattern]
				if tc.public || tc.path == nil {
					continue
				}
				t.Run(who.Name+"/"+pattern, func(t *testing.T) {
					b.t = t
					method, _, _ := strings.Cut(pattern, " ")
					path := tc.path(f, who)
					before := f.Fingerprint(t)
					var p page
					if method == http.MethodGet {
						p = b.get(path)
					} else if pattern == "POST /signout" {
						return // ends the session the other cases need
					} else {
						form := url.Values{}
						for k, v := range tc.form {
							form[k] = v
						}
						p = b.post("/", path, form)
					}
					if !tc.own {
						if p.status != http.StatusNotFound {
							t.Errorf("%s %s: %d, want 404", method, path, p.status)
						}
						if changed := testserver.Changed(before, f.Fingerprint(t)); len(changed) != 0 && method != http.MethodGet {
							t.Errorf("%s %s changed %v", method, path, changed)
						}
					}
					body := p.body
					if p.status == http.StatusSeeOther {
						body = b.get(p.header.Get("Location")).body
					}
					for _, secret := range secrets {
						if strings.Contains(body, secret) {
							t.Errorf("%s %s shows %q of the owner's", method, path, secret)
						}
					}
				})
			}
		}
		// The owner still has it all: the proposal is pending, the rule
		// and key are there.
		ctx := context.Background()
		if p, err := f.DB.FindProposal(ctx, f.proposal.ID); err != nil || p.Status != wf.ProposalPending {
			t.Errorf("owner's proposal: %+v, %v", p, err)
		}
		if k, err := f.DB.FindAPIKeyByID(ctx, f.keyID); err != nil || k.RevokedAt != nil {
			t.Errorf("owner's key: %+v, %v", k, err)
		}
		rules, err := f.DB.ListAutoAcceptRules(ctx, f.Owner.ID)
		if err != nil || len(rules) != 1 {
			t.Errorf("owner's rules: %+v, %v", rules, err)
		}
		members, err := f.DB.ListWorldMembers(ctx, f.World.ID)
		if err != nil || len(members) != 2 {
			b, _ := json.Marshal(members)
			t.Errorf("members: %s, %v", b, err)
		}
	})
}
