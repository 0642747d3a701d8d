package cmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/query"
)

func TestQueryBadInputIsOneLineAndExitCode2(t *testing.T) {
	items := makeQueryItems(30)
	queryAccount(t, items)
	q, r := runQueryJSON(t, "SELECT * FROM c", "--max-items", "2")
	if r.code != 0 || q.Continuation == nil {
		t.Fatalf("a token to misuse: %+v", r)
	}
	otherToken := *q.Continuation
	for _, tc := range []struct {
		name string
		args []string
		msg  string
	}{
		{"no query", []string{"query"}, "the SQL text"},
		{"empty query", []string{"query", "  "}, "empty"},
		{"bad SQL is the service's 400", []string{"query", "SELECT * FORM c"}, "400 BadRequest"},
		{"bad SQL in one partition, with no resume advice", []string{"query", "SELECT * FORM c", "--pk", "p1"}, "400 BadRequest"},
		{"a parameter without @", []string{"query", "SELECT * FROM c", "--param", "x=1"}, "--param"},
		{"a parameter without a value", []string{"query", "SELECT * FROM c", "--param", "@x"}, "no value"},
		{"a parameter given twice", []string{"query", "SELECT * FROM c WHERE c.n = @n", "--param", "@n=1", "--param", "@n=2"}, "twice"},
		{"negative page size", []string{"query", "SELECT * FROM c", "--page-size", "-1"}, "--page-size must be between 1 and 1000"},
		{"page size too large", []string{"query", "SELECT * FROM c", "--page-size", "5000"}, "--page-size"},
		{"zero max items", []string{"query", "SELECT * FROM c", "--max-items", "0"}, "--max-items must be at least 1"},
		{"--all and --max-items", []string{"query", "SELECT * FROM c", "--all", "--max-items", "5"}, "--all"},
		{"negative timeout", []string{"query", "SELECT * FROM c", "--timeout", "-1s"}, "--timeout"},
		{"no parallelism", []string{"query", "SELECT * FROM c", "--parallelism", "0"}, "--parallelism"},
		{"an object as partition key", []string{"query", "SELECT * FROM c", "--pk", `{"a":1}`}, "not an object"},
		{"unknown region", []string{"query", "SELECT * FROM c", "--region", "Moon Base"}, "East US"},
		{"unknown excluded region", []string{"query", "SELECT * FROM c", "--exclude", "Moon Base"}, "East US"},
		{"bad output", []string{"query", "SELECT * FROM c", "-o", "yaml"}, "table, json, ndjson or tsv"},
		{"a token that is not one", []string{"query", "SELECT * FROM c", "--continuation", "nonsense"}, "continuation token"},
		{"a token of another query", []string{"query", "SELECT c.id FROM c", "--continuation", otherToken}, "another query"},
		{"ndjson on a command that prints one result", []string{"read", "x", "--pk", "p", "-o", "ndjson"}, "-o json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cosmosctl(t, "", tc.args...)
			if r.code != ExitUsage || !strings.Contains(r.errOut, tc.msg) {
				t.Fatalf("exit %d, stderr %q; want %d mentioning %q", r.code, r.errOut, ExitUsage, tc.msg)
			}
			if lines := strings.Count(strings.TrimSpace(r.errOut), "\n"); lines != 0 || strings.Contains(r.errOut, "goroutine") {
				t.Fatalf("bad input must get one line, got %q", r.errOut)
			}
		})
	}
}

func TestQueryUnsupportedFeatureIsAUsageError(t *testing.T) {
	err := queryError(&query.UnsupportedError{Feature: "hybrid search (hybridSearchQueryInfo)"})
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "hybrid search") || !strings.Contains(err.Error(), "--pk") {
		t.Fatalf("exit %d: %v", ExitCode(err), err)
	}
}

// TestNDJSONFromTheEnvironmentIsJSONForOtherCommands: a profile or COSMOSCTL_OUTPUT of
// ndjson serves every command; those that print one result print their JSON.
func TestNDJSONFromTheEnvironmentIsJSONForOtherCommands(t *testing.T) {
	queryAccount(t, makeQueryItems(5))
	t.Setenv("COSMOSCTL_OUTPUT", "ndjson")
	r := cosmosctl(t, "", "read", "q001", "--pk", "p1")
	var res struct {
		StatusCode int             `json:"status_code"`
		Item       json.RawMessage `json:"item"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.out), &res) != nil || res.StatusCode != 200 {
		t.Fatalf("read with COSMOSCTL_OUTPUT=ndjson: exit %d: %s %s", r.code, r.out, r.errOut)
	}
	r = cosmosctl(t, "", "query", "SELECT c.id FROM c WHERE c.pk = 'p1'")
	if r.code != 0 || strings.TrimSpace(r.out) != `{"id":"q001"}` {
		t.Fatalf("query with COSMOSCTL_OUTPUT=ndjson: exit %d: %q %s", r.code, r.out, r.errOut)
	}
}

func TestQueryTableMatchesGoldenFiles(t *testing.T) {
	queryAccount(t, makeQueryItems(queryTestItems))
	for _, tc := range []struct{ name, sql string }{
		{"query_table", "SELECT c.id, c.cat, c.n, c.opt, c.name FROM c WHERE c.pk = 'p3' ORDER BY c.n"},
		{"query_table_value", "SELECT VALUE c.name FROM c WHERE c.pk = 'p3' ORDER BY c.n"},
		{"query_table_objects", "SELECT c.id, {\"n\": c.n, \"tags\": [c.cat, c.grp], \"note\": \"two\\nlines\"} AS obj, c.f, \"\" AS empty FROM c WHERE c.pk = 'p3' ORDER BY c.n"},
		{"query_table_groups", "SELECT c.grp, COUNT(1) AS n, MAX(c.name) AS last FROM c GROUP BY c.grp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cosmosctl(t, "", "query", tc.sql)
			if r.code != 0 || r.errOut != "" {
				t.Fatalf("exit %d: %s", r.code, r.errOut)
			}
			out := r.out
			if tc.name == "query_table_groups" {
				out = sortedTableRows(out)
			}
			compareGolden(t, "testdata/"+tc.name+".golden", out)
		})
	}
}

// sortedTableRows sorts a table's rows under its header (GROUP BY has no order).
func sortedTableRows(table string) string {
	lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
	rows := sortedCopy(lines[1:])
	return strings.Join(append(lines[:1], rows...), "\n") + "\n"
}

// TestQueryTableFitsTheTerminal: on a terminal no line is wider than it, long values
// are cut, and a footnote names the columns left out; piped, everything is there.
func TestQueryTableFitsTheTerminal(t *testing.T) {
	queryAccount(t, makeQueryItems(queryTestItems))
	t.Setenv("NO_COLOR", "1")
	sql := "SELECT * FROM c WHERE c.pk = 'p3' ORDER BY c.n"
	for _, width := range []int{40, 80, 120} {
		streams, out, errOut := testIO()
		streams.OutTTY, streams.OutWidth = true, width
		if code := Run(context.Background(), streams, []string{"query", sql}); code != 0 {
			t.Fatalf("width %d: exit %d: %s", width, code, errOut.String())
		}
		lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
		for _, l := range lines {
			if w := ansi.StringWidth(l); w > width {
				t.Fatalf("width %d: a line of %d: %q", width, w, l)
			}
		}
		if note := strings.Join(lines, " "); !strings.HasPrefix(lines[0], "cat") || !strings.Contains(note, "columns hidden: ") || !strings.Contains(note, "_etag") {
			t.Fatalf("width %d: want the columns first seen, system properties left out and named:\n%s", width, out.String())
		}
	}
	r := cosmosctl(t, "", "query", sql)
	if !strings.Contains(r.out, "_etag") || strings.Contains(r.out, "hidden") {
		t.Fatalf("piped, every column is there:\n%s", r.out)
	}
}

// TestQueryJSONHasTheItemsTheTotalsAndEveryRequest: -o json is one object with stable
// field names, units in them, and the diagnostics of every request.
func TestQueryJSONHasTheItemsTheTotalsAndEveryRequest(t *testing.T) {
	queryAccount(t, makeQueryItems(queryTestItems))
	q, r := runQueryJSON(t, "SELECT c.id FROM c ORDER BY c.n", "--page-size", "10", "--max-items", "25")
	if r.code != 0 || len(q.Items) != 25 || q.Complete || q.Continuation == nil {
		t.Fatalf("exit %d, %d items: %s", r.code, len(q.Items), r.errOut)
	}
	tot := q.Totals
	if tot.Items != 25 || tot.Pages < 4 || tot.Requests < tot.Pages+2 || tot.RequestCharge <= 0 || tot.DurationMs == nil || tot.FirstItemMs == nil ||
		len(tot.ContactedRegions) == 0 {
		t.Fatalf("totals %+v", tot)
	}
	kinds := map[string]int{}
	charge := 0.0
	for _, p := range q.Pages {
		kinds[p.Kind]++
		if p.DurationMs == nil || p.RequestCharge == nil || p.Diagnostics == nil || p.Attempts < 1 {
			t.Fatalf("page %+v", p)
		}
		if p.Kind == "page" && (p.RangeID == "" || p.Diagnostics.Operation != "query") {
			t.Fatalf("page without its range or operation: %+v", p)
		}
		charge += *p.RequestCharge
	}
	if kinds["query-plan"] != 1 || kinds["pkranges"] != 1 || kinds["page"] != tot.Pages {
		t.Fatalf("requests by kind %v, totals %+v", kinds, tot)
	}
	if d := charge - tot.RequestCharge; d > 1e-6 || d < -1e-6 {
		t.Fatalf("the pages' charges add to %g, the total is %g", charge, tot.RequestCharge)
	}
	// Within a partition key there is no plan and no range read: one page.
	q, r = runQueryJSON(t, "SELECT * FROM c", "--pk", "p3")
	if r.code != 0 || !q.Complete || q.Continuation != nil || len(q.Pages) != 1 || q.Pages[0].Kind != "page" {
		t.Fatalf("within a partition key: %+v %s", q.Pages, r.errOut)
	}
}

// TestQueryDiagnosticsShowEveryRequestAndTheTotals: --diagnostics prints a row per
// request and the totals; a terminal without it gets one line of totals.
func TestQueryDiagnosticsShowEveryRequestAndTheTotals(t *testing.T) {
	queryAccount(t, makeQueryItems(queryTestItems))
	r := cosmosctl(t, "", "query", "SELECT c.id FROM c ORDER BY c.n", "--page-size", "50", "--hedge-threshold", "1s", "--diagnostics")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	for _, want := range []string{"across partitions (4 partition key ranges read)", "threshold=1s", "(each page)",
		"REQUEST", "RANGE", "REGIONS", "WINNER", "ATTEMPTS", "HEDGES", "query-plan", "pkranges", "page", "East US",
		"items              100, the first after", "request charge", "RU total", "contacted regions  East US",
		"cosmosctl: more results: resume with --continuation cq1."} {
		if !strings.Contains(r.errOut, want) {
			t.Fatalf("the diagnostics lack %q:\n%s", want, r.errOut)
		}
	}
	streams, _, errOut := testIO()
	streams.ErrTTY = true
	t.Setenv("NO_COLOR", "1")
	if code := Run(context.Background(), streams, []string{"query", "SELECT VALUE COUNT(1) FROM c"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if got := errOut.String(); !strings.HasPrefix(got, "1 item, 4 pages, ") || !strings.Contains(got, " RU from East US in ") || strings.Count(got, "\n") != 1 {
		t.Fatalf("a terminal gets one line of totals, got %q", got)
	}
}

// TestQueryTimeouts: --e2e-timeout bounds each page and --timeout the whole query;
// either way the exit is 6 and what was read is kept with its continuation.
func TestQueryTimeouts(t *testing.T) {
	srv := queryAccount(t, makeQueryItems(queryTestItems))
	if r := cosmosctl(t, "", "query", "SELECT VALUE COUNT(1) FROM c"); r.code != 0 {
		t.Fatalf("before the fault: %+v", r)
	}
	if _, err := srv.AddFault(faults.Rule{Operations: []string{faults.OpQuery}, Effect: faults.EffectHang}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		msg  string
	}{
		{"each page", []string{"--e2e-timeout", "300ms"}, "end-to-end timeout of 300ms expired"},
		{"the whole query", []string{"--timeout", "300ms"}, "the query ran out of --timeout 300ms after 0 items"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			r := cosmosctl(t, "", append([]string{"query", "SELECT * FROM c WHERE c.pk = 'p3'", "--pk", "p3"}, tc.args...)...)
			if r.code != ExitTimeout || !strings.Contains(r.errOut, tc.msg) {
				t.Fatalf("exit %d, want %d: %s", r.code, ExitTimeout, r.errOut)
			}
			if !strings.Contains(r.errOut, "the query stopped after 0 items: resume with --continuation ") {
				t.Fatalf("no continuation: %s", r.errOut)
			}
			if elapsed := time.Since(start); elapsed > 20*time.Second {
				t.Fatalf("took %s", elapsed)
			}
			q, _ := runQueryJSON(t, append([]string{"SELECT * FROM c WHERE c.pk = 'p3'", "--pk", "p3"}, tc.args...)...)
			if q.Error == nil || q.Error.Kind != "timeout" {
				t.Fatalf("-o json: %+v", q.Error)
			}
		})
	}
}
