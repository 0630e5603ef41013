package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/tools/txtar"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/internal/jsonscan"
)

// The fast path copies what the go-sdk keeps to itself. The tests below
// pin each copy to the go-sdk version in go.mod: by behaviour where the
// go-sdk exposes it (its exported API, its server's answer), and otherwise
// by reading the go-sdk's source from the module cache and checking that
// the copied thing is still there as it was copied.

// pinnedSDKVersion is the go-sdk version the copies were last checked
// against. Upgrading the go-sdk fails TestSDKPinnedVersion until each of
// sdkCopies is re-checked and this is updated.
const pinnedSDKVersion = "v1.8.0"

const sdkModule = "github.com/modelcontextprotocol/go-sdk"

// sdkCopies lists each copy: ours, and the go-sdk's original.
var sdkCopies = []string{
	"fastpath.go fastProtocols, newProtocol: mcp/shared.go supportedProtocolVersions (and latestProtocolVersion); mcp/streamable.go's default of 2025-03-26 when the header is missing",
	"fastpath.go newProtocolMetaKeys, decodeCallParams: mcp/shared.go, which _meta keys a 2026-07-28 request may carry and how each is decoded",
	"fastpath.go clientCapabilitiesV2: mcp/protocol.go clientCapabilitiesV2",
	"fastpath.go encodeHead, encodeText, encodeTail: the response the stateless JSON handler writes for a tool result",
	"fastpath.go isLoopback: internal/util/net.go IsLoopback",
	"fastpath.go acceptsJSONAndStream, baseMediaType: mcp/streamable.go streamableAccepts, baseMediaType",
	"sdkjson.go sdkMaxDepth, tooDeep: internal/json/json.go defaultMaxDepth, checkMaxDepth",
	"sdkjson.go sdkParseFlags, sdkUnmarshal: internal/json/json.go NewDecoder (segmentio, case-sensitive fields)",
	"sdkjson.go wireRequest, decodeRequest: internal/jsonrpc2/messages.go wireDecode, DecodeMessage",
	"sdkerrors.go goMarkers, cleanSDKText: the go-sdk's error texts (internal/jsonrpc2 MakeID's \"invalid ID type\", mcp/shared.go \"handling '%s'\" and \"unmarshaling %q into a %T\")",
}

// sdkModuleInfo returns the go-sdk version the build uses and its
// directory in the module cache (from `go list -m`, which reads go.mod;
// the source is there after `go mod download`).
func sdkModuleInfo(t *testing.T) (version, dir string) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out, err := exec.Command(goTool, "list", "-m", "-f", "{{.Version}}\t{{.Dir}}", sdkModule).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list -m %s: %v\n%s", sdkModule, err, ee.Stderr)
		}
		t.Fatalf("go list -m %s: %v", sdkModule, err)
	}
	version, dir, _ = strings.Cut(strings.TrimSpace(string(out)), "\t")
	if dir == "" {
		t.Fatalf("the go-sdk %s is not in the module cache: run `go mod download`", version)
	}
	return version, dir
}

func TestSDKPinnedVersion(t *testing.T) {
	version, _ := sdkModuleInfo(t)
	if version != pinnedSDKVersion {
		t.Fatalf("go.mod has go-sdk %s; the fast path's copies were checked against %s.\n"+
			"Re-check each copy against the new go-sdk, then set pinnedSDKVersion (sdkpin_test.go) and run\n"+
			"go test ./httpapi -run TestSDKPinnedSource -update-sdkpin to pin the new source. The copies:\n  - %s",
			version, pinnedSDKVersion, strings.Join(sdkCopies, "\n  - "))
	}
}

// sdkDecl returns the declaration name in the go-sdk file (a path inside
// the module), as gofmt prints it without comments: a function, a type,
// or one spec of a const or var group.
func sdkDecl(t *testing.T, file, name string) string {
	t.Helper()
	_, dir := sdkModuleInfo(t)
	src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(file)))
	if err != nil {
		t.Fatalf("the go-sdk's %s: %v", file, err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var node ast.Node
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.Name == name {
				node = d
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.Name == name {
						node = s
					}
				case *ast.ValueSpec:
					if slices.ContainsFunc(s.Names, func(n *ast.Ident) bool { return n.Name == name }) {
						node = s
					}
				}
			}
		}
	}
	if node == nil {
		t.Fatalf("the go-sdk's %s no longer declares %s: re-check the copy of it", file, name)
	}
	var buf bytes.Buffer
	if err := format.Node(&buf, fset, node); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// updateSDKPin rewrites testdata/sdkpin.txtar from the go-sdk in the
// module cache: after an upgrade, once each copy has been re-checked.
var updateSDKPin = flag.Bool("update-sdkpin", false, "rewrite testdata/sdkpin.txtar from the go-sdk in go.mod (after re-checking each copy)")

// sdkPinned are the go-sdk declarations the fast path copies without the
// go-sdk exporting them: the txtar file name is the go-sdk file and the
// declaration's name, and which of ours copies it.
var sdkPinned = []struct{ file, name, copy string }{
	{"mcp/protocol.go", "clientCapabilitiesV2", "fastpath.go clientCapabilitiesV2"},
	{"internal/util/net.go", "IsLoopback", "fastpath.go isLoopback"},
	{"mcp/streamable.go", "streamableAccepts", "fastpath.go acceptsJSONAndStream"},
	{"mcp/streamable.go", "baseMediaType", "fastpath.go baseMediaType"},
	{"internal/json/json.go", "defaultMaxDepth", "sdkjson.go sdkMaxDepth"},
	{"internal/json/json.go", "checkMaxDepth", "sdkjson.go tooDeep"},
	{"internal/json/json.go", "NewDecoder", "sdkjson.go sdkParseFlags"},
	{"internal/jsonrpc2/messages.go", "wireDecode", "sdkjson.go wireRequest"},
	{"internal/jsonrpc2/messages.go", "MakeID", "sdkerrors.go goMarkers (\"invalid ID type\")"},
	{"mcp/shared.go", "supportedProtocolVersions", "fastpath.go fastProtocols"},
	{"mcp/shared.go", "latestProtocolVersion", "fastpath.go newProtocol"},
}

const sdkPinFile = "testdata/sdkpin.txtar"

// TestSDKPinnedSource checks, in the go-sdk's source, each copied thing
// the go-sdk does not export: the declaration must read as it did when it
// was copied (testdata/sdkpin.txtar; gofmt, comments dropped).
func TestSDKPinnedSource(t *testing.T) {
	if *updateSDKPin {
		version, _ := sdkModuleInfo(t)
		ar := &txtar.Archive{Comment: []byte("The go-sdk " + version + " declarations the fast path copies (sdkpin_test.go).\n")}
		for _, p := range sdkPinned {
			ar.Files = append(ar.Files, txtar.File{Name: p.file + " " + p.name, Data: []byte(sdkDecl(t, p.file, p.name) + "\n")})
		}
		if err := os.WriteFile(sdkPinFile, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ar, err := txtar.ParseFile(sdkPinFile)
	if err != nil {
		t.Fatal(err)
	}
	pinned := map[string]string{}
	for _, f := range ar.Files {
		pinned[f.Name] = string(f.Data)
	}
	for _, p := range sdkPinned {
		want, ok := pinned[p.file+" "+p.name]
		if !ok {
			t.Errorf("%s has no %s %s: run go test -run TestSDKPinnedSource -update-sdkpin", sdkPinFile, p.file, p.name)
			continue
		}
		if got := sdkDecl(t, p.file, p.name) + "\n"; got != want {
			t.Errorf("the go-sdk's %s %s changed: re-check %s against it, then run go test -run TestSDKPinnedSource -update-sdkpin.\ngo-sdk now:\n%s\npinned:\n%s",
				p.file, p.name, p.copy, got, want)
		}
	}
	// A request without Mcp-Protocol-Version is 2025-03-26 (fastProtocols[""]).
	_, dir := sdkModuleInfo(t)
	src, err := os.ReadFile(filepath.Join(dir, "mcp", "streamable.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(src, []byte("if protocolVersion == \"\" {\n\t\tprotocolVersion = protocolVersion20250326\n\t}")) {
		t.Errorf("the go-sdk's mcp/streamable.go no longer takes a missing protocol version for 2025-03-26: re-check fastProtocols[\"\"]")
	}
}

// TestSDKPinnedProtocols: the fast path serves exactly the revisions the
// go-sdk supports (and no header), and treats the newest as the one whose
// requests carry their own _meta.
func TestSDKPinnedProtocols(t *testing.T) {
	supported := mcp.SupportedProtocolVersions()
	var ours []string
	for v, isNew := range fastProtocols {
		if v != "" {
			ours = append(ours, v)
		}
		if isNew != (v == newProtocol) {
			t.Errorf("fastProtocols[%q] = %v", v, isNew)
		}
	}
	slices.Sort(ours)
	want := slices.Sorted(slices.Values(supported))
	if !slices.Equal(ours, want) {
		t.Errorf("fastProtocols serves %v; the go-sdk supports %v", ours, want)
	}
	if _, ok := fastProtocols[""]; !ok {
		t.Error(`fastProtocols lacks "" (no header)`)
	}
	if supported[0] != newProtocol {
		t.Errorf("the go-sdk's newest revision is %s; the fast path's per-request-_meta revision is %s", supported[0], newProtocol)
	}
}

// TestSDKPinnedDecoding holds decodeRequest (wireRequest, sdkMaxDepth,
// tooDeep, sdkUnmarshal) to the go-sdk's jsonrpc.DecodeMessage: on each
// body, both accept it as the same request, or decodeRequest declines.
// Declining is always safe (the go-sdk then answers); accepting where the
// go-sdk refuses, or reading another request, is not.
func TestSDKPinnedDecoding(t *testing.T) {
	deep := func(n int) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}`
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":true,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":null,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"method":""}`,
		`{"jsonrpc":"2.0","id":1}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"1.0","id":1,"method":"x"}`,
		`{"JSONRPC":"2.0","id":1,"method":"x"}`,
		`{"jsonrpc":"2.0","ID":1,"Method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":5}`,
		`{"jsonrpc":5}`,
		`[1]`,
		deep(sdkMaxDepth - 2), deep(sdkMaxDepth - 1), deep(sdkMaxDepth),
		`{"jsonrpc":"2.0","id":1,"method":"x","params":"` + strings.Repeat("[", 2*sdkMaxDepth) + `"}`,
	} {
		req, ok := decodeRequest([]byte(body))
		msg, err := jsonrpc.DecodeMessage([]byte(body))
		sreq, isReq := msg.(*jsonrpc.Request)
		if !ok {
			if strings.HasPrefix(body, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`) {
				t.Errorf("decodeRequest declined a plain request: %s", body)
			}
			continue
		}
		if err != nil || !isReq {
			t.Errorf("decodeRequest(%s) took a body the go-sdk refuses (%v, %T)", body, err, msg)
			continue
		}
		if req.ID != sreq.ID || req.Method != sreq.Method || !bytes.Equal(req.Params, sreq.Params) {
			t.Errorf("decodeRequest(%s) = %v %q %s; the go-sdk: %v %q %s", body, req.ID, req.Method, req.Params, sreq.ID, sreq.Method, sreq.Params)
		}
	}
	// The depth limit is the go-sdk's, to the level.
	for _, n := range []int{sdkMaxDepth - 2, sdkMaxDepth - 1} {
		body := deep(n) // n+2 levels deep: the message, params, n arrays
		_, err := jsonrpc.DecodeMessage([]byte(body))
		_, ok := decodeRequest([]byte(body))
		if sdkOK := err == nil; sdkOK != ok {
			t.Errorf("%d levels: the go-sdk decodes it: %v (%v); decodeRequest: %v", n+2, sdkOK, err, ok)
		}
	}
}

// TestSDKPinnedErrorTexts: the go-sdk's refusals that name Go types are
// still worded as sdkerrors.go expects, and reworded without them.
func TestSDKPinnedErrorTexts(t *testing.T) {
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":true,"method":"x"}`, // invalid ID type
		`{"jsonrpc":5,"id":1,"method":"x"}`,        // Go struct field
		`[1]`,                                      // Go value of type
	} {
		_, err := jsonrpc.DecodeMessage([]byte(body))
		if err == nil {
			t.Fatalf("the go-sdk decodes %s", body)
		}
		text := err.Error()
		if !goInternals([]byte(text)) {
			t.Errorf("the go-sdk's refusal of %s, %q, no longer has a phrase of goMarkers: re-check sdkerrors.go", body, text)
		}
		if clean := cleanSDKText(text); clean == text || strings.Contains(clean, "Go ") || strings.Contains(clean, "wrong type") {
			t.Errorf("the go-sdk's refusal of %s, %q, is reworded %q: re-check cleanSDKText", body, text, clean)
		}
	}
}

// The wrapping of a tools/call refusal that cleanSDKText keeps in front
// of the reworded part.
func TestSDKPinnedErrorWrapping(t *testing.T) {
	_, dir := sdkModuleInfo(t)
	src, err := os.ReadFile(filepath.Join(dir, "mcp", "shared.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"handling '%s': %w"`, `"%w: unmarshaling %q into a %T: %w"`} {
		if !bytes.Contains(src, []byte(s)) {
			t.Errorf("the go-sdk's mcp/shared.go no longer words an error %s: re-check cleanSDKText (sdkerrors.go)", s)
		}
	}
}

// pinRunner is a ToolRunner whose one tool, "echo", returns its
// arguments' text (an error result if isError is set): what the fast path
// encodes, without a store.
type pinRunner struct{ impl *mcp.Implementation }

type pinArgs struct {
	Text    string `json:"text"`
	IsError bool   `json:"isError"`
}

func (r pinRunner) CallToolStream(_ context.Context, _ *worldforge.Actor, name string, args json.RawMessage) (string, func(io.Writer) error, bool, bool) {
	var a pinArgs
	if name != "echo" || json.Unmarshal(args, &a) != nil {
		return "", nil, false, false
	}
	return a.Text, nil, a.IsError, true
}

func (r pinRunner) Implementation() *mcp.Implementation { return r.impl }

// TestSDKPinnedEnvelope holds the fast path's encoding of a tool result
// (encodeHead, encodeText, encodeTail) to the go-sdk's own stateless JSON
// handler, byte for byte, on every revision, for numeric and string ids,
// text that JSON escapes, and error results.
func TestSDKPinnedEnvelope(t *testing.T) {
	impl := &mcp.Implementation{Name: "pin<&>", Version: "1.0"}
	srv := mcp.NewServer(impl, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a pinArgs
			if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}, IsError: a.IsError}, nil
		})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true})
	f, err := newFastResponder(pinRunner{impl})
	if err != nil {
		t.Fatal(err)
	}
	for version := range fastProtocols {
		for _, id := range []string{`7`, `-12`, `9007199254740993`, `"a<b>&\u2028"`, `""`} {
			for _, a := range []pinArgs{{Text: "hello"}, {Text: "<html> & \u2028 \"q\" \\ \x01 é", IsError: true}, {}} {
				args, _ := json.Marshal(a)
				params := `"name":"echo","arguments":` + string(args)
				if fastProtocols[version] {
					params += `,"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`
				}
				body := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{` + params + `}}`
				r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Accept", "application/json, text/event-stream")
				if version != "" {
					r.Header.Set("Mcp-Protocol-Version", version)
				}
				if fastProtocols[version] {
					r.Header.Set("Mcp-Method", "tools/call")
					r.Header.Set("Mcp-Name", "echo")
				}
				rec := httptest.NewRecorder()
				sdk.ServeHTTP(rec, r)
				want := rec.Body.String()

				req, ok := decodeRequest([]byte(body))
				if !ok {
					t.Fatalf("decodeRequest(%s) declined", body)
				}
				var buf bytes.Buffer
				if err := f.encodeHead(&buf, req.ID, fastProtocols[version]); err != nil {
					t.Fatal(err)
				}
				f.encodeText(&buf, a.Text)
				f.encodeTail(&buf, a.IsError, fastProtocols[version])
				if got := buf.String(); rec.Code != http.StatusOK || got != want {
					t.Errorf("revision %q, id %s, %+v:\ngo-sdk (%d): %s\nfast path:   %s", version, id, a, rec.Code, want, got)
				}
			}
		}
	}
}

// FuzzDecodeRequest: where plainRequest reads a body without decoding it,
// it reads what the go-sdk's decoder and jsonrpc.DecodeMessage read.
func FuzzDecodeRequest(f *testing.F) {
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","x":[1,{"y":null}]}`,
		`{"jsonrpc":"2.0","id":-0,"method":"é"}`,
		`{"jsonrpc":"2.0","id":123456789012345,"method":"m","params":[]}`,
		`{"jsonrpc":"2.0","id":1234567890123456,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1e3,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":null}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","method":"n"}`,
		`{"jsonrpc":"2.0","\u0069d":1,"method":"m"}`,
		`{"jsonrpc":"2.0","id":"\u0041","method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","result":1}`,
		`{"Jsonrpc":"2.0","id":1,"method":"m"}`,
		` { "jsonrpc" : "2.0" , "method" : "m" } `,
	} {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !jsonscan.Strict.Valid(body) || tooDeep(body, sdkMaxDepth) {
			return // serveMCPPost and decodeRequest stop these first
		}
		if i := firstNonSpace(body); body[i] != '{' {
			return // fastToolCall sends these to the go-sdk
		}
		req := plainRequest(body)
		if req == nil {
			return
		}
		wreq, ok := decodeWireRequest(body)
		if !ok {
			t.Fatalf("plainRequest(%s) read a request; the decoder refuses it", body)
		}
		if req.ID != wreq.ID || req.Method != wreq.Method || !bytes.Equal(req.Params, wreq.Params) {
			t.Fatalf("plainRequest(%s) = %v %q %s; the decoder: %v %q %s", body, req.ID, req.Method, req.Params, wreq.ID, wreq.Method, wreq.Params)
		}
		msg, err := jsonrpc.DecodeMessage(body)
		sreq, isReq := msg.(*jsonrpc.Request)
		if err != nil || !isReq || req.ID != sreq.ID || req.Method != sreq.Method || !bytes.Equal(req.Params, sreq.Params) {
			t.Fatalf("plainRequest(%s) = %v %q %s; the go-sdk: %v %v", body, req.ID, req.Method, req.Params, msg, err)
		}
	})
}
