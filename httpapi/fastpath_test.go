package httpapi_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/httpapi"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// pair is one store and tool set behind two HTTP servers: one with the
// fast path, one that sends every request through the go-sdk handler.
type pair struct {
	ts      *testserver.Server // the fast path (testserver's default)
	sdkURL  string
	sdkAPI  *httpapi.Server
	ownerK  string // every scope
	narrowK string // campaign:read only
	// last is the fast path server's answer to the last compare.
	last answer
}

func newPair(t testing.TB) *pair {
	t.Helper()
	ts := testserver.Start(t, dbtest.Open(t))
	sdk := httpapi.New(httpapi.Options{Auth: ts.Auth, MCP: ts.Tools.MCP(), Store: ts.DB})
	return &pair{
		ts:      ts,
		sdkURL:  testserver.Listen(t, sdk) + "/mcp",
		sdkAPI:  sdk,
		ownerK:  ts.Key(t, ts.Owner, wf.ScopeAll),
		narrowK: ts.Key(t, ts.Owner, wf.ScopeCampaignRead),
	}
}

// answer is what a client sees of a response.
type answer struct {
	status int
	header http.Header
	body   string
}

func send(t testing.TB, url string, header http.Header, host, body string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header.Clone()
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	h := resp.Header.Clone()
	h.Del("Date")
	// Every response has a request id of its own (observe.go), on both
	// paths alike.
	if len(h.Values("X-Request-Id")) != 1 {
		t.Errorf("response has X-Request-Id %q, want one", h.Values("X-Request-Id"))
	}
	h.Del("X-Request-Id")
	return answer{resp.StatusCode, h, string(b)}
}

// compare sends one request to both servers and requires the same status,
// headers (but Date and X-Request-Id) and body, and the same number of
// audit rows written.
// It returns whether the fast path answered it.
func (p *pair) compare(t testing.TB, header http.Header, host, body string) bool {
	t.Helper()
	a0 := p.ts.AuditCount(t)
	want := send(t, p.sdkURL, header, host, body)
	a1 := p.ts.AuditCount(t)
	f0 := p.ts.API.FastPathCalls()
	got := send(t, p.ts.MCPURL(), header, host, body)
	p.last = got
	fast := p.ts.API.FastPathCalls() > f0
	a2 := p.ts.AuditCount(t)
	if p.sdkAPI.FastPathCalls() != 0 {
		t.Fatalf("the go-sdk-only server took the fast path")
	}
	if got.status != want.status || got.body != want.body || !maps.EqualFunc(got.header, want.header, slices.Equal) {
		t.Errorf("responses differ (fast path took it: %v)\nrequest: %s %v\ngo-sdk: %d %v\n  %s\nours:   %d %v\n  %s",
			fast, body, header, want.status, want.header, want.body, got.status, got.header, got.body)
	}
	if a1-a0 != a2-a1 {
		t.Errorf("audit rows: go-sdk path wrote %d, ours %d\nrequest: %s", a1-a0, a2-a1, body)
	}
	return fast
}

// headers builds a tools/call request's headers for protocol.
func headers(key, protocol, tool string, edit func(http.Header)) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("Authorization", "Bearer "+key)
	if protocol != "" {
		h.Set("Mcp-Protocol-Version", protocol)
	}
	if protocol >= "2026-07-28" {
		h.Set("Mcp-Method", "tools/call")
		h.Set("Mcp-Name", tool)
	}
	if edit != nil {
		edit(h)
	}
	return h
}

// callBody builds a tools/call body; params are spliced in raw, and
// protocol 2026-07-28 adds the _meta triple unless meta is given.
func callBody(id, protocol, tool, args, meta string) string {
	if meta == "" && protocol >= "2026-07-28" {
		meta = `{"io.modelcontextprotocol/protocolVersion":"` + protocol + `","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`
	}
	params := `"name":` + mustJSON(tool)
	if args != "" {
		params += `,"arguments":` + args
	}
	if meta != "" && meta != "-" {
		params = `"_meta":` + meta + `,` + params
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{` + params + `}}`
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestFastPathMatchesSDK sends a corpus of tools/call requests, valid and
// not, to the server with and without the fast path: every answer must be
// byte-identical, and the fast path must take exactly the requests it is
// meant to.
func TestFastPathMatchesSDK(t *testing.T) {
	p := newPair(t)
	ts := p.ts
	world := mustJSON(map[string]string{"id": ts.World.ID})
	type tc struct {
		name     string
		key      string
		tool     string
		id       string
		args     string
		meta     string // "" default for the protocol, "-" none
		rawBody  string // replaces the built body
		edit     func(http.Header)
		host     string
		fast     bool
		versions []string // default: all six
	}
	all := allProtocols
	legacy := allProtocols[:len(allProtocols)-1]
	newOnly := []string{"2026-07-28"}
	cases := []tc{
		// Taken by the fast path.
		{name: "read_world", tool: wf.ToolReadWorld, args: world, fast: true},
		{name: "read_world by a JWT", key: ts.Token(t, ts.Owner), tool: wf.ToolReadWorld, args: world, fast: true},
		{name: "not found", tool: wf.ToolReadWorld, args: `{"id":"world_aaaaaaaaaaaaaaaaaaaa"}`, fast: true},
		{name: "stranger's world", key: ts.Key(t, ts.Stranger, wf.ScopeAll), tool: wf.ToolReadWorld, args: world, fast: true},
		{name: "missing scope", key: p.narrowK, tool: wf.ToolGetWorldSummary, args: world, fast: true},
		{name: "missing argument", tool: wf.ToolReadWorld, args: `{}`, fast: true},
		{name: "wrong type", tool: wf.ToolReadWorld, args: `{"id":5}`, fast: true},
		{name: "unknown argument", tool: wf.ToolReadWorld, args: `{"id":"x","extra":1}`, fast: true},
		{name: "arguments an array", tool: wf.ToolReadWorld, args: `[1]`, fast: true},
		{name: "arguments null", tool: wf.ToolListCampaigns, args: `null`, fast: true},
		{name: "no arguments", tool: wf.ToolListCampaigns, fast: true},
		{name: "NUL in an argument", tool: wf.ToolSearchWikiPages, args: `{"query":"a\u0000b"}`, fast: true},
		{name: "limit out of range", tool: wf.ToolSearchWikiPages, args: `{"query":"a","limit":1000}`, fast: true},
		{name: "HTML and line separators in results", tool: wf.ToolSearchWikiPages, args: `{"query":"<&>\u2028"}`, fast: true},
		{name: "list campaigns", tool: wf.ToolListCampaigns, args: `{}`, fast: true},
		{name: "list wiki pages", tool: wf.ToolListWikiPages, args: world, fast: true},
		{name: "world summary", tool: wf.ToolGetWorldSummary, args: world, fast: true},
		{name: "search POIs", tool: wf.ToolSearchPOIs, args: `{"world_id":"` + ts.World.ID + `","request":{"name":"chest","x":3,"y":4,"radiusPx":64,"whatever":true}}`, fast: true},
		{name: "list lore", tool: wf.ToolListLore, args: world, fast: true},
		{name: "string id with HTML", id: `"<a&b>\u2028é"`, tool: wf.ToolReadWorld, args: world, fast: true},
		{name: "negative id", id: `-42`, tool: wf.ToolReadWorld, args: world, fast: true},
		{name: "fractional id", id: `1.5`, tool: wf.ToolReadWorld, args: world, fast: true},
		{name: "zero id", id: `0`, tool: wf.ToolReadWorld, args: world, fast: true},
		{name: "empty string id", id: `""`, tool: wf.ToolReadWorld, args: world, fast: true},
		{name: "whitespace around the body", rawBody: "\n  " + callBody("3", "", wf.ToolReadWorld, world, "") + "\n", fast: true, versions: legacy},
		{name: "accept */*", tool: wf.ToolReadWorld, args: world, edit: func(h http.Header) { h.Set("Accept", "*/*") }, fast: true},
		{name: "content type with charset", tool: wf.ToolReadWorld, args: world, edit: func(h http.Header) { h.Set("Content-Type", "application/json; charset=utf-8") }, fast: true},
		{name: "host localhost", tool: wf.ToolReadWorld, args: world, host: "localhost", fast: true},
		{name: "progress token", tool: wf.ToolReadWorld, args: world, meta: `{"progressToken":7}`, fast: true, versions: legacy},
		{name: "client capabilities with roots", tool: wf.ToolReadWorld, args: world, meta: `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},"sampling":{}}}`, fast: true, versions: newOnly},
		{name: "log level", tool: wf.ToolReadWorld, args: world, meta: `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"debug"}`, fast: true, versions: newOnly},

		// Left to the go-sdk.
		{name: "unknown tool", tool: "no_such_tool", args: `{}`},
		{name: "empty tool name", tool: "", args: `{}`},
		{name: "tools/list", rawBody: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, edit: func(h http.Header) { h.Set("Mcp-Method", "tools/list"); h.Del("Mcp-Name") }, versions: legacy},
		{name: "notification", rawBody: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"read_world","arguments":` + world + `}}`, versions: legacy},
		{name: "batch", rawBody: `[` + callBody("1", "", wf.ToolReadWorld, world, "") + `]`, versions: legacy},
		{name: "params null", rawBody: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`, versions: legacy},
		{name: "no params", rawBody: `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, versions: legacy},
		{name: "params an array", rawBody: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}`, versions: legacy},
		{name: "name not a string", rawBody: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}`, versions: legacy},
		{name: "name in another case", rawBody: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"read_world","arguments":` + world + `}}`, versions: legacy},
		{name: "name twice", rawBody: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5,"name":"read_world","arguments":` + world + `}}`, versions: legacy},
		{name: "extra params key", rawBody: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_world","arguments":` + world + `,"requestState":"x"}}`, versions: legacy},
		{name: "jsonrpc 1.0", rawBody: `{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"read_world","arguments":` + world + `}}`, versions: legacy},
		{name: "id an object", id: `{}`, tool: wf.ToolReadWorld, args: world},
		{name: "id null", id: `null`, tool: wf.ToolReadWorld, args: world},
		{name: "legacy request naming a protocol in _meta", tool: wf.ToolReadWorld, args: world, meta: `{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}`, versions: legacy},
		{name: "_meta not an object", tool: wf.ToolReadWorld, args: world, meta: `"x"`},
		{name: "no _meta", tool: wf.ToolReadWorld, args: world, meta: "-", versions: newOnly},
		{name: "no client capabilities", tool: wf.ToolReadWorld, args: world, meta: `{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`, versions: newOnly},
		{name: "null client capabilities", tool: wf.ToolReadWorld, args: world, meta: `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":null}`, versions: newOnly},
		{name: "bad client capabilities", tool: wf.ToolReadWorld, args: world, meta: `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":5}}`, versions: newOnly},
		{name: "bad client info", tool: wf.ToolReadWorld, args: world, meta: `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":"me"}`, versions: newOnly},
		{name: "null client info", tool: wf.ToolReadWorld, args: world, meta: `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":null}`, versions: newOnly},
		{name: "_meta version differs from the header", tool: wf.ToolReadWorld, args: world, meta: `{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}`, versions: newOnly},
		{name: "unknown _meta key", tool: wf.ToolReadWorld, args: world, meta: `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":1}`, versions: newOnly},
		{name: "Mcp-Name differs", tool: wf.ToolReadWorld, args: world, edit: func(h http.Header) { h.Set("Mcp-Name", "read_campaign") }, versions: newOnly},
		{name: "no Mcp-Method", tool: wf.ToolReadWorld, args: world, edit: func(h http.Header) { h.Del("Mcp-Method") }, versions: newOnly},
		{name: "Mcp-Method differs", tool: wf.ToolReadWorld, args: world, edit: func(h http.Header) { h.Set("Mcp-Method", "tools/list") }, versions: newOnly},
		{name: "accept JSON only", tool: wf.ToolReadWorld, args: world, edit: func(h http.Header) { h.Set("Accept", "application/json") }},
		{name: "no accept", tool: wf.ToolReadWorld, args: world, edit: func(h http.Header) { h.Del("Accept") }},
		{name: "content type text", tool: wf.ToolReadWorld, args: world, edit: func(h http.Header) { h.Set("Content-Type", "text/plain") }},
		{name: "last event id", tool: wf.ToolReadWorld, args: world, edit: func(h http.Header) { h.Set("Last-Event-ID", "x_1") }},
		{name: "foreign host", tool: wf.ToolReadWorld, args: world, host: "evil.example"},
		{name: "unsupported protocol", tool: wf.ToolReadWorld, args: world, edit: func(h http.Header) { h.Set("Mcp-Protocol-Version", "2024-01-01") }, versions: legacy},
		{name: "empty protocol header", tool: wf.ToolReadWorld, args: world, edit: func(h http.Header) { h["Mcp-Protocol-Version"] = []string{""} }, fast: true, versions: legacy},
	}
	var fastSeen, sdkSeen int
	for _, c := range cases {
		versions := c.versions
		if versions == nil {
			versions = all
		}
		for _, v := range versions {
			t.Run(c.name+"/"+cmp.Or(v, "none"), func(t *testing.T) {
				key := c.key
				if key == "" {
					key = p.ownerK
				}
				id := c.id
				if id == "" {
					id = "7"
				}
				body := c.rawBody
				if body == "" {
					body = callBody(id, v, c.tool, c.args, c.meta)
				}
				fast := p.compare(t, headers(key, v, c.tool, c.edit), c.host, body)
				if fast != c.fast {
					t.Errorf("fast path took it: %v, want %v", fast, c.fast)
				}
				if fast {
					fastSeen++
				} else {
					sdkSeen++
				}
			})
		}
	}
	t.Logf("%d requests answered by the fast path, %d by the go-sdk, all identical", fastSeen, sdkSeen)
}

// allProtocols are the values of Mcp-Protocol-Version the differential
// tests send: none (2025-03-26 by the spec's backwards-compatibility
// rule), then every revision the go-sdk supports, oldest first.
var allProtocols = []string{"", "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// FuzzFastPathRequest sends arbitrary bodies under each protocol header to
// both servers: whatever the fast path takes must be answered exactly as
// the go-sdk answers it, and no answer names Go types or packages.
func FuzzFastPathRequest(f *testing.F) {
	p := newPair(f)
	world := mustJSON(map[string]string{"id": p.ts.World.ID})
	for _, v := range []string{"", "2025-03-26", "2025-11-25", "2026-07-28"} {
		f.Add(v, callBody("1", v, wf.ToolReadWorld, world, ""))
		f.Add(v, callBody(`"x"`, v, wf.ToolSearchWikiPages, `{"query":"<>"}`, ""))
		f.Add(v, callBody("2", v, wf.ToolListCampaigns, `null`, `{"progressToken":"p"}`))
	}
	f.Add("2025-06-18", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_world","arguments":{"id":"x"},"_meta":null}}`)
	f.Add("2025-11-25", callBody("3", "2025-11-25", wf.ToolReadWorld, `{"id":"x","extra":1,"ID":"y"}`, ""))
	f.Add("2025-11-25", callBody("4", "2025-11-25", wf.ToolSearchPOIs, `{"world_id":"w","request":{"x":3.0,"y":4e0,"limit":1e400,"LIMIT":"x"}}`, ""))
	f.Add("2025-11-25", callBody("5", "2025-11-25", wf.ToolListCampaigns, `{"limit":2.5}`, ""))
	f.Add("2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}`)
	f.Fuzz(func(t *testing.T, version, body string) {
		if len(body) > 4096 || !json.Valid([]byte(body)) {
			return // invalid JSON never reaches either path
		}
		name := wf.ToolReadWorld
		var probe struct {
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(body), &probe) == nil && probe.Params.Name != "" && headerSafe(probe.Params.Name) {
			name = probe.Params.Name
		}
		h := headers(p.ownerK, "", name, nil)
		if version != "" && headerSafe(version) {
			h.Set("Mcp-Protocol-Version", version)
			if version >= "2026-07-28" {
				h.Set("Mcp-Method", "tools/call")
				h.Set("Mcp-Name", name)
			}
		}
		p.compare(t, h, "", body)
		if leak := leaksGo(p.last.body, body); leak != "" {
			t.Fatalf("body %q: the answer names Go internals (%s): %s", body, leak, p.last.body)
		}
	})
}

// TestFastPathConcurrent drives the fast path from many goroutines: each
// answer is the one its request asked for, and each success wrote exactly
// one audit row.
func TestFastPathConcurrent(t *testing.T) {
	p := newPair(t)
	world := mustJSON(map[string]string{"id": p.ts.World.ID})
	const workers, each = 16, 25
	before := p.ts.AuditCount(t)
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			for i := range each {
				id := fmt.Sprintf(`"w%d-%d"`, w, i)
				v := []string{"2025-11-25", "2026-07-28"}[i%2]
				a := send(t, p.ts.MCPURL(), headers(p.ownerK, v, wf.ToolReadWorld, nil), "", callBody(id, v, wf.ToolReadWorld, world, ""))
				if a.status != http.StatusOK || !strings.Contains(a.body, `"id":`+id) || strings.Contains(a.body, `"isError"`) {
					errs <- fmt.Errorf("request %s: %d %s", id, a.status, a.body)
					return
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := p.ts.AuditCount(t) - before; got != workers*each {
		t.Fatalf("audit rows: %d, want %d", got, workers*each)
	}
	if n := p.ts.API.FastPathCalls(); n != workers*each {
		t.Fatalf("fast path answered %d of %d", n, workers*each)
	}
}

// headerSafe reports whether s can be sent as a header value as it is.
func headerSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
