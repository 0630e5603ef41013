package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// fuzzTools are the 18 read tools, indexed by the fuzz input.
var fuzzTools = []string{
	wf.ToolReadWorld, wf.ToolReadCampaign, wf.ToolListCampaigns, wf.ToolReadQuest,
	wf.ToolListQuests, wf.ToolReadEncounter, wf.ToolListEncounters, wf.ToolListWikiPages,
	wf.ToolReadWikiPage, wf.ToolSearchWikiPages, wf.ToolWikiPageHistory, wf.ToolListFactions,
	wf.ToolGetWorldSummary, wf.ToolListAtlasPlaces, wf.ToolReadAtlasNode, wf.ToolSearchAtlasNodes,
	wf.ToolSearchPOIs, wf.ToolListLore,
}

// goInternals are the phrases no error text may carry: Go type and
// package names, encoding/json's wording.
var goInternals = []string{"Go struct", "Go value", "json: cannot", "int64", "*worldforge.", "*mcp.", "jsonrpc2.", "interface {}"}

// leaksGo returns the first phrase of goInternals in text that the input
// did not itself carry (an error may echo what it was sent).
func leaksGo(text, input string) string {
	for _, p := range goInternals {
		if strings.Contains(text, p) && !strings.Contains(input, p) {
			return p
		}
	}
	return ""
}

func toolIndex(name string) uint8 {
	for i, n := range fuzzTools {
		if n == name {
			return uint8(i)
		}
	}
	panic("unknown tool " + name)
}

// FuzzToolArguments calls the read tools in-process, as the world's owner
// with every scope, with arbitrary argument bytes. Whatever the arguments,
// a tool answers with a result (and exactly one audit row) or with a
// bad_request / not_found domain error (and no audit row) whose text names
// no Go type or package; never an internal error, never a panic.
func FuzzToolArguments(f *testing.F) {
	s := testserver.Start(f, dbtest.Open(f))
	owner := &wf.Actor{UserID: s.Owner.ID, KeyID: "key_fuzzowner", Kind: wf.CredentialAPIKey, Scopes: []string{wf.ScopeAll}}
	ctx := context.Background()

	w, p, n := s.World.ID, s.Page.ID, s.Node.ID
	seeds := []struct {
		tool string
		args string
	}{
		// Valid.
		{wf.ToolReadWorld, `{"id":"` + w + `"}`},
		{wf.ToolReadCampaign, `{"id":"` + s.Campaign.ID + `"}`},
		{wf.ToolListCampaigns, `{}`},
		{wf.ToolListCampaigns, `null`},
		{wf.ToolListCampaigns, ``},
		{wf.ToolReadQuest, `{"id":"` + s.Quest.ID + `"}`},
		{wf.ToolListQuests, `{"campaign_id":"` + s.Campaign.ID + `"}`},
		{wf.ToolReadEncounter, `{"id":"` + s.Encounter.ID + `"}`},
		{wf.ToolListEncounters, `{}`},
		{wf.ToolListWikiPages, `{"world_id":"` + w + `","kind":"faction"}`},
		{wf.ToolReadWikiPage, `{"id":"` + p + `"}`},
		{wf.ToolSearchWikiPages, `{"q":"ward","kind":"faction","limit":5}`},
		{wf.ToolSearchWikiPages, `{"world_id":"` + w + `","q":"%_\\"}`},
		{wf.ToolWikiPageHistory, `{"id":"` + p + `","limit":200}`},
		{wf.ToolListFactions, `{"world_id":"` + w + `"}`},
		{wf.ToolGetWorldSummary, `{"world_id":"` + w + `"}`},
		{wf.ToolListAtlasPlaces, `{"world_id":"` + w + `","level":1}`},
		{wf.ToolReadAtlasNode, `{"id":"` + n + `"}`},
		{wf.ToolSearchAtlasNodes, `{"q":"ald","limit":100}`},
		{wf.ToolSearchPOIs, `{"world_id":"` + w + `","request":{"name":"chest","tags":["loot"],"x":100,"y":100,"radiusPx":64,"limit":10}}`},
		{wf.ToolSearchPOIs, `{"world_id":"` + w + `","request":{"category":"container","unknown":[1,{}]}}`},
		{wf.ToolSearchPOIs, `{"world_id":"` + w + `","request":{"x":2147483648,"y":2147483648,"radiusPx":1e300}}`},
		{wf.ToolSearchPOIs, `{"world_id":"` + w + `","request":{"x":-2147483648,"y":-2147483648}}`},
		{wf.ToolSearchPOIs, `{"world_id":"` + w + `","request":{"x":-2147483648,"y":-2147483648,"radiusPx":2147483647}}`},
		{wf.ToolSearchPOIs, `{"world_id":"` + w + `","request":{"x":-1073741824,"y":-1073741824,"radiusPx":1073741824}}`},
		{wf.ToolSearchPOIs, `{"world_id":"` + w + `","request":{"x":1073741824,"y":-1073741825}}`},
		{wf.ToolListLore, `{"world_id":"` + w + `","collection":"factions"}`},
		{wf.ToolListLore, `{"world_id":"` + w + `"}`},
		// Not found.
		{wf.ToolReadWorld, `{"id":"world_doesnotexist"}`},
		{wf.ToolReadQuest, `{"id":"` + s.Encounter.ID + `"}`},
		{wf.ToolListFactions, `{"world_id":"\u0000"}`},
		{wf.ToolReadWikiPage, `{"id":"` + strings.Repeat("é", 100) + `"}`},
		// Invalid.
		{wf.ToolReadWorld, `{}`},
		{wf.ToolReadWorld, `{"id":5}`},
		{wf.ToolReadWorld, `{"id":"` + w + `","extra":true}`},
		{wf.ToolReadCampaign, `{"id":"` + strings.Repeat("x", 101) + `"}`},
		{wf.ToolReadQuest, `[]`},
		{wf.ToolReadQuest, `"id"`},
		{wf.ToolReadEncounter, `{"id":`},
		{wf.ToolListWikiPages, `{"world_id":"` + w + `","kind":"bogus"}`},
		{wf.ToolSearchWikiPages, `{"limit":0}`},
		{wf.ToolSearchWikiPages, `{"limit":1e400}`},
		{wf.ToolSearchAtlasNodes, `{"limit":1.5}`},
		{wf.ToolSearchAtlasNodes, `{"q":"` + strings.Repeat("q", 201) + `"}`},
		{wf.ToolWikiPageHistory, `{"id":"` + p + `","limit":-1}`},
		{wf.ToolListAtlasPlaces, `{"world_id":"` + w + `","level":6}`},
		{wf.ToolListAtlasPlaces, `{"world_id":"` + w + `","level":99999999999999999999}`},
		{wf.ToolSearchPOIs, `{"world_id":"` + w + `","request":"chest"}`},
		{wf.ToolSearchPOIs, `{"world_id":"` + w + `","request":{"x":1}}`},
		{wf.ToolSearchPOIs, `{"world_id":"` + w + `","request":{"radiusPx":5}}`},
		{wf.ToolSearchPOIs, `{"world_id":"` + w + `","request":{"x":1,"y":1,"radiusPx":-5}}`},
		{wf.ToolSearchPOIs, `{"world_id":"` + w + `","request":{"x":9223372036854775808,"y":0}}`},
		{wf.ToolSearchPOIs, `{"world_id":"` + w + `","request":{"tags":[1]}}`},
		{wf.ToolSearchPOIs, `{"world_id":"` + w + `","request":{"tags":["t0"` + strings.Repeat(`,"t"`, wf.MaxPOITags) + `]}}`},
		{wf.ToolSearchPOIs, `{"world_id":"` + w + `","request":{"tags":["t0"` + strings.Repeat(`,"t"`, 10_000) + `]}}`},
		{wf.ToolSearchPOIs, `{"world_id":"` + w + `","request":{"tags":["` + strings.Repeat("t", wf.MaxPOITagLength+1) + `"]}}`},
		{wf.ToolSearchPOIs, `{"world_id":"` + w + `","request":{"tags":[1` + strings.Repeat(`,2`, wf.MaxPOITags) + `]}}`},
		{wf.ToolListLore, `{"world_id":"` + w + `","collection":"dragons"}`},
		{wf.ToolListQuests, `{"campaign_id":[]}`},
		{wf.ToolListCampaigns, `{"a":1}`},
		// Paging.
		{wf.ToolListCampaigns, `{"limit":1}`},
		{wf.ToolListQuests, `{"campaign_id":"` + s.Campaign.ID + `","limit":1000}`},
		{wf.ToolListWikiPages, `{"world_id":"` + w + `","limit":1001}`},
		{wf.ToolListAtlasPlaces, `{"world_id":"` + w + `","cursor":"eyJ2IjoxfQ"}`},
		{wf.ToolListFactions, `{"world_id":"` + w + `","cursor":"","limit":1}`},
		{wf.ToolListEncounters, `{"cursor":"not a cursor"}`},
		{wf.ToolListCampaigns, `{"a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`},
		// Unknown keys, a key in another letter case, integral numbers.
		{wf.ToolReadWorld, `{"id":"` + w + `","ID":"world_x","Id":5}`},
		{wf.ToolListAtlasPlaces, `{"world_id":"` + w + `","level":1.0,"limit":2e0,"LIMIT":"x"}`},
		{wf.ToolSearchPOIs, `{"world_id":"` + w + `","request":{"x":-0.0,"y":40e-1,"limit":1.5}}`},
		{wf.ToolSearchPOIs, `{"world_id":"` + w + `","request":{"x":1e30,"y":1,"tags":[1]}}`},
		{wf.ToolListLore, `{"world_id":"` + w + `","limit":1e400}`},
	}
	for _, sd := range seeds {
		f.Add(toolIndex(sd.tool), []byte(sd.args))
	}

	f.Fuzz(func(t *testing.T, idx uint8, args []byte) {
		if len(args) > 64<<10 {
			return // keep iterations cheap; size limits are the transport's
		}
		name := fuzzTools[int(idx)%len(fuzzTools)]
		before, fp := s.AuditCount(t), s.Fingerprint(t)
		res, err := s.Tools.CallTool(ctx, owner, name, json.RawMessage(args))
		after := s.AuditCount(t)
		if err != nil {
			var e *wf.Error
			if !errors.As(err, &e) {
				t.Fatalf("%s(%q): non-domain error %v", name, args, err)
			}
			if e.Code != wf.EBadRequest && e.Code != wf.ENotFound {
				t.Fatalf("%s(%q): error %q, want bad_request or not_found", name, args, e)
			}
			if leak := leaksGo(e.Error(), string(args)); leak != "" {
				t.Fatalf("%s(%q): error %q names Go internals (%s)", name, args, e, leak)
			}
			if after != before {
				t.Fatalf("%s(%q) failed (%v) but the audit rows went %d → %d", name, args, err, before, after)
			}
			if changed := testserver.Changed(fp, s.Fingerprint(t)); len(changed) > 0 {
				t.Fatalf("%s(%q) failed (%v) but changed %v", name, args, err, changed)
			}
			return
		}
		if res == nil {
			t.Fatalf("%s(%q): nil result without an error", name, args)
		}
		if after != before+1 {
			t.Fatalf("%s(%q) succeeded but the audit rows went %d → %d, want +1", name, args, before, after)
		}
	})
}
