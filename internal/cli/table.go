package cli

import (
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Command is one row of a program's command table. A command with two
// forms ("mcp tools --url …" and "mcp tools --config …") has a row for each,
// under the same name.
type Command struct {
	// Name is the command's words after the program name: "serve",
	// "key create". It is also the name of the command's flag set.
	Name string
	// Synopsis is its arguments and every flag its flag set defines, as
	// the usage text shows them (a test holds the two equal).
	Synopsis string
	// Summary says in one line what the command does and prints.
	Summary string
	// Doc, when set, replaces Summary in docs/commands.md (Markdown).
	Doc string
	// Hidden rows are commands that other commands start; usage and the
	// docs leave them out.
	Hidden bool
}

// Line is the command as usage shows it: the name and the synopsis.
func (c Command) Line() string {
	return strings.TrimSpace(c.Name + " " + c.Synopsis)
}

// Program is a command's table of subcommands.
type Program struct {
	// Name is the program as run: "worldforge".
	Name     string
	Commands []Command
	// Footer follows the list of commands in the usage text.
	Footer string
}

// Lookup returns the rows named name.
func (p *Program) Lookup(name string) []Command {
	var out []Command
	for _, c := range p.Commands {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

// Names returns the distinct command names in table order.
func (p *Program) Names() []string {
	var out []string
	for _, c := range p.Commands {
		if !slices.Contains(out, c.Name) {
			out = append(out, c.Name)
		}
	}
	return out
}

// The layout of the usage text: commands indented by usageIndent, their
// summaries at column usageColumn, lines at most usageWidth wide where the
// synopsis allows.
const (
	usageIndent = 2
	usageColumn = 49
	usageWidth  = 100
)

// Usage is the usage text: every command that is not hidden, with its
// synopsis and summary, then the footer.
func (p *Program) Usage() string {
	var b strings.Builder
	b.WriteString("usage: " + p.Name + " COMMAND [flags] [args]\n\ncommands:\n")
	b.WriteString(p.list(""))
	if p.Footer != "" {
		b.WriteString("\n" + p.Footer)
	}
	return b.String()
}

// List is the usage text's lines for the commands whose names start with
// prefix ("mcp "), as they appear under "commands:".
func (p *Program) List(prefix string) string { return p.list(prefix) }

func (p *Program) list(prefix string) string {
	var b strings.Builder
	indent := strings.Repeat(" ", usageIndent)
	for _, c := range p.Commands {
		if c.Hidden || !strings.HasPrefix(c.Name, prefix) {
			continue
		}
		lines := wrap(c.Line(), usageWidth-usageIndent, "    ")
		for i, l := range lines {
			if n := utf8.RuneCountInString(l); i == len(lines)-1 && usageIndent+n < usageColumn-1 {
				b.WriteString(indent + l + strings.Repeat(" ", usageColumn-usageIndent-n) + c.Summary + "\n")
				lines = nil
				break
			}
			b.WriteString(indent + l + "\n")
		}
		if lines != nil {
			b.WriteString(strings.Repeat(" ", usageColumn) + c.Summary + "\n")
		}
	}
	return b.String()
}

// wrap breaks s into lines of at most width characters between the words that
// are outside brackets (a "[--api-key K | --jwt T]" stays whole); lines
// after the first start with cont.
func wrap(s string, width int, cont string) []string {
	var words []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '[':
			depth++
		case ']':
			depth--
		case ' ':
			if depth == 0 {
				if i > start {
					words = append(words, s[start:i])
				}
				start = i + 1
			}
		}
	}
	if start < len(s) {
		words = append(words, s[start:])
	}
	var lines []string
	line := ""
	for _, w := range words {
		switch {
		case line == "":
			line = w
			if len(lines) > 0 {
				line = cont + w
			}
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) > width:
			lines = append(lines, line)
			line = cont + w
		default:
			line += " " + w
		}
	}
	return append(lines, line)
}

// Markdown is the command table as docs/commands.md shows it: a row for
// each command that is not hidden.
func (p *Program) Markdown() string {
	var b strings.Builder
	b.WriteString("| command | what it does and prints |\n|---|---|\n")
	for _, c := range p.Commands {
		if c.Hidden {
			continue
		}
		doc := c.Doc
		if doc == "" {
			doc = markdownText.Replace(c.Summary)
		}
		b.WriteString("| `" + strings.ReplaceAll(p.Name+" "+c.Line(), "|", `\|`) + "` | " + doc + " |\n")
	}
	return b.String()
}

// markdownText escapes plain text for a Markdown table cell.
var markdownText = strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "`", "\\`", "*", `\*`, "_", `\_`)

// synopsisFlag is a flag in a synopsis: "-x" or "--x" at the start of a
// word or after "[" or "|", its name up to "=" or a space.
var synopsisFlag = regexp.MustCompile(`(?:^|[\s\[|])--?([A-Za-z][A-Za-z0-9-]*)`)

// SynopsisFlags returns the names of the flags a synopsis mentions, in
// order, once each.
func SynopsisFlags(synopsis string) []string {
	var out []string
	for _, m := range synopsisFlag.FindAllStringSubmatch(synopsis, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// helpFlag is a flag in flag.PrintDefaults output: "  -name" at the start
// of a line.
var helpFlag = regexp.MustCompile(`(?m)^  -([A-Za-z0-9][A-Za-z0-9-]*)`)

// HelpFlags returns the names of the flags in a command's -h output (the
// flag.PrintDefaults part of it), in order.
func HelpFlags(help string) []string {
	_, defaults, _ := strings.Cut(help, "\nflags of ")
	var out []string
	for _, m := range helpFlag.FindAllStringSubmatch(defaults, -1) {
		out = append(out, m[1])
	}
	return out
}
