package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// writeFuzzTools are the write tools, indexed by the fuzz input.
var writeFuzzTools = []string{
	wf.ToolProposeQuest, wf.ToolProposeEncounter, wf.ToolProposeWikiPage, wf.ToolProposeWikiEdit,
	wf.ToolProposeAtlasPlace, wf.ToolProposeLore, wf.ToolCommitQuest, wf.ToolCommitEncounter,
	wf.ToolCreateCampaign, wf.ToolCreateWorld, wf.ToolResizeWorld, wf.ToolPlayerPickup, wf.ToolPlayerOpen,
}

// writeErrorCodes are the domain errors a write tool may answer.
var writeErrorCodes = map[string]bool{
	wf.EBadRequest: true, wf.ENotFound: true, wf.EProposalNotFound: true, wf.EVersionConflict: true,
	wf.EConflict: true, wf.EUnknownTemplate: true, wf.EFreeformGrid: true, wf.EOutOfBoundsCap: true,
	wf.ETooSmall: true, wf.ENonInteger: true, wf.ENoGrid: true, wf.ENoSize: true,
}

// FuzzWriteToolArguments calls the write tools in-process, as the world's
// owner with every scope, with arbitrary argument bytes: a result, or a
// domain error with no audit row whose text names no Go type or package;
// never an internal error or a panic.
func FuzzWriteToolArguments(f *testing.F) {
	s := testserver.Start(f, dbtest.Open(f))
	owner := &wf.Actor{UserID: s.Owner.ID, KeyID: "key_fuzzowner", Kind: wf.CredentialAPIKey, Scopes: []string{wf.ScopeAll}}
	ctx := context.Background()
	w := s.World.ID
	seeds := []struct {
		idx  int
		args string
	}{
		{0, `{"payload":{"name":"Q","json":{"a":1}},"diff_summary":"d"}`},
		{0, `{"id":"` + s.Quest.ID + `","payload":{},"diff_summary":"d","changeset_id":"cs-1"}`},
		{1, `{"id":"` + s.Encounter.ID + `","payload":{"name":"E"},"diff_summary":"d"}`},
		{2, `{"world_id":"` + w + `","payload":{"title":"T","body":"b","kind":"place","audience":"party","x":1},"diff_summary":"d"}`},
		{3, `{"page_id":"` + s.Page.ID + `","payload":{"title":"New"},"diff_summary":"d"}`},
		{4, `{"world_id":"` + w + `","payload":{"name":"P","parentId":"` + s.Node.ID + `"},"diff_summary":"d"}`},
		{5, `{"world_id":"` + w + `","operations":[{"op":"upsert","collection":"eras","entity":{"id":"e1","name":"E","startYear":1,"endYear":0}},{"op":"add_preset","preset_id":"classic-pantheon"}],"diff_summary":"d"}`},
		{6, `{"proposal_id":"prop_aaaaaaaaaaaaaaaaaaaa","confirm":true}`},
		{7, `{"proposal_id":"x","confirm":"yes"}`},
		{8, `{"name":"C","world_id":"` + w + `","json":{}}`},
		{9, `{"name":"W","template":"starter-city","seed":-9,"size":"small","populate":false}`},
		{10, `{"world_id":"` + w + `","cols":3.5,"rows":1e9}`},
		{11, `{"world_id":"` + w + `","poi_id":"` + s.POI.ID + `","item_id":"i","cell":{"x":3,"y":4}}`},
		{12, `{"world_id":"` + w + `","poi_id":"` + s.POI.ID + `","cell":{"x":-1,"y":99999999999}}`},
		{9, `{"name":"W","size":"small","seed":"dragon","extra":1}`},
		{9, `{"name":"W","size":"small","seed":7.0}`},
		{9, `{"name":"W","size":"small","seed":9007199254740993}`},
		{9, `{"name":"W","size":"small","seed":"-9007199254740993"}`},
		{9, `{"name":"W","size":"small","seed":1e300}`},
		{0, `{"payload":{"name":"Q","NAME":1,"extra":[1]},"diff_summary":"d","DIFF_SUMMARY":5}`},
		{5, `{"world_id":"` + w + `","operations":[{"op":"add_preset","preset_id":"classic-pantheon","OP":"x","z":1}],"diff_summary":"d"}`},
		{12, `{"world_id":"` + w + `","poi_id":"` + s.POI.ID + `","cell":{"x":3.0,"y":4e0,"z":1}}`},
		{11, `{"world_id":"` + w + `","poi_id":"` + s.POI.ID + `","item_id":"i","cell":{"x":1e30,"y":[1]}}`},
	}
	for _, sd := range seeds {
		f.Add(uint8(sd.idx), []byte(sd.args))
	}
	f.Fuzz(func(t *testing.T, idx uint8, args []byte) {
		if len(args) > 16<<10 {
			return
		}
		name := writeFuzzTools[int(idx)%len(writeFuzzTools)]
		if name == wf.ToolCreateWorld && len(args) > 0 && json.Valid(args) {
			// Keep generated worlds small: large ones are benchmarks.
			var m map[string]any
			if json.Unmarshal(args, &m) == nil && m["size"] != "small" {
				return
			}
		}
		before, fp := s.AuditCount(t), s.Fingerprint(t)
		res, err := s.Tools.CallTool(ctx, owner, name, json.RawMessage(args))
		after := s.AuditCount(t)
		if err != nil {
			var e *wf.Error
			if !errors.As(err, &e) || !writeErrorCodes[e.Code] {
				t.Fatalf("%s(%q): error %v, want a domain error", name, args, err)
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
		if res == nil || after != before+1 {
			t.Fatalf("%s(%q) succeeded: result %v, audit rows %d → %d", name, args, res, before, after)
		}
	})
}
