package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
)

// uniqueStep is one write against a container with unique keys and the status the
// service gives it.
type uniqueStep struct {
	op   string // create, upsert, replace, patch, delete
	pk   string // the partition key header
	id   string // replace, patch and delete
	body string // the document, or the patch operations
	want int
}

// uniqueHarness drives one emulator's containers over HTTP.
type uniqueHarness struct {
	t  *testing.T
	c  *testClient
	ep string
}

func newUniqueHarness(t *testing.T, s *Server, clk interface{ Now() time.Time }) *uniqueHarness {
	c := newTestClient(t, s.Key())
	if clk != nil {
		c = newTestClientAt(t, s.Key(), clk)
	}
	return &uniqueHarness{t: t, c: c, ep: s.Endpoint()}
}

// container creates container id with the given partition key paths and unique keys
// (each a list of paths).
func (h *uniqueHarness) container(id string, pkPaths []string, keys [][]string, extra string) {
	h.t.Helper()
	var uk []string
	for _, k := range keys {
		b, _ := json.Marshal(k)
		uk = append(uk, `{"paths":`+string(b)+`}`)
	}
	paths, _ := json.Marshal(pkPaths)
	kind := "Hash"
	if len(pkPaths) > 1 {
		kind = "MultiHash"
	}
	body := fmt.Sprintf(`{"id":%q,"partitionKey":{"paths":%s,"kind":%q,"version":2},"uniqueKeyPolicy":{"uniqueKeys":[%s]}%s}`,
		id, paths, kind, strings.Join(uk, ","), extra)
	if r := h.c.mustDo(h.ep, "POST", "/dbs/db/colls", nil, body); r.StatusCode != http.StatusCreated {
		h.t.Fatalf("create container %s → %d %s", body, r.StatusCode, r.Body)
	}
}

// do runs one step in container coll and returns the response.
func (h *uniqueHarness) do(coll string, st uniqueStep) *cosmos.Response {
	h.t.Helper()
	docs := "/dbs/db/colls/" + coll + "/docs"
	hdr := pkHeader(st.pk)
	switch st.op {
	case "create":
		return h.c.mustDo(h.ep, "POST", docs, hdr, st.body)
	case "upsert":
		hdr[cosmos.HeaderIsUpsert] = "true"
		return h.c.mustDo(h.ep, "POST", docs, hdr, st.body)
	case "replace":
		return h.c.mustDo(h.ep, "PUT", docs+"/"+st.id, hdr, st.body)
	case "patch":
		return h.c.mustDo(h.ep, "PATCH", docs+"/"+st.id, hdr, `{"operations":`+st.body+`}`)
	case "delete":
		return h.c.mustDo(h.ep, "DELETE", docs+"/"+st.id, hdr)
	}
	h.t.Fatalf("unknown step %q", st.op)
	return nil
}

// run runs steps in order and checks each status; a 409 must carry the service's
// unique key message, not the one for a taken id.
func (h *uniqueHarness) run(coll string, steps []uniqueStep) {
	h.t.Helper()
	for i, st := range steps {
		r := h.do(coll, st)
		if r.StatusCode != st.want {
			h.t.Fatalf("step %d %s %s %s%s → %d %s, want %d", i, st.op, st.pk, st.id, st.body, r.StatusCode, r.Body, st.want)
		}
		if st.want == http.StatusConflict && !strings.Contains(string(r.Body), "Unique index constraint violation.") {
			h.t.Errorf("step %d: the 409 says %s, want the service's \"Unique index constraint violation.\"", i, r.Body)
		}
	}
}

func TestUniqueKeysAreEnforcedPerLogicalPartition(t *testing.T) {
	s := startTest(t)
	h := newUniqueHarness(t, s, nil)
	email := [][]string{{"/email"}}
	a, b := `["a"]`, `["b"]`
	cases := []struct {
		name   string
		pk     []string
		keys   [][]string
		steps  []uniqueStep
		extras string
	}{
		{name: "a create that repeats a value in the same partition key is refused; another key takes it", keys: email, steps: []uniqueStep{
			{op: "create", pk: a, body: `{"id":"1","pk":"a","email":"x@c.com"}`, want: 201},
			{op: "create", pk: a, body: `{"id":"2","pk":"a","email":"x@c.com"}`, want: 409},
			{op: "create", pk: b, body: `{"id":"2","pk":"b","email":"x@c.com"}`, want: 201},
			{op: "create", pk: a, body: `{"id":"2","pk":"a","email":"y@c.com"}`, want: 201},
		}},
		{name: "strings compare case-sensitively; a number is not its string", keys: email, steps: []uniqueStep{
			{op: "create", pk: a, body: `{"id":"1","pk":"a","email":"Gaby"}`, want: 201},
			{op: "create", pk: a, body: `{"id":"2","pk":"a","email":"gaby"}`, want: 201},
			{op: "create", pk: a, body: `{"id":"3","pk":"a","email":1}`, want: 201},
			{op: "create", pk: a, body: `{"id":"4","pk":"a","email":"1"}`, want: 201},
			{op: "create", pk: a, body: `{"id":"5","pk":"a","email":1.0}`, want: 409},
			{op: "create", pk: a, body: `{"id":"6","pk":"a","email":true}`, want: 201},
			{op: "create", pk: a, body: `{"id":"7","pk":"a","email":true}`, want: 409},
		}},
		{name: "a missing value counts as null: one item without it per partition key", keys: email, steps: []uniqueStep{
			{op: "create", pk: a, body: `{"id":"1","pk":"a"}`, want: 201},
			{op: "create", pk: a, body: `{"id":"2","pk":"a"}`, want: 409},
			{op: "create", pk: a, body: `{"id":"3","pk":"a","email":null}`, want: 409},
			{op: "create", pk: b, body: `{"id":"3","pk":"b","email":null}`, want: 201},
		}},
		{name: "a path through an array is missing", keys: [][]string{{"/address/zip"}}, steps: []uniqueStep{
			{op: "create", pk: a, body: `{"id":"1","pk":"a","address":[{"zip":1}]}`, want: 201},
			{op: "create", pk: a, body: `{"id":"2","pk":"a","address":[{"zip":2}]}`, want: 409},
			{op: "create", pk: a, body: `{"id":"3","pk":"a","address":{"zip":2}}`, want: 201},
			{op: "create", pk: a, body: `{"id":"4","pk":"a","address":{"zip":2}}`, want: 409},
		}},
		{name: "paths of one unique key are unique as a combination", keys: [][]string{{"/first", "/last"}}, steps: []uniqueStep{
			{op: "create", pk: a, body: `{"id":"1","pk":"a","first":"Gaby","last":"Duperre"}`, want: 201},
			{op: "create", pk: a, body: `{"id":"2","pk":"a","first":"Gaby","last":"Smith"}`, want: 201},
			{op: "create", pk: a, body: `{"id":"3","pk":"a","first":"Ivan","last":"Duperre"}`, want: 201},
			{op: "create", pk: a, body: `{"id":"4","pk":"a","last":"Duperre"}`, want: 201},
			{op: "create", pk: a, body: `{"id":"5","pk":"a","first":null,"last":"Duperre"}`, want: 409},
			{op: "create", pk: a, body: `{"id":"6","pk":"a","first":"Gaby","last":"Duperre"}`, want: 409},
		}},
		{name: "each unique key of the policy is a constraint of its own", keys: [][]string{{"/email"}, {"/phone"}}, steps: []uniqueStep{
			{op: "create", pk: a, body: `{"id":"1","pk":"a","email":"x","phone":"1"}`, want: 201},
			{op: "create", pk: a, body: `{"id":"2","pk":"a","email":"y","phone":"1"}`, want: 409},
			{op: "create", pk: a, body: `{"id":"2","pk":"a","email":"x","phone":"2"}`, want: 409},
			{op: "create", pk: a, body: `{"id":"2","pk":"a","email":"y","phone":"2"}`, want: 201},
		}},
		{name: "upsert: a new item may not take a value, an item may keep its own", keys: email, steps: []uniqueStep{
			{op: "upsert", pk: a, body: `{"id":"1","pk":"a","email":"x"}`, want: 201},
			{op: "upsert", pk: a, body: `{"id":"2","pk":"a","email":"x"}`, want: 409},
			{op: "upsert", pk: a, body: `{"id":"1","pk":"a","email":"x","n":2}`, want: 200},
			{op: "upsert", pk: a, body: `{"id":"2","pk":"a","email":"y"}`, want: 201},
			{op: "upsert", pk: a, body: `{"id":"2","pk":"a","email":"x"}`, want: 409},
		}},
		{name: "replace and patch: own values are fine, another item's are refused, a moved-away value is free", keys: email, steps: []uniqueStep{
			{op: "create", pk: a, body: `{"id":"1","pk":"a","email":"x"}`, want: 201},
			{op: "create", pk: a, body: `{"id":"2","pk":"a","email":"y"}`, want: 201},
			{op: "replace", pk: a, id: "1", body: `{"id":"1","pk":"a","email":"x","n":1}`, want: 200},
			{op: "replace", pk: a, id: "2", body: `{"id":"2","pk":"a","email":"x"}`, want: 409},
			{op: "patch", pk: a, id: "2", body: `[{"op":"set","path":"/email","value":"x"}]`, want: 409},
			{op: "patch", pk: a, id: "1", body: `[{"op":"set","path":"/email","value":"z"}]`, want: 200},
			{op: "replace", pk: a, id: "2", body: `{"id":"2","pk":"a","email":"x"}`, want: 200},
			{op: "create", pk: a, body: `{"id":"3","pk":"a","email":"y"}`, want: 201},
			{op: "patch", pk: a, id: "3", body: `[{"op":"remove","path":"/email"}]`, want: 200},
			{op: "create", pk: a, body: `{"id":"4","pk":"a"}`, want: 409},
		}},
		{name: "a delete frees the value", keys: email, steps: []uniqueStep{
			{op: "create", pk: a, body: `{"id":"1","pk":"a","email":"x"}`, want: 201},
			{op: "delete", pk: a, id: "1", want: 204},
			{op: "create", pk: a, body: `{"id":"2","pk":"a","email":"x"}`, want: 201},
			{op: "create", pk: a, body: `{"id":"1","pk":"a","email":"x"}`, want: 409},
		}},
		{name: "hierarchical keys: uniqueness is per full key, not per prefix", pk: []string{"/tenant", "/user"}, keys: email, steps: []uniqueStep{
			{op: "create", pk: `["t","u1"]`, body: `{"id":"1","tenant":"t","user":"u1","email":"x"}`, want: 201},
			{op: "create", pk: `["t","u2"]`, body: `{"id":"2","tenant":"t","user":"u2","email":"x"}`, want: 201},
			{op: "create", pk: `["t","u1"]`, body: `{"id":"3","tenant":"t","user":"u1","email":"x"}`, want: 409},
		}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h.t = t
			h.c.t = t
			pk := tc.pk
			if pk == nil {
				pk = []string{"/pk"}
			}
			coll := fmt.Sprintf("u%d", i)
			h.container(coll, pk, tc.keys, tc.extras)
			h.run(coll, tc.steps)
		})
	}
}

// An item that expired by its time to live holds no value: another may take it, and the
// expired one's id may be created again with it.
func TestUniqueKeyValueIsFreedByExpiry(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	s := startWithClock(t, clk, nil)
	h := newUniqueHarness(t, s, clk)
	h.container("ttl", []string{"/pk"}, [][]string{{"/email"}}, `,"defaultTtl":10`)
	a := `["a"]`
	h.run("ttl", []uniqueStep{
		{op: "create", pk: a, body: `{"id":"1","pk":"a","email":"x"}`, want: 201},
		{op: "create", pk: a, body: `{"id":"2","pk":"a","email":"x"}`, want: 409},
	})
	clk.Advance(10 * time.Second)
	h.run("ttl", []uniqueStep{
		{op: "create", pk: a, body: `{"id":"2","pk":"a","email":"x","ttl":-1}`, want: 201},
		{op: "create", pk: a, body: `{"id":"1","pk":"a","email":"x"}`, want: 409},
		{op: "create", pk: a, body: `{"id":"1","pk":"a","email":"y"}`, want: 201},
	})
}

// A transactional batch sees its own earlier operations and changes the index only
// when it commits.
func TestUniqueKeysInATransactionalBatch(t *testing.T) {
	s := startTest(t)
	h := newUniqueHarness(t, s, nil)
	h.container("b", []string{"/pk"}, [][]string{{"/email"}}, "")
	docs := "/dbs/db/colls/b/docs"
	h.run("b", []uniqueStep{{op: "create", pk: `["a"]`, body: `{"id":"1","pk":"a","email":"x"}`, want: 201}})
	batch := func(ops string) (int, []int) {
		t.Helper()
		r := h.c.mustDo(h.ep, "POST", docs, batchHeaders(true, pkHeader(`["a"]`)), ops)
		var st []int
		if r.StatusCode == 200 || r.StatusCode == 207 {
			for _, res := range decodeBatchResults(t, r) {
				st = append(st, res.StatusCode)
			}
		}
		return r.StatusCode, st
	}
	cases := []struct {
		name   string
		ops    string
		status int
		want   []int
	}{
		{"a create of a taken value fails the batch", `[{"operationType":"Create","resourceBody":{"id":"2","pk":"a","email":"y"}},{"operationType":"Create","resourceBody":{"id":"3","pk":"a","email":"x"}}]`,
			207, []int{424, 409}},
		{"two creates of one value in the batch", `[{"operationType":"Create","resourceBody":{"id":"2","pk":"a","email":"y"}},{"operationType":"Upsert","resourceBody":{"id":"3","pk":"a","email":"y"}}]`,
			207, []int{424, 409}},
		{"a patch to a taken value", `[{"operationType":"Create","resourceBody":{"id":"2","pk":"a","email":"y"}},{"operationType":"Patch","id":"2","resourceBody":{"operations":[{"op":"set","path":"/email","value":"x"}]}}]`,
			207, []int{424, 409}},
		{"a value the batch frees first may be taken later in it", `[{"operationType":"Replace","id":"1","resourceBody":{"id":"1","pk":"a","email":"z"}},{"operationType":"Create","resourceBody":{"id":"2","pk":"a","email":"x"}},{"operationType":"Delete","id":"2"},{"operationType":"Create","resourceBody":{"id":"3","pk":"a","email":"x"}}]`,
			200, []int{200, 201, 204, 201}},
	}
	for _, tc := range cases {
		status, got := batch(tc.ops)
		if status != tc.status || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: %d %v, want %d %v", tc.name, status, got, tc.status, tc.want)
		}
	}
	// The failed batches changed nothing; the last one moved 1 to z and 3 to x.
	h.run("b", []uniqueStep{
		{op: "create", pk: `["a"]`, body: `{"id":"4","pk":"a","email":"y"}`, want: 201},
		{op: "create", pk: `["a"]`, body: `{"id":"5","pk":"a","email":"z"}`, want: 409},
		{op: "create", pk: `["a"]`, body: `{"id":"5","pk":"a","email":"x"}`, want: 409},
	})
	// Bulk goes through the ordinary write path, one operation at a time.
	r := h.c.mustDo(h.ep, "POST", docs, batchHeaders(false, nil),
		`[{"operationType":"Create","partitionKey":"[\"a\"]","resourceBody":{"id":"6","pk":"a","email":"w"}},{"operationType":"Create","partitionKey":"[\"a\"]","resourceBody":{"id":"7","pk":"a","email":"w"}},{"operationType":"Create","partitionKey":"[\"b\"]","resourceBody":{"id":"7","pk":"b","email":"w"}}]`)
	var got []int
	for _, res := range decodeBatchResults(t, r) {
		got = append(got, res.StatusCode)
	}
	if fmt.Sprint(got) != "[201 409 201]" {
		t.Errorf("bulk: %v, want [201 409 201]", got)
	}
}

// The index belongs to the logical partition, not to the range: splits and merges move
// the documents and the values stay taken, and freed values stay free.
func TestUniqueKeysSurviveSplitsAndMerges(t *testing.T) {
	s := startTest(t, func(cfg *Config) { cfg.Ranges = 1 })
	h := newUniqueHarness(t, s, nil)
	h.container("sp", []string{"/pk"}, [][]string{{"/email"}}, "")
	for i := 0; i < 20; i++ {
		h.run("sp", []uniqueStep{{op: "create", pk: fmt.Sprintf(`["p%d"]`, i), body: fmt.Sprintf(`{"id":"1","pk":"p%d","email":"x"}`, i), want: 201}})
	}
	check := func(when string) {
		t.Helper()
		for i := 0; i < 20; i++ {
			pk := fmt.Sprintf(`["p%d"]`, i)
			if r := h.do("sp", uniqueStep{op: "create", pk: pk, body: fmt.Sprintf(`{"id":"2","pk":"p%d","email":"x"}`, i)}); r.StatusCode != 409 {
				t.Fatalf("%s: a duplicate in %s → %d, want 409", when, pk, r.StatusCode)
			}
		}
	}
	check("before the split")
	if _, err := s.SplitRange(SplitRequest{Database: "db", Container: "sp"}); err != nil {
		t.Fatal(err)
	}
	check("after the split")
	h.run("sp", []uniqueStep{
		{op: "delete", pk: `["p3"]`, id: "1", want: 204},
		{op: "create", pk: `["p3"]`, body: `{"id":"2","pk":"p3","email":"x"}`, want: 201},
	})
	if _, err := s.MergeRanges(MergeRequest{Database: "db", Container: "sp", Ranges: []string{"1", "2"}}); err != nil {
		t.Fatal(err)
	}
	check("after the merge")
}

// A persistent emulator rebuilds the index from its documents when it starts again.
func TestUniqueKeysSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	persist := func(cfg *Config) { cfg.DataDir = dir }
	s := startTest(t, persist)
	h := newUniqueHarness(t, s, nil)
	h.container("r", []string{"/pk"}, [][]string{{"/email"}}, "")
	h.run("r", []uniqueStep{
		{op: "create", pk: `["a"]`, body: `{"id":"1","pk":"a","email":"x"}`, want: 201},
		{op: "create", pk: `["a"]`, body: `{"id":"2","pk":"a","email":"y"}`, want: 201},
	})
	s.Close()
	s2 := startTest(t, persist)
	h2 := newUniqueHarness(t, s2, nil)
	h2.run("r", []uniqueStep{
		{op: "create", pk: `["a"]`, body: `{"id":"3","pk":"a","email":"x"}`, want: 409},
		{op: "replace", pk: `["a"]`, id: "2", body: `{"id":"2","pk":"a","email":"x"}`, want: 409},
		{op: "replace", pk: `["a"]`, id: "1", body: `{"id":"1","pk":"a","email":"x","n":1}`, want: 200},
		{op: "delete", pk: `["a"]`, id: "1", want: 204},
		{op: "create", pk: `["a"]`, body: `{"id":"3","pk":"a","email":"x"}`, want: 201},
	})
}

// Many writers race to take one value in one logical partition, by create, upsert,
// replace and transactional batch, and give it back. Each goroutine owns one item and
// releases the value right after taking it, so every successful take is followed by a
// successful release: at no point may two items hold it, and at the end the number of
// items holding it is takes minus releases (0), then exactly one item wins a last race.
func TestUniqueKeysUnderRacingWriters(t *testing.T) {
	s := startTest(t, func(cfg *Config) { cfg.Ranges = 1 })
	h := newUniqueHarness(t, s, nil)
	h.container("race", []string{"/pk"}, [][]string{{"/email"}}, "")
	const writers, rounds = 32, 8
	docs := "/dbs/db/colls/race/docs"
	pk := pkHeader(`["a"]`)
	var mu sync.Mutex
	takes, releases, holding, maxHolding := 0, 0, 0, 0
	var wg sync.WaitGroup
	errs := make(chan string, writers*rounds)
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newTestClient(t, s.Key())
			id := fmt.Sprint(g)
			own := fmt.Sprintf(`{"id":%q,"pk":"a","email":"own-%d"}`, id, g)
			hot := fmt.Sprintf(`{"id":%q,"pk":"a","email":"hot"}`, id)
			if r, _ := c.do(h.ep, "POST", docs, pk, own); r == nil || r.StatusCode != 201 {
				errs <- fmt.Sprintf("writer %d: seed failed: %+v", g, r)
				return
			}
			for i := 0; i < rounds; i++ {
				var r *cosmos.Response
				switch (g + i) % 4 {
				case 0:
					r, _ = c.do(h.ep, "PUT", docs+"/"+id, pk, hot)
				case 1:
					r, _ = c.do(h.ep, "POST", docs, map[string]string{cosmos.HeaderPartitionKey: `["a"]`, cosmos.HeaderIsUpsert: "true"}, hot)
				case 2:
					r, _ = c.do(h.ep, "PATCH", docs+"/"+id, pk, `{"operations":[{"op":"set","path":"/email","value":"hot"}]}`)
				case 3:
					r, _ = c.do(h.ep, "POST", docs, batchHeaders(true, pk), `[{"operationType":"Replace","id":"`+id+`","resourceBody":`+hot+`}]`)
					if r != nil && r.StatusCode == 207 {
						r.StatusCode = decodeBatchResults(t, r)[0].StatusCode
					}
				}
				if r == nil {
					errs <- fmt.Sprintf("writer %d: no response", g)
					return
				}
				switch r.StatusCode {
				case 200:
					mu.Lock()
					takes++
					holding++
					maxHolding = max(maxHolding, holding)
					mu.Unlock()
					// Give it back, counting before the release is sent: the next take may
					// succeed the moment the release commits.
					mu.Lock()
					holding--
					mu.Unlock()
					if r2, _ := c.do(h.ep, "PUT", docs+"/"+id, pk, own); r2 == nil || r2.StatusCode != 200 {
						errs <- fmt.Sprintf("writer %d: release failed: %+v", g, r2)
						return
					}
					mu.Lock()
					releases++
					mu.Unlock()
				case 409:
				default:
					errs <- fmt.Sprintf("writer %d: take → %d %s", g, r.StatusCode, r.Body)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if takes == 0 || takes != releases {
		t.Errorf("%d takes and %d releases: every take must succeed once and be released", takes, releases)
	}
	t.Logf("%d writers × %d rounds: %d takes of the value", writers, rounds, takes)
	if holding := countEmail(t, h, "race", "hot"); holding != 0 {
		t.Errorf("%d items hold the released value", holding)
	}
	// A last race by create: exactly one of the writers wins.
	var wins, conflicts int
	var wg2 sync.WaitGroup
	for g := 0; g < writers; g++ {
		wg2.Add(1)
		go func() {
			defer wg2.Done()
			c := newTestClient(t, s.Key())
			r, _ := c.do(h.ep, "POST", docs, pk, fmt.Sprintf(`{"id":"new-%d","pk":"a","email":"hot"}`, g))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case r == nil:
			case r.StatusCode == 201:
				wins++
			case r.StatusCode == 409:
				conflicts++
			}
		}()
	}
	wg2.Wait()
	if wins != 1 || conflicts != writers-1 {
		t.Errorf("racing creates: %d won and %d were refused, want 1 and %d", wins, conflicts, writers-1)
	}
	if n := countEmail(t, h, "race", "hot"); n != 1 {
		t.Errorf("%d items hold the value after the race, want 1", n)
	}
	if maxHolding > 1 {
		t.Errorf("the writers saw %d takes outstanding at once", maxHolding)
	}
}

// countEmail counts the items of partition a in coll whose email is v.
func countEmail(t *testing.T, h *uniqueHarness, coll, v string) int {
	t.Helper()
	r := h.c.mustDo(h.ep, "POST", "/dbs/db/colls/"+coll+"/docs", map[string]string{
		"Content-Type": "application/query+json", cosmos.HeaderIsQuery: "True", cosmos.HeaderPartitionKey: `["a"]`,
	}, fmt.Sprintf(`{"query":"SELECT c.id FROM c WHERE c.email = '%s'"}`, v))
	var feed struct{ Documents []json.RawMessage }
	if err := json.Unmarshal(r.Body, &feed); err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("query → %d %s", r.StatusCode, r.Body)
	}
	return len(feed.Documents)
}
