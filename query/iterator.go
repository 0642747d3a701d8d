package query

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

var sprintf = fmt.Sprintf

// ErrClosed is what Next returns after Close.
var ErrClosed = errors.New("the query was closed")

// Iterator runs one query. Its methods are for one goroutine at a time; page requests
// run on goroutines of their own, which end with the query, Close, or the end of the
// context Run was given.
type Iterator struct {
	o     Options
	be    backend
	fp    string
	start time.Time

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// results carries page answers; it holds as many as may be outstanding, so that a
	// request never waits to hand its answer over.
	results     chan fetchResult
	outstanding int

	set    bool // the plan and ranges are known
	shape  shape
	sorter sorter
	spec   cosmos.QuerySpec
	tok    *token

	ranges []*rangeState
	cur    *rangeState // unordered: the range whose page is being returned

	// client-side stages
	skipped, emitted int
	lastHash         *hashKey
	seen             map[hashKey]struct{}
	// bufs lends the pages' buffers with ReuseItemMemory (nil otherwise); retired are
	// the buffers of pages whose items were all returned, to give back at the next Next.
	bufs    *cosmos.BodyBuffers
	retired [][]byte
	// outBuf is the slice the last Next returned, reused by the next with bufs.
	outBuf  []json.RawMessage
	grouper *grouper
	top     *topRows // non-streaming ORDER BY
	dcount  int64
	drained bool
	out     []json.RawMessage
	outIdx  int

	returned int  // items returned in this run (MaxItems)
	complete bool // the query has no more results
	limited  bool // this run returned MaxItems items
	closed   bool
	err      error

	infos  []PageInfo
	totals Totals
}

func start(ctx context.Context, o Options, be backend) (*Iterator, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	it := &Iterator{o: o, be: be, fp: fingerprint(&o), start: o.Clock.Now()}
	if o.Continuation != "" {
		t, err := decodeToken(o.Continuation, it.fp)
		if err != nil {
			return nil, err
		}
		it.tok = t
	}
	it.ctx, it.cancel = context.WithCancel(ctx)
	it.results = make(chan fetchResult, o.Parallelism)
	return it, nil
}

// Next returns the next items of the query and one request not yet reported (nil when
// none is waiting), as soon as it has either: a page that brings nothing to return yet
// (an aggregate's page, or one the merge must hold until every range has answered) is
// still reported at once, for progress and diagnostics. Items come in the query's
// order; one Next returns at most PageSize items (100 when it is 0) of a merge, of
// aggregate or group results, or one page otherwise.
//
// At the end it returns io.EOF, once every request was reported; also when MaxItems
// items were returned, with Continuation set to resume after them. A failed request
// ends the query: Next returns its error (with its PageInfo, and then with each request
// still to report), and Continuation still resumes after the items returned. An error
// of ctx leaves the iterator usable: the next Next goes on.
func (it *Iterator) Next(ctx context.Context) ([]json.RawMessage, *PageInfo, error) {
	if it.closed {
		return nil, nil, ErrClosed
	}
	// The caller is done with what the last Next returned.
	for _, b := range it.retired {
		it.bufs.Put(b)
	}
	it.retired = it.retired[:0]
	sctx, stop := it.syncContext(ctx)
	defer stop()
	if !it.set {
		if err := it.setup(sctx); err != nil {
			if ctx.Err() != nil {
				it.ranges = nil // the caller gave up: set up again on the next call
				return nil, it.popInfo(), ctx.Err()
			}
			it.fail(err)
		}
	}
	for {
		it.applyReady(sctx)
		var items []json.RawMessage
		status := pullEnd
		if it.err == nil {
			items, status = it.produce()
			it.schedule()
		}
		if it.err != nil || it.done() {
			it.stopFetching(sctx)
		}
		info := it.popInfo()
		switch {
		case len(items) > 0:
			if it.bufs != nil {
				it.outBuf = items
			}
			it.totals.Items += len(items)
			return items, info, nil
		case it.err != nil:
			return nil, info, it.err
		case info != nil:
			return nil, info, nil
		case status == pullEnd || it.done():
			return nil, nil, io.EOF
		case it.outstanding == 0:
			// Nothing out and nothing to take: a bug, better an error than a hang.
			it.fail(fmt.Errorf("internal error: the query waits for a page no request was sent for"))
			continue
		}
		select {
		case res := <-it.results:
			it.apply(sctx, res)
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

// syncContext is the context of the requests Next itself sends (the plan, the ranges):
// it ends with ctx or with the iterator.
func (it *Iterator) syncContext(ctx context.Context) (context.Context, func()) {
	sctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(it.ctx, cancel)
	return sctx, func() {
		stop()
		cancel()
	}
}

// setup asks for the plan (across partitions, or within a partition key prefix) and
// finds the ranges to read, or takes them from the continuation token.
func (it *Iterator) setup(ctx context.Context) error {
	it.spec = it.o.Spec
	if it.o.PartitionKey == nil {
		p, info, err := it.be.plan(ctx, it.o.Spec)
		it.record(info)
		if err != nil {
			return err
		}
		if it.shape, err = shapeOf(p); err != nil {
			var ue *UnsupportedError
			if errors.As(err, &ue) && it.o.PartitionKeyPrefix != nil {
				ue.Prefix = true
			}
			return err
		}
		if it.shape.hybrid != nil {
			if it.o.FeedRange != nil {
				return &UnsupportedError{Feature: "hybrid search (hybridSearchQueryInfo) within a feed range"}
			}
			if it.o.PartitionKeyPrefix != nil {
				return &UnsupportedError{Feature: "hybrid search (hybridSearchQueryInfo)", Prefix: true}
			}
			if err := it.setupHybrid(ctx, p); err != nil {
				return err
			}
			it.set = true
			return nil
		}
		it.spec.Query = perRangeQuery(p, it.o.Spec.Query)
		it.sorter = sorter{desc: it.shape.sorts}
		if it.shape.grouping {
			it.grouper = newGrouper(p.Info)
		}
		if it.shape.nonStreaming {
			if it.tok != nil {
				return inputErrorf("%s", "continuation tokens are not supported for a non-streaming ORDER BY (vector search: ORDER BY VectorDistance): it ranks every range's rows before it returns any, so it cannot resume (the SDKs refuse it too); run it again without --continuation")
			}
			it.top = newTopRows(it.shape.buffer, it.sorter)
		}
		if it.tok == nil {
			all, info, err := it.be.ranges(ctx, false)
			it.record(info)
			if err != nil {
				return err
			}
			targets := targetRanges(all, p.QueryRanges)
			if it.o.PartitionKeyPrefix != nil {
				targets = prefixRanges(targets, cosmos.PrefixRange(it.o.PartitionKeyPrefix))
			}
			if it.o.FeedRange != nil {
				targets = prefixRanges(targets, *it.o.FeedRange)
			}
			for _, r := range targets {
				it.ranges = append(it.ranges, &rangeState{r: r})
			}
		}
	} else {
		it.shape = shape{top: -1, limit: -1}
		if it.tok == nil {
			it.ranges = []*rangeState{{}}
		}
	}
	if it.shape.distinct == "Unordered" || it.shape.dcount != nil {
		it.seen = map[hashKey]struct{}{}
	}
	// Only an unordered, streaming query returns each page's items as they came, and
	// keeps nothing of them once returned (DISTINCT keeps hashes).
	if it.o.ReuseItemMemory && !it.shape.ordered && !it.shape.grouping && it.shape.dcount == nil && !it.shape.nonStreaming {
		it.bufs = &cosmos.BodyBuffers{}
	}
	it.set = true
	if it.tok != nil {
		return it.restore(it.tok)
	}
	return nil
}

// mode is the token's name for how the query runs.
func (it *Iterator) mode() string {
	if it.o.PartitionKey != nil {
		return "partition"
	}
	return it.shape.mode()
}

// restore takes up a run where a token left it.
func (it *Iterator) restore(t *token) error {
	mismatch := inputErrorf("the continuation token was issued for another query (or container, or partition key): resume with the same query, parameters and --pk, or run it without --continuation")
	if t.Mode != it.mode() {
		return mismatch
	}
	for _, rt := range t.Ranges {
		r := &rangeState{r: rt.epkRange, next: rt.C}
		if it.shape.ordered {
			f, err := newResumeFilter(it.sorter, rt.Last, rt.Ties)
			if err != nil {
				return mismatch
			}
			r.filter = f
		}
		it.ranges = append(it.ranges, r)
	}
	it.skipped, it.emitted = t.Skipped, t.Emitted
	if t.LastHash != "" {
		h, err := decodeHash(t.LastHash)
		if err != nil {
			return mismatch
		}
		it.lastHash = &h
	}
	for _, s := range t.Seen {
		h, err := decodeHash(s)
		if err != nil || it.seen == nil {
			return mismatch
		}
		it.seen[h] = struct{}{}
	}
	if it.grouper != nil {
		if err := it.grouper.restore(t.Groups); err != nil {
			return mismatch
		}
	}
	it.dcount = int64(t.Emitted)
	if it.shape.dcount != nil {
		it.emitted = 0
	}
	it.drained, it.outIdx = t.Drained, t.Out
	return nil
}

func decodeHash(s string) (hashKey, error) {
	var h hashKey
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != len(h) {
		return h, errTokenMismatch
	}
	copy(h[:], b)
	return h, nil
}

func encodeHash(h hashKey) string { return base64.RawURLEncoding.EncodeToString(h[:]) }

// produce runs the client-side stages on what the ranges delivered.
func (it *Iterator) produce() ([]json.RawMessage, pullStatus) {
	if it.done() {
		return nil, pullEnd
	}
	if it.shape.grouping || it.shape.dcount != nil || it.shape.nonStreaming || it.shape.hybrid != nil {
		return it.produceDrained()
	}
	var out []json.RawMessage
	if it.bufs != nil {
		out = it.outBuf[:0] // the caller is done with what the last Next returned
	}
	batch := it.o.PageSize
	if batch == 0 {
		batch = defaultBatch
	}
	for {
		if it.takeLimit() == 0 {
			it.complete = true
			return out, pullEnd
		}
		// Unordered pages are returned whole (a page never holds more than the budget
		// when it starts): a token never resumes in the middle of one.
		if it.budget() == 0 && (it.shape.ordered || it.cur == nil) {
			it.limited = true
			return out, pullEnd
		}
		e, st := it.pull()
		switch st {
		case pullEnd:
			it.complete = true
			return out, st
		case pullWait:
			return out, st
		case pullPageEnd:
			if len(out) > 0 {
				return out, pullItem
			}
			continue
		}
		if !it.keepDistinct(e.out) {
			continue
		}
		if it.skipped < it.shape.offset {
			it.skipped++
			continue
		}
		it.emitted++
		it.returned++
		out = append(out, e.out)
		if it.shape.ordered && len(out) >= batch {
			return out, pullItem
		}
	}
}

func (it *Iterator) pull() (entry, pullStatus) {
	if it.shape.ordered {
		return it.pullOrdered()
	}
	return it.pullUnordered()
}

// keepDistinct applies DISTINCT (and DCount's distinct count): ordered DISTINCT drops
// an item equal to the one before it, unordered DISTINCT one equal to any before it.
func (it *Iterator) keepDistinct(item json.RawMessage) bool {
	if it.shape.distinct == "" && it.shape.dcount == nil {
		return true
	}
	h, err := hashOf(item)
	if err != nil {
		it.fail(fmt.Errorf("DISTINCT: an item is not valid JSON: %v", err))
		return false
	}
	if it.seen != nil {
		if _, dup := it.seen[h]; dup {
			return false
		}
		it.seen[h] = struct{}{}
		return true
	}
	if it.lastHash != nil && *it.lastHash == h {
		return false
	}
	it.lastHash = &h
	return true
}

// takeLimit is how many more items TOP or LIMIT let through (-1: no limit).
func (it *Iterator) takeLimit() int {
	limit := -1
	if it.shape.top >= 0 {
		limit = it.shape.top
	}
	if it.shape.limit >= 0 && (limit < 0 || it.shape.limit < limit) {
		limit = it.shape.limit
	}
	if limit < 0 {
		return -1
	}
	return max(limit-it.emitted, 0)
}

// budget is how many more items this run may return (-1: no bound).
func (it *Iterator) budget() int {
	// A non-streaming ORDER BY reads every range whole, whatever this run returns.
	if it.o.MaxItems == 0 || (it.shape.nonStreaming && !it.drained) {
		return -1
	}
	return max(it.o.MaxItems-it.returned, 0)
}

// produceDrained runs aggregates, GROUP BY and DCount: every page folds into their
// state, and their results are returned once every range is drained.
func (it *Iterator) produceDrained() ([]json.RawMessage, pullStatus) {
	for !it.drained {
		e, st := it.pullUnordered()
		switch st {
		case pullWait:
			return nil, st
		case pullEnd:
			it.drained = true
		case pullItem:
			if it.top != nil {
				it.top.add(e, it.cur.r.Min)
			} else if it.grouper != nil {
				if err := it.grouper.add(e.out); err != nil {
					it.fail(fmt.Errorf("combining the ranges' aggregates: %w", err))
					return nil, pullEnd
				}
			} else if it.keepDistinct(e.out) {
				it.dcount++
			}
		}
	}
	if it.out == nil {
		it.out = it.drainedResults()
	}
	batch := it.o.PageSize
	if batch == 0 {
		batch = defaultBatch
	}
	n := min(batch, len(it.out)-it.outIdx)
	if b := it.budget(); b >= 0 {
		n = min(n, b)
	}
	items := it.out[it.outIdx : it.outIdx+n]
	it.outIdx += n
	it.returned += n
	switch {
	case it.outIdx >= len(it.out):
		it.complete = true
	case it.budget() == 0:
		it.limited = true
	}
	if len(items) == 0 {
		return nil, pullEnd
	}
	return items, pullItem
}

// drainedResults are the final results of a drained query, after OFFSET, LIMIT and TOP.
func (it *Iterator) drainedResults() []json.RawMessage {
	var all []json.RawMessage
	if it.top != nil {
		all = it.top.results()
	} else if it.grouper != nil {
		all = it.grouper.results()
	} else {
		v := json.RawMessage(sprintf("%d", it.dcount))
		if a := it.shape.dcount.Alias; a != "" {
			name, _ := json.Marshal(a)
			v = json.RawMessage(sprintf("{%s:%s}", name, v))
		}
		all = []json.RawMessage{v}
	}
	all = all[min(it.shape.offset, len(all)):]
	limit := -1
	if it.shape.top >= 0 {
		limit = it.shape.top
	}
	if it.shape.limit >= 0 && (limit < 0 || it.shape.limit < limit) {
		limit = it.shape.limit
	}
	if limit >= 0 && limit < len(all) {
		all = all[:limit]
	}
	if all == nil {
		all = []json.RawMessage{}
	}
	return all
}

// done reports a query that returns nothing more in this run.
func (it *Iterator) done() bool { return it.complete || it.limited }

func (it *Iterator) stopped() bool { return it.done() || it.err != nil || it.closed }

func (it *Iterator) fail(err error) {
	if it.err == nil {
		it.err = err
	}
}

// applyReady takes in every answer that has arrived, without waiting.
func (it *Iterator) applyReady(ctx context.Context) {
	for {
		select {
		case res := <-it.results:
			it.apply(ctx, res)
		default:
			return
		}
	}
}

// stopFetching cancels the page requests still out, which the run no longer needs, and
// waits for them, so that their requests are reported too.
func (it *Iterator) stopFetching(ctx context.Context) {
	if it.outstanding == 0 {
		return
	}
	it.cancel()
	it.wg.Wait()
	for it.outstanding > 0 {
		res := <-it.results
		it.outstanding--
		if res.err != nil && res.info.Note == "" {
			res.info.Note = "cancelled: the query needed no more from this range"
		} else if res.info.Note == "" {
			res.info.Note = "not used: the query needed no more from this range"
		}
		it.record(res.info)
	}
}

// record counts a request and queues it for Next to report.
func (it *Iterator) record(info PageInfo) {
	if d := info.Diagnostics; info.Kind == KindRanges && d != nil && len(d.Attempts) == 0 {
		return // served from the routing cache: no request
	}
	t := &it.totals
	t.Requests++
	if info.Kind == KindPage {
		t.Pages++
	}
	t.RequestCharge += info.RequestCharge
	if d := info.Diagnostics; d != nil {
		for _, r := range d.ContactedRegions {
			if !contains(t.Regions, r) {
				t.Regions = append(t.Regions, r)
			}
		}
	}
	it.infos = append(it.infos, info)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (it *Iterator) popInfo() *PageInfo {
	if len(it.infos) == 0 {
		return nil
	}
	info := it.infos[0]
	it.infos = it.infos[1:]
	return &info
}

// Close stops the page requests still out and waits for them. Continuation stays valid.
func (it *Iterator) Close() error {
	if it.closed {
		return nil
	}
	it.closed = true
	it.cancel()
	it.wg.Wait()
	return nil
}

// Stats sums up the run so far.
func (it *Iterator) Stats() Totals {
	t := it.totals
	t.Regions = append([]string(nil), t.Regions...)
	t.Duration = it.o.Clock.Now().Sub(it.start)
	return t
}

// Continuation is the token that resumes the query after the items Next returned so
// far: "" when the query is complete, or when its state cannot be carried in a token
// (Unresumable says why).
func (it *Iterator) Continuation() string {
	s, _ := it.continuation()
	return s
}

// Unresumable says why a query that is not complete has no continuation token ("" when
// it has one, or is complete).
func (it *Iterator) Unresumable() string {
	_, err := it.continuation()
	if err != nil {
		return err.Error()
	}
	return ""
}

func (it *Iterator) continuation() (string, error) {
	if it.complete {
		return "", nil
	}
	if !it.set {
		// Nothing was read: resume where this run would have started.
		return it.o.Continuation, nil
	}
	if it.shape.nonStreaming {
		return "", errNonStreamingResume
	}
	if it.shape.hybrid != nil {
		return "", errHybridUnresumable
	}
	t := &token{Fingerprint: it.fp, Mode: it.mode(), Skipped: it.skipped, Emitted: it.emitted}
	for _, r := range it.ranges {
		if r.finished() {
			continue
		}
		t.Ranges = append(t.Ranges, r.resumePoint())
	}
	if it.lastHash != nil {
		t.LastHash = encodeHash(*it.lastHash)
	}
	for h := range it.seen {
		t.Seen = append(t.Seen, encodeHash(h))
	}
	sortStrings(t.Seen)
	if it.grouper != nil {
		t.Groups = it.grouper.state()
	}
	if it.shape.dcount != nil {
		t.Emitted = int(it.dcount)
	}
	t.Drained, t.Out = it.drained, it.outIdx
	if len(t.Ranges) == 0 && !t.Drained && !it.shape.grouping && it.shape.dcount == nil {
		return "", nil // every range is finished: nothing left to resume
	}
	return encodeToken(t)
}
