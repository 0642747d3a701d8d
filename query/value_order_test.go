package query

import (
	"encoding/json"
	"math/rand"
	"slices"
	"testing"
	"unicode/utf16"
)

// The merge orders strings by UTF-16 code unit, as the SDKs do and the emulator's
// ranges sort: checked against Go's UTF-16 encoding over random strings of
// characters whose UTF-16 and code point orders differ.
func TestMergeOrdersStringsByUTF16CodeUnits(t *testing.T) {
	pieces := []string{"a", "Z", "é", "中", "\uD7FF", "\uE000", "ｚ", "Ａ", "\uFFFD", "😀", "𝄞", "\U0010FFFF", ""}
	str := func(rng *rand.Rand) string {
		s := ""
		for n := rng.Intn(4); n > 0; n-- {
			s += pieces[rng.Intn(len(pieces))]
		}
		return s
	}
	val := func(s string) value {
		raw, _ := json.Marshal(s)
		v, err := parseValue(raw)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if c := compareValues(val("😀"), val("ｚ")); c >= 0 {
		t.Fatalf(`"😀" (D83D DE00) must sort before "ｚ" (FF5A): compare = %d`, c)
	}
	rng := rand.New(rand.NewSource(5))
	for i := 0; i < 20000; i++ {
		a, b := str(rng), str(rng)
		want := slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
		got := compareValues(val(a), val(b))
		if got < -1 || got > 1 || got != want {
			t.Fatalf("compareValues(%+q, %+q) = %d, want %d", a, b, got, want)
		}
	}
}

// Arrays tie with arrays and objects with objects, whatever they hold: the service
// orders them by a hash of its own, the emulator by creation, and the merge must take
// either.
func TestMergeTiesArraysWithArraysAndObjectsWithObjects(t *testing.T) {
	vals := []string{`[]`, `[1]`, `["z",{"a":1}]`, `{}`, `{"b":[2]}`, `{"a":1}`, `"s"`, `null`}
	kinds := map[string]kind{}
	for _, s := range vals {
		v, err := parseValue(json.RawMessage(s))
		if err != nil {
			t.Fatal(err)
		}
		kinds[s] = v.k
	}
	for _, a := range vals {
		for _, b := range vals {
			va, _ := parseValue(json.RawMessage(a))
			vb, _ := parseValue(json.RawMessage(b))
			c := compareValues(va, vb)
			switch {
			case kinds[a] == kinds[b] && (kinds[a] == kindArray || kinds[a] == kindObject):
				if c != 0 {
					t.Errorf("%s and %s compare %d, want a tie", a, b, c)
				}
			case kinds[a] < kinds[b] && c >= 0, kinds[a] > kinds[b] && c <= 0:
				t.Errorf("%s and %s compare %d against their types' order", a, b, c)
			}
		}
	}
	if _, err := parseValue(json.RawMessage(`[1,`)); err == nil {
		t.Error("a broken array parsed")
	}
}
