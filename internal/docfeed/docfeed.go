// Package docfeed splits a document feed page — the body of a query or change feed
// response, {"_rid":…,"Documents":[…],"_count":N} — into its items without decoding
// them: one pass over the bytes checks that the body is JSON and finds where each item
// of the Documents array starts and ends, and each item is the bytes the service sent
// (a slice of the body, not a copy).
//
// It gives what json.Unmarshal into a cosmos.DocumentFeed gives, item for item and
// error for error: a body of another shape than the usual one (keys spelled in another
// case or with escapes, a key twice, Documents null or not an array, _count not an
// int) is handed to json.Unmarshal, so that the odd cases keep its answer and its
// error messages. It owns no I/O and keeps nothing.
package docfeed

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// Items are the items of the page's Documents array, in order, each the exact bytes of
// the value in body (leading and trailing white space excluded, inner white space
// kept), with no room to grow into the body after it. An error is json.Unmarshal's for
// a body that is not a document feed.
func Items(body []byte) ([]json.RawMessage, error) {
	s := scanner{b: body}
	items, err := s.page()
	if err == nil {
		return items, nil
	}
	// The odd case or an error: json.Unmarshal decides, with its own words.
	var feed cosmos.DocumentFeed
	if err := json.Unmarshal(body, &feed); err != nil {
		return nil, err
	}
	return feed.Documents, nil
}

// errOther: the fast path gives up; json.Unmarshal answers.
var errOther = errors.New("not the usual document feed")

// maxDepth is encoding/json's nesting limit: a deeper body goes to json.Unmarshal, which
// refuses it.
const maxDepth = 10000

type scanner struct {
	b []byte
	i int
}

// page reads the whole body: an object with Documents, _rid and _count, each at most
// once and spelled so, and any other members.
func (s *scanner) page() ([]json.RawMessage, error) {
	s.space()
	if !s.eat('{') {
		return nil, errOther
	}
	var items []json.RawMessage
	var seenDocs, seenRID, seenCount bool
	s.space()
	if !s.eat('}') {
		for {
			s.space()
			k0, k1, err := s.str()
			if err != nil {
				return nil, err
			}
			key := s.b[k0+1 : k1-1]
			s.space()
			if !s.eat(':') {
				return nil, errOther
			}
			s.space()
			switch {
			case bytes.IndexByte(key, '\\') >= 0:
				return nil, errOther
			case string(key) == "Documents":
				if seenDocs {
					return nil, errOther
				}
				seenDocs = true
				if items, err = s.documents(); err != nil {
					return nil, err
				}
			case string(key) == "_rid":
				if seenRID || !s.at('"') && !s.at('n') {
					return nil, errOther
				}
				seenRID = true
				if err := s.value(1); err != nil {
					return nil, err
				}
			case string(key) == "_count":
				if seenCount {
					return nil, errOther
				}
				seenCount = true
				v0 := s.i
				if err := s.value(1); err != nil {
					return nil, err
				}
				if !smallInt(s.b[v0:s.i]) {
					return nil, errOther
				}
			case bytes.EqualFold(key, []byte("Documents")) || bytes.EqualFold(key, []byte("_rid")) || bytes.EqualFold(key, []byte("_count")):
				return nil, errOther // json.Unmarshal matches keys in any case
			default:
				if err := s.value(1); err != nil {
					return nil, err
				}
			}
			s.space()
			if s.eat('}') {
				break
			}
			if !s.eat(',') {
				return nil, errOther
			}
		}
	}
	s.space()
	if s.i != len(s.b) {
		return nil, errOther
	}
	return items, nil
}

// documents reads the Documents array (or null: no items).
func (s *scanner) documents() ([]json.RawMessage, error) {
	if !s.eat('[') {
		if s.at('n') {
			return nil, s.value(1)
		}
		return nil, errOther
	}
	var items []json.RawMessage
	s.space()
	if s.eat(']') {
		return []json.RawMessage{}, nil
	}
	for {
		s.space()
		v0 := s.i
		if err := s.value(2); err != nil {
			return nil, err
		}
		if items == nil {
			// Room for as many items as the rest of the body holds if they are the
			// size of the first (up to a full page's): one allocation, not the ten of
			// growing from a few to a thousand.
			items = make([]json.RawMessage, 0, min((len(s.b)-v0)/(s.i-v0+1)+1, 1024))
		}
		items = append(items, s.b[v0:s.i:s.i])
		s.space()
		if s.eat(']') {
			return items, nil
		}
		if !s.eat(',') {
			return nil, errOther
		}
	}
}

// smallInt: a JSON number json.Unmarshal stores in an int without an error (null too).
func smallInt(v []byte) bool {
	if string(v) == "null" {
		return true
	}
	digits := bytes.TrimPrefix(v, []byte("-"))
	return len(digits) > 0 && digits[0] >= '0' && digits[0] <= '9' && len(digits) <= 18 && bytes.IndexAny(digits, ".eE") < 0
}

func (s *scanner) at(c byte) bool { return s.i < len(s.b) && s.b[s.i] == c }

func (s *scanner) eat(c byte) bool {
	if s.at(c) {
		s.i++
		return true
	}
	return false
}

// space skips JSON's insignificant white space.
func (s *scanner) space() {
	if s.i < len(s.b) && s.b[s.i] > ' ' {
		return // compact JSON: the common case, kept inlinable
	}
	s.spaces()
}

func (s *scanner) spaces() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value checks the JSON value at s.i and moves past it.
func (s *scanner) value(depth int) error {
	if s.i >= len(s.b) {
		return errOther
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, _, err := s.str()
		return err
	case c == '{':
		return s.object(depth + 1)
	case c == '[':
		return s.array(depth + 1)
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	case c == 't':
		return s.word("true")
	case c == 'f':
		return s.word("false")
	case c == 'n':
		return s.word("null")
	}
	return errOther
}

func (s *scanner) object(depth int) error {
	if depth > maxDepth {
		return errOther
	}
	s.i++ // {
	s.space()
	if s.eat('}') {
		return nil
	}
	for {
		s.space()
		if _, _, err := s.str(); err != nil {
			return err
		}
		s.space()
		if !s.eat(':') {
			return errOther
		}
		s.space()
		if err := s.value(depth); err != nil {
			return err
		}
		s.space()
		if s.eat('}') {
			return nil
		}
		if !s.eat(',') {
			return errOther
		}
	}
}

func (s *scanner) array(depth int) error {
	if depth > maxDepth {
		return errOther
	}
	s.i++ // [
	s.space()
	if s.eat(']') {
		return nil
	}
	for {
		s.space()
		if err := s.value(depth); err != nil {
			return err
		}
		s.space()
		if s.eat(']') {
			return nil
		}
		if !s.eat(',') {
			return errOther
		}
	}
}

// str checks the string at s.i and moves past it; [start, end) are its bytes, quotes
// included. Bytes that are not UTF-8 pass, as they pass encoding/json.
func (s *scanner) str() (start, end int, err error) {
	if !s.at('"') {
		return 0, 0, errOther
	}
	start = s.i
	b := s.b
	for i := s.i + 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return start, s.i, nil
		case c == '\\':
			i++
			if i >= len(b) {
				return 0, 0, errOther
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
					return 0, 0, errOther
				}
				i += 4
			default:
				return 0, 0, errOther
			}
		case c < 0x20:
			return 0, 0, errOther
		}
	}
	return 0, 0, errOther
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// number checks the number at s.i: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() error {
	s.eat('-')
	switch {
	case s.eat('0'):
	case s.digits() == 0:
		return errOther
	}
	if s.eat('.') && s.digits() == 0 {
		return errOther
	}
	if s.eat('e') || s.eat('E') {
		if !s.eat('+') {
			s.eat('-')
		}
		if s.digits() == 0 {
			return errOther
		}
	}
	return nil
}

func (s *scanner) digits() int {
	i0 := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i - i0
}

func (s *scanner) word(w string) error {
	if len(s.b)-s.i < len(w) || string(s.b[s.i:s.i+len(w)]) != w {
		return errOther
	}
	s.i += len(w)
	return nil
}

// Member is the value of the member name of the JSON object item, found as
// json.Unmarshal into a struct with a field tagged name finds it (the last one when it
// is there twice), without decoding the rest: one pass that checks the item is JSON and
// skips every other member. ok is false when that pass cannot say (item is not an
// object, or not JSON, or has a key spelled with escapes, with bytes that are not ASCII,
// or like name in another case, which json.Unmarshal would match): decode item then.
// name is ASCII without escapes.
func Member(item []byte, name string) (value []byte, found, ok bool) {
	s := scanner{b: item}
	s.space()
	if !s.eat('{') {
		return nil, false, false
	}
	s.space()
	if !s.eat('}') {
		for {
			s.space()
			k0, k1, err := s.str()
			if err != nil {
				return nil, false, false
			}
			key := item[k0+1 : k1-1]
			for _, c := range key {
				if c == '\\' || c >= 0x80 {
					return nil, false, false
				}
			}
			mine := string(key) == name
			if !mine && bytes.EqualFold(key, []byte(name)) {
				return nil, false, false
			}
			s.space()
			if !s.eat(':') {
				return nil, false, false
			}
			s.space()
			v0 := s.i
			if s.value(1) != nil {
				return nil, false, false
			}
			if mine {
				value, found = item[v0:s.i:s.i], true
			}
			s.space()
			if s.eat('}') {
				break
			}
			if !s.eat(',') {
				return nil, false, false
			}
		}
	}
	s.space()
	if s.i != len(item) {
		return nil, false, false
	}
	return value, found, true
}
