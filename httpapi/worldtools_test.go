package httpapi_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// worldDoc reads a world's document through read_world, without runtime.
func worldDoc(t *testing.T, s *testserver.Server, token, id string) map[string]json.RawMessage {
	t.Helper()
	cs := connect(t, s, token, "")
	text, isErr := callTool(t, cs, wf.ToolReadWorld, map[string]any{"id": id})
	if isErr {
		t.Fatalf("read_world: %s", text)
	}
	var w struct {
		JSON map[string]json.RawMessage `json:"json"`
	}
	mustDecode(t, text, &w)
	delete(w.JSON, "runtime")
	return w.JSON
}

func TestCreateWorldTool(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := testserver.Start(t, db)
		owner := s.Token(t, s.Owner)
		cs := connect(t, s, owner, "")
		templates := []string{"", "empty-hex", "starter-jungle", "starter-dungeon", "starter-city", "starter-desert",
			"starter-wetland", "starter-archipelago", "starter-volcanic", "starter-caverns"}
		for _, tpl := range templates {
			before := s.AuditCount(t)
			args := map[string]any{"name": "W " + tpl, "seed": 42, "size": "small"}
			if tpl != "" {
				args["template"] = tpl
			}
			text, isErr := callTool(t, cs, wf.ToolCreateWorld, args)
			if isErr {
				t.Fatalf("%q: %s", tpl, text)
			}
			var res wf.CreateWorldResult
			mustDecode(t, text, &res)
			if res.Template != tpl || res.Seed != 42 || res.Cols != 32 || res.Rows != 24 || res.Version != 1 || !wf.ValidID("world", res.ID) {
				t.Errorf("%q: %+v", tpl, res)
			}
			if n := s.AuditCount(t) - before; n != 1 {
				t.Errorf("%q: %d audit rows", tpl, n)
			}
			pois, err := db.ListPOIs(t.Context(), res.ID)
			if err != nil {
				t.Fatal(err)
			}
			lore, err := db.CountLore(t.Context(), res.ID)
			if err != nil {
				t.Fatal(err)
			}
			total := 0
			for _, n := range lore {
				total += n
			}
			starter := strings.HasPrefix(tpl, "starter-")
			if starter && (len(pois) == 0 || total == 0) || !starter && (len(pois) != 0 || total != 0) {
				t.Errorf("%q: %d POIs, %d lore entities", tpl, len(pois), total)
			}
			for _, p := range pois {
				if p.X < 0 || p.Y < 0 || p.X >= res.Cols || p.Y >= res.Rows {
					t.Errorf("%q: POI %s outside the grid at (%d, %d)", tpl, p.Name, p.X, p.Y)
				}
			}
		}

		// Same template, seed and size: the same world, byte for byte.
		var docs []string
		for range 2 {
			text, isErr := callTool(t, cs, wf.ToolCreateWorld, map[string]any{"name": "Twin", "template": "starter-archipelago", "seed": 9})
			if isErr {
				t.Fatal(text)
			}
			var res wf.CreateWorldResult
			mustDecode(t, text, &res)
			d := worldDoc(t, s, owner, res.ID)
			docs = append(docs, string(d["grid"]))
		}
		if docs[0] != docs[1] {
			t.Error("same seed, different grids")
		}
		// No seed: a random one, returned.
		text, isErr := callTool(t, cs, wf.ToolCreateWorld, map[string]any{"name": "Random", "template": "starter-city", "populate": false})
		if isErr {
			t.Fatal(text)
		}
		var res wf.CreateWorldResult
		mustDecode(t, text, &res)
		if res.Cols != 64 || res.Rows != 48 {
			t.Errorf("default size: %+v", res)
		}
		if pois, _ := db.ListPOIs(t.Context(), res.ID); len(pois) != 0 {
			t.Errorf("populate false made %d POIs", len(pois))
		}

		bad := []struct {
			args map[string]any
			want string
		}{
			{map[string]any{"name": "X", "template": "starter-moon"}, "unknown_template"},
			{map[string]any{"name": "X", "size": "huge"}, "bad_request"},
			{map[string]any{"name": ""}, "bad_request"},
			{map[string]any{"name": strings.Repeat("n", 121)}, "bad_request"},
			{map[string]any{}, "bad_request"},
			{map[string]any{"name": "X", "seed": 1.5}, "bad_request"},
			{map[string]any{"name": "X", "seed": "99999999999999999999"}, "bad_request"},
			{map[string]any{"name": "X", "populate": "yes"}, "bad_request"},
			{map[string]any{"name": "X", "seed": []any{7}}, "bad_request"},
		}
		for _, c := range bad {
			before := s.AuditCount(t)
			text, isErr := callTool(t, cs, wf.ToolCreateWorld, c.args)
			if !isErr || !strings.HasPrefix(text, c.want) {
				t.Errorf("%v: %v %s, want %s", c.args, isErr, text, c.want)
			}
			if n := s.AuditCount(t) - before; n != 0 {
				t.Errorf("%v: %d audit rows", c.args, n)
			}
		}
		readOnly := connect(t, s, s.Key(t, s.Owner, wf.ScopeWorldRead), "")
		if text, isErr := callTool(t, readOnly, wf.ToolCreateWorld, map[string]any{"name": "X"}); !isErr || text != "missing_scopes:world:write" {
			t.Errorf("scope: %s", text)
		}
	})
}

func TestResizeWorldTool(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := testserver.Start(t, db)
		ctx := t.Context()
		owner := connect(t, s, s.Token(t, s.Owner), "")
		text, isErr := callTool(t, owner, wf.ToolCreateWorld, map[string]any{"name": "R", "template": "starter-jungle", "seed": 3, "size": "small"})
		if isErr {
			t.Fatal(text)
		}
		var created wf.CreateWorldResult
		mustDecode(t, text, &created)
		if err := db.AddWorldMember(ctx, created.ID, s.GM.ID, wf.RoleGM); err != nil {
			t.Fatal(err)
		}
		pois, err := db.ListPOIs(ctx, created.ID)
		if err != nil {
			t.Fatal(err)
		}
		outside := 0
		for _, p := range pois {
			if p.X >= 10 || p.Y >= 8 {
				outside++
			}
		}

		freeform := &wf.World{OwnerID: s.Owner.ID, Name: "Painted", JSON: json.RawMessage(`{"grid":{"type":"freeform","width":800}}`)}
		nogrid := &wf.World{OwnerID: s.Owner.ID, Name: "Notes", JSON: json.RawMessage(`{"notes":"no map yet"}`)}
		for _, w := range []*wf.World{freeform, nogrid} {
			if err := db.CreateWorld(ctx, w); err != nil {
				t.Fatal(err)
			}
		}
		refusals := []struct {
			name string
			args map[string]any
			want string
		}{
			{"no rows", map[string]any{"world_id": created.ID, "cols": 10}, "no_size"},
			{"no size", map[string]any{"world_id": created.ID}, "no_size"},
			{"fraction", map[string]any{"world_id": created.ID, "cols": 10.5, "rows": 8}, "non_integer"},
			{"zero", map[string]any{"world_id": created.ID, "cols": 0, "rows": 8}, "too_small"},
			{"negative", map[string]any{"world_id": created.ID, "cols": 10, "rows": -3}, "too_small"},
			{"over the cap", map[string]any{"world_id": created.ID, "cols": 4097, "rows": 8}, "out_of_bounds_cap"},
			{"freeform", map[string]any{"world_id": freeform.ID, "cols": 10, "rows": 8}, "freeform_grid"},
			{"no grid", map[string]any{"world_id": nogrid.ID, "cols": 10, "rows": 8}, "no_grid"},
			{"string", map[string]any{"world_id": created.ID, "cols": "10", "rows": 8}, "bad_request"},
			{"missing world", map[string]any{"world_id": "world_aaaaaaaaaaaaaaaaaaaa", "cols": 10, "rows": 8}, "not_found"},
		}
		for _, c := range refusals {
			before := s.AuditCount(t)
			text, isErr := callTool(t, owner, wf.ToolResizeWorld, c.args)
			if !isErr || !strings.HasPrefix(text, c.want) {
				t.Errorf("%s: %v %q, want %s", c.name, isErr, text, c.want)
			}
			if n := s.AuditCount(t) - before; n != 0 {
				t.Errorf("%s: %d audit rows", c.name, n)
			}
		}
		if w, _ := db.FindWorldHeader(ctx, created.ID); w.Version != 1 {
			t.Fatalf("a refusal changed the world: version %d", w.Version)
		}
		for _, who := range []*wf.User{s.GM, s.Stranger} {
			cs := connect(t, s, s.Token(t, who), "")
			if text, isErr := callTool(t, cs, wf.ToolResizeWorld, map[string]any{"world_id": created.ID, "cols": 10, "rows": 8}); !isErr || text != "not_found" {
				t.Errorf("%s: %s", who.Name, text)
			}
		}

		before := s.AuditCount(t)
		text, isErr = callTool(t, owner, wf.ToolResizeWorld, map[string]any{"world_id": created.ID, "cols": 10, "rows": 8})
		if isErr {
			t.Fatal(text)
		}
		var rep struct {
			WorldID     string   `json:"worldId"`
			Version     int64    `json:"version"`
			OldCols     int      `json:"oldCols"`
			NewCols     int      `json:"newCols"`
			NewRows     int      `json:"newRows"`
			DroppedPOIs []string `json:"droppedPois"`
			KeptPOIs    int      `json:"keptPois"`
		}
		mustDecode(t, text, &rep)
		if rep.Version != 2 || rep.OldCols != 32 || rep.NewCols != 10 || rep.NewRows != 8 || len(rep.DroppedPOIs) != outside || rep.KeptPOIs != len(pois)-outside {
			t.Errorf("report %s (outside %d of %d)", text, outside, len(pois))
		}
		if n := s.AuditCount(t) - before; n != 1 {
			t.Errorf("resize: %d audit rows", n)
		}
		after, err := db.ListPOIs(ctx, created.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(after) != len(pois)-outside {
			t.Errorf("%d POIs after resize, want %d", len(after), len(pois)-outside)
		}
		w, err := db.FindWorldHeader(ctx, created.ID)
		if err != nil {
			t.Fatal(err)
		}
		if w.Cols != 10 || w.Rows != 8 {
			t.Errorf("stored size %d×%d", w.Cols, w.Rows)
		}
		var grid struct {
			Cols    int      `json:"cols"`
			Rows    int      `json:"rows"`
			Terrain []string `json:"terrain"`
		}
		if err := json.Unmarshal(worldDoc(t, s, s.Token(t, s.Owner), created.ID)["grid"], &grid); err != nil {
			t.Fatal(err)
		}
		if grid.Cols != 10 || grid.Rows != 8 || len(grid.Terrain) != 8 || len(grid.Terrain[0]) != 10 {
			t.Errorf("grid after resize: %d×%d, %d rows", grid.Cols, grid.Rows, len(grid.Terrain))
		}
	})
}

func TestPlayerTools(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := testserver.Start(t, db)
		ctx := t.Context()
		w := s.World.ID
		chest := &wf.POI{WorldID: w, Name: "Chest", X: 5, Y: 5, Pickable: true, Openable: true,
			Items: []wf.POIItem{{ID: "item-gold", Name: "Gold"}, {ID: "item-map", Name: "Map"}}, Visibility: wf.AudienceParty}
		statue := &wf.POI{WorldID: w, Name: "Statue", X: 4, Y: 5, Visibility: wf.AudienceParty}
		for _, p := range []*wf.POI{chest, statue} {
			if err := db.CreatePOI(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		player := connect(t, s, s.Token(t, s.Player), "")
		pick := func(poi *wf.POI, item string) map[string]any {
			return map[string]any{"world_id": w, "poi_id": poi.ID, "item_id": item, "cell": map[string]any{"x": poi.X, "y": poi.Y}}
		}
		open := func(poi *wf.POI) map[string]any {
			return map[string]any{"world_id": w, "poi_id": poi.ID, "cell": map[string]any{"x": poi.X, "y": poi.Y}}
		}
		setPresence := func(x, y int) {
			t.Helper()
			if err := db.SetPresence(ctx, &wf.Presence{WorldID: w, UserID: s.Player.ID, X: x, Y: y}); err != nil {
				t.Fatal(err)
			}
		}
		expect := func(name string, tool string, args map[string]any, want string) string {
			t.Helper()
			before := s.AuditCount(t)
			text, isErr := callTool(t, player, tool, args)
			ok := !isErr && want == "" || isErr && text == want
			if !ok {
				t.Errorf("%s: %v %s, want %q", name, isErr, text, want)
			}
			wantRows := 0
			if !isErr {
				wantRows = 1
			}
			if n := s.AuditCount(t) - before; n != wantRows {
				t.Errorf("%s: %d audit rows, want %d", name, n, wantRows)
			}
			return text
		}
		expect("no presence", wf.ToolPlayerPickup, pick(chest, "item-gold"), "conflict: no_presence")
		setPresence(0, 0)
		expect("too far", wf.ToolPlayerPickup, pick(chest, "item-gold"), "bad_request: too_far")
		expect("too far to open", wf.ToolPlayerOpen, open(chest), "bad_request: too_far")
		setPresence(5, 4) // odd-r: (5, 5) and (4, 5) are below-right and below-left of (5, 4)
		wrongCell := pick(chest, "item-gold")
		wrongCell["cell"] = map[string]any{"x": 4, "y": 4}
		expect("wrong cell", wf.ToolPlayerPickup, wrongCell, "not_found")
		expect("not pickable", wf.ToolPlayerPickup, pick(statue, "item-gold"), "bad_request: not_pickable")
		expect("not openable", wf.ToolPlayerOpen, open(statue), "bad_request: not_openable")
		expect("unknown item", wf.ToolPlayerPickup, pick(chest, "item-crown"), "bad_request: unknown_item")
		expect("missing poi", wf.ToolPlayerPickup, map[string]any{"world_id": w, "poi_id": "poi_aaaaaaaaaaaaaaaaaaaa", "item_id": "x", "cell": map[string]any{"x": 5, "y": 5}}, "not_found")
		if text, isErr := callTool(t, player, wf.ToolPlayerPickup, map[string]any{"world_id": w, "poi_id": chest.ID, "item_id": "item-gold"}); !isErr || !strings.HasPrefix(text, "bad_request: invalid arguments") {
			t.Errorf("no cell: %s", text)
		}
		for _, bad := range []any{map[string]any{"x": "5", "y": 5}, map[string]any{"x": 5.5, "y": 5}, map[string]any{"x": 5}, []int{5, 5}, "5,5", nil} {
			args := pick(chest, "item-gold")
			args["cell"] = bad
			if text, isErr := callTool(t, player, wf.ToolPlayerPickup, args); !isErr || !strings.HasPrefix(text, "bad_request: invalid arguments") {
				t.Errorf("cell %v: %v %s", bad, isErr, text)
			}
		}
		text := expect("pick up", wf.ToolPlayerPickup, pick(chest, "item-gold"), "")
		if !strings.Contains(text, `"itemId":"item-gold"`) {
			t.Errorf("pick up: %s", text)
		}
		expect("twice", wf.ToolPlayerPickup, pick(chest, "item-gold"), "bad_request: unknown_item")
		text = expect("open", wf.ToolPlayerOpen, open(chest), "")
		if !strings.Contains(text, `"first":true`) {
			t.Errorf("open: %s", text)
		}
		text = expect("open again", wf.ToolPlayerOpen, open(chest), "")
		if !strings.Contains(text, `"first":false`) {
			t.Errorf("open again: %s", text)
		}
		stranger := connect(t, s, s.Token(t, s.Stranger), "")
		if text, isErr := callTool(t, stranger, wf.ToolPlayerOpen, open(chest)); !isErr || text != "not_found" {
			t.Errorf("stranger: %s", text)
		}
	})
}

// TestPickupRaceOverMCP: players of one world grab the same item through
// the endpoint at once; exactly one gets it.
func TestPickupRaceOverMCP(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		s := testserver.Start(t, db)
		ctx := t.Context()
		chest := &wf.POI{WorldID: s.World.ID, Name: "Chest", X: 2, Y: 2, Pickable: true, Items: []wf.POIItem{{ID: "item-crown", Name: "Crown"}}, Visibility: wf.AudienceParty}
		if err := db.CreatePOI(ctx, chest); err != nil {
			t.Fatal(err)
		}
		const players = 8
		var tokens []string
		for i := range players {
			u := &wf.User{Name: fmt.Sprintf("P%d", i)}
			if err := db.CreateUser(ctx, u); err != nil {
				t.Fatal(err)
			}
			if err := db.AddWorldMember(ctx, s.World.ID, u.ID, wf.RolePlayer); err != nil {
				t.Fatal(err)
			}
			if err := db.SetPresence(ctx, &wf.Presence{WorldID: s.World.ID, UserID: u.ID, X: 2, Y: 2}); err != nil {
				t.Fatal(err)
			}
			tokens = append(tokens, s.Token(t, u))
		}
		before := s.AuditCount(t)
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			got  []string
			errs []string
		)
		for _, tok := range tokens {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cs := connect(t, s, tok, "")
				text, isErr := callTool(t, cs, wf.ToolPlayerPickup, map[string]any{"world_id": s.World.ID, "poi_id": chest.ID, "item_id": "item-crown", "cell": map[string]any{"x": 2, "y": 2}})
				mu.Lock()
				defer mu.Unlock()
				if isErr {
					errs = append(errs, text)
				} else {
					got = append(got, text)
				}
			}()
		}
		wg.Wait()
		if len(got) != 1 || len(errs) != players-1 {
			t.Fatalf("%d winners, errors %v", len(got), errs)
		}
		for _, e := range errs {
			if e != "bad_request: unknown_item" {
				t.Errorf("loser got %q", e)
			}
		}
		if n := s.AuditCount(t) - before; n != 1 {
			t.Errorf("%d audit rows, want 1", n)
		}
	})
}

// TestWorldToolScopes: every world tool needs world:write; a key without
// it is refused before anything is read or written, with no audit row.
func TestWorldToolScopes(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, dbtest.Open(t))
	cell := map[string]any{"x": 3, "y": 4}
	calls := map[string]map[string]any{
		wf.ToolCreateWorld:  {"name": "X"},
		wf.ToolResizeWorld:  {"world_id": s.World.ID, "cols": 4, "rows": 4},
		wf.ToolPlayerPickup: {"world_id": s.World.ID, "poi_id": s.POI.ID, "item_id": "x", "cell": cell},
		wf.ToolPlayerOpen:   {"world_id": s.World.ID, "poi_id": s.POI.ID, "cell": cell},
	}
	cs := connect(t, s, s.Key(t, s.Owner, wf.ScopeWorldRead, wf.ScopeLoreRead), "")
	for name, args := range calls {
		before := s.AuditCount(t)
		if text, isErr := callTool(t, cs, name, args); !isErr || text != "missing_scopes:world:write" {
			t.Errorf("%s: %v %q", name, isErr, text)
		}
		if n := s.AuditCount(t) - before; n != 0 {
			t.Errorf("%s: %d audit rows", name, n)
		}
	}
	if w, err := s.DB.FindWorldHeader(t.Context(), s.World.ID); err != nil || w.Version != 1 || w.Cols != 16 {
		t.Errorf("world changed: %+v %v", w, err)
	}
}

// TestListLoreIssuesAndPresets: a world made from a template lists its
// preset's lore with no issues, and every preset; a dangling reference
// added afterwards is reported without blocking anything.
func TestListLoreIssuesAndPresets(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, dbtest.Open(t))
	cs := connect(t, s, s.Token(t, s.Owner), "")
	text, isErr := callTool(t, cs, wf.ToolCreateWorld, map[string]any{"name": "Lore", "template": "starter-dungeon", "seed": 1, "size": "small"})
	if isErr {
		t.Fatal(text)
	}
	var created wf.CreateWorldResult
	mustDecode(t, text, &created)
	text, isErr = callTool(t, cs, wf.ToolListLore, map[string]any{"world_id": created.ID})
	if isErr {
		t.Fatal(text)
	}
	var overview wf.LoreOverview
	mustDecode(t, text, &overview)
	total := 0
	for _, n := range overview.Counts {
		total += n
	}
	if total == 0 || len(overview.Issues) != 0 || len(overview.Presets) < 9 || len(overview.Counts) != 17 {
		t.Fatalf("overview: %d entities, issues %v, %d presets, %d counts", total, overview.Issues, len(overview.Presets), len(overview.Counts))
	}
	if err := s.DB.UpsertLore(t.Context(), &wf.LoreEntity{WorldID: created.ID, Collection: "deities", ID: "stray", Name: "Stray",
		JSON: json.RawMessage(`{"id":"stray","name":"Stray","pantheonId":"nowhere"}`)}); err != nil {
		t.Fatal(err)
	}
	text, isErr = callTool(t, cs, wf.ToolListLore, map[string]any{"world_id": created.ID, "collection": "deities"})
	if isErr {
		t.Fatal(text)
	}
	var list wf.LoreCollectionList
	mustDecode(t, text, &list)
	if len(list.Issues) != 1 || list.Issues[0].Kind != "dangling_reference" || list.Issues[0].ID != "stray" || list.Issues[0].Field != "pantheonId" {
		t.Errorf("issues: %+v", list.Issues)
	}
	if list.Counts["deities"] != len(list.Items) {
		t.Errorf("counts %v, %d items", list.Counts, len(list.Items))
	}
}
