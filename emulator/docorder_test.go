package emulator

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// orderTest is an emulator whose documents the test writes straight into the store (a
// large partition loads in milliseconds) and reads back through the query API.
type orderTest struct {
	t *testing.T
	s *Server
	c *testClient
}

func newOrderTest(t *testing.T, ranges int) *orderTest {
	s := startTest(t, func(c *Config) { c.Ranges = ranges })
	return &orderTest{t: t, s: s, c: newTestClient(t, s.Key())}
}

func (o *orderTest) container() *container {
	o.t.Helper()
	c, err := o.s.store.container("db", "items")
	if err != nil {
		o.t.Fatal(err)
	}
	return c
}

// put creates or replaces document id in logical partition pk with version v; del
// deletes it instead.
func (o *orderTest) put(id, pk string, v int, del bool) {
	o.t.Helper()
	key, perr := cosmos.ParsePartitionKeyJSON(`["` + pk + `"]`)
	if perr != nil {
		o.t.Fatal(perr)
	}
	_, err := o.s.store.write(o.container(), key, id, 0, func(cur *itemVersion, rid string) ([]byte, bool, *cosmos.Error) {
		switch {
		case del && cur == nil:
			return nil, false, notFound("no such document")
		case del:
			return nil, true, nil
		}
		return fmt.Appendf(nil, `{"id":%q,"pk":%q,"v":%d}`, id, pk, v), false, nil
	})
	if err != nil && !(del && err.StatusCode == http.StatusNotFound) {
		o.t.Fatalf("writing %s: %v", id, err)
	}
}

type orderPage struct {
	rows      []orderRow
	next      string
	retrieved int
	examined  uint64
}

type orderRow struct {
	ID  string `json:"id"`
	RID string `json:"_rid"`
	V   int    `json:"v"`
}

var retrievedCount = regexp.MustCompile(`retrievedDocumentCount=(\d+);`)

// page reads one page of q of at most size rows after cont, across partitions.
func (o *orderTest) page(q string, size int, cont string) orderPage {
	o.t.Helper()
	h := map[string]string{cosmos.HeaderIsQuery: "true", "Content-Type": "application/query+json", cosmos.HeaderEnableCrossPartition: "true",
		cosmos.HeaderMaxItemCount: strconv.Itoa(size), cosmos.HeaderPopulateQueryMetrics: "true"}
	if cont != "" {
		h[cosmos.HeaderContinuation] = cont
	}
	before := o.s.store.scanExamined.Load()
	resp, err := o.c.do(o.s.Endpoint(), http.MethodPost, itemsPath(), h, cosmos.QuerySpec{Query: q})
	if code, _ := statusOf(o.t, resp, err); code != http.StatusOK {
		o.t.Fatalf("query %s: %d %s", q, code, resp.Body)
	}
	p := orderPage{next: resp.Header.Get(cosmos.HeaderContinuation), examined: o.s.store.scanExamined.Load() - before}
	var feed struct{ Documents []orderRow }
	if err := json.Unmarshal(resp.Body, &feed); err != nil {
		o.t.Fatal(err)
	}
	p.rows = feed.Documents
	m := retrievedCount.FindStringSubmatch(resp.Header.Get(cosmos.HeaderQueryMetrics))
	if m == nil {
		o.t.Fatalf("no retrievedDocumentCount in the query metrics %q", resp.Header.Get(cosmos.HeaderQueryMetrics))
	}
	p.retrieved, _ = strconv.Atoi(m[1])
	return p
}

// A streaming query's continuation seeks in the partition's creation order: a page deep
// in a large partition examines about a page of documents, not the partition, and a
// filtered page stops once it is full.
func TestStreamingQueryPageSeeksToItsContinuation(t *testing.T) {
	const n = 20000
	o := newOrderTest(t, 1)
	for i := range n {
		o.put(fmt.Sprintf("d%05d", i), "p"+strconv.Itoa(i%13), i, false)
	}
	cases := []struct {
		name, q string
		// every: the query returns every every-th document.
		every int
	}{
		{"SELECT * reads a page after the continuation", "SELECT * FROM c", 1},
		{"a projection reads a page after the continuation", "SELECT c.id, c.v FROM c", 1},
		{"a filter stops reading once the page is full", "SELECT * FROM c WHERE c.v % 3 = 0", 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := *o
			o.t = t
			// 15,000 documents deep into the partition in large pages, then one page of 10.
			deep := 15 / tc.every
			cont := ""
			for range deep {
				p := o.page(tc.q, 1000, cont)
				if cont = p.next; cont == "" {
					t.Fatal("the query ended early")
				}
			}
			const size = 10
			p := o.page(tc.q, size, cont)
			if len(p.rows) != size || p.next == "" {
				t.Fatalf("%d rows, continuation %q; want %d and one", len(p.rows), p.next, size)
			}
			first := deep * 1000 * tc.every
			for i, r := range p.rows {
				if want := fmt.Sprintf("d%05d", first+i*tc.every); r.ID != want {
					t.Fatalf("row %d is %s, want %s", i, r.ID, want)
				}
			}
			// The page's documents, plus at most one read-ahead chunk.
			if limit := uint64(size*tc.every + 2*minScanChunk*tc.every); p.examined > limit {
				t.Errorf("the page examined %d index entries of %d; want at most %d", p.examined, n, limit)
			}
			if want := size * tc.every; p.retrieved != want {
				t.Errorf("retrievedDocumentCount %d, want %d", p.retrieved, want)
			}
		})
	}
}

// Documents created, replaced and deleted between the pages of a streaming query are
// neither lost nor repeated: a document that lives through the query comes exactly
// once, in its version at the time its page was read; one deleted before its page
// never comes; one created during the query (a new _rid, also when an id is created
// again) comes at most once, and exactly once in a single range, after those before it
// (across ranges it may land in a range the query has finished). Deleting many
// documents mid-query compacts the index under the query.
func TestStreamingQueryPagesAcrossWritesNeitherLoseNorRepeat(t *testing.T) {
	cases := []struct {
		name   string
		ranges int
		// reshape runs once, after page 5.
		reshape func(o *orderTest) error
	}{
		{name: "one range", ranges: 1},
		{name: "four ranges, across partitions", ranges: 4},
		{name: "a range splits mid-query", ranges: 2, reshape: func(o *orderTest) error {
			_, err := o.s.SplitRange(SplitRequest{Database: "db", Container: "items", Range: "0"})
			return err
		}},
		{name: "two ranges merge mid-query", ranges: 2, reshape: func(o *orderTest) error {
			_, err := o.s.MergeRanges(MergeRequest{Database: "db", Container: "items", Ranges: []string{"0", "1"}})
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := newOrderTest(t, tc.ranges)
			rng := rand.New(rand.NewPCG(24, 5))
			type state struct {
				pk    string
				v     int
				alive bool
				// churned: the document was deleted or created during the query.
				churned bool
			}
			docs := map[string]*state{}
			var ids []string
			create := func(id string) {
				st := &state{pk: "p" + strconv.Itoa(rng.IntN(40)), alive: true}
				docs[id] = st
				ids = append(ids, id)
				o.put(id, st.pk, 0, false)
			}
			for i := range 600 {
				create(fmt.Sprintf("a%04d", i))
			}
			fresh := 0
			churn := func(id string) {
				docs[id].churned = true
			}
			seen := map[string]int{}
			var got []orderRow
			cont := ""
			for page := 0; ; page++ {
				if page > 1000 {
					t.Fatal("the query never ended")
				}
				p := o.page("SELECT * FROM c", 7, cont)
				for _, r := range p.rows {
					seen[r.RID]++
					got = append(got, r)
					if st := docs[r.ID]; st == nil || !st.alive || r.V != st.v {
						t.Fatalf("page %d returned %s version %d; the document is %+v", page, r.ID, r.V, st)
					}
				}
				if cont = p.next; cont == "" {
					break
				}
				// Between pages: replace two documents, delete two, delete and create
				// one again, create one; at page 20 delete 300 (the index compacts).
				for range 2 {
					id := ids[rng.IntN(len(ids))]
					if st := docs[id]; st.alive {
						st.v++
						o.put(id, st.pk, st.v, false)
					}
				}
				del := 2
				if page == 20 {
					del = 300
				}
				for range del {
					id := ids[rng.IntN(len(ids))]
					if st := docs[id]; st.alive {
						st.alive = false
						churn(id)
						o.put(id, st.pk, 0, true)
					}
				}
				if id := ids[rng.IntN(len(ids))]; !docs[id].alive {
					st := docs[id]
					st.alive, st.v = true, 0
					o.put(id, st.pk, 0, false)
				}
				fresh++
				create(fmt.Sprintf("b%04d", fresh))
				churn(fmt.Sprintf("b%04d", fresh))
				if page == 5 && tc.reshape != nil {
					if err := tc.reshape(o); err != nil {
						t.Fatal(err)
					}
				}
			}
			for rid, n := range seen {
				if n > 1 {
					t.Errorf("_rid %s came %d times", rid, n)
				}
			}
			came := map[string]int{}
			for _, r := range got {
				came[r.ID]++
			}
			for id, st := range docs {
				if st.alive && !st.churned && came[id] != 1 {
					t.Errorf("%s lived through the query and came %d times", id, came[id])
				}
			}
			if tc.ranges == 1 {
				// One range is read in creation order: the fresh documents come in the
				// order they were created.
				var order []string
				for _, r := range got {
					if r.ID[0] == 'b' {
						order = append(order, r.ID)
					}
				}
				if !slices.IsSorted(order) {
					t.Errorf("documents created mid-query came out of creation order: %v", order)
				}
				for id, st := range docs {
					if id[0] == 'b' && st.alive && came[id] != 1 {
						t.Errorf("%s, created mid-query in the range being read, came %d times", id, came[id])
					}
				}
			}
		})
	}
}

// The creation-order index stays the partition's documents in creation order through
// any mix of creates, deletes, re-creates, batches (whose creates can commit out of
// sequence order) and compactions, and after a split or a merge.
func TestCreationOrderIndexMatchesThePartition(t *testing.T) {
	o := newOrderTest(t, 2)
	rng := rand.New(rand.NewPCG(7, 11))
	check := func(when string) {
		t.Helper()
		for _, p := range o.container().partitions() {
			p.mu.RLock()
			var live []*itemEntry
			for _, e := range p.byCreation {
				if !e.removed {
					live = append(live, e)
				}
			}
			want := make([]*itemEntry, 0, len(p.items))
			for _, e := range p.items {
				want = append(want, e)
			}
			removed := len(p.byCreation) - len(live)
			p.mu.RUnlock()
			slices.SortFunc(want, func(a, b *itemEntry) int { return cmp.Compare(a.seq, b.seq) })
			if !slices.Equal(live, want) {
				t.Fatalf("%s: range %s's index holds %d live entries, its items %d, or in another order", when, p.rng.ID, len(live), len(want))
			}
			if removed != p.removedEntries {
				t.Fatalf("%s: range %s has %d removed entries in its index and counts %d", when, p.rng.ID, removed, p.removedEntries)
			}
		}
	}
	for round := range 30 {
		for range 50 {
			id := fmt.Sprintf("x%03d", rng.IntN(400))
			o.put(id, "p"+strconv.Itoa(len(id)%3+rng.IntN(2)), round, rng.IntN(3) == 0)
		}
		// A transactional batch that creates two documents, deletes one of the round
		// before and creates and deletes a third.
		pk := "q" + strconv.Itoa(round%3)
		ops := fmt.Sprintf(`[{"operationType":"Create","resourceBody":{"id":"y%03d-a","pk":%q}},{"operationType":"Create","resourceBody":{"id":"y%03d-b","pk":%q}},`+
			`{"operationType":"Create","resourceBody":{"id":"y%03d-c","pk":%q}},{"operationType":"Delete","id":"y%03d-c"}`, round, pk, round, pk, round, pk, round)
		if round >= 3 {
			ops += fmt.Sprintf(`,{"operationType":"Delete","id":"y%03d-a"}`, round-3)
		}
		resp, err := o.c.do(o.s.Endpoint(), http.MethodPost, itemsPath(), merge(pkHeader(`["`+pk+`"]`), batchHeaders(true, nil)), json.RawMessage(ops+"]"))
		if code, _ := statusOf(t, resp, err); code != http.StatusOK {
			t.Fatalf("batch: %d %s", code, resp.Body)
		}
		check(fmt.Sprintf("round %d", round))
	}
	if _, err := o.s.SplitRange(SplitRequest{Database: "db", Container: "items", Range: "1"}); err != nil {
		t.Fatal(err)
	}
	check("after a split")
	if _, err := o.s.MergeRanges(MergeRequest{Database: "db", Container: "items", Ranges: []string{"2", "3"}}); err != nil {
		t.Fatal(err)
	}
	check("after a merge")
	for i := range 200 {
		o.put(fmt.Sprintf("z%03d", i), "p"+strconv.Itoa(i%5), 0, i%2 == 0)
	}
	check("after writes to the new ranges")

	// An entry with an earlier sequence than the last goes to its place.
	p := &partition{items: map[string]*itemEntry{}}
	for _, seq := range []uint64{5, 3, 9, 1, 7} {
		p.addEntry(strconv.FormatUint(seq, 10), &itemEntry{seq: seq})
	}
	var seqs []uint64
	for _, e := range p.byCreation {
		seqs = append(seqs, e.seq)
	}
	if !slices.Equal(seqs, []uint64{1, 3, 5, 7, 9}) {
		t.Errorf("entries added out of order are indexed as %v", seqs)
	}
}

// A persistent emulator rebuilds the index from its data file: a streaming query after a
// restart comes in creation order, whatever order the file keeps its records in.
func TestStreamingQueryAfterARestartComesInCreationOrder(t *testing.T) {
	dir := t.TempDir()
	persist := func(c *Config) { c.DataDir = dir; c.Ranges = 1 }
	s := startTest(t, persist)
	o := &orderTest{t: t, s: s, c: newTestClient(t, s.Key())}
	var want []string
	for i := range 50 {
		// Ids that sort against creation order, so that a file keyed by id does not
		// give creation order by chance.
		id := fmt.Sprintf("r%03d", 99-i)
		o.put(id, "p"+strconv.Itoa(i%4), 0, false)
		want = append(want, id)
	}
	s.Close()
	s = startTest(t, persist)
	o = &orderTest{t: t, s: s, c: newTestClient(t, s.Key())}
	var got []string
	cont := ""
	for {
		p := o.page("SELECT * FROM c", 8, cont)
		for _, r := range p.rows {
			got = append(got, r.ID)
		}
		if cont = p.next; cont == "" {
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("after the restart: %v, want %v", got, want)
	}
	o.put("r999", "p0", 0, false)
	if p := o.page("SELECT * FROM c", 100, ""); len(p.rows) != 51 || p.rows[50].ID != "r999" {
		t.Errorf("a document created after the restart: %d rows, last %v", len(p.rows), p.rows[len(p.rows)-1])
	}
}
