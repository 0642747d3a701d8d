package jsondoc

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
)

// Program is a query bound to its parameters, ready to run over the
// documents of one scope (a partition key range or a logical partition).
// It is immutable, so one Program may serve concurrent requests.
type Program struct {
	q      *Query
	params map[string]*Value
	top    int // -1 when the query has no TOP
	offset int // 0 without OFFSET
	limit  int // -1 when the query has no LIMIT
	// scan are the properties evaluating a query needs from every
	// document; proj those projecting a selected document needs; sel both,
	// for a streaming query that filters and projects in one go.
	scan, proj, sel fieldSet
	// desc says, per ORDER BY item, whether its values sort from the highest down
	// (DESC, or a similarity score ordered most similar first: vector.go); vectors
	// are the VectorDistance calls bound to the container's policy.
	desc    []bool
	vectors map[*vectorDistanceExpr]vectorSpec
	now     *queryTime // the date and time functions' clock (datetime.go)
}

// fieldSet names the top-level properties an evaluation reads, or whole
// when it needs the entire document (SELECT *, c itself, c[@name]).
type fieldSet struct {
	names []string
	whole bool
}

func (fs *fieldSet) add(x expr) {
	if x == nil || fs.whole {
		return
	}
	if px, ok := x.(*pathExpr); ok && px.base == nil {
		switch {
		case len(px.segs) == 0 || px.segs[0].dyn != nil:
			fs.whole = true
			return
		case !px.segs[0].isIndex && !slices.Contains(fs.names, px.segs[0].key):
			fs.names = append(fs.names, px.segs[0].key)
		}
	}
	for _, c := range x.children() {
		fs.add(c)
	}
}

func (fs *fieldSet) union(o fieldSet) {
	if o.whole {
		fs.whole = true
	}
	for _, n := range o.names {
		if !slices.Contains(fs.names, n) {
			fs.names = append(fs.names, n)
		}
	}
}

// Bind checks that every parameter the query mentions is defined and
// resolves TOP, OFFSET and LIMIT. params holds values under the names the
// SDKs send ("@name"; the bare name is accepted too).
func (q *Query) Bind(params map[string]*Value) (*Program, error) {
	return q.BindWith(params, BindOptions{})
}

// BindWith is Bind for a query run in a container, whose policies opts carries.
func (q *Query) BindWith(params map[string]*Value, opts BindOptions) (*Program, error) {
	for _, name := range q.params {
		if _, ok := lookupParam(params, name); !ok {
			return nil, fmt.Errorf("query parameter %s is not defined", name)
		}
	}
	p := &Program{q: q, params: params, top: -1, limit: -1}
	var err error
	if p.top, err = q.Top.resolve("TOP", params, -1); err != nil {
		return nil, err
	}
	if p.offset, err = q.Offset.resolve("OFFSET", params, 0); err != nil {
		return nil, err
	}
	if p.limit, err = q.Limit.resolve("LIMIT", params, -1); err != nil {
		return nil, err
	}
	p.now = newQueryTime(opts.Now)
	if err = p.bindVectors(opts); err != nil {
		return nil, err
	}
	if q.Where != nil {
		p.scan.add(q.Where.root)
	}
	for _, o := range q.orderBy {
		p.scan.add(o.x)
	}
	for _, g := range q.groupBy {
		p.scan.add(g)
	}
	switch q.sel.kind {
	case selectStar:
		p.proj.whole = true
	case selectValue:
		p.proj.add(q.sel.value)
	default:
		for _, it := range q.sel.items {
			p.proj.add(it.x)
		}
	}
	// Projections computed while scanning: DISTINCT compares them, groups
	// keep them, and an ordered VALUE query drops the undefined ones before
	// TOP and OFFSET count.
	p.sel = fieldSet{names: slices.Clone(p.scan.names), whole: p.scan.whole}
	if q.sel.kind != selectStar {
		p.sel.union(p.proj)
	}
	if q.Distinct || q.Aggregating() || (len(q.orderBy) > 0 && q.sel.kind == selectValue) {
		p.scan.union(p.proj)
	}
	p.addRankFields()
	return p, nil
}

func (c Count) resolve(clause string, params map[string]*Value, unset int) (int, error) {
	if !c.Set {
		return unset, nil
	}
	if c.Param == "" {
		return c.N, nil
	}
	v, _ := lookupParam(params, c.Param)
	n, ok := integer(v)
	if !ok || n < 0 {
		return 0, fmt.Errorf("query parameter %s is the %s count and must be a non-negative integer", c.Param, clause)
	}
	return n, nil
}

// Query returns the query the program runs.
func (p *Program) Query() *Query { return p.q }

// Bounds returns TOP, OFFSET and LIMIT as bound: -1 for an absent TOP or
// LIMIT, 0 for an absent OFFSET. They apply to the rows in result order.
func (p *Program) Bounds() (top, offset, limit int) { return p.top, p.offset, p.limit }

// End is how many rows of the result order the query returns at most
// (OFFSET included), or -1 for all of them.
func (p *Program) End() int {
	end := -1
	if p.top >= 0 {
		end = p.top
	}
	if p.limit >= 0 {
		if e := p.offset + p.limit; end < 0 || e < end {
			end = e
		}
	}
	return end
}

// Streaming reports whether the query's rows follow the documents in
// their scan order, one document at a time: no ORDER BY, DISTINCT,
// aggregate or GROUP BY. Such a query pages with [Program.Select]; the
// others with [Program.Materialize].
func (p *Program) Streaming() bool {
	return len(p.q.orderBy) == 0 && !p.q.Distinct && !p.q.Aggregating() && p.q.rank == nil
}

// Ordered reports whether the query has ORDER BY.
func (p *Program) Ordered() bool { return len(p.q.orderBy) > 0 }

// parse reads what evaluation needs of a stored document. Stored documents have
// no duplicate keys, so reading stops once the fields are found.
func (p *Program) parse(body []byte, fs fieldSet) (*Value, error) {
	if fs.whole {
		return ParseObject(body)
	}
	if len(fs.names) == 0 {
		return &Value{Kind: KindObject, Obj: []Member{}}, nil
	}
	return parseObjectFieldsInto(nil, body, fs.names, true)
}

func (p *Program) match(env *evalEnv) bool {
	return p.q.Where == nil || isBool(p.q.Where.root.eval(env), true)
}

// project evaluates the SELECT clause; nil means the row is undefined (a
// VALUE of undefined), which the service leaves out of the results.
func (p *Program) project(env *evalEnv) *Value {
	switch p.q.sel.kind {
	case selectStar:
		return env.doc
	case selectValue:
		return p.q.sel.value.eval(env)
	}
	v := &Value{Kind: KindObject, Obj: make([]Member, 0, len(p.q.sel.items))}
	for _, it := range p.q.sel.items {
		if e := it.x.eval(env); e != nil {
			v.Obj = append(v.Obj, Member{Key: it.name, Val: e})
		}
	}
	return v
}

// Select runs a streaming query over one document: when the document
// matches and its projection is defined, the row's JSON is appended to dst
// and ok is true. SELECT * appends the stored body unchanged.
func (p *Program) Select(dst, body []byte) (out []byte, ok bool, err error) {
	doc, err := p.parse(body, p.sel)
	if err != nil {
		return dst, false, err
	}
	env := evalEnv{doc: doc, params: p.params, vectors: p.vectors, now: p.now}
	if !p.match(&env) {
		return dst, false, nil
	}
	if p.q.sel.kind == selectStar {
		return append(dst, body...), true, nil
	}
	v := p.project(&env)
	if v == nil {
		return dst, false, nil
	}
	return v.AppendJSON(dst), true, nil
}

// Doc is a stored document handed to a query: its creation sequence (the
// scan order and the tie-break of ORDER BY) and its JSON.
type Doc struct {
	Seq  uint64
	Body []byte
}

// Result is the complete, ordered result of a query over one scope, before
// TOP, OFFSET and LIMIT. A Result is immutable once built, so it can be
// cached and paged through by concurrent requests.
type Result struct {
	prog *Program
	rows []row
	// order lists the rows in result order when it is not theirs (a sorted
	// ORDER BY result): sorting pointers moves 8 bytes a swap, not a row.
	order []*row
	// Scanned is how many documents building the result read, ScannedBytes their
	// size, and Matched how many of them passed the filter (the service's query
	// metrics report the three).
	Scanned      int
	ScannedBytes int
	Matched      int
}

type row struct {
	// k0 is the first ORDER BY value and keys the others, prepared for
	// comparison; the first sits in the row because sorting reads it most.
	k0   orderKey
	keys []orderKey
	seq  uint64
	body []byte // the document, projected when the row is emitted
	val  *Value // the projection, when it was computed while scanning
}

// Materialize runs the query over every document of the scope, given in
// creation order, and returns its result rows: sorted for ORDER BY (ties in
// creation order, reversed when the first ORDER BY item is DESC, as the
// service breaks ties by _rid), de-duplicated for DISTINCT (the first
// occurrence in result order stays), one row per group for aggregates.
func (p *Program) Materialize(docs []Doc) (*Result, error) {
	if p.q.rank != nil {
		return p.materializeRank(docs)
	}
	r := &Result{prog: p, Scanned: len(docs)}
	var groups *aggregation
	if p.q.Aggregating() {
		groups = newAggregation(p.q)
	} else {
		r.rows = make([]row, 0, len(docs))
	}
	var (
		keys []orderKey // carved into the rows' keys, to allocate once per 256 rows
		// An ORDER BY scan keeps only the sort keys of a document, so one parsed
		// object serves every document; DISTINCT and groups keep theirs.
		reuse *fieldReader
	)
	if len(p.q.orderBy) > 0 && !p.q.Distinct && !p.scan.whole && len(p.scan.names) > 0 {
		reuse = &fieldReader{}
	}
	env := &evalEnv{params: p.params, vectors: p.vectors, now: p.now} // one environment for the scan; only doc changes
	for _, d := range docs {
		var (
			doc *Value
			err error
		)
		if reuse != nil {
			doc, err = parseObjectFieldsInto(reuse, d.Body, p.scan.names, true)
		} else {
			doc, err = p.parse(d.Body, p.scan)
		}
		if err != nil {
			return nil, err
		}
		env.doc = doc
		r.ScannedBytes += len(d.Body)
		if !p.match(env) {
			continue
		}
		r.Matched++
		if groups != nil {
			groups.add(env)
			continue
		}
		rw := row{seq: d.Seq, body: d.Body}
		if n := len(p.q.orderBy); n > 0 {
			rw.k0 = makeOrderKey(p.q.orderBy[0].x.eval(env))
			if n > 1 {
				if len(keys) < n-1 {
					keys = make([]orderKey, 256*(n-1))
				}
				rw.keys, keys = keys[:n-1:n-1], keys[n-1:]
				for i, o := range p.q.orderBy[1:] {
					rw.keys[i] = makeOrderKey(o.x.eval(env))
				}
			}
		}
		switch {
		case p.q.Distinct, p.q.sel.kind == selectValue:
			if rw.val = p.project(env); rw.val == nil {
				continue
			}
			if !p.q.Distinct && len(p.q.orderBy) > 0 {
				rw.val = nil // projected again when emitted; holding it would pin the parse
			}
		case p.q.sel.kind == selectList && len(p.q.orderBy) == 0:
			rw.val = p.project(env)
		}
		r.rows = append(r.rows, rw)
	}
	if groups != nil {
		r.rows = groups.rows(p)
		return r, nil
	}
	if len(p.q.orderBy) > 0 {
		r.order = make([]*row, len(r.rows))
		for i := range r.rows {
			r.order[i] = &r.rows[i]
		}
		slices.SortFunc(r.order, p.compareRows)
	}
	if p.q.Distinct {
		r.distinct()
	}
	return r, nil
}

// distinct keeps the first row of each value, in result order.
func (r *Result) distinct() {
	if r.order == nil {
		r.order = make([]*row, len(r.rows))
		for i := range r.rows {
			r.order[i] = &r.rows[i]
		}
	}
	seen := make(map[string]struct{}, len(r.order))
	out := r.order[:0]
	var key []byte
	for _, rw := range r.order {
		key = appendKey(key[:0], rw.val)
		if _, dup := seen[string(key)]; dup {
			continue
		}
		seen[string(key)] = struct{}{}
		out = append(out, rw)
	}
	clear(r.order[len(out):])
	r.order = out
}

// at returns row i in result order.
func (r *Result) at(i int) *row {
	if r.order != nil {
		return r.order[i]
	}
	return &r.rows[i]
}

func (p *Program) compareRows(a, b *row) int {
	c := compareOrderKeys(&a.k0, &b.k0)
	if p.desc[0] {
		c = -c
	}
	if c != 0 {
		return c
	}
	for i := range p.q.orderBy[1:] {
		c := compareOrderKeys(&a.keys[i], &b.keys[i])
		if p.desc[i+1] {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	c = cmp.Compare(a.seq, b.seq)
	if p.desc[0] {
		c = -c
	}
	return c
}

// Len is the number of rows.
func (r *Result) Len() int {
	if r.order != nil {
		return len(r.order)
	}
	return len(r.rows)
}

// Position returns the ORDER BY values and the creation sequence of row i,
// which is where a page ending at row i resumes ([Result.After]).
func (r *Result) Position(i int) ([]*Value, uint64, error) {
	rw := r.at(i)
	doc, err := r.prog.parse(rw.body, r.prog.scan)
	if err != nil {
		return nil, 0, err
	}
	env := evalEnv{doc: doc, params: r.prog.params, vectors: r.prog.vectors, now: r.prog.now}
	keys := make([]*Value, len(r.prog.q.orderBy))
	for j, o := range r.prog.q.orderBy {
		keys[j] = o.x.eval(&env)
	}
	return keys, rw.seq, nil
}

// After returns the index of the first row that sorts after the position
// (keys, seq) of an ORDER BY result: the next row to emit once that
// position has been emitted, even if the result was rebuilt in between and
// rows were added or removed.
func (r *Result) After(keys []*Value, seq uint64) int {
	if len(keys) != len(r.prog.q.orderBy) {
		return r.Len()
	}
	probe := row{k0: makeOrderKey(keys[0]), keys: make([]orderKey, len(keys)-1), seq: seq}
	for i, k := range keys[1:] {
		probe.keys[i] = makeOrderKey(k)
	}
	return sort.Search(r.Len(), func(i int) bool { return r.prog.compareRows(r.at(i), &probe) > 0 })
}

// AppendRow appends the JSON of row i to dst.
func (r *Result) AppendRow(dst []byte, i int) ([]byte, error) {
	rw := r.at(i)
	switch {
	case rw.val != nil:
		return rw.val.AppendJSON(dst), nil
	case r.prog.q.sel.kind == selectStar:
		return append(dst, rw.body...), nil
	}
	doc, err := r.prog.parse(rw.body, r.prog.proj)
	if err != nil {
		return dst, err
	}
	v := r.prog.project(&evalEnv{doc: doc, params: r.prog.params, vectors: r.prog.vectors, now: r.prog.now})
	if v == nil {
		return dst, fmt.Errorf("row %d has no value", i) // filtered while materializing; cannot happen
	}
	return v.AppendJSON(dst), nil
}

// Run executes the query over docs and returns the rows TOP, OFFSET and
// LIMIT let through, for scopes small enough to answer in one go (the
// databases and containers feeds).
func (p *Program) Run(docs []Doc) ([][]byte, error) {
	var out [][]byte
	n, end := 0, p.End()
	take := func(b []byte) bool {
		if end >= 0 && n >= end {
			return false
		}
		if n >= p.offset {
			out = append(out, b)
		}
		n++
		return true
	}
	if p.Streaming() {
		for _, d := range docs {
			b, ok, err := p.Select(nil, d.Body)
			if err != nil {
				return nil, err
			}
			if ok && !take(b) {
				break
			}
		}
		return out, nil
	}
	res, err := p.Materialize(docs)
	if err != nil {
		return nil, err
	}
	for i := 0; i < res.Len(); i++ {
		b, err := res.AppendRow(nil, i)
		if err != nil {
			return nil, err
		}
		if !take(b) {
			break
		}
	}
	return out, nil
}

// aggregation groups documents and accumulates the query's aggregates per
// group; groups come out in the order their first document was seen.
type aggregation struct {
	q      *Query
	groups map[string]*group
	order  []*group
	key    []byte
}

type group struct {
	doc    *Value // the first document of the group, for the grouped expressions
	states []aggState
}

func newAggregation(q *Query) *aggregation {
	return &aggregation{q: q, groups: map[string]*group{}}
}

func (a *aggregation) newGroup(doc *Value) *group {
	g := &group{doc: doc, states: make([]aggState, len(a.q.aggs))}
	for i, x := range a.q.aggs {
		g.states[i].kind = x.kind
	}
	a.order = append(a.order, g)
	return g
}

func (a *aggregation) add(env *evalEnv) {
	a.key = a.key[:0]
	for _, g := range a.q.groupBy {
		a.key = appendKey(a.key, g.eval(env))
	}
	g := a.groups[string(a.key)]
	if g == nil {
		g = a.newGroup(env.doc)
		a.groups[string(a.key)] = g
	}
	for i, x := range a.q.aggs {
		g.states[i].add(x.arg.eval(env))
	}
}

func (a *aggregation) rows(p *Program) []row {
	if len(a.order) == 0 && len(a.q.groupBy) == 0 {
		a.newGroup(nil) // aggregates over no documents still answer: COUNT 0, SUM 0
	}
	rows := make([]row, 0, len(a.order))
	for _, g := range a.order {
		vals := make([]*Value, len(g.states))
		for i := range g.states {
			vals[i] = g.states[i].result()
		}
		if v := p.project(&evalEnv{doc: g.doc, params: p.params, aggs: &vals, vectors: p.vectors, now: p.now}); v != nil {
			rows = append(rows, row{val: v})
		}
	}
	return rows
}

// Star reports whether the query selects whole documents (SELECT *), whose
// rows are the stored bodies unchanged.
func (p *Program) Star() bool { return p.q.sel.kind == selectStar }

// Match reports whether a stored document satisfies the WHERE clause.
func (p *Program) Match(body []byte) (bool, error) {
	if p.q.Where == nil {
		return true, nil
	}
	doc, err := p.parse(body, p.scan)
	if err != nil {
		return false, err
	}
	return p.match(&evalEnv{doc: doc, params: p.params, vectors: p.vectors, now: p.now}), nil
}
