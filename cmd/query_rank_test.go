package cmd

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestQueryOrderByRankWithinAPartitionKey: `query --pk` sends ORDER BY RANK to one
// partition key, where the service (and the emulator) ranks it whole; the order is
// the one worked out by hand in emulator/jsondoc/fulltext_score_test.go. The documents
// of another partition key do not enter the BM25 statistics.
func TestQueryOrderByRankWithinAPartitionKey(t *testing.T) {
	testAccount(t)
	for _, d := range []string{
		`{"id":"1","pk":"a","t":"the quick brown fox"}`,
		`{"id":"2","pk":"a","t":"The lazy dog sleeps all day"}`,
		`{"id":"3","pk":"a","t":"quick, QUICK fox"}`,
		`{"id":"4","pk":"a","x":"quick"}`,
		`{"id":"5","pk":"b","t":"quick dog quick dog quick dog"}`,
	} {
		if r := cosmosctl(t, d, "upsert", "-f", "-"); r.code != 0 {
			t.Fatalf("seeding %s: %+v", d, r)
		}
	}
	for _, tc := range []struct {
		sql  string
		args []string
		want []string
	}{
		{`SELECT VALUE c.id FROM c ORDER BY RANK FullTextScore(c.t, 'quick')`, nil, []string{"3", "1", "2", "4"}},
		{`SELECT TOP 3 VALUE c.id FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'quick'), FullTextScore(c.t, @w))`, []string{"--param", "@w=dog", "--page-size", "1"}, []string{"3", "2", "1"}},
	} {
		q, r := runQueryJSON(t, append([]string{tc.sql, "--pk", "a", "--all"}, tc.args...)...)
		if r.code != 0 || !q.Complete {
			t.Fatalf("%s: exit %d: %s", tc.sql, r.code, r.errOut)
		}
		var got []string
		for _, it := range q.Items {
			var id string
			_ = json.Unmarshal(it, &id)
			got = append(got, id)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.sql, got, tc.want)
		}
	}
	// Across partitions the service plans a hybrid search, which the pipeline runs as
	// the SDKs do: the statistics are the container's, so the corpus spread over four
	// partition keys ranks as the hand computation says.
	for _, d := range []string{
		`{"id":"c1","pk":"p1","t":"the quick brown fox"}`,
		`{"id":"c2","pk":"p2","t":"The lazy dog sleeps all day"}`,
		`{"id":"c3","pk":"p3","t":"quick, QUICK fox"}`,
		`{"id":"c4","pk":"p4","x":"quick"}`,
	} {
		if r := cosmosctl(t, d, "upsert", "-f", "-"); r.code != 0 {
			t.Fatalf("seeding %s: %+v", d, r)
		}
	}
	for _, tc := range []struct {
		sql  string
		want []string
	}{
		{`SELECT TOP 10 VALUE c.id FROM c WHERE STARTSWITH(c.id, "c") ORDER BY RANK FullTextScore(c.t, 'quick')`, []string{"c3", "c1", "c2", "c4"}},
		{`SELECT c.id FROM c WHERE STARTSWITH(c.id, "c") ORDER BY RANK RRF(FullTextScore(c.t, 'quick'), FullTextScore(c.t, 'dog')) OFFSET 1 LIMIT 2`, []string{"c2", "c1"}},
	} {
		q, r := runQueryJSON(t, tc.sql, "--all", "--page-size", "1")
		if r.code != 0 || !q.Complete {
			t.Fatalf("%s: exit %d: %s", tc.sql, r.code, r.errOut)
		}
		var got []string
		for _, it := range q.Items {
			var id string
			if json.Unmarshal(it, &id) != nil {
				var obj struct{ ID string }
				_ = json.Unmarshal(it, &obj)
				id = obj.ID
			}
			got = append(got, id)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.sql, got, tc.want)
		}
	}
	// A hybrid search ranks the whole result first: it has no continuation token.
	r := cosmosctl(t, "", "query", `SELECT TOP 10 VALUE c.id FROM c ORDER BY RANK FullTextScore(c.t, 'quick')`, "--max-items", "1")
	if !strings.Contains(r.errOut, "hybrid search") {
		t.Errorf("--max-items 1: exit %d, stderr %s", r.code, r.errOut)
	}
}
