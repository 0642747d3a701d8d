package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

func itemsPath() string         { return cosmos.ItemsPath("db", "items") }
func itemPath(id string) string { return cosmos.ItemPath("db", "items", id) }

func TestAccountHasTheRealShape(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	resp, err := c.do(s.Endpoint(), "GET", "/", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(resp.Body, &raw); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"id", "_rid", "writableLocations", "readableLocations", "enableMultipleWriteLocations",
		"userConsistencyPolicy", "addresses", "userReplicationPolicy", "systemReplicationPolicy", "readPolicy", "queryEngineConfiguration"} {
		if _, ok := raw[field]; !ok {
			t.Errorf("GET / lacks %q", field)
		}
	}
	var acct cosmos.Account
	_ = json.Unmarshal(resp.Body, &acct)
	if acct.ID == "localhost" || acct.ID == "" {
		t.Errorf("account id %q: must be set and not localhost", acct.ID)
	}
	if got := strings.Join(acct.ReadRegions(), ","); got != "East US,West US,North Europe" {
		t.Errorf("readable regions = %s", got)
	}
	if got := strings.Join(acct.WriteRegions(), ","); got != "East US" {
		t.Errorf("writable regions = %s", got)
	}
	hosts := map[string]bool{}
	for _, l := range acct.ReadableLocations {
		hosts[l.Endpoint] = true
	}
	if len(hosts) != 3 {
		t.Errorf("each region needs its own host:port, got %v", hosts)
	}
	if !json.Valid([]byte(acct.QueryEngineConfiguration)) {
		t.Error("queryEngineConfiguration must be a JSON string")
	}
}

func TestItemLifecycle(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	ep := s.Endpoint()
	pk := pkHeader(`["a"]`)

	resp, err := c.do(ep, "POST", itemsPath(), pk, `{"id":"1","pk":"a","n":1}`)
	if err != nil {
		t.Fatal(err)
	}
	var created map[string]any
	_ = json.Unmarshal(resp.Body, &created)
	for _, p := range []string{"_rid", "_self", "_etag", "_ts", "_attachments"} {
		if created[p] == nil {
			t.Errorf("created document lacks system property %s", p)
		}
	}
	if resp.ETag == "" || resp.ETag != created["_etag"] {
		t.Errorf("etag header %q must equal the body's _etag %v", resp.ETag, created["_etag"])
	}
	if resp.SessionToken == "" || !strings.Contains(resp.SessionToken, ":1#") {
		t.Errorf("session token %q", resp.SessionToken)
	}
	if resp.RequestCharge != 5 {
		t.Errorf("create of a small document charged %.2f RU, the model says 5.00", resp.RequestCharge)
	}
	etag1 := resp.ETag

	cases := []struct {
		name       string
		method     string
		path       string
		hdr        map[string]string
		body       any
		wantStatus int
		wantSub    int
	}{
		{"duplicate create is a conflict", "POST", itemsPath(), pk, `{"id":"1","pk":"a"}`, 409, 0},
		{"same id in another logical partition is fine", "POST", itemsPath(), pkHeader(`["b"]`), `{"id":"1","pk":"b"}`, 201, 0},
		{"read", "GET", itemPath("1"), pk, nil, 200, 0},
		{"read of a missing item", "GET", itemPath("nope"), pk, nil, 404, 0},
		{"read in the wrong logical partition", "GET", itemPath("1"), pkHeader(`["zz"]`), nil, 404, 0},
		{"replace with a stale etag", "PUT", itemPath("1"), merge(pk, map[string]string{"If-Match": `"stale"`}), `{"id":"1","pk":"a","n":2}`, 412, 0},
		{"replace with the current etag", "PUT", itemPath("1"), merge(pk, map[string]string{"If-Match": etag1}), `{"id":"1","pk":"a","n":2}`, 200, 0},
		{"replace of a missing item", "PUT", itemPath("ghost"), pk, `{"id":"ghost","pk":"a"}`, 404, 0},
		{"replace whose body id differs from the URL", "PUT", itemPath("1"), pk, `{"id":"2","pk":"a"}`, 400, 0},
		{"upsert of an existing item", "POST", itemsPath(), merge(pk, map[string]string{cosmos.HeaderIsUpsert: "true"}), `{"id":"1","pk":"a","n":3}`, 200, 0},
		{"upsert of a new item", "POST", itemsPath(), merge(pk, map[string]string{cosmos.HeaderIsUpsert: "true"}), `{"id":"u","pk":"a"}`, 201, 0},
		{"patch", "PATCH", itemPath("1"), pk, `{"operations":[{"op":"incr","path":"/n","value":10},{"op":"set","path":"/tags","value":["x"]}]}`, 200, 0},
		{"patch in the JS SDK's bare-array form", "PATCH", itemPath("1"), pk, `[{"op":"add","path":"/tags/-","value":"y"}]`, 200, 0},
		{"patch whose condition holds", "PATCH", itemPath("1"), pk, `{"condition":"from c where c.n = 13","operations":[{"op":"set","path":"/ok","value":true}]}`, 200, 0},
		{"patch whose condition fails", "PATCH", itemPath("1"), pk, `{"condition":"from c where c.n = 1","operations":[{"op":"set","path":"/ok","value":false}]}`, 412, 0},
		{"patch replace of a missing path", "PATCH", itemPath("1"), pk, `{"operations":[{"op":"replace","path":"/missing","value":1}]}`, 400, 0},
		{"patch of a system property", "PATCH", itemPath("1"), pk, `{"operations":[{"op":"set","path":"/_ts","value":1}]}`, 400, 0},
		{"patch of the partition key", "PATCH", itemPath("1"), pk, `{"operations":[{"op":"set","path":"/pk","value":"b"}]}`, 400, 0},
		{"patch of the id", "PATCH", itemPath("1"), pk, `{"operations":[{"op":"set","path":"/id","value":"9"}]}`, 400, 0},
		{"patch with eleven operations", "PATCH", itemPath("1"), pk, elevenOps(), 400, 0},
		{"patch with an unknown operation", "PATCH", itemPath("1"), pk, `[{"op":"frobnicate","path":"/a","value":1}]`, 400, 0},
		{"patch of a missing item", "PATCH", itemPath("ghost"), pk, `[{"op":"set","path":"/a","value":1}]`, 404, 0},
		{"delete with a stale etag", "DELETE", itemPath("1"), merge(pk, map[string]string{"If-Match": `"stale"`}), nil, 412, 0},
		{"delete", "DELETE", itemPath("1"), pk, nil, 204, 0},
		{"read after delete", "GET", itemPath("1"), pk, nil, 404, 0},
		{"delete of a missing item", "DELETE", itemPath("1"), pk, nil, 404, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := c.do(ep, tc.method, tc.path, tc.hdr, tc.body)
			status, sub := statusOf(t, resp, err)
			if status != tc.wantStatus || sub != tc.wantSub {
				t.Fatalf("%s %s → %d/%d, want %d/%d: %s", tc.method, tc.path, status, sub, tc.wantStatus, tc.wantSub, resp.Body)
			}
			if status >= 400 {
				var eb cosmos.ErrorBody
				if json.Unmarshal(resp.Body, &eb) != nil || eb.Code == "" || eb.Message == "" {
					t.Fatalf("error without a Cosmos error body: %s", resp.Body)
				}
			}
			// The service sends x-ms-substatus with errors only.
			if has := resp.Header.Get(cosmos.HeaderSubStatus) != ""; has != (status >= 400) {
				t.Errorf("a %d response with x-ms-substatus %q", status, resp.Header.Get(cosmos.HeaderSubStatus))
			}
		})
	}
}

func TestPatchResultIsStored(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	pk := pkHeader(`["a"]`)
	c.do(s.Endpoint(), "POST", itemsPath(), pk, `{"id":"p","pk":"a","n":1,"nested":{"x":1},"arr":[1,2,3],"gone":true}`)
	_, err := c.do(s.Endpoint(), "PATCH", itemPath("p"), pk, `{"operations":[
		{"op":"incr","path":"/n","value":2},
		{"op":"add","path":"/arr/1","value":9},
		{"op":"remove","path":"/gone"},
		{"op":"move","from":"/nested/x","path":"/moved"},
		{"op":"replace","path":"/arr/0","value":"first"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	resp, _ := c.do(s.Endpoint(), "GET", itemPath("p"), pk, nil)
	var doc map[string]any
	_ = json.Unmarshal(resp.Body, &doc)
	got := fmt.Sprint(doc["n"], doc["arr"], doc["gone"], doc["nested"], doc["moved"])
	if want := "3 [first 9 2 3] <nil> map[] 1"; got != want {
		t.Fatalf("patched document = %s, want %s", got, want)
	}
}

func TestPreferMinimalAnswersWritesWithoutABody(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	resp, err := c.do(s.Endpoint(), "POST", itemsPath(), merge(pkHeader(`["a"]`), map[string]string{cosmos.HeaderPrefer: cosmos.PreferMinimal}), `{"id":"m","pk":"a"}`)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("create: %v", err)
	}
	if len(resp.Body) != 0 || resp.ETag == "" {
		t.Fatalf("minimal response has body %q, etag %q", resp.Body, resp.ETag)
	}
}

func TestBadInputGetsTheRightStatusAndAnErrorBody(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	ep := s.Endpoint()
	pk := pkHeader(`["a"]`)
	big := `{"id":"big","pk":"a","blob":"` + strings.Repeat("x", MaxDocumentBytes) + `"}`
	nearly := `{"id":"near","pk":"a","blob":"` + strings.Repeat("x", MaxDocumentBytes-100) + `"}`
	cases := []struct {
		name   string
		method string
		path   string
		hdr    map[string]string
		body   any
		want   int
		sub    int
	}{
		{"malformed JSON", "POST", itemsPath(), pk, `{"id":"x","pk":`, 400, 0},
		{"a JSON array instead of a document", "POST", itemsPath(), pk, `[1,2]`, 400, 0},
		{"no id", "POST", itemsPath(), pk, `{"pk":"a"}`, 400, 0},
		{"numeric id", "POST", itemsPath(), pk, `{"id":5,"pk":"a"}`, 400, 0},
		{"missing partition key header", "POST", itemsPath(), nil, `{"id":"x","pk":"a"}`, 400, 0},
		{"malformed partition key header", "POST", itemsPath(), pkHeader(`["a"`), `{"id":"x","pk":"a"}`, 400, 0},
		{"partition key header that is not an array", "GET", itemPath("x"), pkHeader(`a`), nil, 400, 0},
		{"partition key that does not match the document", "POST", itemsPath(), pkHeader(`["b"]`), `{"id":"x","pk":"a"}`, 400, cosmos.SubPartitionKeyMismatch},
		{"partition key with too many components", "GET", itemPath("x"), pkHeader(`["a","b"]`), nil, 400, 0},
		{"object as partition key value", "POST", itemsPath(), pkHeader(`["a"]`), `{"id":"x","pk":{"a":1}}`, 400, 0},
		{"document over 2 MB", "POST", itemsPath(), pk, big, 413, 0},
		{"document just under 2 MB with system properties", "POST", itemsPath(), pk, nearly, 201, 0},
		{"unknown path", "GET", "/nothing/here", nil, nil, 404, 0},
		{"unknown database", "GET", cosmos.ItemPath("nodb", "items", "x"), pk, nil, 404, 0},
		{"unknown container", "GET", cosmos.ItemPath("db", "nocoll", "x"), pk, nil, 404, 0},
		{"unsupported method on an item", "POST", itemPath("x"), pk, `{}`, 404, 0},
		{"unsupported query", "POST", itemsPath(), merge(pk, map[string]string{cosmos.HeaderIsQuery: "true", "Content-Type": "application/query+json"}), `{"query":"SELECT udf.f(c.id) FROM c"}`, 400, 0},
		{"cross-partition query that needs a plan", "POST", itemsPath(), map[string]string{cosmos.HeaderIsQuery: "true", cosmos.HeaderEnableCrossPartition: "true"}, `{"query":"SELECT * FROM c ORDER BY c.id"}`, 400, 1004},
		{"query body that is not JSON", "POST", itemsPath(), merge(pk, map[string]string{cosmos.HeaderIsQuery: "true"}), `SELECT`, 400, 0},
		{"cross-partition query without opting in", "POST", itemsPath(), map[string]string{cosmos.HeaderIsQuery: "true"}, `{"query":"SELECT * FROM c"}`, 400, 0},
		{"container with a bad partition key path", "POST", "/dbs/db/colls", nil, `{"id":"c2","partitionKey":{"paths":["pk"],"kind":"Hash"}}`, 400, 0},
		{"database without an id", "POST", "/dbs", nil, `{}`, 400, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := c.do(ep, tc.method, tc.path, tc.hdr, tc.body)
			status, sub := statusOf(t, resp, err)
			if status != tc.want || sub != tc.sub {
				t.Fatalf("→ %d/%d, want %d/%d: %.300s", status, sub, tc.want, tc.sub, resp.Body)
			}
			if status >= 400 {
				var eb cosmos.ErrorBody
				if json.Unmarshal(resp.Body, &eb) != nil || eb.Code == "" || eb.Message == "" {
					t.Fatalf("no Cosmos error body: %.300s", resp.Body)
				}
			}
		})
	}
	// Nothing above may have stored anything but the one valid document.
	resp, err := c.do(ep, "GET", itemsPath(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var feed cosmos.DocumentFeed
	_ = json.Unmarshal(resp.Body, &feed)
	if feed.Count != 1 {
		t.Fatalf("store holds %d documents after bad input, want 1", feed.Count)
	}
}

func TestWrongOrMissingSignatureIs401(t *testing.T) {
	s := startTest(t)
	other := newTestClient(t, "dsZQi3KtZmCv1ljt3VNWNm7sQUF1y5rJfC6kv5JiwvW0EndXdDku/dkKBp8/ufDToSxLzR4y+O/0H/t4bQtVNw==")
	resp, err := other.do(s.Endpoint(), "GET", "/", nil, nil)
	if st, _ := statusOf(t, resp, err); st != 401 {
		t.Fatalf("wrong key → %d, want 401", st)
	}
	for name, auth := range map[string]string{"missing": "", "garbage": "nonsense", "aad token": "type=aad&ver=1.0&sig=x.y.z"} {
		req, _ := http.NewRequest("GET", s.Endpoint()+"/dbs", nil)
		req.Header.Set("x-ms-date", cosmos.FormatDate(timeNow()))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		hr, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		hr.Body.Close()
		if hr.StatusCode != 401 {
			t.Errorf("%s authorization → %d, want 401", name, hr.StatusCode)
		}
	}
}

func TestDatabasesAndContainers(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	ep := s.Endpoint()
	steps := []struct {
		method, path string
		body         any
		want         int
	}{
		{"POST", "/dbs", `{"id":"d2"}`, 201},
		{"POST", "/dbs", `{"id":"d2"}`, 409},
		{"GET", "/dbs/d2", nil, 200},
		{"POST", "/dbs/d2/colls", `{"id":"h","partitionKey":{"paths":["/tenant","/user"],"kind":"MultiHash","version":2}}`, 201},
		{"GET", "/dbs/d2/colls/h", nil, 200},
		{"GET", "/dbs/d2/colls", nil, 200},
		{"DELETE", "/dbs/d2/colls/h", nil, 204},
		{"GET", "/dbs/d2/colls/h", nil, 404},
		{"DELETE", "/dbs/d2", nil, 204},
		{"GET", "/dbs/d2", nil, 404},
	}
	for _, st := range steps {
		resp, err := c.do(ep, st.method, st.path, nil, st.body)
		if got, _ := statusOf(t, resp, err); got != st.want {
			t.Fatalf("%s %s → %d, want %d: %s", st.method, st.path, got, st.want, resp.Body)
		}
	}
	resp, _ := c.do(ep, "GET", "/dbs", nil, nil)
	var feed cosmos.DatabaseFeed
	_ = json.Unmarshal(resp.Body, &feed)
	if feed.Count != 1 || feed.Databases[0].ID != "db" {
		t.Fatalf("databases = %+v", feed)
	}
	resp, _ = c.do(ep, "GET", "/dbs/db/colls/items", nil, nil)
	var coll cosmos.Container
	_ = json.Unmarshal(resp.Body, &coll)
	if len(coll.RID) != 12 || coll.PartitionKey.Paths[0] != "/pk" || coll.PartitionKey.Version != 2 {
		t.Fatalf("container = %+v (an 8-byte _rid is 12 base64 characters)", coll)
	}
}

func TestHierarchicalPartitionKeys(t *testing.T) {
	s := startTest(t, func(c *Config) {
		c.Databases = []DatabaseConfig{{ID: "db", Containers: []ContainerConfig{{ID: "items", PartitionKey: []string{"/tenant", "/user"}}}}}
	})
	c := newTestClient(t, s.Key())
	pk := pkHeader(`["t1","u1"]`)
	resp, err := c.do(s.Endpoint(), "POST", itemsPath(), pk, `{"id":"1","tenant":"t1","user":"u1"}`)
	if st, _ := statusOf(t, resp, err); st != 201 {
		t.Fatalf("create → %d: %s", st, resp.Body)
	}
	resp, err = c.do(s.Endpoint(), "GET", itemPath("1"), pk, nil)
	if st, _ := statusOf(t, resp, err); st != 200 {
		t.Fatalf("read → %d", st)
	}
	resp, err = c.do(s.Endpoint(), "GET", itemPath("1"), pkHeader(`["t1","u2"]`), nil)
	if st, _ := statusOf(t, resp, err); st != 404 {
		t.Fatalf("read with another user → %d, want 404", st)
	}
}

func TestPartitionKeyRangesFeedHonoursETag(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	resp, err := c.do(s.Endpoint(), "GET", cosmos.PKRangesPath("db", "items"), map[string]string{cosmos.HeaderAIM: "Incremental Feed"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var feed cosmos.PartitionKeyRangeFeed
	_ = json.Unmarshal(resp.Body, &feed)
	var bounds []string
	for _, r := range feed.Ranges {
		bounds = append(bounds, r.MinInclusive+"-"+r.MaxExclusive)
	}
	if got := strings.Join(bounds, " "); got != "-10 10-20 20-30 30-FF" {
		t.Fatalf("ranges = %s", got)
	}
	if resp.ETag == "" {
		t.Fatal("pkranges feed needs an etag, or the Go SDK loops")
	}
	resp, err = c.do(s.Endpoint(), "GET", cosmos.PKRangesPath("db", "items"), map[string]string{cosmos.HeaderIfNoneMatch: resp.ETag}, nil)
	if st, _ := statusOf(t, resp, err); st != 304 {
		t.Fatalf("unchanged feed → %d, want 304", st)
	}
}

func TestItemsLandInTheRangeTheirKeyHashesTo(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	seen := map[string]int{}
	for i := 0; i < 40; i++ {
		pkv := fmt.Sprintf("tenant-%d", i)
		pk, _ := cosmos.PK(pkv)
		resp, err := c.do(s.Endpoint(), "POST", itemsPath(), pkHeader(pk.JSON()), fmt.Sprintf(`{"id":"x","pk":%q}`, pkv))
		if err != nil {
			t.Fatal(err)
		}
		got := resp.Header.Get(cosmos.HeaderPartitionKeyRangeID)
		bounds := cosmos.EvenRangeBoundaries(4)
		var ranges []cosmos.PartitionKeyRange
		for j := 0; j < 4; j++ {
			ranges = append(ranges, cosmos.PartitionKeyRange{ID: fmt.Sprint(j), MinInclusive: bounds[j], MaxExclusive: bounds[j+1]})
		}
		want, _ := cosmos.RangeFor(cosmos.EffectivePartitionKey(pk), ranges)
		if got != want.ID {
			t.Fatalf("key %s stored in range %s, its hash says %s", pkv, got, want.ID)
		}
		seen[got]++
	}
	if len(seen) != 4 {
		t.Fatalf("40 keys used only ranges %v", seen)
	}
}

func TestQueries(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	for i := 0; i < 25; i++ {
		pkv := []string{"a", "b"}[i%2]
		c.do(s.Endpoint(), "POST", itemsPath(), pkHeader(`["`+pkv+`"]`), fmt.Sprintf(`{"id":"%d","pk":%q,"n":%d,"even":%v}`, i, pkv, i, i%2 == 0))
	}
	query := func(hdr map[string]string, q string, params ...cosmos.QueryParameter) ([]map[string]any, *cosmos.Response) {
		t.Helper()
		hdr = merge(hdr, map[string]string{cosmos.HeaderIsQuery: "true", "Content-Type": "application/query+json"})
		resp, err := c.do(s.Endpoint(), "POST", itemsPath(), hdr, cosmos.QuerySpec{Query: q, Parameters: params})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var feed struct{ Documents []map[string]any }
		_ = json.Unmarshal(resp.Body, &feed)
		return feed.Documents, resp
	}
	docs, _ := query(pkHeader(`["a"]`), "SELECT * FROM c")
	if len(docs) != 13 {
		t.Errorf("single-partition SELECT * returned %d, want 13", len(docs))
	}
	docs, _ = query(pkHeader(`["a"]`), "SELECT * FROM c WHERE c.n = @n", cosmos.QueryParameter{Name: "@n", Value: json.RawMessage("4")})
	if len(docs) != 1 || docs[0]["id"] != "4" {
		t.Errorf("parameterised query returned %v", docs)
	}
	docs, _ = query(pkHeader(`["b"]`), "SELECT * FROM c WHERE c.n = @n", cosmos.QueryParameter{Name: "@n", Value: json.RawMessage("4")})
	if len(docs) != 0 {
		t.Errorf("query in another logical partition returned %v", docs)
	}
	docs, _ = query(map[string]string{cosmos.HeaderEnableCrossPartition: "true"}, "SELECT * FROM c WHERE c.n >= 20")
	if len(docs) != 5 {
		t.Errorf("cross-partition query returned %d, want 5", len(docs))
	}
	docs, _ = query(pkHeader(`["a"]`), "SELECT TOP 3 * FROM c")
	if len(docs) != 3 {
		t.Errorf("TOP 3 returned %d", len(docs))
	}
	resp, err := c.do(s.Endpoint(), "POST", itemsPath(), map[string]string{cosmos.HeaderIsQuery: "true", cosmos.HeaderEnableCrossPartition: "true"}, cosmos.QuerySpec{Query: "SELECT TOP 3 * FROM c"})
	if code, sub := statusOf(t, resp, err); code != 400 || sub != 1004 {
		t.Errorf("cross-partition TOP 3 answered %d/%d, want 400/1004 (it needs a query plan)", code, sub)
	}
	// Paging: 13 documents in pages of 5 → 5, 5, 3.
	var total []string
	cont := ""
	for pages := 0; pages < 10; pages++ {
		hdr := merge(pkHeader(`["a"]`), map[string]string{cosmos.HeaderMaxItemCount: "5"})
		if cont != "" {
			hdr[cosmos.HeaderContinuation] = cont
		}
		docs, resp := query(hdr, "SELECT * FROM c")
		for _, d := range docs {
			total = append(total, d["id"].(string))
		}
		cont = resp.Header.Get(cosmos.HeaderContinuation)
		if cont == "" {
			break
		}
	}
	if len(total) != 13 {
		t.Errorf("paging returned %d documents, want 13: %v", len(total), total)
	}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func elevenOps() string {
	ops := make([]string, 11)
	for i := range ops {
		ops[i] = fmt.Sprintf(`{"op":"set","path":"/f%d","value":%d}`, i, i)
	}
	return "[" + strings.Join(ops, ",") + "]"
}
