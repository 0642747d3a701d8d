package jsondoc

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Query is a parsed SELECT. Everything it can express is listed in
// [ParseQuery].
type Query struct {
	// Alias is the name the query gives each document (c in FROM c, r in
	// FROM root r), "" when it names none (FROM t IN c.tags, or no FROM);
	// Collection is the container's name written after FROM.
	Alias      string
	Collection string
	// sources are the FROM clause's item-scoped sources: JOINs, and a first
	// source that iterates or reads a path (query_from.go); noFrom is set for a
	// SELECT without FROM.
	sources  []*source
	noFrom   bool
	Distinct bool
	Top      Count
	Where    *Filter // nil matches every document
	Offset   Count
	Limit    Count

	sel     selection
	groupBy []expr
	orderBy []orderItem
	rank    *rankClause // ORDER BY RANK (rrf.go); nil without it
	params  []string
	aggs    []*aggExpr
}

// Count is the number of TOP, OFFSET or LIMIT: a literal or a parameter
// whose value is known once the query is bound to its parameters.
type Count struct {
	Set   bool
	N     int
	Param string // "@name" when the count is a parameter
}

type selectKind uint8

const (
	selectStar selectKind = iota
	selectValue
	selectList
)

type selection struct {
	kind  selectKind
	value expr
	items []selectItem
}

// selectItem is one entry of a SELECT list: its output property name is the
// alias, or the last property name of a path, or $1, $2, … for the other
// unnamed entries in order, as the service names them.
type selectItem struct {
	x       expr
	name    string
	aliased bool
}

type orderItem struct {
	x        expr
	desc     bool
	explicit bool // ASC or DESC was written (kept when the query is rewritten)
}

// ParseQuery parses
//
//	SELECT [DISTINCT] [TOP n] <selection> FROM <collection> [[AS] alias]
//	  [WHERE <expr>] [GROUP BY <expr>, …] [ORDER BY <path> [ASC|DESC], …]
//	  [OFFSET n LIMIT m]
//
// where <selection> is *, VALUE <expr>, or <expr> [[AS] name], …; counts are
// integers or @parameters, and <expr> is built from
//
//   - <alias>, <alias>.a.b, <alias>["a"], <alias>.arr[0], <alias>[<expr>],
//     and member access on any value: (<expr>).a, <expr>[0]
//   - 'string' or "string" literals with backslash escapes, numbers,
//     true, false, null, undefined and @parameters
//   - object constructors {"a": <expr>, …} and array constructors [<expr>, …]
//   - =, !=, <>, <, <=, >, >=, IN (…), BETWEEN … AND …, AND, OR, NOT,
//   - - * / % and unary minus, || (string concatenation), ?? (coalesce),
//     <cond> ? <a> : <b>, and parentheses
//   - the functions in [functions] (string, array, type-checking and
//     mathematical built-ins) and, in the SELECT list, the aggregates
//     COUNT, SUM, MIN, MAX and AVG
//
// Keywords and function names are case-insensitive; the alias and property
// names are not. Valid Cosmos SQL beyond this (JOIN, subqueries, LIKE,
// user-defined functions, …) yields an error wrapping [ErrUnsupported] that
// names what was found and lists what is supported.
func ParseQuery(sql string) (*Query, error) {
	p, err := newSQLParser(sql)
	if err != nil {
		return nil, err
	}
	if err := p.refuseUnsupportedConstructs(); err != nil {
		return nil, err
	}
	if err := p.countJoins(); err != nil {
		return nil, err
	}
	q, err := p.query(false, false)
	if err != nil {
		return nil, err
	}
	q.params = p.params
	return q, nil
}

// query parses one SELECT: the whole query, or a subquery (sub), which ends before
// the ")" that closes it; item is set when its FROM reads the aliases around it
// rather than the container (every subquery but one in the top level's FROM).
func (p *sqlParser) query(sub, item bool) (*Query, error) {
	t := p.next()
	if !isKeyword(t, "SELECT") {
		if t.kind == tokEOF {
			return nil, invalidQuery(t.pos, "empty query")
		}
		return nil, unsupported(t)
	}
	q := &Query{}
	p.scopes = append(p.scopes, &scope{})
	defer func() { p.scopes = p.scopes[:len(p.scopes)-1] }()
	// The SELECT list names the aliases that FROM introduces further on, so
	// FROM is read first and the list parsed afterwards.
	selStart := p.i
	from := p.findFrom()
	if from < 0 {
		// SELECT without FROM: one row, from nothing but constants and parameters
		// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/select).
		q.noFrom = true
		if err := p.selectClause(q, -1); err != nil {
			return nil, err
		}
	} else {
		p.i = from + 1
		if err := p.fromClause(q, item); err != nil {
			return nil, err
		}
		afterFrom := p.i
		p.i = selStart
		if err := p.selectClause(q, from); err != nil {
			return nil, err
		}
		p.i = afterFrom
	}
	if err := p.clauses(q, sub); err != nil {
		return nil, err
	}
	q.aggs = p.aggs
	if err := q.validate(); err != nil {
		return nil, err
	}
	return q, nil
}

// findFrom returns the index of the FROM that ends the SELECT list: the
// first one outside parentheses, brackets and braces, before the ")" that
// closes a subquery; -1 when the SELECT has no FROM.
func (p *sqlParser) findFrom() int {
	depth := 0
	for i := p.i; i < len(p.toks); i++ {
		t := p.toks[i]
		switch {
		case t.kind == tokPunct && (t.text == "(" || t.text == "[" || t.text == "{"):
			depth++
		case t.kind == tokPunct && (t.text == ")" || t.text == "]" || t.text == "}"):
			depth--
			if depth < 0 {
				return -1
			}
		case depth == 0 && isKeyword(t, "FROM") && (i == 0 || !isPunct(p.toks[i-1], ".")):
			return i
		case depth == 0 && (isKeyword(t, "WHERE") || isKeyword(t, "GROUP") || isKeyword(t, "ORDER") || isKeyword(t, "OFFSET")) &&
			(i == 0 || !isPunct(p.toks[i-1], ".")):
			return -1
		}
	}
	return -1
}

func (p *sqlParser) selectClause(q *Query, from int) error {
	if isKeyword(p.peek(), "DISTINCT") {
		p.next()
		q.Distinct = true
	}
	if isKeyword(p.peek(), "TOP") {
		p.next()
		c, err := p.count("TOP")
		if err != nil {
			return err
		}
		q.Top = c
	}
	p.aggOK = true
	defer func() { p.aggOK = false }()
	switch t := p.peek(); {
	case isPunct(t, "*"):
		p.next()
		q.sel.kind = selectStar
	case isKeyword(t, "VALUE"):
		p.next()
		q.sel.kind = selectValue
		x, err := p.expr()
		if err != nil {
			return err
		}
		q.sel.value = x
	default:
		q.sel.kind = selectList
		if err := p.selectList(q); err != nil {
			return err
		}
	}
	if from >= 0 && p.i != from {
		return p.unexpected(p.next(), `"," or FROM`)
	}
	return nil
}

func (p *sqlParser) selectList(q *Query) error {
	unnamed := 0
	for {
		if t := p.peek(); isKeyword(t, "FROM") {
			return p.unexpected(p.next(), "a value")
		}
		x, err := p.expr()
		if err != nil {
			return err
		}
		it := selectItem{x: x}
		if isKeyword(p.peek(), "AS") {
			p.next()
			n := p.next()
			if _, ok := reservedWord(n); ok || n.kind != tokIdent {
				return p.unexpected(n, "a property name after AS")
			}
			it.name, it.aliased = n.text, true
		} else if n := p.peek(); n.kind == tokIdent {
			if _, ok := reservedWord(n); !ok {
				p.next()
				it.name, it.aliased = n.text, true
			}
		}
		if !it.aliased {
			if it.name = impliedName(x); it.name == "" {
				unnamed++
				it.name = "$" + strconv.Itoa(unnamed)
			}
		}
		for _, prev := range q.sel.items {
			if prev.name == it.name {
				return invalidQuery(p.peek().pos, "the SELECT list has two properties named %q; name one with AS", it.name)
			}
		}
		q.sel.items = append(q.sel.items, it)
		if !isPunct(p.peek(), ",") {
			return nil
		}
		p.next()
	}
}

// impliedName is the output property name of an unaliased SELECT entry:
// the last property name of a path, the alias itself for the document, or
// "" when the service numbers the entry ($1, $2, …).
func impliedName(x expr) string {
	px, ok := x.(*pathExpr)
	if !ok {
		return ""
	}
	if len(px.segs) == 0 {
		if px.base != nil {
			return ""
		}
		return px.alias
	}
	// Member access on any value is named by its last property, as the subquery
	// page's (SELECT p.name WHERE …).name is "name".
	last := px.segs[len(px.segs)-1]
	if last.isIndex || last.dyn != nil {
		return ""
	}
	return last.key
}

func (p *sqlParser) count(clause string) (Count, error) {
	t := p.next()
	switch t.kind {
	case tokParam:
		if !slices.Contains(p.params, t.text) {
			p.params = append(p.params, t.text)
		}
		return Count{Set: true, Param: t.text}, nil
	case tokNumber:
		n, err := strconv.Atoi(t.text)
		if err != nil || n < 0 || strings.ContainsAny(t.text, ".eE") {
			return Count{}, invalidQuery(t.pos, "%s must be a non-negative integer, found %s", clause, t.text)
		}
		return Count{Set: true, N: n}, nil
	case tokEOF:
		return Count{}, p.unexpected(t, "a number after "+clause)
	}
	if isPunct(t, "-") {
		return Count{}, invalidQuery(t.pos, "%s must be a non-negative integer", clause)
	}
	return Count{}, invalidQuery(t.pos, "expected a number after %s, found %s", clause, t)
}

// clauses parses what follows FROM: WHERE, GROUP BY, ORDER BY, OFFSET …
// LIMIT, in that order.
func (p *sqlParser) clauses(q *Query, sub bool) error {
	if isKeyword(p.peek(), "WHERE") {
		p.next()
		root, err := p.expr()
		if err != nil {
			return err
		}
		q.Where = &Filter{alias: q.Alias, root: root, params: collectParams(root, nil)}
	}
	if isKeyword(p.peek(), "GROUP") {
		p.next()
		if err := p.by("GROUP"); err != nil {
			return err
		}
		for {
			x, err := p.expr()
			if err != nil {
				return err
			}
			q.groupBy = append(q.groupBy, x)
			if !isPunct(p.peek(), ",") {
				break
			}
			p.next()
		}
	}
	if isKeyword(p.peek(), "ORDER") {
		p.next()
		if err := p.by("ORDER"); err != nil {
			return err
		}
		if isKeyword(p.peek(), "RANK") {
			r, err := p.rankClause()
			if err != nil {
				return err
			}
			q.rank = r
		}
		for q.rank == nil {
			start := p.peek()
			x, err := p.expr()
			if err != nil {
				return err
			}
			if px, ok := x.(*pathExpr); ok && px.base == nil && (px.variable || q.Alias == "") {
				// ORDER BY t.name for JOIN t IN c.tags (dotnet-v2 issue 679, the
				// service's message).
				return invalidQuery(start.pos, "ORDER BY %s: order-by over correlated collections is not supported; order by properties of the container's alias", sqlText(x))
			}
			if !orderablePath(x) && !orderByScore(x) && !statsScoreCall(x) {
				return unsupportedf("ORDER BY %s: ORDER BY takes document paths such as c.name or c[\"name\"], or VectorDistance(…) (found at offset %d)", sqlText(x), start.pos)
			}
			it := orderItem{x: x}
			switch t := p.peek(); {
			case isKeyword(t, "ASC"):
				p.next()
				it.explicit = true
			case isKeyword(t, "DESC"):
				p.next()
				it.desc, it.explicit = true, true
			}
			q.orderBy = append(q.orderBy, it)
			if !isPunct(p.peek(), ",") {
				break
			}
			p.next()
		}
	}
	if isKeyword(p.peek(), "OFFSET") {
		p.next()
		c, err := p.count("OFFSET")
		if err != nil {
			return err
		}
		q.Offset = c
		if t := p.next(); !isKeyword(t, "LIMIT") {
			return p.unexpected(t, "LIMIT after OFFSET")
		}
		if q.Limit, err = p.count("LIMIT"); err != nil {
			return err
		}
	} else if t := p.peek(); isKeyword(t, "LIMIT") {
		return invalidQuery(t.pos, "LIMIT needs an OFFSET before it: OFFSET 0 LIMIT n")
	}
	if sub && isPunct(p.peek(), ")") {
		return nil
	}
	if t := p.next(); t.kind != tokEOF {
		if isKeyword(t, "WHERE") || isKeyword(t, "GROUP") || isKeyword(t, "ORDER") || isKeyword(t, "OFFSET") {
			return invalidQuery(t.pos, "%s is out of place: the clauses go WHERE, GROUP BY, ORDER BY, OFFSET … LIMIT", strings.ToUpper(t.text))
		}
		return p.unexpected(t, "AND, OR, the next clause or the end of the query")
	}
	return nil
}

func (p *sqlParser) by(clause string) error {
	if t := p.next(); !isKeyword(t, "BY") {
		return p.unexpected(t, "BY after "+clause)
	}
	return nil
}

// orderablePath reports whether x is a path into the document with static
// segments, the only ORDER BY items the service accepts (they map to the
// index).
func orderablePath(x expr) bool {
	px, ok := x.(*pathExpr)
	if !ok || px.base != nil || len(px.segs) == 0 {
		return false
	}
	for _, s := range px.segs {
		if s.dyn != nil {
			return false
		}
	}
	return true
}

// validate checks what the grammar alone cannot: where aggregates may
// appear and what a grouped SELECT list may refer to.
func (q *Query) validate() error {
	aggregating := q.Aggregating()
	if q.sel.kind == selectStar {
		if err := q.selectStarError(); err != nil {
			return err
		}
	}
	if q.sel.kind == selectStar && len(q.groupBy) > 0 {
		return invalidQuery(0, "'SELECT *' is not allowed with GROUP BY; list the grouped expressions")
	}
	if q.NonStreamingOrderBy() && len(q.orderBy) > 1 {
		return unsupportedf("ORDER BY VectorDistance(…) beside other ORDER BY items; order by the score alone")
	}
	if q.Top.Set && q.Offset.Set {
		return invalidQuery(0, "TOP cannot be combined with OFFSET … LIMIT; use one of them")
	}
	if err := q.validateRank(); err != nil {
		return err
	}
	if !aggregating {
		return nil
	}
	if q.Distinct {
		return unsupportedf("DISTINCT with aggregates or GROUP BY")
	}
	if len(q.orderBy) > 0 {
		return unsupportedf("ORDER BY with aggregates or GROUP BY")
	}
	if q.sel.kind == selectStar {
		return invalidQuery(0, "'SELECT *' cannot be combined with aggregates; select the aggregates")
	}
	groups := map[string]bool{}
	for _, g := range q.groupBy {
		if hasAggregate(g) {
			return invalidQuery(0, "GROUP BY %s: aggregates cannot be grouped by", sqlText(g))
		}
		groups[groupText(g)] = true
	}
	check := func(x expr) error {
		if bad := ungrouped(x, groups); bad != nil {
			if len(q.groupBy) == 0 {
				return invalidQuery(0, "%s is not inside an aggregate: a query with aggregates and no GROUP BY selects aggregates only", sqlText(bad))
			}
			return invalidQuery(0, "%s in the SELECT list is neither in GROUP BY nor inside an aggregate", sqlText(bad))
		}
		return nil
	}
	if q.sel.kind == selectValue {
		return check(q.sel.value)
	}
	for _, it := range q.sel.items {
		if err := check(it.x); err != nil {
			return err
		}
	}
	return nil
}

// Aggregating reports whether the query computes aggregates or groups.
func (q *Query) Aggregating() bool { return len(q.aggs) > 0 || len(q.groupBy) > 0 }

// ungrouped returns the first part of x that refers to a document outside
// both the GROUP BY expressions and the aggregates, or nil.
func ungrouped(x expr, groups map[string]bool) expr {
	switch x.(type) {
	case *aggExpr, *subqueryExpr:
		return nil
	}
	if groups[groupText(x)] {
		return nil
	}
	if px, ok := x.(*pathExpr); ok && px.base == nil {
		return x
	}
	for _, c := range x.children() {
		if bad := ungrouped(c, groups); bad != nil {
			return bad
		}
	}
	return nil
}

func hasAggregate(x expr) bool {
	switch x.(type) {
	case *aggExpr:
		return true
	case *subqueryExpr:
		return false // its aggregates are its own
	}
	for _, c := range x.children() {
		if hasAggregate(c) {
			return true
		}
	}
	return false
}

func collectParams(x expr, into []string) []string {
	if pe, ok := x.(*paramExpr); ok && !slices.Contains(into, pe.name) {
		into = append(into, pe.name)
	}
	for _, c := range x.children() {
		into = collectParams(c, into)
	}
	return into
}

// quotedName matches c["name"] segments that could be written c.name.
var quotedName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\["([\p{L}_][\p{L}\p{N}_]*)"\]`) })

// groupText is an expression's text for matching SELECT entries with GROUP BY
// expressions, where c["a"] and c.a are the same.
func groupText(x expr) string { return quotedName().ReplaceAllString(sqlText(x), ".$1") }

// sqlText renders an expression as the gateway writes it in a query plan.
func sqlText(x expr) string { return string(x.appendSQL(nil)) }
