package emulator

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// epkDoc is a document the tests wrote, with its effective partition key.
type epkDoc struct {
	id, pk, epk string
	v           int
}

// epkQuery is a query of the EPK tests and what it returns from a set of documents,
// each row rendered by rowKey. Its query "" is a read feed (GET …/docs).
type epkQuery struct {
	name, q string
	want    func(docs []epkDoc) []string
	// sorted compares the rows as a set (GROUP BY has no order).
	sorted bool
}

func idsOf(docs []epkDoc) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.id
	}
	return out
}

var (
	streamingQuery = epkQuery{name: "a streaming query", q: "SELECT * FROM c", want: idsOf}
	orderByQuery   = epkQuery{name: "an ORDER BY query", q: "SELECT * FROM c ORDER BY c.v DESC", want: func(docs []epkDoc) []string {
		docs = slices.Clone(docs)
		slices.SortStableFunc(docs, func(a, b epkDoc) int { return b.v - a.v })
		return idsOf(docs)
	}}
	countQuery = epkQuery{name: "an aggregate", q: "SELECT VALUE COUNT(1) FROM c", want: func(docs []epkDoc) []string {
		return []string{fmt.Sprint(len(docs))}
	}}
	groupByQuery = epkQuery{name: "a GROUP BY query", q: "SELECT c.pk FROM c GROUP BY c.pk", sorted: true, want: func(docs []epkDoc) []string {
		var pks []string
		for _, d := range docs {
			pks = append(pks, d.pk)
		}
		return pks
	}}
	readFeed = epkQuery{name: "a read feed", want: idsOf}
)

// rowKey renders a row: a document's id, a group's partition key, or the value.
func rowKey(t *testing.T, raw json.RawMessage) string {
	var obj map[string]any
	if json.Unmarshal(raw, &obj) == nil {
		if id, ok := obj["id"].(string); ok {
			return id
		}
		if pk, ok := obj["pk"].(string); ok {
			return pk
		}
		t.Fatalf("row %s has neither id nor pk", raw)
	}
	return string(raw)
}

// epkPage is one page of a query or read feed.
type epkPage struct {
	status int
	body   string
	rows   []string
	next   string
	header http.Header
}

// on is f reporting to the subtest t.
func (f *changeFeedTest) on(t *testing.T) *changeFeedTest {
	g := *f
	g.t = t
	return &g
}

// queryPage sends one page of q (a read feed when q is "") with hdr, one row a page.
func (f *changeFeedTest) queryPage(q epkQuery, hdr map[string]string, cont string) epkPage {
	f.t.Helper()
	h := merge(hdr, map[string]string{cosmos.HeaderMaxItemCount: "1", cosmos.HeaderPopulateQueryMetrics: "true"})
	if cont != "" {
		h[cosmos.HeaderContinuation] = cont
	}
	method, body := "GET", any(nil)
	if q.q != "" {
		method, body = "POST", cosmos.QuerySpec{Query: q.q}
		h[cosmos.HeaderIsQuery] = "true"
		h["Content-Type"] = "application/query+json"
	}
	resp, err := f.c.do(f.s.Endpoint(), method, itemsPath(), h, body)
	p := epkPage{body: string(resp.Body), header: resp.Header}
	p.status, _ = statusOf(f.t, resp, err)
	if p.status != http.StatusOK {
		return p
	}
	var feed struct{ Documents []json.RawMessage }
	if err := json.Unmarshal(resp.Body, &feed); err != nil {
		f.t.Fatal(err)
	}
	for _, d := range feed.Documents {
		p.rows = append(p.rows, rowKey(f.t, d))
	}
	p.next = resp.Header.Get(cosmos.HeaderContinuation)
	return p
}

// pageThrough reads q to its end from cont, one row a page, with the headers hdr
// returns before each page; between runs after each page but the last.
func (f *changeFeedTest) pageThrough(q epkQuery, hdr func() map[string]string, cont string, between func(page int)) []string {
	f.t.Helper()
	var rows []string
	for page := range 200 {
		p := f.queryPage(q, hdr(), cont)
		if p.status != http.StatusOK {
			f.t.Fatalf("page %d of %s with %v: %d %s", page, q.name, hdr(), p.status, p.body)
		}
		rows = append(rows, p.rows...)
		if cont = p.next; cont == "" {
			return rows
		}
		if between != nil {
			between(page)
		}
	}
	f.t.Fatalf("%s never ended", q.name)
	return nil
}

func narrowedTo(rangeID string, span epkSpan) map[string]string {
	return map[string]string{cosmos.HeaderPartitionKeyRangeID: rangeID, cosmos.HeaderStartEPK: span.lo, cosmos.HeaderEndEPK: span.hi,
		cosmos.HeaderReadKeyType: cosmos.ReadKeyTypeEPKRange, cosmos.HeaderEnableCrossPartition: "true"}
}

func (f *changeFeedTest) rangeSpans() map[string]epkSpan {
	f.t.Helper()
	out := map[string]epkSpan{}
	for _, r := range f.pkRanges(nil).ranges {
		out[r.ID] = spanOf(r)
	}
	return out
}

// write upserts n documents whose keys hash to range id, named prefix0, prefix1 …,
// with values from v.
func (f *changeFeedTest) write(rangeID, prefix string, n int, v func(i int) int) []epkDoc {
	f.t.Helper()
	var docs []epkDoc
	for i, k := range f.keysIn(rangeID, n) {
		d := epkDoc{id: fmt.Sprint(prefix, i), pk: k, epk: epkOf(f.t, k), v: v(i)}
		f.upsert(d.id, d.pk, d.v)
		docs = append(docs, d)
	}
	return docs
}

// in keeps the documents whose effective partition key lies in span.
func in(docs []epkDoc, span epkSpan) []epkDoc {
	var out []epkDoc
	for _, d := range docs {
		if span.holds(d.epk) {
			out = append(out, d)
		}
	}
	return out
}

func sameRows(q epkQuery, got, want []string) bool {
	if q.sorted {
		got, want = slices.Clone(got), slices.Clone(want)
		sort.Strings(got)
		sort.Strings(want)
	}
	return slices.Equal(got, want)
}

func TestQueryNarrowedToAnEPKRangeReadsOnlyItsDocuments(t *testing.T) {
	f := newChangeFeedTest(t)
	r2 := f.rangeSpans()["2"]
	docs := f.write("2", "a", 10, func(i int) int { return (i * 7) % 10 })
	low := f.write("0", "low", 6, func(i int) int { return i })
	f.write("1", "other", 3, func(i int) int { return i })
	f.write("3", "other3-", 3, func(i int) int { return i })
	epks := make([]string, len(docs))
	for i, d := range docs {
		epks[i] = d.epk
	}
	sort.Strings(epks)
	cut := epks[len(epks)/2]
	spans := []epkSpan{{r2.lo, cut}, {cut, r2.hi}, {strings.ToLower(cut), r2.hi}}
	for _, span := range spans {
		want := in(docs, epkSpan{strings.ToUpper(span.lo), strings.ToUpper(span.hi)})
		for _, q := range []epkQuery{streamingQuery, orderByQuery, countQuery, groupByQuery, readFeed} {
			t.Run(fmt.Sprintf("%s of range 2 narrowed to %s", q.name, span), func(t *testing.T) {
				hdr := func() map[string]string { return narrowedTo("2", span) }
				if got := f.on(t).pageThrough(q, hdr, "", nil); !sameRows(q, got, q.want(want)) {
					t.Errorf("got %v, want %v", got, q.want(want))
				}
			})
		}
	}

	t.Run("the start may be left out, for the lowest key", func(t *testing.T) {
		hdr := func() map[string]string {
			return map[string]string{cosmos.HeaderPartitionKeyRangeID: "0", cosmos.HeaderEndEPK: "08", cosmos.HeaderEnableCrossPartition: "true"}
		}
		want := idsOf(in(low, epkSpan{"", "08"}))
		if len(want) == 0 || len(want) == len(low) {
			t.Fatalf("the test needs documents of range 0 on both sides of 08: %v", low)
		}
		if got := f.on(t).pageThrough(streamingQuery, hdr, "", nil); !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})

	t.Run("metrics and charge count the documents of the span only", func(t *testing.T) {
		span := epkSpan{cut, r2.hi}
		n := len(in(docs, span))
		p := f.on(t).queryPage(countQuery, narrowedTo("2", span), "")
		if p.status != http.StatusOK {
			t.Fatalf("%d %s", p.status, p.body)
		}
		metrics := p.header.Get(cosmos.HeaderQueryMetrics)
		if !strings.Contains(metrics, fmt.Sprintf("retrievedDocumentCount=%d;", n)) || !strings.Contains(metrics, "outputDocumentCount=1;") {
			t.Errorf("metrics %s, want %d documents retrieved and 1 output", metrics, n)
		}
		charge, err := strconv.ParseFloat(p.header.Get(cosmos.HeaderRequestCharge), 64)
		if want := chargeQuery(n, len(fmt.Sprint(n))); err != nil || charge != want {
			t.Errorf("charge %v (%v), want %v (for %d documents)", charge, err, want, n)
		}
	})
}

func TestQueryNarrowedToAnEPKRangeRefusals(t *testing.T) {
	f := newChangeFeedTest(t)
	query := func(extra map[string]string) map[string]string {
		return merge(map[string]string{cosmos.HeaderPartitionKeyRangeID: "2", cosmos.HeaderEnableCrossPartition: "true"}, extra)
	}
	cases := []struct {
		name string
		hdr  map[string]string
		says string
	}{
		{"a start without an end", query(map[string]string{cosmos.HeaderStartEPK: "25"}), "needs x-ms-end-epk as well"},
		{"an empty span", query(map[string]string{cosmos.HeaderStartEPK: "28", cosmos.HeaderEndEPK: "28"}), "is empty"},
		{"a span the wrong way round", query(map[string]string{cosmos.HeaderStartEPK: "29", cosmos.HeaderEndEPK: "28"}), "is empty"},
		{"a span reaching beyond the range", query(map[string]string{cosmos.HeaderStartEPK: "25", cosmos.HeaderEndEPK: "35"}), "is not inside partition key range 2"},
		{"a span of another range", query(map[string]string{cosmos.HeaderStartEPK: "30", cosmos.HeaderEndEPK: "FF"}), "is not inside partition key range 2"},
		{"bounds that are not hex", query(map[string]string{cosmos.HeaderStartEPK: "2G", cosmos.HeaderEndEPK: "2H"}), "hex digits"},
		{"an end above FF", query(map[string]string{cosmos.HeaderStartEPK: "30", cosmos.HeaderEndEPK: "FF00"}), "hex digits"},
		{"another read key type", query(map[string]string{cosmos.HeaderStartEPK: "20", cosmos.HeaderEndEPK: "28", cosmos.HeaderReadKeyType: "EffectivePartitionKey"}), "is not supported"},
		{"a span with a partition key", map[string]string{cosmos.HeaderPartitionKey: `["k1"]`, cosmos.HeaderStartEPK: "20", cosmos.HeaderEndEPK: "28"}, "not both"},
		{"a span without a range", map[string]string{cosmos.HeaderEnableCrossPartition: "true", cosmos.HeaderStartEPK: "20", cosmos.HeaderEndEPK: "28"}, "send x-ms-documentdb-partitionkeyrangeid too"},
	}
	for _, tc := range cases {
		for _, q := range []epkQuery{streamingQuery, readFeed} {
			t.Run(tc.name+" ("+q.name+")", func(t *testing.T) {
				p := f.on(t).queryPage(q, tc.hdr, "")
				if p.status != http.StatusBadRequest || !strings.Contains(p.body, tc.says) {
					t.Errorf("%d %s, want 400 saying %q", p.status, p.body, tc.says)
				}
			})
		}
	}
}

// A query paged on range A, which then merges with its neighbour B into C, goes on from
// A's continuation on C, narrowed to A's keys as the JS SDK resumes a continuation, or
// not narrowed, as JS SDK 4.10.1 goes on when the merge happens during the query: either
// way it returns A's remaining documents, the ones written to A's keys since included,
// and nothing of B's, though B is written to before and after the merge.
func TestQueryContinuationOfAMergedRangeGoesOnInTheRangeThatHoldsItsKeys(t *testing.T) {
	for _, a := range []string{"2", "3"} {
		b := map[string]string{"2": "3", "3": "2"}[a]
		for _, q := range []epkQuery{streamingQuery, orderByQuery, groupByQuery, readFeed} {
			for _, narrowed := range []bool{true, false} {
				how := "narrowed to its keys"
				if !narrowed {
					how = "not narrowed"
				}
				t.Run(fmt.Sprintf("%s of range %s merged with %s, %s", q.name, a, b, how), func(t *testing.T) {
					f := newChangeFeedTest(t)
					spans := f.rangeSpans()
					// The two ranges' documents are written in turns, so that B holds documents
					// created before A's continuation's document and after it.
					var docs []epkDoc
					keysA, keysB := f.keysIn(a, 12), f.keysIn(b, 8)
					for i := range 6 {
						for j, k := range []string{keysA[i], keysB[i]} {
							d := epkDoc{id: fmt.Sprintf("d%02d-%d", i, j), pk: k, epk: epkOf(t, k), v: 50 + (i*5)%6*2 + j}
							f.upsert(d.id, d.pk, d.v)
							docs = append(docs, d)
						}
					}
					// GROUP BY goes on by row number: a write to A's keys between pages
					// moves the rows, as it does without a merge, so it gets none.
					writeA := q.name != groupByQuery.name
					more := func(prefix string, key string, v int) {
						d := epkDoc{id: prefix, pk: key, epk: epkOf(t, key), v: v}
						f.upsert(d.id, d.pk, d.v)
						docs = append(docs, d)
					}
					hdr := rangeHeader(a)
					hdr[cosmos.HeaderEnableCrossPartition] = "true"
					rows := f.pageThrough(q, func() map[string]string { return hdr }, "", func(page int) {
						if page != 1 {
							return
						}
						more("b-before", keysB[6], 1)
						if writeA {
							more("a-before", keysA[6], 2)
						}
						ch, err := f.control().Merge(context.Background(), MergeRequest{Database: "db", Container: "items", Ranges: []string{a, b}})
						if err != nil {
							t.Fatal(err)
						}
						c := ch.Created[0].ID
						if hdr = merge(rangeHeader(c), map[string]string{cosmos.HeaderEnableCrossPartition: "true"}); narrowed {
							hdr = narrowedTo(c, spans[a])
						}
						more("b-after", keysB[7], 3)
						if writeA {
							more("a-after", keysA[7], 0)
						}
					})
					if want := q.want(in(docs, spans[a])); !sameRows(q, rows, want) {
						t.Errorf("got %v, want %v", rows, want)
					}
				})
			}
		}
	}
}

// A cross-partition query that the emulator runs across every range itself goes on
// range after range in effective partition key order, whatever splits and merges
// happen between its pages: each document comes once.
func TestCrossPartitionQueryContinuationThroughSplitsAndMerges(t *testing.T) {
	cases := []struct {
		name    string
		reshape func(f *changeFeedTest) error
	}{
		{"range 2 merges with the range after it", func(f *changeFeedTest) error {
			_, err := f.control().Merge(context.Background(), MergeRequest{Database: "db", Container: "items", Ranges: []string{"2", "3"}})
			return err
		}},
		{"range 2 merges with the range before it", func(f *changeFeedTest) error {
			_, err := f.control().Merge(context.Background(), MergeRequest{Database: "db", Container: "items", Ranges: []string{"1", "2"}})
			return err
		}},
		{"range 2 splits", func(f *changeFeedTest) error {
			_, err := f.control().Split(context.Background(), SplitRequest{Database: "db", Container: "items", Range: "2"})
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newChangeFeedTest(t)
			keys := map[string][]string{}
			for _, id := range []string{"0", "1", "2", "3"} {
				keys[id] = f.keysIn(id, 5)
			}
			rangeOf := map[string]string{}
			var want []string
			for i := range 5 {
				for _, id := range []string{"3", "2", "1", "0"} {
					doc := fmt.Sprintf("r%s-%d", id, i)
					f.upsert(doc, keys[id][i], i)
					rangeOf[doc] = id
					want = append(want, doc)
				}
			}
			reshaped := false
			cross := map[string]string{cosmos.HeaderEnableCrossPartition: "true"}
			got := []string{}
			cont := ""
			for page := 0; ; page++ {
				p := f.queryPage(streamingQuery, cross, cont)
				if p.status != http.StatusOK {
					t.Fatalf("page %d: %d %s", page, p.status, p.body)
				}
				got = append(got, p.rows...)
				if cont = p.next; cont == "" {
					break
				}
				if !reshaped && rangeOf[got[len(got)-1]] == "2" && strings.HasSuffix(got[len(got)-1], "-1") {
					if err := tc.reshape(f); err != nil {
						t.Fatal(err)
					}
					reshaped = true
				}
			}
			if !reshaped {
				t.Fatal("the query never stopped inside range 2")
			}
			count := map[string]int{}
			for _, id := range got {
				count[id]++
			}
			for _, id := range want {
				if count[id] != 1 {
					t.Errorf("%s came %d times", id, count[id])
				}
			}
			if len(got) != len(want) {
				t.Errorf("%d rows, want %d: %v", len(got), len(want), got)
			}
		})
	}
}

// A continuation is refused where it cannot go on: in a range that neither is its own
// nor took its place, beyond its own keys, or as a row number in another result.
func TestQueryContinuationRefusedOutsideItsKeys(t *testing.T) {
	f := newChangeFeedTest(t)
	spans := f.rangeSpans()
	for _, id := range []string{"2", "3"} {
		f.write(id, "r"+id+"-", 6, func(i int) int { return i })
	}
	whole := func(id string) map[string]string {
		return map[string]string{cosmos.HeaderPartitionKeyRangeID: id, cosmos.HeaderEnableCrossPartition: "true"}
	}
	first := func(q epkQuery, hdr map[string]string) string {
		t.Helper()
		p := f.queryPage(q, hdr, "")
		if p.status != http.StatusOK || p.next == "" {
			t.Fatalf("first page of %s: %d %s, want a continuation", q.name, p.status, p.body)
		}
		return p.next
	}
	stream2, group2 := first(streamingQuery, whole("2")), first(groupByQuery, whole("2"))
	group3 := first(groupByQuery, whole("3"))
	ch, err := f.control().Merge(context.Background(), MergeRequest{Database: "db", Container: "items", Ranges: []string{"2", "3"}})
	if err != nil {
		t.Fatal(err)
	}
	merged := ch.Created[0].ID
	half := epkSpan{spans["2"].lo, "28"}

	cases := []struct {
		name string
		q    epkQuery
		hdr  map[string]string
		cont string
		says string
	}{
		{"a continuation sent to a range that did not take its range's place", streamingQuery, whole("0"), stream2, "neither is it nor took its place"},
		{"a continuation narrowed beyond its range's keys", streamingQuery, narrowedTo(merged, spanOf(ch.Created[0])), stream2, "reaches beyond them"},
		{"a row number narrowed to part of its range's keys", groupByQuery, narrowedTo(merged, half), group2, "is a position in the result of partition key range 2"},
		{"a row number of the upper range narrowed to the lower one's keys", groupByQuery, narrowedTo(merged, spans["2"]), group3, "reaches beyond them"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := f.on(t).queryPage(tc.q, tc.hdr, tc.cont)
			if p.status != http.StatusBadRequest || !strings.Contains(p.body, tc.says) {
				t.Errorf("%d %s, want 400 saying %q", p.status, p.body, tc.says)
			}
		})
	}

	t.Run("a row number goes on in a child of a split only from the start", func(t *testing.T) {
		g := newChangeFeedTest(t)
		g.write("1", "s", 6, func(i int) int { return i })
		p := g.queryPage(groupByQuery, whole("1"), "")
		if p.next == "" {
			t.Fatalf("no continuation: %d %s", p.status, p.body)
		}
		sp, err := g.control().Split(context.Background(), SplitRequest{Database: "db", Container: "items", Range: "1"})
		if err != nil {
			t.Fatal(err)
		}
		if q := g.queryPage(groupByQuery, whole(sp.Created[0].ID), p.next); q.status != http.StatusBadRequest || !strings.Contains(q.body, "split or merged since") {
			t.Errorf("%d %s, want 400 saying it split", q.status, q.body)
		}
	})
}
