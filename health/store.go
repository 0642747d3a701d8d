package health

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
)

// Store is the region health of one account, shared by every operation of a client.
// It is safe for concurrent use.
//
// The engine tells it the outcome of every attempt — Failure, Success, HedgeLost —
// and asks it, for every operation, the order in which to use the effective regions
// (Order). Records are kept per key: a region, a partition key range ("" for the whole
// region) and a kind of operation.
type Store struct {
	cfg Config
	clk clock.Clock

	mu      sync.Mutex
	entries map[key]*entry
	nextID  uint64 // probe tickets, unique for the life of the Store

	// size and down are len(entries) and the entries unavailable, read without the
	// lock so that the common cases (nothing ever failed; nothing unavailable) cost an
	// atomic load.
	size atomic.Int64
	down atomic.Int64
}

type key struct {
	region  string
	rangeID string
	kind    Kind
}

// entry is what is known of one key. Times are the clock's.
type entry struct {
	failures      [numCauses]int
	failuresSince time.Time // first failure of the current counting window
	lastFailure   time.Time
	lastCause     Cause

	hedgeLosses      int // in a row
	hedgeLossesSince time.Time
	lastHedgeLoss    time.Time

	lastSuccess time.Time
	lastEvent   time.Time

	// Unavailable: down, since downSince, until until; then one probe at a time.
	down         bool
	downSince    time.Time
	until        time.Time
	interval     time.Duration // the current unavailable period
	failedProbes int

	probeHeld  bool
	probeSince time.Time
	probeID    uint64
}

// New returns an empty Store, with defaults for the zero fields of cfg.
func New(cfg Config, clk clock.Clock) (*Store, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if clk == nil {
		return nil, fmt.Errorf("region health needs a clock")
	}
	return &Store{cfg: cfg.withDefaults(), clk: clk, entries: map[key]*entry{}}, nil
}

// Config is the configuration in effect, defaults applied.
func (s *Store) Config() Config { return s.cfg }

func (e *entry) failureCount() int {
	n := 0
	for _, c := range e.failures {
		n += c
	}
	return n
}

// Failure records an attempt in region (and partition key range rangeID, "" for the
// region as a whole) that failed for cause. Its key becomes unavailable when it has
// more failures than the kind's threshold within the counting window. A failure of an
// unavailable key whose period is over (a probe, or a request that went there because
// every region was unavailable) keeps it unavailable for another, doubled period.
func (s *Store) Failure(region, rangeID string, kind Kind, cause Cause) {
	if !kind.valid() || !cause.valid() {
		return
	}
	now := s.clk.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{region, rangeID, kind}
	e := s.getLocked(k, now, true)
	if !e.down && (e.failureCount() == 0 || now.Sub(e.lastFailure) > s.cfg.ResetAfter) {
		e.failures = [numCauses]int{}
		e.failuresSince = now
	}
	e.failures[cause]++
	e.lastFailure, e.lastCause, e.lastEvent = now, cause, now
	switch {
	case e.down:
		s.extendLocked(e, now)
	case e.failureCount() > s.threshold(kind):
		s.tripLocked(e, now)
	}
}

// HedgeLost records that region was the first region of an operation and a hedge to
// another region won: the region answered, if at all, later than the hedge threshold
// plus the other region's time. HedgeLosses in a row make it unavailable; a Success
// ends the streak.
func (s *Store) HedgeLost(region, rangeID string, kind Kind) {
	if !kind.valid() {
		return
	}
	now := s.clk.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.getLocked(key{region, rangeID, kind}, now, true)
	if e.hedgeLosses == 0 || (!e.down && now.Sub(e.lastHedgeLoss) > s.cfg.ResetAfter) {
		e.hedgeLosses = 0
		e.hedgeLossesSince = now
	}
	e.hedgeLosses++
	e.lastHedgeLoss, e.lastEvent = now, now
	switch {
	case e.down:
		s.extendLocked(e, now)
	case e.hedgeLosses >= s.cfg.HedgeLosses:
		s.tripLocked(e, now)
	}
}

// Success records a final answer from region (2xx, 404/0, 409, 412 …: the region did
// its job). It ends a hedge-loss streak, but leaves the failure counts of the counting
// window: a region failing one request in two is not healthy. An answer from an
// unavailable key is the evidence a probe would give: the key is available again, with
// its counts cleared.
func (s *Store) Success(region, rangeID string, kind Kind) {
	if s.size.Load() == 0 {
		return // nothing has failed: nothing to remember
	}
	now := s.clk.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.getLocked(key{region, rangeID, kind}, now, false)
	if e == nil {
		return
	}
	if e.down {
		s.recoverLocked(e)
	}
	e.hedgeLosses = 0
	e.lastSuccess, e.lastEvent = now, now
}

// Reset forgets everything.
func (s *Store) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.entries)
	s.size.Store(0)
	s.down.Store(0)
}

func (s *Store) threshold(k Kind) int {
	if k == Write {
		return s.cfg.WriteFailures
	}
	return s.cfg.ReadFailures
}

// getLocked finds the entry of k, forgetting it if it has expired, and creates it if
// create is set.
func (s *Store) getLocked(k key, now time.Time, create bool) *entry {
	e := s.entries[k]
	if e != nil && s.expired(e, now) {
		s.deleteLocked(k, e)
		e = nil
	}
	if e == nil && create {
		e = &entry{lastEvent: now}
		s.entries[k] = e
		s.size.Add(1)
		if len(s.entries)%256 == 0 {
			s.pruneLocked(now)
		}
	}
	return e
}

func (s *Store) expired(e *entry, now time.Time) bool {
	return now.Sub(e.lastEvent) > s.cfg.EntryTTL
}

func (s *Store) deleteLocked(k key, e *entry) {
	if e.down {
		s.down.Add(-1)
	}
	delete(s.entries, k)
	s.size.Add(-1)
}

// pruneLocked forgets every expired entry.
func (s *Store) pruneLocked(now time.Time) {
	for k, e := range s.entries {
		if s.expired(e, now) {
			s.deleteLocked(k, e)
		}
	}
}

// tripLocked makes an available entry unavailable for ProbeAfter.
func (s *Store) tripLocked(e *entry, now time.Time) {
	e.down = true
	e.downSince = now
	e.interval = s.cfg.ProbeAfter
	e.until = now.Add(e.interval)
	e.failedProbes = 0
	e.probeHeld = false
	s.down.Add(1)
}

// extendLocked is the verdict of a failed probe on an unavailable entry: another
// period, twice as long as the last, up to MaxProbeInterval. Failures that arrive while
// the period runs (a hedge arm that reached the region at the end of the order) change
// nothing: the region is already known to be failing.
func (s *Store) extendLocked(e *entry, now time.Time) {
	if now.Before(e.until) {
		return
	}
	e.interval = min(max(2*e.interval, s.cfg.ProbeAfter), s.cfg.MaxProbeInterval)
	e.until = now.Add(e.interval)
	e.failedProbes++
}

// recoverLocked makes an unavailable entry available, with clean counts.
func (s *Store) recoverLocked(e *entry) {
	e.down = false
	e.downSince, e.until = time.Time{}, time.Time{}
	e.interval = 0
	e.failedProbes = 0
	e.probeHeld = false
	e.failures = [numCauses]int{}
	e.failuresSince = time.Time{}
	e.hedgeLosses = 0
	e.hedgeLossesSince = time.Time{}
	s.down.Add(-1)
}
