package emulator

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// Versions the service reports on every response; SDKs log them, some tools show them.
const (
	schemaVersion  = "1.18"
	serviceVersion = "version=2.14.0.0"
	gatewayVersion = "version=2.14.0"
)

// headerPopulateQuotaInfo asks for exact usage in x-ms-resource-usage (the SDKs'
// populateQuotaInfo option).
const headerPopulateQuotaInfo = "x-ms-documentdb-populatequotainfo"

// finishHeaders sets what the service adds to every response, once the status is known:
// its versions, session tokens in the multi-region shape, no x-ms-substatus on success,
// and quota and usage on successful container and item responses.
func (s *Server) finishHeaders(req *request, status int) {
	h := req.w.Header()
	h.Set("x-ms-schemaversion", schemaVersion)
	h.Set("x-ms-serviceversion", serviceVersion)
	if status < 400 {
		// The service sends a substatus only with an error; clients that see one on
		// a 200 treat it as part of the outcome.
		h.Del(cosmos.HeaderSubStatus)
	}
	c := s.responseContainer(req)
	if c == nil {
		return
	}
	if tok := h.Get(cosmos.HeaderSessionToken); tok != "" {
		h.Set(cosmos.HeaderSessionToken, s.vectorTokens(c, req.region, tok))
	}
	s.lsnHeaders(h, c)
	if status < 400 {
		q, u := c.usage.headers(c, req.r.Header.Get(headerPopulateQuotaInfo) == "true")
		h.Set(cosmos.HeaderResourceQuota, q)
		h.Set(cosmos.HeaderResourceUsage, u)
	}
}

// lsnHeaders completes what a response that names its partition key range and LSN
// carries, as the service's document and feed responses do (captured gateway answers
// have lsn, x-ms-cosmos-llsn, x-ms-global-committed-lsn, x-ms-documentdb-partitionkeyrangeid
// and x-ms-cosmos-physical-partition-id together; a point read adds x-ms-item-lsn and
// x-ms-cosmos-item-llsn). The emulator keeps one log per range, so its local LSNs are its
// LSNs; the global committed LSN is what every region has received (less than lsn
// while --replication-lag holds a write back from some region); a range is its own
// physical partition.
func (s *Server) lsnHeaders(h http.Header, c *container) {
	lsn, rng := h.Get(cosmos.HeaderLSN), h.Get(cosmos.HeaderPartitionKeyRangeID)
	if lsn == "" || rng == "" {
		return
	}
	p := c.partitionByID(rng)
	if p == nil {
		return
	}
	h.Set(cosmos.HeaderLocalLSN, lsn)
	if item := h.Get(cosmos.HeaderItemLSN); item != "" {
		h.Set(cosmos.HeaderItemLocalLSN, item)
	}
	now, lag := s.clock.Now(), s.lagNow()
	p.mu.RLock()
	committed := p.lsn
	for r := range s.regions {
		committed = min(committed, p.caughtUpLSN(r, now, lag))
	}
	p.mu.RUnlock()
	h.Set(cosmos.HeaderGlobalCommittedLSN, strconv.FormatInt(committed, 10))
	h.Set(cosmos.HeaderPhysicalPartitionID, p.rng.ID)
}

// responseContainer is the container a request addresses (the container itself, its
// items or feeds), nil for anything else or a container that does not exist.
func (s *Server) responseContainer(req *request) *container {
	segs := req.segs
	if len(segs) < 4 || segs[0] != cosmos.TypeDatabases || segs[2] != cosmos.TypeContainers {
		return nil
	}
	if len(segs) > 4 && segs[4] != cosmos.TypeDocuments {
		return nil
	}
	c, err := s.store.container(segs[1], segs[3])
	if err != nil {
		return nil
	}
	return c
}

// vectorTokens rewrites the simple tokens the handlers set ("0:-1#12", one per range,
// comma-separated) into the multi-region shape, with the answering region's progress.
func (s *Server) vectorTokens(c *container, region int, header string) string {
	parts := strings.Split(header, ",")
	now, lag := s.clock.Now(), s.lagNow()
	for i, tok := range parts {
		rng, global, ok := parseSessionToken(strings.TrimSpace(tok))
		if !ok || rng == "" || strings.Count(tok, "#") != 1 {
			continue
		}
		p := c.partitionByID(rng)
		if p == nil {
			continue
		}
		parts[i] = vectorSessionToken(rng, global, regionProgress(p, region, len(s.regions), now, lag))
	}
	return strings.Join(parts, ",")
}

// Quotas of a container as the service reports them: sizes in KB, documentSize (the
// largest document) in MB, -1 for no limit.
const (
	quotaDocumentMB    = 2
	quotaCollectionKB  = 20 * 1024 * 1024 // 20 GB, the service's limit for one logical partition
	usageRefreshPeriod = time.Second
)

// usageCache holds a container's usage for the headers: counting every item on each
// response would cost a point read a scan, so the counts are refreshed at most once a
// second, or at once for a request with x-ms-documentdb-populatequotainfo (as the
// service's own usage is approximate unless asked for).
type usageCache struct {
	snap atomic.Pointer[usageSnapshot]
	mu   sync.Mutex // one refresh at a time
}

type usageSnapshot struct {
	at           time.Time
	lsns         int64
	quota, usage string
}

func (u *usageCache) headers(c *container, exact bool) (quota, usage string) {
	now := time.Now() // a refresh period, not emulated time: fake clocks may never move
	if s := u.snap.Load(); s != nil && !exact && now.Sub(s.at) < usageRefreshPeriod {
		return s.quota, s.usage
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	var lsns int64
	for _, p := range c.partitions() {
		p.mu.RLock()
		lsns += p.lsn
		p.mu.RUnlock()
	}
	if s := u.snap.Load(); s != nil && s.lsns == lsns {
		u.snap.Store(&usageSnapshot{at: now, lsns: lsns, quota: s.quota, usage: s.usage})
		return s.quota, s.usage
	}
	count, bytes, largest := 0, 0, 0
	for _, p := range c.partitions() {
		p.mu.RLock()
		for _, e := range p.items {
			if v := e.latest(); c.live(v, now) {
				count++
				bytes += len(v.body)
				largest = max(largest, len(v.body))
			}
		}
		p.mu.RUnlock()
	}
	kb := (bytes + 1023) / 1024
	s := &usageSnapshot{at: now, lsns: lsns}
	s.quota = "functions=25;storedProcedures=100;triggers=25;documentSize=" + strconv.Itoa(quotaDocumentMB) +
		";documentsSize=" + strconv.Itoa(quotaCollectionKB) + ";documentsCount=-1;collectionSize=" + strconv.Itoa(quotaCollectionKB) + ";"
	s.usage = "functions=0;storedProcedures=0;triggers=0;documentSize=" + strconv.Itoa(largest/(1024*1024)) +
		";documentsSize=" + strconv.Itoa(kb) + ";documentsCount=" + strconv.Itoa(count) + ";collectionSize=" + strconv.Itoa(kb) + ";"
	u.snap.Store(s)
	return s.quota, s.usage
}
