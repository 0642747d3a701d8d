package engine

import (
	"context"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/hedging"
)

// hedgeStrategy returns the strategy to run the operation with (nil: no hedging) and,
// for a per-operation strategy such as the adaptive one, its plan; it records the
// decision in the diagnostics. Reads are hedged when a strategy is set and more than one
// region is effective. A write is hedged only on a multi-write account with write
// retries on: a hedged write is a retry sent before the first answer, safe only where
// every region takes writes and the retry policy can tell its own success.
func (c *Client) hedgeStrategy(rec *recorder, op *Operation, acct *cosmos.Account, plan regionPlan) (hedging.Strategy, hedging.Plan) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if op.Hedge == nil {
		rec.d.HedgeConfig = "off"
		return nil, nil
	}
	switch {
	case op.Kind.IsWrite() && (!acct.EnableMultipleWriteLocations || !op.WriteRetries.Enabled()):
		rec.d.HedgeConfig = "off: writes are hedged only on multi-write accounts with write retries on"
		return nil, nil
	case len(plan.targets) < 2:
		rec.d.HedgeConfig = op.Hedge.String() + " (one effective region: nothing to hedge to)"
		return nil, nil
	}
	if p, ok := op.Hedge.(hedging.Planner); ok {
		pl := p.Begin(string(op.Kind))
		rec.d.HedgeConfig = pl.String()
		return pl, pl
	}
	rec.d.HedgeConfig = op.Hedge.String()
	return op.Hedge, nil
}

// runHedged races arms across the effective regions: the first arm in the first region
// (it may fail over), each hedge arm pinned to the next region, as the strategy
// schedules them. The first final answer wins; the others are cancelled. Without a final
// answer the first arm's outcome is the operation's.
func (c *Client) runHedged(ctx context.Context, rec *recorder, op *Operation, acct *cosmos.Account, plan regionPlan, s hedging.Strategy, pl hedging.Plan) armResult {
	n := s.Arms(len(plan.targets))
	results := make([]armResult, n)
	var mu sync.Mutex
	// A region is claimed by the arm that goes there: the first arm claims the first
	// region and each region it fails over to; a hedge arm takes the next region nobody
	// has claimed. So a failover and a hedge never ask the same region, and a hedge that
	// is refused (a budget) or not yet due never holds back the first arm's failover.
	claimed := make([]bool, len(plan.targets))
	claimed[0] = true
	claim := func(idx int) bool {
		mu.Lock()
		defer mu.Unlock()
		if claimed[idx] {
			return false
		}
		claimed[idx] = true
		return true
	}
	free := func(idx int) bool {
		mu.Lock()
		defer mu.Unlock()
		return !claimed[idx]
	}
	race := hedging.Race{Clock: c.clock, Strategy: s, Arms: n, Run: func(actx context.Context, i int, transient func()) bool {
		a := arm{pinned: -1, reason: ReasonInitial, transient: transient, claim: claim, free: free}
		if i > 0 {
			idx := -1
			for j := 1; j < len(plan.targets); j++ {
				if claim(j) {
					idx = j
					break
				}
			}
			if idx < 0 {
				mu.Lock()
				results[i] = armResult{last: -1}
				mu.Unlock()
				return false
			}
			a = arm{pinned: idx, reason: ReasonHedge, transient: transient}
		}
		r := c.runArm(actx, rec, op, acct, plan, a)
		mu.Lock()
		results[i] = r
		mu.Unlock()
		return r.final
	}}
	if pl != nil {
		race.Admit = func(arm int) bool {
			ok := pl.Admit(arm)
			region := "the next region"
			if arm < len(plan.targets) {
				region = plan.targets[arm].Name
			}
			if ok {
				rec.note("budget allowed the hedge to " + region)
				return true
			}
			rec.note("budget exhausted: no hedge to " + region)
			return false
		}
	}
	out := race.Do(ctx)
	if pl != nil {
		pl.Done(firstLatency(rec))
	}

	mu.Lock()
	defer mu.Unlock()
	for i, r := range results {
		if r.last < 0 || i == out.Winner {
			continue
		}
		if r.resp != nil && r.final {
			rec.setOutcome(r.last, OutcomeLost, "answered after "+winnerRegion(rec, results, out.Winner))
		}
	}
	if out.Winner >= 0 {
		w := results[out.Winner]
		rec.setOutcome(w.last, OutcomeWon, "")
		if out.Winner > 0 && firstBeaten(rec, plan.targets[0].Name) {
			c.recordHedgeLoss(op, plan.targets[0].Name, winnerRegion(rec, results, out.Winner))
		}
		return w
	}
	return results[0]
}

func winnerRegion(rec *recorder, results []armResult, winner int) string {
	if winner < 0 || results[winner].last < 0 {
		return "another region"
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.d.Attempts[results[winner].last].Region
}

// firstLatency is the first attempt's latency, and whether it answered (a cancelled or
// failed attempt's duration is only a lower bound of the region's latency).
func firstLatency(rec *recorder) (time.Duration, bool) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.d.Attempts) == 0 {
		return 0, false
	}
	a := rec.d.Attempts[0]
	return a.Duration, a.done && a.StatusCode != 0 && a.Outcome != OutcomeCancelled
}

// firstBeaten reports whether the operation's first attempt, to its first region, was
// still waiting when another region's answer won: a hedge loss for that region (a first
// region that answered with an error has that failure recorded instead).
func firstBeaten(rec *recorder, first string) bool {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.d.Attempts) == 0 {
		return false
	}
	a := rec.d.Attempts[0]
	return a.Region == first && (a.Outcome == OutcomeCancelled || a.Outcome == OutcomeLost || a.Outcome == OutcomeInFlight)
}
