package diffview

import (
	"fmt"
	"strings"
	"testing"
)

// render is a diff as unified-diff text, one line per diff line, with
// "\" after a line that has no line break.
func render(d *LineDiff) string {
	var b strings.Builder
	for _, h := range d.Hunks {
		b.WriteString(h.Header() + "\n")
		for _, l := range h.Lines {
			b.WriteString(l.Sign() + l.Text)
			if l.NoNewline {
				b.WriteString(`\`)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func numbered(n int, change map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if s, ok := change[i]; ok {
			b.WriteString(s + "\n")
			continue
		}
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestLines(t *testing.T) {
	cases := []struct {
		name           string
		old, new       string
		want           string
		added, removed int
	}{
		{"equal", "a\nb\n", "a\nb\n", "", 0, 0},
		{"both empty", "", "", "", 0, 0},
		{"new text", "", "a\nb\n", "@@ -0,0 +1,2 @@\n+a\n+b\n", 2, 0},
		{"all removed", "a\nb\n", "", "@@ -1,2 +0,0 @@\n-a\n-b\n", 0, 2},
		{"one line changed", "a\nb\nc\n", "a\nB\nc\n", "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", 1, 1},
		{"no final newline", "a", "b", "@@ -1 +1 @@\n-a\\\n+b\\\n", 1, 1},
		{"newline added at the end", "a", "a\n", "@@ -1 +1 @@\n-a\\\n+a\n", 1, 1},
		{"line appended", "a\nb\n", "a\nb\nc\n", "@@ -1,2 +1,3 @@\n a\n b\n+c\n", 1, 0},
		{"context is three lines", numbered(10, nil), numbered(10, map[int]string{5: "five"}),
			"@@ -2,7 +2,7 @@\n line 2\n line 3\n line 4\n-line 5\n+five\n line 6\n line 7\n line 8\n", 1, 1},
		{"far changes make two hunks", numbered(20, nil), numbered(20, map[int]string{2: "two", 18: "eighteen"}),
			"@@ -1,5 +1,5 @@\n line 1\n-line 2\n+two\n line 3\n line 4\n line 5\n" +
				"@@ -15,6 +15,6 @@\n line 15\n line 16\n line 17\n-line 18\n+eighteen\n line 19\n line 20\n", 2, 2},
		{"near changes share a hunk", numbered(12, nil), numbered(12, map[int]string{3: "three", 8: "eight"}),
			"@@ -1,11 +1,11 @@\n line 1\n line 2\n-line 3\n+three\n line 4\n line 5\n line 6\n line 7\n-line 8\n+eight\n line 9\n line 10\n line 11\n", 2, 2},
		{"markup is text", "<b>x</b>\n", "<script>alert(1)</script>\n", "@@ -1 +1 @@\n-<b>x</b>\n+<script>alert(1)</script>\n", 1, 1},
		{"invalid UTF-8", "a\xff\n", "a\xfe\n", "@@ -1 +1 @@\n-a\xff\n+a\xfe\n", 1, 1},
		{"CRLF kept in the text", "a\r\nb\r\n", "a\r\nc\r\n", "@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n", 1, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Lines(tc.old, tc.new)
			if got := render(d); got != tc.want {
				t.Errorf("diff:\n%s\nwant:\n%s", got, tc.want)
			}
			if d.Added != tc.added || d.Removed != tc.removed {
				t.Errorf("+%d -%d, want +%d -%d", d.Added, d.Removed, tc.added, tc.removed)
			}
			if d.Changed() != (tc.old != tc.new) {
				t.Errorf("Changed() = %v", d.Changed())
			}
			checkLines(t, tc.old, tc.new, d)
		})
	}
}

// checkLines checks what holds of every line diff: each line's numbers
// name the line of the old or new text it shows, numbers rise by one
// within a hunk, hunks do not overlap, the counts match, and the changed
// lines account for every line that differs.
func checkLines(t *testing.T, old, new string, d *LineDiff) {
	t.Helper()
	ol, nl := splitLines(old), splitLines(new)
	text := func(lines []string, n int) (string, bool) {
		if n < 1 || n > len(lines) {
			return "", false
		}
		s, ok := strings.CutSuffix(lines[n-1], "\n")
		return s, !ok
	}
	added, removed := 0, 0
	lastOld, lastNew := 0, 0
	for hi, h := range d.Hunks {
		if len(h.Lines) == 0 {
			t.Fatalf("hunk %d is empty", hi)
		}
		o, n := h.OldStart, h.NewStart
		oc, nc := 0, 0
		for _, l := range h.Lines {
			if l.Kind != Add {
				if l.Old != o || l.Old <= lastOld {
					t.Fatalf("hunk %d: old line %d, want %d (after %d)", hi, l.Old, o, lastOld)
				}
				s, noNL := text(ol, l.Old)
				if s != l.Text || noNL != l.NoNewline {
					t.Fatalf("hunk %d: old line %d is %q, the text has %q", hi, l.Old, l.Text, s)
				}
				o++
				oc++
				lastOld = l.Old
			}
			if l.Kind != Del {
				if l.New != n || l.New <= lastNew {
					t.Fatalf("hunk %d: new line %d, want %d (after %d)", hi, l.New, n, lastNew)
				}
				s, noNL := text(nl, l.New)
				if s != l.Text || noNL != l.NoNewline {
					t.Fatalf("hunk %d: new line %d is %q, the text has %q", hi, l.New, l.Text, s)
				}
				n++
				nc++
				lastNew = l.New
			}
			switch l.Kind {
			case Add:
				added++
			case Del:
				removed++
			}
		}
		if oc != h.OldLines || nc != h.NewLines {
			t.Fatalf("hunk %d: header %s, lines -%d +%d", hi, h.Header(), oc, nc)
		}
	}
	if added != d.Added || removed != d.Removed {
		t.Fatalf("counts +%d -%d, lines +%d -%d", d.Added, d.Removed, added, removed)
	}
	// Lines outside every hunk are the same on both sides: the number of
	// old lines minus the removed equals the new lines minus the added.
	if len(ol)-removed != len(nl)-added {
		t.Fatalf("%d old lines -%d != %d new lines -%d", len(ol), removed, len(nl), added)
	}
	if (old == new) != (len(d.Hunks) == 0) {
		t.Fatalf("%d hunks for texts equal=%v", len(d.Hunks), old == new)
	}
}

// FuzzLines checks that any two texts diff without a panic into a diff
// whose every line is where it says it is.
func FuzzLines(f *testing.F) {
	f.Add("", "")
	f.Add("a\nb\nc\n", "a\nB\nc\n")
	f.Add("a", "a\n")
	f.Add(numbered(30, nil), numbered(28, map[int]string{3: "x", 20: "y\nz"}))
	f.Add("\n\n\n", "\n")
	f.Add("x\xff\n\r\n", "\xfe")
	f.Fuzz(func(t *testing.T, old, new string) {
		checkLines(t, old, new, Lines(old, new))
	})
}

// TestLinesLarge checks that two large bodies with many scattered
// changes diff completely (the work is bounded, not the result).
func TestLinesLarge(t *testing.T) {
	change := map[int]string{}
	for i := 1; i <= 5000; i += 7 {
		change[i] = fmt.Sprintf("changed %d", i)
	}
	old, new := numbered(5000, nil), numbered(5000, change)
	d := Lines(old, new)
	checkLines(t, old, new, d)
	if d.Added == 0 || d.Removed == 0 {
		t.Fatalf("no change found: +%d -%d", d.Added, d.Removed)
	}
}
