package jsondoc

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// compareNumbers orders two JSON numbers. Integers that fit in int64 are
// compared exactly so that ids and counters beyond 2^53 are not conflated;
// everything else is compared as float64, which is what Cosmos DB itself
// does. Text that is not a number compares as zero rather than failing,
// because callers use this only for ordering.
func compareNumbers(a, b json.Number) int {
	if a == b {
		return 0
	}
	if x, ok := parseInt64(a); ok {
		if y, ok := parseInt64(b); ok {
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		}
	}
	x, y := numberFloat(a), numberFloat(b)
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// numberFloat keeps ParseFloat's ±Inf for out-of-range values (err is a
// range error then), so 1e999 still sorts above every finite number.
func numberFloat(n json.Number) float64 {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0
	}
	return f
}

// addNumbers implements the arithmetic of the patch "incr" operation.
func addNumbers(a, b json.Number) (json.Number, bool) {
	if s, ok := addInts(a, b); ok {
		return json.Number(strconv.FormatInt(s, 10)), true
	}
	x, err := strconv.ParseFloat(string(a), 64)
	if err != nil {
		return "", false
	}
	y, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return "", false
	}
	s := x + y
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return "", false
	}
	return json.Number(strconv.FormatFloat(s, 'g', -1, 64)), true
}

// addInts succeeds only when both operands are integers and the sum fits,
// so that counters stay integers instead of drifting into float notation.
func addInts(a, b json.Number) (int64, bool) {
	x, ok := parseInt64(a)
	if !ok {
		return 0, false
	}
	y, ok := parseInt64(b)
	if !ok {
		return 0, false
	}
	s := x + y
	// Signed overflow happened iff both operands share a sign the sum lacks.
	if (x >= 0) == (y >= 0) && (s >= 0) != (x >= 0) {
		return 0, false
	}
	return s, true
}

// parseInt64 screens out fractions and exponents before calling ParseInt,
// whose error values allocate; filters compare numbers for every document.
func parseInt64(n json.Number) (int64, bool) {
	if strings.ContainsAny(string(n), ".eE") {
		return 0, false
	}
	x, err := strconv.ParseInt(string(n), 10, 64)
	return x, err == nil
}

// scanNumber returns the length of the JSON number at the start of s, or 0
// if s does not start with one. The grammar is RFC 8259's.
func scanNumber[T string | []byte](s T) int {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	default:
		return 0
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || !isDigit(s[i]) {
			return 0
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || !isDigit(s[i]) {
			return 0
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	return i
}

func validNumber(s string) bool {
	return s != "" && scanNumber(s) == len(s)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
