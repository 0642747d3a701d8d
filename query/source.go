package query

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
)

// rangeState is one partition key range (or the one partition key) as the query reads
// it: where its next page starts, the page being returned, and at most one page read
// ahead. Only the goroutine calling Next touches it; page requests run on their own
// goroutines and hand their answers back over Iterator.results.
type rangeState struct {
	r epkRange
	// next is the service continuation of the next page to read ("" from the start
	// while !exhausted); exhausted: the service said there are no more pages.
	next      string
	exhausted bool
	// fetching: a request for the page at next is out. gen tells its answer from that
	// of a request whose page is no longer wanted (a page re-read to a smaller size).
	fetching bool
	gen      int
	// maxItems overrides the page size of the requests until one brings items (0: the
	// query's); cutTo is the size a page was read again at, which the service should
	// have kept to (if not, the page is returned whole, past MaxItems, rather than read
	// again and again).
	maxItems int
	cutTo    int
	// ahead is the page read ahead, not yet being returned.
	ahead *fetched
	// buf is what is left of the page being returned, read from bufCont; used counts
	// its items already taken.
	buf     []entry
	bufCont string
	used    int
	// bufBody is the lent buffer buf's items are slices of (nil when none was lent).
	bufBody []byte
	// consLast and consTies (ORDER BY) are the values of the last item taken from the
	// page at bufCont and the identities of the items taken with those values.
	consLast    []value
	consLastRaw json.RawMessage
	consTies    []string
	// filter skips what an earlier run already returned (ORDER BY, from a token).
	filter *resumeFilter
	// children replace the range once its buf is used up: it split. They start from
	// childCont, the continuation whose request answered 410/1002.
	children  []epkRange
	childCont string
	// gone counts 410/1002 answers in a row that a refresh did not explain (the range
	// is still listed), so that a range that keeps answering so is given up on.
	gone int
}

// fetched is a page as the range returned it.
type fetched struct {
	cont  string // the continuation it was read from
	items []entry
	body  []byte // the lent buffer items are slices of (page.body), or nil
}

// entry is one item of a range's page. For ORDER BY it is the rewritten query's
// {"_rid", "orderByItems", "payload"}: vals are the ORDER BY values, out the payload (nil
// for an undefined projection, which yields no result) and id the _rid; otherwise out is
// the item.
type entry struct {
	out json.RawMessage
	// orderKey is nil unless the query sorts: an unordered page's entries are the
	// items alone (a fourth of the memory a page of them took with the key inline).
	*orderKey
}

// orderKey is where an ORDER BY row sorts: its values, as parsed and as sent, and its
// identity among ties.
type orderKey struct {
	vals    []value
	valsRaw json.RawMessage
	id      string
}

func (r *rangeState) hasBuf() bool { return len(r.buf) > 0 }

// finished reports a range with nothing left to read or return.
func (r *rangeState) finished() bool {
	return r.exhausted && !r.hasBuf() && r.ahead == nil && r.children == nil && !r.fetching
}

// promote makes the page read ahead the page being returned, once the current one is
// used up.
func (r *rangeState) promote() {
	if r.hasBuf() || r.ahead == nil {
		return
	}
	r.buf, r.bufCont, r.used, r.bufBody = r.ahead.items, r.ahead.cont, 0, r.ahead.body
	r.consLast, r.consLastRaw, r.consTies = nil, nil, nil
	r.ahead = nil
}

// resumePoint is where a token resumes the range: the continuation of the first page
// with anything not yet taken, and what to skip of it.
func (r *rangeState) resumePoint() rangeToken {
	t := rangeToken{epkRange: r.r}
	switch {
	case r.hasBuf():
		t.C = r.bufCont
		if r.used > 0 {
			t.Last, t.Ties = r.consLastRaw, append([]string(nil), r.consTies...)
		}
	case r.ahead != nil:
		t.C = r.ahead.cont
	default:
		t.C = r.next
	}
	if f := r.filter; f != nil {
		// Items of an earlier run not met yet (the page boundaries moved) must still be
		// skipped from here.
		last, err := f.sorter.parseRow(t.Last)
		switch {
		case t.Last == nil || err != nil:
			t.Last, t.Ties = f.lastRaw, f.remaining()
		default:
			switch c := f.sorter.compare(f.last, last); {
			case c > 0:
				t.Last, t.Ties = f.lastRaw, f.remaining()
			case c == 0:
				t.Ties = append(t.Ties, f.remaining()...)
			}
		}
	}
	return t
}

// sorter orders ORDER BY rows.
type sorter struct {
	desc []bool
}

func (s sorter) compare(a, b []value) int {
	for i, d := range s.desc {
		c := compareValues(a[i], b[i])
		if d {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

func equalRows(a, b []value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if compareValues(a[i], b[i]) != 0 {
			return false
		}
	}
	return true
}

// parseRow reads orderByItems: [{"item": v}, …], {} for an undefined value.
func (s sorter) parseRow(raw json.RawMessage) ([]value, error) {
	if raw == nil {
		return nil, nil
	}
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("orderByItems is not [{\"item\": …}, …]: %.200s", raw)
	}
	if len(items) != len(s.desc) {
		return nil, fmt.Errorf("orderByItems has %d values for %d ORDER BY expressions", len(items), len(s.desc))
	}
	row := make([]value, len(items))
	for i, it := range items {
		v, err := parseValue(it["item"])
		if err != nil {
			return nil, err
		}
		row[i] = v
	}
	return row, nil
}

// parseEntries reads a page's items: ORDER BY rows when s sorts, the items themselves
// otherwise.
func parseEntries(items []json.RawMessage, s *sorter) ([]entry, error) {
	out := make([]entry, len(items))
	var keys []orderKey
	if s != nil {
		keys = make([]orderKey, len(items))
	}
	for i, raw := range items {
		if s == nil {
			out[i] = entry{out: raw}
			continue
		}
		var row struct {
			RID          string          `json:"_rid"`
			OrderByItems json.RawMessage `json:"orderByItems"`
			Payload      json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(raw, &row); err != nil {
			return nil, fmt.Errorf("an ORDER BY page item is not an object: %v", err)
		}
		vals, err := s.parseRow(row.OrderByItems)
		if err != nil {
			return nil, err
		}
		if vals == nil {
			return nil, fmt.Errorf("an ORDER BY page item has no orderByItems: %.200s", raw)
		}
		id := row.RID
		if id == "" {
			// No _rid: the whole row is the identity (two equal rows are then one).
			h, _ := hashOf(raw)
			id = "#" + base64.RawURLEncoding.EncodeToString(h[:])
		}
		keys[i] = orderKey{vals: vals, valsRaw: row.OrderByItems, id: id}
		out[i] = entry{out: bytes.TrimSpace(row.Payload), orderKey: &keys[i]}
		if len(out[i].out) == 0 {
			out[i].out = nil
		}
	}
	return out, nil
}

// resumeFilter skips, in a range resumed from a token, what the earlier run returned of
// the page at the token's continuation: every item sorted before last, and of the items
// with last's values those whose identity is in ties (the earlier run returned them).
// It stays on, across pages, until an item sorts after last: the service may cut the
// resumed page elsewhere. It never depends on the service's order among ties.
type resumeFilter struct {
	sorter  sorter
	last    []value
	lastRaw json.RawMessage
	ties    map[string]int
}

func newResumeFilter(s sorter, last json.RawMessage, ties []string) (*resumeFilter, error) {
	if last == nil {
		return nil, nil
	}
	row, err := s.parseRow(last)
	if err != nil {
		return nil, err
	}
	f := &resumeFilter{sorter: s, last: row, lastRaw: last, ties: map[string]int{}}
	for _, id := range ties {
		f.ties[id]++
	}
	return f, nil
}

func (f *resumeFilter) clone() *resumeFilter {
	if f == nil {
		return nil
	}
	c := *f
	c.ties = make(map[string]int, len(f.ties))
	for k, v := range f.ties {
		c.ties[k] = v
	}
	return &c
}

func (f *resumeFilter) remaining() []string {
	var out []string
	for id, n := range f.ties {
		for ; n > 0; n-- {
			out = append(out, id)
		}
	}
	return out
}

// skip reports whether e was returned by the earlier run, and whether the filter is
// done (e sorts after last: nothing later can have been returned).
func (f *resumeFilter) skip(e entry) (skip, done bool) {
	switch c := f.sorter.compare(e.vals, f.last); {
	case c < 0:
		return true, false
	case c > 0:
		return false, true
	}
	if f.ties[e.id] > 0 {
		f.ties[e.id]--
		return true, false
	}
	return false, false
}

// take takes the head of the range's page, recording it for resumePoint.
func (r *rangeState) take() entry {
	e := r.buf[0]
	r.buf = r.buf[1:]
	r.used++
	if e.orderKey != nil {
		if r.consLast != nil && equalRows(e.vals, r.consLast) {
			r.consTies = append(r.consTies, e.id)
		} else {
			r.consLast, r.consLastRaw, r.consTies = e.vals, e.valsRaw, []string{e.id}
		}
	}
	return e
}

// head is the range's next item for the merge, after the resume filter skipped what an
// earlier run returned; ok is false when the range has no page to take from now.
func (r *rangeState) head() (entry, bool) {
	for {
		r.promote()
		if !r.hasBuf() {
			return entry{}, false
		}
		if r.filter == nil {
			return r.buf[0], true
		}
		skip, done := r.filter.skip(r.buf[0])
		if done {
			r.filter = nil
		}
		if !skip {
			return r.buf[0], true
		}
		r.take()
	}
}

// fetchResult is a page request's answer.
type fetchResult struct {
	rs      *rangeState
	gen     int
	cont    string
	page    page
	entries []entry
	info    PageInfo
	err     error
}

// pull statuses.
type pullStatus int

const (
	pullItem    pullStatus = iota
	pullPageEnd            // (unordered) the page being returned is used up
	pullWait               // a range must answer first
	pullEnd                // nothing left
)

// pullOrdered takes the next item of the k-way merge: the first, in the query's order,
// of every range's next item; on equal values the range first in key order, so that a
// run is deterministic. It waits while any range that is not finished has no page.
func (it *Iterator) pullOrdered() (entry, pullStatus) {
	for {
		it.retire()
		var best *rangeState
		var bestHead entry
		waiting := false
		for _, r := range it.ranges {
			h, ok := r.head()
			if !ok {
				if !r.finished() {
					waiting = true
				}
				continue
			}
			if best == nil || it.sorter.compare(h.vals, bestHead.vals) < 0 {
				best, bestHead = r, h
			}
		}
		if waiting {
			return entry{}, pullWait
		}
		if best == nil {
			if it.retire() {
				continue
			}
			return entry{}, pullEnd
		}
		e := best.take()
		if e.out == nil {
			continue // an undefined projection: no result
		}
		return e, pullItem
	}
}

// pullUnordered takes the next item of the page being returned, or starts returning the
// next page that has arrived (whole pages, so that a token never resumes mid-page).
func (it *Iterator) pullUnordered() (entry, pullStatus) {
	for {
		if r := it.cur; r != nil {
			if r.hasBuf() {
				return r.take(), pullItem
			}
			if r.bufBody != nil {
				// Its items were all returned, by this Next or an earlier one: the
				// buffer goes back at the next Next, when the caller is done with them.
				it.retired = append(it.retired, r.bufBody)
				r.bufBody = nil
			}
			it.cur = nil
			it.retire()
			return entry{}, pullPageEnd
		}
		waiting := false
		for _, r := range it.ranges {
			r.promote()
			if !r.hasBuf() {
				if !r.finished() {
					waiting = true
				}
				continue
			}
			// (A page larger than the size it was read again at: the service did not
			// keep to it, and reading again would not help.)
			if budget := it.budget(); budget >= 0 && len(r.buf) > budget && (r.cutTo == 0 || len(r.buf) <= r.cutTo) {
				// The page holds more than this run may still return: read it again
				// cut to the budget, so that the run ends on a page boundary.
				it.reread(r, budget)
				waiting = true
				continue
			}
			it.cur, r.cutTo = r, 0
			break
		}
		if it.cur != nil {
			continue
		}
		if it.retire() {
			continue
		}
		if waiting {
			return entry{}, pullWait
		}
		return entry{}, pullEnd
	}
}

// reread drops a range's page and whatever was read after it, to read it again with
// at most maxItems items.
func (it *Iterator) reread(r *rangeState, maxItems int) {
	r.next, r.exhausted = r.bufCont, false
	r.buf, r.ahead, r.used, r.bufBody = nil, nil, 0, nil // (a lent buffer dropped is collected)
	r.fetching = false
	r.gen++
	r.maxItems, r.cutTo = maxItems, maxItems
}

// retire removes finished ranges and puts the children of a split range in its place
// once its page is used up; it reports whether any range was replaced.
func (it *Iterator) retire() bool {
	replaced := false
	out := it.ranges[:0:0]
	for _, r := range it.ranges {
		switch {
		case r.children != nil && !r.hasBuf() && r.ahead == nil:
			for _, c := range r.children {
				out = append(out, &rangeState{r: c, next: r.childCont, filter: r.filter.clone()})
			}
			replaced = true
		case r.finished():
		default:
			out = append(out, r)
		}
	}
	it.ranges = out
	return replaced
}

// schedule sends page requests: first for ranges the merge waits on, then one page
// ahead for the others, while fewer than Parallelism requests are outstanding.
func (it *Iterator) schedule() {
	if it.stopped() {
		return
	}
	for pass := 0; pass < 2; pass++ {
		for _, r := range it.ranges {
			if it.outstanding >= it.o.Parallelism {
				return
			}
			if r.fetching || r.ahead != nil || r.exhausted || r.children != nil {
				continue
			}
			if pass == 0 && r.hasBuf() {
				continue
			}
			it.fetch(r)
		}
	}
}

func (it *Iterator) fetch(r *rangeState) {
	r.fetching = true
	it.outstanding++
	req := pageRequest{spec: it.spec, pk: it.o.PartitionKey, rangeID: r.r.ID, continuation: r.next, maxItems: it.o.PageSize, buffers: it.bufs}
	if r.r.Scoped {
		req.startEPK, req.endEPK = r.r.Min, r.r.Max
	}
	if r.maxItems > 0 {
		req.maxItems = r.maxItems
	}
	gen, cont := r.gen, r.next
	var s *sorter
	if it.shape.ordered || it.shape.nonStreaming {
		s = &it.sorter // set once, before the first request: read-only here
	}
	it.wg.Add(1)
	go func() {
		defer it.wg.Done()
		p, info, err := it.be.page(it.ctx, req)
		res := fetchResult{rs: r, gen: gen, cont: cont, page: p, info: info, err: err}
		if err == nil {
			// Parsed here, on the request's goroutine, so that the ranges' pages are
			// decoded in parallel rather than by the merge.
			res.entries, res.err = parseEntries(p.items, s)
			res.page.items = nil
			if res.err != nil {
				res.err = fmt.Errorf("range %s: %w", r.r.ID, res.err)
			}
		}
		it.results <- res
	}()
}

// apply takes in a page request's answer. A range that split is replaced by its
// children (read from the refreshed ranges), each going on from the continuation that
// the split range answered 410/1002 to.
func (it *Iterator) apply(ctx context.Context, res fetchResult) {
	it.outstanding--
	r := res.rs
	if res.gen != r.gen {
		res.info.Note = "not used: the page was read again with fewer items, to stop at the item limit"
		it.record(res.info)
		return
	}
	r.fetching = false
	if res.err != nil {
		if isRangeGone(res.err) && it.o.PartitionKey == nil {
			res.info.Note = "partition key range " + r.r.ID + " is gone (410/1002): re-reading the ranges"
			it.record(res.info)
			it.split(ctx, r, res.cont)
			return
		}
		it.record(res.info)
		it.fail(res.err)
		return
	}
	it.record(res.info)
	r.gone = 0
	items := res.entries
	r.next = res.page.continuation
	r.exhausted = r.next == ""
	if len(items) > 0 {
		r.ahead = &fetched{cont: res.cont, items: items, body: res.page.body}
		r.maxItems = 0 // a page re-read to a smaller size came back; later pages are full
	}
}

// split handles a range that answered 410/1002.
func (it *Iterator) split(ctx context.Context, r *rangeState, cont string) {
	all, info, err := it.be.ranges(ctx, true)
	it.record(info)
	if err != nil {
		if ctx.Err() != nil {
			return // the caller gave up: the range answers 410 again next time
		}
		it.fail(fmt.Errorf("re-reading the partition key ranges after range %s split: %w", r.r.ID, err))
		return
	}
	children, err := childrenOf(r.r, all)
	if err != nil {
		it.fail(err)
		return
	}
	if len(children) == 1 && children[0].ID == r.r.ID {
		// Still listed: a gateway whose routing had not caught up. Read it again.
		if r.gone++; r.gone > 3 {
			it.fail(fmt.Errorf("partition key range %s keeps answering 410/1002 (gone) but is still listed", r.r.ID))
		}
		return
	}
	if merged(r.r, children) {
		it.totals.Merges++
	} else {
		it.totals.Splits++
	}
	r.children, r.childCont, r.exhausted = children, cont, true
	it.retire()
}

func sortStrings(s []string) { sort.Strings(s) }
