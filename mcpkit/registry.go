package mcpkit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool is a tool an agent can call: a local function, or a remote MCP tool
// added with AddRemote.
//
// InputSchema is a *jsonschema.Schema rather than raw JSON so that it is
// parsed and checked once, when the tool is added, not on every call; it
// is also what the go-sdk takes as an mcp.Tool's input schema, and it
// marshals back to the JSON a model API needs. Nil means any object.
// It must not be modified after the tool is added.
type Tool struct {
	Name string
	// Title is a display name for people (MCP's tool title); optional.
	Title       string
	Description string
	InputSchema *jsonschema.Schema
	// OutputSchema, if set, is the JSON schema of the tool's structured
	// result (MCP's outputSchema), kept as the tool gave it: a remote
	// tool's is passed on unchanged, and results are not checked against
	// it here.
	OutputSchema json.RawMessage
	// Annotations are the tool's behaviour hints (read-only, destructive,
	// idempotent, open-world) as MCP defines them; nil for none.
	Annotations *mcp.ToolAnnotations
	// Execute runs the tool with arguments that have passed InputSchema
	// ({} when the caller sent none). A tool that fails in a way the model
	// should see returns a result with IsError set; an error return is a
	// failure of the call itself.
	Execute func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error)
}

// RemoteRef names a tool on a remote server by the server's name and the
// tool's own (unqualified) name.
type RemoteRef struct {
	Server string
	Tool   string
}

// Collision reports a remote tool that could not have the qualified name it
// wanted because another tool held it. Nothing is overwritten: the tool
// gets a suffixed name, or, when a server lists the same tool name twice,
// the repeat is skipped (Name is then "").
type Collision struct {
	Ref    RemoteRef // the tool that was renamed or skipped
	Wanted string    // the qualified name it would have had
	Name   string    // the name it was added under; "" if skipped
	Holder RemoteRef // the tool holding Wanted; Server is "" for a local tool
}

// Qualifier is the separator of the interop naming style, server__tool.
const Qualifier = "__"

// DefaultSeparator is the separator of the original naming style,
// server_tool, used when QualifiedName or AddRemote gets "".
const DefaultSeparator = "_"

// MaxToolNameLen is the longest tool name that model APIs accept.
const MaxToolNameLen = 64

// hashLen is the number of hex digits of the suffix that keeps long or
// colliding names apart.
const hashLen = 8

// QualifiedName returns the name a remote tool goes by: server, sep (""
// means DefaultSeparator) and tool, with every character outside
// [A-Za-z0-9_-] (in all three) replaced by "_", so that model APIs
// accept it. A name
// longer than MaxToolNameLen is cut and ends in "_" and eight hex digits
// of a hash of server and tool, so that it stays stable and distinct:
//
//	QualifiedName("github", "create_issue", "")        == "github_create_issue"
//	QualifiedName("github", "create_issue", Qualifier) == "github__create_issue"
//	QualifiedName("my server", "files/read.v2", "_")   == "my_server_files_read_v2"
//
// Different tools can map to the same name ("a.b" and "a_b"); the Registry
// resolves that (see AddRemote). Route calls back with the Registry's
// table, never by splitting the name.
func QualifiedName(server, tool, sep string) string {
	if sep == "" {
		sep = DefaultSeparator
	}
	name := sanitizeName(server) + sanitizeName(sep) + sanitizeName(tool)
	if len(name) > MaxToolNameLen {
		name = withSuffix(name, "_"+nameHash(server, tool))
	}
	return name
}

func sanitizeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if validNameRune(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func validNameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}

func nameHash(server, tool string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	return hex.EncodeToString(sum[:])[:hashLen]
}

// withSuffix cuts base so that base+suffix fits MaxToolNameLen.
func withSuffix(base, suffix string) string {
	if n := MaxToolNameLen - len(suffix); len(base) > n {
		base = base[:n]
	}
	return base + suffix
}

// ValidToolName reports whether name is one model APIs accept:
// 1 to 64 characters from [A-Za-z0-9_-].
func ValidToolName(name string) bool {
	if name == "" || len(name) > MaxToolNameLen {
		return false
	}
	for _, r := range name {
		if !validNameRune(r) {
			return false
		}
	}
	return true
}

// Registry holds tools for an agent by name. It is safe for concurrent
// use.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]*entry
	// validName checks local tool names (ValidToolName unless a Provider
	// set the MCP rule).
	validName func(string) bool
}

type entry struct {
	tool   Tool
	schema *compiledSchema
	ref    *RemoteRef // nil for a local tool
	notes  []string   // what normalizing the input schema lost
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{tools: map[string]*entry{}, validName: ValidToolName}
}

// Add adds a local tool. It fails if the name is not a ValidToolName or is
// taken, if Execute is nil, or if the input schema cannot be used whole or
// the output schema is not JSON (SCHEMA_CONVERSION_ERROR). The stored
// schema is InputSchema normalized (see NormalizeSchema).
func (r *Registry) Add(t Tool) error {
	return r.add(t, false)
}

// add is Add; lenient takes a schema that loses something in
// normalization (see NormalizeSchemaNotes) rather than refusing it, for a
// tool passed on from elsewhere (a gateway's), whose notes SchemaNotes
// then gives.
func (r *Registry) add(t Tool, lenient bool) error {
	if !r.validName(t.Name) {
		return fmt.Errorf("mcpkit: invalid tool name %q", t.Name)
	}
	if t.Execute == nil {
		return fmt.Errorf("mcpkit: tool %q has no Execute", t.Name)
	}
	var (
		cs    *compiledSchema
		notes []string
		err   error
	)
	if lenient {
		cs, notes = lenientSchema(t.InputSchema)
	} else {
		cs, err = compileSchema(t.InputSchema)
	}
	if err != nil {
		return withTool(err, "", t.Name)
	}
	t.InputSchema = cs.schema
	if raw := bytes.TrimSpace(t.OutputSchema); !lenient && len(raw) > 0 && !json.Valid(raw) {
		return withTool(schemaErr("output schema is not valid JSON"), "", t.Name)
	}
	t.OutputSchema = cleanOutputSchema(t.OutputSchema)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tools[t.Name]; ok {
		return fmt.Errorf("mcpkit: tool %q: %w", t.Name, ErrDuplicateTool)
	}
	r.tools[t.Name] = &entry{tool: t, schema: cs, notes: notes}
	return nil
}

// lenientSchema is NormalizeSchemaNotes with what validation needs.
func lenientSchema(raw any) (*compiledSchema, []string) {
	cs, notes, err := normalizeSchema(raw)
	if err != nil {
		cs = openObjectSchema()
		notes = append(notes, trimValidationPrefix(err.Error())+"; replaced by an open object schema, arguments are checked only for being an object")
	}
	return cs, notes
}

// cleanOutputSchema returns an output schema as compact JSON, or nil for
// none (empty, null, or not JSON).
func cleanOutputSchema(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || !json.Valid(raw) {
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil
	}
	return buf.Bytes()
}

// outputSchemaOf encodes an MCP tool's output schema (any JSON value the
// go-sdk holds) for Tool.OutputSchema; nil for none.
func outputSchemaOf(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return cleanOutputSchema(b)
}

// InputSchemaJSON returns the named tool's input schema with two other
// forms of it, kept from when the tool was added so that they cost
// nothing: the JSON it marshals to (compact), and that JSON decoded (maps,
// slices, float64 …), nil where only the JSON is kept. Both are shared:
// callers must only read them. All nil for an unknown name.
func (r *Registry) InputSchemaJSON(name string) (schema *jsonschema.Schema, raw json.RawMessage, decoded map[string]any) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.tools[name]
	if !ok || e.schema == nil {
		return nil, nil, nil
	}
	return e.tool.InputSchema, e.schema.json, e.schema.decoded
}

// SchemaNotes says what normalizing the named tool's input schema lost
// (see NormalizeSchemaNotes): nil when nothing was, or for an unknown
// name. Arguments of a tool with notes are checked only as far as the
// notes say.
func (r *Registry) SchemaNotes(name string) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if e, ok := r.tools[name]; ok {
		return slices.Clone(e.notes)
	}
	return nil
}

// ErrDuplicateTool is returned by Add for a name already in use.
var ErrDuplicateTool = errors.New("a tool with this name exists")

func withTool(err error, server, tool string) error {
	var e *Error
	if errors.As(err, &e) {
		c := *e
		c.Server, c.Tool = server, tool
		return &c
	}
	return err
}

// Remove removes the tool with this name, local or remote, and reports
// whether there was one.
func (r *Registry) Remove(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.tools[name]
	delete(r.tools, name)
	return ok
}

// RemoveServer removes every tool added for server by AddRemote and
// returns their names, sorted.
func (r *Registry) RemoveServer(server string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.removeServer(server)
}

func (r *Registry) removeServer(server string) []string {
	var removed []string
	for name, e := range r.tools {
		if e.ref != nil && e.ref.Server == server {
			delete(r.tools, name)
			removed = append(removed, name)
		}
	}
	slices.Sort(removed)
	return removed
}

// RemoteServers lists the servers that have tools in the registry,
// sorted.
func (r *Registry) RemoteServers() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	seen := map[string]bool{}
	var out []string
	for _, e := range r.tools {
		if e.ref != nil && !seen[e.ref.Server] {
			seen[e.ref.Server] = true
			out = append(out, e.ref.Server)
		}
	}
	slices.Sort(out)
	return out
}

// Get returns the tool with this name.
func (r *Registry) Get(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.tools[name]
	if !ok {
		return Tool{}, false
	}
	return e.tool, true
}

// Remote returns the server and tool a qualified name routes to; false for
// a local or unknown name.
func (r *Registry) Remote(name string) (RemoteRef, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.tools[name]
	if !ok || e.ref == nil {
		return RemoteRef{}, false
	}
	return *e.ref, true
}

// List returns the tools sorted by name.
func (r *Registry) List() []Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Tool, 0, len(r.tools))
	for _, e := range r.tools {
		out = append(out, e.tool)
	}
	slices.SortFunc(out, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Len returns the number of tools.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.tools)
}

// Call validates args against the tool's schema and runs it. Empty or
// null args mean {}. It returns TOOL_NOT_FOUND for an unknown name and
// INVALID_PARAMETERS, with the problems ([]string) in Details, for
// arguments that fail the schema; Execute is then not called. Execute's
// result is returned as it is (content, structured content, isError). An
// Execute error that is an *Error is returned as it is, a context deadline
// becomes TIMEOUT, a cancellation is returned unchanged, and any other
// error becomes SERVER_ERROR.
func (r *Registry) Call(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	r.mu.RLock()
	e, ok := r.tools[name]
	r.mu.RUnlock()
	if !ok {
		return nil, &Error{Code: CodeToolNotFound, Tool: name, Message: "no such tool"}
	}
	var server string
	if e.ref != nil {
		server = e.ref.Server
	}
	args, problems := e.schema.validate(args)
	if len(problems) > 0 {
		return nil, &Error{
			Code:    CodeInvalidParameters,
			Server:  server,
			Tool:    name,
			Message: "arguments do not match the input schema: " + strings.Join(problems, "; "),
			Details: problems,
		}
	}
	res, err := e.tool.Execute(ctx, args)
	if err != nil {
		var me *Error
		switch {
		case errors.As(err, &me):
			return res, err
		case errors.Is(err, context.Canceled):
			return res, err
		case errors.Is(err, context.DeadlineExceeded):
			return res, &Error{Code: CodeTimeout, Server: server, Tool: name, Message: "tool call timed out", Err: err}
		default:
			return res, &Error{Code: CodeServerError, Server: server, Tool: name, Message: "tool failed", Err: err}
		}
	}
	if res == nil {
		res = &mcp.CallToolResult{Content: []mcp.Content{}}
	}
	return res, nil
}

// RemoteCaller calls a tool on a remote server (typically a Client's
// CallTool).
type RemoteCaller func(ctx context.Context, ref RemoteRef, args json.RawMessage) (*mcp.CallToolResult, error)

// AddRemote adds a server's tools under qualified names (QualifiedName
// with sep; "" means DefaultSeparator, Qualifier is the interop style),
// each calling call with its RemoteRef. It first removes the tools it added
// for server before, so calling it again after a tools/list_changed
// notification refreshes the server's tools.
//
// Tools are taken in name order. A qualified name already held (by a local
// tool, another server's tool, or a tool of this server whose name
// sanitizes the same) is never overwritten: the newcomer gets the name
// with "_" and an eight-digit hash of server and tool appended (cut to fit
// 64 characters; a further "_2", "_3" … if even that is taken), and a
// Collision is returned. A tool listed twice is added once.
//
// A tool whose input schema cannot be used whole is still added, never
// dropped: its arguments are checked as far as the schema allows, and
// SchemaNotes says what was lost (see NormalizeSchemaNotes). Each tool
// keeps its title, output schema and annotations.
//
// added lists the names added, sorted. err joins a SCHEMA_CONVERSION_ERROR
// for each tool with an empty name, which is skipped. err is also set,
// and nothing added, for an empty server name or a nil call.
func (r *Registry) AddRemote(server string, tools []*mcp.Tool, call RemoteCaller, sep string) (added []string, collisions []Collision, err error) {
	return r.AddRemoteNamed(server, tools, call, func(tool string) string { return QualifiedName(server, tool, sep) })
}

// PlainName is a tool's own name made acceptable to model APIs (see
// QualifiedName) without a server prefix: for a gateway in front of one
// server, or of servers whose tool names do not clash.
func PlainName(tool string) string {
	name := sanitizeName(tool)
	if len(name) > MaxToolNameLen {
		name = withSuffix(name, "_"+nameHash("", tool))
	}
	return name
}

// AddRemoteNamed is AddRemote with the registered names made by name (for
// example PlainName); collisions are resolved and reported the same way.
func (r *Registry) AddRemoteNamed(server string, tools []*mcp.Tool, call RemoteCaller, name func(tool string) string) (added []string, collisions []Collision, err error) {
	if server == "" {
		return nil, nil, errors.New("mcpkit: AddRemote: empty server name")
	}
	if call == nil {
		return nil, nil, errors.New("mcpkit: AddRemote: nil call")
	}
	sorted := slices.Clone(tools)
	sorted = slices.DeleteFunc(sorted, func(t *mcp.Tool) bool { return t == nil })
	slices.SortStableFunc(sorted, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })

	// Compile schemas outside the lock.
	schemas := make([]*compiledSchema, len(sorted))
	notes := make([][]string, len(sorted))
	var errs []error
	for i, t := range sorted {
		if t.Name == "" {
			errs = append(errs, &Error{Code: CodeSchemaConversionError, Server: server, Message: "tool with an empty name"})
			continue
		}
		schemas[i], notes[i] = lenientSchema(t.InputSchema)
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	r.removeServer(server)
	seen := map[string]bool{} // tool names added in this call
	for i, t := range sorted {
		cs := schemas[i]
		if cs == nil {
			continue
		}
		ref := RemoteRef{Server: server, Tool: t.Name}
		want := name(t.Name)
		if seen[t.Name] {
			collisions = append(collisions, Collision{Ref: ref, Wanted: want, Holder: ref})
			continue
		}
		got := want
		if holder, taken := r.tools[want]; taken {
			got = r.freeName(want, ref)
			c := Collision{Ref: ref, Wanted: want, Name: got, Holder: RemoteRef{Tool: want}}
			if holder.ref != nil {
				c.Holder = *holder.ref
			}
			collisions = append(collisions, c)
		}
		seen[t.Name] = true
		ref2 := ref
		r.tools[got] = &entry{
			tool: Tool{
				Name:         got,
				Title:        t.Title,
				Description:  t.Description,
				InputSchema:  cs.schema,
				OutputSchema: outputSchemaOf(t.OutputSchema),
				Annotations:  t.Annotations,
				Execute: func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
					return call(ctx, ref2, args)
				},
			},
			schema: cs,
			ref:    &ref2,
			notes:  notes[i],
		}
		added = append(added, got)
	}
	slices.Sort(added)
	return added, collisions, errors.Join(errs...)
}

// freeName finds a name for ref near want that no tool holds. Callers
// hold r.mu.
func (r *Registry) freeName(want string, ref RemoteRef) string {
	h := "_" + nameHash(ref.Server, ref.Tool)
	for n := 1; ; n++ {
		suffix := h
		if n > 1 {
			suffix += "_" + strconv.Itoa(n)
		}
		cand := withSuffix(want, suffix)
		if _, taken := r.tools[cand]; !taken {
			return cand
		}
	}
}
