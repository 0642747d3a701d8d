package emulator

import (
	"cmp"
	"slices"
	"sort"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator/jsondoc"
)

// A partition keeps its documents in creation order (byCreation) beside the map that
// finds them by key, so that a streaming query's page costs a binary search and the
// page instead of a walk and a sort of the whole partition: the continuation of such a
// query is a creation sequence (querypos.go). New documents take the next sequence of
// the account under the partition's lock, so they are appended in order; a removed
// document is only marked (itemEntry.removed) and the slice compacted once the marks
// are half of it, which keeps a removal O(1) amortized. A split or merge builds its
// ranges' slices afresh (splits.go), as does a start from the data file (disk.go).

// addEntry stores a new document entry under key. The caller holds p.mu for writing.
func (p *partition) addEntry(key string, e *itemEntry) {
	p.items[key] = e
	n := len(p.byCreation)
	if n == 0 || p.byCreation[n-1].seq <= e.seq {
		p.byCreation = append(p.byCreation, e)
		return
	}
	// Not reached by the write paths, which allocate sequences under the lock; kept so
	// that the order never depends on that.
	i := sort.Search(n, func(i int) bool { return p.byCreation[i].seq > e.seq })
	p.byCreation = slices.Insert(p.byCreation, i, e)
}

// removeEntry drops the entry under key. The caller holds p.mu for writing.
func (p *partition) removeEntry(key string) {
	e := p.items[key]
	if e == nil {
		return
	}
	delete(p.items, key)
	e.removed = true
	p.removedEntries++
	if p.removedEntries >= 64 && 2*p.removedEntries >= len(p.byCreation) {
		p.compactCreationOrder()
	}
}

// compactCreationOrder drops the removed entries from byCreation. It makes a new
// slice: a scan that read the old one under the read lock may still hold it.
func (p *partition) compactCreationOrder() {
	live := make([]*itemEntry, 0, len(p.items))
	for _, e := range p.byCreation {
		if !e.removed {
			live = append(live, e)
		}
	}
	p.byCreation, p.removedEntries = live, 0
}

// rebuildCreationOrder sets byCreation from items, for a partition filled without
// addEntry (a split, a merge, a start from the data file).
func (p *partition) rebuildCreationOrder() {
	order := make([]*itemEntry, 0, len(p.items))
	for _, e := range p.items {
		order = append(order, e)
	}
	slices.SortFunc(order, func(a, b *itemEntry) int { return cmp.Compare(a.seq, b.seq) })
	p.byCreation, p.removedEntries = order, 0
}

// Chunks of a creation-order scan. A scan reads the index under the partition's read
// lock a chunk at a time and hands the chunk's documents to its caller with the lock
// released, as the whole-partition read before it did: a write waits for one chunk at
// most. The first chunk is what the caller expects to need (a page), later ones
// double, so a page whose filter passes few documents costs O(log) lock round trips.
const (
	minScanChunk = 16
	maxScanChunk = 4096
	// maxScanExamined bounds the entries one chunk examines, for a scope that passes
	// few of the partition's documents (one logical partition of many).
	maxScanExamined = 4 * maxScanChunk
)

// creationCursor reads the documents of scope that region sees in partition p, in
// creation order, after a creation sequence.
type creationCursor struct {
	s      *store
	c      *container
	p      *partition
	region int
	scope  docScope
	now    time.Time
	lag    time.Duration
	// after is the sequence of the last entry examined: the next chunk starts above it.
	after uint64
	chunk int
	buf   []jsondoc.Doc
	i     int
	done  bool
}

func (s *store) newCreationCursor(c *container, p *partition, region int, scope docScope, after uint64, want int, now time.Time, lag time.Duration) *creationCursor {
	return &creationCursor{s: s, c: c, p: p, region: region, scope: scope, now: now, lag: lag, after: after,
		chunk: min(max(want, minScanChunk), maxScanChunk)}
}

// peek returns the next document, or false when there is none.
func (k *creationCursor) peek() (jsondoc.Doc, bool) {
	for k.i >= len(k.buf) {
		if k.done {
			return jsondoc.Doc{}, false
		}
		k.fill()
	}
	return k.buf[k.i], true
}

func (k *creationCursor) advance() { k.i++ }

// fill reads the next chunk: the documents of up to chunk visible entries after
// k.after, or up to maxScanExamined entries, whichever comes first.
func (k *creationCursor) fill() {
	k.buf, k.i = k.buf[:0], 0
	p := k.p
	p.mu.RLock()
	order := p.byCreation
	j := sort.Search(len(order), func(i int) bool { return order[i].seq > k.after })
	examined := 0
	for ; j < len(order) && len(k.buf) < k.chunk && examined < maxScanExamined; j++ {
		e := order[j]
		examined++
		if e.removed || !k.scope.holds(e) {
			continue
		}
		if v := e.visibleIn(k.region, k.now, k.lag); k.c.live(v, k.now) {
			k.buf = append(k.buf, jsondoc.Doc{Seq: e.seq, Body: v.body})
		}
	}
	if j > 0 && examined > 0 {
		k.after = order[j-1].seq
	}
	k.done = j >= len(order)
	p.mu.RUnlock()
	k.s.scanExamined.Add(uint64(examined))
	k.chunk = min(2*k.chunk, maxScanChunk)
}

// scanAfter calls fn for every document of scope region sees in partition p whose
// creation sequence is above after, in creation order, until fn returns false. want is
// how many documents the caller expects to take (a page), which sizes the first read.
func (s *store) scanAfter(c *container, p *partition, region int, scope docScope, after uint64, want int, fn func(seq uint64, body []byte) bool) {
	k := s.newCreationCursor(c, p, region, scope, after, want, s.clock.Now(), time.Duration(s.lag.Load()))
	for {
		d, ok := k.peek()
		if !ok || !fn(d.Seq, d.Body) {
			return
		}
		k.advance()
	}
}

// scanSegment calls fn for every document of segment sg that region sees, restricted
// to one logical partition when pkIdentity is not empty, in creation order across the
// segment's ranges (a merge of their creation orders), until fn returns false.
func (s *store) scanSegment(c *container, sg segment, region int, pkIdentity string, want int, fn func(seq uint64, body []byte) bool) {
	if len(sg.parts) == 1 {
		s.scanAfter(c, sg.parts[0], region, sg.scope(sg.parts[0], pkIdentity), sg.after, want, fn)
		return
	}
	now, lag := s.clock.Now(), time.Duration(s.lag.Load())
	cursors := make([]*creationCursor, len(sg.parts))
	for i, p := range sg.parts {
		cursors[i] = s.newCreationCursor(c, p, region, sg.scope(p, pkIdentity), sg.after, want, now, lag)
	}
	// A segment has a handful of ranges (the children of a split, the parents of a
	// merge): picking the smallest head of each is the k-way merge.
	for {
		var next *creationCursor
		var head jsondoc.Doc
		for _, k := range cursors {
			if d, ok := k.peek(); ok && (next == nil || d.Seq < head.Seq) {
				next, head = k, d
			}
		}
		if next == nil || !fn(head.Seq, head.Body) {
			return
		}
		next.advance()
	}
}

// visibleDocs returns every document of scope that region sees in partition p with a
// creation sequence above after, in creation order, for a query that needs them all
// (ORDER BY, DISTINCT, aggregates, GROUP BY).
func (s *store) visibleDocs(c *container, p *partition, region int, scope docScope, after uint64) []jsondoc.Doc {
	now := s.clock.Now()
	lag := time.Duration(s.lag.Load())
	p.mu.RLock()
	order := p.byCreation
	j := sort.Search(len(order), func(i int) bool { return order[i].seq > after })
	docs := make([]jsondoc.Doc, 0, len(order)-j)
	for _, e := range order[j:] {
		if e.removed || !scope.holds(e) {
			continue
		}
		if v := e.visibleIn(region, now, lag); c.live(v, now) {
			docs = append(docs, jsondoc.Doc{Seq: e.seq, Body: v.body})
		}
	}
	p.mu.RUnlock()
	s.scanExamined.Add(uint64(len(order) - j))
	return docs
}
