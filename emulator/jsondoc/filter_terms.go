package jsondoc

import "strconv"

// What a query asks of the index: the filter terms of its WHERE clause and its ORDER BY
// paths. The service reports the indexes a query used and those that would have helped
// (index metrics), and refuses an ORDER BY its indexing policy cannot serve; the
// emulator decides both from these, against the container's policy.

// PathStep is one step of a document path: a property name, or an array index.
type PathStep struct {
	Name    string
	Index   int
	IsIndex bool
}

// TermKind is how the index serves a filter term.
type TermKind uint8

const (
	// TermEquality is a = comparison or IN: an index seek on one value or a few.
	TermEquality TermKind = iota + 1
	// TermRange is <, <=, >, >=, != or BETWEEN: a range of the index.
	TermRange
	// TermFunction is a system function the index serves on its first argument
	// (STARTSWITH, IS_DEFINED, ARRAY_CONTAINS, …). A composite index takes one range
	// or system function, last, as it takes one range.
	TermFunction
)

// FilterTerm is one comparison or function of a WHERE clause on a document path,
// with the rest of it constant (literals, parameters and expressions of them).
type FilterTerm struct {
	// Path is the document path the term filters on, from the document's root.
	Path []PathStep
	// Elements is set when the term filters on the elements of the array at Path
	// (ARRAY_CONTAINS), not on Path's own value.
	Elements bool
	Kind     TermKind
	// Conjunct is set when the term is one of the WHERE clause's top-level AND terms:
	// every matching document satisfies it, so an index on its path narrows the
	// whole query (and a composite index can combine it with the others).
	Conjunct bool
	// Expression is the term as the service writes a filter expression in its index
	// metrics: the document as ROOT, parameters replaced by their values, the
	// comparison in parentheses: (ROOT.name = "Julien").
	Expression string
}

// indexFunctions are the system functions whose first argument's index serves them.
var indexFunctions = map[string]bool{
	"STARTSWITH": true, "ENDSWITH": true, "CONTAINS": true, "ARRAY_CONTAINS": true,
	"IS_DEFINED": true, "IS_NULL": true, "IS_BOOL": true, "IS_NUMBER": true,
	"IS_STRING": true, "IS_PRIMITIVE": true,
}

var rangeOps = map[string]bool{"<": true, "<=": true, ">": true, ">=": true, "!=": true}

// FilterTerms lists the terms of the WHERE clause that an index on a document path can
// serve, in the order they are written: comparisons and IN or BETWEEN between a path
// and constants, and the index-served system functions on a path. Terms are found
// through AND, OR and NOT; a term inside another expression (an argument, an
// arithmetic or conditional operand) is not one. A query without WHERE has none.
func (p *Program) FilterTerms() []FilterTerm {
	if p.q.Where == nil {
		return nil
	}
	var out []FilterTerm
	p.collectTerms(p.q.Where.root, true, &out)
	return out
}

func (p *Program) collectTerms(x expr, conjunct bool, out *[]FilterTerm) {
	switch t := x.(type) {
	case *logicExpr:
		p.collectTerms(t.l, conjunct && t.and, out)
		p.collectTerms(t.r, conjunct && t.and, out)
		return
	case *notExpr:
		p.collectTerms(t.x, false, out)
		return
	}
	if term, ok := p.term(x); ok {
		term.Conjunct = conjunct
		*out = append(*out, term)
	}
}

// term reads x as a filter term, if it is one.
func (p *Program) term(x expr) (FilterTerm, bool) {
	switch t := x.(type) {
	case *cmpExpr:
		path, side := docPath(t.l), t.r
		if path == nil {
			path, side = docPath(t.r), t.l
		}
		if path == nil || !p.constant(side) {
			return FilterTerm{}, false
		}
		kind := TermEquality
		if rangeOps[t.op] {
			kind = TermRange
		}
		b := append([]byte{'('}, p.termSQL(t.l)...)
		b = append(b, ' ')
		b = append(b, t.op...)
		b = append(b, ' ')
		b = append(b, p.termSQL(t.r)...)
		return FilterTerm{Path: path, Kind: kind, Expression: string(append(b, ')'))}, true
	case *inExpr:
		path := docPath(t.x)
		if path == nil || !p.constants(t.list) {
			return FilterTerm{}, false
		}
		b := append([]byte{'('}, p.termSQL(t.x)...)
		b = append(b, " IN ("...)
		for i, e := range t.list {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, p.termSQL(e)...)
		}
		return FilterTerm{Path: path, Kind: TermEquality, Expression: string(append(b, "))"...))}, true
	case *betweenExpr:
		path := docPath(t.x)
		if path == nil || !p.constant(t.lo) || !p.constant(t.hi) {
			return FilterTerm{}, false
		}
		b := append([]byte{'('}, p.termSQL(t.x)...)
		b = append(b, " BETWEEN "...)
		b = append(b, p.termSQL(t.lo)...)
		b = append(b, " AND "...)
		b = append(b, p.termSQL(t.hi)...)
		return FilterTerm{Path: path, Kind: TermRange, Expression: string(append(b, ')'))}, true
	case *callExpr:
		if !indexFunctions[t.fn] || len(t.args) == 0 {
			return FilterTerm{}, false
		}
		path := docPath(t.args[0])
		if path == nil || !p.constants(t.args[1:]) {
			return FilterTerm{}, false
		}
		b := append([]byte(t.fn), '(')
		for i, e := range t.args {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, p.termSQL(e)...)
		}
		return FilterTerm{Path: path, Kind: TermFunction, Elements: t.fn == "ARRAY_CONTAINS", Expression: string(append(b, ')'))}, true
	}
	return FilterTerm{}, false
}

// docPath returns the steps of a path into the document with static steps, or nil.
// A path from a JOIN's or a subquery's alias is not one: its steps start inside an
// array element or a subquery's row, not at the document's root.
func docPath(x expr) []PathStep {
	px, ok := x.(*pathExpr)
	if !ok || px.base != nil || px.variable || len(px.segs) == 0 {
		return nil
	}
	out := make([]PathStep, len(px.segs))
	for i, s := range px.segs {
		if s.dyn != nil {
			return nil
		}
		out[i] = PathStep{Name: s.key, Index: s.index, IsIndex: s.isIndex}
	}
	return out
}

// constant reports whether x is the same for every document: it reads no document.
func (p *Program) constant(x expr) bool {
	switch t := x.(type) {
	case *pathExpr:
		if t.base == nil {
			return false
		}
	case *aggExpr:
		return false
	}
	for _, c := range x.children() {
		if !p.constant(c) {
			return false
		}
	}
	return true
}

func (p *Program) constants(xs []expr) bool {
	for _, x := range xs {
		if !p.constant(x) {
			return false
		}
	}
	return true
}

// termSQL renders one side of a term: a document path from ROOT with its property
// names as the service writes them (ROOT.name, ROOT["odd key"], ROOT.tags[0]), a
// constant as its value.
func (p *Program) termSQL(x expr) []byte {
	if path := docPath(x); path != nil {
		return appendRootPath([]byte("ROOT"), path)
	}
	v := x.eval(&evalEnv{params: p.params, vectors: p.vectors})
	if v == nil {
		return []byte("undefined")
	}
	return v.AppendJSON(nil)
}

func appendRootPath(b []byte, path []PathStep) []byte {
	for _, s := range path {
		switch {
		case s.IsIndex:
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(s.Index), 10)
			b = append(b, ']')
		case isIdent(s.Name):
			b = append(b, '.')
			b = append(b, s.Name...)
		default:
			b = append(b, '[')
			b = appendString(b, s.Name)
			b = append(b, ']')
		}
	}
	return b
}

// OrderItem is one ORDER BY item: a document path and its direction.
type OrderItem struct {
	Path       []PathStep
	Descending bool
}

// OrderBy lists the query's ORDER BY items in order (ParseQuery accepts only document
// paths with static steps there).
func (p *Program) OrderBy() []OrderItem {
	out := make([]OrderItem, 0, len(p.q.orderBy))
	for _, o := range p.q.orderBy {
		if orderByScore(o.x) {
			continue // a score, not an indexed path (vector.go)
		}
		out = append(out, OrderItem{Path: docPath(o.x), Descending: o.desc})
	}
	return out
}

// PinnedValue is the value that every document the query can return has at path: the
// constant of a top-level AND term "path = constant" of the WHERE clause (either side),
// as JSON. The gateway serves a query that would need a client's pipeline across
// partitions when such terms pin the whole partition key to one value; ok is false
// when no such term pins path (or one compares it with undefined).
func (p *Program) PinnedValue(path []string) (value []byte, ok bool) {
	if p.q.Where == nil {
		return nil, false
	}
	var found []byte
	var walk func(x expr) bool
	walk = func(x expr) bool {
		switch t := x.(type) {
		case *logicExpr:
			if !t.and {
				return false
			}
			return walk(t.l) || walk(t.r)
		case *cmpExpr:
			if t.op != "=" {
				return false
			}
			dp, side := docPath(t.l), t.r
			if dp == nil {
				dp, side = docPath(t.r), t.l
			}
			if !samePath(dp, path) || !p.constant(side) {
				return false
			}
			v := side.eval(&evalEnv{params: p.params, vectors: p.vectors})
			if v == nil {
				return false
			}
			found = v.AppendJSON(nil)
			return true
		}
		return false
	}
	if !walk(p.q.Where.root) {
		return nil, false
	}
	return found, true
}

func samePath(steps []PathStep, path []string) bool {
	if len(steps) == 0 || len(steps) != len(path) {
		return false
	}
	for i, s := range steps {
		if s.IsIndex || s.Name != path[i] {
			return false
		}
	}
	return true
}
