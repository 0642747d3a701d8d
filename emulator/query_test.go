package emulator

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

type queryRun struct {
	rows    []json.RawMessage
	pages   int
	charges []float64
	sizes   []int // bytes of rows per page
}

// queryAll runs a query to the end in pages of pageSize, following continuations.
func queryAll(t *testing.T, s *Server, scope map[string]string, spec cosmos.QuerySpec, pageSize int) queryRun {
	t.Helper()
	c := newTestClient(t, s.Key())
	var run queryRun
	cont := ""
	for {
		hdr := docQueryHeaders(merge(scope, map[string]string{cosmos.HeaderMaxItemCount: fmt.Sprint(pageSize)}))
		if cont != "" {
			hdr[cosmos.HeaderContinuation] = cont
		}
		resp, err := c.do(s.Endpoint(), "POST", itemsPath(), hdr, spec)
		if code, _ := statusOf(t, resp, err); code != 200 {
			t.Fatalf("%s: %d %s", spec.Query, code, resp.Body)
		}
		var feed cosmos.DocumentFeed
		if err := json.Unmarshal(resp.Body, &feed); err != nil || feed.Count != len(feed.Documents) {
			t.Fatalf("feed %s: %v", resp.Body, err)
		}
		if len(feed.Documents) > pageSize {
			t.Fatalf("a page of %d rows with x-ms-max-item-count %d", len(feed.Documents), pageSize)
		}
		size := 0
		for _, d := range feed.Documents {
			size += len(d)
		}
		run.rows = append(run.rows, feed.Documents...)
		run.pages++
		run.charges = append(run.charges, resp.RequestCharge)
		run.sizes = append(run.sizes, size)
		if cont = resp.Header.Get(cosmos.HeaderContinuation); cont == "" {
			return run
		}
		if run.pages > 1000 {
			t.Fatal("the query does not end")
		}
	}
}

func rangeScope(id string) map[string]string {
	return map[string]string{cosmos.HeaderPartitionKeyRangeID: id}
}

type queryItemDoc struct {
	ID  string `json:"id"`
	PK  string `json:"pk"`
	N   int    `json:"n"`
	Cat string `json:"cat"`
}

func decodeRows[T any](t *testing.T, rows []json.RawMessage) []T {
	t.Helper()
	out := make([]T, len(rows))
	for i, r := range rows {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			t.Fatalf("row %s: %v", r, err)
		}
	}
	return out
}

// Each range runs the rewritten queries of a plan fully, as the pipeline sends them:
// sorted rows with orderByItems and payload, one partial aggregate, its groups.
func TestRangesRunRewrittenQueriesFully(t *testing.T) {
	s := startTest(t)
	const n = 240
	loadQueryItems(t, s, n)
	total := 0
	for _, rng := range []string{"0", "1", "2", "3"} {
		docs := decodeRows[queryItemDoc](t, queryAll(t, s, rangeScope(rng), cosmos.QuerySpec{Query: "SELECT * FROM c"}, 50).rows)
		if len(docs) == 0 {
			t.Fatalf("range %s holds nothing", rng)
		}
		total += len(docs)

		ordered := queryAll(t, s, rangeScope(rng), cosmos.QuerySpec{
			Query: "SELECT c._rid, [{\"item\": c.n}] AS orderByItems, c AS payload\nFROM c\nWHERE (true)\nORDER BY c.n DESC"}, 7)
		type orderRow struct {
			RID   string `json:"_rid"`
			Items []struct {
				Item int `json:"item"`
			} `json:"orderByItems"`
			Payload queryItemDoc `json:"payload"`
		}
		rows := decodeRows[orderRow](t, ordered.rows)
		want := slices.Clone(docs)
		sort.Slice(want, func(i, j int) bool { return want[i].N > want[j].N })
		if len(rows) != len(want) {
			t.Fatalf("range %s: %d ORDER BY rows, want %d", rng, len(rows), len(want))
		}
		for i, r := range rows {
			if r.Payload != want[i] || len(r.Items) != 1 || r.Items[0].Item != want[i].N || r.RID == "" {
				t.Fatalf("range %s row %d: %+v, want payload %+v", rng, i, r, want[i])
			}
		}
		if ordered.pages != (len(want)+6)/7 {
			t.Errorf("range %s: %d pages for %d rows of 7", rng, ordered.pages, len(want))
		}

		agg := queryAll(t, s, rangeScope(rng), cosmos.QuerySpec{Query: "SELECT VALUE [{\"item\": COUNT(1)}]\nFROM c"}, 10)
		if len(agg.rows) != 1 || string(agg.rows[0]) != fmt.Sprintf(`[{"item":%d}]`, len(docs)) {
			t.Errorf("range %s: partial COUNT %s, want %d", rng, agg.rows, len(docs))
		}
		groups := queryAll(t, s, rangeScope(rng), cosmos.QuerySpec{
			Query: "SELECT [{\"item\": c.cat}] AS groupByItems, {\"cat\": c.cat, \"n\": {\"item\": COUNT(1)}} AS payload\nFROM c\nGROUP BY c.cat"}, 2)
		counts := map[string]int{}
		for _, d := range docs {
			counts[d.Cat]++
		}
		type groupRow struct {
			Items []struct {
				Item string `json:"item"`
			} `json:"groupByItems"`
			Payload struct {
				Cat string `json:"cat"`
				N   struct {
					Item int `json:"item"`
				} `json:"n"`
			} `json:"payload"`
		}
		for _, g := range decodeRows[groupRow](t, groups.rows) {
			if g.Payload.N.Item != counts[g.Payload.Cat] || len(g.Items) != 1 || g.Items[0].Item != g.Payload.Cat {
				t.Errorf("range %s: group %+v, want count %d", rng, g, counts[g.Payload.Cat])
			}
			delete(counts, g.Payload.Cat)
		}
		if len(counts) != 0 {
			t.Errorf("range %s: groups %v missing", rng, counts)
		}
	}
	if total != n {
		t.Errorf("the ranges hold %d documents, want %d", total, n)
	}
}

// An ORDER BY query resumes after the last row it returned, by value: documents written
// between pages that sort before that point do not appear, those after it do, and
// nothing repeats.
func TestOrderByPagesResumeByPositionAcrossWrites(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	for i, v := range []int{50, 10, 40, 20, 30, 20} {
		c.do(s.Endpoint(), "POST", itemsPath(), pkHeader(`["k"]`), fmt.Sprintf(`{"id":"d%d","pk":"k","n":%d}`, i, v))
	}
	spec := cosmos.QuerySpec{Query: "SELECT c.id, c.n FROM c ORDER BY c.n"}
	hdr := docQueryHeaders(merge(pkHeader(`["k"]`), map[string]string{cosmos.HeaderMaxItemCount: "3"}))
	resp, err := c.do(s.Endpoint(), "POST", itemsPath(), hdr, spec)
	if code, _ := statusOf(t, resp, err); code != 200 {
		t.Fatalf("%d %s", code, resp.Body)
	}
	var first cosmos.DocumentFeed
	_ = json.Unmarshal(resp.Body, &first)
	cont := resp.Header.Get(cosmos.HeaderContinuation)
	if len(first.Documents) != 3 || cont == "" {
		t.Fatalf("first page %s, continuation %q", resp.Body, cont)
	}
	// d1 (10), d3 (20), d5 (20) came back; now write around the resume point.
	c.do(s.Endpoint(), "POST", itemsPath(), pkHeader(`["k"]`), `{"id":"early","pk":"k","n":15}`)
	c.do(s.Endpoint(), "POST", itemsPath(), pkHeader(`["k"]`), `{"id":"late","pk":"k","n":35}`)
	c.do(s.Endpoint(), "DELETE", itemPath("d4"), pkHeader(`["k"]`), nil) // 30, not yet returned
	var rest []string
	for cont != "" {
		hdr[cosmos.HeaderContinuation] = cont
		resp, err := c.do(s.Endpoint(), "POST", itemsPath(), hdr, spec)
		if code, _ := statusOf(t, resp, err); code != 200 {
			t.Fatalf("%d %s", code, resp.Body)
		}
		var feed struct{ Documents []struct{ ID string } }
		_ = json.Unmarshal(resp.Body, &feed)
		for _, d := range feed.Documents {
			rest = append(rest, d.ID)
		}
		cont = resp.Header.Get(cosmos.HeaderContinuation)
	}
	if want := []string{"late", "d2", "d0"}; !slices.Equal(rest, want) {
		t.Errorf("after the writes the query went on with %v, want %v", rest, want)
	}
}

// TOP, OFFSET and LIMIT hold across pages, in sorted, materialized and streaming forms.
func TestBoundsHoldAcrossPages(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	for i := 0; i < 12; i++ {
		c.do(s.Endpoint(), "POST", itemsPath(), pkHeader(`["k"]`), fmt.Sprintf(`{"id":"d%02d","pk":"k","n":%d,"g":"g%d"}`, i, (i*5)%12, i%4))
	}
	scope := pkHeader(`["k"]`)
	tests := []struct {
		sql  string
		page int
		want string
	}{
		{"SELECT VALUE c.n FROM c ORDER BY c.n OFFSET 2 LIMIT 5", 2, "[2,3,4,5,6]"},
		{"SELECT TOP 4 VALUE c.n FROM c ORDER BY c.n DESC", 3, "[11,10,9,8]"},
		{"SELECT VALUE c.id FROM c OFFSET 3 LIMIT 4", 3, `["d03","d04","d05","d06"]`},
		{"SELECT TOP 5 VALUE c.id FROM c", 2, `["d00","d01","d02","d03","d04"]`},
		{"SELECT DISTINCT VALUE c.g FROM c OFFSET 1 LIMIT 2", 1, `["g1","g2"]`},
		{"SELECT c.g, COUNT(1) AS n FROM c GROUP BY c.g", 1, `[{"g":"g0","n":3},{"g":"g1","n":3},{"g":"g2","n":3},{"g":"g3","n":3}]`},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			run := queryAll(t, s, scope, cosmos.QuerySpec{Query: tt.sql}, tt.page)
			got := make([]string, len(run.rows))
			for i, r := range run.rows {
				got[i] = string(r)
			}
			if g := "[" + strings.Join(got, ",") + "]"; g != tt.want {
				t.Errorf("got %s, want %s (%d pages)", g, tt.want, run.pages)
			}
		})
	}
}

func TestContinuationTokensBelongToTheirQuery(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	for i := 0; i < 6; i++ {
		c.do(s.Endpoint(), "POST", itemsPath(), pkHeader(`["k"]`), fmt.Sprintf(`{"id":"d%d","pk":"k","n":%d}`, i, i))
	}
	token := func(sql string) string {
		resp, err := c.do(s.Endpoint(), "POST", itemsPath(), docQueryHeaders(merge(pkHeader(`["k"]`), map[string]string{cosmos.HeaderMaxItemCount: "2"})), cosmos.QuerySpec{Query: sql})
		if code, _ := statusOf(t, resp, err); code != 200 || resp.Header.Get(cosmos.HeaderContinuation) == "" {
			t.Fatalf("%s: %d %s", sql, code, resp.Body)
		}
		return resp.Header.Get(cosmos.HeaderContinuation)
	}
	tests := []struct {
		name, from, to string
		pk             string
	}{
		{"ORDER BY token on another ORDER BY", "SELECT * FROM c ORDER BY c.n", "SELECT * FROM c ORDER BY c.id", `["k"]`},
		{"ORDER BY token in another partition", "SELECT * FROM c ORDER BY c.n", "SELECT * FROM c ORDER BY c.n", `["other"]`},
		{"scan token on an ORDER BY", "SELECT * FROM c", "SELECT * FROM c ORDER BY c.n", `["k"]`},
		{"DISTINCT token on a scan", "SELECT DISTINCT VALUE c.n FROM c", "SELECT * FROM c", `["k"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := token(tt.from)
			resp, err := c.do(s.Endpoint(), "POST", itemsPath(), docQueryHeaders(merge(pkHeader(tt.pk), map[string]string{cosmos.HeaderContinuation: tok})), cosmos.QuerySpec{Query: tt.to})
			if code, _ := statusOf(t, resp, err); code != 400 || !strings.Contains(string(resp.Body), "belongs to another query") {
				t.Errorf("%d %s", code, resp.Body)
			}
		})
	}
}

// Query charges follow the model in charge.go whatever the cache holds: an ORDER BY
// page pays for the rows it stepped over, the first page of a DISTINCT, aggregate or
// GROUP BY query for every document of its scope.
func TestQueryChargesFollowTheModel(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	for i := 0; i < 30; i++ {
		c.do(s.Endpoint(), "POST", itemsPath(), pkHeader(`["k"]`), fmt.Sprintf(`{"id":"d%02d","pk":"k","n":%d,"g":"g%d"}`, i, i, i%3))
	}
	scope := pkHeader(`["k"]`)
	want := func(examined, bytes int) float64 { return chargeQuery(examined, bytes) }
	for pass := 0; pass < 2; pass++ { // the second pass reads cached results and pays the same
		run := queryAll(t, s, scope, cosmos.QuerySpec{Query: "SELECT VALUE c.id FROM c ORDER BY c.n OFFSET 4 LIMIT 20"}, 10)
		if run.charges[0] != want(14, run.sizes[0]) || run.charges[1] != want(10, run.sizes[1]) {
			t.Errorf("pass %d: ORDER BY pages charged %v, want %.2f and %.2f", pass, run.charges, want(14, run.sizes[0]), want(10, run.sizes[1]))
		}
		run = queryAll(t, s, scope, cosmos.QuerySpec{Query: "SELECT c.g, COUNT(1) AS n FROM c GROUP BY c.g"}, 2)
		if run.charges[0] != want(30, run.sizes[0]) || run.charges[1] != want(1, run.sizes[1]) {
			t.Errorf("pass %d: GROUP BY pages charged %v, want %.2f then %.2f", pass, run.charges, want(30, run.sizes[0]), want(1, run.sizes[1]))
		}
	}
}

func TestMetadataQueriesRunTheWholeGrammar(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	for _, id := range []string{"zeta", "alpha"} {
		c.do(s.Endpoint(), "POST", "/dbs", nil, `{"id":"`+id+`"}`)
	}
	resp, err := c.do(s.Endpoint(), "POST", "/dbs", docQueryHeaders(nil), cosmos.QuerySpec{Query: "SELECT VALUE d.id FROM d WHERE d.id != 'db' ORDER BY d.id DESC"})
	if code, _ := statusOf(t, resp, err); code != 200 || !strings.Contains(string(resp.Body), `"Databases":["zeta","alpha"]`) {
		t.Errorf("%d %s", code, resp.Body)
	}
	resp, err = c.do(s.Endpoint(), "POST", "/dbs", docQueryHeaders(nil), cosmos.QuerySpec{Query: "SELECT VALUE COUNT(1) FROM d"})
	if code, _ := statusOf(t, resp, err); code != 200 || !strings.Contains(string(resp.Body), `"Databases":[3]`) {
		t.Errorf("%d %s", code, resp.Body)
	}
}

// A streaming query's full page carries a continuation whether or not anything is
// left, so the page after the last full one may be empty; a materialized result (ORDER
// BY) knows its end, and a bound that is reached ends the query. The page counts are
// those azcosmos v1.5.0's emulator tests expect of Microsoft's emulator:
// TestCrossPartitionQuery (20 items in pages of 5: 5 pages), TestSinglePartitionQuery
// (ORDER BY, 10 items in pages of 5: 2 pages).
func TestAFullStreamingPageHasAContinuationEvenAtTheEnd(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	for i := 0; i < 10; i++ {
		c.do(s.Endpoint(), "POST", itemsPath(), pkHeader(`["k"]`), fmt.Sprintf(`{"id":"d%02d","pk":"k","n":%d}`, i, i))
	}
	scope := pkHeader(`["k"]`)
	for _, tt := range []struct {
		sql               string
		page, pages, rows int
	}{
		{"SELECT * FROM c", 5, 3, 10},
		{"SELECT * FROM c", 4, 3, 10},
		{"SELECT * FROM c", 10, 2, 10},
		{"SELECT * FROM c ORDER BY c.n", 5, 2, 10},
		{"SELECT TOP 5 * FROM c", 5, 1, 5},
	} {
		run := queryAll(t, s, scope, cosmos.QuerySpec{Query: tt.sql}, tt.page)
		if len(run.rows) != tt.rows || run.pages != tt.pages {
			t.Errorf("%s in pages of %d: %d rows in %d pages, want %d rows in %d pages", tt.sql, tt.page, len(run.rows), run.pages, tt.rows, tt.pages)
		}
	}
}
