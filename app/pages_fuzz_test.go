package app

import (
	"encoding/base64"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	wf "github.com/worldforge-go/worldforge"
)

// cursorShapes are the part shapes of the paged lists, by fuzz selector.
var cursorShapes = [][]keyShape{{keyTime}, {keyName}, {keyLevelName}, {keyName, keyName}}

// FuzzPageCursor decodes arbitrary cursors for every list shape: decoding
// never panics; a cursor it accepts names valid positions (an id, no NUL,
// a level in range) and, encoded again, decodes to the same positions; a
// cursor of another list is refused.
func FuzzPageCursor(f *testing.F) {
	l := newPagedList(wf.ToolListWikiPages, "world_1", "")
	for _, shapes := range cursorShapes {
		parts := make([]pagePart, len(shapes))
		for i := range parts {
			parts[i] = pagePart{key: &wf.PageKey{ID: "id_1", UpdatedAt: 1700000000000, Level: 2, Name: "Name: \"quoted\" ü"}}
		}
		if len(parts) > 1 {
			parts[1] = pagePart{done: true}
		}
		c, err := l.encode(shapes, parts)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(c)
	}
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, s := range []string{"", "x", "lore1:factions:x", `{"v":1}`, `{"v":1,"l":"","k":[{"i":"a","n":"b"}]}`,
		`{"v":1,"l":"` + l.digest + `","k":[{"i":"a","r":true}]}`, `{"v":1,"l":"` + l.digest + `","k":[{"i":"a","n":"\u0000"}]}`,
		`{"v":1,"l":"` + l.digest + `","k":[{"i":"a","n":"b"}]} x`, `{"v":1,"l":"` + l.digest + `","k":[{"e":true},{"e":true}]}`} {
		f.Add(b64(s))
	}
	other := newPagedList(wf.ToolListWikiPages, "world_2", "")
	f.Fuzz(func(t *testing.T, cursor string) {
		for _, shapes := range cursorShapes {
			parts, err := l.decode(cursor, shapes...)
			if err != nil {
				if !strings.HasPrefix(err.Error(), "bad_request: cursor") {
					t.Fatalf("refusal %q", err)
				}
				continue
			}
			if cursor == "" {
				continue
			}
			if _, err := other.decode(cursor, shapes...); err == nil {
				t.Fatalf("a cursor of world_1 accepted for world_2: %q", cursor)
			}
			fromRow := false
			for i, p := range parts {
				if p.done {
					if len(shapes) == 1 {
						t.Fatalf("a single part decoded as done: %q", cursor)
					}
					continue
				}
				k := p.key
				if k == nil || k.ID == "" || strings.ContainsRune(k.ID, 0) || strings.ContainsRune(k.Name, 0) || !utf8.ValidString(k.Name) || !utf8.ValidString(k.ID) {
					t.Fatalf("part %d of %q: bad key %+v", i, cursor, k)
				}
				if shapes[i] == keyLevelName && !k.FromRow && (k.Level < wf.MinAtlasLevel || k.Level > wf.MaxAtlasLevel) {
					t.Fatalf("part %d of %q: level %d", i, cursor, k.Level)
				}
				fromRow = fromRow || k.FromRow
			}
			if fromRow {
				continue // encode makes such keys only for long names
			}
			again, err := l.encode(shapes, parts)
			if err != nil {
				t.Fatalf("encode %+v: %v", parts, err)
			}
			parts2, err := l.decode(again, shapes...)
			if err != nil || !reflect.DeepEqual(parts, parts2) {
				t.Fatalf("round trip of %q: %+v → %q → %+v, %v", cursor, parts, again, parts2, err)
			}
		}
	})
}

// TestPageCursorLongNames: a key whose name would make the cursor longer
// than wf.MaxPageCursorLength names its row instead, and the cursor stays
// under the limit.
func TestPageCursorLongNames(t *testing.T) {
	l := newPagedList(wf.ToolListFactions, "world_1")
	long := strings.Repeat("ü", wf.MaxPageCursorLength)
	shapes := []keyShape{keyName, keyName}
	for _, parts := range [][]pagePart{
		{{key: &wf.PageKey{ID: "a", Name: long}}, {key: &wf.PageKey{ID: "b", Name: "short"}}},
		{{done: true}, {key: &wf.PageKey{ID: "b", Name: long}}},
	} {
		c, err := l.encode(shapes, parts)
		if err != nil || len(c) > wf.MaxPageCursorLength {
			t.Fatalf("encode: %d bytes, %v", len(c), err)
		}
		got, err := l.decode(c, shapes...)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range got {
			if p.done != parts[i].done {
				t.Errorf("part %d: done %v", i, p.done)
			}
			if !p.done && (!p.key.FromRow || p.key.Name != "" || p.key.ID != parts[i].key.ID) {
				t.Errorf("part %d: %+v, want row %s by reference", i, p.key, parts[i].key.ID)
			}
		}
	}
	// A key that fits keeps its name.
	c, err := l.encode(shapes, []pagePart{{key: &wf.PageKey{ID: "a", Name: strings.Repeat("x", 200)}}, {done: true}})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := l.decode(c, shapes...); err != nil || got[0].key.FromRow || len(got[0].key.Name) != 200 {
		t.Errorf("short name: %+v, %v", got[0].key, err)
	}
}
