package jsondoc

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

type tokKind uint8

const (
	tokEOF tokKind = iota
	// tokIdent covers keywords too: whether a word is a keyword depends on
	// where it appears (c.value and c.top are ordinary property names).
	tokIdent
	tokNumber
	tokString
	tokParam
	// tokPunct is punctuation the supported grammar uses.
	tokPunct
	// tokOther is any other character or operator (&, |, ^, ~, <<, ...). It is
	// kept as a token rather than failing in the lexer so the parser can
	// report it as unsupported, with the list of what is supported.
	tokOther
)

type token struct {
	kind tokKind
	// text is the source text, except for strings where it is the decoded
	// value and numbers where it is normalised to a JSON number.
	text string
	pos  int
}

func (t token) String() string {
	if t.kind == tokEOF {
		return "end of query"
	}
	if t.kind == tokString {
		return fmt.Sprintf("string %q", t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

func invalidQuery(pos int, format string, args ...any) error {
	return fmt.Errorf("invalid query at offset %d: %s", pos, fmt.Sprintf(format, args...))
}

func lexSQL(src string) ([]token, error) {
	var toks []token
	i := 0
	for {
		for i < len(src) && isSQLSpace(src[i]) {
			i++
		}
		if i >= len(src) {
			return append(toks, token{kind: tokEOF, pos: i}), nil
		}
		start := i
		c := src[i]
		switch {
		case c == '\'' || c == '"':
			s, n, err := lexString(src, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tokString, text: s, pos: start})
			i += n
		case isDigit(c):
			n, err := lexNumber(src, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tokNumber, text: normalizeNumber(src[i : i+n]), pos: start})
			i += n
		case c == '@':
			n := identLen(src[i+1:])
			if n == 0 {
				return nil, invalidQuery(i, "expected a parameter name after @")
			}
			toks = append(toks, token{kind: tokParam, text: src[i : i+1+n], pos: start})
			i += 1 + n
		default:
			if n := identLen(src[i:]); n > 0 {
				toks = append(toks, token{kind: tokIdent, text: src[i : i+n], pos: start})
				i += n
				continue
			}
			kind, n := lexOperator(src[i:])
			toks = append(toks, token{kind: kind, text: src[i : i+n], pos: start})
			i += n
		}
	}
}

func isSQLSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func lexOperator(s string) (tokKind, int) {
	if len(s) >= 2 {
		switch s[:2] {
		case "!=", "<>", "<=", ">=", "||", "??":
			return tokPunct, 2
		case "<<", ">>":
			return tokOther, 2
		}
	}
	switch s[0] {
	case '(', ')', '[', ']', '{', '}', ',', '.', ':', '?', '*', '/', '%', '+', '=', '<', '>', '-':
		return tokPunct, 1
	}
	if s[0] < utf8.RuneSelf {
		return tokOther, 1
	}
	_, n := utf8.DecodeRuneInString(s)
	return tokOther, n
}

// identLen returns the length of the identifier at the start of s.
func identLen(s string) int {
	i := 0
	for i < len(s) {
		r, n := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(s[i:])
		}
		if r == '_' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r)) {
			i += n
			continue
		}
		break
	}
	return i
}

func isIdent(s string) bool { return s != "" && identLen(s) == len(s) }

// lexNumber scans digits[.digits][e[+-]digits]. A trailing "." without
// digits is left for the parser, which rejects it.
func lexNumber(s string, i int) (int, error) {
	start := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i+1 < len(s) && s[i] == '.' && isDigit(s[i+1]) {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j >= len(s) || !isDigit(s[j]) {
			return 0, invalidQuery(start, "malformed number %q", s[start:j])
		}
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		i = j
	}
	return i - start, nil
}

// normalizeNumber drops redundant leading zeros ("007" is a valid SQL
// literal but not a valid JSON number) so literals can be used as Values.
func normalizeNumber(s string) string {
	i := 0
	for i+1 < len(s) && s[i] == '0' && isDigit(s[i+1]) {
		i++
	}
	return s[i:]
}

// lexString decodes a quoted literal. Escapes are JSON's plus \' so either
// quote character can be used. Invalid UTF-8 becomes U+FFFD as in Parse.
func lexString(s string, start int) (string, int, error) {
	q := s[start]
	var b strings.Builder
	i := start + 1
	for i < len(s) {
		c := s[i]
		switch {
		case c == q:
			return b.String(), i + 1 - start, nil
		case c == '\\':
			if i+1 >= len(s) {
				return "", 0, invalidQuery(start, "unterminated string literal")
			}
			switch e := s[i+1]; e {
			case '\'', '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, ok := hex4([]byte(s[i+2 : min(i+6, len(s))]))
				if !ok {
					return "", 0, invalidQuery(i, `invalid \u escape in string literal`)
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						if r2, ok := hex4([]byte(s[i+2 : i+6])); ok {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								b.WriteRune(dec)
								i += 6
								continue
							}
						}
					}
					r = utf8.RuneError
				}
				b.WriteRune(r)
				continue
			default:
				return "", 0, invalidQuery(i, "invalid escape \\%c in string literal", e)
			}
			i += 2
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			b.WriteRune(r) // RuneError for invalid bytes
			i += n
		}
	}
	return "", 0, invalidQuery(start, "unterminated string literal")
}
