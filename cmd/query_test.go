package cmd

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// queryResult is what the tests read of `query -o json`.
type queryResult struct {
	Items        []json.RawMessage `json:"items"`
	Complete     bool              `json:"complete"`
	Continuation *string           `json:"continuation"`
	Totals       struct {
		Items            int      `json:"items"`
		Pages            int      `json:"pages"`
		Requests         int      `json:"requests"`
		RequestCharge    float64  `json:"request_charge"`
		ContactedRegions []string `json:"contacted_regions"`
		DurationMs       *float64 `json:"duration_ms"`
		FirstItemMs      *float64 `json:"first_item_ms"`
	} `json:"totals"`
	Pages []struct {
		Kind          string   `json:"kind"`
		RangeID       string   `json:"range_id"`
		Items         int      `json:"items"`
		RequestCharge *float64 `json:"request_charge"`
		DurationMs    *float64 `json:"duration_ms"`
		WinningRegion string   `json:"winning_region"`
		Attempts      int      `json:"attempts"`
		Hedges        int      `json:"hedges"`
		Diagnostics   *struct {
			Operation string `json:"operation"`
		} `json:"diagnostics"`
	} `json:"pages"`
	Error *struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"error"`
}

func runQueryJSON(t *testing.T, args ...string) (queryResult, runResult) {
	t.Helper()
	r := cosmosctl(t, "", append([]string{"query"}, append(args, "-o", "json")...)...)
	var q queryResult
	if err := json.Unmarshal([]byte(r.out), &q); err != nil {
		t.Fatalf("query %v printed %q (%v); stderr %s", args, r.out, err, r.errOut)
	}
	return q, r
}

// normal is a JSON value decoded for comparison.
func normal(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func canon(t *testing.T, vals []any) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		b, _ := json.Marshal(v)
		out[i] = string(b)
	}
	sort.Strings(out)
	return out
}

// qcase is one query form and its in-memory evaluation.
type qcase struct {
	name   string
	sql    string
	params []string
	want   func(items []qitem) []any
	// check: "ordered" (the same values in the same order), "set" (in any order),
	// "some" (n distinct values among want's: TOP without ORDER BY).
	check string
	n     int
	// key compares only this property of the items (SELECT * items carry system
	// properties the evaluation does not know).
	key string
}

func sortedBy(items []qitem, less func(a, b qitem) bool) []qitem {
	out := slices.Clone(items)
	sort.SliceStable(out, func(i, j int) bool { return less(out[i], out[j]) })
	return out
}

func ids(items []qitem) []any {
	out := []any{}
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

func queryCases() []qcase {
	byN := func(a, b qitem) bool { return a.N < b.N }
	return []qcase{
		{name: "filter", sql: "SELECT * FROM c WHERE c.cat = 'red'", check: "set", key: "id",
			want: func(items []qitem) []any { return ids(where(items, func(i qitem) bool { return i.Cat == "red" })) }},
		{name: "projection with functions", sql: "SELECT c.id, UPPER(c.cat) AS up, c.n * 2 AS twice FROM c WHERE STARTSWITH(c.name, 'name-1')", check: "set",
			want: func(items []qitem) []any {
				out := []any{}
				for _, i := range where(items, func(i qitem) bool { return strings.HasPrefix(i.Name, "name-1") }) {
					out = append(out, map[string]any{"id": i.ID, "up": strings.ToUpper(i.Cat), "twice": i.N * 2})
				}
				return out
			}},
		{name: "an undefined property is left out of the projection", sql: "SELECT c.id, c.opt FROM c WHERE c.n < 9", check: "set",
			want: func(items []qitem) []any {
				out := []any{}
				for _, i := range where(items, func(i qitem) bool { return i.N < 9 }) {
					m := map[string]any{"id": i.ID}
					if i.Opt != nil {
						m["opt"] = *i.Opt
					}
					out = append(out, m)
				}
				return out
			}},
		{name: "BETWEEN and IN", sql: "SELECT VALUE c.id FROM c WHERE c.n BETWEEN 10 AND 60 AND c.cat IN ('red', 'blue')", check: "set",
			want: func(items []qitem) []any {
				return ids(where(items, func(i qitem) bool { return i.N >= 10 && i.N <= 60 && i.Cat != "green" }))
			}},
		{name: "ORDER BY descending", sql: "SELECT * FROM c ORDER BY c.n DESC", check: "ordered", key: "id",
			want: func(items []qitem) []any { return ids(sortedBy(items, func(a, b qitem) bool { return a.N > b.N })) }},
		{name: "ORDER BY two paths", sql: "SELECT c.id, c.rank FROM c ORDER BY c.rank ASC, c.n DESC", check: "ordered",
			want: func(items []qitem) []any {
				out := []any{}
				for _, i := range sortedBy(items, func(a, b qitem) bool { return a.Rank < b.Rank || a.Rank == b.Rank && a.N > b.N }) {
					out = append(out, map[string]any{"id": i.ID, "rank": i.Rank})
				}
				return out
			}},
		{name: "ORDER BY with parameters", sql: "SELECT * FROM c WHERE c.n >= @lo AND c.cat = @cat ORDER BY c.f DESC, c.n", params: []string{"@lo=40", "@cat=green"},
			check: "ordered", key: "id",
			want: func(items []qitem) []any {
				return ids(sortedBy(where(items, func(i qitem) bool { return i.N >= 40 && i.Cat == "green" }),
					func(a, b qitem) bool { return a.F > b.F || a.F == b.F && a.N < b.N }))
			}},
		{name: "SELECT VALUE ORDER BY", sql: "SELECT VALUE c.name FROM c ORDER BY c.n", check: "ordered",
			want: func(items []qitem) []any {
				out := []any{}
				for _, i := range sortedBy(items, byN) {
					out = append(out, i.Name)
				}
				return out
			}},
		{name: "TOP with ORDER BY", sql: "SELECT TOP 10 c.id FROM c ORDER BY c.name", check: "ordered", key: "id",
			want: func(items []qitem) []any {
				s := ids(sortedBy(items, func(a, b qitem) bool { return a.Name < b.Name }))
				return s[:min(10, len(s))]
			}},
		{name: "OFFSET LIMIT with ORDER BY", sql: "SELECT c.id FROM c ORDER BY c.n OFFSET 5 LIMIT 10", check: "ordered", key: "id",
			want: func(items []qitem) []any {
				s := ids(sortedBy(items, byN))
				return s[min(5, len(s)):min(15, len(s))]
			}},
		{name: "TOP without ORDER BY", sql: "SELECT TOP 7 * FROM c WHERE c.cat = 'red'", check: "some", n: 7, key: "id",
			want: func(items []qitem) []any { return ids(where(items, func(i qitem) bool { return i.Cat == "red" })) }},
		{name: "DISTINCT VALUE", sql: "SELECT DISTINCT VALUE c.cat FROM c", check: "set",
			want: func(items []qitem) []any { return distinct(items, func(i qitem) any { return i.Cat }) }},
		{name: "DISTINCT object", sql: "SELECT DISTINCT c.grp FROM c", check: "set",
			want: func(items []qitem) []any {
				return distinct(items, func(i qitem) any { return map[string]any{"grp": i.Grp} })
			}},
		{name: "DISTINCT with ORDER BY", sql: "SELECT DISTINCT VALUE c.grp FROM c ORDER BY c.grp DESC", check: "ordered",
			want: func(items []qitem) []any {
				return distinct(sortedBy(items, func(a, b qitem) bool { return a.Grp > b.Grp }), func(i qitem) any { return i.Grp })
			}},
		{name: "COUNT", sql: "SELECT VALUE COUNT(1) FROM c", check: "ordered",
			want: func(items []qitem) []any { return []any{len(items)} }},
		{name: "SUM", sql: "SELECT VALUE SUM(c.n) FROM c WHERE c.cat = 'blue'", check: "ordered",
			want: func(items []qitem) []any {
				s := 0
				for _, i := range where(items, func(i qitem) bool { return i.Cat == "blue" }) {
					s += i.N
				}
				return []any{s}
			}},
		{name: "MIN of strings", sql: "SELECT VALUE MIN(c.name) FROM c", check: "ordered",
			want: func(items []qitem) []any {
				return []any{sortedBy(items, func(a, b qitem) bool { return a.Name < b.Name })[0].Name}
			}},
		{name: "AVG", sql: "SELECT VALUE AVG(c.f) FROM c", check: "ordered",
			want: func(items []qitem) []any {
				s := 0.0
				for _, i := range items {
					s += i.F
				}
				return []any{s / float64(len(items))}
			}},
		{name: "MIN over nothing is no row", sql: "SELECT VALUE MIN(c.n) FROM c WHERE c.n > 100000", check: "ordered",
			want: func([]qitem) []any { return []any{} }},
		{name: "aggregates with aliases", sql: "SELECT COUNT(1) AS n, SUM(c.n) AS total, MIN(c.name) AS first, MAX(c.f) AS high FROM c WHERE c.cat = 'blue'", check: "ordered",
			want: func(items []qitem) []any {
				blue := where(items, func(i qitem) bool { return i.Cat == "blue" })
				total, top := 0, 0.0
				for _, i := range blue {
					total += i.N
					top = max(top, i.F)
				}
				return []any{map[string]any{"n": len(blue), "total": total, "first": sortedBy(blue, func(a, b qitem) bool { return a.Name < b.Name })[0].Name, "high": top}}
			}},
		{name: "GROUP BY", sql: "SELECT c.grp, COUNT(1) AS n, SUM(c.n) AS total FROM c GROUP BY c.grp", check: "set",
			want: func(items []qitem) []any {
				type agg struct{ n, total int }
				groups := map[string]*agg{}
				for _, i := range items {
					if groups[i.Grp] == nil {
						groups[i.Grp] = &agg{}
					}
					groups[i.Grp].n++
					groups[i.Grp].total += i.N
				}
				out := []any{}
				for g, a := range groups {
					out = append(out, map[string]any{"grp": g, "n": a.n, "total": a.total})
				}
				return out
			}},
		{name: "VALUE GROUP BY", sql: "SELECT VALUE COUNT(1) FROM c GROUP BY c.cat", check: "set",
			want: func(items []qitem) []any {
				n := map[string]int{}
				for _, i := range items {
					n[i.Cat]++
				}
				out := []any{}
				for _, v := range n {
					out = append(out, v)
				}
				return out
			}},
	}
}

func distinct(items []qitem, of func(qitem) any) []any {
	out := []any{}
	seen := map[string]bool{}
	for _, i := range items {
		v := of(i)
		b, _ := json.Marshal(v)
		if !seen[string(b)] {
			seen[string(b)] = true
			out = append(out, v)
		}
	}
	return out
}

// values are the query's items as the case compares them.
func (c qcase) values(t *testing.T, items []json.RawMessage) []any {
	t.Helper()
	out := []any{}
	for _, raw := range items {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s: an item is not JSON: %s", c.name, raw)
		}
		if c.key != "" {
			m, _ := v.(map[string]any)
			v = m[c.key]
		}
		out = append(out, v)
	}
	return out
}

func (c qcase) compare(t *testing.T, label string, got []any, items []qitem) {
	t.Helper()
	want := normal(t, c.want(items)).([]any)
	got = normal(t, got).([]any)
	switch c.check {
	case "ordered":
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %s\n got  %v\n want %v", label, c.sql, got, want)
		}
	case "set":
		if g, w := canon(t, got), canon(t, want); !reflect.DeepEqual(g, w) {
			t.Fatalf("%s: %s\n got  %v\n want %v", label, c.sql, g, w)
		}
	case "some":
		pool := map[string]bool{}
		for _, s := range canon(t, want) {
			pool[s] = true
		}
		g := canon(t, got)
		if len(g) != min(c.n, len(want)) || len(slices.Compact(slices.Clone(g))) != len(g) {
			t.Fatalf("%s: %s: want %d distinct items, got %v", label, c.sql, c.n, g)
		}
		for _, s := range g {
			if !pool[s] {
				t.Fatalf("%s: %s: %s is not a result of the query", label, c.sql, s)
			}
		}
	}
}

// TestQueryFormsMatchAnInMemoryEvaluation runs every supported query form through
// `cosmosctl query --all` across the four ranges and within one partition key, with the
// service's page size and with small pages, and compares the items with a
// straightforward evaluation of the same query over the same data.
func TestQueryFormsMatchAnInMemoryEvaluation(t *testing.T) {
	items := makeQueryItems(queryTestItems)
	queryAccount(t, items)
	p3 := where(items, func(i qitem) bool { return i.PK == "p3" })
	for _, c := range queryCases() {
		t.Run(c.name, func(t *testing.T) {
			params := []string{}
			for _, p := range c.params {
				params = append(params, "--param", p)
			}
			for _, run := range []struct {
				label string
				args  []string
				items []qitem
			}{
				{"across partitions", nil, items},
				{"across partitions, pages of 3", []string{"--page-size", "3"}, items},
				{"within partition key p3", []string{"--pk", "p3"}, p3},
				{"within partition key p3, pages of 2", []string{"--pk", "p3", "--page-size", "2"}, p3},
			} {
				q, r := runQueryJSON(t, append(append([]string{c.sql, "--all"}, params...), run.args...)...)
				if r.code != 0 || !q.Complete || q.Continuation != nil {
					t.Fatalf("%s: exit %d, complete %v: %s", run.label, r.code, q.Complete, r.errOut)
				}
				c.compare(t, run.label, c.values(t, q.Items), run.items)
				if q.Totals.Items != len(q.Items) {
					t.Fatalf("%s: totals say %d items, %d printed", run.label, q.Totals.Items, len(q.Items))
				}
			}
		})
	}
}

// resumeToken is the continuation a table or ndjson run printed on stderr ("" if none).
func resumeToken(t *testing.T, errOut string) string {
	t.Helper()
	_, rest, ok := strings.Cut(errOut, "resume with --continuation ")
	if !ok {
		return ""
	}
	tok, _, _ := strings.Cut(rest, ",")
	tok, _, _ = strings.Cut(tok, "\n")
	return strings.TrimSpace(tok)
}

// TestQueryContinuationResumesWithEveryItemOnce reads each query form in runs of
// --max-items 7, each resuming from the continuation the one before printed (from the
// JSON object, or from stderr with -o ndjson), and checks that together they are the
// whole query: every item once, in order where the query has one.
func TestQueryContinuationResumesWithEveryItemOnce(t *testing.T) {
	items := makeQueryItems(queryTestItems)
	queryAccount(t, items)
	for _, tc := range []struct {
		name    string
		args    []string
		ordered bool
		ndjson  bool
	}{
		{"parallel across partitions", []string{"SELECT * FROM c WHERE c.rank < 5"}, false, true},
		{"ORDER BY", []string{"SELECT c.id, c.name FROM c ORDER BY c.name DESC"}, true, true},
		{"ORDER BY on a value with ties", []string{"SELECT c.id, c.rank FROM c ORDER BY c.rank"}, false, false},
		{"OFFSET LIMIT", []string{"SELECT c.id FROM c ORDER BY c.n OFFSET 5 LIMIT 30"}, true, false},
		{"TOP", []string{"SELECT TOP 25 c.id FROM c ORDER BY c.n DESC"}, true, true},
		{"DISTINCT", []string{"SELECT DISTINCT VALUE c.name FROM c WHERE c.rank < 5"}, false, false},
		{"GROUP BY", []string{"SELECT c.pk, COUNT(1) AS n FROM c GROUP BY c.pk"}, false, false},
		{"within a partition key", []string{"SELECT * FROM c WHERE c.n > @n", "--param", "@n=10", "--pk", "p3"}, true, true},
		{"within a partition key, ORDER BY", []string{"SELECT c.id FROM c ORDER BY c.name", "--pk", "p4", "--page-size", "3"}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			whole, r := runQueryJSON(t, append(tc.args, "--all")...)
			if r.code != 0 || !whole.Complete {
				t.Fatalf("--all: exit %d: %s", r.code, r.errOut)
			}
			var got []json.RawMessage
			token, runs := "", 0
			for {
				runs++
				if runs > len(whole.Items)+2 {
					t.Fatalf("%d runs for %d items: the continuation does not advance", runs, len(whole.Items))
				}
				args := append(slices.Clone(tc.args), "--max-items", "7")
				if token != "" {
					args = append(args, "--continuation", token)
				}
				if tc.ndjson {
					r := cosmosctl(t, "", append(append([]string{"query"}, args...), "-o", "ndjson")...)
					if r.code != 0 {
						t.Fatalf("run %d: exit %d: %s", runs, r.code, r.errOut)
					}
					for line := range strings.Lines(r.out) {
						got = append(got, json.RawMessage(strings.TrimSpace(line)))
					}
					if token = resumeToken(t, r.errOut); token == "" {
						break
					}
					continue
				}
				q, r := runQueryJSON(t, args...)
				if r.code != 0 || len(q.Items) > 7 {
					t.Fatalf("run %d: exit %d, %d items: %s", runs, r.code, len(q.Items), r.errOut)
				}
				got = append(got, q.Items...)
				if q.Complete {
					break
				}
				if q.Continuation == nil {
					t.Fatalf("run %d: not complete and no continuation", runs)
				}
				token = *q.Continuation
			}
			if minRuns := (len(whole.Items) + 6) / 7; runs < minRuns {
				t.Fatalf("%d items in %d runs of at most 7", len(whole.Items), runs)
			}
			g, w := canonRaw(t, got), canonRaw(t, whole.Items)
			if tc.ordered {
				if !reflect.DeepEqual(normal(t, got), normal(t, whole.Items)) {
					t.Fatalf("resumed runs differ from --all:\n got  %s\n want %s", got, whole.Items)
				}
			}
			sort.Strings(g)
			sort.Strings(w)
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("resumed runs (%d items) are not the items of --all (%d):\n got  %v\n want %v", len(g), len(w), g, w)
			}
		})
	}
}

func canonRaw(t *testing.T, items []json.RawMessage) []string {
	t.Helper()
	vals := make([]any, len(items))
	for i, it := range items {
		if err := json.Unmarshal(it, &vals[i]); err != nil {
			t.Fatalf("item %q: %v", it, err)
		}
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		b, _ := json.Marshal(v)
		out[i] = string(b)
	}
	return out
}

// TestQuerySurvivesASickFirstRegion: the incident path. Whatever is wrong with the first
// region during a cross-partition ORDER BY, the query completes from the others, every
// page bounded by the attempt timeout or a hedge, with the same items in the same order.
func TestQuerySurvivesASickFirstRegion(t *testing.T) {
	items := makeQueryItems(queryTestItems)
	want := ids(sortedBy(items, func(a, b qitem) bool { return a.N < b.N }))
	hedged := []string{"--hedge-threshold", "50ms", "--attempt-timeout", "500ms"}
	for _, tc := range []struct {
		name string
		rule faults.Rule
		args []string
		// avoid says no page may be answered by the sick region.
		avoid bool
		// hedges says some page must have been hedged.
		hedges bool
	}{
		{"hung, hedged", faults.Rule{Region: "East US", Operations: []string{faults.GroupReads}, Effect: faults.EffectHang}, hedged, true, true},
		{"hung, not hedged: the attempt timeout fails pages over", faults.Rule{Region: "East US", Operations: []string{faults.GroupReads}, Effect: faults.EffectHang},
			[]string{"--attempt-timeout", "300ms"}, true, false},
		{"refusing connections", faults.Rule{Region: "East US", Effect: faults.EffectRefuse}, hedged, true, false},
		{"throttling", faults.Rule{Region: "East US", Operations: []string{faults.GroupReads}, Effect: faults.EffectStatus, Status: 429,
			RetryAfter: faults.Duration(20 * time.Millisecond)}, hedged, false, false},
		{"slow", faults.Rule{Region: "East US", Operations: []string{faults.GroupReads}, Effect: faults.EffectDelay,
			Delay: faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(2 * time.Second)}}, hedged, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := queryAccount(t, items)
			// A command before the incident saves the account's topology, as an
			// operator's earlier commands did: with the write region refusing, the
			// global endpoint (its alias) cannot be asked.
			if r := cosmosctl(t, "", "query", "SELECT VALUE COUNT(1) FROM c"); r.code != 0 {
				t.Fatalf("before the fault: %+v", r)
			}
			if _, err := srv.AddFault(tc.rule); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			q, r := runQueryJSON(t, append([]string{"SELECT c.id FROM c ORDER BY c.n", "--page-size", "20", "--all"}, tc.args...)...)
			elapsed := time.Since(start)
			if r.code != 0 || !q.Complete {
				t.Fatalf("exit %d: %s\n%s", r.code, r.errOut, r.out)
			}
			got := (qcase{key: "id"}).values(t, q.Items)
			if !reflect.DeepEqual(normal(t, got), normal(t, want)) {
				t.Fatalf("items differ from the in-memory ORDER BY:\n got  %v\n want %v", got, want)
			}
			hedges := 0
			for _, p := range q.Pages {
				hedges += p.Hedges
				if tc.avoid && p.Kind == "page" && p.WinningRegion == "East US" {
					t.Fatalf("a page was answered by the sick region: %+v", p)
				}
			}
			if tc.hedges && hedges == 0 {
				t.Fatal("no page was hedged")
			}
			// Generous: pages of at most an attempt timeout or a hedge each, in
			// parallel over four ranges, on a loaded machine.
			if elapsed > 30*time.Second {
				t.Fatalf("took %s", elapsed)
			}
		})
	}
}
