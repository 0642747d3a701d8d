package cosmos

import (
	"fmt"
	"testing"
)

// A prefix's range holds the effective partition key of every key that starts with it,
// whatever the other values, and of no other key.
func TestPrefixRangeHoldsExactlyThePrefixsKeys(t *testing.T) {
	acme, _ := PK("acme")
	span := PrefixRange(acme)
	if span.Min != EffectivePartitionKey(acme) || span.Max != span.Min+"FF" || len(span.Min) != 32 {
		t.Fatalf("PrefixRange(acme) = %+v", span)
	}
	holds := func(pk PartitionKey) bool {
		e := EffectivePartitionKey(pk)
		return e >= span.Min && e < span.Max
	}
	for i, second := range []any{"", "user-7", 42.0, true, false, nil, "ü"} {
		pk, _ := PK("acme", second)
		if !holds(pk) {
			t.Errorf("key %s (%d) is not in the prefix's range", pk, i)
		}
		deeper, _ := PK("acme", second, fmt.Sprint(i))
		if !holds(deeper) {
			t.Errorf("key %s is not in the prefix's range", deeper)
		}
	}
	for _, first := range []any{"acm", "acme ", "Acme", "acmf", 1.0, nil} {
		pk, _ := PK(first, "user-7")
		if holds(pk) {
			t.Errorf("key %s is in the range of prefix [\"acme\"]", pk)
		}
	}
	two, _ := PK("acme", "user-7")
	if s := PrefixRange(two); s.Min != EffectivePartitionKey(two) || len(s.Min) != 64 {
		t.Errorf("a two-value prefix's range starts at %s", s.Min)
	}
}

func TestPrefixesAreToldFromWholeKeys(t *testing.T) {
	hash := PartitionKeyDefinition{Paths: []string{"/pk"}, Kind: PartitionKindHash}
	multi := PartitionKeyDefinition{Paths: []string{"/tenant", "/user", "/session"}, Kind: PartitionKindMultiHash}
	pk := func(v ...any) PartitionKey { p, _ := PK(v...); return p }
	for _, tc := range []struct {
		name            string
		def             PartitionKeyDefinition
		key             PartitionKey
		prefix, tooLong bool
	}{
		{"a key of a Hash container", hash, pk("a"), false, false},
		{"two values on a Hash container", hash, pk("a", "b"), false, true},
		{"the none key on a Hash container", hash, NonePK, false, false},
		{"one value of three paths", multi, pk("a"), true, false},
		{"two values of three paths", multi, pk("a", "b"), true, false},
		{"three values of three paths", multi, pk("a", "b", "c"), false, false},
		{"four values of three paths", multi, pk("a", "b", "c", "d"), false, true},
		{"the none key on a hierarchical container", multi, NonePK, false, false},
		{"null, a prefix", multi, pk(nil), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.def.IsPrefix(tc.key); got != tc.prefix {
				t.Errorf("IsPrefix(%s) = %v", tc.key, got)
			}
			if got := tc.def.TooLong(tc.key); got != tc.tooLong {
				t.Errorf("TooLong(%s) = %v", tc.key, got)
			}
		})
	}
}

// A range that reaches beyond the span is narrowed to its part of it; one inside the
// span is read whole; ranges outside it are not read at all.
func TestRangesOfASpan(t *testing.T) {
	span := EPKRange{Min: "1B2C", Max: "1B2CFF"}
	rng := func(id, lo, hi string) PartitionKeyRange {
		return PartitionKeyRange{ID: id, MinInclusive: lo, MaxExclusive: hi}
	}
	ranges := []PartitionKeyRange{
		rng("0", "", "10"), rng("1", "10", "1B2C40"), rng("2", "1B2C40", "1B2C80"),
		rng("3", "1B2C80", "20"), rng("4", "20", "FF"),
	}
	want := map[string]struct {
		part     EPKRange
		narrowed bool
	}{
		"1": {EPKRange{"1B2C", "1B2C40"}, true},
		"2": {EPKRange{"1B2C40", "1B2C80"}, false},
		"3": {EPKRange{"1B2C80", "1B2CFF"}, true},
	}
	got := span.Overlapping(ranges)
	if len(got) != len(want) {
		t.Fatalf("overlapping %v, want ranges 1, 2, 3", got)
	}
	for _, r := range got {
		part, narrowed := span.Within(r)
		if w := want[r.ID]; part != w.part || narrowed != w.narrowed {
			t.Errorf("range %s: %v narrowed %v, want %v narrowed %v", r.ID, part, narrowed, w.part, w.narrowed)
		}
		if !span.Contains(part) {
			t.Errorf("range %s: part %v is not inside the span", r.ID, part)
		}
	}
	// A span inside one range: that range, narrowed on both sides. Lower-case hex from a
	// hand-edited file compares as the service's upper case.
	inner := EPKRange{Min: "05ab", Max: "05abFF"}
	if got := inner.Overlapping(ranges); len(got) != 1 || got[0].ID != "0" {
		t.Fatalf("inner span overlaps %v", got)
	}
	if part, narrowed := inner.Within(ranges[0]); !narrowed || part != inner {
		t.Errorf("inner span within range 0: %v %v", part, narrowed)
	}
	// The last range ends at "FF", above every key.
	top := EPKRange{Min: "3F00", Max: "3F00FF"}
	if got := top.Overlapping(ranges); len(got) != 1 || got[0].ID != "4" {
		t.Fatalf("top span overlaps %v", got)
	}
}
