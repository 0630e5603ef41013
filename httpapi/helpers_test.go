package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/worldforge-go/worldforge/internal/testserver"
)

// connect opens a go-sdk client session to the server (see
// testserver.Connect).
func connect(t testing.TB, s *testserver.Server, token, protocol string) *mcp.ClientSession {
	t.Helper()
	return testserver.Connect(t, s.MCPURL(), token, protocol)
}

// callTool calls a tool and returns its one text block and isError.
var callTool = testserver.CallText

// mustDecode decodes a successful tool result.
func mustDecode(t testing.TB, text string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(text), v); err != nil {
		t.Fatalf("decode %q: %v", text, err)
	}
}

// post sends a raw JSON-RPC body to /mcp.
func post(t testing.TB, s *testserver.Server, token, body string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.MCPURL(), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// signJWT signs claims with the server's own JWT key, as the server would.
func signJWT(t testing.TB, s *testserver.Server, claims jwt.MapClaims) string {
	t.Helper()
	key, err := s.DB.Secret(context.Background(), "jwt-signing-key", nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
