package jsondoc

import (
	"cmp"
	"math"
	"slices"
)

// ORDER BY RANK <scoring expression> sorts by relevance: the expression is one
// scoring function (FullTextScore or VectorDistance: "a scoring function like
// VectorDistance, FullTextScore, or RRF", learn.microsoft.com/azure/cosmos-db/nosql/query/order-by-rank)
// or RRF over two or more of them, with an optional last argument of weights
// (learn.microsoft.com/azure/cosmos-db/nosql/query/order-by-rank and …/rrf). Anything
// else is the service's SC2221 "The ORDER BY RANK clause must be followed by a
// VectorDistance and/or a FullTextScore function call." (.NET SDK LINQ baseline
// TestRRFOrderByRankFunction, azure-cosmos-dotnet-v3#5163; EF Core's Cosmos tests
// OrderByRank_with_RRF_with_one_argument and OrderByRank_RRF_with_non_function_argument).
// ORDER BY RANK ranks without filtering: every document the WHERE clause lets through
// is returned, matching terms or not (measured against Azure, ikvmnet/calcite-cosmos).
type rankClause struct {
	x     expr   // the expression as written, for messages and SQL
	comps []expr // the scoring functions, in order
	// weights are RRF's, one per component; nil for weights of 1. A negative
	// weight reverses its component's order, and its magnitude weighs it (the
	// service's plan for RRF(…, [1, -0.3]) has componentWeights [1.0, 0.3] and
	// sorts the second component the other way: .NET QueryPlanRetrieverTests).
	weights []float64
	rrf     bool
}

// rrfK is reciprocal rank fusion's constant, 60 in every SDK that fuses across
// ranges (azure-sdk-for-js hybridQueryExecutionContext RRF_CONSTANT, azure-sdk-for-python
// hybrid_search_aggregator RRF_CONSTANT, .NET HybridSearchCrossPartitionQueryPipelineStage).
const rrfK = 60

const rankClauseMessage = "The ORDER BY RANK clause must be followed by a VectorDistance and/or a FullTextScore function call."

type rrfExpr struct {
	comps   []expr
	weights expr // nil without weights
}

func (x *rrfExpr) eval(*evalEnv) *Value { return nil }
func (x *rrfExpr) children() []expr {
	if x.weights == nil {
		return x.comps
	}
	return append(slices.Clone(x.comps), x.weights)
}

func (x *rrfExpr) appendSQL(b []byte) []byte {
	b = append(b, "RRF("...)
	b = appendList(b, x.children())
	return append(b, ')')
}

func parseRRF(_ *sqlParser, name token, args []expr) (expr, error) {
	x := &rrfExpr{comps: args}
	if n := len(args); n > 0 {
		if _, ok := args[n-1].(*arrayExpr); ok {
			x.comps, x.weights = args[:n-1], args[n-1]
		}
	}
	if len(x.comps) < 2 {
		return nil, invalidQuery(name.pos, "%s (RRF fuses two or more scoring functions: RRF(FullTextScore(…), FullTextScore(…)[, [weights]]))", rankClauseMessage)
	}
	for _, c := range x.comps {
		if !isScorer(c) {
			return nil, invalidQuery(name.pos, "%s (RRF argument %s is not one)", rankClauseMessage, sqlText(c))
		}
	}
	return x, nil
}

func isScorer(x expr) bool {
	switch x := x.(type) {
	case *ftScoreExpr:
		return true
	case *vectorDistanceExpr:
		return !x.internal
	}
	return false
}

// rankClause parses what follows ORDER BY RANK.
func (p *sqlParser) rankClause() (*rankClause, error) {
	p.next() // RANK
	start := p.peek()
	p.rankOK = true
	x, err := p.expr()
	p.rankOK = false
	if err != nil {
		return nil, err
	}
	rc := &rankClause{x: x}
	switch s := x.(type) {
	case *rrfExpr:
		rc.comps, rc.rrf = s.comps, true
		if s.weights != nil {
			if rc.weights, err = rrfWeights(s.weights, len(s.comps)); err != nil {
				return nil, err
			}
		}
	default:
		if !isScorer(x) {
			return nil, invalidQuery(start.pos, "%s (found %s)", rankClauseMessage, sqlText(x))
		}
		rc.comps = []expr{x}
	}
	switch t := p.peek(); {
	case isKeyword(t, "ASC"), isKeyword(t, "DESC"):
		return nil, invalidQuery(t.pos, "ORDER BY RANK takes no %s: it always ranks the most relevant first", t.text)
	case isPunct(t, ","):
		return nil, invalidQuery(t.pos, "ORDER BY RANK takes one scoring expression; fuse several with RRF(…), which cannot be combined with other ORDER BY items")
	}
	return rc, nil
}

// rrfWeights reads RRF's weights: an array of number literals, one per scoring
// function.
func rrfWeights(x expr, n int) ([]float64, error) {
	arr := x.(*arrayExpr)
	if len(arr.elems) != n {
		return nil, invalidQuery(0, "RRF has %d scoring functions and %d weights in %s; give one weight per scoring function", n, len(arr.elems), sqlText(x))
	}
	ws := make([]float64, n)
	for i, e := range arr.elems {
		if len(collectParams(e, nil)) > 0 || hasPath(e) {
			return nil, invalidQuery(0, "RRF weights must be number literals, found %s", sqlText(e))
		}
		v := e.eval(&evalEnv{})
		if v == nil || v.Kind != KindNumber {
			return nil, invalidQuery(0, "RRF weights must be numbers, found %s", sqlText(e))
		}
		ws[i] = numberFloat(v.Num)
	}
	return ws, nil
}

func hasPath(x expr) bool {
	if _, ok := x.(*pathExpr); ok {
		return true
	}
	for _, c := range x.children() {
		if hasPath(c) {
			return true
		}
	}
	return false
}

// validateRank checks what the service refuses alongside ORDER BY RANK.
func (q *Query) validateRank() error {
	if q.rank == nil {
		return nil
	}
	if q.Distinct {
		// EF Core's Cosmos tests, OrderByRank_Distinct.
		return invalidQuery(0, "The DISTINCT keyword is not allowed with the ORDER BY RANK clause.")
	}
	if q.Aggregating() {
		return unsupportedf("ORDER BY RANK with aggregates or GROUP BY")
	}
	return nil
}

// Ranked reports whether the query sorts with ORDER BY RANK.
func (q *Query) Ranked() bool { return q.rank != nil }

// rankPlanError is the query plan of an ORDER BY RANK query, which the emulator does
// not model: across ranges the service plans it as a hybrid search
// (hybridSearchQueryInfo: a global statistics query over every range, whose totals
// the client substitutes into per-range component queries of internal functions
// such as _FullTextScore, then fuses; .NET QueryPlanRetrieverTests). Within one
// partition key or one range the emulator runs the query itself.
func (q *Query) rankPlanError() error {
	return unsupportedf("ORDER BY RANK %s across partitions: the service plans it as a hybrid search (hybridSearchQueryInfo with a global statistics query and component queries), which cosmosctl's emulator does not model; send the query with a partition key (x-ms-documentdb-partitionkey) or to one partition key range", sqlText(q.rank.x))
}

// addRankFields adds to the fields a scan reads those ranking needs, and the
// projection's, which ranking computes while scanning.
func (p *Program) addRankFields() {
	if p.q.rank == nil {
		return
	}
	for _, c := range p.q.rank.comps {
		p.scan.add(c)
	}
	if p.q.sel.kind != selectStar {
		p.scan.union(p.proj)
	}
}

// rankScore is one component's score of a row; ok is false when it is undefined.
type rankScore struct {
	v  float64
	ok bool
}

// materializeRank runs an ORDER BY RANK query over the documents of a scope. Every
// document adds to the full-text statistics; the rows are those the WHERE clause
// passes, sorted by their score (one component) or their fused score (RRF), ties
// broken by creation order, latest first (as ORDER BY … DESC breaks them).
func (p *Program) materializeRank(docs []Doc) (*Result, error) {
	rc := p.q.rank
	scorers := make([]*ftScorer, len(rc.comps))
	for i, c := range rc.comps {
		if x, ok := c.(*ftScoreExpr); ok {
			s, err := p.newFTScorer(x)
			if err != nil {
				return nil, err
			}
			scorers[i] = s
		}
	}
	r := &Result{prog: p, Scanned: len(docs)}
	var (
		counts [][]ftCounts
		others [][]*Value
	)
	env := &evalEnv{params: p.params, vectors: p.vectors}
	for _, d := range docs {
		doc, err := p.parse(d.Body, p.scan)
		if err != nil {
			return nil, err
		}
		env.doc = doc
		r.ScannedBytes += len(d.Body)
		cs := make([]ftCounts, len(rc.comps))
		for i, s := range scorers {
			if s != nil {
				cs[i] = s.count(env)
			}
		}
		if !p.match(env) {
			continue
		}
		r.Matched++
		rw := row{seq: d.Seq, body: d.Body}
		if p.q.sel.kind != selectStar {
			if rw.val = p.project(env); rw.val == nil {
				continue // a VALUE of undefined is no row
			}
		}
		vs := make([]*Value, len(rc.comps))
		for i, c := range rc.comps {
			if scorers[i] == nil {
				vs[i] = c.eval(env)
			}
		}
		r.rows = append(r.rows, rw)
		counts = append(counts, cs)
		others = append(others, vs)
	}
	scores := make([][]rankScore, len(r.rows))
	for j := range r.rows {
		scores[j] = make([]rankScore, len(rc.comps))
		for i, s := range scorers {
			if s != nil {
				scores[j][i].v, scores[j][i].ok = s.score(counts[j][i])
			} else if v := others[j][i]; v != nil && v.Kind == KindNumber {
				scores[j][i] = rankScore{v: numberFloat(v.Num), ok: true}
			}
		}
	}
	keys := p.fuse(scores)
	r.order = make([]*row, len(r.rows))
	idx := make([]int, len(r.rows))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := compareRankScores(keys[a], keys[b], true); c != 0 {
			return c
		}
		return cmp.Compare(r.rows[b].seq, r.rows[a].seq)
	})
	for i, j := range idx {
		r.order[i] = &r.rows[j]
	}
	return r, nil
}

// higherFirst reports whether component i of the bound query ranks higher values
// first: a FullTextScore (BM25, higher is more relevant) and a VectorDistance under
// cosine or dot product (similarities) do; a VectorDistance under Euclidean (a
// distance, smaller is more similar: learn.microsoft.com/azure/cosmos-db/nosql/query/vectordistance)
// ranks the lowest first, so the most similar document is rank 1 whatever the
// function. A negative weight reverses either.
func (p *Program) higherFirst(i int) bool {
	rc := p.q.rank
	hf := true
	if v, ok := rc.comps[i].(*vectorDistanceExpr); ok {
		hf = p.similarity(v)
	}
	if rc.weights != nil && rc.weights[i] < 0 {
		hf = !hf
	}
	return hf
}

// fuse returns each row's sort key, the higher first: its one component's score
// (negated for a component that ranks lower values first), or its RRF score
// Σ |weight_i| / (60 + rank_i). rank_i is the row's 1-based rank in component i,
// equal scores sharing a rank and the next score taking the next rank (the
// JavaScript SDK's sortHybridSearchResultByRRFScore); an undefined score ranks after
// every defined one.
func (p *Program) fuse(scores [][]rankScore) []rankScore {
	rc := p.q.rank
	keys := make([]rankScore, len(scores))
	if !rc.rrf {
		hf := p.higherFirst(0)
		for j, s := range scores {
			keys[j] = s[0]
			if !hf {
				keys[j].v = -keys[j].v
			}
		}
		return keys
	}
	for j := range keys {
		keys[j].ok = true
	}
	idx := make([]int, len(scores))
	for i := range rc.comps {
		hf := p.higherFirst(i)
		w := 1.0
		if rc.weights != nil {
			w = math.Abs(rc.weights[i])
		}
		for j := range idx {
			idx[j] = j
		}
		slices.SortStableFunc(idx, func(a, b int) int { return compareRankScores(scores[a][i], scores[b][i], hf) })
		rank := 0
		for n, j := range idx {
			if n == 0 || compareRankScores(scores[idx[n-1]][i], scores[j][i], hf) != 0 {
				rank++
			}
			keys[j].v += w / float64(rrfK+rank)
		}
	}
	return keys
}

// compareRankScores orders a before b (negative) when a ranks first: defined
// before undefined, then the higher value first when higherFirst, else the lower.
func compareRankScores(a, b rankScore, higherFirst bool) int {
	switch {
	case a.ok != b.ok:
		if a.ok {
			return -1
		}
		return 1
	case !a.ok:
		return 0
	case higherFirst:
		return cmp.Compare(b.v, a.v)
	}
	return cmp.Compare(a.v, b.v)
}
