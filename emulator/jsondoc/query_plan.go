package jsondoc

import "slices"

// PlanInfo is what a query plan says about a query (the service's
// queryInfo): how a client runs it across partition key ranges. Field
// meanings and the shapes of RewrittenQuery are documented where the
// emulator serves plans (emulator/queryplan.go).
type PlanInfo struct {
	DistinctType       string   // "None", "Ordered" or "Unordered"
	Top                *int     // nil without TOP
	Offset             *int     // nil without OFFSET … LIMIT
	Limit              *int     // nil without OFFSET … LIMIT
	OrderBy            []string // "Ascending" or "Descending" per ORDER BY item
	OrderByExpressions []string
	GroupByExpressions []string
	GroupByAliases     []string
	// GroupByAliasToAggregateType maps each output property of a grouped
	// or non-VALUE aggregate query to its aggregate ("Count", "Sum", "Min",
	// "Max", "Average"), or to nil for a grouped expression.
	GroupByAliasToAggregateType map[string]*string
	Aggregates                  []string // the aggregate of a VALUE aggregate query
	HasSelectValue              bool
	HasNonStreamingOrderBy      bool   // ORDER BY a vector score (vector.go)
	RewrittenQuery              string // "" when each range runs the query as it is
}

// Features lists the query features (as the x-ms-cosmos-supported-query-features
// header names them) a client needs to run the query across ranges.
func (q *Query) Features() []string {
	var f []string
	add := func(ok bool, name string) {
		if ok {
			f = append(f, name)
		}
	}
	add(len(q.aggs) > 0 && q.sel.kind == selectValue, "Aggregate")
	add(len(q.aggs) > 0 && q.sel.kind != selectValue && len(q.groupBy) == 0, "NonValueAggregate")
	add(q.Distinct, "Distinct")
	add(len(q.groupBy) > 0, "GroupBy")
	add(len(q.orderBy) > 1, "MultipleOrderBy")
	add(q.Offset.Set, "OffsetAndLimit")
	add(len(q.orderBy) > 0, "OrderBy")
	add(q.NonStreamingOrderBy(), "NonStreamingOrderBy")
	add(q.Top.Set, "Top")
	add(q.rank != nil, "HybridSearch")
	return f
}

// NeedsPlan reports whether the query needs a client-side pipeline across
// ranges, which the gateway will not run for it: ORDER BY, TOP, OFFSET …
// LIMIT, DISTINCT, aggregates and GROUP BY.
func (q *Query) NeedsPlan() bool { return len(q.Features()) > 0 }

// placeholder is the part of a rewritten ORDER BY query's WHERE clause a
// client replaces: with true on a range's first page, or with a filter that
// resumes after a continuation.
const placeholder = "{documentdb-formattableorderbyquery-filter}"

type placeholderExpr struct{}

func (placeholderExpr) eval(*evalEnv) *Value { return trueValue }
func (placeholderExpr) children() []expr     { return nil }
func (placeholderExpr) appendSQL(b []byte) []byte {
	return append(append(append(b, '('), placeholder...), ')')
}

// Plan returns the query plan of a bound query, with the rewritten query
// each range runs in the shapes the gateway produces (see
// emulator/queryplan.go). A query the emulator runs in one partition but
// cannot plan across partitions (an aggregate inside another expression)
// is an error wrapping [ErrUnsupported].
func (p *Program) Plan() (*PlanInfo, error) {
	q := p.q
	if q.rank != nil {
		return nil, q.rankPlanError()
	}
	info := &PlanInfo{
		DistinctType:                "None",
		OrderBy:                     []string{},
		OrderByExpressions:          []string{},
		GroupByExpressions:          []string{},
		GroupByAliases:              []string{},
		GroupByAliasToAggregateType: map[string]*string{},
		Aggregates:                  []string{},
		HasSelectValue:              q.sel.kind == selectValue,
		HasNonStreamingOrderBy:      q.NonStreamingOrderBy(),
	}
	if q.Top.Set {
		info.Top = intPtr(p.top)
	}
	if q.Offset.Set {
		info.Offset, info.Limit = intPtr(p.offset), intPtr(p.limit)
	}
	for i, o := range q.orderBy {
		info.OrderBy = append(info.OrderBy, map[bool]string{false: "Ascending", true: "Descending"}[p.desc[i]])
		info.OrderByExpressions = append(info.OrderByExpressions, sqlText(o.x))
	}
	for _, g := range q.groupBy {
		info.GroupByExpressions = append(info.GroupByExpressions, sqlText(g))
	}
	var err error
	switch {
	case q.Aggregating():
		info.RewrittenQuery, err = p.rewriteAggregates(info)
	case len(q.orderBy) > 0:
		if q.Distinct {
			info.DistinctType = "Unordered"
			if q.orderCoversSelection() {
				info.DistinctType = "Ordered"
			}
		}
		info.RewrittenQuery = p.rewriteOrderBy()
	default:
		if q.Distinct {
			info.DistinctType = "Unordered"
		}
		info.RewrittenQuery = p.rewriteSimple()
	}
	if err != nil {
		return nil, err
	}
	return info, nil
}

func intPtr(n int) *int { return &n }

// orderCoversSelection reports whether DISTINCT can be applied to the
// merged ORDER BY stream by comparing neighbours only: the projected
// expressions and the ORDER BY items are the same set, so equal rows sort
// next to each other.
func (q *Query) orderCoversSelection() bool {
	var sel []string
	switch q.sel.kind {
	case selectValue:
		sel = []string{sqlText(q.sel.value)}
	case selectList:
		for _, it := range q.sel.items {
			sel = append(sel, sqlText(it.x))
		}
	default:
		return false
	}
	var ord []string
	for _, o := range q.orderBy {
		ord = append(ord, sqlText(o.x))
	}
	slices.Sort(sel)
	slices.Sort(ord)
	return slices.Equal(slices.Compact(sel), slices.Compact(ord))
}

// rewriteSimple is the per-range query of a plan without ORDER BY or
// aggregates: the query itself (""), unless per-range TOP, OFFSET or LIMIT
// would be wrong: OFFSET n LIMIT m becomes OFFSET 0 LIMIT n+m, and with
// DISTINCT both TOP and OFFSET … LIMIT go (a range cannot know which of its
// values are duplicates elsewhere).
func (p *Program) rewriteSimple() string {
	q := p.q
	if !q.Offset.Set && !(q.Distinct && q.Top.Set) {
		return ""
	}
	r := *q
	r.Top = Count{}
	if !q.Distinct {
		r.Top = boundCount(q.Top, p.top)
	}
	r.Offset, r.Limit = Count{}, Count{}
	if q.Offset.Set && !q.Distinct {
		r.Offset, r.Limit = Count{Set: true}, Count{Set: true, N: p.offset + p.limit}
	}
	return string(r.appendSQL(nil, "\n", true))
}

func boundCount(c Count, n int) Count {
	if !c.Set {
		return c
	}
	return Count{Set: true, N: n}
}

// rewriteOrderBy is SELECT c._rid, [{"item": o1}, …] AS orderByItems,
// <selection> AS payload FROM c WHERE (<where>) AND ({placeholder}) ORDER BY …
func (p *Program) rewriteOrderBy() string {
	q := p.q
	rid := &pathExpr{alias: q.Alias, segs: []pathSeg{{key: "_rid"}}}
	items := &arrayExpr{}
	for _, o := range q.orderBy {
		items.elems = append(items.elems, &objectExpr{keys: []string{"item"}, vals: []expr{o.x}})
	}
	r := *q
	r.sel = selection{kind: selectList, items: []selectItem{
		{x: rid, name: "_rid"},
		{x: items, name: "orderByItems", aliased: true},
		{x: q.payload(), name: "payload", aliased: true},
	}}
	var where expr = placeholderExpr{}
	if q.Where != nil {
		where = &logicExpr{and: true, l: q.Where.root, r: where}
	}
	if q.sel.kind == selectValue {
		where = &logicExpr{and: true, l: where, r: &callExpr{fn: "IS_DEFINED", f: builtins()["IS_DEFINED"], args: []expr{q.sel.value}}}
	}
	r.Where = &Filter{alias: q.Alias, root: where}
	r.Top = Count{}
	r.Offset, r.Limit = Count{}, Count{}
	if !q.Distinct {
		r.Top = boundCount(q.Top, p.top)
		if q.Offset.Set {
			r.Offset, r.Limit = Count{Set: true}, Count{Set: true, N: p.offset + p.limit}
		}
	}
	return string(r.appendSQL(nil, "\n", true))
}

// payload is the selection as one expression: the document for *, the
// VALUE expression, or an object of the SELECT list.
func (q *Query) payload() expr {
	switch q.sel.kind {
	case selectStar:
		return &pathExpr{alias: q.Alias}
	case selectValue:
		return q.sel.value
	}
	obj := &objectExpr{}
	for _, it := range q.sel.items {
		obj.keys = append(obj.keys, it.name)
		obj.vals = append(obj.vals, it.x)
	}
	return obj
}

// partial rewrites one aggregate into what a range returns for it:
// {"item": COUNT(x)}, {"item": SUM(x)}, {"item": {"sum": SUM(x), "count":
// COUNT(x)}} for AVG, and {"item": MIN(x), "item2": {"min": MIN(x),
// "count": COUNT(x)}} for MIN (MAX alike), the count telling an empty range
// from a minimum that is undefined.
func partial(a *aggExpr) expr {
	call := func(fn string) expr {
		return &aggExpr{kind: aggregateFuncs[fn], fn: fn, arg: a.arg}
	}
	obj := func(keys []string, vals ...expr) expr { return &objectExpr{keys: keys, vals: vals} }
	switch a.kind {
	case aggAvg:
		return obj([]string{"item"}, obj([]string{"sum", "count"}, call("SUM"), call("COUNT")))
	case aggMin:
		return obj([]string{"item", "item2"}, call("MIN"), obj([]string{"min", "count"}, call("MIN"), call("COUNT")))
	case aggMax:
		return obj([]string{"item", "item2"}, call("MAX"), obj([]string{"max", "count"}, call("MAX"), call("COUNT")))
	}
	return obj([]string{"item"}, call(a.fn))
}

// rewriteAggregates fills the aggregate fields of info and returns the
// per-range query: SELECT VALUE [<partial>] for a VALUE aggregate;
// SELECT {"<name>": <partial or expression>, …} AS payload otherwise; with
// GROUP BY, SELECT [{"item": g1}, …] AS groupByItems, <payload> AS payload
// … GROUP BY g1, …. TOP, OFFSET and LIMIT apply to the merged groups only.
func (p *Program) rewriteAggregates(info *PlanInfo) (string, error) {
	q := p.q
	r := *q
	r.Top, r.Offset, r.Limit = Count{}, Count{}, Count{}
	var payload expr
	if q.sel.kind == selectValue {
		switch a, ok := q.sel.value.(*aggExpr); {
		case ok:
			info.Aggregates = []string{a.kind.planName()}
			payload = &arrayExpr{elems: []expr{partial(a)}}
		case hasAggregate(q.sel.value):
			return "", unsupportedf("SELECT VALUE %s across partitions: an aggregate inside another expression (query one partition, or select the aggregate alone)", sqlText(q.sel.value))
		default:
			payload = q.sel.value
		}
	} else {
		obj := &objectExpr{}
		for _, it := range q.sel.items {
			info.GroupByAliases = append(info.GroupByAliases, it.name)
			obj.keys = append(obj.keys, it.name)
			switch a, ok := it.x.(*aggExpr); {
			case ok:
				name := a.kind.planName()
				info.GroupByAliasToAggregateType[it.name] = &name
				obj.vals = append(obj.vals, partial(a))
			case hasAggregate(it.x):
				return "", unsupportedf("%s across partitions: an aggregate inside another expression (query one partition, or select the aggregate alone)", sqlText(it.x))
			case len(q.groupBy) == 0:
				return "", unsupportedf("%s beside aggregates across partitions (select aggregates only, or add GROUP BY)", sqlText(it.x))
			default:
				info.GroupByAliasToAggregateType[it.name] = nil
				obj.vals = append(obj.vals, it.x)
			}
		}
		payload = obj
	}
	if len(q.groupBy) == 0 {
		if q.sel.kind == selectValue {
			r.sel = selection{kind: selectValue, value: payload}
		} else {
			r.sel = selection{kind: selectList, items: []selectItem{{x: payload, name: "payload", aliased: true}}}
		}
		return string(r.appendSQL(nil, "\n", true)), nil
	}
	items := &arrayExpr{}
	for _, g := range q.groupBy {
		items.elems = append(items.elems, &objectExpr{keys: []string{"item"}, vals: []expr{g}})
	}
	r.sel = selection{kind: selectList, items: []selectItem{
		{x: items, name: "groupByItems", aliased: true},
		{x: payload, name: "payload", aliased: true},
	}}
	return string(r.appendSQL(nil, "\n", true)), nil
}
