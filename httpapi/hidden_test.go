package httpapi_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/mcpserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// The hidden-rows test: no caller's answer may depend on rows they cannot
// see. Every id a tool or route takes is called twice by each caller the
// row is hidden from, once naming a row that exists (someone else's) and
// once naming one that exists nowhere: status, headers and body must be
// byte-identical, and a refusal writes no audit row. The cases are checked
// against the tool table (every argument named id or *_id) and the route
// table (every {param}), so a new tool or route cannot be forgotten.

// hiddenFixture is the test server's cast and rows, plus what the cases
// name: an observer of the shared world, a world of the stranger's own
// (with a page, a node and a POI), pending proposals of the owner's, an
// auto-accept rule of the owner's, and a key with every scope per user.
type hiddenFixture struct {
	*testserver.Server
	Observer      *wf.User
	StrangerWorld *wf.World
	StrangerPage  *wf.WikiPage
	StrangerPOI   *wf.POI
	WorldProposal string // a pending atlas proposal in the owner's world
	LooseQuest    string // a pending new-quest proposal of the owner's, outside any world
	QuestProp     string // a pending change of the owner's quest
	EncounterProp string // a pending change of the owner's encounter
	Rule          string // an auto-accept rule of the owner's
	keys          map[*wf.User]string
}

// hiddenCaller names a caller the row is hidden from.
type hiddenCaller int

const (
	asStranger hiddenCaller = iota
	asPlayer
	asObserver
	asGM
)

func (c hiddenCaller) String() string {
	return [...]string{"stranger", "player", "observer", "gm"}[c]
}

func (f *hiddenFixture) user(c hiddenCaller) *wf.User {
	return [...]*wf.User{f.Stranger, f.Player, f.Observer, f.GM}[c]
}

// hiddenTool is one id argument of one tool.
type hiddenTool struct {
	tool string
	arg  string // the argument swapped (payload.parentId: nested)
	// hidden is the id of an existing row the callers may not see.
	hidden func(f *hiddenFixture) string
	// args builds the call's arguments around the id.
	args func(f *hiddenFixture, id string) map[string]any
	// as overrides the callers, which default to those the tool's access
	// row refuses on the owner's rows.
	as []hiddenCaller
}

func byID(arg string) func(*hiddenFixture, string) map[string]any {
	return func(_ *hiddenFixture, id string) map[string]any { return map[string]any{arg: id} }
}

func with(arg string, extra map[string]any) func(*hiddenFixture, string) map[string]any {
	return func(_ *hiddenFixture, id string) map[string]any {
		m := maps.Clone(extra)
		m[arg] = id
		return m
	}
}

func (f *hiddenFixture) world() string     { return f.World.ID }
func (f *hiddenFixture) campaign() string  { return f.Campaign.ID }
func (f *hiddenFixture) quest() string     { return f.Quest.ID }
func (f *hiddenFixture) encounter() string { return f.Encounter.ID }
func (f *hiddenFixture) page() string      { return f.Page.ID }
func (f *hiddenFixture) node() string      { return f.Node.ID }

var hiddenTools = []hiddenTool{
	{tool: wf.ToolReadWorld, arg: "id", hidden: (*hiddenFixture).world, args: byID("id")},
	{tool: wf.ToolReadCampaign, arg: "id", hidden: (*hiddenFixture).campaign, args: byID("id")},
	{tool: wf.ToolReadQuest, arg: "id", hidden: (*hiddenFixture).quest, args: byID("id")},
	{tool: wf.ToolReadEncounter, arg: "id", hidden: (*hiddenFixture).encounter, args: byID("id")},
	{tool: wf.ToolListQuests, arg: "campaign_id", hidden: (*hiddenFixture).campaign, args: byID("campaign_id")},
	{tool: wf.ToolListEncounters, arg: "campaign_id", hidden: (*hiddenFixture).campaign, args: byID("campaign_id")},
	{tool: wf.ToolListWikiPages, arg: "world_id", hidden: (*hiddenFixture).world, args: byID("world_id")},
	{tool: wf.ToolReadWikiPage, arg: "id", hidden: (*hiddenFixture).page, args: byID("id")},
	{tool: wf.ToolSearchWikiPages, arg: "world_id", hidden: (*hiddenFixture).world, args: with("world_id", map[string]any{"q": "warden"})},
	{tool: wf.ToolWikiPageHistory, arg: "id", hidden: (*hiddenFixture).page, args: byID("id")},
	{tool: wf.ToolListFactions, arg: "world_id", hidden: (*hiddenFixture).world, args: byID("world_id")},
	{tool: wf.ToolGetWorldSummary, arg: "world_id", hidden: (*hiddenFixture).world, args: byID("world_id")},
	{tool: wf.ToolListAtlasPlaces, arg: "world_id", hidden: (*hiddenFixture).world, args: byID("world_id")},
	{tool: wf.ToolReadAtlasNode, arg: "id", hidden: (*hiddenFixture).node, args: byID("id")},
	{tool: wf.ToolSearchAtlasNodes, arg: "world_id", hidden: (*hiddenFixture).world, args: with("world_id", map[string]any{"q": "ald"})},
	{tool: wf.ToolSearchPOIs, arg: "world_id", hidden: (*hiddenFixture).world, args: byID("world_id")},
	{tool: wf.ToolListLore, arg: "world_id", hidden: (*hiddenFixture).world, args: byID("world_id")},
	{tool: wf.ToolResizeWorld, arg: "world_id", hidden: (*hiddenFixture).world, args: with("world_id", map[string]any{"cols": 32, "rows": 24})},
	{tool: wf.ToolPlayerPickup, arg: "world_id", hidden: (*hiddenFixture).world, args: func(f *hiddenFixture, id string) map[string]any {
		return map[string]any{"world_id": id, "poi_id": f.POI.ID, "item_id": "coin", "cell": map[string]any{"x": f.POI.X, "y": f.POI.Y}}
	}},
	// A POI of another world, named in a world the caller may play in.
	{tool: wf.ToolPlayerPickup, arg: "poi_id", hidden: func(f *hiddenFixture) string { return f.StrangerPOI.ID },
		args: func(f *hiddenFixture, id string) map[string]any {
			return map[string]any{"world_id": f.World.ID, "poi_id": id, "item_id": "coin", "cell": map[string]any{"x": 1, "y": 1}}
		}, as: []hiddenCaller{asPlayer, asGM}},
	{tool: wf.ToolPlayerOpen, arg: "world_id", hidden: (*hiddenFixture).world, args: func(f *hiddenFixture, id string) map[string]any {
		return map[string]any{"world_id": id, "poi_id": f.POI.ID, "cell": map[string]any{"x": f.POI.X, "y": f.POI.Y}}
	}},
	{tool: wf.ToolPlayerOpen, arg: "poi_id", hidden: func(f *hiddenFixture) string { return f.StrangerPOI.ID },
		args: func(f *hiddenFixture, id string) map[string]any {
			return map[string]any{"world_id": f.World.ID, "poi_id": id, "cell": map[string]any{"x": 1, "y": 1}}
		}, as: []hiddenCaller{asPlayer, asGM}},
	{tool: wf.ToolProposeQuest, arg: "id", hidden: (*hiddenFixture).quest,
		args: with("id", map[string]any{"payload": map[string]any{"name": "Renamed"}, "diff_summary": "rename"})},
	{tool: wf.ToolProposeEncounter, arg: "id", hidden: (*hiddenFixture).encounter,
		args: with("id", map[string]any{"payload": map[string]any{"name": "Renamed"}, "diff_summary": "rename"})},
	{tool: wf.ToolProposeWikiPage, arg: "world_id", hidden: (*hiddenFixture).world,
		args: with("world_id", map[string]any{"payload": map[string]any{"title": "Rumours"}, "diff_summary": "new page"})},
	{tool: wf.ToolProposeWikiEdit, arg: "page_id", hidden: (*hiddenFixture).page,
		args: with("page_id", map[string]any{"payload": map[string]any{"body": "Keepers."}, "diff_summary": "body"})},
	{tool: wf.ToolProposeAtlasPlace, arg: "world_id", hidden: (*hiddenFixture).world,
		args: with("world_id", map[string]any{"payload": map[string]any{"name": "Fenwick"}, "diff_summary": "new place"})},
	// Another world's node as the parent, in the stranger's own world.
	{tool: wf.ToolProposeAtlasPlace, arg: "payload.parentId", hidden: (*hiddenFixture).node,
		args: func(f *hiddenFixture, id string) map[string]any {
			return map[string]any{"world_id": f.StrangerWorld.ID, "payload": map[string]any{"name": "Annex", "parentId": id}, "diff_summary": "annex"}
		}, as: []hiddenCaller{asStranger}},
	{tool: wf.ToolProposeLore, arg: "world_id", hidden: (*hiddenFixture).world,
		args: with("world_id", map[string]any{"diff_summary": "lore",
			"operations": []any{map[string]any{"op": "upsert", "collection": "factions", "entity": map[string]any{"id": "w2", "name": "W2"}}}})},
	{tool: wf.ToolCommitQuest, arg: "proposal_id", hidden: func(f *hiddenFixture) string { return f.QuestProp },
		args: with("proposal_id", map[string]any{"confirm": true})},
	{tool: wf.ToolCommitEncounter, arg: "proposal_id", hidden: func(f *hiddenFixture) string { return f.EncounterProp },
		args: with("proposal_id", map[string]any{"confirm": true})},
	// A new quest's proposal outside any world: only its proposer commits.
	{tool: wf.ToolCommitQuest, arg: "proposal_id", hidden: func(f *hiddenFixture) string { return f.LooseQuest },
		args: with("proposal_id", map[string]any{"confirm": true}), as: []hiddenCaller{asStranger, asGM}},
	{tool: wf.ToolCreateCampaign, arg: "world_id", hidden: (*hiddenFixture).world,
		args: with("world_id", map[string]any{"name": "Side campaign"})},
}

// notRowArgs are id-ish arguments that name no row a caller could probe:
// the changeset a proposal joins (scoped to the caller's world or to the
// caller; TestChangesetSquatting) and the item inside the POI named.
var notRowArgs = map[string]bool{"changeset_id": true, "item_id": true}

// hiddenRoute is one id a REST route takes, in its path or body.
type hiddenRoute struct {
	route  string // the pattern of the route table
	param  string // the path {param} or body field swapped
	hidden func(f *hiddenFixture) string
	// req builds the request around the id.
	req func(f *hiddenFixture, id string) (method, path, body string)
	as  []hiddenCaller
}

func path(method, format string, body string) func(*hiddenFixture, string) (string, string, string) {
	return func(_ *hiddenFixture, id string) (string, string, string) {
		return method, fmt.Sprintf(format, id), body
	}
}

var hiddenRoutes = []hiddenRoute{
	{route: "PUT /worlds/{id}/presence", param: "id", hidden: (*hiddenFixture).world,
		req: path("PUT", "/worlds/%s/presence", `{"x":1,"y":1}`), as: []hiddenCaller{asStranger}},
	// The GM places a user who is no member: an existing one or none.
	{route: "PUT /worlds/{id}/presence", param: "userId", hidden: func(f *hiddenFixture) string { return f.Stranger.ID },
		req: func(f *hiddenFixture, id string) (string, string, string) {
			return "PUT", "/worlds/" + f.World.ID + "/presence", `{"x":1,"y":1,"userId":"` + id + `"}`
		}, as: []hiddenCaller{asGM}},
	{route: "GET /worlds/{id}/pois/search", param: "id", hidden: (*hiddenFixture).world,
		req: path("GET", "/worlds/%s/pois/search?name=chest", ""), as: []hiddenCaller{asStranger}},
	{route: "POST /worlds/{id}/pois/search", param: "id", hidden: (*hiddenFixture).world,
		req: path("POST", "/worlds/%s/pois/search", `{"name":"chest"}`), as: []hiddenCaller{asStranger}},
	{route: "GET /worlds/{id}/proposals", param: "id", hidden: (*hiddenFixture).world,
		req: path("GET", "/worlds/%s/proposals", ""), as: []hiddenCaller{asStranger, asPlayer, asObserver}},
	{route: "GET /proposals/{id}", param: "id", hidden: func(f *hiddenFixture) string { return f.WorldProposal },
		req: path("GET", "/proposals/%s", ""), as: []hiddenCaller{asStranger, asPlayer, asObserver}},
	{route: "GET /proposals/{id}", param: "id", hidden: func(f *hiddenFixture) string { return f.LooseQuest },
		req: path("GET", "/proposals/%s", ""), as: []hiddenCaller{asStranger, asGM}},
	{route: "POST /proposals/{id}/commit", param: "id", hidden: func(f *hiddenFixture) string { return f.WorldProposal },
		req: path("POST", "/proposals/%s/commit", ""), as: []hiddenCaller{asStranger, asPlayer, asObserver}},
	{route: "POST /proposals/{id}/commit", param: "id", hidden: func(f *hiddenFixture) string { return f.LooseQuest },
		req: path("POST", "/proposals/%s/commit", ""), as: []hiddenCaller{asStranger, asGM}},
	{route: "POST /proposals/{id}/reject", param: "id", hidden: func(f *hiddenFixture) string { return f.WorldProposal },
		req: path("POST", "/proposals/%s/reject", ""), as: []hiddenCaller{asStranger, asPlayer, asObserver}},
	{route: "POST /worlds/{id}/changesets/{changeset}/commit", param: "id", hidden: (*hiddenFixture).world,
		req: path("POST", "/worlds/%s/changesets/cs1/commit", ""), as: []hiddenCaller{asStranger, asPlayer, asObserver}},
	// A changeset id used in the owner's world only, committed by the
	// stranger in their own world.
	{route: "POST /worlds/{id}/changesets/{changeset}/commit", param: "changeset", hidden: func(*hiddenFixture) string { return "cs1" },
		req: func(f *hiddenFixture, id string) (string, string, string) {
			return "POST", "/worlds/" + f.StrangerWorld.ID + "/changesets/" + id + "/commit", ""
		}, as: []hiddenCaller{asStranger}},
	{route: "POST /auto-accept-rules", param: "worldId", hidden: (*hiddenFixture).world,
		req: func(_ *hiddenFixture, id string) (string, string, string) {
			return "POST", "/auto-accept-rules", `{"worldId":"` + id + `","actorId":"anyone"}`
		}, as: []hiddenCaller{asStranger, asGM}},
	{route: "DELETE /auto-accept-rules/{id}", param: "id", hidden: func(f *hiddenFixture) string { return f.Rule },
		req: path("DELETE", "/auto-accept-rules/%s", ""), as: []hiddenCaller{asStranger, asGM}},
}

// routeBodyIDs are the id fields of the routes' JSON bodies: each needs a
// case, or a reason in notRowFields.
var routeBodyIDs = map[string][]string{
	"PUT /worlds/{id}/presence": {"userId"},
	"POST /auto-accept-rules":   {"worldId", "actorId", "keyId"},
}

// notRowFields name no row: a rule's actorId and keyId say whose
// proposals it trusts, and are stored as given (nothing is looked up).
var notRowFields = map[string]bool{"actorId": true, "keyId": true}

// missingLike returns an id of the same shape as id that exists nowhere.
func missingLike(id string) string {
	if i := strings.LastIndexByte(id, '_'); i > 0 {
		return wf.NewID(id[:i])
	}
	return id + "-nowhere"
}

var idArgName = regexp.MustCompile(`^(id|[a-z]+_id)$`)

// hiddenAnswer is what a client sees of one response.
type hiddenAnswer struct {
	Status int
	Header http.Header
	Body   string
}

func hiddenDo(t *testing.T, method, url string, header http.Header, body string) hiddenAnswer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	h := resp.Header.Clone()
	h.Del("Date")
	h.Del("X-Request-Id")
	return hiddenAnswer{resp.StatusCode, h, string(b)}
}

func newHiddenFixture(t *testing.T, db *sqlstore.DB) *hiddenFixture {
	t.Helper()
	ctx := t.Context()
	s := testserver.Start(t, db)
	f := &hiddenFixture{Server: s, Observer: &wf.User{Name: "Observer"}, keys: map[*wf.User]string{}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.CreateUser(ctx, f.Observer))
	must(db.AddWorldMember(ctx, s.World.ID, f.Observer.ID, wf.RoleObserver))
	f.StrangerWorld = &wf.World{OwnerID: s.Stranger.ID, Name: "Elsewhere", Cols: 16, Rows: 12, JSON: json.RawMessage(`{"grid":{"cols":16,"rows":12}}`)}
	must(db.CreateWorld(ctx, f.StrangerWorld))
	f.StrangerPage = &wf.WikiPage{WorldID: f.StrangerWorld.ID, Title: "Elsewhere", Body: "b", Kind: wf.WikiKindLore, Audience: wf.AudienceGM}
	must(db.CreateWikiPage(ctx, f.StrangerPage, s.Stranger.ID))
	f.StrangerPOI = &wf.POI{WorldID: f.StrangerWorld.ID, Name: "Crate", X: 1, Y: 1, Openable: true, Pickable: true,
		Items: []wf.POIItem{{ID: "coin", Name: "Coin"}}, Visibility: wf.AudienceParty}
	must(db.CreatePOI(ctx, f.StrangerPOI))
	for _, u := range []*wf.User{s.Owner, s.GM, s.Player, f.Observer, s.Stranger} {
		f.keys[u] = s.Key(t, u, everyScope()...)
	}
	// Everyone stands where the stranger's POI is (in the shared world).
	for _, u := range []*wf.User{s.GM, s.Player} {
		must(db.SetPresence(ctx, &wf.Presence{WorldID: s.World.ID, UserID: u.ID, X: 1, Y: 1}))
	}
	owner := connect(t, s, f.keys[s.Owner], "")
	f.WorldProposal = propose(t, owner, wf.ToolProposeAtlasPlace, map[string]any{"world_id": s.World.ID,
		"payload": map[string]any{"name": "Pending"}, "diff_summary": "pending", "changeset_id": "cs1"}).ProposalID
	f.LooseQuest = propose(t, owner, wf.ToolProposeQuest, map[string]any{"payload": map[string]any{"name": "Loose"}, "diff_summary": "new"}).ProposalID
	f.QuestProp = propose(t, owner, wf.ToolProposeQuest, map[string]any{"id": s.Quest.ID, "payload": map[string]any{"name": "Next"}, "diff_summary": "next"}).ProposalID
	f.EncounterProp = propose(t, owner, wf.ToolProposeEncounter, map[string]any{"id": s.Encounter.ID, "payload": map[string]any{"name": "Next"}, "diff_summary": "next"}).ProposalID
	var rule wf.AutoAcceptRule
	a := hiddenDo(t, "POST", s.URL+"/auto-accept-rules", bearer(f.keys[s.Owner]), `{"worldId":"`+s.World.ID+`","actorId":"agent-nobody","kinds":["quest"]}`)
	if a.Status != http.StatusCreated {
		t.Fatalf("create rule: %d %s", a.Status, a.Body)
	}
	mustDecode(t, a.Body, &rule)
	f.Rule = rule.ID
	return f
}

func everyScope() []string {
	return slices.DeleteFunc(slices.Clone(wf.AllScopes), func(sc string) bool { return sc == wf.ScopeAll })
}

func bearer(key string) http.Header {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+key)
	h.Set("Content-Type", "application/json")
	return h
}

// refusedBy lists the callers a tool's access row refuses on the owner's
// rows.
func refusedBy(who mcpserver.Who) []hiddenCaller {
	switch who {
	case mcpserver.WhoMember:
		return []hiddenCaller{asStranger}
	case mcpserver.WhoOwner:
		return []hiddenCaller{asStranger, asPlayer, asObserver, asGM}
	}
	return []hiddenCaller{asStranger, asPlayer, asObserver}
}

// TestHiddenRowsAnswerAsMissing: for every id argument of every MCP tool
// and every id in a REST route's path or body, each caller the row is
// hidden from (a stranger; a player, observer or GM where the access rule
// refuses them) gets byte-for-byte the answer for an id that exists
// nowhere, and a refusal writes no audit row either way. A tool argument
// named id or *_id, or a route {param} or body id, without a case fails
// the test.
func TestHiddenRowsAnswerAsMissing(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newHiddenFixture(t, db)
		s := f.Server

		// compare sends the two requests and requires the same answer.
		compare := func(t *testing.T, who string, send func(id string) hiddenAnswer, hidden string) {
			t.Helper()
			if hidden == "" {
				t.Fatalf("%s: the fixture has no hidden id", who)
			}
			missing := missingLike(hidden)
			var answers [2]hiddenAnswer
			for i, id := range []string{hidden, missing} {
				before := s.AuditCount(t)
				answers[i] = send(id)
				failed := answers[i].Status >= 400 || strings.Contains(answers[i].Body, `"isError":true`)
				if n := s.AuditCount(t) - before; failed && n != 0 {
					t.Errorf("%s, id %s: a refusal wrote %d audit rows", who, id, n)
				}
			}
			// The answer may quote the id it was given: compare with the
			// hidden id written as the missing one.
			got := answers[0]
			got.Body = strings.ReplaceAll(got.Body, hidden, missing)
			if got.Status != answers[1].Status || got.Body != answers[1].Body || !maps.EqualFunc(got.Header, answers[1].Header, slices.Equal) {
				t.Errorf("%s: someone else's row and no row answer differently\nhidden  %s: %d %v\n  %s\nmissing %s: %d %v\n  %s",
					who, hidden, answers[0].Status, answers[0].Header, answers[0].Body, missing, answers[1].Status, answers[1].Header, answers[1].Body)
			}
		}

		t.Run("tools", func(t *testing.T) {
			table := s.Tools.AccessTable()
			who := map[string]mcpserver.Who{}
			for _, row := range table {
				who[row.Tool] = row.Who
			}
			covered := map[string]bool{}
			for _, c := range hiddenTools {
				covered[c.tool+" "+c.arg] = true
				if _, ok := who[c.tool]; !ok {
					t.Errorf("case for %s, which is no tool", c.tool)
				}
			}
			cs := connect(t, s, f.keys[s.Owner], "")
			for tl, err := range cs.Tools(t.Context(), nil) {
				if err != nil {
					t.Fatal(err)
				}
				for _, arg := range schemaProps(t, tl) {
					if idArgName.MatchString(arg) && !notRowArgs[arg] && !covered[tl.Name+" "+arg] {
						t.Errorf("%s takes %s and has no hidden-row case", tl.Name, arg)
					}
				}
			}
			for _, c := range hiddenTools {
				as := c.as
				if as == nil {
					as = refusedBy(who[c.tool])
				}
				t.Run(c.tool+"/"+c.arg, func(t *testing.T) {
					for _, caller := range as {
						key := f.keys[f.user(caller)]
						compare(t, caller.String(), func(id string) hiddenAnswer {
							body := callBody("1", "2025-11-25", c.tool, mustJSON(c.args(f, id)), "")
							return hiddenDo(t, "POST", s.MCPURL(), headers(key, "2025-11-25", c.tool, nil), body)
						}, c.hidden(f))
					}
				})
			}
		})

		t.Run("routes", func(t *testing.T) {
			covered := map[string]bool{}
			for _, c := range hiddenRoutes {
				covered[c.route+" "+c.param] = true
			}
			scopes := s.API.RouteScopes()
			patterns := slices.Sorted(maps.Keys(scopes))
			param := regexp.MustCompile(`\{([a-z]+)\}`)
			for _, p := range patterns {
				for _, m := range param.FindAllStringSubmatch(p, -1) {
					if !covered[p+" "+m[1]] {
						t.Errorf("%s takes {%s} and has no hidden-row case", p, m[1])
					}
				}
				for _, field := range routeBodyIDs[p] {
					if !notRowFields[field] && !covered[p+" "+field] {
						t.Errorf("%s takes %s in its body and has no hidden-row case", p, field)
					}
				}
			}
			for _, c := range hiddenRoutes {
				if _, ok := scopes[c.route]; !ok {
					t.Errorf("case for %s, which is no route", c.route)
				}
				t.Run(c.route+"/"+c.param, func(t *testing.T) {
					for _, caller := range c.as {
						key := f.keys[f.user(caller)]
						compare(t, caller.String(), func(id string) hiddenAnswer {
							method, p, body := c.req(f, id)
							return hiddenDo(t, method, s.URL+p, bearer(key), body)
						}, c.hidden(f))
					}
				})
			}
		})

		// Nothing the callers did changed the owner's pending proposals.
		for _, id := range []string{f.WorldProposal, f.LooseQuest, f.QuestProp, f.EncounterProp} {
			p, err := db.FindProposal(t.Context(), id)
			if err != nil || p.Status != wf.ProposalPending {
				t.Errorf("proposal %s: %v, status %q after the probes", id, err, p.Status)
			}
		}
	})
}

// schemaProps lists a tool's top-level argument names.
func schemaProps(t *testing.T, tl *mcp.Tool) []string {
	t.Helper()
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	raw, err := json.Marshal(tl.InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	names := slices.Collect(maps.Keys(s.Properties))
	sort.Strings(names)
	return names
}

// squatArgs builds a propose tool's arguments filing into changeset cs, in
// world w (with its page) or, for quests and encounters, as a new row
// outside any world.
var squatArgs = map[string]func(w *wf.World, page *wf.WikiPage, cs string) map[string]any{
	wf.ToolProposeQuest: func(_ *wf.World, _ *wf.WikiPage, cs string) map[string]any {
		return map[string]any{"payload": map[string]any{"name": "Q"}, "diff_summary": "new", "changeset_id": cs}
	},
	wf.ToolProposeEncounter: func(_ *wf.World, _ *wf.WikiPage, cs string) map[string]any {
		return map[string]any{"payload": map[string]any{"name": "E"}, "diff_summary": "new", "changeset_id": cs}
	},
	wf.ToolProposeWikiPage: func(w *wf.World, _ *wf.WikiPage, cs string) map[string]any {
		return map[string]any{"world_id": w.ID, "payload": map[string]any{"title": "Squat"}, "diff_summary": "new", "changeset_id": cs}
	},
	wf.ToolProposeWikiEdit: func(_ *wf.World, page *wf.WikiPage, cs string) map[string]any {
		return map[string]any{"page_id": page.ID, "payload": map[string]any{"body": "Edited."}, "diff_summary": "edit", "changeset_id": cs}
	},
	wf.ToolProposeAtlasPlace: func(w *wf.World, _ *wf.WikiPage, cs string) map[string]any {
		return map[string]any{"world_id": w.ID, "payload": map[string]any{"name": "Squat"}, "diff_summary": "new", "changeset_id": cs}
	},
	wf.ToolProposeLore: func(w *wf.World, _ *wf.WikiPage, cs string) map[string]any {
		return map[string]any{"world_id": w.ID, "diff_summary": "lore", "changeset_id": cs,
			"operations": []any{map[string]any{"op": "upsert", "collection": "factions", "entity": map[string]any{"id": "squat", "name": "Squat"}}}}
	},
}

// TestChangesetSquatting: changeset ids are scoped to their world (to
// their proposer outside worlds). A stranger who files first under a
// changeset id, through every tool that takes changeset_id, neither
// blocks the owner from using the same id nor learns that the owner uses
// it: the owner's filings succeed, listing and committing the owner's
// changeset see only the owner's proposals, the stranger's stay pending
// and commit as their own changeset, and committing an id used only in
// another world answers as one used nowhere.
func TestChangesetSquatting(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		f := newHiddenFixture(t, db)
		s := f.Server
		owner, stranger := connect(t, s, f.keys[s.Owner], ""), connect(t, s, f.keys[s.Stranger], "")
		const cs = "shared-1"

		var tools []string
		for tl, err := range owner.Tools(t.Context(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			if slices.Contains(schemaProps(t, tl), "changeset_id") {
				tools = append(tools, tl.Name)
				if squatArgs[tl.Name] == nil {
					t.Errorf("%s takes changeset_id and has no squatting case", tl.Name)
				}
			}
		}
		if len(tools) != len(squatArgs) {
			t.Errorf("%d tools take changeset_id, %d squatting cases", len(tools), len(squatArgs))
		}

		theirs, mine := map[string]bool{}, map[string]bool{}
		var mineInWorld, theirsInWorld []string
		for _, tool := range tools {
			b := propose(t, stranger, tool, squatArgs[tool](f.StrangerWorld, f.StrangerPage, cs))
			a := propose(t, owner, tool, squatArgs[tool](s.World, s.Page, cs))
			if a.ChangesetID != cs || b.ChangesetID != cs {
				t.Errorf("%s: changeset ids %q and %q, want %q", tool, a.ChangesetID, b.ChangesetID, cs)
			}
			theirs[b.ProposalID], mine[a.ProposalID] = true, true
			if a.WorldID != "" {
				mineInWorld = append(mineInWorld, a.ProposalID)
				theirsInWorld = append(theirsInWorld, b.ProposalID)
			}
		}

		var list struct{ Proposals []wf.Proposal }
		a := hiddenDo(t, "GET", s.URL+"/worlds/"+s.World.ID+"/proposals?changeset="+cs, bearer(f.keys[s.Owner]), "")
		if a.Status != http.StatusOK {
			t.Fatalf("list: %d %s", a.Status, a.Body)
		}
		mustDecode(t, a.Body, &list)
		var listed []string
		for _, p := range list.Proposals {
			listed = append(listed, p.ID)
		}
		if slices.Sort(listed); !slices.Equal(listed, slices.Sorted(slices.Values(mineInWorld))) {
			t.Errorf("the owner's changeset lists %v, want %v", listed, mineInWorld)
		}

		var committed struct{ Results []wf.CommitResult }
		a = hiddenDo(t, "POST", s.URL+"/worlds/"+s.World.ID+"/changesets/"+cs+"/commit", bearer(f.keys[s.Owner]), "")
		if a.Status != http.StatusOK {
			t.Fatalf("commit the owner's changeset: %d %s", a.Status, a.Body)
		}
		mustDecode(t, a.Body, &committed)
		if len(committed.Results) != len(mineInWorld) {
			t.Errorf("committed %d proposals, want %d", len(committed.Results), len(mineInWorld))
		}
		for _, r := range committed.Results {
			if !mine[r.Proposal.ID] {
				t.Errorf("the owner's commit took %s, not the owner's", r.Proposal.ID)
			}
		}
		for id := range theirs {
			if p, err := db.FindProposal(t.Context(), id); err != nil || p.Status != wf.ProposalPending {
				t.Errorf("the stranger's %s: %v, status %q after the owner's commit", id, err, p.Status)
			}
		}
		a = hiddenDo(t, "POST", s.URL+"/worlds/"+f.StrangerWorld.ID+"/changesets/"+cs+"/commit", bearer(f.keys[s.Stranger]), "")
		mustDecode(t, a.Body, &committed)
		if a.Status != http.StatusOK || len(committed.Results) != len(theirsInWorld) {
			t.Errorf("the stranger's commit: %d, %d results, want %d", a.Status, len(committed.Results), len(theirsInWorld))
		}
	})
}

// TestCommitQuestRowGone: when the quest a proposal changes is gone,
// commit_quest tells its proposer not_found (the row itself is gone) and
// everyone else proposal_not_found, the answer for a missing proposal.
func TestCommitQuestRowGone(t *testing.T) {
	dbtest.ForEachDSN(t, func(t *testing.T, dsn string) {
		s := testserver.Start(t, dbtest.MustOpen(t, dsn))
		owner := connect(t, s, s.Key(t, s.Owner, everyScope()...), "")
		res := propose(t, owner, wf.ToolProposeQuest, map[string]any{"id": s.Quest.ID, "payload": map[string]any{"name": "Gone"}, "diff_summary": "x"})

		// The row goes behind the server's back.
		driver, source := "pgx", dsn
		if p, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
			driver, source = "sqlite", p+"?_pragma=busy_timeout(5000)"
		}
		raw, err := sql.Open(driver, source)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		if _, err := raw.ExecContext(t.Context(), "DELETE FROM quests WHERE id = '"+s.Quest.ID+"'"); err != nil {
			t.Fatal(err)
		}

		missing := map[string]any{"proposal_id": missingLike(res.ProposalID), "confirm": true}
		for _, c := range []struct {
			who  *wf.User
			want string
		}{{s.Owner, "not_found"}, {s.GM, "proposal_not_found"}, {s.Player, "proposal_not_found"}, {s.Stranger, "proposal_not_found"}} {
			cs := owner
			if c.who != s.Owner {
				cs = connect(t, s, s.Key(t, c.who, everyScope()...), "")
			}
			before := s.AuditCount(t)
			if text, isErr := callTool(t, cs, wf.ToolCommitQuest, map[string]any{"proposal_id": res.ProposalID, "confirm": true}); !isErr || text != c.want {
				t.Errorf("%s: %q (isError %v), want %q", c.who.Name, text, isErr, c.want)
			}
			if text, isErr := callTool(t, cs, wf.ToolCommitQuest, missing); !isErr || text != "proposal_not_found" {
				t.Errorf("%s, missing proposal: %q (isError %v)", c.who.Name, text, isErr)
			}
			if n := s.AuditCount(t) - before; n != 0 {
				t.Errorf("%s: %d audit rows", c.who.Name, n)
			}
		}
	})
}
