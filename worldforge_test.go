package worldforge_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	wf "github.com/worldforge-go/worldforge"
)

func TestErrorText(t *testing.T) {
	cases := []struct {
		err  *wf.Error
		want string
	}{
		{wf.ErrNotFound, "not_found"},
		{&wf.Error{Code: wf.ENotFound}, "not_found"},
		{wf.MissingScopes("a", "b"), "missing_scopes:a,b"},
		{wf.MissingScopes(wf.UnresolvedOwner), "missing_scopes:unresolved_owner"},
		{wf.BadRequest("too_far"), "bad_request: too_far"},
		{wf.BadRequest("limit %d > %d", 5, 3), "bad_request: limit 5 > 3"},
		{wf.Errorf(wf.EConflict, "no_presence"), "conflict: no_presence"},
		{&wf.Error{Code: wf.EInternal}, "internal"},
		{wf.ErrUnauthorized, "unauthorized"},
	}
	for _, tc := range cases {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%#v.Error() = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestErrorIs(t *testing.T) {
	nf := wf.Errorf(wf.ENotFound, "world %s", "x")
	cases := []struct {
		name   string
		err    error
		target error
		want   bool
	}{
		{"same code, target without detail", nf, wf.ErrNotFound, true},
		{"same code and detail", nf, &wf.Error{Code: wf.ENotFound, Detail: "world x"}, true},
		{"same code, other detail", nf, &wf.Error{Code: wf.ENotFound, Detail: "world y"}, false},
		{"other code", nf, wf.ErrUnauthorized, false},
		{"detail-less error vs detailed target", wf.ErrNotFound, &wf.Error{Code: wf.ENotFound, Detail: "d"}, false},
		{"wrapped", fmt.Errorf("store: %w", nf), wf.ErrNotFound, true},
		{"wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", wf.MissingScopes("x"))), &wf.Error{Code: wf.EMissingScopes}, true},
		{"wrapped, code+detail", fmt.Errorf("a: %w", wf.MissingScopes("x")), wf.MissingScopes("x"), true},
		{"joined", errors.Join(io.EOF, wf.BadRequest("b")), &wf.Error{Code: wf.EBadRequest}, true},
		{"plain error", io.EOF, wf.ErrNotFound, false},
		{"domain error vs plain target", nf, io.EOF, false},
		{"version conflict", &wf.Error{Code: wf.EVersionConflict, Detail: "v2"}, wf.ErrVersionConflict, true},
		{"proposal not found is not not_found", &wf.Error{Code: wf.EProposalNotFound}, wf.ErrNotFound, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := errors.Is(tc.err, tc.target); got != tc.want {
				t.Errorf("errors.Is(%v, %v) = %v, want %v", tc.err, tc.target, got, tc.want)
			}
		})
	}
}

func TestErrorCode(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"domain", wf.ErrNotFound, wf.ENotFound},
		{"domain with detail", wf.BadRequest("x"), wf.EBadRequest},
		{"wrapped", fmt.Errorf("ctx: %w", wf.MissingScopes("a")), wf.EMissingScopes},
		{"wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", wf.ErrUnauthorized)), wf.EUnauthorized},
		{"plain", errors.New("boom"), wf.EInternal},
		{"plain wrapped", fmt.Errorf("x: %w", io.EOF), wf.EInternal},
		{"formatted without %w", fmt.Errorf("x: %v", wf.ErrNotFound), wf.EInternal},
	}
	for _, tc := range cases {
		if got := wf.ErrorCode(tc.err); got != tc.want {
			t.Errorf("%s: ErrorCode(%v) = %q, want %q", tc.name, tc.err, got, tc.want)
		}
	}
}

func TestParseScopes(t *testing.T) {
	cases := []struct {
		in      string
		want    []string
		wantErr string // a part of the error text; "" = no error
	}{
		{"world:read", []string{"world:read"}, ""},
		{"world:read,quest:write", []string{"world:read", "quest:write"}, ""},
		{" world:read , quest:write ,", []string{"world:read", "quest:write"}, ""},
		{"world:read,world:read,lore:read,world:read", []string{"world:read", "lore:read"}, ""},
		{"*", []string{"*"}, ""},
		{"*,world:read", []string{"*", "world:read"}, ""},
		{",,\tatlas:read\t,,", []string{"atlas:read"}, ""},
		{strings.Join(wf.AllScopes, ","), wf.AllScopes, ""},
		{"world:read,dragons:tame", nil, `unknown scope "dragons:tame"`},
		{"World:Read", nil, "unknown scope"},
		{"world:read world:write", nil, "unknown scope"},
		{"", nil, "no scopes given"},
		{" , ,", nil, "no scopes given"},
	}
	for _, tc := range cases {
		got, err := wf.ParseScopes(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseScopes(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.wantErr)
			} else if wf.ErrorCode(err) != wf.EBadRequest {
				t.Errorf("ParseScopes(%q): code %q, want bad_request", tc.in, wf.ErrorCode(err))
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseScopes(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestActorScopes(t *testing.T) {
	reader := &wf.Actor{UserID: "user_a", Scopes: []string{wf.ScopeWorldRead, wf.ScopeWikiRead}}
	all := &wf.Actor{UserID: "user_b", Scopes: []string{wf.ScopeAll}}
	none := &wf.Actor{UserID: "user_c"}

	for _, s := range []string{wf.ScopeWorldRead, wf.ScopeWikiRead} {
		if !reader.HasScope(s) {
			t.Errorf("reader lacks %s", s)
		}
	}
	if reader.HasScope(wf.ScopeWorldWrite) || reader.HasScope(wf.ScopeAll) {
		t.Error("reader has scopes it was not given")
	}
	for _, s := range wf.AllScopes {
		if !all.HasScope(s) {
			t.Errorf("* lacks %s", s)
		}
		if none.HasScope(s) {
			t.Errorf("scopeless actor has %s", s)
		}
	}

	// RequireScopes names every missing scope, in the order asked.
	if err := reader.RequireScopes(wf.ScopeWorldRead, wf.ScopeWikiRead); err != nil {
		t.Errorf("RequireScopes(held) = %v", err)
	}
	if err := reader.RequireScopes(); err != nil {
		t.Errorf("RequireScopes() = %v", err)
	}
	err := reader.RequireScopes(wf.ScopeAtlasRead, wf.ScopeWorldRead, wf.ScopeLoreRead)
	if err == nil || err.Error() != "missing_scopes:atlas:read,lore:read" {
		t.Errorf("RequireScopes(partly held) = %v", err)
	}
	if !errors.Is(err, &wf.Error{Code: wf.EMissingScopes}) {
		t.Errorf("RequireScopes error %v is not missing_scopes", err)
	}
	if err := all.RequireScopes(wf.ScopeQuestCommit, wf.ScopeLorePropose); err != nil {
		t.Errorf("* RequireScopes = %v", err)
	}

	// RequireAnyScope passes with one; otherwise names them all.
	if err := reader.RequireAnyScope(wf.ScopeLoreRead, wf.ScopeWorldRead); err != nil {
		t.Errorf("RequireAnyScope(one held) = %v", err)
	}
	if err := reader.RequireAnyScope(wf.ScopeLoreRead, wf.ScopeAtlasRead); err == nil || err.Error() != "missing_scopes:lore:read,atlas:read" {
		t.Errorf("RequireAnyScope(none held) = %v", err)
	}
	if err := all.RequireAnyScope(wf.ScopeLoreRead); err != nil {
		t.Errorf("* RequireAnyScope = %v", err)
	}
	if err := none.RequireAnyScope(wf.ScopeLoreRead); err == nil || err.Error() != "missing_scopes:lore:read" {
		t.Errorf("scopeless RequireAnyScope = %v", err)
	}

	// Owner.
	if id, err := reader.Owner(); id != "user_a" || err != nil {
		t.Errorf("Owner() = %q, %v", id, err)
	}
	for name, a := range map[string]*wf.Actor{"nil actor": nil, "no user": {Scopes: []string{wf.ScopeAll}}} {
		id, err := a.Owner()
		if id != "" || err == nil || err.Error() != "missing_scopes:unresolved_owner" {
			t.Errorf("%s: Owner() = %q, %v; want missing_scopes:unresolved_owner", name, id, err)
		}
	}

	// String never shows more than the ids.
	if got := (&wf.Actor{UserID: "user_a", KeyID: "key_b"}).String(); got != "user=user_a key=key_b" {
		t.Errorf("String() = %q", got)
	}
	if got := (&wf.Actor{UserID: "user_a"}).String(); got != "user=user_a session" {
		t.Errorf("String() = %q", got)
	}
}

func TestNewIDValidID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := wf.NewID("world")
		if !strings.HasPrefix(id, "world_") || len(id) != len("world_")+20 {
			t.Fatalf("NewID = %q", id)
		}
		if !wf.ValidID("world", id) {
			t.Fatalf("ValidID(world, %q) = false", id)
		}
		if wf.ValidID("quest", id) {
			t.Fatalf("ValidID(quest, %q) = true", id)
		}
		if seen[id] {
			t.Fatalf("NewID repeated %q", id)
		}
		seen[id] = true
	}
	cases := []struct {
		prefix, s string
		want      bool
	}{
		{"world", "world_abc", true},
		{"world", "world_a-b_c9", true},
		{"world", "world_" + strings.Repeat("a", 64), true},
		{"world", "world_" + strings.Repeat("a", 65), false},
		{"world", "world_", false},
		{"world", "world", false},
		{"world", "", false},
		{"world", "worldabc", false},
		{"world", "quest_abc", false},
		{"world", "world_ABC", false},
		{"world", "world_ab c", false},
		{"world", "world_é", false},
		{"world", "world_ab\x00", false},
		{"world", "xworld_abc", false},
	}
	for _, tc := range cases {
		if got := wf.ValidID(tc.prefix, tc.s); got != tc.want {
			t.Errorf("ValidID(%q, %q) = %v, want %v", tc.prefix, tc.s, got, tc.want)
		}
	}
}

func testRuntime() *wf.WorldRuntime {
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	return &wf.WorldRuntime{
		Presence:    []wf.Presence{{WorldID: "world_a", UserID: "user_p", X: 3, Y: 4, UpdatedAt: at}},
		OpenedPOIs:  []string{"poi_1"},
		PickedItems: []wf.InventoryItem{{WorldID: "world_a", UserID: "user_p", ItemID: "item_1", POIID: "poi_1", Name: "Key", PickedAt: at}},
	}
}

// objectKeys returns the keys of a JSON object in document order,
// duplicates included (json.Unmarshal into a map would hide them).
func objectKeys(t testing.TB, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s (%v)", data, err)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatalf("key of %s: %v", data, err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatalf("value of %s: %v", data, err)
		}
	}
	return keys
}

func countOf(keys []string, k string) int {
	n := 0
	for _, x := range keys {
		if x == k {
			n++
		}
	}
	return n
}

func TestMergeRuntime(t *testing.T) {
	rt := testRuntime()
	rtJSON, _ := json.Marshal(rt)
	cases := []struct {
		name string
		doc  string
		// want is the merged document without runtime, compared as decoded JSON.
		want string
	}{
		{"object (fast path)", `{"grid":{"cols":16,"rows":12},"pois":[1,2]}`, `{"grid":{"cols":16,"rows":12},"pois":[1,2]}`},
		{"empty object", `{}`, `{}`},
		{"empty object with blanks", "{ \n\t }", `{}`},
		{"object with surrounding blanks", " \n{\"a\" : 1 , \"b\":[ ]}\t\n ", `{"a":1,"b":[]}`},
		{"object holding a runtime key", `{"a":1,"runtime":{"stale":true}}`, `{"a":1}`},
		{"runtime key alone", `{"runtime":null}`, `{}`},
		{"runtime as a value only", `{"a":"runtime"}`, `{"a":"runtime"}`},
		{"nested runtime key", `{"a":{"runtime":1}}`, `{"a":{"runtime":1}}`},
		{"runtime key twice", `{"runtime":1,"b":2,"runtime":3}`, `{"b":2}`},
		{"escaped runtime key", `{"a":1,"\u0072untime":{"stale":true}}`, `{"a":1}`},
		{"escaped runtime key, other letter", `{"runtim\u0065":0}`, `{}`},
		{"Runtime is another key", `{"Runtime":1}`, `{"Runtime":1}`},
		{"empty doc", ``, `{}`},
		{"blank doc", "  \n ", `{}`},
		{"array", `[1,2,{"runtime":3}]`, `{"doc":[1,2,{"runtime":3}]}`},
		{"string", `"hello"`, `{"doc":"hello"}`},
		{"number", `42`, `{"doc":42}`},
		{"null", `null`, `{"doc":null}`},
		{"true", `true`, `{"doc":true}`},
		{"string that looks like an object", `"{}"`, `{"doc":"{}"}`},
		{"unicode and escapes", `{"név":"\"x\"\\\u00e9\n"}`, `{"név":"\"x\"\\é\n"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := wf.MergeRuntime(json.RawMessage(tc.doc), rt)
			if err != nil {
				t.Fatalf("MergeRuntime: %v", err)
			}
			if !json.Valid(got) {
				t.Fatalf("result is not valid JSON: %s", got)
			}
			if n := countOf(objectKeys(t, got), "runtime"); n != 1 {
				t.Fatalf("%d runtime keys in %s, want exactly 1", n, got)
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(got, &m); err != nil {
				t.Fatal(err)
			}
			var gotRT wf.WorldRuntime
			if err := json.Unmarshal(m["runtime"], &gotRT); err != nil || !reflect.DeepEqual(&gotRT, rt) {
				t.Errorf("runtime = %s, want %s", m["runtime"], rtJSON)
			}
			delete(m, "runtime")
			rest, _ := json.Marshal(m)
			var gotRest, wantRest any
			json.Unmarshal(rest, &gotRest)
			if err := json.Unmarshal([]byte(tc.want), &wantRest); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gotRest, wantRest) {
				t.Errorf("document = %s, want %s (full result %s)", rest, tc.want, got)
			}
		})
	}

	// An empty runtime renders as empty lists, not null.
	got, err := wf.MergeRuntime(json.RawMessage(`{"a":1}`), &wf.WorldRuntime{Presence: []wf.Presence{}, OpenedPOIs: []string{}, PickedItems: []wf.InventoryItem{}})
	if err != nil || string(got) != `{"a":1,"runtime":{"presence":[],"openedPois":[],"pickedItems":[]}}` {
		t.Errorf("empty runtime: %s, %v", got, err)
	}
	// An invalid document is an error, not invalid output.
	if got, err := wf.MergeRuntime(json.RawMessage(`{"a":`), rt); err == nil && !json.Valid(got) {
		t.Errorf("invalid doc gave invalid output %s", got)
	}
}

// checkWorldJSON decodes a WorldWithRuntimeJSON result and checks that every
// field of w is given back, the document's own keys included, with the
// runtime under json.runtime.
func checkWorldJSON(t testing.TB, out []byte, w *wf.World, rt *wf.WorldRuntime) {
	t.Helper()
	if !json.Valid(out) {
		t.Fatalf("result is not valid JSON: %q", out)
	}
	if n := countOf(objectKeys(t, out), "json"); n != 1 {
		t.Fatalf("%d json keys in %s", n, out)
	}
	var got wf.World
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("decode %s: %v", out, err)
	}
	gotDoc := got.JSON
	got.JSON = nil
	w2 := *w
	w2.JSON = nil
	if utf8.ValidString(w.Name) && utf8.ValidString(w.Template) && utf8.ValidString(w.ID) {
		if !reflect.DeepEqual(got, w2) {
			t.Errorf("world = %+v, want %+v", got, w2)
		}
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(gotDoc, &doc); err != nil {
		t.Fatalf("json is not an object: %s", gotDoc)
	}
	if n := countOf(objectKeys(t, gotDoc), "runtime"); n != 1 {
		t.Errorf("%d runtime keys in %s, want 1", n, gotDoc)
	}
	if rt != nil {
		var gotRT wf.WorldRuntime
		if err := json.Unmarshal(doc["runtime"], &gotRT); err != nil || !reflect.DeepEqual(&gotRT, rt) {
			t.Errorf("runtime = %s", doc["runtime"])
		}
	}
}

func TestWorldWithRuntimeJSON(t *testing.T) {
	rt := testRuntime()
	at := time.Date(2024, 5, 6, 7, 8, 9, 123000000, time.UTC)
	base := wf.World{ID: "world_abc", OwnerID: "user_o", Name: "Testworld", Template: "isles", Seed: -42, Cols: 16, Rows: 12,
		Version: 7, CreatedAt: at, UpdatedAt: at.Add(time.Hour)}
	cases := []struct {
		name    string
		mutate  func(w *wf.World)
		wantDoc map[string]string // keys that must be in json besides runtime, with their JSON values
	}{
		{"object doc", func(w *wf.World) { w.JSON = json.RawMessage(`{"grid":{"cols":16}}`) }, map[string]string{"grid": `{"cols":16}`}},
		{"doc with runtime key", func(w *wf.World) { w.JSON = json.RawMessage(`{"runtime":"old","x":1}`) }, map[string]string{"x": `1`}},
		{"empty doc", func(w *wf.World) { w.JSON = nil }, map[string]string{}},
		{"array doc", func(w *wf.World) { w.JSON = json.RawMessage(`[1,"two"]`) }, map[string]string{"doc": `[1,"two"]`}},
		{"string doc", func(w *wf.World) { w.JSON = json.RawMessage(`"plain"`) }, map[string]string{"doc": `"plain"`}},
		{"doc with blanks", func(w *wf.World) { w.JSON = json.RawMessage("\n  { \"a\" : [ 1 , 2 ] }  \n") }, map[string]string{"a": `[1,2]`}},
		{"name holding the placeholder", func(w *wf.World) {
			w.Name = `"json":0 x "json":0,"json":1}`
			w.JSON = json.RawMessage(`{"k":"v"}`)
		}, map[string]string{"k": `"v"`}},
		{"quotes and backslashes everywhere", func(w *wf.World) {
			w.ID = `world_"json":0`
			w.Name = `a\"b\\"json":0\`
			w.Template = `"json":0`
			w.JSON = json.RawMessage(`{"json":0,"q":"\"json\":0\\"}`)
		}, map[string]string{"json": `0`, "q": `"\"json\":0\\"`}},
		{"html characters", func(w *wf.World) { w.Name = "<b>&</b>"; w.JSON = json.RawMessage(`{"h":"<&>"}`) }, map[string]string{"h": `"<&>"`}},
		{"zero world", func(w *wf.World) { *w = wf.World{} }, map[string]string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := base
			tc.mutate(&w)
			out, err := wf.WorldWithRuntimeJSON(&w, rt)
			if err != nil {
				t.Fatalf("WorldWithRuntimeJSON: %v", err)
			}
			checkWorldJSON(t, out, &w, rt)
			var got struct {
				JSON map[string]json.RawMessage `json:"json"`
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if len(got.JSON) != len(tc.wantDoc)+1 {
				t.Errorf("json has keys %v, want %v and runtime", keysOf(got.JSON), tc.wantDoc)
			}
			for k, want := range tc.wantDoc {
				var a, b any
				json.Unmarshal(got.JSON[k], &a)
				json.Unmarshal([]byte(want), &b)
				if !reflect.DeepEqual(a, b) {
					t.Errorf("json.%s = %s, want %s", k, got.JSON[k], want)
				}
			}
		})
	}

	// The world itself is not modified.
	w := base
	w.JSON = json.RawMessage(`{"a":1}`)
	if _, err := wf.WorldWithRuntimeJSON(&w, rt); err != nil || string(w.JSON) != `{"a":1}` {
		t.Errorf("world changed: %s, %v", w.JSON, err)
	}
}

func keysOf(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// FuzzWorldWithRuntimeJSON: for any valid document and any name, the
// read_world rendering is valid JSON whose json is an object with a
// runtime key (exactly one), and the world's fields come back.
func FuzzWorldWithRuntimeJSON(f *testing.F) {
	for _, seed := range []struct{ doc, name string }{
		{`{"grid":{"cols":16,"rows":12}}`, "Testworld"},
		{`{}`, ""},
		{``, "empty"},
		{`   `, "blank"},
		{`{"runtime":1,"a":2}`, "runtime"},
		{`{"\u0072untime":1}`, "escaped"},
		{`[1,2,3]`, "array"},
		{`"str"`, `"json":0`},
		{`null`, `\"json\":0\\`},
		{` {"a" : "}" } `, "brace in string"},
		{`{"a":"\u0000\ud800"}`, "bad surrogate"},
		{"{\"\xff\":1}", "\xff\xfe"},
		{`1e999`, "huge number"},
		{`{"json":0}`, `{"json":0}`},
		{`{"a":[1,{"b":"c"}],"d":null}`, "splices"},
	} {
		f.Add([]byte(seed.doc), seed.name)
	}
	rt := testRuntime()
	f.Fuzz(func(t *testing.T, doc []byte, name string) {
		w := &wf.World{ID: "world_fuzz", OwnerID: "user_fuzz", Name: name, Seed: 1, Cols: 2, Rows: 3, Version: 4,
			CreatedAt: time.Unix(1700000000, 0).UTC(), UpdatedAt: time.Unix(1700000001, 0).UTC(), JSON: doc}
		out, err := wf.WorldWithRuntimeJSON(w, rt)
		if wf.SplicesRuntime(doc) {
			// What read_world renders for a document the store recorded
			// as spliceable must be the same bytes.
			spliced, serr := wf.SplicedWorldJSON(w, rt)
			if serr != nil || err != nil || !bytes.Equal(spliced, out) {
				t.Fatalf("SplicedWorldJSON(%q) = %q, %v; WorldWithRuntimeJSON = %q, %v", doc, spliced, serr, out, err)
			}
		}
		if !json.Valid(doc) && len(bytes.TrimSpace(doc)) > 0 {
			if err == nil && !json.Valid(out) {
				t.Fatalf("invalid doc %q gave invalid output %q", doc, out)
			}
			return
		}
		if err != nil {
			t.Fatalf("WorldWithRuntimeJSON(%q, %q): %v", doc, name, err)
		}
		checkWorldJSON(t, out, w, rt)
	})
}

// TestPOISight pins the one POI visibility rule: the owner and GMs see
// every POI, players and observers the party's only, strangers none (and
// a POI of any other visibility is the GM's).
func TestPOISight(t *testing.T) {
	gm, party, odd := &wf.POI{Visibility: wf.AudienceGM}, &wf.POI{Visibility: wf.AudienceParty}, &wf.POI{Visibility: "secret"}
	for _, c := range []struct {
		role             string
		sight            wf.POISight
		gm, party, other bool
	}{
		{wf.RoleOwner, wf.SeesAllPOIs, true, true, true},
		{wf.RoleGM, wf.SeesAllPOIs, true, true, true},
		{wf.RolePlayer, wf.SeesPartyPOIs, false, true, false},
		{wf.RoleObserver, wf.SeesPartyPOIs, false, true, false},
		{"", wf.SeesNoPOIs, false, false, false},
		{"admin", wf.SeesNoPOIs, false, false, false},
	} {
		s := wf.POISightOf(c.role)
		if s != c.sight || s.Sees(gm) != c.gm || s.Sees(party) != c.party || s.Sees(odd) != c.other {
			t.Errorf("%q: sight %d, sees gm %v party %v other %v", c.role, s, s.Sees(gm), s.Sees(party), s.Sees(odd))
		}
	}
}
