package engine

import (
	"context"
	"errors"
	"strings"

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
// region this operation may try again in its usual place, to decide its recovery.
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
	if o.Probe.Granted() {
		rec.note("region health: " + o.Probe.Note())
	}
	if len(o.Unavailable) == 0 || o.AllUnavailable || sameOrder(o.Regions, names) {
		return plan, o.Probe
	}
	reordered := plan
	reordered.targets = make([]cosmos.Location, 0, len(plan.targets))
	for _, name := range o.Regions {
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
	return reordered, o.Probe
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
