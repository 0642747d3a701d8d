package query

import (
	"fmt"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// epkRange is what one stream of pages reads: partition key range ID, or, when Scoped,
// only the effective partition keys [Min, Max) of it. Min and Max are upper-case hex (""
// is the start, "FF" the end). A range is scoped once it was merged into a wider one:
// its pages go on in the merged range, narrowed to its own keys by x-ms-start-epk and
// x-ms-end-epk, as the JS SDK does (@azure/cosmos 4.10, parallelQueryExecutionContextBase
// _handleContinuationTokenMerge keeps the old EPK range and continuation and targets
// the covering range with EPK headers).
type epkRange struct {
	ID     string `json:"id"`
	Min    string `json:"min"`
	Max    string `json:"max"`
	Scoped bool   `json:"x,omitempty"`
	// RMin and RMax are range ID's own bounds when Scoped (older tokens lack them): a
	// range that replaced this one and reaches beyond them is a merge, not a split.
	RMin string `json:"rn,omitempty"`
	RMax string `json:"rx,omitempty"`
}

// bounds are the range's own bounds, as far as the pipeline knows them.
func (r epkRange) bounds() (string, string) {
	if r.RMax != "" {
		return r.RMin, r.RMax
	}
	return r.Min, r.Max
}

func rangeOf(r cosmos.PartitionKeyRange) epkRange {
	return epkRange{ID: r.ID, Min: r.MinInclusive, Max: r.MaxExclusive}
}

// epkLess compares effective partition keys; the service's hex is upper-case, a query
// plan's may not be.
func epkCompare(a, b string) int { return strings.Compare(strings.ToUpper(a), strings.ToUpper(b)) }

// overlaps reports whether the partition key range r holds any key of the query range q.
func overlaps(r epkRange, q queryRange) bool {
	// q ends before r starts?
	switch c := epkCompare(q.Max, r.Min); {
	case c < 0, c == 0 && !q.MaxInclusive:
		return false
	}
	// q starts at or after r's (exclusive) end?
	return epkCompare(q.Min, r.Max) < 0
}

// targetRanges are the partition key ranges that hold any key of the plan's query ranges,
// in key order.
func targetRanges(all []cosmos.PartitionKeyRange, qrs []queryRange) []epkRange {
	var out []epkRange
	for _, pr := range all {
		r := rangeOf(pr)
		for _, q := range qrs {
			if overlaps(r, q) {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// childrenOf are what replaced gone, which split or was merged: for every current range
// that overlaps it, the part of gone's keys the range holds. A child that holds only
// part of its range (gone was merged into a wider range) is scoped to gone's keys, so
// that its pages, which go on from gone's continuation, hold gone's items only.
func childrenOf(gone epkRange, all []cosmos.PartitionKeyRange) ([]epkRange, error) {
	var out []epkRange
	for _, pr := range all {
		r := rangeOf(pr)
		if epkCompare(r.Min, gone.Max) >= 0 || epkCompare(r.Max, gone.Min) <= 0 {
			continue
		}
		child := r
		if epkCompare(child.Min, gone.Min) < 0 {
			child.Min, child.Scoped = gone.Min, true
		}
		if epkCompare(child.Max, gone.Max) > 0 {
			child.Max, child.Scoped = gone.Max, true
		}
		if child.Scoped {
			child.RMin, child.RMax = r.Min, r.Max
		}
		out = append(out, child)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("partition key range %s is gone and no current range covers [%s, %s)", gone.ID, gone.Min, gone.Max)
	}
	for i := 1; i < len(out); i++ {
		if epkCompare(out[i-1].Max, out[i].Min) != 0 {
			return nil, fmt.Errorf("the partition key ranges that replaced range %s leave [%s, %s) uncovered: re-reading them did not give a whole key space", gone.ID, out[i-1].Max, out[i].Min)
		}
	}
	if epkCompare(out[0].Min, gone.Min) != 0 || epkCompare(out[len(out)-1].Max, gone.Max) != 0 {
		return nil, fmt.Errorf("the partition key ranges that replaced range %s do not cover [%s, %s)", gone.ID, gone.Min, gone.Max)
	}
	return out, nil
}

// merged reports whether gone was merged into a wider range rather than split: some
// range that replaced it reaches beyond gone's own bounds (not merely beyond the keys
// it was narrowed to, as a prefix's range is).
func merged(gone epkRange, children []epkRange) bool {
	lo, hi := gone.bounds()
	for _, c := range children {
		clo, chi := c.bounds()
		if epkCompare(clo, lo) < 0 || epkCompare(chi, hi) > 0 {
			return true
		}
	}
	return false
}

// prefixRanges narrows targets to the keys of a hierarchical partition key prefix,
// span (cosmos.PrefixRange): the ranges that hold any of them, each scoped to the part
// of span it holds when it reaches beyond span, so that its pages, narrowed by
// x-ms-start-epk and x-ms-end-epk, hold the prefix's items only. A range that lies
// inside span is read whole, as the JS SDK reads a feed range (changeFeedUtils.js
// extractOverlappingRanges). The scope is the range's own from then on: a token carries
// it, and a split or merge narrows the children to it (childrenOf).
func prefixRanges(targets []epkRange, span cosmos.EPKRange) []epkRange {
	var out []epkRange
	for _, t := range targets {
		pr := cosmos.PartitionKeyRange{ID: t.ID, MinInclusive: t.Min, MaxExclusive: t.Max}
		if !span.Overlaps(pr) {
			continue
		}
		part, narrowed := span.Within(pr)
		r := epkRange{ID: t.ID, Min: part.Min, Max: part.Max, Scoped: t.Scoped || narrowed}
		if r.Scoped {
			r.RMin, r.RMax = t.bounds()
		}
		out = append(out, r)
	}
	return out
}
