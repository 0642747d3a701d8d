package emulator

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// queryTarget is what a query reads: partition key ranges in effective partition key
// order, and of them the documents of one logical partition, or of one range a part.
type queryTarget struct {
	parts      []*partition
	pkIdentity string
	// span is the part of parts[0] that a query addressed to one range reads, when
	// narrowed (x-ms-start-epk/x-ms-end-epk, epkscope.go).
	span     epkSpan
	narrowed bool
	// container is set for a query of every range that the emulator runs across them
	// itself: its continuation goes on range after range, in effective partition key
	// order.
	container bool
}

// queryScope picks the partitions a query reads: the one holding the partition key in
// the header, the one named by a range id header (or part of it, narrowed by an
// effective partition key range), or every one when the client allows a
// cross-partition query. Sent to a replica, a query reads the replica's range only.
func (s *Server) queryScope(req *request, c *container) (queryTarget, bool) {
	r := req.r
	span, narrowed, err := readEPKSpan(r)
	if err != nil {
		s.writeError(req, badRequest("%v", err), 0)
		return queryTarget{}, false
	}
	if raw := r.Header.Get(cosmos.HeaderPartitionKey); raw != "" {
		if narrowed {
			// A partition key is narrower than any span: the two together are a client's
			// confusion, which the emulator does not guess at.
			s.writeError(req, badRequest("a query goes to a partition key (%s) or to an effective partition key range of one partition key range (%s with %s and %s), not both", cosmos.HeaderPartitionKey, cosmos.HeaderPartitionKeyRangeID, cosmos.HeaderStartEPK, cosmos.HeaderEndEPK), 0)
			return queryTarget{}, false
		}
		pk, ok := s.partitionKeyHeader(req, c)
		if !ok {
			return queryTarget{}, false
		}
		p := c.partitionFor(pk)
		if !s.replicaHolds(req, c, p) {
			return queryTarget{}, false
		}
		now := s.clock.Now()
		p.mu.RLock()
		caught := p.caughtUpLSN(req.region, now, s.lagNow())
		p.mu.RUnlock()
		req.w.Header().Set(cosmos.HeaderSessionToken, sessionToken(p.rng.ID, caught))
		if !s.sessionSatisfied(req, p.rng.ID, caught) {
			return queryTarget{}, false
		}
		return queryTarget{parts: []*partition{p}, pkIdentity: pk.Identity()}, true
	}
	var p *partition
	switch id := rangeIDHeader(r); {
	case id != "":
		if p = c.partitionByID(id); p == nil {
			s.writeError(req, cosmosErr(410, cosmos.SubPartitionKeyRangeGone, "partition key range "+id+" does not exist"), 0)
			return queryTarget{}, false
		}
	case req.replica != nil:
		// A replica holds one range: a query sent to it reads that range only.
		if p = c.partitionByID(req.replica.set.key.rangeID); p == nil {
			p = c.partitions()[0] // another container: replicaHolds answers 410/1000
		}
	case narrowed:
		s.writeError(req, badRequest("%s and %s narrow a query addressed to one partition key range: send %s too (GET …/pkranges lists the ranges)", cosmos.HeaderStartEPK, cosmos.HeaderEndEPK, cosmos.HeaderPartitionKeyRangeID), 0)
		return queryTarget{}, false
	case r.Method == http.MethodGet || strings.EqualFold(r.Header.Get(cosmos.HeaderEnableCrossPartition), "true"):
		return queryTarget{parts: c.partitions(), container: true}, true
	default:
		s.writeError(req, badRequest("cross partition query is required but disabled: send the %s header for a single-partition query, or %s: true", cosmos.HeaderPartitionKey, cosmos.HeaderEnableCrossPartition), 0)
		return queryTarget{}, false
	}
	if !s.replicaHolds(req, c, p) {
		return queryTarget{}, false
	}
	if !narrowed {
		return queryTarget{parts: []*partition{p}}, true
	}
	if !span.within(spanOf(p.rng)) {
		// The service's answer is documented nowhere; the emulator refuses rather than
		// read the overlap, which would hide the client's mistake (README, emulator
		// fidelity).
		s.writeError(req, badRequest("the effective partition key range %s is not inside partition key range %s %s: send the range that holds it (GET …/pkranges lists them)", span, p.rng.ID, spanOf(p.rng)), 0)
		return queryTarget{}, false
	}
	return queryTarget{parts: []*partition{p}, span: span, narrowed: true}, true
}

// positionSpan is the span a continuation is a position within: the one it records,
// or the whole of the range that issued it, live or retired.
func (c *container) positionSpan(cont queryPosition) (epkSpan, bool) {
	if cont.Hi != "" {
		return epkSpan{cont.Lo, cont.Hi}, true
	}
	return c.rangeSpan(cont.Range)
}

// resumeSpan is the span of the one range t reads that a page reads, going on from cont
// (none: all of t), and the span cont is a position within.
//
// A continuation is a position within its span, so it goes on within that span only:
// in each child of a split range (each holds part of it), and in the range that a
// merge put in its place narrowed to the span, as the JS SDK asks with x-ms-start-epk
// and x-ms-end-epk, or without them: JS SDK 4.10.1 leaves them out when a merge
// happens during a query (_enqueueReplacementDocumentProducers passes the producer's
// own startEpk, unset unless it was narrowed before) and when the merged-away range
// began at "" (it sends them only when startEpk is not empty). How the service scopes
// such a continuation is not documented (README, emulator fidelity).
func (t queryTarget) resumeSpan(c *container, cont queryPosition) (span, tok epkSpan, err error) {
	p := t.parts[0]
	span = spanOf(p.rng)
	if t.narrowed {
		span = t.span
	}
	if cont.Range == "" {
		return span, span, nil
	}
	tok, ok := c.positionSpan(cont)
	switch {
	case !ok:
		return span, tok, fmt.Errorf("the continuation token names partition key range %q, which this container does not have", cont.Range)
	case p.rng.ID != cont.Range && !p.descendsFrom(cont.Range):
		return span, tok, fmt.Errorf("the continuation token is a position in partition key range %s, and this request reads range %s, which neither is it nor took its place by a split or merge: send it to range %s, or to the ranges that replaced it (GET …/pkranges lists them and their parents)", cont.Range, p.rng.ID, cont.Range)
	case t.narrowed && !span.within(tok):
		return span, tok, fmt.Errorf("the continuation token is a position within the effective partition keys %s, and this request reads %s, which reaches beyond them: narrow it to %s (%s and %s), or restart the query without the continuation token", tok, span, tok, cosmos.HeaderStartEPK, cosmos.HeaderEndEPK)
	}
	return span.intersect(tok), tok, nil
}

// segment is a part of the keys a streaming query reads: the documents of span in
// parts, from after creation sequence after, read together in creation order.
type segment struct {
	parts []*partition
	span  epkSpan
	after uint64
	// at is the continuation after a document of the segment.
	at queryPosition
}

// scope is what the segment reads of p.
func (sg segment) scope(p *partition, pkIdentity string) docScope {
	return scopeOf(p, pkIdentity, sg.span.intersect(spanOf(p.rng)))
}

// wholeOf is a segment that reads span of range p from the start.
func wholeOf(p *partition, span epkSpan) segment {
	at := queryPosition{Range: p.rng.ID}
	if span != spanOf(p.rng) {
		at.Lo, at.Hi = span.lo, span.hi
	}
	return segment{parts: []*partition{p}, span: span, at: at}
}

// segments lays out the rest of a streaming query after cont: the keys to read, in
// order.
//
// A query the emulator runs across every range reads the ranges in effective
// partition key order, so a continuation says: the keys below its span are done,
// those in it are done up to its document, those above it are still to come. After a
// split or merge the ranges that hold the span are read together in creation order,
// with the continuation still naming the span (a continuation after the first child
// of a split could not say how far the second one had got), and the keys above it
// range by range, whatever ranges they now lie in.
func (t queryTarget) segments(c *container, cont queryPosition) ([]segment, error) {
	if !t.container {
		span, _, err := t.resumeSpan(c, cont)
		if err != nil {
			return nil, err
		}
		sg := wholeOf(t.parts[0], span)
		sg.after = cont.Seq
		return []segment{sg}, nil
	}
	var out []segment
	if cont.Range == "" {
		for _, p := range t.parts {
			out = append(out, wholeOf(p, spanOf(p.rng)))
		}
		return out, nil
	}
	tok, _ := c.positionSpan(cont)
	resumed := segment{span: tok, after: cont.Seq, at: queryPosition{Range: cont.Range, Lo: cont.Lo, Hi: cont.Hi}}
	for _, p := range t.parts {
		if !spanOf(p.rng).intersect(tok).empty() {
			resumed.parts = append(resumed.parts, p)
		}
	}
	out = append(out, resumed)
	for _, p := range t.parts {
		if rest := spanOf(p.rng).above(tok); !rest.empty() {
			out = append(out, wholeOf(p, rest))
		}
	}
	return out, nil
}
