package jsondoc

import "testing"

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
