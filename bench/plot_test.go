package bench

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sampleOutput is go test -bench output of two packages, with the noise
// around the results.
const sampleOutput = `# go test -run XXX -bench Growth ./httpapi ./sqlstore
goos: linux
goarch: amd64
pkg: github.com/worldforge-go/worldforge/httpapi
cpu: Intel(R) Xeon(R) Processor
BenchmarkReadWorldGrowth/side=256-2         	       3	   1670753 ns/op	  80.36 MB/s	    134255 bytes/answer	 1554688 B/op	     346 allocs/op
BenchmarkReadWorldGrowth/side=1024-2        	       3	   9166515 ns/op	 229.97 MB/s	   2108018 bytes/answer	 2260752 B/op	     564 allocs/op
PASS
ok  	github.com/worldforge-go/worldforge/httpapi	2.113s
goos: linux
pkg: github.com/worldforge-go/worldforge/sqlstore
BenchmarkListLore/one-collection/entities=1000-2   	     100	    812345 ns/op	   94000 B/op	    1200 allocs/op
BenchmarkListLore/one-collection/entities=10000-2  	      50	   2600000 ns/op	  156000 B/op	    1300 allocs/op
BenchmarkListLore/all/entities=1000-2              	      20	   3200000 ns/op
--- BENCH: BenchmarkListLore/all/entities=1000-2
    growth_bench_test.go:12: a log line
BenchmarkWikiPageHistory/revisions=100-2 	--- FAIL
PASS
`

func TestPlotParseBenchOutput(t *testing.T) {
	got, err := ParseBenchOutput(strings.NewReader(sampleOutput))
	if err != nil {
		t.Fatal(err)
	}
	const (
		hp = "github.com/worldforge-go/worldforge/httpapi"
		sp = "github.com/worldforge-go/worldforge/sqlstore"
	)
	want := []BenchResult{
		{Pkg: hp, Name: "BenchmarkReadWorldGrowth/side=256", Procs: 2, Iterations: 3, Line: 6,
			Metrics: map[string]float64{"ns/op": 1670753, "MB/s": 80.36, "bytes/answer": 134255, "B/op": 1554688, "allocs/op": 346}},
		{Pkg: hp, Name: "BenchmarkReadWorldGrowth/side=1024", Procs: 2, Iterations: 3, Line: 7,
			Metrics: map[string]float64{"ns/op": 9166515, "MB/s": 229.97, "bytes/answer": 2108018, "B/op": 2260752, "allocs/op": 564}},
		{Pkg: sp, Name: "BenchmarkListLore/one-collection/entities=1000", Procs: 2, Iterations: 100, Line: 12,
			Metrics: map[string]float64{"ns/op": 812345, "B/op": 94000, "allocs/op": 1200}},
		{Pkg: sp, Name: "BenchmarkListLore/one-collection/entities=10000", Procs: 2, Iterations: 50, Line: 13,
			Metrics: map[string]float64{"ns/op": 2600000, "B/op": 156000, "allocs/op": 1300}},
		{Pkg: sp, Name: "BenchmarkListLore/all/entities=1000", Procs: 2, Iterations: 20, Line: 14,
			Metrics: map[string]float64{"ns/op": 3200000}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseBenchOutput (-want +got):\n%s", diff)
	}
}

func TestPlotParseBenchOutputLines(t *testing.T) {
	for _, c := range []struct {
		name    string
		in      string
		want    []BenchResult // nil with wantErr
		wantErr string
	}{
		{name: "no suffix, no pkg", in: "BenchmarkX/size=10 5 100 ns/op\n",
			want: []BenchResult{{Name: "BenchmarkX/size=10", Iterations: 5, Line: 1, Metrics: map[string]float64{"ns/op": 100}}}},
		{name: "the brief's example", in: "BenchmarkX/size=1000/case-2   100   12345 ns/op   678 B/op   9 allocs/op",
			want: []BenchResult{{Name: "BenchmarkX/size=1000/case", Procs: 2, Iterations: 100, Line: 1, Metrics: map[string]float64{"ns/op": 12345, "B/op": 678, "allocs/op": 9}}}},
		{name: "no metrics", in: "BenchmarkX-8 1\n",
			want: []BenchResult{{Name: "BenchmarkX", Procs: 8, Iterations: 1, Line: 1, Metrics: map[string]float64{}}}},
		{name: "exponent and fraction", in: "Benchmark_y 1 1.5e3 ns/op 0.25 x/op\n",
			want: []BenchResult{{Name: "Benchmark_y", Iterations: 1, Line: 1, Metrics: map[string]float64{"ns/op": 1500, "x/op": 0.25}}}},
		{name: "CRLF", in: "pkg: a/b\r\nBenchmarkX-2\t3\t4 ns/op\r\n",
			want: []BenchResult{{Pkg: "a/b", Name: "BenchmarkX", Procs: 2, Iterations: 3, Line: 2, Metrics: map[string]float64{"ns/op": 4}}}},
		{name: "empty", in: "", wantErr: "no benchmark result lines"},
		{name: "only noise", in: "goos: linux\nPASS\nBenchmarking is fun 3 4 ns/op\nBenchmarkX-2 --- FAIL\n--- BENCH: BenchmarkX\n", wantErr: "no benchmark result lines"},
		{name: "a value without a unit", in: "goos: linux\nBenchmarkX-2 10 100 ns/op 7\n", wantErr: `line 2: BenchmarkX-2: value "7" has no unit`},
		{name: "a value that is not a number", in: "BenchmarkX-2 10 fast ns/op\n", wantErr: `line 1: BenchmarkX-2: "fast" (the value of "ns/op") is not a finite number`},
		{name: "NaN", in: "BenchmarkX-2 10 NaN ns/op\n", wantErr: "not a finite number"},
		{name: "too long", in: "BenchmarkX 1 " + strings.Repeat("1 u ", MaxBenchLine/4+1), wantErr: "line 1: longer than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseBenchOutput(strings.NewReader(c.in))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %v, %v; want an error containing %q", got, err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlotGrowth(t *testing.T) {
	results, err := ParseBenchOutput(strings.NewReader(sampleOutput))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Growth(results, "ns/op", []string{"side", "entities"})
	if err != nil {
		t.Fatal(err)
	}
	want := []GrowthSeries{
		{Name: "httpapi.ReadWorldGrowth", Points: []GrowthPoint{{256, 1670753, 1}, {1024, 9166515, 1}}},
		{Name: "sqlstore.ListLore/one-collection", Points: []GrowthPoint{{1000, 812345, 1}, {10000, 2600000, 1}}},
		{Name: "sqlstore.ListLore/all", Points: []GrowthPoint{{1000, 3200000, 1}}}, // one point, kept
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ns/op (-want +got):\n%s", diff)
	}
	// B/op: the line without it is left out.
	got, err = Growth(results, "B/op", []string{"side", "entities"})
	if err != nil {
		t.Fatal(err)
	}
	if names := seriesNames(got); !slices.Equal(names, []string{"httpapi.ReadWorldGrowth", "sqlstore.ListLore/one-collection"}) {
		t.Errorf("B/op series %q", names)
	}
}

func seriesNames(ss []GrowthSeries) []string {
	var n []string
	for _, s := range ss {
		n = append(n, s.Name)
	}
	return n
}

func TestPlotGrowthCases(t *testing.T) {
	for _, c := range []struct {
		name    string
		in      string
		metric  string
		keys    []string
		want    []GrowthSeries
		wantErr string
	}{
		{name: "one package: no prefix; -count repeats: the median; middle segment; unsized left out",
			in: `pkg: x/sqlstore
BenchmarkS/common/pages=1000/q-2 10 300 ns/op
BenchmarkS/common/pages=1000/q-2 10 100 ns/op
BenchmarkS/common/pages=1000/q-2 10 200 ns/op
BenchmarkS/common/pages=10000/q-2 10 400 ns/op
BenchmarkS/common/pages=10000/q-2 10 500 ns/op
BenchmarkOther-2 10 5 ns/op
`, metric: "ns/op", keys: []string{"pages"},
			want: []GrowthSeries{{Name: "S/common/q", Points: []GrowthPoint{{1000, 200, 3}, {10000, 450, 2}}}}},
		{name: "sizes sorted, several keys, uniquifier dropped",
			in:     "BenchmarkA/n=100#01 1 3 ns/op\nBenchmarkA/n=10 1 2 ns/op\nBenchmarkB/side=2.5e3 1 7 ns/op\n",
			metric: "ns/op", keys: []string{"side", "n"},
			want: []GrowthSeries{{Name: "A", Points: []GrowthPoint{{10, 2, 1}, {100, 3, 1}}}, {Name: "B", Points: []GrowthPoint{{2500, 7, 1}}}}},
		{name: "the key must be the whole key", in: "BenchmarkA/npages=10 1 2 ns/op\n", metric: "ns/op", keys: []string{"pages"},
			wantErr: "no benchmark has a size segment pages=…"},
		{name: "no size segment", in: "BenchmarkA/x=10 1 2 ns/op\n", metric: "ns/op", keys: []string{"side", "pages"},
			wantErr: "no benchmark has a size segment side=… or pages=…"},
		{name: "non-numeric size", in: "BenchmarkA/pages=1000 1 2 ns/op\nBenchmarkA/pages=lots 1 2 ns/op\n", metric: "ns/op", keys: []string{"pages"},
			wantErr: `line 2: BenchmarkA/pages=lots: size segment "pages=lots": "lots" is not a number`},
		{name: "zero size", in: "BenchmarkA/pages=0 1 2 ns/op\n", metric: "ns/op", keys: []string{"pages"},
			wantErr: "a log scale needs a size above 0"},
		{name: "two size segments", in: "BenchmarkA/pages=1/side=2 1 2 ns/op\n", metric: "ns/op", keys: []string{"pages", "side"},
			wantErr: `two size segments, "pages=1" and "side=2"`},
		{name: "metric missing", in: "BenchmarkA/pages=1 1 2 ns/op 3 allocs/op\n", metric: "B/op", keys: []string{"pages"},
			wantErr: "no sized benchmark reports B/op (they report allocs/op, ns/op)"},
		{name: "no keys", in: "BenchmarkA/pages=1 1 2 ns/op\n", metric: "ns/op", wantErr: "no size key"},
		{name: "no metric", in: "BenchmarkA/pages=1 1 2 ns/op\n", keys: []string{"pages"}, wantErr: "no metric"},
	} {
		t.Run(c.name, func(t *testing.T) {
			results, err := ParseBenchOutput(strings.NewReader(c.in))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Growth(results, c.metric, c.keys)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %v, %v; want an error containing %q", got, err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// svgElement is enough of an SVG document to check what a chart draws.
type svgElement struct {
	XMLName  xml.Name
	Attrs    []xml.Attr   `xml:",any,attr"`
	Text     string       `xml:",chardata"`
	Children []svgElement `xml:",any"`
}

func (e svgElement) walk(fn func(svgElement)) {
	fn(e)
	for _, c := range e.Children {
		c.walk(fn)
	}
}

func (e svgElement) attr(name string) string {
	for _, a := range e.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// parseSVG checks that doc is one well-formed XML document whose root is
// an <svg> element, and returns it.
func parseSVG(t testing.TB, doc []byte) svgElement {
	t.Helper()
	var root svgElement
	d := xml.NewDecoder(bytes.NewReader(doc))
	if err := d.Decode(&root); err != nil {
		t.Fatalf("the SVG is not well-formed XML: %v\n%.500s", err, doc)
	}
	if root.XMLName.Local != "svg" || root.XMLName.Space != "http://www.w3.org/2000/svg" {
		t.Fatalf("root element %v, want svg in the SVG namespace", root.XMLName)
	}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after the root: %v", err)
		}
		if cd, ok := tok.(xml.CharData); !ok || strings.TrimSpace(string(cd)) != "" {
			t.Fatalf("content after the root element: %#v", tok)
		}
	}
	return root
}

func TestPlotRenderGrowthSVG(t *testing.T) {
	series := []GrowthSeries{
		{Name: "ReadWorldGrowth", Points: []GrowthPoint{{256, 1.6e6, 1}, {1024, 9.1e6, 1}, {4096, 1.01e8, 3}}},
		{Name: "ListLore/all <&\"'>", Points: []GrowthPoint{{1000, 3.2e6, 1}}},
	}
	var buf bytes.Buffer
	if err := RenderGrowthSVG(&buf, series, PlotOptions{Title: "Time & size", Note: "side: work ∝ side²", Metric: "ns/op", SizeLabel: "side, entities"}); err != nil {
		t.Fatal(err)
	}
	root := parseSVG(t, buf.Bytes())
	if w := root.attr("width"); w != "900" {
		t.Errorf("width %q, want 900", w)
	}
	var texts []string
	polylines, markers := 0, 0
	root.walk(func(e svgElement) {
		switch e.XMLName.Local {
		case "text":
			texts = append(texts, strings.TrimSpace(e.Text))
		case "polyline":
			polylines++
			if n := len(strings.Fields(e.attr("points"))); n != 3 {
				t.Errorf("a polyline of %d points, want 3", n)
			}
		case "title":
			if strings.Contains(e.Text, " at ") {
				markers++
			}
		}
	})
	if polylines != 1 {
		t.Errorf("%d polylines, want 1 (the series of one point is a marker alone)", polylines)
	}
	if markers != 4 {
		t.Errorf("%d point markers with a title, want 4", markers)
	}
	// The data spans 100 (256) to 10k (4096) and 1 ms to 1 s: ticks at
	// each power of ten, labelled.
	for _, want := range []string{"Time & size", "side: work ∝ side²", "100", "1k", "10k", "1 ms", "10 ms", "100 ms", "1 s", "ReadWorldGrowth", `ListLore/all <&"'>`, "side, entities (log scale)", "ns/op (log scale)"} {
		if !slices.Contains(texts, want) {
			t.Errorf("no text %q in %q", want, texts)
		}
	}
	for _, unwanted := range []string{"10 µs", "100k", "10 s"} {
		if slices.Contains(texts, unwanted) {
			t.Errorf("a tick %q outside the data's decades", unwanted)
		}
	}

	// Bytes.
	buf.Reset()
	if err := RenderGrowthSVG(&buf, []GrowthSeries{{Name: "x", Points: []GrowthPoint{{10, 600, 1}, {1e5, 3.4e7, 1}}}}, PlotOptions{Metric: "B/op"}); err != nil {
		t.Fatal(err)
	}
	texts = nil
	parseSVG(t, buf.Bytes()).walk(func(e svgElement) {
		if e.XMLName.Local == "text" {
			texts = append(texts, strings.TrimSpace(e.Text))
		}
	})
	for _, want := range []string{"Growth of B/op", "100 B", "1 kB", "1 MB", "100 MB", "10", "100k"} {
		if !slices.Contains(texts, want) {
			t.Errorf("no text %q in %q", want, texts)
		}
	}
}

func TestPlotRenderGrowthSVGRejects(t *testing.T) {
	for _, c := range []struct {
		name   string
		series []GrowthSeries
		opt    PlotOptions
		want   string
	}{
		{"nothing", nil, PlotOptions{}, "nothing to plot"},
		{"no points", []GrowthSeries{{Name: "x"}}, PlotOptions{}, "nothing to plot"},
		{"zero value", []GrowthSeries{{Name: "x", Points: []GrowthPoint{{1, 0, 1}}}}, PlotOptions{}, "cannot go on a log scale"},
		{"narrow", []GrowthSeries{{Name: "x", Points: []GrowthPoint{{1, 1, 1}}}}, PlotOptions{Width: 100}, "at least 400"},
	} {
		if err := RenderGrowthSVG(io.Discard, c.series, c.opt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

func TestPlotFormatValue(t *testing.T) {
	for _, c := range []struct {
		v      float64
		metric string
		want   string
	}{
		{1, "ns/op", "1 ns"}, {1000, "ns/op", "1 µs"}, {1670753, "ns/op", "1.67 ms"}, {1e9, "ns/op", "1 s"}, {1e11, "ns/op", "100 s"},
		{0.1, "ns/op", "0.1 ns"}, {999.9, "ns/op", "1 µs"},
		{1e3, "B/op", "1 kB"}, {33756128, "B/op", "33.8 MB"},
		{100, "", "100"}, {1e5, "", "100k"}, {2.5e6, "", "2.5M"},
		{1000, "allocs/op", "1k allocs/op"},
	} {
		if got := formatValue(c.v, c.metric); got != c.want {
			t.Errorf("formatValue(%g, %q) = %q, want %q", c.v, c.metric, got, c.want)
		}
	}
}

// formatResult writes r back as a result line.
func formatResult(r BenchResult) string {
	var b strings.Builder
	b.WriteString(r.Name)
	if r.Procs > 0 {
		fmt.Fprintf(&b, "-%d", r.Procs)
	}
	fmt.Fprintf(&b, "\t%d", r.Iterations)
	units := make([]string, 0, len(r.Metrics))
	for u := range r.Metrics {
		units = append(units, u)
	}
	slices.Sort(units)
	for _, u := range units {
		fmt.Fprintf(&b, "\t%s %s", strconv.FormatFloat(r.Metrics[u], 'g', -1, 64), u)
	}
	return b.String()
}

// FuzzParseBenchOutput: any input parses or is refused without a panic;
// what parses has finite metrics, survives being written back and parsed
// again unchanged, and (grouped by any key) renders as a well-formed SVG.
func FuzzParseBenchOutput(f *testing.F) {
	f.Add(sampleOutput, "side,entities")
	f.Add("BenchmarkX/size=1000/case-2   100   12345 ns/op   678 B/op   9 allocs/op\n", "size")
	f.Add("BenchmarkX/n=1#01 1 1e300 ns/op\nBenchmarkX/n=1e-300 1 5e-324 ns/op\n", "n")
	f.Add("pkg: a\nBenchmarkA/p=3-4 7 1 ns/op\npkg: b\nBenchmarkA/p=3-4 7 2 ns/op\n", "p")
	f.Add("Benchmark/k=2\t1\t\xff ns/op\n", "k")
	f.Fuzz(func(t *testing.T, in, keys string) {
		results, err := ParseBenchOutput(strings.NewReader(in))
		if err != nil {
			if results != nil {
				t.Fatalf("results %v with error %v", results, err)
			}
			return
		}
		var again strings.Builder
		pkg := ""
		for _, r := range results {
			for u, v := range r.Metrics {
				if math.IsNaN(v) || math.IsInf(v, 0) || u == "" {
					t.Fatalf("%s: metric %q = %v", r.Name, u, v)
				}
			}
			if r.Iterations < 1 || !strings.HasPrefix(r.Name, "Benchmark") {
				t.Fatalf("result %+v", r)
			}
			if r.Pkg != pkg {
				fmt.Fprintf(&again, "pkg: %s\n", r.Pkg)
				pkg = r.Pkg
			}
			again.WriteString(formatResult(r) + "\n")
		}
		reparsed, err := ParseBenchOutput(strings.NewReader(again.String()))
		if err != nil {
			t.Fatalf("written back %q: %v", again.String(), err)
		}
		for i := range reparsed {
			reparsed[i].Line, results[i].Line = 0, 0
		}
		if !equalResults(results, reparsed) {
			t.Fatalf("written back and parsed again:\n%v\n%v", results, reparsed)
		}
		for _, metric := range []string{"ns/op", "B/op"} {
			series, err := Growth(results, metric, strings.Split(keys, ","))
			if err != nil {
				continue
			}
			var buf bytes.Buffer
			err = RenderGrowthSVG(&buf, series, PlotOptions{Title: in[:min(len(in), 40)], Metric: metric, SizeLabel: keys})
			if err != nil {
				// Only values a log scale cannot place are refused.
				if !strings.Contains(err.Error(), "cannot go on a log scale") {
					t.Fatalf("render: %v", err)
				}
				continue
			}
			parseSVG(t, buf.Bytes())
		}
	})
}

func equalResults(a, b []BenchResult) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Pkg != y.Pkg || x.Name != y.Name || x.Procs != y.Procs || x.Iterations != y.Iterations || len(x.Metrics) != len(y.Metrics) {
			return false
		}
		for u, v := range x.Metrics {
			if w, ok := y.Metrics[u]; !ok || w != v {
				return false
			}
		}
	}
	return true
}
