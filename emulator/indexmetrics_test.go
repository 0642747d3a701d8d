package emulator

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// policyContainer creates container id, partitioned by /pk, with the indexing policy
// given (none: the default one), and writes docs into it.
func policyContainer(t *testing.T, s *Server, id, policy string, docs ...string) {
	t.Helper()
	c := newTestClient(t, s.Key())
	body := `{"id":"` + id + `","partitionKey":{"paths":["/pk"],"kind":"Hash"}`
	if policy != "" {
		body += `,"indexingPolicy":` + policy
	}
	if r := c.mustDo(s.Endpoint(), "POST", "/dbs/db/colls", nil, body+"}"); r.StatusCode != http.StatusCreated {
		t.Fatalf("creating %s: %d %s", id, r.StatusCode, r.Body)
	}
	for _, d := range docs {
		var pk struct {
			PK string `json:"pk"`
		}
		if err := json.Unmarshal([]byte(d), &pk); err != nil {
			t.Fatal(err)
		}
		if r := c.mustDo(s.Endpoint(), "POST", cosmos.ItemsPath("db", id), pkHeader(`["`+pk.PK+`"]`), d); r.StatusCode != http.StatusCreated {
			t.Fatalf("creating %s: %d %s", d, r.StatusCode, r.Body)
		}
	}
}

// queryIn sends one query page to container id with the headers given.
func queryIn(t *testing.T, s *Server, id string, hdr map[string]string, sql string) *cosmos.Response {
	t.Helper()
	c := newTestClient(t, s.Key())
	return c.mustDo(s.Endpoint(), "POST", cosmos.ItemsPath("db", id), docQueryHeaders(hdr), cosmos.QuerySpec{Query: sql})
}

var (
	askV1      = map[string]string{cosmos.HeaderPopulateIndexMetrics: "true"}
	askV2      = map[string]string{headerPopulateIndexMetricsV2: "true"}
	inPK       = pkHeader(`["a"]`)
	acrossAll  = map[string]string{cosmos.HeaderEnableCrossPartition: "true"}
	metricDocs = []string{
		`{"id":"1","pk":"a","name":"Julien","age":30,"town":"Redmond","timestamp":5,"secret":"s"}`,
		`{"id":"2","pk":"a","name":"Tim","age":16,"town":"Redmond","timestamp":9,"secret":"t"}`,
	}
)

// decodeV1 reads an x-ms-cosmos-index-utilization of the first form as the SDKs do
// (TryCreateFromDelimitedBase64String: base64, then JSON) and returns it compact.
func decodeV1(t *testing.T, h string) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(h)
	if err != nil {
		t.Fatalf("index utilization %q is not base64: %v", h, err)
	}
	return compactJSON(t, raw)
}

// decodeV2 reads the second form as JS SDK 4.10.1 does (decodeURIComponent, then
// JSON.parse); url.PathUnescape, unlike QueryUnescape, leaves + as it is, as
// decodeURIComponent does.
func decodeV2(t *testing.T, h string) string {
	t.Helper()
	if strings.ContainsAny(h, "+ ") {
		t.Errorf("index utilization %q has a + or a space: decodeURIComponent and HttpUtility.UrlDecode read them differently", h)
	}
	raw, err := url.PathUnescape(h)
	if err != nil {
		t.Fatalf("index utilization %q is not URL-encoded: %v", h, err)
	}
	return compactJSON(t, []byte(raw))
}

func compactJSON(t *testing.T, raw []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("index utilization %s is not JSON: %v", raw, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestIndexMetricsAnswerOnlyARequestThatAsks: the header comes with a page that asks for
// it and has rows, in the form asked for, and never otherwise.
func TestIndexMetricsAnswerOnlyARequestThatAsks(t *testing.T) {
	s := startTest(t)
	policyContainer(t, s, "m", "", metricDocs...)
	cases := []struct {
		name string
		hdr  map[string]string
		sql  string
		form string // "", "v1" or "v2"
	}{
		{"not asked, not sent", inPK, "SELECT * FROM c WHERE c.age > 1", ""},
		{"asked with false, not sent", merge(inPK, map[string]string{cosmos.HeaderPopulateIndexMetrics: "false"}), "SELECT * FROM c", ""},
		{"V1 asked, base64 JSON sent", merge(inPK, askV1), "SELECT * FROM c WHERE c.age > 1", "v1"},
		{"V2 asked, URL-encoded JSON sent", merge(inPK, askV2), "SELECT * FROM c WHERE c.age > 1", "v2"},
		{"both asked, V2 sent", merge(merge(inPK, askV1), askV2), "SELECT * FROM c WHERE c.age > 1", "v2"},
		{"a page without rows has none", merge(inPK, askV1), "SELECT * FROM c WHERE c.age > 100", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := queryIn(t, s, "m", c.hdr, c.sql)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, resp.Body)
			}
			h, sent := resp.Header[http.CanonicalHeaderKey(cosmos.HeaderIndexUtilization)]
			switch c.form {
			case "":
				if sent {
					t.Errorf("%s sent unasked or for no rows: %q", cosmos.HeaderIndexUtilization, h)
				}
			case "v1":
				// The members in the service's order (the .NET SDK's parser test strings).
				raw, _ := base64.StdEncoding.DecodeString(resp.Header.Get(cosmos.HeaderIndexUtilization))
				if !strings.HasPrefix(string(raw), `{"UtilizedSingleIndexes":[{"FilterExpression":"","IndexSpec":"/pk/?","FilterPreciseSet":true,"IndexPreciseSet":true,"IndexImpactScore":"High"},`) ||
					!strings.HasSuffix(string(raw), `],"PotentialSingleIndexes":[],"UtilizedCompositeIndexes":[],"PotentialCompositeIndexes":[]}`) {
					t.Errorf("V1 answer %s", raw)
				}
			case "v2":
				raw, _ := url.PathUnescape(resp.Header.Get(cosmos.HeaderIndexUtilization))
				if !strings.HasPrefix(raw, `{"UtilizedIndexes":{"SingleIndexes":[{"IndexSpec":"/pk/?","IndexImpactScore":"High"},`) ||
					!strings.HasSuffix(raw, `],"CompositeIndexes":[]},"PotentialIndexes":{"SingleIndexes":[],"CompositeIndexes":[]}}`) {
					t.Errorf("V2 answer %s", raw)
				}
			}
		})
	}
}

// TestIndexMetricsReportWhatTheIndexingPolicyServes decodes the header of each form and
// compares it whole with what the service reports for the query under the policy.
func TestIndexMetricsReportWhatTheIndexingPolicyServes(t *testing.T) {
	s := startTest(t)
	const excludeSecret = `{"indexingMode":"consistent","includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/secret/?"},{"path":"/\"_etag\"/?"}]}`
	const composites = `{"indexingMode":"consistent","includedPaths":[{"path":"/*"}],"excludedPaths":[],` +
		`"compositeIndexes":[[{"path":"/name","order":"descending"},{"path":"/age","order":"ascending"}],[{"path":"/town"},{"path":"/timestamp","order":"descending"}]]}`
	policyContainer(t, s, "plain", "", metricDocs...)
	policyContainer(t, s, "secret", excludeSecret, metricDocs...)
	policyContainer(t, s, "composite", composites, metricDocs...)
	single := func(filter, spec string, utilized bool) string {
		b, _ := json.Marshal(map[string]any{"FilterExpression": filter, "IndexSpec": spec, "FilterPreciseSet": true, "IndexPreciseSet": utilized, "IndexImpactScore": "High"})
		return string(b)
	}
	composite := func(utilized bool, specs ...string) string {
		b, _ := json.Marshal(map[string]any{"IndexSpecs": specs, "IndexPreciseSet": utilized, "IndexImpactScore": "High"})
		return string(b)
	}
	v1 := func(us, ps, uc, pc []string) string {
		list := func(l []string) string { return "[" + strings.Join(l, ",") + "]" }
		return `{"PotentialCompositeIndexes":` + list(pc) + `,"PotentialSingleIndexes":` + list(ps) +
			`,"UtilizedCompositeIndexes":` + list(uc) + `,"UtilizedSingleIndexes":` + list(us) + `}`
	}
	cases := []struct {
		name, container string
		hdr             map[string]string
		sql             string
		v1, v2          string
	}{
		{
			// The Python SDK's live test_populate_index_metrics, exactly.
			name: "a query scoped to a partition key uses the index of its path", container: "plain", hdr: inPK,
			sql: "SELECT * FROM c",
			v1:  v1([]string{single("", "/pk/?", true)}, nil, nil, nil),
			v2:  `{"PotentialIndexes":{"CompositeIndexes":[],"SingleIndexes":[]},"UtilizedIndexes":{"CompositeIndexes":[],"SingleIndexes":[{"IndexImpactScore":"High","IndexSpec":"/pk/?"}]}}`,
		},
		{
			// The .NET SDK's IndexUtilizationInfoTests sample: an equality and a range.
			name: "an equality and a range use two paths and call for a composite index", container: "plain", hdr: acrossAll,
			sql: `SELECT * FROM c WHERE c.name = "Julien" AND c.age > 12`,
			v1: v1([]string{single(`(ROOT.name = "Julien")`, "/name/?", true), single("(ROOT.age > 12)", "/age/?", true)}, nil, nil,
				[]string{composite(false, "/name ASC", "/age ASC")}),
			v2: `{"PotentialIndexes":{"CompositeIndexes":[{"IndexImpactScore":"High","IndexSpecs":["/name ASC","/age ASC"]}],"SingleIndexes":[]},` +
				`"UtilizedIndexes":{"CompositeIndexes":[],"SingleIndexes":[{"IndexImpactScore":"High","IndexSpec":"/name/?"},{"IndexImpactScore":"High","IndexSpec":"/age/?"}]}}`,
		},
		{
			// The index metrics article's example: one composite index per range filter,
			// the equality paths first.
			name: "equalities and two ranges call for two composite indexes", container: "plain", hdr: inPK,
			sql: "SELECT c.id FROM c WHERE c.name = 'Tim' AND c.age > 15 AND c.town = 'Redmond' AND c.timestamp > 2",
			v1: v1([]string{single("", "/pk/?", true), single(`(ROOT.name = "Tim")`, "/name/?", true), single("(ROOT.age > 15)", "/age/?", true),
				single(`(ROOT.town = "Redmond")`, "/town/?", true), single("(ROOT.timestamp > 2)", "/timestamp/?", true)}, nil, nil,
				[]string{composite(false, "/name ASC", "/town ASC", "/age ASC"), composite(false, "/name ASC", "/town ASC", "/timestamp ASC")}),
		},
		{
			name: "a path the policy excludes is a potential single index; an equality and a function call for a composite", container: "secret", hdr: inPK,
			sql: "SELECT * FROM c WHERE c.secret = @s AND STARTSWITH(c.name, 'J')",
			v1: v1([]string{single("", "/pk/?", true), single(`STARTSWITH(ROOT.name, "J")`, "/name/?", true)},
				[]string{single(`(ROOT.secret = "s")`, "/secret/?", false)}, nil, []string{composite(false, "/secret ASC", "/name ASC")}),
			v2: `{"PotentialIndexes":{"CompositeIndexes":[{"IndexImpactScore":"High","IndexSpecs":["/secret ASC","/name ASC"]}],"SingleIndexes":[{"IndexImpactScore":"High","IndexSpec":"/secret/?"}]},` +
				`"UtilizedIndexes":{"CompositeIndexes":[],"SingleIndexes":[{"IndexImpactScore":"High","IndexSpec":"/pk/?"},{"IndexImpactScore":"High","IndexSpec":"/name/?"}]}}`,
		},
		{
			name: "a composite index of the policy serves filters whatever its directions", container: "composite", hdr: acrossAll,
			sql: "SELECT * FROM c WHERE c.age >= 16 AND c.name = 'Tim'",
			v1: v1([]string{single("(ROOT.age >= 16)", "/age/?", true), single(`(ROOT.name = "Tim")`, "/name/?", true)}, nil,
				[]string{composite(true, "/name DESC", "/age ASC")}, nil),
		},
		{
			name: "a multi-key ORDER BY uses its composite index", container: "composite", hdr: inPK,
			sql: "SELECT * FROM c ORDER BY c.town DESC, c.timestamp ASC",
			v1:  v1([]string{single("", "/pk/?", true)}, nil, []string{composite(true, "/town ASC", "/timestamp DESC")}, nil),
		},
		{
			name: "terms under OR are single indexes only", container: "plain", hdr: acrossAll,
			sql: "SELECT * FROM c WHERE c.name = 'Tim' OR c.age > 20",
			v1:  v1([]string{single(`(ROOT.name = "Tim")`, "/name/?", true), single("(ROOT.age > 20)", "/age/?", true)}, nil, nil, nil),
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sql := strings.ReplaceAll(c.sql, "@s", `"s"`)
			resp := queryIn(t, s, c.container, merge(c.hdr, askV1), sql)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, resp.Body)
			}
			if got, want := decodeV1(t, resp.Header.Get(cosmos.HeaderIndexUtilization)), compactJSON(t, []byte(c.v1)); got != want {
				t.Errorf("V1\n got  %s\n want %s", got, want)
			}
			if c.v2 == "" {
				return
			}
			resp = queryIn(t, s, c.container, merge(c.hdr, askV2), sql)
			if got, want := decodeV2(t, resp.Header.Get(cosmos.HeaderIndexUtilization)), compactJSON(t, []byte(c.v2)); got != want {
				t.Errorf("V2\n got  %s\n want %s", got, want)
			}
		})
	}
}

// TestIndexMetricsRenderParametersAsValues: a parameterised filter is reported with
// the parameter's value, as the service reports the query it ran.
func TestIndexMetricsRenderParametersAsValues(t *testing.T) {
	s := startTest(t)
	policyContainer(t, s, "m", "", metricDocs...)
	c := newTestClient(t, s.Key())
	spec := cosmos.QuerySpec{Query: "SELECT * FROM c WHERE c.name = @n", Parameters: []cosmos.QueryParameter{{Name: "@n", Value: json.RawMessage(`"Tim"`)}}}
	resp := c.mustDo(s.Endpoint(), "POST", cosmos.ItemsPath("db", "m"), docQueryHeaders(merge(inPK, askV1)), spec)
	got := decodeV1(t, resp.Header.Get(cosmos.HeaderIndexUtilization))
	if !strings.Contains(got, `"FilterExpression":"(ROOT.name = \"Tim\")"`) {
		t.Errorf("V1 %s: want the filter expression with the parameter's value", got)
	}
}
