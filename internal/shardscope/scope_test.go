package shardscope

import (
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

func TestSame(t *testing.T) {
	s04 := &Scope{Index: 0, Count: 4, Min: "", Max: "40"}
	for _, tc := range []struct {
		name        string
		have, asked *Scope
		want        bool
	}{
		{"no shard either side", nil, nil, true},
		{"a shard resumes by its spec, its interval recorded", s04, &Scope{Index: 0, Count: 4}, true},
		{"another index", s04, &Scope{Index: 1, Count: 4}, false},
		{"another plan", s04, &Scope{Index: 0, Count: 3}, false},
		{"a sharded state without a shard", s04, nil, false},
		{"an unsharded state with a shard", nil, s04, false},
		{"a feed range by its interval, case aside", &Scope{Min: "0a", Max: "FF"}, &Scope{Min: "0A", Max: "ff"}, true},
		{"another feed range", &Scope{Min: "", Max: "80"}, &Scope{Min: "", Max: "7F"}, false},
		{"a feed range is not a shard of the same interval", &Scope{Min: "", Max: "40"}, s04, false},
	} {
		if got := Same(tc.have, tc.asked); got != tc.want {
			t.Errorf("%s: Same = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestMismatchNamesBothAndTheFix(t *testing.T) {
	msg := Mismatch("s.state", &Scope{Index: 2, Count: 4, Min: "80", Max: "C0"}, &Scope{Index: 3, Count: 4})
	for _, want := range []string{"s.state", `shard 2/4 ["80", "C0")`, "shard 3/4", "resume it with --shard 2/4", "--state file of its own"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	if msg := Mismatch("s.state", nil, &Scope{Index: 0, Count: 2}); !strings.Contains(msg, "the whole container") || !strings.Contains(msg, "without --shard") {
		t.Errorf("an unsharded state: %q", msg)
	}
}

func TestCuts(t *testing.T) {
	ranges := []cosmos.PartitionKeyRange{{ID: "0", MinInclusive: "", MaxExclusive: "55"}, {ID: "1", MinInclusive: "55", MaxExclusive: "AA"}, {ID: "2", MinInclusive: "AA", MaxExclusive: "FF"}}
	for _, tc := range []struct {
		iv   cosmos.EPKRange
		cuts bool
		ids  int
	}{
		{cosmos.EPKRange{Min: "", Max: "FF"}, false, 3},
		{cosmos.EPKRange{Min: "55", Max: "AA"}, false, 1},
		{cosmos.EPKRange{Min: "55", Max: "80"}, true, 1},
		{cosmos.EPKRange{Min: "2A", Max: "AA"}, true, 2},
	} {
		if got := Cuts(tc.iv, ranges); got != tc.cuts {
			t.Errorf("Cuts(%v) = %v, want %v", tc.iv, got, tc.cuts)
		}
		if got := RangesOf(tc.iv, ranges); len(got) != tc.ids {
			t.Errorf("RangesOf(%v) = %v, want %d ranges", tc.iv, got, tc.ids)
		}
	}
}
