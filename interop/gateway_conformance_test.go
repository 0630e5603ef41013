package interop

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/worldforge-go/worldforge/mcpkit"
)

// TestGatewayConformance puts mcpkit's gateway (clients made with
// GatewayClientOptions, Mount with NoPrefix, then NewGateway over
// streamable HTTP) in front of the everything fixture as its only
// upstream, and runs every server scenario the fixture passes directly
// (toolkitProviderScenarios: the suite's 31 active ones and 2 pending
// ones) against both, side by side. Through the gateway no check may fail,
// and every check that is not INFO must end as it does against the fixture
// itself: the answers, and what the upstream sends back in the course of a
// call (logging, progress, sampling, elicitation, a closed SSE stream),
// must survive the extra hop unchanged.
func TestGatewayConformance(t *testing.T) {
	dir, node22, suite := conformanceSuite(t)
	upstream := startProgram(t, goBuild(t, dir, "./everything-server"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	quiet := slog.New(slog.DiscardHandler)
	fleet := mcpkit.NewFleet([]mcpkit.ServerConfig{{Name: "everything", URL: upstream}},
		&mcpkit.FleetOptions{Client: mcpkit.GatewayClientOptions(&mcpkit.ClientOptions{Logger: quiet, ProtocolVersion: "2025-11-25"})})
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

	// Each side runs the suite's active set in one process, and the two
	// pending scenarios of toolkitProviderScenarios on their own: six
	// processes instead of 66.
	suiteRun := func(url string) (map[string][]conformanceCheck, error) {
		var errs []error
		outDir := t.TempDir()
		if _, err := run(t, dir, 4*time.Minute, node22, suite, "server",
			"--url", url, "--suite", "active", "--output-dir", outDir, "--timeout", "20000"); err != nil {
			errs = append(errs, err)
		}
		for _, sc := range []string{"json-schema-2020-12", "server-sse-polling"} {
			if _, err := run(t, dir, 60*time.Second, node22, suite, "server",
				"--url", url, "--scenario", sc, "--output-dir", outDir, "--timeout", "20000"); err != nil {
				errs = append(errs, err)
			}
		}
		return checksByScenario(t, outDir), errors.Join(errs...)
	}
	var direct, via map[string][]conformanceCheck
	var directErr, viaErr error
	var wg sync.WaitGroup
	wg.Go(func() { direct, directErr = suiteRun(upstream) })
	wg.Go(func() { via, viaErr = suiteRun(srv.URL + "/mcp") })
	wg.Wait()

	total, same := map[string]int{}, 0
	for _, sc := range toolkitProviderScenarios {
		t.Run(sc, func(t *testing.T) {
			if len(direct[sc]) == 0 {
				t.Fatalf("scenario %s: no checks recorded against the fixture (exit: %v)", sc, directErr)
			}
			for k, v := range judgeChecks(t, sc, via[sc], nil, viaErr) {
				total[k] += v
			}
			want, got := checkOutcomes(direct[sc]), checkOutcomes(via[sc])
			for _, id := range slices.Sorted(maps.Keys(want)) {
				if got[id] != want[id] {
					t.Errorf("%s: %s through the gateway, %s against the fixture", id, got[id], want[id])
				}
			}
			for _, id := range slices.Sorted(maps.Keys(got)) {
				if _, ok := want[id]; !ok {
					t.Errorf("%s: %s through the gateway, not reported against the fixture", id, got[id])
				}
			}
			if !t.Failed() {
				same++
			}
		})
	}
	if extra := slices.DeleteFunc(slices.Collect(maps.Keys(via)), func(sc string) bool { return slices.Contains(toolkitProviderScenarios, sc) }); len(extra) > 0 {
		t.Errorf("the suite ran scenarios toolkitProviderScenarios does not list: %v", extra)
	}
	t.Logf("through the gateway: %v; %d of %d scenarios end check for check as against the fixture", total, same, len(toolkitProviderScenarios))
}

// scenarioDir is the name of the directory the suite writes a scenario's
// checks.json to: server-<scenario>-<timestamp>.
var scenarioDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T[0-9-]+Z$`)

// checksByScenario reads the checks.json files the suite wrote under dir,
// by scenario.
func checksByScenario(t *testing.T, dir string) map[string][]conformanceCheck {
	t.Helper()
	out := map[string][]conformanceCheck{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		m := scenarioDir.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			continue
		}
		out[m[1]] = append(out[m[1]], readChecks(t, filepath.Join(dir, e.Name()))...)
	}
	return out
}

// checkOutcomes maps each check id that is not INFO to its statuses
// (sorted, joined: a scenario may report an id more than once).
func checkOutcomes(checks []conformanceCheck) map[string]string {
	by := map[string][]string{}
	for _, c := range checks {
		if c.Status != "INFO" {
			by[c.ID] = append(by[c.ID], c.Status)
		}
	}
	out := make(map[string]string, len(by))
	for id, st := range by {
		slices.Sort(st)
		out[id] = strings.Join(st, ",")
	}
	return out
}
