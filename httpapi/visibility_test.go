package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/httpapi"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// rawToolCall posts one tools/call (JSON-RPC id 1, protocol 2025-11-25)
// and returns the status and the whole response body.
func rawToolCall(t testing.TB, url, token, tool string, args any) (int, []byte) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("tools/call %s: %v", tool, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

// TestPlayerToolsHiddenPOI: a POI visible to the GM only is, to a player
// or an observer standing next to it, not_found on worldforge_player_open
// and worldforge_player_pickup — the very bytes a POI id that does not
// exist gets, whatever else would have been wrong (distance, item) — with
// nothing changed and no audit row; the owner and a GM open it and take
// its item. Both MCP paths (the fast path and the go-sdk handler) answer
// alike.
func TestPlayerToolsHiddenPOI(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := testserver.Start(t, db)
		sdk := httpapi.New(httpapi.Options{Auth: s.Auth, MCP: s.Tools.MCP(), Store: s.DB}) // no Tools: the go-sdk path
		paths := map[string]string{"fast path": s.MCPURL(), "go-sdk path": testserver.Listen(t, sdk) + "/mcp"}
		ctx := t.Context()
		w := s.World.ID
		observer := &wf.User{Name: "Observer"}
		if err := db.CreateUser(ctx, observer); err != nil {
			t.Fatal(err)
		}
		if err := db.AddWorldMember(ctx, w, observer.ID, wf.RoleObserver); err != nil {
			t.Fatal(err)
		}
		hidden := &wf.POI{WorldID: w, Name: "Secret cache", X: 5, Y: 5, Pickable: true, Openable: true,
			Items: []wf.POIItem{{ID: "item-gem", Name: "Gem"}}, Visibility: wf.AudienceGM}
		if err := db.CreatePOI(ctx, hidden); err != nil {
			t.Fatal(err)
		}
		stand := func(u *wf.User, x, y int) {
			t.Helper()
			if err := db.SetPresence(ctx, &wf.Presence{WorldID: w, UserID: u.ID, X: x, Y: y}); err != nil {
				t.Fatal(err)
			}
		}
		const missing = "poi_aaaaaaaaaaaaaaaaaaaa"
		cell := map[string]any{"x": hidden.X, "y": hidden.Y}
		open := func(poi string) map[string]any {
			return map[string]any{"world_id": w, "poi_id": poi, "cell": cell}
		}
		pick := func(poi, item string) map[string]any {
			return map[string]any{"world_id": w, "poi_id": poi, "item_id": item, "cell": cell}
		}
		unchanged := func(name string) {
			t.Helper()
			p, err := db.FindPOIByID(ctx, hidden.ID)
			if err != nil || len(p.Items) != 1 || p.Version != 1 {
				t.Errorf("%s: POI changed: %+v %v", name, p, err)
			}
			rt, err := dbtest.Runtime(ctx, db, w)
			if err != nil || len(rt.OpenedPOIs) != 0 || len(rt.PickedItems) != 0 {
				t.Errorf("%s: runtime changed: %+v %v", name, rt, err)
			}
		}

		for _, who := range []*wf.User{s.Player, observer} {
			tok := s.Token(t, who)
			for pathName, url := range paths {
				for _, pos := range []struct {
					name string
					x, y int
				}{{"adjacent", 5, 4}, {"on the cell", 5, 5}, {"far away", 0, 0}} {
					stand(who, pos.x, pos.y)
					for _, c := range []struct {
						tool       string
						hid, ghost map[string]any
					}{
						{wf.ToolPlayerOpen, open(hidden.ID), open(missing)},
						{wf.ToolPlayerPickup, pick(hidden.ID, "item-gem"), pick(missing, "item-gem")},
						{wf.ToolPlayerPickup, pick(hidden.ID, "item-none"), pick(missing, "item-none")},
					} {
						name := who.Name + " " + pos.name + " " + pathName + " " + c.tool + " " + c.hid["poi_id"].(string)
						before := s.AuditCount(t)
						st1, hid := rawToolCall(t, url, tok, c.tool, c.hid)
						st2, ghost := rawToolCall(t, url, tok, c.tool, c.ghost)
						if st1 != 200 || st2 != 200 || !bytes.Equal(hid, ghost) {
							t.Errorf("%s: hidden POI %d %s\nmissing id %d %s", name, st1, hid, st2, ghost)
						}
						if !bytes.Contains(hid, []byte(`"text":"not_found"`)) || !bytes.Contains(hid, []byte(`"isError":true`)) {
							t.Errorf("%s: %s, want not_found", name, hid)
						}
						if n := s.AuditCount(t) - before; n != 0 {
							t.Errorf("%s: %d audit rows", name, n)
						}
						unchanged(name)
					}
				}
			}
		}

		// The owner and a GM see every POI: they open it and take the item.
		stand(s.Owner, 5, 4)
		stand(s.GM, 4, 5)
		owner := connect(t, s, s.Token(t, s.Owner), "")
		gm := connect(t, s, s.Token(t, s.GM), "")
		if text, isErr := callTool(t, owner, wf.ToolPlayerOpen, open(hidden.ID)); isErr {
			t.Errorf("owner open: %s", text)
		}
		if text, isErr := callTool(t, gm, wf.ToolPlayerOpen, open(hidden.ID)); isErr {
			t.Errorf("GM open: %s", text)
		}
		text, isErr := callTool(t, gm, wf.ToolPlayerPickup, pick(hidden.ID, "item-gem"))
		if isErr {
			t.Errorf("GM pick up: %s", text)
		}
		var res wf.PickupResult
		mustDecode(t, text, &res)
		if res.Item.ItemID != "item-gem" || res.Item.UserID != s.GM.ID {
			t.Errorf("GM pick up: %s", text)
		}
	})
}
