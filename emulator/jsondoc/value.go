package jsondoc

import (
	"encoding/json"
	"strconv"
)

// Kind is the JSON type of a [Value]. The zero Kind is KindNull so that a
// zero Value is a valid JSON null.
type Kind uint8

const (
	KindNull Kind = iota
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

func (k Kind) String() string {
	switch k {
	case KindNull:
		return "null"
	case KindBool:
		return "boolean"
	case KindNumber:
		return "number"
	case KindString:
		return "string"
	case KindArray:
		return "array"
	case KindObject:
		return "object"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Member is one object property. Objects are slices of members rather than
// maps because Cosmos DB preserves property order.
type Member struct {
	Key string
	Val *Value
}

// Value is a JSON value. Only the field matching Kind is meaningful.
//
// A nil *Value is treated as JSON null by the encoder and by [Equal], so
// partially built trees still encode to valid JSON.
type Value struct {
	Kind Kind
	Bool bool
	// Num is the number's text exactly as received, so integers beyond
	// 2^53 survive a read/write cycle unchanged.
	Num json.Number
	Str string
	Arr []*Value
	Obj []Member
}

// String returns a string value.
func String(s string) *Value { return &Value{Kind: KindString, Str: s} }

// Number returns a number value. n must be a valid JSON number; the encoder
// writes null for an invalid one (and MarshalJSON reports an error) because
// AppendJSON has no way to fail.
func Number(n string) *Value { return &Value{Kind: KindNumber, Num: json.Number(n)} }

// Bool returns a boolean value.
func Bool(b bool) *Value { return &Value{Kind: KindBool, Bool: b} }

// Null returns a JSON null.
func Null() *Value { return &Value{} }

// Object returns an object with the given members. Later duplicates replace
// earlier ones, keeping the first position, as in [Parse].
func Object(members ...Member) *Value {
	v := &Value{Kind: KindObject, Obj: make([]Member, 0, len(members))}
	for _, m := range members {
		v.Set(m.Key, m.Val)
	}
	return v
}

// Array returns an array holding elems (not copies of them).
func Array(elems ...*Value) *Value {
	if elems == nil {
		elems = []*Value{}
	}
	return &Value{Kind: KindArray, Arr: elems}
}

// Clone returns a deep copy that shares nothing mutable with v.
func (v *Value) Clone() *Value {
	if v == nil {
		return nil
	}
	c := &Value{Kind: v.Kind, Bool: v.Bool, Num: v.Num, Str: v.Str}
	if v.Arr != nil {
		c.Arr = make([]*Value, len(v.Arr))
		for i, e := range v.Arr {
			c.Arr[i] = e.Clone()
		}
	}
	if v.Obj != nil {
		c.Obj = make([]Member, len(v.Obj))
		for i, m := range v.Obj {
			c.Obj[i] = Member{Key: m.Key, Val: m.Val.Clone()}
		}
	}
	return c
}

// index returns the position of key in an object, or -1.
func (v *Value) index(key string) int {
	if v == nil || v.Kind != KindObject {
		return -1
	}
	for i := range v.Obj {
		if v.Obj[i].Key == key {
			return i
		}
	}
	return -1
}

// Get returns the member named key, or nil when v is not an object or has
// no such member.
func (v *Value) Get(key string) *Value {
	if i := v.index(key); i >= 0 {
		return v.Obj[i].Val
	}
	return nil
}

// Set replaces the member named key in place, or appends it when absent,
// so rewriting a property does not move it. A nil val is stored as null.
// Set panics when v is not an object: silently converting the value would
// hide a bug in the caller.
func (v *Value) Set(key string, val *Value) {
	if v.Kind != KindObject {
		panic("jsondoc: Set on a " + v.Kind.String() + " value")
	}
	if val == nil {
		val = Null()
	}
	if i := v.index(key); i >= 0 {
		v.Obj[i].Val = val
		return
	}
	v.Obj = append(v.Obj, Member{Key: key, Val: val})
}

// Delete removes the member named key, keeping the order of the others, and
// reports whether it was present.
func (v *Value) Delete(key string) bool {
	i := v.index(key)
	if i < 0 {
		return false
	}
	copy(v.Obj[i:], v.Obj[i+1:])
	v.Obj[len(v.Obj)-1] = Member{}
	v.Obj = v.Obj[:len(v.Obj)-1]
	return true
}

// Lookup walks path through object members and array elements (an array
// step is a decimal index such as "0"). It returns nil when any step is
// missing.
func (v *Value) Lookup(path []string) *Value {
	cur := v
	for _, seg := range path {
		if cur == nil {
			return nil
		}
		switch cur.Kind {
		case KindObject:
			cur = cur.Get(seg)
		case KindArray:
			i, ok := parseIndex(seg)
			if !ok || i >= len(cur.Arr) {
				return nil
			}
			cur = cur.Arr[i]
		default:
			return nil
		}
	}
	return cur
}

// parseIndex accepts the canonical decimal form only ("0", "12", not "012",
// "+1" or "-1"), the way JSON pointers spell array indexes, so that one
// element has exactly one path.
func parseIndex(s string) (int, bool) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// Equal reports whether a and b are the same JSON value: numbers compare
// numerically (1 equals 1.0), object member order is ignored, and nil is
// treated as null.
func Equal(a, b *Value) bool {
	if a == nil {
		a = &nullValue
	}
	if b == nil {
		b = &nullValue
	}
	if a == b {
		return true
	}
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case KindNull:
		return true
	case KindBool:
		return a.Bool == b.Bool
	case KindNumber:
		return compareNumbers(a.Num, b.Num) == 0
	case KindString:
		return a.Str == b.Str
	case KindArray:
		if len(a.Arr) != len(b.Arr) {
			return false
		}
		for i := range a.Arr {
			if !Equal(a.Arr[i], b.Arr[i]) {
				return false
			}
		}
		return true
	case KindObject:
		if len(a.Obj) != len(b.Obj) {
			return false
		}
		for _, m := range a.Obj {
			i := b.index(m.Key)
			if i < 0 || !Equal(m.Val, b.Obj[i].Val) {
				return false
			}
		}
		return true
	}
	return false
}

// nullValue backs nil operands in Equal; it is never handed out.
var nullValue = Value{}
