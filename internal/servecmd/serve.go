// Package servecmd is the serve command: flags, the server's wiring
// (store, auth, tools, HTTP handler, limits, quotas, logs and metrics),
// graceful shutdown and the demo seed. The command worldforge runs it as
// `worldforge serve`; worldforge-bench runs the same code as its hidden
// serve command, adding the bench-only tool, for the servers its
// comparison and soak start.
package servecmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"

	"github.com/worldforge-go/worldforge/auth"
	"github.com/worldforge-go/worldforge/authserver"
	"github.com/worldforge-go/worldforge/console"
	"github.com/worldforge-go/worldforge/httpapi"
	"github.com/worldforge-go/worldforge/internal/benchtool"
	"github.com/worldforge-go/worldforge/internal/cli"
	"github.com/worldforge-go/worldforge/mcpserver"
	"github.com/worldforge-go/worldforge/sqlstore"
)

// serveGCPercent is serve's garbage-collection target (see debug.SetGCPercent)
// unless GOGC is set.
const serveGCPercent = 200

// serveMemoryLimit is serve's default soft memory limit (see
// debug.SetMemoryLimit) unless GOMEMLIMIT is set: --memory-limit.
const serveMemoryLimit = 64 << 20

// Options adapt the serve command to the program that runs it.
type Options struct {
	// BenchNoopPayload, when set, adds the flag --bench-noop, with which
	// the server also registers the tool bench_noop (no scope, no store,
	// no audit row) answering this JSON document. Only worldforge-bench
	// sets it, for the servers its comparison starts.
	BenchNoopPayload string
}

// Synopsis is serve's synopsis in the command tables: every flag of its
// flag set but --bench-noop.
const Synopsis = "[--addr HOST:PORT] [--db DSN] [--demo] [--console=false] [--public-url URL] [--log-level L] [--fast-path=false] [--sqlite-sync normal|full] [--cpuprofile FILE] " +
	"[--rate-limit R] [--rate-burst N] [--max-concurrent N] [--allowed-hosts H1,H2] [--max-body-bytes N] [--max-header-bytes N] " +
	"[--read-header-timeout D] [--read-timeout D] [--write-timeout D] [--idle-timeout D] [--max-streams-per-credential N] [--max-streams N] " +
	"[--quotas=false] [--quota-worlds N] [--quota-cells N] [--quota-lore-entities N] [--quota-pending-proposals N] [--quota-keys N] " +
	"[--log-format text|json] [--log-flush-interval 100ms] [--shutdown-timeout 10s] [--metrics=false] [--metrics-addr HOST:PORT] [--memory-limit 64MiB] " +
	"[--oauth=false] [--oauth-access-ttl D] [--oauth-refresh-ttl D]"

// Serve runs the server until ctx ends, then shuts it down gracefully:
//
//	serve [--addr HOST:PORT] [--db DSN] [--demo] [flags]
func Serve(ctx context.Context, e *cli.Env, args []string, sopts *Options) error {
	if sopts == nil {
		sopts = &Options{}
	}
	fs := cli.NewFlags("serve")
	dbf := e.DBFlag(fs)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on (HOST:PORT; port 0 picks a free one)")
	demo := fs.Bool("demo", false, "create a demo owner, GM, player and world, and print credentials and an MCP client config")
	consoleOn := fs.Bool("console", true, "serve the web console at / on --addr (false: only /mcp, REST and the probes)")
	publicURL := fs.String("public-url", "", "the URL people reach the server at (https://…: the console's cookies are Secure); the base of login links (default: http://--addr)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file (for go tool pprof)")
	benchNoop := new(bool)
	if sopts.BenchNoopPayload != "" {
		benchNoop = fs.Bool("bench-noop", false, "also serve the bench_noop tool (no scope, no store, no audit; for worldforge-bench compare)")
	}
	fastPath := fs.Bool("fast-path", true, "answer self-contained tools/call requests without a go-sdk session (false: every request through the go-sdk handler)")
	memLimit := cli.ByteSize(serveMemoryLimit)
	fs.Var(&memLimit, "memory-limit", "soft limit on the Go runtime's memory (debug.SetMemoryLimit): near it the garbage collector runs sooner and returns freed memory to the system; it never refuses an allocation. 0 = none; GOMEMLIMIT in the environment wins")
	sqliteSync := fs.String("sqlite-sync", "normal", "SQLite durability: normal (a commit survives a crash of the process) or full (it also survives a power loss; slower)")
	limitsFlags := addLimitFlags(fs) // abuse limits: limits.go
	opsFlags := addOpsFlags(fs)      // logs, metrics, shutdown: ops.go
	quotasFlags := addQuotaFlags(fs) // per-user quotas: quotas.go
	oauthF := addOAuthFlags(fs)      // OAuth: oauth.go
	if err := e.Parse(fs, args); err != nil {
		return err
	}
	if _, err := cli.Positional(fs, 0, "no arguments"); err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return cli.UsageErrorf("serve: --log-level: %v", err)
	}
	if _, _, err := net.SplitHostPort(*addr); err != nil {
		return cli.UsageErrorf("serve: --addr %q: %v", *addr, err)
	}
	if *sqliteSync != "normal" && *sqliteSync != "full" {
		return cli.UsageErrorf("serve: --sqlite-sync %q: want normal or full", *sqliteSync)
	}
	ops, err := opsFlags.resolve()
	if err != nil {
		return err
	}
	listenAddrs := []string{*addr}
	if ops.metricsAddr != "" {
		listenAddrs = append(listenAddrs, ops.metricsAddr)
	}
	limits, err := limitsFlags.resolve(listenAddrs...)
	if err != nil {
		return err
	}
	quotas, err := quotasFlags.resolve()
	if err != nil {
		return err
	}
	if err := oauthF.check(); err != nil {
		return err
	}
	if *publicURL != "" {
		if u, err := url.Parse(*publicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return cli.UsageErrorf("--public-url %q is not an http(s) URL", *publicURL)
		}
	}
	logger, logw := ops.logger(e.Stderr, level)
	defer logw.Close()
	if e.Getenv("GOGC") == "" {
		// A request allocates ~17 KB that dies with it while the live heap
		// is a few MB: at Go's default (GC when the heap has doubled) the
		// collector ran ~20 times a second under load. Letting the heap
		// triple measured +15–20 % read_world requests/s at c=64 for +7 MiB
		// of RSS (README, Performance). GOGC in the environment wins.
		debug.SetGCPercent(serveGCPercent)
	}
	if e.Getenv("GOMEMLIMIT") == "" && memLimit > 0 {
		// A large read_world allocates about its answer's size in garbage
		// (the driver copies each stored piece), and GOGC lets the heap
		// grow to three times what was live at the last collection: after
		// a 4096×4096 resize, eight concurrent reads of that world took
		// the process to 242 MiB of RSS. With the soft limit the collector
		// runs sooner when the heap nears it (peak 90–94 MiB for the same
		// load) and does nothing otherwise.
		prev := debug.SetMemoryLimit(int64(memLimit))
		defer debug.SetMemoryLimit(prev)
	}
	if *cpuProfile != "" {
		stop, err := cli.StartCPUProfile(*cpuProfile)
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		defer stop()
	}

	dsn, err := e.DSN(*dbf)
	if err != nil {
		return err
	}
	db, err := sqlstore.Open(ctx, dsn, &sqlstore.Options{Logger: logger, SQLiteSyncFull: *sqliteSync == "full"})
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer db.Close()
	applyQuotas(db, quotas, logger)

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	defer ln.Close()
	// The consent page is a console page: without the console, no OAuth.
	oauthURL := oauthPublicURL(*oauthF.on && *consoleOn, *publicURL, ln.Addr())
	switch {
	case *oauthF.on && !*consoleOn:
		logger.Warn("OAuth endpoints off: the consent page needs the console (--console=false)")
	case *oauthF.on && oauthURL == "":
		logger.Warn("OAuth endpoints off: --addr is not a loopback address and --public-url is not set")
	}
	aopts := &auth.Options{Logger: logger}
	if oauthURL != "" {
		aopts.Resource = oauthURL + "/mcp"
	}
	authn, err := auth.New(ctx, db, aopts)
	if err != nil {
		return err
	}
	mopts := &mcpserver.Options{Logger: logger}
	if *benchNoop {
		benchtool.EnableNoop(mopts, sopts.BenchNoopPayload)
	}
	tools, err := mcpserver.New(db, mopts)
	if err != nil {
		return err
	}
	opts := httpapi.Options{Auth: authn, MCP: tools.MCP(), Store: db, Logger: logger}
	limits.options(&opts)
	ops.options(&opts)
	if *fastPath {
		opts.Tools = tools
	}
	var oauthSrv *authserver.Server
	if oauthURL != "" {
		oauthSrv, err = authserver.New(authserver.Options{Store: db, Auth: authn, PublicURL: oauthURL, Logger: logger,
			AccessTTL: *oauthF.accessTTL, RefreshTTL: *oauthF.refreshTTL})
		if err != nil {
			return err
		}
		opts.OAuth, opts.ResourceMetadataURL = oauthSrv, oauthSrv.ResourceMetadataURL()
	}
	if *consoleOn {
		con, err := console.New(ctx, console.Options{Store: db, Auth: authn, Logger: logger, PublicURL: *publicURL, OAuth: oauthSrv})
		if err != nil {
			return err
		}
		opts.Console = con
	}
	api := httpapi.New(opts)

	baseURL := "http://" + ln.Addr().String()
	if *demo {
		consoleURL := ""
		if *consoleOn {
			consoleURL = cmp.Or(strings.TrimSuffix(*publicURL, "/"), baseURL)
		}
		if err := seedDemo(ctx, db, authn, baseURL, consoleURL, e.Stdout); err != nil {
			ln.Close()
			return fmt.Errorf("demo: %w", err)
		}
	}
	srv := &http.Server{
		Handler:  api,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	limits.conn.Apply(srv) // header size and timeouts
	// --metrics-addr: /metrics on a listener of its own.
	var metricsSrv *http.Server
	var metricsLn net.Listener
	if ops.metricsAddr != "" {
		metricsLn, err = net.Listen("tcp", ops.metricsAddr)
		if err != nil {
			ln.Close()
			return fmt.Errorf("listen on --metrics-addr %s: %w", ops.metricsAddr, err)
		}
		metricsSrv = &http.Server{Handler: api.MetricsHandler(), ErrorLog: srv.ErrorLog}
		limits.conn.Apply(metricsSrv)
	}
	limits.warn(logger)
	if metricsLn != nil {
		logger.Info("worldforge metrics", "url", "http://"+metricsLn.Addr().String()+"/metrics")
		fmt.Fprintf(logw, "worldforge: metrics on http://%s/metrics\n", metricsLn.Addr().String())
	}
	logger.Info("worldforge listening", "url", baseURL+"/mcp", "db", cli.RedactDSN(dsn))
	fmt.Fprintf(logw, "worldforge: listening on %s/mcp\n", baseURL)
	logw.Flush()

	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	if metricsSrv != nil {
		go func() { errc <- metricsSrv.Serve(metricsLn) }()
	}
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// Graceful shutdown: /readyz turns 503 and open GET /mcp streams end;
	// the listener closes and in-flight requests finish (each one's audit
	// row is committed before it is answered) within --shutdown-timeout;
	// then the store commits whatever audit rows are still queued and
	// closes the database.
	logger.Info("shutting down", "timeout", ops.shutdownTimeout.String())
	api.Close()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), ops.shutdownTimeout)
	defer cancel()
	shutErr := srv.Shutdown(shutdownCtx)
	if shutErr != nil {
		logger.Warn("in-flight requests did not finish in time; closing their connections", "err", shutErr)
		srv.Close()
	}
	if metricsSrv != nil && metricsSrv.Shutdown(shutdownCtx) != nil {
		metricsSrv.Close()
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if shutErr != nil && !errors.Is(shutErr, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", shutErr)
	}
	logger.Info("shut down")
	return nil
}
