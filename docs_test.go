package worldforge_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// TestDocsLinks checks every relative link in README.md and docs/*.md: the
// file it names must exist and, when it names an anchor in a Markdown file,
// that file must have a heading with that anchor (GitHub's rule for
// turning a heading into an anchor). Links inside code are not links.
func TestDocsLinks(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{"README.md"}, pages...)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		a := headingAnchors(string(raw))
		anchors[path] = a
		return a, nil
	}
	checked := 0
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range markdownLinks(string(raw)) {
			target, anchor, _ := strings.Cut(l.target, "#")
			if target == "" && anchor == "" {
				continue
			}
			checked++
			path := page
			if target != "" {
				path = filepath.Join(filepath.Dir(page), filepath.FromSlash(target))
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: link %q: %v", page, l.line, l.target, err)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(path, ".md") {
				continue
			}
			a, err := anchorsOf(path)
			if err != nil {
				t.Errorf("%s:%d: link %q: %v", page, l.line, l.target, err)
				continue
			}
			if !a[anchor] {
				t.Errorf("%s:%d: link %q: %s has no heading with anchor #%s", page, l.line, l.target, path, anchor)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative links found: the checker is broken")
	}
}

type mdLink struct {
	target string
	line   int
}

var (
	linkRE       = regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)
	inlineCodeRE = regexp.MustCompile("`[^`]*`")
	headingRE    = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	headLinkRE   = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// markdownLinks returns the relative link targets of a Markdown text,
// outside fenced code blocks and inline code spans.
func markdownLinks(text string) []mdLink {
	var links []mdLink
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		line = inlineCodeRE.ReplaceAllString(line, "")
		for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links = append(links, mdLink{target: target, line: i + 1})
		}
	}
	return links
}

// headingAnchors returns the anchors GitHub gives the ATX headings of a
// Markdown text: the heading's text without markup, lower-cased, with
// every character but letters, digits, '-' and '_' dropped and spaces
// turned into '-'; a repeated anchor gets -1, -2 and so on.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		m := headingRE.FindStringSubmatch(line)
		if fenced || m == nil {
			continue
		}
		h := headLinkRE.ReplaceAllString(m[1], "$1")
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

func TestHeadingAnchors(t *testing.T) {
	got := headingAnchors("# The endpoint\n## Limits\n```\n# not a heading\n```\n## Limits\n### `read_world` and [REST](x.md)\n## What is promised?\n")
	for _, want := range []string{"the-endpoint", "limits", "limits-1", "read_world-and-rest", "what-is-promised"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Error("a line in a code block became a heading")
	}
}
