package query

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// jsCase is a query form run through both pipelines, query.Run and the official
// JavaScript SDK's.
type jsCase struct {
	sql    string
	params []cosmos.QueryParameter
	// pool, for TOP or OFFSET without ORDER BY (which items come back depends on the
	// order the ranges are read in): both must return as many distinct items, each among
	// pool's results.
	pool string
	// empty: the query matches nothing (otherwise an empty result is an error: the
	// comparison would say little).
	empty bool
}

// jsQuirks are the query forms the JavaScript SDK (@azure/cosmos, pinned in
// sdkcompat/js/package-lock.json) answers wrongly, so they are not compared; each is
// named with the reason.
var jsQuirks = map[string]string{
	"SELECT * FROM c ORDER BY c.k": "c.k is undefined, null, a boolean, a number or a string: " +
		"the SDK refuses to merge ranges whose ORDER BY values differ in type (\"unrecognizable type object\")",
	"SELECT DISTINCT VALUE c.n FROM c ORDER BY c.n": "c.n includes 0: the SDK's ordered DISTINCT drops falsy values",
	"SELECT DISTINCT VALUE c.k FROM c": "c.k includes 0, false and null: the SDK's unordered DISTINCT drops falsy values " +
		"(`if (item)` in UnorderedDistinctEndpointComponent); jsCases compares the form without them",
}

// jsCases are every form of emulatorCases and a few more (the forms of
// sdkcompat/js/compat.test.js over these documents).
func jsCases() []jsCase {
	var cases []jsCase
	for _, c := range emulatorCases() {
		jc := jsCase{sql: c.sql, params: c.params}
		if c.check == "some" {
			jc.pool = "SELECT * FROM c"
		}
		cases = append(cases, jc)
	}
	more := []string{
		"SELECT VALUE c.s FROM c ORDER BY c.x",
		"SELECT c.id FROM c ORDER BY c.s DESC, c.id",
		"SELECT TOP 10 c.id, c.x FROM c ORDER BY c.x, c.id",
		"SELECT c.id FROM c ORDER BY c.n OFFSET 33 LIMIT 20",
		"SELECT DISTINCT c.g FROM c",
		"SELECT DISTINCT VALUE c.k FROM c",
		"SELECT DISTINCT VALUE c.k FROM c WHERE IS_STRING(c.k) OR c.k = true OR c.k > 0",
		"SELECT DISTINCT VALUE c.g FROM c ORDER BY c.g DESC",
		"SELECT DISTINCT c.g, c.n FROM c WHERE c.n > 0 AND c.n < 3 ORDER BY c.g, c.n",
		"SELECT VALUE COUNT(c.k) FROM c",
		"SELECT VALUE MAX(c.x) FROM c WHERE c.g = 'g2'",
		"SELECT COUNT(1) AS n, MIN(c.s), MAX(c.s) FROM c WHERE c.g = 'g3'",
		"SELECT c.g, c.n, AVG(c.x) AS a, MIN(c.s) AS lo FROM c GROUP BY c.g, c.n",
		"SELECT VALUE c.g FROM c GROUP BY c.g",
		"SELECT c.id, UPPER(c.g) AS up, LENGTH(c.s) AS len, c.x * 2 + 1 AS calc, IS_DEFINED(c.k) AS hasK, " +
			"CONCAT(c.g, '-', c.s) AS gs, c.k ?? -1 AS kOr, {\"pair\": [c.n, c.x]} AS obj " +
			"FROM c WHERE c.x BETWEEN 10 AND 60 AND c.g IN ('g1', 'g4') AND STARTSWITH(c.s, 's1')",
		"SELECT c.id, c.k FROM c WHERE c.n < 3",
	}
	for _, sql := range more {
		cases = append(cases, jsCase{sql: sql})
	}
	return append(cases,
		jsCase{sql: "SELECT VALUE MIN(c.x) FROM c WHERE c.x > 1000", empty: true},
		jsCase{sql: "SELECT * FROM c WHERE c.n = 3 OFFSET 4 LIMIT 6", pool: "SELECT * FROM c WHERE c.n = 3"})
}

// skipOrFail skips a test whose official SDK is not installed, or fails it when
// COSMOS_SDKCOMPAT=required (.ci/run sets it after installing the SDKs), as the emulator's
// SDK compatibility tests do.
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("COSMOSCTL_SDKCOMPAT") == "required" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// jsQueryResults runs queries through sdkcompat/js/query-results.js against the
// emulator: each query's items, or its error.
func jsQueryResults(t *testing.T, e *emulatorQuery, specs []cosmos.QuerySpec) []jsResult {
	t.Helper()
	return jsQueryResultsIn(t, e, "c", specs)
}

// jsQueryResultsIn is jsQueryResults over another container of database db.
func jsQueryResultsIn(t *testing.T, e *emulatorQuery, container string, specs []cosmos.QuerySpec) []jsResult {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "sdkcompat", "js"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skipOrFail(t, "node is not installed: install Node.js, then `npm ci` in %s", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@azure", "cosmos")); err != nil {
		skipOrFail(t, "the JavaScript SDK is not installed: run `npm ci` in %s", dir)
	}
	type query struct {
		Query      string                  `json:"query"`
		Parameters []cosmos.QueryParameter `json:"parameters,omitempty"`
	}
	in := struct {
		Database  string  `json:"database"`
		Container string  `json:"container"`
		Queries   []query `json:"queries"`
	}{Database: "db", Container: container}
	for _, s := range specs {
		in.Queries = append(in.Queries, query{s.Query, s.Parameters})
	}
	body, _ := json.Marshal(in)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "query-results.js")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "COSMOS_ENDPOINT="+e.srv.Endpoint(), "COSMOS_KEY="+e.srv.Key())
	cmd.Stdin = bytes.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sdkcompat/js/query-results.js: %v\n%s", err, stderr.Bytes())
	}
	var res struct {
		Results []jsResult `json:"results"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Results) != len(specs) {
		t.Fatalf("sdkcompat/js/query-results.js printed %d results for %d queries (%v): %.300s", len(res.Results), len(specs), err, out)
	}
	return res.Results
}

type jsResult struct {
	Resources []json.RawMessage `json:"resources"`
	Error     string            `json:"error"`
}

// jsCanonical is an item as JSON with its object keys sorted and its numbers formatted
// one way (5 and 5.0 are the same number), without the system properties the emulator
// adds to stored documents.
func jsCanonical(t *testing.T, item json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(item, &v); err != nil {
		t.Fatalf("an item that is not JSON: %s", item)
	}
	if m, ok := v.(map[string]any); ok {
		for _, k := range []string{"_rid", "_self", "_etag", "_ts", "_attachments"} {
			delete(m, k)
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func jsCanonicalAll(t *testing.T, items []json.RawMessage) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = jsCanonical(t, it)
	}
	return out
}

// runEmulatorAll runs a query through query.Run to its end, in pages of pageSize items
// (0: the service's default).
func runEmulatorAll(t *testing.T, e *emulatorQuery, spec cosmos.QuerySpec, pageSize int) []json.RawMessage {
	t.Helper()
	o := e.options(sqlCase{sql: spec.Query, params: spec.Parameters}, Options{PageSize: pageSize})
	it, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	items, _, err := drainAll(it)
	if err != nil {
		t.Fatalf("query.Run: %v", err)
	}
	return items
}

// The official JavaScript SDK, which runs the query-plan pipeline itself, returns what
// query.Run does for every supported query form across the emulator's 4 ranges: with
// ORDER BY the same items in the same order (both break ties by range, in key order),
// otherwise the same items in any order.
func TestTheJavaScriptSDKAgreesWithRunAgainstTheEmulator(t *testing.T) {
	e := startEmulator(t)
	e.load(t, emulatorDocs(12, 300))
	cases := jsCases()
	var specs []cosmos.QuerySpec
	for _, c := range cases {
		specs = append(specs, cosmos.QuerySpec{Query: c.sql, Parameters: c.params})
		if c.pool != "" {
			specs = append(specs, cosmos.QuerySpec{Query: c.pool})
		}
	}
	results := jsQueryResults(t, e, specs)
	next := 0
	for _, c := range cases {
		js := results[next]
		next++
		var jsPool jsResult
		if c.pool != "" {
			jsPool = results[next]
			next++
		}
		t.Run(c.sql, func(t *testing.T) {
			if why, ok := jsQuirks[c.sql]; ok {
				t.Skipf("a known quirk of the JavaScript SDK: %s (the SDK: %d items, error %q)", why, len(js.Resources), js.Error)
			}
			if js.Error != "" || jsPool.Error != "" {
				t.Fatalf("the JavaScript SDK failed: %s%s", js.Error, jsPool.Error)
			}
			want := jsCanonicalAll(t, js.Resources)
			for _, pageSize := range []int{0, 7} {
				got := jsCanonicalAll(t, runEmulatorAll(t, e, cosmos.QuerySpec{Query: c.sql, Parameters: c.params}, pageSize))
				if (len(got) == 0) != c.empty {
					t.Fatalf("query.Run returns %d items", len(got))
				}
				compareWithJS(t, e, c, got, want, jsPool)
			}
		})
	}
}

// compareWithJS compares query.Run's items with the SDK's (both canonical): see
// TestTheJavaScriptSDKAgreesWithRunAgainstTheEmulator.
func compareWithJS(t *testing.T, e *emulatorQuery, c jsCase, got, want []string, jsPool jsResult) {
	t.Helper()
	switch {
	case c.pool != "":
		pool := jsCanonicalAll(t, runEmulatorAll(t, e, cosmos.QuerySpec{Query: c.pool}, 0))
		slices.Sort(pool)
		if p := jsCanonicalAll(t, jsPool.Resources); !slices.Equal(pool, sortedStrings(p)) {
			t.Fatalf("%s: query.Run returns %d items, the SDK %d", c.pool, len(pool), len(p))
		}
		if len(got) != len(want) {
			t.Fatalf("query.Run returns %d items, the SDK %d", len(got), len(want))
		}
		for side, items := range map[string][]string{"query.Run": got, "the SDK": want} {
			if len(slices.Compact(sortedStrings(items))) != len(items) {
				t.Fatalf("%s returns an item twice: %v", side, items)
			}
			for _, it := range items {
				if _, ok := slices.BinarySearch(pool, it); !ok {
					t.Fatalf("%s returns %s, which %s does not", side, it, c.pool)
				}
			}
		}
	case strings.Contains(c.sql, "ORDER BY"):
		if !slices.Equal(got, want) {
			t.Fatalf("query.Run and the SDK differ in order or items:\n%s", diffLines(got, want))
		}
	default:
		if !slices.Equal(sortedStrings(got), sortedStrings(want)) {
			t.Fatalf("query.Run and the SDK return different items:\n%s", diffLines(sortedStrings(got), sortedStrings(want)))
		}
	}
}

func sortedStrings(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// diffLines shows the first position where got and want differ, with their lengths.
func diffLines(got, want []string) string {
	for i := 0; i < len(got) || i < len(want); i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf("at item %d of %d (query.Run) and %d (the SDK):\n  query.Run: %s\n  the SDK:   %s", i, len(got), len(want), g, w)
		}
	}
	return ""
}
