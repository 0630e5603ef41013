package httpapi_test

import (
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/httpapi"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// hostCase is one request of the host-check table.
type hostCase struct {
	name, method, path, body string
	h                        http.Header
}

// everyRoute is one request for each route of s: /mcp (fast path, go-sdk
// path, a write, the stream, DELETE), every REST route of the route table,
// the probes, /metrics and an unknown path.
func everyRoute(t *testing.T, ts *testserver.Server, key string) []hostCase {
	t.Helper()
	call := func(tool, args string) string { return callBody("1", "2025-11-25", tool, args, "") }
	cases := []hostCase{
		{"POST /mcp tools/call (fast path)", "POST", "/mcp", call(wf.ToolReadWorld, mustJSON(map[string]string{"id": ts.World.ID})), headers(key, "2025-11-25", "", nil)},
		{"POST /mcp tools/call write", "POST", "/mcp", call(wf.ToolProposeQuest, `{"payload":{"name":"Rebound","json":{}},"diff_summary":"new"}`), headers(key, "2025-11-25", "", nil)},
		{"POST /mcp tools/list (go-sdk path)", "POST", "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`, headers(key, "2025-11-25", "", nil)},
		{"GET /mcp stream", "GET", "/mcp", "", http.Header{"Accept": {"text/event-stream"}, "Authorization": {"Bearer " + key}}},
		{"DELETE /mcp", "DELETE", "/mcp", "", http.Header{"Authorization": {"Bearer " + key}}},
		{"GET /healthz", "GET", "/healthz", "", nil},
		{"GET /readyz", "GET", "/readyz", "", nil},
		{"GET /metrics", "GET", "/metrics", "", nil},
		{"GET unknown path", "GET", "/nope", "", nil},
		{"POST /healthz (no such route)", "POST", "/healthz", "", nil},
	}
	bodies := map[string]string{
		"PUT /worlds/{id}/presence":     `{"x":1,"y":1}`,
		"POST /auto-accept-rules":       `{"worldId":"` + ts.World.ID + `","actorId":"` + ts.GM.ID + `","kinds":["atlas_place"]}`,
		"POST /worlds/{id}/pois/search": `{}`,
	}
	fill := strings.NewReplacer("/worlds/{id}", "/worlds/"+ts.World.ID, "{id}", "missing_0000", "{changeset}", "cs-1")
	patterns := slices.Sorted(maps.Keys(ts.API.RouteScopes()))
	if len(patterns) < 12 {
		t.Fatalf("%d REST routes, want at least the 12 of the README", len(patterns))
	}
	for _, p := range patterns {
		method, path, _ := strings.Cut(p, " ")
		h := http.Header{"Authorization": {"Bearer " + key}}
		if bodies[p] != "" {
			h.Set("Content-Type", "application/json")
		}
		cases = append(cases, hostCase{p, method, fill.Replace(path), bodies[p], h})
	}
	return cases
}

var forbiddenHostBody = regexp.MustCompile(`^\{"error":"forbidden_host"\}\n?$`)

// TestHostCheckEveryRoute: the Host/Origin check is in front of every
// route, the unauthenticated ones included: with a foreign Host (and the
// matching Origin a DNS-rebinding page sends), or a loopback Host with a
// foreign Origin, /mcp, every REST route, /healthz, /readyz, /metrics and
// an unknown path all answer 403 forbidden_host and nothing else, and
// nothing is written; with loopback names each is served by its route.
// Both stores.
func TestHostCheckEveryRoute(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		t.Parallel()
		ts := testserver.Start(t, db)
		key := ts.Key(t, ts.Owner, wf.ScopeAll)
		cases := everyRoute(t, ts, key)
		port := ts.URL[strings.LastIndex(ts.URL, ":")+1:]
		bad := []struct{ name, host, origin string }{
			{"foreign host", "attacker.example:" + port, "http://attacker.example:" + port},
			{"foreign host without origin", "attacker.example", ""},
			{"foreign origin", "", "http://attacker.example"},
		}
		before, audit := ts.Fingerprint(t), ts.AuditCount(t)
		for _, c := range cases {
			for _, b := range bad {
				r := request(t, c.method, ts.URL+c.path, "", b.host, b.origin, c.body, c.h)
				if r.status != http.StatusForbidden || !forbiddenHostBody.MatchString(r.body) {
					t.Errorf("%s, %s: %d %.200q, want 403 {\"error\":\"forbidden_host\"}", c.name, b.name, r.status, r.body)
				}
			}
		}
		if got := ts.AuditCount(t); got != audit {
			t.Errorf("refused requests wrote %d audit rows", got-audit)
		}
		if after := ts.Fingerprint(t); !maps.Equal(before, after) {
			t.Errorf("refused requests changed the store: %v → %v", before, after)
		}
		// The same requests with loopback names reach their routes.
		for _, c := range cases {
			for _, host := range []string{"", "localhost:" + port} {
				if c.method == "GET" && c.path == "/mcp" {
					// A stream stays open: read its status only.
					req, _ := http.NewRequest("GET", ts.URL+"/mcp", nil)
					req.Header = c.h.Clone()
					if host != "" {
						req.Host = host
					}
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if resp.StatusCode != 200 {
						t.Errorf("%s with Host %q: %d, want 200", c.name, host, resp.StatusCode)
					}
					continue
				}
				r := request(t, c.method, ts.URL+c.path, "", host, "http://localhost:"+port, c.body, c.h)
				if r.status == http.StatusForbidden && forbiddenHostBody.MatchString(r.body) || r.status >= 500 {
					t.Errorf("%s with Host %q: %d %.200q, want it served", c.name, host, r.status, r.body)
				}
				if c.path == "/metrics" && (r.status != 200 || !strings.Contains(r.body, "worldforge_http_requests_total")) {
					t.Errorf("GET /metrics on a loopback name: %d %.100q", r.status, r.body)
				}
			}
		}
	})
}

// TestHostCheckListedProbes: with AllowedHosts the probes and /metrics
// pass for a listed name and are refused for any other.
func TestHostCheckListedProbes(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, dbtest.Open(t))
	base := limitedServer(t, ts, httpapi.Limits{AllowedHosts: []string{"wf.example.com"}}, nil)
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		if r := request(t, "GET", base+path, "", "wf.example.com", "https://wf.example.com", "", nil); r.status != 200 {
			t.Errorf("GET %s, listed host: %d %.100q", path, r.status, r.body)
		}
		if r := request(t, "GET", base+path, "", "attacker.example", "", "", nil); r.status != 403 || !forbiddenHostBody.MatchString(r.body) {
			t.Errorf("GET %s, foreign host: %d %.100q, want 403 forbidden_host", path, r.status, r.body)
		}
	}
}

// TestSeparateMetrics: with SeparateMetrics the handler has no /metrics
// and MetricsHandler serves it, behind the same Host/Origin check, and
// nothing else.
func TestSeparateMetrics(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, dbtest.Open(t))
	api := httpapi.New(httpapi.Options{Auth: ts.Auth, MCP: ts.Tools.MCP(), Store: ts.DB, SeparateMetrics: true})
	base := testserver.Listen(t, api)
	metricsURL := testserver.Listen(t, api.MetricsHandler())
	if r := request(t, "GET", base+"/metrics", "", "", "", "", nil); r.status != http.StatusNotFound {
		t.Errorf("GET /metrics on the API listener: %d %.100q, want 404", r.status, r.body)
	}
	if r := request(t, "GET", base+"/healthz", "", "", "", "", nil); r.status != 200 {
		t.Errorf("GET /healthz on the API listener: %d", r.status)
	}
	if m := testserver.Scrape(t, metricsURL+"/metrics"); !m.Has("worldforge_http_requests_total") {
		t.Error("the metrics listener's /metrics has no worldforge_http_requests_total")
	}
	for _, c := range []struct{ host, origin string }{{"attacker.example", "http://attacker.example"}, {"", "http://attacker.example"}} {
		if r := request(t, "GET", metricsURL+"/metrics", "", c.host, c.origin, "", nil); r.status != 403 || !forbiddenHostBody.MatchString(r.body) {
			t.Errorf("GET /metrics, Host %q Origin %q: %d %.100q, want 403 forbidden_host", c.host, c.origin, r.status, r.body)
		}
	}
	for _, path := range []string{"/healthz", "/me", "/mcp"} {
		if r := request(t, "GET", metricsURL+path, "", "", "", "", nil); r.status != http.StatusNotFound {
			t.Errorf("GET %s on the metrics listener: %d, want 404", path, r.status)
		}
	}
	if h := httpapi.New(httpapi.Options{Auth: ts.Auth, MCP: ts.Tools.MCP(), Store: ts.DB, DisableMetrics: true}).MetricsHandler(); h != nil {
		t.Error("MetricsHandler with metrics disabled is not nil")
	}
}
