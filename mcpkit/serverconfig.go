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
	// default, 60 s). A context deadline on a call overrides it.
	Timeout time.Duration
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
