package main

import (
	"flag"
	"io"
	"log/slog"
	"time"

	"github.com/worldforge-go/worldforge/httpapi"
	"github.com/worldforge-go/worldforge/internal/obs"
)

// defaultShutdownTimeout is how long serve waits for in-flight requests
// after SIGTERM or SIGINT.
const defaultShutdownTimeout = 10 * time.Second

// opsFlags are serve's operations flags (README "Operations").
type opsFlags struct {
	logFormat       *string
	shutdownTimeout *time.Duration
	metrics         *bool
}

func addOpsFlags(fs *flag.FlagSet) *opsFlags {
	return &opsFlags{
		logFormat:       fs.String("log-format", "text", "log format on stderr: text or json (one line per request either way)"),
		shutdownTimeout: fs.Duration("shutdown-timeout", defaultShutdownTimeout, "on SIGTERM or SIGINT, how long to wait for in-flight requests before closing their connections"),
		metrics:         fs.Bool("metrics", true, "serve Prometheus metrics at GET /metrics on --addr, without authentication (false: no /metrics)"),
	}
}

// serveOps are the parsed operations flags.
type serveOps struct {
	json            bool
	shutdownTimeout time.Duration
	metrics         bool
}

func (f *opsFlags) resolve() (*serveOps, error) {
	o := &serveOps{shutdownTimeout: *f.shutdownTimeout, metrics: *f.metrics}
	switch *f.logFormat {
	case "text":
	case "json":
		o.json = true
	default:
		return nil, usageErrorf("serve: --log-format %q: want text or json", *f.logFormat)
	}
	if o.shutdownTimeout <= 0 {
		return nil, usageErrorf("serve: --shutdown-timeout %s: want a positive duration", o.shutdownTimeout)
	}
	return o, nil
}

// logger is serve's logger on w: text or JSON, at level, adding the
// request id to every record logged with a request's context.
func (o *serveOps) logger(w io.Writer, level slog.Level) *slog.Logger {
	hopts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	if o.json {
		h = slog.NewJSONHandler(w, hopts)
	} else {
		h = slog.NewTextHandler(w, hopts)
	}
	return slog.New(obs.NewHandler(h))
}

// options applies the flags to the HTTP layer's options.
func (o *serveOps) options(opts *httpapi.Options) {
	opts.DisableMetrics = !o.metrics
}
