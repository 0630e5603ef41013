// Command agentloop runs a complete agent loop with mcpkit/llm: an MCP
// server (a calculator, served over streamable HTTP on 127.0.0.1), a
// fleet that connects to it, the tools converted for the Anthropic
// Messages API, and a scripted stand-in for the model that emits tool
// calls from a script — no model API is called. Each tool result is
// printed as the tool_result block a host would send back.
//
//	go run ./examples/agentloop
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/worldforge-go/worldforge/mcpkit"
	"github.com/worldforge-go/worldforge/mcpkit/llm"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "agentloop:", err)
		os.Exit(1)
	}
}

type addArgs struct {
	A float64 `json:"a" jsonschema:"the first addend"`
	B float64 `json:"b" jsonschema:"the second addend"`
}

// calculator is the MCP server the agent talks to.
func calculator() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "calc", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "add", Description: "Add two numbers."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(in.A + in.B)}}}, nil, nil
		})
	return srv
}

// script is what the stand-in model does, turn by turn: the tool calls
// it makes (the last turn makes none and ends the loop).
var script = [][]llm.ToolCall{
	{{ID: "toolu_1", Name: "calc_add", Arguments: json.RawMessage(`{"a":2,"b":40}`)}},
	{
		{ID: "toolu_2", Name: "calc_add", Arguments: json.RawMessage(`{"a":"two"}`)},  // refused by the schema
		{ID: "toolu_3", Name: "calc_multiply", Arguments: json.RawMessage(`{"a":1}`)}, // no such tool
	},
	nil,
}

func run(ctx context.Context, w io.Writer) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := calculator()
	hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil), ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()

	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	fleet := mcpkit.NewFleet([]mcpkit.ServerConfig{{Name: "calc", URL: "http://" + ln.Addr().String()}}, nil)
	defer fleet.Close()
	if err := fleet.Start(ctx); err != nil {
		return err
	}
	bridge, err := mcpkit.Mount(ctx, fleet, nil)
	if err != nil {
		return err
	}
	tools, notes := llm.AnthropicTools(bridge.Registry(), &llm.Options{ServerTag: true})
	for _, n := range notes {
		fmt.Fprintln(w, "note:", n)
	}
	for _, t := range tools {
		fmt.Fprintf(w, "tool %s: %s\n", t.OfTool.Name, t.OfTool.Description.Value)
	}

	caller := &llm.Caller{Registry: bridge.Registry(), Timeout: 10 * time.Second}
	for turn, calls := range script {
		if len(calls) == 0 {
			fmt.Fprintf(w, "turn %d: the model answers without calling a tool\n", turn+1)
			break
		}
		for _, call := range calls {
			res := caller.Call(ctx, call)
			block, err := json.Marshal(res.AnthropicBlock())
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "turn %d: %s(%s) -> %s\n", turn+1, call.Name, call.Arguments, block)
		}
	}
	return nil
}
