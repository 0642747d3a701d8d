package jsondoc

import "strconv"

// String renders the query in a canonical form that ParseQuery accepts
// and maps back to the same query, for logs and diagnostics.
func (q *Query) String() string {
	b := []byte("SELECT ")
	if q.Top > 0 {
		b = append(b, "TOP "...)
		b = strconv.AppendInt(b, int64(q.Top), 10)
		b = append(b, ' ')
	}
	b = append(b, "* FROM "...)
	b = append(b, q.Alias...)
	if q.Where != nil {
		b = append(b, " WHERE "...)
		b = q.Where.appendSQL(b)
	}
	return string(b)
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

func (*cmpExpr) compound()   {}
func (*logicExpr) compound() {}
func (*notExpr) compound()   {}

func (x *literalExpr) appendSQL(b []byte) []byte { return x.v.AppendJSON(b) }

func (x *paramExpr) appendSQL(b []byte) []byte { return append(b, x.name...) }

func (x *pathExpr) appendSQL(b []byte) []byte {
	b = append(b, x.alias...)
	for _, s := range x.segs {
		switch {
		case s.isIndex:
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(s.index), 10)
			b = append(b, ']')
		case isIdent(s.key):
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

func (x *callExpr) appendSQL(b []byte) []byte {
	b = append(b, x.fn...)
	b = append(b, '(')
	for i, a := range x.args {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = a.appendSQL(b)
	}
	return append(b, ')')
}
