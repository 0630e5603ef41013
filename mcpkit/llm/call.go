package llm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/worldforge-go/worldforge/mcpkit"
)

// ToolCall is a model's call of a tool: the id the model gave it, the
// tool's name and the arguments as the JSON text the model wrote.
type ToolCall struct {
	ID        string
	Name      string
	Arguments json.RawMessage
}

// DefaultMaxBytes is Caller.MaxBytes's default: the most a result may put
// in front of the model.
const DefaultMaxBytes = 64 << 10

// Caller runs a model's tool calls on a registry's tools (local tools, and
// servers' tools through whichever client serves them).
type Caller struct {
	Registry *mcpkit.Registry
	// MaxBytes bounds a result's text and image bytes together (0:
	// DefaultMaxBytes). What does not fit is cut, with a marker saying so.
	MaxBytes int
	// Timeout bounds each call (0: only the context's deadline and the
	// client's own timeout).
	Timeout time.Duration
	// DropNulls removes the top-level arguments whose value is null before
	// the call: OpenAI strict mode sends null for an optional property the
	// model leaves out (Options.Strict), which the tool's own schema would
	// refuse.
	DropNulls bool
	// Names maps a name the model was given for a tool, where it differs
	// from the registry's (GeminiTool.Names), to the registry's name. The
	// result keeps the name the model called.
	Names map[string]string
}

// Result is a tool call's outcome ready to go back to the model: text and
// images, with IsError set when the call failed. A failure of any kind —
// arguments that are not JSON or do not match the schema, an unknown tool,
// the tool's isError, a timeout, a server not connected — is a Result
// with IsError, never a Go error, so that the model can read it and the
// loop goes on.
type Result struct {
	Call    ToolCall
	IsError bool
	// Code is the mcpkit error code of a failed call ("" for a tool that
	// answered, even with isError).
	Code mcpkit.Code
	// Parts are the text and images, in the order of the tool's content.
	Parts []Part
	// Structured is the tool's structuredContent, or nil.
	Structured any
	// Truncated is set when MaxBytes cut something.
	Truncated bool
}

// Part is one piece of a result: text, or an image (MIME type and raw
// bytes).
type Part struct {
	Text      string
	ImageMIME string
	Image     []byte
}

// Call runs call and converts the outcome; it never fails.
func (c *Caller) Call(ctx context.Context, call ToolCall) *Result {
	args := call.Arguments
	if len(strings.TrimSpace(string(args))) == 0 {
		args = json.RawMessage("{}")
	}
	if !json.Valid(args) {
		return errorResult(call, mcpkit.CodeInvalidParameters, "the arguments are not valid JSON: "+clip(string(args), 200))
	}
	if c.DropNulls {
		args = dropNulls(args)
	}
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	name := call.Name
	if orig, ok := c.Names[name]; ok {
		name = orig
	}
	res, err := c.Registry.Call(ctx, name, args)
	if err != nil {
		var me *mcpkit.Error
		switch {
		case errors.As(err, &me):
			msg := me.Message
			if me.Err != nil && me.Code != mcpkit.CodeInvalidParameters {
				msg += ": " + me.Err.Error()
			}
			return errorResult(call, me.Code, msg)
		case errors.Is(err, context.DeadlineExceeded):
			return errorResult(call, mcpkit.CodeTimeout, "the tool call timed out")
		case errors.Is(err, context.Canceled):
			return errorResult(call, mcpkit.CodeTimeout, "the tool call was cancelled")
		default:
			return errorResult(call, mcpkit.CodeServerError, err.Error())
		}
	}
	return c.convert(call, res)
}

func errorResult(call ToolCall, code mcpkit.Code, msg string) *Result {
	return &Result{Call: call, IsError: true, Code: code, Parts: []Part{{
		Text: fmt.Sprintf("Error calling tool %s (%s): %s", call.Name, code, msg),
	}}}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// dropNulls removes the null members of a JSON object (anything else is
// returned as it is).
func dropNulls(args json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return args
	}
	changed := false
	for k, v := range m {
		if string(v) == "null" {
			delete(m, k)
			changed = true
		}
	}
	if !changed {
		return args
	}
	out, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return out
}

// Convert turns a tool's result into a Result within the caller's byte
// budget (a nil result is an empty success).
func (c *Caller) Convert(call ToolCall, res *mcp.CallToolResult) *Result {
	return c.convert(call, res)
}

func (c *Caller) convert(call ToolCall, res *mcp.CallToolResult) *Result {
	r := &Result{Call: call}
	if res == nil {
		return r
	}
	r.IsError = res.IsError
	r.Structured = res.StructuredContent
	budget := c.MaxBytes
	if budget <= 0 {
		budget = DefaultMaxBytes
	}
	left := budget
	hasText := false
	addText := func(s string) {
		if r.Truncated {
			return
		}
		if len(s) > left {
			cut := left
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
			s = s[:cut] + fmt.Sprintf("\n[truncated: the result exceeded %d bytes; the rest was cut]", budget)
			r.Truncated = true
			left = 0
		} else {
			left -= len(s)
		}
		r.Parts = append(r.Parts, Part{Text: s})
	}
	for _, content := range res.Content {
		switch ct := content.(type) {
		case *mcp.TextContent:
			hasText = true
			addText(ct.Text)
		case *mcp.ImageContent:
			if r.Truncated {
				continue
			}
			if len(ct.Data) > left {
				addText(fmt.Sprintf("[image omitted (%s, %d bytes): over the %d-byte budget]", ct.MIMEType, len(ct.Data), budget))
				continue
			}
			left -= len(ct.Data)
			r.Parts = append(r.Parts, Part{ImageMIME: ct.MIMEType, Image: ct.Data})
		case *mcp.AudioContent:
			addText(fmt.Sprintf("[audio (%s, %d bytes) not shown]", ct.MIMEType, len(ct.Data)))
		case *mcp.ResourceLink:
			s := "[resource link: " + ct.URI
			if ct.Name != "" {
				s += " name=" + ct.Name
			}
			if ct.MIMEType != "" {
				s += " type=" + ct.MIMEType
			}
			if ct.Description != "" {
				s += " — " + ct.Description
			}
			addText(s + "]")
		case *mcp.EmbeddedResource:
			if rc := ct.Resource; rc != nil {
				if rc.Text != "" || rc.Blob == nil {
					hasText = true
					addText("[resource " + rc.URI + "]\n" + rc.Text)
				} else {
					addText(fmt.Sprintf("[resource %s (%s, %d bytes of binary) not shown]", rc.URI, rc.MIMEType, len(rc.Blob)))
				}
			}
		default:
			addText(fmt.Sprintf("[content of type %T not shown]", content))
		}
	}
	// Structured content goes in as JSON text when no text carries it (a
	// server should repeat it as text, but need not).
	if res.StructuredContent != nil && !hasText {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			addText(string(b))
		}
	}
	return r
}

// Text is the result's text parts joined by newlines, with a placeholder
// for each image (for the formats that take no images in a tool result).
func (r *Result) Text() string {
	var b strings.Builder
	for i, p := range r.Parts {
		if i > 0 {
			b.WriteByte('\n')
		}
		if p.Image != nil {
			fmt.Fprintf(&b, "[image (%s, %d bytes) not shown]", p.ImageMIME, len(p.Image))
			continue
		}
		b.WriteString(p.Text)
	}
	if b.Len() == 0 && r.IsError {
		return "Error: the tool failed without a message"
	}
	return b.String()
}

// OpenAIMessage is the result as a Chat Completions tool message. Tool
// messages take text only: images are named, not shown.
func (r *Result) OpenAIMessage() openai.ChatCompletionMessageParamUnion {
	return openai.ToolMessage(r.Text(), r.Call.ID)
}

// OpenAIResponsesItem is the result as a Responses API function_call_output
// input item: its output is the text, or, when the result has images, a
// list of input_text and input_image items (each image as a base64 data
// URL), which function_call_output takes.
func (r *Result) OpenAIResponsesItem() responses.ResponseInputItemUnionParam {
	if !slices.ContainsFunc(r.Parts, func(p Part) bool { return p.Image != nil }) {
		item := responses.ResponseInputItemParamOfFunctionCallOutput(r.Text())
		item.OfFunctionCallOutput.CallID = openai.String(r.Call.ID)
		return item
	}
	list := make(responses.ResponseFunctionCallOutputItemListParam, 0, len(r.Parts))
	for _, p := range r.Parts {
		if p.Image != nil {
			url := "data:" + p.ImageMIME + ";base64," + base64.StdEncoding.EncodeToString(p.Image)
			list = append(list, responses.ResponseFunctionCallOutputItemUnionParam{
				OfInputImage: &responses.ResponseInputImageContentParam{ImageURL: openai.String(url)},
			})
			continue
		}
		list = append(list, responses.ResponseFunctionCallOutputItemUnionParam{
			OfInputText: &responses.ResponseInputTextContentParam{Text: p.Text},
		})
	}
	item := responses.ResponseInputItemParamOfFunctionCallOutput(list)
	item.OfFunctionCallOutput.CallID = openai.String(r.Call.ID)
	return item
}

// AnthropicBlock is the result as a Messages API tool_result block, with
// text and image blocks.
func (r *Result) AnthropicBlock() anthropic.ContentBlockParamUnion {
	block := anthropic.ToolResultBlockParam{ToolUseID: r.Call.ID}
	if r.IsError {
		block.IsError = anthropic.Bool(true)
	}
	for _, p := range r.Parts {
		if p.Image != nil {
			block.Content = append(block.Content, anthropic.ToolResultBlockParamContentUnion{
				OfImage: &anthropic.ImageBlockParam{Source: anthropic.ImageBlockParamSourceUnion{
					OfBase64: &anthropic.Base64ImageSourceParam{Data: base64.StdEncoding.EncodeToString(p.Image), MediaType: anthropic.Base64ImageSourceMediaType(p.ImageMIME)},
				}},
			})
			continue
		}
		block.Content = append(block.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: p.Text}})
	}
	if len(block.Content) == 0 {
		block.Content = append(block.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: r.Text()}})
	}
	return anthropic.ContentBlockParamUnion{OfToolResult: &block}
}

// GeminiFunctionResponse is a Gemini functionResponse part's value.
type GeminiFunctionResponse struct {
	ID       string         `json:"id,omitempty"`
	Name     string         `json:"name"`
	Response map[string]any `json:"response"`
}

// GeminiPart is the result as a Gemini content part ({"functionResponse":
// …}): the text under "output" (or "error" for a failure) and the
// structured content, when there is some, under "structuredContent".
func (r *Result) GeminiPart() map[string]any {
	resp := map[string]any{}
	if r.IsError {
		resp["error"] = r.Text()
	} else {
		resp["output"] = r.Text()
		if r.Structured != nil {
			resp["structuredContent"] = r.Structured
		}
	}
	return map[string]any{"functionResponse": GeminiFunctionResponse{ID: r.Call.ID, Name: r.Call.Name, Response: resp}}
}
