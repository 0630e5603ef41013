package main

import (
	"bytes"
	"fmt"
	"github.com/worldforge-go/worldforge/internal/cli"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/worldforge-go/worldforge/bench"
)

// plot draws go test -bench output as a log-log SVG chart of growth: one
// line per benchmark (its name without the size segment), x the size a
// sub-benchmark segment names (-size pages reads pages=1000), y the
// metric. It prints nothing on success.
//
//	worldforge-bench plot -in bench.txt -out time.svg -metric ns/op -size side,pages [-title T] [-note TEXT] [-match RE]
func (e *env) plot(args []string) error {
	fs := cli.NewFlags("plot")
	in := fs.String("in", "", "go test -bench output to read (required)")
	out := fs.String("out", "", "SVG file to write (required)")
	metric := fs.String("metric", "ns/op", "unit to plot, as the benchmark lines print it: ns/op, B/op, allocs/op or a custom metric")
	sizes := fs.String("size", "", "comma-separated keys of the size segment: side,pages reads side=1024 and pages=50000 (required)")
	title := fs.String("title", "", `chart title (default "Growth of METRIC")`)
	note := fs.String("note", "", "a line of explanation under the title")
	match := fs.String("match", "", "plot only the series whose name (package.Benchmark/sub, without the size) matches this regular expression")
	if err := e.Parse(fs, args); err != nil {
		return err
	}
	if _, err := cli.Positional(fs, 0, "no arguments"); err != nil {
		return err
	}
	switch {
	case *in == "":
		return cli.UsageErrorf("plot: -in FILE is required")
	case *out == "":
		return cli.UsageErrorf("plot: -out FILE.svg is required")
	case *sizes == "":
		return cli.UsageErrorf("plot: -size KEYS is required (such as -size side,pages,entities)")
	case *metric == "" || strings.ContainsFunc(*metric, unicode.IsSpace):
		return cli.UsageErrorf("plot: -metric %q: want a unit such as ns/op or B/op", *metric)
	}
	if filepath.Clean(*in) == filepath.Clean(*out) {
		return cli.UsageErrorf("plot: -out %s would overwrite -in", *out)
	}
	var keys []string
	for k := range strings.SplitSeq(*sizes, ",") {
		k = strings.TrimSpace(k)
		if k == "" || strings.ContainsAny(k, "=/#") || strings.ContainsFunc(k, unicode.IsSpace) {
			return cli.UsageErrorf("plot: -size %q: want comma-separated keys such as side,pages (no empty key, no = / # or spaces)", *sizes)
		}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	var re *regexp.Regexp
	if *match != "" {
		var err error
		if re, err = regexp.Compile(*match); err != nil {
			return cli.UsageErrorf("plot: -match: %v", err)
		}
	}

	f, err := os.Open(*in)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	defer f.Close()
	results, err := bench.ParseBenchOutput(f)
	if err != nil {
		return fmt.Errorf("plot: %s: %w", *in, err)
	}
	series, err := bench.Growth(results, *metric, keys)
	if err != nil {
		return fmt.Errorf("plot: %s: %w", *in, err)
	}
	if re != nil {
		var names []string
		for _, s := range series {
			names = append(names, s.Name)
		}
		series = slices.DeleteFunc(series, func(s bench.GrowthSeries) bool { return !re.MatchString(s.Name) })
		if len(series) == 0 {
			return fmt.Errorf("plot: %s: no series matches -match %q (the series are %s)", *in, *match, strings.Join(names, ", "))
		}
	}
	var buf bytes.Buffer
	if err := bench.RenderGrowthSVG(&buf, series, bench.PlotOptions{Title: *title, Note: *note, Metric: *metric, SizeLabel: "size: " + strings.Join(keys, ", ")}); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}
