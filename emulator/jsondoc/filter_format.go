package jsondoc

import "strconv"

// String renders the query in a canonical one-line form that ParseQuery
// accepts and maps back to the same query, for logs and diagnostics.
func (q *Query) String() string { return string(q.appendSQL(nil, " ", false)) }

// appendSQL renders the query with sep between clauses. The gateway's
// rewritten queries put each clause on its own line and keep the WHERE
// expression's parentheses; the canonical form drops the outermost pair.
func (q *Query) appendSQL(b []byte, sep string, gateway bool) []byte {
	b = append(b, "SELECT "...)
	if q.Distinct {
		b = append(b, "DISTINCT "...)
	}
	if q.Top.Set {
		b = append(b, "TOP "...)
		b = q.Top.appendSQL(b)
		b = append(b, ' ')
	}
	b = q.sel.appendSQL(b)
	b = q.appendFrom(b, sep, gateway)
	if q.Where != nil {
		b = append(b, sep...)
		b = append(b, "WHERE "...)
		if gateway {
			b = q.Where.root.appendSQL(b)
		} else {
			b = q.Where.appendSQL(b)
		}
	}
	b = q.appendTail(b, sep)
	if q.Offset.Set {
		b = append(b, sep...)
		b = append(b, "OFFSET "...)
		b = q.Offset.appendSQL(b)
		b = append(b, " LIMIT "...)
		b = q.Limit.appendSQL(b)
	}
	return b
}

func (q *Query) appendFrom(b []byte, sep string, gateway bool) []byte {
	if q.noFrom {
		return b
	}
	b = append(b, sep...)
	b = append(b, "FROM "...)
	if q.Alias != "" {
		b = append(b, q.Collection...)
		if q.Alias != q.Collection {
			b = append(b, " AS "...)
			b = append(b, q.Alias...)
		}
	}
	return q.appendSources(b, sep, gateway)
}

// appendTail renders GROUP BY and ORDER BY.
func (q *Query) appendTail(b []byte, sep string) []byte {
	if len(q.groupBy) > 0 {
		b = append(b, sep...)
		b = append(b, "GROUP BY "...)
		b = appendList(b, q.groupBy)
	}
	if q.rank != nil {
		b = append(b, sep...)
		b = append(b, "ORDER BY RANK "...)
		b = q.rank.x.appendSQL(b)
	}
	if len(q.orderBy) > 0 {
		b = append(b, sep...)
		b = append(b, "ORDER BY "...)
		for i, o := range q.orderBy {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = o.appendSQL(b)
		}
	}
	return b
}

func (o orderItem) appendSQL(b []byte) []byte {
	b = o.x.appendSQL(b)
	switch {
	case o.desc:
		b = append(b, " DESC"...)
	case o.explicit:
		b = append(b, " ASC"...)
	}
	return b
}

func (c Count) appendSQL(b []byte) []byte {
	if c.Param != "" {
		return append(b, c.Param...)
	}
	return strconv.AppendInt(b, int64(c.N), 10)
}

func (s selection) appendSQL(b []byte) []byte {
	switch s.kind {
	case selectStar:
		return append(b, '*')
	case selectValue:
		b = append(b, "VALUE "...)
		return s.value.appendSQL(b)
	}
	for i, it := range s.items {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = it.x.appendSQL(b)
		if it.aliased {
			b = append(b, " AS "...)
			b = append(b, it.name...)
		}
	}
	return b
}

func appendList(b []byte, xs []expr) []byte {
	for i, x := range xs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = x.appendSQL(b)
	}
	return b
}

// String renders the filter expression (without FROM/WHERE) canonically.
func (f *Filter) String() string {
	if f == nil {
		return ""
	}
	return string(f.appendSQL(nil))
}

// appendSQL wraps every compound node in parentheses so that rendering
// never depends on precedence; the outermost pair is dropped for
// readability.
func (f *Filter) appendSQL(b []byte) []byte {
	start := len(b)
	b = f.root.appendSQL(b)
	if _, ok := f.root.(compound); ok {
		b = append(b[:start], b[start+1:len(b)-1]...)
	}
	return b
}

// compound marks nodes whose rendering is parenthesised.
type compound interface{ compound() }

func (*cmpExpr) compound()      {}
func (*logicExpr) compound()    {}
func (*notExpr) compound()      {}
func (*arithExpr) compound()    {}
func (*negExpr) compound()      {}
func (*inExpr) compound()       {}
func (*betweenExpr) compound()  {}
func (*coalesceExpr) compound() {}
func (*condExpr) compound()     {}

func (x *literalExpr) appendSQL(b []byte) []byte {
	if x.v == nil {
		return append(b, "undefined"...)
	}
	return x.v.AppendJSON(b)
}

func (x *paramExpr) appendSQL(b []byte) []byte { return append(b, x.name...) }

func (x *pathExpr) appendSQL(b []byte) []byte {
	switch x.base.(type) {
	case nil:
		b = append(b, x.alias...)
	case *pathExpr, *callExpr, *aggExpr, *objectExpr, *arrayExpr, *paramExpr:
		b = x.base.appendSQL(b)
	default:
		// (-1).a and ("s")[0]: a bare literal would not parse back.
		if _, ok := x.base.(compound); ok {
			b = x.base.appendSQL(b)
		} else {
			b = append(b, '(')
			b = x.base.appendSQL(b)
			b = append(b, ')')
		}
	}
	for _, s := range x.segs {
		switch {
		case s.dyn != nil:
			b = append(b, '[')
			b = s.dyn.appendSQL(b)
			b = append(b, ']')
		case s.isIndex:
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(s.index), 10)
			b = append(b, ']')
		case isIdent(s.key) && !s.quoted:
			b = append(b, '.')
			b = append(b, s.key...)
		default:
			b = append(b, '[')
			b = appendString(b, s.key)
			b = append(b, ']')
		}
	}
	return b
}

func (x *cmpExpr) appendSQL(b []byte) []byte {
	b = append(b, '(')
	b = x.l.appendSQL(b)
	b = append(b, ' ')
	b = append(b, x.op...)
	b = append(b, ' ')
	b = x.r.appendSQL(b)
	return append(b, ')')
}

func (x *logicExpr) appendSQL(b []byte) []byte {
	b = append(b, '(')
	b = x.l.appendSQL(b)
	if x.and {
		b = append(b, " AND "...)
	} else {
		b = append(b, " OR "...)
	}
	b = x.r.appendSQL(b)
	return append(b, ')')
}

func (x *notExpr) appendSQL(b []byte) []byte {
	b = append(b, "(NOT "...)
	b = x.x.appendSQL(b)
	return append(b, ')')
}

func (x *arithExpr) appendSQL(b []byte) []byte {
	b = append(b, '(')
	b = x.l.appendSQL(b)
	b = append(b, ' ')
	b = append(b, x.op...)
	b = append(b, ' ')
	b = x.r.appendSQL(b)
	return append(b, ')')
}

func (x *negExpr) appendSQL(b []byte) []byte {
	if x.plus {
		b = append(b, "(+"...)
	} else {
		b = append(b, "(-"...)
	}
	b = x.x.appendSQL(b)
	return append(b, ')')
}

func (x *inExpr) appendSQL(b []byte) []byte {
	b = append(b, '(')
	b = x.x.appendSQL(b)
	b = append(b, " IN ("...)
	b = appendList(b, x.list)
	return append(b, "))"...)
}

func (x *betweenExpr) appendSQL(b []byte) []byte {
	b = append(b, '(')
	b = x.x.appendSQL(b)
	b = append(b, " BETWEEN "...)
	b = x.lo.appendSQL(b)
	b = append(b, " AND "...)
	b = x.hi.appendSQL(b)
	return append(b, ')')
}

func (x *coalesceExpr) appendSQL(b []byte) []byte {
	b = append(b, '(')
	b = x.l.appendSQL(b)
	b = append(b, " ?? "...)
	b = x.r.appendSQL(b)
	return append(b, ')')
}

func (x *condExpr) appendSQL(b []byte) []byte {
	b = append(b, '(')
	b = x.cond.appendSQL(b)
	b = append(b, " ? "...)
	b = x.then.appendSQL(b)
	b = append(b, " : "...)
	b = x.els.appendSQL(b)
	return append(b, ')')
}

func (x *objectExpr) appendSQL(b []byte) []byte {
	b = append(b, '{')
	for i, k := range x.keys {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendString(b, k)
		b = append(b, ": "...)
		b = x.vals[i].appendSQL(b)
	}
	return append(b, '}')
}

func (x *arrayExpr) appendSQL(b []byte) []byte {
	b = append(b, '[')
	b = appendList(b, x.elems)
	return append(b, ']')
}

func (x *callExpr) appendSQL(b []byte) []byte {
	b = append(b, x.fn...)
	b = append(b, '(')
	b = appendList(b, x.args)
	return append(b, ')')
}

func (x *aggExpr) appendSQL(b []byte) []byte {
	b = append(b, x.fn...)
	b = append(b, '(')
	b = x.arg.appendSQL(b)
	return append(b, ')')
}
