package query

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// Across partitions, SELECT VALUE of a GROUP BY returns one value per defined group and
// nothing for the group of documents where the expression is undefined: the ranges' row
// for that group has no payload ({"groupByItems":[{}]}), which is no result, not a row
// to print. Resumed in runs of 7 it returns the same.
func TestGroupByValueOfAnUndefinedGroupIsNoResultAcrossPartitions(t *testing.T) {
	const n = 300
	c := startMixed(t, 11, n)
	var docs []map[string]any
	for _, raw := range testkit.MixedDocs(11, n) {
		var m map[string]any
		json.Unmarshal(raw, &m)
		docs = append(docs, m)
	}
	cases := []struct {
		sql  string
		eval func(d map[string]any) (any, bool)
	}{
		{"SELECT VALUE c.a FROM c GROUP BY c.a", func(d map[string]any) (any, bool) {
			v, ok := d["a"]
			return v, ok
		}},
		{"SELECT VALUE LOWER(c.a) FROM c GROUP BY LOWER(c.a)", func(d map[string]any) (any, bool) {
			s, ok := d["a"].(string)
			return strings.ToLower(s), ok
		}},
		{"SELECT VALUE c.a.k1 FROM c GROUP BY c.a.k1", func(d map[string]any) (any, bool) {
			m, ok := d["a"].(map[string]any)
			if !ok {
				return nil, false
			}
			v, ok := m["k1"]
			return v, ok
		}},
	}
	for _, tc := range cases {
		t.Run(tc.sql, func(t *testing.T) {
			want := map[string]bool{}
			undefined := false
			for _, d := range docs {
				v, ok := tc.eval(d)
				if !ok {
					undefined = true
					continue
				}
				raw, _ := json.Marshal(v)
				cv, _ := canonical(raw)
				want[string(cv)] = true
			}
			if !undefined {
				t.Fatal("the data has no document where the expression is undefined: the test cannot fail")
			}
			o := Options{Client: c, Database: "db", Container: "m", Spec: cosmos.QuerySpec{Query: tc.sql}}
			all, _ := runMixed(t, o)
			check := func(what string, got []json.RawMessage) {
				t.Helper()
				var g, w []string
				for _, it := range got {
					cv, err := canonical(it)
					if err != nil {
						t.Fatalf("%s: %s is not JSON", what, it)
					}
					g = append(g, string(cv))
				}
				for k := range want {
					w = append(w, k)
				}
				sort.Strings(g)
				sort.Strings(w)
				if strings.Join(g, "\n") != strings.Join(w, "\n") {
					t.Fatalf("%s: got %d groups\n%s\nwant %d\n%s", what, len(g), strings.Join(g, "\n"), len(w), strings.Join(w, "\n"))
				}
			}
			check("one run", all)
			var resumed []json.RawMessage
			tok := ""
			for runs := 0; ; runs++ {
				if runs > len(all) {
					t.Fatal("the runs never end")
				}
				ro := o
				ro.MaxItems, ro.Continuation = 7, tok
				items, next := runMixed(t, ro)
				resumed = append(resumed, items...)
				if tok = next; tok == "" {
					break
				}
			}
			check("runs of 7", resumed)
		})
	}
}

// A GROUP BY row without a payload is its group's undefined value: no result for a
// grouped value, an undefined partial for an aggregate, never the row itself.
func TestAGroupByRowWithoutPayloadIsUndefined(t *testing.T) {
	sum := "Sum"
	for _, c := range []struct {
		name string
		qi   *queryInfo
		rows []string
		want string
	}{
		{"grouped value", &queryInfo{HasSelectValue: true, GroupByExpressions: []string{"c.x"}},
			[]string{`{"groupByItems":[{}]}`, `{"groupByItems":[{"item":1}],"payload":1}`}, `[1]`},
		{"aggregate value", &queryInfo{HasSelectValue: true, GroupByExpressions: []string{"c.x"}, Aggregates: []string{"Sum"}},
			[]string{`{"groupByItems":[{}]}`, `{"groupByItems":[{"item":1}],"payload":[{"item":2}]}`}, `[2]`},
		{"named aggregate", &queryInfo{GroupByExpressions: []string{"c.x"}, AliasTypes: map[string]*string{"s": &sum}},
			[]string{`{"groupByItems":[{}]}`, `{"groupByItems":[{"item":1}],"payload":{"s":{"item":3}}}`}, `[{"s":3},{}]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newGrouper(c.qi)
			for _, r := range c.rows {
				if err := g.add(json.RawMessage(r)); err != nil {
					t.Fatalf("%s: %v", r, err)
				}
			}
			got, _ := json.Marshal(g.results())
			if string(got) != c.want {
				t.Fatalf("results %s, want %s", got, c.want)
			}
		})
	}
}
