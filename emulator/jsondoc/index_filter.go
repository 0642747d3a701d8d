package jsondoc

// What of a WHERE clause an index can serve, so that the emulator's query metrics can
// say which documents the service would load. The service evaluates the filter terms
// its index serves in the index and loads only the documents they leave; a term the
// index cannot serve (an excluded path, UPPER(c.x) = …, c.a = c.b) is evaluated on the
// loaded documents. With no served term it loads every document of the scope ("Full
// scan", Microsoft Learn "Index usage"; "Troubleshoot query performance": "If the
// Retrieved Document Count is significantly higher than the Output Document Count,
// there was at least one part of your query that was unable to use an index and needed
// to do a scan").

// IndexFilter is the part of a query's WHERE clause that an index serves: every
// document that matches the WHERE clause matches it, and it matches exactly the
// documents the index lookup leaves to load.
type IndexFilter struct {
	p    *Program
	root expr
}

// IndexServed works out the part of the WHERE clause that an index serves, given which
// document paths the container's policy indexes (elements: the term is on the elements
// of the array at path, ARRAY_CONTAINS). A filter term (FilterTerms) on an indexed path
// is served; an AND is served in the parts of it that are; an OR only when both of its
// sides are; a NOT, and anything else, is not (the service's handling of NOT in the
// index is not documented). whole reports that the served part is the whole clause
// (the documents loaded are the documents that match, or every document without a
// WHERE clause); f is nil when no part is served, and every document is loaded.
func (p *Program) IndexServed(indexed func(path []PathStep, elements bool) bool) (f *IndexFilter, whole bool) {
	if p.q.Where == nil {
		return nil, false
	}
	root, whole := p.served(p.q.Where.root, indexed)
	if root == nil {
		return nil, false
	}
	return &IndexFilter{p: p, root: root}, whole
}

// served returns the served part of x (nil for none) and whether it is all of x.
func (p *Program) served(x expr, indexed func([]PathStep, bool) bool) (expr, bool) {
	switch t := x.(type) {
	case *logicExpr:
		l, lw := p.served(t.l, indexed)
		r, rw := p.served(t.r, indexed)
		switch {
		case l != nil && r != nil:
			return &logicExpr{and: t.and, l: l, r: r}, lw && rw
		case !t.and:
			return nil, false
		case l != nil:
			return l, false
		case r != nil:
			return r, false
		}
		return nil, false
	case *notExpr:
		return nil, false
	}
	if term, ok := p.term(x); ok && indexed(term.Path, term.Elements) {
		return x, true
	}
	return nil, false
}

// Match reports whether a stored document is one the index leaves to load.
func (f *IndexFilter) Match(body []byte) (bool, error) {
	doc, err := f.p.parse(body, f.p.scan)
	if err != nil {
		return false, err
	}
	return isBool(f.root.eval(&evalEnv{doc: doc, params: f.p.params, vectors: f.p.vectors}), true), nil
}
