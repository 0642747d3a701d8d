package emulator

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// The change feed: a GET on a container's documents feed with A-IM set. Both official
// SDKs read it one partition key range at a time (x-ms-documentdb-partitionkeyrangeid)
// and keep, per range, the etag of the last response as their continuation, which they
// send back in If-None-Match; they poll until the range answers 304. An etag here is the
// range's LSN (quoted, as the service sends it), so a continuation stays valid across
// restarts and across regions.
const (
	// changeFeedLatestVersion is the A-IM value of the latest version mode (both SDKs).
	changeFeedLatestVersion = "incremental feed"
	// changeFeedAllVersions is the A-IM value of the all versions and deletes mode.
	changeFeedAllVersions = "full-fidelity feed"
	// changeFeedFromNow in If-None-Match starts the feed at the range's current LSN
	// (the JS SDK's ChangeFeedStartFrom.Now()).
	changeFeedFromNow = "*"

	headerIfModifiedSince = "If-Modified-Since"
	headerStartEPK        = cosmos.HeaderStartEPK
	headerEndEPK          = cosmos.HeaderEndEPK
)

// isChangeFeed tells a change feed read from a plain read feed of documents.
func isChangeFeed(r *http.Request) bool {
	return r.Method == http.MethodGet && r.Header.Get(cosmos.HeaderAIM) != ""
}

// changeFeedRead is what one change feed request asks of one partition key range.
type changeFeedRead struct {
	afterLSN int64 // changes with a higher LSN
	fromNow  bool  // afterLSN is the range's current LSN
	since    int64 // unix seconds: changes made at or after it; 0 for any time
	// pk restricts the feed to one logical partition (pkIdentity is its identity).
	pk         cosmos.PartitionKey
	pkIdentity string
	// minEPK and maxEPK restrict it to a feed range within the range ("" for none).
	minEPK, maxEPK string
	maxItems       int
	// c and now decide which documents have outlived their time to live (ttl.go):
	// expired is gone, from the change feed as from everywhere else.
	c   *container
	now time.Time
}

// change is one item of a page: the latest version of a document.
type change struct {
	lsn  int64
	body []byte
}

// serveChangeFeed answers a change feed read in latest version mode: each document
// changed after the continuation once, in its latest version, in LSN order; 304 when
// nothing changed.
func (s *Server) serveChangeFeed(req *request, c *container) {
	r := req.r
	switch mode := strings.ToLower(strings.TrimSpace(r.Header.Get(cosmos.HeaderAIM))); mode {
	case changeFeedLatestVersion:
	case changeFeedAllVersions:
		s.writeError(req, badRequest("the emulator's change feed supports the latest version mode only (%s: Incremental Feed), not all versions and deletes (%s)", cosmos.HeaderAIM, r.Header.Get(cosmos.HeaderAIM)), 0)
		return
	default:
		s.writeError(req, badRequest("%s must be \"Incremental Feed\" for a change feed read, not %q", cosmos.HeaderAIM, r.Header.Get(cosmos.HeaderAIM)), 0)
		return
	}
	cf, ok := s.changeFeedOptions(req, c)
	if !ok {
		return
	}
	cf.c = c
	p, ok := s.changeFeedRange(req, c, &cf)
	if !ok {
		return
	}
	s.meter(req, c, p)
	page, lsn, caught := s.store.changes(p, req.region, cf)
	h := req.w.Header()
	h.Set(cosmos.HeaderSessionToken, sessionToken(p.rng.ID, caught))
	h.Set(cosmos.HeaderLSN, strconv.FormatInt(caught, 10))
	h.Set(cosmos.HeaderPartitionKeyRangeID, p.rng.ID)
	if !s.sessionSatisfied(req, p.rng.ID, caught) {
		return
	}
	h.Set(cosmos.HeaderETag, changeFeedETag(lsn))
	h.Set(cosmos.HeaderItemCount, strconv.Itoa(len(page)))
	if len(page) == 0 {
		s.writeJSON(req, http.StatusNotModified, nil, chargeMetadata)
		return
	}
	docs := make([]json.RawMessage, len(page))
	bytes := 0
	for i, ch := range page {
		docs[i] = withLSN(ch.body, ch.lsn)
		bytes += len(docs[i])
	}
	body, _ := json.Marshal(cosmos.DocumentFeed{RID: c.meta.RID, Documents: docs, Count: len(docs)})
	s.writeJSON(req, http.StatusOK, body, chargeQuery(len(page), bytes))
}

// changeFeedOptions reads the continuation, start time, page size and feed range.
func (s *Server) changeFeedOptions(req *request, c *container) (changeFeedRead, bool) {
	r := req.r
	var cf changeFeedRead
	var ok bool
	if cf.maxItems, ok = s.maxItemCount(req); !ok {
		return cf, false
	}
	switch inm := strings.TrimSpace(r.Header.Get(cosmos.HeaderIfNoneMatch)); {
	case inm == changeFeedFromNow:
		cf.fromNow = true
	case inm != "":
		n, err := strconv.ParseInt(strings.Trim(inm, `"`), 10, 64)
		if err != nil || n < 0 {
			s.writeError(req, badRequest("the change feed continuation (%s: %s) is not an etag of this emulator's change feed: send the etag of the previous change feed response, \"*\" to start from now, or nothing to start from the beginning", cosmos.HeaderIfNoneMatch, inm), 0)
			return cf, false
		}
		cf.afterLSN = n
	default:
		// A start time only applies without a continuation: the JS SDK keeps sending
		// it after the first page, and the continuation is the later position.
		if v := r.Header.Get(headerIfModifiedSince); v != "" {
			t, err := parseStartTime(v)
			if err != nil {
				s.writeError(req, badRequest("%s must be an HTTP date (%s), not %q", headerIfModifiedSince, http.TimeFormat, v), 0)
				return cf, false
			}
			cf.since = t.Unix()
		}
	}
	if r.Header.Get(cosmos.HeaderPartitionKey) != "" {
		pk, ok := s.partitionKeyHeader(req, c)
		if !ok {
			return cf, false
		}
		cf.pk, cf.pkIdentity = pk, pk.Identity()
	}
	// The JS SDK sends a feed range narrower than a partition key range as both
	// bounds (the lower one may be "", the lowest key); the Go SDK reads whole ranges.
	span, narrowed, err := readEPKSpan(r)
	if err != nil {
		s.writeError(req, badRequest("%v", err), 0)
		return cf, false
	}
	if narrowed {
		cf.minEPK, cf.maxEPK = span.lo, span.hi
	}
	return cf, true
}

// changeFeedRange picks the one partition key range a change feed read covers: the one
// named by x-ms-documentdb-partitionkeyrangeid (how both SDKs ask), else the one that
// holds the partition key or the feed range, else the replica's, else the only one.
func (s *Server) changeFeedRange(req *request, c *container, cf *changeFeedRead) (*partition, bool) {
	r := req.r
	var p *partition
	switch {
	case rangeIDHeader(r) != "":
		id := rangeIDHeader(r)
		if p = c.partitionByID(id); p == nil {
			s.writeError(req, cosmosErr(410, cosmos.SubPartitionKeyRangeGone, "partition key range "+id+" does not exist"), 0)
			return nil, false
		}
	case cf.pkIdentity != "":
		p = c.partitionFor(cf.pk)
	case cf.maxEPK != "":
		for _, q := range c.partitions() {
			if q.rng.MinInclusive <= cf.minEPK && cf.maxEPK <= q.rng.MaxExclusive {
				p = q
			}
		}
		if p == nil {
			s.writeError(req, badRequest("the feed range [%q, %q) spans several partition key ranges: read the change feed of each (%s, from GET …/pkranges)", cf.minEPK, cf.maxEPK, cosmos.HeaderPartitionKeyRangeID), 0)
			return nil, false
		}
	case req.replica != nil:
		if p = c.partitionByID(req.replica.set.key.rangeID); p == nil {
			p = c.partitions()[0] // another container: replicaHolds answers 410/1000
		}
	case len(c.partitions()) == 1:
		p = c.partitions()[0]
	default:
		s.writeError(req, badRequest("a change feed read covers one partition key range, and container %q has %d: send %s (GET …/pkranges lists them) or %s", c.meta.ID, len(c.partitions()), cosmos.HeaderPartitionKeyRangeID, cosmos.HeaderPartitionKey), 0)
		return nil, false
	}
	if !s.replicaHolds(req, c, p) {
		return nil, false
	}
	return p, true
}

// changes returns the next page of changes in p that region sees, the LSN to continue
// after, and the LSN region has caught up to in p. Only changes up to that LSN count:
// with replication lag a region may already see its own later writes, and a
// continuation past them would skip the earlier writes still on their way.
func (s *store) changes(p *partition, region int, cf changeFeedRead) ([]change, int64, int64) {
	now := s.clock.Now()
	cf.now = now
	lag := time.Duration(s.lag.Load())
	p.mu.RLock()
	caught := p.caughtUpLSN(region, now, lag)
	after := cf.afterLSN
	if cf.fromNow {
		after = caught
	}
	var page []change
	switch {
	case after >= caught:
	case lag == 0:
		// Every region sees every commit: read the LSN order, one page and one more
		// change (to tell whether the page is the last).
		bytes := 0
		for _, iv := range lsnIndexOf(p).after(p, after) {
			if (len(page) > cf.maxItems || bytes > maxPageBytes) && iv.v.lsn != page[len(page)-1].lsn {
				break
			}
			if cf.wants(iv.e, iv.v) {
				page = append(page, change{lsn: iv.v.lsn, body: iv.v.body})
				bytes += len(iv.v.body)
			}
		}
	default:
		for _, e := range p.items {
			v := e.visibleIn(region, now, lag)
			if v != nil && v.lsn > after && v.lsn <= caught && cf.wants(e, v) {
				page = append(page, change{lsn: v.lsn, body: v.body})
			}
		}
		slices.SortFunc(page, func(a, b change) int { return cmp.Compare(a.lsn, b.lsn) })
	}
	p.mu.RUnlock()
	next := caught
	bytes := 0
	for i, ch := range page {
		bytes += len(ch.body)
		if i == cf.maxItems || (i > 0 && bytes > maxPageBytes) {
			page, next = cutPage(page, i)
			break
		}
	}
	if after > next {
		// A continuation ahead of this region (it came from a region further along):
		// keep it, so that the client does not read the same changes twice.
		next = after
	}
	return page, next, caught
}

// cutPage ends a page before change i, or later: never between two changes of one LSN,
// which a merged range has (its parents numbered their changes each on its own,
// splits.go), since the continuation is an LSN and the next page starts after it.
func cutPage(page []change, i int) ([]change, int64) {
	cut := i
	for cut > 0 && page[cut].lsn == page[cut-1].lsn {
		cut--
	}
	if cut == 0 {
		for cut = i; cut < len(page) && page[cut].lsn == page[cut-1].lsn; cut++ {
		}
	}
	return page[:cut], page[cut-1].lsn
}

// wants reports whether version v of document e passes the read's filters: not a
// deletion (latest version mode has none), the start time, the partition key, the feed
// range.
func (cf changeFeedRead) wants(e *itemEntry, v *itemVersion) bool {
	if v.body == nil || v.ts < cf.since || (cf.c != nil && cf.c.expired(v, cf.now)) {
		return false
	}
	if cf.pkIdentity != "" && e.pk.Identity() != cf.pkIdentity {
		return false
	}
	if cf.maxEPK != "" {
		epk := cosmos.EffectivePartitionKey(e.pk)
		if epk < cf.minEPK || epk >= cf.maxEPK {
			return false
		}
	}
	return true
}

func changeFeedETag(lsn int64) string { return `"` + strconv.FormatInt(lsn, 10) + `"` }

// withLSN adds _lsn, which the service puts on every change feed document.
func withLSN(body []byte, lsn int64) []byte {
	end := len(body) - 1
	for end >= 0 && body[end] != '}' {
		end--
	}
	if end < 1 {
		return body
	}
	out := make([]byte, 0, len(body)+24)
	out = append(out, body[:end]...)
	out = append(out, `,"_lsn":`...)
	out = strconv.AppendInt(out, lsn, 10)
	return append(out, body[end:]...)
}

// parseStartTime reads If-Modified-Since. The JS SDK sends an HTTP date ("… GMT"); the
// Go SDK formats time.RFC1123 in UTC, which names the zone "UTC".
func parseStartTime(v string) (time.Time, error) {
	t, err := http.ParseTime(v)
	if err == nil {
		return t, nil
	}
	for _, layout := range []string{time.RFC1123, time.RFC1123Z, time.RFC3339} {
		if t, err2 := time.Parse(layout, v); err2 == nil {
			return t, nil
		}
	}
	return time.Time{}, err
}

// rangeIDHeader reads x-ms-documentdb-partitionkeyrangeid. The Go and JS SDKs send the
// range id alone; the .NET and Java SDKs may prefix it with the collection's _rid
// ("<collRid>,<rangeId>").
func rangeIDHeader(r *http.Request) string {
	v := strings.TrimSpace(r.Header.Get(cosmos.HeaderPartitionKeyRangeID))
	if i := strings.LastIndexByte(v, ','); i >= 0 {
		v = strings.TrimSpace(v[i+1:])
	}
	return v
}
