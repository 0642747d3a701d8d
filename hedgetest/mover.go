package hedgetest

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/retries"
	"github.com/cosmosctl/cosmosctl/workload"
)

// The replica-move scenario: reads go direct to the replicas, and in each run a
// secondary replica of every partition key range the items live in, in the first region
// of the embedded emulator, moves (answers 410) a little into the run, while the gateway
// keeps handing out the old addresses for 2 s. Each strategy runs twice, with a
// health-aware client and with one that ignores replica health (for comparison only),
// and the runs report how many requests still went to a moved replica once it had
// answered 410, and the tail latency of the reads sent during that window.

// NoReplicaHealthSuffix names the comparison runs, without replica health, in the
// strategies table.
const NoReplicaHealthSuffix = " (no replica health)"

// MoveAt is how far into a run (a fraction of its reads) the replicas move: early
// enough that most of the run is in the window, late enough that the run starts on a
// healthy set.
const MoveAt = 0.1

// settleMargin is waited beyond the gateway's refresh delay before the next run, so
// that a force refresh surely hands out the successors.
const settleMargin = 20 * time.Millisecond

// moveRun is one run's replica-move measurement.
type moveRun struct {
	Strategy    string
	HealthAware bool
	Report      MoveReport
	// Received is what the emulator counted: the requests the moved replicas received
	// from the move to the end of the run, in flight and retried ones included.
	Received int64
}

// Mover makes the replica moves of each run on the embedded emulator and prepares each
// run's client.
type Mover struct {
	srv                         *emulator.Server
	base                        *engine.Client
	region, database, container string
	preferred                   []string
	e2e                         time.Duration
	// ranges are the partition key ranges the items live in, each with one item to
	// warm the address cache with.
	ranges []string
	probes map[string]engine.Operation
	size   int
	// next is the secondary index the next run moves; settled is when the gateway hands
	// out the successors of the last run's moves on a force refresh.
	next    int
	settled time.Time
}

// NewMover resolves the replica sets of the workload's items in the emulator's first
// region, through client (the account's client, with the preferred regions of the runs).
func NewMover(ctx context.Context, srv *emulator.Server, client *engine.Client, preferred []string, w Workload) (*Mover, error) {
	m := &Mover{srv: srv, base: client, region: srv.Regions()[0].Name,
		database: w.Database, container: w.Container, preferred: preferred,
		e2e: w.E2ETimeout, probes: map[string]engine.Operation{}, next: 1}
	c := m.base.DeriveDirect(m.preferred, retries.Policy{}, false)
	defer c.Close()
	for _, it := range w.Items {
		op := m.read(it)
		key, set, err := c.ReplicaSet(ctx, op, m.region)
		if err != nil {
			return nil, fmt.Errorf("resolving the replicas of item %s in %s: %w", it.ID, m.region, err)
		}
		if _, ok := m.probes[key.Range]; !ok {
			m.probes[key.Range] = op
			m.ranges = append(m.ranges, key.Range)
		}
		m.size = len(set)
	}
	if m.size < 2 {
		return nil, fmt.Errorf("the replica-move scenario needs a secondary replica to move; the replica sets have %d replica(s)", m.size)
	}
	sort.Strings(m.ranges)
	return m, nil
}

func (m *Mover) read(it Item) engine.Operation {
	return engine.Operation{Kind: engine.OpRead, Database: m.database, Container: m.container, ID: it.ID, PartitionKey: it.PartitionKey, E2ETimeout: m.e2e}
}

// client waits until the gateway hands out the successors of the last run's moves, and
// returns a new direct-mode client whose address cache holds the current replica sets:
// a new client's first lookup may get the gateway's cached old set, so every replica
// of the first region is read once, and any that answers 410 is refreshed away before
// the run starts. The replica sets of the other regions are looked up too, so that no
// hedge pays for a lookup.
func (m *Mover) client(ctx context.Context, noHealth bool) (*engine.Client, error) {
	if wait := time.Until(m.settled.Add(settleMargin)); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	c := m.base.DeriveDirect(m.preferred, retries.DefaultPolicy(), noHealth)
	acct, err := c.Account(ctx)
	if err != nil {
		c.Close()
		return nil, err
	}
	const rounds = 5
	for range rounds {
		stale := false
		for _, r := range m.ranges {
			op := m.probes[r]
			_, set, err := c.ReplicaSet(ctx, op, m.region)
			if err != nil {
				c.Close()
				return nil, err
			}
			for _, rep := range set {
				if res, _ := c.ReadReplica(ctx, op, m.region, rep.URL); res.StatusCode == 410 || !res.InReplicaSet {
					stale = true
				}
			}
		}
		if !stale {
			break
		}
		c.AddressCache().Wait()
	}
	for _, region := range acct.ReadRegions() {
		for _, r := range m.ranges {
			_, _, _ = c.ReplicaSet(ctx, m.probes[r], region)
		}
	}
	return c, nil
}

// move moves the next secondary of every range and arms the window with the moved
// replicas; it returns their fault-rule names, whose requests the emulator counts.
func (m *Mover) move(window *MoveWindow) ([]string, error) {
	var addrs, names []string
	var from, until time.Time
	for _, mv := range emulator.ScenarioReplicaMoves(m.region, m.database, m.container, m.ranges, m.next) {
		st, err := m.srv.MoveReplica(mv)
		if err != nil {
			return nil, err
		}
		addrs, names = append(addrs, st.OldAddress), append(names, st.OldReplica)
		if from.IsZero() || st.GoneAt.Before(from) {
			from = st.GoneAt
		}
		if until.IsZero() || st.RefreshAt.Before(until) {
			until = st.RefreshAt
		}
		if st.RefreshAt.After(m.settled) {
			m.settled = st.RefreshAt
		}
	}
	m.next = m.next%(m.size-1) + 1
	window.Moved(addrs, from, until)
	return names, nil
}

// received sums the emulator's request counts of the named replicas.
// counts is every replica's request count, by name.
func (m *Mover) counts() map[string]int64 {
	out := map[string]int64{}
	for _, set := range m.srv.Replicas() {
		for _, r := range set.Replicas {
			out[r.Name] = r.Requests
		}
	}
	return out
}

func (m *Mover) received(names []string) int64 {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var n int64
	for _, set := range m.srv.Replicas() {
		for _, r := range set.Replicas {
			if want[r.Name] {
				n += r.Requests
			}
		}
	}
	return n
}

// RunReplicaMove runs every strategy twice through a replica move: health-aware, then
// without replica health (named with NoReplicaHealthSuffix). progress, if set, gives
// each run's Workload.Progress by its strategy's name; ended, if set, is called after
// each run.
func (m *Mover) RunReplicaMove(ctx context.Context, w Workload, specs []Spec, progress func(name string) func(done int), ended func()) ([]Result, *MoveSection, error) {
	var results []Result
	var runs []moveRun
	for _, spec := range specs {
		for _, noHealth := range []bool{false, true} {
			name := spec.Name
			if noHealth {
				name += NoReplicaHealthSuffix
			}
			client, err := m.client(ctx, noHealth)
			if err != nil {
				return nil, nil, err
			}
			window := &MoveWindow{HealthAware: !noHealth}
			var names []string
			var before int64
			var moveErr error
			rw := w
			rw.Client, rw.Observe = client, window.Observe
			rw.DisruptAfter = int(float64(w.Count) * MoveAt)
			rw.Disrupt = func() {
				// The counts are taken before the move: a request that meets the moved
				// replica is counted after the move is in place, while reads in flight
				// go on; counted after the move, some of those would be missed, and
				// the emulator would seem to have seen fewer 410s than the client.
				counts := m.counts()
				if names, moveErr = m.move(window); moveErr == nil {
					for _, n := range names {
						before += counts[n]
					}
				}
			}
			if progress != nil {
				rw.Progress = progress(name)
			}
			spec := spec
			spec.Name = name
			r, err := Run(ctx, rw, spec)
			end := time.Now()
			if ended != nil {
				ended()
			}
			client.Close()
			if err == nil {
				err = moveErr
			}
			if err != nil {
				return nil, nil, err
			}
			results = append(results, r)
			runs = append(runs, moveRun{Strategy: spec.Name, HealthAware: !noHealth, Report: window.Report(end), Received: m.received(names) - before})
		}
	}
	return results, m.section(runs), nil
}

// MoveSection is the replica-move measurement of every run, the replica_move section of
// hedge-test's JSON report: its field names are an API, with units in the names.
type MoveSection struct {
	Region         string     `json:"region"`
	MovedPerRun    int        `json:"moved_replicas_per_run"` // one secondary per partition key range
	MoveAtPct      float64    `json:"move_at_pct"`            // of each run's reads
	RefreshDelayMs float64    `json:"refresh_delay_ms"`
	Runs           []MoveRun  `json:"runs"`
	HealthAware    MoveTotals `json:"health_aware"`
	WithoutHealth  MoveTotals `json:"without_health"`
}

// MoveRun is one run's window: the reads sent from the move until the gateway handed
// out the successors (or the run ended), and the requests to moved replicas.
type MoveRun struct {
	Strategy         string  `json:"strategy"`
	ReplicaHealth    bool    `json:"replica_health"`
	WindowMs         float64 `json:"window_ms"`
	ReadsInWindow    int     `json:"reads_in_window"`
	AfterFirst410    int     `json:"sent_to_moved_after_first_410"`
	AfterFirst410Pct float64 `json:"sent_to_moved_after_first_410_pct"` // of the reads in the window
	// InFlight: requests a health-aware client had routed to the replica just before
	// its first 410 arrived, sent just after.
	InFlight int `json:"in_flight_at_first_410"`
	// GoneAnswers is the 410s the client got from moved replicas; MovedReplicaRequests
	// what the emulator counted on them from the move on.
	GoneAnswers          int     `json:"gone_answers"`
	MovedReplicaRequests int64   `json:"moved_replica_requests"`
	P50Ms                float64 `json:"p50_ms"`
	P99Ms                float64 `json:"p99_ms"`
	MaxMs                float64 `json:"max_ms"`
}

// MoveTotals adds up the runs with or without replica health.
type MoveTotals struct {
	Reads            int     `json:"reads_in_window"`
	AfterFirst410    int     `json:"sent_to_moved_after_first_410"`
	AfterFirst410Pct float64 `json:"sent_to_moved_after_first_410_pct"`
	InFlight         int     `json:"in_flight_at_first_410"`
	P99Ms            float64 `json:"p99_ms"`
}

// section builds the section from the runs.
func (m *Mover) section(runs []moveRun) *MoveSection {
	sec := &MoveSection{Region: m.region, MovedPerRun: len(m.ranges), MoveAtPct: 100 * MoveAt,
		RefreshDelayMs: msOf(emulator.DefaultMoveRefreshDelay), Runs: []MoveRun{}}
	for _, r := range runs {
		q := r.Report.Stats.Quantile
		sec.Runs = append(sec.Runs, MoveRun{
			Strategy: r.Strategy, ReplicaHealth: r.HealthAware, WindowMs: msOf(r.Report.Window), ReadsInWindow: r.Report.Reads,
			AfterFirst410: r.Report.AfterFirst410, AfterFirst410Pct: r.Report.AfterFirst410Pct(), InFlight: r.Report.InFlight,
			GoneAnswers: r.Report.Gone, MovedReplicaRequests: r.Received,
			P50Ms: msOf(q(0.5)), P99Ms: msOf(q(0.99)), MaxMs: msOf(q(1)),
		})
	}
	sec.HealthAware, sec.WithoutHealth = moveTotals(runs, true), moveTotals(runs, false)
	return sec
}

// moveTotals adds up the runs of one kind.
func moveTotals(runs []moveRun, healthAware bool) MoveTotals {
	st := workload.NewStats()
	var t MoveTotals
	for _, r := range runs {
		if r.HealthAware != healthAware {
			continue
		}
		t.Reads += r.Report.Reads
		t.AfterFirst410 += r.Report.AfterFirst410
		t.InFlight += r.Report.InFlight
		st.Merge(r.Report.Stats)
	}
	if t.Reads > 0 {
		t.AfterFirst410Pct = 100 * float64(t.AfterFirst410) / float64(t.Reads)
	}
	t.P99Ms = msOf(st.Quantile(0.99))
	return t
}

func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
