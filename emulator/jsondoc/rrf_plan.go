package jsondoc

import "math"

// HybridPlan is the query plan of an ORDER BY RANK query across ranges, in the shape
// the service's gateway answers it (hybridSearchQueryInfo; .NET SDK
// QueryPlanRetrieverTests for SELECT TOP 10 * FROM c ORDER BY RANK FullTextScore(c.text,
// "swim", "run") and RRF forms, and the JavaScript SDK's hybridQueryExecutionContext,
// which runs it):
//
//   - GlobalStatisticsQuery runs on every range; its rows
//     {"documentCount": n, "fullTextStatistics": [{"totalWordCount": w, "hitCounts": [h…]}…]}
//     (one statistics entry per FullTextScore, in order) are summed.
//   - Each component query scores with _FullTextScore(path, [terms], N, W, [H]) where
//     N, W and H are placeholders a client replaces with the sums:
//     {documentdb-formattablehybridsearchquery-totaldocumentcount},
//     {documentdb-formattablehybridsearchquery-totalwordcount-<i>} and
//     {documentdb-formattablehybridsearchquery-hitcountsarray-<i>}, i the component's
//     index. A VectorDistance component scores with _VectorScore(<VectorDistance's
//     arguments>) and needs no statistics; with no FullTextScore the global query is
//     "SELECT COUNT(1) AS documentCount, [] AS fullTextStatistics" and
//     requiresGlobalStatistics is false. Its rows carry _rid, the payload and
//     componentScores (every component's score, an undefined one written as the worst
//     value: "?? -1" for a full-text score, "?? -1.79769e+308" for a vector score ranked
//     highest first, "?? 1.79769e+308" for a score ranked lowest first).
//   - A vector component ranks Descending, its ORDER BY written bare
//     ("ORDER BY _VectorScore(c.image, [1, 2, 3])"); a negative weight makes it
//     Ascending with "ASC" (all from the .NET SDK's QueryPlanRetrieverTests, whose
//     containers have no vector policy, so cosine). What the service plans for a
//     Euclidean policy is in no baseline found: the emulator plans it as it plans
//     ORDER BY VectorDistance under Euclidean (Ascending, the same tests), so
//     _VectorScore is the distance, ranked lowest first, written as a reversed
//     component is (ASC, "?? 1.79769e+308", negated in the rewritten shape).
//   - The client keeps one row per _rid, ranks each component (equal scores share a
//     rank), fuses with Σ weight/(60 + rank), sorts, then skips Skip rows and takes
//     Take.
//
// Component rows come in two shapes. By default ORDER BY shaped rows
// {"_rid", "orderByItems": [{"item": score}], "payload": {"payload": <selection>,
// "componentScores": […]}}, with a non-streaming ORDER BY (hasNonStreamingOrderBy).
// When the client lists HybridSearchSkipOrderByRewrite among its supported features
// (the JavaScript SDK does unless disableHybridSearchQueryPlanOptimization) and there
// are several components, plain rows {"_rid", "payload": <selection>,
// "componentScores": […]} with no ORDER BY in the component's plan, a component ranked
// lowest first contributing its score negated; with one component the service keeps
// the ORDER BY shape and sends "componentScores": [].
//
// Each component reads the top max(120, 12 × (skip + take)) rows of a range. The
// service's rule is not documented: every baseline found has TOP 120 for TOP 10. Without
// TOP or LIMIT the components have no TOP (and take is null).
type HybridPlan struct {
	GlobalStatisticsQuery    string
	Components               []HybridComponent
	Weights                  []float64 // [] without weights, else their magnitudes
	Skip, Take               *int
	RequiresGlobalStatistics bool
}

// HybridComponent is one component query's plan (a queryInfo).
type HybridComponent struct {
	Top                 *int
	OrderBy             []string // "Ascending" or "Descending"; [] in the plain shape
	OrderByExpressions  []string
	RewrittenQuery      string
	NonStreamingOrderBy bool
}

// Hybrid placeholders a client replaces with the global statistics.
const (
	phDocumentCount = "{documentdb-formattablehybridsearchquery-totaldocumentcount}"
	phWordCount     = "{documentdb-formattablehybridsearchquery-totalwordcount-"
	phHitCounts     = "{documentdb-formattablehybridsearchquery-hitcountsarray-"
)

// rawExpr is SQL text written as is: a placeholder of a plan's query.
type rawExpr struct{ text string }

func (x *rawExpr) eval(*evalEnv) *Value      { return nil }
func (x *rawExpr) children() []expr          { return nil }
func (x *rawExpr) appendSQL(b []byte) []byte { return append(b, x.text...) }

// HybridPlan returns the plan of a bound ORDER BY RANK query; skipOrderByRewrite is
// whether the client listed HybridSearchSkipOrderByRewrite.
func (p *Program) HybridPlan(skipOrderByRewrite bool) (*HybridPlan, error) {
	q := p.q
	rc := q.rank
	plan := &HybridPlan{Weights: []float64{}}
	for _, w := range rc.weights {
		plan.Weights = append(plan.Weights, math.Abs(w))
	}
	var compTop *int
	switch {
	case q.Top.Set:
		plan.Take = intPtr(p.top)
	case q.Offset.Set:
		plan.Skip, plan.Take = intPtr(p.offset), intPtr(p.limit)
	}
	if plan.Take != nil {
		n := *plan.Take
		if plan.Skip != nil {
			n += *plan.Skip
		}
		compTop = intPtr(max(120, 12*n))
	}
	alias := q.Alias
	path := func(keys ...string) *pathExpr {
		px := &pathExpr{alias: alias}
		for _, k := range keys {
			px.segs = append(px.segs, pathSeg{key: k})
		}
		return px
	}
	// The scores and the statistics the global query gathers, per component.
	scores := make([]expr, len(rc.comps))
	stats := []expr{}
	for i, c := range rc.comps {
		if v, ok := c.(*vectorDistanceExpr); ok {
			// A VectorDistance component scores with _VectorScore over the same
			// arguments and gathers no statistics (.NET QueryPlanRetrieverTests:
			// RRF(VectorDistance(…), VectorDistance(…)) has "[] AS fullTextStatistics"
			// and requiresGlobalStatistics false).
			scores[i] = &vectorDistanceExpr{args: v.args, internal: true}
			continue
		}
		ft, ok := c.(*ftScoreExpr)
		if !ok {
			return nil, unsupportedf("%s across partitions: only FullTextScore and VectorDistance components are planned", sqlText(c))
		}
		plan.RequiresGlobalStatistics = true
		idx := itoa(i)
		scores[i] = &callExpr{fn: "_FullTextScore", f: builtins()["_FULLTEXTSCORE"], args: []expr{
			ft.path, &arrayExpr{elems: ft.terms}, &rawExpr{phDocumentCount},
			&rawExpr{phWordCount + idx + "}"}, &rawExpr{phHitCounts + idx + "}"},
		}}
		hits := &arrayExpr{}
		for _, t := range ft.terms {
			hits.elems = append(hits.elems, &aggExpr{kind: aggCountIf, fn: "COUNTIF", arg: &callExpr{fn: "FullTextContains", f: builtins()["FULLTEXTCONTAINS"], args: []expr{ft.path, t}}})
		}
		stats = append(stats, &objectExpr{keys: []string{"totalWordCount", "hitCounts"}, vals: []expr{
			&aggExpr{kind: aggSum, fn: "SUM", arg: &callExpr{fn: "_FullTextWordCount", f: builtins()["_FULLTEXTWORDCOUNT"], args: []expr{ft.path}}},
			hits,
		}})
	}
	g := Query{Alias: alias, Collection: q.Collection, sel: selection{kind: selectList, items: []selectItem{
		{x: &aggExpr{kind: aggCount, fn: "COUNT", arg: &literalExpr{v: Number("1")}}, name: "documentCount", aliased: true},
		{x: &arrayExpr{elems: stats}, name: "fullTextStatistics", aliased: true},
	}}}
	plan.GlobalStatisticsQuery = string(g.appendSQL(nil, "\n", true))

	plain := skipOrderByRewrite && len(rc.comps) > 1
	componentScores := &arrayExpr{}
	if !(skipOrderByRewrite && len(rc.comps) == 1) {
		for i, s := range scores {
			worst := "-1"
			if _, vector := s.(*vectorDistanceExpr); vector {
				worst = "-1.79769e+308"
			}
			if !p.higherFirst(i) {
				worst = "1.79769e+308"
			}
			var x expr = &coalesceExpr{l: s, r: &rawExpr{worst}}
			if plain && !p.higherFirst(i) {
				x = &arithExpr{op: "*", l: &rawExpr{"-1"}, r: x}
			}
			componentScores.elems = append(componentScores.elems, x)
		}
	}
	for i, s := range scores {
		r := Query{Alias: alias, Collection: q.Collection, Where: q.Where}
		if compTop != nil {
			r.Top = Count{Set: true, N: *compTop}
		}
		r.orderBy = []orderItem{{x: s, desc: p.higherFirst(i), explicit: true}}
		if _, vector := s.(*vectorDistanceExpr); vector {
			// The service writes a descending _VectorScore bare and an ascending one
			// with ASC (the baselines above).
			r.orderBy[0] = orderItem{x: s, explicit: !p.higherFirst(i)}
		}
		c := HybridComponent{OrderBy: []string{}, OrderByExpressions: []string{}}
		if plain {
			r.sel = selection{kind: selectList, items: []selectItem{
				{x: path("_rid"), name: "_rid"},
				{x: q.payload(), name: "payload", aliased: true},
				{x: componentScores, name: "componentScores", aliased: true},
			}}
		} else {
			c.Top = compTop
			c.OrderBy = []string{map[bool]string{true: "Descending", false: "Ascending"}[p.higherFirst(i)]}
			c.OrderByExpressions = []string{sqlText(s)}
			c.NonStreamingOrderBy = true
			r.sel = selection{kind: selectList, items: []selectItem{
				{x: path("_rid"), name: "_rid"},
				{x: &arrayExpr{elems: []expr{&objectExpr{keys: []string{"item"}, vals: []expr{s}}}}, name: "orderByItems", aliased: true},
				{x: &objectExpr{keys: []string{"payload", "componentScores"}, vals: []expr{q.payload(), componentScores}}, name: "payload", aliased: true},
			}}
			var where expr = placeholderExpr{}
			if q.Where != nil {
				where = &logicExpr{and: true, l: q.Where.root, r: where}
			}
			r.Where = &Filter{alias: alias, root: where}
		}
		c.RewrittenQuery = string(r.appendSQL(nil, "\n", true))
		plan.Components = append(plan.Components, c)
	}
	return plan, nil
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
