package cosmos

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// ComponentKind is the JSON type of one partition key component.
type ComponentKind uint8

const (
	// KindUndefined is the "none" key of a document that lacks the partition key
	// property; on the wire it is the empty object: [{}].
	KindUndefined ComponentKind = iota
	KindNull
	KindBool
	KindNumber
	KindString
)

// Component is one value of a (possibly hierarchical) partition key.
type Component struct {
	Kind ComponentKind
	Str  string
	Num  float64
	Bool bool
}

// PartitionKey is a partition key value: one component for a Hash container, one per path
// for a MultiHash (hierarchical) container.
type PartitionKey []Component

// PK builds a partition key from Go values: string, float64/int/int64, bool, nil (null).
func PK(values ...any) (PartitionKey, error) {
	pk := make(PartitionKey, 0, len(values))
	for _, v := range values {
		c, err := componentOf(v)
		if err != nil {
			return nil, err
		}
		pk = append(pk, c)
	}
	return pk, nil
}

// NonePK is the partition key of documents that have no value at the key path.
var NonePK = PartitionKey{{Kind: KindUndefined}}

func componentOf(v any) (Component, error) {
	switch x := v.(type) {
	case nil:
		return Component{Kind: KindNull}, nil
	case string:
		return Component{Kind: KindString, Str: x}, nil
	case bool:
		return Component{Kind: KindBool, Bool: x}, nil
	case float64:
		return Component{Kind: KindNumber, Num: x}, nil
	case int:
		return Component{Kind: KindNumber, Num: float64(x)}, nil
	case int64:
		return Component{Kind: KindNumber, Num: float64(x)}, nil
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return Component{}, fmt.Errorf("partition key number %s is out of range", x)
		}
		return Component{Kind: KindNumber, Num: f}, nil
	case map[string]any:
		if len(x) == 0 {
			return Component{Kind: KindUndefined}, nil
		}
	}
	return Component{}, fmt.Errorf("partition key values must be strings, numbers, booleans or null, not %s", JSONKind(v))
}

// JSONKind names a decoded JSON value's kind the way a reader of the JSON would, "a
// string" or "an object", for error messages: Go's type names (json.Number,
// map[string]interface {}) mean nothing to someone who wrote a document.
func JSONKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, float32, int, int64, json.Number:
		return "a number"
	case map[string]any:
		if len(x) == 0 {
			return "an empty object"
		}
		return "an object"
	case []any:
		return "an array"
	}
	return "a value of no JSON kind"
}

// ParsePartitionKeyJSON parses the x-ms-documentdb-partitionkey header form: a JSON array
// of components such as ["p1"], ["a",3], [null] or [{}].
func ParsePartitionKeyJSON(s string) (PartitionKey, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("partition key is empty")
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var raw []any
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("partition key must be a JSON array such as [\"value\"]: %v", err)
	}
	if dec.More() {
		return nil, errors.New("partition key has trailing data after the JSON array")
	}
	if len(raw) == 0 {
		return nil, errors.New("partition key array is empty")
	}
	return PK(raw...)
}

// JSON renders the header form. Non-ASCII characters are escaped as \uXXXX because HTTP
// header values must be ASCII.
func (pk PartitionKey) JSON() string {
	var b strings.Builder
	b.WriteByte('[')
	for i, c := range pk {
		if i > 0 {
			b.WriteByte(',')
		}
		switch c.Kind {
		case KindUndefined:
			b.WriteString("{}")
		case KindNull:
			b.WriteString("null")
		case KindBool:
			fmt.Fprintf(&b, "%t", c.Bool)
		case KindNumber:
			num, _ := json.Marshal(c.Num)
			b.Write(num)
		case KindString:
			writeASCIIString(&b, c.Str)
		}
	}
	b.WriteByte(']')
	return b.String()
}

func writeASCIIString(b *strings.Builder, s string) {
	if plainASCII(s) {
		// What the rest writes for it, without encoding/json: every header of a write
		// carries its key.
		b.WriteByte('"')
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	enc, _ := json.Marshal(s)
	for _, r := range string(enc) {
		if r < 0x80 {
			b.WriteRune(r)
			continue
		}
		if r > 0xFFFF {
			r -= 0x10000
			fmt.Fprintf(b, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
			continue
		}
		fmt.Fprintf(b, `\u%04x`, r)
	}
}

// plainASCII reports a string that json.Marshal writes as it is between quotes:
// printable ASCII without a quote, a backslash or the HTML characters it escapes.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// String is a short human form for diagnostics.
func (pk PartitionKey) String() string { return pk.JSON() }

// Values returns the components as Go values (undefined as an empty map).
func (pk PartitionKey) Values() []any {
	out := make([]any, len(pk))
	for i, c := range pk {
		switch c.Kind {
		case KindUndefined:
			out[i] = map[string]any{}
		case KindNull:
			out[i] = nil
		case KindBool:
			out[i] = c.Bool
		case KindNumber:
			out[i] = c.Num
		case KindString:
			out[i] = c.Str
		}
	}
	return out
}

// appendEncoding writes a component in the binary form that V2 hashing consumes.
func (c Component) appendEncoding(dst []byte) []byte {
	switch c.Kind {
	case KindUndefined:
		return append(dst, 0x00)
	case KindNull:
		return append(dst, 0x01)
	case KindBool:
		if c.Bool {
			return append(dst, 0x03)
		}
		return append(dst, 0x02)
	case KindNumber:
		dst = append(dst, 0x05)
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(c.Num))
	default:
		dst = append(dst, 0x08)
		dst = append(dst, c.Str...)
		return append(dst, 0xFF)
	}
}

// Identity is a byte string equal for equal keys (1 and 1.0 are the same key), usable
// as a map key.
func (pk PartitionKey) Identity() string {
	var b []byte
	for _, c := range pk {
		b = c.appendEncoding(b)
	}
	return string(b)
}

// hashV2 returns the unmasked 16-byte V2 hash of one component as 32 upper-case hex digits.
func hashV2(c Component) string {
	enc := c.appendEncoding(nil)
	h1, h2 := murmur3x64_128(enc, 0)
	var buf [16]byte
	binary.LittleEndian.PutUint64(buf[0:], h1)
	binary.LittleEndian.PutUint64(buf[8:], h2)
	for i, j := 0, 15; i < j; i, j = i+1, j-1 {
		buf[i], buf[j] = buf[j], buf[i]
	}
	return strings.ToUpper(hex.EncodeToString(buf[:]))
}

// EffectivePartitionKey is the routing value of pk under the V2 hash scheme: per component,
// the hash with the top two bits of its first byte cleared, so that every key sorts below
// the "FF" sentinel; hierarchical keys concatenate their components' values.
func EffectivePartitionKey(pk PartitionKey) string {
	var b strings.Builder
	for _, c := range pk {
		h := []byte(hashV2(c))
		first, _ := hex.DecodeString(string(h[:2]))
		first[0] &= 0x3F
		b.WriteString(strings.ToUpper(hex.EncodeToString(first)))
		b.Write(h[2:])
	}
	return b.String()
}

// RangeFor returns the range whose [minInclusive, maxExclusive) holds epk.
func RangeFor(epk string, ranges []PartitionKeyRange) (PartitionKeyRange, bool) {
	for _, r := range ranges {
		if epk >= r.MinInclusive && (r.MaxExclusive == "FF" || epk < r.MaxExclusive) {
			return r, true
		}
	}
	return PartitionKeyRange{}, false
}

// EvenRangeBoundaries splits the routing space (first byte 0x00–0x3F after masking) into n
// ranges of equal width: for n = 4 that is "", "10", "20", "30", "FF".
func EvenRangeBoundaries(n int) []string {
	if n < 1 {
		n = 1
	}
	out := make([]string, 0, n+1)
	out = append(out, "")
	for i := 1; i < n; i++ {
		v := uint16(i * 0x4000 / n)
		s := strings.ToUpper(hex.EncodeToString([]byte{byte(v >> 8), byte(v)}))
		out = append(out, strings.TrimSuffix(s, "00"))
	}
	return append(out, "FF")
}

// Equal reports whether two keys are the same key.
func (pk PartitionKey) Equal(other PartitionKey) bool {
	return bytes.Equal([]byte(pk.Identity()), []byte(other.Identity()))
}
