package query

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
)

// hybridContainer holds the same 2-dimensional vector at /cos (cosine) and /euc
// (Euclidean), and a text t.
const hybridContainer = `{"id":"h","partitionKey":{"paths":["/pk"],"kind":"Hash"},"vectorEmbeddingPolicy":{"vectorEmbeddings":[` +
	`{"path":"/cos","dataType":"float32","distanceFunction":"cosine","dimensions":2},` +
	`{"path":"/euc","dataType":"float32","distanceFunction":"euclidean","dimensions":2}]}}`

type hdoc struct {
	id  string
	vec []float64
	dog int // occurrences of "dog" in t; -1: no t
}

// loadHybrid creates container h and n documents over 23 partition keys (all four
// ranges): a random vector, and a text of six words of which dog (0 to 3) are "dog",
// every seventh document without one. With every text six words long, BM25 for 'dog'
// grows with the count, so the full-text ranks are known without computing BM25:
// 3, 2, 1, 0 dogs rank 1 to 4 (0 scores 0, defined), no text ranks 5.
func (e *emulatorQuery) loadHybrid(t *testing.T, n int) []hdoc {
	t.Helper()
	cred, _ := cosmos.NewMasterKey(e.srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	defer tr.HTTP.CloseIdleConnections()
	req := &cosmos.Request{Method: http.MethodPost, Path: cosmos.EscapePath("dbs", "db", "colls"), Header: http.Header{}, Body: []byte(hybridContainer)}
	if resp, err := tr.Do(context.Background(), e.srv.Endpoint(), req); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("creating the hybrid container: %v %+v", err, resp)
	}
	rng := rand.New(rand.NewSource(5))
	docs := make([]hdoc, n)
	for i := range docs {
		parts := []string{fmt.Sprintf("%.3f", rng.Float64()*2-1), fmt.Sprintf("%.3f", rng.Float64()*2-1)}
		v := make([]float64, 2)
		for j := range v {
			fmt.Sscan(parts[j], &v[j])
		}
		d := hdoc{id: fmt.Sprintf("d%03d", i), vec: v, dog: rng.Intn(4)}
		arr := "[" + strings.Join(parts, ",") + "]"
		body := fmt.Sprintf(`{"id":%q,"pk":"p%d","cos":%s,"euc":%s`, d.id, i%23, arr, arr)
		if i%7 == 6 {
			d.dog = -1
		} else {
			body += fmt.Sprintf(`,"t":%q`, strings.TrimSpace(strings.Repeat("dog ", d.dog)+strings.Repeat("cat ", 6-d.dog)))
		}
		docs[i] = d
		if _, err := e.c.Execute(context.Background(), engine.Operation{Kind: engine.OpCreate, Database: "db", Container: "h", Body: []byte(body + "}")}); err != nil {
			t.Fatalf("creating %s: %v", body, err)
		}
	}
	return docs
}

// hybridQ is the query vector of the hybrid cases.
var hybridQ = []float64{0.6, -0.3}

// denseRanks ranks the documents by key, best first (equal keys share a rank, the next
// key takes the next rank), as the service's hybrid pipeline ranks a component.
func denseRanks(docs []hdoc, better func(a, b hdoc) bool) map[string]int {
	s := append([]hdoc(nil), docs...)
	sort.SliceStable(s, func(a, b int) bool { return better(s[a], s[b]) })
	ranks := map[string]int{}
	rank := 0
	for i, d := range s {
		if i == 0 || better(s[i-1], d) {
			rank++
		}
		ranks[d.id] = rank
	}
	return ranks
}

// hybridBruteForce is the test's own RRF: per component the dense ranks (the vector by
// Learn's definitions, most similar first: the highest cosine, the smallest Euclidean
// distance; BM25 by the count of dogs), Σ weight/(60 + rank); it returns each
// document's fused score.
func hybridBruteForce(docs []hdoc, fn string, vector, text bool, weights []float64) map[string]float64 {
	score := func(d hdoc) float64 {
		var dot, na, nb, sq float64
		for i := range d.vec {
			dot += d.vec[i] * hybridQ[i]
			na += d.vec[i] * d.vec[i]
			nb += hybridQ[i] * hybridQ[i]
			sq += (d.vec[i] - hybridQ[i]) * (d.vec[i] - hybridQ[i])
		}
		if fn == "euclidean" {
			return -math.Sqrt(sq) // nearer is better
		}
		return dot / math.Sqrt(na*nb)
	}
	var comps []map[string]int
	if vector {
		comps = append(comps, denseRanks(docs, func(a, b hdoc) bool { return score(a) > score(b) }))
	}
	if text {
		comps = append(comps, denseRanks(docs, func(a, b hdoc) bool { return a.dog > b.dog }))
	}
	out := map[string]float64{}
	for i, ranks := range comps {
		w := 1.0
		if weights != nil {
			w = weights[i]
		}
		for id, r := range ranks {
			out[id] += w / float64(60+r)
		}
	}
	return out
}

type hybridCase struct {
	sql     string
	fn      string
	vector  bool
	text    bool
	weights []float64
	top     int
}

func hybridVectorCases() []hybridCase {
	vec := func(path string) string {
		return fmt.Sprintf("VectorDistance(c.%s, [%v, %v])", path, hybridQ[0], hybridQ[1])
	}
	const ft = "FullTextScore(c.t, 'dog')"
	var cases []hybridCase
	for _, p := range []struct{ path, fn string }{{"cos", "cosine"}, {"euc", "euclidean"}} {
		cases = append(cases,
			hybridCase{fmt.Sprintf("SELECT TOP 10 c.id FROM c ORDER BY RANK RRF(%s, %s)", vec(p.path), ft), p.fn, true, true, nil, 10},
			hybridCase{fmt.Sprintf("SELECT TOP 50 c.id FROM c ORDER BY RANK RRF(%s, %s)", vec(p.path), ft), p.fn, true, true, nil, 50},
			hybridCase{fmt.Sprintf("SELECT TOP 10 c.id FROM c ORDER BY RANK RRF(%s, %s, [3, 1])", vec(p.path), ft), p.fn, true, true, []float64{3, 1}, 10},
			hybridCase{fmt.Sprintf("SELECT TOP 10 c.id FROM c ORDER BY RANK RRF(%s, %s, [0.5, 2])", ft, vec(p.path)), p.fn, true, true, []float64{2, 0.5}, 10},
			hybridCase{fmt.Sprintf("SELECT TOP 10 c.id FROM c ORDER BY RANK %s", vec(p.path)), p.fn, true, false, nil, 10},
		)
	}
	return cases
}

// checkHybridRows: the rows are TOP n distinct ids whose brute-force fused scores go
// down as the brute force's best n do (documents of equal score may come in either
// order).
func checkHybridRows(t *testing.T, who string, rows []json.RawMessage, c hybridCase, scores map[string]float64) {
	t.Helper()
	want := make([]float64, 0, len(scores))
	for _, s := range scores {
		want = append(want, s)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(want)))
	want = want[:min(c.top, len(want))]
	if len(rows) != len(want) {
		t.Fatalf("%s: %d rows, want %d", who, len(rows), len(want))
	}
	seen := map[string]bool{}
	for i, r := range rows {
		var row struct{ ID string }
		if err := json.Unmarshal(r, &row); err != nil || row.ID == "" || seen[row.ID] {
			t.Fatalf("%s: row %d is %s", who, i, r)
		}
		seen[row.ID] = true
		if math.Abs(scores[row.ID]-want[i]) > 1e-12 {
			t.Errorf("%s: row %d is %s, fused score %.9f; the brute force's row %d scores %.9f", who, i, row.ID, scores[row.ID], i, want[i])
		}
	}
}

// Hybrid search across the emulator's 4 ranges, cosine and Euclidean, with and without
// weights: cosmosctl's pipeline (the service's hybrid plan from the emulator, the
// component queries run on every range) and the official JavaScript SDK's both return
// the order of the test's brute-force RRF.
func TestHybridVectorSearchAcrossPartitionsAgainstTheEmulator(t *testing.T) {
	e := startEmulator(t)
	docs := e.loadHybrid(t, 80)
	cases := hybridVectorCases()
	var specs []cosmos.QuerySpec
	for _, c := range cases {
		specs = append(specs, cosmos.QuerySpec{Query: c.sql})
		scores := hybridBruteForce(docs, c.fn, c.vector, c.text, c.weights)
		t.Run(c.sql, func(t *testing.T) {
			o := Options{Client: e.c, Database: "db", Container: "h", Spec: cosmos.QuerySpec{Query: c.sql}, PageSize: 7}
			it, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			rows, infos, err := drainAll(it)
			it.Close()
			if err != nil {
				t.Fatal(err)
			}
			checkHybridRows(t, "query.Run", rows, c, scores)
			read := map[string]bool{}
			for _, in := range infos {
				if in.Kind == KindPage {
					read[in.RangeID] = true
				}
			}
			if len(read) != 4 {
				t.Fatalf("every one of the 4 ranges is read: %v", read)
			}
		})
	}
	// The brute force tells the functions apart: ranking the Euclidean distance
	// highest first would change the first ten.
	wrong := hybridBruteForce(docs, "cosine", true, true, nil)
	right := hybridBruteForce(docs, "euclidean", true, true, nil)
	if top := func(m map[string]float64) string {
		ids := make([]string, 0, len(m))
		for id := range m {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(a, b int) bool { return m[ids[a]] > m[ids[b]] })
		return strings.Join(ids[:10], ",")
	}; top(wrong) == top(right) {
		t.Fatalf("the corpus does not tell cosine from Euclidean")
	}
	results := jsQueryResultsIn(t, e, "h", specs)
	for i, c := range cases {
		if results[i].Error != "" {
			t.Errorf("the JavaScript SDK failed on %s: %s", c.sql, results[i].Error)
			continue
		}
		checkHybridRows(t, "the JavaScript SDK on "+c.sql, results[i].Resources, c, hybridBruteForce(docs, c.fn, c.vector, c.text, c.weights))
	}
}
