package jsondoc

import (
	"unicode/utf16"
)

// likeExpr is x LIKE pattern [ESCAPE 'c'], as Microsoft Learn documents it
// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/keywords#like, now
// https://learn.microsoft.com/cosmos-db/query/like): % is any run of zero or more
// characters, _ any one character, [a-f] and [abc] one character of a range or set,
// [^a-f] one character outside it; a wildcard in brackets is literal ("20-30[%]"
// matches "20-30%", "[_]n" matches "_n", "[[]" matches "["), and ESCAPE names a
// character that makes the next one literal (LIKE "%20^%%" ESCAPE "^"). The match
// is case-sensitive, over the whole string, like the RegexMatch the page calls
// equivalent. NOT LIKE is the negation.
//
// Not documented, so the emulator decides and the README says: operands that are
// not strings make LIKE undefined (as every comparison of other types is); a
// character is a UTF-16 code unit, as in LENGTH (strings16.go), so _ matches half
// of a character outside the Basic Multilingual Plane and "__" the whole of it; a
// "[" with no closing "]" is literal; an escape character at the end of the pattern
// matches itself; an ESCAPE that is not a string of one character makes LIKE
// undefined.
type likeExpr struct {
	x, pattern, escape expr // escape is nil without ESCAPE
}

func (x *likeExpr) compound() {}

func (x *likeExpr) children() []expr {
	if x.escape == nil {
		return []expr{x.x, x.pattern}
	}
	return []expr{x.x, x.pattern, x.escape}
}

func (x *likeExpr) appendSQL(b []byte) []byte {
	b = append(b, '(')
	b = x.x.appendSQL(b)
	b = append(b, " LIKE "...)
	b = x.pattern.appendSQL(b)
	if x.escape != nil {
		b = append(b, " ESCAPE "...)
		b = x.escape.appendSQL(b)
	}
	return append(b, ')')
}

func (x *likeExpr) eval(env *evalEnv) *Value {
	s, ok1 := str(x.x.eval(env))
	pat, ok2 := str(x.pattern.eval(env))
	if !ok1 || !ok2 {
		return nil
	}
	esc := -1
	if x.escape != nil {
		e, ok := str(x.escape.eval(env))
		u := utf16.Encode([]rune(e))
		if !ok || len(u) != 1 {
			return nil
		}
		esc = int(u[0])
	}
	return boolResult(likeMatch(utf16.Encode([]rune(s)), compileLike(utf16.Encode([]rune(pat)), esc)))
}

// like parses the rest of l [NOT] LIKE pattern [ESCAPE c], LIKE just consumed.
func (p *sqlParser) like(l expr) (expr, error) {
	pat, err := p.concat()
	if err != nil {
		return nil, err
	}
	x := &likeExpr{x: l, pattern: pat}
	if isKeyword(p.peek(), "ESCAPE") {
		t := p.next()
		if x.escape, err = p.concat(); err != nil {
			return nil, err
		}
		if lit, ok := x.escape.(*literalExpr); ok {
			if s, ok := str(lit.v); !ok || len(utf16.Encode([]rune(s))) != 1 {
				return nil, invalidQuery(t.pos, "ESCAPE takes a string of one character, such as ESCAPE '\\\\'")
			}
		}
	}
	return x, nil
}

// likeItem is one step of a compiled pattern.
type likeItem struct {
	kind   uint8 // likeLit, likeOne, likeAny, likeSet
	unit   uint16
	negate bool
	ranges []uint16 // pairs lo, hi
}

const (
	likeLit uint8 = iota
	likeOne
	likeAny
	likeSet
)

func compileLike(pat []uint16, esc int) []likeItem {
	var items []likeItem
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		switch {
		case int(c) == esc && i+1 < len(pat):
			i++
			items = append(items, likeItem{kind: likeLit, unit: pat[i]})
		case c == '%':
			if len(items) == 0 || items[len(items)-1].kind != likeAny {
				items = append(items, likeItem{kind: likeAny})
			}
		case c == '_':
			items = append(items, likeItem{kind: likeOne})
		case c == '[':
			end := -1
			for j := i + 1; j < len(pat); j++ {
				if pat[j] == ']' && j > i+1 {
					end = j
					break
				}
			}
			if end < 0 {
				items = append(items, likeItem{kind: likeLit, unit: c})
				continue
			}
			set := likeItem{kind: likeSet}
			body := pat[i+1 : end]
			if len(body) > 1 && body[0] == '^' {
				set.negate = true
				body = body[1:]
			}
			for j := 0; j < len(body); j++ {
				if j+2 < len(body) && body[j+1] == '-' {
					set.ranges = append(set.ranges, body[j], body[j+2])
					j += 2
					continue
				}
				set.ranges = append(set.ranges, body[j], body[j])
			}
			items = append(items, set)
			i = end
		default:
			items = append(items, likeItem{kind: likeLit, unit: c})
		}
	}
	return items
}

func (it *likeItem) matches(c uint16) bool {
	switch it.kind {
	case likeLit:
		return c == it.unit
	case likeOne:
		return true
	}
	in := false
	for k := 0; k+1 < len(it.ranges); k += 2 {
		if it.ranges[k] <= c && c <= it.ranges[k+1] {
			in = true
			break
		}
	}
	return in != it.negate
}

// likeMatch matches s against the compiled pattern, backtracking only to the last
// %, which makes it linear in practice and O(len(s)·len(items)) at worst.
func likeMatch(s []uint16, items []likeItem) bool {
	si, pi := 0, 0
	starP, starS := -1, 0
	for si < len(s) {
		switch {
		case pi < len(items) && items[pi].kind == likeAny:
			starP, starS = pi, si
			pi++
		case pi < len(items) && items[pi].matches(s[si]):
			si++
			pi++
		case starP >= 0:
			starS++
			si, pi = starS, starP+1
		default:
			return false
		}
	}
	for pi < len(items) && items[pi].kind == likeAny {
		pi++
	}
	return pi == len(items)
}
