package worldjson_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"
	"unicode/utf8"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/worldjson"
)

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

func TestMerge(t *testing.T) {
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
			got, err := worldjson.Merge(json.RawMessage(tc.doc), rt)
			if err != nil {
				t.Fatalf("Merge: %v", err)
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
	got, err := worldjson.Merge(json.RawMessage(`{"a":1}`), &wf.WorldRuntime{Presence: []wf.Presence{}, OpenedPOIs: []string{}, PickedItems: []wf.InventoryItem{}})
	if err != nil || string(got) != `{"a":1,"runtime":{"presence":[],"openedPois":[],"pickedItems":[]}}` {
		t.Errorf("empty runtime: %s, %v", got, err)
	}
	// An invalid document is an error, not invalid output.
	if got, err := worldjson.Merge(json.RawMessage(`{"a":`), rt); err == nil && !json.Valid(got) {
		t.Errorf("invalid doc gave invalid output %s", got)
	}
}

// checkWorldJSON decodes a Render result and checks that every
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

func TestRender(t *testing.T) {
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
			out, err := worldjson.Render(&w, rt)
			if err != nil {
				t.Fatalf("Render: %v", err)
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
	if _, err := worldjson.Render(&w, rt); err != nil || string(w.JSON) != `{"a":1}` {
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

// FuzzRender: for any valid document and any name, the
// read_world rendering is valid JSON whose json is an object with a
// runtime key (exactly one), and the world's fields come back.
func FuzzRender(f *testing.F) {
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
		out, err := worldjson.Render(w, rt)
		if worldjson.Splices(doc) {
			// What read_world renders for a document the store recorded
			// as spliceable must be the same bytes.
			spliced, serr := worldjson.RenderSpliced(w, rt)
			if serr != nil || err != nil || !bytes.Equal(spliced, out) {
				t.Fatalf("RenderSpliced(%q) = %q, %v; Render = %q, %v", doc, spliced, serr, out, err)
			}
		}
		if !json.Valid(doc) && len(bytes.TrimSpace(doc)) > 0 {
			if err == nil && !json.Valid(out) {
				t.Fatalf("invalid doc %q gave invalid output %q", doc, out)
			}
			return
		}
		if err != nil {
			t.Fatalf("Render(%q, %q): %v", doc, name, err)
		}
		checkWorldJSON(t, out, w, rt)
	})
}
