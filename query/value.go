package query

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"
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

// value is one decoded JSON value, enough to order it: primitives by their value,
// arrays and objects by their canonical JSON (the service orders them by a hash; any
// deterministic order will do, as ORDER BY on them is rare and never meaningful).
type value struct {
	k   kind
	b   bool
	n   float64
	s   string // string value, or canonical JSON of an array or object
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
		c, err := canonical(raw)
		if err != nil {
			return v, err
		}
		v.s = string(c)
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
	case kindString, kindArray, kindObject:
		return strings.Compare(a.s, b.s)
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
