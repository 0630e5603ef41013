package mcpkit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/worldforge-go/worldforge/mcpkit/internal/configtext"
	"github.com/worldforge-go/worldforge/mcpkit/oauth"
)

// ConfigFile is the on-disk form of a configuration file, as written by
// SaveConfig. Servers is the toolkit's list form; MCPServers is the
// widespread "mcpServers" form. LoadConfig also reads "servers" as an
// object keyed by name.
type ConfigFile struct {
	Servers    []ServerEntry          `json:"servers,omitempty"`
	MCPServers map[string]ServerEntry `json:"mcpServers,omitempty"`
}

// ServerEntry is one server in a ConfigFile. Name is required in the
// Servers list and ignored in MCPServers (the key is the name).
type ServerEntry struct {
	Name    string            `json:"name,omitempty"`
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Timeout int64             `json:"timeout,omitempty"` // milliseconds
	// ResetTimeoutOnProgress and MaxTotalTimeout (milliseconds) are
	// ServerConfig's fields of the same names.
	ResetTimeoutOnProgress bool         `json:"resetTimeoutOnProgress,omitempty"`
	MaxTotalTimeout        int64        `json:"maxTotalTimeout,omitempty"`
	Enabled                *bool        `json:"enabled,omitempty"` // nil: enabled
	OAuth                  *oauth.Entry `json:"oauth,omitempty"`   // http and sse only
	// AllowedTools and DisabledTools filter the server's tools (see
	// ServerConfig).
	AllowedTools  []string `json:"allowedTools,omitempty"`
	DisabledTools []string `json:"disabledTools,omitempty"`
}

// ExampleConfig returns the example configuration of the original API: a
// filesystem server, a GitHub server with a token in its environment, and a
// disabled remote server.
func ExampleConfig() *ConfigFile {
	off, on := false, true
	return &ConfigFile{Servers: []ServerEntry{
		{
			Name:    "filesystem",
			Command: "npx",
			Args:    []string{"-y", "@modelcontextprotocol/server-filesystem", "/path/to/allowed/dir"},
			Enabled: &on,
		},
		{
			Name:    "github",
			Command: "npx",
			Args:    []string{"-y", "@modelcontextprotocol/server-github"},
			Env:     map[string]string{"GITHUB_TOKEN": "${GITHUB_TOKEN}"},
			Enabled: &on,
		},
		{
			Name:    "remote-server",
			URL:     "http://localhost:8080/mcp",
			Headers: map[string]string{"Authorization": "Bearer ${REMOTE_TOKEN}"},
			Enabled: &off,
		},
	}}
}

// DefaultConfigDirName is the configuration directory name of LoadOptions
// when none is given: $XDG_CONFIG_HOME/worldforge/mcp.json and
// <project>/.worldforge/mcp.json.
const DefaultConfigDirName = "worldforge"

// LoadOptions says where LoadConfig looks and how it expands variables.
type LoadOptions struct {
	// File, if set, is the one file read: it must exist, and the user,
	// project and explicit files are not read. Use it for a file written
	// for another host (a Claude Desktop or VS Code configuration), or for
	// a command's --config flag.
	File string
	// ExplicitFile, if set, is read after the user and project files and
	// wins over them; it must exist. It cannot be combined with File.
	ExplicitFile string
	// Cwd is the project directory: its project file is read (unless File
	// is set), and a relative "cwd" of any entry is taken relative to it
	// ("" means the process's working directory for that, and no project
	// file).
	Cwd string
	// DirName names the configuration directory of the user and project
	// files: $XDG_CONFIG_HOME/<DirName>/mcp.json and
	// <Cwd>/.<DirName>/mcp.json (default DefaultConfigDirName). It must be
	// a single path element.
	DirName string
	// LookupEnv looks up variables for ${VAR} expansion and for
	// XDG_CONFIG_HOME and HOME, telling a variable set to the empty
	// string from an unset one. When nil, Getenv is used; when both are
	// nil, the process environment (os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Getenv is LookupEnv for callers with a getenv function, which cannot
	// tell an empty variable from an unset one: an empty value counts as
	// unset.
	Getenv func(string) string
}

// lookup returns the variable lookup the options ask for.
func (o *LoadOptions) lookup() func(string) (string, bool) {
	switch {
	case o.LookupEnv != nil:
		return o.LookupEnv
	case o.Getenv != nil:
		return configtext.Lookup(o.Getenv)
	}
	return os.LookupEnv
}

func (o *LoadOptions) dirName() string {
	if o.DirName == "" {
		return DefaultConfigDirName
	}
	return o.DirName
}

// UserFile returns the user file the options name ("" if neither
// XDG_CONFIG_HOME nor HOME is set); see UserConfigPath.
func (o *LoadOptions) UserFile() string {
	l := o.lookup()
	return userConfigPath(o.dirName(), func(k string) string { v, _ := l(k); return v })
}

// ProjectFile returns the project file the options name, "" without Cwd.
func (o *LoadOptions) ProjectFile() string {
	if o.Cwd == "" {
		return ""
	}
	return filepath.Join(o.Cwd, "."+o.dirName(), "mcp.json")
}

// Config is the merged result of LoadConfig.
type Config struct {
	// Servers are the enabled, valid servers, sorted by name.
	Servers []ServerConfig
	// Disabled names the servers that are turned off ("enabled": false) or
	// whose entry is bad, sorted.
	Disabled []string
	// Errors holds a CONFIG_ERROR *Error for each user or project file
	// that could not be read or parsed, for each entry without a usable
	// name or with a name already used in its file, and for each bad entry
	// that would have been used (not one overridden by a file of higher
	// precedence). Its Details is a ConfigIssue.
	Errors []error
	// Sources maps each server name (enabled or not) to the file its
	// entry came from.
	Sources map[string]string
}

// ConfigIssue is the Details of a CONFIG_ERROR reported by LoadConfig.
type ConfigIssue struct {
	File   string
	Server string // "" for a file-level problem
	Field  string // the offending field, if one
}

// UserConfigPath returns $XDG_CONFIG_HOME/worldforge/mcp.json, falling back
// to $HOME/.config/worldforge/mcp.json; "" if neither is set. A relative
// XDG_CONFIG_HOME is ignored, as the XDG specification requires.
func UserConfigPath(getenv func(string) string) string {
	if getenv == nil {
		return ""
	}
	return userConfigPath(DefaultConfigDirName, getenv)
}

func userConfigPath(dirName string, getenv func(string) string) string {
	base := getenv("XDG_CONFIG_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, dirName, "mcp.json")
}

// ProjectConfigPath returns <cwd>/.worldforge/mcp.json.
func ProjectConfigPath(cwd string) string {
	return filepath.Join(cwd, "."+DefaultConfigDirName, "mcp.json")
}

// LoadConfig reads up to three files, each in either of two formats, and
// merges them by server name:
//
//   - the user file, $XDG_CONFIG_HOME/worldforge/mcp.json
//     (~/.config/worldforge/mcp.json when XDG_CONFIG_HOME is unset);
//   - the project file, <cwd>/.worldforge/mcp.json;
//   - an explicit file named by the caller (LoadOptions.ExplicitFile).
//
// (LoadOptions.DirName replaces "worldforge" in both paths.) Precedence is
// explicit file > project file > user file: an entry replaces the whole
// entry of the same name from a file of lower precedence (fields are not
// merged), so a project can also disable a user's server with "enabled":
// false. Missing user and project files are skipped; a missing explicit
// file is an error. With LoadOptions.File, that one file is read and no
// other (a missing one is an error).
//
// The toolkit's own format has a "servers" key holding a list of entries
// with a "name", or an object keyed by name:
//
//	{"servers": [{"name": "fs", "command": "npx", "args": ["-y", "server-fs", "/tmp"]},
//	             {"name": "remote", "url": "https://example.com/mcp", "enabled": false}]}
//
// The widespread format has an "mcpServers" object keyed by name, with an
// optional "type" of "stdio", "http" (or "streamable-http") or "sse":
//
//	{"mcpServers": {"worldforge": {"type": "http", "url": "http://127.0.0.1:8080/mcp",
//	                               "headers": {"Authorization": "Bearer ${WORLDFORGE_KEY}"}}}}
//
// Entry fields: command, args, env, cwd (a relative cwd is taken relative
// to the project directory, LoadOptions.Cwd, or the process's working
// directory without one), url, headers, timeout (milliseconds per
// request), resetTimeoutOnProgress (true: progress restarts a request's
// timeout), maxTotalTimeout (milliseconds a request may run however
// often progress restarted its timeout), enabled (default true;
// "disabled": true is accepted too), type, and the tool filters
// allowedTools and disabledTools: lists of tool names in which "*" stands
// for any run of characters (see ServerConfig.AllowedTools; a bad pattern
// disables the entry with an error naming it, such as allowedTools[1]). An entry with a command is a stdio server; one with a url is a
// streamable-HTTP server, or a legacy SSE server with "type": "sse".
// Unknown fields are ignored, so files written for other hosts load.
//
// An http or sse entry may have an "oauth" object (see oauth.Entry and
// oauth.Config), which is checked strictly: an unknown key, a bad URL or a
// grant without what it needs disables the entry with an error naming the
// field (secrets are never shown). For example:
//
//	"oauth": {"clientId": "mcp-host", "clientSecretEnv": "MCP_SECRET",
//	          "scopes": ["mcp:read"], "redirectUri": "http://127.0.0.1:33418/callback"}
//
// ${VAR} and ${VAR:-default} are expanded in command, args, env values,
// cwd, url and header values, from the process environment unless
// LoadOptions says otherwise. A variable set to the empty string expands
// to ""; ${VAR:-default} takes the default when VAR is unset or empty. An
// unset ${VAR} without a default is an error in that entry, unless the
// entry is disabled: a disabled entry is not expanded. A "$" not followed
// by "{" is literal; there is no escape for a literal "${".
//
// LoadConfig returns an error only for the explicit file: when it cannot
// be read or is not a configuration file at all. Problems in the user and
// project files, and bad entries in any file, are collected in
// Config.Errors; a bad entry disables that server only (it does not fall
// back to an entry of lower precedence).
func LoadConfig(opts LoadOptions) (*Config, error) {
	if opts.File != "" && opts.ExplicitFile != "" {
		return nil, configErr(ConfigIssue{File: opts.File}, "LoadOptions: File and ExplicitFile are both set", nil)
	}
	if d := opts.DirName; d != "" && (d == "." || d == ".." || strings.ContainsAny(d, `/\`+"\x00") || d != filepath.Base(d)) {
		return nil, configErr(ConfigIssue{}, fmt.Sprintf("LoadOptions: DirName %q is not a single path element", d), nil)
	}
	pc := parseCtx{lookup: opts.lookup(), project: opts.Cwd}

	type source struct {
		path     string
		explicit bool
	}
	var sources []source // lowest precedence first
	if opts.File != "" {
		sources = append(sources, source{path: opts.File, explicit: true})
	} else {
		if p := opts.UserFile(); p != "" {
			sources = append(sources, source{path: p})
		}
		if p := opts.ProjectFile(); p != "" {
			sources = append(sources, source{path: p})
		}
		if opts.ExplicitFile != "" {
			sources = append(sources, source{path: opts.ExplicitFile, explicit: true})
		}
	}

	winners := map[string]parsedEntry{}
	var fileErrs []error
	for _, src := range sources {
		data, err := os.ReadFile(src.path)
		if err != nil {
			if src.explicit {
				return nil, configErr(ConfigIssue{File: src.path}, "cannot read config file", err)
			}
			if !errors.Is(err, fs.ErrNotExist) {
				fileErrs = append(fileErrs, configErr(ConfigIssue{File: src.path}, "cannot read config file", err))
			}
			continue
		}
		entries, problems, err := parseConfig(data, src.path, pc)
		if err != nil {
			if src.explicit {
				return nil, err
			}
			fileErrs = append(fileErrs, err)
			continue
		}
		fileErrs = append(fileErrs, problems...)
		for _, e := range entries {
			winners[e.name] = e // later files win
		}
	}

	cfg := &Config{Sources: map[string]string{}, Errors: fileErrs}
	names := make([]string, 0, len(winners))
	for name := range winners {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		e := winners[name]
		cfg.Sources[name] = e.file
		switch {
		case e.err != nil:
			cfg.Errors = append(cfg.Errors, e.err)
			cfg.Disabled = append(cfg.Disabled, name)
		case !e.enabled:
			cfg.Disabled = append(cfg.Disabled, name)
		default:
			cfg.Servers = append(cfg.Servers, e.server)
		}
	}
	return cfg, nil
}

// SaveConfig writes file to path as indented JSON, atomically: it writes a
// temporary file in the same directory (created with mode 0700 if missing)
// and renames it over path. The file's mode is 0600, since entries often
// hold tokens.
func SaveConfig(path string, file *ConfigFile) (err error) {
	if file == nil {
		file = &ConfigFile{}
	}
	data, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		return fmt.Errorf("mcpkit: encode config: %w", err)
	}
	data = append(data, '\n')
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("mcpkit: save config: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("mcpkit: save config: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return fmt.Errorf("mcpkit: save config: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("mcpkit: save config: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("mcpkit: save config: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("mcpkit: save config: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("mcpkit: save config: %w", err)
	}
	return nil
}

// parsedEntry is one entry of one file: a server, or the reason it is bad.
type parsedEntry struct {
	name    string
	file    string
	enabled bool
	server  ServerConfig
	err     error
}

func configErr(is ConfigIssue, msg string, cause error) *Error {
	m := is.File + ": "
	if is.Field != "" {
		m += is.Field + ": "
	}
	return &Error{Code: CodeConfigError, Server: is.Server, Message: m + msg, Details: is, Err: cause}
}

// parseConfig parses one file. It fails only when the file as a whole is
// unusable. A bad entry is returned as an entry with err set; entries that
// cannot be named (no name, a duplicate name) are returned as problems.
func parseConfig(data []byte, file string, pc parseCtx) (out []parsedEntry, problems []error, _ error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		if err == nil {
			err = errors.New("top level is null")
		}
		return nil, nil, configErr(ConfigIssue{File: file}, "not a JSON object", err)
	}
	type raw struct {
		name string
		data json.RawMessage
	}
	var raws []raw
	seen := map[string]bool{}
	add := func(name string, data json.RawMessage, field string) {
		name = strings.TrimSpace(name)
		if name == "" {
			problems = append(problems, configErr(ConfigIssue{File: file, Field: field}, "empty server name", nil))
			return
		}
		if seen[name] {
			problems = append(problems, configErr(
				ConfigIssue{File: file, Server: name, Field: field}, "duplicate server name; the first entry is used", nil))
			return
		}
		seen[name] = true
		raws = append(raws, raw{name, data})
	}

	servers, hasServers := top["servers"]
	mcpServers, hasMCP := top["mcpServers"]
	if !hasServers && !hasMCP {
		return nil, nil, configErr(ConfigIssue{File: file}, `no "servers" or "mcpServers" key`, nil)
	}
	if hasServers && !configtext.IsNull(servers) {
		switch configtext.FirstByte(servers) {
		case '[':
			var list []json.RawMessage
			if err := json.Unmarshal(servers, &list); err != nil {
				return nil, nil, configErr(ConfigIssue{File: file, Field: "servers"}, "bad list", err)
			}
			for i, item := range list {
				var head struct {
					Name json.RawMessage `json:"name"`
				}
				var name string
				err := json.Unmarshal(item, &head)
				if err == nil {
					err = json.Unmarshal(head.Name, &name)
				}
				name = strings.TrimSpace(name)
				if err != nil || name == "" {
					problems = append(problems, configErr(
						ConfigIssue{File: file, Field: fmt.Sprintf("servers[%d].name", i)}, "missing or non-string name", nil))
					continue
				}
				add(name, item, "servers")
			}
		case '{':
			m, err := objectEntries(servers)
			if err != nil {
				return nil, nil, configErr(ConfigIssue{File: file, Field: "servers"}, "bad object", err)
			}
			for _, kv := range m {
				add(kv.name, kv.data, "servers")
			}
		default:
			return nil, nil, configErr(ConfigIssue{File: file, Field: "servers"}, "want a list or an object", nil)
		}
	}
	if hasMCP && !configtext.IsNull(mcpServers) {
		if configtext.FirstByte(mcpServers) != '{' {
			return nil, nil, configErr(ConfigIssue{File: file, Field: "mcpServers"}, "want an object", nil)
		}
		m, err := objectEntries(mcpServers)
		if err != nil {
			return nil, nil, configErr(ConfigIssue{File: file, Field: "mcpServers"}, "bad object", err)
		}
		for _, kv := range m {
			add(kv.name, kv.data, "mcpServers")
		}
	}

	for _, r := range raws {
		out = append(out, parseEntry(r.name, r.data, file, pc))
	}
	return out, problems, nil
}

type namedRaw struct {
	name string
	data json.RawMessage
}

// objectEntries returns an object's members sorted by key (trimmed;
// empty keys are kept so that they are reported).
func objectEntries(data json.RawMessage) ([]namedRaw, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	out := make([]namedRaw, 0, len(m))
	for k, v := range m {
		out = append(out, namedRaw{k, v})
	}
	slices.SortFunc(out, func(a, b namedRaw) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// parseCtx is what parsing an entry needs besides the entry: the variable
// lookup and the project directory, the base of a relative cwd ("" for the
// working directory).
type parseCtx struct {
	lookup  func(string) (string, bool)
	project string
}

// parseEntry turns one entry into a ServerConfig, or reports why it can't.
// A disabled entry is checked but not expanded: its variables need not be
// set.
func parseEntry(name string, data json.RawMessage, file string, pc parseCtx) parsedEntry {
	pe := parsedEntry{name: name, file: file}
	fail := func(field, format string, args ...any) parsedEntry {
		pe.err = configErr(ConfigIssue{File: file, Server: name, Field: field}, fmt.Sprintf(format, args...), nil)
		return pe
	}
	if strings.TrimSpace(name) == "" {
		return fail("", "empty server name")
	}
	if configtext.FirstByte(data) != '{' {
		return fail("", "entry is not an object")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return fail("", "bad entry: %v", err)
	}

	// Typed decoding of each known field, so that a wrong type names the
	// field.
	str := func(key string, dst *string) bool {
		v, ok := fields[key]
		if !ok || configtext.IsNull(v) {
			return true
		}
		return json.Unmarshal(v, dst) == nil
	}
	var (
		typ, command, cwd, rawURL string
		args                      []string
		env, headers              map[string]string
	)
	for _, f := range []struct {
		key string
		dst *string
	}{{"type", &typ}, {"command", &command}, {"cwd", &cwd}, {"url", &rawURL}} {
		if !str(f.key, f.dst) {
			return fail(f.key, "want a string")
		}
	}
	if v, ok := fields["args"]; ok && !configtext.IsNull(v) {
		if err := json.Unmarshal(v, &args); err != nil || configtext.FirstByte(v) != '[' {
			return fail("args", "want a list of strings")
		}
	}
	for _, f := range []struct {
		key string
		dst *map[string]string
	}{{"env", &env}, {"headers", &headers}} {
		if v, ok := fields[f.key]; ok && !configtext.IsNull(v) {
			if err := json.Unmarshal(v, f.dst); err != nil || configtext.FirstByte(v) != '{' {
				return fail(f.key, "want an object of strings")
			}
		}
	}
	enabled := true
	for _, key := range []string{"enabled", "disabled"} {
		v, ok := fields[key]
		if !ok || configtext.IsNull(v) {
			continue
		}
		var b bool
		if err := json.Unmarshal(v, &b); err != nil {
			return fail(key, "want true or false")
		}
		if (key == "enabled") != b {
			enabled = false
		}
	}
	var timeout, maxTotal time.Duration
	for _, f := range []struct {
		key string
		dst *time.Duration
	}{{"timeout", &timeout}, {"maxTotalTimeout", &maxTotal}} {
		v, ok := fields[f.key]
		if !ok || configtext.IsNull(v) {
			continue
		}
		var ms float64
		if err := json.Unmarshal(v, &ms); err != nil {
			return fail(f.key, "want a number of milliseconds")
		}
		if ms < 0 || math.IsNaN(ms) || ms > float64(math.MaxInt64/int64(time.Millisecond)) {
			return fail(f.key, "out of range: %v", ms)
		}
		*f.dst = time.Duration(ms * float64(time.Millisecond))
	}
	resetOnProgress := false
	if v, ok := fields["resetTimeoutOnProgress"]; ok && !configtext.IsNull(v) {
		if err := json.Unmarshal(v, &resetOnProgress); err != nil {
			return fail("resetTimeoutOnProgress", "want true or false")
		}
	}

	// Transport.
	var kind TransportKind
	switch strings.ToLower(strings.TrimSpace(typ)) {
	case "":
	case "stdio":
		kind = TransportStdio
	case "http", "streamable-http", "streamable_http", "streamablehttp":
		kind = TransportHTTP
	case "sse":
		kind = TransportSSE
	default:
		return fail("type", "unknown type %q (want stdio, http, streamable-http or sse)", typ)
	}
	hasCmd, hasURL := strings.TrimSpace(command) != "", strings.TrimSpace(rawURL) != ""
	switch {
	case hasCmd && hasURL:
		return fail("", "both command and url are set")
	case !hasCmd && !hasURL:
		return fail("", "neither command nor url is set")
	case kind == TransportStdio && !hasCmd:
		return fail("command", `type "stdio" needs a command`)
	case (kind == TransportHTTP || kind == TransportSSE) && !hasURL:
		return fail("url", "type %q needs a url", typ)
	case kind == "" && hasCmd:
		kind = TransportStdio
	case kind == "":
		kind = TransportHTTP
	}

	// Tool filters.
	var filters [2][]string
	for i, key := range []string{"allowedTools", "disabledTools"} {
		v, ok := fields[key]
		if !ok || configtext.IsNull(v) {
			continue
		}
		var raw []json.RawMessage
		if configtext.FirstByte(v) != '[' || json.Unmarshal(v, &raw) != nil {
			return fail(key, "want a list of tool names and * patterns")
		}
		for j, item := range raw {
			var p string
			if err := json.Unmarshal(item, &p); err != nil {
				return fail(fmt.Sprintf("%s[%d]", key, j), "want a string")
			}
			if err := ValidToolPattern(p); err != nil {
				return fail(fmt.Sprintf("%s[%d]", key, j), "%v", err)
			}
			filters[i] = append(filters[i], p)
		}
	}
	if !enabled {
		// Not used, so not expanded: an unset variable in a disabled
		// entry is no error.
		return pe
	}

	// Expansion.
	var err error
	expand := func(field, s string) string {
		if err != nil {
			return ""
		}
		var out string
		out, err = configtext.ExpandVars(s, pc.lookup)
		if err != nil {
			pe.err = configErr(ConfigIssue{File: file, Server: name, Field: field}, err.Error(), nil)
		}
		return out
	}
	sc := ServerConfig{Name: name, Kind: kind, Timeout: timeout, ResetTimeoutOnProgress: resetOnProgress, MaxTotalTimeout: maxTotal,
		AllowedTools: filters[0], DisabledTools: filters[1]}
	sc.Command = expand("command", command)
	for i, a := range args {
		sc.Args = append(sc.Args, expand(fmt.Sprintf("args[%d]", i), a))
	}
	sc.Env = expandMap("env", env, expand)
	sc.Cwd = expand("cwd", cwd)
	sc.URL = expand("url", rawURL)
	sc.Headers = expandMap("headers", headers, expand)
	if err != nil {
		return pe
	}
	if sc.Cwd != "" && !filepath.IsAbs(sc.Cwd) {
		base, err := filepath.Abs(pc.project) // "" is the working directory
		if err != nil {
			pe.err = configErr(ConfigIssue{File: file, Server: name, Field: "cwd"}, "cannot resolve a relative cwd", err)
			return pe
		}
		sc.Cwd = filepath.Join(base, sc.Cwd)
	}
	if kind == TransportStdio {
		if strings.TrimSpace(sc.Command) == "" {
			return fail("command", "empty after expansion")
		}
	} else {
		u, err := url.Parse(sc.URL)
		if err != nil {
			return fail("url", "bad url: %v", err)
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fail("url", "want an http or https url with a host, got %q", sc.URL)
		}
	}
	for k := range sc.Headers {
		if !validHeaderName(k) {
			return fail("headers", "bad header name %q", k)
		}
	}
	for k := range sc.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fail("env", "bad variable name %q", k)
		}
	}
	if v, ok := fields["oauth"]; ok && !configtext.IsNull(v) {
		if _, ok := headerValue(sc.Headers, "Authorization"); ok {
			return fail("oauth", "conflicts with the Authorization header")
		}
		if kind == TransportStdio {
			return fail("oauth", "only http and sse servers use OAuth")
		}
		oc, err := oauth.ParseEntry(v, file, func(k string) string { v, _ := pc.lookup(k); return v })
		if ce := (*oauth.ConfigError)(nil); errors.As(err, &ce) {
			return fail(ce.Field, "%s", ce.Message)
		} else if err != nil {
			return fail("oauth", "%v", err)
		}
		sc.OAuth = oc
	}
	pe.server, pe.enabled = sc, enabled
	return pe
}

func expandMap(field string, m map[string]string, expand func(field, s string) string) map[string]string {
	if m == nil {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // report the first bad value deterministically
	out := make(map[string]string, len(m))
	for _, k := range keys {
		out[k] = expand(field+"."+k, m[k])
	}
	return out
}

// validHeaderName reports whether s is an HTTP token (RFC 9110).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// headerValue looks a header up in a configured header map, ignoring case.
func headerValue(h map[string]string, name string) (string, bool) {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}
