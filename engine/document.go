package engine

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// A document to write is scanned once (ScanDocument): one pass validates its JSON and its
// UTF-8 and notes where its top-level members are, so that its id, its partition key and
// any _trackingId are read from the bytes as given, and a _trackingId is spliced into
// them, without decoding the document into maps or encoding it again. An import spent a
// fifth of its time parsing each line three times before (issue 25).
//
// The scan only ever says "this is a valid object, and here is what it holds" or "not
// sure": a document it does not accept (malformed JSON, invalid UTF-8, nesting deeper
// than it follows, a byte outside a string that is not JSON's) goes down the old path,
// encoding/json, which accepts or rejects it with the messages it always had. So the
// scan must never accept what encoding/json rejects, and where it accepts, it must read
// the same values: the last of duplicate keys wins, as in a decoded map; keys and
// strings are compared and read unescaped ("i\u0064" is the id); numbers are kept as
// their text (json.Number, as the decoder's UseNumber).

// Document is a JSON object scanned by ScanDocument. It is not changed after the scan,
// so it may be read from several goroutines.
type Document struct {
	raw []byte
	// open and close are the offsets of the object's braces in raw.
	open, close int32
	members     []member
	// idAt is the index in members of the last top-level "id", -1 if none; id is its
	// value when that is a string (idIsString).
	idAt       int
	id         string
	idIsString bool
	// tracked is how many top-level _trackingId members the document has.
	tracked int
	small   [16]member
}

// member is one member of an object: raw[key:keyEnd] is its key with the quotes, and
// raw[value:valueEnd] its value.
type member struct {
	key, keyEnd, value, valueEnd int32
	// escaped says the key has a backslash escape: it is compared unescaped.
	escaped bool
}

// maxScanDepth is the nesting the scan follows; a deeper document goes the old way
// (encoding/json's limit is 10000, and such documents are not worth a fast path).
const maxScanDepth = 1000

// ScanDocument scans b, a JSON object with nothing but JSON whitespace around it, all of
// it valid UTF-8. ok is false when b is not one, or the scan is not sure: the caller then
// decodes b with encoding/json as before, for its error message (or, in a case the scan
// leaves to it, its value).
func ScanDocument(b []byte) (*Document, bool) {
	if len(b) > math.MaxInt32 {
		return nil, false
	}
	s := scanner{b: b}
	s.space()
	if s.i >= len(b) || b[s.i] != '{' {
		return nil, false
	}
	d := &Document{raw: b, open: int32(s.i), idAt: -1}
	d.members = d.small[:0]
	if !s.object(1, &d.members) {
		return nil, false
	}
	d.close = int32(s.i - 1)
	s.space()
	if s.i != len(b) {
		return nil, false
	}
	for i := range d.members {
		m := &d.members[i]
		switch {
		case d.keyIs(m, "id"):
			d.idAt = i
		case d.keyIs(m, TrackingIDProperty):
			d.tracked++
		}
	}
	if d.idAt >= 0 {
		m := d.members[d.idAt]
		d.id, d.idIsString = d.stringAt(m.value, m.valueEnd)
	}
	return d, true
}

// Bytes is the document as it was scanned.
func (d *Document) Bytes() []byte { return d.raw }

// Members is the number of the document's top-level members, duplicates included.
func (d *Document) Members() int { return len(d.members) }

// Member is the document's i-th top-level member, in the document's order: its key as
// written, quotes included; whether that key has a backslash escape (then it reads
// otherwise than it is written: Key decodes it); and its value as written.
func (d *Document) Member(i int) (rawKey, value []byte, escaped bool) {
	m := d.members[i]
	return d.raw[m.key:m.keyEnd], d.raw[m.value:m.valueEnd], m.escaped
}

// Key is the i-th member's key as encoding/json reads it.
func (d *Document) Key(i int) string {
	m := d.members[i]
	k, _ := d.stringAt(m.key, m.keyEnd)
	return k
}

// ID is the value of the document's "id" (the last one, if it has several) when it is a
// string; ok is false when there is none or it is not a string.
func (d *Document) ID() (id string, ok bool) { return d.id, d.idIsString }

// PartitionKey reads the document's partition key at def's paths. ok is false when a
// path has no value, goes through something else than an object, or ends at an object
// or array, or the value is not a partition key (a number out of range): the caller then
// reads it the old way (PartitionKeyOfDocument), which says what is wrong.
func (d *Document) PartitionKey(def cosmos.PartitionKeyDefinition) (cosmos.PartitionKey, bool) {
	var buf [3]any
	values := buf[:0]
	for _, path := range def.Paths {
		v, ok := d.valueAt(path)
		if !ok {
			return nil, false
		}
		values = append(values, v)
	}
	pk, err := cosmos.PK(values...)
	return pk, err == nil
}

// valueAt is the scalar at path (as a decoded map holds it: string, json.Number, bool or
// nil), ok false for anything else.
func (d *Document) valueAt(path string) (any, bool) {
	members := d.members
	rest := strings.TrimPrefix(path, "/")
	for {
		seg, more, nested := strings.Cut(rest, "/")
		m, found := d.last(members, seg)
		if !found {
			return nil, false
		}
		if !nested {
			return d.scalar(m.value, m.valueEnd)
		}
		if d.raw[m.value] != '{' {
			return nil, false
		}
		// The object on the way to a nested key is scanned again for its members: it was
		// validated with the document, and is usually a few bytes.
		s := scanner{b: d.raw, i: int(m.value)}
		var inner []member
		if !s.object(1, &inner) {
			return nil, false
		}
		members, rest = inner, more
	}
}

// last is the last member of members keyed name.
func (d *Document) last(members []member, name string) (member, bool) {
	for i := len(members) - 1; i >= 0; i-- {
		if d.keyIs(&members[i], name) {
			return members[i], true
		}
	}
	return member{}, false
}

func (d *Document) keyIs(m *member, name string) bool {
	if !m.escaped {
		return string(d.raw[m.key+1:m.keyEnd-1]) == name
	}
	k, ok := d.stringAt(m.key, m.keyEnd)
	return ok && k == name
}

// stringAt reads the JSON string at raw[from:to], ok false if it is not a string.
func (d *Document) stringAt(from, to int32) (string, bool) {
	b := d.raw[from:to]
	if b[0] != '"' {
		return "", false
	}
	inner := b[1 : len(b)-1]
	for _, c := range inner {
		if c == '\\' {
			// encoding/json's own unescaping (a lone surrogate becomes U+FFFD), so that an
			// id or a key reads exactly as the decoder reads it.
			var s string
			return s, json.Unmarshal(b, &s) == nil
		}
	}
	return string(inner), true
}

// scalar is the value at raw[from:to] as encoding/json decodes it with UseNumber, ok
// false for an object or an array.
func (d *Document) scalar(from, to int32) (any, bool) {
	switch d.raw[from] {
	case '"':
		return d.stringAt(from, to)
	case 't':
		return true, true
	case 'f':
		return false, true
	case 'n':
		return nil, true
	case '{', '[':
		return nil, false
	}
	return json.Number(d.raw[from:to]), true
}

// withTrackingID is the document with _trackingId set to id as its last member: the
// bytes as given with the member added before the closing brace, or, when the document
// already has a _trackingId, its other members in their order without it. This is what
// the stored item looked like when the document was decoded and encoded again (the old
// withTrackingID), minus the re-encoding.
func (d *Document) withTrackingID(id string) []byte {
	out := make([]byte, 0, len(d.raw)+len(TrackingIDProperty)+len(id)+8)
	n := len(d.members)
	if d.tracked == 0 {
		out = append(out, d.raw[:d.close]...)
	} else {
		out = append(out, d.raw[:d.open+1]...)
		n = 0
		for i := range d.members {
			m := &d.members[i]
			if d.keyIs(m, TrackingIDProperty) {
				continue
			}
			if n > 0 {
				out = append(out, ',')
			}
			out = append(out, d.raw[m.key:m.valueEnd]...)
			n++
		}
	}
	if n > 0 {
		out = append(out, ',')
	}
	out = append(out, `"`+TrackingIDProperty+`":`...)
	out = strconv.AppendQuote(out, id) // as the old fmt %q
	return append(out, d.raw[d.close:]...)
}

// scanner validates JSON as encoding/json does, except that it also requires valid
// UTF-8 in strings (the callers refuse invalid UTF-8 anywhere) and gives up past
// maxScanDepth.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// object scans the object at s.i, appending its members to rec if rec is not nil.
func (s *scanner) object(depth int, rec *[]member) bool {
	if depth > maxScanDepth {
		return false
	}
	s.i++ // '{'
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	for {
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return false
		}
		key := s.i
		escaped, ok := s.str()
		if !ok {
			return false
		}
		keyEnd := s.i
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.space()
		value := s.i
		if !s.value(depth) {
			return false
		}
		if rec != nil {
			*rec = append(*rec, member{key: int32(key), keyEnd: int32(keyEnd), value: int32(value), valueEnd: int32(s.i), escaped: escaped})
		}
		if done, ok := s.separator('}'); done || !ok {
			return ok
		}
	}
}

func (s *scanner) array(depth int) bool {
	if depth > maxScanDepth {
		return false
	}
	s.i++ // '['
	s.space()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return true
	}
	for {
		if !s.value(depth) {
			return false
		}
		if done, ok := s.separator(']'); done || !ok {
			return ok
		}
	}
}

// separator reads what follows a member or element: a comma (more follow) or
// closing, which ends the container (done); anything else is not JSON (!ok).
func (s *scanner) separator(closing byte) (done, ok bool) {
	s.space()
	if s.i >= len(s.b) {
		return false, false
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		s.space()
		return false, true
	case closing:
		s.i++
		return true, true
	}
	return false, false
}

// value scans the value at s.i, inside a container at depth.
func (s *scanner) value(depth int) bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, ok := s.str()
		return ok
	case c == '{':
		return s.object(depth+1, nil)
	case c == '[':
		return s.array(depth + 1)
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	}
	return false
}

func (s *scanner) literal(lit string) bool {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?; what follows it is the
// caller's to check.
func (s *scanner) number() bool {
	b := s.b
	if b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i >= len(b):
		return false
	case b[s.i] == '0':
		s.i++
	case '1' <= b[s.i] && b[s.i] <= '9':
		s.digits()
	default:
		return false
	}
	if s.i < len(b) && b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if s.i < len(b) && (b[s.i] == 'e' || b[s.i] == 'E') {
		s.i++
		if s.i < len(b) && (b[s.i] == '+' || b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// digits scans one or more digits.
func (s *scanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// str scans the string at s.i (its opening quote), and says whether it has an escape.
func (s *scanner) str() (escaped, ok bool) {
	b := s.b
	i := s.i + 1
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			s.i = i + 1
			return escaped, true
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return false, false
				}
				i += 6
			default:
				return false, false
			}
		case c < 0x20:
			return false, false
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return false, false
			}
			i += size
		}
	}
	return false, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
