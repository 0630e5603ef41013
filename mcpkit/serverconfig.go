package mcpkit

import (
	"net/http"
	"time"

	"github.com/worldforge-go/worldforge/mcpkit/oauth"
)

// TransportKind is how a client reaches a server.
type TransportKind string

// The transports.
const (
	TransportStdio TransportKind = "stdio" // a child process speaking on stdin/stdout
	TransportHTTP  TransportKind = "http"  // streamable HTTP
	TransportSSE   TransportKind = "sse"   // the legacy HTTP+SSE transport
)

// ServerConfig describes one server. Kind picks the transport; when empty
// it is stdio if Command is set and streamable HTTP if URL is.
type ServerConfig struct {
	Name string
	Kind TransportKind

	// Stdio: the command, its arguments, environment variables merged
	// over the parent's environment (so PATH survives), and the working
	// directory ("" for the parent's).
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string

	// HTTP and SSE: the endpoint, extra headers, and an optional client
	// (nil for a default one).
	URL        string
	Headers    map[string]string
	HTTPClient *http.Client
	// OAuth, if set, authorizes the HTTP or SSE session with OAuth 2.1
	// (see oauth.Config); the tokens live as long as the Client.
	OAuth *oauth.Config

	// Timeout bounds each request to this server (0: the client's
	// default, 60 s). A context deadline on a call overrides it (and
	// the two settings below), unless the call's context also has a
	// RequestTimeout (WithRequestTimeout), which replaces all three.
	Timeout time.Duration
	// ResetTimeoutOnProgress restarts a request's Timeout whenever the
	// server sends a progress notification for it, so that a long
	// operation that reports progress is not cut off; the request then
	// carries a progress token. (ClientOptions.ResetTimeoutOnProgress
	// turns it on for every server.)
	ResetTimeoutOnProgress bool
	// MaxTotalTimeout, if positive, bounds a request's whole run however
	// often progress restarted its timeout (0: ClientOptions'
	// MaxTotalTimeout; if that is 0 too, no bound).
	MaxTotalTimeout time.Duration
}

// Transport returns the configured or inferred transport kind, or "" if
// neither a command nor a URL is set.
func (c *ServerConfig) Transport() TransportKind {
	switch {
	case c.Kind != "":
		return c.Kind
	case c.Command != "":
		return TransportStdio
	case c.URL != "":
		return TransportHTTP
	}
	return ""
}
