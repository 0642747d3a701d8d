package query

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// kind is a JSON value's type in Cosmos DB's cross-type order: undefined sorts first,
// then null, booleans (false before true), numbers, strings, arrays and objects. ORDER
// BY across partitions and MIN/MAX combine values in this order, as the service does
// within one partition.
type kind uint8

const (
	kindUndefined kind = iota
	kindNull
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// value is one decoded JSON value, enough to order it: primitives by their value;
// arrays (and objects) all tie with one another.
//
// Why ties: the service orders arrays and objects among themselves by a 128-bit hash of
// the value (the .NET SDK, which merges by the service's order, compares them by
// DistinctHash: azure-cosmos-dotnet-v3 CosmosElements/CosmosArray.cs CompareTo, and
// resumes them by it: Query/Core/Pipeline/CrossPartition/OrderBy/ResumeValueComparer.cs);
// the JS and Java SDKs refuse to merge them at all (JS orderByComparator.ts: "Tried to
// compare an object type"). No document describes that hash and we do not reproduce it,
// and the emulator ties them too (emulator/jsondoc/order.go). What must hold whatever a
// range's order among them is: the merge and the resume filter treat them as ties, and
// a token remembers every tied item it returned by _rid (resumeFilter), so a resumed run
// neither repeats nor loses any, against the emulator or the service.
type value struct {
	k   kind
	b   bool
	n   float64
	s   string // string value
	raw json.RawMessage
}

var undefinedValue = value{k: kindUndefined}

// parseValue decodes raw; nil or empty raw is undefined.
func parseValue(raw json.RawMessage) (value, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return undefinedValue, nil
	}
	v := value{raw: raw}
	switch raw[0] {
	case 'n':
		v.k = kindNull
	case 't', 'f':
		v.k, v.b = kindBool, raw[0] == 't'
	case '"':
		v.k = kindString
		if err := json.Unmarshal(raw, &v.s); err != nil {
			return v, err
		}
	case '[', '{':
		v.k = kindArray
		if raw[0] == '{' {
			v.k = kindObject
		}
		if !json.Valid(raw) {
			return v, fmt.Errorf("not valid JSON: %.200s", raw)
		}
	default:
		v.k = kindNumber
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return v, err
		}
		v.n = f
	}
	return v, nil
}

// compareValues orders a and b in Cosmos DB's cross-type order.
func compareValues(a, b value) int {
	if a.k != b.k {
		if a.k < b.k {
			return -1
		}
		return 1
	}
	switch a.k {
	case kindBool:
		switch {
		case a.b == b.b:
			return 0
		case !a.b:
			return -1
		}
		return 1
	case kindNumber:
		switch {
		case a.n < b.n:
			return -1
		case a.n > b.n:
			return 1
		}
		return 0
	case kindString:
		return compareUTF16(a.s, b.s)
	}
	return 0 // undefined, null; arrays among arrays, objects among objects: ties
}

// compareUTF16 orders strings by their UTF-16 code units, as the SDKs merge them: .NET
// compares with string.CompareOrdinal (azure-cosmos-dotnet-v3 CosmosElements/
// CosmosString.cs CompareTo), JavaScript's < and Java's String.compareTo compare UTF-16
// code units too, and a merge is only right when each range sorts as the merge does,
// so the service sorts so too (Microsoft Learn's ORDER BY page does not say). It differs
// from code point (and UTF-8 byte) order only between a character above U+FFFF
// (a surrogate pair, 0xD800…) and one in U+E000–U+FFFF, which UTF-16 puts after it.
func compareUTF16(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) || i == len(b) {
		return cmpInt(len(a), len(b))
	}
	// Back to the start of the characters that differ.
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRuneInString(a[i:])
	rb, _ := utf8.DecodeRuneInString(b[i:])
	if ra == rb { // invalid UTF-8 both sides: by bytes
		return strings.Compare(a[i:], b[i:])
	}
	return cmpInt(utf16Weight(ra), utf16Weight(rb))
}

// utf16Weight ranks a character as its UTF-16 encoding sorts: characters above U+FFFF
// (surrogate pairs) between U+D7FF and U+E000, in code point order.
func utf16Weight(r rune) int {
	switch {
	case r >= 0x10000:
		return 0xD800 + int(r-0x10000)
	case r >= 0xE000:
		return int(r) + 0x100000
	}
	return int(r)
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// canonical re-encodes a JSON value so that equal values have equal bytes: object keys
// sorted, numbers in their shortest form (1.0 and 1 are the same number), no
// insignificant space. DISTINCT and GROUP BY compare values this way.
func canonical(raw json.RawMessage) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := writeCanonical(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeCanonical(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return err
		}
		b.WriteString(formatNumber(f))
	case string:
		s, _ := json.Marshal(x)
		b.Write(s)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeCanonical(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			s, _ := json.Marshal(k)
			b.Write(s)
			b.WriteByte(':')
			if err := writeCanonical(b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	}
	return nil
}

// formatNumber writes a number as JSON: integers without a fraction, others in the
// shortest form that reads back the same.
func formatNumber(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// hashKey is the identity of a value for DISTINCT: the SHA-256 of its canonical JSON,
// truncated to 16 bytes (a collision needs 2^64 values).
type hashKey [16]byte

func hashOf(raw json.RawMessage) (hashKey, error) {
	var h hashKey
	c, err := canonical(raw)
	if err != nil {
		return h, err
	}
	sum := sha256.Sum256(c)
	copy(h[:], sum[:16])
	return h, nil
}
