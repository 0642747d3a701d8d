package health

import (
	"cmp"
	"slices"
	"time"
)

// StateKind and StateVersion name the format of State in a state file
// (internal/statefile); StateVersion changes whenever State does incompatibly.
const (
	StateKind    = "region-health"
	StateVersion = 1
)

// State is what a Store knows, in a form that outlives the process: JSON, absolute UTC
// times. A CLI process merges what earlier processes saved (Merge) and saves what it
// learned (Snapshot), so that the second command of a runbook does not pay again for
// the dead region the first one found.
type State struct {
	Entries []StateEntry `json:"entries"`
}

// StateEntry is one key of a State.
type StateEntry struct {
	Region              string        `json:"region"`
	PartitionKeyRangeID string        `json:"partition_key_range_id,omitempty"`
	Kind                Kind          `json:"kind"`
	Failures            map[Cause]int `json:"failures,omitempty"`
	FailuresSince       time.Time     `json:"failures_since,omitzero"`
	LastFailure         time.Time     `json:"last_failure,omitzero"`
	LastFailureCause    Cause         `json:"last_failure_cause,omitempty"`
	HedgeLossStreak     int           `json:"hedge_loss_streak,omitempty"`
	HedgeLossesSince    time.Time     `json:"hedge_losses_since,omitzero"`
	LastHedgeLoss       time.Time     `json:"last_hedge_loss,omitzero"`
	LastSuccess         time.Time     `json:"last_success,omitzero"`
	// UnavailableSince is zero for an available key.
	UnavailableSince time.Time `json:"unavailable_since,omitzero"`
	UnavailableUntil time.Time `json:"unavailable_until,omitzero"`
	ProbeIntervalMs  float64   `json:"probe_interval_ms,omitempty"`
	FailedProbes     int       `json:"failed_probes,omitempty"`
	// LastEvent decides Merge: per key, the later last event wins.
	LastEvent time.Time `json:"last_event"`
}

// Snapshot returns what the Store knows, expired entries left out, sorted by region,
// range and kind. A probe slot in use is not part of it: the probe belongs to this
// process, and another process that loaded it as held would wait ProbeHold for a
// verdict it can never receive.
func (s *Store) Snapshot() State {
	now := s.clk.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneLocked(now)
	st := State{Entries: make([]StateEntry, 0, len(s.entries))}
	for k, e := range s.entries {
		se := StateEntry{
			Region:              k.region,
			PartitionKeyRangeID: k.rangeID,
			Kind:                k.kind,
			FailuresSince:       utc(e.failuresSince),
			LastFailure:         utc(e.lastFailure),
			LastFailureCause:    e.lastCause,
			HedgeLossStreak:     e.hedgeLosses,
			HedgeLossesSince:    utc(e.hedgeLossesSince),
			LastHedgeLoss:       utc(e.lastHedgeLoss),
			LastSuccess:         utc(e.lastSuccess),
			LastEvent:           utc(e.lastEvent),
		}
		for c, n := range e.failures {
			if n > 0 {
				if se.Failures == nil {
					se.Failures = map[Cause]int{}
				}
				se.Failures[Cause(c)] = n
			}
		}
		if e.down {
			se.UnavailableSince = utc(e.downSince)
			se.UnavailableUntil = utc(e.until)
			se.ProbeIntervalMs = float64(e.interval) / float64(time.Millisecond)
			se.FailedProbes = e.failedProbes
		}
		st.Entries = append(st.Entries, se)
	}
	slices.SortFunc(st.Entries, func(a, b StateEntry) int {
		return cmp.Or(cmp.Compare(a.Region, b.Region),
			cmp.Compare(a.PartitionKeyRangeID, b.PartitionKeyRangeID),
			cmp.Compare(a.Kind, b.Kind))
	})
	return st
}

// Merge adds what st knows: per key, the entry whose last event is later wins (a tie
// keeps what this Store has). Entries that have expired, or that make no sense (no
// region, an unknown kind), are ignored. A state file is only a cache, so what it
// says is bounded: an unavailable period ends no later than MaxProbeInterval from now.
func (s *Store) Merge(st State) {
	now := s.clk.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, se := range st.Entries {
		if se.Region == "" || !se.Kind.valid() || se.LastEvent.IsZero() || now.Sub(se.LastEvent) > s.cfg.EntryTTL {
			continue
		}
		k := key{se.Region, se.PartitionKeyRangeID, se.Kind}
		if cur := s.getLocked(k, now, false); cur != nil {
			if !se.LastEvent.After(cur.lastEvent) {
				continue
			}
			s.deleteLocked(k, cur)
		}
		s.entries[k] = s.fromState(se, now)
		s.size.Add(1)
		if s.entries[k].down {
			s.down.Add(1)
		}
	}
}

func (s *Store) fromState(se StateEntry, now time.Time) *entry {
	e := &entry{
		failuresSince:    se.FailuresSince,
		lastFailure:      se.LastFailure,
		lastCause:        se.LastFailureCause,
		hedgeLosses:      max(se.HedgeLossStreak, 0),
		hedgeLossesSince: se.HedgeLossesSince,
		lastHedgeLoss:    se.LastHedgeLoss,
		lastSuccess:      se.LastSuccess,
		lastEvent:        se.LastEvent,
	}
	for c, n := range se.Failures {
		if c.valid() && n > 0 {
			e.failures[c] = n
		}
	}
	if !se.UnavailableSince.IsZero() {
		e.down = true
		e.downSince = se.UnavailableSince
		e.interval = time.Duration(se.ProbeIntervalMs * float64(time.Millisecond))
		e.interval = min(max(e.interval, s.cfg.ProbeAfter), s.cfg.MaxProbeInterval)
		e.until = se.UnavailableUntil
		if limit := now.Add(s.cfg.MaxProbeInterval); e.until.After(limit) {
			e.until = limit
		}
		e.failedProbes = max(se.FailedProbes, 0)
	}
	return e
}
