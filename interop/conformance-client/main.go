// Command conformance-client is an MCP client built on mcpkit.Client for
// the MCP conformance suite's client scenarios. The suite runs it as
//
//	conformance-client <server-url>
//
// with MCP_CONFORMANCE_SCENARIO naming the scenario (and, when the suite
// was given --spec-version, MCP_CONFORMANCE_PROTOCOL_VERSION the protocol
// version to ask for). Every scenario connects over streamable HTTP,
// lists the tools and does what the scenario's server expects; the suite
// judges the traffic. It exits non-zero if the scenario's steps fail.
//
// OAuth scenarios (auth/*) are not supported: mcpkit has no OAuth client.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/worldforge-go/worldforge/mcpkit"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: conformance-client <server-url>")
		os.Exit(2)
	}
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	if err := run(scenario, os.Args[1]); err != nil {
		fmt.Fprintf(os.Stderr, "scenario %s: %v\n", scenario, err)
		os.Exit(1)
	}
}

func run(scenario, url string) error {
	if strings.HasPrefix(scenario, "auth/") {
		return fmt.Errorf("OAuth is not supported by mcpkit")
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts := &mcpkit.ClientOptions{
		Implementation:  &mcp.Implementation{Name: "mcpkit-conformance-client", Version: "0.1.0"},
		Logger:          logger,
		Timeout:         20 * time.Second,
		ProtocolVersion: os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"),
		// Accept every elicitation with no content of our own: the
		// go-sdk fills in the requested schema's defaults (SEP-1034).
		OnElicit: func(_ context.Context, _ string, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
		},
	}
	c := mcpkit.NewClient(mcpkit.ServerConfig{Name: "conformance", URL: url, Kind: mcpkit.TransportHTTP}, opts)
	defer c.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := c.Connect(ctx); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	tools, err := c.ListTools(ctx)
	if err != nil {
		return fmt.Errorf("list tools: %w", err)
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	fmt.Fprintf(os.Stderr, "tools: %v\n", names)

	call := func(name string, args any) error {
		res, err := c.CallTool(ctx, name, args)
		if err != nil {
			return fmt.Errorf("call %s: %w", name, err)
		}
		for _, ct := range res.Content {
			if t, ok := ct.(*mcp.TextContent); ok {
				fmt.Fprintf(os.Stderr, "%s: %s\n", name, t.Text)
			}
		}
		if res.IsError {
			return fmt.Errorf("call %s: tool error", name)
		}
		return nil
	}

	switch scenario {
	case "initialize", "request-metadata":
		// The handshake and tools/list are the whole scenario.
		return nil
	case "tools_call":
		return call("add_numbers", map[string]any{"a": 5, "b": 3})
	case "elicitation-sep1034-client-defaults":
		return call("test_client_elicitation_defaults", map[string]any{})
	case "sse-retry":
		return call("test_reconnection", map[string]any{})
	default:
		// An unknown scenario: call every tool without arguments.
		for _, n := range names {
			if err := call(n, map[string]any{}); err != nil {
				return err
			}
		}
		return nil
	}
}
