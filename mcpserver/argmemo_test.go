package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/app"
)

// memoArgs is a memoizable argument type with a bounded field, so that
// some texts decode and some are refused.
type memoArgs struct {
	ID    string `json:"id"`
	Limit int    `json:"limit,omitempty"`
}

// memoTool declares a read-only tool over memoArgs whose body records
// the value it was given and then scribbles on it.
func memoTool(t *testing.T, seen *[]memoArgs) *toolDef {
	t.Helper()
	reg := declare("memo_probe", "test", app.Access{Tool: "memo_probe", Who: app.WhoAnyone, ReadOnly: true},
		&mcp.ToolAnnotations{ReadOnlyHint: true},
		func(s *jsonschema.Schema) {
			lim := s.Properties["limit"]
			lim.Minimum, lim.Maximum = new(1.0), new(10.0)
		},
		func(_ *Server, _ context.Context, _ *call, in *memoArgs) (any, error) {
			*seen = append(*seen, *in)
			in.ID, in.Limit = "scribbled", -1 // must not reach the next call
			return nil, nil
		})
	def, err := reg(&Server{})
	if err != nil {
		t.Fatal(err)
	}
	return def
}

// TestArgMemo: a read-only tool answers repeated argument texts from the
// memo with the value decodeArgs gives, unaffected by what an earlier
// call's body did to its copy; refused arguments are refused every time;
// many texts sharing the memo's slots each get their own value.
func TestArgMemo(t *testing.T) {
	var seen []memoArgs
	def := memoTool(t, &seen)
	ctx := context.Background()
	run := func(raw string) error {
		_, err := def.run(ctx, &call{}, json.RawMessage(raw))
		return err
	}
	for range 3 {
		if err := run(`{"id":"w1","limit":3}`); err != nil {
			t.Fatal(err)
		}
		if err := run(`{"limit":3,"id":"w1"}`); err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{`{"id":"w1","limit":30}`, `{"id":5}`, `[1]`, `{"id":"a\u0000"}`} {
			var e *worldforge.Error
			if err := run(bad); !errors.As(err, &e) || e.Code != worldforge.EBadRequest {
				t.Fatalf("%s: err %v, want bad_request", bad, err)
			}
		}
	}
	want := memoArgs{ID: "w1", Limit: 3}
	if len(seen) != 6 {
		t.Fatalf("body ran %d times, want 6", len(seen))
	}
	for i, got := range seen {
		if got != want {
			t.Fatalf("call %d got %+v, want %+v", i, got, want)
		}
	}

	// More texts than slots, each twice: every call gets its own value.
	seen = seen[:0]
	const n = 4 * argMemoSlots
	for round := range 2 {
		for i := range n {
			if err := run(fmt.Sprintf(`{"id":"w%d","limit":%d}`, i, i%10+1)); err != nil {
				t.Fatal(err)
			}
			if got, want := seen[len(seen)-1], (memoArgs{ID: fmt.Sprintf("w%d", i), Limit: i%10 + 1}); got != want {
				t.Fatalf("round %d, text %d: got %+v, want %+v", round, i, got, want)
			}
		}
	}
}

// TestArgMemoOnlyForValues: only read-only tools whose arguments copy
// without sharing get a memo.
func TestArgMemoOnlyForValues(t *testing.T) {
	for _, tc := range []struct {
		typ  reflect.Type
		want bool
	}{
		{reflect.TypeFor[worldforge.IDArgs](), true},
		{reflect.TypeFor[memoArgs](), true},
		{reflect.TypeFor[struct{ A [2]int }](), true},
		{reflect.TypeFor[struct{ P *int }](), false},
		{reflect.TypeFor[struct{ S []string }](), false},
		{reflect.TypeFor[struct{ M map[string]int }](), false},
		{reflect.TypeFor[struct{ V any }](), false},
		{reflect.TypeFor[struct{ R json.RawMessage }](), false},
		{reflect.TypeFor[struct{ N struct{ S []int } }](), false},
	} {
		if got := memoizable(tc.typ); got != tc.want {
			t.Errorf("memoizable(%v) = %v, want %v", tc.typ, got, tc.want)
		}
	}
}

// BenchmarkReadToolArgs measures a read-only tool's argument handling
// with the same text every call (the memo's case) and a new text every
// call (decodeArgs each time, plus the memo's store).
func BenchmarkReadToolArgs(b *testing.B) {
	reg := declare("memo_probe", "test", app.Access{Tool: "memo_probe", Who: app.WhoAnyone, ReadOnly: true},
		&mcp.ToolAnnotations{ReadOnlyHint: true}, nil,
		func(_ *Server, _ context.Context, _ *call, in *worldforge.IDArgs) (any, error) { return nil, nil })
	def, err := reg(&Server{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.Run("same", func(b *testing.B) {
		b.ReportAllocs()
		raw := json.RawMessage(`{"id":"world_abcdefghijklmnopqrst"}`)
		for b.Loop() {
			if _, err := def.run(ctx, &call{}, raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("new", func(b *testing.B) {
		b.ReportAllocs()
		raws := make([]json.RawMessage, 4096)
		for i := range raws {
			raws[i] = json.RawMessage(fmt.Sprintf(`{"id":"world_%020d"}`, i))
		}
		i := 0
		for b.Loop() {
			if _, err := def.run(ctx, &call{}, raws[i%len(raws)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
