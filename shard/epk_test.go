package shard

import (
	"math/rand"
	"strings"
	"testing"
)

func TestMidpoint(t *testing.T) {
	cases := []struct {
		name, min, max, want string
	}{
		{"the whole space halves the hashed keys' space", "", "FF", "20"},
		{"a lower half", "", "20", "10"},
		{"an upper half", "20", "FF", "30"},
		{"adjacent bytes take another byte", "3F", "FF", "3F80"},
		{"bounds of different lengths", "1F", "2000", "1F80"},
		{"a trailing 00 is kept where trimming would leave the range", "20", "2001", "200080"},
		{"just above the bottom", "", "01", "0080"},
		{"lower case in, upper case out", "0a", "0c", "0B"},
		{"full-length hashed keys", "0BE05C2DB3B9A0C3470AEFD66C3DEB2A", "0BE05C2DB3B9A0C3470AEFD66C3DEB2C", "0BE05C2DB3B9A0C3470AEFD66C3DEB2B"},
		{"a range starting above the hashed keys is cut up to FF", "40", "FF", "9F80"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Midpoint(c.min, c.max)
			if err != nil || got != c.want {
				t.Fatalf("Midpoint(%q, %q) = %q, %v; want %q", c.min, c.max, got, err, c.want)
			}
		})
	}
	for _, bad := range [][2]string{{"20", "10"}, {"20", "20"}, {"", ""}, {"xy", "FF"}, {"", "G0"}} {
		if got, err := Midpoint(bad[0], bad[1]); err == nil {
			t.Errorf("Midpoint(%q, %q) = %q; want an error", bad[0], bad[1], got)
		}
	}
}

func TestMidpointStrictlyInside(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for trial := 0; trial < 2000; trial++ {
		ranges := randomRanges(rng, 2+rng.Intn(3))
		for _, r := range ranges {
			m, err := Midpoint(r.MinInclusive, r.MaxExclusive)
			if err != nil {
				t.Fatalf("Midpoint(%q, %q): %v", r.MinInclusive, r.MaxExclusive, err)
			}
			if !(strings.Compare(r.MinInclusive, m) < 0 && strings.Compare(m, r.MaxExclusive) < 0) {
				t.Fatalf("Midpoint(%q, %q) = %q, not strictly inside", r.MinInclusive, r.MaxExclusive, m)
			}
			if f := (Interval{r.MinInclusive, m}).Share(r); f < 0.45 || f > 0.55 {
				t.Fatalf("Midpoint(%q, %q) = %q cuts off %v of the range", r.MinInclusive, r.MaxExclusive, m, f)
			}
		}
	}
}
