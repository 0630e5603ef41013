// Package clitest holds a program's command table (a [cli.Program]) equal
// to what the program does and what its docs say: the usage text, each
// command's flag set, the command table in docs/commands.md and the
// command list of the package comment. Only tests import it.
package clitest

import (
	"bytes"
	"context"
	"go/parser"
	"go/token"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/worldforge-go/worldforge/internal/cli"
)

// RunFunc is a program's run: the whole program, callable in-process.
type RunFunc func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error

// UpdateEnv, set to "1", makes CheckDocs rewrite a stale table instead of
// failing.
const UpdateEnv = "WORLDFORGE_UPDATE_DOCS"

// result is one in-process run of a program.
type result struct {
	stdout, stderr string
	err            error
}

func call(t *testing.T, run RunFunc, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := run(ctx, args, func(string) string { return "" }, &stdout, &stderr)
	return result{stdout.String(), stderr.String(), err}
}

// CheckUsage checks that `help` prints the table's usage text, and no
// command at all prints it to stderr with exit code 2.
func CheckUsage(t *testing.T, p *cli.Program, run RunFunc) {
	t.Helper()
	if r := call(t, run, "help"); r.err != nil || r.stdout != p.Usage() || r.stderr != "" {
		t.Errorf("%s help: err %v, stderr %q, stdout:\n%s\nwant:\n%s", p.Name, r.err, r.stderr, r.stdout, p.Usage())
	}
	if r := call(t, run); cli.ExitCode(r.err) != 2 || r.stderr != p.Usage() || r.stdout != "" {
		t.Errorf("%s with no command: err %v (exit %d), stdout %q, stderr:\n%s", p.Name, r.err, cli.ExitCode(r.err), r.stdout, r.stderr)
	}
	if r := call(t, run, "no-such-command"); cli.ExitCode(r.err) != 2 || !strings.Contains(r.err.Error(), `"no-such-command"`) || r.stdout != "" || r.stderr != "" {
		t.Errorf("%s no-such-command: err %v (exit %d), stdout %q, stderr %q; want a one-line usage error", p.Name, r.err, cli.ExitCode(r.err), r.stdout, r.stderr)
	}
}

// CheckFlags runs every command of the table with -h and checks that it
// prints its rows of the table and exactly the flags their synopses name
// (from its real flag set), and with an undefined flag, that it is a
// one-line usage error naming the flag.
func CheckFlags(t *testing.T, p *cli.Program, run RunFunc) {
	t.Helper()
	for _, name := range p.Names() {
		t.Run(name, func(t *testing.T) {
			var want []string
			for _, c := range p.Lookup(name) {
				for _, f := range cli.SynopsisFlags(c.Synopsis) {
					if !slices.Contains(want, f) {
						want = append(want, f)
					}
				}
			}
			args := append(strings.Fields(name), "-h")
			r := call(t, run, args...)
			if !cli.IsHelp(r.err) || r.stdout != "" {
				t.Fatalf("%s %s: err %#v, stdout %q; want the help on stderr and exit 0", p.Name, strings.Join(args, " "), r.err, r.stdout)
			}
			for _, c := range p.Lookup(name) {
				if !strings.Contains(r.stderr, p.Name+" "+c.Line()) {
					t.Errorf("%s -h does not show %q:\n%s", name, p.Name+" "+c.Line(), r.stderr)
				}
			}
			got := cli.HelpFlags(r.stderr)
			for _, f := range want {
				if !slices.Contains(got, f) {
					t.Errorf("the synopsis of %s names -%s, which its flag set does not define", name, f)
				}
			}
			for _, f := range got {
				if !slices.Contains(want, f) {
					t.Errorf("%s has the flag -%s, which its synopsis in the command table does not name", name, f)
				}
			}
			if len(got) == 0 && len(want) > 0 {
				t.Errorf("%s -h shows no flags:\n%s", name, r.stderr)
			}

			args = append(strings.Fields(name), "--no-such-flag")
			r = call(t, run, args...)
			if cli.ExitCode(r.err) != 2 || !strings.Contains(r.err.Error(), "-no-such-flag") || strings.Contains(r.err.Error(), "\n") || r.stdout != "" || r.stderr != "" {
				t.Errorf("%s %s: err %v (exit %d), stdout %q, stderr %q; want a one-line usage error naming the flag",
					p.Name, strings.Join(args, " "), r.err, cli.ExitCode(r.err), r.stdout, r.stderr)
			}
		})
	}
}

// CheckDocs checks that the file at path (docs/commands.md) holds the
// table's Markdown between the lines "<!-- commands:NAME -->" and
// "<!-- /commands:NAME -->", NAME the program's. With UpdateEnv=1 in the
// environment it rewrites the block instead.
func CheckDocs(t *testing.T, p *cli.Program, path string) {
	t.Helper()
	begin, end := "<!-- commands:"+p.Name+" -->\n", "<!-- /commands:"+p.Name+" -->"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q … %q block", path, begin, end)
	}
	want := p.Markdown()
	if got := doc[i+len(begin) : j]; got != want {
		if os.Getenv(UpdateEnv) == "1" {
			if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("the %s command table in %s is stale; run %s=1 go test -run TestCommandTable ./cmd/%s. Want:\n%s", p.Name, path, UpdateEnv, p.Name, want)
	}
}

// CheckDocComment checks the command list of the package comment of the
// Go file at path (main.go): its lines "PROGRAM COMMAND …" name every
// command of the table that is not hidden, and no other.
func CheckDocComment(t *testing.T, p *cli.Program, path string) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil {
		t.Fatalf("%s has no package comment", path)
	}
	var visible []string
	for _, c := range p.Commands {
		if !c.Hidden && !slices.Contains(visible, c.Name) {
			visible = append(visible, c.Name)
		}
	}
	var listed []string
	for line := range strings.SplitSeq(f.Doc.Text(), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), p.Name+" ")
		if !ok || !strings.HasPrefix(line, "\t") {
			continue // prose, not the indented command list
		}
		best := ""
		for _, n := range p.Names() {
			if (rest == n || strings.HasPrefix(rest, n+" ")) && len(n) > len(best) {
				best = n
			}
		}
		switch {
		case best == "":
			t.Errorf("%s lists %q, which is not in the command table", path, strings.TrimSpace(line))
		case !slices.Contains(visible, best):
			t.Errorf("%s lists the hidden command %q", path, best)
		default:
			listed = append(listed, best)
		}
	}
	for _, n := range visible {
		if !slices.Contains(listed, n) {
			t.Errorf("the package comment of %s does not list the command %q", path, n)
		}
	}
}
