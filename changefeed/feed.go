package changefeed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/internal/docfeed"
)

// Feed is a change feed being read. Each partition key range is polled by its own
// goroutine (at most Options.Parallelism polls at once), which hands its batch to Next
// and polls again only once Next has taken it: a feed holds at most one unread batch per
// range.
type Feed struct {
	o        Options
	be       backend
	endpoint string
	ctx      context.Context
	cancel   context.CancelFunc
	sem      chan struct{}
	out      chan event
	wg       sync.WaitGroup
	finished chan struct{}

	// cut: some range stopped before its Until (Close, or the end of Open's context).
	cut atomic.Bool

	mu     sync.Mutex
	ranges []*rangeState // the current ranges, in key order
	err    error         // the error that ended the feed

	// bufs lends the polls' buffers with ReuseItemMemory (nil otherwise); lastBody is
	// the buffer of the batch the last Next returned, given back at the next one.
	bufs     *cosmos.BodyBuffers
	lastBody []byte
}

// rangeState is one partition key range (or the partition key) of the feed.
type rangeState struct {
	id, min, max string
	// scoped: [min, max) is only part of range id (a range merged into it); its polls
	// are narrowed to those keys by x-ms-start-epk and x-ms-end-epk.
	scoped bool
	// rmin and rmax are range id's own bounds when scoped and known (not kept in a
	// state); merged is set on a range that replaced one merged into it.
	rmin, rmax string
	merged     bool
	pk         cosmos.PartitionKey
	since      time.Time
	stopAt     string
	// polled is the continuation the range's next poll sends; only its goroutine uses it.
	polled string
	// delivered is the position every batch Next returned covers (guarded by Feed.mu).
	delivered string
	// origin is the range this one split from (nil for none).
	origin   *rangeState
	failures int
}

type event struct {
	b   *Batch
	err error
}

// Open starts reading the change feed. It checks the options and the state, reads the
// container's partition key ranges (an error if the container does not exist) and, for
// From Now or Until StartPoint, each range's current position; then every range is
// polled in the background until Close, Options.Until, or the end of ctx.
func Open(ctx context.Context, o Options) (*Feed, error) {
	if o.Client == nil {
		return nil, inputErrorf("no client")
	}
	return open(ctx, o, &engineBackend{c: o.Client, db: o.Database, coll: o.Container, tmpl: o.Page})
}

func open(ctx context.Context, o Options, be backend) (*Feed, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	f := &Feed{o: o, be: be, endpoint: be.endpoint(), sem: make(chan struct{}, o.Parallelism), out: make(chan event), finished: make(chan struct{})}
	if o.ReuseItemMemory {
		f.bufs = &cosmos.BodyBuffers{}
	}
	if o.State != nil {
		if err := o.State.check(f.endpoint, &f.o); err != nil {
			return nil, err
		}
	}
	all, _, err := be.ranges(ctx, false)
	if err != nil {
		return nil, err
	}
	switch {
	case o.State != nil:
		for _, r := range o.State.Ranges {
			rs := &rangeState{id: r.ID, min: r.Min, max: r.Max, scoped: r.Scoped, pk: o.PartitionKey, polled: r.Continuation, delivered: r.Continuation, stopAt: r.StopAt}
			if r.Since != nil {
				rs.since = *r.Since
			}
			f.ranges = append(f.ranges, rs)
		}
	case o.PartitionKey != nil:
		f.ranges = []*rangeState{{pk: o.PartitionKey}}
	case o.PartitionKeyPrefix != nil:
		f.ranges = prefixRanges(all, cosmos.PrefixRange(o.PartitionKeyPrefix))
	case o.Scope != nil:
		f.ranges = prefixRanges(all, o.Scope.EPK())
	default:
		for _, r := range all {
			f.ranges = append(f.ranges, &rangeState{id: r.ID, min: r.MinInclusive, max: r.MaxExclusive})
		}
	}
	if o.State == nil {
		if o.From.Kind == AtTime {
			for _, rs := range f.ranges {
				rs.since = o.From.Time
			}
		}
		if err := f.resolveStart(ctx); err != nil {
			return nil, err
		}
	}
	f.ctx, f.cancel = context.WithCancel(context.WithoutCancel(ctx))
	context.AfterFunc(ctx, f.cancel)
	f.wg.Add(len(f.ranges))
	for _, rs := range f.ranges {
		go f.run(rs)
	}
	go func() {
		f.wg.Wait()
		close(f.finished)
	}()
	return f, nil
}

// resolveStart asks every range for its current position, which starts a feed From Now
// and ends one at StartPoint: a poll with If-None-Match "*" answers 304 with it.
func (f *Feed) resolveStart(ctx context.Context) error {
	if f.o.From.Kind != Now && f.o.Until != StartPoint {
		return nil
	}
	var wg sync.WaitGroup
	errs := make([]error, len(f.ranges))
	for i, rs := range f.ranges {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.sem <- struct{}{}
			defer func() { <-f.sem }()
			p, _, err := f.be.poll(ctx, rs.request("*", 1))
			if err != nil {
				errs[i] = fmt.Errorf("reading the current position of %s: %w", rangeName(rs.id), err)
				return
			}
			if f.o.Until == StartPoint {
				rs.stopAt = p.etag
			}
			if f.o.From.Kind == Now {
				rs.polled, rs.delivered = p.etag, p.etag
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Next returns the next batch any range delivered: changed items, a 304, a split, or a
// failed poll that will be tried again (Info says which). It returns io.EOF once every
// range has reached Options.Until, and the error that ended the feed (a missing
// container, a range that failed MaxFailures times in a row) from then on.
func (f *Feed) Next(ctx context.Context) (*Batch, error) {
	f.mu.Lock()
	err := f.err
	if f.lastBody != nil {
		// The caller is done with the batch the last Next returned.
		f.bufs.Put(f.lastBody)
		f.lastBody = nil
	}
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case ev := <-f.out:
		f.mu.Lock()
		defer f.mu.Unlock()
		if ev.err != nil {
			f.err = ev.err
			f.cancel()
			return nil, ev.err
		}
		if ev.b.rs != nil {
			ev.b.rs.delivered = ev.b.next
		}
		f.lastBody = ev.b.body
		return ev.b, nil
	case <-f.finished:
		if f.cut.Load() {
			return nil, context.Canceled
		}
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close stops every poll and waits for the range goroutines to end.
func (f *Feed) Close() {
	f.cancel()
	<-f.finished
}

// State is the position covering every Batch Next returned so far. Save it only after
// the batch's items were written: changes delivered but not saved are delivered again
// by a reader resumed from an earlier state (at least once).
func (f *Feed) State() *State {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stateLocked(nil, "")
}

// StateAfter is the position of a reader that used only the first n items of b, the
// last batch Next returned, and stops: b's range is positioned after its n-th item (by
// the item's _lsn, the change feed's etag), so that a resumed reader gets the rest of b
// again and nothing else twice.
func (f *Feed) StateAfter(b *Batch, n int) (*State, error) {
	if b == nil || b.rs == nil || n >= len(b.Items) {
		return f.State(), nil
	}
	cut := b.prev
	if n > 0 {
		lsn, ok := itemLSN(b.Items[n-1])
		if !ok {
			return nil, fmt.Errorf("item %d of the batch from %s has no _lsn: cannot save a position inside the batch", n, rangeName(b.RangeID))
		}
		cut = `"` + strconv.FormatInt(lsn, 10) + `"`
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stateLocked(b.rs, cut), nil
}

// stateLocked builds the state; ranges that are cut (or split from it since) are at
// position pos instead.
func (f *Feed) stateLocked(cut *rangeState, pos string) *State {
	s := &State{Kind: stateKind, Version: stateVersion, Endpoint: f.endpoint, Database: f.o.Database, Container: f.o.Container}
	if f.o.PartitionKey != nil {
		s.PartitionKey = json.RawMessage(f.o.PartitionKey.JSON())
	}
	if f.o.PartitionKeyPrefix != nil {
		s.PartitionKey = json.RawMessage(f.o.PartitionKeyPrefix.JSON())
		span := cosmos.PrefixRange(f.o.PartitionKeyPrefix)
		s.PrefixRange = &span
	}
	s.Shard = f.o.Scope
	for _, rs := range f.ranges {
		r := RangeState{ID: rs.id, Min: rs.min, Max: rs.max, Scoped: rs.scoped, Continuation: rs.delivered, StopAt: rs.stopAt}
		if cut != nil && descends(rs, cut) {
			r.Continuation = pos
		}
		if !rs.since.IsZero() && r.Continuation == "" {
			t := rs.since.UTC()
			r.Since = &t
		}
		s.Ranges = append(s.Ranges, r)
	}
	return s
}

// request is a poll of the range from continuation.
func (rs *rangeState) request(continuation string, maxItems int) pollRequest {
	req := pollRequest{rangeID: rs.id, pk: rs.pk, continuation: continuation, maxItems: maxItems}
	if rs.scoped {
		req.startEPK, req.endEPK = rs.min, rs.max
	}
	return req
}

func descends(rs, from *rangeState) bool {
	for ; rs != nil; rs = rs.origin {
		if rs == from {
			return true
		}
	}
	return false
}

// run polls one range until the feed's end, its Until, or its split (its children
// go on).
func (f *Feed) run(rs *rangeState) {
	defer f.wg.Done()
	defer func() {
		if f.ctx.Err() != nil {
			f.cut.Store(true)
		}
	}()
	var wait time.Duration
	for {
		if wait > 0 && !f.sleep(wait) {
			return
		}
		wait = 0
		select {
		case f.sem <- struct{}{}:
		case <-f.ctx.Done():
			return
		}
		req := rs.request(rs.polled, f.o.PageSize)
		req.buffers = f.bufs
		if rs.polled == "" {
			req.since = rs.since
		}
		p, info, err := f.be.poll(f.ctx, req)
		<-f.sem
		if f.ctx.Err() != nil {
			return
		}
		if err != nil && rs.id != "" && isRangeGone(err) {
			ok, w := f.split(rs, info)
			if ok {
				return
			}
			wait = w
			continue
		}
		if err != nil {
			if w, ok := f.failed(rs, info, err); ok {
				wait = w
				continue
			}
			return
		}
		rs.failures = 0
		b := &Batch{RangeID: rs.id, Items: p.items, Info: info, rs: rs, prev: rs.polled, next: p.etag, body: p.body}
		if b.next == "" {
			b.next = rs.polled // an answer without an etag: stay where the range was
		}
		done := false
		switch {
		case p.notModified:
			b.Items = nil
			b.Info.CaughtUp = true
			done = f.o.Until != Forever
		case f.o.Until == StartPoint && rs.stopAt != "":
			b.Items, b.next, done = cutAt(b.Items, b.next, rs.stopAt)
		}
		b.Info.Done, b.Info.Continuation = done, b.next
		if !f.emit(event{b: b}) {
			return
		}
		rs.polled = b.next
		if done {
			return
		}
		if p.notModified {
			wait = f.o.PollDelay
		}
	}
}

// failed handles a poll that failed: a final error ends the feed; another is reported
// and the range waits before it is polled again, unless it failed too often in a row.
func (f *Feed) failed(rs *rangeState, info PageInfo, err error) (time.Duration, bool) {
	rs.failures++
	if isFinal(err) {
		f.emit(event{err: err})
		return 0, false
	}
	if f.o.MaxFailures > 0 && rs.failures >= f.o.MaxFailures {
		f.emit(event{err: fmt.Errorf("%s: %d polls in a row failed, the last with: %w", rangeName(rs.id), rs.failures, err)})
		return 0, false
	}
	wait := retryAfter(err)
	note := "throttled: polling again after the service's retry-after"
	if wait <= 0 {
		wait = backoff(f.o.PollDelay, rs.failures)
		note = "poll failed: polling again after a back-off"
	}
	info.Err, info.Wait, info.Note = err, wait, note
	ok := f.emit(event{b: &Batch{RangeID: rs.id, Info: info, rs: rs, prev: rs.polled, next: rs.polled}})
	return wait, ok
}

func backoff(base time.Duration, failures int) time.Duration {
	d := max(base, 100*time.Millisecond)
	for i := 1; i < failures && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// split replaces a range that answered 410/1002 by its children, each starting from the
// parent's continuation, and starts polling them. ok is false when the ranges could not
// be read (the range is polled again after wait, and answers 410 again).
func (f *Feed) split(rs *rangeState, info PageInfo) (ok bool, wait time.Duration) {
	all, rinfo, err := f.be.ranges(f.ctx, true)
	if err == nil {
		var kids []*rangeState
		kids, err = childrenOf(rs, all)
		if err != nil {
			f.emit(event{err: err})
			return true, 0
		}
		ids := make([]string, len(kids))
		f.mu.Lock()
		for i, k := range kids {
			ids[i] = k.id
		}
		next := make([]*rangeState, 0, len(f.ranges)+len(kids)-1)
		for _, r := range f.ranges {
			if r == rs {
				next = append(next, kids...)
				continue
			}
			next = append(next, r)
		}
		f.ranges = next
		f.mu.Unlock()
		f.wg.Add(len(kids))
		for _, k := range kids {
			go f.run(k)
		}
		rinfo.StatusCode = 410
		rinfo.Note = fmt.Sprintf("partition key range %s split into %s: going on from its continuation", rs.id, strings.Join(ids, ", "))
		if len(kids) == 1 && kids[0].merged {
			rinfo.Note = fmt.Sprintf("partition key range %s was merged into %s: going on there from its continuation, narrowed to its keys", rs.id, kids[0].id)
		}
		f.emit(event{b: &Batch{RangeID: rs.id, Info: rinfo}})
		return true, 0
	}
	if w, ok := f.failed(rs, rinfo, fmt.Errorf("partition key range %s split, and re-reading the ranges failed: %w", rs.id, err)); ok {
		return false, w
	}
	return true, 0
}

// childrenOf are what replaced gone, which split or was merged: for every current range
// that overlaps it, the part of gone's keys it holds, each going on from gone's
// continuation. A child that holds only part of its range (gone was merged into a
// wider range) is scoped to gone's keys: its polls read gone's changes only, as the
// .NET and JS SDKs read a feed range after a merge (x-ms-start-epk/x-ms-end-epk on the
// merged range). The merged range's LSNs go on from above its parents', so gone's
// continuation is a position in it.
func childrenOf(gone *rangeState, all []cosmos.PartitionKeyRange) ([]*rangeState, error) {
	var out []*rangeState
	for _, r := range all {
		if epkCompare(r.MinInclusive, gone.max) >= 0 || epkCompare(r.MaxExclusive, gone.min) <= 0 {
			continue
		}
		k := &rangeState{id: r.ID, min: r.MinInclusive, max: r.MaxExclusive, since: gone.since, stopAt: gone.stopAt,
			polled: gone.polled, delivered: gone.polled, origin: gone}
		if epkCompare(k.min, gone.min) < 0 {
			k.min, k.scoped = gone.min, true
		}
		if epkCompare(k.max, gone.max) > 0 {
			k.max, k.scoped = gone.max, true
		}
		if k.scoped {
			k.rmin, k.rmax = r.MinInclusive, r.MaxExclusive
		}
		// A range reaching beyond gone's own bounds (not merely beyond the keys it was
		// narrowed to, as a prefix's range is) took gone's place by a merge.
		lo, hi := gone.min, gone.max
		if gone.rmax != "" {
			lo, hi = gone.rmin, gone.rmax
		}
		k.merged = epkCompare(r.MinInclusive, lo) < 0 || epkCompare(r.MaxExclusive, hi) > 0
		out = append(out, k)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("partition key range %s is gone and no current range covers [%s, %s)", gone.id, gone.min, gone.max)
	}
	for i := 1; i < len(out); i++ {
		if epkCompare(out[i-1].max, out[i].min) != 0 {
			return nil, fmt.Errorf("the partition key ranges that replaced range %s leave [%s, %s) uncovered", gone.id, out[i-1].max, out[i].min)
		}
	}
	if epkCompare(out[0].min, gone.min) != 0 || epkCompare(out[len(out)-1].max, gone.max) != 0 {
		return nil, fmt.Errorf("the partition key ranges that replaced range %s do not cover [%s, %s)", gone.id, gone.min, gone.max)
	}
	return out, nil
}

// prefixRanges are the ranges of a feed of a hierarchical partition key prefix, span:
// every range that holds any of its keys, scoped to the part of span it holds when it
// reaches beyond span (its polls are narrowed to that part), as the JS SDK reads the
// feed range of a prefix (ChangeFeedForEpkRange.fetchOverLappingFeedRanges with
// extractOverlappingRanges). The scope is the range's own from then on: the state
// records it, and a split or merge narrows the children to it (childrenOf).
func prefixRanges(all []cosmos.PartitionKeyRange, span cosmos.EPKRange) []*rangeState {
	var out []*rangeState
	for _, r := range span.Overlapping(all) {
		part, narrowed := span.Within(r)
		rs := &rangeState{id: r.ID, min: part.Min, max: part.Max, scoped: narrowed}
		if narrowed {
			rs.rmin, rs.rmax = r.MinInclusive, r.MaxExclusive
		}
		out = append(out, rs)
	}
	return out
}

func epkCompare(a, b string) int { return strings.Compare(strings.ToUpper(a), strings.ToUpper(b)) }

// emit hands an event to Next; false when the feed ended first.
func (f *Feed) emit(ev event) bool {
	select {
	case f.out <- ev:
		return true
	case <-f.ctx.Done():
		return false
	}
}

func (f *Feed) sleep(d time.Duration) bool {
	t := f.o.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-f.ctx.Done():
		return false
	}
}

// cutAt drops the items after the range's stop position and reports whether the range
// reached it. Positions are LSNs, as the service's change feed etags are; a position
// that is not one stops the range at its first 304 instead.
func cutAt(items []json.RawMessage, next, stopAt string) ([]json.RawMessage, string, bool) {
	stop, ok := etagLSN(stopAt)
	if !ok {
		return items, next, false
	}
	for i, it := range items {
		if lsn, ok := itemLSN(it); ok && lsn > stop {
			return items[:i], stopAt, true
		}
	}
	if n, ok := etagLSN(next); ok && n >= stop {
		return items, next, true
	}
	return items, next, false
}

func etagLSN(etag string) (int64, bool) {
	n, err := strconv.ParseInt(strings.Trim(strings.TrimPrefix(etag, "W/"), `"`), 10, 64)
	return n, err == nil
}

// itemLSN is the _lsn the service puts on every change feed item. It is found without
// decoding the item (export cuts every page at its start point by it); an item the
// quick look cannot read, or an _lsn that is not a number, is decoded as it always was.
func itemLSN(item json.RawMessage) (int64, bool) {
	if v, found, ok := docfeed.Member(item, "_lsn"); ok {
		switch {
		case !found || string(v) == "null":
			return 0, false
		case v[0] == '-' || v[0] >= '0' && v[0] <= '9':
			n, err := strconv.ParseInt(string(v), 10, 64) // as json.Number.Int64
			return n, err == nil
		}
	}
	var v struct {
		LSN *json.Number `json:"_lsn"`
	}
	if json.Unmarshal(item, &v) != nil || v.LSN == nil {
		return 0, false
	}
	n, err := v.LSN.Int64()
	return n, err == nil
}

func rangeName(id string) string {
	if id == "" {
		return "the partition key"
	}
	return "partition key range " + id
}
