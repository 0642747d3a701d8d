package emulator

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
)

func TestRUBudgetRefillsAndSaysWhenARequestFits(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	type step struct {
		at     time.Duration
		charge float64
		wait   time.Duration // 0: spent
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"a full budget spends up to one second's share, then says when the next fits", []step{
			{0, 60, 0}, {0, 40, 0}, {0, 5, 50 * time.Millisecond},
		}},
		{"waiting the retry-after makes the request fit", []step{
			{0, 100, 0}, {0, 5, 50 * time.Millisecond}, {49 * time.Millisecond, 5, time.Millisecond}, {50 * time.Millisecond, 5, 0},
		}},
		{"the budget is full again after a second", []step{
			{0, 100, 0}, {time.Second, 100, 0}, {time.Second, 1, 10 * time.Millisecond},
		}},
		{"it refills continuously", []step{
			{0, 100, 0}, {300 * time.Millisecond, 30, 0}, {300 * time.Millisecond, 1, 10 * time.Millisecond},
		}},
		{"a charge over a second's share waits for a full budget and leaves debt", []step{
			{0, 1, 0}, {0, 250, 10 * time.Millisecond}, {10 * time.Millisecond, 250, 0}, {10 * time.Millisecond, 1, 1510 * time.Millisecond},
		}},
		{"a retry-after is at least a millisecond", []step{
			{0, 100, 0}, {0, 0.01, time.Millisecond},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &ruBudget{at: t0}
			for i, st := range tc.steps {
				if got := b.take(st.charge, 100, at(st.at)); got != st.wait {
					t.Errorf("step %d (%v RU at +%v): wait %v, want %v", i, st.charge, st.at, got, st.wait)
				}
			}
		})
	}
}

// throttleRig is an emulator enforcing throughput on a fake clock, with 4 ranges and a
// container db/items of the default 400 RU/s: 100 RU/s per range.
type throttleRig struct {
	t   *testing.T
	s   *Server
	clk *clock.Fake
	c   *testClient
	// keys holds one partition key (header JSON) per range id of db/items.
	keys map[string]string
}

func newThrottleRig(t *testing.T, enforce bool) *throttleRig {
	clk := clock.NewFake(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	s := startWithClock(t, clk, func(cfg *Config) { cfg.EnforceThroughput = enforce })
	r := &throttleRig{t: t, s: s, clk: clk, c: newTestClientAt(t, s.Key(), clk)}
	r.keys = r.keysByRange("db", "items")
	return r
}

func (r *throttleRig) keysByRange(db, coll string) map[string]string {
	c, err := r.s.store.container(db, coll)
	if err != nil {
		r.t.Fatal(err)
	}
	out := map[string]string{}
	for i := 0; len(out) < len(c.partitions()); i++ {
		raw := fmt.Sprintf(`["k%d"]`, i)
		pk, _ := cosmos.ParsePartitionKeyJSON(raw)
		if id := c.partitionFor(pk).rng.ID; out[id] == "" {
			out[id] = raw
		}
	}
	return out
}

// create writes a small document (5 RU) with partition key pk (header JSON).
func (r *throttleRig) create(coll, pk, id string) *cosmos.Response {
	r.t.Helper()
	var v []string
	_ = json.Unmarshal([]byte(pk), &v)
	resp, err := r.c.do(r.s.Endpoint(), "POST", cosmos.ItemsPath("db", coll), pkHeader(pk), `{"id":"`+id+`","pk":"`+v[0]+`"}`)
	if resp == nil {
		r.t.Fatal(err)
	}
	return resp
}

// spend creates n documents in pk's range, each of which must be admitted.
func (r *throttleRig) spend(coll, pk string, n int, prefix string) {
	r.t.Helper()
	for i := range n {
		if resp := r.create(coll, pk, fmt.Sprintf("%s%d", prefix, i)); resp.StatusCode != 201 || resp.RequestCharge != 5 {
			r.t.Fatalf("create %d in %s: %d/%d charged %v, want 201 charged 5", i, pk, resp.StatusCode, resp.SubStatus, resp.RequestCharge)
		}
	}
}

// wantThrottled checks a 429/3200 with retryAfterMs ("": any positive), 0 RU charged.
func wantThrottled(t *testing.T, what string, resp *cosmos.Response, retryAfterMs string) {
	t.Helper()
	if resp.StatusCode != 429 || resp.SubStatus != SubRUBudgetExceeded {
		t.Fatalf("%s: %d/%d %s, want 429/3200", what, resp.StatusCode, resp.SubStatus, resp.Body)
	}
	if got := resp.Header.Get(cosmos.HeaderRetryAfterMs); got != retryAfterMs && (retryAfterMs != "" || got == "" || got == "0") {
		t.Errorf("%s: %s %q, want %q", what, cosmos.HeaderRetryAfterMs, got, retryAfterMs)
	}
	if resp.RequestCharge != 0 {
		t.Errorf("%s: charged %v RU, want 0", what, resp.RequestCharge)
	}
	for _, h := range []string{cosmos.HeaderETag, cosmos.HeaderContinuation} {
		if v := resp.Header.Get(h); v != "" {
			t.Errorf("%s: the 429 carries %s %q", what, h, v)
		}
	}
}

func TestAWriteOverTheRangesBudgetIsA429WithRetryAfterAndNotApplied(t *testing.T) {
	r := newThrottleRig(t, true)
	pk := r.keys["0"]
	r.spend("items", pk, 20, "a") // 20 × 5 RU = range 0's 100 RU/s

	resp := r.create("items", pk, "over")
	wantThrottled(t, "the 21st create", resp, "50") // 5 RU at 100 RU/s
	if !strings.Contains(string(resp.Body), "Request rate is large") || !strings.Contains(string(resp.Body), "range 0 of container items") {
		t.Errorf("the 429's message: %s", resp.Body)
	}
	c, _ := r.s.store.container("db", "items")
	pkv, _ := cosmos.ParsePartitionKeyJSON(pk)
	if v, _, _ := r.s.store.readItem(c, pkv, "over", 0); v != nil {
		t.Error("the throttled create was stored")
	}

	// The other ranges have budgets of their own.
	for id, other := range r.keys {
		if id != "0" {
			if resp := r.create("items", other, "elsewhere"); resp.StatusCode != 201 {
				t.Errorf("a create in range %s: %d, want 201", id, resp.StatusCode)
			}
		}
	}
	// Reads are throttled too; metadata is not.
	read, _ := r.c.do(r.s.Endpoint(), "GET", itemPath("a0"), pkHeader(pk), nil)
	wantThrottled(t, "a read", read, "10")
	// Each region has budgets of its own, as provisioned throughput applies per region.
	if west, _ := r.c.do(regionURL(t, r.s, "West US"), "GET", itemPath("a0"), pkHeader(pk), nil); west == nil || west.StatusCode != 200 {
		t.Errorf("a read of range 0 in West US: %+v, want 200", west)
	}
	for _, path := range []string{"/", "/dbs/db/colls/items", "/dbs/db/colls/items/pkranges", "/offers"} {
		if resp, _ := r.c.do(r.s.Endpoint(), "GET", path, nil, nil); resp == nil || resp.StatusCode != 200 {
			t.Errorf("GET %s with the range's budget spent: %+v, want 200", path, resp)
		}
	}

	r.clk.Advance(49 * time.Millisecond)
	wantThrottled(t, "1 ms early", r.create("items", pk, "over"), "1")
	r.clk.Advance(time.Millisecond)
	if resp := r.create("items", pk, "over"); resp.StatusCode != 201 {
		t.Errorf("after the retry-after: %d/%d, want 201", resp.StatusCode, resp.SubStatus)
	}
	if got := r.s.State().Throttled; got != 3 {
		t.Errorf("State.Throttled %d, want 3", got)
	}
}

func TestQueriesChangeFeedAndBatchesDrawOnTheBudget(t *testing.T) {
	r := newThrottleRig(t, true)
	pk := r.keys["1"]
	r.spend("items", pk, 20, "a")
	ep := r.s.Endpoint()

	q, _ := r.c.do(ep, "POST", itemsPath(), merge(queryHeaders(), merge(pkHeader(pk), map[string]string{cosmos.HeaderMaxItemCount: "1"})), `{"query":"SELECT * FROM c"}`)
	wantThrottled(t, "a query", q, "")
	cf, _ := r.c.do(ep, "GET", itemsPath(), merge(rangeHeader("1"), map[string]string{cosmos.HeaderAIM: "Incremental Feed"}), nil)
	wantThrottled(t, "a change feed read", cf, "")

	atomic := `[{"operationType":"Create","resourceBody":{"id":"b1","pk":"` + strings.Trim(pk, `["]`) + `"}}]`
	b, _ := r.c.do(ep, "POST", itemsPath(), batchHeaders(true, pkHeader(pk)), atomic)
	wantThrottled(t, "a transactional batch", b, "50")
	c, _ := r.s.store.container("db", "items")
	pkv, _ := cosmos.ParsePartitionKeyJSON(pk)
	if v, _, _ := r.s.store.readItem(c, pkv, "b1", 0); v != nil {
		t.Error("the throttled batch was stored")
	}

	// Bulk answers each operation: the one in the spent range gets its own 429.
	other := r.keys["2"]
	bulk := `[{"operationType":"Create","partitionKey":"` + strings.ReplaceAll(pk, `"`, `\"`) + `","resourceBody":{"id":"u1","pk":"` + strings.Trim(pk, `["]`) + `"}},` +
		`{"operationType":"Create","partitionKey":"` + strings.ReplaceAll(other, `"`, `\"`) + `","resourceBody":{"id":"u2","pk":"` + strings.Trim(other, `["]`) + `"}}]`
	resp, _ := r.c.do(ep, "POST", itemsPath(), batchHeaders(false, nil), bulk)
	if resp == nil || resp.StatusCode != 207 {
		t.Fatalf("bulk: %+v, want 207", resp)
	}
	res := decodeBatchResults(t, resp)
	if res[0].StatusCode != 429 || res[0].SubStatusCode != SubRUBudgetExceeded || res[0].RetryAfterMs != 50 || res[0].RequestCharge != 0 {
		t.Errorf("bulk operation in the spent range: %+v, want 429/3200 retry after 50 ms, 0 RU", res[0])
	}
	if res[1].StatusCode != 201 || res[1].RequestCharge != 5 || resp.RequestCharge != 5 {
		t.Errorf("bulk operation in another range: %+v (request charged %v), want 201, 5 RU", res[1], resp.RequestCharge)
	}
}

func TestOfferReplaceChangesTheBudgetAtOnce(t *testing.T) {
	r := newThrottleRig(t, true)
	pk := r.keys["3"]
	r.spend("items", pk, 20, "a")
	wantThrottled(t, "at 400 RU/s", r.create("items", pk, "x"), "50")

	resp, _ := r.c.do(r.s.Endpoint(), "GET", "/offers", nil, nil)
	var feed struct{ Offers []offerBody }
	_ = json.Unmarshal(resp.Body, &feed)
	id := feed.Offers[0].ID
	replace := func(ru int) {
		t.Helper()
		body := fmt.Sprintf(`{"offerVersion":"V2","content":{"offerThroughput":%d},"id":"%s"}`, ru, id)
		if resp, _ := r.c.do(r.s.Endpoint(), "PUT", "/offers/"+id, nil, body); resp == nil || resp.StatusCode != 200 {
			t.Fatalf("replace with %d RU/s: %+v", ru, resp)
		}
	}
	replace(4000) // 1,000 RU/s per range, of which 100 are spent
	r.spend("items", pk, 180, "b")
	wantThrottled(t, "at 4,000 RU/s", r.create("items", pk, "x"), "5")
	replace(400) // 1,000 RU spent against 100 RU/s per range: 9.05 s of debt for 5 RU
	wantThrottled(t, "back at 400 RU/s", r.create("items", pk, "x"), "9050")
}

func TestAutoscaleMaxAndSharedDatabaseThroughput(t *testing.T) {
	r := newThrottleRig(t, true)
	ep := r.s.Endpoint()
	auto := map[string]string{headerOfferAutoscale: `{"maxThroughput":4000}`}
	if resp, _ := r.c.do(ep, "POST", "/dbs/db/colls", auto, `{"id":"auto","partitionKey":{"paths":["/pk"],"kind":"Hash"}}`); resp == nil || resp.StatusCode != 201 {
		t.Fatalf("autoscale container: %+v", resp)
	}
	if resp, _ := r.c.do(ep, "POST", "/dbs", map[string]string{headerOfferThroughput: "800"}, `{"id":"shared"}`); resp == nil || resp.StatusCode != 201 {
		t.Fatalf("shared database: %+v", resp)
	}
	for _, id := range []string{"a", "b"} {
		if resp, _ := r.c.do(ep, "POST", "/dbs/shared/colls", nil, `{"id":"`+id+`","partitionKey":{"paths":["/pk"],"kind":"Hash"}}`); resp == nil || resp.StatusCode != 201 {
			t.Fatalf("container %s: %+v", id, resp)
		}
	}
	budget := func(db, coll string) *rangeBudget {
		c, _ := r.s.store.container(db, coll)
		return r.s.budgetFor(0, c, c.partitions()[0])
	}
	if b := budget("db", "auto"); b.perSecond != 1000 {
		t.Errorf("autoscale max 4,000 over 4 ranges: %v RU/s per range, want 1000", b.perSecond)
	}
	a, b := budget("shared", "a"), budget("shared", "b")
	if a.perSecond != 200 || a.b != b.b {
		t.Errorf("containers of a database with 800 RU/s: %v RU/s per range, same budget %v; want 200, shared", a.perSecond, a.b == b.b)
	}

	// Range 0 of a and range 0 of b spend one budget; range 1 of b has its own.
	keys := r.keysByRange("shared", "a")
	shared := func(coll, pk, id string) *cosmos.Response {
		var v []string
		_ = json.Unmarshal([]byte(pk), &v)
		resp, _ := r.c.do(ep, "POST", cosmos.ItemsPath("shared", coll), pkHeader(pk), `{"id":"`+id+`","pk":"`+v[0]+`"}`)
		return resp
	}
	for i := range 40 {
		if resp := shared("a", keys["0"], fmt.Sprint(i)); resp.StatusCode != 201 {
			t.Fatalf("create %d in a: %d", i, resp.StatusCode)
		}
	}
	wantThrottled(t, "b's range 0 after a spent the shared budget", shared("b", keys["0"], "x"), "25")
	if resp := shared("b", keys["1"], "x"); resp.StatusCode != 201 {
		t.Errorf("b's range 1: %d, want 201", resp.StatusCode)
	}
}

func TestThroughputIsEnforcedOnlyWhenAskedTo(t *testing.T) {
	r := newThrottleRig(t, false)
	pk := r.keys["0"]
	r.spend("items", pk, 40, "a") // twice the range's budget: bookkeeping only
	if st := r.s.State(); st.EnforceThroughput || st.Throttled != 0 {
		t.Errorf("state %+v, want not enforced", st)
	}

	ep := r.s.Endpoint()
	put := func(body string) *cosmos.Response {
		resp, _ := r.c.do(ep, "PUT", "/_emulator/throughput", nil, body)
		return resp
	}
	for _, bad := range []string{`{}`, `{"enabled":true}`, `nonsense`} {
		if resp := put(bad); resp == nil || resp.StatusCode != 400 {
			t.Errorf("PUT throughput %s: %+v, want 400", bad, resp)
		}
	}
	resp := put(`{"enforce":true}`)
	var st State
	if resp == nil || resp.StatusCode != 200 || json.Unmarshal(resp.Body, &st) != nil || !st.EnforceThroughput {
		t.Fatalf("PUT throughput on: %+v", resp)
	}
	r.spend("items", pk, 20, "b") // turned on with a full budget
	wantThrottled(t, "once enforced", r.create("items", pk, "x"), "50")
	if resp := put(`{"enforce":false}`); resp == nil || resp.StatusCode != 200 {
		t.Fatalf("PUT throughput off: %+v", resp)
	}
	r.spend("items", pk, 1, "c")
}
