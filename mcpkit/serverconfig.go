package mcpkit

import (
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"

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

	// AllowedTools and DisabledTools filter the server's tools by their
	// own names: exact names, or patterns where "*" stands for any run of
	// characters (see ValidToolPattern). With AllowedTools set, only the
	// tools matching one of its patterns are kept; then every tool
	// matching a pattern of DisabledTools is dropped. A filtered tool is
	// absent from the client's tool list (and so from a Registry, a
	// Bridge and a gateway), and a call to it is refused before it reaches
	// the server with the answer to an unknown tool. Empty lists filter
	// nothing.
	AllowedTools  []string
	DisabledTools []string
}

// ValidToolPattern checks a pattern of AllowedTools or DisabledTools: a
// tool name, in which "*" stands for any run of characters (none too).
// It must not be empty and must not hold white space, control characters
// or the glob characters "?", "[", "]", "{", "}" and the backslash, which would
// read as wildcards that the filter does not have.
func ValidToolPattern(p string) error {
	if p == "" {
		return fmt.Errorf("empty pattern")
	}
	for _, r := range p {
		switch {
		case unicode.IsSpace(r) || unicode.IsControl(r):
			return fmt.Errorf("pattern %q holds white space or a control character", p)
		case strings.ContainsRune("?[]{}\\", r):
			return fmt.Errorf("pattern %q holds %q: only * is a wildcard", p, r)
		}
	}
	return nil
}

// toolFilter is a ServerConfig's AllowedTools and DisabledTools, checked.
type toolFilter struct {
	allowed, disabled []string
}

// newToolFilter checks the patterns; the error names the list and the
// position of the first bad one.
func newToolFilter(cfg *ServerConfig) (*toolFilter, error) {
	for _, l := range []struct {
		field    string
		patterns []string
	}{{"allowedTools", cfg.AllowedTools}, {"disabledTools", cfg.DisabledTools}} {
		for i, p := range l.patterns {
			if err := ValidToolPattern(p); err != nil {
				return nil, fmt.Errorf("%s[%d]: %w", l.field, i, err)
			}
		}
	}
	if len(cfg.AllowedTools) == 0 && len(cfg.DisabledTools) == 0 {
		return nil, nil
	}
	return &toolFilter{allowed: cfg.AllowedTools, disabled: cfg.DisabledTools}, nil
}

// keeps reports whether the filter lets the tool through; a nil filter
// keeps every tool.
func (f *toolFilter) keeps(tool string) bool {
	if f == nil {
		return true
	}
	if len(f.allowed) > 0 && !matchesAny(f.allowed, tool) {
		return false
	}
	return !matchesAny(f.disabled, tool)
}

func matchesAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if globMatch(p, name) {
			return true
		}
	}
	return false
}

// globMatch matches name against a pattern where "*" stands for any run
// of characters: the literal parts must appear in order, the first at the
// start and the last at the end.
func globMatch(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	first, last := parts[0], parts[len(parts)-1]
	if !strings.HasPrefix(name, first) {
		return false
	}
	name = name[len(first):]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(name, mid)
		if i < 0 {
			return false
		}
		name = name[i+len(mid):]
	}
	return strings.HasSuffix(name, last)
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
