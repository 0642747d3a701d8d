package query

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/engine"
)

// JOIN, EXISTS, ARRAY(SELECT …), GROUP BY and DISTINCT over joined rows, and SELECT
// without FROM, across the emulator's 4 ranges through this package's pipeline: each
// answer is the test's own computation from the documents, in pages of every size.
func TestJoinsAndSubqueriesAcrossRangesAgainstTheEmulator(t *testing.T) {
	e := startEmulator(t)
	type jdoc struct {
		id   string
		k    int
		tags []string
	}
	var docs []jdoc
	for i := 0; i < 60; i++ {
		d := jdoc{id: fmt.Sprintf("d%02d", i), k: i % 7}
		for j := 0; j < i%4; j++ {
			d.tags = append(d.tags, fmt.Sprintf("t%d", j))
		}
		docs = append(docs, d)
		body, _ := json.Marshal(map[string]any{"id": d.id, "pk": fmt.Sprintf("p%d", i%13), "k": d.k, "tags": d.tags})
		if _, err := e.c.Execute(context.Background(), engine.Operation{Kind: engine.OpCreate, Database: "db", Container: "c", Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	byID := slices.Clone(docs)
	slices.SortFunc(byID, func(a, b jdoc) int { return strings.Compare(a.id, b.id) })

	var pairs, ordered []string
	count, counts := 0, map[string]int{}
	var withT2 []string
	for _, d := range docs {
		for _, tg := range d.tags {
			pairs = append(pairs, js(map[string]any{"id": d.id, "tag": tg}))
			counts[tg]++
			if tg != "t0" {
				count++
			}
			if tg == "t2" {
				withT2 = append(withT2, js(d.id))
			}
		}
	}
	for _, d := range byID {
		for _, tg := range d.tags {
			ordered = append(ordered, js(tg))
		}
	}
	var groups []string
	for tg, n := range counts {
		groups = append(groups, js(map[string]any{"tag": tg, "n": n}))
	}
	tests := []struct {
		sql     string
		inOrder bool
		want    []string
	}{
		{"SELECT c.id, t AS tag FROM c JOIN t IN c.tags", false, pairs},
		{`SELECT VALUE COUNT(1) FROM c JOIN t IN c.tags WHERE t != "t0"`, true, []string{js(count)}},
		{"SELECT DISTINCT VALUE t FROM c JOIN t IN c.tags", false, []string{`"t0"`, `"t1"`, `"t2"`}},
		{"SELECT VALUE t FROM c JOIN t IN c.tags ORDER BY c.id", true, ordered},
		{"SELECT TOP 5 VALUE t FROM c JOIN t IN c.tags ORDER BY c.id", true, ordered[:5]},
		{`SELECT VALUE c.id FROM c WHERE EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t = "t2")`, false, withT2},
		{"SELECT t AS tag, COUNT(1) AS n FROM c JOIN t IN c.tags GROUP BY t", false, groups},
		{"SELECT 1 AS a", true, []string{`{"a":1}`}},
	}
	for _, tt := range tests {
		for _, size := range []int{0, 1, 4} {
			t.Run(fmt.Sprintf("%s/pages of %d", tt.sql, size), func(t *testing.T) {
				items, _, _ := runEmulator(t, e.options(sqlCase{sql: tt.sql}, Options{PageSize: size}))
				var got []string
				for _, it := range items {
					var v any
					if err := json.Unmarshal(it, &v); err != nil {
						t.Fatal(err)
					}
					got = append(got, js(v))
				}
				want := slices.Clone(tt.want)
				if !tt.inOrder {
					slices.Sort(got)
					slices.Sort(want)
				}
				if !slices.Equal(got, want) {
					t.Errorf("got %d rows %v\nwant %d rows %v", len(got), got, len(want), want)
				}
			})
		}
	}
}
