package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/hedging"
	"github.com/cosmosctl/cosmosctl/metrics"
	"github.com/cosmosctl/cosmosctl/output"
	"github.com/cosmosctl/cosmosctl/retries"
	"github.com/cosmosctl/cosmosctl/workload"
)

const (
	// ItemID is the item probes read unless Options.ID names another; its partition key
	// has the same value at every partition key path of the container.
	ItemID = "cosmosctl-probe"
	// DefaultTimeout bounds each probe request when Options.Timeout is 0, so that a
	// region that hangs shows up as timeouts instead of a probe that never ends.
	DefaultTimeout = 10 * time.Second
	// DefaultTimeLimit bounds the wall clock of a probe given a count and no duration:
	// a hung region answers none of its requests, and a probe of 100 of them, 4 at a
	// time, would otherwise wait out 25 timeouts in a row (2½ minutes at 6 s each).
	// With a rate, the limit is at least the time the count takes at that rate and
	// DefaultTimeLimitMargin (see TimeLimit).
	DefaultTimeLimit       = 30 * time.Second
	DefaultTimeLimitMargin = 10 * time.Second
	// HedgedRow names the probe's stream of hedged reads through the effective regions.
	HedgedRow = "(hedged)"

	// progressAfter is how long a probe runs before it shows progress on stderr: short
	// probes finish before anyone wonders.
	progressAfter = 3 * time.Second
	// replicationWait bounds the wait for a newly created probe item to reach every
	// probed region.
	replicationWait = 5 * time.Second
)

// Options are what a probe does.
type Options struct {
	// Client reaches the account. The probe derives its own clients from it: pinned to
	// one region and never retried.
	Client              *engine.Client
	Database, Container string

	// Regions are the regions to probe as the user named them (nil: every region of the
	// account); RegionsFlag names them in errors ("--regions", "--region").
	Regions     []string
	RegionsFlag string
	// Exclude leaves regions out (the command line's --exclude only: configured
	// exclusions do not apply to a probe, which measures every region).
	Exclude []string

	// AccountOnly sends GET / to each regional endpoint instead of reading an item.
	AccountOnly bool
	// Replicas reads the item from each replica of its partition key range in turn
	// (direct mode), with replica health ordering off if NoReplicaHealth.
	Replicas        bool
	NoReplicaHealth bool
	// ID and PartitionKey name an existing item to read; with ID empty the probe reads
	// its own item, ItemID, and creates it on first use.
	ID           string
	PartitionKey cosmos.PartitionKey
	// Cleanup deletes the probe item at the end when this probe created it (never an
	// item it found, nor the one ID names).
	Cleanup bool

	// Schedule is each region's schedule (its Clock is the probe's). Its Duration bounds
	// the wall clock (see run); with neither a Count nor a Duration the probe runs until
	// ctx ends.
	Schedule workload.Schedule
	// DefaultTimeLimit says the Schedule's Duration is the default time limit of a
	// --count probe (DefaultTimeLimit), not a --duration: when it ends the probe before
	// the count, stderr and the summary's ended_by say so.
	DefaultTimeLimit bool
	// Timeout bounds every probe request; 0 means DefaultTimeout. The set-up's requests
	// get 1s to 2s each (see setUpBounds).
	Timeout time.Duration
	// Watch redraws the table every second while probing, with the last 10 seconds'
	// table under it.
	Watch bool
	// Rules are the --fail-on thresholds, checked against every region's (and
	// replica's) final numbers.
	Rules []workload.Rule

	// Hedge, if set, adds the row HedgedRow: reads through the effective regions
	// (HedgePreferred less HedgeExclude) with this strategy, as an application reads.
	Hedge          hedging.Strategy
	HedgePreferred []string
	HedgeExclude   []string
	// Metrics, if set, observes every request (and every hedged read's diagnostics).
	Metrics *metrics.Probe

	// JSON writes NDJSON (interval lines and a summary) instead of tables.
	JSON  bool
	Style output.Styles
	// Clock defaults to the wall clock.
	Clock clock.Clock
}

// Streams are where the probe writes: stdout carries the table or the JSON only;
// notices, progress and breaches go to ErrOut.
type Streams struct {
	Out, ErrOut    io.Writer
	OutTTY, ErrTTY bool
}

// Result is how a probe that ran ended.
type Result struct {
	// Breaches are the --fail-on thresholds breached, as reported on stderr.
	Breaches []output.ProbeBreach
	// Interrupted: ctx ended before the schedules did; what was measured until then
	// was reported.
	Interrupted bool
}

// UsageError is a probe that cannot run as asked: an unknown region, no region left
// after the exclusions, no container to read.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usageErrorf(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// asUsage reports the engine's input errors as usage errors.
func asUsage(err error) error {
	var ie *engine.InputError
	if errors.As(err, &ie) {
		return &UsageError{Err: err}
	}
	return err
}

// Run probes the regions, showing the live view while it runs, and writes the final
// report. It returns an error only when the probe could not run at all; errors of the
// probe requests are data, in the report.
func Run(ctx context.Context, opts Options, streams Streams) (Result, error) {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	attempt, whole := setUpBounds(timeout)
	// The account lookup is the one request a probe cannot do without (no regions, no
	// probe); bounded, so that a hung global endpoint fails it instead of hanging it.
	actx, cancel := context.WithTimeout(ctx, whole)
	acct, err := opts.Client.Account(actx)
	cancel()
	if err != nil {
		return Result{}, err
	}
	all := acct.ReadRegions()
	regions, err := ChooseRegions(all, opts.Regions, opts.RegionsFlag, opts.Exclude)
	if err != nil {
		return Result{}, err
	}
	// Requests pinned to their region and never retried: a 429 or a 503 is a result to
	// count, not something to hide behind a retry or a failover.
	prober := opts.Client.Derive(nil, retries.Policy{})
	var send sendFunc
	var replicas *replicaProber
	request, probed := "account", output.ProbedEndpoint
	var op engine.Operation
	var target probeTarget
	if opts.AccountOnly {
		send = pingProbe(prober, timeout)
	} else {
		request = "read"
		target, err = probeItem(ctx, streams.ErrOut, opts, regions, all, timeout)
		op, probed = target.op, target.probed()
		if target.created && opts.Cleanup {
			// Deferred: after the report, and on every way out once the item exists.
			defer deleteItem(ctx, streams.ErrOut, opts.Client, op, timeout)
		}
		if err != nil {
			return Result{}, err
		}
		send = readProbe(prober, op, all)
		if opts.Replicas {
			// Its own address cache, so that the health shown is what this probe's
			// requests taught it, whatever the session's connection mode.
			direct := opts.Client.DeriveDirect(nil, retries.Policy{}, opts.NoReplicaHealth)
			defer direct.Close()
			replicas = newReplicaProber(direct, op)
			replicas.resolve(ctx, regions, attempt)
			send = replicas.send
		}
	}

	// With hedging configured, the probe also reads the way an application does:
	// through the effective regions with the strategy, as the row "(hedged)" — what
	// hedging buys right now, and what feeds the hedge metrics.
	if opts.Hedge != nil && !opts.AccountOnly && !opts.Replicas {
		send = withHedgedRow(send, opts, op)
		regions = append(regions, HedgedRow)
	}
	if target.missing {
		// Every row's reads, the replicas' and the hedged ones too.
		send = notFoundAnswers(send)
	}
	if opts.Metrics != nil {
		send = observed(send, opts.Metrics, request, opts.Clock)
	}

	p := &run{streams: streams, opts: opts, regions: regions, send: send, replicas: replicas, clock: opts.Clock, grace: min(maxGrace, timeout), probed: probed}
	interrupted := p.run(ctx)
	if err := p.report(request, interrupted); err != nil {
		return Result{}, err
	}
	return Result{Breaches: p.breached, Interrupted: interrupted}, nil
}

// TimeLimit is the default wall-clock bound of a probe of count requests per region
// (at rate requests a second, 0 for a closed loop): DefaultTimeLimit, or with a rate the
// time the count takes and DefaultTimeLimitMargin, whichever is longer.
func TimeLimit(count int, rate float64) time.Duration {
	limit := DefaultTimeLimit
	if rate > 0 {
		limit = max(limit, time.Duration(float64(count)/rate*float64(time.Second))+DefaultTimeLimitMargin)
	}
	return limit
}

// ChooseRegions returns the regions to probe, in the order given (chosen, named by flag
// in errors) or the account's order (all), less those excluded. Names match case- and
// space-insensitively.
func ChooseRegions(all, chosen []string, flag string, exclude []string) ([]string, error) {
	match := func(flag, name string) (string, error) {
		for _, r := range all {
			if cosmos.SameRegion(r, name) {
				return r, nil
			}
		}
		return "", usageErrorf("%s: %q is not a region of this account; its regions are %s", flag, name, strings.Join(all, ", "))
	}
	var out []string
	if len(chosen) == 0 {
		out = append(out, all...)
	}
	for _, name := range chosen {
		r, err := match(flag, strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	for _, name := range exclude {
		r, err := match("--exclude", strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		out = without(out, r)
	}
	if len(out) == 0 {
		return nil, usageErrorf("no region left to probe after --exclude; the account's regions are %s", strings.Join(all, ", "))
	}
	return out, nil
}

// without returns list less s, in a new slice.
func without(list []string, s string) []string {
	out := list[:0:0]
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}
