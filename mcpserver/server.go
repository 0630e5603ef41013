// Package mcpserver serves WorldForge's tools over the Model Context
// Protocol on one shared go-sdk *mcp.Server, built once at start-up.
//
// The caller's identity does not come from a per-request server: the HTTP
// layer verifies the bearer credential and hands the actor to the go-sdk as
// auth.TokenInfo (Extra[worldforge.TokenInfoActorKey]), which reaches every tool handler in
// CallToolRequest.Extra. Each tool runs the same steps, in this order:
//
//  1. scope check (missing_scopes:<every missing scope>),
//  2. owner resolution (missing_scopes:unresolved_owner),
//  3. argument validation against the tool's input schema (bad_request),
//  4. the operation in package app, which owns the rules: owner / GM /
//     member checks answering not_found to everyone else exactly as for a
//     missing id, visibility, the store call and one audit row, committed
//     before the result is returned.
//
// Steps 1 and 2 are the app layer's (app.Admit), run before the arguments
// are read so that a caller without access learns nothing of them; the
// access rows come from the app layer's table (app.ToolAccess).
//
// A failure at any step is a tool result with isError true whose one text
// block is the error code text; nothing is audited for it. A success is one
// text block holding the result's JSON.
//
// Tools are registered through the low-level Server.AddTool with our own
// schema validation: the schemas are derived once from the argument types
// in package worldforge and resolved at start-up.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/app"
	"github.com/worldforge-go/worldforge/internal/argjson"
	"github.com/worldforge-go/worldforge/internal/benchtool"
	"github.com/worldforge-go/worldforge/internal/obs"
)

// SDKLogger returns a logger for the go-sdk that passes only warnings and
// errors to l's handler: at Info the go-sdk reports each session connecting
// and ending, which on a stateless server is three lines per request.
func SDKLogger(l *slog.Logger) *slog.Logger {
	return slog.New(minLevel{Handler: l.Handler(), min: slog.LevelWarn})
}

// minLevel is a handler that drops records below min.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{Handler: h.Handler.WithAttrs(a), min: h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{Handler: h.Handler.WithGroup(name), min: h.min}
}

// Options configure a Server. The zero value is usable.
type Options struct {
	Logger *slog.Logger
	// MaxBufferedAnswerBytes bounds a read_world answer that has to be
	// built whole in memory (see DefaultMaxBufferedAnswerBytes); 0 means
	// the default.
	MaxBufferedAnswerBytes int64

	// benchNoopPayload, when set (by internal/benchtool.EnableNoop),
	// registers the tool bench_noop: no scope, no store, no audit row,
	// answering this JSON document. It exists for `worldforge-bench
	// compare`, to measure the protocol layer and middleware alone: only
	// worldforge-bench's hidden serve enables it (--bench-noop); the
	// worldforge binary never does.
	benchNoopPayload string
}

func init() {
	benchtool.Install(func(opts any, payload string) { opts.(*Options).benchNoopPayload = payload })
}

// DefaultMaxBufferedAnswerBytes is the largest world document read_world
// answers with where the answer has to be built whole in memory: on the
// go-sdk path (a request the HTTP layer's fast path leaves to the go-sdk,
// such as a JSON-RPC batch), or for a document that cannot be streamed
// (one that mentions "runtime" or has a \u escape; see
// worldjson.Splices). A larger one answers too_large, decided
// from the length the store recorded before anything is read. A plain
// tools/call on any protocol revision streams the document without limit.
const DefaultMaxBufferedAnswerBytes = 16 << 20

// Server holds the shared MCP server and the store its tools use.
type Server struct {
	store  worldforge.Store
	app    *app.Service
	log    *slog.Logger
	mcp    *mcp.Server
	impl   *mcp.Implementation
	tools  []*toolDef
	byName map[string]*toolDef
	// maxBuffered is Options.MaxBufferedAnswerBytes or its default.
	maxBuffered int64
	// answers are read_world's kept answers (worldcache.go).
	answers worldAnswers
}

// New builds the MCP server with every tool registered.
func New(store worldforge.Store, opts *Options) (*Server, error) {
	s := &Server{store: store, app: app.New(store), log: slog.New(slog.DiscardHandler), byName: map[string]*toolDef{},
		maxBuffered: DefaultMaxBufferedAnswerBytes}
	if opts != nil && opts.Logger != nil {
		s.log = opts.Logger
	}
	if opts != nil && opts.MaxBufferedAnswerBytes > 0 {
		s.maxBuffered = opts.MaxBufferedAnswerBytes
	}
	s.impl = &mcp.Implementation{Name: "worldforge", Title: "WorldForge", Version: worldforge.Version}
	s.mcp = mcp.NewServer(s.impl, &mcp.ServerOptions{
		Instructions: "WorldForge: read and propose changes to tabletop worlds, campaigns, wikis, atlases and lore. Every tool is scope-checked; ids you cannot see answer not_found.",
		// The go-sdk logs every session's start and end at Info; a stateless
		// server has a session per request, so only its warnings pass.
		Logger:       SDKLogger(s.log),
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	// The server offers tools only (initialize and server/discover say
	// so); the go-sdk would still answer prompts/* and resources/* with
	// empty lists. Undeclared capabilities are "method not found".
	s.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "prompts/") || strings.HasPrefix(method, "resources/") {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method %q not found: this server offers tools only", method)}
			}
			return next(ctx, method, req)
		}
	})
	regs := registrations
	if opts != nil && opts.benchNoopPayload != "" {
		payload := keptText(opts.benchNoopPayload) // sent as it is, no copy per call
		regs = append(slices.Clone(regs), declare(benchtool.NoopTool, "Benchmark only: answers a fixed document; no scope, no store, no audit row.",
			app.Access{Tool: benchtool.NoopTool, Who: app.WhoAnyone, ReadOnly: true}, &mcp.ToolAnnotations{ReadOnlyHint: true}, nil,
			func(_ *Server, _ context.Context, _ *call, _ *worldforge.IDArgs) (any, error) {
				return payload, nil
			}))
	}
	for _, reg := range regs {
		def, err := reg(s)
		if err != nil {
			return nil, err
		}
		s.tools = append(s.tools, def)
		s.byName[def.name] = def
		s.mcp.AddTool(def.tool, s.handler(def))
	}
	return s, nil
}

// MCP returns the shared go-sdk server.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Who says who may call a tool beyond holding its scopes: the app
// layer's app.Who.
type Who = app.Who

// The callers a tool admits (see app.Who).
const (
	WhoAnyone       = app.WhoAnyone
	WhoGMWorlds     = app.WhoGMWorlds
	WhoOwner        = app.WhoOwner
	WhoOwnerOrGM    = app.WhoOwnerOrGM
	WhoMember       = app.WhoMember
	WhoRowOwnerOrGM = app.WhoRowOwnerOrGM
)

// ToolAccess is one tool's row of the app layer's access table, as the
// tool descriptions state it and the app layer enforces it.
type ToolAccess = app.Access

// AccessTable lists every registered tool's access row in registration
// order (the benchmark-only bench_noop is not listed).
func (s *Server) AccessTable() []ToolAccess {
	out := make([]ToolAccess, 0, len(s.tools))
	for _, t := range s.tools {
		if t.name == benchtool.NoopTool {
			continue
		}
		row := t.access
		row.Scopes, row.Routes = slices.Clone(row.Scopes), slices.Clone(row.Routes)
		out = append(out, row)
	}
	return out
}

// toolDef is one registered tool.
type toolDef struct {
	name   string
	access app.Access
	tool   *mcp.Tool
	check  argChecker
	run    func(ctx context.Context, c *call, args json.RawMessage) (any, error)
}

// call is the state of one tool call shared with the tool's body.
type call struct {
	// req is the caller and the tool, as the app layer takes them.
	req app.Request
	// buffered: the result will be built whole in memory (the go-sdk
	// path), not streamed, so read_world holds it to maxBuffered.
	buffered bool
}

// registration builds one tool for a server.
type registration func(*Server) (*toolDef, error)

// tool declares a read-only tool whose arguments decode into In. schemaFn
// may adjust the schema derived from In (ranges, enums, defaults).
func tool[In any](name, description string, schemaFn func(*jsonschema.Schema), body func(s *Server, ctx context.Context, c *call, in *In) (any, error)) registration {
	return tableTool(name, description, &mcp.ToolAnnotations{ReadOnlyHint: true}, schemaFn, body)
}

// writeTool declares a tool that changes the world at once; destructive
// says whether it may delete or overwrite what was there.
func writeTool[In any](name, description string, destructive bool, schemaFn func(*jsonschema.Schema), body func(s *Server, ctx context.Context, c *call, in *In) (any, error)) registration {
	return tableTool(name, description, &mcp.ToolAnnotations{DestructiveHint: &destructive}, schemaFn, body)
}

// tableTool declares a tool with its row of the app layer's access table;
// a tool without one, or read-only against its row (or not), fails New.
func tableTool[In any](name, description string, ann *mcp.ToolAnnotations, schemaFn func(*jsonschema.Schema), body func(s *Server, ctx context.Context, c *call, in *In) (any, error)) registration {
	acc, ok := app.ToolAccess(name)
	if !ok {
		return func(*Server) (*toolDef, error) { return nil, fmt.Errorf("tool %s: no row in the access table", name) }
	}
	if acc.ReadOnly != ann.ReadOnlyHint {
		return func(*Server) (*toolDef, error) {
			return nil, fmt.Errorf("tool %s: declared read-only %v, its access row %v", name, ann.ReadOnlyHint, acc.ReadOnly)
		}
	}
	return declare(name, description, acc, ann, schemaFn, body)
}

func declare[In any](name, description string, acc app.Access, ann *mcp.ToolAnnotations, schemaFn func(*jsonschema.Schema), body func(s *Server, ctx context.Context, c *call, in *In) (any, error)) registration {
	return func(s *Server) (*toolDef, error) {
		schema, err := jsonschema.For[In](nil)
		if err != nil {
			return nil, fmt.Errorf("tool %s: schema: %w", name, err)
		}
		if schemaFn != nil {
			schemaFn(schema)
		}
		// Arguments are checked against the listed schema opened up:
		// unknown keys pass (and are then dropped), as the original's
		// object schemas let them; the listing still says what the tool
		// reads.
		open := openSchema(schema)
		resolved, err := open.Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("tool %s: resolve schema: %w", name, err)
		}
		def := &toolDef{
			name:   name,
			access: acc,
			check: argChecker{resolved: resolved, quick: compileQuick(open), lists: collectListBounds(schema),
				shape: argjson.ShapeOf(reflect.TypeFor[In]()), prepare: argPrepares[name]},
			tool: &mcp.Tool{
				Name:        name,
				Description: description + scopeNote(acc),
				InputSchema: schema,
				Annotations: ann,
			},
		}
		var memo *argMemo[In]
		if acc.ReadOnly && def.check.prepare == nil {
			memo = newArgMemo[In]()
		}
		def.run = func(ctx context.Context, c *call, raw json.RawMessage) (any, error) {
			in := new(In)
			if memo == nil || !memo.get(raw, in) {
				if err := decodeArgs(def.check, raw, in); err != nil {
					return nil, err
				}
				if memo != nil {
					memo.put(raw, in)
				}
			}
			return body(s, ctx, c, in)
		}
		return def, nil
	}
}

// scopeNote is the sentence on scopes and callers every description ends
// with, made from the access table so that the two cannot disagree.
func scopeNote(a app.Access) string {
	if len(a.Scopes) == 0 {
		return ""
	}
	sep := " and "
	if a.AnyScope {
		sep = " or "
	}
	return " Scope: " + strings.Join(a.Scopes, sep) + ". Caller: " + a.Who.String() + "."
}

// argChecker is a tool's input schema, resolved for the validator, and
// its quickSchema when it has one; its bounded lists; the shape of its
// argument type; and the tool's argument preparation, if any (see
// argPrepares).
type argChecker struct {
	resolved *jsonschema.Resolved
	quick    *quickSchema
	lists    listBounds
	shape    *argjson.Shape
	prepare  func(any) error
}

// validate checks decoded arguments: the quick check when it accepts them,
// else the validator, which decides.
func (c argChecker) validate(m map[string]any) error {
	if c.quick != nil && c.quick.accepts(m) {
		return nil
	}
	return c.resolved.Validate(m)
}

// openSchema returns a copy of s in which no object refuses unknown
// properties (additionalProperties: false is dropped at every level).
func openSchema(s *jsonschema.Schema) *jsonschema.Schema {
	c := s.CloneSchemas()
	var walk func(*jsonschema.Schema)
	walk = func(s *jsonschema.Schema) {
		if s == nil {
			return
		}
		if ap := s.AdditionalProperties; ap != nil {
			if b, err := json.Marshal(ap); err == nil && string(b) == "false" {
				s.AdditionalProperties = nil
			} else {
				walk(ap)
			}
		}
		for _, p := range s.Properties {
			walk(p)
		}
		for _, p := range s.PatternProperties {
			walk(p)
		}
		for _, d := range s.Defs {
			walk(d)
		}
		for _, d := range s.Definitions {
			walk(d)
		}
		for _, list := range [][]*jsonschema.Schema{s.PrefixItems, s.AllOf, s.AnyOf, s.OneOf} {
			for _, p := range list {
				walk(p)
			}
		}
		walk(s.Items)
		walk(s.AdditionalItems)
		walk(s.Not)
	}
	walk(c)
	return c
}

// decodeArgs validates raw tool arguments against the tool's schema and
// decodes them into dst. Keys the argument type does not name pass the
// schema and are dropped before decoding (a key differing from a field's
// only in letter case included: it never reaches the field); an integral
// number (7.0, 7e0) is accepted for an integer; errors name JSON paths,
// never Go types.
func decodeArgs(check argChecker, raw json.RawMessage, dst any) error {
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	var m any
	if err := json.Unmarshal(raw, &m); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) { // a number beyond float64's range
			if e := argjson.OutOfRange(raw); e != nil {
				return worldforge.BadRequest("invalid arguments: %v", e)
			}
			return worldforge.BadRequest("invalid arguments: %v", argjson.Describe(err))
		}
		return worldforge.BadRequest("arguments are not valid JSON: %v", err)
	}
	obj, ok := m.(map[string]any)
	if !ok {
		return worldforge.BadRequest("arguments must be a JSON object")
	}
	// A JSON string can carry NUL only as \u0000; no argument needs it, and
	// PostgreSQL cannot store it, so refuse it here for every engine.
	if bytes.Contains(raw, []byte(`\u0000`)) && hasNUL(m) {
		return worldforge.BadRequest("arguments must not contain NUL characters")
	}
	if err := check.lists.check(obj); err != nil {
		return err
	}
	if err := check.validate(obj); err != nil {
		return worldforge.BadRequest("invalid arguments: %v", err)
	}
	// The common case: nothing to drop or prepare, and no integral number
	// written as a fraction (which encoding/json refuses for an integer).
	if check.prepare == nil && check.shape.Clean(obj) {
		if err := json.Unmarshal(raw, dst); err == nil {
			return nil
		}
		reflect.ValueOf(dst).Elem().SetZero()
	}
	if err := argjson.Decode(raw, dst, argjson.Options{Prepare: check.prepare}); err != nil {
		var e *worldforge.Error
		if errors.As(err, &e) {
			return err
		}
		return worldforge.BadRequest("invalid arguments: %v", err)
	}
	return nil
}

// hasNUL reports whether any string (key or value) in v holds a NUL.
func hasNUL(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.IndexByte(v, 0) >= 0
	case []any:
		return slices.ContainsFunc(v, hasNUL)
	case map[string]any:
		for k, e := range v {
			if strings.IndexByte(k, 0) >= 0 || hasNUL(e) {
				return true
			}
		}
	}
	return false
}

// handler adapts a toolDef to the go-sdk.
func (s *Server) handler(def *toolDef) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.result(ctx, def, actorOf(ctx, req), req.Params.Arguments), nil
	}
}

// result runs a tool and renders the outcome as the tool result the
// client sees: one text block, isError for a failure.
func (s *Server) result(ctx context.Context, def *toolDef, actor *worldforge.Actor, args json.RawMessage) *mcp.CallToolResult {
	text, _, isError := s.outcome(ctx, def, actor, args, false, true)
	return &mcp.CallToolResult{IsError: isError, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// deferredResult is a tool result made after the call's audit row is
// committed, from the store: read_world of a world whose document is kept
// in pieces (worldText). open reads what the text is made of and returns
// its writer, which must be called exactly once (it releases what open
// holds), and the text's length in bytes, or fails.
type deferredResult interface {
	open(ctx context.Context) (write func(io.Writer) error, size int64, err error)
}

// outcome runs a tool and returns the text of its result's one block and
// whether it is an error. With streams set, a deferred result comes back
// as stream instead, the writer of its text (text is then ""). With capped
// set (the go-sdk path), a result built whole is held to maxBuffered.
func (s *Server) outcome(ctx context.Context, def *toolDef, actor *worldforge.Actor, args json.RawMessage, streams, capped bool) (text string, stream func(io.Writer) error, isError bool) {
	start := time.Now()
	res, err := s.invoke(ctx, def, &call{req: request(actor, def), buffered: capped}, args)
	if err == nil {
		switch r := res.(type) {
		case json.RawMessage: // already rendered
			text = string(r)
		case keptText: // rendered once, kept for other calls
			text = string(r)
		case deferredResult:
			var (
				write func(io.Writer) error
				size  int64
			)
			if write, size, err = r.open(ctx); err == nil {
				if streams {
					return "", s.recorded(ctx, def.name, start, write), false
				}
				var b strings.Builder
				b.Grow(int(size))
				err = write(&b)
				text = b.String()
			}
		default:
			var data []byte
			if data, err = json.Marshal(res); err != nil {
				err = fmt.Errorf("encode result: %w", err)
			}
			text = string(data)
		}
	}
	// Both paths to a tool (the go-sdk handler and the HTTP layer's fast
	// path) come through here: the request's record gets the call, for its
	// log line and metrics.
	obs.FromContext(ctx).AddToolCall(obs.ToolCall{Tool: def.name, Code: worldforge.ErrorCode(err), Duration: time.Since(start)})
	if err != nil {
		return errorText(ctx, s.log, def.name, err), nil, true
	}
	return text, nil, false
}

// recorded wraps a stream so that the request's record gets the call once
// it has been written. An error of dst's is the client's, not the tool's:
// the call is then recorded as a success.
func (s *Server) recorded(ctx context.Context, tool string, start time.Time, write func(io.Writer) error) func(io.Writer) error {
	return func(dst io.Writer) error {
		d := &destWriter{w: dst}
		err := write(d)
		code := ""
		if err != nil && (d.err == nil || !errors.Is(err, d.err)) {
			code = worldforge.ErrorCode(err)
			s.log.ErrorContext(ctx, "tool failed while sending its result", "tool", tool, "err", err)
		}
		obs.FromContext(ctx).AddToolCall(obs.ToolCall{Tool: tool, Code: code, Duration: time.Since(start)})
		return err
	}
}

// destWriter remembers the error its writer returned.
type destWriter struct {
	w   io.Writer
	err error
}

func (d *destWriter) Write(p []byte) (int, error) {
	n, err := d.w.Write(p)
	if err != nil && d.err == nil {
		d.err = err
	}
	return n, err
}

// CallToolText runs the named tool for actor, for in-process callers that
// encode the result themselves: the text of the result's one content block
// and whether it is an error; ok is false if no such tool is registered.
// Like CallTool, and unlike the go-sdk handler, it builds a read_world
// answer whole whatever its size (no MaxBufferedAnswerBytes).
func (s *Server) CallToolText(ctx context.Context, actor *worldforge.Actor, name string, args json.RawMessage) (text string, isError, ok bool) {
	def, ok := s.byName[name]
	if !ok {
		return "", false, false
	}
	text, _, isError = s.outcome(ctx, def, actor, args, false, false)
	return text, isError, true
}

// CallToolStream is CallToolText for the HTTP layer's fast path, which
// can send a result as it is written: a result too large to hold (read_world
// of a world whose document the store keeps in pieces) comes back as
// stream, the writer of the text (text is then "" and isError false). By
// then every check has passed and the audit row is committed; stream must
// be called exactly once (it holds a snapshot of the store until it
// returns). It writes the same text CallToolText returns, piece by piece;
// an error from it once it has written something leaves the text cut
// short. ok is false, with nothing run, if no such tool exists.
func (s *Server) CallToolStream(ctx context.Context, actor *worldforge.Actor, name string, args json.RawMessage) (text string, stream func(io.Writer) error, isError, ok bool) {
	def, ok := s.byName[name]
	if !ok {
		return "", nil, false, false
	}
	text, stream, isError = s.outcome(ctx, def, actor, args, true, false)
	return text, stream, isError, true
}

// Implementation is the server's name and version as the go-sdk announces
// them (serverInfo).
func (s *Server) Implementation() *mcp.Implementation { return s.impl }

// request is a tool call as the app layer takes it.
func request(actor *worldforge.Actor, def *toolDef) app.Request {
	return app.Request{Actor: actor, Via: app.Via{Tool: def.name}}
}

// invoke runs the steps every tool shares (see the package doc): the app
// layer admits the caller (scopes, owner) before the arguments are read,
// then the body decodes them and calls the app operation, which checks
// the rest and writes the audit row.
func (s *Server) invoke(ctx context.Context, def *toolDef, c *call, raw json.RawMessage) (any, error) {
	if _, err := app.Admit(c.req, def.access); err != nil {
		return nil, err
	}
	return def.run(ctx, c, raw)
}

func actorOf(ctx context.Context, req *mcp.CallToolRequest) *worldforge.Actor {
	if req != nil && req.Extra != nil && req.Extra.TokenInfo != nil {
		if a, ok := req.Extra.TokenInfo.Extra[worldforge.TokenInfoActorKey].(*worldforge.Actor); ok {
			return a
		}
	}
	return worldforge.ActorFromContext(ctx)
}

// errorText is the text of an error's isError tool result. Domain errors
// carry their code text; anything else is logged and reported as
// worldforge.InternalErrorText so no internals leak to the caller.
func errorText(ctx context.Context, log *slog.Logger, tool string, err error) string {
	var e *worldforge.Error
	if errors.As(err, &e) {
		return e.Error()
	}
	// With the context: a logger made with obs.NewHandler adds the
	// request id.
	log.ErrorContext(ctx, "tool failed", "tool", tool, "err", err)
	return worldforge.InternalErrorText
}

// CallTool runs a tool directly, without MCP framing, for in-process
// callers (the demo seeding, tests). It returns the result value or the
// tool error; a result the store sends in pieces comes back rendered, as
// json.RawMessage.
func (s *Server) CallTool(ctx context.Context, actor *worldforge.Actor, name string, args json.RawMessage) (any, error) {
	def, ok := s.byName[name]
	if !ok {
		return nil, worldforge.Errorf(worldforge.ENotFound, "unknown tool %q", name)
	}
	res, err := s.invoke(ctx, def, &call{req: request(actor, def)}, args)
	if d, ok := res.(deferredResult); ok && err == nil {
		write, size, err := d.open(ctx)
		if err != nil {
			return nil, err
		}
		buf := bytes.NewBuffer(make([]byte, 0, size))
		if err := write(buf); err != nil {
			return nil, err
		}
		return json.RawMessage(buf.Bytes()), nil
	}
	if r, ok := res.(keptText); ok && err == nil {
		return json.RawMessage(r), nil
	}
	return res, err
}
