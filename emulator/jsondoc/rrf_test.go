package jsondoc

import (
	"strings"
	"testing"
)

// TestRRFFusion checks reciprocal rank fusion against ranks and sums worked out by
// hand over rankCorpus. Component scores (fulltext_score_test.go):
//
//	           'quick'        'dog'
//	doc 1      0.633 (rank 2)  0     (rank 2, tied with doc 3)
//	doc 2      0     (rank 3)  0.894 (rank 1)
//	doc 3      0.974 (rank 1)  0     (rank 2)
//	doc 4      undefined (4)   undefined (3)
//
// RRF = Σ w/(60 + rank): doc 1 = 1/62 + 1/62 = 0.032258; doc 2 = 1/63 + 1/61 = 0.032266;
// doc 3 = 1/61 + 1/62 = 0.032522; doc 4 = 1/64 + 1/63 = 0.031498. Dense ranks matter:
// ranking the 'dog' ties 2 and 3 (competition ranking) would put doc 1 above doc 2.
func TestRRFFusion(t *testing.T) {
	const comps = `FullTextScore(c.t, 'quick'), FullTextScore(c.t, 'dog')`
	tests := []struct{ name, rank, want string }{
		{"equal weights", `RRF(` + comps + `)`, `["3","2","1","4"]`},
		// [1, 2]: doc 1 = 3/62 = 0.048387; doc 2 = 1/63 + 2/61 = 0.048660;
		// doc 3 = 1/61 + 2/62 = 0.048651; doc 4 = 1/64 + 2/63 = 0.047371.
		{"weights favour the second component", `RRF(` + comps + `, [1, 2])`, `["2","3","1","4"]`},
		// [1, -1]: 'dog' ranks lowest first: docs 1 and 3 (0) rank 1, doc 2 rank 2,
		// doc 4 rank 3: doc 1 = 1/62 + 1/61 = 0.032522; doc 2 = 1/63 + 1/62 = 0.032002;
		// doc 3 = 2/61 = 0.032787; doc 4 = 0.031498.
		{"a negative weight reverses its component", `RRF(` + comps + `, [1, -1])`, `["3","1","2","4"]`},
		// Weights 0 and 1 leave only 'dog': doc 2 first, docs 1 and 3 tied
		// (latest first), doc 4 last.
		{"a zero weight drops its component", `RRF(` + comps + `, [0, 1.0])`, `["2","3","1","4"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sql := `SELECT VALUE c.id FROM c ORDER BY RANK ` + tt.rank
			if got := runQuery(t, sql, nil, rankCorpus); got != tt.want {
				t.Errorf("%s\n got %s\nwant %s", sql, got, tt.want)
			}
		})
	}
	if got := runQuery(t, `SELECT TOP 1 c.id FROM c ORDER BY RANK RRF(`+comps+`)`, nil, rankCorpus); got != `[{"id":"3"}]` {
		t.Errorf("TOP 1 of the fusion: %s", got)
	}
}

// TestHybridPlanMatchesTheServiceBaseline: the plan of the .NET SDK's baseline query
// (QueryPlanRetrieverTests, hybrid search optimization disabled) is the service's, to
// the character.
func TestHybridPlanMatchesTheServiceBaseline(t *testing.T) {
	q, err := ParseQuery(`SELECT TOP 10 * FROM c ORDER BY RANK FullTextScore(c.text, "swim", "run")`)
	if err != nil {
		t.Fatal(err)
	}
	p, err := q.Bind(nil)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := p.HybridPlan(false)
	if err != nil {
		t.Fatal(err)
	}
	const score = `_FullTextScore(c.text, ["swim", "run"], {documentdb-formattablehybridsearchquery-totaldocumentcount}, {documentdb-formattablehybridsearchquery-totalwordcount-0}, {documentdb-formattablehybridsearchquery-hitcountsarray-0})`
	wantStats := "SELECT COUNT(1) AS documentCount, [{\"totalWordCount\": SUM(_FullTextWordCount(c.text)), \"hitCounts\": [COUNTIF(FullTextContains(c.text, \"swim\")), COUNTIF(FullTextContains(c.text, \"run\"))]}] AS fullTextStatistics\nFROM c"
	wantComp := "SELECT TOP 120 c._rid, [{\"item\": " + score + "}] AS orderByItems, {\"payload\": c, \"componentScores\": [(" + score + " ?? -1)]} AS payload\nFROM c\nWHERE ({documentdb-formattableorderbyquery-filter})\nORDER BY " + score + " DESC"
	if plan.GlobalStatisticsQuery != wantStats {
		t.Errorf("global statistics query\n got %q\nwant %q", plan.GlobalStatisticsQuery, wantStats)
	}
	if len(plan.Components) != 1 || plan.Components[0].RewrittenQuery != wantComp || *plan.Components[0].Top != 120 ||
		plan.Components[0].OrderByExpressions[0] != score || !plan.Components[0].NonStreamingOrderBy {
		t.Errorf("component %+v\nwant query %q", plan.Components, wantComp)
	}
	if plan.Take == nil || *plan.Take != 10 || plan.Skip != nil || !plan.RequiresGlobalStatistics || len(plan.Weights) != 0 {
		t.Errorf("take %v skip %v stats %v weights %v", plan.Take, plan.Skip, plan.RequiresGlobalStatistics, plan.Weights)
	}
	opt, err := p.HybridPlan(true)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(wantComp, "[("+score+" ?? -1)]", "[]", 1); opt.Components[0].RewrittenQuery != want {
		t.Errorf("with HybridSearchSkipOrderByRewrite one component keeps its ORDER BY and sends no scores:\n got %q\nwant %q", opt.Components[0].RewrittenQuery, want)
	}
}
