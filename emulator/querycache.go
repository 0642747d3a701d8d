package emulator

import (
	"strconv"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator/jsondoc"
)

// resultCache keeps the complete results of recent ORDER BY, DISTINCT, aggregate and
// GROUP BY queries per partition, so that paging through one costs a sort (or a scan)
// once rather than on every page: the service streams such queries from its index, and
// a client paging 25,000 sorted items 100 at a time would otherwise make the emulator
// sort 250 times. An entry is valid while its partition's state, as its region sees it,
// is unchanged (the region's caught-up LSN); a write makes the next page rebuild the
// result, and continuation tokens resume by position in the sorted order, so nothing
// already returned repeats. Entries expire after resultCacheTTL without use, and the
// cache holds at most resultCacheEntries (each pins the bodies of its rows, which the
// store shares).
type resultCache struct {
	mu      sync.Mutex
	entries map[string]*cachedResult
}

const (
	resultCacheEntries = 16
	resultCacheTTL     = 2 * time.Minute
)

type cachedResult struct {
	res  *jsondoc.Result
	lsn  int64
	used time.Time
	// second is when the result was made, for a container with time to live: documents
	// expire without a write, to the second, so the result holds for that second only.
	second int64
}

func newResultCache() *resultCache { return &resultCache{entries: map[string]*cachedResult{}} }

// get returns prog's result over the documents of scope in partition p as region sees
// them now, from the cache when it is still valid.
func (rc *resultCache) get(s *Server, region int, c *container, p *partition, scope docScope, prog *jsondoc.Program, spec cosmos.QuerySpec) (*jsondoc.Result, error) {
	now := s.clock.Now()
	p.mu.RLock()
	// Read before the scan: a write landing during the scan then invalidates the entry
	// instead of hiding behind it.
	lsn := p.caughtUpLSN(region, now, s.lagNow())
	p.mu.RUnlock()
	// The container's _etag is in the key: a replace that changes its defaultTtl changes
	// which documents are live.
	settings := c.current.Load()
	key := c.meta.RID + "\x00" + settings.ETag + "\x00" + p.rng.ID + "\x00" + strconv.Itoa(region) + "\x00" + queryFingerprint(spec, scope.key()) + "\x00" + spec.Query

	rc.mu.Lock()
	second := int64(0)
	if settings.DefaultTTL != nil {
		second = now.Unix()
	}
	if e := rc.entries[key]; e != nil && e.lsn == lsn && e.second == second && now.Sub(e.used) < resultCacheTTL {
		e.used = now
		rc.mu.Unlock()
		return e.res, nil
	}
	rc.mu.Unlock()

	res, err := prog.Materialize(s.store.visibleDocs(c, p, region, scope, 0))
	if err != nil {
		return nil, err
	}

	rc.mu.Lock()
	defer rc.mu.Unlock()
	for k, e := range rc.entries {
		if now.Sub(e.used) >= resultCacheTTL {
			delete(rc.entries, k)
		}
	}
	if len(rc.entries) >= resultCacheEntries {
		var oldest string
		for k, e := range rc.entries {
			if oldest == "" || e.used.Before(rc.entries[oldest].used) {
				oldest = k
			}
		}
		delete(rc.entries, oldest)
	}
	rc.entries[key] = &cachedResult{res: res, lsn: lsn, used: now, second: second}
	return res, nil
}
