package jsondoc

import (
	"errors"
	"unicode/utf8"
)

// AppendJSON appends the compact encoding of v to dst. Strings are escaped
// exactly like encoding/json with HTML escaping off, so documents written by
// the emulator are byte-identical to what a Go client would produce. An
// invalid Num is written as null (see [Number]).
func (v *Value) AppendJSON(dst []byte) []byte {
	dst, _ = appendValue(dst, v)
	return dst
}

var errInvalidNumber = errors.New("jsondoc: invalid number in value")

// MarshalJSON implements json.Marshaler. Unlike AppendJSON it reports
// invalid numbers instead of writing null for them.
func (v *Value) MarshalJSON() ([]byte, error) {
	b, ok := appendValue(nil, v)
	if !ok {
		return nil, errInvalidNumber
	}
	return b, nil
}

// appendValue reports false if it had to replace an invalid number.
func appendValue(dst []byte, v *Value) ([]byte, bool) {
	if v == nil {
		return append(dst, "null"...), true
	}
	ok := true
	switch v.Kind {
	case KindBool:
		if v.Bool {
			return append(dst, "true"...), true
		}
		return append(dst, "false"...), true
	case KindNumber:
		switch {
		case v.Num == "":
			// encoding/json writes the zero json.Number as 0 too.
			return append(dst, '0'), true
		case validNumber(string(v.Num)):
			return append(dst, v.Num...), true
		}
		return append(dst, "null"...), false
	case KindString:
		return appendString(dst, v.Str), true
	case KindArray:
		dst = append(dst, '[')
		for i, e := range v.Arr {
			if i > 0 {
				dst = append(dst, ',')
			}
			var eok bool
			dst, eok = appendValue(dst, e)
			ok = ok && eok
		}
		return append(dst, ']'), ok
	case KindObject:
		dst = append(dst, '{')
		for i, m := range v.Obj {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, m.Key)
			dst = append(dst, ':')
			var mok bool
			dst, mok = appendValue(dst, m.Val)
			ok = ok && mok
		}
		return append(dst, '}'), ok
	}
	return append(dst, "null"...), v.Kind == KindNull
}

const hexDigits = "0123456789abcdef"

// appendString quotes s. Besides the escapes JSON requires, it writes
// invalid UTF-8 as \ufffd and U+2028/U+2029 as escapes, matching
// encoding/json, so the output is always valid UTF-8 and safe in JavaScript.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
