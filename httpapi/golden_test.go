package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// update makes TestGoldenTranscripts rewrite testdata/golden from the
// answers it gets instead of comparing them.
var update = flag.Bool("update", false, "rewrite testdata/golden from the server's answers")

// goldenDir holds one transcript per tool, and tools_list.txtar.
const goldenDir = "testdata/golden"

// goldenProtocol is the protocol revision the transcripts speak.
const goldenProtocol = "2025-11-25"

// goldenCall is one tools/call of a transcript; args builds its arguments
// from the seeded world and the result of the call before it.
type goldenCall struct {
	tool string
	args func(g *goldenWorld, prev map[string]any) string
}

// goldenTranscript is the calls of one golden file: setup calls filed
// first (a proposal to commit), then the tool's own call.
type goldenTranscript struct {
	setup []goldenCall
	call  goldenCall
}

// jstr is s as a JSON string literal.
func jstr(s string) string { return mustJSON(s) }

// goldenWorld is one server with the seeded world and what the transcripts
// add to it.
type goldenWorld struct {
	*testserver.Server
	url   string // the /mcp endpoint
	key   string // the owner's API key with every scope
	chest *wf.POI
	fast  bool // the server has the fast path
}

// goldenTranscripts are the 31 tools' transcripts, in the order they run:
// the reads first, on the seeded world as testserver makes it (plus a
// chest and the owner's presence, for the player tools), then the writes,
// so that no read sees what a write did.
var goldenTranscripts = []goldenTranscript{
	{call: goldenCall{wf.ToolReadWorld, func(g *goldenWorld, _ map[string]any) string { return `{"id":` + jstr(g.World.ID) + `}` }}},
	{call: goldenCall{wf.ToolReadCampaign, func(g *goldenWorld, _ map[string]any) string { return `{"id":` + jstr(g.Campaign.ID) + `}` }}},
	{call: goldenCall{wf.ToolListCampaigns, func(*goldenWorld, map[string]any) string { return `{}` }}},
	{call: goldenCall{wf.ToolReadQuest, func(g *goldenWorld, _ map[string]any) string { return `{"id":` + jstr(g.Quest.ID) + `}` }}},
	{call: goldenCall{wf.ToolListQuests, func(g *goldenWorld, _ map[string]any) string {
		return `{"campaign_id":` + jstr(g.Campaign.ID) + `}`
	}}},
	{call: goldenCall{wf.ToolReadEncounter, func(g *goldenWorld, _ map[string]any) string { return `{"id":` + jstr(g.Encounter.ID) + `}` }}},
	{call: goldenCall{wf.ToolListEncounters, func(g *goldenWorld, _ map[string]any) string {
		return `{"campaign_id":` + jstr(g.Campaign.ID) + `}`
	}}},
	{call: goldenCall{wf.ToolListWikiPages, func(g *goldenWorld, _ map[string]any) string {
		return `{"world_id":` + jstr(g.World.ID) + `,"kind":"faction"}`
	}}},
	{call: goldenCall{wf.ToolReadWikiPage, func(g *goldenWorld, _ map[string]any) string { return `{"id":` + jstr(g.Page.ID) + `}` }}},
	{call: goldenCall{wf.ToolSearchWikiPages, func(g *goldenWorld, _ map[string]any) string {
		return `{"world_id":` + jstr(g.World.ID) + `,"q":"ward","limit":5}`
	}}},
	{call: goldenCall{wf.ToolWikiPageHistory, func(g *goldenWorld, _ map[string]any) string {
		return `{"id":` + jstr(g.Page.ID) + `,"limit":5}`
	}}},
	{call: goldenCall{wf.ToolListFactions, func(g *goldenWorld, _ map[string]any) string { return `{"world_id":` + jstr(g.World.ID) + `}` }}},
	{call: goldenCall{wf.ToolGetWorldSummary, func(g *goldenWorld, _ map[string]any) string { return `{"world_id":` + jstr(g.World.ID) + `}` }}},
	{call: goldenCall{wf.ToolListAtlasPlaces, func(g *goldenWorld, _ map[string]any) string {
		return `{"world_id":` + jstr(g.World.ID) + `,"level":1}`
	}}},
	{call: goldenCall{wf.ToolReadAtlasNode, func(g *goldenWorld, _ map[string]any) string { return `{"id":` + jstr(g.Node.ID) + `}` }}},
	{call: goldenCall{wf.ToolSearchAtlasNodes, func(g *goldenWorld, _ map[string]any) string {
		return `{"world_id":` + jstr(g.World.ID) + `,"q":"ald","limit":5}`
	}}},
	{call: goldenCall{wf.ToolSearchPOIs, func(g *goldenWorld, _ map[string]any) string {
		return `{"world_id":` + jstr(g.World.ID) + `,"request":{"name":"chest","tags":["loot"],"x":3,"y":4,"radiusPx":64,"limit":5}}`
	}}},
	{call: goldenCall{wf.ToolListLore, func(g *goldenWorld, _ map[string]any) string {
		return `{"world_id":` + jstr(g.World.ID) + `,"collection":"factions"}`
	}}},

	{call: goldenCall{wf.ToolProposeQuest, func(g *goldenWorld, _ map[string]any) string {
		return `{"id":` + jstr(g.Quest.ID) + `,"payload":{"name":"Quest, revised","json":{"step":2}},"diff_summary":"Advance the quest to step 2","changeset_id":"cs-golden"}`
	}}},
	{call: goldenCall{wf.ToolProposeEncounter, func(*goldenWorld, map[string]any) string {
		return `{"payload":{"name":"Ambush at the ford","json":{"foes":3}},"diff_summary":"A new encounter"}`
	}}},
	{call: goldenCall{wf.ToolProposeWikiPage, func(g *goldenWorld, _ map[string]any) string {
		return `{"world_id":` + jstr(g.World.ID) + `,"payload":{"title":"Aldmere","body":"A market town.","kind":"place","audience":"party"},"diff_summary":"A page for Aldmere"}`
	}}},
	{call: goldenCall{wf.ToolProposeWikiEdit, func(g *goldenWorld, _ map[string]any) string {
		return `{"page_id":` + jstr(g.Page.ID) + `,"payload":{"title":"The Wardens","body":"A faction of keepers and scouts.","audience":"gm"},"diff_summary":"Mention the scouts"}`
	}}},
	{call: goldenCall{wf.ToolProposeAtlasPlace, func(g *goldenWorld, _ map[string]any) string {
		return `{"world_id":` + jstr(g.World.ID) + `,"payload":{"name":"Greyhills","terrainType":"hills","parentId":` + jstr(g.Node.ID) + `},"diff_summary":"Hills north of Aldmere"}`
	}}},
	{call: goldenCall{wf.ToolProposeLore, func(g *goldenWorld, _ map[string]any) string {
		return `{"world_id":` + jstr(g.World.ID) + `,"operations":[{"op":"upsert","collection":"factions","entity":{"id":"scouts","name":"Scouts"}},{"op":"remove","collection":"factions","id":"wardens"}],"diff_summary":"Scouts replace the Wardens"}`
	}}},
	{
		setup: []goldenCall{{wf.ToolProposeQuest, func(*goldenWorld, map[string]any) string {
			return `{"payload":{"name":"Ferry the relic","json":{"step":1}},"diff_summary":"A new quest"}`
		}}},
		call: goldenCall{wf.ToolCommitQuest, func(_ *goldenWorld, prev map[string]any) string {
			return `{"proposal_id":` + mustJSON(prev["proposal_id"]) + `,"confirm":true}`
		}},
	},
	{
		setup: []goldenCall{{wf.ToolProposeEncounter, func(*goldenWorld, map[string]any) string {
			return `{"payload":{"name":"Wolves at dusk","json":{"foes":4}},"diff_summary":"A new encounter"}`
		}}},
		call: goldenCall{wf.ToolCommitEncounter, func(_ *goldenWorld, prev map[string]any) string {
			return `{"proposal_id":` + mustJSON(prev["proposal_id"]) + `,"confirm":true}`
		}},
	},
	{call: goldenCall{wf.ToolCreateCampaign, func(g *goldenWorld, _ map[string]any) string {
		return `{"name":"Second campaign","world_id":` + jstr(g.World.ID) + `,"json":{"session":1}}`
	}}},
	{call: goldenCall{wf.ToolCreateWorld, func(*goldenWorld, map[string]any) string {
		return `{"name":"Golden city","template":"starter-city","seed":7,"size":"small","populate":true}`
	}}},
	{call: goldenCall{wf.ToolResizeWorld, func(g *goldenWorld, _ map[string]any) string {
		return `{"world_id":` + jstr(g.World.ID) + `,"cols":20,"rows":14}`
	}}},
	{call: goldenCall{wf.ToolPlayerPickup, func(g *goldenWorld, _ map[string]any) string {
		return `{"world_id":` + jstr(g.World.ID) + `,"poi_id":` + jstr(g.chest.ID) + `,"item_id":"lantern","cell":{"x":3,"y":2}}`
	}}},
	{call: goldenCall{wf.ToolPlayerOpen, func(g *goldenWorld, _ map[string]any) string {
		return `{"world_id":` + jstr(g.World.ID) + `,"poi_id":` + jstr(g.chest.ID) + `,"cell":{"x":3,"y":2}}`
	}}},
}

// TestGoldenTranscripts pins the wire format of every tool: for each of
// the 31 tools, testdata/golden/<tool>.txtar holds one successful
// tools/call on a seeded world — the JSON-RPC request, the response body
// and the tool's JSON result, indented — and tools_list.txtar the
// tools/list answer with every input schema. Generated ids and timestamps
// are replaced by placeholders numbered by first appearance in the file.
//
// The transcripts run on a server with the fast path and on one without
// it (every request through the go-sdk handler), each on a fresh store:
// both must give the same files, on SQLite and on PostgreSQL alike. Run
//
//	go test ./httpapi -run TestGoldenTranscripts -update
//
// to rewrite the files after a deliberate change of the wire format.
func TestGoldenTranscripts(t *testing.T) {
	for _, engine := range dbtest.Engines {
		t.Run(engine, func(t *testing.T) {
			fast := goldenFiles(t, startGolden(t, dbtest.MustOpen(t, dbtest.DSN(t, engine)), false))
			sdk := goldenFiles(t, startGolden(t, dbtest.MustOpen(t, dbtest.DSN(t, engine)), true))
			for _, name := range slices.Sorted(maps.Keys(fast)) {
				if d := cmp.Diff(lines(sdk[name]), lines(fast[name])); d != "" {
					t.Errorf("%s: the fast path and the go-sdk path differ (-go-sdk +fast):\n%s", name, d)
				}
			}
			if *update && engine == dbtest.Engines[0] {
				writeGolden(t, fast)
			}
			checkGolden(t, fast)
		})
	}
}

// startGolden starts a server on db, seeded by testserver, with a chest
// next to the owner for the player tools; noFastPath sends every request
// through the go-sdk handler.
func startGolden(t *testing.T, db *sqlstore.DB, noFastPath bool) *goldenWorld {
	t.Helper()
	ts := testserver.StartWith(t, db, testserver.Config{NoFastPath: noFastPath})
	ctx := context.Background()
	chest := &wf.POI{WorldID: ts.World.ID, Name: "Iron chest", Category: "container", X: 3, Y: 2,
		Pickable: true, Openable: true, Visibility: wf.AudienceParty,
		Items: []wf.POIItem{{ID: "lantern", Name: "Lantern"}, {ID: "rope", Name: "Rope"}}}
	if err := ts.DB.CreatePOI(ctx, chest); err != nil {
		t.Fatal(err)
	}
	if err := ts.DB.SetPresence(ctx, &wf.Presence{WorldID: ts.World.ID, UserID: ts.Owner.ID, X: 2, Y: 2}); err != nil {
		t.Fatal(err)
	}
	return &goldenWorld{Server: ts, url: ts.MCPURL(), key: ts.Key(t, ts.Owner, everyScope()...), chest: chest, fast: !noFastPath}
}

// goldenFiles runs every transcript on g and returns the golden files'
// contents by file name.
func goldenFiles(t *testing.T, g *goldenWorld) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, tr := range goldenTranscripts {
		ar := &txtar.Archive{}
		var prev map[string]any
		for _, c := range tr.setup {
			prev = g.goldenCall(t, ar, "setup/"+c.tool+"/", c.tool, c.args(g, prev))
		}
		g.goldenCall(t, ar, "", tr.call.tool, tr.call.args(g, prev))
		var comment strings.Builder
		fmt.Fprintf(&comment, "tools/call %s: one successful call by the world's owner,\n", tr.call.tool)
		comment.WriteString("with an API key holding every scope (POST /mcp, Mcp-Protocol-Version: " + goldenProtocol + ").\n")
		if len(tr.setup) > 0 {
			comment.WriteString("The setup/ sections are the calls made first, in the same way.\n")
		}
		comment.WriteString(goldenTrailer)
		ar.Comment = []byte(comment.String())
		files[tr.call.tool+".txtar"] = normalizeGolden(string(txtar.Format(ar)))
	}

	// tools/list: every tool's name, description and schemas.
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	a := send(t, g.url, headers(g.key, goldenProtocol, "", nil), "", body)
	if a.status != http.StatusOK {
		t.Fatalf("tools/list: %d %s", a.status, a.body)
	}
	var list struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(a.body), &list); err != nil {
		t.Fatalf("tools/list: %v: %s", err, a.body)
	}
	// Every listed tool has its transcript, and no other.
	var listed, covered []string
	for _, tl := range list.Result.Tools {
		listed = append(listed, tl.Name+".txtar")
	}
	for name := range files {
		covered = append(covered, name)
	}
	slices.Sort(listed)
	slices.Sort(covered)
	if len(listed) != 31 || !slices.Equal(listed, covered) {
		t.Fatalf("tools listed %v, transcripts %v: want the same 31", listed, covered)
	}
	files["tools_list.txtar"] = normalizeGolden(string(txtar.Format(&txtar.Archive{
		Comment: []byte("tools/list: the answer to the world's owner, with an API key holding\nevery scope (POST /mcp, Mcp-Protocol-Version: " + goldenProtocol + ").\n" + goldenTrailer),
		Files: []txtar.File{
			{Name: "request.json", Data: indentJSON(t, body)},
			{Name: "response.json", Data: indentJSON(t, a.body)},
		},
	})))
	return files
}

// goldenTrailer ends every golden file's comment.
const goldenTrailer = "Ids and times are placeholders. Regenerate with\n" +
	"go test ./httpapi -run TestGoldenTranscripts -update\n"

// goldenCall makes one tools/call, which must succeed, and appends its
// request, response and result to ar, their names prefixed with prefix.
// It returns the tool's result.
func (g *goldenWorld) goldenCall(t *testing.T, ar *txtar.Archive, prefix, tool, args string) map[string]any {
	t.Helper()
	body := callBody("1", goldenProtocol, tool, args, "")
	f0 := g.API.FastPathCalls()
	a := send(t, g.url, headers(g.key, goldenProtocol, tool, nil), "", body)
	if fast := g.API.FastPathCalls() > f0; fast != g.fast {
		t.Errorf("%s: fast path took it: %v, want %v", tool, fast, g.fast)
	}
	var msg struct {
		Result *struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if a.status != http.StatusOK || json.Unmarshal([]byte(a.body), &msg) != nil || msg.Result == nil ||
		len(msg.Result.Content) != 1 || msg.Result.IsError {
		t.Fatalf("%s %s: %d %s", tool, args, a.status, a.body)
	}
	if ct := a.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q, want application/json", tool, ct)
	}
	text := msg.Result.Content[0].Text
	var result map[string]any
	if err := json.Unmarshal([]byte(text), &result); err != nil {
		t.Fatalf("%s: result is not a JSON object: %s", tool, text)
	}
	ar.Files = append(ar.Files,
		txtar.File{Name: prefix + "request.json", Data: indentJSON(t, body)},
		txtar.File{Name: prefix + "response.json", Data: indentJSON(t, a.body)},
		txtar.File{Name: prefix + "result.json", Data: indentJSON(t, text)},
	)
	return result
}

// indentJSON indents a JSON document, keeping its key order, and ends it
// with a newline.
func indentJSON(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(s), "", "  "); err != nil {
		t.Fatalf("indent %s: %v", s, err)
	}
	b.WriteByte('\n')
	return b.Bytes()
}

var (
	// goldenID matches the ids worldforge.NewID makes: a prefix, an
	// underscore and 20 base32 characters.
	goldenID = regexp.MustCompile(`\b([a-z]+)_[a-z2-7]{20}\b`)
	// goldenTime matches RFC 3339 times.
	goldenTime = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`)
)

// normalizeGolden replaces what differs between runs: each generated id by
// <prefix_id#n>, n counting the distinct ids of that prefix in order of
// first appearance, and each time by <time>.
func normalizeGolden(s string) string {
	seen := map[string]string{}
	count := map[string]int{}
	s = goldenID.ReplaceAllStringFunc(s, func(id string) string {
		if p, ok := seen[id]; ok {
			return p
		}
		prefix := id[:strings.LastIndexByte(id, '_')]
		count[prefix]++
		seen[id] = fmt.Sprintf("<%s_id#%d>", prefix, count[prefix])
		return seen[id]
	})
	return goldenTime.ReplaceAllString(s, "<time>")
}

// writeGolden replaces testdata/golden with files.
func writeGolden(t *testing.T, files map[string]string) {
	t.Helper()
	if err := os.RemoveAll(goldenDir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(goldenDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(goldenDir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// checkGolden compares files with testdata/golden, file by file, line by
// line; a file there that files lacks is an error too.
func checkGolden(t *testing.T, files map[string]string) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(files)) {
		want, err := os.ReadFile(filepath.Join(goldenDir, name))
		if err != nil {
			t.Errorf("%v (run with -update to write it)", err)
			continue
		}
		if d := cmp.Diff(lines(string(want)), lines(files[name])); d != "" {
			t.Errorf("%s differs from the answers (-golden +got); run with -update if the change is meant:\n%s", name, d)
		}
	}
	stored, err := filepath.Glob(filepath.Join(goldenDir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range stored {
		if _, ok := files[filepath.Base(p)]; !ok {
			t.Errorf("%s: no tool answers it any more (run with -update to remove it)", p)
		}
	}
}

// lines splits s into lines for cmp.Diff.
func lines(s string) []string { return strings.Split(s, "\n") }
