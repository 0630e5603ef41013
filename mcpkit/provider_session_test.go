package mcpkit

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProviderCallToolRequestAndServerOptions checks that a tool reaches
// its calling session through CallToolRequest (progress here) and that
// ProviderOptions.ServerOptions reach the go-sdk server (a completion
// handler and the logging capability) without losing the tools
// capability.
func TestProviderCallToolRequestAndServerOptions(t *testing.T) {
	if CallToolRequest(context.Background()) != nil {
		t.Fatal("CallToolRequest outside a call is not nil")
	}
	p, err := NewProvider(mcp.Implementation{}, &ProviderOptions{
		ServerOptions: &mcp.ServerOptions{
			Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}},
			CompletionHandler: func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
				return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{"x"}}}, nil
			},
		},
		Tools: []Tool{{
			Name: "progress",
			Execute: func(ctx context.Context, _ json.RawMessage) (*mcp.CallToolResult, error) {
				req := CallToolRequest(ctx)
				if req == nil {
					return errorResult("no request in context"), nil
				}
				err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: req.Params.GetProgressToken(), Progress: 1, Total: 2,
				})
				if err != nil {
					return nil, err
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *mcp.ProgressNotificationParams, 10)
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			got <- r.Params
		},
	})
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Serve(ctx, st)
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: legacyProtocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	caps := cs.InitializeResult().Capabilities
	if caps.Tools == nil || !caps.Tools.ListChanged || caps.Logging == nil || caps.Completions == nil {
		t.Errorf("capabilities = %+v, want tools (list_changed), logging and completions", caps)
	}
	params := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{}}
	params.SetProgressToken("tok")
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("tool failed: %v", res.Content[0].(*mcp.TextContent).Text)
	}
	// The notification may be handled after the result arrives.
	select {
	case p := <-got:
		if p.ProgressToken != "tok" || p.Progress != 1 {
			t.Errorf("progress notification = %+v, want token tok, progress 1", p)
		}
	case <-time.After(5 * time.Second):
		t.Error("no progress notification")
	}
	comp, err := cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "p"},
		Argument: mcp.CompleteParamsArgument{Name: "a", Value: ""},
	})
	if err != nil || len(comp.Completion.Values) != 1 {
		t.Errorf("complete = %+v, %v", comp, err)
	}
}
