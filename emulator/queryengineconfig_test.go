package emulator

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// TestQueryEngineConfigurationAdvertisesWhatIsServed holds each switch of the
// account's queryEngineConfiguration to what a query that needs it gets, within
// one partition key: advertised on, the query is answered 200; off, it is a 400
// that names the construct. When the SQL learns a construct, its switch must be
// turned on with it.
func TestQueryEngineConfigurationAdvertisesWhatIsServed(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	pk := pkHeader(`["a"]`)
	if resp, err := c.do(s.Endpoint(), "POST", itemsPath(), pk, `{"id":"1","pk":"a","name":"ann","tags":["x","y"]}`); err != nil || resp.StatusCode != 201 {
		t.Fatalf("create: %v %v", resp, err)
	}
	resp, err := c.do(s.Endpoint(), "GET", "/", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var acct cosmos.Account
	if err := json.Unmarshal(resp.Body, &acct); err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal([]byte(acct.QueryEngineConfiguration), &cfg); err != nil {
		t.Fatalf("queryEngineConfiguration %q: %v", acct.QueryEngineConfiguration, err)
	}
	on := func(key string) bool {
		switch v := cfg[key].(type) {
		case bool:
			return v
		case float64:
			return v > 0
		}
		t.Fatalf("queryEngineConfiguration lacks %s: %s", key, acct.QueryEngineConfiguration)
		return false
	}
	for _, probe := range []struct{ key, construct, query string }{
		{"sqlAllowLike", "LIKE", `SELECT * FROM c WHERE c.name LIKE 'a%'`},
		{"sqlAllowSubQuery", "EXISTS", `SELECT * FROM c WHERE EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t = 'x')`},
		{"sqlAllowScalarSubQuery", "subqueries", `SELECT (SELECT VALUE COUNT(1) FROM t IN c.tags) AS n FROM c`},
		{"maxJoinsPerSqlQuery", "JOIN", `SELECT c.id, t AS tag FROM c JOIN t IN c.tags`},
		{"sqlAllowSubQuery", "ARRAY", `SELECT ARRAY(SELECT VALUE t FROM t IN c.tags) AS tags FROM c`},
		{"maxUdfRefPerSqlQuery", "user-defined functions", `SELECT udf.double(c.id) FROM c`},
		{"sqlAllowAggregateFunctions", "aggregate", `SELECT VALUE COUNT(1) FROM c`},
		{"sqlAllowGroupByClause", "GROUP BY", `SELECT c.pk FROM c GROUP BY c.pk`},
		{"sqlAllowTop", "TOP", `SELECT TOP 1 * FROM c`},
	} {
		resp, err := c.do(s.Endpoint(), "POST", itemsPath(), docQueryHeaders(pk), cosmos.QuerySpec{Query: probe.query})
		code, _ := statusOf(t, resp, err)
		switch {
		case on(probe.key) && code != 200:
			t.Errorf("%s is advertised on, but %q answers %d: %s", probe.key, probe.query, code, resp.Body)
		case !on(probe.key) && code != 400:
			t.Errorf("%s is advertised off, but %q answers %d (serve it, then turn the switch on)", probe.key, probe.query, code)
		case !on(probe.key) && !strings.Contains(strings.ToLower(string(resp.Body)), strings.ToLower(probe.construct)):
			t.Errorf("%q is refused without naming %s: %s", probe.query, probe.construct, resp.Body)
		}
	}
	// maxJoinsPerSqlQuery is a limit: one JOIN more than it is refused, naming it.
	if n := int(cfg["maxJoinsPerSqlQuery"].(float64)); n > 0 {
		q := "SELECT VALUE c.id FROM c"
		for i := 0; i <= n; i++ {
			q += " JOIN t" + strings.Repeat("x", i) + " IN c.tags"
		}
		resp, err := c.do(s.Endpoint(), "POST", itemsPath(), docQueryHeaders(pk), cosmos.QuerySpec{Query: q})
		if code, _ := statusOf(t, resp, err); code != 400 || !strings.Contains(string(resp.Body), "maxJoinsPerSqlQuery") {
			t.Errorf("%d JOINs answer %d: %s", n+1, code, resp.Body)
		}
	}
}
