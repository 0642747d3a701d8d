package jsondoc

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// rankCorpus is a tiny corpus whose BM25 scores are worked out by hand below:
// N = 4 documents, 4 + 6 + 3 = 13 words at c.t (the fourth has none), avgdl = 3.25.
var rankCorpus = []string{
	`{"id":"1","t":"the quick brown fox"}`,
	`{"id":"2","t":"The lazy dog sleeps all day"}`,
	`{"id":"3","t":"quick, QUICK fox"}`,
	`{"id":"4","x":"quick"}`,
}

// bm25Scores scores every document of docs with the query's one FullTextScore, the
// statistics gathered over all of them.
func bm25Scores(t *testing.T, sql string, params map[string]*Value, docs []string) map[string]*float64 {
	t.Helper()
	q, err := ParseQuery(sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	p, err := q.Bind(params)
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.newFTScorer(q.rank.comps[0].(*ftScoreExpr))
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]ftCounts{}
	for _, d := range docs {
		doc, err := ParseObject([]byte(d))
		if err != nil {
			t.Fatal(err)
		}
		id, _ := str(doc.Get("id"))
		counts[id] = s.count(&evalEnv{doc: doc, params: params})
	}
	out := map[string]*float64{}
	for id, c := range counts {
		if v, ok := s.score(c); ok {
			out[id] = &v
		} else {
			out[id] = nil
		}
	}
	return out
}

func TestFullTextScoreBM25(t *testing.T) {
	// score = Σ ln(1 + (N − n + 0.5)/(n + 0.5)) · tf·2.2 / (tf + 1.2·(0.25 + 0.75·dl/3.25))
	//   'quick' (n = 2, idf = ln 2): doc 1 tf 1 dl 4 → 0.633354931757…; doc 3 tf 2 dl 3 → 0.974152794300…
	//   'dog' (n = 1, idf = ln(1 + 3.5/1.5)): doc 2 tf 1 dl 6 → 0.894379797499…
	//   'quick fox' as a phrase (n = 1): doc 3 tf 1 dl 3 → 1.243091054285…; doc 1 has the words apart: 0
	const quick1, quick3, dog2, phrase3 = 0.6333549317576496, 0.9741527943004636, 0.8943797974992669, 1.2430910542859848
	tests := []struct {
		name   string
		terms  string
		params map[string]*Value
		want   map[string]float64 // absent: undefined
	}{
		{"one term", `'quick'`, nil, map[string]float64{"1": quick1, "2": 0, "3": quick3}},
		{"terms add up", `'quick', "dog"`, nil, map[string]float64{"1": quick1, "2": dog2, "3": quick3}},
		{"a phrase counts where its words are consecutive", `'quick fox'`, nil, map[string]float64{"1": 0, "2": 0, "3": phrase3}},
		{"a parameter term", `@term`, map[string]*Value{"@term": String("DOG")}, map[string]float64{"1": 0, "2": dog2, "3": 0}},
		{"a term in no document scores 0", `'cat'`, nil, map[string]float64{"1": 0, "2": 0, "3": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := bm25Scores(t, "SELECT * FROM c ORDER BY RANK FullTextScore(c.t, "+tt.terms+")", tt.params, rankCorpus)
			for _, id := range []string{"1", "2", "3", "4"} {
				want, defined := tt.want[id]
				switch g := got[id]; {
				case !defined && g != nil:
					t.Errorf("doc %s scored %v, want undefined (no text at the path)", id, *g)
				case defined && g == nil:
					t.Errorf("doc %s has no score, want %v", id, want)
				case defined && math.Abs(*g-want) > 1e-12:
					t.Errorf("doc %s scored %.15f, want %.15f", id, *g, want)
				}
			}
		})
	}
}

func TestOrderByRankFullTextScore(t *testing.T) {
	tests := []struct {
		name, sql string
		params    map[string]*Value
		want      string
	}{
		{"most relevant first, unscored last, every document returned",
			`SELECT VALUE c.id FROM c ORDER BY RANK FullTextScore(c.t, 'quick')`, nil, `["3","1","2","4"]`},
		{"two terms",
			`SELECT VALUE c.id FROM c ORDER BY RANK FullTextScore(c.t, 'quick', 'dog')`, nil, `["3","2","1","4"]`},
		{"TOP keeps the most relevant",
			`SELECT TOP 2 c.id FROM c ORDER BY RANK FullTextScore(c.t, 'quick', 'dog')`, nil, `[{"id":"3"},{"id":"2"}]`},
		{"OFFSET and LIMIT page the ranking",
			`SELECT VALUE c.id FROM c ORDER BY RANK FullTextScore(c.t, 'quick', 'dog') OFFSET 1 LIMIT 2`, nil, `["2","1"]`},
		{"WHERE filters, ties go latest first",
			`SELECT VALUE c.id FROM c WHERE FullTextContains(c.t, 'fox') OR NOT IS_DEFINED(c.t) ORDER BY RANK FullTextScore(c.t, 'dog')`, nil, `["3","1","4"]`},
		{"keyword case and alias",
			`select value r.id from root r order by rank fulltextscore(r.t, @q)`, map[string]*Value{"@q": String("fox")}, `["3","1","2","4"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runQuery(t, tt.sql, tt.params, rankCorpus); got != tt.want {
				t.Errorf("%s\n got %s\nwant %s", tt.sql, got, tt.want)
			}
		})
	}
}

// TestRankStatisticsIgnoreWhere: the corpus is every document of the scope, as the
// service's global statistics query has no WHERE clause; filtering out document 3
// leaves document 1's score as computed over all four.
func TestRankStatisticsIgnoreWhere(t *testing.T) {
	q, err := ParseQuery(`SELECT * FROM c WHERE c.id = "1" ORDER BY RANK RRF(FullTextScore(c.t, 'quick'), FullTextScore(c.t, 'dog'))`)
	if err != nil {
		t.Fatal(err)
	}
	p, err := q.Bind(nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Materialize(docsOf(rankCorpus))
	if err != nil {
		t.Fatal(err)
	}
	if res.Len() != 1 || res.Scanned != 4 || res.Matched != 1 {
		t.Fatalf("rows %d, scanned %d, matched %d; want 1, 4, 1", res.Len(), res.Scanned, res.Matched)
	}
	s := bm25Scores(t, `SELECT * FROM c ORDER BY RANK FullTextScore(c.t, 'quick')`, nil, rankCorpus)
	if got := *s["1"]; math.Abs(got-0.6333549317576496) > 1e-12 {
		t.Errorf("doc 1 scored %v over the whole corpus", got)
	}
}

func TestFullTextScoreRefusals(t *testing.T) {
	const onlyRank = "The FullTextScore function is only allowed in the ORDER BY RANK clause."
	const rankClause = "The ORDER BY RANK clause must be followed by a VectorDistance and/or a FullTextScore function call."
	tests := []struct{ sql, want string }{
		{`SELECT c.id, FullTextScore(c.t, 'a') AS s FROM c ORDER BY RANK FullTextScore(c.t, 'a')`, onlyRank},
		{`SELECT FullTextScore(c.t, 'a') FROM c`, onlyRank},
		{`SELECT VALUE {"s": FullTextScore(c.t, 'a')} FROM c`, onlyRank},
		{`SELECT c.id FROM c WHERE FullTextScore(c.t, 'a') > 0`, onlyRank},
		{`SELECT c.id FROM c ORDER BY FullTextScore(c.t, 'a')`, onlyRank},
		{`SELECT * FROM c ORDER BY RANK ABS(FullTextScore(c.t, 'a'))`, rankClause},
		{`SELECT * FROM c ORDER BY RANK c.t`, rankClause},
		{`SELECT * FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'a'))`, rankClause},
		{`SELECT * FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'a'), 20.5)`, rankClause},
		{`SELECT * FROM c ORDER BY RANK RRF(RRF(FullTextScore(c.t, 'a'), FullTextScore(c.t, 'b')), FullTextScore(c.t, 'c'))`, "'RRF' is not a recognized built-in function name."},
		{`SELECT VALUE RRF(FullTextScore(c.t, 'a'), FullTextScore(c.t, 'b')) FROM c`, "'RRF' is not a recognized built-in function name."},
		{`SELECT DISTINCT c.id FROM c ORDER BY RANK FullTextScore(c.t, 'a')`, "The DISTINCT keyword is not allowed with the ORDER BY RANK clause."},
		{`SELECT * FROM c ORDER BY RANK FullTextScore(c.t, ['a', 'b'])`, "not as an array"},
		{`SELECT * FROM c ORDER BY RANK FullTextScore(c.t)`, "one or more terms"},
		{`SELECT * FROM c ORDER BY RANK FullTextScore(c.t, c.u)`, "string literals or parameters"},
		{`SELECT * FROM c ORDER BY RANK FullTextScore(c.t, 3)`, "must be strings"},
		{`SELECT * FROM c ORDER BY RANK FullTextScore(LOWER(c.t), 'a')`, "must be a property path"},
		{`SELECT * FROM c ORDER BY RANK FullTextScore(c.t, 'a') DESC`, "takes no DESC"},
		{`SELECT * FROM c ORDER BY RANK FullTextScore(c.t, 'a'), c.id`, "one scoring expression"},
		{`SELECT * FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'a'), FullTextScore(c.t, 'b'), [1])`, "2 scoring functions and 1 weights"},
		{`SELECT * FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'a'), FullTextScore(c.t, 'b'), [1, c.w])`, "number literals"},
		{`SELECT COUNT(1) FROM c ORDER BY RANK FullTextScore(c.t, 'a')`, "ORDER BY RANK with aggregates"},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			_, err := ParseQuery(tt.sql)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
	q, err := ParseQuery(`SELECT * FROM c ORDER BY RANK FullTextScore(c.t, @q)`)
	if err != nil {
		t.Fatal(err)
	}
	p, err := q.Bind(map[string]*Value{"@q": Number("7")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Materialize(docsOf(rankCorpus)); err == nil || !strings.Contains(err.Error(), "must be a string, found number") {
		t.Errorf("a number parameter as a term: %v", err)
	}
}

// TestRankPlan: the emulator runs ORDER BY RANK in one scope and does not plan it
// across ranges, where the service answers with hybridSearchQueryInfo.
func TestRankPlan(t *testing.T) {
	q, err := ParseQuery(`SELECT TOP 5 * FROM c ORDER BY RANK FullTextScore(c.t, 'a')`)
	if err != nil {
		t.Fatal(err)
	}
	if !q.Ranked() || !q.NeedsPlan() || !strings.Contains(strings.Join(q.Features(), ","), "HybridSearch") {
		t.Errorf("ranked %v, needs plan %v, features %v", q.Ranked(), q.NeedsPlan(), q.Features())
	}
	p, err := q.Bind(nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Streaming() || p.Ordered() {
		t.Errorf("streaming %v, ordered %v: a ranked result is built whole and paged by row", p.Streaming(), p.Ordered())
	}
	_, err = p.Plan()
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "hybridSearchQueryInfo") || !strings.Contains(err.Error(), "partition key") {
		t.Errorf("plan: %v", err)
	}
}
