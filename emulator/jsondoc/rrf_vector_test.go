package jsondoc

import (
	"strings"
	"testing"
)

// hybridCorpus is rankCorpus with vectors under two policy paths holding the same
// values: /cos under cosine, /euc under Euclidean (hybridPolicy). Against [2, 1]:
//
//	           cosine          Euclidean      FullTextScore(c.t, 'dog')
//	doc 1 [1,0]   0.8944 (2)   1.4142 (2)     0     (rank 2, tied with doc 3)
//	doc 2 [0,1]   0.4472 (4)   2      (3)     0.894 (rank 1)
//	doc 3 [1,1]   0.9487 (1)   1      (1)     0     (rank 2)
//	doc 4 [3,-1]  0.7071 (3)   2.2361 (4)     undefined (rank 3)
//
// The most similar document is rank 1 under both: the highest cosine, the smallest
// Euclidean distance. sdkcompat/js/hybrid.test.js, query/hybrid_vector_test.go and
// emulator/fulltext_score_sdk_test.go expect the same orders of the same corpus.
var hybridCorpus = []string{
	`{"id":"1","t":"the quick brown fox","cos":[1,0],"euc":[1,0]}`,
	`{"id":"2","t":"The lazy dog sleeps all day","cos":[0,1],"euc":[0,1]}`,
	`{"id":"3","t":"quick, QUICK fox","cos":[1,1],"euc":[1,1]}`,
	`{"id":"4","x":"quick","cos":[3,-1],"euc":[3,-1]}`,
}

var hybridPolicy = BindOptions{VectorEmbeddings: []VectorEmbedding{
	{Path: "/cos", DataType: "float32", DistanceFunction: "cosine", Dimensions: 2},
	{Path: "/euc", DataType: "float32", DistanceFunction: "euclidean", Dimensions: 2},
}}

// TestRRFWithVectorDistance checks ORDER BY RANK over VectorDistance, alone and fused
// with FullTextScore, against the ranks of hybridCorpus and sums worked out by hand.
func TestRRFWithVectorDistance(t *testing.T) {
	tests := []struct{ name, rank, want string }{
		{"cosine alone, most similar first", `VectorDistance(c.cos, [2, 1])`, `["3","1","4","2"]`},
		{"Euclidean alone, nearest first", `VectorDistance(c.euc, [2, 1])`, `["3","1","2","4"]`},
		// doc 1 = 1/62 + 1/62 = 0.032258; doc 2 = 1/64 + 1/61 = 0.032018;
		// doc 3 = 1/61 + 1/62 = 0.032522; doc 4 = 1/63 + 1/63 = 0.031746.
		{"cosine and BM25", `RRF(VectorDistance(c.cos, [2, 1]), FullTextScore(c.t, 'dog'))`, `["3","1","2","4"]`},
		// doc 1 = 0.032258; doc 2 = 1/63 + 1/61 = 0.032266; doc 3 = 0.032522;
		// doc 4 = 1/64 + 1/63 = 0.031498. Ranking the distance highest first would give
		// doc 2 = 1/62 + 1/61 the lead: ["2","4","3","1"].
		{"Euclidean and BM25", `RRF(VectorDistance(c.euc, [2, 1]), FullTextScore(c.t, 'dog'))`, `["3","2","1","4"]`},
		// [3, 1]: doc 1 = 4/62 = 0.064516; doc 2 = 3/64 + 1/61 = 0.063268;
		// doc 3 = 3/61 + 1/62 = 0.065309; doc 4 = 4/63 = 0.063492.
		{"cosine weighted", `RRF(VectorDistance(c.cos, [2, 1]), FullTextScore(c.t, 'dog'), [3, 1])`, `["3","1","4","2"]`},
		// [3, 1]: doc 1 = 0.064516; doc 2 = 3/63 + 1/61 = 0.064012; doc 3 = 0.065309;
		// doc 4 = 3/64 + 1/63 = 0.062748.
		{"Euclidean weighted", `RRF(VectorDistance(c.euc, [2, 1]), FullTextScore(c.t, 'dog'), [3, 1])`, `["3","1","2","4"]`},
		// [-1, 1] reverses the distance: docs 4, 2, 1, 3 rank 1 to 4: doc 1 = 1/63 +
		// 1/62 = 0.032002; doc 2 = 1/62 + 1/61 = 0.032522; doc 3 = 1/64 + 1/62 = 0.031754;
		// doc 4 = 1/61 + 1/63 = 0.032266.
		{"a negative weight reverses a distance", `RRF(VectorDistance(c.euc, [2, 1]), FullTextScore(c.t, 'dog'), [-1, 1])`, `["2","4","1","3"]`},
		// Two vectors: cosine ranks 2,4,1,3 for docs 1..4 and Euclidean 2,3,1,4:
		// doc 1 = 2/62; doc 2 = 1/64 + 1/63; doc 3 = 2/61; doc 4 = 1/63 + 1/64. Docs 2
		// and 4 tie, the latest first.
		{"two vector components", `RRF(VectorDistance(c.cos, [2, 1]), VectorDistance(c.euc, [2, 1]))`, `["3","1","4","2"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sql := `SELECT VALUE c.id FROM c ORDER BY RANK ` + tt.rank
			if got := runVector(t, sql, hybridPolicy, hybridCorpus); got != tt.want {
				t.Errorf("%s\n got %s\nwant %s", sql, got, tt.want)
			}
		})
	}
	// The options object overrides the policy as in VectorDistance anywhere.
	sql := `SELECT VALUE c.id FROM c ORDER BY RANK VectorDistance(c.cos, [2, 1], false, {'distanceFunction': 'euclidean'})`
	if got := runVector(t, sql, hybridPolicy, hybridCorpus); got != `["3","1","2","4"]` {
		t.Errorf("%s\n got %s", sql, got)
	}
}

// TestVectorScoreServesComponentQueries runs the component queries of a hybrid plan the
// way a client sends them to a range: _VectorScore scores as VectorDistance does under
// the policy, and sorts by value (bare is descending, ASC ascending).
func TestVectorScoreServesComponentQueries(t *testing.T) {
	for _, tt := range []struct{ sql, want string }{
		{`SELECT VALUE c.id FROM c ORDER BY _VectorScore(c.cos, [2, 1])`, `["3","1","4","2"]`},
		{`SELECT VALUE c.id FROM c ORDER BY _VectorScore(c.euc, [2, 1]) ASC`, `["3","1","2","4"]`},
		{`SELECT VALUE c.id FROM c ORDER BY _VectorScore(c.euc, [2, 1]) DESC`, `["4","2","1","3"]`},
		{`SELECT VALUE (_VectorScore(c.euc, [2, 1]) ?? 1.79769e+308) FROM c WHERE c.id = "3"`, `[1]`},
		{`SELECT VALUE (_VectorScore(c.nothing, [2, 1]) ?? -1.79769e+308) FROM c WHERE c.id = "3"`, `[-1.79769e+308]`},
	} {
		if got := runVector(t, tt.sql, hybridPolicy, hybridCorpus); got != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.sql, got, tt.want)
		}
	}
}

// TestHybridPlanWithVectorsMatchesTheServiceBaselines: the plans of the .NET SDK's
// baseline queries with VectorDistance components (QueryPlanRetrieverTests, both
// MakeTest and MakeHybridSearchOptimizationTest) are the service's, to the character.
func TestHybridPlanWithVectorsMatchesTheServiceBaselines(t *testing.T) {
	const (
		ft     = `_FullTextScore(c.text, ["swim", "run"], {documentdb-formattablehybridsearchquery-totaldocumentcount}, {documentdb-formattablehybridsearchquery-totalwordcount-0}, {documentdb-formattablehybridsearchquery-hitcountsarray-0})`
		vs     = `_VectorScore(c.image, [1, 2, 3])`
		backup = `_VectorScore(c.backup_image, [0.5, 0.2, 0.33])`
		stats  = "SELECT COUNT(1) AS documentCount, [{\"totalWordCount\": SUM(_FullTextWordCount(c.text)), \"hitCounts\": [COUNTIF(FullTextContains(c.text, \"swim\")), COUNTIF(FullTextContains(c.text, \"run\"))]}] AS fullTextStatistics\nFROM c"
		noStat = "SELECT COUNT(1) AS documentCount, [] AS fullTextStatistics\nFROM c"
	)
	orderByShape := func(score, scores, order string) string {
		return "SELECT TOP 120 c._rid, [{\"item\": " + score + "}] AS orderByItems, {\"payload\": c, \"componentScores\": " + scores + "} AS payload\nFROM c\nWHERE ({documentdb-formattableorderbyquery-filter})\nORDER BY " + order
	}
	plainShape := func(scores, order string) string {
		return "SELECT TOP 120 c._rid, c AS payload, " + scores + " AS componentScores\nFROM c\nORDER BY " + order
	}
	mixed := "[(" + ft + " ?? -1), (" + vs + " ?? -1.79769e+308)]"
	twoVec := "[(" + backup + " ?? -1.79769e+308), (" + vs + " ?? 1.79769e+308)]"
	twoVecPlain := "[(" + backup + " ?? -1.79769e+308), (-1 * (" + vs + " ?? 1.79769e+308))]"
	type comp struct{ query, order string }
	tests := []struct {
		sql         string
		skipRewrite bool
		stats       string
		needStats   bool
		weights     []float64
		comps       []comp
	}{
		{`SELECT TOP 10 * FROM c ORDER BY RANK RRF(FullTextScore(c.text,  "swim", "run"), VectorDistance(c.image, [1, 2, 3]))`, false, stats, true, nil, []comp{
			{orderByShape(ft, mixed, ft+" DESC"), "Descending"},
			{orderByShape(vs, mixed, vs), "Descending"},
		}},
		{`SELECT TOP 10 * FROM c ORDER BY RANK RRF(FullTextScore(c.text, "swim", "run"), VectorDistance(c.image, [1, 2, 3]))`, true, stats, true, nil, []comp{
			{plainShape(mixed, ft+" DESC"), ""},
			{plainShape(mixed, vs), ""},
		}},
		{`SELECT TOP 10 * FROM c ORDER BY RANK RRF(VectorDistance(c.backup_image, [0.5, 0.2, 0.33]), VectorDistance(c.image, [1, 2, 3]), [1, -0.3])`, false, noStat, false, []float64{1, 0.3}, []comp{
			{orderByShape(backup, twoVec, backup), "Descending"},
			{orderByShape(vs, twoVec, vs+" ASC"), "Ascending"},
		}},
		{`SELECT TOP 10 * FROM c ORDER BY RANK RRF(VectorDistance(c.backup_image, [0.5, 0.2, 0.33]), VectorDistance(c.image, [1, 2, 3]), [1, -0.3])`, true, noStat, false, []float64{1, 0.3}, []comp{
			{plainShape(twoVecPlain, backup), ""},
			{plainShape(twoVecPlain, vs+" ASC"), ""},
		}},
	}
	for _, tt := range tests {
		q, err := ParseQuery(tt.sql)
		if err != nil {
			t.Fatal(err)
		}
		p, err := q.Bind(nil)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := p.HybridPlan(tt.skipRewrite)
		if err != nil {
			t.Fatal(err)
		}
		if plan.GlobalStatisticsQuery != tt.stats || plan.RequiresGlobalStatistics != tt.needStats {
			t.Errorf("%s: global statistics %q (required %v)", tt.sql, plan.GlobalStatisticsQuery, plan.RequiresGlobalStatistics)
		}
		if len(plan.Weights) != len(tt.weights) || (len(tt.weights) > 0 && (plan.Weights[0] != tt.weights[0] || plan.Weights[1] != tt.weights[1])) {
			t.Errorf("%s: weights %v, want %v", tt.sql, plan.Weights, tt.weights)
		}
		if len(plan.Components) != len(tt.comps) {
			t.Fatalf("%s: %d components", tt.sql, len(plan.Components))
		}
		for i, c := range plan.Components {
			if c.RewrittenQuery != tt.comps[i].query {
				t.Errorf("%s (rewrite skipped %v) component %d\n got %q\nwant %q", tt.sql, tt.skipRewrite, i, c.RewrittenQuery, tt.comps[i].query)
			}
			if got := strings.Join(c.OrderBy, ","); got != tt.comps[i].order {
				t.Errorf("%s component %d orderBy %q, want %q", tt.sql, i, got, tt.comps[i].order)
			}
		}
	}
}

// TestHybridPlanOfAEuclideanVector: no baseline has a Euclidean policy; the emulator
// plans the distance as a reversed component (Ascending, ASC, the largest value for
// undefined, negated in the rewritten shape), as the service plans ORDER BY
// VectorDistance under Euclidean Ascending.
func TestHybridPlanOfAEuclideanVector(t *testing.T) {
	q, err := ParseQuery(`SELECT TOP 10 c.id FROM c ORDER BY RANK RRF(VectorDistance(c.euc, [2, 1]), FullTextScore(c.t, 'dog'))`)
	if err != nil {
		t.Fatal(err)
	}
	p, err := q.BindWith(nil, hybridPolicy)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := p.HybridPlan(false)
	if err != nil {
		t.Fatal(err)
	}
	c := plan.Components[0]
	if c.OrderBy[0] != "Ascending" || !strings.HasSuffix(c.RewrittenQuery, "ORDER BY _VectorScore(c.euc, [2, 1]) ASC") ||
		!strings.Contains(c.RewrittenQuery, "(_VectorScore(c.euc, [2, 1]) ?? 1.79769e+308)") {
		t.Errorf("Euclidean component %+v", c)
	}
	if plan.Components[1].OrderBy[0] != "Descending" || !plan.RequiresGlobalStatistics {
		t.Errorf("full-text component %+v", plan.Components[1])
	}
	opt, err := p.HybridPlan(true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(opt.Components[0].RewrittenQuery, "(-1 * (_VectorScore(c.euc, [2, 1]) ?? 1.79769e+308))") {
		t.Errorf("rewritten Euclidean component %q", opt.Components[0].RewrittenQuery)
	}
}
