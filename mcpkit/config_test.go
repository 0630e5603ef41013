package mcpkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// configEnv is a test environment: a user file under XDG_CONFIG_HOME, a
// project directory, and variables.
type configEnv struct {
	t       *testing.T
	xdg     string
	project string
	vars    map[string]string
}

func newConfigEnv(t *testing.T) *configEnv {
	t.Helper()
	root := t.TempDir()
	return &configEnv{
		t:       t,
		xdg:     filepath.Join(root, "xdg"),
		project: filepath.Join(root, "project"),
		vars:    map[string]string{},
	}
}

func (e *configEnv) getenv(k string) string {
	if k == "XDG_CONFIG_HOME" {
		return e.xdg
	}
	return e.vars[k]
}

func (e *configEnv) userFile() string    { return filepath.Join(e.xdg, "worldforge", "mcp.json") }
func (e *configEnv) projectFile() string { return filepath.Join(e.project, ".worldforge", "mcp.json") }

func writeFile(t *testing.T, path, data string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func (e *configEnv) load(explicit string) (*Config, error) {
	return LoadConfig(LoadOptions{ExplicitFile: explicit, Cwd: e.project, Getenv: e.getenv})
}

func serverNames(cfg *Config) []string {
	var names []string
	for _, s := range cfg.Servers {
		names = append(names, s.Name)
	}
	return names
}

func TestLoadConfigFormats(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []ServerConfig
		off  []string
	}{
		{
			name: "servers list",
			file: `{"servers": [
				{"name": "fs", "command": "npx", "args": ["-y", "server-fs", "/tmp"], "env": {"A": "1"}, "cwd": "/work"},
				{"name": "remote", "url": "https://example.com/mcp", "headers": {"X-Key": "k"}, "timeout": 1500},
				{"name": "off", "command": "x", "enabled": false}
			]}`,
			want: []ServerConfig{
				{Name: "fs", Kind: TransportStdio, Command: "npx", Args: []string{"-y", "server-fs", "/tmp"}, Env: map[string]string{"A": "1"}, Cwd: "/work"},
				{Name: "remote", Kind: TransportHTTP, URL: "https://example.com/mcp", Headers: map[string]string{"X-Key": "k"}, Timeout: 1500 * time.Millisecond},
			},
			off: []string{"off"},
		},
		{
			name: "servers object",
			file: `{"servers": {
				"zeta": {"command": "z"},
				"alpha": {"url": "http://127.0.0.1:9/sse", "type": "sse"}
			}}`,
			want: []ServerConfig{
				{Name: "alpha", Kind: TransportSSE, URL: "http://127.0.0.1:9/sse"},
				{Name: "zeta", Kind: TransportStdio, Command: "z"},
			},
		},
		{
			name: "mcpServers",
			file: `{"mcpServers": {
				"a": {"type": "stdio", "command": "a", "args": []},
				"b": {"type": "http", "url": "http://h/mcp"},
				"c": {"type": "streamable-http", "url": "http://h/mcp"},
				"d": {"type": "sse", "url": "http://h/sse"},
				"e": {"url": "http://h/mcp", "timeout": 20, "resetTimeoutOnProgress": true, "maxTotalTimeout": 600000},
				"f": {"command": "f", "disabled": true},
				"g": {"command": "g", "autoApprove": ["x"], "description": "unknown fields are ignored"}
			}}`,
			want: []ServerConfig{
				{Name: "a", Kind: TransportStdio, Command: "a"},
				{Name: "b", Kind: TransportHTTP, URL: "http://h/mcp"},
				{Name: "c", Kind: TransportHTTP, URL: "http://h/mcp"},
				{Name: "d", Kind: TransportSSE, URL: "http://h/sse"},
				{Name: "e", Kind: TransportHTTP, URL: "http://h/mcp", Timeout: 20 * time.Millisecond, ResetTimeoutOnProgress: true, MaxTotalTimeout: 10 * time.Minute},
				{Name: "g", Kind: TransportStdio, Command: "g"},
			},
			off: []string{"f"},
		},
		{
			name: "both keys in one file",
			file: `{"servers": [{"name": "one", "command": "1"}], "mcpServers": {"two": {"command": "2"}}}`,
			want: []ServerConfig{
				{Name: "one", Kind: TransportStdio, Command: "1"},
				{Name: "two", Kind: TransportStdio, Command: "2"},
			},
		},
		{
			name: "empty",
			file: `{"servers": []}`,
		},
		{
			name: "null servers",
			file: `{"servers": null, "mcpServers": {}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newConfigEnv(t)
			path := writeFile(t, filepath.Join(t.TempDir(), "mcp.json"), tt.file)
			cfg, err := env.load(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Errors) > 0 {
				t.Fatalf("errors: %v", cfg.Errors)
			}
			if !reflect.DeepEqual(cfg.Servers, tt.want) {
				t.Errorf("servers:\n got %+v\nwant %+v", cfg.Servers, tt.want)
			}
			if !slices.Equal(cfg.Disabled, tt.off) {
				t.Errorf("disabled = %v, want %v", cfg.Disabled, tt.off)
			}
			for _, s := range cfg.Servers {
				if cfg.Sources[s.Name] != path {
					t.Errorf("source of %s = %q, want %q", s.Name, cfg.Sources[s.Name], path)
				}
			}
		})
	}
}

func TestLoadConfigWorldforgeSnippet(t *testing.T) {
	env := newConfigEnv(t)
	path := writeFile(t, filepath.Join(t.TempDir(), "mcp.json"),
		`{"mcpServers":{"worldforge":{"type":"http","url":"http://127.0.0.1:8080/mcp","headers":{"Authorization":"Bearer wk_live_x"}}}}`)
	cfg, err := env.load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []ServerConfig{{
		Name:    "worldforge",
		Kind:    TransportHTTP,
		URL:     "http://127.0.0.1:8080/mcp",
		Headers: map[string]string{"Authorization": "Bearer wk_live_x"},
	}}
	if !reflect.DeepEqual(cfg.Servers, want) || len(cfg.Errors) != 0 || len(cfg.Disabled) != 0 {
		t.Fatalf("got servers %+v, errors %v, disabled %v", cfg.Servers, cfg.Errors, cfg.Disabled)
	}
}

func TestLoadConfigPrecedence(t *testing.T) {
	env := newConfigEnv(t)
	writeFile(t, env.userFile(), `{"servers": [
		{"name": "shared", "command": "user-shared"},
		{"name": "only-user", "command": "u"},
		{"name": "off-in-project", "command": "u2"},
		{"name": "bad-in-project", "command": "u3"}
	]}`)
	writeFile(t, env.projectFile(), `{"mcpServers": {
		"shared": {"command": "project-shared"},
		"only-project": {"url": "http://p/mcp"},
		"off-in-project": {"command": "p2", "enabled": false},
		"bad-in-project": {"command": "p3", "url": "http://both/mcp"},
		"explicit-wins": {"command": "project"}
	}}`)
	explicit := writeFile(t, filepath.Join(t.TempDir(), "explicit.json"), `{"servers": {
		"explicit-wins": {"command": "explicit"},
		"only-explicit": {"command": "e"}
	}}`)

	cfg, err := env.load(explicit)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range cfg.Servers {
		got[s.Name] = s.Command + s.URL
	}
	want := map[string]string{
		"shared":        "project-shared",
		"only-user":     "u",
		"only-project":  "http://p/mcp",
		"explicit-wins": "explicit",
		"only-explicit": "e",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("servers = %v, want %v", got, want)
	}
	if want := []string{"bad-in-project", "off-in-project"}; !slices.Equal(cfg.Disabled, want) {
		t.Errorf("disabled = %v, want %v", cfg.Disabled, want)
	}
	if len(cfg.Errors) != 1 || !errors.Is(cfg.Errors[0], ErrConfig) {
		t.Fatalf("errors = %v, want one CONFIG_ERROR", cfg.Errors)
	}
	wantSources := map[string]string{
		"shared":         env.projectFile(),
		"only-user":      env.userFile(),
		"only-project":   env.projectFile(),
		"off-in-project": env.projectFile(),
		"bad-in-project": env.projectFile(),
		"explicit-wins":  explicit,
		"only-explicit":  explicit,
	}
	if !reflect.DeepEqual(cfg.Sources, wantSources) {
		t.Errorf("sources = %v, want %v", cfg.Sources, wantSources)
	}
	if names := serverNames(cfg); !slices.IsSorted(names) {
		t.Errorf("servers not sorted: %v", names)
	}

	t.Run("missing user and project files", func(t *testing.T) {
		env := newConfigEnv(t)
		cfg, err := env.load("")
		if err != nil || len(cfg.Servers) != 0 || len(cfg.Errors) != 0 {
			t.Fatalf("got %+v, %v", cfg, err)
		}
	})
	t.Run("missing explicit file", func(t *testing.T) {
		env := newConfigEnv(t)
		_, err := env.load(filepath.Join(t.TempDir(), "nope.json"))
		if !errors.Is(err, ErrConfig) || !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("err = %v, want CONFIG_ERROR wrapping not-exist", err)
		}
	})
	t.Run("nil Getenv is the process environment", func(t *testing.T) {
		t.Setenv("XDG_CONFIG_HOME", env.xdg)
		t.Setenv("MCPKIT_TEST_USER_VAR", "from-process")
		writeFile(t, filepath.Join(env.xdg, "worldforge", "mcp.json"), `{"servers": [
			{"name": "only-user", "command": "${MCPKIT_TEST_USER_VAR}"}]}`)
		cfg, err := LoadConfig(LoadOptions{Cwd: env.project})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Sources["only-user"] != env.userFile() || len(cfg.Errors) != 1 {
			t.Fatalf("user file not read from the process environment: %+v", cfg)
		}
		for _, s := range cfg.Servers {
			if s.Name == "only-user" && s.Command != "from-process" {
				t.Errorf("command = %q, want the process's variable", s.Command)
			}
		}
	})
}

func TestLoadConfigFileErrors(t *testing.T) {
	for _, data := range []string{
		`not json`,
		`[]`,
		`null`,
		`{"servers": 3}`,
		`{"mcpServers": []}`,
		`{"other": {}}`,
		`{"servers": [1, 2}`,
	} {
		t.Run(data, func(t *testing.T) {
			env := newConfigEnv(t)
			writeFile(t, env.userFile(), `{"servers": [{"name": "u", "command": "u"}]}`)
			writeFile(t, env.projectFile(), data)

			// An implicit file: reported, the other files still load.
			cfg, err := env.load("")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(serverNames(cfg), []string{"u"}) {
				t.Errorf("servers = %v, want [u]", serverNames(cfg))
			}
			if len(cfg.Errors) != 1 || !errors.Is(cfg.Errors[0], ErrConfig) ||
				!strings.Contains(cfg.Errors[0].Error(), env.projectFile()) {
				t.Errorf("errors = %v, want one CONFIG_ERROR naming the file", cfg.Errors)
			}

			// The explicit file: the load fails.
			explicit := writeFile(t, filepath.Join(t.TempDir(), "x.json"), data)
			if _, err := env.load(explicit); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), explicit) {
				t.Errorf("explicit: err = %v, want CONFIG_ERROR naming the file", err)
			}
		})
	}
}

func TestLoadConfigBadEntries(t *testing.T) {
	tests := []struct {
		name  string
		entry string
		field string // expected ConfigIssue.Field
	}{
		{"no command or url", `{}`, ""},
		{"both command and url", `{"command": "x", "url": "http://h/"}`, ""},
		{"bad url", `{"url": "://nope"}`, "url"},
		{"url without host", `{"url": "http:///mcp"}`, "url"},
		{"non-http url", `{"url": "ftp://h/mcp"}`, "url"},
		{"command not a string", `{"command": 3}`, "command"},
		{"args not strings", `{"command": "x", "args": [1]}`, "args"},
		{"args not a list", `{"command": "x", "args": "a b"}`, "args"},
		{"env not strings", `{"command": "x", "env": {"A": 1}}`, "env"},
		{"env a list", `{"command": "x", "env": ["A=1"]}`, "env"},
		{"headers not an object", `{"url": "http://h/", "headers": "x"}`, "headers"},
		{"bad header name", `{"url": "http://h/", "headers": {"a b": "x"}}`, "headers"},
		{"unknown type", `{"type": "websocket", "url": "ws://h/"}`, "type"},
		{"stdio type with url", `{"type": "stdio", "url": "http://h/"}`, "command"},
		{"http type with command", `{"type": "http", "command": "x"}`, "url"},
		{"timeout a string", `{"command": "x", "timeout": "5s"}`, "timeout"},
		{"negative timeout", `{"command": "x", "timeout": -1}`, "timeout"},
		{"maxTotalTimeout a string", `{"command": "x", "maxTotalTimeout": "5s"}`, "maxTotalTimeout"},
		{"negative maxTotalTimeout", `{"command": "x", "maxTotalTimeout": -1}`, "maxTotalTimeout"},
		{"resetTimeoutOnProgress a string", `{"command": "x", "resetTimeoutOnProgress": "yes"}`, "resetTimeoutOnProgress"},
		{"resetTimeoutOnProgress a number", `{"command": "x", "resetTimeoutOnProgress": 1}`, "resetTimeoutOnProgress"},
		{"enabled a string", `{"command": "x", "enabled": "yes"}`, "enabled"},
		{"entry not an object", `"npx server"`, ""},
		{"unset variable", `{"command": "${NOPE}"}`, "command"},
		{"unset variable in header", `{"url": "http://h/", "headers": {"Authorization": "Bearer ${NOPE}"}}`, "headers.Authorization"},
		{"unterminated variable", `{"command": "x", "args": ["${HOME"]}`, "args[0]"},
		{"bad variable name", `{"command": "x", "env": {"A": "${1X}"}}`, "env.A"},
		{"empty command after expansion", `{"command": "${EMPTY:-}"}`, "command"},
		{"allowedTools not a list", `{"command": "x", "allowedTools": "echo"}`, "allowedTools"},
		{"disabledTools an object", `{"command": "x", "disabledTools": {"a": true}}`, "disabledTools"},
		{"pattern not a string", `{"command": "x", "allowedTools": ["echo", 1]}`, "allowedTools[1]"},
		{"empty pattern", `{"command": "x", "disabledTools": [""]}`, "disabledTools[0]"},
		{"pattern with ?", `{"command": "x", "disabledTools": ["ok", "ech?"]}`, "disabledTools[1]"},
		{"pattern with brackets", `{"command": "x", "allowedTools": ["[ab]*"]}`, "allowedTools[0]"},
		{"pattern with a space", `{"command": "x", "allowedTools": ["read file"]}`, "allowedTools[0]"},
		{"bad pattern in a disabled entry", `{"command": "x", "enabled": false, "allowedTools": ["a\\b"]}`, "allowedTools[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newConfigEnv(t)
			path := writeFile(t, filepath.Join(t.TempDir(), "mcp.json"),
				fmt.Sprintf(`{"mcpServers": {"bad": %s, "good": {"command": "ok"}}}`, tt.entry))
			cfg, err := env.load(path)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(serverNames(cfg), []string{"good"}) {
				t.Errorf("servers = %v, want [good]", serverNames(cfg))
			}
			if !slices.Equal(cfg.Disabled, []string{"bad"}) {
				t.Errorf("disabled = %v, want [bad]", cfg.Disabled)
			}
			if len(cfg.Errors) != 1 {
				t.Fatalf("errors = %v, want 1", cfg.Errors)
			}
			var e *Error
			if !errors.As(cfg.Errors[0], &e) || e.Code != CodeConfigError || e.Server != "bad" {
				t.Fatalf("error = %#v, want CONFIG_ERROR for server bad", cfg.Errors[0])
			}
			is, _ := e.Details.(ConfigIssue)
			if is.File != path || is.Server != "bad" || is.Field != tt.field {
				t.Errorf("details = %+v, want file %s, field %q", is, path, tt.field)
			}
			if msg := e.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "[bad]") {
				t.Errorf("message %q does not name file and server", msg)
			}
		})
	}
}

func TestLoadConfigUnnamedAndDuplicateEntries(t *testing.T) {
	env := newConfigEnv(t)
	path := writeFile(t, filepath.Join(t.TempDir(), "mcp.json"), `{
		"servers": [{"command": "no-name"}, {"name": 7, "command": "x"}, {"name": "dup", "command": "first"}, {"name": "dup", "command": "second"}],
		"mcpServers": {"dup": {"command": "third"}, " ": {"command": "blank"}}
	}`)
	cfg, err := env.load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Servers) != 1 || cfg.Servers[0].Command != "first" {
		t.Errorf("servers = %+v, want only the first dup", cfg.Servers)
	}
	if len(cfg.Errors) != 5 {
		t.Errorf("errors = %v, want 5 (two unnamed, two duplicates, one blank name)", cfg.Errors)
	}
	for _, err := range cfg.Errors {
		if !errors.Is(err, ErrConfig) {
			t.Errorf("%v is not a CONFIG_ERROR", err)
		}
	}
}

func TestLoadConfigExpansion(t *testing.T) {
	env := newConfigEnv(t)
	env.vars = map[string]string{"TOKEN": "s3cr3t", "PORT": "9090", "DIR": "/data", "BIN": "srv"}
	path := writeFile(t, filepath.Join(t.TempDir(), "mcp.json"), `{"mcpServers": {
		"local": {"command": "/opt/${BIN}", "args": ["--dir", "${DIR}", "${MISSING:-fallback}", "$HOME", "$${DIR}"],
		          "env": {"TOKEN": "${TOKEN}", "MODE": "${MODE:-dev}"}, "cwd": "sub/${BIN}"},
		"remote": {"url": "http://127.0.0.1:${PORT}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}
	}}`)
	cfg, err := env.load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Errors) > 0 {
		t.Fatal(cfg.Errors)
	}
	want := []ServerConfig{
		{
			Name: "local", Kind: TransportStdio, Command: "/opt/srv",
			Args: []string{"--dir", "/data", "fallback", "$HOME", "$/data"},
			Env:  map[string]string{"TOKEN": "s3cr3t", "MODE": "dev"},
			Cwd:  filepath.Join(env.project, "sub", "srv"),
		},
		{
			Name: "remote", Kind: TransportHTTP, URL: "http://127.0.0.1:9090/mcp",
			Headers: map[string]string{"Authorization": "Bearer s3cr3t"},
		},
	}
	if !reflect.DeepEqual(cfg.Servers, want) {
		t.Errorf("got  %+v\nwant %+v", cfg.Servers, want)
	}
}

func TestUserConfigPath(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/worldforge/mcp.json"},
		{map[string]string{"HOME": "/h"}, "/h/.config/worldforge/mcp.json"},
		{map[string]string{"XDG_CONFIG_HOME": "rel", "HOME": "/h"}, "/h/.config/worldforge/mcp.json"},
		{map[string]string{}, ""},
	}
	for _, tt := range tests {
		if got := UserConfigPath(func(k string) string { return tt.env[k] }); got != filepath.FromSlash(tt.want) {
			t.Errorf("UserConfigPath(%v) = %q, want %q", tt.env, got, tt.want)
		}
	}
	if got := UserConfigPath(nil); got != "" {
		t.Errorf("UserConfigPath(nil) = %q", got)
	}
	if got, want := ProjectConfigPath("/p"), filepath.FromSlash("/p/.worldforge/mcp.json"); got != want {
		t.Errorf("ProjectConfigPath = %q, want %q", got, want)
	}
}

func TestSaveConfig(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "dir")
	path := filepath.Join(dir, "mcp.json")
	if err := SaveConfig(path, ExampleConfig()); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", st.Mode().Perm())
	}

	// Overwrite, then check nothing is left behind and the file loads.
	file := &ConfigFile{MCPServers: map[string]ServerEntry{"w": {Type: "http", URL: "http://h/mcp", Timeout: 250}}}
	if err := SaveConfig(path, file); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("dir holds %d files, want 1 (temp file left?)", len(entries))
	}
	var back ConfigFile
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &back); err != nil || !reflect.DeepEqual(&back, file) {
		t.Errorf("round trip: %+v, %v", back, err)
	}
	cfg, err := LoadConfig(LoadOptions{ExplicitFile: path})
	if err != nil || len(cfg.Servers) != 1 || cfg.Servers[0].Timeout != 250*time.Millisecond {
		t.Errorf("load saved: %+v, %v", cfg, err)
	}

	// A path whose directory cannot be created fails.
	blocker := writeFile(t, filepath.Join(t.TempDir(), "file"), "x")
	if err := SaveConfig(filepath.Join(blocker, "mcp.json"), file); err == nil {
		t.Error("SaveConfig under a file succeeded")
	}
}

func TestExampleConfigLoads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := SaveConfig(path, ExampleConfig()); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string { return map[string]string{"GITHUB_TOKEN": "ghp_x", "REMOTE_TOKEN": "r"}[k] }
	cfg, err := LoadConfig(LoadOptions{ExplicitFile: path, Getenv: getenv})
	if err != nil || len(cfg.Errors) > 0 {
		t.Fatal(err, cfg.Errors)
	}
	if got := serverNames(cfg); !slices.Equal(got, []string{"filesystem", "github"}) {
		t.Errorf("servers = %v", got)
	}
	if !slices.Equal(cfg.Disabled, []string{"remote-server"}) {
		t.Errorf("disabled = %v", cfg.Disabled)
	}
	if cfg.Servers[1].Env["GITHUB_TOKEN"] != "ghp_x" {
		t.Errorf("env = %v", cfg.Servers[1].Env)
	}
}

func ExampleLoadConfig() {
	dir, _ := os.MkdirTemp("", "mcpkit-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "mcp.json")
	os.WriteFile(path, []byte(`{"mcpServers": {
		"worldforge": {"type": "http", "url": "http://127.0.0.1:8080/mcp",
		               "headers": {"Authorization": "Bearer ${WORLDFORGE_KEY}"}},
		"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${ROOT:-/tmp}"]}
	}}`), 0o600)

	env := map[string]string{"WORLDFORGE_KEY": "wk_live_x"}
	cfg, err := LoadConfig(LoadOptions{ExplicitFile: path, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range cfg.Servers {
		fmt.Println(s.Name, s.Transport(), s.Command+s.URL, s.Args, s.Headers)
	}
	// Output:
	// files stdio npx [-y @modelcontextprotocol/server-filesystem /tmp] map[]
	// worldforge http http://127.0.0.1:8080/mcp [] map[Authorization:Bearer wk_live_x]
}

// FuzzLoadConfig loads arbitrary bytes as an explicit file and checks that
// loading never panics and that nothing bad becomes a server.
func FuzzLoadConfig(f *testing.F) {
	for _, seed := range []string{
		`{"servers": [{"name": "a", "command": "x", "args": ["${V}"]}]}`,
		`{"servers": {"a": {"url": "http://h/${V:-mcp}"}}}`,
		`{"mcpServers":{"worldforge":{"type":"http","url":"http://127.0.0.1:8080/mcp","headers":{"Authorization":"Bearer wk_live_x"}}}}`,
		`{"mcpServers": {"s": {"type": "sse", "url": "https://h/sse", "timeout": 1e3, "enabled": true}}}`,
		`{"mcpServers": {"b": {"command": "x", "url": "http://h/"}, "c": {}}}`,
		`{"servers": [null, 1, "x", {"name": ""}]}`,
		`{"mcpServers": {"f": {"command": "x", "allowedTools": ["a*", "b"], "disabledTools": ["*_x"]}}}`,
		`{"mcpServers": {"d": {"command": "${UNSET}", "enabled": false, "cwd": "rel"}}}`,
		`not json`, `null`, `[]`, `{}`,
	} {
		f.Add([]byte(seed), "value")
	}
	f.Fuzz(func(t *testing.T, data []byte, v string) {
		path := filepath.Join(t.TempDir(), "mcp.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		getenv := func(k string) string {
			if k == "V" {
				return v
			}
			return ""
		}
		cfg, err := LoadConfig(LoadOptions{ExplicitFile: path, Getenv: getenv})
		if err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("error is not a CONFIG_ERROR: %v", err)
			}
			if cfg != nil {
				t.Fatal("config returned with an error")
			}
			return
		}
		disabled := map[string]bool{}
		for _, name := range cfg.Disabled {
			disabled[name] = true
		}
		for _, err := range cfg.Errors {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("entry error is not a CONFIG_ERROR: %v", err)
			}
		}
		if !slices.IsSortedFunc(cfg.Servers, func(a, b ServerConfig) int { return strings.Compare(a.Name, b.Name) }) {
			t.Fatal("servers not sorted")
		}
		for _, s := range cfg.Servers {
			if strings.TrimSpace(s.Name) == "" || disabled[s.Name] || cfg.Sources[s.Name] != path {
				t.Fatalf("bad server %+v", s)
			}
			if strings.Contains(s.Command+s.URL+strings.Join(s.Args, ""), "${") && !strings.Contains(v, "${") {
				t.Fatalf("unexpanded variable in %+v", s)
			}
			switch s.Kind {
			case TransportStdio:
				if strings.TrimSpace(s.Command) == "" || s.URL != "" {
					t.Fatalf("bad stdio server %+v", s)
				}
			case TransportHTTP, TransportSSE:
				u, err := url.Parse(s.URL)
				if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || s.Command != "" {
					t.Fatalf("bad http server %+v", s)
				}
			default:
				t.Fatalf("server without a transport: %+v", s)
			}
			if s.Timeout < 0 {
				t.Fatalf("negative timeout: %+v", s)
			}
			if s.Cwd != "" && !filepath.IsAbs(s.Cwd) {
				t.Fatalf("relative cwd: %+v", s)
			}
			for _, p := range append(slices.Clone(s.AllowedTools), s.DisabledTools...) {
				if err := ValidToolPattern(p); err != nil {
					t.Fatalf("bad pattern kept: %v", err)
				}
			}
		}
	})
}

func TestLoadConfigToolFilters(t *testing.T) {
	env := newConfigEnv(t)
	path := writeFile(t, filepath.Join(t.TempDir(), "mcp.json"), `{"mcpServers": {
		"both": {"command": "x", "allowedTools": ["read_*", "list"], "disabledTools": ["read_secret"]},
		"none": {"command": "x", "allowedTools": null, "disabledTools": []}
	}}`)
	cfg, err := env.load(path)
	if err != nil || len(cfg.Errors) > 0 {
		t.Fatal(err, cfg.Errors)
	}
	got := cfg.Servers[0]
	if got.Name != "both" || !slices.Equal(got.AllowedTools, []string{"read_*", "list"}) || !slices.Equal(got.DisabledTools, []string{"read_secret"}) {
		t.Errorf("both: %+v", got)
	}
	if s := cfg.Servers[1]; len(s.AllowedTools) != 0 || len(s.DisabledTools) != 0 {
		t.Errorf("none: %+v", s)
	}
	// SaveConfig writes the filters back.
	out := filepath.Join(t.TempDir(), "saved.json")
	if err := SaveConfig(out, &ConfigFile{MCPServers: map[string]ServerEntry{
		"both": {Command: "x", AllowedTools: []string{"read_*"}, DisabledTools: []string{"read_secret"}},
	}}); err != nil {
		t.Fatal(err)
	}
	cfg, err = LoadConfig(LoadOptions{File: out, Getenv: env.getenv})
	if err != nil || len(cfg.Servers) != 1 || !slices.Equal(cfg.Servers[0].AllowedTools, []string{"read_*"}) || !slices.Equal(cfg.Servers[0].DisabledTools, []string{"read_secret"}) {
		t.Errorf("saved filters: %+v %v", cfg, err)
	}
}

// TestLoadConfigOneFile: LoadOptions.File is read alone, with expansion;
// DirName renames the configuration directory.
func TestLoadConfigOneFile(t *testing.T) {
	env := newConfigEnv(t)
	env.vars["TOKEN"] = "t0k"
	writeFile(t, env.userFile(), `{"servers": [{"name": "from-user", "command": "u"}]}`)
	writeFile(t, env.projectFile(), `{"servers": [{"name": "from-project", "command": "p"}]}`)
	// A Claude Desktop configuration.
	desktop := writeFile(t, filepath.Join(t.TempDir(), "claude_desktop_config.json"), `{
		"mcpServers": {"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
		                          "env": {"GITHUB_TOKEN": "${TOKEN}"}}},
		"globalShortcut": "Ctrl+Space"}`)
	cfg, err := LoadConfig(LoadOptions{File: desktop, Cwd: env.project, Getenv: env.getenv})
	if err != nil || len(cfg.Errors) > 0 {
		t.Fatal(err, cfg.Errors)
	}
	if !slices.Equal(serverNames(cfg), []string{"github"}) || cfg.Servers[0].Env["GITHUB_TOKEN"] != "t0k" {
		t.Errorf("servers = %+v, want github alone, expanded", cfg.Servers)
	}
	if len(cfg.Sources) != 1 || cfg.Sources["github"] != desktop {
		t.Errorf("sources = %v", cfg.Sources)
	}

	// A VS Code configuration ("servers" keyed by name, with "type").
	vscode := writeFile(t, filepath.Join(t.TempDir(), ".vscode", "mcp.json"), `{
		"servers": {"fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"]},
		            "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}}}`)
	cfg, err = LoadConfig(LoadOptions{File: vscode, Getenv: env.getenv})
	if err != nil || len(cfg.Errors) > 0 || !slices.Equal(serverNames(cfg), []string{"fetch", "remote"}) ||
		cfg.Servers[1].Headers["Authorization"] != "Bearer t0k" {
		t.Errorf("vscode: %+v %v", cfg, err)
	}

	for _, tt := range []struct {
		name string
		opts LoadOptions
	}{
		{"missing file", LoadOptions{File: filepath.Join(t.TempDir(), "nope.json")}},
		{"File and ExplicitFile", LoadOptions{File: desktop, ExplicitFile: desktop}},
		{"DirName with a slash", LoadOptions{Cwd: env.project, DirName: "a/b"}},
		{"DirName ..", LoadOptions{Cwd: env.project, DirName: ".."}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Getenv = env.getenv
			if cfg, err := LoadConfig(tt.opts); !errors.Is(err, ErrConfig) || cfg != nil {
				t.Errorf("got %+v, %v; want a CONFIG_ERROR", cfg, err)
			}
		})
	}

	t.Run("DirName", func(t *testing.T) {
		writeFile(t, filepath.Join(env.xdg, "myhost", "mcp.json"), `{"servers": [{"name": "host-user", "command": "u"}]}`)
		writeFile(t, filepath.Join(env.project, ".myhost", "mcp.json"), `{"servers": [{"name": "host-project", "command": "p"}]}`)
		opts := LoadOptions{Cwd: env.project, DirName: "myhost", Getenv: env.getenv}
		cfg, err := LoadConfig(opts)
		if err != nil || !slices.Equal(serverNames(cfg), []string{"host-project", "host-user"}) {
			t.Errorf("got %+v, %v", cfg, err)
		}
		if opts.UserFile() != filepath.Join(env.xdg, "myhost", "mcp.json") || opts.ProjectFile() != filepath.Join(env.project, ".myhost", "mcp.json") {
			t.Errorf("paths: %s %s", opts.UserFile(), opts.ProjectFile())
		}
		def := LoadOptions{Cwd: env.project, Getenv: env.getenv}
		if def.UserFile() != env.userFile() || def.ProjectFile() != env.projectFile() {
			t.Errorf("default paths: %s %s", def.UserFile(), def.ProjectFile())
		}
	})
}

// TestLoadConfigEdgeCases: relative cwd, empty and unset variables, and
// disabled entries.
func TestLoadConfigEdgeCases(t *testing.T) {
	lookup := func(k string) (string, bool) {
		v, ok := map[string]string{"EMPTY": "", "DIR": "d"}[k]
		return v, ok
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	project := t.TempDir()
	tests := []struct {
		name      string
		entry     string
		cwd       string // LoadOptions.Cwd
		want      *ServerConfig
		field     string // the error's field, when the entry is bad
		wantError bool
	}{
		{name: "relative cwd from the project", entry: `{"command": "x", "cwd": "sub/${DIR}"}`, cwd: project,
			want: &ServerConfig{Cwd: filepath.Join(project, "sub", "d")}},
		{name: "dot cwd is the project", entry: `{"command": "x", "cwd": "."}`, cwd: project,
			want: &ServerConfig{Cwd: project}},
		{name: "relative cwd without a project", entry: `{"command": "x", "cwd": "sub"}`,
			want: &ServerConfig{Cwd: filepath.Join(wd, "sub")}},
		{name: "absolute cwd", entry: `{"command": "x", "cwd": "/srv/x"}`, cwd: project,
			want: &ServerConfig{Cwd: "/srv/x"}},
		{name: "empty variable expands to nothing", entry: `{"command": "x", "args": ["a${EMPTY}b", "${EMPTY}"], "env": {"E": "${EMPTY}"}}`,
			want: &ServerConfig{Args: []string{"ab", ""}, Env: map[string]string{"E": ""}}},
		{name: "empty variable takes a default", entry: `{"command": "x", "args": ["${EMPTY:-dflt}"]}`,
			want: &ServerConfig{Args: []string{"dflt"}}},
		{name: "empty variable in the header", entry: `{"url": "http://h/mcp", "headers": {"X-Extra": "${EMPTY}"}}`,
			want: &ServerConfig{Kind: TransportHTTP, URL: "http://h/mcp", Headers: map[string]string{"X-Extra": ""}}},
		{name: "disabled entry with an unset variable", entry: `{"command": "${UNSET}", "env": {"T": "${ALSO_UNSET}"}, "enabled": false}`},
		{name: "disabled entry with an unset variable in its url", entry: `{"url": "${UNSET}", "disabled": true}`},
		{name: "unset variable", entry: `{"command": "x", "args": ["${UNSET}"]}`, field: "args[0]", wantError: true},
		{name: "empty command", entry: `{"command": "${EMPTY}"}`, field: "command", wantError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, filepath.Join(t.TempDir(), "mcp.json"), `{"mcpServers": {"s": `+tt.entry+`}}`)
			cfg, err := LoadConfig(LoadOptions{File: path, Cwd: tt.cwd, LookupEnv: lookup})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.wantError:
				var e *Error
				if len(cfg.Errors) != 1 || !errors.As(cfg.Errors[0], &e) || e.Details.(ConfigIssue).Field != tt.field {
					t.Fatalf("errors = %v, want one for field %s", cfg.Errors, tt.field)
				}
				if !slices.Equal(cfg.Disabled, []string{"s"}) {
					t.Errorf("disabled = %v", cfg.Disabled)
				}
			case tt.want == nil: // disabled, quietly
				if len(cfg.Errors) != 0 || len(cfg.Servers) != 0 || !slices.Equal(cfg.Disabled, []string{"s"}) {
					t.Errorf("got %+v, want s disabled without an error", cfg)
				}
			default:
				if len(cfg.Errors) != 0 || len(cfg.Servers) != 1 {
					t.Fatalf("got %+v", cfg)
				}
				want := *tt.want
				want.Name = "s"
				if want.Kind == "" {
					want.Kind, want.Command = TransportStdio, "x"
				}
				got := cfg.Servers[0]
				if len(got.Headers) == 0 && want.Headers == nil {
					got.Headers = nil
				}
				if len(got.Env) == 0 && want.Env == nil {
					got.Env = nil
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("got  %+v\nwant %+v", got, want)
				}
			}
		})
	}
}

// TestMissingCwd: a stdio server whose working directory does not exist
// fails with an error that says so, not one about its command.
func TestMissingCwd(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fx := newFixture(t, "local", fxNormal)
	fx.cfg.Cwd = filepath.Join(t.TempDir(), "gone")
	c := NewClient(fx.cfg, nil)
	defer c.Close()
	err := c.Connect(ctx)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeConnectionFailed || e.Kind != FaultSpawnFailed ||
		!strings.Contains(e.Message, "working directory") || !strings.Contains(e.Message, fx.cfg.Cwd) {
		t.Fatalf("Connect: %v, want CONNECTION_FAILED about the working directory", err)
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error does not wrap not-exist: %v", err)
	}
	// The same with a file where the directory should be.
	file := writeFile(t, filepath.Join(t.TempDir(), "file"), "x")
	fx.cfg.Cwd = file
	c2 := NewClient(fx.cfg, nil)
	defer c2.Close()
	if err := c2.Connect(ctx); !errors.As(err, &e) || !strings.Contains(e.Message, "working directory") {
		t.Errorf("Connect with a file as cwd: %v", err)
	}
	// An existing directory works, and the child runs in it.
	fx.cfg.Cwd = t.TempDir()
	c3 := NewClient(fx.cfg, nil)
	defer c3.Close()
	if err := c3.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := c3.CallTool(ctx, "cwd", nil)
	if err != nil || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, fx.cfg.Cwd) {
		t.Errorf("cwd tool: %v %+v", err, res)
	}
}
