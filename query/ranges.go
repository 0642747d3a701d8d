package query

import (
	"fmt"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// epkRange is a partition key range as the pipeline tracks it: [Min, Max) of the
// effective partition key space, as upper-case hex ("" is the start, "FF" the end).
type epkRange struct {
	ID  string `json:"id"`
	Min string `json:"min"`
	Max string `json:"max"`
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

// childrenOf are the current ranges that replaced gone, which split: every range that
// overlaps it, each of which must lie within it. A range that covers more than gone was
// merged with a neighbour, and its pages would repeat the neighbour's items: that is
// refused rather than answered wrong.
func childrenOf(gone epkRange, all []cosmos.PartitionKeyRange) ([]epkRange, error) {
	var out []epkRange
	for _, pr := range all {
		r := rangeOf(pr)
		if epkCompare(r.Min, gone.Max) >= 0 || epkCompare(r.Max, gone.Min) <= 0 {
			continue
		}
		if epkCompare(r.Min, gone.Min) < 0 || epkCompare(r.Max, gone.Max) > 0 {
			return nil, fmt.Errorf("partition key range %s was merged into range %s [%s, %s) while the query ran; run the query again", gone.ID, r.ID, r.Min, r.Max)
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("partition key range %s is gone and no current range covers [%s, %s)", gone.ID, gone.Min, gone.Max)
	}
	return out, nil
}
