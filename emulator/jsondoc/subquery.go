package jsondoc

import (
	"fmt"
	"strings"
)

// Subqueries, as the service documents them
// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/subquery): always
// correlated (a subquery reads the aliases of the query around it, never the
// container), evaluated for each row of the outer query.
//
//   - (SELECT …) is a scalar subquery: the value of its one row, undefined
//     without rows. More than one row is an error; the service's is not
//     documented, and Microsoft's offline query engine, written to mimic it
//     (azure-cosmos-dotnet-v3 tests/Microsoft.Azure.Cosmos.Tests/Query/OfflineEngine/
//     ScalarExpressionEvaluator.cs), fails with "The cardinality of a subquery can
//     not exceed 1.".
//   - EXISTS(SELECT …) is true when the subquery has a row; a row that is
//     undefined is no row, so EXISTS(SELECT VALUE undefined) is false while
//     EXISTS(SELECT undefined) (a row {}) is true.
//   - ARRAY(SELECT …) is the subquery's rows as an array.
//   - In FROM and JOIN a subquery is a set of values (query_from.go).
//
// A subquery is a whole SELECT: FROM (item-scoped), WHERE, DISTINCT, TOP,
// OFFSET … LIMIT, aggregates and GROUP BY; ORDER BY cannot appear, since all its
// sources are correlated collections.

type subqueryKind uint8

const (
	subScalar subqueryKind = iota
	subExists
	subArray
)

type subqueryExpr struct {
	kind subqueryKind
	q    *Query
}

// errSubqueryCardinality is the error of a scalar subquery with more than one row.
var errSubqueryCardinality = fmt.Errorf("the cardinality of a scalar subquery cannot exceed 1: it returned more than one row; use TOP 1, an aggregate, or ARRAY(SELECT …)")

func (x *subqueryExpr) eval(env *evalEnv) *Value {
	switch x.kind {
	case subExists:
		return boolResult(len(x.q.run(env, 1)) > 0)
	case subArray:
		rows := x.q.run(env, -1)
		if rows == nil {
			rows = []*Value{}
		}
		return &Value{Kind: KindArray, Arr: rows}
	}
	rows := x.q.run(env, 2)
	switch len(rows) {
	case 0:
		return nil
	case 1:
		return rows[0]
	}
	env.failed(errSubqueryCardinality)
	return nil
}

func (x *subqueryExpr) children() []expr { return x.q.exprs() }

func (x *subqueryExpr) appendSQL(b []byte) []byte {
	switch x.kind {
	case subExists:
		b = append(b, "EXISTS"...)
	case subArray:
		b = append(b, "ARRAY"...)
	}
	b = append(b, '(')
	b = x.q.appendSQL(b, " ", false)
	return append(b, ')')
}

// subquery parses a SELECT nested in the one being parsed (the "(" before it has
// been read; the ")" after it is left), in a scope of its own.
func (p *sqlParser) subquery(item bool) (*Query, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	aggOK, inAgg, aggs, rankOK, inRRF := p.aggOK, p.inAgg, p.aggs, p.rankOK, p.inRRF
	p.aggOK, p.inAgg, p.aggs, p.rankOK, p.inRRF = false, false, nil, false, false
	defer func() { p.aggOK, p.inAgg, p.aggs, p.rankOK, p.inRRF = aggOK, inAgg, aggs, rankOK, inRRF }()
	return p.query(true, item)
}

// run evaluates the query as a subquery of the row env describes and returns its
// rows (need > 0: at most that many are wanted, so a query whose rows stream may
// stop there). Errors are recorded in env.
func (q *Query) run(outer *evalEnv, need int) []*Value {
	env := *outer
	env.aggs = nil
	top, err := q.Top.resolve("TOP", env.params, -1)
	if err != nil {
		env.failed(err)
		return nil
	}
	offset, err := q.Offset.resolve("OFFSET", env.params, 0)
	if err != nil {
		env.failed(err)
		return nil
	}
	limit, err := q.Limit.resolve("LIMIT", env.params, -1)
	if err != nil {
		env.failed(err)
		return nil
	}
	end := -1
	if top >= 0 {
		end = top
	}
	if limit >= 0 && (end < 0 || offset+limit < end) {
		end = offset + limit
	}
	if need > 0 && !q.Distinct && !q.Aggregating() && (end < 0 || offset+need < end) {
		end = offset + need
	}
	if end == 0 {
		return nil
	}
	var (
		rows   []*Value
		groups *aggregation
		seen   map[string]bool
		key    []byte
	)
	if q.Aggregating() {
		groups = newAggregation(q)
	}
	if q.Distinct {
		seen = map[string]bool{}
	}
	q.tuples(&env, func() bool {
		if q.Where != nil && !isBool(q.Where.root.eval(&env), true) {
			return true
		}
		if groups != nil {
			groups.add(&env)
			return true
		}
		v := q.project(&env)
		if v == nil {
			return true
		}
		if seen != nil {
			key = appendKey(key[:0], v)
			if seen[string(key)] {
				return true
			}
			seen[string(key)] = true
		}
		rows = append(rows, v)
		return groups != nil || q.Distinct || end < 0 || len(rows) < end
	})
	if groups != nil {
		rows = groups.values(q, &env)
		if q.Distinct {
			rows = distinctValues(rows)
		}
	}
	if end >= 0 && len(rows) > end {
		rows = rows[:end]
	}
	if offset >= len(rows) {
		return nil
	}
	return rows[offset:]
}

func distinctValues(rows []*Value) []*Value {
	seen := map[string]bool{}
	out := rows[:0]
	var key []byte
	for _, v := range rows {
		key = appendKey(key[:0], v)
		if !seen[string(key)] {
			seen[string(key)] = true
			out = append(out, v)
		}
	}
	return out
}

// subqueryWords are the keywords of subquery expressions, which the grammar serves.
var subqueryWords = map[string]bool{"EXISTS": true, "ARRAY": true}

// subqueryCall parses EXISTS(SELECT …) and ARRAY(SELECT …) once their keyword t has
// been read; ok is false when t is neither.
func (p *sqlParser) subqueryCall(t token) (expr, bool, error) {
	kind := subExists
	switch {
	case isKeyword(t, "EXISTS"):
	case isKeyword(t, "ARRAY"):
		kind = subArray
	default:
		return nil, false, nil
	}
	if o := p.next(); !isPunct(o, "(") {
		return nil, true, p.unexpected(o, `"(" after `+t.text)
	}
	if !isKeyword(p.peek(), "SELECT") {
		return nil, true, p.unexpected(p.next(), "a subquery (SELECT …) in "+t.text+"(…)")
	}
	q, err := p.subquery(true)
	if err != nil {
		return nil, true, err
	}
	if c := p.next(); !isPunct(c, ")") {
		return nil, true, p.unexpected(c, `")" closing the subquery`)
	}
	return &subqueryExpr{kind: kind, q: q}, true, nil
}

// unknownIdentifier explains an identifier that names no alias: with a container
// alias in scope, properties are written through it (c.name); otherwise the query
// binds no such name.
func (p *sqlParser) unknownIdentifier(t token) error {
	if t.text == "NaN" || t.text == "Infinity" {
		// Learn's ToString example passes these to the function, but numbers here
		// are JSON numbers, which have no NaN or infinity: a non-finite result of
		// arithmetic is undefined, and a literal one is refused rather than guessed.
		return unsupportedf("the non-finite number literal %s (offset %d) is not supported by the emulator", t.text, t.pos)
	}
	for i := len(p.scopes) - 1; i >= 0; i-- {
		if c := p.scopes[i].container; c != "" {
			return invalidQuery(t.pos, "identifier %q is not the FROM alias %q; refer to properties as %s.%s", t.text, c, c, t.text)
		}
	}
	if len(p.scopes) > 0 && len(p.scope().vars) > 0 {
		return invalidQuery(t.pos, "identifier %q is not an alias of the query (its aliases are %s)", t.text, strings.Join(p.allVars(), ", "))
	}
	return invalidQuery(t.pos, "identifier %q is not defined: the query has no FROM alias for it", t.text)
}

func (p *sqlParser) allVars() []string {
	var out []string
	for _, sc := range p.scopes {
		out = append(out, sc.vars...)
	}
	return out
}
