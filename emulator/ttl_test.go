package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
)

// ttlIDs lists the ids a query of container coll returns, sorted.
func ttlIDs(t *testing.T, c *testClient, ep, coll string) []string {
	t.Helper()
	resp := c.mustDo(ep, "POST", "/dbs/db/colls/"+coll+"/docs", map[string]string{
		"Content-Type": "application/query+json", cosmos.HeaderIsQuery: "True", cosmos.HeaderPartitionKey: `["a"]`,
	}, `{"query":"SELECT c.id FROM c"}`)
	var feed struct{ Documents []struct{ ID string } }
	if err := json.Unmarshal(resp.Body, &feed); err != nil {
		t.Fatalf("query answer %d %s: %v", resp.StatusCode, resp.Body, err)
	}
	var ids []string
	for _, d := range feed.Documents {
		ids = append(ids, d.ID)
	}
	sort.Strings(ids)
	return ids
}

// ttlFeedIDs lists the ids the change feed of coll's only range gives from the start.
func ttlFeedIDs(t *testing.T, c *testClient, ep, coll string) []string {
	t.Helper()
	resp := c.mustDo(ep, "GET", "/dbs/db/colls/"+coll+"/docs", map[string]string{
		cosmos.HeaderAIM: "Incremental Feed", cosmos.HeaderPartitionKey: `["a"]`,
	})
	if resp.StatusCode == http.StatusNotModified {
		return nil
	}
	var feed struct{ Documents []struct{ ID string } }
	if err := json.Unmarshal(resp.Body, &feed); err != nil {
		t.Fatalf("change feed answer %d %s: %v", resp.StatusCode, resp.Body, err)
	}
	var ids []string
	for _, d := range feed.Documents {
		ids = append(ids, d.ID)
	}
	sort.Strings(ids)
	return ids
}

func TestItemsExpireByTheContainersDefaultTTLOrTheirOwn(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	s := startWithClock(t, clk, nil)
	c := newTestClientAt(t, s.Key(), clk)
	ep := s.Endpoint()
	resp := c.mustDo(ep, "POST", "/dbs/db/colls", nil, `{"id":"ttl","partitionKey":{"paths":["/pk"],"kind":"Hash"},"defaultTtl":10}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create a container with defaultTtl 10 → %d %s", resp.StatusCode, resp.Body)
	}
	var meta cosmos.Container
	if err := json.Unmarshal(c.mustDo(ep, "GET", "/dbs/db/colls/ttl", nil).Body, &meta); err != nil || meta.DefaultTTL == nil || *meta.DefaultTTL != 10 {
		t.Fatalf("the container should keep defaultTtl 10: %+v %v", meta.DefaultTTL, err)
	}
	pk := pkHeader(`["a"]`)
	for _, doc := range []string{
		`{"id":"default","pk":"a"}`,          // the container's 10 s
		`{"id":"forever","pk":"a","ttl":-1}`, // never
		`{"id":"short","pk":"a","ttl":3}`,    // 3 s
		`{"id":"zero","pk":"a","ttl":0}`,     // not a ttl the service honours: the default
	} {
		if r := c.mustDo(ep, "POST", "/dbs/db/colls/ttl/docs", pk, doc); r.StatusCode != http.StatusCreated {
			t.Fatalf("create %s → %d %s", doc, r.StatusCode, r.Body)
		}
	}
	// The plain container has time to live off: an item's own ttl means nothing there.
	if r := c.mustDo(ep, "POST", itemsPath(), pk, `{"id":"own","pk":"a","ttl":1}`); r.StatusCode != http.StatusCreated {
		t.Fatalf("create in the container without TTL → %d", r.StatusCode)
	}

	status := func(coll, id string) int {
		return c.mustDo(ep, "GET", "/dbs/db/colls/"+coll+"/docs/"+id, pk).StatusCode
	}
	clk.Advance(2999 * time.Millisecond)
	if got := ttlIDs(t, c, ep, "ttl"); fmt.Sprint(got) != "[default forever short zero]" {
		t.Fatalf("before 3 s the query sees %v, want every item", got)
	}
	clk.Advance(time.Millisecond)
	if st := status("ttl", "short"); st != http.StatusNotFound {
		t.Fatalf("an item with ttl 3, 3 s after its write → %d, want 404", st)
	}
	if got := ttlIDs(t, c, ep, "ttl"); fmt.Sprint(got) != "[default forever zero]" {
		t.Fatalf("after 3 s the query sees %v", got)
	}
	if got := ttlFeedIDs(t, c, ep, "ttl"); fmt.Sprint(got) != "[default forever zero]" {
		t.Fatalf("after 3 s the change feed gives %v", got)
	}
	// An expired item's id is free: a create succeeds, a replace finds nothing.
	if r := c.mustDo(ep, "PUT", "/dbs/db/colls/ttl/docs/short", pk, `{"id":"short","pk":"a"}`); r.StatusCode != http.StatusNotFound {
		t.Fatalf("replace an expired item → %d, want 404", r.StatusCode)
	}
	if r := c.mustDo(ep, "POST", "/dbs/db/colls/ttl/docs", pk, `{"id":"short","pk":"a","ttl":3}`); r.StatusCode != http.StatusCreated {
		t.Fatalf("create over an expired item → %d %s, want 201", r.StatusCode, r.Body)
	}
	clk.Advance(7 * time.Second) // 10 s after the first writes
	for id, want := range map[string]int{"default": 404, "zero": 404, "forever": 200, "short": 404} {
		if st := status("ttl", id); st != want {
			t.Errorf("%s 10 s after its write → %d, want %d", id, st, want)
		}
	}
	if st := status("items", "own"); st != http.StatusOK {
		t.Errorf("an item's ttl in a container without TTL → %d, want 200 (ignored)", st)
	}
	if got := ttlIDs(t, c, ep, "ttl"); fmt.Sprint(got) != "[forever]" {
		t.Fatalf("after 10 s the query sees %v, want [forever]", got)
	}
}

func TestAWriteRestartsAnItemsTimeToLive(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	s := startWithClock(t, clk, nil)
	c := newTestClientAt(t, s.Key(), clk)
	ep := s.Endpoint()
	c.mustDo(ep, "POST", "/dbs/db/colls", nil, `{"id":"ttl","partitionKey":{"paths":["/pk"],"kind":"Hash"},"defaultTtl":5}`)
	pk := pkHeader(`["a"]`)
	c.mustDo(ep, "POST", "/dbs/db/colls/ttl/docs", pk, `{"id":"1","pk":"a","v":1}`)
	clk.Advance(4 * time.Second)
	if r := c.mustDo(ep, "PUT", "/dbs/db/colls/ttl/docs/1", pk, `{"id":"1","pk":"a","v":2}`); r.StatusCode != http.StatusOK {
		t.Fatalf("replace → %d", r.StatusCode)
	}
	clk.Advance(4 * time.Second)
	if st := c.mustDo(ep, "GET", "/dbs/db/colls/ttl/docs/1", pk).StatusCode; st != http.StatusOK {
		t.Fatalf("8 s after the create, 4 s after the replace → %d, want 200 (the replace restarts the 5 s)", st)
	}
	clk.Advance(time.Second)
	if st := c.mustDo(ep, "GET", "/dbs/db/colls/ttl/docs/1", pk).StatusCode; st != http.StatusNotFound {
		t.Fatalf("5 s after the replace → %d, want 404", st)
	}
}

func TestABadDefaultTTLIsRefused(t *testing.T) {
	s := startTest(t)
	c := newTestClient(t, s.Key())
	for _, ttl := range []string{"0", "-2"} {
		r := c.mustDo(s.Endpoint(), "POST", "/dbs/db/colls", nil, `{"id":"bad","partitionKey":{"paths":["/pk"],"kind":"Hash"},"defaultTtl":`+ttl+`}`)
		if r.StatusCode != http.StatusBadRequest {
			t.Errorf("defaultTtl %s → %d, want 400", ttl, r.StatusCode)
		}
	}
}

func TestItemTTL(t *testing.T) {
	for body, want := range map[string]int32{
		`{"id":"1"}`: 0, `{"id":"1","ttl":-1}`: -1, `{"id":"1","ttl":30}`: 30, `{"id":"1","ttl":0}`: 0,
		`{"id":"1","ttl":1.5}`: 0, `{"id":"1","ttl":"30"}`: 0, `{"id":"1","ttl":-5}`: 0, `{"id":"1","n":{"ttl":9}}`: 0,
	} {
		if got := itemTTL([]byte(body)); got != want {
			t.Errorf("itemTTL(%s) = %d, want %d", body, got, want)
		}
	}
}
