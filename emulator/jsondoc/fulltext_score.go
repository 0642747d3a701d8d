package jsondoc

import (
	"fmt"
	"math"
	"strings"
)

// FullTextScore(<path>, <term>, …) is a BM25 relevance score that only ranks: it
// may appear in ORDER BY RANK, alone or as an argument of RRF, and nowhere else
// (learn.microsoft.com/azure/cosmos-db/nosql/query/fulltextscore: "can only be used
// in an ORDER BY RANK clause", "can't be part of a projection"). The service refuses
// it elsewhere with SC2240 "The FullTextScore function is only allowed in the ORDER
// BY RANK clause." — in a SELECT list, a VALUE, a WHERE clause, a subquery — as
// measured against an Azure account (github.com/ikvmnet/calcite-cosmos design notes)
// and asserted by EF Core's Cosmos tests (Select_FullTextScore).
//
// The terms are separate string arguments, literals or parameters. The array form
// FullTextScore(c.text, ["a", "b"]) was documented once and is now refused by the
// service (SC2241, same measurement; azure-sdk-for-js#34332 rewrote its samples).
//
// Scoring is Okapi BM25 over the documents of the scope the query runs in (one
// partition key, or one partition key range): the statistics are those the service's
// hybrid search plan gathers over a whole container with its global statistics query
// (COUNT(1) AS documentCount, SUM(_FullTextWordCount(path)) AS totalWordCount and a
// COUNTIF(FullTextContains(path, term)) hit count per term, .NET SDK
// QueryPlanRetrieverTests and the JavaScript SDK's GlobalStatisticsAggregator), so:
//
//	N        documents in the scope (all of them, the WHERE clause aside)
//	avgdl    the total word count of the path over N
//	n(t)     documents whose path holds term t (as FullTextContains matches it)
//	tf(t,d)  occurrences of t in d's text; dl(d) d's word count
//	score(d) = Σ_t ln(1 + (N − n(t) + 0.5)/(n(t) + 0.5)) · tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl))
//
// with k1 = 1.2 and b = 0.75. Microsoft documents "BM25" and not its parameters,
// tokenizer, stemming or stop words; k1 and b are the usual defaults, words are those
// of FullTextContains (fullTextWords), and a term of several words counts the
// occurrences of the phrase. A document whose path is not a string has no score
// (undefined), which ranks after every scored document, as the service's component
// queries rank it (their componentScores write "_FullTextScore(…) ?? -1").
type ftScoreExpr struct {
	path  *pathExpr
	terms []expr // *literalExpr strings or *paramExpr
}

const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

func (x *ftScoreExpr) eval(*evalEnv) *Value { return nil } // scored by the rank pass only
func (x *ftScoreExpr) children() []expr {
	return append([]expr{x.path}, x.terms...)
}

func (x *ftScoreExpr) appendSQL(b []byte) []byte {
	b = append(b, "FullTextScore("...)
	b = appendList(b, x.children())
	return append(b, ')')
}

// scoringFunc parses one of the functions only ORDER BY RANK may use.
type scoringFunc func(p *sqlParser, name token, args []expr) (expr, error)

var scoringFuncs = map[string]scoringFunc{
	"FULLTEXTSCORE": parseFullTextScore,
	"RRF":           parseRRF,
}

// scoringCall parses FullTextScore(…) or RRF(…). Outside ORDER BY RANK it is the
// service's refusal; the arguments are parsed with scoring functions refused, so a
// FullTextScore inside another function, or an RRF inside RRF, is refused too.
func (p *sqlParser) scoringCall(name token, parse scoringFunc) (expr, error) {
	fn := strings.ToUpper(name.text)
	if !p.rankOK || (fn == "RRF" && p.inRRF) {
		if fn == "RRF" {
			// EF Core's Cosmos tests (OrderByRank_with_nested_RRF) record the service's
			// text for an RRF that is not the ORDER BY RANK expression itself.
			return nil, invalidQuery(name.pos, "'RRF' is not a recognized built-in function name. (RRF fuses scores only as the whole ORDER BY RANK expression: ORDER BY RANK RRF(FullTextScore(…), FullTextScore(…)))")
		}
		return nil, invalidQuery(name.pos, "The FullTextScore function is only allowed in the ORDER BY RANK clause. (it cannot be selected or filtered on; filter with FullTextContains, FullTextContainsAll or FullTextContainsAny)")
	}
	p.next() // "("
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	rankOK, inRRF := p.rankOK, p.inRRF
	// RRF's arguments are scoring functions themselves; anything deeper is not.
	p.rankOK, p.inRRF = fn == "RRF", fn == "RRF"
	args, err := p.exprList(")")
	p.rankOK, p.inRRF = rankOK, inRRF
	if err != nil {
		return nil, err
	}
	return parse(p, name, args)
}

func parseFullTextScore(_ *sqlParser, name token, args []expr) (expr, error) {
	if len(args) < 2 {
		return nil, invalidQuery(name.pos, "FullTextScore takes a property path and one or more terms: FullTextScore(c.text, 'term1', 'term2'), got %d arguments", len(args))
	}
	path, ok := args[0].(*pathExpr)
	if !ok || !orderablePath(path) {
		return nil, invalidQuery(name.pos, "the first argument of FullTextScore must be a property path such as c.text, found %s", sqlText(args[0]))
	}
	for _, t := range args[1:] {
		switch t := t.(type) {
		case *paramExpr:
		case *literalExpr:
			if t.v == nil || t.v.Kind != KindString {
				return nil, invalidQuery(name.pos, "FullTextScore terms must be strings, found %s", sqlText(t))
			}
		case *arrayExpr:
			return nil, invalidQuery(name.pos, "FullTextScore takes its terms as separate strings, FullTextScore(c.text, 'term1', 'term2'), not as an array (the service refuses the array form, SC2241)")
		default:
			return nil, invalidQuery(name.pos, "FullTextScore terms must be string literals or parameters, found %s", sqlText(t))
		}
	}
	return &ftScoreExpr{path: path, terms: args[1:]}, nil
}

// ftScorer is one FullTextScore of a query bound to its parameters: each term as
// words, and the corpus statistics of the scope once gathered.
type ftScorer struct {
	x     *ftScoreExpr
	terms [][]string
	// statistics over every document of the scope
	docs, words int
	hits        []int
}

func (p *Program) newFTScorer(x *ftScoreExpr) (*ftScorer, error) {
	s := &ftScorer{x: x, hits: make([]int, len(x.terms))}
	env := &evalEnv{params: p.params}
	for _, t := range x.terms {
		v := t.eval(env)
		str, ok := str(v)
		if !ok {
			found := "undefined"
			if v != nil {
				found = v.Kind.String()
			}
			return nil, fmt.Errorf("FullTextScore term %s must be a string, found %s", sqlText(t), found)
		}
		s.terms = append(s.terms, fullTextWords(str))
	}
	return s, nil
}

// ftCounts is what scoring needs of one document: its word count at the path and
// each term's occurrences; ok is false when the path is not a string.
type ftCounts struct {
	ok    bool
	words int
	tf    []int
}

// count reads one document: it always adds to the statistics (every document of the
// scope is in the corpus) and returns the document's counts for scoring.
func (s *ftScorer) count(env *evalEnv) ftCounts {
	s.docs++
	text, ok := str(s.x.path.eval(env))
	if !ok {
		return ftCounts{}
	}
	c := countTerms(text, s.terms)
	s.words += c.words
	for i, tf := range c.tf {
		if tf > 0 {
			s.hits[i]++
		}
	}
	return c
}

// score is BM25 of counted document c against the statistics gathered.
func (s *ftScorer) score(c ftCounts) (float64, bool) {
	hits := make([]float64, len(s.hits))
	for i, h := range s.hits {
		hits[i] = float64(h)
	}
	return bm25(c, float64(s.docs), float64(s.words), hits)
}

// bm25 scores counted document c in a corpus of docs documents holding words words
// at the path, hits[i] of which hold term i.
func bm25(c ftCounts, docs, words float64, hits []float64) (float64, bool) {
	if !c.ok {
		return 0, false
	}
	lengthNorm := 1.0
	if words > 0 && docs > 0 {
		lengthNorm = float64(c.words) / (words / docs)
	}
	total := 0.0
	for i, tf := range c.tf {
		if tf == 0 || i >= len(hits) {
			continue
		}
		df := hits[i]
		idf := math.Log(1 + (docs-df+0.5)/(df+0.5))
		f := float64(tf)
		total += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*lengthNorm))
	}
	return total, true
}

// countTerms counts text's words and each term's occurrences in it.
func countTerms(text string, terms [][]string) ftCounts {
	words := fullTextWords(text)
	c := ftCounts{ok: true, words: len(words), tf: make([]int, len(terms))}
	for i, t := range terms {
		c.tf[i] = phraseCount(words, t)
	}
	return c
}

// The internal functions of the service's hybrid search plans, which a client sends
// to each range with the container-wide statistics substituted (.NET SDK
// QueryPlanRetrieverTests; the JavaScript SDK's hybridQueryExecutionContext fills the
// placeholders):
//
//	_FullTextWordCount(path)                                  the number of words of the text at path
//	_FullTextScore(path, [terms], documentCount, totalWordCount, [hitCounts])
//	                                                          BM25 with those statistics
//
// Both are undefined when the path is not a string (and _FullTextScore when the
// statistics are not numbers).
func addFullTextFunctions(functions map[string]*function) {
	functions["_FULLTEXTWORDCOUNT"] = &function{1, 1, fnFullTextWordCount}
	functions["_FULLTEXTSCORE"] = &function{5, 5, fnFullTextScoreWith}
}

func fnFullTextWordCount(a args) *Value {
	text, ok := str(a.v[0])
	if !ok {
		return nil
	}
	return intValue(int64(len(fullTextWords(text))))
}

func fnFullTextScoreWith(a args) *Value {
	text, ok := str(a.v[0])
	hitCounts := a.get(4)
	if !ok || a.v[1] == nil || a.v[1].Kind != KindArray || hitCounts == nil || hitCounts.Kind != KindArray {
		return nil
	}
	docs, ok1 := number(a.v[2])
	words, ok2 := number(a.v[3])
	if !ok1 || !ok2 {
		return nil
	}
	terms := make([][]string, len(a.v[1].Arr))
	for i, t := range a.v[1].Arr {
		s, ok := str(t)
		if !ok {
			return nil
		}
		terms[i] = fullTextWords(s)
	}
	hits := make([]float64, len(hitCounts.Arr))
	for i, h := range hitCounts.Arr {
		if hits[i], ok = number(h); !ok {
			return nil
		}
	}
	v, _ := bm25(countTerms(text, terms), docs, words, hits)
	return floatValue(v)
}

func number(v *Value) (float64, bool) {
	if v == nil || v.Kind != KindNumber {
		return 0, false
	}
	return numberFloat(v.Num), true
}

// statsScoreCall reports whether x is a call of _FullTextScore, which ORDER BY takes in
// the component queries of a hybrid search plan.
func statsScoreCall(x expr) bool {
	c, ok := x.(*callExpr)
	return ok && c.f == builtins()["_FULLTEXTSCORE"]
}

// phraseCount counts the occurrences of phrase in words (overlapping ones too).
func phraseCount(words, phrase []string) int {
	if len(phrase) == 0 {
		return 0
	}
	n := 0
	for i := 0; i+len(phrase) <= len(words); i++ {
		match := true
		for j, w := range phrase {
			if words[i+j] != w {
				match = false
				break
			}
		}
		if match {
			n++
		}
	}
	return n
}
