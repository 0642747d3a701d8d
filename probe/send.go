package probe

import (
	"context"
	"errors"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/metrics"
	"github.com/cosmosctl/cosmosctl/retries"
	"github.com/cosmosctl/cosmosctl/workload"
)

// outcome is what one probe request got.
type outcome struct {
	status, substatus int
	charge            float64
	failed            bool
	// timedOut: no answer in time (its end-to-end or attempt timeout expired, or the
	// probe's deadline cut it): a timeout, never a network error, and no latency.
	timedOut bool
	// replica is the address the request went to with --replicas, "" when it could not
	// be sent to one (the replica set could not be resolved).
	replica string
	// serverTimes are the attempts that answered with the service's own time, each
	// split into that and the network (see workload.ServerTime).
	serverTimes []workload.ServerTime
}

// timeoutOutcome is a request that got no answer in time, as the Java SDK and cosmosctl
// read report it: 408/20008.
var timeoutOutcome = outcome{status: 408, substatus: cosmos.SubClientE2ETimeout, failed: true, timedOut: true}

// sendFunc sends one probe request to a region.
type sendFunc func(ctx context.Context, region string) outcome

// readProbe reads the item of op in one region, every other region excluded.
func readProbe(client *engine.Client, op engine.Operation, all []string) sendFunc {
	others := map[string][]string{}
	for _, r := range all {
		others[r] = without(all, r)
	}
	return func(ctx context.Context, region string) outcome {
		op := op
		op.ExcludeRegions = others[region]
		return readOutcome(client.Execute(ctx, op))
	}
}

// readOutcome is what a probe read got: its status (a timeout for the end-to-end or
// the attempt timeout, 0 for no answer) and the request charge of every attempt.
func readOutcome(res *engine.Result, err error) outcome {
	out := outcome{}
	var times []workload.ServerTime
	if res != nil && res.Diagnostics != nil {
		out.charge = res.Diagnostics.RequestCharge
		times = serverTimes(res.Diagnostics.Attempts)
	}
	var te *engine.TimeoutError
	switch {
	case err == nil:
		out.status, out.substatus = res.StatusCode, res.SubStatus
	case errors.As(err, &te) || engine.IsAttemptTimeout(err):
		charge := out.charge
		out = timeoutOutcome
		out.charge = charge
	default:
		out.status, out.substatus, _ = cosmos.Status(err)
		out.failed = true
	}
	out.serverTimes = times
	return out
}

// serverTimes are the attempts that got an answer carrying the service's own time,
// split into it and the network. An answer without one (the Linux vNext emulator's)
// adds nothing, so that its region's server and network figures stay null rather than
// invented.
func serverTimes(attempts []engine.Attempt) []workload.ServerTime {
	var out []workload.ServerTime
	for _, a := range attempts {
		if a.StatusCode == 0 || a.Outcome == engine.OutcomeInFlight {
			continue
		}
		if t, ok := workload.SplitDuration(a.Duration, a.ServerDuration); ok {
			out = append(out, t)
		}
	}
	return out
}

// notFoundAnswers counts a 404/0 (not found) as the answer it is, not as an error: the
// probe of an item that could be neither found nor created. A 404 with a substatus
// (1002: this replica is behind; 1003: the owner resource is gone) is no such answer.
func notFoundAnswers(send sendFunc) sendFunc {
	return func(ctx context.Context, region string) outcome {
		out := send(ctx, region)
		if out.failed && !out.timedOut && out.status == 404 && out.substatus == 0 {
			out.failed = false
		}
		return out
	}
}

// pingProbe sends GET / to a region's own endpoint.
func pingProbe(client *engine.Client, timeout time.Duration) sendFunc {
	return func(ctx context.Context, region string) outcome {
		pctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		resp, err := client.Ping(pctx, region)
		out := outcome{failed: err != nil}
		if resp != nil {
			out.status, out.substatus, out.charge = resp.StatusCode, resp.SubStatus, resp.RequestCharge
		}
		if err != nil && resp == nil && ctx.Err() == nil && (errors.Is(pctx.Err(), context.DeadlineExceeded) || engine.IsAttemptTimeout(err)) {
			out = timeoutOutcome
		}
		return out
	}
}

// withHedgedRow adds the row HedgedRow to send: op read through the effective regions
// with the hedging strategy, observed by the metrics if any.
func withHedgedRow(pinned sendFunc, opts Options, op engine.Operation) sendFunc {
	op.Hedge, op.ExcludeRegions = opts.Hedge, opts.HedgeExclude
	hedged := opts.Client.Derive(opts.HedgePreferred, retries.Policy{})
	return func(ctx context.Context, region string) outcome {
		if region != HedgedRow {
			return pinned(ctx, region)
		}
		res, err := hedged.Execute(ctx, op)
		if opts.Metrics != nil && res != nil {
			opts.Metrics.ObserveOperation(res.Diagnostics)
		}
		return readOutcome(res, err)
	}
}

// observed has the metrics observe every request send makes.
func observed(send sendFunc, m *metrics.Probe, request string, clk clock.Clock) sendFunc {
	return func(ctx context.Context, region string) outcome {
		start := clk.Now()
		out := send(ctx, region)
		m.ObserveRequest(region, request, clk.Now().Sub(start), out.status, out.substatus, out.failed)
		for _, st := range out.serverTimes {
			m.ObserveServerTime(region, request, st.Server, st.Network)
		}
		return out
	}
}
