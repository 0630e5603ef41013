package servecmd

import (
	"flag"
	"github.com/worldforge-go/worldforge/internal/cli"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/worldforge-go/worldforge/httpapi"
	"github.com/worldforge-go/worldforge/internal/obs"
)

// defaultShutdownTimeout is how long serve waits for in-flight requests
// after SIGTERM or SIGINT.
const defaultShutdownTimeout = 10 * time.Second

// defaultLogFlush is how long serve may hold a log line before writing it
// to stderr: one write for a batch of request lines instead of one each.
const defaultLogFlush = 100 * time.Millisecond

// opsFlags are serve's operations flags (README "Operations").
type opsFlags struct {
	logFormat       *string
	logFlush        *time.Duration
	shutdownTimeout *time.Duration
	metrics         *bool
	metricsAddr     *string
}

func addOpsFlags(fs *flag.FlagSet) *opsFlags {
	return &opsFlags{
		logFormat:       fs.String("log-format", "text", "log format on stderr: text or json (one line per request either way)"),
		logFlush:        fs.Duration("log-flush-interval", defaultLogFlush, "write log lines to stderr in batches at most this far apart (warnings and errors at once); 0 writes every line at once"),
		shutdownTimeout: fs.Duration("shutdown-timeout", defaultShutdownTimeout, "on SIGTERM or SIGINT, how long to wait for in-flight requests before closing their connections"),
		metrics:         fs.Bool("metrics", true, "serve Prometheus metrics at GET /metrics on --addr (or --metrics-addr), without authentication (false: no /metrics)"),
		metricsAddr:     fs.String("metrics-addr", "", "serve GET /metrics only on this HOST:PORT, a listener of its own with the same Host/Origin check (default: on --addr)"),
	}
}

// serveOps are the parsed operations flags.
type serveOps struct {
	json            bool
	logFlush        time.Duration
	shutdownTimeout time.Duration
	metrics         bool
	metricsAddr     string // "": /metrics on --addr
}

func (f *opsFlags) resolve() (*serveOps, error) {
	o := &serveOps{shutdownTimeout: *f.shutdownTimeout, metrics: *f.metrics, logFlush: *f.logFlush, metricsAddr: *f.metricsAddr}
	if o.metricsAddr != "" {
		if !o.metrics {
			return nil, cli.UsageErrorf("serve: --metrics-addr needs --metrics")
		}
		if _, _, err := net.SplitHostPort(o.metricsAddr); err != nil {
			return nil, cli.UsageErrorf("serve: --metrics-addr %q: %v", o.metricsAddr, err)
		}
	}
	switch *f.logFormat {
	case "text":
	case "json":
		o.json = true
	default:
		return nil, cli.UsageErrorf("serve: --log-format %q: want text or json", *f.logFormat)
	}
	if o.logFlush < 0 || o.logFlush > time.Minute {
		return nil, cli.UsageErrorf("serve: --log-flush-interval %s: want 0 (no batching) up to 1m", o.logFlush)
	}
	if o.shutdownTimeout <= 0 {
		return nil, cli.UsageErrorf("serve: --shutdown-timeout %s: want a positive duration", o.shutdownTimeout)
	}
	return o, nil
}

// logger is serve's logger on w: text or JSON, at level, adding the
// request id to every record logged with a request's context. Records are
// written to w in batches (--log-flush-interval; warnings and errors at
// once) through the returned writer, which serve's other lines on stderr
// also go through, so that they keep their order; the caller closes it.
func (o *serveOps) logger(w io.Writer, level slog.Level) (*slog.Logger, *obs.BufferedWriter) {
	bw := obs.NewBufferedWriter(w, o.logFlush)
	hopts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	if o.json {
		h = slog.NewJSONHandler(bw, hopts)
	} else {
		h = obs.NewTextHandler(bw, hopts) // slog's text, byte for byte, cheaper
	}
	return slog.New(obs.NewHandler(obs.NewFlushingHandler(h, bw, slog.LevelWarn))), bw
}

// options applies the flags to the HTTP layer's options.
func (o *serveOps) options(opts *httpapi.Options) {
	opts.DisableMetrics = !o.metrics
	opts.SeparateMetrics = o.metricsAddr != ""
}
