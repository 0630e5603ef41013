package bench

import (
	"math"
	"math/bits"
	"time"
)

// histogram is a log-linear latency histogram in nanoseconds (the HDR
// histogram layout): values below 2^subBits are exact, and every power-of-two
// range above is split into 2^(subBits-1) equal buckets, so a bucket's width
// is at most 1/64 of its lower bound (relative error < 1.6%). Recording is a
// few integer operations and no allocation; each worker owns one and they
// are merged at the end, so there is no sharing on the hot path.
type histogram struct {
	counts [numBuckets]uint64
	n      uint64
	min    int64
	max    int64
	sum    int64
}

const (
	subBits    = 7
	subCount   = 1 << subBits // 128 exact values, then 64 buckets per octave
	halfCount  = subCount / 2 // 64
	maxBits    = 40           // clamp at 2^40 ns ≈ 18 minutes
	numBuckets = subCount + (maxBits-subBits)*halfCount
)

func bucketOf(v int64) int {
	if v < 0 {
		v = 0
	}
	if v >= 1<<maxBits {
		v = 1<<maxBits - 1
	}
	u := uint64(v)
	if u < subCount {
		return int(u)
	}
	shift := bits.Len64(u) - subBits // >= 1
	top := int(u >> uint(shift))     // in [64, 128)
	return subCount + (shift-1)*halfCount + (top - halfCount)
}

// bucketBounds returns the inclusive range of values that land in bucket i.
func bucketBounds(i int) (lo, hi int64) {
	if i < subCount {
		return int64(i), int64(i)
	}
	j := i - subCount
	shift := j/halfCount + 1
	top := int64(j%halfCount + halfCount)
	return top << uint(shift), (top+1)<<uint(shift) - 1
}

func (h *histogram) record(d time.Duration) {
	v := int64(d)
	h.counts[bucketOf(v)]++
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.n++
	h.sum += v
}

func (h *histogram) merge(o *histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	h.n += o.n
	h.sum += o.sum
}

// quantile returns the q-quantile (0 < q <= 1): the midpoint of the bucket
// holding the ceil(q*n)-th smallest sample, clamped to the observed min/max.
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	if rank < 1 {
		rank = 1
	}
	if rank > h.n {
		rank = h.n
	}
	var cum uint64
	for i, c := range h.counts {
		cum += c
		if cum >= rank {
			lo, hi := bucketBounds(i)
			v := lo + (hi-lo)/2
			v = max(v, h.min)
			v = min(v, h.max)
			return time.Duration(v)
		}
	}
	return time.Duration(h.max)
}
