package shard

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// Interval is the effective partition keys [Min, Max), upper-case hex; "" and "FF" are
// the ends.
type Interval struct{ Min, Max string }

// Shard is one shard's part of a plan: its interval, the ids of the physical ranges it
// was computed from (in EPK order), and whether it is less than a whole range (N above
// the range count: reading it costs a range's worth of RU per page for a part of its
// items, Azure/azure-sdk-for-java#39438).
type Shard struct {
	Spec
	Interval
	RangeIDs []string
	SubRange bool
}

// Plan splits the container whose current partition key ranges are given into n shards
// whose intervals tile ["", "FF") in index order. It is a pure function of the ranges
// (their order does not matter), so every process computes the same plan:
//   - n <= R ranges: shard i gets the ranges [floor(i*R/n), floor((i+1)*R/n)) in EPK
//     order, contiguous whole physical ranges;
//   - n > R: range r is cut into k_r pieces at EPK points of equal width, the k_r as even
//     as possible (the first n mod R ranges one more), the pieces numbered in EPK order.
//
// The ranges must tile ["", "FF") themselves (a read during a split may list a parent
// beside its children: read again).
func Plan(ranges []cosmos.PartitionKeyRange, n int) ([]Shard, error) {
	if n < 1 {
		return nil, fmt.Errorf("shard count %d: want at least 1", n)
	}
	rs, err := sorted(ranges)
	if err != nil {
		return nil, err
	}
	R := len(rs)
	out := make([]Shard, 0, n)
	if n <= R {
		for i := 0; i < n; i++ {
			lo, hi := i*R/n, (i+1)*R/n
			s := Shard{Spec: Spec{Index: i, Count: n}, Interval: Interval{Min: rs[lo].MinInclusive, Max: rs[hi-1].MaxExclusive}}
			for _, r := range rs[lo:hi] {
				s.RangeIDs = append(s.RangeIDs, r.ID)
			}
			out = append(out, s)
		}
		return out, nil
	}
	for j, r := range rs {
		k := n / R
		if j < n%R {
			k++
		}
		cuts, err := cut(r.MinInclusive, r.MaxExclusive, k)
		if err != nil {
			return nil, fmt.Errorf("partition key range %s: %w", r.ID, err)
		}
		bounds := append(append([]string{r.MinInclusive}, cuts...), r.MaxExclusive)
		for p := 0; p < k; p++ {
			out = append(out, Shard{
				Spec:     Spec{Index: len(out), Count: n},
				Interval: Interval{Min: bounds[p], Max: bounds[p+1]},
				RangeIDs: []string{r.ID},
				SubRange: k > 1,
			})
		}
	}
	return out, nil
}

// Of is the shard s of the plan for ranges: Plan(ranges, s.Count)[s.Index].
func (s Spec) Of(ranges []cosmos.PartitionKeyRange) (Shard, error) {
	if s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
		return Shard{}, fmt.Errorf("shard %d/%d: want i/N with 0 <= i < N", s.Index, s.Count)
	}
	plan, err := Plan(ranges, s.Count)
	if err != nil {
		return Shard{}, err
	}
	return plan[s.Index], nil
}

// Share is the part of the range r's EPK width that iv covers, from 0 to 1: an estimate
// of the part of r's documents and storage in iv (keys hash uniformly over a range).
func (iv Interval) Share(r cosmos.PartitionKeyRange) float64 {
	return fraction(strings.ToUpper(iv.Min), strings.ToUpper(iv.Max), strings.ToUpper(r.MinInclusive), strings.ToUpper(r.MaxExclusive))
}

// sorted returns the ranges in EPK order, upper-cased, checking that they tile
// ["", "FF").
func sorted(ranges []cosmos.PartitionKeyRange) ([]cosmos.PartitionKeyRange, error) {
	if len(ranges) == 0 {
		return nil, fmt.Errorf("no partition key ranges to plan from")
	}
	rs := make([]cosmos.PartitionKeyRange, len(ranges))
	ivs := make([]Interval, len(ranges))
	for i, r := range ranges {
		r.MinInclusive, r.MaxExclusive = strings.ToUpper(r.MinInclusive), strings.ToUpper(r.MaxExclusive)
		rs[i] = r
	}
	sort.SliceStable(rs, func(a, b int) bool { return rs[a].MinInclusive < rs[b].MinInclusive })
	for i, r := range rs {
		ivs[i] = Interval{Min: r.MinInclusive, Max: r.MaxExclusive}
	}
	if err := Tiles(ivs); err != nil {
		return nil, fmt.Errorf("the partition key ranges do not cover the container once (a split under way?): %w; read them again", err)
	}
	return rs, nil
}

// Tiles returns nil iff the intervals, in the order given, tile ["", "FF") exactly: the
// first starts at "", each starts where the one before ends, the last ends at "FF", and
// none is empty. The error names the first gap, overlap or empty interval.
func Tiles(ivs []Interval) error {
	if len(ivs) == 0 {
		return fmt.Errorf("no intervals: nothing covers [\"\", \"FF\")")
	}
	at := Bottom
	for i, iv := range ivs {
		lo, hi := strings.ToUpper(iv.Min), strings.ToUpper(iv.Max)
		switch c := strings.Compare(lo, at); {
		case c > 0:
			return fmt.Errorf("gap [%q, %q) before interval %d [%q, %q)", at, lo, i, lo, hi)
		case c < 0:
			return fmt.Errorf("overlap [%q, %q) at interval %d [%q, %q)", lo, at, i, lo, hi)
		}
		if strings.Compare(lo, hi) >= 0 {
			return fmt.Errorf("interval %d [%q, %q) is empty", i, lo, hi)
		}
		at = hi
	}
	if at != Top {
		return fmt.Errorf("gap [%q, \"FF\") after the last interval", at)
	}
	return nil
}
