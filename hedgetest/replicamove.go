package hedgetest

import (
	"strings"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/workload"
)

// MoveWindow measures a run through replica moves, from its reads' diagnostics: how
// often the client sent a request to a moved replica after that replica had answered it
// 410, and the latency of the reads sent during the window, from the moves until the
// gateway hands out their successors (or the run ends).
//
// Give its Observe to Workload.Observe and call Moved from Workload.Disrupt once the
// moves are made. It is safe for concurrent use.
type MoveWindow struct {
	// HealthAware says the client orders replicas by health. Its requests to a moved
	// replica count as sent after the 410 only when they were routed after the address
	// cache recorded it (their diagnostics show the replica unhealthy when chosen); a
	// request routed a few microseconds before, by a concurrent read, and sent just after
	// the 410 arrived was already on its way, and is counted as InFlight instead. A
	// client without health awareness records nothing, so for it the send time decides.
	HealthAware bool

	mu       sync.Mutex
	armed    bool
	from     time.Time
	until    time.Time
	moved    map[string]*movedReplica // by address without its trailing slash
	stats    *workload.Stats
	reads    int
	attempts []movedAttempt
}

type movedReplica struct {
	first410 time.Time // when the client got its first 410 from it; zero before
}

// movedAttempt is one request to a moved replica.
type movedAttempt struct {
	replica    string
	start, end time.Time
	status     int
	// marked: the address cache held the replica unhealthy when the request was routed.
	marked bool
}

// Moved arms the window: these replica addresses stopped serving at from, and the
// gateway hands out their successors from until on.
func (m *MoveWindow) Moved(addresses []string, from, until time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.armed, m.from, m.until = true, from, until
	m.moved = map[string]*movedReplica{}
	for _, a := range addresses {
		m.moved[strings.TrimRight(a, "/")] = &movedReplica{}
	}
	m.stats = workload.NewStats()
}

// Observe records one read of the run.
func (m *MoveWindow) Observe(r Read) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.armed {
		// A read that ended before the moves were made met none of them.
		return
	}
	if !r.Sent.Before(m.from) && r.Sent.Before(m.until) {
		m.reads++
		status, sub := 0, 0
		if r.Result != nil {
			status, sub = r.Result.StatusCode, r.Result.SubStatus
		}
		m.stats.Record(r.Latency, status, sub, 0, r.Err != nil)
	}
	if r.Result == nil || r.Result.Diagnostics == nil {
		return
	}
	for _, a := range r.Result.Diagnostics.Attempts {
		addr := strings.TrimRight(a.Replica, "/")
		rep := m.moved[addr]
		if rep == nil {
			continue
		}
		at := movedAttempt{replica: addr, start: r.Sent.Add(a.Start), status: a.StatusCode,
			marked: a.ReplicaHealth == "unhealthy" || a.ReplicaHealth == "unhealthy-pending"}
		at.end = at.start.Add(a.Duration)
		if a.StatusCode == 410 && (rep.first410.IsZero() || at.end.Before(rep.first410)) {
			rep.first410 = at.end
		}
		m.attempts = append(m.attempts, at)
	}
}

// MoveReport is what MoveWindow measured.
type MoveReport struct {
	Moved int // replicas moved
	// Window is how long the window lasted (until the gateway handed out the successors,
	// or the run ended).
	Window time.Duration
	// Reads sent during the window, and their latency.
	Reads int
	Stats *workload.Stats
	// Gone is the 410 answers from moved replicas.
	Gone int
	// AfterFirst410 is the requests sent to a moved replica during the window after the
	// client had its first 410 from it; InFlight those a health-aware client had routed
	// just before (see MoveWindow.HealthAware).
	AfterFirst410 int
	InFlight      int
}

// AfterFirst410Pct is AfterFirst410 as a percentage of the reads in the window.
func (r MoveReport) AfterFirst410Pct() float64 {
	if r.Reads == 0 {
		return 0
	}
	return 100 * float64(r.AfterFirst410) / float64(r.Reads)
}

// Report returns the measurements; end is when the run ended, which closes the window
// if the gateway had not moved on by then.
func (m *MoveWindow) Report(end time.Time) MoveReport {
	m.mu.Lock()
	defer m.mu.Unlock()
	rep := MoveReport{Moved: len(m.moved), Reads: m.reads, Stats: m.stats}
	if rep.Stats == nil {
		rep.Stats = workload.NewStats()
	}
	if !m.armed {
		return rep
	}
	until := m.until
	if end.Before(until) {
		until = end
	}
	rep.Window = max(until.Sub(m.from), 0)
	for _, a := range m.attempts {
		if a.status == 410 {
			rep.Gone++
		}
		first := m.moved[a.replica].first410
		if first.IsZero() || a.start.Before(first) || !a.start.Before(until) {
			continue
		}
		if m.HealthAware && !a.marked {
			rep.InFlight++
			continue
		}
		rep.AfterFirst410++
	}
	return rep
}
