package servecmd

import (
	"flag"
	"github.com/worldforge-go/worldforge/internal/cli"
	"log/slog"
	"math"
	"net"
	"strings"
	"time"

	"github.com/worldforge-go/worldforge/httpapi"
)

// limitFlags are serve's abuse-limit flags (README "Limits").
type limitFlags struct {
	rate                 *float64
	burst, maxConcurrent *int
	allowedHosts         *string
	maxBody              *int64
	maxHeader            *int
	readHeader, read     *time.Duration
	write, idle          *time.Duration

	maxStreamsPerCred, maxStreams *int
}

// Stream caps: the default per credential, and the bounds of the default
// per server, which is a quarter of the open-file limit.
const (
	defaultMaxStreamsPerCredential = 8
	maxDefaultStreams              = 1024
	fallbackNofile                 = 1024 // when the limit cannot be read
)

func addLimitFlags(fs *flag.FlagSet) *limitFlags {
	c := httpapi.DefaultConnLimits()
	return &limitFlags{
		rate:          fs.Float64("rate-limit", 0, "requests per second per credential, a token bucket (0 = off; 429 with Retry-After beyond); also failed authentications per remote IP"),
		burst:         fs.Int("rate-burst", 0, "the token bucket's size per credential (default: the rate, at least 1)"),
		maxConcurrent: fs.Int("max-concurrent", 0, "requests one credential may have in progress, open GET /mcp streams included (0 = no cap; 429 beyond)"),
		allowedHosts:  fs.String("allowed-hosts", "", "comma-separated host names (or HOST:PORT) requests may name in Host and Origin besides the loopback names; * = any (default: only loopback names on a loopback address)"),
		maxBody:       fs.Int64("max-body-bytes", httpapi.DefaultMaxBodyBytes, "largest request body (413 beyond)"),
		maxHeader:     fs.Int("max-header-bytes", c.MaxHeaderBytes, "largest request header block (431 beyond)"),
		readHeader:    fs.Duration("read-header-timeout", c.ReadHeaderTimeout, "time a client has to send the request headers (0 = --read-timeout)"),
		read:          fs.Duration("read-timeout", c.ReadTimeout, "time a client has to send a whole request, body included (0 = none)"),
		write:         fs.Duration("write-timeout", c.WriteTimeout, "time to write a response, from the end of the request headers (0 = none; GET /mcp streams are exempt)"),
		idle:          fs.Duration("idle-timeout", c.IdleTimeout, "how long an idle keep-alive connection stays open (0 = --read-timeout)"),

		maxStreamsPerCred: fs.Int("max-streams-per-credential", defaultMaxStreamsPerCredential, "GET /mcp streams one credential may hold open (0 = no cap; 429 beyond)"),
		maxStreams:        fs.Int("max-streams", 0, "GET /mcp streams open on the server, all credentials together (429 beyond); 0 = a quarter of the open-file limit (RLIMIT_NOFILE), at most 1024, so that streams leave file descriptors for every other request"),
	}
}

// defaultMaxStreams is the server's stream cap when --max-streams is not
// given: a quarter of the open-file limit nofile (0: unknown), at least 1
// and at most maxDefaultStreams.
func defaultMaxStreams(nofile uint64) int {
	if nofile == 0 {
		nofile = fallbackNofile
	}
	return int(max(1, min(nofile/4, maxDefaultStreams)))
}

// serveLimits are the parsed limit flags.
type serveLimits struct {
	api     httpapi.Limits
	maxBody int64
	conn    httpapi.ConnLimits
	// unchecked: the server listens beyond loopback and no --allowed-hosts
	// was given, so the Host of requests on other addresses is not checked.
	unchecked bool
}

// resolve checks the limit flags; addrs are the addresses serve listens
// on (--addr, --metrics-addr), already valid.
func (f *limitFlags) resolve(addrs ...string) (*serveLimits, error) {
	rate := *f.rate
	if math.IsNaN(rate) || math.IsInf(rate, 0) || rate < 0 {
		return nil, cli.UsageErrorf("serve: --rate-limit %v: want requests per second, 0 (off) or more", rate)
	}
	burst, maxConc := *f.burst, *f.maxConcurrent
	if burst < 0 {
		return nil, cli.UsageErrorf("serve: --rate-burst %d: want 0 (the rate) or more", burst)
	}
	if burst > 0 && rate == 0 {
		return nil, cli.UsageErrorf("serve: --rate-burst needs --rate-limit")
	}
	if maxConc < 0 {
		return nil, cli.UsageErrorf("serve: --max-concurrent %d: want 0 (no cap) or more", maxConc)
	}
	var hosts []string
	if *f.allowedHosts != "" {
		for _, h := range strings.Split(*f.allowedHosts, ",") {
			h = strings.TrimSpace(h)
			if !httpapi.ValidAllowedHost(h) {
				return nil, cli.UsageErrorf("serve: --allowed-hosts: %q is not HOST, HOST:PORT or *", h)
			}
			hosts = append(hosts, h)
		}
	}
	if *f.maxBody < 1 {
		return nil, cli.UsageErrorf("serve: --max-body-bytes %d: want 1 or more", *f.maxBody)
	}
	if *f.maxHeader < 1024 {
		return nil, cli.UsageErrorf("serve: --max-header-bytes %d: want 1024 or more", *f.maxHeader)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"read-header-timeout", *f.readHeader}, {"read-timeout", *f.read}, {"write-timeout", *f.write}, {"idle-timeout", *f.idle}} {
		if d.v < 0 {
			return nil, cli.UsageErrorf("serve: --%s %v: want 0 (none) or more", d.name, d.v)
		}
	}
	perCredStreams, streams := *f.maxStreamsPerCred, *f.maxStreams
	if perCredStreams < 0 {
		return nil, cli.UsageErrorf("serve: --max-streams-per-credential %d: want 0 (no cap) or more", perCredStreams)
	}
	if streams < 0 {
		return nil, cli.UsageErrorf("serve: --max-streams %d: want 0 (a quarter of the open-file limit) or more", streams)
	}
	if streams == 0 {
		streams = defaultMaxStreams(openFileLimit())
	}
	unchecked := false
	for _, addr := range addrs {
		if host, _, _ := net.SplitHostPort(addr); !loopbackHost(host) {
			unchecked = len(hosts) == 0
		}
	}
	return &serveLimits{
		api: httpapi.Limits{Rate: rate, Burst: burst, MaxConcurrent: maxConc, AllowedHosts: hosts,
			MaxStreamsPerCredential: perCredStreams, MaxStreams: streams},
		maxBody: *f.maxBody,
		conn: httpapi.ConnLimits{
			MaxHeaderBytes:    *f.maxHeader,
			ReadHeaderTimeout: *f.readHeader,
			ReadTimeout:       *f.read,
			WriteTimeout:      *f.write,
			IdleTimeout:       *f.idle,
		},
		unchecked: unchecked,
	}, nil
}

// loopbackHost reports whether --addr's host only listens on loopback.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// options puts the handler's limits into opts.
func (l *serveLimits) options(opts *httpapi.Options) {
	opts.Limits, opts.MaxBodyBytes = l.api, l.maxBody
}

// warn logs what the limits leave open.
func (l *serveLimits) warn(logger *slog.Logger) {
	logger.Info("GET /mcp stream caps", "per_credential", l.api.MaxStreamsPerCredential, "server", l.api.MaxStreams)
	if l.unchecked {
		logger.Warn("listening beyond loopback without --allowed-hosts: the Host and Origin of requests on other addresses are not checked (DNS-rebinding protection)")
	}
}
