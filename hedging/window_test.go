package hedging

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestWindowKeepsTheLastSamplesInOrder(t *testing.T) {
	// Few distinct values, so that evictions and insertions keep meeting equal samples.
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{1, 2, 3, 7, 200} {
		w := newWindow(size)
		var all []time.Duration
		for i := 0; i < 5*size+50; i++ {
			d := time.Duration(rng.IntN(6)) * ms
			w.add(d, int64(i))
			all = append(all, d)
			want := slices.Clone(all[max(0, len(all)-size):])
			slices.Sort(want)
			if !slices.Equal(w.sorted, want) {
				t.Fatalf("window of %d after %d samples: sorted %v, want %v", size, i+1, w.sorted, want)
			}
		}
	}
}

func TestWindowQuantileIsTheNearestRank(t *testing.T) {
	cases := []struct {
		name    string
		samples int // 1..samples ms, shuffled
		p       float64
		want    time.Duration
	}{
		{"p99 of 1..200ms is the 198th", 200, 0.99, 198 * ms},
		{"p50 of 1..200ms is the 100th", 200, 0.50, 100 * ms},
		{"p99 of 1..100ms is the 99th", 100, 0.99, 99 * ms},
		{"p99.9 of 1..200ms is the largest", 200, 0.999, 200 * ms},
		{"any quantile of one sample is that sample", 1, 0.01, 1 * ms},
		{"a low quantile is at least the smallest sample", 20, 0.01, 1 * ms},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWindow(c.samples)
			for _, v := range rand.New(rand.NewPCG(3, 4)).Perm(c.samples) {
				w.add(time.Duration(v+1)*ms, int64(v))
			}
			if got := w.quantile(c.p); got != c.want {
				t.Fatalf("quantile(%v) = %v, want %v", c.p, got, c.want)
			}
		})
	}
	if got := newWindow(10).quantile(0.99); got != 0 {
		t.Fatalf("quantile of an empty window = %v", got)
	}
}

// A window under any mix of adds and expiries holds what a plain list of the samples
// would: the newest that fit, minus those observed before the latest cutoff.
func TestWindowAgreesWithAListUnderAddsAndExpiries(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, size := range []int{1, 2, 3, 7, 200} {
		w := newWindow(size)
		var list []stamped
		now := int64(0)
		for i := 0; i < 20*size+100; i++ {
			switch rng.IntN(5) {
			case 0:
				cutoff := now - int64(rng.IntN(3*size))
				w.expire(cutoff)
				list = slices.DeleteFunc(list, func(s stamped) bool { return s.at < cutoff })
			default:
				now += int64(rng.IntN(3))
				d := time.Duration(rng.IntN(6)) * ms
				w.add(d, now)
				at := now
				if n := len(list); n > 0 && at <= list[n-1].at {
					at = list[n-1].at + 1
				}
				list = append(list, stamped{at: at, lat: d})
				list = list[max(0, len(list)-size):]
				now = max(now, at)
			}
			if got := w.samples(nil); !slices.Equal(got, list) {
				t.Fatalf("window of %d after %d steps: %v, want %v", size, i+1, got, list)
			}
			checkWindow(t, "window", w)
		}
	}
}

func TestWindowKeepsObservationTimesInArrivalOrder(t *testing.T) {
	cases := []struct {
		name string
		at   []int64
		want []int64
	}{
		{"increasing times are kept", []int64{10, 20, 30}, []int64{10, 20, 30}},
		{"a time equal to the newest moves 1ns after it", []int64{10, 10, 10}, []int64{10, 11, 12}},
		{"a time before the newest moves 1ns after it", []int64{10, 30, 20, 40}, []int64{10, 30, 31, 40}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWindow(10)
			for _, at := range c.at {
				w.add(ms, at)
			}
			var got []int64
			for _, s := range w.samples(nil) {
				got = append(got, s.at)
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("times %v, want %v", got, c.want)
			}
		})
	}
}

func TestWindowExpiresOnlyFromTheOldestEnd(t *testing.T) {
	w := newWindow(4)
	for i, d := range []time.Duration{40, 10, 30, 20, 50, 60} { // wraps: 30, 20, 50, 60 remain
		w.add(d*ms, int64(i*10))
	}
	w.expire(35) // observed at 20 and 30: 30ms and 20ms
	if got := w.samples(nil); !slices.Equal(got, []stamped{{40, 50 * ms}, {50, 60 * ms}}) {
		t.Fatalf("samples %v", got)
	}
	if w.quantile(0.5) != 50*ms || w.oldest() != 40 || w.newest() != 50 {
		t.Fatalf("p50 %v, oldest %d, newest %d", w.quantile(0.5), w.oldest(), w.newest())
	}
	w.expire(1000)
	if w.len() != 0 || w.quantile(0.99) != 0 {
		t.Fatalf("%d samples left after everything aged out", w.len())
	}
	w.add(7*ms, 5) // an empty window takes any time
	if got := w.samples(nil); !slices.Equal(got, []stamped{{5, 7 * ms}}) {
		t.Fatalf("samples %v", got)
	}
}
