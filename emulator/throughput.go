package emulator

// Provisioned throughput, enforced when Config.EnforceThroughput is set (`cosmosctl
// emulator --enforce-throughput`, or PUT /_emulator/throughput while it runs). It is off
// by default: offers are then bookkeeping only and 429s come from fault rules alone.
//
// The model is the service's. A container's RU/s (its manual throughput, or its
// autoscale maximum, up to which autoscale scales at once) is split evenly over its
// partition key ranges. Each range has a budget of one second's share, refilled
// continuously at that share per second. A request whose charge does not fit in what is
// left answers 429 with substatus 3200 (RU budget exceeded), x-ms-retry-after-ms the
// time until it fits, 0 RU charged, and nothing applied. A request bigger than a whole
// second's share is admitted when the budget is full and leaves the range in debt,
// which later requests wait out: the service does not refuse such a request for ever.
// Replacing an offer changes the budgets at once: what a range has spent stays spent,
// against the new share. As on the service, where provisioned throughput applies in
// each region, every region has budgets of its own, and a request draws on the region
// that serves it; replicating a write to the other regions costs them nothing here.
//
// A container that shares its database's throughput draws on the database's budgets:
// the database's RU/s split over as many ranges as a container has, range i of every
// sharing container on the database's budget i, as the containers of a shared
// database share its physical partitions.
//
// Throttled: item operations (point reads and writes, queries, read feeds, the change
// feed, transactional batch as a whole, bulk operation by operation), whatever they
// answer, if they are charged. Not throttled: the account, databases, containers,
// offers, partition key ranges, addresses, query plans and the control API; the service
// serves those from a budget of its own, not the container's. Every container of the
// emulator has an offer (400 RU/s unless created with more); a resource without one (a
// serverless account's, which the emulator does not model) would not be throttled.
//
// A page that reads several ranges (a read feed sent without a range or key) draws on
// the range it starts in.

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
)

// SubRUBudgetExceeded is the substatus of a 429 for a partition key range's spent RU
// budget.
const SubRUBudgetExceeded = 3200

// ruBudget is one partition key range's RU budget: what it has spent and not yet got
// back, as of at.
type ruBudget struct {
	mu   sync.Mutex
	used float64
	at   time.Time
}

// ruEpsilon absorbs floating-point residue, so that waiting exactly the retry-after a
// 429 gave makes the request fit.
const ruEpsilon = 1e-6

// take spends charge RU at now against a share of perSecond RU/s, or returns how long
// until the charge fits (0 when it was spent).
func (b *ruBudget) take(charge, perSecond float64, now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if d := now.Sub(b.at); d > 0 {
		b.used = max(0, b.used-perSecond*d.Seconds())
		b.at = now
	}
	fits := max(0, perSecond-charge) // a charge over the whole share needs a full budget
	if b.used <= fits+ruEpsilon {
		b.used += charge
		return 0
	}
	ms := math.Ceil((b.used - fits) / perSecond * 1000)
	return time.Duration(max(ms, 1)) * time.Millisecond
}

// throughputMeter holds the budgets of one emulator, by region, resource _rid and
// range id.
type throughputMeter struct {
	mu       sync.Mutex
	budgets  map[string]*ruBudget
	refusals atomic.Int64
}

func (m *throughputMeter) budget(region int, rid, rangeID string) *ruBudget {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.budgets == nil {
		m.budgets = map[string]*ruBudget{}
	}
	key := strconv.Itoa(region) + "/" + rid + "/" + rangeID
	b := m.budgets[key]
	if b == nil {
		b = &ruBudget{}
		m.budgets[key] = b
	}
	return b
}

// rangeBudget is the budget a request to one range of a container draws on.
type rangeBudget struct {
	b         *ruBudget
	perSecond float64
	// what names the budget in a 429's message, built only for one.
	what func() string
	now  func() time.Time
	// refusals counts the 429s budgets answered (State.Throttled).
	refusals *atomic.Int64
}

// admit spends charge, or returns the 429 that refuses the request.
func (r *rangeBudget) admit(charge float64) *cosmos.Error {
	if r == nil || charge <= 0 {
		return nil
	}
	wait := r.b.take(charge, r.perSecond, r.now())
	if wait == 0 {
		return nil
	}
	r.refusals.Add(1)
	e := cosmosErr(http.StatusTooManyRequests, SubRUBudgetExceeded,
		"Request rate is large. More Request Units may be needed, so no changes were made. Please retry this request later. ("+
			r.what()+"; the request needs "+strconv.FormatFloat(charge, 'f', 2, 64)+" RU; the emulator enforces provisioned throughput: --enforce-throughput)")
	e.RetryAfter = wait
	return e
}

// SetEnforceThroughput turns enforcement of provisioned throughput on or off. Turned
// on, every range starts with a full budget.
func (s *Server) SetEnforceThroughput(on bool) {
	if on && !s.enforce.Load() {
		s.budgets.mu.Lock()
		s.budgets.budgets = nil
		s.budgets.mu.Unlock()
	}
	s.enforce.Store(on)
}

// ThroughputRequest is the body of PUT /_emulator/throughput.
type ThroughputRequest struct {
	Enforce bool `json:"enforce"`
}

// budgetFor is the budget of range p of container c in region, nil when throughput
// is not enforced or c has no offer.
func (s *Server) budgetFor(region int, c *container, p *partition) *rangeBudget {
	if !s.enforce.Load() || p == nil {
		return nil
	}
	rid, ru, shared, ok := s.throughputOf(c)
	if !ok || ru <= 0 {
		return nil
	}
	n := len(c.partitions())
	what := func() string {
		w := "partition key range " + p.rng.ID + " of container " + c.meta.ID + " in " + s.regions[region].name + " has spent its " +
			strconv.FormatFloat(float64(ru)/float64(n), 'f', -1, 64) + " RU/s, " + strconv.Itoa(ru) + " RU/s over " + strconv.Itoa(n) + " ranges"
		if shared {
			w += " shared with database " + c.db.meta.ID + "'s other containers"
		}
		return w
	}
	return &rangeBudget{b: s.budgets.budget(region, rid, p.rng.ID), perSecond: float64(ru) / float64(n), what: what, now: s.clock.Now, refusals: &s.budgets.refusals}
}

// throughputOf is the RU/s container c draws on and the _rid of the resource whose
// offer provides it (the database's when shared).
func (s *Server) throughputOf(c *container) (rid string, ru int, shared, ok bool) {
	o := s.offers()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.loadLocked(s.store.disk) != nil {
		return "", 0, false, false
	}
	rate := func(r offerRecord) int {
		if r.autoscale() {
			return r.AutoscaleMax
		}
		return r.Throughput
	}
	own, hasOwn := o.recs[c.meta.RID]
	db, hasDB := o.recs[c.db.meta.RID]
	switch {
	case hasOwn && !own.Shared:
		return c.meta.RID, rate(own), false, true
	case hasDB && !db.Shared:
		return c.db.meta.RID, rate(db), true, true
	case hasOwn: // reserved: no offer of its own, and none to share
		return "", 0, false, false
	}
	return c.meta.RID, defaultThroughput, false, true
}

// meter makes req draw on range p's budget.
func (s *Server) meter(req *request, c *container, p *partition) {
	req.budget = s.budgetFor(req.region, c, p)
}

// admit spends req's charge once, before anything is applied; nil when it may go on.
func (s *Server) admit(req *request, charge float64) *cosmos.Error {
	if req.budget == nil || req.metered {
		return nil
	}
	req.metered = true
	return req.budget.admit(charge)
}

// throttled is the check every response of a metered request passes that was not
// admitted before (reads, queries, refusals: nothing to undo). It answers the 429
// instead when the charge does not fit.
func (s *Server) throttled(req *request, charge float64) bool {
	e := s.admit(req, charge)
	if e == nil {
		return false
	}
	h := req.w.Header()
	for _, k := range []string{cosmos.HeaderETag, cosmos.HeaderContinuation, cosmos.HeaderItemCount, cosmos.HeaderItemLSN} {
		h.Del(k)
	}
	s.writeError(req, e, 0)
	return true
}

// admitWrite is the admission of a write whose charge is charge(stored bytes), for a
// request metered by range; nil when it is not metered.
func (s *Server) admitWrite(req *request, charge func(size int) float64) admission {
	if req.budget == nil {
		return nil
	}
	return func(next *itemVersion) *cosmos.Error { return s.admit(req, charge(len(next.body))) }
}
