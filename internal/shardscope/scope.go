// Package shardscope is what a state file records of the part of a container a sharded
// read (--shard i/N or --feed-range) covers: the shard's spec, its effective partition
// key interval, and the partition key ranges its plan was computed from. A resumed
// shard reads the recorded interval, never a new plan (the ranges may have split since
// the first start); a state of another shard, or of another plan, is refused. It owns no
// planning (package shard) and no I/O.
package shardscope

import (
	"fmt"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// Range is one partition key range a plan was computed from.
type Range struct {
	ID  string `json:"id"`
	Min string `json:"min"`
	Max string `json:"max"`
}

// Scope is one shard's share of a container: [Min, Max) of the effective partition
// keys ("" the lowest, "FF" above the highest).
type Scope struct {
	// Index and Count are the shard's --shard i/N; Count is 0 for a --feed-range.
	Index int    `json:"index"`
	Count int    `json:"count,omitempty"`
	Min   string `json:"min"`
	Max   string `json:"max"`
	// Ranges are the container's partition key ranges the plan was computed from
	// (--shard), or those the feed range overlapped at the first start.
	Ranges []Range `json:"ranges,omitempty"`
	// SubRange says the interval cuts a physical range: it is read with
	// x-ms-start-epk/x-ms-end-epk, which costs more request units.
	SubRange bool `json:"sub_range,omitempty"`
}

// EPK is the scope's interval.
func (s *Scope) EPK() cosmos.EPKRange { return cosmos.EPKRange{Min: s.Min, Max: s.Max} }

// Spec is the --shard value of the scope ("" for a --feed-range).
func (s *Scope) Spec() string {
	if s == nil || s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Flag is the flag that asks for the scope, as a user would type it.
func (s *Scope) Flag() string {
	if s == nil {
		return "no --shard or --feed-range"
	}
	if s.Count > 0 {
		return "--shard " + s.Spec()
	}
	return fmt.Sprintf(`--feed-range '{"Range":{"min":%q,"max":%q}}'`, s.Min, s.Max)
}

// String names the scope for a person: shard 2/4 ["55", "AA").
func (s *Scope) String() string {
	if s == nil {
		return "the whole container"
	}
	iv := fmt.Sprintf("[%q, %q)", s.Min, s.Max)
	if s.Count > 0 {
		return fmt.Sprintf("shard %s %s", s.Spec(), iv)
	}
	return "feed range " + iv
}

// Same reports whether asked (what the flags give: a spec, or an interval) is the scope
// recorded as have. A shard is the same by its spec (its interval is recorded, not
// recomputed); a feed range by its interval.
func Same(have, asked *Scope) bool {
	switch {
	case have == nil || asked == nil:
		return have == nil && asked == nil
	case asked.Count > 0 || have.Count > 0:
		return have.Count == asked.Count && have.Index == asked.Index
	}
	return strings.EqualFold(have.Min, asked.Min) && strings.EqualFold(have.Max, asked.Max)
}

// Mismatch is the one line that refuses a state of another scope than asked: it names
// both and the fix.
func Mismatch(path string, have, asked *Scope) string {
	fix := "run it without --shard and --feed-range"
	if have != nil {
		fix = "resume it with " + have.Flag()
	}
	return fmt.Sprintf("state file %s is the position of %s, and this run reads %s: %s, or give this run a --state file of its own",
		path, have, asked, fix)
}

// Cuts reports whether the interval cuts any of ranges: a range that holds keys on both
// sides of one of its bounds is read as a sub-range.
func Cuts(iv cosmos.EPKRange, ranges []cosmos.PartitionKeyRange) bool {
	for _, r := range iv.Overlapping(ranges) {
		if _, narrowed := iv.Within(r); narrowed {
			return true
		}
	}
	return false
}

// RangesOf are the ranges of all that overlap iv, as a scope records them.
func RangesOf(iv cosmos.EPKRange, all []cosmos.PartitionKeyRange) []Range {
	var out []Range
	for _, r := range iv.Overlapping(all) {
		out = append(out, Range{ID: r.ID, Min: r.MinInclusive, Max: r.MaxExclusive})
	}
	return out
}
