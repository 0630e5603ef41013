package bench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Row is one line of a results table: a named run at a concurrency, its
// result, the server's RSS in bytes (0 = not measured) and its throughput
// as a ratio of the baseline's at the same concurrency (0 = not computed;
// see [SetRatios]).
type Row struct {
	Name        string
	Concurrency int
	Result      *Result
	RSS         int64
	Ratio       float64
	// LimitRatio is req/s divided by the raw net/http limit's (0: none).
	LimitRatio float64
	// CPUPerReq is the server's CPU time (user+system) per request, 0 when
	// not measured.
	CPUPerReq time.Duration
	// CPUShare is the share of one core the server used over the measured
	// window (0: not measured). Under [ClientBoundShare] the row is marked
	// client-bound.
	CPUShare float64
	// Note is printed in the last column, after the client-bound mark.
	Note string
}

// ClientBoundShare is the server CPU share under which a row is marked
// client-bound: its server waited for something else (the load generator,
// the kernel, its database) for over a tenth of the measured window, so
// its req/s does not measure the server alone.
const ClientBoundShare = 0.90

// ClientBound reports whether the row's server stayed under
// ClientBoundShare of its core.
func (r *Row) ClientBound() bool { return r.CPUShare > 0 && r.CPUShare < ClientBoundShare }

// SetRatios sets each row's Ratio to its req/s divided by the req/s of the
// row named baseline at the same concurrency. Rows with no such baseline
// row keep their Ratio.
func SetRatios(rows []Row, baseline string) {
	base := map[int]float64{}
	for _, r := range rows {
		if r.Name == baseline && r.Result != nil && r.Result.RPS > 0 {
			base[r.Concurrency] = r.Result.RPS
		}
	}
	for i := range rows {
		b, ok := base[rows[i].Concurrency]
		if ok && rows[i].Result != nil {
			rows[i].Ratio = rows[i].Result.RPS / b
		}
	}
}

// SetLimitRatios sets each row's LimitRatio against the row named limit
// at the same concurrency.
func SetLimitRatios(rows []Row, limit string) {
	base := map[int]float64{}
	for _, r := range rows {
		if r.Name == limit && r.Result != nil && r.Result.RPS > 0 {
			base[r.Concurrency] = r.Result.RPS
		}
	}
	for i := range rows {
		if b, ok := base[rows[i].Concurrency]; ok && rows[i].Result != nil {
			rows[i].LimitRatio = rows[i].Result.RPS / b
		}
	}
}

// FormatTable writes rows as an aligned text table with the columns name,
// c, req/s, CPU % (the server's share of its core), p50, p99, errors, RSS
// MiB, CPU/req, ratio (to the baseline), vs limit and note, where a row
// whose server stayed under [ClientBoundShare] of its core is marked
// "client-bound". Missing values print as "-". Write errors are ignored.
func FormatTable(w io.Writer, rows []Row) {
	header := []string{"name", "c", "req/s", "CPU %", "p50", "p99", "errors", "RSS MiB", "CPU/req", "ratio", "vs limit", "note"}
	table := [][]string{header}
	for _, r := range rows {
		line := []string{r.Name, strconv.Itoa(r.Concurrency), "-", "-", "-", "-", "-", "-", "-", "-", "-", ""}
		if res := r.Result; res != nil {
			line[2] = strconv.FormatFloat(res.RPS, 'f', 0, 64)
			line[4] = formatLatency(res.P50)
			line[5] = formatLatency(res.P99)
			line[6] = strconv.FormatInt(res.Errors, 10)
		}
		if r.CPUShare > 0 {
			line[3] = strconv.FormatFloat(100*r.CPUShare, 'f', 0, 64)
		}
		if r.RSS > 0 {
			line[7] = strconv.FormatFloat(float64(r.RSS)/(1<<20), 'f', 1, 64)
		}
		if r.CPUPerReq > 0 {
			line[8] = formatLatency(r.CPUPerReq)
		}
		if r.Ratio > 0 {
			line[9] = strconv.FormatFloat(r.Ratio, 'f', 2, 64)
		}
		if r.LimitRatio > 0 {
			line[10] = strconv.FormatFloat(r.LimitRatio, 'f', 2, 64)
		}
		var notes []string
		if r.ClientBound() {
			notes = append(notes, "client-bound")
		}
		if r.Note != "" {
			notes = append(notes, r.Note)
		}
		line[11] = strings.Join(notes, "; ")
		table = append(table, line)
	}
	widths := make([]int, len(header))
	for _, line := range table {
		for i, cell := range line {
			widths[i] = max(widths[i], len([]rune(cell)))
		}
	}
	var b strings.Builder
	for _, line := range table {
		for i, cell := range line {
			pad := strings.Repeat(" ", widths[i]-len([]rune(cell)))
			switch {
			case i == 0: // name: left-aligned
				b.WriteString(cell)
				if len(line) > 1 {
					b.WriteString(pad)
				}
			case i == len(line)-1: // note: left-aligned, not padded
				if cell != "" {
					b.WriteString("  ")
					b.WriteString(cell)
				}
			default: // numbers: right-aligned
				b.WriteString("  ")
				b.WriteString(pad)
				b.WriteString(cell)
			}
		}
		b.WriteByte('\n')
	}
	io.WriteString(w, b.String())
}

func formatLatency(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
}
