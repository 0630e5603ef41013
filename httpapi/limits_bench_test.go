package httpapi

import (
	"strconv"
	"sync/atomic"
	"testing"
)

// BenchmarkLimiterAllow takes tokens from the per-credential buckets from
// parallel callers, as the guarded handlers do for every request: the
// callers spread over 64 keys, with a rate high enough that every request
// is allowed ("allowed") and one so low that almost every request is
// refused and told how long to wait ("refused").
func BenchmarkLimiterAllow(b *testing.B) {
	keys := make([]string, 64)
	for i := range keys {
		keys[i] = "key:" + strconv.Itoa(i)
	}
	for _, c := range []struct {
		name  string
		rate  float64
		burst int
	}{{"allowed", 1e12, 1 << 30}, {"refused", 1e-3, 1}} {
		b.Run(c.name, func(b *testing.B) {
			l := newLimiter(c.rate, c.burst, 0, nil)
			var next atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := int(next.Add(1))
				for pb.Next() {
					l.allow(keys[i%len(keys)])
					i++
				}
			})
		})
	}
}
