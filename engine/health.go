package engine

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/health"
	"github.com/cosmosctl/cosmosctl/retries"
)

// healthKind is the health record an operation reads and feeds: reads and writes are
// kept apart, as a region may take one and not the other.
func healthKind(k OpKind) health.Kind {
	if k.IsWrite() {
		return health.Write
	}
	return health.Read
}

// orderByHealth moves the regions the health store knows to be unavailable to the end
// of the plan (never out of it), and records why. The returned probe is the ticket of a
// region this operation tries in its usual place to decide its recovery: only when no
// other region is available. Otherwise a region whose unavailable period is over is
// moved last like the others and checked by a request of its own, sent beside the
// operation's attempts (op.beside, probeBeside): re-checking a region that may still
// be hung must never delay an operation that a healthy region can answer.
func (c *Client) orderByHealth(rec *recorder, plan regionPlan, op *Operation) (regionPlan, health.Probe) {
	if c.health == nil || len(plan.targets) < 2 {
		return plan, health.Probe{}
	}
	names := plan.effective
	if len(names) != len(plan.targets) {
		names = namesOf(plan.targets)
	}
	o := c.health.Order(names, op.rangeID, healthKind(op.Kind))
	for _, n := range o.Unavailable {
		what := "moved last"
		if o.AllUnavailable {
			what = "every region is unavailable: the usual order stands"
		}
		rec.note("region health: " + n.Text + "; " + what)
	}
	order, inPlace := o.Regions, o.Probe
	if o.Probe.Granted() {
		probed := o.Probe.Region()
		if len(names)-len(o.Unavailable) > 1 {
			// Another region is available: the operation goes there first, and the
			// probed region gets a request of its own beside it.
			order = probedLast(o, names)
			inPlace = health.Probe{}
			op.beside = o.Probe
			for _, l := range plan.targets {
				if l.Name == probed {
					op.besideRegion = l
				}
			}
			rec.note("region health: " + o.Probe.Note() + " by a request of its own, sent beside this operation; moved last")
		} else {
			rec.note("region health: " + o.Probe.Note() + " by this operation, in its usual place: no other region is available")
		}
	}
	if (len(o.Unavailable) == 0 && !op.beside.Granted()) || o.AllUnavailable || sameOrder(order, names) {
		return plan, inPlace
	}
	reordered := plan
	reordered.targets = make([]cosmos.Location, 0, len(plan.targets))
	for _, name := range order {
		for _, l := range plan.targets {
			if l.Name == name {
				reordered.targets = append(reordered.targets, l)
				break
			}
		}
	}
	reordered.effective = namesOf(reordered.targets)
	rec.mu.Lock()
	rec.d.HealthOrder = append([]string(nil), reordered.effective...)
	rec.mu.Unlock()
	return reordered, inPlace
}

// probedLast is the order of o with its probed region moved among the unavailable ones
// at the end: the available regions first, in o's order, then the unavailable ones and
// the probed one in their usual order (names).
func probedLast(o health.Ordering, names []string) []string {
	last := map[string]bool{o.Probe.Region(): true}
	for _, n := range o.Unavailable {
		last[n.Region] = true
	}
	out := make([]string, 0, len(names))
	for _, r := range o.Regions {
		if !last[r] {
			out = append(out, r)
		}
	}
	for _, r := range names {
		if last[r] {
			out = append(out, r)
		}
	}
	return out
}

func sameOrder(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// recordHealth tells the health store what one attempt to region got: a final answer
// is a success; a timeout, no answer, 503, 500, 408 or a gateway's 410 is a failure;
// throttling, 449, 404/1002 and a 410 that only says the partition moved are neither
// (the region is serving). An attempt cut short by the caller or by a hedge that won
// says nothing about the region; one still unanswered when the end-to-end timeout
// expired is a timeout (its timeout was clamped to the end-to-end one).
func (c *Client) recordHealth(ctx context.Context, op *Operation, region string, at sent, direct bool) {
	if c.health == nil || at.skipped {
		return
	}
	if at.resp == nil && ctx.Err() != nil {
		if !errors.Is(context.Cause(ctx), errE2ETimeout) {
			return
		}
		at.expired = true
	}
	if direct && replicaGone(at.resp, at.err) {
		// One replica gone is the address cache's business (replica health): the next
		// attempt tries another replica of the region, and the gateway after them all.
		return
	}
	kind, rangeID := healthKind(op.Kind), op.rangeID
	probe := op.probe.Granted() && op.probe.Region() == region
	if at.resp != nil {
		st, sub := at.resp.StatusCode, at.resp.SubStatus
		if retries.IsFinal(st, sub) {
			c.health.Success(region, rangeID, kind)
			if probe {
				op.probe.Succeeded()
			}
			return
		}
		if retries.IsRoutingGone(st, sub) {
			return // the partition moved: routing's business
		}
		if cause, ok := health.CauseOf(st, sub); ok {
			c.health.Failure(region, rangeID, kind, cause)
			if probe {
				op.probe.Failed()
			}
		}
		return
	}
	var ne *cosmos.NetworkError
	if !errors.As(at.err, &ne) {
		return
	}
	cause := health.Unreachable
	if at.expired {
		cause = health.Timeout
	}
	c.health.Failure(region, rangeID, kind, cause)
	if probe {
		op.probe.Failed()
	}
}

// knownRange is the partition key range that holds op's key in direct mode, which reads
// the container's ranges for routing anyway (once per process): region health is then
// kept per partition key range, as the SDKs' per-partition circuit breaker keeps it, so
// that one sick partition does not move a whole region. Otherwise "" (the region).
func (c *Client) knownRange(ctx context.Context, op *Operation, plan regionPlan) string {
	if c.addr == nil || c.health == nil || op.PartitionKey == nil || op.Kind.viaGateway() {
		return ""
	}
	info, err := c.containerRouting(ctx, op.Database, op.Container, endpointOf(plan.targets[0]))
	if err != nil {
		return ""
	}
	if rng, ok := cosmos.RangeFor(cosmos.EffectivePartitionKey(op.PartitionKey), info.ranges); ok {
		return rng.ID
	}
	return ""
}

// recordHedgeLoss tells the health store that the operation's first region was beaten by
// a hedge to another region: five such losses in a row make it unavailable, so that a
// region that is slow but never fails stops being asked first.
func (c *Client) recordHedgeLoss(op *Operation, first, winner string) {
	if c.health == nil || first == "" || winner == "" || strings.EqualFold(first, winner) {
		return
	}
	c.health.HedgeLost(first, op.rangeID, healthKind(op.Kind))
}

// besideGrace is how long closing a client waits for the probe requests still in flight
// beside operations (probeBeside) before it cuts them. A command prints its answer first;
// a region that has recovered answers its probe about as fast as the region that
// answered the command, and one that has not must not hold the process: its probe is
// cut, and counts as a failed probe (the region stays unavailable for a doubled period).
const besideGrace = 250 * time.Millisecond

// besideProbes are the probe requests in flight beside operations. Clients derived from
// one another share them; the client that made them settles them when it closes.
type besideProbes struct {
	wg     sync.WaitGroup
	n      atomic.Int64
	ctx    context.Context
	cancel context.CancelCauseFunc
}

func newBesideProbes() *besideProbes {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &besideProbes{ctx: ctx, cancel: cancel}
}

// errClientClosed is the cause of a probe request cut because its client closed.
var errClientClosed = errors.New("the command ended before the probe was answered")

// probeBeside checks the region of op.beside, an unavailable region whose period is
// over, with a request of its own sent beside the operation, which goes to the
// available regions first and never waits for it. The SDKs' per-partition circuit
// breakers send one real request to such a region as the probe (in its usual place, so
// that request waits out a region still hung); cosmosctl sends a copy of a read (for a
// write, a read of its item: a write is never sent twice) at the cost of one extra
// request. Its answer settles the probe ticket and is recorded as any attempt's is: a
// final answer makes the region available again; a failure or no answer within its
// attempt timeout keeps it unavailable for a doubled period; a 429 or 449 says nothing.
func (c *Client) probeBeside(op *Operation, multiWrite bool) {
	ticket, loc := op.beside, op.besideRegion
	op.beside = health.Probe{}
	if loc.Name == "" {
		ticket.Abandoned()
		return
	}
	req, class := op.request(multiWrite), op.Kind.class()
	if op.Kind.IsWrite() {
		req = &cosmos.Request{Method: http.MethodGet, Path: cosmos.ItemPath(op.Database, op.Container, op.ID), Header: http.Header{}}
		req.Header.Set(cosmos.HeaderPartitionKey, op.PartitionKey.JSON())
		class = ClassPoint
	}
	kind, rangeID := healthKind(op.Kind), op.rangeID
	side := c.beside
	side.wg.Add(1)
	side.n.Add(1)
	go func() {
		defer side.wg.Done()
		defer side.n.Add(-1)
		at := c.send(side.ctx, class, 0, endpointOf(loc), req)
		switch cause, verdict := besideVerdict(at, side.ctx); verdict {
		case probeSucceeded:
			c.health.Success(loc.Name, rangeID, kind)
			ticket.Succeeded()
		case probeFailed:
			if cause != 0 {
				c.health.Failure(loc.Name, rangeID, kind, cause)
			}
			ticket.Failed()
		default:
			ticket.Abandoned()
		}
	}()
}

type probeVerdict int

const (
	probeNoVerdict probeVerdict = iota
	probeSucceeded
	probeFailed
)

// besideVerdict is what a probe request beside an operation says of its region, and the
// failure to record (0: none; a probe cut because the command ended is a failed probe,
// not a failure of the region's own).
func besideVerdict(at sent, ctx context.Context) (health.Cause, probeVerdict) {
	if at.resp != nil {
		st, sub := at.resp.StatusCode, at.resp.SubStatus
		if retries.IsFinal(st, sub) {
			return 0, probeSucceeded
		}
		if cause, ok := health.CauseOf(st, sub); ok && !retries.IsRoutingGone(st, sub) {
			return cause, probeFailed
		}
		return 0, probeNoVerdict
	}
	switch {
	case errors.Is(context.Cause(ctx), errClientClosed):
		return 0, probeFailed
	case at.expired:
		return health.Timeout, probeFailed
	}
	var ne *cosmos.NetworkError
	if errors.As(at.err, &ne) {
		return health.Unreachable, probeFailed
	}
	return 0, probeNoVerdict
}

// settle waits up to besideGrace (on clk) for the probes in flight, then cuts those still
// waiting, and returns when every one has settled its ticket.
func (b *besideProbes) settle(clk clock.Clock) {
	if b.n.Load() > 0 {
		done := make(chan struct{})
		go func() {
			b.wg.Wait()
			close(done)
		}()
		t := clk.NewTimer(besideGrace)
		select {
		case <-done:
		case <-t.C():
		}
		t.Stop()
	}
	b.cancel(errClientClosed)
	b.wg.Wait()
}
