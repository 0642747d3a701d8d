package emulator

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// A request addressed to one partition key range may be narrowed to part of it: the
// effective partition keys [x-ms-start-epk, x-ms-end-epk), with x-ms-read-key-type:
// EffectivePartitionKeyRange. The JS SDK sends them for a feed range narrower than a
// range (ClientContext.queryFeed) and, after a merge, to go on with a merged-away
// range's continuation on the range that now holds its keys: the old range's bounds
// with its old continuation (@azure/cosmos 4.10.1,
// ParallelQueryExecutionContextBase._handleContinuationTokenMerge). The .NET SDK
// sends them on the change feed after a merge (splits.go).

// epkSpan is the effective partition keys [lo, hi), upper-case hex as the ranges feed
// writes them: lo "" is the lowest key, hi "FF" lies above the highest.
type epkSpan struct{ lo, hi string }

func spanOf(r cosmos.PartitionKeyRange) epkSpan { return epkSpan{r.MinInclusive, r.MaxExclusive} }

func (s epkSpan) String() string { return fmt.Sprintf("[%q, %q)", s.lo, s.hi) }

func (s epkSpan) empty() bool { return s.lo >= s.hi }

// holds reports whether the effective partition key epk lies in s.
func (s epkSpan) holds(epk string) bool { return epk >= s.lo && (s.hi == "FF" || epk < s.hi) }

// within reports whether s lies inside o.
func (s epkSpan) within(o epkSpan) bool { return s.lo >= o.lo && s.hi <= o.hi }

func (s epkSpan) intersect(o epkSpan) epkSpan { return epkSpan{max(s.lo, o.lo), min(s.hi, o.hi)} }

// above is the part of s above o.
func (s epkSpan) above(o epkSpan) epkSpan { return epkSpan{max(s.lo, o.hi), s.hi} }

// readEPKSpan reads the narrowing of a request to an effective partition key range:
// ok is false when the request has none. As on the change feed: the start may be left
// out ("", the lowest key), the end may not, and the span must not be empty. Both
// bounds are hex, "FF" at most; x-ms-read-key-type, when sent with them, must say
// EffectivePartitionKeyRange, the only kind of key the emulator reads by.
func readEPKSpan(r *http.Request) (span epkSpan, ok bool, err error) {
	lo, hi := strings.ToUpper(r.Header.Get(cosmos.HeaderStartEPK)), strings.ToUpper(r.Header.Get(cosmos.HeaderEndEPK))
	if lo == "" && hi == "" {
		return epkSpan{}, false, nil
	}
	span = epkSpan{lo, hi}
	switch kind := r.Header.Get(cosmos.HeaderReadKeyType); {
	case hi == "":
		return span, false, fmt.Errorf("an effective partition key range needs %s as well as %s", cosmos.HeaderEndEPK, cosmos.HeaderStartEPK)
	case !isHexKey(lo) || !isHexKey(hi) || hi > "FF":
		return span, false, fmt.Errorf("%s and %s must be effective partition keys (hex digits, \"FF\" at most), not %q and %q", cosmos.HeaderStartEPK, cosmos.HeaderEndEPK, lo, hi)
	case span.empty():
		return span, false, fmt.Errorf("the effective partition key range %s is empty", span)
	case kind != "" && !strings.EqualFold(kind, cosmos.ReadKeyTypeEPKRange):
		return span, false, fmt.Errorf("%s: %q is not supported by the emulator: with %s and %s it reads by %s only", cosmos.HeaderReadKeyType, kind, cosmos.HeaderStartEPK, cosmos.HeaderEndEPK, cosmos.ReadKeyTypeEPKRange)
	}
	return span, true, nil
}

func isHexKey(s string) bool {
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'A' || c > 'F') {
			return false
		}
	}
	return true
}

// rangeSpan is the span of c's range id, live or retired by a split or merge.
func (c *container) rangeSpan(id string) (epkSpan, bool) {
	if p := c.partitionByID(id); p != nil {
		return spanOf(p.rng), true
	}
	r, ok := c.topo.Load().retired[id]
	return spanOf(r), ok
}

// docScope is the documents of a range a query reads: all of them, those of one
// logical partition (pkIdentity), or those whose effective partition key lies in span
// (when narrow).
type docScope struct {
	pkIdentity string
	span       epkSpan
	narrow     bool
}

// scopeOf reads span of partition p, narrowly when span is less than all of p.
func scopeOf(p *partition, pkIdentity string, span epkSpan) docScope {
	return docScope{pkIdentity: pkIdentity, span: span, narrow: span != spanOf(p.rng)}
}

func (d docScope) holds(e *itemEntry) bool {
	if d.pkIdentity != "" && e.pk.Identity() != d.pkIdentity {
		return false
	}
	return !d.narrow || d.span.holds(cosmos.EffectivePartitionKey(e.pk))
}

// key identifies the scope in the result cache.
func (d docScope) key() string {
	if !d.narrow {
		return d.pkIdentity
	}
	return d.pkIdentity + "\x00" + d.span.lo + "\x00" + d.span.hi
}
