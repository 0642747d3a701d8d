package jsondoc

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth bounds the nesting of arrays and objects. Documents come from
// untrusted clients and the decoder, Clone, Equal and the encoder all
// recurse, so the bound keeps a hostile body from exhausting the stack.
const MaxDepth = 128

// SyntaxError describes malformed JSON. Offset is the byte position at
// which the problem was detected, for error messages a user can act on.
type SyntaxError struct {
	Msg    string
	Offset int
}

func (e *SyntaxError) Error() string {
	return "invalid JSON at offset " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// Parse decodes exactly one JSON value; anything but whitespace after it is
// an error. Strings follow encoding/json: invalid UTF-8 bytes and unpaired
// surrogate escapes become U+FFFD instead of failing. Duplicate object keys
// keep the position of the first occurrence and the value of the last.
func Parse(data []byte) (*Value, error) {
	sc := scratchPool.Get().(*scratch)
	defer sc.release()
	d := decoder{data: data, src: string(data), scratch: sc}
	d.skipSpace()
	v := d.alloc()
	if err := d.value(v); err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.pos < len(d.data) {
		return nil, d.errorf("invalid character %s after top-level value", quoteChar(d.data[d.pos]))
	}
	return v, nil
}

// errNotObject is returned by ParseObject; Cosmos DB rejects every
// non-object document with this wording.
var errNotObject = errors.New("document must be a JSON object")

// ParseObject is Parse for documents, whose top level must be an object.
func ParseObject(data []byte) (*Value, error) {
	v, err := Parse(data)
	if err != nil {
		return nil, err
	}
	if v.Kind != KindObject {
		return nil, errNotObject
	}
	return v, nil
}

// decoder is a hand-written scanner: going through encoding/json tokens
// would allocate an interface per token and a string per key, and would
// still need a second pass to build the ordered tree.
type decoder struct {
	data []byte
	// src is data converted to a string once, so strings and numbers
	// without escapes become substrings of it instead of separate
	// allocations. The document keeps src alive, which is fine because
	// documents are small and held as a whole anyway.
	src   string
	pos   int
	depth int
	// slab, valSlab and memSlab hand out nodes, array backing and object
	// backing in chunks, turning a few hundred small allocations per
	// document into a handful; garbage collection dominated otherwise.
	slab    []Value
	valSlab []*Value
	memSlab []Member
	*scratch
}

// scratch holds stacks shared by all nesting levels, so each array or
// object is built once at its final size. Pooled because growing them
// again for every document showed up in profiles.
type scratch struct {
	vals []*Value
	mems []Member
}

var scratchPool = sync.Pool{New: func() any {
	return &scratch{vals: make([]*Value, 0, 64), mems: make([]Member, 0, 64)}
}}

// release empties the stacks (a failed parse leaves entries behind) so the
// pool pins no document, and drops stacks grown by an unusually wide one.
func (sc *scratch) release() {
	clear(sc.vals[:cap(sc.vals)])
	clear(sc.mems[:cap(sc.mems)])
	if cap(sc.vals) > 4096 || cap(sc.mems) > 4096 {
		return
	}
	sc.vals, sc.mems = sc.vals[:0], sc.mems[:0]
	scratchPool.Put(sc)
}

// takeVals returns a slice of length and capacity n carved from a chunk.
// The capacity is clipped so that appending to one array (as ApplyPatch
// does) reallocates instead of overwriting the next array in the chunk.
func (d *decoder) takeVals(n int) []*Value {
	if len(d.valSlab) < n {
		d.valSlab = make([]*Value, max(n, d.chunk(32, d.valSlab == nil)))
	}
	s := d.valSlab[:n:n]
	d.valSlab = d.valSlab[n:]
	return s
}

func (d *decoder) takeMems(n int) []Member {
	if len(d.memSlab) < n {
		d.memSlab = make([]Member, max(n, d.chunk(20, d.memSlab == nil)))
	}
	s := d.memSlab[:n:n]
	d.memSlab = d.memSlab[n:]
	return s
}

// chunk sizes a slab refill from the input still to be decoded, assuming
// one item per bytesPer bytes. The ratios are measured on typical
// documents; guessing low costs another chunk, guessing high wastes memory
// for as long as the document lives. The first chunk is sized from the
// whole input because containers are completed inside-out: when the
// innermost object takes its members, its parents' members were already
// scanned.
func (d *decoder) chunk(bytesPer int, first bool) int {
	n := len(d.data)
	if !first {
		n -= d.pos
	}
	return min(n/bytesPer+8, 1024)
}

func (d *decoder) alloc() *Value {
	if len(d.slab) == 0 {
		d.slab = make([]Value, d.chunk(16, d.slab == nil))
	}
	v := &d.slab[0]
	d.slab = d.slab[1:]
	return v
}

func (d *decoder) errorf(format string, args ...any) error {
	return &SyntaxError{Msg: fmt.Sprintf(format, args...), Offset: d.pos}
}

func (d *decoder) errEOF() error {
	return &SyntaxError{Msg: "unexpected end of JSON input", Offset: len(d.data)}
}

func (d *decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// value decodes into v, which the caller allocated so that slab nodes are
// filled in place. The caller has skipped leading whitespace.
func (d *decoder) value(v *Value) error {
	if d.pos >= len(d.data) {
		return d.errEOF()
	}
	switch c := d.data[d.pos]; c {
	case '{':
		return d.object(v)
	case '[':
		return d.array(v)
	case '"':
		s, err := d.str()
		if err != nil {
			return err
		}
		v.Kind, v.Str = KindString, s
		return nil
	case 't':
		return d.literal(v, "true", KindBool, true)
	case 'f':
		return d.literal(v, "false", KindBool, false)
	case 'n':
		return d.literal(v, "null", KindNull, false)
	default:
		if c == '-' || isDigit(c) {
			n := scanNumber(d.data[d.pos:])
			if n == 0 {
				return d.numberError()
			}
			v.Kind, v.Num = KindNumber, json.Number(d.src[d.pos:d.pos+n])
			d.pos += n
			return nil
		}
		return d.errorf("invalid character %s looking for beginning of value", quoteChar(c))
	}
}

func (d *decoder) literal(v *Value, word string, k Kind, b bool) error {
	for i := 0; i < len(word); i++ {
		if d.pos+i >= len(d.data) {
			return d.errEOF()
		}
		if d.data[d.pos+i] != word[i] {
			d.pos += i
			return d.errorf("invalid character %s in literal %s (expecting %s)",
				quoteChar(d.data[d.pos]), word, quoteChar(word[i]))
		}
	}
	d.pos += len(word)
	v.Kind, v.Bool = k, b
	return nil
}

// numberError finds the offending byte for a message that points at it.
func (d *decoder) numberError() error {
	i := d.pos
	if d.data[i] == '-' {
		i++
	}
	for i < len(d.data) && (isDigit(d.data[i]) || d.data[i] == '.' || d.data[i] == 'e' ||
		d.data[i] == 'E' || d.data[i] == '+' || d.data[i] == '-') {
		i++
	}
	if i >= len(d.data) {
		return d.errEOF()
	}
	d.pos = i
	return d.errorf("invalid character %s in numeric literal", quoteChar(d.data[i]))
}

func (d *decoder) enter() error {
	d.depth++
	if d.depth > MaxDepth {
		return d.errorf("exceeded maximum nesting depth of %d", MaxDepth)
	}
	return nil
}

func (d *decoder) array(v *Value) error {
	if err := d.enter(); err != nil {
		return err
	}
	d.pos++ // '['
	d.skipSpace()
	v.Kind = KindArray
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		d.depth--
		v.Arr = []*Value{}
		return nil
	}
	base := len(d.vals)
	for {
		d.skipSpace()
		e := d.alloc()
		if err := d.value(e); err != nil {
			return err
		}
		d.vals = append(d.vals, e)
		d.skipSpace()
		if d.pos >= len(d.data) {
			return d.errEOF()
		}
		c := d.data[d.pos]
		d.pos++
		if c == ']' {
			break
		}
		if c != ',' {
			d.pos--
			return d.errorf("invalid character %s after array element", quoteChar(c))
		}
	}
	v.Arr = d.takeVals(len(d.vals) - base)
	copy(v.Arr, d.vals[base:])
	clear(d.vals[base:])
	d.vals = d.vals[:base]
	d.depth--
	return nil
}

// dedupeMapAt is the member count from which duplicate keys are found with
// a map; below it a linear scan is cheaper than building the map.
const dedupeMapAt = 32

func (d *decoder) object(v *Value) error {
	if err := d.enter(); err != nil {
		return err
	}
	d.pos++ // '{'
	d.skipSpace()
	v.Kind = KindObject
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		d.depth--
		v.Obj = []Member{}
		return nil
	}
	base := len(d.mems)
	var seen map[string]int
	for {
		d.skipSpace()
		if d.pos >= len(d.data) {
			return d.errEOF()
		}
		if d.data[d.pos] != '"' {
			return d.errorf("invalid character %s looking for beginning of object key string", quoteChar(d.data[d.pos]))
		}
		key, err := d.str()
		if err != nil {
			return err
		}
		d.skipSpace()
		if d.pos >= len(d.data) {
			return d.errEOF()
		}
		if d.data[d.pos] != ':' {
			return d.errorf("invalid character %s after object key", quoteChar(d.data[d.pos]))
		}
		d.pos++
		d.skipSpace()
		e := d.alloc()
		if err := d.value(e); err != nil {
			return err
		}

		dup := -1
		n := len(d.mems) - base
		if seen != nil {
			if i, ok := seen[key]; ok {
				dup = base + i
			}
		} else {
			for i := base; i < len(d.mems); i++ {
				if d.mems[i].Key == key {
					dup = i
					break
				}
			}
		}
		if dup >= 0 {
			d.mems[dup].Val = e
		} else {
			d.mems = append(d.mems, Member{Key: key, Val: e})
			if seen != nil {
				seen[key] = n
			} else if n+1 == dedupeMapAt {
				seen = make(map[string]int, 2*dedupeMapAt)
				for i, m := range d.mems[base:] {
					seen[m.Key] = i
				}
			}
		}

		d.skipSpace()
		if d.pos >= len(d.data) {
			return d.errEOF()
		}
		c := d.data[d.pos]
		d.pos++
		if c == '}' {
			break
		}
		if c != ',' {
			d.pos--
			return d.errorf("invalid character %s after object key:value pair", quoteChar(c))
		}
	}
	v.Obj = d.takeMems(len(d.mems) - base)
	copy(v.Obj, d.mems[base:])
	clear(d.mems[base:])
	d.mems = d.mems[:base]
	d.depth--
	return nil
}

// str decodes the string starting at the opening quote at d.pos. The common
// case, plain text without escapes, returns a substring of the input.
func (d *decoder) str() (string, error) {
	start := d.pos + 1
	i := start
	for i < len(d.data) {
		c := d.data[i]
		switch {
		case c == '"':
			d.pos = i + 1
			return d.src[start:i], nil
		case c == '\\' || c < 0x20:
			return d.slowStr(start, i)
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(d.data[i:])
			if r == utf8.RuneError && size == 1 {
				return d.slowStr(start, i)
			}
			i += size
		}
	}
	return "", d.errEOF()
}

// slowStr finishes a string that needs rewriting from i on. It mirrors
// encoding/json's unquoting so that both decoders agree on every input.
func (d *decoder) slowStr(start, i int) (string, error) {
	var buf strings.Builder
	// Decoding never lengthens the text except for invalid UTF-8, so the
	// raw length up to the closing quote is almost always enough.
	end := i
	for end < len(d.data) && d.data[end] != '"' {
		if d.data[end] == '\\' {
			end++
		}
		end++
	}
	buf.Grow(min(end, len(d.data)) - start)
	buf.WriteString(d.src[start:i])
	for i < len(d.data) {
		c := d.data[i]
		switch {
		case c == '"':
			d.pos = i + 1
			return buf.String(), nil
		case c < 0x20:
			d.pos = i
			return "", d.errorf("invalid character %s in string literal", quoteChar(c))
		case c == '\\':
			if i+1 >= len(d.data) {
				return "", d.errEOF()
			}
			e := d.data[i+1]
			switch e {
			case '"', '\\', '/':
				buf.WriteByte(e)
			case 'b':
				buf.WriteByte('\b')
			case 'f':
				buf.WriteByte('\f')
			case 'n':
				buf.WriteByte('\n')
			case 'r':
				buf.WriteByte('\r')
			case 't':
				buf.WriteByte('\t')
			case 'u':
				r, ok := hex4(d.data[i+2:])
				if !ok {
					return "", d.hexError(i + 2)
				}
				i += 6
				if utf16.IsSurrogate(r) {
					// A surrogate counts only as the first half of a valid
					// pair; otherwise it becomes U+FFFD and the next escape
					// is decoded on its own.
					if len(d.data) > i+1 && d.data[i] == '\\' && d.data[i+1] == 'u' {
						if r2, ok := hex4(d.data[i+2:]); ok {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								buf.WriteRune(dec)
								i += 6
								continue
							}
						}
					}
					r = utf8.RuneError
				}
				buf.WriteRune(r)
				continue
			default:
				d.pos = i + 1
				return "", d.errorf("invalid character %s in string escape code", quoteChar(e))
			}
			i += 2
		case c < utf8.RuneSelf:
			buf.WriteByte(c)
			i++
		default:
			r, size := utf8.DecodeRune(d.data[i:])
			if r == utf8.RuneError && size == 1 {
				buf.WriteRune(utf8.RuneError)
			} else {
				buf.Write(d.data[i : i+size])
			}
			i += size
		}
	}
	return "", d.errEOF()
}

func (d *decoder) hexError(i int) error {
	for j := i; j < i+4; j++ {
		if j >= len(d.data) {
			return d.errEOF()
		}
		if _, ok := unhex(d.data[j]); !ok {
			d.pos = j
			return d.errorf("invalid character %s in \\u hexadecimal character escape", quoteChar(d.data[j]))
		}
	}
	return d.errEOF()
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		n, ok := unhex(c)
		if !ok {
			return 0, false
		}
		r = r<<4 | rune(n)
	}
	return r, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// quoteChar formats a byte for an error message the way encoding/json does.
func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}
