package health

import (
	"cmp"
	"slices"
	"time"
)

// Status is the state of one key, as `cosmosctl health` shows it.
type Status string

const (
	// StatusAvailable: operations use the region in its usual place.
	StatusAvailable Status = "available"
	// StatusUnavailable: operations use the region last, until a probe succeeds.
	StatusUnavailable Status = "unavailable"
	// StatusProbing: unavailable, and one probe request is in flight.
	StatusProbing Status = "probing"
)

// Entry is what is known of one region (and partition key range) for one kind of
// operation, as reported by Entries. Times are UTC; zero times are not known. Its JSON
// is EntryJSON.
type Entry struct {
	Region string
	// PartitionKeyRangeID is "" for the record of the region as a whole.
	PartitionKeyRangeID string
	Kind                Kind
	Status              Status
	// Failures counts the failures of the current counting window, by cause.
	Failures         map[Cause]int
	FailuresSince    time.Time
	LastFailure      time.Time
	LastFailureCause Cause
	// HedgeLossStreak is how many hedge races in a row the region lost as first region.
	HedgeLossStreak int
	LastHedgeLoss   time.Time
	LastSuccess     time.Time
	// UnavailableSince and UnavailableUntil are set while the status is not available;
	// after UnavailableUntil, one probe request at a time may go to the region.
	UnavailableSince time.Time
	UnavailableUntil time.Time
	// ProbeIntervalMs is the current unavailable period, doubled by each failed probe.
	ProbeIntervalMs float64
	FailedProbes    int
	ProbeSince      time.Time
	// Note is the diagnostics note of an unavailable region.
	Note string
}

// Entries reports everything known, sorted by region, partition key range and kind.
// Failure counts whose window has passed read as zero.
func (s *Store) Entries() []Entry {
	now := s.clk.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneLocked(now)
	out := make([]Entry, 0, len(s.entries))
	for k, e := range s.entries {
		r := Entry{
			Region:              k.region,
			PartitionKeyRangeID: k.rangeID,
			Kind:                k.kind,
			Status:              StatusAvailable,
			Failures:            map[Cause]int{},
			LastFailure:         utc(e.lastFailure),
			LastFailureCause:    e.lastCause,
			LastSuccess:         utc(e.lastSuccess),
		}
		if e.down || now.Sub(e.lastFailure) <= s.cfg.ResetAfter {
			for c, n := range e.failures {
				if n > 0 {
					r.Failures[Cause(c)] = n
				}
			}
			if len(r.Failures) > 0 {
				r.FailuresSince = utc(e.failuresSince)
			}
		}
		if e.down || now.Sub(e.lastHedgeLoss) <= s.cfg.ResetAfter {
			r.HedgeLossStreak = e.hedgeLosses
		}
		r.LastHedgeLoss = utc(e.lastHedgeLoss)
		if e.down {
			r.Status = StatusUnavailable
			if e.probeHeld && !s.probeStale(e, now) {
				r.Status = StatusProbing
				r.ProbeSince = utc(e.probeSince)
			}
			r.UnavailableSince = utc(e.downSince)
			r.UnavailableUntil = utc(e.until)
			r.ProbeIntervalMs = float64(e.interval) / float64(time.Millisecond)
			r.FailedProbes = e.failedProbes
			where := k.region
			if k.rangeID != "" {
				where += ", partition key range " + k.rangeID
			}
			r.Note = where + ": " + s.describeLocked(e, now, false)
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Entry) int {
		return cmp.Or(cmp.Compare(a.Region, b.Region),
			cmp.Compare(a.PartitionKeyRangeID, b.PartitionKeyRangeID),
			cmp.Compare(a.Kind, b.Kind))
	})
	return out
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}
