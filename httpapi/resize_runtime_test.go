package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// resizeReport is the part of worldforge_resize_world's report about
// runtime state.
type resizeReport struct {
	Version            int64    `json:"version"`
	DroppedPOIs        []string `json:"droppedPois"`
	KeptPOIs           int      `json:"keptPois"`
	DroppedPresence    []string `json:"droppedPresence"`
	DroppedOpenedPOIs  []string `json:"droppedOpenedPois"`
	DroppedPickedItems []string `json:"droppedPickedItems"`
}

// runtimeOf reads a world's runtime state through read_world.
func runtimeOf(t *testing.T, cs *mcp.ClientSession, id string) (wf.WorldRuntime, int, int) {
	t.Helper()
	text, isErr := callTool(t, cs, wf.ToolReadWorld, map[string]any{"id": id})
	if isErr {
		t.Fatalf("read_world: %s", text)
	}
	var w struct {
		Cols int `json:"cols"`
		Rows int `json:"rows"`
		JSON struct {
			Runtime wf.WorldRuntime `json:"runtime"`
		} `json:"json"`
	}
	mustDecode(t, text, &w)
	return w.JSON.Runtime, w.Cols, w.Rows
}

// TestResizeDropsRuntime: a shrinking worldforge_resize_world drops, in
// its transaction, the presence outside the new grid, and the opened
// marks and picked items of the POIs it drops; the report names them and
// read_world's runtime holds nothing outside the grid. A grow keeps
// everything and drops nothing. Afterwards PUT presence refuses a cell of
// the old grid with bad_request.
func TestResizeDropsRuntime(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := testserver.Start(t, db)
		ctx := t.Context()
		owner := connect(t, s, s.Token(t, s.Owner), "")
		text, isErr := callTool(t, owner, wf.ToolCreateWorld, map[string]any{"name": "Shrinking", "size": "small", "populate": false})
		if isErr {
			t.Fatal(text)
		}
		var created wf.CreateWorldResult
		mustDecode(t, text, &created)
		w := created.ID
		for u, role := range map[*wf.User]string{s.GM: wf.RoleGM, s.Player: wf.RolePlayer} {
			if err := db.AddWorldMember(ctx, w, u.ID, role); err != nil {
				t.Fatal(err)
			}
		}
		far := &wf.POI{WorldID: w, Name: "Far chest", X: 27, Y: 8, Pickable: true, Openable: true, Visibility: wf.AudienceParty,
			Items: []wf.POIItem{{ID: "item-far", Name: "Far gold"}}}
		near := &wf.POI{WorldID: w, Name: "Near chest", X: 1, Y: 1, Pickable: true, Openable: true, Visibility: wf.AudienceParty,
			Items: []wf.POIItem{{ID: "item-near", Name: "Near gold"}}}
		for _, p := range []*wf.POI{far, near} {
			if err := db.CreatePOI(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		presence := func(tok string, x, y int) (int, string) {
			return rest(t, http.MethodPut, s.URL+"/worlds/"+w+"/presence", tok, fmt.Sprintf(`{"x":%d,"y":%d}`, x, y))
		}
		playerTok, gmTok := s.Token(t, s.Player), s.Token(t, s.GM)
		if st, body := presence(playerTok, 27, 8); st != 200 {
			t.Fatalf("player presence: %d %s", st, body)
		}
		if st, body := presence(gmTok, 1, 0); st != 200 {
			t.Fatalf("GM presence: %d %s", st, body)
		}
		play := func(tok string, poi *wf.POI) {
			t.Helper()
			cs := connect(t, s, tok, "")
			cell := map[string]any{"x": poi.X, "y": poi.Y}
			if text, isErr := callTool(t, cs, wf.ToolPlayerOpen, map[string]any{"world_id": w, "poi_id": poi.ID, "cell": cell}); isErr {
				t.Fatalf("open %s: %s", poi.Name, text)
			}
			if text, isErr := callTool(t, cs, wf.ToolPlayerPickup, map[string]any{"world_id": w, "poi_id": poi.ID, "item_id": poi.Items[0].ID, "cell": cell}); isErr {
				t.Fatalf("pick up %s: %s", poi.Name, text)
			}
		}
		play(playerTok, far)
		play(gmTok, near)
		before, _, _ := runtimeOf(t, owner, w)
		if len(before.Presence) != 2 || len(before.OpenedPOIs) != 2 || len(before.PickedItems) != 2 {
			t.Fatalf("runtime before: %+v", before)
		}

		resize := func(cols, rows int) resizeReport {
			t.Helper()
			text, isErr := callTool(t, owner, wf.ToolResizeWorld, map[string]any{"world_id": w, "cols": cols, "rows": rows})
			if isErr {
				t.Fatalf("resize %d×%d: %s", cols, rows, text)
			}
			var rep resizeReport
			mustDecode(t, text, &rep)
			for name, l := range map[string][]string{"droppedPois": rep.DroppedPOIs, "droppedPresence": rep.DroppedPresence,
				"droppedOpenedPois": rep.DroppedOpenedPOIs, "droppedPickedItems": rep.DroppedPickedItems} {
				if l == nil {
					t.Errorf("resize %d×%d: %s is not a list: %s", cols, rows, name, text)
				}
			}
			return rep
		}

		// A grow keeps everything.
		rep := resize(40, 30)
		if len(rep.DroppedPOIs)+len(rep.DroppedPresence)+len(rep.DroppedOpenedPOIs)+len(rep.DroppedPickedItems) != 0 || rep.KeptPOIs != 2 {
			t.Errorf("grow: %+v", rep)
		}
		if after, _, _ := runtimeOf(t, owner, w); !runtimeEqual(before, after) {
			t.Errorf("grow changed the runtime:\n%+v\n%+v", before, after)
		}

		// Shrinking to 2×2 drops the player's presence at (27, 8), and the
		// far chest with its opened mark and the item taken from it.
		rep = resize(2, 2)
		if !slices.Equal(rep.DroppedPOIs, []string{far.ID}) || rep.KeptPOIs != 1 ||
			!slices.Equal(rep.DroppedPresence, []string{s.Player.ID}) ||
			!slices.Equal(rep.DroppedOpenedPOIs, []string{far.ID}) ||
			!slices.Equal(rep.DroppedPickedItems, []string{"item-far"}) {
			t.Errorf("shrink: %+v", rep)
		}
		rt, cols, rows := runtimeOf(t, owner, w)
		if cols != 2 || rows != 2 {
			t.Errorf("size after shrink: %d×%d", cols, rows)
		}
		for _, p := range rt.Presence {
			if p.X < 0 || p.Y < 0 || p.X >= cols || p.Y >= rows {
				t.Errorf("presence outside the grid: %+v", p)
			}
		}
		pois, err := db.ListPOIs(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for _, p := range pois {
			ids[p.ID] = true
		}
		for _, id := range rt.OpenedPOIs {
			if !ids[id] {
				t.Errorf("opened mark of a POI that is gone: %s", id)
			}
		}
		for _, it := range rt.PickedItems {
			if !ids[it.POIID] {
				t.Errorf("picked item of a POI that is gone: %+v", it)
			}
		}
		if len(rt.Presence) != 1 || rt.Presence[0].UserID != s.GM.ID || !slices.Equal(rt.OpenedPOIs, []string{near.ID}) ||
			len(rt.PickedItems) != 1 || rt.PickedItems[0].ItemID != "item-near" {
			t.Errorf("runtime after shrink: %+v", rt)
		}

		// The old cell is outside now: refused, nothing stored, no audit.
		auditBefore := s.AuditCount(t)
		if st, body := presence(playerTok, 27, 8); st != http.StatusBadRequest || !strings.Contains(body, "bad_request") {
			t.Errorf("presence outside the shrunk grid: %d %s", st, body)
		}
		if st, body := presence(playerTok, 2, 0); st != http.StatusBadRequest || !strings.Contains(body, "outside") {
			t.Errorf("presence on the old edge: %d %s", st, body)
		}
		if n := s.AuditCount(t) - auditBefore; n != 0 {
			t.Errorf("refused presence: %d audit rows", n)
		}
		if rt2, _, _ := runtimeOf(t, owner, w); !runtimeEqual(rt, rt2) {
			t.Errorf("refused presence changed the runtime: %+v", rt2)
		}
		if st, body := presence(playerTok, 1, 1); st != 200 {
			t.Errorf("presence inside: %d %s", st, body)
		}
	})
}

// runtimeEqual compares two runtime states by their JSON.
func runtimeEqual(a, b wf.WorldRuntime) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
