package jsondoc

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestVectorDistanceScoresMatchHandComputedValues(t *testing.T) {
	a, b := []float64{1, 2, 3}, []float64{4, 5, 6}
	// dot = 4+10+18 = 32; |a| = sqrt(14), |b| = sqrt(77); |a-b|² = 9+9+9 = 27.
	cases := []struct {
		name string
		fn   distanceFunction
		want float64
	}{
		{"cosine is the dot product over the norms", distanceCosine, 32 / (math.Sqrt(14) * math.Sqrt(77))},
		{"dot product", distanceDotProduct, 32},
		{"euclidean is the L2 distance", distanceEuclidean, math.Sqrt(27)},
	}
	for _, c := range cases {
		if got := c.fn.score(a, b); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if got := distanceCosine.score([]float64{1, 0}, []float64{0, 1}); got != 0 {
		t.Errorf("orthogonal cosine = %v, want 0", got)
	}
	if got := distanceCosine.score([]float64{1, 1}, []float64{-2, -2}); math.Abs(got+1) > 1e-12 {
		t.Errorf("opposite cosine = %v, want -1", got)
	}
}

func bindVector(t *testing.T, sql string, opts BindOptions) *Program {
	t.Helper()
	q, err := ParseQuery(sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	p, err := q.BindWith(nil, opts)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return p
}

func runVector(t *testing.T, sql string, opts BindOptions, docs []string) string {
	t.Helper()
	rows, err := bindVector(t, sql, opts).Run(docsOf(docs))
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return "[" + string(joinRows(rows)) + "]"
}

var vectorDocs = []string{
	`{"id":"a","v":[1,0]}`,
	`{"id":"b","v":[0,1]}`,
	`{"id":"c","v":[3,1]}`,
	`{"id":"d","v":[-1,-1]}`,
	`{"id":"e","v":[1,"x"]}`,
	`{"id":"f","v":[1,2,3]}`,
	`{"id":"g"}`,
	`{"id":"h","v":[[1,0],[0,1]]}`,
}

func policy(fn string) BindOptions {
	return BindOptions{VectorEmbeddings: []VectorEmbedding{{Path: "/v", DataType: "float32", DistanceFunction: fn, Dimensions: 2}}}
}

func TestVectorDistanceProjectsTheScoreOfThePolicysFunction(t *testing.T) {
	sql := `SELECT c.id, VectorDistance(c.v, [2, 0]) AS s FROM c`
	cases := []struct{ fn, want string }{
		{"cosine", `[{"id":"a","s":1},{"id":"b","s":0},{"id":"c","s":0.9486832980505138},{"id":"d","s":-0.7071067811865475},{"id":"e"},{"id":"f"},{"id":"g"},{"id":"h"}]`},
		{"dotproduct", `[{"id":"a","s":2},{"id":"b","s":0},{"id":"c","s":6},{"id":"d","s":-2},{"id":"e"},{"id":"f"},{"id":"g"},{"id":"h"}]`},
		{"euclidean", `[{"id":"a","s":1},{"id":"b","s":2.23606797749979},{"id":"c","s":1.4142135623730951},{"id":"d","s":3.1622776601683795},{"id":"e"},{"id":"f"},{"id":"g"},{"id":"h"}]`},
	}
	for _, c := range cases {
		if got := runVector(t, sql, policy(c.fn), vectorDocs); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.fn, got, c.want)
		}
	}
}

func TestVectorDistanceOptionsOverrideThePolicy(t *testing.T) {
	sql := `SELECT VALUE VectorDistance(c.v, [2, 0], false, {'distanceFunction': 'DotProduct'}) FROM c WHERE c.id = 'c'`
	if got := runVector(t, sql, policy("euclidean"), vectorDocs); got != `[6]` {
		t.Errorf("got %s, want the dot product [6]", got)
	}
	// The vector may come second (the .NET SDK's tests put the query vector first),
	// and an unquoted option key is an object literal too.
	sql = `SELECT VALUE VectorDistance([2, 0], c.v, true, {distanceFunction: 'euclidean'}) FROM c WHERE c.id = 'a'`
	if got := runVector(t, sql, BindOptions{}, vectorDocs); got != `[1]` {
		t.Errorf("got %s, want the euclidean distance [1]", got)
	}
	// Without a policy for the path and without an override: cosine.
	sql = `SELECT VALUE VectorDistance(c.v, [2, 0]) FROM c WHERE c.id = 'b'`
	if got := runVector(t, sql, BindOptions{}, vectorDocs); got != `[0]` {
		t.Errorf("got %s, want cosine [0]", got)
	}
}

// Undefined scores (e to h) sort as undefined ORDER BY values do: below every number,
// so last when the scores go from the highest down (a similarity), with ties in reverse
// creation order as the service's descending _rid tie-break.
func TestOrderByVectorDistanceSortsMostSimilarFirst(t *testing.T) {
	cases := []struct{ fn, order, want string }{
		{"cosine", "", `["a","c","b","d","h","g","f","e"]`},
		{"cosine", " ASC", `["a","c","b","d","h","g","f","e"]`},
		{"cosine", " DESC", `["e","f","g","h","d","b","c","a"]`},
		{"dotproduct", "", `["c","a","b","d","h","g","f","e"]`},
		{"euclidean", "", `["e","f","g","h","a","c","b","d"]`},
		{"euclidean", " DESC", `["d","b","c","a","h","g","f","e"]`},
	}
	for _, c := range cases {
		sql := `SELECT VALUE c.id FROM c ORDER BY VectorDistance(c.v, [2, 0])` + c.order
		if got := runVector(t, sql, policy(c.fn), vectorDocs); got != c.want {
			t.Errorf("%s%s:\n got %s\nwant %s", c.fn, c.order, got, c.want)
		}
	}
	sql := `SELECT TOP 2 VALUE c.id FROM c ORDER BY VectorDistance(c.v, [2, 0])`
	if got := runVector(t, sql, policy("euclidean"), vectorDocs[:4]); got != `["a","c"]` {
		t.Errorf("TOP 2 euclidean: got %s", got)
	}
}

func TestVectorDistancePlan(t *testing.T) {
	p := bindVector(t, `SELECT TOP 3 c.id, VectorDistance(c.v, [2, 0]) AS s FROM c ORDER BY VectorDistance(c.v, [2, 0])`, policy("cosine"))
	info, err := p.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if !info.HasNonStreamingOrderBy || info.OrderBy[0] != "Descending" || *info.Top != 3 {
		t.Errorf("cosine plan: nonStreaming %v orderBy %v top %v", info.HasNonStreamingOrderBy, info.OrderBy, *info.Top)
	}
	wantRewrite := "SELECT TOP 3 c._rid, [{\"item\": VectorDistance(c.v, [2, 0])}] AS orderByItems, {\"id\": c.id, \"s\": VectorDistance(c.v, [2, 0])} AS payload\nFROM c\nWHERE ({documentdb-formattableorderbyquery-filter})\nORDER BY VectorDistance(c.v, [2, 0])"
	if info.RewrittenQuery != wantRewrite {
		t.Errorf("rewritten query:\n got %q\nwant %q", info.RewrittenQuery, wantRewrite)
	}
	if f := strings.Join(p.Query().Features(), ","); !strings.Contains(f, "NonStreamingOrderBy") {
		t.Errorf("features %s lack NonStreamingOrderBy", f)
	}
	p = bindVector(t, `SELECT TOP 3 c.id FROM c ORDER BY VectorDistance(c.v, [2, 0])`, policy("euclidean"))
	if info, _ := p.Plan(); info.OrderBy[0] != "Ascending" {
		t.Errorf("euclidean plan orderBy %v, want Ascending", info.OrderBy)
	}
}

func TestVectorDistanceRefusals(t *testing.T) {
	for _, c := range []struct{ sql, want string }{
		{`SELECT VectorDistance(c.v) FROM c`, "takes 2 to 4 arguments"},
		{`SELECT VectorDistance(c.v, [1], true, 'cosine') FROM c`, "must be an object literal"},
		{`SELECT c.id FROM c ORDER BY VectorDistance(c.v, [1]), c.id`, "beside other ORDER BY items"},
	} {
		_, err := ParseQuery(c.sql)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.sql, err, c.want)
		}
	}
	if _, err := ParseQuery(`SELECT c.id FROM c ORDER BY VectorDistance(c.v, [1]), c.id`); !errors.Is(err, ErrUnsupported) {
		t.Errorf("mixed ORDER BY: %v, want ErrUnsupported", err)
	}
	for _, c := range []struct{ sql, want string }{
		{`SELECT VectorDistance(c.v, [1], false, {distanceFunction: 'manhattan'}) FROM c`, "cosine, dotproduct or euclidean"},
		{`SELECT VectorDistance(c.v, [1], false, {dataType: 'float64'}) FROM c`, "float32, float16, int8 or uint8"},
		{`SELECT VectorDistance(c.v, [1], false, {k: 1}) FROM c`, `no option "k"`},
	} {
		q, err := ParseQuery(c.sql)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		if _, err := q.BindWith(nil, BindOptions{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.sql, err, c.want)
		}
	}
}
