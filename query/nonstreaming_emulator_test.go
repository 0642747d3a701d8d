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

// vectorContainer has one embedding per distance function, each at its own path: every
// document carries the same vector at /cos, /dot and /euc.
const vectorContainer = `{"id":"v","partitionKey":{"paths":["/pk"],"kind":"Hash"},"vectorEmbeddingPolicy":{"vectorEmbeddings":[` +
	`{"path":"/cos","dataType":"float32","distanceFunction":"cosine","dimensions":4},` +
	`{"path":"/dot","dataType":"float32","distanceFunction":"dotproduct","dimensions":4},` +
	`{"path":"/euc","dataType":"float32","distanceFunction":"euclidean","dimensions":4}]}}`

const queryVector = "[0.1, -0.2, 0.3, 0.4]"

var queryVec = []float64{0.1, -0.2, 0.3, 0.4}

type vdoc struct {
	id, pk string
	vec    []float64
}

// loadVectors creates container v in db and n documents with random 4-dimensional
// vectors (three decimals, so that JSON carries them exactly) over 23 partition keys.
func (e *emulatorQuery) loadVectors(t *testing.T, n int) []vdoc {
	t.Helper()
	cred, _ := cosmos.NewMasterKey(e.srv.Key())
	tr := &cosmos.Transport{HTTP: cosmos.NewHTTPClient(), Credential: cred}
	defer tr.HTTP.CloseIdleConnections()
	req := &cosmos.Request{Method: http.MethodPost, Path: cosmos.EscapePath("dbs", "db", "colls"), Header: http.Header{}, Body: []byte(vectorContainer)}
	if resp, err := tr.Do(context.Background(), e.srv.Endpoint(), req); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("creating the vector container: %v %+v", err, resp)
	}
	rng := rand.New(rand.NewSource(23))
	docs := make([]vdoc, n)
	for i := range docs {
		v := make([]float64, 4)
		parts := make([]string, 4)
		for j := range v {
			parts[j] = fmt.Sprintf("%.3f", rng.Float64()*2-1)
			fmt.Sscan(parts[j], &v[j])
		}
		docs[i] = vdoc{id: fmt.Sprintf("d%03d", i), pk: fmt.Sprintf("p%d", i%23), vec: v}
		arr := "[" + strings.Join(parts, ",") + "]"
		body := fmt.Sprintf(`{"id":%q,"pk":%q,"cos":%s,"dot":%s,"euc":%s}`, docs[i].id, docs[i].pk, arr, arr, arr)
		if _, err := e.c.Execute(context.Background(), engine.Operation{Kind: engine.OpCreate, Database: "db", Container: "v", Body: []byte(body)}); err != nil {
			t.Fatalf("creating %s: %v", body, err)
		}
	}
	return docs
}

// bruteForce is the test's own computation: the documents' ids and scores ordered from
// the most similar to the least (reversed with leastFirst), by Learn's definitions of
// the three functions.
func bruteForce(docs []vdoc, fn string, leastFirst bool) (ids []string, scores map[string]float64) {
	scores = map[string]float64{}
	for _, d := range docs {
		var dot, na, nb, sq float64
		for i, x := range d.vec {
			y := queryVec[i]
			dot += x * y
			na += x * x
			nb += y * y
			sq += (x - y) * (x - y)
		}
		switch fn {
		case "cos":
			scores[d.id] = dot / math.Sqrt(na*nb)
		case "dot":
			scores[d.id] = dot
		default:
			scores[d.id] = math.Sqrt(sq)
		}
		ids = append(ids, d.id)
	}
	higherFirst := fn != "euc"
	sort.SliceStable(ids, func(i, j int) bool {
		a, b := scores[ids[i]], scores[ids[j]]
		if higherFirst != leastFirst {
			return a > b
		}
		return a < b
	})
	return ids, scores
}

type vectorCase struct {
	sql        string
	fn         string // cos, dot, euc: the function the expected order uses
	leastFirst bool
	from, to   int // the slice of the brute-force order the query returns
}

func vectorCases() []vectorCase {
	score := func(path string) string { return fmt.Sprintf("VectorDistance(c.%s, %s)", path, queryVector) }
	return []vectorCase{
		{sql: "SELECT TOP 10 c.id, " + score("cos") + " AS s FROM c ORDER BY " + score("cos"), fn: "cos", to: 10},
		{sql: "SELECT TOP 10 c.id, " + score("dot") + " AS s FROM c ORDER BY " + score("dot"), fn: "dot", to: 10},
		{sql: "SELECT TOP 10 c.id, " + score("euc") + " AS s FROM c ORDER BY " + score("euc"), fn: "euc", to: 10},
		{sql: "SELECT c.id, " + score("euc") + " AS s FROM c ORDER BY " + score("euc") + " OFFSET 4 LIMIT 7", fn: "euc", from: 4, to: 11},
		{sql: "SELECT TOP 6 c.id, " + score("cos") + " AS s FROM c ORDER BY " + score("cos") + " DESC", fn: "cos", leastFirst: true, to: 6},
		{sql: "SELECT TOP 8 c.id, VectorDistance(c.cos, " + queryVector + ", false, {'distanceFunction': 'euclidean'}) AS s FROM c ORDER BY VectorDistance(c.cos, " + queryVector + ", false, {'distanceFunction': 'euclidean'})", fn: "euc", to: 8},
	}
}

// checkVectorRows compares rows {"id", "s"} with the brute-force order and scores.
func checkVectorRows(t *testing.T, who string, rows []json.RawMessage, wantIDs []string, scores map[string]float64) {
	t.Helper()
	var got []string
	for _, r := range rows {
		var row struct {
			ID string  `json:"id"`
			S  float64 `json:"s"`
		}
		if err := json.Unmarshal(r, &row); err != nil {
			t.Fatalf("%s: a row that is not {id, s}: %s", who, r)
		}
		if math.Abs(row.S-scores[row.ID]) > 1e-9 {
			t.Errorf("%s: %s scores %v, brute force %v", who, row.ID, row.S, scores[row.ID])
		}
		got = append(got, row.ID)
	}
	if strings.Join(got, ",") != strings.Join(wantIDs, ",") {
		t.Errorf("%s:\n got %v\nwant %v", who, got, wantIDs)
	}
}

// ORDER BY VectorDistance across the emulator's 4 ranges: cosmosctl's pipeline (with
// pages of every size) and the official JavaScript SDK both return the ids a brute-force
// computation orders first, in its order, with its scores, for cosine, dot product and
// Euclidean, ASC (most similar first) and DESC, TOP and OFFSET … LIMIT.
func TestVectorSearchAcrossPartitionsAgainstTheEmulator(t *testing.T) {
	e := startEmulator(t)
	docs := e.loadVectors(t, 160)
	cases := vectorCases()
	var specs []cosmos.QuerySpec
	for _, c := range cases {
		specs = append(specs, cosmos.QuerySpec{Query: c.sql})
	}
	for _, c := range cases {
		ids, scores := bruteForce(docs, c.fn, c.leastFirst)
		want := ids[c.from:c.to]
		t.Run(c.sql, func(t *testing.T) {
			for _, pageSize := range []int{0, 1, 7} {
				o := Options{Client: e.c, Database: "db", Container: "v", Spec: cosmos.QuerySpec{Query: c.sql}, PageSize: pageSize}
				it, err := Run(context.Background(), o)
				if err != nil {
					t.Fatal(err)
				}
				rows, infos, err := drainAll(it)
				it.Close()
				if err != nil {
					t.Fatalf("page size %d: %v", pageSize, err)
				}
				checkVectorRows(t, fmt.Sprintf("query.Run, page size %d", pageSize), rows, want, scores)
				read := map[string]bool{}
				for _, in := range infos {
					if in.Kind == KindPage {
						read[in.RangeID] = true
					}
				}
				if len(read) != 4 {
					t.Fatalf("every one of the 4 ranges is read to its end: %v", read)
				}
			}
		})
	}
	results := jsQueryResultsIn(t, e, "v", specs)
	for i, c := range cases {
		ids, scores := bruteForce(docs, c.fn, c.leastFirst)
		if results[i].Error != "" {
			t.Errorf("the JavaScript SDK failed on %s: %s", c.sql, results[i].Error)
			continue
		}
		checkVectorRows(t, "the JavaScript SDK on "+c.sql, results[i].Resources, ids[c.from:c.to], scores)
	}
}

// Within one partition key the gateway runs ORDER BY VectorDistance whole, TOP or not.
func TestVectorSearchWithinAPartitionAgainstTheEmulator(t *testing.T) {
	e := startEmulator(t)
	docs := e.loadVectors(t, 120)
	var in []vdoc
	for _, d := range docs {
		if d.pk == "p5" {
			in = append(in, d)
		}
	}
	pk, _ := cosmos.PK("p5")
	for _, fn := range []string{"cos", "dot", "euc"} {
		sql := fmt.Sprintf("SELECT c.id, VectorDistance(c.%s, %s) AS s FROM c ORDER BY VectorDistance(c.%s, %s)", fn, queryVector, fn, queryVector)
		it, err := Run(context.Background(), Options{Client: e.c, Database: "db", Container: "v", Spec: cosmos.QuerySpec{Query: sql}, PartitionKey: pk, PageSize: 2})
		if err != nil {
			t.Fatal(err)
		}
		rows, _, err := drainAll(it)
		it.Close()
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		ids, scores := bruteForce(in, fn, false)
		checkVectorRows(t, fn+" within p5", rows, ids, scores)
	}
}

// What the pipeline refuses of a non-streaming ORDER BY, and why: no TOP, a TOP above
// the buffer, a continuation token; a run cut short by MaxItems returns that many rows
// and no token.
func TestVectorSearchLimitsAgainstTheEmulator(t *testing.T) {
	e := startEmulator(t)
	docs := e.loadVectors(t, 40)
	score := "VectorDistance(c.cos, " + queryVector + ")"
	run := func(sql string, o Options) ([]json.RawMessage, *Iterator, error) {
		o.Client, o.Database, o.Container, o.Spec = e.c, "db", "v", cosmos.QuerySpec{Query: sql}
		it, err := Run(context.Background(), o)
		if err != nil {
			return nil, nil, err
		}
		rows, _, err := drainAll(it)
		it.Close()
		return rows, it, err
	}
	for _, c := range []struct{ sql, want string }{
		{"SELECT c.id FROM c ORDER BY " + score, "needs TOP n or OFFSET … LIMIT"},
		{"SELECT TOP 50001 c.id FROM c ORDER BY " + score, "at most 50000"},
	} {
		_, _, err := run(c.sql, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--pk") {
			t.Errorf("%s: %v, want an error saying %q and naming --pk", c.sql, err, c.want)
		}
	}

	sql := "SELECT TOP 10 c.id, " + score + " AS s FROM c ORDER BY " + score
	rows, it, err := run(sql, Options{MaxItems: 3})
	if err != nil {
		t.Fatal(err)
	}
	ids, scores := bruteForce(docs, "cos", false)
	checkVectorRows(t, "MaxItems 3", rows, ids[:3], scores)
	if it.Continuation() != "" || !strings.Contains(it.Unresumable(), "cannot be resumed") {
		t.Errorf("a cut run: token %q, unresumable %q", it.Continuation(), it.Unresumable())
	}

	o := Options{Client: e.c, Database: "db", Container: "v", Spec: cosmos.QuerySpec{Query: sql}}
	tok, err := encodeToken(&token{Fingerprint: fingerprint(&o), Mode: "nonstreaming"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(sql, Options{Continuation: tok}); err == nil || !strings.Contains(err.Error(), "continuation tokens are not supported for a non-streaming ORDER BY") {
		t.Errorf("resuming: %v", err)
	}
}
