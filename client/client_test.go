package client_test

// The client against the real server (internal/testserver: the SQLite store,
// the real authenticator, MCP server and HTTP handler on 127.0.0.1:0), and,
// for the envelope shapes WorldForge never sends, against a small go-sdk
// fixture server.

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/client"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// recorder is an http.RoundTripper that records every request's
// Authorization header and path before passing it on to a transport of
// its own.
type recorder struct {
	mu    sync.Mutex
	base  *http.Transport
	auth  []string
	paths []string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.auth = append(r.auth, req.Header.Get("Authorization"))
	r.paths = append(r.paths, req.URL.Path)
	if r.base == nil {
		r.base = http.DefaultTransport.(*http.Transport).Clone()
	}
	base := r.base
	r.mu.Unlock()
	return base.RoundTrip(req)
}

// hostRewriter sends every request with another Host header.
type hostRewriter struct {
	host string
	base http.RoundTripper
}

func (h hostRewriter) RoundTrip(req *http.Request) (*http.Response, error) {
	r2 := req.Clone(req.Context())
	r2.Host = h.host
	return h.base.RoundTrip(r2)
}

func (r *recorder) CloseIdleConnections() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.base != nil {
		r.base.CloseIdleConnections()
	}
}

func (r *recorder) requests() (auth, paths []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.auth), slices.Clone(r.paths)
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// connect connects with opts and closes the client with the test. Unless
// opts has an HTTP client, it gets one with a transport of its own.
//
// The client's idle connections are closed with it, before the server
// (started earlier, so cleaned up later) shuts down: http.Server.Shutdown
// waits up to 5 s for a connection that never sent a request, and the
// transport sometimes dials a spare one that it then keeps idle.
func connect(t *testing.T, opts client.Options) *client.Client {
	t.Helper()
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Transport: &recorder{}}
	}
	c, err := client.Connect(testContext(t), opts)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() {
		c.Close()
		opts.HTTPClient.CloseIdleConnections()
	})
	return c
}

// protocols are the revisions every server test runs with: the go-sdk's
// default (stateless 2026-07-28) and the initialize-based 2025-11-25.
var protocols = []string{"", "2025-11-25"}

func protocolName(p string) string {
	if p == "" {
		return "default"
	}
	return p
}

// TestHelpers calls every typed helper against the seeded world, on both
// protocol revisions.
func TestHelpers(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, dbtest.Open(t))
	key := s.Key(t, s.Owner, wf.ScopeAll)
	for _, proto := range protocols {
		t.Run(protocolName(proto), func(t *testing.T) {
			ctx := testContext(t)
			c := connect(t, client.Options{BaseURL: s.URL, APIKey: key, ProtocolVersion: proto})

			w, err := c.ReadWorld(ctx, s.World.ID)
			if err != nil {
				t.Fatalf("ReadWorld: %v", err)
			}
			if w.ID != s.World.ID || w.Name != "Testworld" || w.OwnerID != s.Owner.ID || w.Cols != 16 || w.Rows != 12 || w.Version != 1 {
				t.Errorf("ReadWorld = %+v", w)
			}
			var doc struct {
				Grid    map[string]int  `json:"grid"`
				Runtime json.RawMessage `json:"runtime"`
			}
			if err := json.Unmarshal(w.JSON, &doc); err != nil || doc.Grid["cols"] != 16 || doc.Runtime == nil {
				t.Errorf("ReadWorld json = %s (%v), want the grid and the runtime merged in", w.JSON, err)
			}

			sum, err := c.GetWorldSummary(ctx, s.World.ID)
			if err != nil {
				t.Fatalf("GetWorldSummary: %v", err)
			}
			wantSum := &wf.WorldSummary{WorldID: s.World.ID, Name: "Testworld", WikiTotal: 1, AtlasNodes: 1,
				WikiPages: map[string]int{wf.WikiKindLore: 0, wf.WikiKindFaction: 1, wf.WikiKindPlace: 0, wf.WikiKindQuestLog: 0}}
			if diff := cmp.Diff(wantSum, sum); diff != "" {
				t.Errorf("GetWorldSummary (-want +got):\n%s", diff)
			}

			lore, err := c.ListLore(ctx, s.World.ID)
			if err != nil {
				t.Fatalf("ListLore: %v", err)
			}
			if len(lore.Lore) != len(wf.LoreCollections) || len(lore.Lore["factions"]) != 1 || lore.Counts["factions"] != 1 || len(lore.Presets) == 0 {
				t.Errorf("ListLore = %d collections, factions %s, counts %v, %d presets", len(lore.Lore), lore.Lore["factions"], lore.Counts, len(lore.Presets))
			}
			coll, err := c.ListLoreCollection(ctx, s.World.ID, "factions")
			if err != nil {
				t.Fatalf("ListLoreCollection: %v", err)
			}
			if coll.Collection != "factions" || len(coll.Items) != 1 || !strings.Contains(string(coll.Items[0]), `"wardens"`) {
				t.Errorf("ListLoreCollection = %+v", coll)
			}
			if _, err := c.ListLoreCollection(ctx, s.World.ID, ""); err == nil {
				t.Error("ListLoreCollection with no collection succeeded")
			}

			pages, err := c.ListWikiPages(ctx, s.World.ID, "")
			if err != nil || len(pages.Pages) != 1 || pages.Pages[0].ID != s.Page.ID || pages.Pages[0].Title != "The Wardens" {
				t.Errorf("ListWikiPages(all) = %+v, %v", pages, err)
			}
			pages, err = c.ListWikiPages(ctx, s.World.ID, wf.WikiKindPlace)
			if err != nil || pages.Pages == nil || len(pages.Pages) != 0 {
				t.Errorf("ListWikiPages(place) = %+v, %v; want an empty list", pages, err)
			}
			pages, err = c.ListWikiPages(ctx, s.World.ID, wf.WikiKindFaction)
			if err != nil || len(pages.Pages) != 1 {
				t.Errorf("ListWikiPages(faction) = %+v, %v", pages, err)
			}
			if _, err := c.ListWikiPages(ctx, s.World.ID, "villain"); err == nil || !strings.Contains(err.Error(), "quest-log") {
				t.Errorf("ListWikiPages(villain): %v, want the kinds named", err)
			}
			if pages.NextCursor != "" {
				t.Errorf("ListWikiPages(faction): a cursor %q on a list of one", pages.NextCursor)
			}
			if _, err := c.ListWikiPagesFrom(ctx, s.World.ID, "", "not a cursor"); wf.ErrorCode(err) != wf.EBadRequest {
				t.Errorf("ListWikiPagesFrom(bad cursor): %v, want bad_request", err)
			}

			pois, err := c.SearchPOIs(ctx, s.World.ID, wf.POIQuery{Name: "chest"})
			if err != nil || len(pois.POIs) != 1 || pois.POIs[0].ID != s.POI.ID {
				t.Errorf("SearchPOIs(name) = %+v, %v", pois, err)
			}
			// The POI's cell (3,4) has its centre at (112,144) px.
			x, y, r := 100, 140, 20.0
			pois, err = c.SearchPOIs(ctx, s.World.ID, wf.POIQuery{Category: "container", Tags: []string{"loot"}, X: &x, Y: &y, RadiusPx: &r, Limit: 5})
			if err != nil || len(pois.POIs) != 1 {
				t.Errorf("SearchPOIs(near) = %+v, %v", pois, err)
			}
			far := 0
			pois, err = c.SearchPOIs(ctx, s.World.ID, wf.POIQuery{X: &far, Y: &far, RadiusPx: &r})
			if err != nil || pois.POIs == nil || len(pois.POIs) != 0 {
				t.Errorf("SearchPOIs(far) = %+v, %v; want an empty list", pois, err)
			}
			pois, err = c.SearchPOIs(ctx, s.World.ID, wf.POIQuery{})
			if err != nil || len(pois.POIs) != 1 {
				t.Errorf("SearchPOIs(all) = %+v, %v", pois, err)
			}
			if _, err := c.SearchPOIs(ctx, s.World.ID, wf.POIQuery{X: &x}); !isToolError(err, wf.ToolSearchPOIs) || wf.ErrorCode(err) != wf.EBadRequest {
				t.Errorf("SearchPOIs(x without y): %v, want a bad_request tool error", err)
			}

			ops := []wf.LoreOpInput{
				{Op: "upsert", Collection: "factions", Entity: map[string]any{"id": "sentinels", "name": "Sentinels"}},
				{Op: "remove", Collection: "factions", ID: "wardens"},
			}
			prop, err := c.ProposeLore(ctx, s.World.ID, ops, "swap the wardens for the sentinels", "cs-"+protocolName(proto))
			if err != nil {
				t.Fatalf("ProposeLore: %v", err)
			}
			if prop.ProposalID == "" || prop.AuditID != prop.ProposalID || prop.WorldID != s.World.ID || prop.ChangesetID != "cs-"+protocolName(proto) || prop.AutoAccepted != nil {
				t.Errorf("ProposeLore = %+v", prop)
			}
			stored, err := s.DB.FindProposal(ctx, prop.ProposalID)
			if err != nil || stored.Status != wf.ProposalPending {
				t.Errorf("the proposal in the store: %+v, %v; want it pending", stored, err)
			}
			prop, err = c.ProposeLore(ctx, s.World.ID, ops[:1], "no changeset", "")
			if err != nil || prop.ChangesetID != "" {
				t.Errorf("ProposeLore without a changeset = %+v, %v", prop, err)
			}
			if _, err := c.ProposeLore(ctx, s.World.ID, nil, "nothing", ""); !isToolError(err, wf.ToolProposeLore) || wf.ErrorCode(err) != wf.EBadRequest {
				t.Errorf("ProposeLore with no operations: %v, want a bad_request tool error", err)
			}
		})
	}
}

func isToolError(err error, tool string) bool {
	var te *client.ToolError
	return errors.As(err, &te) && te.Tool == tool
}

// TestListTools checks the inventory: every tool has a description, and
// the helpers' tools are there.
func TestListTools(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, dbtest.Open(t))
	c := connect(t, client.Options{BaseURL: s.MCPURL(), JWT: s.Token(t, s.Player)})
	tools, err := c.ListTools(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 31 {
		t.Errorf("%d tools, want 31", len(tools))
	}
	var names []string
	for _, tool := range tools {
		if tool.Description == "" {
			t.Errorf("tool %s has no description", tool.Name)
		}
		names = append(names, tool.Name)
	}
	for _, want := range []string{wf.ToolReadWorld, wf.ToolGetWorldSummary, wf.ToolListLore, wf.ToolProposeLore, wf.ToolListWikiPages, wf.ToolSearchPOIs} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s", want)
		}
	}
}

// TestToolError checks tool failures from the real server: a *ToolError from
// CallTool, CallToolRaw, CallToolInto and the helpers, matchable by code.
func TestToolError(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, dbtest.Open(t))
	ctx := testContext(t)
	c := connect(t, client.Options{BaseURL: s.URL, APIKey: s.Key(t, s.Owner, wf.ScopeWikiRead)})
	args := map[string]any{"id": "world_aaaaaaaaaaaaaaaaaaaa"}

	checkMissing := func(name string, err error) {
		t.Helper()
		var te *client.ToolError
		if !errors.As(err, &te) {
			t.Fatalf("%s: %T %v, want a *ToolError", name, err, err)
		}
		if te.Tool != wf.ToolReadWorld || te.Result == nil || !te.Result.IsError {
			t.Errorf("%s: ToolError{Tool %q, Result %+v}", name, te.Tool, te.Result)
		}
		if got, want := err.Error(), "MCP tool read_world failed: missing_scopes:world:read"; got != want {
			t.Errorf("%s: message %q, want %q", name, got, want)
		}
		if !errors.Is(err, wf.MissingScopes(wf.ScopeWorldRead)) || wf.ErrorCode(err) != wf.EMissingScopes {
			t.Errorf("%s: %v does not match missing_scopes:world:read", name, err)
		}
	}
	v, err := c.CallTool(ctx, wf.ToolReadWorld, args)
	if v != nil {
		t.Errorf("CallTool returned %v with its error", v)
	}
	checkMissing("CallTool", err)
	raw, err := c.CallToolRaw(ctx, wf.ToolReadWorld, args)
	if raw != nil {
		t.Errorf("CallToolRaw returned %+v with its error", raw)
	}
	checkMissing("CallToolRaw", err)
	var w wf.World
	checkMissing("CallToolInto", c.CallToolInto(ctx, wf.ToolReadWorld, args, &w))
	_, err = client.CallTool[wf.World](ctx, c, wf.ToolReadWorld, args)
	checkMissing("CallTool[T]", err)
	_, err = c.ReadWorld(ctx, s.World.ID)
	checkMissing("ReadWorld", err)

	// With the scope, an unknown id is not_found, the same sentinel the
	// server uses.
	c = connect(t, client.Options{BaseURL: s.URL, APIKey: s.Key(t, s.Owner, wf.ScopeWorldRead)})
	_, err = c.ReadWorld(ctx, "world_aaaaaaaaaaaaaaaaaaaa")
	if !isToolError(err, wf.ToolReadWorld) || !errors.Is(err, wf.ErrNotFound) || err.Error() != "MCP tool read_world failed: not_found" {
		t.Errorf("ReadWorld(unknown): %v", err)
	}
	// Another owner's world answers not_found too.
	c = connect(t, client.Options{BaseURL: s.URL, JWT: s.Token(t, s.Stranger)})
	if _, err := c.GetWorldSummary(ctx, s.World.ID); !errors.Is(err, wf.ErrNotFound) {
		t.Errorf("GetWorldSummary as a stranger: %v, want not_found", err)
	}

	// An unknown tool is a protocol error (JSON-RPC), not a tool result.
	if _, err := c.CallTool(ctx, "no_such_tool", nil); err == nil || isToolError(err, "no_such_tool") {
		t.Errorf("unknown tool: %T %v, want a protocol error", err, err)
	}
}

// TestTransportErrors checks that a 401 and a refused connection come out
// of Connect as transport errors, never as a *ToolError.
func TestTransportErrors(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, dbtest.Open(t))
	revoked := s.Key(t, s.Owner, wf.ScopeAll)
	if err := s.Auth.RevokeKey(context.Background(), revoked); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	ln.Close()

	for _, proto := range protocols {
		for _, tc := range []struct {
			name string
			opts client.Options
			want string
		}{
			{"unknown key", client.Options{BaseURL: s.URL, APIKey: "wk_live_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}, "Unauthorized"},
			{"revoked key", client.Options{BaseURL: s.URL, APIKey: revoked}, "Unauthorized"},
			{"bad jwt", client.Options{BaseURL: s.URL, JWT: "a.b.c"}, "Unauthorized"},
			{"refused", client.Options{BaseURL: refused, APIKey: "k"}, "refused"},
		} {
			t.Run(protocolName(proto)+"/"+tc.name, func(t *testing.T) {
				tc.opts.ProtocolVersion = proto
				rec := &recorder{}
				defer rec.CloseIdleConnections()
				tc.opts.HTTPClient = &http.Client{Transport: rec}
				c, err := client.Connect(testContext(t), tc.opts)
				if err == nil {
					c.Close()
					t.Fatal("Connect succeeded")
				}
				var te *client.ToolError
				if errors.As(err, &te) {
					t.Errorf("Connect: %v is a *ToolError", err)
				}
				if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "/mcp") {
					t.Errorf("Connect: %q, want it to mention %q and the endpoint", err, tc.want)
				}
				// A refused credential is sent once: no initialize after
				// a refused server/discover.
				_, paths := rec.requests()
				if refused := tc.name != "refused"; refused {
					if !errors.Is(err, client.ErrCredentialRefused) {
						t.Errorf("Connect: %v, want errors.Is ErrCredentialRefused", err)
					}
					if len(paths) != 1 {
						t.Errorf("Connect sent %d requests (%v), want 1", len(paths), paths)
					}
				} else if errors.Is(err, client.ErrCredentialRefused) {
					t.Errorf("Connect: %v is ErrCredentialRefused", err)
				}
			})
		}
	}

	// A 403 (here the server's Host check) is a refusal too: sent once.
	for _, proto := range protocols {
		t.Run(protocolName(proto)+"/forbidden host", func(t *testing.T) {
			rec := &recorder{}
			defer rec.CloseIdleConnections()
			hc := &http.Client{Transport: hostRewriter{host: "attacker.example", base: rec}}
			c, err := client.Connect(testContext(t), client.Options{BaseURL: s.URL, APIKey: s.Key(t, s.Owner, wf.ScopeAll), ProtocolVersion: proto, HTTPClient: hc})
			if err == nil {
				c.Close()
				t.Fatal("Connect succeeded")
			}
			if !errors.Is(err, client.ErrCredentialRefused) || !strings.Contains(err.Error(), "403") {
				t.Errorf("Connect: %v, want ErrCredentialRefused with 403", err)
			}
			if _, paths := rec.requests(); len(paths) != 1 {
				t.Errorf("Connect sent %d requests (%v), want 1", len(paths), paths)
			}
		})
	}

	// A credential revoked after Connect fails the next call the same way.
	key := s.Key(t, s.Owner, wf.ScopeAll)
	c := connect(t, client.Options{BaseURL: s.URL, APIKey: key, HTTPClient: &http.Client{Transport: &recorder{}}})
	ctx := testContext(t)
	if _, err := c.GetWorldSummary(ctx, s.World.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Auth.RevokeKey(ctx, key); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetWorldSummary(ctx, s.World.ID)
	if err == nil || isToolError(err, wf.ToolGetWorldSummary) || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("call after revocation: %T %v, want an Unauthorized transport error", err, err)
	}
}

// TestAuthPrecedence checks which credential goes out: APIKey beats JWT
// beats TokenSource, as the server saw it in the Authorization header.
func TestAuthPrecedence(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, dbtest.Open(t))
	key := s.Key(t, s.Owner, wf.ScopeAll)
	jwt := s.Token(t, s.GM)
	fromSource := s.Token(t, s.Player)
	for _, tc := range []struct {
		name        string
		key, jwt    string
		source      bool
		want        string
		wantSources int
	}{
		{"all three", key, jwt, true, key, 0},
		{"key and source", key, "", true, key, 0},
		{"jwt and source", "", jwt, true, jwt, 0},
		{"key and jwt", key, jwt, false, key, 0},
		{"source only", "", "", true, fromSource, 1},
		{"jwt only", "", jwt, false, jwt, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			var calls atomic.Int32
			opts := client.Options{BaseURL: s.URL, APIKey: tc.key, JWT: tc.jwt, HTTPClient: &http.Client{Transport: rec}}
			if tc.source {
				opts.TokenSource = client.TokenFunc(func(context.Context) (string, error) {
					calls.Add(1)
					return fromSource, nil
				})
			}
			c := connect(t, opts)
			if _, err := c.ListTools(testContext(t)); err != nil {
				t.Fatal(err)
			}
			auth, _ := rec.requests()
			if len(auth) < 2 {
				t.Fatalf("%d requests recorded, want connect and tools/list", len(auth))
			}
			for i, a := range auth {
				if a != "Bearer "+tc.want {
					t.Errorf("request %d: Authorization %q, want the %s credential", i, a, tc.name)
				}
			}
			if n := calls.Load(); int(n) != tc.wantSources {
				t.Errorf("token source called %d times, want %d", n, tc.wantSources)
			}
		})
	}

	// The server resolved the identity of the credential sent: the owner
	// (key) reads the world; the GM (jwt) may summarise but not read it.
	ctx := testContext(t)
	c := connect(t, client.Options{BaseURL: s.URL, APIKey: key, JWT: jwt})
	if _, err := c.ReadWorld(ctx, s.World.ID); err != nil {
		t.Errorf("key beats jwt: ReadWorld: %v", err)
	}
	c = connect(t, client.Options{BaseURL: s.URL, JWT: jwt, TokenSource: client.TokenFunc(func(context.Context) (string, error) { return key, nil })})
	if _, err := c.ReadWorld(ctx, s.World.ID); !errors.Is(err, wf.ErrNotFound) {
		t.Errorf("jwt (GM) beats source (owner key): ReadWorld: %v, want not_found", err)
	}
	if _, err := c.GetWorldSummary(ctx, s.World.ID); err != nil {
		t.Errorf("jwt (GM): GetWorldSummary: %v", err)
	}
}

// TestTokenSourceOnce checks that the token source is called exactly once,
// at Connect, however many calls follow, and that a failing source fails
// Connect before any request.
func TestTokenSourceOnce(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, dbtest.Open(t))
	token := s.Token(t, s.Owner)
	for _, proto := range protocols {
		t.Run(protocolName(proto), func(t *testing.T) {
			var calls atomic.Int32
			rec := &recorder{}
			c := connect(t, client.Options{BaseURL: s.URL, ProtocolVersion: proto, HTTPClient: &http.Client{Transport: rec},
				TokenSource: client.TokenFunc(func(ctx context.Context) (string, error) {
					if ctx == nil {
						t.Error("token source got no context")
					}
					calls.Add(1)
					return token, nil
				})})
			ctx := testContext(t)
			for range 3 {
				if _, err := c.GetWorldSummary(ctx, s.World.ID); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := c.ListTools(ctx); err != nil {
				t.Fatal(err)
			}
			if n := calls.Load(); n != 1 {
				t.Errorf("token source called %d times, want 1", n)
			}
			if auth, _ := rec.requests(); len(auth) < 5 {
				t.Errorf("%d requests, want at least 5", len(auth))
			}
		})
	}
}

// TestConnectRefusesBeforeIO checks the mistakes Connect answers without
// sending a request.
func TestConnectRefusesBeforeIO(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		opts client.Options
		want string
	}{
		{"no credential", client.Options{BaseURL: "http://127.0.0.1:1"}, "no credential"},
		{"no base url", client.Options{APIKey: "k"}, "BaseURL"},
		{"not http", client.Options{BaseURL: "ftp://127.0.0.1/", APIKey: "k"}, "http"},
		{"relative", client.Options{BaseURL: "127.0.0.1:8080/mcp", APIKey: "k"}, "BaseURL"},
		{"query", client.Options{BaseURL: "http://127.0.0.1:1/?x=1", APIKey: "k"}, "query"},
		{"source fails", client.Options{BaseURL: "http://127.0.0.1:1", TokenSource: client.TokenFunc(func(context.Context) (string, error) { return "", boom })}, "boom"},
		{"source empty", client.Options{BaseURL: "http://127.0.0.1:1", TokenSource: client.TokenFunc(func(context.Context) (string, error) { return "", nil })}, "empty token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			tc.opts.HTTPClient = &http.Client{Transport: rec}
			c, err := client.Connect(testContext(t), tc.opts)
			if err == nil {
				c.Close()
				t.Fatal("Connect succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Connect: %q, want it to mention %q", err, tc.want)
			}
			if tc.name == "source fails" && !errors.Is(err, boom) {
				t.Errorf("Connect: %v does not wrap the source's error", err)
			}
			if auth, _ := rec.requests(); len(auth) != 0 {
				t.Errorf("%d requests sent", len(auth))
			}
		})
	}
}

// TestEndpointURL checks the /mcp suffix rule, and that every spelling
// reaches the server's /mcp.
func TestEndpointURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"http://127.0.0.1:8080":          "http://127.0.0.1:8080/mcp",
		"http://127.0.0.1:8080/":         "http://127.0.0.1:8080/mcp",
		"http://127.0.0.1:8080/mcp":      "http://127.0.0.1:8080/mcp",
		"http://127.0.0.1:8080/mcp/":     "http://127.0.0.1:8080/mcp",
		"https://h.example/wf":           "https://h.example/wf/mcp",
		"https://h.example/wf/mcp":       "https://h.example/wf/mcp",
		"http://127.0.0.1:8080/notmcp":   "http://127.0.0.1:8080/notmcp/mcp",
		"http://127.0.0.1:8080/mcp/tool": "http://127.0.0.1:8080/mcp/tool/mcp",
	} {
		if got, err := client.EndpointURL(in); err != nil || got != want {
			t.Errorf("EndpointURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}

	s := testserver.Start(t, dbtest.Open(t))
	key := s.Key(t, s.Owner, wf.ScopeAll)
	for _, base := range []string{s.URL, s.URL + "/", s.MCPURL(), s.MCPURL() + "/"} {
		rec := &recorder{}
		c := connect(t, client.Options{BaseURL: base, APIKey: key, HTTPClient: &http.Client{Transport: rec}})
		if _, err := c.GetWorldSummary(testContext(t), s.World.ID); err != nil {
			t.Errorf("%s: %v", base, err)
		}
		if _, paths := rec.requests(); slices.ContainsFunc(paths, func(p string) bool { return p != "/mcp" }) {
			t.Errorf("%s: requests to %v, want /mcp only", base, paths)
		}
	}
}

// TestHTTPClientNotModified checks that the caller's client keeps its
// transport and that its other settings (here a timeout) are used.
func TestHTTPClientNotModified(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, dbtest.Open(t))
	rec := &recorder{}
	hc := &http.Client{Transport: rec, Timeout: 10 * time.Second}
	c := connect(t, client.Options{BaseURL: s.URL, APIKey: s.Key(t, s.Owner, wf.ScopeAll), HTTPClient: hc})
	if _, err := c.ListTools(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if hc.Transport != rec {
		t.Errorf("the caller's client has transport %T now", hc.Transport)
	}
}

// TestProtocolVersion checks the revision negotiated with the real server.
func TestProtocolVersion(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, dbtest.Open(t))
	key := s.Key(t, s.Owner, wf.ScopeAll)
	for proto, want := range map[string]string{"": "2026-07-28", "2025-11-25": "2025-11-25", "2025-06-18": "2025-06-18"} {
		c := connect(t, client.Options{BaseURL: s.URL, APIKey: key, ProtocolVersion: proto})
		if got := c.Session().InitializeResult().ProtocolVersion; got != want {
			t.Errorf("ProtocolVersion %q: negotiated %q, want %q", proto, got, want)
		}
		if info := c.Session().InitializeResult().ServerInfo; info == nil || info.Name != "worldforge" {
			t.Errorf("ProtocolVersion %q: serverInfo %+v", proto, info)
		}
	}
}

// fixture starts a go-sdk MCP server (no WorldForge) on 127.0.0.1:0 with
// tools that answer every envelope shape, and returns its base URL.
func fixture(t *testing.T) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "fixture", Version: "0"}, nil)
	answer := func(name string, res *mcp.CallToolResult) {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return res, nil })
	}
	text := func(s string) mcp.Content { return &mcp.TextContent{Text: s} }
	image := &mcp.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"}
	audio := &mcp.AudioContent{Data: []byte{4}, MIMEType: "audio/wav"}
	link := &mcp.ResourceLink{URI: "file:///x", Name: "x"}
	answer("json", &mcp.CallToolResult{Content: []mcp.Content{text(`{"n":1,"big":9007199254740993,"s":"x"}`)}})
	answer("json_padded", &mcp.CallToolResult{Content: []mcp.Content{text(" [1, 2]\n")}})
	answer("json_string", &mcp.CallToolResult{Content: []mcp.Content{text(`"quoted"`)}})
	answer("plain", &mcp.CallToolResult{Content: []mcp.Content{text("hello, world")}})
	answer("almost_json", &mcp.CallToolResult{Content: []mcp.Content{text(`{"n":1`)}})
	answer("multi", &mcp.CallToolResult{Content: []mcp.Content{text(`{"a":1}`), text("second")}})
	answer("mixed", &mcp.CallToolResult{Content: []mcp.Content{image, text(`{"a":2}`), audio, link}})
	answer("no_text", &mcp.CallToolResult{Content: []mcp.Content{image}})
	answer("empty", &mcp.CallToolResult{Content: []mcp.Content{}})
	answer("fail", &mcp.CallToolResult{IsError: true, Content: []mcp.Content{text("not_found")}})
	answer("fail_multi", &mcp.CallToolResult{IsError: true, Content: []mcp.Content{image, text("line one"), text("line two")}})
	answer("fail_bare", &mcp.CallToolResult{IsError: true, Content: []mcp.Content{image}})
	answer("fail_prose", &mcp.CallToolResult{IsError: true, Content: []mcp.Content{text("Something Broke: badly")}})
	srv.AddTool(&mcp.Tool{Name: "progress", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				for i := range 3 {
					if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i + 1), Total: 3}); err != nil {
						return nil, err
					}
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{text("done")}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "whoami", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			info := req.ClientInfo()
			out, _ := json.Marshal(map[string]string{"name": info.Name, "version": info.Version, "auth": req.Extra.Header.Get("Authorization")})
			return &mcp.CallToolResult{Content: []mcp.Content{text(string(out))}}, nil
		})
	return testserver.Listen(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
}

// TestUnwrap checks each envelope rule through CallTool, CallToolInto and
// CallToolRaw + UnwrapResult.
func TestUnwrap(t *testing.T) {
	t.Parallel()
	base := fixture(t)
	for _, proto := range protocols {
		t.Run(protocolName(proto), func(t *testing.T) {
			ctx := testContext(t)
			c := connect(t, client.Options{BaseURL: base, APIKey: "k", ProtocolVersion: proto})
			for _, tc := range []struct {
				tool string
				want any
			}{
				{"json", map[string]any{"n": 1.0, "big": 9007199254740992.0, "s": "x"}},
				{"json_padded", []any{1.0, 2.0}},
				{"json_string", "quoted"},
				{"plain", "hello, world"},
				{"almost_json", `{"n":1`},
				{"multi", "{\"a\":1}\nsecond"},
				{"mixed", map[string]any{"a": 2.0}},
				{"no_text", ""},
				{"empty", ""},
			} {
				got, err := c.CallTool(ctx, tc.tool, nil)
				if err != nil {
					t.Errorf("CallTool(%s): %v", tc.tool, err)
					continue
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("CallTool(%s) (-want +got):\n%s", tc.tool, diff)
				}
				raw, err := c.CallToolRaw(ctx, tc.tool, map[string]any{"ignored": true})
				if err != nil || raw.IsError {
					t.Errorf("CallToolRaw(%s) = %+v, %v", tc.tool, raw, err)
					continue
				}
				if diff := cmp.Diff(tc.want, client.UnwrapResult(raw)); diff != "" {
					t.Errorf("UnwrapResult(%s) (-want +got):\n%s", tc.tool, diff)
				}
			}

			// Typed decoding reads the text directly: no float64 detour.
			type payload struct {
				N   int    `json:"n"`
				Big int64  `json:"big"`
				S   string `json:"s"`
			}
			p, err := client.CallTool[payload](ctx, c, "json", nil)
			if err != nil || p != (payload{N: 1, Big: 9007199254740993, S: "x"}) {
				t.Errorf("CallTool[payload] = %+v, %v", p, err)
			}
			var raw json.RawMessage
			if err := c.CallToolInto(ctx, "json_padded", nil, &raw); err != nil || string(raw) != "[1, 2]" {
				t.Errorf("CallToolInto(json_padded, RawMessage) = %s, %v", raw, err)
			}
			for tool, want := range map[string]string{"plain": "hello, world", "json_string": "quoted", "multi": "{\"a\":1}\nsecond", "no_text": "", "almost_json": `{"n":1`} {
				s, err := client.CallTool[string](ctx, c, tool, nil)
				if err != nil || s != want {
					t.Errorf("CallTool[string](%s) = %q, %v; want %q", tool, s, err, want)
				}
			}
			m, err := client.CallTool[map[string]int](ctx, c, "mixed", nil)
			if err != nil || m["a"] != 2 {
				t.Errorf("CallTool[map](mixed) = %v, %v", m, err)
			}
			if _, err := client.CallTool[payload](ctx, c, "plain", nil); err == nil || !strings.Contains(err.Error(), "decode plain result") || isToolError(err, "plain") {
				t.Errorf("CallTool[payload](plain): %v, want a decode error", err)
			}
		})
	}
}

// TestUnwrapErrors checks isError results from the fixture: the detail is
// the joined text, non-text blocks ignored, and Unwrap names a code only
// when the text is one.
func TestUnwrapErrors(t *testing.T) {
	t.Parallel()
	base := fixture(t)
	ctx := testContext(t)
	c := connect(t, client.Options{BaseURL: base, APIKey: "k"})
	for _, tc := range []struct {
		tool, msg string
		code      *wf.Error
	}{
		{"fail", "MCP tool fail failed: not_found", wf.ErrNotFound},
		{"fail_multi", "MCP tool fail_multi failed: line one\nline two", nil},
		{"fail_bare", "MCP tool fail_bare failed: no detail", nil},
		{"fail_prose", "MCP tool fail_prose failed: Something Broke: badly", nil},
	} {
		for name, call := range map[string]func() error{
			"CallTool":    func() error { _, err := c.CallTool(ctx, tc.tool, nil); return err },
			"CallToolRaw": func() error { _, err := c.CallToolRaw(ctx, tc.tool, nil); return err },
		} {
			err := call()
			var te *client.ToolError
			if !errors.As(err, &te) {
				t.Errorf("%s(%s): %T %v, want a *ToolError", name, tc.tool, err, err)
				continue
			}
			if te.Tool != tc.tool || !te.Result.IsError || err.Error() != tc.msg {
				t.Errorf("%s(%s): Tool %q, IsError %v, message %q; want %q", name, tc.tool, te.Tool, te.Result.IsError, err, tc.msg)
			}
			var we *wf.Error
			if got := errors.As(err, &we); got != (tc.code != nil) || (got && !errors.Is(err, tc.code)) {
				t.Errorf("%s(%s): unwraps to %v, want %v", name, tc.tool, we, tc.code)
			}
		}
	}
	if _, err := c.CallToolRaw(ctx, "fail_multi", nil); len(mustToolError(t, err).Result.Content) != 3 {
		t.Errorf("the ToolError's Result lost blocks: %+v", mustToolError(t, err).Result.Content)
	}
}

func mustToolError(t *testing.T, err error) *client.ToolError {
	t.Helper()
	var te *client.ToolError
	if !errors.As(err, &te) {
		t.Fatalf("%T %v, want a *ToolError", err, err)
	}
	return te
}

// TestClientInfo checks the identity the server sees, default and set, on
// both revisions (the stateless one sends it in each request's _meta).
func TestClientInfo(t *testing.T) {
	t.Parallel()
	base := fixture(t)
	for _, proto := range protocols {
		for _, tc := range []struct {
			info client.ClientInfo
			want map[string]string
		}{
			{client.ClientInfo{}, map[string]string{"name": "worldforge-sdk", "version": "0.1.0", "auth": "Bearer k"}},
			{client.ClientInfo{Name: "my-agent", Version: "2.3"}, map[string]string{"name": "my-agent", "version": "2.3", "auth": "Bearer k"}},
			{client.ClientInfo{Name: "my-agent"}, map[string]string{"name": "my-agent", "version": "0.1.0", "auth": "Bearer k"}},
		} {
			c := connect(t, client.Options{BaseURL: base, APIKey: "k", ClientInfo: tc.info, ProtocolVersion: proto})
			got, err := client.CallTool[map[string]string](testContext(t), c, "whoami", nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s %+v (-want +got):\n%s", protocolName(proto), tc.info, diff)
			}
		}
	}
}

// TestSession checks that the go-sdk session is usable directly.
func TestSession(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, dbtest.Open(t))
	ctx := testContext(t)
	// ping is an initialize-era request: the go-sdk's stateless client sends
	// it without the _meta the 2026-07-28 revision requires, so it is
	// checked on 2025-11-25.
	legacy := connect(t, client.Options{BaseURL: s.URL, APIKey: s.Key(t, s.Owner, wf.ScopeAll), ProtocolVersion: "2025-11-25"})
	if err := legacy.Session().Ping(ctx, nil); err != nil {
		t.Errorf("Ping: %v", err)
	}
	c := connect(t, client.Options{BaseURL: s.URL, APIKey: s.Key(t, s.Owner, wf.ScopeAll)})
	res, err := c.Session().CallTool(ctx, &mcp.CallToolParams{Name: wf.ToolGetWorldSummary, Arguments: wf.WorldArgs{WorldID: s.World.ID}})
	if err != nil || res.IsError {
		t.Fatalf("Session().CallTool = %+v, %v", res, err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := c.ListTools(ctx); err == nil {
		t.Error("ListTools after Close succeeded")
	}
}

// TestProgress checks that progress notifications reach a handler given in
// MCPOptions, for a call made on the session with a progress token.
func TestProgress(t *testing.T) {
	t.Parallel()
	base := fixture(t)
	for _, proto := range protocols {
		t.Run(protocolName(proto), func(t *testing.T) {
			// The go-sdk runs notification handlers apart from the call, so
			// they may land after CallTool returns.
			progress := make(chan float64, 10)
			c := connect(t, client.Options{BaseURL: base, APIKey: "k", ProtocolVersion: proto, MCPOptions: &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					if req.Params.ProgressToken == "job-1" {
						progress <- req.Params.Progress
					}
				},
			}})
			params := &mcp.CallToolParams{Name: "progress"}
			params.SetProgressToken("job-1")
			res, err := c.Session().CallTool(testContext(t), params)
			if err != nil || client.UnwrapResult(res) != "done" {
				t.Fatalf("CallTool = %+v, %v", res, err)
			}
			var got []float64
			for len(got) < 3 {
				select {
				case p := <-progress:
					got = append(got, p)
				case <-time.After(5 * time.Second):
					t.Fatalf("progress: got %v, then nothing", got)
				}
			}
			slices.Sort(got)
			if diff := cmp.Diff([]float64{1, 2, 3}, got); diff != "" {
				t.Errorf("progress (-want +got):\n%s", diff)
			}
		})
	}
}
