package mcpkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func TestQualifiedName(t *testing.T) {
	long := strings.Repeat("x", 80)
	tests := []struct {
		server, tool, sep, want string
	}{
		{"github", "create_issue", "", "github_create_issue"},
		{"github", "create_issue", "_", "github_create_issue"},
		{"github", "create_issue", Qualifier, "github__create_issue"},
		{"my server", "files/read.v2", "_", "my_server_files_read_v2"},
		{"wörld", "ünï", "__", "w_rld___n_"},
		{"a", "b", ".", "a_b"},
		{"srv", long, "_", "srv_" + strings.Repeat("x", 51) + "_" + nameHash("srv", long)},
	}
	for _, tt := range tests {
		got := QualifiedName(tt.server, tt.tool, tt.sep)
		if got != tt.want {
			t.Errorf("QualifiedName(%q, %q, %q) = %q, want %q", tt.server, tt.tool, tt.sep, got, tt.want)
		}
		if !ValidToolName(got) {
			t.Errorf("%q is not a valid tool name", got)
		}
	}
	// Long names stay distinct and stable.
	a, b := QualifiedName("srv", long+"a", ""), QualifiedName("srv", long+"b", "")
	if a == b || len(a) != MaxToolNameLen || a != QualifiedName("srv", long+"a", "") {
		t.Errorf("long names: %q, %q", a, b)
	}
}

func TestValidToolName(t *testing.T) {
	for name, want := range map[string]bool{
		"a": true, "A-b_9": true, strings.Repeat("a", 64): true,
		"": false, "a.b": false, "a b": false, "é": false, strings.Repeat("a", 65): false,
	} {
		if got := ValidToolName(name); got != want {
			t.Errorf("ValidToolName(%q) = %v", name, got)
		}
	}
}

func echoTool(name string, schema *jsonschema.Schema) Tool {
	return Tool{
		Name:        name,
		Description: "echoes its arguments",
		InputSchema: schema,
		Execute: func(_ context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
			return textResult(string(args)), nil
		},
	}
}

func TestRegistryLocal(t *testing.T) {
	r := NewRegistry()
	schema := &jsonschema.Schema{
		Type:       "object",
		Properties: map[string]*jsonschema.Schema{"n": {Type: "integer"}, "opt": {Type: "string"}},
		Required:   []string{"n"},
	}
	if err := r.Add(echoTool("echo", schema)); err != nil {
		t.Fatal(err)
	}
	if err := r.Add(echoTool("any", nil)); err != nil {
		t.Fatal(err)
	}
	if err := r.Add(echoTool("echo", nil)); !errors.Is(err, ErrDuplicateTool) {
		t.Errorf("duplicate Add: %v", err)
	}
	for _, bad := range []Tool{
		echoTool("", nil),
		echoTool("has.dot", nil),
		echoTool(strings.Repeat("a", 65), nil),
		{Name: "noexec"},
	} {
		if err := r.Add(bad); err == nil {
			t.Errorf("Add(%q) succeeded", bad.Name)
		}
	}
	if err := r.Add(echoTool("str", &jsonschema.Schema{Type: "string"})); !errors.Is(err, ErrSchemaConversion) {
		t.Errorf("Add with a string schema: %v", err)
	} else if e := err.(*Error); e.Tool != "str" {
		t.Errorf("schema error does not name the tool: %v", err)
	}

	var names []string
	for _, tool := range r.List() {
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, []string{"any", "echo"}) {
		t.Errorf("List = %v", names)
	}
	if got, _ := r.Get("any"); got.InputSchema == nil || got.InputSchema.Type != "object" {
		t.Errorf("nil schema not normalized: %+v", got.InputSchema)
	}
	if _, ok := r.Remote("echo"); ok {
		t.Error("local tool has a remote ref")
	}

	ctx := context.Background()
	res, err := r.Call(ctx, "echo", json.RawMessage(`{"n": 3}`))
	if err != nil || res.Content[0].(*mcp.TextContent).Text != `{"n": 3}` {
		t.Errorf("Call = %v, %v", res, err)
	}
	res, err = r.Call(ctx, "any", nil)
	if err != nil || res.Content[0].(*mcp.TextContent).Text != `{}` {
		t.Errorf("Call with no args = %v, %v", res, err)
	}

	_, err = r.Call(ctx, "echo", json.RawMessage(`{"n": "three", "opt": 1}`))
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeInvalidParameters || e.Tool != "echo" {
		t.Fatalf("bad args: %v", err)
	}
	want := []string{`property "n": type: three has type "string", want "integer"`, `property "opt": type: 1 has type "integer", want "string"`}
	if got, _ := e.Details.([]string); !slices.Equal(got, want) {
		t.Errorf("details = %q, want %q", got, want)
	}

	if _, err := r.Call(ctx, "nope", nil); !errors.Is(err, ErrToolNotFound) {
		t.Errorf("unknown tool: %v", err)
	}
	if !r.Remove("echo") || r.Remove("echo") {
		t.Error("Remove")
	}
	if _, err := r.Call(ctx, "echo", nil); !errors.Is(err, ErrToolNotFound) {
		t.Errorf("removed tool: %v", err)
	}
}

func TestRegistryCallErrors(t *testing.T) {
	r := NewRegistry()
	boom := errors.New("boom")
	own := &Error{Code: CodeTransportError, Server: "s", Message: "gone"}
	for name, err := range map[string]error{
		"plain":    boom,
		"own":      own,
		"canceled": context.Canceled,
		"deadline": fmt.Errorf("wrapped: %w", context.DeadlineExceeded),
	} {
		err := err
		r.Add(Tool{Name: name, Execute: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) { return nil, err }})
	}
	r.Add(Tool{Name: "nilresult", Execute: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) { return nil, nil }})
	structured := &mcp.CallToolResult{IsError: true, StructuredContent: map[string]any{"k": 1}, Content: []mcp.Content{&mcp.TextContent{Text: "t"}}}
	r.Add(Tool{Name: "whole", Execute: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) { return structured, nil }})

	ctx := context.Background()
	if _, err := r.Call(ctx, "plain", nil); !errors.Is(err, ErrServerError) || !errors.Is(err, boom) {
		t.Errorf("plain: %v", err)
	}
	if _, err := r.Call(ctx, "own", nil); err != own {
		t.Errorf("own: %v", err)
	}
	if _, err := r.Call(ctx, "canceled", nil); err != context.Canceled {
		t.Errorf("canceled: %v", err)
	}
	if _, err := r.Call(ctx, "deadline", nil); !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline: %v", err)
	}
	if res, err := r.Call(ctx, "nilresult", nil); err != nil || res == nil || res.Content == nil {
		t.Errorf("nil result: %v, %v", res, err)
	}
	if res, err := r.Call(ctx, "whole", nil); err != nil || res != structured {
		t.Errorf("result not passed whole: %v, %v", res, err)
	}
}

// remoteCalls records the RemoteRefs a RemoteCaller was called with.
type remoteCalls struct {
	mu   sync.Mutex
	refs []RemoteRef
}

func (rc *remoteCalls) call(_ context.Context, ref RemoteRef, args json.RawMessage) (*mcp.CallToolResult, error) {
	rc.mu.Lock()
	rc.refs = append(rc.refs, ref)
	rc.mu.Unlock()
	return textResult(ref.Server + "/" + ref.Tool + " " + string(args)), nil
}

func mcpTools(names ...string) []*mcp.Tool {
	var out []*mcp.Tool
	for _, n := range names {
		out = append(out, &mcp.Tool{Name: n, Description: "remote " + n, InputSchema: map[string]any{"type": "object"}})
	}
	return out
}

func TestRegistryAddRemote(t *testing.T) {
	r := NewRegistry()
	rc := &remoteCalls{}
	ctx := context.Background()

	added, coll, err := r.AddRemote("github", mcpTools("search", "create.issue", "create_issue"), rc.call, "")
	if err != nil {
		t.Fatal(err)
	}
	// "create.issue" sorts first and keeps the clean name.
	renamed := "github_create_issue_" + nameHash("github", "create_issue")
	if want := []string{"github_create_issue", renamed, "github_search"}; !slices.Equal(added, want) {
		t.Errorf("added = %v, want %v", added, want)
	}
	wantColl := []Collision{{
		Ref:    RemoteRef{"github", "create_issue"},
		Wanted: "github_create_issue",
		Name:   renamed,
		Holder: RemoteRef{"github", "create.issue"},
	}}
	if !slices.Equal(coll, wantColl) {
		t.Errorf("collisions = %+v, want %+v", coll, wantColl)
	}
	for name, ref := range map[string]RemoteRef{
		"github_create_issue": {"github", "create.issue"},
		renamed:               {"github", "create_issue"},
		"github_search":       {"github", "search"},
	} {
		if got, ok := r.Remote(name); !ok || got != ref {
			t.Errorf("Remote(%q) = %v, %v; want %v", name, got, ok, ref)
		}
	}

	// Calls route by the table, with the unqualified tool name.
	res, err := r.Call(ctx, renamed, json.RawMessage(`{"title": "x"}`))
	if err != nil || res.Content[0].(*mcp.TextContent).Text != `github/create_issue {"title": "x"}` {
		t.Errorf("Call = %v, %v", res, err)
	}

	// Another server whose names collide with existing ones, and a
	// local tool holding a name: nothing is overwritten.
	if err := r.Add(echoTool("git_hub_search", nil)); err != nil {
		t.Fatal(err)
	}
	added, coll, err = r.AddRemote("git_hub", mcpTools("search", "search"), rc.call, "")
	if err != nil {
		t.Fatal(err)
	}
	renamed2 := "git_hub_search_" + nameHash("git_hub", "search")
	if !slices.Equal(added, []string{renamed2}) {
		t.Errorf("added = %v", added)
	}
	wantColl = []Collision{
		{Ref: RemoteRef{"git_hub", "search"}, Wanted: "git_hub_search", Name: renamed2, Holder: RemoteRef{Tool: "git_hub_search"}},
		{Ref: RemoteRef{"git_hub", "search"}, Wanted: "git_hub_search", Name: "", Holder: RemoteRef{"git_hub", "search"}},
	}
	if !slices.Equal(coll, wantColl) {
		t.Errorf("collisions = %+v, want %+v", coll, wantColl)
	}
	if tool, _ := r.Get("git_hub_search"); tool.Description != "echoes its arguments" {
		t.Error("local tool overwritten")
	}

	// Interop style.
	added, _, err = r.AddRemote("fs", mcpTools("read"), rc.call, Qualifier)
	if err != nil || !slices.Equal(added, []string{"fs__read"}) {
		t.Errorf("interop: %v, %v", added, err)
	}

	// Refreshing a server replaces its tools; others are untouched.
	added, coll, err = r.AddRemote("github", mcpTools("search", "list"), rc.call, "")
	if err != nil || len(coll) != 0 || !slices.Equal(added, []string{"github_list", "github_search"}) {
		t.Errorf("refresh: %v, %v, %v", added, coll, err)
	}
	if _, ok := r.Get(renamed); ok {
		t.Error("stale tool survived a refresh")
	}
	if got := r.RemoveServer("github"); !slices.Equal(got, []string{"github_list", "github_search"}) {
		t.Errorf("RemoveServer = %v", got)
	}
	if _, ok := r.Get("fs__read"); !ok {
		t.Error("RemoveServer removed another server's tool")
	}
}

func TestRegistryAddRemoteDeterministic(t *testing.T) {
	// The same tools in any order get the same names.
	names := []string{"a.b", "a_b", "a-b", "a b", "a/b"}
	var first []string
	for i := range 5 {
		order := slices.Clone(names)
		for j := range order {
			k := (j*7 + i*3) % len(order)
			order[j], order[k] = order[k], order[j]
		}
		r := NewRegistry()
		added, coll, err := r.AddRemote("s", mcpTools(order...), (&remoteCalls{}).call, "")
		if err != nil || len(added) != 5 || len(coll) != 3 { // "a-b" is already valid
			t.Fatalf("added %v, collisions %v, err %v", added, coll, err)
		}
		var routes []string
		for _, n := range added {
			ref, _ := r.Remote(n)
			routes = append(routes, n+"→"+ref.Tool)
		}
		if i == 0 {
			first = routes
		} else if !slices.Equal(routes, first) {
			t.Errorf("order %v: %v, want %v", order, routes, first)
		}
	}
}

func TestRegistryAddRemoteLongNames(t *testing.T) {
	r := NewRegistry()
	long := strings.Repeat("t", 70)
	server := strings.Repeat("s", 70)
	added, coll, err := r.AddRemote(server, mcpTools(long+"1", long+"2", long+".1"), (&remoteCalls{}).call, Qualifier)
	if err != nil || len(coll) != 0 {
		t.Fatalf("%v %v", coll, err)
	}
	for _, n := range added {
		if !ValidToolName(n) {
			t.Errorf("%q invalid", n)
		}
	}
	// A name that collides after the hash suffix gets a counter.
	r2 := NewRegistry()
	want := QualifiedName("s", long, "")
	r2.Add(echoTool(want, nil))
	r2.Add(echoTool(withSuffix(want, "_"+nameHash("s", long)), nil)) // the same as want: long names already carry the hash
	added, coll, _ = r2.AddRemote("s", mcpTools(long), (&remoteCalls{}).call, "")
	if len(added) != 1 || len(coll) != 1 || !ValidToolName(added[0]) || !strings.HasSuffix(added[0], "_2") {
		t.Errorf("added %v, collisions %+v", added, coll)
	}
}

func TestRegistryAddRemoteBadSchemas(t *testing.T) {
	r := NewRegistry()
	tools := []*mcp.Tool{
		{Name: "good", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}, "required": []any{"n"}}},
		{Name: "nil-schema"},
		{Name: "bad", InputSchema: map[string]any{"type": "string"}},
		{Name: ""},
		nil,
	}
	added, _, err := r.AddRemote("srv", tools, (&remoteCalls{}).call, "")
	// A schema that cannot be used whole leaves its tool in (SchemaNotes
	// says what was lost); only the nameless tool is refused.
	if !slices.Equal(added, []string{"srv_bad", "srv_good", "srv_nil-schema"}) {
		t.Errorf("added = %v", added)
	}
	var tools2 []string
	for _, err := range err.(interface{ Unwrap() []error }).Unwrap() {
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeSchemaConversionError || e.Server != "srv" {
			t.Errorf("err = %v", err)
		}
		tools2 = append(tools2, e.Tool)
	}
	if !slices.Equal(tools2, []string{""}) {
		t.Errorf("schema errors for %q, want the empty name", tools2)
	}
	if n := r.SchemaNotes("srv_bad"); len(n) != 1 || r.SchemaNotes("srv_good") != nil {
		t.Errorf("SchemaNotes: bad %q, good %q", n, r.SchemaNotes("srv_good"))
	}
	var e *Error
	// The remote schema is enforced before the call leaves.
	if _, err := r.Call(context.Background(), "srv_good", json.RawMessage(`{"n": "x"}`)); !errors.Is(err, ErrInvalidParameters) {
		t.Errorf("Call: %v", err)
	} else if errors.As(err, &e); e.Server != "srv" {
		t.Errorf("error does not name the server: %v", err)
	}

	if _, _, err := r.AddRemote("", nil, (&remoteCalls{}).call, ""); err == nil {
		t.Error("empty server accepted")
	}
	if _, _, err := r.AddRemote("x", nil, nil, ""); err == nil {
		t.Error("nil call accepted")
	}
}

func TestRegistryConcurrent(t *testing.T) {
	r := NewRegistry()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			server := fmt.Sprintf("s%d", i%3)
			for range 20 {
				r.AddRemote(server, mcpTools("a", "b"), (&remoteCalls{}).call, "")
				r.Call(context.Background(), server+"_a", nil)
				r.List()
				r.RemoveServer(server)
			}
		}()
	}
	wg.Wait()
}
