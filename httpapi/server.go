// Package httpapi is WorldForge's HTTP surface: bearer authentication for
// every route, the MCP endpoint at /mcp (stateless streamable HTTP on the
// go-sdk's handler, one shared server), and the REST routes.
//
// Transport failures are HTTP statuses with a JSON body {"error": code};
// the code → status table is in errors.go. Tool failures on /mcp are not
// HTTP errors: they are MCP tool results with isError true.
package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/app"
	"github.com/worldforge-go/worldforge/internal/metrics"
	"github.com/worldforge-go/worldforge/internal/obs"
)

// DefaultMaxBodyBytes limits request bodies.
const DefaultMaxBodyBytes = 4 << 20

// Authenticator verifies bearer credentials (package auth implements it).
// A credential that does not verify is worldforge.ErrUnauthorized; any
// other error means the check itself failed.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (*worldforge.Actor, error)
}

// Options configure a Server.
type Options struct {
	Auth Authenticator
	// MCP is the shared MCP server mounted at /mcp.
	MCP *mcp.Server
	// Tools, when set, are the same tools as MCP's, run directly by the
	// fast path for self-contained tools/call requests (see fastpath.go);
	// nil sends every request through the go-sdk handler.
	Tools  ToolRunner
	Store  worldforge.Store
	Logger *slog.Logger
	// MaxBodyBytes limits request bodies (413 beyond); 0 means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// StreamStall bounds how long one write of a streamed read_world
	// answer may wait for the client to take it (see fastStream); 0 means
	// DefaultStreamStall.
	StreamStall time.Duration

	// Abuse limits (limits.go): the Host/Origin check in front of every
	// route; rate, concurrency and the stream caps in front of /mcp and
	// REST.
	Limits Limits

	// Operations (observe.go): /healthz, /readyz, /metrics, request logs.

	// Ready is GET /readyz's check; nil uses the Store's Ready(ctx) method
	// when it has one (sqlstore.DB does), else only the process being up.
	Ready func(ctx context.Context) error
	// DisableMetrics turns GET /metrics and the metrics off. By default
	// they are on, unauthenticated, on the server's own listen address.
	DisableMetrics bool
	// SeparateMetrics leaves GET /metrics off this handler: MetricsHandler
	// serves it, on a listener of its own (serve --metrics-addr).
	SeparateMetrics bool

	// Console, when set, is the web console (package console), served on
	// its own patterns next to /mcp and REST, behind the same Host/Origin
	// check and the per-IP rate limit.
	Console Console

	// OAuth, when set, is the authorization server (package authserver),
	// mounted like the console; ResourceMetadataURL is the URL of the
	// protected resource metadata every 401 names (oauth.go).
	OAuth               Console
	ResourceMetadataURL string
}

// Console is a web UI mounted on the server's listener.
type Console interface {
	http.Handler
	// Patterns are the ServeMux patterns it serves.
	Patterns() []string
}

// Server is the HTTP handler.
type Server struct {
	opts     Options
	log      *slog.Logger
	mux      *http.ServeMux
	mcp      http.Handler
	mcpRoute http.Handler // what the mux serves POST /mcp with (nil: ask the mux)
	app      *app.Service
	fast     *fastResponder
	fastN    atomic.Uint64
	closing  chan struct{}
	once     sync.Once

	// Abuse limits (limits.go).
	hosts   *hostPolicy
	perCred *limiter // per credential: rate and concurrency
	perIP   *limiter // per remote IP: failed authentications
	streams *streamCaps

	// Operations (observe.go).
	metrics *metrics.Metrics // nil with DisableMetrics
	// mcpRequests counts the MCP POSTs by the path that answered them,
	// by fastDecline (unset with DisableMetrics).
	mcpRequests [numFastDeclines]prometheus.Counter
	ready       func(context.Context) error
}

// New returns the HTTP handler for the given parts.
func New(opts Options) *Server {
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	s := &Server{opts: opts, log: opts.Logger, mux: http.NewServeMux(), closing: make(chan struct{}), app: app.New(opts.Store)}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	lim := opts.Limits
	s.hosts = newHostPolicy(lim.AllowedHosts)
	s.perCred = newLimiter(lim.Rate, lim.Burst, lim.MaxConcurrent, nil)
	s.perIP = newLimiter(lim.Rate, lim.Burst, 0, nil)
	s.streams = newStreamCaps(lim.MaxStreamsPerCredential, lim.MaxStreams)
	if opts.Tools != nil {
		fast, err := newFastResponder(opts.Tools)
		if err != nil {
			// Only an Implementation that cannot be encoded gets here;
			// every request then takes the go-sdk path.
			s.log.Error("fast path disabled", "err", err)
		}
		s.fast = fast
	}
	shared := opts.MCP
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return shared }, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		JSONResponse:        true,
		Logger:              s.log,
		MaxRequestBodyBytes: opts.MaxBodyBytes,
		// guarded (limits.go) checks Host and Origin in front of every
		// route, the go-sdk's rule included.
		DisableLocalhostProtection: true,
	})
	// The go-sdk hands auth.TokenInfo from the request context to every
	// tool handler; its middleware is the only way to put it there. We have
	// verified the credential already, so its verifier just reads the actor.
	s.mcp = auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		a := worldforge.ActorFromContext(ctx)
		if a == nil {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{
			Scopes:     a.Scopes,
			UserID:     a.UserID,
			Extra:      map[string]any{worldforge.TokenInfoActorKey: a},
			Expiration: time.Now().Add(time.Hour),
		}, nil
	}, nil)(sdk)

	s.mcpRoute = s.guarded(http.HandlerFunc(s.serveMCP))
	s.mux.Handle(mcpPattern, s.mcpRoute)
	for _, rt := range s.routes() {
		s.mux.Handle(rt.pattern, withRouteScopes(rt.access, s.guarded(s.scopeChallenge(rt.access, gate(rt.access, rt.handler)))))
	}
	if opts.Console != nil {
		h := s.perIPLimited(opts.Console)
		for _, p := range opts.Console.Patterns() {
			s.mux.Handle(p, h)
		}
	}
	if opts.OAuth != nil {
		h := s.perIPLimited(opts.OAuth)
		for _, p := range opts.OAuth.Patterns() {
			s.mux.Handle(p, h)
		}
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, worldforge.ErrNotFound)
	})
	s.initOperations()
	// observe sends POST /mcp to its handler without the mux's lookup,
	// which is what the mux would do unless some other pattern claims it.
	probe := &http.Request{Method: http.MethodPost, URL: &url.URL{Path: mcpPattern}, Host: "localhost"}
	if _, p := s.mux.Handler(probe); p != mcpPattern {
		s.mcpRoute = nil
	}
	return s
}

// mcpPattern is the route of the MCP endpoint.
const mcpPattern = "/mcp"

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.observe(w, r) }

// FastPathCalls is how many requests the fast path has answered.
func (s *Server) FastPathCalls() uint64 { return s.fastN.Load() }

// Close ends open GET /mcp streams, and the console's streams (when it
// has a Close method), so that http.Server.Shutdown can finish.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.closing)
		if c, ok := s.opts.Console.(interface{ Close() }); ok {
			c.Close()
		}
	})
}

// authenticated requires a valid bearer credential and puts its actor in
// the request context.
func (s *Server) authenticated(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := bearerToken(r.Header.Get("Authorization"))
		if !ok {
			s.authFailed(w, r, worldforge.ErrUnauthorized)
			return
		}
		actor, err := s.opts.Auth.Authenticate(r.Context(), token)
		if err != nil {
			if !errors.Is(err, worldforge.ErrUnauthorized) {
				s.log.ErrorContext(r.Context(), "authenticate", "err", err)
				err = &worldforge.Error{Code: worldforge.EUnavailable}
			}
			s.authFailed(w, r, err)
			return
		}
		obs.FromContext(r.Context()).SetActor(actor.UserID, actor.KeyID)
		next.ServeHTTP(w, r.WithContext(worldforge.NewContext(r.Context(), actor)))
	})
}

// bearerToken extracts the token of an "Authorization: Bearer <token>"
// header; the scheme is case-insensitive.
func bearerToken(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != "" && !strings.ContainsAny(token, " \t")
}

// serveMe answers who the credential belongs to.
func (s *Server) serveMe(w http.ResponseWriter, r *http.Request) {
	a := worldforge.ActorFromContext(r.Context())
	writeJSON(w, http.StatusOK, map[string]any{
		"userId": a.UserID,
		"keyId":  a.KeyID,
		"kind":   a.Kind,
		"scopes": a.Scopes,
	})
}
