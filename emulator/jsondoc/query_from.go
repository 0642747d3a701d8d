package jsondoc

import (
	"slices"
	"strings"
)

// The FROM clause beyond "FROM c": FROM x IN c.tags, FROM c.tags t, FROM (subquery),
// and JOINs, as the service documents them
// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/from and
// https://learn.microsoft.com/azure/cosmos-db/nosql/query/join):
//
//	FROM <from_source> {JOIN <from_source>}
//	<from_source> ::= <container_expression> [[AS] alias] | alias IN <container_expression>
//	                | (<subquery>) [[AS] alias] | alias IN (<subquery>)
//	<container_expression> ::= ROOT | container_name | alias | <container_expression>.name
//	                         | <container_expression>["name"] | <container_expression>[index]
//
// Every source after the container is item-scoped: it is evaluated for each
// combination of the values bound so far, and the query's rows are the cross
// product ("JOIN creates a complete cross product of the sets participating in the
// join"). "alias IN e" iterates the elements of each array e yields (a value that
// is not an array is ignored); "e [AS] alias" binds e's values themselves; an
// undefined value is no value, so a document whose joined array is missing or
// empty yields no row.
//
// The engine always scans documents: the container's alias, when the query names
// one, is the document (evalEnv.doc); every other alias is a variable
// (evalEnv.vars). FROM t IN c.tags is thus the documents, unnamed, joined with
// t IN c.tags.

// source is one item-scoped FROM or JOIN source.
type source struct {
	alias string // "" for an unaliased subquery
	in    bool   // alias IN <e>: iterate the elements of the arrays
	path  *pathExpr
	sub   *Query
}

// maxJoins is the service's maxJoinsPerSqlQuery, as the account's
// queryEngineConfiguration reports it (the .NET SDK's recording of it in
// GatewayAccountReaderTests and its test query configurations: 5).
const maxJoins = 5

// scope is the aliases one SELECT binds, for resolving identifiers: container is
// the container's alias ("" when the query names none), vars the others.
type scope struct {
	container string
	vars      []string
}

// resolve returns the path expression an identifier names, if it names an alias of
// an enclosing scope (innermost first).
func (p *sqlParser) resolve(name string) (*pathExpr, bool) {
	for i := len(p.scopes) - 1; i >= 0; i-- {
		sc := p.scopes[i]
		if slices.Contains(sc.vars, name) {
			return &pathExpr{alias: name, variable: true}, true
		}
		if sc.container == name {
			return &pathExpr{alias: name}, true
		}
	}
	return nil, false
}

func (p *sqlParser) scope() *scope { return p.scopes[len(p.scopes)-1] }

// bind adds alias to the current scope; aliases must be unique (the service's
// SC2021).
func (p *sqlParser) bind(alias string, pos int) error {
	sc := p.scope()
	if alias == sc.container || slices.Contains(sc.vars, alias) {
		return invalidQuery(pos, "the input set name or alias %q is specified more than once in the FROM clause", alias)
	}
	sc.vars = append(sc.vars, alias)
	return nil
}

// fromClause parses what follows FROM up to the next clause. At the top level the
// first source reads the container; in a subquery every source is item-scoped
// (the service supports correlated subqueries only).
func (p *sqlParser) fromClause(q *Query, item bool) error {
	if err := p.firstSource(q, item); err != nil {
		return err
	}
	for isKeyword(p.peek(), "JOIN") {
		p.next()
		s, err := p.itemSource(false)
		if err != nil {
			return err
		}
		q.sources = append(q.sources, s)
	}
	return nil
}

// firstSource parses the source after FROM.
func (p *sqlParser) firstSource(q *Query, item bool) error {
	t := p.peek()
	if item || isPunct(t, "(") || (t.kind == tokIdent && isKeyword(p.peekAt(1), "IN")) {
		if !item && isPunct(t, "(") {
			if !isKeyword(p.peekAt(1), "SELECT") {
				return p.unexpected(p.next(), "a collection alias such as c after FROM")
			}
		}
		if !item && !isPunct(t, "(") {
			// FROM t IN c.tags: c names the container, which no alias binds.
			q.Collection = p.peekAt(2).text
			p.containerName = q.Collection
		}
		s, err := p.itemSource(!item)
		if err != nil {
			return err
		}
		if !item && s.sub != nil {
			if err := s.sub.perDocument(); err != nil {
				return err
			}
		}
		q.sources = append(q.sources, s)
		return nil
	}
	// FROM c [[AS] x] or FROM c.path [[AS] x]
	if t.kind == tokEOF {
		return invalidQuery(t.pos, "expected a collection alias such as c after FROM")
	}
	if _, ok := reservedWord(t); (ok && !isKeyword(t, "ROOT")) || t.kind != tokIdent {
		return p.unexpected(p.next(), "a collection alias such as c after FROM")
	}
	if n := p.peekAt(1); isPunct(n, ".") || isPunct(n, "[") {
		q.Collection = t.text
		p.containerName = t.text
		s, err := p.itemSource(true)
		if err != nil {
			return err
		}
		q.sources = append(q.sources, s)
		return nil
	}
	p.next()
	q.Collection, q.Alias = t.text, t.text
	if alias, ok, err := p.optionalAlias(); err != nil {
		return err
	} else if ok {
		q.Alias = alias
	}
	p.scope().container = q.Alias
	p.alias = q.Alias
	return nil
}

// optionalAlias reads [AS] alias.
func (p *sqlParser) optionalAlias() (string, bool, error) {
	if isKeyword(p.peek(), "AS") {
		p.next()
		t := p.next()
		if _, ok := reservedWord(t); ok || t.kind != tokIdent {
			return "", false, p.unexpected(t, "an alias after AS")
		}
		return t.text, true, nil
	}
	if t := p.peek(); t.kind == tokIdent {
		if _, ok := reservedWord(t); !ok {
			p.next()
			return t.text, true, nil
		}
	}
	return "", false, nil
}

// itemSource parses "alias IN <e>" or "<e> [[AS] alias]", where <e> is a container
// expression or a parenthesized subquery. container is set when a bare first name
// is the container (the top level's first source) rather than an alias.
func (p *sqlParser) itemSource(container bool) (*source, error) {
	s := &source{}
	start := p.peek()
	if start.kind == tokIdent && isKeyword(p.peekAt(1), "IN") {
		if _, ok := reservedWord(start); ok {
			return nil, p.unexpected(p.next(), "an alias")
		}
		p.next()
		p.next()
		s.alias, s.in = start.text, true
		if err := p.sourceExpr(s, container); err != nil {
			return nil, err
		}
		return s, p.bind(s.alias, start.pos)
	}
	if err := p.sourceExpr(s, container); err != nil {
		return nil, err
	}
	alias, ok, err := p.optionalAlias()
	if err != nil {
		return nil, err
	}
	switch {
	case ok:
		s.alias = alias
	case s.path != nil && len(s.path.segs) > 0:
		// The alias of c.children is children (the last property name).
		last := s.path.segs[len(s.path.segs)-1]
		if last.isIndex {
			return nil, invalidQuery(start.pos, "the FROM or JOIN source %s needs an alias: %s AS x", sqlText(s.path), sqlText(s.path))
		}
		s.alias = last.key
	case s.path != nil:
		s.alias = s.path.alias
	}
	if s.alias == "" {
		return s, nil
	}
	return s, p.bind(s.alias, start.pos)
}

// sourceExpr parses a container expression or a parenthesized subquery into s.
func (p *sqlParser) sourceExpr(s *source, container bool) error {
	t := p.next()
	if isPunct(t, "(") {
		if !isKeyword(p.peek(), "SELECT") {
			return p.unexpected(p.next(), "SELECT of a subquery")
		}
		q, err := p.subquery(!container)
		if err != nil {
			return err
		}
		if c := p.next(); !isPunct(c, ")") {
			return p.unexpected(c, `")" closing the subquery`)
		}
		s.sub = q
		return nil
	}
	if t.kind != tokIdent {
		return p.unexpected(t, "a path such as c.tags or a subquery")
	}
	var px *pathExpr
	switch {
	case container && t.text == p.containerName:
		px = &pathExpr{alias: t.text}
	default:
		var ok bool
		if px, ok = p.resolve(t.text); !ok {
			if _, reserved := reservedWord(t); reserved {
				return p.unexpected(t, "a path such as c.tags or a subquery")
			}
			return invalidQuery(t.pos, "identifier %q in FROM or JOIN is not an alias the query defines; a JOIN reads a path of an earlier alias, such as JOIN t IN %s.tags", t.text, p.anyAlias())
		}
	}
	if err := p.segments(px); err != nil {
		return err
	}
	for _, sg := range px.segs {
		if sg.dyn != nil {
			return invalidQuery(t.pos, "a FROM or JOIN path takes property names and array indexes (c.tags, c[\"tags\"], c.tags[0]), not expressions such as %s", sqlText(px))
		}
	}
	s.path = px
	return nil
}

// anyAlias names an alias of the query for an error's example.
func (p *sqlParser) anyAlias() string {
	for i := len(p.scopes) - 1; i >= 0; i-- {
		if c := p.scopes[i].container; c != "" {
			return c
		}
		if v := p.scopes[i].vars; len(v) > 0 {
			return v[0]
		}
	}
	return "c"
}

// perDocument checks that a subquery in the top level's FROM can run one document at
// a time, which is how the emulator runs it: its rows over the container are then
// the union of its rows over each document.
func (q *Query) perDocument() error {
	if q.Distinct || q.Aggregating() || len(q.orderBy) > 0 || q.Top.Set || q.Offset.Set || q.rank != nil {
		return unsupportedf("a subquery in FROM that reads the container with DISTINCT, TOP, OFFSET … LIMIT, ORDER BY, aggregates or GROUP BY (its rows span documents)")
	}
	return nil
}

// countJoins enforces maxJoinsPerSqlQuery over the whole query text (the service's
// count, per query or per SELECT, is not documented; the whole text is the stricter).
func (p *sqlParser) countJoins() error {
	n := 0
	for i, t := range p.toks {
		if isKeyword(t, "JOIN") && (i == 0 || !isPunct(p.toks[i-1], ".")) {
			n++
		}
	}
	if n > maxJoins {
		return invalidQuery(0, "the query has %d JOINs and Cosmos DB allows at most %d (maxJoinsPerSqlQuery); filter the arrays in subqueries or use EXISTS", n, maxJoins)
	}
	return nil
}

// each calls fn with each value the source binds in env, until fn returns false.
func (s *source) each(env *evalEnv, fn func(*Value) bool) bool {
	if s.sub == nil {
		return s.values(s.path.eval(env), fn)
	}
	for _, v := range s.sub.run(env, -1) {
		if !s.values(v, fn) {
			return false
		}
	}
	return true
}

func (s *source) values(v *Value, fn func(*Value) bool) bool {
	switch {
	case v == nil:
		return true
	case !s.in:
		return fn(v)
	case v.Kind != KindArray:
		return true
	}
	for _, e := range v.Arr {
		if !fn(e) {
			return false
		}
	}
	return true
}

// tuples calls fn once per combination of the sources' values, with env.vars
// binding them, until fn returns false; without sources, once.
func (q *Query) tuples(env *evalEnv, fn func() bool) bool {
	return eachTuple(env, q.sources, fn)
}

func eachTuple(env *evalEnv, srcs []*source, fn func() bool) bool {
	if len(srcs) == 0 {
		return fn()
	}
	s, base := srcs[0], len(env.vars)
	ok := s.each(env, func(v *Value) bool {
		env.vars = append(env.vars[:base], binding{name: s.alias, v: v})
		return eachTuple(env, srcs[1:], fn)
	})
	env.vars = env.vars[:base]
	return ok
}

// MultiRow reports whether a document can give the query more than one row (or
// none): it joins, or its FROM iterates or reads a path or a subquery.
func (q *Query) MultiRow() bool { return len(q.sources) > 0 }

// starDoc reports whether SELECT * selects the stored document itself.
func (q *Query) starDoc() bool { return q.sel.kind == selectStar && len(q.sources) == 0 }

// starValue is what SELECT * projects: the document, or the one source's value.
func (q *Query) starValue(env *evalEnv) *Value {
	if len(q.sources) == 0 {
		return env.doc
	}
	return env.lookup(q.sources[0].alias)
}

// sourceExprs lists the expressions the sources evaluate.
func (q *Query) sourceExprs() []expr {
	var out []expr
	for _, s := range q.sources {
		if s.sub != nil {
			out = append(out, s.sub.exprs()...)
		} else {
			out = append(out, s.path)
		}
	}
	return out
}

// exprs lists every expression of the query, for what walks them (the properties a
// program reads, the parameters it needs).
func (q *Query) exprs() []expr {
	out := q.sourceExprs()
	if q.Where != nil {
		out = append(out, q.Where.root)
	}
	switch q.sel.kind {
	case selectValue:
		out = append(out, q.sel.value)
	case selectList:
		for _, it := range q.sel.items {
			out = append(out, it.x)
		}
	}
	out = append(out, q.groupBy...)
	for _, o := range q.orderBy {
		out = append(out, o.x)
	}
	return out
}

// appendSources renders the sources: the first after FROM when the query names no
// container alias, the others as JOINs.
func (q *Query) appendSources(b []byte, sep string, gateway bool) []byte {
	for i, s := range q.sources {
		if i > 0 || q.Alias != "" {
			b = append(b, sep...)
			b = append(b, "JOIN "...)
		}
		if s.in {
			b = append(b, s.alias...)
			b = append(b, " IN "...)
		}
		if s.sub != nil {
			b = append(b, '(')
			b = s.sub.appendSQL(b, " ", gateway)
			b = append(b, ')')
		} else {
			b = s.path.appendSQL(b)
		}
		if !s.in && s.alias != "" && (s.sub != nil || impliedSourceAlias(s.path) != s.alias) {
			b = append(b, " AS "...)
			b = append(b, s.alias...)
		}
	}
	return b
}

func impliedSourceAlias(px *pathExpr) string {
	if len(px.segs) == 0 {
		return px.alias
	}
	last := px.segs[len(px.segs)-1]
	if last.isIndex {
		return ""
	}
	return last.key
}

// selectStarError explains SELECT * where it has no single input set.
func (q *Query) selectStarError() error {
	switch {
	case q.noFrom:
		return invalidQuery(0, "'SELECT *' is not valid if the FROM clause is omitted; select values, such as SELECT 1")
	case len(q.sources) > 1 || (len(q.sources) == 1 && q.Alias != ""):
		names := []string{}
		if q.Alias != "" {
			names = append(names, q.Alias)
		}
		for _, s := range q.sources {
			if s.alias != "" {
				names = append(names, s.alias)
			}
		}
		return invalidQuery(0, "'SELECT *' is only valid with a single input set, and this FROM clause has several (%s); select what you need, such as SELECT VALUE %s or SELECT %s",
			strings.Join(names, ", "), firstOr(names, "c"), strings.Join(names, ", "))
	}
	return nil
}

func firstOr(s []string, def string) string {
	if len(s) > 0 {
		return s[0]
	}
	return def
}

// NoFrom reports whether the query has no FROM clause: it reads no document.
func (q *Query) NoFrom() bool { return q.noFrom }
