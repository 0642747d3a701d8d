package jsondoc

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// typeRank is the service's order across types, lowest first: undefined,
// null, booleans, numbers, strings, then arrays and objects (which have no
// order among themselves).
func typeRank(v *Value) int {
	if v == nil {
		return 0
	}
	switch v.Kind {
	case KindNull:
		return 1
	case KindBool:
		return 2
	case KindNumber:
		return 3
	case KindString:
		return 4
	case KindArray:
		return 5
	}
	return 6
}

// CompareOrder orders two values as ORDER BY, MIN and MAX do: by type rank
// first (undefined < null < false < true < numbers < strings < arrays <
// objects), then by value; strings compare by UTF-16 code unit (compareUTF16),
// and arrays and objects compare equal. nil is undefined.
//
// The service orders arrays and objects among themselves by a 128-bit hash of
// the value (azure-cosmos-dotnet-v3 CosmosElements/CosmosArray.cs CompareTo,
// DistinctHash), which no document describes; the emulator ties them instead
// (rows then keep their creation order), which a client must accept anyway.
func CompareOrder(a, b *Value) int {
	ra, rb := typeRank(a), typeRank(b)
	if ra != rb {
		return ra - rb
	}
	switch ra {
	case 2:
		return boolInt(a.Bool) - boolInt(b.Bool)
	case 3:
		return compareNumbers(a.Num, b.Num)
	case 4:
		return compareUTF16(a.Str, b.Str)
	}
	return 0
}

// orderKey is a value prepared for repeated ORDER BY comparisons: sorting
// compares each row's values some 15 times for 25,000 rows, and decoding a
// number's text on every comparison dominated the sort.
type orderKey struct {
	rank  uint8
	exact bool // i holds the number exactly
	b     bool
	i     int64
	f     float64
	s     string
}

func makeOrderKey(v *Value) orderKey {
	k := orderKey{rank: uint8(typeRank(v))}
	switch k.rank {
	case 2:
		k.b = v.Bool
	case 3:
		if n, ok := parseInt64(v.Num); ok {
			k.i, k.exact, k.f = n, true, float64(n)
		} else {
			k.f = numberFloat(v.Num)
		}
	case 4:
		k.s = v.Str
	}
	return k
}

// compareOrderKeys is CompareOrder on prepared values.
func compareOrderKeys(a, b *orderKey) int {
	if a.rank != b.rank {
		return int(a.rank) - int(b.rank)
	}
	switch a.rank {
	case 2:
		return boolInt(a.b) - boolInt(b.b)
	case 3:
		if a.exact && b.exact {
			return cmpInt(a.i, b.i)
		}
		switch {
		case a.f < b.f:
			return -1
		case a.f > b.f:
			return 1
		}
		return 0
	case 4:
		return compareUTF16(a.s, b.s)
	}
	return 0
}

// compareUTF16 orders strings by their UTF-16 code units, the order the SDKs
// merge a cross-partition ORDER BY in (.NET: string.CompareOrdinal in
// azure-cosmos-dotnet-v3 CosmosElements/CosmosString.cs CompareTo; JavaScript's
// < and Java's String.compareTo likewise), so the order each range must sort
// in; Microsoft Learn's ORDER BY page does not say. It differs from code point
// order only between a character above U+FFFF (a surrogate pair, 0xD800…) and
// one in U+E000–U+FFFF (full-width forms, private use), which comes after it.
func compareUTF16(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) || i == len(b) {
		return cmpInt(int64(len(a)), int64(len(b)))
	}
	for i > 0 && !utf8.RuneStart(a[i]) {
		i-- // back to the start of the characters that differ
	}
	ra, _ := utf8.DecodeRuneInString(a[i:])
	rb, _ := utf8.DecodeRuneInString(b[i:])
	if ra == rb { // invalid UTF-8 on both sides: by bytes
		return strings.Compare(a[i:], b[i:])
	}
	return cmpInt(utf16Weight(ra), utf16Weight(rb))
}

// utf16Weight ranks a character as its UTF-16 encoding sorts: characters above
// U+FFFF (surrogate pairs) between U+D7FF and U+E000, in code point order.
func utf16Weight(r rune) int64 {
	switch {
	case r >= 0x10000:
		return 0xD800 + int64(r-0x10000)
	case r >= 0xE000:
		return int64(r) + 0x100000
	}
	return int64(r)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// appendKey appends a canonical encoding of v under which two values have
// the same key exactly when they are Equal: numbers are normalised (1 and
// 1.0 agree) and object members sorted. DISTINCT and GROUP BY use it.
func appendKey(b []byte, v *Value) []byte {
	if v == nil {
		return append(b, 'u')
	}
	switch v.Kind {
	case KindNull:
		return append(b, 'n')
	case KindBool:
		if v.Bool {
			return append(b, 't')
		}
		return append(b, 'f')
	case KindNumber:
		b = append(b, 'd')
		if n, ok := parseInt64(v.Num); ok {
			b = strconv.AppendInt(b, n, 10)
		} else {
			f := numberFloat(v.Num)
			if f == float64(int64(f)) && f > -9.2e18 && f < 9.2e18 {
				b = strconv.AppendInt(b, int64(f), 10)
			} else {
				b = strconv.AppendFloat(b, f, 'g', -1, 64)
			}
		}
		return append(b, ';')
	case KindString:
		b = append(b, 's')
		b = strconv.AppendInt(b, int64(len(v.Str)), 10)
		b = append(b, ':')
		return append(b, v.Str...)
	case KindArray:
		b = append(b, '[')
		for _, e := range v.Arr {
			b = appendKey(b, e)
		}
		return append(b, ']')
	}
	members := slices.Clone(v.Obj)
	slices.SortFunc(members, func(x, y Member) int { return strings.Compare(x.Key, y.Key) })
	b = append(b, '{')
	for _, m := range members {
		b = strconv.AppendInt(b, int64(len(m.Key)), 10)
		b = append(b, ':')
		b = append(b, m.Key...)
		b = appendKey(b, m.Val)
	}
	return append(b, '}')
}
