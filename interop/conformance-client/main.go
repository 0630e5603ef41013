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
// OAuth scenarios (auth/*) give the server an oauth.Config built
// from the scenario's name and MCP_CONFORMANCE_CONTEXT (pre-registered
// credentials, a private key, a workload or ID token); mcpkit does the
// whole flow, taking the authorization code from the suite's immediately
// redirecting authorization endpoint.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/worldforge-go/worldforge/mcpkit"
	"github.com/worldforge-go/worldforge/mcpkit/oauth"
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
	cfg := mcpkit.ServerConfig{Name: "conformance", URL: url, Kind: mcpkit.TransportHTTP}
	if strings.HasPrefix(scenario, "auth/") {
		o, err := oauthConfig(scenario, os.Getenv("MCP_CONFORMANCE_CONTEXT"))
		if err != nil {
			return err
		}
		cfg.OAuth = o
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
		// A canned model answer, so that the client declares sampling
		// (request-metadata checks the capability's shape).
		OnSample: func(context.Context, string, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "mcpkit-conformance-client",
				Content: &mcp.TextContent{Text: "This is a test response from the client"}, StopReason: "endTurn"}, nil
		},
	}
	c := mcpkit.NewClient(cfg, opts)
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

// oauthConfig is the OAuth configuration for an auth/* scenario: the
// defaults (dynamic registration, scopes as the server asks) unless the
// scenario hands the client credentials in its context.
func oauthConfig(scenario, contextJSON string) (*oauth.Config, error) {
	var sc struct {
		ClientID         string `json:"client_id"`
		ClientSecret     string `json:"client_secret"`
		Issuer           string `json:"issuer"`
		PrivateKeyPEM    string `json:"private_key_pem"`
		SigningAlgorithm string `json:"signing_algorithm"`
		ValidJWT         string `json:"valid_jwt"`
		IdPClientID      string `json:"idp_client_id"`
		IdPIDToken       string `json:"idp_id_token"`
		IdPTokenEndpoint string `json:"idp_token_endpoint"`
	}
	if contextJSON != "" {
		if err := json.Unmarshal([]byte(contextJSON), &sc); err != nil {
			return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	o := &oauth.Config{ClientName: "mcpkit-conformance-client"}
	switch {
	case scenario == "auth/basic-cimd":
		// The suite's authorization server never fetches the document.
		o.ClientMetadataURL = "https://conformance-test.local/client-metadata.json"
	case sc.IdPTokenEndpoint != "":
		o.Grant = oauth.JWTBearer
		o.ClientID, o.ClientSecret = sc.ClientID, sc.ClientSecret
		o.IdentityProvider = &oauth.IdentityProvider{
			TokenEndpoint: sc.IdPTokenEndpoint, ClientID: sc.IdPClientID, IDToken: sc.IdPIDToken,
		}
	case sc.ValidJWT != "":
		o.Grant = oauth.JWTBearer
		o.ClientID, o.Assertion = sc.ClientID, sc.ValidJWT
	case strings.HasPrefix(scenario, "auth/client-credentials"):
		o.Grant = oauth.ClientCredentials
		o.ClientID, o.ClientSecret = sc.ClientID, sc.ClientSecret
		o.PrivateKey, o.SigningAlgorithm = sc.PrivateKeyPEM, sc.SigningAlgorithm
	case sc.ClientID != "":
		o.ClientID, o.ClientSecret, o.Issuer = sc.ClientID, sc.ClientSecret, sc.Issuer
	}
	return o, nil
}
