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
			w.add(d)
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
				w.add(time.Duration(v+1) * ms)
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
