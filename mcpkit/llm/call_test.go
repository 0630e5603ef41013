package llm

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/mcpkit"
)

// TestCallWorldForge routes model calls to a real WorldForge server's
// tools and checks that every failure is an error result, never a Go
// error.
func TestCallWorldForge(t *testing.T) {
	reg, client, s := worldforge(t)
	caller := &Caller{Registry: reg, DropNulls: true}
	ctx := context.Background()
	name := func(tool string) string { return mcpkit.QualifiedName("worldforge", tool, mcpkit.Qualifier) }

	ok := caller.Call(ctx, ToolCall{ID: "c1", Name: name(wf.ToolGetWorldSummary), Arguments: json.RawMessage(`{"world_id":"` + s.World.ID + `","unused":null}`)})
	if ok.IsError || !strings.Contains(ok.Text(), s.World.ID) {
		t.Fatalf("get_world_summary: %+v", ok)
	}
	checkShapes(t, ok)

	for _, tc := range []struct {
		name string
		call ToolCall
		code mcpkit.Code
		text string
	}{
		{"unknown tool", ToolCall{ID: "e1", Name: "no_such_tool", Arguments: json.RawMessage(`{}`)}, mcpkit.CodeToolNotFound, "no such tool"},
		{"not JSON", ToolCall{ID: "e2", Name: name(wf.ToolGetWorldSummary), Arguments: json.RawMessage(`{"world_id":`)}, mcpkit.CodeInvalidParameters, "not valid JSON"},
		{"schema", ToolCall{ID: "e3", Name: name(wf.ToolGetWorldSummary), Arguments: json.RawMessage(`{"world_id":5}`)}, mcpkit.CodeInvalidParameters, "do not match"},
		{"tool isError", ToolCall{ID: "e4", Name: name(wf.ToolGetWorldSummary), Arguments: json.RawMessage(`{"world_id":"nope"}`)}, "", ""},
	} {
		r := caller.Call(ctx, tc.call)
		if !r.IsError || r.Code != tc.code || !strings.Contains(r.Text(), tc.text) {
			t.Errorf("%s: %+v %q", tc.name, r, r.Text())
		}
		checkShapes(t, r)
	}

	// A closed client: NOT_CONNECTED, as a result.
	client.Close()
	r := caller.Call(ctx, ToolCall{ID: "e5", Name: name(wf.ToolGetWorldSummary), Arguments: json.RawMessage(`{"world_id":"` + s.World.ID + `"}`)})
	if !r.IsError || r.Code != mcpkit.CodeNotConnected {
		t.Errorf("closed client: %+v %q", r, r.Text())
	}
}

// TestCallTimeoutAndContent runs local tools: one that outlives the
// caller's timeout, one returning every kind of content.
func TestCallTimeoutAndContent(t *testing.T) {
	reg := mcpkit.NewRegistry()
	add := func(name string, exec func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error)) {
		t.Helper()
		if err := reg.Add(mcpkit.Tool{Name: name, InputSchema: &jsonschema.Schema{Type: "object"}, Execute: exec}); err != nil {
			t.Fatal(err)
		}
	}
	add("wait", func(ctx context.Context, _ json.RawMessage) (*mcp.CallToolResult, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Minute): // a hang the timeout must end
			return nil, nil
		}
	})
	png := []byte("\x89PNG\r\n\x1a\nfake")
	add("mixed", func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{
			Content: []mcp.Content{
				&mcp.TextContent{Text: "héllo"},
				&mcp.ImageContent{MIMEType: "image/png", Data: png},
				&mcp.ResourceLink{URI: "file:///a.txt", Name: "a", MIMEType: "text/plain"},
			},
		}, nil
	})
	add("structured", func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"n": 1}}, nil
	})
	add("big", func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("é", 100)}, &mcp.ImageContent{MIMEType: "image/png", Data: png}}}, nil
	})
	caller := &Caller{Registry: reg, Timeout: 100 * time.Millisecond, MaxBytes: 51}
	ctx := context.Background()

	if r := caller.Call(ctx, ToolCall{ID: "w", Name: "wait"}); !r.IsError || r.Code != mcpkit.CodeTimeout {
		t.Errorf("wait: %+v", r)
	}
	caller.MaxBytes = 0
	r := caller.Call(ctx, ToolCall{ID: "m", Name: "mixed"})
	if r.IsError || len(r.Parts) != 3 || r.Parts[1].ImageMIME != "image/png" || !strings.Contains(r.Parts[2].Text, "file:///a.txt") {
		t.Fatalf("mixed: %+v", r)
	}
	b, _ := json.Marshal(r.AnthropicBlock())
	if !strings.Contains(string(b), `"type":"image"`) || !strings.Contains(string(b), `"media_type":"image/png"`) {
		t.Errorf("anthropic block without the image: %s", b)
	}
	if !strings.Contains(r.Text(), "[image (image/png") {
		t.Errorf("text without an image placeholder: %q", r.Text())
	}
	// The Responses API's function_call_output takes the image itself.
	ri, _ := json.Marshal(r.OpenAIResponsesItem())
	var item struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
		Output []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			ImageURL string `json:"image_url"`
		} `json:"output"`
	}
	if err := json.Unmarshal(ri, &item); err != nil || item.Type != "function_call_output" || item.CallID != "m" || len(item.Output) != 3 ||
		item.Output[0].Type != "input_text" || item.Output[1].Type != "input_image" ||
		!strings.HasPrefix(item.Output[1].ImageURL, "data:image/png;base64,") || strings.Contains(string(ri), "not shown") {
		t.Errorf("responses item with an image: %v\n%s", err, ri)
	}
	checkShapes(t, r)

	r = caller.Call(ctx, ToolCall{ID: "s", Name: "structured"})
	if r.Text() != `{"n":1}` {
		t.Errorf("structured: %q", r.Text())
	}
	if g, _ := json.Marshal(r.GeminiPart()); !strings.Contains(string(g), `"structuredContent":{"n":1}`) {
		t.Errorf("gemini: %s", g)
	}

	caller.MaxBytes = 51
	r = caller.Call(ctx, ToolCall{ID: "b", Name: "big"})
	if !r.Truncated || len(r.Parts) != 1 || !strings.Contains(r.Parts[0].Text, "[truncated") || !strings.HasPrefix(r.Parts[0].Text, strings.Repeat("é", 25)+"\n") {
		t.Errorf("big: %+v", r)
	}
	// The image did not fit the budget: the Responses output is text.
	if ri, _ := json.Marshal(r.OpenAIResponsesItem()); !strings.Contains(string(ri), `"output":"`) || strings.Contains(string(ri), "input_image") {
		t.Errorf("responses item over budget: %s", ri)
	}
}

// checkShapes marshals every provider shape of r and reads it back into
// the SDK type.
func checkShapes(t *testing.T, r *Result) {
	t.Helper()
	back := func(v any, into any) {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("marshal %T: %v", v, err)
		}
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatalf("unmarshal into %T: %v", into, err)
		}
		if !strings.Contains(string(b), r.Call.ID) {
			t.Errorf("%T without the call id: %s", v, b)
		}
	}
	var m openai.ChatCompletionMessageParamUnion
	back(r.OpenAIMessage(), &m)
	if m.OfTool == nil || m.OfTool.ToolCallID != r.Call.ID {
		t.Errorf("openai: %+v", m)
	}
	var item responses.ResponseInputItemUnionParam
	back(r.OpenAIResponsesItem(), &item)
	if item.OfFunctionCallOutput == nil {
		t.Errorf("responses: %+v", item)
	}
	var block anthropic.ContentBlockParamUnion
	back(r.AnthropicBlock(), &block)
	if block.OfToolResult == nil || block.OfToolResult.IsError.Value != r.IsError {
		t.Errorf("anthropic: %+v", block)
	}
	var part map[string]any
	back(r.GeminiPart(), &part)
}
