package testserver

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Metrics is one scrape of a Prometheus text exposition: every sample,
// with its name and labels.
type Metrics []Sample

// Sample is one line of the exposition.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Scrape GETs url (a server's /metrics) and parses the text format.
func Scrape(t testing.TB, url string) Metrics {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: %d, %v", url, resp.StatusCode, err)
	}
	m, err := ParseMetrics(string(body))
	if err != nil {
		t.Fatalf("scrape %s: %v\n%s", url, err, body)
	}
	return m
}

// Value returns the sum of the samples named name whose labels include
// every pair of labels (name, value, name, value, …).
func (m Metrics) Value(name string, labels ...string) float64 {
	var sum float64
	for _, s := range m {
		if s.matches(name, labels) {
			sum += s.Value
		}
	}
	return sum
}

// Has reports whether a sample named name with those labels exists.
func (m Metrics) Has(name string, labels ...string) bool {
	for _, s := range m {
		if s.matches(name, labels) {
			return true
		}
	}
	return false
}

func (s Sample) matches(name string, labels []string) bool {
	if s.Name != name {
		return false
	}
	for i := 0; i+1 < len(labels); i += 2 {
		if v, ok := s.Labels[labels[i]]; !ok || v != labels[i+1] {
			return false
		}
	}
	return true
}

// ParseMetrics parses the Prometheus text format (comments skipped).
func ParseMetrics(text string) (Metrics, error) {
	var out Metrics
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		s := Sample{Labels: map[string]string{}}
		i := strings.IndexAny(line, "{ ")
		if i < 0 {
			return nil, errLine(line)
		}
		s.Name, line = line[:i], line[i:]
		if line[0] == '{' {
			line = line[1:]
			for {
				line = strings.TrimLeft(line, ", ")
				if line == "" {
					return nil, errLine(s.Name)
				}
				if line[0] == '}' {
					line = line[1:]
					break
				}
				eq := strings.Index(line, `="`)
				if eq < 0 {
					return nil, errLine(line)
				}
				key := line[:eq]
				line = line[eq+2:]
				var val strings.Builder
				j := 0
				for ; j < len(line) && line[j] != '"'; j++ {
					if line[j] == '\\' && j+1 < len(line) {
						j++
						switch line[j] {
						case 'n':
							val.WriteByte('\n')
						default:
							val.WriteByte(line[j])
						}
						continue
					}
					val.WriteByte(line[j])
				}
				if j == len(line) {
					return nil, errLine(line)
				}
				s.Labels[key] = val.String()
				line = line[j+1:]
			}
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			return nil, errLine(s.Name)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, err
		}
		s.Value = v
		out = append(out, s)
	}
	return out, nil
}

type errLine string

func (e errLine) Error() string { return "bad metrics line: " + string(e) }
