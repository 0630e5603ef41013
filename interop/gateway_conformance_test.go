package interop

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/worldforge-go/worldforge/mcpkit"
)

// gatewayScenarios are the server scenarios a gateway passes when it
// forwards tools, resources and prompts: listing and calling tools,
// whatever the content, listing and reading resources, listing and
// getting prompts. The scenarios in which the upstream talks back to the
// client (logging, progress, sampling, elicitation), and those of resource
// templates, completions and subscriptions, need forwarding the gateway
// does not do yet.
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
	"resources-list",
	"resources-read-text",
	"resources-read-binary",
	"prompts-list",
	"prompts-get-simple",
	"prompts-get-with-args",
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
