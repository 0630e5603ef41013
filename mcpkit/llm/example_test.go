package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/worldforge-go/worldforge/mcpkit"
	"github.com/worldforge-go/worldforge/mcpkit/llm"
)

// An agent loop with a scripted stand-in for the model: the tools of a
// real MCP server (served over streamable HTTP on 127.0.0.1) go to the
// "model" as OpenAI tools, and each call it makes comes back as the tool
// message a host would append to the conversation.
func Example() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	type greetArgs struct {
		Name string `json:"name"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "greet", Description: "Greet someone."},
		func(_ context.Context, _ *mcp.CallToolRequest, in greetArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Hello, " + in.Name + "!"}}}, nil, nil
		})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil), ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()

	ctx := context.Background()
	fleet := mcpkit.NewFleet([]mcpkit.ServerConfig{{Name: "greeter", URL: "http://" + ln.Addr().String()}}, nil)
	defer fleet.Close()
	if err := fleet.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	bridge, err := mcpkit.Mount(ctx, fleet, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	tools, _ := llm.OpenAITools(bridge.Registry(), &llm.Options{Strict: true})
	for _, t := range tools {
		fmt.Println("tool:", t.OfFunction.Function.Name)
	}

	// What the model would send back, turn by turn.
	script := []llm.ToolCall{
		{ID: "call_1", Name: "greeter_greet", Arguments: json.RawMessage(`{"name":"Ada"}`)},
		{ID: "call_2", Name: "greeter_wave", Arguments: json.RawMessage(`{}`)},
	}
	caller := &llm.Caller{Registry: bridge.Registry()}
	for _, call := range script {
		msg := caller.Call(ctx, call).OpenAIMessage()
		fmt.Printf("%s: %s\n", msg.OfTool.ToolCallID, msg.OfTool.Content.OfString.Value)
	}
	// Output:
	// tool: greeter_greet
	// call_1: Hello, Ada!
	// call_2: Error calling tool greeter_wave (TOOL_NOT_FOUND): no such tool
}
