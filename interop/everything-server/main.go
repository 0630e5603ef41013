// Command everything-server is the MCP conformance suite's "everything"
// fixture built on mcpkit.Provider, served over streamable HTTP (stateful
// sessions, or stateless with -stateless) on -addr (default 127.0.0.1:0). It prints one line,
// "listening on http://HOST:PORT/mcp", to stdout once it accepts
// connections, and serves until killed.
//
// Tools are mcpkit Tools added through the Provider; those that talk back
// to the client (logging, progress, sampling, elicitation, SSE stream
// closing) reach the session through mcpkit.CallToolRequest. What the
// Provider does not wrap goes to the go-sdk server: resources, resource
// templates and prompts through Provider.Server(), and the completion and
// subscription handlers and the logging capability through
// ProviderOptions.ServerOptions. The tool, resource and prompt names, the
// texts and the 2020-12 schema are what the suite's scenarios check for.
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"regexp"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/worldforge-go/worldforge/mcpkit"
)

const watchedResourceURI = "test://watched-resource"

// Base64 test files, as in the suite's TypeScript example server.
const (
	testImageBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	testAudioBase64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

func decode(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	stateless := flag.Bool("stateless", false, "serve stateless streamable HTTP (no sessions, JSON responses): the 2026-07-28 wire")
	flag.Parse()
	p, err := NewFixture(*stateless)
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go watchedResourceUpdater(ctx, p.Server())

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", p.Handler())
	fmt.Printf("listening on http://%s/mcp\n", ln.Addr())
	os.Stdout.Sync()
	log.Fatal(http.Serve(ln, mux))
}

// NewFixture returns the provider with every fixture tool, resource and
// prompt. Stateless, it serves the go-sdk's stateless streamable HTTP (no
// Mcp-Session-Id, GET and DELETE 405), which is how the go-sdk serves the
// 2026-07-28 wire, and adds the server-stateless scenario's diagnostic
// tools (statelessTools).
func NewFixture(stateless bool) (*mcpkit.Provider, error) {
	// An event store makes POST SSE streams resumable (priming event,
	// Last-Event-ID replay): server-sse-polling.
	httpOpts := &mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)}
	fixtureTools := tools()
	if stateless {
		// SSE, not JSONResponse: a JSON response drops the notifications
		// sent while the request runs (tools-call-with-progress).
		httpOpts = &mcp.StreamableHTTPOptions{Stateless: true}
		fixtureTools = append(fixtureTools, statelessTools()...)
	}
	p, err := mcpkit.NewProvider(mcp.Implementation{Name: "mcpkit-conformance-everything", Version: "0.1.0"}, &mcpkit.ProviderOptions{
		Tools: fixtureTools,
		HTTP:  httpOpts,
		ServerOptions: &mcp.ServerOptions{
			// Logging is the go-sdk's default capability; the Provider
			// advertises only tools unless told.
			Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}},
			CompletionHandler: func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
				return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}, nil
			},
			// The go-sdk tracks subscriptions itself; the handlers only
			// enable them.
			SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
			UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		},
	})
	if err != nil {
		return nil, err
	}
	addResources(p.Server())
	addPrompts(p.Server())
	return p, nil
}

func watchedResourceUpdater(ctx context.Context, s *mcp.Server) {
	t := time.NewTicker(3 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: watchedResourceURI})
		}
	}
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func fixed(res *mcp.CallToolResult) func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
	return func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) { return res, nil }
}

func emptySchema() *jsonschema.Schema { return &jsonschema.Schema{Type: "object"} }

func mustSchema(raw string) *jsonschema.Schema {
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		panic(err)
	}
	return &s
}

// session returns the request of the running call (see mcpkit.CallToolRequest).
func session(ctx context.Context) (*mcp.CallToolRequest, error) {
	req := mcpkit.CallToolRequest(ctx)
	if req == nil || req.Session == nil {
		return nil, errors.New("no session in the tool's context")
	}
	return req, nil
}

func tools() []mcpkit.Tool {
	image := &mcp.ImageContent{Data: decode(testImageBase64), MIMEType: "image/png"}
	return []mcpkit.Tool{
		{Name: "test_simple_text", Description: "Tests simple text content response", InputSchema: emptySchema(),
			Execute: fixed(text("This is a simple text response for testing."))},
		{Name: "test_image_content", Description: "Tests image content response", InputSchema: emptySchema(),
			Execute: fixed(&mcp.CallToolResult{Content: []mcp.Content{image}})},
		{Name: "test_audio_content", Description: "Tests audio content response", InputSchema: emptySchema(),
			Execute: fixed(&mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: decode(testAudioBase64), MIMEType: "audio/wav"}}})},
		{Name: "test_embedded_resource", Description: "Tests embedded resource content response", InputSchema: emptySchema(),
			Execute: fixed(&mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
				URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource"}}}})},
		{Name: "test_multiple_content_types", Description: "Tests response with multiple content types (text, image, resource)", InputSchema: emptySchema(),
			Execute: fixed(&mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "This is text content"},
				image,
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://embedded-in-multiple", MIMEType: "text/plain", Text: "This is an embedded resource"}},
			}})},
		{Name: "test_tool_with_logging", Description: "Tests tool that emits log messages during execution", InputSchema: emptySchema(),
			Execute: func(ctx context.Context, _ json.RawMessage) (*mcp.CallToolResult, error) {
				req, err := session(ctx)
				if err != nil {
					return nil, err
				}
				for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
					if i > 0 {
						time.Sleep(50 * time.Millisecond)
					}
					req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: msg})
				}
				return text("Tool with logging executed successfully"), nil
			}},
		{Name: "test_tool_with_progress", Description: "Tests tool that reports progress notifications", InputSchema: emptySchema(),
			Execute: func(ctx context.Context, _ json.RawMessage) (*mcp.CallToolResult, error) {
				req, err := session(ctx)
				if err != nil {
					return nil, err
				}
				tok := req.Params.GetProgressToken()
				for _, p := range []float64{0, 50, 100} {
					if tok != nil {
						req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
							ProgressToken: tok, Progress: p, Total: 100,
							Message: fmt.Sprintf("Completed step %.0f of %.0f", p, 100.0),
						})
					}
					time.Sleep(50 * time.Millisecond)
				}
				return text(fmt.Sprint(tok)), nil
			}},
		{Name: "test_error_handling", Description: "Tests error response handling", InputSchema: emptySchema(),
			Execute: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
				return nil, errors.New("this tool intentionally returns an error for testing")
			}},
		{Name: "test_sampling", Description: "Tests server-initiated sampling (LLM completion request)",
			InputSchema: mustSchema(`{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"]}`),
			Execute: func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
				req, err := session(ctx)
				if err != nil {
					return nil, err
				}
				var in struct{ Prompt string }
				json.Unmarshal(args, &in)
				res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{
					Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Prompt}}},
					MaxTokens: 100,
				})
				if err != nil {
					return nil, fmt.Errorf("sampling failed: %w", err)
				}
				out := "(non-text response)"
				if tc, ok := res.Content.(*mcp.TextContent); ok {
					out = tc.Text
				}
				return text("LLM response: " + out), nil
			}},
		{Name: "test_elicitation", Description: "Tests server-initiated elicitation (user input request)",
			InputSchema: mustSchema(`{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]}`),
			Execute: func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
				var in struct{ Message string }
				json.Unmarshal(args, &in)
				return elicit(ctx, in.Message, map[string]any{
					"type":       "object",
					"properties": map[string]any{"username": map[string]any{"type": "string", "description": "Your preferred username"}},
					"required":   []string{"username"},
				})
			}},
		{Name: "test_elicitation_sep1034_defaults", Description: "Tests elicitation with default values per SEP-1034", InputSchema: emptySchema(),
			Execute: func(ctx context.Context, _ json.RawMessage) (*mcp.CallToolResult, error) {
				return elicit(ctx, "Test defaults for primitives", map[string]any{
					"type": "object",
					"properties": map[string]any{
						"name":     map[string]any{"type": "string", "description": "User name", "default": "John Doe"},
						"age":      map[string]any{"type": "integer", "description": "User age", "default": 30},
						"score":    map[string]any{"type": "number", "description": "User score", "default": 95.5},
						"status":   map[string]any{"type": "string", "description": "User status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
						"verified": map[string]any{"type": "boolean", "description": "Verification status", "default": true},
					},
				})
			}},
		{Name: "test_elicitation_sep1330_enums", Description: "Tests elicitation with enum schema improvements per SEP-1330", InputSchema: emptySchema(),
			Execute: func(ctx context.Context, _ json.RawMessage) (*mcp.CallToolResult, error) {
				titled := []map[string]any{
					{"const": "value1", "title": "First Option"},
					{"const": "value2", "title": "Second Option"},
					{"const": "value3", "title": "Third Option"},
				}
				return elicit(ctx, "Test enum schemas", map[string]any{
					"type": "object",
					"properties": map[string]any{
						"untitledSingle": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}},
						"titledSingle":   map[string]any{"type": "string", "oneOf": titled},
						"legacyEnum":     map[string]any{"type": "string", "enum": []string{"opt1", "opt2", "opt3"}, "enumNames": []string{"Option One", "Option Two", "Option Three"}},
						"untitledMulti": map[string]any{"type": "array", "minItems": 1, "maxItems": 3,
							"items": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}}},
						"titledMulti": map[string]any{"type": "array", "minItems": 1, "maxItems": 3,
							"items": map[string]any{"type": "string", "anyOf": titled}},
					},
				})
			}},
		{Name: "json_schema_2020_12_tool", Description: "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613, SEP-2106)",
			InputSchema: mustSchema(schema202012),
			Execute: func(_ context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
				return text(fmt.Sprintf("JSON Schema 2020-12 tool called with: %s", args)), nil
			}},
		{Name: "test_reconnection", Description: "Tests SSE stream disconnection and client reconnection (SEP-1699). Server will close the stream mid-call and send the result after client reconnects.",
			InputSchema: emptySchema(),
			Execute: func(ctx context.Context, _ json.RawMessage) (*mcp.CallToolResult, error) {
				req, err := session(ctx)
				if err != nil {
					return nil, err
				}
				if req.Extra != nil && req.Extra.CloseSSEStream != nil {
					req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 10 * time.Millisecond})
				}
				time.Sleep(100 * time.Millisecond)
				return text("Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."), nil
			}},
	}
}

// statelessTools are the server-stateless scenario's diagnostic tools.
func statelessTools() []mcpkit.Tool {
	return []mcpkit.Tool{
		{Name: "test_missing_capability", Description: "Requires the client's sampling capability; rejects with -32021 when it is not declared", InputSchema: emptySchema(),
			Execute: func(ctx context.Context, _ json.RawMessage) (*mcp.CallToolResult, error) {
				req, err := session(ctx)
				if err != nil {
					return nil, err
				}
				if caps := req.ClientCapabilities(); caps == nil || caps.Sampling == nil {
					data, err := json.Marshal(mcp.MissingRequiredClientCapabilityData{
						RequiredCapabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}})
					if err != nil {
						return nil, err
					}
					return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities,
						Message: "this tool requires the client's sampling capability", Data: data}
				}
				return text("client declared sampling"), nil
			}},
		{Name: "test_logging_tool", Description: "Logs three messages at info level (none may reach a client that set no log level)", InputSchema: emptySchema(),
			Execute: func(ctx context.Context, _ json.RawMessage) (*mcp.CallToolResult, error) {
				req, err := session(ctx)
				if err != nil {
					return nil, err
				}
				for _, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
					req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: msg})
				}
				return text("Logging tool executed"), nil
			}},
		{Name: "test_streaming_elicitation", Description: "Asks the client for input through elicitation; no independent request may reach the response stream", InputSchema: emptySchema(),
			Execute: func(ctx context.Context, _ json.RawMessage) (*mcp.CallToolResult, error) {
				return elicit(ctx, "Please provide your username", map[string]any{
					"type":       "object",
					"properties": map[string]any{"username": map[string]any{"type": "string"}},
				})
			}},
	}
}

const schema202012 = `{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"$defs": {
		"address": {
			"$anchor": "addressDef",
			"type": "object",
			"properties": {"street": {"type": "string"}, "city": {"type": "string"}}
		}
	},
	"properties": {
		"name": {"type": "string"},
		"address": {"$ref": "#/$defs/address"},
		"contactMethod": {"type": "string", "enum": ["phone", "email"]},
		"phone": {"type": "string"},
		"email": {"type": "string"}
	},
	"allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
	"if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
	"then": {"required": ["phone"]},
	"else": {"required": ["email"]},
	"additionalProperties": false
}`

func elicit(ctx context.Context, message string, schema any) (*mcp.CallToolResult, error) {
	req, err := session(ctx)
	if err != nil {
		return nil, err
	}
	res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: message, RequestedSchema: schema})
	if err != nil {
		return nil, fmt.Errorf("elicitation failed: %w", err)
	}
	return text(fmt.Sprintf("Elicitation result: action=%s, content=%v", res.Action, res.Content)), nil
}

var templateID = regexp.MustCompile(`^test://template/([^/]+)/data$`)

func addResources(s *mcp.Server) {
	s.AddResource(&mcp.Resource{Name: "static-text", Description: "A static text resource for testing", MIMEType: "text/plain", URI: "test://static-text"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "This is the content of the static text resource."}}}, nil
		})
	s.AddResource(&mcp.Resource{Name: "static-binary", Description: "A static binary resource (image) for testing", MIMEType: "image/png", URI: "test://static-binary"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: decode(testImageBase64)}}}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "template", Description: "A resource template with parameter substitution", MIMEType: "application/json", URITemplate: "test://template/{id}/data"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := ""
			if m := templateID.FindStringSubmatch(req.Params.URI); m != nil {
				id = m[1]
			}
			body := fmt.Sprintf(`{"id": "%s", "templateTest": true, "data": "Data for ID: %s"}`, id, id)
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: body}}}, nil
		})
	s.AddResource(&mcp.Resource{Name: "watched-resource", Description: "A resource that auto-updates every 3 seconds", MIMEType: "text/plain", URI: watchedResourceURI},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "Watched resource content"}}}, nil
		})
}

func addPrompts(s *mcp.Server) {
	image := &mcp.ImageContent{Data: decode(testImageBase64), MIMEType: "image/png"}
	s.AddPrompt(&mcp.Prompt{Name: "test_simple_prompt", Title: "Simple Test Prompt", Description: "A simple prompt without arguments"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "A simple test prompt", Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "This is a simple prompt for testing."}}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_arguments", Title: "Prompt With Arguments", Description: "A prompt with required arguments",
		Arguments: []*mcp.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true},
		}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a := req.Params.Arguments
			return &mcp.GetPromptResult{Description: "A prompt with arguments", Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])}}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_embedded_resource", Title: "Prompt With Embedded Resource", Description: "A prompt that includes an embedded resource",
		Arguments: []*mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "A prompt with an embedded resource", Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: req.Params.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing."}}},
				{Role: "user", Content: &mcp.TextContent{Text: "Please process the embedded resource above."}},
			}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_image", Title: "Prompt With Image", Description: "A prompt that includes image content"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "A prompt with an image", Messages: []*mcp.PromptMessage{
				{Role: "user", Content: image},
				{Role: "user", Content: &mcp.TextContent{Text: "Please analyze the image above."}},
			}}, nil
		})
}
