package llm

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/worldforge-go/worldforge/mcpkit"
)

// TestGeminiName: valid names pass unchanged; every other name becomes
// one that follows Gemini's rule.
func TestGeminiName(t *testing.T) {
	long := strings.Repeat("a", 70)
	for _, tc := range []struct{ in, want string }{
		{"read_world", "read_world"},
		{"ns.tool:v1-x", "ns.tool:v1-x"},
		{"_private", "_private"},
		{"1st_tool", "_1st_tool"},
		{"-dash", "_-dash"},
		{".dot", "_.dot"},
		{"a/b c", "a_b_c"},
		{"héllo", "h_llo"},
		{"日本", "__"},
		{"", "_"},
		{strings.Repeat("a", 64), strings.Repeat("a", 64)},
	} {
		if got := GeminiName(tc.in); got != tc.want {
			t.Errorf("GeminiName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	g1, g2 := GeminiName(long), GeminiName(long+"b")
	if len(g1) != 64 || len(g2) != 64 || g1 == g2 || !validGeminiName(g1) {
		t.Errorf("long names: %q, %q", g1, g2)
	}
	for _, in := range []string{"1", "-", "a b", "x/y/z", long, "ü", "a\x00b"} {
		if g := GeminiName(in); !validGeminiName(g) {
			t.Errorf("GeminiName(%q) = %q, not valid", in, g)
		}
	}
}

// TestGeminiNamesRoundTrip: tools whose names Gemini refuses are declared
// under names it takes, distinct even where two would clash, and a call
// by the declared name reaches the right tool through Caller.Names.
func TestGeminiNamesRoundTrip(t *testing.T) {
	reg := mcpkit.NewRegistry()
	for _, name := range []string{"1st_tool", "_1st_tool", "-x", "ok"} {
		name := name
		err := reg.Add(mcpkit.Tool{Name: name, Execute: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "I am " + name}}}, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	gt, notes := GeminiTools(reg, nil)
	seen := map[string]bool{}
	for _, d := range gt.FunctionDeclarations {
		if !validGeminiName(d.Name) || seen[d.Name] {
			t.Errorf("declared name %q invalid or repeated", d.Name)
		}
		seen[d.Name] = true
	}
	if len(gt.Names) != 2 || len(notes) != 2 {
		t.Errorf("names %v, notes %v; want the two invalid names mapped and noted", gt.Names, notes)
	}
	if b, _ := json.Marshal(gt); strings.Contains(string(b), "Names") {
		t.Errorf("Names went into the JSON: %s", b)
	}
	c := &Caller{Registry: reg, Names: gt.Names}
	for _, d := range gt.FunctionDeclarations {
		orig := gt.Original(d.Name)
		r := c.Call(context.Background(), ToolCall{ID: "1", Name: d.Name})
		if r.IsError || r.Text() != "I am "+orig {
			t.Errorf("call %s (%s): %+v", d.Name, orig, r)
		}
		if part := r.GeminiPart()["functionResponse"].(GeminiFunctionResponse); part.Name != d.Name {
			t.Errorf("functionResponse name %q, want the declared %q", part.Name, d.Name)
		}
	}
	// A name the model made up is still an unknown tool, as an error result.
	if r := c.Call(context.Background(), ToolCall{Name: "nope"}); !r.IsError || r.Code != mcpkit.CodeToolNotFound {
		t.Errorf("unknown tool: %+v", r)
	}
}

// FuzzGeminiName: whatever the name, the result follows Gemini's rule,
// and a valid name is kept.
func FuzzGeminiName(f *testing.F) {
	for _, s := range []string{"read_world", "1st", "-", "a/b", "日本", strings.Repeat("x", 80), ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		g := GeminiName(name)
		if !validGeminiName(g) {
			t.Fatalf("GeminiName(%q) = %q, not valid", name, g)
		}
		if validGeminiName(name) && g != name {
			t.Fatalf("valid %q changed to %q", name, g)
		}
	})
}
