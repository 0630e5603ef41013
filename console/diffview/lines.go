// Package diffview computes what a proposal would change, against the
// current state of its target, in a form the console's templates render
// directly: a line diff of wiki bodies, field diffs (old → new) for
// quests, encounters, wiki pages and atlas places, and for lore proposals
// one entity diff per operation, with the lore schema's verdict on the
// new entity. It is pure: the caller reads the current state (package
// app's ReviewProposal) and hands it in; nothing here does I/O.
//
// # Why go-udiff
//
// Line diffs use github.com/aymanbagabas/go-udiff. It is an exported copy
// of the Go team's own internal/diff package (the one gopls and the go
// command use), so its algorithm is well exercised; it has no
// dependencies; its Myers search is bounded (a fixed number of edit
// rounds, then it settles for a longer but still correct diff), so the
// cost of diffing two 200,000-character wiki bodies stays close to linear
// instead of quadratic — a page view cannot be made expensive by a
// crafted body. Its Lines function returns line-aligned edits; this
// package turns them into hunks with context and line numbers itself, in
// one pass (go-udiff's own unified formatter counts newlines from the
// start of the text for each edit, which is quadratic on large bodies).
package diffview

import (
	"fmt"
	"sort"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
)

// Context is how many unchanged lines a hunk shows around a change.
const Context = 3

// LineKind says what a diff line is; its value is the CSS class the
// templates give the line.
type LineKind string

// The line kinds.
const (
	Same LineKind = "ctx"
	Add  LineKind = "add"
	Del  LineKind = "del"
)

// Line is one line of a hunk.
type Line struct {
	Kind LineKind
	// Old and New are the line's numbers (from 1) in the old and new
	// text; 0 where it has none (an added line has no Old).
	Old, New int
	// Text is the line without its line break.
	Text string
	// NoNewline marks the last line of a text that does not end with a
	// line break.
	NoNewline bool
}

// Sign is the line's marker in a unified diff: " ", "+" or "-".
func (l Line) Sign() string {
	switch l.Kind {
	case Add:
		return "+"
	case Del:
		return "-"
	}
	return " "
}

// Hunk is a run of changed lines with their context.
type Hunk struct {
	OldStart, OldLines int
	NewStart, NewLines int
	Lines              []Line
}

// Header is the hunk's unified-diff header, "@@ -1,3 +1,4 @@".
func (h Hunk) Header() string {
	return fmt.Sprintf("@@ -%s +%s @@", span(h.OldStart, h.OldLines), span(h.NewStart, h.NewLines))
}

func span(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	if n == 0 && start > 0 {
		// An empty range names the line before it, as diff does.
		start--
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// LineDiff is the line diff of two texts.
type LineDiff struct {
	Hunks []Hunk
	// Added and Removed count the added and removed lines.
	Added, Removed int
}

// Changed reports whether the texts differ.
func (d *LineDiff) Changed() bool { return d != nil && len(d.Hunks) > 0 }

// Lines is the line diff of old and new, with Context lines of context
// around each change. Any input is accepted (invalid UTF-8 included).
func Lines(old, new string) *LineDiff {
	d := &LineDiff{}
	if old == new {
		return d
	}
	edits := udiff.Lines(old, new)
	oldLines := splitLines(old)
	// starts[i] is the byte offset of old line i; the edits are at line
	// boundaries, so each offset maps to a line by binary search.
	starts := make([]int, len(oldLines)+1)
	off := 0
	for i, l := range oldLines {
		starts[i] = off
		off += len(l)
	}
	starts[len(oldLines)] = off
	lineAt := func(offset int) int {
		return sort.SearchInts(starts, offset)
	}

	// ops is the whole edit script: every old line kept or deleted, and
	// every new line inserted, in order.
	type op struct {
		kind LineKind
		text string
	}
	var ops []op
	at := 0 // next old line not yet emitted
	for _, e := range edits {
		from, to := lineAt(e.Start), lineAt(e.End)
		for ; at < from; at++ {
			ops = append(ops, op{Same, oldLines[at]})
		}
		for ; at < to; at++ {
			ops = append(ops, op{Del, oldLines[at]})
		}
		for _, l := range splitLines(e.New) {
			ops = append(ops, op{Add, l})
		}
	}
	for ; at < len(oldLines); at++ {
		ops = append(ops, op{Same, oldLines[at]})
	}

	// Number the lines and cut the script into hunks: a change, with up
	// to Context unchanged lines on each side; changes closer than
	// 2·Context lines share a hunk.
	lines := make([]Line, len(ops))
	o, n := 1, 1
	for i, x := range ops {
		text, nl := strings.CutSuffix(x.text, "\n")
		l := Line{Kind: x.kind, Text: text, NoNewline: !nl}
		switch x.kind {
		case Same:
			l.Old, l.New = o, n
			o++
			n++
		case Del:
			l.Old = o
			o++
			d.Removed++
		case Add:
			l.New = n
			n++
			d.Added++
		}
		lines[i] = l
	}
	i := 0
	for i < len(lines) {
		if lines[i].Kind == Same {
			i++
			continue
		}
		start := max(0, i-Context)
		end := i // one past the last changed line
		for j := i; j < len(lines); j++ {
			if lines[j].Kind != Same {
				end = j + 1
				continue
			}
			if j-end >= 2*Context {
				break
			}
		}
		stop := min(len(lines), end+Context)
		d.Hunks = append(d.Hunks, hunkOf(lines[start:stop]))
		i = stop
	}
	return d
}

// hunkOf makes a hunk of consecutive numbered lines.
func hunkOf(lines []Line) Hunk {
	h := Hunk{Lines: lines}
	for _, l := range lines {
		if l.Old > 0 {
			if h.OldStart == 0 {
				h.OldStart = l.Old
			}
			h.OldLines++
		}
		if l.New > 0 {
			if h.NewStart == 0 {
				h.NewStart = l.New
			}
			h.NewLines++
		}
	}
	// A hunk without old (new) lines happens only for an empty old
	// (new) text: its start stays 0, which Header shows as "0,0".
	return h
}

// splitLines splits text into lines, each with its line break; a final
// line without one is kept as it is. The empty text has no lines.
func splitLines(text string) []string {
	var out []string
	for text != "" {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			out = append(out, text)
			break
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
	return out
}
