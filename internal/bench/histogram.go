package bench

import (
	"math"
	"math/bits"
	"time"
)

// Histogram counts durations in log-linear buckets: every power of two of
// nanoseconds is cut into 2^subBits equal buckets, so a value is placed
// within 1/2^subBits (under 1 %) of itself, whatever its size, in a fixed
// amount of memory. The zero value is ready to use; it is not safe for
// concurrent use (each connection keeps its own and they are merged).
type Histogram struct {
	counts [buckets]uint64
	n      uint64
	sum    time.Duration
	min    time.Duration
	max    time.Duration
}

const (
	subBits = 7
	sub     = 1 << subBits
	// buckets covers every positive int64: values below sub nanoseconds
	// are exact, then (64 - subBits) powers of two of sub buckets each.
	buckets = sub + (64-subBits)*sub
)

// bucketOf returns the bucket of v (v ≥ 0).
func bucketOf(v uint64) int {
	if v < sub {
		return int(v)
	}
	exp := bits.Len64(v) - subBits - 1 // ≥ 0
	return sub + exp*sub + int((v>>uint(exp))-sub)
}

// upper returns the largest value bucket b holds.
func upper(b int) uint64 {
	if b < sub {
		return uint64(b)
	}
	exp := (b - sub) / sub
	mant := uint64((b-sub)%sub + sub)
	return (mant+1)<<uint(exp) - 1
}

// Record adds one duration (a negative one counts as zero).
func (h *Histogram) Record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.counts[bucketOf(uint64(d))]++
	if h.n == 0 || d < h.min {
		h.min = d
	}
	if d > h.max {
		h.max = d
	}
	h.n++
	h.sum += d
}

// Merge adds every value of o.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.n += o.n
	h.sum += o.sum
}

// Count is the number of values recorded.
func (h *Histogram) Count() uint64 { return h.n }

// Mean is their average; 0 when empty.
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return h.sum / time.Duration(h.n)
}

// Max is the largest value recorded.
func (h *Histogram) Max() time.Duration { return h.max }

// Quantile returns the value of rank ⌈q·n⌉ (the nearest-rank definition:
// Quantile(0.99) is a value that 99 % of the recorded values do not
// exceed), as the upper edge of its bucket but never above the largest
// value recorded; 0 when empty.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for b, c := range h.counts {
		seen += c
		if seen >= rank {
			if u := upper(b); u < uint64(h.max) {
				return time.Duration(u)
			}
			return h.max
		}
	}
	return h.max
}
