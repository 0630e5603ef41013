package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Default client identity, sent to the server as clientInfo.
const (
	DefaultClientName    = "worldforge-sdk"
	DefaultClientVersion = "0.1.0"
)

// Options configure [Connect]. BaseURL and one credential are required.
type Options struct {
	// BaseURL is the server's base URL, such as http://127.0.0.1:8080; the
	// /mcp path is appended. A URL that already ends in /mcp is used as
	// it is.
	BaseURL string

	// The credential: the first one set of APIKey, JWT and TokenSource.
	APIKey      string
	JWT         string
	TokenSource TokenSource

	// HTTPClient carries the requests; nil is http.DefaultClient. It is
	// copied with its Transport wrapped to add the Authorization header;
	// the caller's client is not modified.
	HTTPClient *http.Client

	// ClientInfo is the identity sent to the server. Empty fields default
	// to DefaultClientName and DefaultClientVersion.
	ClientInfo ClientInfo

	// ProtocolVersion is the MCP revision to ask for; "" is the go-sdk's
	// default, the stateless 2026-07-28 revision (see the package doc).
	ProtocolVersion string

	// MCPOptions are the go-sdk client's options, for what Session() is
	// used for: a ProgressNotificationHandler, a Logger, … nil is the
	// go-sdk's defaults.
	MCPOptions *mcp.ClientOptions
}

// ClientInfo is the client's name and version, as MCP's clientInfo.
type ClientInfo struct {
	Name    string
	Version string
}

// Client is a connected session with a WorldForge MCP endpoint. It is safe
// for concurrent use.
type Client struct {
	session *mcp.ClientSession
}

// ToolInfo is one tool as tools/list describes it.
type ToolInfo struct {
	Name        string
	Description string
}

// Connect resolves the credential (a TokenSource is called once, here),
// connects to the endpoint and returns the ready client. Without BaseURL or
// a credential it fails before any network I/O. Transport failures (a 401,
// a refused connection) are the go-sdk's errors, wrapped with the endpoint.
func Connect(ctx context.Context, opts Options) (*Client, error) {
	endpoint, err := EndpointURL(opts.BaseURL)
	if err != nil {
		return nil, err
	}
	token, err := resolveToken(ctx, opts)
	if err != nil {
		return nil, err
	}
	info := opts.ClientInfo
	if info.Name == "" {
		info.Name = DefaultClientName
	}
	if info.Version == "" {
		info.Version = DefaultClientVersion
	}
	base := opts.HTTPClient
	if base == nil {
		base = http.DefaultClient
	}
	hc := *base
	bt := &bearerTransport{token: token, base: base.Transport}
	bt.connecting.Store(true)
	hc.Transport = bt

	mc := mcp.NewClient(&mcp.Implementation{Name: info.Name, Version: info.Version}, opts.MCPOptions)
	transport := &mcp.StreamableClientTransport{
		Endpoint:             endpoint,
		HTTPClient:           &hc,
		MaxRetries:           -1, // no retries: a 401 surfaces at once
		DisableStandaloneSSE: true,
	}
	cs, err := mc.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: opts.ProtocolVersion})
	refused := bt.connectDone()
	if err != nil {
		if refused != 0 {
			// The go-sdk's error is that of its last attempt; the answer
			// that counts is the refusal of the first.
			return nil, fmt.Errorf("connect to %s: %w", endpoint, &refusedError{status: refused})
		}
		return nil, fmt.Errorf("connect to %s: %w", endpoint, err)
	}
	if refused != 0 {
		cs.Close()
		return nil, fmt.Errorf("connect to %s: %w", endpoint, &refusedError{status: refused})
	}
	return &Client{session: cs}, nil
}

// EndpointURL returns the MCP endpoint of a server's base URL: base with
// /mcp appended, or base itself when it already ends in /mcp. It accepts
// only absolute http and https URLs.
func EndpointURL(base string) (string, error) {
	if base == "" {
		return "", errors.New("worldforge client: no BaseURL")
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("worldforge client: BaseURL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("worldforge client: BaseURL %q is not an http(s) URL", base)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("worldforge client: BaseURL %q has a query or fragment", base)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	if !strings.HasSuffix(u.Path, "/mcp") {
		u.Path += "/mcp"
	}
	return u.String(), nil
}

// Close ends the session.
func (c *Client) Close() error { return c.session.Close() }

// Session returns the underlying go-sdk session, for resources, prompts and
// progress notifications.
func (c *Client) Session() *mcp.ClientSession { return c.session }

// ListTools returns the name and description of every tool, in the
// server's order (all pages).
func (c *Client) ListTools(ctx context.Context) ([]ToolInfo, error) {
	var tools []ToolInfo
	for t, err := range c.session.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		tools = append(tools, ToolInfo{Name: t.Name, Description: t.Description})
	}
	return tools, nil
}
