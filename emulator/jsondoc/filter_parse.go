package jsondoc

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ErrUnsupported is wrapped by every error about SQL that Cosmos DB accepts
// but the emulator does not implement, so callers can tell "your query is
// wrong" from "the emulator cannot answer this" with errors.Is.
var ErrUnsupported = errors.New("unsupported query")

// supportedSQL summarises the grammar for error messages: a user who hit a
// limit learns in one line what the emulator does understand.
var supportedSQL = sync.OnceValue(func() string {
	names := make([]string, 0, len(builtins()))
	for name := range builtins() {
		names = append(names, name)
	}
	slices.Sort(names)
	return "the emulator supports SELECT [DISTINCT] [TOP n] * | VALUE expr | expr [AS name], … " +
		"[FROM c [JOIN t IN c.path | JOIN (SELECT …) x, …]] [WHERE …] [GROUP BY expr, …] [ORDER BY path [ASC|DESC], …] [OFFSET n LIMIT m] " +
		"with EXISTS(SELECT …), ARRAY(SELECT …) and (SELECT …) subqueries, " +
		"with comparisons, IN, BETWEEN, [NOT] LIKE … [ESCAPE …], AND/OR/NOT, + - * / %, ||, ??, ?:, object and array constructors, " +
		"@parameters, the aggregates COUNT, SUM, MIN, MAX, AVG and the functions " + strings.Join(names, ", ")
})

func unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s; %s", ErrUnsupported, fmt.Sprintf(format, args...), supportedSQL())
}

func unsupported(t token) error {
	found := strconv.Quote(t.text)
	if t.kind == tokEOF {
		found = "end of query"
	}
	return unsupportedf("found %s", found)
}

// Filter is a compiled WHERE expression.
type Filter struct {
	alias  string
	root   expr
	params []string
}

// ParseCondition parses the condition of a conditional patch, which Cosmos
// DB spells FROM <alias> WHERE <expr>; <expr> is as in [ParseQuery] minus
// aggregates.
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
	p.scopes = []*scope{{container: p.alias}}
	t = p.next()
	if !isKeyword(t, "WHERE") {
		if t.kind == tokEOF {
			return nil, invalidQuery(t.pos, "patch condition needs a WHERE clause")
		}
		return nil, unsupported(t)
	}
	root, err := p.expr()
	if err != nil {
		return nil, err
	}
	if t := p.next(); t.kind != tokEOF {
		return nil, p.unexpected(t, "AND, OR or the end of the query")
	}
	return &Filter{alias: p.alias, root: root, params: p.params}, nil
}

type sqlParser struct {
	toks   []token
	i      int
	alias  string
	depth  int
	params []string
	// aggOK is set while the SELECT list is parsed, the only place where
	// aggregate functions may appear, and inAgg inside an aggregate's
	// argument; aggs collects them in order.
	aggOK, inAgg bool
	aggs         []*aggExpr
	// rankOK is set while the ORDER BY RANK expression is parsed, the only
	// place where the scoring functions may appear (fulltext_score.go), and
	// inRRF inside RRF's arguments, where RRF may not.
	rankOK, inRRF bool
	// scopes are the aliases of the SELECTs being parsed, outermost first
	// (query_from.go); containerName is the container's name in a FROM that
	// binds no alias to it (FROM t IN c.tags).
	scopes        []*scope
	containerName string
}

func newSQLParser(src string) (*sqlParser, error) {
	toks, err := lexSQL(src)
	if err != nil {
		return nil, err
	}
	return &sqlParser{toks: toks}, nil
}

func (p *sqlParser) peek() token { return p.toks[p.i] }

func (p *sqlParser) peekAt(n int) token {
	if p.i+n >= len(p.toks) {
		return p.toks[len(p.toks)-1]
	}
	return p.toks[p.i+n]
}

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
	"NOT": true, "TRUE": true, "FALSE": true, "NULL": true, "UNDEFINED": true,
	"JOIN": true, "IN": true, "ORDER": true, "BY": true, "GROUP": true, "HAVING": false,
	"OFFSET": true, "LIMIT": true, "DISTINCT": true, "VALUE": true, "AS": true,
	"BETWEEN": true, "LIKE": true, "ESCAPE": true, "EXISTS": false, "ARRAY": false,
	"ASC": true, "DESC": true, "UDF": false,
}

func reservedWord(t token) (supported, ok bool) {
	if t.kind != tokIdent {
		return false, false
	}
	if subqueryWords[strings.ToUpper(t.text)] {
		return true, true
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
			return unsupported(p.peek()) // NOT LIKE, NOT EXISTS
		}
	}
	syntax := false
	switch t.kind {
	case tokNumber, tokString, tokParam, tokPunct:
		syntax = true
	case tokIdent:
		sup, ok := reservedWord(t)
		syntax = !ok || sup
	}
	if syntax {
		return invalidQuery(t.pos, "expected %s, found %s", want, t)
	}
	return unsupported(t)
}

// parseAlias reads <collection> [[AS] <alias>] after FROM.
func (p *sqlParser) parseAlias() (string, error) {
	if _, err := p.parseCollection(); err != nil {
		return "", err
	}
	return p.alias, nil
}

func (p *sqlParser) parseCollection() (string, error) {
	t := p.next()
	if t.kind == tokEOF {
		return "", invalidQuery(t.pos, "expected a collection alias such as c after FROM")
	}
	if _, ok := reservedWord(t); ok || t.kind != tokIdent {
		return "", unsupported(t)
	}
	coll := t.text
	p.alias = t.text
	// FROM root r and FROM c AS x name the collection and then the alias the rest of
	// the query uses (the SDKs' samples query databases and containers that way).
	if isKeyword(p.peek(), "AS") {
		p.next()
		if t = p.peek(); t.kind != tokIdent {
			return "", p.unexpected(p.next(), "an alias after AS")
		}
		if _, ok := reservedWord(t); ok {
			return "", p.unexpected(p.next(), "an alias after AS")
		}
	}
	if t := p.peek(); t.kind == tokIdent {
		if _, ok := reservedWord(t); !ok {
			p.next()
			p.alias = t.text
		}
	}
	if isPunct(p.peek(), ".") || isPunct(p.peek(), "[") {
		return "", unsupportedf("FROM on a path such as FROM c.children")
	}
	if isKeyword(p.peek(), "IN") {
		return "", unsupportedf("FROM x IN <array>")
	}
	return coll, nil
}

// enter bounds recursion for the same reason MaxDepth bounds documents.
func (p *sqlParser) enter() error {
	p.depth++
	if p.depth > MaxDepth {
		return invalidQuery(p.peek().pos, "expression nests deeper than %d levels", MaxDepth)
	}
	return nil
}

func (p *sqlParser) leave() { p.depth-- }

// expr parses a scalar expression. Precedence, loosest first: ?: and ??,
// OR, AND, NOT, comparisons (with IN and BETWEEN), ||, + and -, * / %,
// unary minus, then member access. NOT binds looser than a comparison, as
// in SQL: NOT c.a = 1 is NOT (c.a = 1).
func (p *sqlParser) expr() (expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	cond, err := p.coalesce()
	if err != nil {
		return nil, err
	}
	if !isPunct(p.peek(), "?") {
		return cond, nil
	}
	p.next()
	then, err := p.expr()
	if err != nil {
		return nil, err
	}
	if t := p.next(); !isPunct(t, ":") {
		return nil, p.unexpected(t, `":" of a conditional expression`)
	}
	els, err := p.expr()
	if err != nil {
		return nil, err
	}
	return &condExpr{cond: cond, then: then, els: els}, nil
}

func (p *sqlParser) coalesce() (expr, error) {
	l, err := p.or()
	if err != nil {
		return nil, err
	}
	for isPunct(p.peek(), "??") {
		p.next()
		r, err := p.or()
		if err != nil {
			return nil, err
		}
		l = &coalesceExpr{l: l, r: r}
	}
	return l, nil
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

func (p *sqlParser) not() (expr, error) {
	if !isKeyword(p.peek(), "NOT") {
		return p.comparison()
	}
	p.next()
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	x, err := p.not()
	if err != nil {
		return nil, err
	}
	return &notExpr{x: x}, nil
}

var cmpOps = map[string]string{"=": "=", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}

func (p *sqlParser) comparison() (expr, error) {
	l, err := p.concat()
	if err != nil {
		return nil, err
	}
	negate := false
	if t := p.peek(); isKeyword(t, "NOT") {
		switch n := p.peekAt(1); {
		case isKeyword(n, "IN"), isKeyword(n, "BETWEEN"), isKeyword(n, "LIKE"):
			p.next()
			negate = true
		}
	}
	t := p.peek()
	switch {
	case isKeyword(t, "IN"):
		p.next()
		x, err := p.in(l)
		if err != nil {
			return nil, err
		}
		return maybeNot(x, negate), nil
	case isKeyword(t, "BETWEEN"):
		p.next()
		lo, err := p.concat()
		if err != nil {
			return nil, err
		}
		if a := p.next(); !isKeyword(a, "AND") {
			return nil, p.unexpected(a, "AND between the bounds of BETWEEN")
		}
		hi, err := p.concat()
		if err != nil {
			return nil, err
		}
		return maybeNot(&betweenExpr{x: l, lo: lo, hi: hi}, negate), nil
	case isKeyword(t, "LIKE"):
		p.next()
		x, err := p.like(l) // like.go
		if err != nil {
			return nil, err
		}
		return maybeNot(x, negate), nil
	}
	op, ok := cmpOps[t.text]
	if t.kind != tokPunct || !ok {
		return l, nil
	}
	p.next()
	r, err := p.concat()
	if err != nil {
		return nil, err
	}
	return &cmpExpr{op: op, l: l, r: r}, nil
}

func maybeNot(x expr, negate bool) expr {
	if negate {
		return &notExpr{x: x}
	}
	return x
}

func (p *sqlParser) in(l expr) (expr, error) {
	if t := p.next(); !isPunct(t, "(") {
		if isKeyword(t, "SELECT") {
			return nil, unsupported(t)
		}
		return nil, p.unexpected(t, `"(" after IN`)
	}
	list, err := p.exprList(")")
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, invalidQuery(p.peek().pos, "IN needs at least one value")
	}
	return &inExpr{x: l, list: list}, nil
}

// exprList parses expressions separated by commas up to and including the
// closing punctuation.
func (p *sqlParser) exprList(closing string) ([]expr, error) {
	var list []expr
	if isPunct(p.peek(), closing) {
		p.next()
		return list, nil
	}
	for {
		x, err := p.expr()
		if err != nil {
			return nil, err
		}
		list = append(list, x)
		t := p.next()
		if isPunct(t, closing) {
			return list, nil
		}
		if !isPunct(t, ",") {
			return nil, p.unexpected(t, fmt.Sprintf(`"," or %q`, closing))
		}
	}
}

func (p *sqlParser) concat() (expr, error) {
	l, err := p.additive()
	if err != nil {
		return nil, err
	}
	for isPunct(p.peek(), "||") {
		p.next()
		r, err := p.additive()
		if err != nil {
			return nil, err
		}
		l = &arithExpr{op: "||", l: l, r: r}
	}
	return l, nil
}

func (p *sqlParser) additive() (expr, error) {
	l, err := p.multiplicative()
	if err != nil {
		return nil, err
	}
	for t := p.peek(); isPunct(t, "+") || isPunct(t, "-"); t = p.peek() {
		p.next()
		r, err := p.multiplicative()
		if err != nil {
			return nil, err
		}
		l = &arithExpr{op: t.text, l: l, r: r}
	}
	return l, nil
}

func (p *sqlParser) multiplicative() (expr, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for t := p.peek(); isPunct(t, "*") || isPunct(t, "/") || isPunct(t, "%"); t = p.peek() {
		p.next()
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		l = &arithExpr{op: t.text, l: l, r: r}
	}
	return l, nil
}

func negateNumber(n string) string {
	if strings.HasPrefix(n, "-") {
		return n[1:]
	}
	return "-" + n
}

func (p *sqlParser) unary() (expr, error) {
	t := p.peek()
	if !isPunct(t, "-") && !isPunct(t, "+") {
		return p.postfix()
	}
	p.next()
	if n := p.peek(); n.kind == tokNumber && !isPunct(p.peekAt(1), ".") && !isPunct(p.peekAt(1), "[") {
		p.next()
		if t.text == "-" {
			return &literalExpr{v: Number("-" + n.text)}, nil
		}
		return &literalExpr{v: Number(n.text)}, nil
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	x, err := p.unary()
	if err != nil {
		return nil, err
	}
	// -(5) is the literal -5, so that rendering and parsing agree.
	if lit, ok := x.(*literalExpr); ok && lit.v != nil && lit.v.Kind == KindNumber {
		if t.text == "+" {
			return lit, nil
		}
		return &literalExpr{v: Number(negateNumber(string(lit.v.Num)))}, nil
	}
	return &negExpr{x: x, plus: t.text == "+"}, nil
}

// postfix applies member access to any primary expression: (c.a).b,
// {"a": 1}.a, ARRAY_SLICE(c.t, 1)[0]. Paths rooted at the alias parse
// their segments themselves.
func (p *sqlParser) postfix() (expr, error) {
	x, err := p.primary()
	if err != nil {
		return nil, err
	}
	if _, ok := x.(*pathExpr); ok {
		return x, nil
	}
	t := p.peek()
	if !isPunct(t, ".") && !isPunct(t, "[") {
		return x, nil
	}
	px := &pathExpr{base: x}
	if err := p.segments(px); err != nil {
		return nil, err
	}
	return px, nil
}

func (p *sqlParser) primary() (expr, error) {
	t := p.next()
	switch t.kind {
	case tokNumber:
		return &literalExpr{v: Number(t.text)}, nil
	case tokString:
		return &literalExpr{v: String(t.text)}, nil
	case tokParam:
		if !slices.Contains(p.params, t.text) {
			p.params = append(p.params, t.text)
		}
		return &paramExpr{name: t.text}, nil
	case tokPunct:
		switch t.text {
		case "(":
			if isKeyword(p.peek(), "SELECT") {
				q, err := p.subquery(true)
				if err != nil {
					return nil, err
				}
				if c := p.next(); !isPunct(c, ")") {
					return nil, p.unexpected(c, `")" closing the subquery`)
				}
				return &subqueryExpr{kind: subScalar, q: q}, nil
			}
			x, err := p.expr()
			if err != nil {
				return nil, err
			}
			if c := p.next(); !isPunct(c, ")") {
				return nil, p.unexpected(c, `")"`)
			}
			return x, nil
		case "{":
			return p.object()
		case "[":
			if err := p.enter(); err != nil {
				return nil, err
			}
			defer p.leave()
			elems, err := p.exprList("]")
			if err != nil {
				return nil, err
			}
			return &arrayExpr{elems: elems}, nil
		}
	case tokIdent:
		switch strings.ToUpper(t.text) {
		case "TRUE":
			return &literalExpr{v: Bool(true)}, nil
		case "FALSE":
			return &literalExpr{v: Bool(false)}, nil
		case "NULL":
			return &literalExpr{v: Null()}, nil
		case "UNDEFINED":
			return &literalExpr{v: nil}, nil
		}
		if x, ok := p.resolve(t.text); ok {
			if err := p.segments(x); err != nil {
				return nil, err
			}
			return x, nil
		}
		if x, ok, err := p.subqueryCall(t); ok || err != nil {
			return x, err
		}
		if _, ok := reservedWord(t); ok {
			return nil, p.unexpected(t, "a value")
		}
		if isPunct(p.peek(), "(") {
			return p.call(t)
		}
		return nil, p.unknownIdentifier(t)
	}
	return nil, p.unexpected(t, "a value")
}

func (p *sqlParser) object() (expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	x := &objectExpr{}
	if isPunct(p.peek(), "}") {
		p.next()
		return x, nil
	}
	for {
		k := p.next()
		if k.kind != tokString && k.kind != tokIdent {
			return nil, p.unexpected(k, "a property name in an object")
		}
		if slices.Contains(x.keys, k.text) {
			return nil, invalidQuery(k.pos, "duplicate property %q in an object", k.text)
		}
		if c := p.next(); !isPunct(c, ":") {
			return nil, p.unexpected(c, `":" after a property name`)
		}
		v, err := p.expr()
		if err != nil {
			return nil, err
		}
		x.keys = append(x.keys, k.text)
		x.vals = append(x.vals, v)
		t := p.next()
		if isPunct(t, "}") {
			return x, nil
		}
		if !isPunct(t, ",") {
			return nil, p.unexpected(t, `"," or "}"`)
		}
	}
}

// segments reads .name, ["name"], [0] and [expr] after a path's start.
func (p *sqlParser) segments(x *pathExpr) error {
	for {
		switch t := p.peek(); {
		case isPunct(t, "."):
			p.next()
			n := p.next()
			if n.kind != tokIdent {
				return p.unexpected(n, "a property name")
			}
			x.segs = append(x.segs, pathSeg{key: n.text})
		case isPunct(t, "["):
			p.next()
			n := p.peek()
			closing := p.peekAt(1)
			switch {
			case n.kind == tokString && isPunct(closing, "]"):
				p.next()
				x.segs = append(x.segs, pathSeg{key: n.text, quoted: true})
			case n.kind == tokNumber && isPunct(closing, "]"):
				p.next()
				i, err := strconv.Atoi(n.text)
				if err != nil || strings.ContainsAny(n.text, ".eE") {
					return invalidQuery(n.pos, "array index must be a non-negative integer, found %s", n.text)
				}
				x.segs = append(x.segs, pathSeg{index: i, isIndex: true})
			case n.kind == tokNumber && closing.kind != tokPunct:
				p.next()
				return p.unexpected(p.next(), `"]"`)
			default:
				if isPunct(n, "]") {
					return p.unexpected(p.next(), "a property name or array index")
				}
				d, err := p.expr()
				if err != nil {
					return err
				}
				x.segs = append(x.segs, pathSeg{dyn: d})
			}
			if c := p.next(); !isPunct(c, "]") {
				return p.unexpected(c, `"]"`)
			}
		default:
			return nil
		}
	}
}

func (p *sqlParser) call(name token) (expr, error) {
	fn := strings.ToUpper(name.text)
	if agg, ok := aggregateFuncs[fn]; ok {
		return p.aggregate(name, agg)
	}
	if fn == "VECTORDISTANCE" || fn == "_VECTORSCORE" {
		return p.vectorDistance(name)
	}
	if sf, ok := scoringFuncs[fn]; ok {
		return p.scoringCall(name, sf)
	}
	f, ok := builtins()[fn]
	if !ok {
		return nil, unsupported(name)
	}
	p.next() // "("
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	args, err := p.exprList(")")
	if err != nil {
		return nil, err
	}
	if len(args) < f.min || (f.max >= 0 && len(args) > f.max) {
		var want string
		switch {
		case f.max < 0:
			want = strconv.Itoa(f.min) + " or more"
		case f.max == f.min:
			want = strconv.Itoa(f.min)
		case f.max == f.min+1:
			want = strconv.Itoa(f.min) + " or " + strconv.Itoa(f.max)
		default:
			want = strconv.Itoa(f.min) + " to " + strconv.Itoa(f.max)
		}
		return nil, invalidQuery(name.pos, "%s takes %s arguments, got %d", fn, want, len(args))
	}
	return &callExpr{fn: fn, f: f, args: args}, nil
}

func (p *sqlParser) aggregate(name token, kind aggKind) (expr, error) {
	fn := strings.ToUpper(name.text)
	switch {
	case p.inAgg:
		return nil, invalidQuery(name.pos, "aggregate %s cannot be nested in another aggregate", fn)
	case !p.aggOK:
		return nil, invalidQuery(name.pos, "aggregate %s can be used only in the SELECT list", fn)
	}
	p.next() // "("
	if isPunct(p.peek(), "*") {
		return nil, invalidQuery(p.peek().pos, "%s(*) is not Cosmos SQL; count documents with COUNT(1)", fn)
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	p.inAgg = true
	args, err := p.exprList(")")
	p.inAgg = false
	if err != nil {
		return nil, err
	}
	if len(args) != 1 {
		return nil, invalidQuery(name.pos, "%s takes 1 argument, got %d", fn, len(args))
	}
	x := &aggExpr{kind: kind, fn: fn, arg: args[0], index: len(p.aggs)}
	p.aggs = append(p.aggs, x)
	return x, nil
}
