package hedging

import (
	"math"
	"slices"
	"time"
)

// window is one operation kind's sliding window of first-region latencies: the last
// cap(ring) samples, newest replacing oldest.
//
// Besides the ring (which says which sample is oldest) it keeps the same samples in
// ascending order, updated on every add by moving only the values between the evicted
// sample's slot and the new sample's: at most one memmove of the window (1.6 KB for 200
// samples), with no allocation. A quantile is then one index, so Begin costs the same
// whether or not samples arrived since the last operation; re-sorting or quickselecting
// a copy on each Begin after a Done would cost microseconds in the steady state, where
// every operation adds a sample.
type window struct {
	ring   []time.Duration // arrival order; grows to its capacity, then next wraps
	next   int             // the ring slot the next sample overwrites once full
	sorted []time.Duration // the ring's samples, ascending
}

func newWindow(size int) *window {
	return &window{ring: make([]time.Duration, 0, size), sorted: make([]time.Duration, 0, size)}
}

func (w *window) len() int { return len(w.ring) }

func (w *window) add(d time.Duration) {
	if n := len(w.ring); n < cap(w.ring) {
		w.ring = append(w.ring, d)
		i, _ := slices.BinarySearch(w.sorted, d)
		w.sorted = w.sorted[:n+1]
		copy(w.sorted[i+1:], w.sorted[i:n])
		w.sorted[i] = d
		return
	}
	old := w.ring[w.next]
	w.ring[w.next] = d
	if w.next++; w.next == len(w.ring) {
		w.next = 0
	}
	w.replace(old, d)
}

// replace puts d in the sorted samples in place of one sample equal to old.
func (w *window) replace(old, d time.Duration) {
	s := w.sorted
	i, _ := slices.BinarySearch(s, old) // s[i] == old: old is in the window
	if d >= old {
		// The samples after i that are below d move one slot left; d takes the last.
		m, _ := slices.BinarySearch(s[i+1:], d)
		copy(s[i:i+m], s[i+1:i+1+m])
		s[i+m] = d
		return
	}
	// The samples before i that are at least d move one slot right; d takes the first.
	k, _ := slices.BinarySearch(s[:i], d)
	copy(s[k+1:i+1], s[k:i])
	s[k] = d
}

// quantile is the nearest-rank p-quantile of the window: the smallest sample that at
// least a fraction p of the samples do not exceed (p99 of 1..200 ms is 198 ms). Nearest
// rank, not interpolation, so the threshold is always a latency the region really had.
func (w *window) quantile(p float64) time.Duration {
	n := len(w.sorted)
	if n == 0 {
		return 0
	}
	// The epsilon absorbs the rounding of p*n (0.99*200 is not exactly 198 in binary),
	// which would otherwise move the rank up by one.
	rank := int(math.Ceil(p*float64(n) - 1e-9))
	return w.sorted[min(max(rank, 1), n)-1]
}
