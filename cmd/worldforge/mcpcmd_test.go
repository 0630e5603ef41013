package main

// End-to-end tests of "mcp tools" and "mcp call" against the real server
// (internal/testserver on 127.0.0.1:0, SQLite in a temporary directory).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/client"
	"github.com/worldforge-go/worldforge/internal/cli"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// runMCPStdin runs "mcp ARGS" with stdin, as run would with os.Stdin.
func runMCPStdin(t testing.TB, vars map[string]string, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	e := &env{&cli.Env{Getenv: getenvFrom(vars), Stdout: &stdout, Stderr: &stderr, Program: program}}
	err := e.mcp(ctx, args, strings.NewReader(stdin))
	return result{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// TestMCPTools lists the tools of the real server: one line per tool, name
// TAB first sentence, with the URL and credential from flags or the
// environment.
func TestMCPTools(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, dbtest.Open(t))
	key := s.Key(t, s.Player, wf.ScopeWorldRead)
	jwt := s.Token(t, s.Stranger)

	line := regexp.MustCompile(`^[a-z_]+\t[^\t\n]+$`)
	check := func(name, out string) {
		t.Helper()
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if !strings.HasSuffix(out, "\n") || len(lines) != 31 {
			t.Fatalf("%s: %d lines, want 31:\n%s", name, len(lines), out)
		}
		for _, l := range lines {
			if !line.MatchString(l) {
				t.Errorf("%s: line %q is not name<TAB>summary", name, l)
			}
		}
		// The go-sdk lists tools sorted by name.
		if !slices.IsSorted(lines) {
			t.Errorf("%s: tools not sorted by name", name)
		}
		if !slices.Contains(lines, "read_world\tRead a world: the row with its runtime state (presence, opened POIs, picked items) merged into json.runtime.") {
			t.Errorf("%s: no read_world line with its whole one-sentence description", name)
		}
		// A description of several sentences is cut after the first.
		for _, l := range lines {
			if strings.HasPrefix(l, wf.ToolCreateWorld+"\t") && (!strings.HasSuffix(l, "large 128×96).") || strings.Contains(l, "populate")) {
				t.Errorf("%s: %q, want the first sentence only", name, l)
			}
		}
	}
	check("--url endpoint --api-key", MustRunMain(t, nil, "mcp", "tools", "--url", s.MCPURL(), "--api-key", key))
	check("--url base --jwt", MustRunMain(t, nil, "mcp", "tools", "--url", s.URL, "--jwt", jwt))
	check("environment", MustRunMain(t, map[string]string{"WORLDFORGE_URL": s.MCPURL(), "WORLDFORGE_API_KEY": key}, "mcp", "tools"))
	check("environment jwt", MustRunMain(t, map[string]string{"WORLDFORGE_URL": s.URL + "/", "WORLDFORGE_JWT": jwt}, "mcp", "tools"))
	// Flags beat the environment: a bad key in the environment is not used.
	check("flags over env", MustRunMain(t, map[string]string{"WORLDFORGE_URL": "http://127.0.0.1:1", "WORLDFORGE_API_KEY": "bad"}, "mcp", "tools", "--url", s.URL, "--jwt", jwt))
	check("--protocol", MustRunMain(t, nil, "mcp", "tools", "--url", s.URL, "--api-key", key, "--protocol", "2025-11-25"))

	// A credential the server refuses: a transport error, exit 1.
	r := runMain(t, nil, "mcp", "tools", "--url", s.MCPURL(), "--api-key", "wk_live_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
	checkOneLineError(t, r, 1, "mcp tools", "Unauthorized", s.MCPURL())
	var te *client.ToolError
	if errors.As(r.err, &te) {
		t.Errorf("401 is a *ToolError: %v", r.err)
	}
}

// TestMCPCall calls tools of the real server with arguments from the
// command line, a file and stdin, and checks the printed JSON.
func TestMCPCall(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, dbtest.Open(t))
	key := s.Key(t, s.Owner, wf.ScopeAll)
	env := map[string]string{"WORLDFORGE_URL": s.MCPURL(), "WORLDFORGE_API_KEY": key}
	args := `{"world_id":"` + s.World.ID + `"}`

	checkSummary := func(name, out string) {
		t.Helper()
		var sum wf.WorldSummary
		if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.WorldID != s.World.ID || sum.Name != "Testworld" || sum.WikiTotal != 1 || sum.AtlasNodes != 1 {
			t.Errorf("%s: %q (%v)", name, out, err)
		}
		var want bytes.Buffer
		json.Indent(&want, []byte(strings.TrimSpace(out)), "", "  ")
		if out != want.String()+"\n" || !strings.HasPrefix(out, "{\n  \"") {
			t.Errorf("%s: output is not indented JSON with a final newline:\n%s", name, out)
		}
	}
	checkSummary("literal", MustRunMain(t, nil, "mcp", "call", "--url", s.URL, "--api-key", key, wf.ToolGetWorldSummary, args))
	checkSummary("env", MustRunMain(t, env, "mcp", "call", wf.ToolGetWorldSummary, args))

	file := filepath.Join(t.TempDir(), "args.json")
	if err := os.WriteFile(file, []byte("\n"+args+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	checkSummary("@file", MustRunMain(t, env, "mcp", "call", wf.ToolGetWorldSummary, "@"+file))

	r := runMCPStdin(t, env, args+"\n", "call", wf.ToolGetWorldSummary, "-")
	if r.err != nil || r.stderr != "" {
		t.Fatalf("stdin: %v, stderr %q", r.err, r.stderr)
	}
	checkSummary("stdin", r.stdout)

	// No arguments is {}.
	out := MustRunMain(t, env, "mcp", "call", wf.ToolListCampaigns)
	var camps wf.CampaignList
	if err := json.Unmarshal([]byte(out), &camps); err != nil || len(camps.Campaigns) != 1 || camps.Campaigns[0].ID != s.Campaign.ID {
		t.Errorf("list_campaigns: %q (%v)", out, err)
	}

	// read_world's document comes out whole (nested objects indented).
	out = MustRunMain(t, env, "mcp", "call", "--protocol", "2025-11-25", wf.ToolReadWorld, `{"id":"`+s.World.ID+`"}`)
	var w wf.World
	if err := json.Unmarshal([]byte(out), &w); err != nil || w.ID != s.World.ID || !strings.Contains(out, "\n    \"grid\": {\n") {
		t.Errorf("read_world: %q (%v)", out, err)
	}

	// A proposal: the write goes through and the result is printed.
	out = MustRunMain(t, env, "mcp", "call", wf.ToolProposeLore, `{"world_id":"`+s.World.ID+`","operations":[{"op":"remove","collection":"factions","id":"wardens"}],"diff_summary":"drop the wardens","changeset_id":"cli-1"}`)
	var prop wf.ProposeResult
	if err := json.Unmarshal([]byte(out), &prop); err != nil || prop.ProposalID == "" || prop.ChangesetID != "cli-1" {
		t.Errorf("propose_lore: %q (%v)", out, err)
	}
}

// TestMCPCallErrors checks the failures of mcp call: tool errors exit 1
// with the error (and nothing on stdout), command-line mistakes exit 2
// before any request.
func TestMCPCallErrors(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, dbtest.Open(t))
	key := s.Key(t, s.Owner, wf.ScopeWorldRead)
	env := map[string]string{"WORLDFORGE_URL": s.MCPURL(), "WORLDFORGE_API_KEY": key}

	// Tool errors: exit 1, the spec's message.
	r := runMain(t, env, "mcp", "call", wf.ToolReadWorld, `{"id":"world_aaaaaaaaaaaaaaaaaaaa"}`)
	checkOneLineError(t, r, 1, "MCP tool read_world failed: not_found")
	var te *client.ToolError
	if !errors.As(r.err, &te) || te.Tool != wf.ToolReadWorld {
		t.Errorf("tool error: %T %v, want a *client.ToolError", r.err, r.err)
	}
	r = runMain(t, env, "mcp", "call", wf.ToolGetWorldSummary, `{"world_id":"`+s.World.ID+`"}`)
	checkOneLineError(t, r, 1, "MCP tool get_world_summary failed: missing_scopes:wiki:read,atlas:read")
	r = runMain(t, env, "mcp", "call", wf.ToolReadWorld, `{"id":5}`)
	checkOneLineError(t, r, 1, "MCP tool read_world failed: bad_request")
	// An unknown tool is a protocol error: exit 1, not a tool error.
	r = runMain(t, env, "mcp", "call", "no_such_tool")
	checkOneLineError(t, r, 1, "mcp call", "no_such_tool")
	if errors.As(r.err, &te) {
		t.Errorf("unknown tool is a *ToolError: %v", r.err)
	}

	// A server that is not there: exit 1.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "http://" + ln.Addr().String()
	ln.Close()
	checkOneLineError(t, runMain(t, nil, "mcp", "call", "--url", gone, "--api-key", "k", wf.ToolReadWorld), 1, "mcp call", "refused")

	// Command-line mistakes: exit 2. The URL points nowhere, so a request
	// would fail with exit 1 instead.
	nowhere := map[string]string{"WORLDFORGE_URL": gone, "WORLDFORGE_API_KEY": "k"}
	missing := filepath.Join(t.TempDir(), "missing.json")
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{"bad json", nowhere, []string{"call", "read_world", `{"id":`}, []string{"not valid JSON"}},
		{"not an object", nowhere, []string{"call", "read_world", `["world_x"]`}, []string{"JSON object"}},
		{"null", nowhere, []string{"call", "read_world", `null`}, []string{"JSON object"}},
		{"empty args", nowhere, []string{"call", "read_world", ``}, []string{"not valid JSON"}},
		{"missing file", nowhere, []string{"call", "read_world", "@" + missing}, []string{"arguments file", "missing.json"}},
		{"no url", nil, []string{"call", "--api-key", "k", "read_world", "{}"}, []string{"--url", "WORLDFORGE_URL"}},
		{"no url tools", nil, []string{"tools", "--jwt", "t"}, []string{"--url", "WORLDFORGE_URL"}},
		{"no url, a server name", nil, []string{"tools", "local"}, []string{"--url", "WORLDFORGE_URL"}},
		{"bad url", nil, []string{"tools", "--url", "127.0.0.1:8080", "--api-key", "k"}, []string{"--url", "http"}},
		{"no credential", map[string]string{"WORLDFORGE_URL": gone}, []string{"tools"}, []string{"--api-key", "--jwt", "WORLDFORGE_API_KEY"}},
		{"both credentials", nil, []string{"tools", "--url", gone, "--api-key", "k", "--jwt", "t"}, []string{"not both"}},
		{"unknown flag", nowhere, []string{"call", "--nope", "read_world"}, []string{"mcp call", "nope"}},
		{"bad timeout", nowhere, []string{"tools", "--timeout", "soon"}, []string{"mcp tools", "timeout"}},
		{"no tool", nowhere, []string{"call"}, []string{"TOOL"}},
		{"too many", nowhere, []string{"call", "read_world", "{}", "{}"}, []string{"TOOL", "3 argument(s)"}},
		{"flag after tool", nowhere, []string{"call", "read_world", "{}", "--api-key", "k"}, []string{"--api-key", "before"}},
		{"flag after tool, no args", nowhere, []string{"call", "read_world", "--jwt"}, []string{"before"}},
		{"tools with an argument", nowhere, []string{"tools", "extra"}, []string{"no arguments"}},
		{"tools flag after", nowhere, []string{"tools", "x", "--url", gone}, []string{"before"}},
		{"no subcommand", nowhere, nil, []string{"servers, tools, call or gateway"}},
		{"unknown subcommand", nowhere, []string{"list"}, []string{"unknown subcommand", "list"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkOneLineError(t, runMain(t, tc.env, append([]string{"mcp"}, tc.args...)...), 2, tc.want...)
		})
	}

	// Bad JSON on stdin is a usage error too.
	r = runMCPStdin(t, nowhere, "{oops", "call", "read_world", "-")
	checkOneLineError(t, r, 2, "stdin", "not valid JSON")
	r = runMCPStdin(t, nowhere, "", "call", "read_world", "-")
	checkOneLineError(t, r, 2, "stdin", "not valid JSON")
	big := `{"x":"` + strings.Repeat("a", maxToolArgs) + `"}`
	r = runMCPStdin(t, nowhere, big, "call", "read_world", "-")
	checkOneLineError(t, r, 2, "stdin", "over")
}

// TestMCPHelp checks -h and "mcp help".
func TestMCPHelp(t *testing.T) {
	t.Parallel()
	r := runMain(t, nil, "mcp", "call", "-h")
	var u usageError
	if !errors.As(r.err, &u) || u.Msg != "" || !strings.Contains(r.stderr, "-api-key") || !strings.Contains(r.stderr, "@FILE") || r.stdout != "" {
		t.Errorf("mcp call -h: err %#v, stdout %q, stderr %q", r.err, r.stdout, r.stderr)
	}
	out := MustRunMain(t, nil, "mcp", "help")
	if !strings.Contains(out, "mcp tools --url URL") || !strings.Contains(out, "WORLDFORGE_URL") {
		t.Errorf("mcp help: %q", out)
	}
	if out := MustRunMain(t, nil, "help"); !strings.Contains(out, "mcp call --url URL") {
		t.Errorf("help does not list mcp call:\n%s", out)
	}
}

func TestFirstSentence(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Read a world.":                 "Read a world.",
		"Read a world. Then more.":      "Read a world.",
		"Read json.runtime of a world.": "Read json.runtime of a world.",
		"First line\nsecond line":       "First line",
		"  padded. ":                    "padded.",
		"No full stop":                  "No full stop",
		"":                              "",
		"Sizes (small 32×24, large 128×96). More": "Sizes (small 32×24, large 128×96).",
	} {
		if got := firstSentence(in); got != want {
			t.Errorf("firstSentence(%q) = %q, want %q", in, got, want)
		}
	}
}
