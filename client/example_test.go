package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/client"
)

// demoServer starts an in-process go-sdk MCP server on 127.0.0.1 that
// answers like WorldForge (one text block of JSON, or an error code), for
// the examples to run against.
func demoServer() *httptest.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "demo", Version: "0"}, nil)
	object := map[string]any{"type": "object"}
	srv.AddTool(&mcp.Tool{Name: wf.ToolGetWorldSummary, Description: "Summarise a world. Counts included.", InputSchema: object},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in wf.WorldArgs
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			if in.WorldID != "world_demo" {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: wf.ENotFound}}}, nil
			}
			out, _ := json.Marshal(wf.WorldSummary{WorldID: in.WorldID, Name: "Demo", WikiPages: map[string]int{"lore": 2}, WikiTotal: 2, AtlasNodes: 5})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "greet", Description: "Say hello.", InputSchema: object},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello,"}, &mcp.TextContent{Text: "traveller"}}}, nil
		})
	return httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
}

func Example() {
	ts := demoServer()
	defer ts.Close()
	ctx := context.Background()

	c, err := client.Connect(ctx, client.Options{BaseURL: ts.URL, APIKey: "wk_live_…"})
	if err != nil {
		log.Fatal(err) // a transport failure: 401, connection refused, …
	}
	defer c.Close()

	tools, err := c.ListTools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tools {
		fmt.Println(t.Name)
	}

	sum, err := c.GetWorldSummary(ctx, "world_demo")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d wiki pages, %d atlas nodes\n", sum.Name, sum.WikiTotal, sum.AtlasNodes)

	greeting, err := c.CallTool(ctx, "greet", nil) // two text blocks, joined
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q\n", greeting)
	// Output:
	// get_world_summary
	// greet
	// Demo: 2 wiki pages, 5 atlas nodes
	// "hello,\ntraveller"
}

func ExampleToolError() {
	ts := demoServer()
	defer ts.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, client.Options{BaseURL: ts.URL + "/mcp", APIKey: "wk_live_…"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	_, err = c.GetWorldSummary(ctx, "world_elsewhere")
	fmt.Println(err)
	var te *client.ToolError
	if errors.As(err, &te) {
		fmt.Println("tool:", te.Tool, "isError:", te.Result.IsError)
	}
	fmt.Println("not found:", errors.Is(err, wf.ErrNotFound), "code:", wf.ErrorCode(err))
	// Output:
	// MCP tool get_world_summary failed: not_found
	// tool: get_world_summary isError: true
	// not found: true code: not_found
}

func ExampleCallTool() {
	ts := demoServer()
	defer ts.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, client.Options{BaseURL: ts.URL, JWT: "eyJ…"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// Decode into a type of your own (here only two of the fields).
	type counts struct {
		WikiTotal  int `json:"wikiTotal"`
		AtlasNodes int `json:"atlasNodes"`
	}
	n, err := client.CallTool[counts](ctx, c, wf.ToolGetWorldSummary, wf.WorldArgs{WorldID: "world_demo"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%+v\n", n)
	// Output:
	// {WikiTotal:2 AtlasNodes:5}
}

// A token source is called once, when Connect runs.
func ExampleTokenFunc() {
	ctx := context.Background()
	c, err := client.Connect(ctx, client.Options{
		BaseURL: "http://127.0.0.1:8080",
		TokenSource: client.TokenFunc(func(ctx context.Context) (string, error) {
			tok := os.Getenv("WORLDFORGE_JWT") // or fetch one, honouring ctx
			if tok == "" {
				return "", errors.New("WORLDFORGE_JWT is not set")
			}
			return tok, nil
		}),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
}

func ExampleClient_ProposeLore() {
	ctx := context.Background()
	c, err := client.Connect(ctx, client.Options{BaseURL: "http://127.0.0.1:8080", APIKey: os.Getenv("WORLDFORGE_API_KEY")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	res, err := c.ProposeLore(ctx, "world_abc", []wf.LoreOpInput{
		{Op: "upsert", Collection: "factions", Entity: map[string]any{"id": "sentinels", "name": "Sentinels"}},
		{Op: "remove", Collection: "factions", ID: "wardens"},
	}, "replace the wardens", "")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("filed for review:", res.ProposalID)
}

func ExampleClient_Session() {
	ctx := context.Background()
	c, err := client.Connect(ctx, client.Options{BaseURL: "http://127.0.0.1:8080", APIKey: os.Getenv("WORLDFORGE_API_KEY")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// The go-sdk session, for what the client does not wrap.
	fmt.Println("protocol:", c.Session().InitializeResult().ProtocolVersion)
	for r, err := range c.Session().Resources(ctx, nil) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(r.URI)
	}
}
