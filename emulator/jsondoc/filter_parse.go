package jsondoc

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrUnsupported is wrapped by every error about SQL that Cosmos DB accepts
// but the emulator does not implement, so callers can tell "your query is
// wrong" from "the emulator cannot answer this" with errors.Is.
var ErrUnsupported = errors.New("unsupported query")

const supportedSQL = "the emulator supports SELECT [TOP n] * FROM c [WHERE ...] with comparisons, " +
	"AND/OR/NOT and IS_DEFINED, IS_NULL, STARTSWITH, CONTAINS, ARRAY_CONTAINS"

func unsupported(t token) error {
	found := strconv.Quote(t.text)
	if t.kind == tokEOF {
		found = "end of query"
	}
	return fmt.Errorf("%w: %s; found %s", ErrUnsupported, supportedSQL, found)
}

// Query is a parsed SELECT. Everything it can express is listed in
// [ParseQuery].
type Query struct {
	Alias string
	Top   int     // 0 means no TOP clause
	Where *Filter // nil matches every document
}

// Filter is a compiled WHERE expression.
type Filter struct {
	alias  string
	root   expr
	params []string
}

// ParseQuery parses SELECT [TOP n] * FROM <alias> [WHERE <expr>], where
// <expr> is built from
//
//   - <alias>, <alias>.a.b, <alias>["a"], <alias>.arr[0]
//   - 'string' or "string" literals with backslash escapes, numbers,
//     true, false, null and @parameters
//   - =, !=, <>, <, <=, >, >=, AND, OR, NOT and parentheses
//   - IS_DEFINED(x), IS_NULL(x), STARTSWITH(s, prefix[, ignoreCase]),
//     CONTAINS(s, sub[, ignoreCase]), ARRAY_CONTAINS(arr, v[, partial])
//
// Keywords and function names are case-insensitive; the alias and property
// names are not. Valid Cosmos SQL beyond this subset yields an error
// wrapping [ErrUnsupported].
func ParseQuery(sql string) (*Query, error) {
	p, err := newSQLParser(sql)
	if err != nil {
		return nil, err
	}
	t := p.next()
	if !isKeyword(t, "SELECT") {
		if t.kind == tokEOF {
			return nil, invalidQuery(t.pos, "empty query")
		}
		return nil, unsupported(t)
	}
	q := &Query{}
	if isKeyword(p.peek(), "TOP") {
		p.next()
		if q.Top, err = p.top(); err != nil {
			return nil, err
		}
	}
	if t := p.next(); !isPunct(t, "*") {
		return nil, unsupported(t)
	}
	if t := p.next(); !isKeyword(t, "FROM") {
		return nil, unsupported(t)
	}
	if q.Alias, err = p.parseAlias(); err != nil {
		return nil, err
	}
	t = p.next()
	if t.kind == tokEOF {
		return q, nil
	}
	if !isKeyword(t, "WHERE") {
		return nil, unsupported(t)
	}
	q.Where, err = p.filter()
	return q, err
}

// ParseCondition parses the condition of a conditional patch, which Cosmos
// DB spells FROM <alias> WHERE <expr>; <expr> is as in [ParseQuery].
func ParseCondition(cond string) (*Filter, error) {
	p, err := newSQLParser(cond)
	if err != nil {
		return nil, err
	}
	t := p.next()
	if !isKeyword(t, "FROM") {
		if t.kind == tokEOF {
			return nil, invalidQuery(t.pos, "empty patch condition; expected FROM c WHERE ...")
		}
		return nil, fmt.Errorf("%w: a patch condition has the form FROM c WHERE ...; found %q", ErrUnsupported, t.text)
	}
	if _, err := p.parseAlias(); err != nil {
		return nil, err
	}
	t = p.next()
	if !isKeyword(t, "WHERE") {
		if t.kind == tokEOF {
			return nil, invalidQuery(t.pos, "patch condition needs a WHERE clause")
		}
		return nil, unsupported(t)
	}
	return p.filter()
}

type sqlParser struct {
	toks   []token
	i      int
	alias  string
	depth  int
	params []string
}

func newSQLParser(src string) (*sqlParser, error) {
	toks, err := lexSQL(src)
	if err != nil {
		return nil, err
	}
	return &sqlParser{toks: toks}, nil
}

func (p *sqlParser) peek() token { return p.toks[p.i] }

func (p *sqlParser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

func isKeyword(t token, kw string) bool { return t.kind == tokIdent && strings.EqualFold(t.text, kw) }

func isPunct(t token, s string) bool { return t.kind == tokPunct && t.text == s }

// reserved maps the Cosmos SQL keywords that cannot be an alias or a bare
// identifier to whether the emulator's grammar uses them.
var reserved = map[string]bool{
	"SELECT": false, "TOP": true, "FROM": true, "WHERE": true, "AND": true, "OR": true,
	"NOT": true, "TRUE": true, "FALSE": true, "NULL": true,
	"UNDEFINED": false, "JOIN": false, "IN": false, "ORDER": false, "BY": false,
	"GROUP": false, "HAVING": false, "OFFSET": false, "LIMIT": false, "DISTINCT": false,
	"VALUE": false, "AS": false, "BETWEEN": false, "LIKE": false, "ESCAPE": false,
	"EXISTS": false, "ARRAY": false, "ASC": false, "DESC": false, "UDF": false,
}

func reservedWord(t token) (supported, ok bool) {
	if t.kind != tokIdent {
		return false, false
	}
	supported, ok = reserved[strings.ToUpper(t.text)]
	return supported, ok
}

// unexpected classifies a misplaced token t (just consumed): tokens of the
// supported grammar mean the query is malformed, anything else means it
// uses a feature the emulator lacks.
func (p *sqlParser) unexpected(t token, want string) error {
	if t.kind == tokEOF {
		return invalidQuery(t.pos, "unexpected end of query, expected %s", want)
	}
	if isKeyword(t, "NOT") {
		if sup, ok := reservedWord(p.peek()); ok && !sup {
			return unsupported(p.peek()) // NOT IN, NOT LIKE, NOT BETWEEN
		}
	}
	syntax := false
	switch t.kind {
	case tokNumber, tokString, tokParam:
		syntax = true
	case tokPunct:
		syntax = t.text != "*" && t.text != "-" // arithmetic
	case tokIdent:
		sup, ok := reservedWord(t)
		syntax = !ok || sup
	}
	if syntax {
		return invalidQuery(t.pos, "expected %s, found %s", want, t)
	}
	return unsupported(t)
}

func (p *sqlParser) top() (int, error) {
	t := p.next()
	if t.kind != tokNumber {
		if t.kind == tokParam {
			return 0, unsupported(t)
		}
		if t.kind == tokEOF {
			return 0, p.unexpected(t, "a number after TOP")
		}
		return 0, invalidQuery(t.pos, "expected a number after TOP, found %s", t)
	}
	n, err := strconv.Atoi(t.text)
	if err != nil || n < 1 {
		return 0, invalidQuery(t.pos, "TOP must be a positive integer, found %s", t.text)
	}
	return n, nil
}

func (p *sqlParser) parseAlias() (string, error) {
	t := p.next()
	if t.kind == tokEOF {
		return "", invalidQuery(t.pos, "expected a collection alias such as c after FROM")
	}
	if _, ok := reservedWord(t); ok || t.kind != tokIdent {
		return "", unsupported(t)
	}
	p.alias = t.text
	// FROM root r and FROM c AS x name the collection and then the alias the rest of
	// the query uses (the SDKs' samples query databases and containers that way).
	if isKeyword(p.peek(), "AS") {
		p.next()
		if t = p.peek(); t.kind != tokIdent {
			return "", unsupported(t)
		}
	}
	if t := p.peek(); t.kind == tokIdent {
		if _, ok := reservedWord(t); !ok {
			p.next()
			p.alias = t.text
		}
	}
	return p.alias, nil
}

func (p *sqlParser) filter() (*Filter, error) {
	root, err := p.expr()
	if err != nil {
		return nil, err
	}
	if t := p.next(); t.kind != tokEOF {
		return nil, p.unexpected(t, "AND, OR or the end of the query")
	}
	return &Filter{alias: p.alias, root: root, params: p.params}, nil
}

// enter bounds recursion for the same reason MaxDepth bounds documents.
func (p *sqlParser) enter() error {
	p.depth++
	if p.depth > MaxDepth {
		return invalidQuery(p.peek().pos, "expression nests deeper than %d levels", MaxDepth)
	}
	return nil
}

func (p *sqlParser) expr() (expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	return p.or()
}

func (p *sqlParser) or() (expr, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for isKeyword(p.peek(), "OR") {
		p.next()
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = &logicExpr{and: false, l: l, r: r}
	}
	return l, nil
}

func (p *sqlParser) and() (expr, error) {
	l, err := p.not()
	if err != nil {
		return nil, err
	}
	for isKeyword(p.peek(), "AND") {
		p.next()
		r, err := p.not()
		if err != nil {
			return nil, err
		}
		l = &logicExpr{and: true, l: l, r: r}
	}
	return l, nil
}

// not binds looser than comparisons, as in SQL: NOT c.a = 1 is
// NOT (c.a = 1).
func (p *sqlParser) not() (expr, error) {
	if !isKeyword(p.peek(), "NOT") {
		return p.comparison()
	}
	p.next()
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	x, err := p.not()
	if err != nil {
		return nil, err
	}
	return &notExpr{x: x}, nil
}

var cmpOps = map[string]string{"=": "=", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}

func (p *sqlParser) comparison() (expr, error) {
	l, err := p.primary()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	op, ok := cmpOps[t.text]
	if t.kind != tokPunct || !ok {
		return l, nil
	}
	p.next()
	r, err := p.primary()
	if err != nil {
		return nil, err
	}
	return &cmpExpr{op: op, l: l, r: r}, nil
}

// functions lists the supported built-ins with their argument counts.
var functions = map[string][2]int{
	"IS_DEFINED":     {1, 1},
	"IS_NULL":        {1, 1},
	"STARTSWITH":     {2, 3},
	"CONTAINS":       {2, 3},
	"ARRAY_CONTAINS": {2, 3},
}

func (p *sqlParser) primary() (expr, error) {
	t := p.next()
	switch t.kind {
	case tokNumber:
		return &literalExpr{v: Number(t.text)}, nil
	case tokString:
		return &literalExpr{v: String(t.text)}, nil
	case tokParam:
		p.params = append(p.params, t.text)
		return &paramExpr{name: t.text}, nil
	case tokPunct:
		switch t.text {
		case "(":
			x, err := p.expr()
			if err != nil {
				return nil, err
			}
			if c := p.next(); !isPunct(c, ")") {
				return nil, p.unexpected(c, `")"`)
			}
			return x, nil
		case "-":
			if n := p.peek(); n.kind == tokNumber {
				p.next()
				return &literalExpr{v: Number("-" + n.text)}, nil
			}
		}
	case tokIdent:
		switch strings.ToUpper(t.text) {
		case "TRUE":
			return &literalExpr{v: Bool(true)}, nil
		case "FALSE":
			return &literalExpr{v: Bool(false)}, nil
		case "NULL":
			return &literalExpr{v: Null()}, nil
		}
		if t.text == p.alias {
			return p.path()
		}
		if _, ok := reservedWord(t); ok {
			return nil, p.unexpected(t, "a value")
		}
		if isPunct(p.peek(), "(") {
			return p.call(t)
		}
		return nil, invalidQuery(t.pos, "identifier %q is not the FROM alias %q; refer to properties as %s.%s",
			t.text, p.alias, p.alias, t.text)
	}
	return nil, p.unexpected(t, "a value")
}

func (p *sqlParser) path() (expr, error) {
	x := &pathExpr{alias: p.alias}
	for {
		switch t := p.peek(); {
		case isPunct(t, "."):
			p.next()
			n := p.next()
			if n.kind != tokIdent {
				return nil, p.unexpected(n, "a property name")
			}
			x.segs = append(x.segs, pathSeg{key: n.text})
		case isPunct(t, "["):
			p.next()
			n := p.next()
			switch n.kind {
			case tokString:
				x.segs = append(x.segs, pathSeg{key: n.text})
			case tokNumber:
				i, err := strconv.Atoi(n.text)
				if err != nil || strings.ContainsAny(n.text, ".eE") {
					return nil, invalidQuery(n.pos, "array index must be a non-negative integer, found %s", n.text)
				}
				x.segs = append(x.segs, pathSeg{index: i, isIndex: true})
			case tokParam:
				return nil, unsupported(n)
			default:
				return nil, p.unexpected(n, "a property name or array index")
			}
			if c := p.next(); !isPunct(c, "]") {
				return nil, p.unexpected(c, `"]"`)
			}
		default:
			return x, nil
		}
	}
}

func (p *sqlParser) call(name token) (expr, error) {
	fn := strings.ToUpper(name.text)
	arity, ok := functions[fn]
	if !ok {
		return nil, unsupported(name)
	}
	p.next() // "("
	var args []expr
	if isPunct(p.peek(), ")") {
		p.next()
	} else {
		for {
			a, err := p.expr()
			if err != nil {
				return nil, err
			}
			args = append(args, a)
			t := p.next()
			if isPunct(t, ")") {
				break
			}
			if !isPunct(t, ",") {
				return nil, p.unexpected(t, `"," or ")"`)
			}
		}
	}
	if len(args) < arity[0] || len(args) > arity[1] {
		want := strconv.Itoa(arity[0])
		if arity[1] != arity[0] {
			want += " or " + strconv.Itoa(arity[1])
		}
		return nil, invalidQuery(name.pos, "%s takes %s arguments, got %d", fn, want, len(args))
	}
	return &callExpr{fn: fn, args: args}, nil
}
