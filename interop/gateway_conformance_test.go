package interop

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/worldforge-go/worldforge/mcpkit"
)

// gatewayScenarios are the server scenarios a gateway passes when it only
// forwards tools: listing and calling them, whatever the content. The
// scenarios in which the upstream talks back to the client (logging,
// progress, sampling, elicitation), and those of resources, prompts,
// completions and subscriptions, need forwarding the gateway does not do
// yet.
var gatewayScenarios = []string{
	"server-initialize",
	"ping",
	"tools-list",
	"tools-call-simple-text",
	"tools-call-image",
	"tools-call-audio",
	"tools-call-embedded-resource",
	"tools-call-mixed-content",
	"tools-call-error",
	"json-schema-2020-12",
	"dns-rebinding-protection",
}

// TestGatewayConformance puts mcpkit's gateway (Mount with NoPrefix, then
// NewGateway over streamable HTTP) in front of the everything fixture as
// its only upstream and runs the tool scenarios through it: the answers
// the suite checks must survive the extra hop unchanged.
func TestGatewayConformance(t *testing.T) {
	dir, node22, suite := conformanceSuite(t)
	upstream := startProgram(t, goBuild(t, dir, "./everything-server"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	quiet := slog.New(slog.DiscardHandler)
	fleet := mcpkit.NewFleet([]mcpkit.ServerConfig{{Name: "everything", URL: upstream}},
		&mcpkit.FleetOptions{Client: &mcpkit.ClientOptions{Logger: quiet, ProtocolVersion: "2025-11-25"}})
	defer fleet.Close()
	if err := fleet.Start(ctx); err != nil {
		t.Fatal(err)
	}
	bridge, err := mcpkit.Mount(ctx, fleet, &mcpkit.BridgeOptions{NoPrefix: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if c := bridge.Collisions(); len(c) != 0 {
		t.Fatalf("collisions: %+v", c)
	}
	gw, err := mcpkit.NewGateway(bridge, &mcpkit.GatewayOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw.Handler())
	defer srv.Close()
	runServerScenarios(t, dir, node22, suite, srv.URL+"/mcp", gatewayScenarios, nil)
}
