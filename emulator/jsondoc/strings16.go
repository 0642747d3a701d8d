package jsondoc

import (
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// String positions and lengths count UTF-16 code units, the unit of the strings of
// the service's JavaScript heritage and of every SDK's merge (issue 24 measured
// LENGTH('😀smile') as 7 there). Microsoft Learn's pages for LENGTH, SUBSTRING,
// LEFT, RIGHT and INDEX_OF say "characters" and give only ASCII examples
// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/length and siblings), so
// what they do with a character outside the Basic Multilingual Plane is not
// documented: the emulator counts it as two, like JavaScript's String.length. A
// slice that cuts such a pair in half cannot be held in Go's UTF-8 strings; the half
// becomes U+FFFD (JavaScript would keep a lone surrogate). REVERSE keeps a pair
// together rather than emit two halves (not documented either). README, "What it
// emulates", says the same.

// utf16Len is the length of s in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// utf16Slice returns the code units [start, start+n) of s, clamped to s.
func utf16Slice(s string, start, n int) string {
	start = max(start, 0)
	if n <= 0 {
		return ""
	}
	if isASCII(s) {
		if start >= len(s) {
			return ""
		}
		return s[start:min(len(s), start+n)]
	}
	u := utf16.Encode([]rune(s))
	if start >= len(u) {
		return ""
	}
	return string(utf16.Decode(u[start:min(len(u), start+n)]))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func fnLength(a args) *Value {
	s, ok := str(a.v[0])
	if !ok {
		return nil
	}
	return intValue(int64(utf16Len(s)))
}

func fnSubstring(a args) *Value {
	s, ok := str(a.v[0])
	start, ok2 := integer(a.v[1])
	n, ok3 := integer(a.v[2])
	if !ok || !ok2 || !ok3 {
		return nil
	}
	return String(utf16Slice(s, start, n))
}

func fnLeft(a args) *Value {
	s, ok := str(a.v[0])
	n, ok2 := integer(a.v[1])
	if !ok || !ok2 {
		return nil
	}
	return String(utf16Slice(s, 0, n))
}

func fnRight(a args) *Value {
	s, ok := str(a.v[0])
	n, ok2 := integer(a.v[1])
	if !ok || !ok2 {
		return nil
	}
	return String(utf16Slice(s, utf16Len(s)-max(n, 0), n))
}

// fnIndexOf is INDEX_OF(s, sub[, start]): the code unit position of the first sub at
// or after start, or -1.
func fnIndexOf(a args) *Value {
	s, ok := str(a.v[0])
	sub, ok2 := str(a.v[1])
	if !ok || !ok2 {
		return nil
	}
	start := 0
	if a.n == 3 {
		if start, ok = integer(a.v[2]); !ok {
			return nil
		}
	}
	if start < 0 || start > utf16Len(s) {
		return intValue(-1)
	}
	// Find the byte offset of code unit start; a start inside a pair begins the
	// search after it (Go cannot address the pair's second half).
	off, units := 0, 0
	for units < start {
		r, size := utf8.DecodeRuneInString(s[off:])
		off += size
		units++
		if r >= 0x10000 {
			units++
		}
	}
	i := strings.Index(s[off:], sub)
	if i < 0 {
		return intValue(-1)
	}
	return intValue(int64(units + utf16Len(s[off:off+i])))
}

// fnReverse is REVERSE(s), by code point so that a surrogate pair stays whole.
func fnReverse(a args) *Value {
	s, ok := str(a.v[0])
	if !ok {
		return nil
	}
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return String(string(r))
}

// fnReplicate is REPLICATE(s, n): undefined for a negative or non-finite n, and
// when the result would pass 10,000 characters
// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/replicate). A fractional
// n is truncated (not documented).
func fnReplicate(a args) *Value {
	s, ok := str(a.v[0])
	n, ok2 := numberArg(a.v[1], 1)
	if !ok || !ok2 || n < 0 {
		return nil
	}
	if n > 0 && int64(utf16Len(s)) > 10_000/n {
		return nil
	}
	return String(strings.Repeat(s, int(n)))
}

// trimFunc is TRIM, LTRIM and RTRIM: whitespace by default, or any of the
// characters of the optional second argument (the examples of
// https://learn.microsoft.com/azure/cosmos-db/nosql/query/trim: TRIM("-_-x-_-", "-_")
// is "x").
func trimFunc(trim func(s string, f func(rune) bool) string) func(a args) *Value {
	return func(a args) *Value {
		s, ok := str(a.v[0])
		if !ok {
			return nil
		}
		cut := unicode.IsSpace
		if a.n == 2 {
			chars, ok := str(a.v[1])
			if !ok {
				return nil
			}
			cut = func(r rune) bool { return strings.ContainsRune(chars, r) }
		}
		return String(trim(s, cut))
	}
}

func trimBoth(s string, f func(rune) bool) string { return strings.TrimFunc(s, f) }
