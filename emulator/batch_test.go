package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

func batchHeaders(atomic bool, extra map[string]string) map[string]string {
	h := map[string]string{headerIsBatchRequest: "True", headerBatchAtomic: fmt.Sprint(atomic)}
	for k, v := range extra {
		h[k] = v
	}
	return h
}

func decodeBatchResults(t *testing.T, resp *cosmos.Response) []batchResult {
	t.Helper()
	var out []batchResult
	if err := json.Unmarshal(resp.Body, &out); err != nil {
		t.Fatalf("decoding batch results %s: %v", resp.Body, err)
	}
	return out
}

func TestBulkRunsEachOperationOnItsOwn(t *testing.T) {
	s := startTest(t, func(cfg *Config) { cfg.Ranges = 1 })
	c := newTestClient(t, s.Key())
	ep := s.Endpoint()
	if resp, err := c.do(ep, "POST", itemsPath(), pkHeader(`["b"]`), `{"id":"taken","pk":"b"}`); err != nil || resp.StatusCode != 201 {
		t.Fatalf("seed: %v", err)
	}
	ops := `[
		{"operationType":"Create","partitionKey":"[\"a\"]","resourceBody":{"id":"1","pk":"a"}},
		{"operationType":"Create","partitionKey":"[\"b\"]","resourceBody":{"id":"taken","pk":"b"}},
		{"operationType":"Upsert","partitionKey":"[\"c\"]","resourceBody":{"id":"2","pk":"c"}},
		{"operationType":"Read","partitionKey":"[\"b\"]","id":"taken"},
		{"operationType":"Delete","partitionKey":"[\"b\"]","id":"taken"}
	]`
	resp, err := c.do(ep, "POST", itemsPath(), batchHeaders(false, map[string]string{cosmos.HeaderPartitionKeyRangeID: "0"}), ops)
	if resp == nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusMultiStatus {
		t.Errorf("status %d, want 207 (one operation failed)", resp.StatusCode)
	}
	got := decodeBatchResults(t, resp)
	want := []int{201, 409, 201, 200, 204}
	if len(got) != len(want) {
		t.Fatalf("%d results, want %d: %s", len(got), len(want), resp.Body)
	}
	for i, r := range got {
		if r.StatusCode != want[i] {
			t.Errorf("operation %d: status %d, want %d", i, r.StatusCode, want[i])
		}
	}
	// Non-atomic: the operations around the failed one are stored.
	for _, tc := range []struct{ pk, id string }{{`["a"]`, "1"}, {`["c"]`, "2"}} {
		if resp, _ := c.do(ep, "GET", itemPath(tc.id), pkHeader(tc.pk), nil); resp == nil || resp.StatusCode != 200 {
			t.Errorf("document %s was not stored by bulk", tc.id)
		}
	}
	if resp, _ := c.do(ep, "GET", itemPath("taken"), pkHeader(`["b"]`), nil); resp == nil || resp.StatusCode != 404 {
		t.Errorf("the bulk delete did not apply")
	}
}

func TestBulkStopsAtTheFirstFailureWithoutContinueOnError(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	ep := s.Endpoint()
	ops := `[
		{"operationType":"Read","partitionKey":"[\"a\"]","id":"missing"},
		{"operationType":"Create","partitionKey":"[\"a\"]","resourceBody":{"id":"1","pk":"a"}}
	]`
	resp, _ := c.do(ep, "POST", itemsPath(), batchHeaders(false, map[string]string{headerBatchContinueOnError: "false"}), ops)
	if resp == nil || resp.StatusCode != http.StatusMultiStatus {
		t.Fatalf("want 207, got %+v", resp)
	}
	got := decodeBatchResults(t, resp)
	if got[0].StatusCode != 404 || got[1].StatusCode != statusFailedDependency {
		t.Errorf("statuses %d, %d; want 404, 424", got[0].StatusCode, got[1].StatusCode)
	}
}

func TestBulkOperationOutsideTheTargetRangeIsGone(t *testing.T) {
	s := startTest(t, func(cfg *Config) { cfg.Ranges = 4 })
	c := newTestClient(t, s.Key())
	ep := s.Endpoint()
	cont, err := s.store.container("db", "items")
	if err != nil {
		t.Fatal(err)
	}
	var in, out string
	for i := 0; in == "" || out == ""; i++ {
		v := fmt.Sprintf("k%d", i)
		if cont.partitionFor(cosmos.PartitionKey{{Kind: cosmos.KindString, Str: v}}).rng.ID == "0" {
			in = v
		} else {
			out = v
		}
	}
	ops := fmt.Sprintf(`[
		{"operationType":"Create","partitionKey":"[\"%s\"]","resourceBody":{"id":"1","pk":"%s"}},
		{"operationType":"Create","partitionKey":"[\"%s\"]","resourceBody":{"id":"2","pk":"%s"}}
	]`, in, in, out, out)
	// The .NET and Java SDKs prefix the range id with the collection's _rid.
	resp, _ := c.do(ep, "POST", itemsPath(), batchHeaders(false, map[string]string{cosmos.HeaderPartitionKeyRangeID: cont.meta.RID + ",0"}), ops)
	if resp == nil {
		t.Fatal("no response")
	}
	got := decodeBatchResults(t, resp)
	if got[0].StatusCode != 201 || got[1].StatusCode != 410 || got[1].SubStatusCode != cosmos.SubPartitionKeyRangeGone {
		t.Errorf("results %+v; want 201, then 410/1002 for the key of another range", got)
	}
}

func TestBatchRequestLimitsAndShape(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	ep := s.Endpoint()
	var many []string
	for i := 0; i <= maxBatchOperations; i++ {
		many = append(many, fmt.Sprintf(`{"operationType":"Create","resourceBody":{"id":"%d","pk":"a"}}`, i))
	}
	cases := []struct {
		name   string
		hdr    map[string]string
		body   string
		status int
		in     string
	}{
		{"more than 100 operations", batchHeaders(true, pkHeader(`["a"]`)), "[" + strings.Join(many, ",") + "]", 400, "limit is 100"},
		{"no operations", batchHeaders(true, pkHeader(`["a"]`)), "[]", 400, "no operations"},
		{"not an array", batchHeaders(true, pkHeader(`["a"]`)), `{"id":"1","pk":"a"}`, 400, "JSON array of operations"},
		{"atomic batch without a partition key", batchHeaders(true, nil), `[{"operationType":"Read","id":"1"}]`, 400, "partition key"},
		{"unknown operation type fails the batch", batchHeaders(true, pkHeader(`["a"]`)), `[{"operationType":"Explode","id":"1"}]`, 207, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, _ := c.do(ep, "POST", itemsPath(), tc.hdr, tc.body)
			if resp == nil || resp.StatusCode != tc.status {
				t.Fatalf("got %+v, want status %d", resp, tc.status)
			}
			if tc.in != "" && !strings.Contains(string(resp.Body), tc.in) {
				t.Errorf("body %s does not mention %q", resp.Body, tc.in)
			}
		})
	}
	// Exactly 100 operations is fine.
	resp, _ := c.do(ep, "POST", itemsPath(), batchHeaders(true, pkHeader(`["a"]`)), "["+strings.Join(many[:maxBatchOperations], ",")+"]")
	if resp == nil || resp.StatusCode != 200 {
		t.Fatalf("a batch of 100 creates: %+v", resp)
	}
}

func TestBatchDocumentWithAnotherPartitionKeyFailsTheBatch(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	ep := s.Endpoint()
	ops := `[{"operationType":"Create","resourceBody":{"id":"1","pk":"a"}},{"operationType":"Create","resourceBody":{"id":"2","pk":"b"}}]`
	resp, _ := c.do(ep, "POST", itemsPath(), batchHeaders(true, pkHeader(`["a"]`)), ops)
	if resp == nil || resp.StatusCode != 207 {
		t.Fatalf("got %+v, want 207", resp)
	}
	got := decodeBatchResults(t, resp)
	if got[0].StatusCode != 424 || got[1].StatusCode != 400 || got[1].SubStatusCode != cosmos.SubPartitionKeyMismatch {
		t.Errorf("results %+v, want 424 then 400/1001", got)
	}
}

func TestAtomicBatchSurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	withDir := func(cfg *Config) { cfg.DataDir = dir }
	s := startTest(t, withDir)
	c := newTestClient(t, s.Key())
	ops := `[{"operationType":"Create","resourceBody":{"id":"1","pk":"a","n":1}},{"operationType":"Create","resourceBody":{"id":"2","pk":"a"}},{"operationType":"Delete","id":"2"}]`
	resp, _ := c.do(s.Endpoint(), "POST", itemsPath(), batchHeaders(true, pkHeader(`["a"]`)), ops)
	if resp == nil || resp.StatusCode != 200 {
		t.Fatalf("batch: %+v", resp)
	}
	s.Close()
	s2 := startTest(t, withDir)
	c2 := newTestClient(t, s2.Key())
	if resp, _ := c2.do(s2.Endpoint(), "GET", itemPath("1"), pkHeader(`["a"]`), nil); resp == nil || resp.StatusCode != 200 {
		t.Errorf("the batch's create did not survive a restart: %+v", resp)
	}
	if resp, _ := c2.do(s2.Endpoint(), "GET", itemPath("2"), pkHeader(`["a"]`), nil); resp == nil || resp.StatusCode != 404 {
		t.Errorf("a document created and deleted in one batch exists after a restart: %+v", resp)
	}
	// A new write to the partition continues after the batch's LSNs.
	resp, _ = c2.do(s2.Endpoint(), "POST", itemsPath(), pkHeader(`["a"]`), `{"id":"3","pk":"a"}`)
	if resp == nil || resp.StatusCode != 201 {
		t.Fatalf("create after restart: %+v", resp)
	}
}

func TestBatchAppliesTheServiceLimits(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	longPK := strings.Repeat("é", 1100) // 2,200 bytes of UTF-8: over the 2 KB limit
	ops := fmt.Sprintf(`[{"operationType":"Create","resourceBody":{"id":"1","pk":%q}}]`, longPK)
	resp, _ := c.do(s.Endpoint(), "POST", itemsPath(), batchHeaders(true, pkHeader(fmt.Sprintf("[%q]", longPK))), ops)
	if resp == nil {
		t.Fatal("no response")
	}
	if resp.StatusCode == 200 {
		t.Fatalf("a batch stored a document with a %d-byte partition key", len(longPK))
	}
	if resp.StatusCode == 207 {
		if got := decodeBatchResults(t, resp); got[0].StatusCode != 400 {
			t.Errorf("the operation failed with %d, want 400", got[0].StatusCode)
		}
	}
	deep := strings.Repeat(`{"a":`, 200) + "1" + strings.Repeat("}", 200)
	ops = `[{"operationType":"Create","resourceBody":{"id":"2","pk":"a","x":` + deep + `}}]`
	resp, _ = c.do(s.Endpoint(), "POST", itemsPath(), batchHeaders(true, pkHeader(`["a"]`)), ops)
	if resp == nil || resp.StatusCode != 207 || decodeBatchResults(t, resp)[0].StatusCode != 400 {
		t.Errorf("a document nested 200 levels deep: %+v, want 207 with 400", resp)
	}
}
