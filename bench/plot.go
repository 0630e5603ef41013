package bench

// Growth plots: the output of go test -bench, read back and drawn as
// log-log lines of a cost (ns/op, B/op, …) against the size a sub-benchmark
// names in one of its segments (side=1024, pages=50000). A straight line of
// slope 1 grows linearly in that size, of slope 2 quadratically.

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// BenchResult is one result line of go test -bench output, such as
//
//	BenchmarkListLore/all/entities=1000-2   100   3214567 ns/op   1234 B/op   56 allocs/op
type BenchResult struct {
	// Pkg is the import path of the last "pkg:" line before the result
	// ("" when there was none).
	Pkg string
	// Name is the full benchmark name, "BenchmarkListLore/all/entities=1000",
	// without the -GOMAXPROCS suffix.
	Name string
	// Procs is that suffix (2 in "-2"), 0 when the name has none.
	Procs int
	// Iterations is b.N.
	Iterations int64
	// Metrics are the line's values by unit: "ns/op", "B/op", "allocs/op",
	// "MB/s" and whatever b.ReportMetric added.
	Metrics map[string]float64
	// Line is the result's line in the input, from 1.
	Line int
}

// MaxBenchLine is the longest input line ParseBenchOutput accepts.
const MaxBenchLine = 1 << 20

// procsSuffix is the -GOMAXPROCS go test appends to a benchmark's name.
var procsSuffix = regexp.MustCompile(`-([0-9]+)$`)

// ParseBenchOutput reads go test -bench output and returns its result
// lines in order. Every other line (goos:, PASS, ok, logs, comments) is
// skipped, except "pkg:" lines, which name the package of the results
// after them. A result line is one whose first field starts with
// "Benchmark" (not followed by a lower-case letter) and whose second is
// the iteration count; the rest must be pairs of a finite number and a
// unit, or the input is rejected with the line's number. A trailing -N on
// the name is taken for the GOMAXPROCS suffix (as benchstat does), so a
// last sub-benchmark segment that itself ends in -N loses it. Input
// without any result line is an error.
func ParseBenchOutput(r io.Reader) ([]BenchResult, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), MaxBenchLine)
	var out []BenchResult
	pkg := ""
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg:"); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		res, ok, err := parseResultLine(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", lineNo, err)
		}
		if !ok {
			continue
		}
		res.Pkg, res.Line = pkg, lineNo
		out = append(out, res)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("line %d: longer than %d bytes", lineNo+1, MaxBenchLine)
		}
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New(`no benchmark result lines (want lines such as "BenchmarkX/size=1000-2  100  12345 ns/op  678 B/op  9 allocs/op")`)
	}
	return out, nil
}

// parseResultLine parses one line: ok is false for a line that is not a
// result, err set for a result line that is malformed.
func parseResultLine(line string) (BenchResult, bool, error) {
	fields := strings.Fields(line)
	if len(fields) < 2 || !isBenchName(fields[0]) {
		return BenchResult{}, false, nil
	}
	iters, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil || iters < 1 {
		// "BenchmarkX-2  --- FAIL", a name followed by a log line.
		return BenchResult{}, false, nil
	}
	res := BenchResult{Name: fields[0], Iterations: iters, Metrics: map[string]float64{}}
	if m := procsSuffix.FindStringSubmatchIndex(res.Name); m != nil {
		if p, err := strconv.Atoi(res.Name[m[2]:m[3]]); err == nil && p > 0 {
			res.Name, res.Procs = res.Name[:m[0]], p
		}
	}
	if res.Name == "" || !isBenchName(res.Name) {
		return BenchResult{}, false, nil
	}
	rest := fields[2:]
	if len(rest)%2 != 0 {
		return BenchResult{}, false, fmt.Errorf("%s: value %q has no unit", fields[0], rest[len(rest)-1])
	}
	for i := 0; i < len(rest); i += 2 {
		v, err := strconv.ParseFloat(rest[i], 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			return BenchResult{}, false, fmt.Errorf("%s: %q (the value of %q) is not a finite number", fields[0], rest[i], rest[i+1])
		}
		res.Metrics[rest[i+1]] = v
	}
	return res, true, nil
}

// isBenchName reports whether s names a benchmark: "Benchmark" alone or
// followed by anything but a lower-case letter (BenchmarkX, Benchmark_x).
func isBenchName(s string) bool {
	rest, ok := strings.CutPrefix(s, "Benchmark")
	return ok && (rest == "" || rest[0] < 'a' || rest[0] > 'z')
}

// GrowthPoint is one size of a series: the median of the values measured
// at that size (Samples of them, more than one with -count).
type GrowthPoint struct {
	Size, Value float64
	Samples     int
}

// GrowthSeries is one benchmark's values by size, smallest size first.
type GrowthSeries struct {
	// Name is the benchmark's name without "Benchmark" and without the
	// size segment, prefixed with the package's last element when the
	// results come from more than one package: "sqlstore.ListLore/all".
	Name   string
	Points []GrowthPoint
}

// Growth groups results into series for one metric (a unit, "ns/op"):
// the size of a result is the value of the first segment of its name
// (split at "/") of the form KEY=NUMBER with KEY one of sizeKeys; the
// series is the name with that segment removed. A go test uniquifier
// ("#01") after the number is dropped. Results without such a segment are
// left out; results with a segment of a key whose value is not a positive
// number, or with two size segments, are an error, and so is finding no
// series, or no result reporting metric. Series keep the order of their
// first result; a series may have a single point.
func Growth(results []BenchResult, metric string, sizeKeys []string) ([]GrowthSeries, error) {
	if metric == "" {
		return nil, errors.New("no metric named")
	}
	if len(sizeKeys) == 0 {
		return nil, errors.New("no size key named")
	}
	pkgs := map[string]bool{}
	for _, r := range results {
		pkgs[r.Pkg] = true
	}
	type acc struct {
		name   string
		values map[float64][]float64
	}
	var order []*acc
	byName := map[string]*acc{}
	sized, withMetric := 0, 0
	units := map[string]bool{}
	for _, r := range results {
		size, rest, ok, err := sizeOf(r.Name, sizeKeys)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", r.Line, err)
		}
		if !ok {
			continue
		}
		sized++
		for u := range r.Metrics {
			units[u] = true
		}
		v, ok := r.Metrics[metric]
		if !ok {
			continue
		}
		withMetric++
		name := strings.TrimPrefix(strings.TrimPrefix(rest, "Benchmark"), "/")
		if name == "" {
			name = "Benchmark"
		}
		if len(pkgs) > 1 {
			name = lastElem(r.Pkg) + "." + name
		}
		a := byName[name]
		if a == nil {
			a = &acc{name: name, values: map[float64][]float64{}}
			byName[name] = a
			order = append(order, a)
		}
		a.values[size] = append(a.values[size], v)
	}
	switch {
	case sized == 0:
		return nil, fmt.Errorf("no benchmark has a size segment %s (such as %s=1000)", keyList(sizeKeys), sizeKeys[0])
	case withMetric == 0:
		return nil, fmt.Errorf("no sized benchmark reports %s (they report %s)", metric, strings.Join(slices.Sorted(maps.Keys(units)), ", "))
	}
	out := make([]GrowthSeries, 0, len(order))
	for _, a := range order {
		s := GrowthSeries{Name: a.name}
		for _, size := range slices.Sorted(maps.Keys(a.values)) {
			vs := a.values[size]
			s.Points = append(s.Points, GrowthPoint{Size: size, Value: median(vs), Samples: len(vs)})
		}
		out = append(out, s)
	}
	return out, nil
}

// sizeOf finds the size segment of a benchmark name: its number, the name
// without it, and whether there was one.
func sizeOf(name string, keys []string) (float64, string, bool, error) {
	segs := strings.Split(name, "/")
	found := -1
	var size float64
	for i, seg := range segs {
		k, v, ok := strings.Cut(seg, "=")
		if !ok || !slices.Contains(keys, k) {
			continue
		}
		if found >= 0 {
			return 0, "", false, fmt.Errorf("%s: two size segments, %q and %q", name, segs[found], seg)
		}
		if j := strings.IndexByte(v, '#'); j > 0 && isDigits(v[j+1:]) {
			v = v[:j]
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, "", false, fmt.Errorf("%s: size segment %q: %q is not a number", name, seg, v)
		}
		if f <= 0 {
			return 0, "", false, fmt.Errorf("%s: size segment %q: a log scale needs a size above 0", name, seg)
		}
		found, size = i, f
	}
	if found < 0 {
		return 0, "", false, nil
	}
	return size, strings.Join(slices.Delete(segs, found, found+1), "/"), true, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func keyList(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = k + "=…"
	}
	return strings.Join(q, " or ")
}

func lastElem(pkg string) string {
	if pkg == "" {
		return "(no pkg)"
	}
	return pkg[strings.LastIndexByte(pkg, '/')+1:]
}

func median(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// PlotOptions describe a growth chart.
type PlotOptions struct {
	// Title is the chart's heading ("" = "Growth of " + Metric).
	Title string
	// Metric is the unit plotted, as in the benchmark output: "ns/op"
	// labels the y axis with times, "B/op" with bytes, others with plain
	// numbers.
	Metric string
	// SizeLabel names the x axis ("" = "size").
	SizeLabel string
	// Note is a line under the title, for what the reader must know to
	// read the chart ("" = none).
	Note string
	// Width is the SVG's width in pixels (0 = 900); the height follows
	// from the legend.
	Width int
}

// chart geometry, in pixels.
const (
	plotLeft   = 88
	plotRight  = 28
	headHeight = 64 // title and subtitle, above the plot
	noteHeight = 18 // PlotOptions.Note's line
	plotHeight = 440
	legendRow  = 20
)

var (
	palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#595959", "#a6a600"}
	dashes  = []string{"", "7 4", "2 3"}
)

// RenderGrowthSVG draws series as a log-log chart: x the size, y the
// metric, both axes ticked at powers of ten, one line (with a marker at
// each point; a marker alone for a series of one point) and a legend entry
// per series, and grey dotted guides of slope 1 (linear growth) and 2
// (quadratic) from the lower left corner. It
// writes a self-contained SVG document; every point's marker carries a
// <title> with its values.
func RenderGrowthSVG(w io.Writer, series []GrowthSeries, opt PlotOptions) error {
	var xs, ys []float64
	for _, s := range series {
		for _, p := range s.Points {
			if !onLogScale(p.Size) || !onLogScale(p.Value) {
				return fmt.Errorf("series %q: point (%g, %g) cannot go on a log scale (want values from %g to %g)", s.Name, p.Size, p.Value, minLogValue, maxLogValue)
			}
			xs = append(xs, p.Size)
			ys = append(ys, p.Value)
		}
	}
	if len(xs) == 0 {
		return errors.New("nothing to plot: no series with a point")
	}
	width := opt.Width
	if width <= 0 {
		width = 900
	}
	if width < 400 {
		return fmt.Errorf("width %d: want at least 400 pixels", width)
	}
	title := opt.Title
	if title == "" {
		title = "Growth of " + opt.Metric
	}
	sizeLabel := opt.SizeLabel
	if sizeLabel == "" {
		sizeLabel = "size"
	}
	plotW := float64(width - plotLeft - plotRight)
	plotTop := headHeight
	if opt.Note != "" {
		plotTop += noteHeight
	}
	xr, yr := decadeRange(xs), decadeRange(ys)
	px := func(v float64) float64 { return plotLeft + xr.frac(v)*plotW }
	py := func(v float64) float64 { return float64(plotTop) + (1-yr.frac(v))*plotHeight }

	// The legend: two columns when the names fit in half the width.
	longest := 0
	for _, s := range series {
		longest = max(longest, len([]rune(s.Name)))
	}
	cols := 2
	if float64(longest)*7.4+40 > plotW/2 {
		cols = 1
	}
	rows := (len(series) + cols - 1) / cols
	legendTop := plotTop + plotHeight + 78
	height := legendTop + rows*legendRow + 24

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="13">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="28" font-size="18" font-weight="bold">%s</text>`+"\n", plotLeft, esc(title))
	fmt.Fprintf(&b, `<text x="%d" y="48" fill="#555555">log-log: one line per benchmark; a slope of 1 is linear growth in the size, 2 quadratic</text>`+"\n", plotLeft)
	if opt.Note != "" {
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#555555">%s</text>`+"\n", plotLeft, 48+noteHeight, esc(opt.Note))
	}

	// Grid and ticks.
	b.WriteString(`<g stroke="#e6e6e6" stroke-width="1">` + "\n")
	for _, t := range xr.minorTicks() {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d"/>`+"\n", px(t), plotTop, px(t), plotTop+plotHeight)
	}
	for _, t := range yr.minorTicks() {
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f"/>`+"\n", plotLeft, py(t), plotLeft+plotW, py(t))
	}
	b.WriteString("</g>\n")
	b.WriteString(`<g stroke="#bdbdbd" stroke-width="1">` + "\n")
	for _, t := range xr.majorTicks() {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d"/>`+"\n", px(t), plotTop, px(t), plotTop+plotHeight+5)
	}
	for _, t := range yr.majorTicks() {
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f"/>`+"\n", plotLeft-5, py(t), plotLeft+plotW, py(t))
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="none" stroke="#333333"/>`+"\n", plotLeft, plotTop, plotW, plotHeight)
	b.WriteString(`<g text-anchor="middle">` + "\n")
	for _, t := range xr.majorTicks() {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s</text>`+"\n", px(t), plotTop+plotHeight+20, esc(formatValue(t, "")))
	}
	b.WriteString("</g>\n")
	b.WriteString(`<g text-anchor="end">` + "\n")
	for _, t := range yr.majorTicks() {
		fmt.Fprintf(&b, `<text x="%d" y="%.1f">%s</text>`+"\n", plotLeft-9, py(t)+4.5, esc(formatValue(t, opt.Metric)))
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", plotLeft+plotW/2, plotTop+plotHeight+44, esc(sizeLabel+" (log scale)"))
	fmt.Fprintf(&b, `<text transform="translate(20 %.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", float64(plotTop)+plotHeight/2.0, esc(opt.Metric+" (log scale)"))

	// Guides of slope 1 and 2 from the lower left corner of the decades.
	for _, g := range []struct {
		slope float64
		label string
	}{{1, "slope 1 (∝ size)"}, {2, "slope 2 (∝ size²)"}} {
		d := min(xr.hi-xr.lo, (yr.hi-yr.lo)/g.slope)
		gx0, gy0 := math.Pow(10, xr.lo), math.Pow(10, yr.lo)
		gx1, gy1 := math.Pow(10, xr.lo+d), math.Pow(10, yr.lo+g.slope*d)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#8c8c8c" stroke-width="1.5" stroke-dasharray="1 4" stroke-linecap="round"/>`+"\n", px(gx0), py(gy0), px(gx1), py(gy1))
		// The label along the line, above it, the steeper one nearer the corner.
		t := 0.7 / g.slope
		mx, my := px(gx0)+t*(px(gx1)-px(gx0)), py(gy0)+t*(py(gy1)-py(gy0))
		angle := -math.Atan2(py(gy0)-py(gy1), px(gx1)-px(gx0)) * 180 / math.Pi
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" dy="-6" fill="#6b6b6b" stroke="#ffffff" stroke-width="3" paint-order="stroke" font-style="italic" text-anchor="middle" transform="rotate(%.1f %.1f %.1f)">%s</text>`+"\n",
			mx, my, angle, mx, my, esc(g.label))
	}

	// The series.
	for i, s := range series {
		color, dash := palette[i%len(palette)], dashes[(i/len(palette))%len(dashes)]
		fmt.Fprintf(&b, `<g stroke="%s" fill="%s">`+"\n", color, color)
		fmt.Fprintf(&b, "<title>%s</title>\n", esc(s.Name))
		if len(s.Points) > 1 {
			var pts []string
			for _, p := range s.Points {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(p.Size), py(p.Value)))
			}
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke-width="2.2"%s/>`+"\n", strings.Join(pts, " "), dashAttr(dash))
		}
		for _, p := range s.Points {
			note := fmt.Sprintf("%s at %s: %s", s.Name, strconv.FormatFloat(p.Size, 'g', -1, 64), formatValue(p.Value, opt.Metric))
			if p.Samples > 1 {
				note += fmt.Sprintf(" (median of %d)", p.Samples)
			}
			writeMarker(&b, i, px(p.Size), py(p.Value), note)
		}
		b.WriteString("</g>\n")
	}

	// The legend.
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="bold">Benchmarks</text>`+"\n", plotLeft, legendTop-10)
	colW := plotW / float64(cols)
	for i, s := range series {
		color, dash := palette[i%len(palette)], dashes[(i/len(palette))%len(dashes)]
		x := plotLeft + float64(i/rows)*colW
		y := float64(legendTop + (i%rows)*legendRow + 8)
		fmt.Fprintf(&b, `<g stroke="%s" fill="%s">`, color, color)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke-width="2.2"%s/>`, x, y, x+30, y, dashAttr(dash))
		writeMarker(&b, i, x+15, y, "")
		b.WriteString("</g>")
		pts := "points"
		if len(s.Points) == 1 {
			pts = "point"
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">%s<title>%d %s</title></text>`+"\n", x+40, y+4.5, esc(s.Name), len(s.Points), pts)
	}
	b.WriteString("</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// The values a chart places: positive, and far enough from the float64
// limits that the decades around them are finite and non-zero.
const (
	minLogValue = 1e-200
	maxLogValue = 1e200
)

func onLogScale(v float64) bool { return v >= minLogValue && v <= maxLogValue }

func dashAttr(dash string) string {
	if dash == "" {
		return ""
	}
	return ` stroke-dasharray="` + dash + `"`
}

// writeMarker draws series i's marker (circle, square, triangle or
// diamond) at x, y with an optional <title>.
func writeMarker(b *bytes.Buffer, i int, x, y float64, title string) {
	t := ""
	if title != "" {
		t = "<title>" + esc(title) + "</title>"
	}
	const r = 4.0
	switch i % 4 {
	case 0:
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="%.1f">%s</circle>`, x, y, r, t)
	case 1:
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f">%s</rect>`, x-r, y-r, 2*r, 2*r, t)
	case 2:
		fmt.Fprintf(b, `<polygon points="%.1f,%.1f %.1f,%.1f %.1f,%.1f">%s</polygon>`, x, y-r-1, x+r+1, y+r, x-r-1, y+r, t)
	default:
		fmt.Fprintf(b, `<polygon points="%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f">%s</polygon>`, x, y-r-1, x+r+1, y, x, y+r+1, x-r-1, y, t)
	}
	if title != "" {
		b.WriteByte('\n')
	}
}

// esc escapes s for XML text and attributes; invalid characters become
// U+FFFD.
func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// logRange is an axis: the decades lo..hi (powers of ten) that hold the
// data, drawn with a margin so points on a decade stay inside.
type logRange struct{ lo, hi float64 }

func decadeRange(vs []float64) logRange {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		l := math.Log10(v)
		lo, hi = min(lo, l), max(hi, l)
	}
	r := logRange{math.Floor(lo + 1e-9), math.Ceil(hi - 1e-9)}
	if r.hi <= r.lo {
		r.hi = r.lo + 1
	}
	return r
}

const axisMargin = 0.03 // of the span, on each side

// frac places v on the axis: 0 at the low end, 1 at the high end.
func (r logRange) frac(v float64) float64 {
	span := r.hi - r.lo
	return (math.Log10(v) - (r.lo - axisMargin*span)) / (span * (1 + 2*axisMargin))
}

func (r logRange) majorTicks() []float64 {
	var t []float64
	for e := r.lo; e <= r.hi; e++ {
		t = append(t, math.Pow(10, e))
	}
	return t
}

func (r logRange) minorTicks() []float64 {
	var t []float64
	for e := r.lo; e < r.hi; e++ {
		for m := 2.0; m < 10; m++ {
			t = append(t, m*math.Pow(10, e))
		}
	}
	return t
}

// formatValue writes v with the metric's unit scaled: times for ns/op,
// bytes (powers of 1000) for B/op, a number and the unit otherwise.
func formatValue(v float64, metric string) string {
	switch metric {
	case "ns/op":
		return scaled(v, []string{"ns", "µs", "ms", "s"})
	case "B/op":
		return scaled(v, []string{"B", "kB", "MB", "GB", "TB"})
	case "":
		return formatNumber(v)
	default:
		return formatNumber(v) + " " + metric
	}
}

// scaled writes v (in units[0]), rounded to three significant digits, in
// the largest unit of units (each 1000 times the one before) that keeps it
// at or above 1.
func scaled(v float64, units []string) string {
	v = round3(v)
	i := 0
	for i+1 < len(units) && v >= 1000-1e-9 {
		v /= 1000
		i++
	}
	return trimFloat(v) + " " + units[i]
}

// formatNumber writes a size or count: 950, 1k, 2.5k, 10k, 1M, …
func formatNumber(v float64) string {
	v = round3(v)
	suffixes := []string{"", "k", "M", "G", "T"}
	i := 0
	for i+1 < len(suffixes) && math.Abs(v) >= 1000-1e-9 {
		v /= 1000
		i++
	}
	return trimFloat(v) + suffixes[i]
}

// round3 rounds v to three significant digits.
func round3(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return r
}

// trimFloat writes v in its shortest form, in exponent form when tiny or
// huge.
func trimFloat(v float64) string {
	if v != 0 && (math.Abs(v) < 1e-3 || math.Abs(v) >= 1e6) {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
