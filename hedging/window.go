package hedging

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// window is one operation kind's sliding window of first-region latencies: the last
// len(lat) samples, newest replacing oldest, each with the time it was observed, so that
// samples too old to describe the region any more can be dropped from the oldest end.
//
// Besides the ring (which says which sample is oldest) it keeps the same samples in
// ascending order, updated on every add by moving only the values between the evicted
// sample's slot and the new sample's: at most one memmove of the window (1.6 KB for 200
// samples), with no allocation. A quantile is then one index, so Begin costs the same
// whether or not samples arrived since the last operation; re-sorting or quickselecting
// a copy on each Begin after a Done would cost microseconds in the steady state, where
// every operation adds a sample.
//
// Observation times never decrease from the oldest sample to the newest (add moves a
// sample that would break the order to just after the newest), so the samples that have
// aged out are always a run at the oldest end, and a check of one time tells whether
// there are any.
type window struct {
	op     string          // the operation kind
	lat    []time.Duration // ring, arrival order from head; len is the window size
	at     []int64         // when each ring sample was observed, Unix nanoseconds
	head   int             // the ring slot of the oldest sample
	n      int             // samples in the ring
	sorted []time.Duration // the ring's samples, ascending
}

// stamped is one sample with its observation time, outside a window.
type stamped struct {
	at  int64 // Unix nanoseconds
	lat time.Duration
}

// compareStamped orders samples by observation time, then latency: arrival order, and
// a total order in which duplicates are neighbours.
func compareStamped(x, y stamped) int {
	if c := cmp.Compare(x.at, y.at); c != 0 {
		return c
	}
	return cmp.Compare(x.lat, y.lat)
}

func newWindow(size int) *window {
	return &window{lat: make([]time.Duration, size), at: make([]int64, size), sorted: make([]time.Duration, 0, size)}
}

func (w *window) len() int { return w.n }

func (w *window) size() int { return len(w.lat) }

// slot is the ring slot of the i-th oldest sample.
func (w *window) slot(i int) int {
	if i += w.head; i >= len(w.lat) {
		i -= len(w.lat)
	}
	return i
}

// oldest and newest are observation times; the window must not be empty.
func (w *window) oldest() int64 { return w.at[w.head] }
func (w *window) newest() int64 { return w.at[w.slot(w.n-1)] }

// add records a sample observed at at (Unix nanoseconds). A sample observed no later
// than the newest is recorded 1ns after it: arrival order stays time order, and no two
// samples of a window share a time, which is what tells samples apart when states are
// merged (see MergeAdaptiveState).
func (w *window) add(d time.Duration, at int64) {
	if w.n > 0 {
		if last := w.newest(); at <= last {
			at = last + 1
		}
	}
	if w.n < len(w.lat) {
		s := w.slot(w.n)
		w.lat[s], w.at[s] = d, at
		w.n++
		w.insert(d)
		return
	}
	old := w.lat[w.head]
	w.lat[w.head], w.at[w.head] = d, at
	if w.head++; w.head == len(w.lat) {
		w.head = 0
	}
	w.replace(old, d)
}

// expire drops the samples observed before cutoff (Unix nanoseconds), oldest first. It
// costs one comparison when there are none, and O(log n) and one memmove for each one
// dropped.
func (w *window) expire(cutoff int64) {
	for w.n > 0 && w.at[w.head] < cutoff {
		w.remove(w.lat[w.head])
		if w.head++; w.head == len(w.lat) {
			w.head = 0
		}
		w.n--
	}
}

// samples appends the window's samples to dst, oldest first.
func (w *window) samples(dst []stamped) []stamped {
	for i := range w.n {
		s := w.slot(i)
		dst = append(dst, stamped{at: w.at[s], lat: w.lat[s]})
	}
	return dst
}

// reset replaces the window's samples with ss, which must be in arrival order (as
// compareStamped sorts them) and no more than the window holds.
func (w *window) reset(ss []stamped) {
	w.head, w.n = 0, len(ss)
	w.sorted = w.sorted[:0]
	for i, s := range ss {
		w.lat[i], w.at[i] = s.lat, s.at
		w.sorted = append(w.sorted, s.lat)
	}
	slices.Sort(w.sorted)
}

// insert adds d to the sorted samples, which have room for it.
func (w *window) insert(d time.Duration) {
	n := len(w.sorted)
	i, _ := slices.BinarySearch(w.sorted, d)
	w.sorted = w.sorted[:n+1]
	copy(w.sorted[i+1:], w.sorted[i:n])
	w.sorted[i] = d
}

// remove takes one sample equal to d out of the sorted samples; d is in them.
func (w *window) remove(d time.Duration) {
	i, _ := slices.BinarySearch(w.sorted, d)
	w.sorted = slices.Delete(w.sorted, i, i+1)
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
