package cosmos

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
)

func TestHashV2MatchesPublishedVectors(t *testing.T) {
	cases := map[string]string{
		"":     "B2E9366E637A71B4E710384B2F4970A0",
		"asdf": "608BF1D598F5B63AD5520F04FE58C5E8",
	}
	for in, want := range cases {
		if got := hashV2(Component{Kind: KindString, Str: in}); got != want {
			t.Errorf("hash(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestEffectivePartitionKeyMasksTopBits(t *testing.T) {
	for in, prefix := range map[string]string{"": "32E9", "asdf": "208B"} {
		pk, _ := PK(in)
		if got := EffectivePartitionKey(pk); !strings.HasPrefix(got, prefix) || len(got) != 32 {
			t.Errorf("epk(%q) = %s, want prefix %s", in, got, prefix)
		}
	}
	pk, _ := PK("a", 3.0)
	if got := EffectivePartitionKey(pk); len(got) != 64 {
		t.Errorf("hierarchical epk has %d hex digits, want 64", len(got))
	}
}

func TestEvenRangeBoundaries(t *testing.T) {
	got := strings.Join(EvenRangeBoundaries(4), ",")
	if got != ",10,20,30,FF" {
		t.Fatalf("boundaries = %s", got)
	}
	b := EvenRangeBoundaries(3)
	if !sort.StringsAreSorted(b[:len(b)-1]) || len(b) != 4 {
		t.Fatalf("boundaries(3) = %v", b)
	}
}

func TestKeysSpreadOverFourRanges(t *testing.T) {
	bounds := EvenRangeBoundaries(4)
	var ranges []PartitionKeyRange
	for i := 0; i < 4; i++ {
		ranges = append(ranges, PartitionKeyRange{ID: string(rune('0' + i)), MinInclusive: bounds[i], MaxExclusive: bounds[i+1]})
	}
	counts := map[string]int{}
	for i := 0; i < 4000; i++ {
		pk, _ := PK("tenant-" + string(rune('a'+i%26)) + strings.Repeat("x", i%7) + string(rune('0'+i%10)) + string(rune(i)))
		r, ok := RangeFor(EffectivePartitionKey(pk), ranges)
		if !ok {
			t.Fatalf("no range for key %d", i)
		}
		counts[r.ID]++
	}
	for id, n := range counts {
		if n < 700 || n > 1300 {
			t.Errorf("range %s holds %d of 4000 keys; the hash should spread them evenly", id, n)
		}
	}
}

func TestPartitionKeyJSONRoundTrip(t *testing.T) {
	cases := []string{`["p1"]`, `["a",3]`, `[null]`, `[{}]`, `[true]`, `["caf\u00e9"]`, `[1.5]`}
	for _, in := range cases {
		pk, err := ParsePartitionKeyJSON(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := pk.JSON(); got != in {
			t.Errorf("round trip %s → %s", in, got)
		}
	}
	pk, _ := ParsePartitionKeyJSON(`["café"]`)
	if got := pk.JSON(); got != `["caf\u00e9"]` {
		t.Errorf("non-ASCII must be escaped for a header: %s", got)
	}
}

func TestPartitionKeyIdentityTreatsEqualNumbersAlike(t *testing.T) {
	a, _ := ParsePartitionKeyJSON(`[1]`)
	b, _ := ParsePartitionKeyJSON(`[1.0]`)
	c, _ := ParsePartitionKeyJSON(`["1"]`)
	if !a.Equal(b) || a.Equal(c) {
		t.Fatal("1 and 1.0 are one key; \"1\" is another")
	}
}

func TestParsePartitionKeyJSONRejectsMalformed(t *testing.T) {
	for _, in := range []string{``, `p1`, `"p1"`, `[]`, `[["x"]]`, `[{"a":1}]`, `["a"] x`, `{`} {
		if _, err := ParsePartitionKeyJSON(in); err == nil {
			t.Errorf("accepted %q", in)
		}
	}
}

func FuzzParsePartitionKeyJSON(f *testing.F) {
	for _, s := range []string{`["p1"]`, `["a",3]`, `[null]`, `[{}]`, `[1e400]`, `["\ud800"]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pk, err := ParsePartitionKeyJSON(s)
		if err != nil {
			return
		}
		again, err := ParsePartitionKeyJSON(pk.JSON())
		if err != nil || !again.Equal(pk) {
			t.Fatalf("%q → %s does not parse back to the same key: %v", s, pk.JSON(), err)
		}
		_ = EffectivePartitionKey(pk)
	})
}

// A string key's header text is the same with or without the plain-ASCII shortcut:
// every ASCII character alone and in company, HTML characters, escapes, non-ASCII.
func TestPartitionKeyStringHeaderTextIsJSONMarshalsInASCII(t *testing.T) {
	slow := func(s string) string {
		enc, _ := json.Marshal(s)
		var b strings.Builder
		for _, r := range string(enc) {
			switch {
			case r < 0x80:
				b.WriteRune(r)
			case r > 0xFFFF:
				r -= 0x10000
				fmt.Fprintf(&b, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
			default:
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		}
		return b.String()
	}
	cases := []string{"", "tenant-1", "a b", "<&>", `q"uote`, `back\slash`, "é", "😀", "\u2028", "\x7f", "tab\t"}
	for c := 0; c < 0x80; c++ {
		cases = append(cases, string(rune(c)), "key"+string(rune(c))+"end")
	}
	for _, s := range cases {
		var b strings.Builder
		writeASCIIString(&b, s)
		if want := slow(s); b.String() != want {
			t.Errorf("%q: %s, want %s", s, b.String(), want)
		}
	}
}
