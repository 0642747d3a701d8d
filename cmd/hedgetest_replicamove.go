package cmd

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/hedgetest"
	"github.com/cosmosctl/cosmosctl/output"
	"github.com/cosmosctl/cosmosctl/retries"
	"github.com/cosmosctl/cosmosctl/workload"
)

// The replica-move scenario of hedge-test: reads go direct to the replicas, and in each
// run a secondary replica of every partition key range the items live in, in the first
// region, moves (answers 410) a little into the run, while the gateway keeps handing out
// the old addresses for 2 s. Each strategy runs twice, with a health-aware client and
// with one that ignores replica health (for comparison only), and the runs report how
// many requests still went to a moved replica once it had answered 410, and the tail
// latency of the reads sent during that window.

// noReplicaHealthSuffix names the comparison runs in the strategies table.
const noReplicaHealthSuffix = " (no replica health)"

// moveAt is how far into a run the replicas move: early enough that most of the run is
// in the window, late enough that the run starts on a healthy set.
const moveAt = 0.1

// settleMargin is waited beyond the gateway's refresh delay before the next run, so
// that a force refresh surely hands out the successors.
const settleMargin = 20 * time.Millisecond

// replicaMoveRun is one run's replica-move measurement.
type replicaMoveRun struct {
	Strategy    string
	HealthAware bool
	Report      hedgetest.MoveReport
	// Received is what the emulator counted: the requests the moved replicas received
	// from the move to the end of the run, in flight and retried ones included.
	Received int64
}

// replicaMover makes the moves of each run and prepares each run's client.
type replicaMover struct {
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

func newReplicaMover(ctx context.Context, sess *session, items []hedgetest.Item, e2e time.Duration) (*replicaMover, error) {
	m := &replicaMover{srv: sess.embedded, base: sess.client, region: sess.embedded.Regions()[0].Name,
		database: sess.settings.Database, container: sess.settings.Container, preferred: sess.settings.PreferredRegions,
		e2e: e2e, probes: map[string]engine.Operation{}, next: 1}
	c := m.base.DeriveDirect(m.preferred, retries.Policy{}, false)
	defer c.Close()
	for _, it := range items {
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

func (m *replicaMover) read(it hedgetest.Item) engine.Operation {
	return engine.Operation{Kind: engine.OpRead, Database: m.database, Container: m.container, ID: it.ID, PartitionKey: it.PartitionKey, E2ETimeout: m.e2e}
}

// client waits until the gateway hands out the successors of the last run's moves, and
// returns a new direct-mode client whose address cache holds the current replica sets:
// a new client's first lookup may get the gateway's cached old set, so every replica
// of the first region is read once, and any that answers 410 is refreshed away before
// the run starts. The replica sets of the other regions are looked up too, so that no
// hedge pays for a lookup.
func (m *replicaMover) client(ctx context.Context, noHealth bool) (*engine.Client, error) {
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
func (m *replicaMover) move(window *hedgetest.MoveWindow) ([]string, error) {
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
func (m *replicaMover) received(names []string) int64 {
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

// runReplicaMove runs every strategy twice through a replica move: health-aware, then
// without replica health.
func (o *hedgeTestOptions) runReplicaMove(ctx context.Context, io *IOStreams, sess *session, w hedgetest.Workload, specs []hedgetest.Spec) ([]hedgetest.Result, *hedgeTestReplicaMove, error) {
	m, err := newReplicaMover(ctx, sess, w.Items, w.E2ETimeout)
	if err != nil {
		return nil, nil, asUsage(err)
	}
	var results []hedgetest.Result
	var runs []replicaMoveRun
	for _, spec := range specs {
		for _, noHealth := range []bool{false, true} {
			name := spec.Name
			if noHealth {
				name += noReplicaHealthSuffix
			}
			client, err := m.client(ctx, noHealth)
			if err != nil {
				return nil, nil, err
			}
			window := &hedgetest.MoveWindow{HealthAware: !noHealth}
			var names []string
			var before int64
			var moveErr error
			rw := w
			rw.Client, rw.Observe = client, window.Observe
			rw.DisruptAfter = int(float64(o.count) * moveAt)
			rw.Disrupt = func() {
				if names, moveErr = m.move(window); moveErr == nil {
					before = m.received(names)
				}
			}
			rw.Progress = o.progress(io, name)
			spec := spec
			spec.Name = name
			r, err := hedgetest.Run(ctx, rw, spec)
			end := time.Now()
			if io.ErrTTY {
				fmt.Fprint(io.ErrOut, "\r\033[K")
			}
			client.Close()
			if err == nil {
				err = moveErr
			}
			if err != nil {
				return nil, nil, asUsage(err)
			}
			results = append(results, r)
			runs = append(runs, replicaMoveRun{Strategy: spec.Name, HealthAware: !noHealth, Report: window.Report(end), Received: m.received(names) - before})
		}
	}
	return results, m.section(runs), nil
}

// replicaMoveTotals adds up the runs of one kind.
func replicaMoveTotals(runs []replicaMoveRun, healthAware bool) hedgeTestMoveTotals {
	st := workload.NewStats()
	var t hedgeTestMoveTotals
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

// writeReplicaMove writes the replica-move section after the strategies table.
func (o *hedgeTestOptions) writeReplicaMove(w io.Writer, st output.Styles, move *hedgeTestReplicaMove) error {
	fmt.Fprintf(w, "\nreplica move: in %s a secondary replica of each of the %d partition key range(s) the items live in answers 410 from %.0f%% into each run; the gateway hands out its successor %s later\n",
		move.Region, move.MovedPerRun, 100*moveAt, time.Duration(move.RefreshDelayMs)*time.Millisecond)
	t := output.NewTable(w, st, "STRATEGY", "REPLICA HEALTH", "READS IN WINDOW", "SENT TO A MOVED REPLICA AFTER ITS 410", "P50", "P99", "MAX")
	t.AlignRight(2, 4, 5, 6)
	for _, r := range move.Runs {
		health := "off"
		if r.ReplicaHealth {
			health = "on"
		}
		t.Append(r.Strategy, health, fmt.Sprint(r.ReadsInWindow), afterText(r.AfterFirst410, r.AfterFirst410Pct, r.InFlight),
			output.HumanDuration(msDur(r.P50Ms)), output.HumanDuration(msDur(r.P99Ms)), output.HumanDuration(msDur(r.MaxMs)))
	}
	if err := t.Render(); err != nil {
		return err
	}
	on, off := move.HealthAware, move.WithoutHealth
	_, err := fmt.Fprintf(w, "reads sent to the moved replica after its first 410: health-aware %d of %d (%.1f%%), without health %d of %d (%.1f%%); p99 during the window %s vs %s\n",
		on.AfterFirst410, on.Reads, on.AfterFirst410Pct, off.AfterFirst410, off.Reads, off.AfterFirst410Pct,
		output.HumanDuration(msDur(on.P99Ms)), output.HumanDuration(msDur(off.P99Ms)))
	return err
}

func afterText(n int, pct float64, inFlight int) string {
	s := fmt.Sprintf("%d (%.1f%%)", n, pct)
	if inFlight > 0 {
		s = fmt.Sprintf("%d (%.1f%%, %d already in flight)", n, pct, inFlight)
	}
	return s
}

func msDur(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// hedgeTestReplicaMove is the replica_move section of -o json.
type hedgeTestReplicaMove struct {
	Region         string              `json:"region"`
	MovedPerRun    int                 `json:"moved_replicas_per_run"` // one secondary per partition key range
	MoveAtPct      float64             `json:"move_at_pct"`            // of each run's reads
	RefreshDelayMs float64             `json:"refresh_delay_ms"`
	Runs           []hedgeTestMoveRun  `json:"runs"`
	HealthAware    hedgeTestMoveTotals `json:"health_aware"`
	WithoutHealth  hedgeTestMoveTotals `json:"without_health"`
}

// hedgeTestMoveRun is one run's window: the reads sent from the move until the gateway
// handed out the successors (or the run ended), and the requests to moved replicas.
type hedgeTestMoveRun struct {
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

// hedgeTestMoveTotals adds up the runs with or without replica health.
type hedgeTestMoveTotals struct {
	Reads            int     `json:"reads_in_window"`
	AfterFirst410    int     `json:"sent_to_moved_after_first_410"`
	AfterFirst410Pct float64 `json:"sent_to_moved_after_first_410_pct"`
	InFlight         int     `json:"in_flight_at_first_410"`
	P99Ms            float64 `json:"p99_ms"`
}

// replicaMoveSection builds the section from the runs.
func (m *replicaMover) section(runs []replicaMoveRun) *hedgeTestReplicaMove {
	sec := &hedgeTestReplicaMove{Region: m.region, MovedPerRun: len(m.ranges), MoveAtPct: 100 * moveAt,
		RefreshDelayMs: msOf(emulator.DefaultMoveRefreshDelay), Runs: []hedgeTestMoveRun{}}
	for _, r := range runs {
		q := r.Report.Stats.Quantile
		sec.Runs = append(sec.Runs, hedgeTestMoveRun{
			Strategy: r.Strategy, ReplicaHealth: r.HealthAware, WindowMs: msOf(r.Report.Window), ReadsInWindow: r.Report.Reads,
			AfterFirst410: r.Report.AfterFirst410, AfterFirst410Pct: r.Report.AfterFirst410Pct(), InFlight: r.Report.InFlight,
			GoneAnswers: r.Report.Gone, MovedReplicaRequests: r.Received,
			P50Ms: msOf(q(0.5)), P99Ms: msOf(q(0.99)), MaxMs: msOf(q(1)),
		})
	}
	sec.HealthAware, sec.WithoutHealth = replicaMoveTotals(runs, true), replicaMoveTotals(runs, false)
	return sec
}
