package emulator

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// pkRangesRead is one answer of the partition key ranges feed.
type pkRangesRead struct {
	status int
	etag   string
	ranges []cosmos.PartitionKeyRange
}

func (f *changeFeedTest) pkRanges(hdr map[string]string) pkRangesRead {
	f.t.Helper()
	resp, err := f.c.do(f.s.Endpoint(), "GET", "/dbs/db/colls/items/pkranges", hdr, nil)
	out := pkRangesRead{etag: resp.Header.Get(cosmos.HeaderETag)}
	out.status, _ = statusOf(f.t, resp, err)
	if out.status == http.StatusOK {
		var feed cosmos.PartitionKeyRangeFeed
		if err := json.Unmarshal(resp.Body, &feed); err != nil {
			f.t.Fatal(err)
		}
		out.ranges = feed.Ranges
	}
	return out
}

func incremental(etag string) map[string]string {
	h := map[string]string{cosmos.HeaderAIM: "Incremental Feed"}
	if etag != "" {
		h[cosmos.HeaderIfNoneMatch] = etag
	}
	return h
}

func (f *changeFeedTest) control() *ControlClient {
	f.t.Helper()
	cl, err := NewControlClient(f.s.Endpoint(), f.s.Key())
	if err != nil {
		f.t.Fatal(err)
	}
	return cl
}

// drain reads a range's change feed from the continuation etag to its end: the ids
// read, and the etag to go on from.
func (f *changeFeedTest) drain(hdr map[string]string, etag string) ([]string, string) {
	f.t.Helper()
	var ids []string
	for range 1000 {
		h := merge(hdr, map[string]string{cosmos.HeaderMaxItemCount: "7"})
		if etag != "" {
			h[cosmos.HeaderIfNoneMatch] = etag
		}
		p := f.read(h)
		switch p.status {
		case http.StatusNotModified:
			return ids, etag
		case http.StatusOK:
			ids, etag = append(ids, p.ids...), p.etag
		default:
			f.t.Fatalf("change feed %v: %d/%d %s", hdr, p.status, p.subStatus, p.body)
		}
	}
	f.t.Fatal("the change feed never answered 304")
	return nil, ""
}

// epkOf is the effective partition key of a one-string partition key.
func epkOf(t *testing.T, k string) string {
	pk, err := cosmos.ParsePartitionKeyJSON(`["` + k + `"]`)
	if err != nil {
		t.Fatal(err)
	}
	return cosmos.EffectivePartitionKey(pk)
}

func within(epk string, r cosmos.PartitionKeyRange) bool {
	return epk >= r.MinInclusive && (r.MaxExclusive == "FF" || epk < r.MaxExclusive)
}

func TestSplitMovesDocumentsRetiresTheParentAndKeepsTheChangeFeed(t *testing.T) {
	f := newChangeFeedTest(t)
	keys := f.keysIn("1", 20)
	before := map[string]string{} // id → partition key
	for i, k := range keys {
		id := fmt.Sprint("d", i)
		f.upsert(id, k, 0)
		before[id] = k
	}
	parentIDs, parentETag := f.drain(rangeHeader("1"), "")
	if len(parentIDs) != len(keys) {
		t.Fatalf("range 1 before the split: %d documents, want %d", len(parentIDs), len(keys))
	}
	feed0 := f.pkRanges(incremental(""))
	if f.pkRanges(incremental(feed0.etag)).status != http.StatusNotModified {
		t.Fatal("the ranges feed does not answer 304 at its end before the split")
	}

	ch, err := f.control().Split(context.Background(), SplitRequest{Database: "db", Container: "items", Range: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ch.Retired, []string{"1"}) || len(ch.Created) != 2 || ch.Created[0].ID != "4" || ch.Created[1].ID != "5" {
		t.Fatalf("split: %+v, want range 1 retired and ranges 4 and 5 created", ch)
	}
	for i, r := range ch.Created {
		if !slices.Equal(r.Parents, []string{"1"}) {
			t.Errorf("range %s lists parents %v, want [1]", r.ID, r.Parents)
		}
		if ch.Documents[i] == 0 {
			t.Errorf("range %s got no documents: the split point should share them out (%+v)", r.ID, ch)
		}
	}

	t.Run("the parent answers 410/1002 to requests addressed to it", func(t *testing.T) {
		if p := f.read(rangeHeader("1")); p.status != http.StatusGone || p.subStatus != cosmos.SubPartitionKeyRangeGone {
			t.Errorf("change feed of range 1: %d/%d, want 410/1002", p.status, p.subStatus)
		}
		q := map[string]string{cosmos.HeaderPartitionKeyRangeID: "1", cosmos.HeaderIsQuery: "true", "Content-Type": "application/query+json"}
		resp, err := f.c.do(f.s.Endpoint(), "POST", itemsPath(), q, `{"query":"SELECT * FROM c"}`)
		if code, sub := statusOf(t, resp, err); code != http.StatusGone || sub != cosmos.SubPartitionKeyRangeGone {
			t.Errorf("query of range 1: %d/%d, want 410/1002", code, sub)
		}
	})

	t.Run("the ranges feed shows the children with their parent, and its etag moves", func(t *testing.T) {
		full := f.pkRanges(nil)
		var ids []string
		for _, r := range full.ranges {
			ids = append(ids, r.ID)
		}
		if !slices.Equal(ids, []string{"0", "2", "3", "4", "5"}) {
			t.Errorf("ranges after the split: %v, want 0 2 3 4 5", ids)
		}
		if full.etag == feed0.etag {
			t.Errorf("the ranges feed's etag %s did not change with the split", full.etag)
		}
		inc := f.pkRanges(incremental(feed0.etag))
		if inc.status != http.StatusOK || len(inc.ranges) != 2 || inc.ranges[0].ID != "4" || inc.ranges[1].ID != "5" {
			t.Fatalf("incremental read from before the split: %d %+v, want the two children", inc.status, inc.ranges)
		}
		if got := f.pkRanges(incremental(inc.etag)); got.status != http.StatusNotModified {
			t.Errorf("incremental read from the children's etag: %d %+v, want 304", got.status, got.ranges)
		}
	})

	t.Run("every document is in the child its EPK falls in, and readable", func(t *testing.T) {
		seen := map[string]bool{}
		for _, r := range ch.Created {
			ids, _ := f.drain(rangeHeader(r.ID), "")
			for _, id := range ids {
				if seen[id] {
					t.Errorf("document %s is in two ranges", id)
				}
				seen[id] = true
				if !within(epkOf(t, before[id]), r) {
					t.Errorf("document %s (EPK %s) is in range %s [%s, %s)", id, epkOf(t, before[id]), r.ID, r.MinInclusive, r.MaxExclusive)
				}
			}
		}
		if len(seen) != len(before) {
			t.Errorf("%d documents in the children, want %d", len(seen), len(before))
		}
		for id, k := range before {
			resp, err := f.c.do(f.s.Endpoint(), "GET", itemsPath()+"/"+id, pkHeader(`["`+k+`"]`), nil)
			if code, _ := statusOf(t, resp, err); code != http.StatusOK {
				t.Errorf("read %s after the split: %d", id, code)
			}
		}
	})

	t.Run("the parent's continuation goes on in each child without loss or repeats", func(t *testing.T) {
		after := map[string]bool{}
		for i, k := range keys[:6] {
			id := fmt.Sprint("new", i)
			f.upsert(id, k, 1)
			after[id] = true
		}
		f.upsert("d0", keys[0], 2) // a document changed again comes once more
		after["d0"] = true
		got := map[string]int{}
		for _, r := range ch.Created {
			ids, _ := f.drain(rangeHeader(r.ID), parentETag)
			for _, id := range ids {
				got[id]++
			}
		}
		for id := range after {
			if got[id] != 1 {
				t.Errorf("change %s read %d times across the children, want once", id, got[id])
			}
		}
		if len(got) != len(after) {
			t.Errorf("changes after the split: %v, want exactly %v", got, after)
		}
	})

	t.Run("a child splits again and lists its whole lineage", func(t *testing.T) {
		ch2, err := f.control().Split(context.Background(), SplitRequest{Database: "db", Container: "items", Range: "5"})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range ch2.Created {
			if !slices.Equal(r.Parents, []string{"1", "5"}) {
				t.Errorf("grandchild %s lists parents %v, want [1 5]", r.ID, r.Parents)
			}
		}
	})
}

func TestMergeMovesDocumentsRetiresBothAndKeepsTheChangeFeed(t *testing.T) {
	f := newChangeFeedTest(t)
	ranges := f.pkRanges(nil).ranges
	byID := map[string]cosmos.PartitionKeyRange{}
	for _, r := range ranges {
		byID[r.ID] = r
	}
	before := map[string]string{}
	etags := map[string]string{}
	// Unequal numbers of writes, so that the two ranges' LSNs differ.
	for _, id := range []string{"2", "3"} {
		n := 5
		if id == "3" {
			n = 12
		}
		for i, k := range f.keysIn(id, n) {
			doc := fmt.Sprintf("r%s-%d", id, i)
			f.upsert(doc, k, 0)
			before[doc] = k
		}
		_, etags[id] = f.drain(rangeHeader(id), "")
	}

	if _, err := f.control().Merge(context.Background(), MergeRequest{Database: "db", Container: "items", Ranges: []string{"1", "3"}}); err == nil {
		t.Error("ranges 1 and 3 are not adjacent, and merged")
	}
	ch, err := f.control().Merge(context.Background(), MergeRequest{Database: "db", Container: "items", Ranges: []string{"3", "2"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Created) != 1 {
		t.Fatalf("merge: %+v", ch)
	}
	m := ch.Created[0]
	if m.ID != "4" || !slices.Equal(m.Parents, []string{"2", "3"}) || m.MinInclusive != byID["2"].MinInclusive || m.MaxExclusive != byID["3"].MaxExclusive {
		t.Errorf("merged range %+v, want id 4 over [%s, %s) with parents [2 3]", m, byID["2"].MinInclusive, byID["3"].MaxExclusive)
	}
	for _, id := range []string{"2", "3"} {
		if p := f.read(rangeHeader(id)); p.status != http.StatusGone || p.subStatus != cosmos.SubPartitionKeyRangeGone {
			t.Errorf("change feed of merged-away range %s: %d/%d, want 410/1002", id, p.status, p.subStatus)
		}
	}
	all, _ := f.drain(rangeHeader(m.ID), "")
	sort.Strings(all)
	var want []string
	for id := range before {
		want = append(want, id)
	}
	sort.Strings(want)
	if !slices.Equal(all, want) {
		t.Errorf("merged range holds %v, want %v", all, want)
	}

	after := map[string]string{} // id → the parent range its key was in
	for _, id := range []string{"2", "3"} {
		for i, k := range f.keysIn(id, 3) {
			doc := fmt.Sprintf("after-%s-%d", id, i)
			f.upsert(doc, k, 1)
			after[doc] = id
		}
	}
	// The .NET SDK reads a parent's continuation after a merge with the parent's EPK
	// range on the merged range.
	for _, id := range []string{"2", "3"} {
		scoped := merge(rangeHeader(m.ID), map[string]string{headerStartEPK: byID[id].MinInclusive, headerEndEPK: byID[id].MaxExclusive})
		ids, _ := f.drain(scoped, etags[id])
		var wantIDs []string
		for doc, from := range after {
			if from == id {
				wantIDs = append(wantIDs, doc)
			}
		}
		sort.Strings(ids)
		sort.Strings(wantIDs)
		if !slices.Equal(ids, wantIDs) {
			t.Errorf("range %s's continuation on the merged range: %v, want %v", id, ids, wantIDs)
		}
	}
	inc := f.pkRanges(incremental(pkRangesETag(f.s.store.dbs["db"].colls["items"], 4)))
	if len(inc.ranges) != 1 || inc.ranges[0].ID != "4" {
		t.Errorf("incremental ranges feed after the merge: %+v, want the merged range alone", inc.ranges)
	}
}

func TestScenarioSplitsAFullRangeAndMergesOnTime(t *testing.T) {
	clk := clock.NewFake(time.Now())
	cfg := Config{
		Databases: []DatabaseConfig{{ID: "db", Containers: []ContainerConfig{{ID: "items", PartitionKey: []string{"/pk"}}}}},
		Splits:    []SplitRule{{Database: "db", Container: "items", Range: "0", Documents: 6}},
		Merges:    []MergeRule{{Database: "db", Container: "items", Ranges: []string{"2", "3"}, After: faults.Duration(time.Minute)}},
	}
	s, err := Start(cfg, Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f := &changeFeedTest{t: t, s: s, c: newTestClient(t, s.Key())}
	ids := func() []string {
		var out []string
		for _, r := range f.pkRanges(nil).ranges {
			out = append(out, r.ID)
		}
		return out
	}
	keys := f.keysIn("0", 6)
	for i, k := range keys[:5] {
		f.upsert(fmt.Sprint("d", i), k, 0)
	}
	if got := ids(); !slices.Equal(got, []string{"0", "1", "2", "3"}) {
		t.Fatalf("ranges after 5 documents in range 0: %v, want no split yet", got)
	}
	f.upsert("d5", keys[5], 0)
	if got := ids(); !slices.Equal(got, []string{"1", "2", "3", "4", "5"}) {
		t.Fatalf("ranges after the 6th document in range 0: %v, want 0 split into 4 and 5", got)
	}
	clk.Advance(59 * time.Second)
	if got := ids(); len(got) != 5 {
		t.Fatalf("ranges before the merge's time: %v", got)
	}
	clk.Advance(time.Second)
	if got := ids(); !slices.Equal(got, []string{"1", "4", "5", "6"}) {
		t.Fatalf("ranges at the merge's time: %v, want 2 and 3 merged into 6", got)
	}
}

func TestMergeEnabledAccountRefusesRequestsWithoutTheCapability(t *testing.T) {
	f := newChangeFeedTest(t, func(c *Config) { c.MergeEnabled = true })
	for _, tc := range []struct {
		name, header string
		want         int
	}{
		{"an empty header", "", http.StatusBadRequest},
		{"no capabilities", "0", http.StatusBadRequest},
		{"other capabilities only", "2", http.StatusBadRequest},
		{"not a number", "PartitionMerge", http.StatusBadRequest},
		{"partition merge, as the Go and JS SDKs send it", "1", http.StatusOK},
		{"partition merge among others", "11", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Set even when empty: the transport declares the capability unless the
			// request says otherwise (a request without the header at all is
			// e2e/splits TestEveryCommandWorksOnAMergeEnabledAccount's).
			hdr := map[string]string{headerSDKSupportedCapabilities: tc.header}
			for _, path := range []string{"/", "/dbs/db/colls/items"} {
				resp, err := f.c.do(f.s.Endpoint(), "GET", path, hdr, nil)
				if code, _ := statusOf(t, resp, err); code != tc.want {
					t.Errorf("GET %s with %q: %d %s, want %d", path, tc.header, code, resp.Body, tc.want)
				}
			}
		})
	}
	st, err := f.control().State(context.Background())
	if err != nil || !st.MergeEnabled {
		t.Errorf("state: merge_enabled %v (%v), want true; the control API needs no capability", st.MergeEnabled, err)
	}
}
