// Package testserver starts a real WorldForge server for tests: the SQLite
// store in a temporary directory (or PostgreSQL through dbtest), the real
// authenticator, MCP server and HTTP handler, listening on 127.0.0.1:0.
// It also seeds a cast (owner, GM, player, stranger) and a world with a row
// of every kind, and mints credentials for them.
package testserver

import (
	"context"
	"encoding/json"
	"github.com/worldforge-go/worldforge/internal/benchtool"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/auth"
	"github.com/worldforge-go/worldforge/authserver"
	"github.com/worldforge-go/worldforge/console"
	"github.com/worldforge-go/worldforge/httpapi"
	"github.com/worldforge-go/worldforge/mcpserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// Server is a running test server.
type Server struct {
	URL   string // base URL, e.g. http://127.0.0.1:41234
	API   *httpapi.Server
	DB    *sqlstore.DB
	Auth  *auth.Authenticator
	Tools *mcpserver.Server
	// Console is the web console (Config.Console), or nil.
	Console *console.Console
	OAuth   *authserver.Server

	// The cast and the world they share.
	Owner, GM, Player, Stranger *wf.User
	World                       *wf.World
	Campaign                    *wf.Campaign
	Quest                       *wf.Quest
	Encounter                   *wf.Encounter
	Page                        *wf.WikiPage
	Node                        *wf.AtlasNode
	POI                         *wf.POI
}

// MCPURL is the MCP endpoint.
func (s *Server) MCPURL() string { return s.URL + "/mcp" }

// Start starts a server on db (closed with the test) and seeds it.
func Start(t testing.TB, db *sqlstore.DB) *Server {
	t.Helper()
	return StartWith(t, db, Config{})
}

// Config adjusts the server StartWith starts; the zero value is Start's.
type Config struct {
	// Logger receives the MCP and HTTP layers' logs; nil discards them.
	Logger *slog.Logger
	// NoFastPath sends every request through the go-sdk handler (serve
	// --fast-path=false).
	NoFastPath bool
	// MaxBufferedAnswerBytes is mcpserver.Options.MaxBufferedAnswerBytes
	// (0: the default).
	MaxBufferedAnswerBytes int64
	// AuthNow replaces the authenticator's clock (auth.Options.Now); nil
	// is time.Now.
	AuthNow func() time.Time
	// Console serves the web console too (serve's default).
	Console bool
	// LiveInterval is the console's console.Options.LiveInterval.
	LiveInterval time.Duration
	// OAuth serves the OAuth endpoints (package authserver) with the
	// server's own URL as public URL; OAuthOptions, when set, adjusts
	// their options first.
	OAuth        bool
	OAuthOptions func(*authserver.Options)
	// BenchNoopPayload, when set, adds the bench-only tool bench_noop
	// answering it (serve --bench-noop).
	BenchNoopPayload string
}

// lateHandler serves through a handler set once the listener's address
// is known (the OAuth public URL names it). A request that arrives
// before then (a stray client of an earlier test on a reused port) gets
// 503.
type lateHandler struct{ h atomic.Pointer[http.Handler] }

func (l *lateHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := l.h.Load()
	if h == nil {
		http.Error(w, "starting", http.StatusServiceUnavailable)
		return
	}
	(*h).ServeHTTP(w, r)
}

func (l *lateHandler) Close() {
	if h := l.h.Load(); h != nil {
		if c, ok := (*h).(interface{ Close() }); ok {
			c.Close()
		}
	}
}

// StartWith is Start with a Config.
func StartWith(t testing.TB, db *sqlstore.DB, cfg Config) *Server {
	t.Helper()
	ctx := context.Background()
	late := &lateHandler{}
	url := Listen(t, late)
	aopts := &auth.Options{Now: cfg.AuthNow}
	if cfg.OAuth {
		aopts.Resource = url + "/mcp"
	}
	a, err := auth.New(ctx, db, aopts)
	if err != nil {
		t.Fatalf("auth: %v", err)
	}
	mopts := &mcpserver.Options{Logger: cfg.Logger, MaxBufferedAnswerBytes: cfg.MaxBufferedAnswerBytes}
	if cfg.BenchNoopPayload != "" {
		benchtool.EnableNoop(mopts, cfg.BenchNoopPayload)
	}
	tools, err := mcpserver.New(db, mopts)
	if err != nil {
		t.Fatalf("mcpserver: %v", err)
	}
	opts := httpapi.Options{Auth: a, MCP: tools.MCP(), Tools: tools, Store: db, Logger: cfg.Logger}
	if cfg.NoFastPath {
		opts.Tools = nil
	}
	var oauth *authserver.Server
	if cfg.OAuth {
		o := authserver.Options{Store: db, Auth: a, PublicURL: url, Logger: cfg.Logger}
		if cfg.OAuthOptions != nil {
			cfg.OAuthOptions(&o)
		}
		if oauth, err = authserver.New(o); err != nil {
			t.Fatalf("authserver: %v", err)
		}
		opts.OAuth, opts.ResourceMetadataURL = oauth, oauth.ResourceMetadataURL()
	}
	var con *console.Console
	if cfg.Console {
		con, err = console.New(ctx, console.Options{Store: db, Auth: a, Logger: cfg.Logger, LiveInterval: cfg.LiveInterval, OAuth: oauth})
		if err != nil {
			t.Fatalf("console: %v", err)
		}
		opts.Console = con
	}
	api := httpapi.New(opts)
	var h http.Handler = api
	late.h.Store(&h)
	s := &Server{URL: url, API: api, DB: db, Auth: a, Tools: tools, Console: con, OAuth: oauth}
	s.seed(t)
	return s
}

// Listen serves h on 127.0.0.1:0 until the test ends and returns its base
// URL. A handler with a Close method (httpapi.Server) is closed first, so
// that open streams end.
func Listen(t testing.TB, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() {
		if c, ok := h.(interface{ Close() }); ok {
			c.Close()
		}
		// A client may have opened a connection it never used; Shutdown
		// would wait 5 s for it. Give requests a moment, then close.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

func (s *Server) seed(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("seed: %v", err)
		}
	}
	s.Owner, s.GM, s.Player, s.Stranger = &wf.User{Name: "Owner"}, &wf.User{Name: "GM"}, &wf.User{Name: "Player"}, &wf.User{Name: "Stranger"}
	for _, u := range []*wf.User{s.Owner, s.GM, s.Player, s.Stranger} {
		must(s.DB.CreateUser(ctx, u))
	}
	s.World = &wf.World{OwnerID: s.Owner.ID, Name: "Testworld", Cols: 16, Rows: 12, JSON: json.RawMessage(`{"grid":{"cols":16,"rows":12}}`)}
	must(s.DB.CreateWorld(ctx, s.World))
	must(s.DB.AddWorldMember(ctx, s.World.ID, s.GM.ID, wf.RoleGM))
	must(s.DB.AddWorldMember(ctx, s.World.ID, s.Player.ID, wf.RolePlayer))
	s.Campaign = &wf.Campaign{OwnerID: s.Owner.ID, WorldID: s.World.ID, Name: "Campaign"}
	must(s.DB.CreateCampaign(ctx, s.Campaign))
	s.Quest = &wf.Quest{OwnerID: s.Owner.ID, CampaignID: s.Campaign.ID, WorldID: s.World.ID, Name: "Quest", JSON: json.RawMessage(`{"step":1}`)}
	must(s.DB.CreateQuest(ctx, s.Quest))
	s.Encounter = &wf.Encounter{OwnerID: s.Owner.ID, CampaignID: s.Campaign.ID, WorldID: s.World.ID, Name: "Encounter"}
	must(s.DB.CreateEncounter(ctx, s.Encounter))
	s.Page = &wf.WikiPage{WorldID: s.World.ID, Title: "The Wardens", Body: "A faction of keepers.", Kind: wf.WikiKindFaction, Audience: wf.AudienceParty}
	must(s.DB.CreateWikiPage(ctx, s.Page, s.Owner.ID))
	s.Node = &wf.AtlasNode{WorldID: s.World.ID, Name: "Aldmere", Level: 1, TerrainType: "plains"}
	must(s.DB.CreateAtlasNode(ctx, s.Node))
	s.POI = &wf.POI{WorldID: s.World.ID, Name: "Old chest", Category: "container", Tags: []string{"loot"}, X: 3, Y: 4, Openable: true, Visibility: wf.AudienceParty}
	must(s.DB.CreatePOI(ctx, s.POI))
	must(s.DB.UpsertLore(ctx, &wf.LoreEntity{WorldID: s.World.ID, Collection: "factions", ID: "wardens", Name: "Wardens", JSON: json.RawMessage(`{"id":"wardens","name":"Wardens"}`)}))
}

// Key makes an API key for the user with the given scopes.
func (s *Server) Key(t testing.TB, u *wf.User, scopes ...string) string {
	t.Helper()
	secret, _, err := s.Auth.CreateKey(context.Background(), u.ID, scopes)
	if err != nil {
		t.Fatalf("create key: %v", err)
	}
	return secret
}

// Token mints a session JWT for the user.
func (s *Server) Token(t testing.TB, u *wf.User) string {
	t.Helper()
	tok, err := s.Auth.IssueToken(context.Background(), u.ID, time.Hour)
	if err != nil {
		t.Fatalf("issue token: %v", err)
	}
	return tok
}

// AuditCount counts audit rows.
func (s *Server) AuditCount(t testing.TB) int {
	t.Helper()
	n, err := s.DB.CountAudit(context.Background(), wf.AuditFilter{})
	if err != nil {
		t.Fatalf("count audit: %v", err)
	}
	return n
}

// BearerTransport adds an Authorization header to every request.
type BearerTransport struct {
	Token string
	Base  http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (b *BearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.Token)
	base := b.Base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}

// LoginLink returns a one-time console sign-in URL for the user.
func (s *Server) LoginLink(t testing.TB, u *wf.User) string {
	t.Helper()
	link, _, err := s.Auth.CreateLoginLink(context.Background(), u.ID, 0)
	if err != nil {
		t.Fatalf("login link: %v", err)
	}
	return s.URL + "/login/" + link
}
