package emulator

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// The service's x-ms-request-duration-ms: decimal milliseconds with three places, as
// captured service responses have it ("0.408", "0.672").
var requestDurationFormat = regexp.MustCompile(`^[0-9]+\.[0-9]{3}$`)

func TestEveryResponseCarriesTheServerSideRequestDuration(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	pk := pkHeader(`["a"]`)
	c.mustDo(s.Endpoint(), "POST", itemsPath(), pk, `{"id":"1","pk":"a"}`)
	query := map[string]string{cosmos.HeaderPartitionKey: `["a"]`, cosmos.HeaderIsQuery: "true", "Content-Type": "application/query+json"}
	cases := []struct {
		name, method, path string
		hdr                map[string]string
		body               string
		status             int
	}{
		{"a create", "POST", itemsPath(), pk, `{"id":"2","pk":"a"}`, 201},
		{"a read", "GET", itemPath("1"), pk, "", 200},
		{"a read of a missing item", "GET", itemPath("missing"), pk, "", 404},
		{"a query", "POST", itemsPath(), query, `{"query":"SELECT * FROM c"}`, 200},
		{"the pkranges feed", "GET", "/dbs/db/colls/items/pkranges", nil, "", 200},
		{"the account", "GET", "/", nil, "", 200},
		{"a container read", "GET", "/dbs/db/colls/items", nil, "", 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var resp *cosmos.Response
			if tc.body == "" {
				resp = c.mustDo(s.Endpoint(), tc.method, tc.path, tc.hdr)
			} else {
				resp = c.mustDo(s.Endpoint(), tc.method, tc.path, tc.hdr, tc.body)
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			v := resp.Header.Get(cosmos.HeaderRequestDuration)
			if !requestDurationFormat.MatchString(v) {
				t.Fatalf("%s = %q, want decimal milliseconds with three places", cosmos.HeaderRequestDuration, v)
			}
			if resp.ServerDuration > time.Minute {
				t.Fatalf("server duration %v is not a plausible time for one request", resp.ServerDuration)
			}
		})
	}
}

// Injected region latency and delay faults model the network: the server-side time
// leaves them out, so the round trip minus it shows them.
func TestRequestDurationLeavesOutInjectedNetworkLatency(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	pk := pkHeader(`["a"]`)
	c.mustDo(s.Endpoint(), "POST", itemsPath(), pk, `{"id":"1","pk":"a"}`)
	if err := s.Faults().SetLatency("North Europe", "reads", faults.Distribution{Kind: "fixed", Value: faults.Duration(200 * time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	injectFault(t, s, faults.Rule{Region: "North Europe", Operations: []string{"read"}, Effect: "delay", Delay: faults.Distribution{Kind: "fixed", Value: faults.Duration(200 * time.Millisecond)}})
	start := time.Now()
	resp := c.mustDo(regionURL(t, s, "North Europe"), "GET", itemPath("1"), pk)
	roundTrip := time.Since(start)
	if roundTrip < 400*time.Millisecond {
		t.Fatalf("the read took %v; the injected 400ms must be in the round trip", roundTrip)
	}
	if !requestDurationFormat.MatchString(resp.Header.Get(cosmos.HeaderRequestDuration)) {
		t.Fatalf("no server-side duration: %q", resp.Header.Get(cosmos.HeaderRequestDuration))
	}
	// A point read from memory takes well under the injected 400ms even on a loaded
	// machine; with the injected time counted it could not be below it.
	if resp.ServerDuration >= 400*time.Millisecond {
		t.Fatalf("server-side duration %v includes the injected network latency (round trip %v)", resp.ServerDuration, roundTrip)
	}
}

// The service's query metrics keys, in its order (.NET ServerSideMetricsTests; captured
// service headers in Azure/azure-cosmos-dotnet-v3#1085).
var queryMetricsKeys = []string{
	"totalExecutionTimeInMs", "queryCompileTimeInMs", "queryLogicalPlanBuildTimeInMs",
	"queryPhysicalPlanBuildTimeInMs", "queryOptimizationTimeInMs", "VMExecutionTimeInMs",
	"indexLookupTimeInMs", "documentLoadTimeInMs", "systemFunctionExecuteTimeInMs",
	"userFunctionExecuteTimeInMs", "retrievedDocumentCount", "retrievedDocumentSize",
	"outputDocumentCount", "outputDocumentSize", "writeOutputTimeInMs", "indexUtilizationRatio",
}

// parseQueryMetrics splits the header into its values, checking the keys, their order
// and each value's form: times and the ratio with two decimals, counts as integers.
func parseQueryMetrics(t *testing.T, header string) map[string]float64 {
	t.Helper()
	pairs := strings.Split(header, ";")
	if len(pairs) != len(queryMetricsKeys) {
		t.Fatalf("query metrics %q: %d fields, want %d", header, len(pairs), len(queryMetricsKeys))
	}
	twoDecimals := regexp.MustCompile(`^[0-9]+\.[0-9]{2}$`)
	integer := regexp.MustCompile(`^[0-9]+$`)
	out := map[string]float64{}
	for i, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k != queryMetricsKeys[i] {
			t.Fatalf("query metrics field %d is %q, want %s=…", i, p, queryMetricsKeys[i])
		}
		form := twoDecimals
		if strings.HasSuffix(k, "Count") || strings.HasSuffix(k, "Size") {
			form = integer
		}
		if !form.MatchString(v) {
			t.Fatalf("query metrics %s=%q is not in the service's form", k, v)
		}
		out[k], _ = strconv.ParseFloat(v, 64)
	}
	return out
}

func TestQueryMetricsReportTheEnginesFiguresWhenAsked(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	docs := []string{`{"id":"1","pk":"a","n":1}`, `{"id":"2","pk":"a","n":2}`, `{"id":"3","pk":"a","n":2}`, `{"id":"4","pk":"a","n":3}`}
	for _, d := range docs {
		c.mustDo(s.Endpoint(), "POST", itemsPath(), pkHeader(`["a"]`), d)
	}
	hdr := map[string]string{cosmos.HeaderPartitionKey: `["a"]`, cosmos.HeaderIsQuery: "true", "Content-Type": "application/query+json"}
	body := `{"query":"SELECT c.id FROM c WHERE c.n = 2"}`

	plain := c.mustDo(s.Endpoint(), "POST", itemsPath(), hdr, body)
	if v := plain.Header.Get(cosmos.HeaderQueryMetrics); v != "" {
		t.Fatalf("query metrics sent without being asked for: %q", v)
	}

	hdr[cosmos.HeaderPopulateQueryMetrics] = "true"
	resp := c.mustDo(s.Endpoint(), "POST", itemsPath(), hdr, body)
	m := parseQueryMetrics(t, resp.Header.Get(cosmos.HeaderQueryMetrics))
	// The stored documents have system properties added (under 300 bytes each): larger
	// than what was sent.
	sent := float64(len(docs[1]) + len(docs[2]))
	// The default policy indexes /n: the index serves the filter and the two matching
	// documents are all the service loads.
	if m["retrievedDocumentCount"] != 2 || m["retrievedDocumentSize"] <= sent || m["retrievedDocumentSize"] > sent+2*300 {
		t.Errorf("retrieved %v documents of %v bytes; the index serves c.n = 2, which 2 stored documents of a little more than %v bytes match", m["retrievedDocumentCount"], m["retrievedDocumentSize"], sent)
	}
	out := len(`{"id":"2"}`) + len(`{"id":"3"}`)
	if m["outputDocumentCount"] != 2 || m["outputDocumentSize"] != float64(out) {
		t.Errorf("output %v documents of %v bytes, want 2 of %d", m["outputDocumentCount"], m["outputDocumentSize"], out)
	}
	if m["indexUtilizationRatio"] != 1 {
		t.Errorf("indexUtilizationRatio %v, want 1.00: the 2 retrieved documents matched", m["indexUtilizationRatio"])
	}
	if m["totalExecutionTimeInMs"] < m["VMExecutionTimeInMs"] || m["totalExecutionTimeInMs"] < m["queryCompileTimeInMs"] {
		t.Errorf("total execution time %v is less than one of its parts: %v", m["totalExecutionTimeInMs"], m)
	}
}

// Document and feed responses name their range and LSNs as the service's do.
func TestDocumentAndQueryResponsesCarryTheLSNFamily(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	pk := pkHeader(`["a"]`)
	c.mustDo(s.Endpoint(), "POST", itemsPath(), pk, `{"id":"1","pk":"a"}`)
	c.mustDo(s.Endpoint(), "POST", itemsPath(), pk, `{"id":"2","pk":"a"}`)
	query := map[string]string{cosmos.HeaderPartitionKey: `["a"]`, cosmos.HeaderIsQuery: "true", "Content-Type": "application/query+json"}
	for _, tc := range []struct {
		name string
		resp *cosmos.Response
		item bool
	}{
		{"a write", c.mustDo(s.Endpoint(), "PUT", itemPath("1"), pk, `{"id":"1","pk":"a","v":2}`), false},
		{"a point read", c.mustDo(s.Endpoint(), "GET", itemPath("1"), pk), true},
		{"a query in one partition", c.mustDo(s.Endpoint(), "POST", itemsPath(), query, `{"query":"SELECT * FROM c"}`), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.resp.Header
			lsn, err := strconv.ParseInt(h.Get(cosmos.HeaderLSN), 10, 64)
			if err != nil || lsn < 1 {
				t.Fatalf("lsn %q", h.Get(cosmos.HeaderLSN))
			}
			if got := h.Get(cosmos.HeaderLocalLSN); got != h.Get(cosmos.HeaderLSN) {
				t.Errorf("%s %q, want the lsn %q (one log per range)", cosmos.HeaderLocalLSN, got, h.Get(cosmos.HeaderLSN))
			}
			committed, err := strconv.ParseInt(h.Get(cosmos.HeaderGlobalCommittedLSN), 10, 64)
			if err != nil || committed < 0 || committed > lsn {
				t.Errorf("%s %q, want a number no greater than lsn %d", cosmos.HeaderGlobalCommittedLSN, h.Get(cosmos.HeaderGlobalCommittedLSN), lsn)
			}
			rng := h.Get(cosmos.HeaderPartitionKeyRangeID)
			if rng == "" || h.Get(cosmos.HeaderPhysicalPartitionID) != rng {
				t.Errorf("range %q, physical partition %q: want both, equal", rng, h.Get(cosmos.HeaderPhysicalPartitionID))
			}
			if tc.item {
				if h.Get(cosmos.HeaderItemLSN) == "" || h.Get(cosmos.HeaderItemLocalLSN) != h.Get(cosmos.HeaderItemLSN) {
					t.Errorf("item lsn %q, item llsn %q: want both, equal", h.Get(cosmos.HeaderItemLSN), h.Get(cosmos.HeaderItemLocalLSN))
				}
			}
		})
	}
}

// What the query metrics count as retrieved follows the container's indexing policy:
// the documents the index leaves to load when it serves the filter, every document of
// the scope when the filter's path is excluded and the query scans ("Troubleshoot
// query performance": a Retrieved Document Count much higher than the Output Document
// Count means "at least one part of your query … was unable to use an index and
// needed to do a scan").
func TestQueryMetricsRetrieveWhatTheIndexLeavesToLoad(t *testing.T) {
	const excludeN = `{"indexingMode":"consistent","includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/n/?"},{"path":"/\"_etag\"/?"}]}`
	var docs []string
	for i := range 10 {
		docs = append(docs, fmt.Sprintf(`{"id":"%d","pk":"a","n":%d,"k":"%s"}`, i, i%5, map[bool]string{true: "x", false: "y"}[i < 4]))
	}
	s := startTest(t)
	policyContainer(t, s, "indexed", "", docs...)
	policyContainer(t, s, "excluded", excludeN, docs...)
	ask := map[string]string{cosmos.HeaderPopulateQueryMetrics: "true", cosmos.HeaderPartitionKey: `["a"]`}
	for _, tc := range []struct {
		name, container, sql string
		retrieved, output    float64
	}{
		{"an indexed path: only the matching documents", "indexed", "SELECT * FROM c WHERE c.n = 2", 2, 2},
		{"an excluded path: a scan of every document", "excluded", "SELECT * FROM c WHERE c.n = 2", 10, 2},
		{"an excluded path, projected: a scan", "excluded", "SELECT c.id FROM c WHERE c.n >= 3", 10, 4},
		{"an indexed term narrows a term on an excluded path", "excluded", "SELECT * FROM c WHERE c.k = 'x' AND c.n = 1", 4, 1},
		{"a function no index serves: a scan", "indexed", "SELECT * FROM c WHERE UPPER(c.k) = 'X'", 10, 4},
		{"an OR with an excluded side: a scan", "excluded", "SELECT * FROM c WHERE c.k = 'x' OR c.n = 4", 10, 6},
		{"an OR of indexed terms: only the matching documents", "indexed", "SELECT * FROM c WHERE c.k = 'x' OR c.n = 4", 6, 6},
		{"no filter: every document", "indexed", "SELECT * FROM c", 10, 10},
		{"ORDER BY on an indexed path, filter excluded: a scan", "excluded", "SELECT * FROM c WHERE c.n = 2 ORDER BY c.id", 10, 2},
		{"ORDER BY, filter indexed", "indexed", "SELECT * FROM c WHERE c.n = 2 ORDER BY c.id", 2, 2},
		{"an aggregate over an excluded path: a scan", "excluded", "SELECT VALUE COUNT(1) FROM c WHERE c.n = 2", 10, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := parseQueryMetrics(t, queryIn(t, s, tc.container, ask, tc.sql).Header.Get(cosmos.HeaderQueryMetrics))
			if m["retrievedDocumentCount"] != tc.retrieved || m["outputDocumentCount"] != tc.output {
				t.Fatalf("retrieved %v, output %v; want %v and %v", m["retrievedDocumentCount"], m["outputDocumentCount"], tc.retrieved, tc.output)
			}
		})
	}
}
