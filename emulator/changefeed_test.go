package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// feedPage is one change feed response.
type feedPage struct {
	status, subStatus int
	etag              string
	ids               []string
	lsns              []int64
	docs              []map[string]any
	body              string
}

// changeFeedTest is an emulator with documents whose partition key ranges are known.
type changeFeedTest struct {
	t *testing.T
	s *Server
	c *testClient
}

func newChangeFeedTest(t *testing.T, mutate ...func(*Config)) *changeFeedTest {
	s := startTest(t, mutate...)
	return &changeFeedTest{t: t, s: s, c: newTestClient(t, s.Key())}
}

// rangeOf is the partition key range that holds pk (a JSON array).
func (f *changeFeedTest) rangeOf(pk string) string {
	f.t.Helper()
	c, err := f.s.store.container("db", "items")
	if err != nil {
		f.t.Fatal(err)
	}
	key, perr := cosmos.ParsePartitionKeyJSON(pk)
	if perr != nil {
		f.t.Fatal(perr)
	}
	return c.partitionFor(key).rng.ID
}

// keysIn returns n partition key values ("k0", "k1" …) that hash to range id.
func (f *changeFeedTest) keysIn(id string, n int) []string {
	f.t.Helper()
	var out []string
	for i := 0; len(out) < n && i < 10000; i++ {
		if k := fmt.Sprintf("k%d", i); f.rangeOf(`["`+k+`"]`) == id {
			out = append(out, k)
		}
	}
	return out
}

func (f *changeFeedTest) upsert(id, pk string, v int) {
	f.t.Helper()
	hdr := merge(pkHeader(`["`+pk+`"]`), map[string]string{cosmos.HeaderIsUpsert: "true"})
	resp, err := f.c.do(f.s.Endpoint(), "POST", itemsPath(), hdr, fmt.Sprintf(`{"id":%q,"pk":%q,"v":%d}`, id, pk, v))
	if code, _ := statusOf(f.t, resp, err); code != http.StatusCreated && code != http.StatusOK {
		f.t.Fatalf("upsert %s: %d %s", id, code, resp.Body)
	}
}

// read sends a change feed read (latest version mode) with extra headers.
func (f *changeFeedTest) read(hdr map[string]string) feedPage {
	f.t.Helper()
	return f.readAt(f.s.Endpoint(), hdr)
}

func (f *changeFeedTest) readAt(endpoint string, hdr map[string]string) feedPage {
	f.t.Helper()
	h := map[string]string{cosmos.HeaderAIM: "Incremental Feed"}
	for k, v := range hdr {
		if v == "<absent>" {
			delete(h, k)
			continue
		}
		h[k] = v
	}
	resp, err := f.c.do(endpoint, "GET", itemsPath(), h, nil)
	p := feedPage{body: string(resp.Body)}
	p.status, p.subStatus = statusOf(f.t, resp, err)
	p.etag = resp.Header.Get(cosmos.HeaderETag)
	if p.status == http.StatusOK {
		var feed struct {
			Documents []map[string]any
			Count     int `json:"_count"`
		}
		if err := json.Unmarshal(resp.Body, &feed); err != nil {
			f.t.Fatal(err)
		}
		if feed.Count != len(feed.Documents) {
			f.t.Errorf("_count %d for %d documents", feed.Count, len(feed.Documents))
		}
		p.docs = feed.Documents
		for _, d := range feed.Documents {
			p.ids = append(p.ids, d["id"].(string))
			lsn, _ := d["_lsn"].(float64)
			p.lsns = append(p.lsns, int64(lsn))
		}
	}
	return p
}

func rangeHeader(id string) map[string]string {
	return map[string]string{cosmos.HeaderPartitionKeyRangeID: id}
}

func TestChangeFeedFromTheBeginningThen304(t *testing.T) {
	f := newChangeFeedTest(t)
	keys := f.keysIn("1", 3)
	for i, k := range keys {
		f.upsert(fmt.Sprint("d", i), k, 0)
	}
	f.upsert("other", f.keysIn("2", 1)[0], 0)

	first := f.read(rangeHeader("1"))
	if first.status != http.StatusOK || !slices.Equal(first.ids, []string{"d0", "d1", "d2"}) {
		t.Fatalf("range 1 from the beginning: %d %v, want d0 d1 d2 (%s)", first.status, first.ids, first.body)
	}
	if p := f.read(rangeHeader(f.s.store.dbs["db"].colls["items"].meta.RID + ",1")); !slices.Equal(p.ids, first.ids) {
		t.Errorf("range id with the collection _rid before it (.NET, Java): %v, want %v", p.ids, first.ids)
	}
	if !slices.IsSorted(first.lsns) || first.lsns[0] == 0 {
		t.Errorf("_lsn values %v are not ascending LSNs", first.lsns)
	}
	if want := `"` + strconv.FormatInt(first.lsns[2], 10) + `"`; first.etag != want {
		t.Errorf("etag %s, want the range's LSN %s", first.etag, want)
	}
	again := f.read(merge(rangeHeader("1"), map[string]string{cosmos.HeaderIfNoneMatch: first.etag}))
	if again.status != http.StatusNotModified || again.etag != first.etag {
		t.Fatalf("nothing new: %d etag %s, want 304 with etag %s", again.status, again.etag, first.etag)
	}
	// Unquoted etags (as some clients store them) are accepted too.
	if p := f.read(merge(rangeHeader("1"), map[string]string{cosmos.HeaderIfNoneMatch: strings.Trim(first.etag, `"`)})); p.status != http.StatusNotModified {
		t.Errorf("unquoted etag: %d, want 304", p.status)
	}
}

func TestChangeFeedLatestVersionResumesAfterNewWrites(t *testing.T) {
	f := newChangeFeedTest(t)
	keys := f.keysIn("0", 3)
	f.upsert("a", keys[0], 1)
	f.upsert("b", keys[1], 1)
	f.upsert("a", keys[0], 2)
	f.upsert("a", keys[0], 3)
	f.upsert("gone", keys[2], 1)
	resp, err := f.c.do(f.s.Endpoint(), "DELETE", itemPath("gone"), pkHeader(`["`+keys[2]+`"]`), nil)
	if code, _ := statusOf(t, resp, err); code != http.StatusNoContent {
		t.Fatalf("delete: %d", code)
	}

	p := f.read(rangeHeader("0"))
	if !slices.Equal(p.ids, []string{"b", "a"}) {
		t.Fatalf("latest version mode returned %v, want each document once in LSN order (b, a) and no deleted one", p.ids)
	}
	if v := p.docs[1]["v"]; v != 3.0 {
		t.Errorf("a came as version %v, want its latest (3)", v)
	}
	f.upsert("b", keys[1], 2)
	f.upsert("c", keys[2], 1)
	next := f.read(merge(rangeHeader("0"), map[string]string{cosmos.HeaderIfNoneMatch: p.etag}))
	if next.status != http.StatusOK || !slices.Equal(next.ids, []string{"b", "c"}) {
		t.Fatalf("resumed after new writes: %d %v, want b c", next.status, next.ids)
	}
	if p := f.read(merge(rangeHeader("0"), map[string]string{cosmos.HeaderIfNoneMatch: next.etag})); p.status != http.StatusNotModified {
		t.Errorf("after the resumed page: %d, want 304", p.status)
	}
}

func TestChangeFeedFromNow(t *testing.T) {
	f := newChangeFeedTest(t)
	k := f.keysIn("3", 1)[0]
	f.upsert("before", k, 0)
	now := f.read(merge(rangeHeader("3"), map[string]string{cosmos.HeaderIfNoneMatch: "*"}))
	if now.status != http.StatusNotModified || now.etag == "" {
		t.Fatalf("If-None-Match: * → %d etag %q, want 304 with the current position", now.status, now.etag)
	}
	f.upsert("after", k, 0)
	p := f.read(merge(rangeHeader("3"), map[string]string{cosmos.HeaderIfNoneMatch: now.etag}))
	if !slices.Equal(p.ids, []string{"after"}) {
		t.Fatalf("from now: %v, want only the later write", p.ids)
	}
}

func TestChangeFeedPages(t *testing.T) {
	f := newChangeFeedTest(t)
	var want []string
	for i, k := range f.keysIn("2", 5) {
		id := fmt.Sprint("p", i)
		f.upsert(id, k, 0)
		want = append(want, id)
	}
	var got []string
	sizes := []int{}
	etag := ""
	for range 10 {
		hdr := merge(rangeHeader("2"), map[string]string{cosmos.HeaderMaxItemCount: "2"})
		if etag != "" {
			hdr[cosmos.HeaderIfNoneMatch] = etag
		}
		p := f.read(hdr)
		etag = p.etag
		if p.status == http.StatusNotModified {
			break
		}
		got = append(got, p.ids...)
		sizes = append(sizes, len(p.ids))
	}
	if !slices.Equal(got, want) || !slices.Equal(sizes, []int{2, 2, 1}) {
		t.Errorf("pages of 2: %v in pages %v, want %v in 2, 2, 1", got, sizes, want)
	}
}

func TestChangeFeedStartTime(t *testing.T) {
	f := newChangeFeedTest(t)
	keys := f.keysIn("1", 2)
	f.upsert("old", keys[0], 0)
	// If-Modified-Since has one-second resolution: start in the next second.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	start := time.Now()
	f.upsert("new", keys[1], 0)
	p := f.read(merge(rangeHeader("1"), map[string]string{"If-Modified-Since": start.UTC().Format(http.TimeFormat)}))
	if !slices.Equal(p.ids, []string{"new"}) {
		t.Fatalf("start from %s: %v, want only the later write", start.Format(time.TimeOnly), p.ids)
	}
	// The Go SDK formats the time as RFC 1123 with the zone "UTC".
	if p := f.read(merge(rangeHeader("1"), map[string]string{"If-Modified-Since": start.UTC().Format(time.RFC1123)})); !slices.Equal(p.ids, []string{"new"}) {
		t.Errorf("start from %s: %v, want only the later write", start.UTC().Format(time.RFC1123), p.ids)
	}
	// The continuation wins over the start time, which the JS SDK keeps sending.
	f.upsert("old", keys[0], 1)
	next := f.read(merge(rangeHeader("1"), map[string]string{"If-Modified-Since": time.Now().Add(time.Hour).UTC().Format(http.TimeFormat), cosmos.HeaderIfNoneMatch: p.etag}))
	if !slices.Equal(next.ids, []string{"old"}) {
		t.Errorf("continuation with a start time: %v, want the update", next.ids)
	}
}

func TestChangeFeedPartitionKeyAndFeedRangeFilters(t *testing.T) {
	f := newChangeFeedTest(t)
	keys := f.keysIn("0", 6)
	for i, k := range keys {
		f.upsert(fmt.Sprint("f", i), k, 0)
	}
	pk := `["` + keys[2] + `"]`
	t.Run("a partition key alone reads its range, that key only", func(t *testing.T) {
		p := f.read(pkHeader(pk))
		if !slices.Equal(p.ids, []string{"f2"}) {
			t.Errorf("got %v, want f2", p.ids)
		}
	})
	t.Run("a partition key with its range id reads that key only", func(t *testing.T) {
		p := f.read(merge(pkHeader(pk), rangeHeader("0")))
		if !slices.Equal(p.ids, []string{"f2"}) {
			t.Errorf("got %v, want f2", p.ids)
		}
	})
	t.Run("a partition key with another range id finds nothing", func(t *testing.T) {
		if p := f.read(merge(pkHeader(pk), rangeHeader("1"))); p.status != http.StatusNotModified {
			t.Errorf("got %d %v, want 304", p.status, p.ids)
		}
	})
	t.Run("two halves of a range as feed ranges split its changes", func(t *testing.T) {
		// Range 0 is ["", "10"): halves at "08".
		var union []string
		for _, half := range [][2]string{{"", "08"}, {"08", "10"}} {
			p := f.read(merge(rangeHeader("0"), map[string]string{headerStartEPK: half[0], headerEndEPK: half[1], "x-ms-read-key-type": "EffectivePartitionKeyRange"}))
			for _, d := range p.docs {
				var key cosmos.PartitionKey
				key, _ = cosmos.ParsePartitionKeyJSON(`["` + d["pk"].(string) + `"]`)
				if epk := cosmos.EffectivePartitionKey(key); epk < half[0] || epk >= half[1] {
					t.Errorf("%s (epk %s) came in feed range %v", d["id"], epk, half)
				}
			}
			union = append(union, p.ids...)
		}
		slices.Sort(union)
		if !slices.Equal(union, []string{"f0", "f1", "f2", "f3", "f4", "f5"}) {
			t.Errorf("the halves returned %v together, want f0…f5", union)
		}
	})
	t.Run("a feed range inside one range needs no range id", func(t *testing.T) {
		p := f.read(map[string]string{headerStartEPK: "", headerEndEPK: "10"})
		if len(p.ids) != 6 {
			t.Errorf("got %d %v, want the six documents of range 0", p.status, p.ids)
		}
	})
}

func TestChangeFeedRefusals(t *testing.T) {
	f := newChangeFeedTest(t)
	cases := []struct {
		name      string
		hdr       map[string]string
		status    int
		subStatus int
		says      string
	}{
		{"no range, key or feed range on a container of four ranges", nil, 400, 0, "covers one partition key range"},
		{"a range that does not exist", rangeHeader("7"), 410, cosmos.SubPartitionKeyRangeGone, "does not exist"},
		{"a continuation that is no change feed etag", merge(rangeHeader("0"), map[string]string{cosmos.HeaderIfNoneMatch: `"a1b2-c3"`}), 400, 0, "not an etag of this emulator"},
		{"all versions and deletes mode", merge(rangeHeader("0"), map[string]string{cosmos.HeaderAIM: "Full-Fidelity Feed"}), 400, 0, "latest version mode only"},
		{"a feed range spanning ranges", map[string]string{headerStartEPK: "08", headerEndEPK: "18"}, 400, 0, "spans several"},
		{"a bad start time", merge(rangeHeader("0"), map[string]string{"If-Modified-Since": "yesterday"}), 400, 0, "HTTP date"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := f.read(tc.hdr)
			if p.status != tc.status || p.subStatus != tc.subStatus || !strings.Contains(p.body, tc.says) {
				t.Errorf("%d/%d %s, want %d/%d saying %q", p.status, p.subStatus, p.body, tc.status, tc.subStatus, tc.says)
			}
		})
	}
	t.Run("a plain read feed without A-IM is still a full read", func(t *testing.T) {
		f.upsert("x", "k0", 0)
		if p := f.read(map[string]string{cosmos.HeaderAIM: "<absent>"}); p.status != http.StatusOK || p.etag != "" {
			t.Errorf("read feed: %d etag %q", p.status, p.etag)
		}
	})
}

func TestChangeFeedInALaggingRegionWaitsForReplication(t *testing.T) {
	f := newChangeFeedTest(t, func(c *Config) { c.ReplicationLag = faults.Duration(time.Hour) })
	west := regionURL(t, f.s, "West US")
	k := f.keysIn("1", 1)[0]
	before := f.readAt(west, merge(rangeHeader("1"), map[string]string{cosmos.HeaderIfNoneMatch: "*"}))
	f.upsert("late", k, 0)
	if p := f.read(merge(rangeHeader("1"), map[string]string{cosmos.HeaderIfNoneMatch: before.etag})); !slices.Equal(p.ids, []string{"late"}) {
		t.Fatalf("write region: %v, want the write", p.ids)
	}
	p := f.readAt(west, merge(rangeHeader("1"), map[string]string{cosmos.HeaderIfNoneMatch: before.etag}))
	if p.status != http.StatusNotModified || p.etag != before.etag {
		t.Errorf("read region before replication: %d etag %s, want 304 that stays at %s", p.status, p.etag, before.etag)
	}
}

func TestChangeFeedContinuationSurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	persist := func(c *Config) { c.DataDir = dir }
	f := newChangeFeedTest(t, persist)
	keys := f.keysIn("2", 3)
	f.upsert("a", keys[0], 0)
	f.upsert("b", keys[1], 0)
	first := f.read(rangeHeader("2"))
	if !slices.Equal(first.ids, []string{"a", "b"}) {
		t.Fatalf("before the restart: %v", first.ids)
	}
	f.s.Close()

	f = newChangeFeedTest(t, persist)
	if p := f.read(merge(rangeHeader("2"), map[string]string{cosmos.HeaderIfNoneMatch: first.etag})); p.status != http.StatusNotModified {
		t.Fatalf("the old continuation after a restart: %d %v, want 304", p.status, p.ids)
	}
	f.upsert("c", keys[2], 0)
	if p := f.read(merge(rangeHeader("2"), map[string]string{cosmos.HeaderIfNoneMatch: first.etag})); !slices.Equal(p.ids, []string{"c"}) {
		t.Errorf("after a restart and a write: %v, want c", p.ids)
	}
	if p := f.read(rangeHeader("2")); !slices.Equal(p.ids, []string{"a", "b", "c"}) {
		t.Errorf("from the beginning after a restart: %v, want a b c in LSN order", p.ids)
	}
}

// TestChangeFeedIndexAgreesWithAScan: the LSN index (no replication lag) pages through
// exactly what a scan of the range finds, across writes, updates and deletes that
// happen between pages.
func TestChangeFeedIndexAgreesWithAScan(t *testing.T) {
	f := newChangeFeedTest(t)
	c, _ := f.s.store.container("db", "items")
	p := c.partitionByID("0")
	keys := f.keysIn("0", 40)
	reference := func(after int64, size int) ([]int64, int64) {
		var lsns []int64
		p.mu.RLock()
		for _, e := range p.items {
			if v := e.latest(); v != nil && v.body != nil && v.lsn > after {
				lsns = append(lsns, v.lsn)
			}
		}
		last := p.lsn
		p.mu.RUnlock()
		slices.Sort(lsns)
		if len(lsns) > size {
			return lsns[:size], lsns[size-1]
		}
		return lsns, max(last, after)
	}
	step := 0
	for round := range 30 {
		for range 7 {
			step++
			k := keys[(step*7)%len(keys)]
			if step%5 == 0 {
				f.c.do(f.s.Endpoint(), "DELETE", itemPath("i"+k), pkHeader(`["`+k+`"]`), nil)
				continue
			}
			f.upsert("i"+k, k, step)
		}
		for _, after := range []int64{0, int64(round), int64(step / 2), int64(step - 3)} {
			page, next, _ := f.s.store.changes(p, 0, changeFeedRead{afterLSN: after, maxItems: 4})
			var got []int64
			for _, ch := range page {
				got = append(got, ch.lsn)
			}
			want, wantNext := reference(after, 4)
			if !slices.Equal(got, want) || next != wantNext {
				t.Fatalf("round %d after %d: LSNs %v next %d, want %v next %d", round, after, got, next, want, wantNext)
			}
		}
	}
}
