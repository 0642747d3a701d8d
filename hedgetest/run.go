package hedgetest

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/health"
	"github.com/cosmosctl/cosmosctl/workload"
)

// Item is one document the workload reads.
type Item struct {
	ID           string
	PartitionKey cosmos.PartitionKey
}

// Workload is what every strategy is run with.
type Workload struct {
	Client    *engine.Client
	Database  string
	Container string
	Items     []Item
	// Op is what each operation of the workload is: a point read (the default), a query
	// page within an item's partition key, or a whole cross-partition query.
	Op          Op
	Count       int           // operations per strategy
	Concurrency int           // workers (closed loop) or the in-flight cap (open loop)
	Rate        float64       // reads per second; 0 = closed loop
	E2ETimeout  time.Duration // per read, or per query page
	// ExcludeRegions are left out of every read (--exclude, --region), as for any read.
	ExcludeRegions []string
	Clock          clock.Clock
	// Progress, if set, is called after each read with the reads done so far.
	Progress func(done int)
	// Observe, if set, is called after each read with what it was and what it got,
	// one read at a time.
	Observe func(Read)
	// Disrupt, if set, is called once when DisruptAfter reads have completed (0: before
	// the first), one read at a time: a scenario's event that must fall inside each run,
	// such as a replica move.
	Disrupt      func()
	DisruptAfter int
}

// Read is one read of a run, as Workload.Observe sees it.
type Read struct {
	// Intended is when the read was due; its latency counts from there.
	Intended time.Time
	// Sent is when it was handed to the engine; its attempts' start offsets count from
	// about there.
	Sent    time.Time
	Latency time.Duration
	Result  *engine.Result
	Err     error
}

// Result is one strategy's run.
type Result struct {
	Strategy string
	Stats    *workload.Stats
	// Latencies are every read's latency, sorted, for the CDF.
	Latencies []time.Duration
	// Reads counts the workload's operations (reads, query pages or queries);
	// Requests the engine operations they took (one each, but a cross-partition query
	// takes its plan and a page from every range), and Attempts the requests on the
	// wire, hedges and retries included.
	Reads    int
	Requests int
	Attempts int // requests sent, cancelled ones included
	Timeouts int
	Failures int // reads that ended in an error other than a timeout
	// RequestCharge is every attempt's RU; WinnerCharge only the answers used.
	RequestCharge float64
	WinnerCharge  float64
	Wins          map[string]int
	Duration      time.Duration
	// Regions are the requests on the wire by region, hedges and retries included: each
	// attempt's client-measured duration, and for the answers that carried it the
	// service's own time and the network's (see RecordAttempts), so that a region that
	// is slow itself is told from one that is slow to reach.
	Regions map[string]*workload.Stats
}

// operations is what extra requests and win shares count against: the engine
// operations, one per read unless a query took more.
func (r Result) operations() int {
	if r.Requests > 0 {
		return r.Requests
	}
	return r.Reads
}

// ExtraRequestsPct is the requests sent beyond one per engine operation (hedges,
// retries, failovers), as a percentage of them.
func (r Result) ExtraRequestsPct() float64 {
	n := r.operations()
	if n == 0 {
		return 0
	}
	return 100 * float64(r.Attempts-n) / float64(n)
}

// ExtraRUPct is the request charge beyond the answers used, as a percentage of it.
func (r Result) ExtraRUPct() float64 {
	if r.WinnerCharge == 0 {
		return 0
	}
	return 100 * (r.RequestCharge - r.WinnerCharge) / r.WinnerCharge
}

// WinShare is each region's share of the operations it answered, in percent.
func (r Result) WinShare() map[string]float64 {
	out := map[string]float64{}
	for region, n := range r.Wins {
		out[region] = 100 * float64(n) / float64(r.operations())
	}
	return out
}

// RecordAttempts adds each attempt to the record of its region: an answer (any
// status) with its client-measured duration and, when it carried the service's own
// time, that and the network's; an attempt whose own timeout expired as a timeout. An
// attempt cancelled because another answered first measured nothing of its region
// but that it had not answered yet, and one still in flight nothing at all: neither
// is recorded.
func RecordAttempts(byRegion map[string]*workload.Stats, attempts []engine.Attempt) {
	for _, a := range attempts {
		if a.Outcome == engine.OutcomeInFlight || a.Outcome == engine.OutcomeCancelled && !a.TimedOut {
			continue
		}
		st := byRegion[a.Region]
		if st == nil {
			st = workload.NewStats()
			byRegion[a.Region] = st
		}
		if a.TimedOut {
			st.RecordTimeout(a.RequestCharge)
			continue
		}
		st.Record(a.Duration, a.StatusCode, a.SubStatus, a.RequestCharge, a.Outcome == engine.OutcomeFailed)
		if t, ok := workload.SplitDuration(a.Duration, a.ServerDuration); ok && a.StatusCode != 0 {
			st.RecordServerTime(t)
		}
	}
}

// Run reads the workload's items Count times under one strategy.
func Run(ctx context.Context, w Workload, spec Spec) (Result, error) {
	res := Result{Strategy: spec.Name, Stats: workload.NewStats(), Wins: map[string]int{}, Regions: map[string]*workload.Stats{}}
	op := engine.Operation{Kind: engine.OpRead, Database: w.Database, Container: w.Container, E2ETimeout: w.E2ETimeout, ExcludeRegions: w.ExcludeRegions}
	if err := w.Op.check(); err != nil {
		return res, err
	}
	if spec.New != nil {
		s, err := spec.New()
		if err != nil {
			return res, err
		}
		op.Hedge = s
	}
	clk := w.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	client := w.Client
	if client.Health() != nil {
		// Each strategy starts from empty region health: what one run learns of a sick
		// region must not make the next look better.
		hs, err := health.New(client.Health().Config(), clk)
		if err != nil {
			return res, err
		}
		client = client.WithHealth(hs)
	}
	var mu sync.Mutex
	var next int
	if w.Disrupt != nil && w.DisruptAfter <= 0 {
		w.Disrupt()
	}
	sched := workload.Schedule{Rate: w.Rate, Concurrency: w.Concurrency, Count: w.Count, Clock: clk}
	start := clk.Now()
	err := sched.Run(ctx, func(ctx context.Context, intended time.Time) {
		mu.Lock()
		item := w.Items[next%len(w.Items)]
		next++
		mu.Unlock()
		sent := clk.Now()
		var out *engine.Result
		var took []*engine.Diagnostics
		var err error
		switch w.Op {
		case OpQueryCross:
			took, err = crossQuery(ctx, client, w, op)
		default:
			out, err = client.Execute(ctx, w.Op.operation(op, item))
			if out != nil {
				took = append(took, out.Diagnostics)
			}
		}
		latency := clk.Now().Sub(intended)
		mu.Lock()
		defer mu.Unlock()
		res.Reads++
		status, sub := 0, 0
		if out != nil {
			status, sub = out.StatusCode, out.SubStatus
		}
		for _, d := range took {
			res.Requests++
			res.Attempts += len(d.Attempts)
			RecordAttempts(res.Regions, d.Attempts)
			res.RequestCharge += d.RequestCharge
			if d.WinningRegion != "" {
				res.Wins[d.WinningRegion]++
				res.WinnerCharge += winnerCharge(d)
			}
		}
		var te *engine.TimeoutError
		switch {
		case errors.As(err, &te):
			res.Timeouts++
		case err != nil:
			res.Failures++
		}
		res.Stats.Record(latency, status, sub, 0, err != nil)
		res.Latencies = append(res.Latencies, latency)
		if w.Observe != nil {
			w.Observe(Read{Intended: intended, Sent: sent, Latency: latency, Result: out, Err: err})
		}
		if w.Disrupt != nil && res.Reads == w.DisruptAfter {
			w.Disrupt()
		}
		if w.Progress != nil {
			w.Progress(res.Reads)
		}
	})
	res.Duration = clk.Now().Sub(start)
	sort.Slice(res.Latencies, func(i, j int) bool { return res.Latencies[i] < res.Latencies[j] })
	return res, err
}
