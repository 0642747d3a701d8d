package jsondoc

import (
	"bytes"
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

// parseObjectFieldsInto is ParseObjectFields reusing obj (when not nil) for
// the result, so that a scan whose documents are done with after one
// evaluation allocates only their kept values. With uniqueKeys (stored
// documents, which the emulator writes without duplicate keys) it stops
// reading once every field was found.
func parseObjectFieldsInto(obj *Value, data []byte, fields []string, uniqueKeys bool) (*Value, error) {
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
	if obj == nil {
		obj = &Value{Kind: KindObject, Obj: make([]Member, 0, len(fields))}
	} else {
		clear(obj.Obj)
		*obj = Value{Kind: KindObject, Obj: obj.Obj[:0]}
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
			v, err := parseScalarFast(data[valStart:d.pos])
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
// strings directly (they are what filters and sort keys mostly read), the
// rest with Parse.
func parseScalarFast(raw []byte) (*Value, error) {
	switch c := raw[0]; {
	case c == '"' && len(raw) >= 2:
		body := raw[1 : len(raw)-1]
		plain := utf8.Valid(body)
		for _, b := range body {
			if b == '\\' || b < 0x20 {
				plain = false
				break
			}
		}
		if plain && raw[len(raw)-1] == '"' {
			return String(string(body)), nil
		}
	case c == '-' || isDigit(c):
		if scanNumber(raw) == len(raw) {
			return Number(string(raw)), nil
		}
	case string(raw) == "true":
		return Bool(true), nil
	case string(raw) == "false":
		return Bool(false), nil
	case string(raw) == "null":
		return Null(), nil
	}
	return Parse(raw)
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
