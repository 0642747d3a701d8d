package shard

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// evenRanges are n ranges of a container split evenly, as the emulator makes them.
func evenRanges(n int) []cosmos.PartitionKeyRange {
	b := cosmos.EvenRangeBoundaries(n)
	out := make([]cosmos.PartitionKeyRange, n)
	for i := range out {
		out[i] = cosmos.PartitionKeyRange{ID: fmt.Sprint(i), MinInclusive: b[i], MaxExclusive: b[i+1]}
	}
	return out
}

func intervals(plan []Shard) []Interval {
	out := make([]Interval, len(plan))
	for i, s := range plan {
		out[i] = s.Interval
	}
	return out
}

func TestPlanTilesAndRecomputes(t *testing.T) {
	for _, r := range []int{1, 4, 5} {
		for _, n := range []int{1, 3, 4, 7} {
			t.Run(fmt.Sprintf("%d shards over %d ranges", n, r), func(t *testing.T) {
				ranges := evenRanges(r)
				plan, err := Plan(ranges, n)
				if err != nil {
					t.Fatal(err)
				}
				checkPlan(t, ranges, n, plan)
				// Another process, reading the ranges in another order, plans the same.
				shuffled := append([]cosmos.PartitionKeyRange(nil), ranges...)
				rand.New(rand.NewSource(int64(n*10+r))).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
				again, err := Plan(shuffled, n)
				if err != nil || !reflect.DeepEqual(plan, again) {
					t.Fatalf("recomputed plan differs:\n%v\n%v (%v)", plan, again, err)
				}
				for i := range plan {
					one, err := (Spec{Index: i, Count: n}).Of(shuffled)
					if err != nil || !reflect.DeepEqual(one, plan[i]) {
						t.Fatalf("Of(%d/%d) = %+v, %v; want %+v", i, n, one, err, plan[i])
					}
				}
			})
		}
	}
}

// checkPlan checks what every plan promises: n shards numbered in order that tile the
// key space, whole ranges by the contract's formula when n <= R, sub-ranges of one
// range each otherwise, and estimates' shares that add up to each range.
func checkPlan(t *testing.T, ranges []cosmos.PartitionKeyRange, n int, plan []Shard) {
	t.Helper()
	if len(plan) != n {
		t.Fatalf("%d shards, want %d", len(plan), n)
	}
	if err := Tiles(intervals(plan)); err != nil {
		t.Fatalf("plan does not tile: %v\n%+v", err, plan)
	}
	rs, _ := sorted(ranges)
	R := len(rs)
	share := map[string]float64{}
	for i, s := range plan {
		if s.Index != i || s.Count != n {
			t.Fatalf("shard %d is %v", i, s.Spec)
		}
		if len(s.RangeIDs) == 0 {
			t.Fatalf("shard %d names no ranges", i)
		}
		if n <= R {
			lo, hi := i*R/n, (i+1)*R/n
			var want []string
			for _, r := range rs[lo:hi] {
				want = append(want, r.ID)
			}
			if s.SubRange || !reflect.DeepEqual(s.RangeIDs, want) {
				t.Fatalf("shard %d: ranges %v (sub-range %v), want whole ranges %v", i, s.RangeIDs, s.SubRange, want)
			}
		} else if len(s.RangeIDs) != 1 {
			t.Fatalf("shard %d: a sub-range plan's shard lies in one range, not %v", i, s.RangeIDs)
		}
		for _, r := range rs {
			share[r.ID] += s.Share(r)
		}
	}
	for id, f := range share {
		if f < 0.999999 || f > 1.000001 {
			t.Fatalf("range %s: shards' shares add up to %v, want 1", id, f)
		}
	}
}

func TestPlanBoundaries(t *testing.T) {
	cases := []struct {
		name   string
		ranges []cosmos.PartitionKeyRange
		n      int
		want   []string // min of every shard, then "FF"
		sub    bool
	}{
		{"one shard is the whole container", evenRanges(4), 1, []string{"", "FF"}, false},
		{"three shards of four ranges: the last takes two", evenRanges(4), 3, []string{"", "10", "20", "FF"}, false},
		{"one range cut in three at equal widths of the hashed key space", evenRanges(1), 3, []string{"", "1555", "2AAA", "FF"}, true},
		{"seven of four: the first three ranges cut in two", evenRanges(4), 7, []string{"", "08", "10", "18", "20", "28", "30", "FF"}, true},
		{"five ranges four shards: the last takes two", evenRanges(5), 4, []string{"", "0CCC", "1999", "2666", "FF"}, false},
		{"lower-case bounds come out upper-case", []cosmos.PartitionKeyRange{
			{ID: "a", MinInclusive: "", MaxExclusive: "1f"}, {ID: "b", MinInclusive: "1f", MaxExclusive: "FF"}}, 2, []string{"", "1F", "FF"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan, err := Plan(c.ranges, c.n)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			sub := false
			for _, s := range plan {
				got = append(got, s.Min)
				sub = sub || s.SubRange
			}
			if sub != c.sub {
				t.Fatalf("sub-ranges %v, want %v", sub, c.sub)
			}
			got = append(got, plan[len(plan)-1].Max)
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("bounds %q, want %q", got, c.want)
			}
		})
	}
}

func TestPlanRefuses(t *testing.T) {
	parentAndChild := append(evenRanges(2), cosmos.PartitionKeyRange{ID: "9", MinInclusive: "", MaxExclusive: "FF"})
	cases := []struct {
		name   string
		ranges []cosmos.PartitionKeyRange
		n      int
		err    string
	}{
		{"no shards", evenRanges(2), 0, "at least 1"},
		{"no ranges", nil, 2, "no partition key ranges"},
		{"a parent listed beside its children", parentAndChild, 2, "overlap"},
		{"a gap", []cosmos.PartitionKeyRange{{ID: "0", MinInclusive: "", MaxExclusive: "10"}, {ID: "1", MinInclusive: "20", MaxExclusive: "FF"}}, 2, "gap"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Plan(c.ranges, c.n); err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("Plan = %v; want an error with %q", err, c.err)
			}
		})
	}
	if _, err := (Spec{Index: 2, Count: 2}).Of(evenRanges(1)); err == nil {
		t.Fatal("Of(2/2): want an error")
	}
}

func TestTiles(t *testing.T) {
	cases := []struct {
		name string
		ivs  []Interval
		err  string
	}{
		{"the whole space", []Interval{{"", "FF"}}, ""},
		{"two halves", []Interval{{"", "20"}, {"20", "FF"}}, ""},
		{"bounds of different lengths and cases", []Interval{{"", "1fff"}, {"1FFF", "20"}, {"20", "ff"}}, ""},
		{"nothing", nil, "no intervals"},
		{"not from the bottom", []Interval{{"10", "FF"}}, "gap"},
		{"not to the top", []Interval{{"", "30"}}, "gap [\"30\", \"FF\")"},
		{"a gap between", []Interval{{"", "10"}, {"11", "FF"}}, "gap [\"10\", \"11\")"},
		{"an overlap", []Interval{{"", "20"}, {"10", "FF"}}, "overlap"},
		{"an empty interval", []Interval{{"", "20"}, {"20", "20"}, {"20", "FF"}}, "empty"},
		{"out of order", []Interval{{"20", "FF"}, {"", "20"}}, "gap"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Tiles(c.ivs)
			if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("Tiles = %v; want %q", err, c.err)
			}
		})
	}
}

// randomRanges are r ranges tiling ["", "FF") with random hex bounds of random lengths
// below "40", as splits leave them.
func randomRanges(rng *rand.Rand, r int) []cosmos.PartitionKeyRange {
	set := map[string]bool{}
	for len(set) < r-1 {
		n := 1 + rng.Intn(16)
		b := make([]byte, n)
		rng.Read(b)
		b[0] &= 0x3F
		s := strings.ToUpper(fmt.Sprintf("%x", b))
		if strings.Trim(s, "0") == "" {
			continue
		}
		set[s] = true
	}
	bounds := []string{""}
	for s := range set {
		bounds = append(bounds, s)
	}
	bounds = append(bounds, "FF")
	sortStrings(bounds)
	out := make([]cosmos.PartitionKeyRange, r)
	for i := range out {
		out[i] = cosmos.PartitionKeyRange{ID: fmt.Sprint(i + 7), MinInclusive: bounds[i], MaxExclusive: bounds[i+1]}
	}
	return out
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestPlanAlwaysTiles(t *testing.T) {
	rng := rand.New(rand.NewSource(28))
	for trial := 0; trial < 500; trial++ {
		r := 1 + rng.Intn(12)
		n := 1 + rng.Intn(40)
		ranges := randomRanges(rng, r)
		plan, err := Plan(ranges, n)
		if err != nil {
			t.Fatalf("%d shards of %v: %v", n, ranges, err)
		}
		checkPlan(t, ranges, n, plan)
	}
}

func FuzzPlan(f *testing.F) {
	f.Add(int64(1), uint8(4), uint8(7))
	f.Add(int64(2), uint8(1), uint8(3))
	f.Add(int64(3), uint8(5), uint8(5))
	f.Fuzz(func(t *testing.T, seed int64, r, n uint8) {
		R, N := 1+int(r%16), 1+int(n%64)
		ranges := randomRanges(rand.New(rand.NewSource(seed)), R)
		plan, err := Plan(ranges, N)
		if err != nil {
			t.Fatal(err)
		}
		checkPlan(t, ranges, N, plan)
	})
}
