// Package configtext holds the text rules that the configuration parsers
// of mcpkit and mcpkit/oauth share: ${VAR} expansion, variable names, and
// a look at a raw JSON value's kind.
package configtext

import (
	"bytes"
	"fmt"
	"strings"
)

// ExpandVars replaces ${VAR} and ${VAR:-default} in s, looking variables
// up with lookup. A variable set to the empty string expands to "" with
// ${VAR}; ${VAR:-default} takes the default when VAR is unset or empty, as
// in the shell. A "$" not followed by "{" is literal. An unset VAR without
// a default, an unterminated "${" and a bad variable name are errors.
func ExpandVars(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		rest := s[i+2:]
		j := strings.IndexByte(rest, '}')
		if j < 0 {
			return "", fmt.Errorf("unterminated ${ in %q", s)
		}
		ref := rest[:j]
		name, def, hasDef := strings.Cut(ref, ":-")
		if !ValidVarName(name) {
			return "", fmt.Errorf("bad variable reference ${%s}", ref)
		}
		v, set := lookup(name)
		switch {
		case !set && !hasDef:
			return "", fmt.Errorf("variable %s is not set", name)
		case v == "" && hasDef:
			v = def
		}
		b.WriteString(v)
		s = rest[j+1:]
	}
}

// Lookup turns a getenv function, which cannot tell an empty variable
// from an unset one, into a lookup function where the empty string counts
// as unset.
func Lookup(getenv func(string) string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v := getenv(name)
		return v, v != ""
	}
}

// ValidVarName reports whether s is a variable name: a letter or "_",
// then letters, digits and "_".
func ValidVarName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// FirstByte returns the first byte of data after white space (0 if none):
// '{' for an object, '[' for an array.
func FirstByte(data []byte) byte {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return 0
	}
	return data[0]
}

// IsNull reports whether data is the JSON null.
func IsNull(data []byte) bool { return string(bytes.TrimSpace(data)) == "null" }
