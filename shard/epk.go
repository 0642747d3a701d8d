package shard

import (
	"fmt"
	"math/big"
	"strings"
)

// Bottom and Top are the ends of the effective partition key space: every key's EPK lies
// in [Bottom, Top).
const (
	Bottom = ""
	Top    = "FF"
)

// keyTop is the EPK digits the top stands for when cutting: every hashed key's first
// byte is masked below 0x40 (cosmos.EffectivePartitionKey; cosmos.EvenRangeBoundaries
// divides the same 0x00–0x3F space; the SDKs split a hash V2 feed range up to
// MaxHashV2Value 0x3FFF…FF: Azure/azure-sdk-for-java
// sdk/cosmos/azure-cosmos/src/main/java/com/azure/cosmos/implementation/feedranges/FeedRangeInternal.java
// trySplitWithHashV2 at 0185a11f4cb83ba9b0e86cbbb48d3781cd5c53a2), so cutting [x, "FF") as though "FF" were 0xFF would
// put every key into the lower pieces. A range starting at or above "40" (not one a
// hashed key reaches) is cut up to a literal "FF".
const keyTop = "40"

// Midpoint is the effective partition key halfway between min and max, strictly inside
// (min, max) in the order the service compares EPKs (as strings). Both bounds are hex;
// they may have different lengths ("" is the bottom, "FF" the top): they are padded with
// '0's to one length, and with two more digits whenever the two are adjacent at that
// length. Trailing "00" is trimmed only where the result stays strictly inside.
func Midpoint(min, max string) (string, error) {
	cuts, err := cut(min, max, 2)
	if err != nil {
		return "", err
	}
	return cuts[0], nil
}

// cut returns the k-1 EPKs that divide [min, max) into k pieces of (nearly) equal width,
// ascending and strictly inside; k < 2 returns none.
func cut(min, max string, k int) ([]string, error) {
	min, max = strings.ToUpper(min), strings.ToUpper(max)
	if err := checkHex(min); err != nil {
		return nil, err
	}
	if err := checkHex(max); err != nil {
		return nil, err
	}
	if max == "" {
		return nil, fmt.Errorf("EPK range [%q, %q) is empty: \"\" is the bottom, \"FF\" the top", min, max)
	}
	if strings.Compare(min, max) >= 0 {
		return nil, fmt.Errorf("EPK range [%q, %q) is empty: its min is not below its max", min, max)
	}
	if k < 2 {
		return nil, nil
	}
	hi := max
	if max == Top && strings.Compare(min, keyTop) < 0 {
		hi = keyTop
	}
	width := len(min)
	if len(hi) > width {
		width = len(hi)
	}
	if width < 2 {
		width = 2
	}
	if width%2 == 1 {
		width++
	}
	// Widen by one byte at a time until every cut lands on a distinct point strictly
	// inside (a range two bytes wide cannot hold seven distinct cuts) and the pieces are
	// even to 1/256. 64 bytes is far
	// beyond any EPK (a hierarchical key's is 16 bytes per level, three levels at most).
	for ; width <= 128; width += 2 {
		a, b := num(min, width), num(hi, width)
		span := new(big.Int).Sub(b, a)
		if span.Cmp(big.NewInt(int64(k)*256)) < 0 && width < 128 {
			// Cut at a resolution of 1/256 of a piece at least, so that pieces of a
			// narrow range are as even as those of a wide one.
			continue
		}
		out := make([]string, 0, k-1)
		for j := 1; j < k; j++ {
			p := new(big.Int).Mul(span, big.NewInt(int64(j)))
			p.Quo(p, big.NewInt(int64(k)))
			p.Add(p, a)
			out = append(out, hexOf(p, width))
		}
		trim(out, min, max)
		return out, nil
	}
	return nil, fmt.Errorf("EPK range [%q, %q) is too narrow to cut into %d pieces", min, max, k)
}

// trim drops trailing "00" pairs from each cut while it stays strictly between its
// neighbours: "2000" reads better as "20", but [20, 2001) must keep "200080".
func trim(cuts []string, min, max string) {
	for i := range cuts {
		lo, hi := min, max
		if i > 0 {
			lo = cuts[i-1]
		}
		if i+1 < len(cuts) {
			hi = cuts[i+1]
		}
		for strings.HasSuffix(cuts[i], "00") {
			t := cuts[i][:len(cuts[i])-2]
			if strings.Compare(lo, t) >= 0 || strings.Compare(t, hi) >= 0 {
				break
			}
			cuts[i] = t
		}
	}
}

func num(s string, width int) *big.Int {
	s += strings.Repeat("0", width-len(s))
	v, _ := new(big.Int).SetString(s, 16)
	return v
}

func hexOf(v *big.Int, width int) string {
	s := strings.ToUpper(v.Text(16))
	return strings.Repeat("0", width-len(s)) + s
}

func checkHex(s string) error {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'F') {
			return fmt.Errorf("EPK %q is not hex: an effective partition key is hex digits, \"\" the bottom and \"FF\" the top", s)
		}
	}
	return nil
}

// fraction is the share of [min, max) that [lo, hi) covers, measured as cut measures
// widths (the top as 0x40…); 0 when they do not overlap.
func fraction(lo, hi, min, max string) float64 {
	clip := func(s string) string {
		if s == Top && strings.Compare(min, keyTop) < 0 {
			return keyTop
		}
		return s
	}
	if strings.Compare(lo, min) < 0 {
		lo = min
	}
	if strings.Compare(hi, max) > 0 {
		hi = max
	}
	if strings.Compare(lo, hi) >= 0 {
		return 0
	}
	lo, hi, min, max = clip(lo), clip(hi), clip(min), clip(max)
	width := 2
	for _, s := range []string{lo, hi, min, max} {
		if len(s) > width {
			width = len(s)
		}
	}
	if width%2 == 1 {
		width++
	}
	part := new(big.Int).Sub(num(hi, width), num(lo, width))
	all := new(big.Int).Sub(num(max, width), num(min, width))
	if all.Sign() <= 0 {
		return 0
	}
	f, _ := new(big.Rat).SetFrac(part, all).Float64()
	return f
}
