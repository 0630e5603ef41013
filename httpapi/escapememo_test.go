package httpapi

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// TestEscapeMemo: whatever the memo holds, its escaping of a text is
// appendJSONText's, for texts seen once or again, at the size bounds, for
// texts that differ in one byte, and from many goroutines at once.
func TestEscapeMemo(t *testing.T) {
	m := newEscapeMemo()
	base := strings.Repeat(`a "quoted" <tag> & é \ line`+"\n", 40)
	var texts []string
	for _, n := range []int{0, 1, escapeMemoMin - 1, escapeMemoMin, escapeMemoMin + 1, 1000, escapeMemoMax, escapeMemoMax + 1} {
		s := strings.Repeat(base, n/len(base)+1)[:n]
		texts = append(texts, s)
		if n > 0 {
			texts = append(texts, s[:n-1]+"x", "x"+s[1:]) // one byte apart
		}
	}
	for i := range 200 { // more texts than slots
		texts = append(texts, strings.Repeat(string(rune('a'+i%26)), escapeMemoMin+i))
	}
	check := func(t *testing.T, s string) {
		want := appendJSONText(nil, s)
		got := m.appendText([]byte("prefix"), s)
		if !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Errorf("text of %d bytes: memo escaped it differently", len(s))
		}
	}
	for range 3 {
		for _, s := range texts {
			check(t, s)
		}
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 2000 {
				check(t, texts[(g*7+i)%len(texts)])
			}
		})
	}
	wg.Wait()
}
