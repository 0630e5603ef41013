package oauth

import (
	"net/url"
	"testing"
)

func TestResourceCovers(t *testing.T) {
	server, _ := url.Parse("https://mcp.example.com:443/api/mcp")
	for res, want := range map[string]bool{
		"https://mcp.example.com/api/mcp":  true,
		"https://MCP.example.com/api/mcp/": true,
		"https://mcp.example.com/api":      true,
		"https://mcp.example.com":          true,
		"https://mcp.example.com/ap":       false,
		"https://mcp.example.com/api/mcpx": false,
		"http://mcp.example.com/api/mcp":   false,
		"https://evil.example.com/api/mcp": false,
		"https://mcp.example.com/api#frag": false,
	} {
		if got := resourceCovers(res, server); got != want {
			t.Errorf("resourceCovers(%q) = %v, want %v", res, got, want)
		}
	}
}
