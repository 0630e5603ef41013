package httpapi_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/httpapi"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// newPairOn is newPair on a given store.
func newPairOn(t testing.TB, db *sqlstore.DB) *pair {
	t.Helper()
	ts := testserver.Start(t, db)
	sdk := httpapi.New(httpapi.Options{Auth: ts.Auth, MCP: ts.Tools.MCP(), Store: ts.DB})
	return &pair{
		ts:      ts,
		sdkURL:  testserver.Listen(t, sdk) + "/mcp",
		sdkAPI:  sdk,
		ownerK:  ts.Key(t, ts.Owner, wf.ScopeAll),
		narrowK: ts.Key(t, ts.Owner, wf.ScopeCampaignRead),
	}
}

// toolText sends one tools/call to url and returns its result's text and
// isError; a JSON-RPC error or a result that is not one text block fails
// the test.
func toolText(t testing.TB, url, key, tool, args string) (string, bool) {
	t.Helper()
	a := send(t, url, headers(key, "2025-11-25", tool, nil), "", callBody("1", "2025-11-25", tool, args, ""))
	var msg struct {
		Result *struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if a.status != http.StatusOK || json.Unmarshal([]byte(a.body), &msg) != nil || msg.Result == nil || len(msg.Result.Content) != 1 {
		t.Fatalf("%s %s: %d %s", tool, args, a.status, a.body)
	}
	return msg.Result.Content[0].Text, msg.Result.IsError
}

// unknownMarker names and fills the unknown keys the tests send: it must
// never be stored.
const unknownMarker = "zzunknownmarker"

// withUnknownKeys returns a copy of the JSON object args in which every
// object (but the free-form documents json and entity) also has an unknown
// key holding an object, and, for each of its keys, the key in upper case
// holding the marker: a decoder matching keys regardless of case would
// read that instead of the real one.
func withUnknownKeys(t testing.TB, args string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		t.Fatal(err)
	}
	var add func(v any) any
	add = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, e := range x {
				if k == "json" || k == "entity" {
					out[k] = e
				} else {
					out[k] = add(e)
				}
				if up := strings.ToUpper(k); up != k {
					out[up] = unknownMarker
				}
			}
			out[unknownMarker] = map[string]any{"nested": []any{unknownMarker, 1.5}}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = add(e)
			}
			return out
		}
		return v
	}
	return mustJSON(add(v))
}

// TestUnknownArgumentsIgnored: every one of the 31 tools accepts keys it
// does not know, at the top level and inside its argument objects, on the
// fast path and the go-sdk path alike; a key differing from an argument's
// only in letter case is one of them; the reads answer exactly as without
// them, the writes succeed, and nothing of them is stored. The listed
// input schemas still close the objects they closed.
func TestUnknownArgumentsIgnored(t *testing.T) {
	dbtest.ForEachEngine(t, testUnknownArgumentsIgnored)
}

func testUnknownArgumentsIgnored(t *testing.T, db *sqlstore.DB) {
	p := newPairOn(t, db)
	ts := p.ts
	ctx := context.Background()
	w, key := ts.World.ID, p.ownerK
	q := func(s string) string { return mustJSON(s) }

	reads := map[string]string{
		wf.ToolReadWorld:        `{"id":` + q(w) + `}`,
		wf.ToolReadCampaign:     `{"id":` + q(ts.Campaign.ID) + `}`,
		wf.ToolListCampaigns:    `{"limit":10}`,
		wf.ToolReadQuest:        `{"id":` + q(ts.Quest.ID) + `}`,
		wf.ToolListQuests:       `{"campaign_id":` + q(ts.Campaign.ID) + `,"limit":10}`,
		wf.ToolReadEncounter:    `{"id":` + q(ts.Encounter.ID) + `}`,
		wf.ToolListEncounters:   `{"campaign_id":` + q(ts.Campaign.ID) + `}`,
		wf.ToolListWikiPages:    `{"world_id":` + q(w) + `,"kind":"faction"}`,
		wf.ToolReadWikiPage:     `{"id":` + q(ts.Page.ID) + `}`,
		wf.ToolSearchWikiPages:  `{"world_id":` + q(w) + `,"q":"ward","limit":5}`,
		wf.ToolWikiPageHistory:  `{"id":` + q(ts.Page.ID) + `,"limit":5}`,
		wf.ToolListFactions:     `{"world_id":` + q(w) + `}`,
		wf.ToolGetWorldSummary:  `{"world_id":` + q(w) + `}`,
		wf.ToolListAtlasPlaces:  `{"world_id":` + q(w) + `,"level":1}`,
		wf.ToolReadAtlasNode:    `{"id":` + q(ts.Node.ID) + `}`,
		wf.ToolSearchAtlasNodes: `{"world_id":` + q(w) + `,"q":"ald","limit":5}`,
		wf.ToolSearchPOIs:       `{"world_id":` + q(w) + `,"request":{"name":"chest","tags":["loot"],"x":3,"y":4,"radiusPx":64,"limit":5}}`,
		wf.ToolListLore:         `{"world_id":` + q(w) + `,"collection":"factions","limit":5}`,
	}
	for _, tool := range slices.Sorted(maps.Keys(reads)) {
		base, extra := reads[tool], withUnknownKeys(t, reads[tool])
		want, isErr := toolText(t, ts.MCPURL(), key, tool, base)
		if isErr {
			t.Fatalf("%s %s: %s", tool, base, want)
		}
		if !p.compare(t, headers(key, "2025-11-25", tool, nil), "", callBody("1", "2025-11-25", tool, extra, "")) {
			t.Errorf("%s: the fast path did not take the call with unknown keys", tool)
		}
		if got, isErr := toolText(t, ts.MCPURL(), key, tool, extra); isErr || got != want {
			t.Errorf("%s with unknown keys %s:\n got %s (isError %v)\nwant %s", tool, extra, got, isErr, want)
		}
	}

	// What the writes need: a pickable, openable chest next to the owner,
	// with an item for each path.
	chest := &wf.POI{WorldID: w, Name: "Chest", X: 2, Y: 2, Pickable: true, Openable: true,
		Items: []wf.POIItem{{ID: "item-a", Name: "A"}, {ID: "item-b", Name: "B"}}}
	if err := db.CreatePOI(ctx, chest); err != nil {
		t.Fatal(err)
	}
	if err := db.SetPresence(ctx, &wf.Presence{WorldID: w, UserID: ts.Owner.ID, X: 2, Y: 2}); err != nil {
		t.Fatal(err)
	}
	// A new quest (encounter) proposal of the owner's, for a commit.
	proposal := func(tool string) string {
		text, isErr := toolText(t, ts.MCPURL(), key, tool, `{"payload":{"name":"N"},"diff_summary":"d"}`)
		var r wf.ProposeResult
		if isErr || json.Unmarshal([]byte(text), &r) != nil {
			t.Fatalf("%s: %s", tool, text)
		}
		return r.ProposalID
	}
	writes := []struct {
		tool string
		args func(path int) string
	}{
		{wf.ToolProposeQuest, func(int) string {
			return `{"id":` + q(ts.Quest.ID) + `,"payload":{"name":"Q2","json":{"a":1}},"diff_summary":"d","changeset_id":"cs-1"}`
		}},
		{wf.ToolProposeEncounter, func(int) string {
			return `{"payload":{"name":"E2"},"diff_summary":"d"}`
		}},
		{wf.ToolProposeWikiPage, func(int) string {
			return `{"world_id":` + q(w) + `,"payload":{"title":"T","body":"b","kind":"place","audience":"party"},"diff_summary":"d"}`
		}},
		{wf.ToolProposeWikiEdit, func(int) string {
			return `{"page_id":` + q(ts.Page.ID) + `,"payload":{"title":"New","body":"b","audience":"gm"},"diff_summary":"d"}`
		}},
		{wf.ToolProposeAtlasPlace, func(int) string {
			return `{"world_id":` + q(w) + `,"payload":{"name":"P","terrainType":"hills","parentId":` + q(ts.Node.ID) + `},"diff_summary":"d"}`
		}},
		{wf.ToolProposeLore, func(int) string {
			return `{"world_id":` + q(w) + `,"operations":[{"op":"upsert","collection":"factions","entity":{"id":"f2","name":"F2"}},{"op":"remove","collection":"factions","id":"wardens"},{"op":"add_preset","preset_id":"classic-pantheon"}],"diff_summary":"d"}`
		}},
		{wf.ToolCommitQuest, func(int) string {
			return `{"proposal_id":` + q(proposal(wf.ToolProposeQuest)) + `,"confirm":true}`
		}},
		{wf.ToolCommitEncounter, func(int) string {
			return `{"proposal_id":` + q(proposal(wf.ToolProposeEncounter)) + `,"confirm":true}`
		}},
		{wf.ToolCreateCampaign, func(int) string {
			return `{"name":"C","world_id":` + q(w) + `,"json":{"b":2}}`
		}},
		{wf.ToolCreateWorld, func(int) string {
			return `{"name":"W","template":"starter-city","seed":5,"size":"small","populate":true}`
		}},
		{wf.ToolResizeWorld, func(path int) string {
			return `{"world_id":` + q(w) + `,"cols":` + []string{"20", "22"}[path] + `,"rows":14}`
		}},
		{wf.ToolPlayerPickup, func(path int) string {
			return `{"world_id":` + q(w) + `,"poi_id":` + q(chest.ID) + `,"item_id":"` + []string{"item-a", "item-b"}[path] + `","cell":{"x":2,"y":2}}`
		}},
		{wf.ToolPlayerOpen, func(int) string {
			return `{"world_id":` + q(w) + `,"poi_id":` + q(chest.ID) + `,"cell":{"x":2,"y":2}}`
		}},
	}
	if n := len(reads) + len(writes); n != 31 {
		t.Fatalf("%d tools covered, want 31", n)
	}
	for _, wr := range writes {
		for path, url := range []string{ts.MCPURL(), p.sdkURL} {
			args := withUnknownKeys(t, wr.args(path))
			f0 := ts.API.FastPathCalls()
			text, isErr := toolText(t, url, key, wr.tool, args)
			if isErr {
				t.Errorf("%s (path %d) with unknown keys %s: %s", wr.tool, path, args, text)
			}
			if fast := ts.API.FastPathCalls() > f0; fast != (path == 0) {
				t.Errorf("%s (path %d): fast path took it: %v", wr.tool, path, fast)
			}
		}
	}
	if tables, err := db.TablesContaining(ctx, unknownMarker); err != nil || len(tables) > 0 {
		t.Errorf("unknown keys were stored, in %v (%v)", tables, err)
	}

	// The listing is unchanged: objects closed in it stay closed there.
	cs := connect(t, ts, key, "")
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		var s struct {
			AdditionalProperties *bool `json:"additionalProperties"`
		}
		json.Unmarshal(b, &s)
		if s.AdditionalProperties == nil || *s.AdditionalProperties {
			t.Errorf("%s: listed schema no longer says additionalProperties false: %s", tool.Name, b)
		}
	}
}

// goInternals are the phrases no answer may carry: Go type and package
// names, encoding/json's wording.
var goInternals = []string{"Go struct", "Go value", "json: cannot", "int64", "*worldforge.", "*mcp.", "jsonrpc2.", "interface {}"}

// leaksGo returns the first phrase of goInternals in answer that the
// request did not itself carry (an answer may echo what it was sent).
func leaksGo(answer, request string) string {
	for _, p := range goInternals {
		if strings.Contains(answer, p) && !strings.Contains(request, p) {
			return p
		}
	}
	return ""
}

// TestIntegralNumbers: every integer argument of every tool takes an
// integral number written with a fraction or an exponent (7.0, 7e0,
// 70e-1, -0.0) as that integer, on both paths, with the same answer as the
// integer; a fraction (7.5) is a clear bad_request naming the argument.
func TestIntegralNumbers(t *testing.T) {
	dbtest.ForEachEngine(t, testIntegralNumbers)
}

func testIntegralNumbers(t *testing.T, db *sqlstore.DB) {
	p := newPairOn(t, db)
	ts := p.ts
	ctx := context.Background()
	w, key := mustJSON(ts.World.ID), p.ownerK
	chest := &wf.POI{WorldID: ts.World.ID, Name: "Box", X: 0, Y: 1, Openable: true}
	if err := db.CreatePOI(ctx, chest); err != nil {
		t.Fatal(err)
	}
	if err := db.SetPresence(ctx, &wf.Presence{WorldID: ts.World.ID, UserID: ts.Owner.ID, X: 0, Y: 1}); err != nil {
		t.Fatal(err)
	}
	// Each case is a tool, its arguments with N where the integer goes,
	// the integer, and the argument's name as errors give it.
	cases := []struct {
		tool, args, n, name string
	}{
		{wf.ToolListCampaigns, `{"limit":N}`, "2", "limit"},
		{wf.ToolListQuests, `{"limit":N}`, "2", "limit"},
		{wf.ToolListEncounters, `{"limit":N}`, "2", "limit"},
		{wf.ToolListWikiPages, `{"world_id":` + w + `,"limit":N}`, "2", "limit"},
		{wf.ToolSearchWikiPages, `{"limit":N}`, "2", "limit"},
		{wf.ToolWikiPageHistory, `{"id":` + mustJSON(ts.Page.ID) + `,"limit":N}`, "2", "limit"},
		{wf.ToolListFactions, `{"world_id":` + w + `,"limit":N}`, "2", "limit"},
		{wf.ToolListAtlasPlaces, `{"world_id":` + w + `,"limit":N}`, "2", "limit"},
		{wf.ToolListAtlasPlaces, `{"world_id":` + w + `,"level":N}`, "1", "level"},
		{wf.ToolSearchAtlasNodes, `{"limit":N}`, "2", "limit"},
		{wf.ToolListLore, `{"world_id":` + w + `,"limit":N}`, "2", "limit"},
		{wf.ToolSearchPOIs, `{"world_id":` + w + `,"request":{"limit":N}}`, "2", "limit"},
		{wf.ToolSearchPOIs, `{"world_id":` + w + `,"request":{"x":N,"y":4,"radiusPx":40}}`, "3", "x"},
		{wf.ToolSearchPOIs, `{"world_id":` + w + `,"request":{"x":3,"y":N,"radiusPx":40}}`, "4", "y"},
		{wf.ToolSearchPOIs, `{"world_id":` + w + `,"request":{"x":N,"y":0,"radiusPx":40}}`, "0", "x"},
		{wf.ToolPlayerOpen, `{"world_id":` + w + `,"poi_id":` + mustJSON(chest.ID) + `,"cell":{"x":N,"y":1}}`, "0", "x"},
		{wf.ToolPlayerOpen, `{"world_id":` + w + `,"poi_id":` + mustJSON(chest.ID) + `,"cell":{"x":0,"y":N}}`, "1", "y"},
		{wf.ToolPlayerPickup, `{"world_id":` + w + `,"poi_id":` + mustJSON(chest.ID) + `,"item_id":"none","cell":{"x":N,"y":1}}`, "0", "x"},
		{wf.ToolCreateWorld, `{"name":"W","size":"small","populate":false,"seed":N}`, "3", "seed"},
	}
	spellings := func(n string) []string {
		out := []string{n + ".0", n + "e0", n + ".000E+0"}
		if n == "0" {
			return append(out, "-0.0", "-0", "0e5", "0.0e-3")
		}
		out = append(out, n+"0e-1")
		return out
	}
	for _, c := range cases {
		args := func(n string) string { return strings.Replace(c.args, "N", n, 1) }
		// The answer to the integer; a world's id and an open's "first"
		// differ from call to call, so those compare without them.
		norm := func(text string) string {
			var m map[string]any
			if json.Unmarshal([]byte(text), &m) == nil {
				delete(m, "id")
				delete(m, "first")
				return mustJSON(m)
			}
			return text
		}
		toolText(t, ts.MCPURL(), key, c.tool, args(c.n))
		want, wantErr := toolText(t, ts.MCPURL(), key, c.tool, args(c.n))
		for _, n := range spellings(c.n) {
			for path, url := range []string{ts.MCPURL(), p.sdkURL} {
				got, isErr := toolText(t, url, key, c.tool, args(n))
				if isErr != wantErr || norm(got) != norm(want) {
					t.Errorf("%s %s (path %d):\n got %s (isError %v)\nwant %s (isError %v)", c.tool, args(n), path, got, isErr, want, wantErr)
				}
			}
		}
		for _, n := range []string{c.n + ".5", "1e-7"} {
			got, isErr := toolText(t, ts.MCPURL(), key, c.tool, args(n))
			if !isErr || !strings.HasPrefix(got, "bad_request: ") || !strings.Contains(got, c.name) || leaksGo(got, "") != "" {
				t.Errorf("%s %s: %s (isError %v), want a bad_request naming %s", c.tool, args(n), got, isErr, c.name)
			}
		}
	}
}

// TestCreateWorldSeeds: worldforge_create_world takes its seed as an
// integer within ±2^53 or a string: digits (after an optional minus) are
// that integer, any other text maps to wf.SeedOfWord's integer, pinned
// here so that it never changes; the answer names the integer used, and
// passing it back gives the same world. Seeds outside ±2^53 are a clear
// bad_request that creates nothing. The listing says the seed takes an
// integer or a string.
func TestCreateWorldSeeds(t *testing.T) {
	dbtest.ForEachEngine(t, testCreateWorldSeeds)
}

func testCreateWorldSeeds(t *testing.T, db *sqlstore.DB) {
	p := newPairOn(t, db)
	ts := p.ts
	ctx := context.Background()
	create := func(url, seed string) (wf.CreateWorldResult, string, bool) {
		t.Helper()
		text, isErr := toolText(t, url, p.ownerK, wf.ToolCreateWorld, `{"name":"W","template":"starter-jungle","size":"small","seed":`+seed+`}`)
		var r wf.CreateWorldResult
		if !isErr {
			if err := json.Unmarshal([]byte(text), &r); err != nil {
				t.Fatal(err)
			}
		}
		return r, text, isErr
	}
	const dragon = -1054273131029940 // wf.SeedOfWord("dragon"), for good
	if got := wf.SeedOfWord("dragon"); got != dragon {
		t.Fatalf("SeedOfWord(dragon) = %d, want %d: the mapping must never change", got, dragon)
	}
	for _, c := range []struct {
		seed string
		want int64
	}{
		{`42`, 42}, {`"42"`, 42}, {`"-7"`, -7}, {`"007"`, 7}, {`"-0"`, 0}, {`7.0`, 7},
		{`"dragon"`, dragon}, {`"Dragon"`, wf.SeedOfWord("Dragon")}, {`"+7"`, wf.SeedOfWord("+7")},
		{`"drache 🐉"`, wf.SeedOfWord("drache 🐉")}, {`""`, wf.SeedOfWord("")},
		{`9007199254740992`, 1 << 53}, {`"-9007199254740992"`, -1 << 53},
	} {
		for path, url := range []string{ts.MCPURL(), p.sdkURL} {
			r, text, isErr := create(url, c.seed)
			if isErr || r.Seed != c.want {
				t.Errorf("seed %s (path %d): %s, want seed %d", c.seed, path, text, c.want)
				continue
			}
			// The integer returned gives the same world.
			again, _, isErr := create(url, mustJSON(r.Seed))
			w1, err1 := dbtest.World(ctx, db, r.ID)
			w2, err2 := dbtest.World(ctx, db, again.ID)
			if isErr || err1 != nil || err2 != nil || string(w1.JSON) != string(w2.JSON) || w1.Seed != c.want {
				t.Errorf("seed %s and its integer %d give different worlds (%v %v)", c.seed, r.Seed, err1, err2)
			}
		}
	}
	for _, seed := range []string{`9007199254740993`, `-9007199254740993`, `"9007199254740993"`, `"-99999999999999999999999"`, `1e16`, `1e300`, `7.5`, `true`, `{}`} {
		before := ts.Fingerprint(t)
		_, text, isErr := create(ts.MCPURL(), seed)
		if !isErr || !strings.HasPrefix(text, "bad_request: ") || !strings.Contains(text, "seed") || leaksGo(text, "") != "" {
			t.Errorf("seed %s: %s (isError %v), want a bad_request naming seed", seed, text, isErr)
		}
		if !strings.Contains(seed, ".") && !strings.Contains(seed, "true") && !strings.Contains(seed, "{") && !strings.Contains(text, "out of range") {
			t.Errorf("seed %s: %s, want out of range", seed, text)
		}
		if changed := testserver.Changed(before, ts.Fingerprint(t)); len(changed) > 0 {
			t.Errorf("seed %s refused but changed %v", seed, changed)
		}
	}

	cs := connect(t, ts, p.ownerK, "")
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name != wf.ToolCreateWorld {
			continue
		}
		b, _ := json.Marshal(tool.InputSchema)
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		var seed struct {
			Type        []string `json:"type"`
			Description string   `json:"description"`
		}
		if json.Unmarshal(b, &s) != nil || json.Unmarshal(s.Properties["seed"], &seed) != nil {
			t.Fatalf("listed schema: %s", b)
		}
		if !slices.Contains(seed.Type, "integer") || !slices.Contains(seed.Type, "string") || !strings.Contains(seed.Description, "FNV-1a") {
			t.Errorf("listed seed schema: %s", b)
		}
	}
}

// TestErrorTextsNameNoGoTypes: refusals of bad tool arguments (on both
// paths), of malformed JSON-RPC messages and params (the go-sdk's own
// refusals, reworded) and of bad REST bodies name JSON paths and kinds,
// never Go types or packages; REST bodies take integral numbers for
// integers too, and drop (POI search) or refuse (presence) unknown keys by
// their exact spelling.
func TestErrorTextsNameNoGoTypes(t *testing.T) {
	p := newPair(t)
	ts := p.ts
	w := mustJSON(ts.World.ID)
	tools := []struct{ tool, args, want string }{
		{wf.ToolReadWorld, `{"id":5}`, "id"},
		{wf.ToolSearchWikiPages, `{"limit":1e400}`, "limit"},
		{wf.ToolSearchPOIs, `{"world_id":` + w + `,"request":{"x":"a","y":1}}`, "x"},
		{wf.ToolSearchPOIs, `{"world_id":` + w + `,"request":{"x":1e300,"y":1}}`, "request.x"},
		{wf.ToolSearchPOIs, `{"world_id":` + w + `,"request":{"x":9223372036854775808,"y":1}}`, "request.x"},
		{wf.ToolSearchPOIs, `{"world_id":` + w + `,"request":{"tags":[1]}}`, "tags"},
		{wf.ToolPlayerOpen, `{"world_id":` + w + `,"poi_id":"p","cell":{"x":1,"y":[1e400]}}`, "cell.y[0]"},
		{wf.ToolPlayerOpen, `{"world_id":` + w + `,"poi_id":"p","cell":{"x":1e30,"y":1}}`, "cell.x"},
		{wf.ToolPlayerOpen, `{"world_id":` + w + `,"poi_id":"p","cell":"a"}`, "cell"},
		{wf.ToolCreateWorld, `{"name":"W","seed":1e300}`, "seed"},
		{wf.ToolCreateWorld, `{"name":"W","seed":[1]}`, "seed"},
		{wf.ToolProposeQuest, `{"payload":"x","diff_summary":"d"}`, "payload"},
		{wf.ToolProposeLore, `{"world_id":` + w + `,"operations":{},"diff_summary":"d"}`, "operations"},
		{wf.ToolResizeWorld, `{"world_id":` + w + `,"cols":1e400,"rows":1}`, "cols"},
		{wf.ToolCommitQuest, `{"proposal_id":"x","confirm":"yes"}`, "confirm"},
	}
	for _, c := range tools {
		for path, url := range []string{ts.MCPURL(), p.sdkURL} {
			text, isErr := toolText(t, url, p.ownerK, c.tool, c.args)
			if !isErr || !strings.HasPrefix(text, "bad_request: ") || !strings.Contains(text, c.want) {
				t.Errorf("%s %s (path %d): %s, want a bad_request naming %s", c.tool, c.args, path, text, c.want)
			}
			if leak := leaksGo(text, c.args); leak != "" {
				t.Errorf("%s %s (path %d): %q names Go internals (%s)", c.tool, c.args, path, text, leak)
			}
		}
	}

	h := headers(p.ownerK, "2025-11-25", "", nil)
	for _, c := range []struct{ body, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}`, "name must be a string"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}`, "params must be an object"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_world","_meta":5}}`, "_meta must be an object"},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5}}`, "protocolVersion must be a string"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":5}}`, "cursor must be a string"},
		{`{"jsonrpc":"2.0","id":{},"method":"tools/list"}`, "invalid ID type"},
		{`{"jsonrpc":2,"id":1,"method":"tools/list"}`, "jsonrpc must be a string"},
		{`{"jsonrpc":"2.0","id":1,"method":5}`, "must be a string"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":5}`, "params must be an object"},
		{`{"jsonrpc":"2.0","id":"<&>","method":"logging/setLevel","params":{"level":5}}`, "level must be a string"},
	} {
		for path, url := range []string{ts.MCPURL(), p.sdkURL} {
			a := send(t, url, h, "", c.body)
			if leak := leaksGo(a.body, c.body); leak != "" || !strings.Contains(a.body, c.want) {
				t.Errorf("%s (path %d): %d %s, want %q and no Go internals (%s)", c.body, path, a.status, a.body, c.want, leak)
			}
			if json.Valid([]byte(a.body)) != strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
				t.Errorf("%s (path %d): %s %q", c.body, path, a.header.Get("Content-Type"), a.body)
			}
		}
	}

	token := ts.Token(t, ts.Owner)
	presence := ts.URL + "/worlds/" + ts.World.ID + "/presence"
	search := ts.URL + "/worlds/" + ts.World.ID + "/pois/search"
	for _, c := range []struct {
		url, body string
		status    int
		want      string
	}{
		{presence, `{"x":1.5,"y":2}`, 400, "x must be an integer"},
		{presence, `{"x":"1","y":2}`, 400, "x must be an integer"},
		{presence, `{"x":1e400,"y":2}`, 400, "x"},
		{presence, `{"x":99999999999999999999,"y":2}`, 400, "out of range"},
		{presence, `{"x":1,"y":2,"X":5}`, 400, `unknown field \"X\"`},
		{presence, `{"x":1,"y":2,"userId":7}`, 400, "userId must be a string"},
		{presence, `{"x":1,"y":2}{}`, 400, "more than one"},
		{presence, `{"x":3.0,"y":4e0}`, 200, `"x":3,"y":4`},
		{search, `{"tags":[1]}`, 400, "tags: each item must be a string"},
		{search, `{"limit":"5"}`, 400, "limit must be an integer"},
		{search, `{"x":100.0,"y":1e2,"radiusPx":64,"limit":5.0}`, 200, ts.POI.ID},
		{search, `{"name":"chest","limit":1,"LIMIT":100000,"Name":"nothing"}`, 200, ts.POI.ID},
		{ts.URL + "/auto-accept-rules", `{"kinds":"quest"}`, 400, "kinds must be an array"},
	} {
		status, body := rest(t, http.MethodPut, c.url, token, c.body)
		if c.url != presence {
			status, body = rest(t, http.MethodPost, c.url, token, c.body)
		}
		if status != c.status || !strings.Contains(body, c.want) || leaksGo(body, c.body) != "" {
			t.Errorf("%s %s: %d %s, want %d with %q and no Go internals", c.url, c.body, status, body, c.status, c.want)
		}
	}
}
