package health

import "time"

// Ordering is the order in which an operation uses its effective regions.
type Ordering struct {
	// Regions: the effective regions, the unavailable ones moved to the end in their
	// usual order. When nothing changes it is the caller's slice itself: do not modify.
	Regions []string
	// Unavailable has a note for each region moved to the end (or kept in place because
	// every region is unavailable), in the usual order.
	Unavailable []Note
	// AllUnavailable says every region was unavailable and none could be probed, so the
	// usual order stands: with nowhere better to go, the best guess is the usual one.
	AllUnavailable bool
	// Probe is the probe ticket this operation was granted, if any: its region is
	// unavailable but, its period over, this operation may try it, in its usual place.
	Probe Probe
}

// Note says, for diagnostics, why a region was moved, e.g. "East US: 3 timeouts in 40s,
// unavailable until 12:03:06, then one probe request".
type Note struct {
	Region string
	Text   string
}

func (n Note) String() string { return n.Text }

// slot is what Order finds for one region.
type slot struct {
	e       [2]*entry // the region-level entry, the range-level entry
	down    bool
	granted bool
}

// Order returns the order in which an operation of kind on partition key range
// rangeID ("" when not known) uses regions: the unavailable ones moved to the end,
// stable, never removed. A region is unavailable if its region-level record is, or
// (with a rangeID) the record of that range. The first unavailable region whose period
// is over and whose probe slot is free is granted to this call as a probe and keeps
// its place; at most one probe per call. If no region is left available, the usual
// order is returned.
//
// It runs for every operation: with nothing unavailable it costs an atomic load and
// allocates nothing.
func (s *Store) Order(regions []string, rangeID string, kind Kind) Ordering {
	if s.down.Load() == 0 {
		return Ordering{Regions: regions}
	}
	now := s.clk.Now()
	s.mu.Lock()
	defer s.mu.Unlock()

	var buf [8]slot
	slots := buf[:0]
	if len(regions) > len(buf) {
		slots = make([]slot, 0, len(regions))
	}
	down, granted := 0, -1
	for i, r := range regions {
		var sl slot
		sl.e[0] = s.getLocked(key{r, "", kind}, now, false)
		if rangeID != "" {
			sl.e[1] = s.getLocked(key{r, rangeID, kind}, now, false)
		}
		sl.down = isDown(sl.e[0]) || isDown(sl.e[1])
		if sl.down && granted < 0 && s.probeable(sl.e[0], now) && s.probeable(sl.e[1], now) {
			sl.granted = true
			granted = i
		}
		if sl.down {
			down++
		}
		slots = append(slots, sl)
	}
	if down == 0 {
		return Ordering{Regions: regions}
	}

	var o Ordering
	if granted >= 0 {
		o.Probe = s.grantLocked(regions[granted], rangeID, kind, slots[granted].e, now)
	}
	available := len(regions) - down
	if granted >= 0 {
		available++
	}
	o.Unavailable = make([]Note, 0, down)
	for i, sl := range slots {
		if sl.down && !sl.granted {
			o.Unavailable = append(o.Unavailable, Note{Region: regions[i], Text: s.noteLocked(regions[i], rangeID, sl.e, now, false)})
		}
	}
	if available == 0 {
		o.Regions = regions
		o.AllUnavailable = true
		return o
	}
	o.Regions = make([]string, 0, len(regions))
	for i, sl := range slots {
		if !sl.down || sl.granted {
			o.Regions = append(o.Regions, regions[i])
		}
	}
	for i, sl := range slots {
		if sl.down && !sl.granted {
			o.Regions = append(o.Regions, regions[i])
		}
	}
	return o
}

func isDown(e *entry) bool { return e != nil && e.down }

// probeable: e is not unavailable, or its period is over and its probe slot free (or
// held by a probe that has outlived ProbeHold).
func (s *Store) probeable(e *entry, now time.Time) bool {
	if !isDown(e) {
		return true
	}
	return !now.Before(e.until) && (!e.probeHeld || s.probeStale(e, now))
}

func (s *Store) probeStale(e *entry, now time.Time) bool {
	return now.Sub(e.probeSince) >= s.cfg.ProbeHold
}

func (s *Store) grantLocked(region, rangeID string, kind Kind, es [2]*entry, now time.Time) Probe {
	s.nextID++
	p := Probe{s: s, region: region, id: s.nextID}
	p.note = s.noteLocked(region, rangeID, es, now, true)
	for i, e := range es {
		if !isDown(e) {
			continue
		}
		e.probeHeld, e.probeSince, e.probeID = true, now, s.nextID
		k := key{region, "", kind}
		if i == 1 {
			k.rangeID = rangeID
		}
		p.keys[p.n] = k
		p.n++
	}
	return p
}

// Probe is the ticket of a probe request: while it is held, no other operation is
// granted a probe of its region (and range). Whoever is granted one must settle it
// exactly once — Succeeded, Failed or Abandoned — in addition to recording the
// attempt's outcome (Success, Failure, HedgeLost) as for any attempt. A ticket never
// settled is released after ProbeHold. The zero Probe is "no probe granted"; settling
// it does nothing, and so does settling a ticket twice.
type Probe struct {
	s      *Store
	region string
	keys   [2]key
	n      int
	id     uint64
	note   string
}

// Granted reports whether this is a ticket at all.
func (p Probe) Granted() bool { return p.s != nil }

// Region is the region the probe may go to ("" when none was granted).
func (p Probe) Region() string { return p.region }

// Note says, for diagnostics, why the region is being probed, e.g. "East US: 3
// timeouts in 40s, unavailable, its period over: probed now" (the engine says by what).
func (p Probe) Note() string { return p.note }

// Succeeded: the probe got a final answer; the region is available again, its counts
// cleared.
func (p Probe) Succeeded() {
	p.settle(func(e *entry, now time.Time) {
		p.s.recoverLocked(e)
		e.lastSuccess, e.lastEvent = now, now
	})
}

// Failed: the probe failed (or lost its hedge race); the region stays unavailable for
// another period, twice as long as the last, up to MaxProbeInterval.
func (p Probe) Failed() {
	p.settle(func(e *entry, now time.Time) {
		p.s.extendLocked(e, now)
		e.lastEvent = now
	})
}

// Abandoned: the probe ended without a verdict (the operation was cancelled, or never
// reached the region because an earlier one answered); the slot is free for the next
// operation.
func (p Probe) Abandoned() { p.settle(func(*entry, time.Time) {}) }

func (p Probe) settle(verdict func(e *entry, now time.Time)) {
	if p.s == nil {
		return
	}
	s := p.s
	now := s.clk.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range p.keys[:p.n] {
		e := s.entries[k]
		if e == nil || !e.probeHeld || e.probeID != p.id {
			continue // settled already, released as stale, or forgotten
		}
		e.probeHeld = false
		if e.down {
			verdict(e, now)
		}
	}
}
