package testserver

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Connect opens an official go-sdk client session on the MCP endpoint with
// the bearer token, speaking the given protocol revision ("" = the SDK's
// newest, which is stateless: server/discover, no initialize). The session
// is closed with the test.
func Connect(t testing.TB, endpoint, token, protocol string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "worldforge-test", Version: "0"}, nil)
	transport := &mcp.StreamableClientTransport{
		Endpoint:   endpoint,
		HTTPClient: &http.Client{Transport: &BearerTransport{Token: token}, Timeout: 30 * time.Second},
		MaxRetries: -1,
	}
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatalf("connect to %s (protocol %q): %v", endpoint, protocol, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// CallText calls a tool and returns its one text block and isError. A
// transport failure or a result that is not exactly one text block fails
// the test.
func CallText(t testing.TB, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("call %s: %d content blocks, want 1", name, len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("call %s: content is %T, want text", name, res.Content[0])
	}
	return tc.Text, res.IsError
}
