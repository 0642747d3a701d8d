package jsondoc

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// ParseObjectFields parses a JSON object but decodes only the top-level
// members named in fields; the others are stepped over without building
// values. A query that filters or sorts on two properties of a 1 KB
// document reads it several times faster than [ParseObject] would.
//
// data must be valid JSON, such as a stored document: the members that are
// skipped are not checked (a malformed skipped member may go unnoticed),
// while the kept ones are decoded exactly as Parse decodes them.
func ParseObjectFields(data []byte, fields []string) (*Value, error) {
	return parseObjectFieldsInto(nil, data, fields, false)
}

// fieldReader parses document after document into the same values, for a
// scan that is done with each document after one evaluation (an ORDER BY
// keeps only the sort keys): only strings and numbers' text are allocated.
type fieldReader struct {
	obj  Value
	vals []Value
}

// parseObjectFieldsInto is ParseObjectFields reading into r (when not nil).
// With uniqueKeys (stored documents, which the emulator writes without
// duplicate keys) it stops reading once every field was found.
func parseObjectFieldsInto(r *fieldReader, data []byte, fields []string, uniqueKeys bool) (*Value, error) {
	d := decoder{data: data}
	d.skipSpace()
	if d.pos >= len(data) {
		return nil, d.errEOF()
	}
	if data[d.pos] != '{' {
		if _, err := Parse(data); err != nil {
			return nil, err
		}
		return nil, errNotObject
	}
	d.pos++
	var obj *Value
	if r == nil {
		obj = &Value{Kind: KindObject, Obj: make([]Member, 0, len(fields))}
	} else {
		if len(r.vals) < len(fields) {
			r.vals = make([]Value, len(fields))
		}
		clear(r.obj.Obj)
		r.obj = Value{Kind: KindObject, Obj: r.obj.Obj[:0]}
		obj = &r.obj
	}
	d.skipSpace()
	if d.pos < len(data) && data[d.pos] == '}' {
		return obj, nil
	}
	for {
		d.skipSpace()
		if d.pos >= len(data) {
			return nil, d.errEOF()
		}
		if data[d.pos] != '"' {
			return nil, d.errorf("invalid character %s looking for beginning of object key string", quoteChar(data[d.pos]))
		}
		keyStart := d.pos
		if err := d.skipString(); err != nil {
			return nil, err
		}
		rawKey := data[keyStart+1 : d.pos-1]
		d.skipSpace()
		if d.pos >= len(data) || data[d.pos] != ':' {
			return nil, d.errorf("expected ':' after object key")
		}
		d.pos++
		d.skipSpace()
		valStart := d.pos
		if err := d.skipValue(); err != nil {
			return nil, err
		}
		if key, ok := wantedKey(rawKey, fields); ok {
			var into *Value
			if r != nil {
				into = &r.vals[len(obj.Obj)%len(r.vals)]
			}
			v, err := parseScalarFast(data[valStart:d.pos], into)
			if err != nil {
				return nil, err
			}
			if i := obj.index(key); i >= 0 {
				obj.Obj[i].Val = v
			} else {
				obj.Obj = append(obj.Obj, Member{Key: key, Val: v})
			}
			if uniqueKeys && len(obj.Obj) == len(fields) {
				return obj, nil
			}
		}
		d.skipSpace()
		if d.pos >= len(data) {
			return nil, d.errEOF()
		}
		c := data[d.pos]
		d.pos++
		if c == '}' {
			return obj, nil
		}
		if c != ',' {
			d.pos--
			return nil, d.errorf("invalid character %s after object key:value pair", quoteChar(c))
		}
	}
}

// parseScalarFast decodes a kept member's value: numbers, literals and plain
// strings directly (they are what filters and sort keys mostly read), into
// the given value when there is one, the rest with Parse.
func parseScalarFast(raw []byte, into *Value) (*Value, error) {
	var v Value
	switch c := raw[0]; {
	case c == '"' && len(raw) >= 2:
		body := raw[1 : len(raw)-1]
		plain := raw[len(raw)-1] == '"' && utf8.Valid(body)
		for _, b := range body {
			if b == '\\' || b < 0x20 {
				plain = false
				break
			}
		}
		if !plain {
			return Parse(raw)
		}
		v = Value{Kind: KindString, Str: string(body)}
	case c == '-' || isDigit(c):
		if scanNumber(raw) != len(raw) {
			return Parse(raw)
		}
		v = Value{Kind: KindNumber, Num: json.Number(raw)}
	case string(raw) == "true":
		v = Value{Kind: KindBool, Bool: true}
	case string(raw) == "false":
		v = Value{Kind: KindBool}
	case string(raw) == "null":
		v = Value{}
	default:
		return Parse(raw)
	}
	if into == nil {
		into = new(Value)
	}
	*into = v
	return into, nil
}

// wantedKey matches a raw (still escaped) key against fields; keys with
// escapes are decoded first, which is rare enough not to matter.
func wantedKey(raw []byte, fields []string) (string, bool) {
	if bytes.IndexByte(raw, '\\') < 0 {
		for _, f := range fields {
			if string(raw) == f {
				return f, true
			}
		}
		return "", false
	}
	quoted := make([]byte, 0, len(raw)+2)
	quoted = append(append(append(quoted, '"'), raw...), '"')
	v, err := Parse(quoted)
	if err != nil {
		return "", false
	}
	for _, f := range fields {
		if v.Str == f {
			return f, true
		}
	}
	return "", false
}

// skipString steps over the string at d.pos, opening quote included.
func (d *decoder) skipString() error {
	i := d.pos + 1
	for {
		j := bytes.IndexByte(d.data[i:], '"')
		if j < 0 {
			return d.errEOF()
		}
		i += j
		backslashes := 0
		for k := i - 1; k > d.pos && d.data[k] == '\\'; k-- {
			backslashes++
		}
		i++
		if backslashes%2 == 0 {
			d.pos = i
			return nil
		}
	}
}

// skipValue steps over one value of valid JSON without decoding it.
func (d *decoder) skipValue() error {
	if d.pos >= len(d.data) {
		return d.errEOF()
	}
	switch d.data[d.pos] {
	case '"':
		return d.skipString()
	case '{', '[':
		level := 0
		for d.pos < len(d.data) {
			switch d.data[d.pos] {
			case '"':
				if err := d.skipString(); err != nil {
					return err
				}
				continue
			case '{', '[':
				level++
			case '}', ']':
				level--
				if level == 0 {
					d.pos++
					return nil
				}
			}
			d.pos++
		}
		return d.errEOF()
	}
	start := d.pos
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			if d.pos == start {
				return d.errorf("invalid character %s looking for beginning of value", quoteChar(d.data[d.pos]))
			}
			return nil
		}
		d.pos++
	}
	return nil
}
