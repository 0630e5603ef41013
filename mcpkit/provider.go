package mcpkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The provider's default identity.
const (
	DefaultProviderName    = "mcpkit-provider"
	DefaultProviderVersion = "0.1.0"
)

// ProviderOptions configures a Provider. The zero value is usable.
type ProviderOptions struct {
	// Tools are added at start (see Provider.AddTool).
	Tools []Tool
	// Resources and Prompts are added at start (see Provider.AddResource
	// and Provider.AddPrompt).
	Resources []Resource
	Prompts   []Prompt
	// Instructions are sent to clients on initialization.
	Instructions string
	// Logger receives the provider's and the go-sdk server's logs. Nil
	// discards them. A stdio provider must not log to stdout.
	Logger *slog.Logger
	// KeepAlive, if positive, pings each client at this interval and
	// drops sessions that stop answering.
	KeepAlive time.Duration
	// HTTP configures Handler; nil for the go-sdk defaults (stateful
	// sessions, DNS-rebinding protection on localhost).
	HTTP *mcp.StreamableHTTPOptions
	// ServerOptions, if set, are the go-sdk server's options for what the
	// Provider does not wrap (CompletionHandler, SubscribeHandler and
	// UnsubscribeHandler, Capabilities such as logging …). Instructions,
	// Logger and KeepAlive above take precedence when set; the tools
	// capability (with list_changed) is always advertised, the resources
	// and prompts capabilities (with list_changed) while the provider has
	// any.
	ServerOptions *mcp.ServerOptions
}

// Provider exposes local Tools as an MCP server (the original's MCPServer
// and provider host). One Provider can serve any number of sessions at
// once, over stdio, any go-sdk transport, and streamable HTTP; tools added
// or removed while it runs are announced to every connected client with
// notifications/tools/list_changed.
//
// Arguments are validated against each tool's schema before Execute runs.
// Invalid arguments, and tool failures, are answered with a tool result
// whose isError is set and whose text says what was wrong — the MCP
// specification's "tool execution error", which the calling model can read
// and correct — rather than a JSON-RPC error, which hosts usually do not
// show the model. Only an unknown tool is a JSON-RPC error (-32602, as the
// specification says and the go-sdk does).
type Provider struct {
	server *mcp.Server
	reg    *Registry
	logger *slog.Logger
	httpOp *mcp.StreamableHTTPOptions
	mu     sync.Mutex // serializes AddTool/RemoveTool across reg and server; guards resources and prompts

	resources map[string]Resource         // by URI
	templates map[string]ResourceTemplate // by URI template
	prompts   map[string]Prompt           // by name

	// serving maps each session Serve runs to Serve's context, whose end
	// cancels the session's requests in flight (stopWithServe).
	serving sync.Map // *mcp.ServerSession → context.Context
}

// NewProvider returns a provider with info as its identity (empty fields
// default to DefaultProviderName and DefaultProviderVersion) and
// opts.Tools added. It fails if a tool cannot be added.
func NewProvider(info mcp.Implementation, opts *ProviderOptions) (*Provider, error) {
	if opts == nil {
		opts = &ProviderOptions{}
	}
	if info.Name == "" {
		info.Name = DefaultProviderName
	}
	if info.Version == "" {
		info.Version = DefaultProviderVersion
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	p := &Provider{
		reg:    &Registry{tools: map[string]*entry{}, validName: validMCPToolName},
		logger: logger,
		httpOp: opts.HTTP,
	}
	var so mcp.ServerOptions
	if opts.ServerOptions != nil {
		so = *opts.ServerOptions
	}
	if opts.Instructions != "" {
		so.Instructions = opts.Instructions
	}
	so.Logger = logger
	if opts.KeepAlive > 0 {
		so.KeepAlive = opts.KeepAlive
	}
	// Advertise tools (with list_changed) even before any tool is added,
	// so that clients subscribe to changes.
	caps := &mcp.ServerCapabilities{}
	if so.Capabilities != nil {
		c := *so.Capabilities
		caps = &c
	}
	if caps.Tools == nil {
		caps.Tools = &mcp.ToolCapabilities{ListChanged: true}
	}
	so.Capabilities = caps
	p.server = mcp.NewServer(&info, &so)
	p.server.AddReceivingMiddleware(p.stopWithServe)
	for _, t := range opts.Tools {
		if err := p.AddTool(t); err != nil {
			return nil, err
		}
	}
	for _, r := range opts.Resources {
		if err := p.AddResource(r); err != nil {
			return nil, err
		}
	}
	for _, pr := range opts.Prompts {
		if err := p.AddPrompt(pr); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// validMCPToolName is the MCP specification's rule for tool names: 1 to
// 128 characters from [A-Za-z0-9_.-].
func validMCPToolName(name string) bool {
	if name == "" || len(name) > 128 {
		return false
	}
	for _, r := range name {
		if !validNameRune(r) && r != '.' {
			return false
		}
	}
	return true
}

// Server returns the underlying go-sdk server, for what the Provider does
// not wrap (resource updates, sessions, middleware …). Add tools,
// resources, resource templates and prompts through the Provider, not the
// server.
func (p *Provider) Server() *mcp.Server { return p.server }

// AddTool adds a tool, announcing it to connected clients. It fails if the
// name is not a valid MCP tool name (1–128 characters from
// [A-Za-z0-9_.-]) or is taken, if Execute is nil, or if the schema cannot
// be used (SCHEMA_CONVERSION_ERROR). The tool's title, output schema and
// annotations are served with it.
func (p *Provider) AddTool(t Tool) error {
	return p.addTool(t, false)
}

// addTool is AddTool; lenient takes an input schema that loses something
// in normalization (a gateway's upstream tool) rather than refusing it.
func (p *Provider) addTool(t Tool, lenient bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.reg.add(t, lenient); err != nil {
		return err
	}
	stored, _ := p.reg.Get(t.Name)
	name := t.Name
	mt := &mcp.Tool{
		Name:        name,
		Title:       stored.Title,
		Description: stored.Description,
		InputSchema: stored.InputSchema,
		Annotations: stored.Annotations,
	}
	if stored.OutputSchema != nil {
		mt.OutputSchema = stored.OutputSchema
	}
	p.server.AddTool(mt, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return p.call(context.WithValue(ctx, callRequestKey{}, req), name, req.Params.Arguments)
	})
	return nil
}

type callRequestKey struct{}

// CallToolRequest returns the tools/call request a Provider tool's
// Execute is running for (nil outside a Provider call). Through it a tool
// reaches the calling session: req.Session.NotifyProgress with
// req.Params.GetProgressToken(), req.Session.Log, CreateMessage (sampling),
// Elicit, and req.Extra (HTTP headers, auth info).
func CallToolRequest(ctx context.Context) *mcp.CallToolRequest {
	req, _ := ctx.Value(callRequestKey{}).(*mcp.CallToolRequest)
	return req
}

type incomingRequestKey struct{}

// withIncoming records the request a Provider handler runs for.
func withIncoming(ctx context.Context, req mcp.Request) context.Context {
	return context.WithValue(ctx, incomingRequestKey{}, req)
}

// incomingRequest returns the request (tools/call, resources/read,
// prompts/get …) a Provider handler is running for, or nil.
func incomingRequest(ctx context.Context) mcp.Request {
	if req := CallToolRequest(ctx); req != nil {
		return req
	}
	req, _ := ctx.Value(incomingRequestKey{}).(mcp.Request)
	return req
}

// RemoveTool removes a tool, announcing it to connected clients, and
// reports whether there was one.
func (p *Provider) RemoveTool(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.reg.Remove(name) {
		return false
	}
	p.server.RemoveTools(name)
	return true
}

// Tools returns the provider's tools, sorted by name.
func (p *Provider) Tools() []Tool { return p.reg.List() }

// call runs one tools/call.
func (p *Provider) call(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	start := time.Now()
	res, err := p.reg.Call(ctx, name, args)
	var wire *jsonrpc.Error
	switch {
	case err == nil:
	case errors.Is(err, ErrToolNotFound): // removed since the server looked it up
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
	case errors.As(err, &wire): // the tool asked for a protocol error
		p.logger.DebugContext(ctx, "tool call", "tool", name, "duration", time.Since(start), "error", err)
		return nil, wire
	case errors.Is(err, ErrInvalidParameters):
		var e *Error
		errors.As(err, &e)
		problems, _ := e.Details.([]string)
		res = errorResult(fmt.Sprintf("invalid arguments for tool %q:\n- %s", name, strings.Join(problems, "\n- ")))
	default:
		res = errorResult(toolErrorText(err))
	}
	p.logger.DebugContext(ctx, "tool call", "tool", name, "duration", time.Since(start), "isError", res.IsError, "error", err)
	return res, nil
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// toolErrorText is the text of a failed tool's result: the tool's own
// error, without the registry's wrapping.
func toolErrorText(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Err != nil && (e.Code == CodeServerError || e.Code == CodeTimeout) {
		if e.Code == CodeTimeout {
			return "timed out: " + e.Err.Error()
		}
		return e.Err.Error()
	}
	return err.Error()
}

// Serve serves one session over t (any go-sdk transport: in-memory, an
// io pair, a client's stdio …) until the client disconnects, which
// returns nil, or ctx is done, which closes the session and returns
// ctx.Err(). It can be called any number of times, also concurrently.
func (p *Provider) Serve(ctx context.Context, t mcp.Transport) error {
	ss, err := p.server.Connect(ctx, t, nil)
	if err != nil {
		return fmt.Errorf("mcpkit: provider connect: %w", err)
	}
	p.serving.Store(ss, ctx)
	defer p.serving.Delete(ss)
	p.logger.InfoContext(ctx, "provider session started", "session", ss.ID())
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case <-ctx.Done():
		// The session's requests in flight saw ctx end (stopWithServe) and
		// are winding down; the go-sdk's Close waits for them.
		closed := make(chan struct{})
		go func() {
			ss.Close()
			close(closed)
		}()
		t := time.NewTimer(serveStopGrace)
		defer t.Stop()
		select {
		case <-closed:
			<-done
		case <-t.C:
			p.logger.WarnContext(ctx, "provider session stopped with handlers still running", "session", ss.ID(), "after", serveStopGrace)
		}
		p.logger.InfoContext(ctx, "provider session stopped", "session", ss.ID(), "reason", ctx.Err())
		return ctx.Err()
	case err := <-done:
		if err == nil || isCleanClose(err) {
			p.logger.InfoContext(ctx, "provider session ended", "session", ss.ID())
			return nil
		}
		p.logger.WarnContext(ctx, "provider session failed", "session", ss.ID(), "error", err)
		return fmt.Errorf("mcpkit: provider session: %w", err)
	}
}

// serveStopGrace bounds how long Serve, its context done, waits for the
// session's handlers to return after their contexts were cancelled.
const serveStopGrace = 5 * time.Second

// stopWithServe is receiving middleware: a request of a session that
// Serve runs gets a context that also ends with Serve's context, so that
// stopping Serve cancels the calls in flight (a gateway's upstream calls
// among them) instead of waiting for them to finish by themselves, which
// they might never do.
func (p *Provider) stopWithServe(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		v, ok := p.serving.Load(req.GetSession())
		if !ok {
			return next(ctx, method, req)
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(v.(context.Context), cancel)()
		return next(ctx, method, req)
	}
}

// isCleanClose reports whether a session ended because the peer went away.
// (The go-sdk already reports EOF on stdin as a nil error.)
func isCleanClose(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, mcp.ErrConnectionClosed)
}

// ServeStdio serves one session over the process's stdin and stdout (the
// go-sdk's StdioTransport) until stdin ends (nil) or ctx is done
// (ctx.Err()). It never exits the process; logs go to ProviderOptions.Logger,
// which must not write to stdout.
func (p *Provider) ServeStdio(ctx context.Context) error {
	return p.Serve(ctx, &mcp.StdioTransport{})
}

// Handler returns an http.Handler serving the provider over streamable
// HTTP, every session sharing the provider's tools. Mount it where clients
// should connect (for example at /mcp).
//
// It uses ProviderOptions.HTTP with PropagateRequestCancellation always
// on: under the stateless protocol (a Stateless handler) a client cancels
// a call by dropping its HTTP request, and only that option lets the
// cancellation reach the tool's context.
func (p *Provider) Handler() http.Handler {
	opts := p.httpOp
	if opts == nil {
		opts = &mcp.StreamableHTTPOptions{}
	}
	o := *opts
	o.PropagateRequestCancellation = true
	if o.Logger == nil {
		o.Logger = p.logger
	}
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return p.server }, &o)
}
