package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plotInput is go test -bench output of two growth benchmarks.
const plotInput = `# go test -run XXX -bench 'ReadWorldGrowth|WikiPageHistory' ./httpapi ./sqlstore
goos: linux
pkg: github.com/worldforge-go/worldforge/httpapi
BenchmarkReadWorldGrowth/side=256-2    3   1670753 ns/op   80.36 MB/s   134255 bytes/answer   1554688 B/op   346 allocs/op
BenchmarkReadWorldGrowth/side=4096-2   3 101371245 ns/op  331.42 MB/s 33596019 bytes/answer  33756128 B/op  1995 allocs/op
PASS
pkg: github.com/worldforge-go/worldforge/sqlstore
BenchmarkWikiPageHistory/revisions=100-2     100   120000 ns/op   51000 B/op   998 allocs/op
BenchmarkWikiPageHistory/revisions=10000-2   100   102000 ns/op   52000 B/op  1048 allocs/op
ok
`

// writeFile writes content to a file in a fresh temporary directory and
// returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPlotBadInput(t *testing.T) {
	t.Parallel()
	in := writeFile(t, "bench.txt", plotInput)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.svg")
	noLines := writeFile(t, "empty.txt", "goos: linux\nPASS\n")
	badSize := writeFile(t, "bad.txt", "BenchmarkX/pages=1000-2 1 5 ns/op\nBenchmarkX/pages=many-2 1 5 ns/op\n")
	for _, c := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"no flags", []string{"plot"}, 2, []string{"plot", "-in FILE is required"}},
		{"no -out", []string{"plot", "-in", in, "-size", "side"}, 2, []string{"-out FILE.svg is required"}},
		{"no -size", []string{"plot", "-in", in, "-out", out}, 2, []string{"-size KEYS is required"}},
		{"empty key", []string{"plot", "-in", in, "-out", out, "-size", "side,,pages"}, 2, []string{`-size "side,,pages"`, "no empty key"}},
		{"key with =", []string{"plot", "-in", in, "-out", out, "-size", "pages=1000"}, 2, []string{`-size "pages=1000"`}},
		{"metric with a space", []string{"plot", "-in", in, "-out", out, "-size", "side", "-metric", "ns op"}, 2, []string{`-metric "ns op"`}},
		{"empty metric", []string{"plot", "-in", in, "-out", out, "-size", "side", "-metric", ""}, 2, []string{`-metric ""`}},
		{"bad -match", []string{"plot", "-in", in, "-out", out, "-size", "side", "-match", "("}, 2, []string{"-match", "missing closing )"}},
		{"unknown flag", []string{"plot", "-in", in, "-out", out, "-size", "side", "-width", "3"}, 2, []string{"plot", "-width"}},
		{"positional", []string{"plot", "-in", in, "-out", out, "-size", "side", "extra"}, 2, []string{"no arguments", "1 argument"}},
		{"out is in", []string{"plot", "-in", in, "-out", in, "-size", "side"}, 2, []string{"would overwrite -in"}},
		{"missing input", []string{"plot", "-in", filepath.Join(dir, "nope.txt"), "-out", out, "-size", "side"}, 1, []string{"nope.txt", "no such file"}},
		{"no result lines", []string{"plot", "-in", noLines, "-out", out, "-size", "side"}, 1, []string{"empty.txt", "no benchmark result lines"}},
		{"no size segment", []string{"plot", "-in", in, "-out", out, "-size", "pages"}, 1, []string{"no benchmark has a size segment pages=…"}},
		{"non-numeric size", []string{"plot", "-in", badSize, "-out", out, "-size", "pages"}, 1, []string{"line 2", `"many" is not a number`}},
		{"metric nobody reports", []string{"plot", "-in", in, "-out", out, "-size", "side", "-metric", "widgets/op"}, 1, []string{"reports widgets/op", "B/op", "ns/op"}},
		{"match nothing", []string{"plot", "-in", in, "-out", out, "-size", "side,revisions", "-match", "^Nothing"}, 1, []string{`no series matches -match "^Nothing"`, "httpapi.ReadWorldGrowth"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkOneLineError(t, runMain(t, nil, c.args...), c.code, c.want...)
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s was written (%v)", out, err)
			}
		})
	}
}

func TestPlotHelp(t *testing.T) {
	t.Parallel()
	r := runMain(t, nil, "plot", "-h")
	var u usageError
	if !errors.As(r.err, &u) || u.Msg != "" || !strings.Contains(r.stderr, "-size") || r.stdout != "" {
		t.Errorf("plot -h: err %#v, stdout %q, stderr %q; want an empty usageError and the flags on stderr", r.err, r.stdout, r.stderr)
	}
	if out := MustRunMain(t, nil, "help"); !strings.Contains(out, "plot -in FILE -out FILE.svg -size KEYS") {
		t.Errorf("help does not list plot:\n%s", out)
	}
}

// TestPlotWritesSVG: a good run prints nothing and writes a well-formed SVG
// document with a line per series, for times and for bytes.
func TestPlotWritesSVG(t *testing.T) {
	t.Parallel()
	in := writeFile(t, "bench.txt", plotInput)
	for _, c := range []struct {
		metric, title string
		want          []string
	}{
		{"ns/op", "Time per call", []string{"Time per call", "A note", "1 ms", "100 ms", "httpapi.ReadWorldGrowth", "sqlstore.WikiPageHistory", "ns/op (log scale)"}},
		{"B/op", "", []string{"Growth of B/op", "10 kB", "100 MB", "httpapi.ReadWorldGrowth", "B/op (log scale)"}},
	} {
		out := filepath.Join(t.TempDir(), "growth.svg")
		args := []string{"plot", "-in", in, "-out", out, "-metric", c.metric, "-size", "side, revisions"}
		if c.title != "" {
			args = append(args, "-title", c.title, "-note", "A note")
		}
		mustQuiet(t, nil, args...)
		doc, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		texts, polylines := svgTexts(t, doc)
		for _, w := range c.want {
			if !strings.Contains(texts, "\n"+w+"\n") {
				t.Errorf("%s: no text %q in the SVG's texts:%s", c.metric, w, texts)
			}
		}
		if polylines != 2 {
			t.Errorf("%s: %d polylines, want 2 (one per series)", c.metric, polylines)
		}
	}

	// -match keeps the series it names.
	out := filepath.Join(t.TempDir(), "one.svg")
	mustQuiet(t, nil, "plot", "-in", in, "-out", out, "-size", "side,revisions", "-match", `^httpapi\.`)
	doc, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if texts, polylines := svgTexts(t, doc); polylines != 1 || strings.Contains(texts, "WikiPageHistory") {
		t.Errorf("-match: %d polylines, texts:%s", polylines, texts)
	}
}

// svgTexts checks that doc is one well-formed XML document with an <svg>
// root in the SVG namespace, and returns its <text> contents (each on a
// line of its own, between newlines) and its number of <polyline>s.
func svgTexts(t *testing.T, doc []byte) (string, int) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	texts := "\n"
	polylines, depth, roots := 0, 0, 0
	inText := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
				if tok.Name.Local != "svg" || tok.Name.Space != "http://www.w3.org/2000/svg" {
					t.Fatalf("root element %v, want svg", tok.Name)
				}
			}
			depth++
			switch tok.Name.Local {
			case "text":
				inText = true
			case "polyline":
				polylines++
			case "title":
				inText = false // a text's tooltip is not its label
			}
		case xml.EndElement:
			depth--
			if tok.Name.Local == "text" {
				inText = false
				texts += "\n"
			}
		case xml.CharData:
			if inText {
				texts += strings.TrimSpace(string(tok))
			}
		}
	}
	if roots != 1 || depth != 0 {
		t.Fatalf("%d root elements, depth %d at the end", roots, depth)
	}
	return texts, polylines
}
