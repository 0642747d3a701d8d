package emulator

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ with the current output")

const allQueryFeatures = "Aggregate, CompositeAggregate, Distinct, GroupBy, MultipleAggregates, MultipleOrderBy, OffsetAndLimit, OrderBy, Top, NonValueAggregate, DCount"

func docQueryHeaders(extra map[string]string) map[string]string {
	return merge(map[string]string{cosmos.HeaderIsQuery: "true", "Content-Type": "application/query+json"}, extra)
}

func planHeaders() map[string]string {
	return docQueryHeaders(map[string]string{
		cosmos.HeaderQueryPlanRequest: "True", cosmos.HeaderSupportedQueryFeatures: allQueryFeatures, cosmos.HeaderQueryVersion: "1.4",
	})
}

func indentJSON(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	return append(out.Bytes(), '\n')
}

// The plan of every supported form, as the emulator answers a plan request, against a
// golden file (go test ./emulator -run TestQueryPlanAnswers -update rewrites them).
// The rewritten queries are checked character by character against the gateway's in
// jsondoc's TestPlanRewritesQueriesAsTheGatewayDoes; these files show the whole answer.
func TestQueryPlanAnswers(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	tests := []struct {
		name   string
		spec   cosmos.QuerySpec
		needed bool
	}{
		{"simple", cosmos.QuerySpec{Query: "SELECT c.id, UPPER(c.s) AS s FROM c WHERE c.n > 1"}, false},
		{"order-by", cosmos.QuerySpec{Query: "SELECT * FROM c WHERE c.status = 'stuck' ORDER BY c._ts DESC"}, true},
		{"order-by-multi-value", cosmos.QuerySpec{Query: "SELECT VALUE c.id FROM c ORDER BY c.a, c.b DESC"}, true},
		{"order-by-top-list", cosmos.QuerySpec{Query: "SELECT TOP 5 c.id, c.n * 2 AS double FROM c ORDER BY c.n"}, true},
		{"order-by-offset-limit", cosmos.QuerySpec{Query: "SELECT c.id FROM c ORDER BY c.n OFFSET 10 LIMIT 5"}, true},
		{"top", cosmos.QuerySpec{Query: "SELECT TOP @n * FROM c", Parameters: []cosmos.QueryParameter{{Name: "@n", Value: json.RawMessage("7")}}}, true},
		{"offset-limit", cosmos.QuerySpec{Query: "SELECT * FROM c WHERE c.n > 1 OFFSET 3 LIMIT 4"}, true},
		{"distinct-unordered", cosmos.QuerySpec{Query: "SELECT DISTINCT VALUE c.cat FROM c"}, true},
		{"distinct-top", cosmos.QuerySpec{Query: "SELECT DISTINCT TOP 3 c.cat FROM c"}, true},
		{"distinct-ordered", cosmos.QuerySpec{Query: "SELECT DISTINCT VALUE c.cat FROM c ORDER BY c.cat"}, true},
		{"value-count", cosmos.QuerySpec{Query: "SELECT VALUE COUNT(1) FROM c WHERE c.n > 1"}, true},
		{"value-avg", cosmos.QuerySpec{Query: "SELECT VALUE AVG(c.n) FROM c"}, true},
		{"value-min", cosmos.QuerySpec{Query: "SELECT VALUE MIN(c.s) FROM c"}, true},
		{"non-value-aggregates", cosmos.QuerySpec{Query: "SELECT COUNT(1) AS n, SUM(c.n), MAX(c.s) AS last FROM c"}, true},
		{"group-by", cosmos.QuerySpec{Query: "SELECT c.cat, COUNT(1) AS n, AVG(c.n) AS mean FROM c GROUP BY c.cat"}, true},
		{"group-by-value", cosmos.QuerySpec{Query: "SELECT VALUE MAX(c.n) FROM c GROUP BY c.cat, c.g"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.do(s.Endpoint(), "POST", itemsPath(), planHeaders(), tt.spec)
			if code, _ := statusOf(t, resp, err); code != 200 {
				t.Fatalf("plan request: %d %s", code, resp.Body)
			}
			if resp.RequestCharge != 0 {
				t.Errorf("a plan charged %.2f RU; the gateway computes it without reading a partition", resp.RequestCharge)
			}
			var plan struct {
				Version   int `json:"partitionedQueryExecutionInfoVersion"`
				QueryInfo struct {
					RewrittenQuery string `json:"rewrittenQuery"`
				} `json:"queryInfo"`
				QueryRanges []map[string]any `json:"queryRanges"`
			}
			if err := json.Unmarshal(resp.Body, &plan); err != nil || plan.Version != 2 || len(plan.QueryRanges) != 1 ||
				plan.QueryRanges[0]["min"] != "" || plan.QueryRanges[0]["max"] != "FF" {
				t.Errorf("plan %s (%v)", resp.Body, err)
			}
			got := indentJSON(t, resp.Body)
			golden := filepath.Join("testdata", "queryplan", tt.name+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("plan of %s differs from %s:\n%s", tt.spec.Query, golden, got)
			}

			// Sent across partitions without the plan, the same query is refused the
			// way the gateway refuses it when it needs one, with the plan attached.
			resp, err = c.do(s.Endpoint(), "POST", itemsPath(), docQueryHeaders(map[string]string{cosmos.HeaderEnableCrossPartition: "true"}), tt.spec)
			code, sub := statusOf(t, resp, err)
			if !tt.needed {
				if code != 200 {
					t.Errorf("a query without plan features answered %d/%d across partitions: %s", code, sub, resp.Body)
				}
				return
			}
			if code != 400 || sub != 1004 {
				t.Fatalf("cross-partition without a plan: %d/%d, want 400/1004", code, sub)
			}
			var body struct {
				Code, Message, AdditionalErrorInfo string
			}
			if err := json.Unmarshal(resp.Body, &body); err != nil || body.Code != "BadRequest" ||
				!strings.HasPrefix(body.Message, "The provided cross partition query can not be directly served by the gateway.") {
				t.Errorf("refusal body %s (%v)", resp.Body, err)
			}
			if !bytes.Equal(indentJSON(t, []byte(body.AdditionalErrorInfo)), want) {
				t.Errorf("additionalErrorInfo is not the plan: %s", body.AdditionalErrorInfo)
			}
		})
	}
}

func TestQueryPlanRequestsCheckTheClientsFeatures(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	hdr := planHeaders()
	hdr[cosmos.HeaderSupportedQueryFeatures] = "Aggregate, OrderBy"
	resp, err := c.do(s.Endpoint(), "POST", itemsPath(), hdr, cosmos.QuerySpec{Query: "SELECT DISTINCT TOP 3 c.a FROM c ORDER BY c.a, c.b"})
	if code, _ := statusOf(t, resp, err); code != 400 || !strings.Contains(string(resp.Body), "Query contained Distinct, MultipleOrderBy, Top, which the calling client does not support") {
		t.Errorf("plan for a client without the features: %d %s", code, resp.Body)
	}
	resp, err = c.do(s.Endpoint(), "POST", itemsPath(), hdr, cosmos.QuerySpec{Query: "SELECT VALUE COUNT(1) FROM c ORDER BY c.a"})
	if code, _ := statusOf(t, resp, err); code != 400 || !strings.Contains(string(resp.Body), "ORDER BY with aggregates") {
		t.Errorf("plan for an unsupported query: %d %s", code, resp.Body)
	}
	resp, err = c.do(s.Endpoint(), "POST", itemsPath(), hdr, cosmos.QuerySpec{Query: "SELECT VALUE COUNT(1) + 1 FROM c"})
	if code, _ := statusOf(t, resp, err); code != 400 || !strings.Contains(string(resp.Body), "across partitions") {
		t.Errorf("plan for an aggregate inside an expression: %d %s", code, resp.Body)
	}
	delete(hdr, cosmos.HeaderSupportedQueryFeatures) // a client that does not say is not refused
	resp, err = c.do(s.Endpoint(), "POST", itemsPath(), hdr, cosmos.QuerySpec{Query: "SELECT TOP 3 * FROM c"})
	if code, _ := statusOf(t, resp, err); code != 200 {
		t.Errorf("plan without the features header: %d %s", code, resp.Body)
	}
}

// Across partitions the gateway runs no client pipeline, whatever the number of ranges:
// a query that needs one is a 400/1004 even in a one-range container (azcosmos v1.5.0
// TestCrossPartitionQueryFailsIfGatewayCannotSatisfyRequest, which Microsoft's CI runs
// against its one-range emulator), unless its filter pins the whole partition key, when
// it runs in that partition (TestSinglePartitionQueryInline: "We can specify the
// partition key inline").
func TestPlanQueriesAcrossPartitionsAreServedOnlyWhenTheFilterPinsTheKey(t *testing.T) {
	for _, ranges := range []int{1, 4} {
		s := startTest(t, func(c *Config) { c.Ranges = ranges })
		c := newTestClient(t, s.Key())
		for _, id := range []string{"b", "c", "a", "b2"} {
			pk := id[:1]
			c.do(s.Endpoint(), "POST", itemsPath(), pkHeader(`["`+pk+`"]`), `{"id":"`+id+`","pk":"`+pk+`"}`)
		}
		for _, tc := range []struct {
			sql  string
			want string // "" for the 400/1004
		}{
			{"SELECT VALUE c.id FROM c ORDER BY c.id DESC", ""},
			{"SELECT VALUE COUNT(1) FROM c", ""},
			{"SELECT VALUE c.id FROM c WHERE c.pk = 'b' ORDER BY c.id DESC", `"Documents":["b2","b"]`},
			{"SELECT VALUE c.id FROM c WHERE 'b' = c.pk AND c.id != 'x' ORDER BY c.id", `"Documents":["b","b2"]`},
			{"SELECT VALUE COUNT(1) FROM c WHERE c.pk = 'b'", `"Documents":[2]`},
			{"SELECT VALUE c.id FROM c WHERE c.pk = 'b' OR c.pk = 'a' ORDER BY c.id", ""},
			{"SELECT VALUE c.id FROM c WHERE c.pk IN ('b') ORDER BY c.id", ""},
			{"SELECT VALUE c.id FROM c WHERE c.pk > 'a' ORDER BY c.id", ""},
		} {
			resp, err := c.do(s.Endpoint(), "POST", itemsPath(), docQueryHeaders(map[string]string{cosmos.HeaderEnableCrossPartition: "true"}),
				cosmos.QuerySpec{Query: tc.sql})
			code, sub := statusOf(t, resp, err)
			switch {
			case tc.want == "" && (code != 400 || sub != subCrossPartitionQueryNotServable || !strings.Contains(string(resp.Body), "cross partition query can not be directly served by the gateway")):
				t.Errorf("%d ranges, %s: %d/%d %s, want 400/1004", ranges, tc.sql, code, sub, resp.Body)
			case tc.want != "" && (code != 200 || !strings.Contains(string(resp.Body), tc.want)):
				t.Errorf("%d ranges, %s: %d %s, want %s", ranges, tc.sql, code, resp.Body, tc.want)
			}
		}
	}
}
