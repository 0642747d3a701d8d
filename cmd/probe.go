package cmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/hedging"
	"github.com/cosmosctl/cosmosctl/metrics"
	"github.com/cosmosctl/cosmosctl/probe"
	"github.com/cosmosctl/cosmosctl/workload"
)

// probeOptions are the flags of `cosmosctl probe`.
type probeOptions struct {
	conn        connFlags
	regions     []string
	id, pk      string
	accountOnly bool
	replicas    bool
	cleanup     bool
	count       int
	duration    time.Duration
	rate        float64
	concurrency int
	watch       bool
	failOn      []string
	metricsAddr string

	// Set by validate.
	rules    []workload.Rule
	schedule workload.Schedule
	// defaultTimeLimit: the schedule's duration is probe.TimeLimit, not --duration.
	defaultTimeLimit bool
	partitionKey     cosmos.PartitionKey
}

func newProbeCmd(io *IOStreams) *cobra.Command {
	o := &probeOptions{}
	c := &cobra.Command{
		Use:   "probe",
		Short: "Measure latency and errors per region: percentiles, live view, JSON stream, threshold exit codes",
		Long: `Send point reads of a probe item to every region of the account, each request
pinned to its region and never retried, and report per region the number of
requests, the errors by status, the p50, p90, p99, p99.9 and maximum latency, and
the request charge. --account-only sends GET / to each regional endpoint instead,
which needs no container and costs no RU.

--replicas reads the probe item from the replicas themselves (direct mode, whatever
the connection mode) and reports, after the region table, one row per replica of
the item's partition key range in each probed region: its address, role (primary or
secondary), its health in the address cache after its last answer (unknown,
connected, unhealthy-pending, unhealthy), and its own requests, errors,
percentiles and request charge. Each region's requests cycle through its replica
set, so every replica gets about --count divided by the set's size. A replica that
answers 410 or drops the connection is marked unhealthy, as routing would mark it;
once an address refresh replaces it, it is shown as removed and probed no more.
--no-replica-health probes with health ordering off, for comparison.

The probe item has id "cosmosctl-probe" and the same value at the container's
partition key path(s). When it does not exist the probe creates it (an upsert,
about 5 RU) with "ttl": 3600 (an hour; longer than a --duration, or --count at a
--rate, that may run longer; none for a --watch until interrupted) and deletes it
when the probe ends, on Ctrl-C too (--cleanup, on by default; --cleanup=false
keeps it for the next probe). The ttl takes effect only where the container has
time to live enabled (a default TTL, -1 included): elsewhere it is ignored, and
an item a killed probe left behind stays until deleted. The deletion is one
request through the write region, bounded by the timeout (at most 2s); if it
fails a notice on stderr says so and the exit code is the probe's. A probe item
that was already there is read and left as it was, and so is an item named by
--id and --pk: they write nothing. A sick region does not stop the
probe: the item is looked for region by region (the next one is asked as soon
as one fails or is slow to answer) and created through the write region, each
of these requests bounded by the timeout (within 1s to 2s). If it can be neither
found nor created (the write region is down and the item was never made), the
probe reads the missing item: a read goes to the partition's replicas like any
point read, and a 404/0 (not found) is the region's answer, counted as one and
not as an error, so the regions that serve reads show their latency and only
the sick ones breach --fail-on; a 404 with a substatus (1002, 1003 …) is still
an error. A notice on stderr says why, a note under the table says what was
probed, and the JSON summary has "probed": "missing_item" (else "item", or
"endpoint" with --account-only).

Each region gets --concurrency workers. With --rate the probe is an open loop:
requests are due at a fixed rate per region, and latency is measured from when a
request was due, not from when a worker was free to send it (no coordinated
omission: a stall of the service shows in the percentiles of every request it
delayed, as wrk2 and vegeta measure). Requests due while every worker is busy are
sent late, or, when the probe ends first, never: those are reported ("behind" in
each second's record, "not_sent" in the summary, a note under the table).
Without --rate each worker sends its next request as soon as the last one
answered. Every request, a failed one included, is bounded by --e2e-timeout
(default 10s for probes) and its attempt timeout (6s). Throttling (429) and
unavailability (503) are counted as errors of their own, never retried away.

A request that gets no answer in time is a timeout (408/20008, counted in
"timeouts" and the errors), never a network error, and has no latency: the
percentiles are those of the requests that got an answer, and a region none of
whose requests did has no latency figure (a dash in the table, null in JSON,
never 0). A --fail-on latency rule counts a timeout as slower than any limit.

--duration bounds the wall clock: when it ends no more requests are sent, and
those still in flight get up to a second (at most the timeout) to answer; then
they are cut and counted as timeouts, so a probe of a hung region ends on time.
Without --duration, a --count probe has a time limit of 30s (with --rate, the
time the count takes at that rate and 10s, if longer): a hung region's requests
would otherwise take their timeout one after another (100 requests, 4 at a time,
6s each: 2½ minutes). When the limit ends the probe before the count, stderr
says so and the JSON summary has "ended_by": "time_limit"; --duration sets
another limit.

Output: a table on stdout at the end; --watch redraws it every second (in
place on a terminal), with the same table for the last 10 seconds under it, so
that a region's recovery shows at once; with --watch the probe runs until
interrupted (Ctrl-C prints the final table) unless --count or --duration is
given. With -o json, one NDJSON line per region per second
({"type":"interval","region":...}: the requests that ended in that second,
answered or timed out, and "in_flight" and "oldest_in_flight_ms", the requests
still waiting at its end) and a final {"type":"summary",...} line with
"probed" (item, missing_item, endpoint: see above), "ended_by" (count,
duration, time_limit, interrupt), "time_limit_ms", "regions"
(an array: per region an object with "region", the counts, "timeouts",
"throttled", the percentiles and "not_sent") and the breaches (and with
--replicas "replicas", an array of replicas with region, address, role, health
and the same numbers). Field names and units: docs/json.
On a terminal, stderr shows progress once a probe has run for 3 seconds.

--fail-on checks each region's final numbers (and with --replicas each
replica's): p50, p90, p99, p99.9 or max above a duration, or errors above a
percentage. Each breach is one line on stderr ("East US: p99 250ms > 200ms") and
the exit code is 10.

The account comes from --endpoint and --key-file, the COSMOSCTL_* environment
variables, or a profile (see cosmosctl config); with none of them the probe runs
against the embedded three-region emulator and says so on stderr (cosmosctl help
embedded-emulator). Preferred and excluded regions from the environment or a
profile do not apply: a probe measures every region, the excluded ones too.
--region probes one region; an --exclude on the command line leaves a region out.

EXIT STATUS
  0   the probe ran and breached no --fail-on threshold (errors are data, not a failure)
  2   bad flags, a bad --fail-on expression, an unknown region
  10  a --fail-on threshold was breached
  other codes as in cosmosctl help exit-codes, when the probe could not run at all`,
		Example: `  cosmosctl probe                                         # 100 reads per region, 4 at a time
  cosmosctl probe --duration 30s --rate 20 --fail-on 'p99>200ms,errors>1%' || page-oncall
  cosmosctl probe --regions "West US,North Europe" --count 500
  cosmosctl probe --watch --rate 5                        # until Ctrl-C: watch a region recover
  cosmosctl probe --account-only --duration 10s --watch   # gateway round trips, no RU
  cosmosctl probe --id order-1 --pk tenant-7              # an existing item; writes nothing
  cosmosctl probe --replicas --region "East US" --count 200   # each replica of the item's partition
  cosmosctl probe --duration 5m --rate 10 -o json | jq -c 'select(.type=="interval") | [.region, .p99_ms]'`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(c.Context(), io)
		},
	}
	o.conn.register(c)
	// Its JSON is NDJSON (interval lines, then the summary): -o json and -o ndjson are
	// the same stream, and --jq filters each line.
	o.conn.format.add(config.OutputNDJSON, config.OutputTSV)
	o.conn.format.streams()
	fl := c.Flags()
	fl.Lookup("output").Usage = "table, tsv, or json (one line a region a second, then the summary; ndjson is the same) ($COSMOSCTL_OUTPUT; default table)"
	// A probe measures every region on its own and shows no per-operation diagnostics.
	_ = fl.MarkHidden("preferred-regions")
	_ = fl.MarkHidden("diagnostics")
	fl.StringSliceVar(&o.regions, "regions", nil, "probe these regions only; comma-separated or repeated (default: every region of the account)")
	fl.StringVar(&o.metricsAddr, "metrics-addr", "", "serve Prometheus metrics on this address while probing, e.g. :9464 (per-region latency histograms, outcomes, hedges)")
	o.conn.withHedging(fl)
	fl.StringVar(&o.id, "id", "", "read this existing item instead of the probe item (with --pk)")
	fl.StringVar(&o.pk, "pk", "", "partition key of --id: a JSON value, a JSON array for a hierarchical key, or a plain string")
	fl.BoolVar(&o.accountOnly, "account-only", false, "send GET / to each regional endpoint instead of reading an item")
	fl.BoolVar(&o.cleanup, "cleanup", true, "delete the probe item at the end if this probe created it (never an item it found or --id's); --cleanup=false keeps it")
	fl.BoolVar(&o.replicas, "replicas", false, "read from each replica of the item's partition key range in turn (direct mode) and report every replica")
	fl.IntVar(&o.count, "count", 100, "requests per region, within a time limit of 30s (with --watch and no --duration, the default is until interrupted)")
	fl.DurationVar(&o.duration, "duration", 0, "probe for this long instead of --count requests, e.g. 30s (with both, whichever ends first; it replaces the count's 30s time limit)")
	fl.Float64Var(&o.rate, "rate", 0, "requests per second per region, in an open loop; 0 sends the next request when one answers")
	fl.IntVar(&o.concurrency, "concurrency", 4, "requests in flight per region at most")
	fl.BoolVar(&o.watch, "watch", false, "redraw the table, and the last 10s, every second; run until interrupted unless --count or --duration is given")
	fl.StringSliceVar(&o.failOn, "fail-on", nil, "exit 10 if a region breaches this, e.g. 'p99>200ms', 'errors>1%'; comma-separated or repeated")
	return c
}

// validate checks the flags without any I/O.
func (o *probeOptions) validate() error {
	fl := o.conn.flags
	rules, err := workload.ParseRules(o.failOn)
	if err != nil {
		return usageErrorf("--fail-on: %v", err)
	}
	o.rules = rules
	count := o.count
	// --watch is for watching a region recover: it runs until interrupted unless told
	// how long.
	untilInterrupted := o.watch && !fl.Changed("count") && !fl.Changed("duration")
	if untilInterrupted || (fl.Changed("duration") && !fl.Changed("count")) {
		count = 0
	}
	o.schedule = workload.Schedule{Rate: o.rate, Concurrency: o.concurrency, Count: count, Duration: o.duration}
	check := o.schedule
	if untilInterrupted {
		check.Count = 1 // a schedule that ends; the probe runs this one until interrupted
	}
	if err := check.Validate(); err != nil {
		return usageErrorf("%v (see --count, --duration, --rate and --concurrency)", err)
	}
	if count > 0 && !fl.Changed("duration") {
		// A --count probe is bounded in time too: a hung region must not make it wait
		// out every one of its requests' timeouts.
		o.schedule.Duration, o.defaultTimeLimit = probe.TimeLimit(count, o.rate), true
	}
	switch {
	case fl.Changed("id") != fl.Changed("pk"):
		return usageErrorf("--id and --pk go together: the item's id and its partition key")
	case o.accountOnly && o.replicas:
		return usageErrorf("--account-only reads no item and --replicas reads one from each replica: drop one of them")
	case o.accountOnly && fl.Changed("id"):
		return usageErrorf("--account-only reads no item: drop --id and --pk, or --account-only")
	case fl.Changed("id") && o.id == "":
		return usageErrorf("--id must not be empty")
	case fl.Changed("regions") && o.conn.region != "":
		return usageErrorf("give --regions or --region, not both")
	}
	if fl.Changed("id") {
		pk, err := parsePartitionKey(o.pk)
		if err != nil {
			return err
		}
		o.partitionKey = pk
	}
	return nil
}

func (o *probeOptions) run(ctx context.Context, io *IOStreams) error {
	settings, err := o.conn.resolve(io)
	if err != nil {
		return err
	}
	o.conn.noContainer = o.accountOnly
	sess, err := o.conn.connect(ctx, io, settings)
	if err != nil {
		return err
	}
	defer sess.Close()
	opts := probe.Options{
		Client: sess.client, Database: sess.settings.Database, Container: sess.settings.Container,
		Regions: o.regions, RegionsFlag: "--regions",
		AccountOnly: o.accountOnly, Replicas: o.replicas, NoReplicaHealth: o.conn.noReplicaHealth,
		ID: o.id, PartitionKey: o.partitionKey, Cleanup: o.cleanup,
		Schedule: o.schedule, DefaultTimeLimit: o.defaultTimeLimit, Timeout: sess.settings.E2ETimeout, Watch: o.watch, Rules: o.rules,
		JSON:  o.conn.wantJSON(sess.settings),
		Style: io.outStyles(o.conn.noColor),
	}
	if o.conn.region != "" {
		opts.Regions, opts.RegionsFlag = []string{o.conn.region}, "--region"
	}
	// Preferred and excluded regions from the environment or a profile do not apply: a
	// probe measures every region on its own, the excluded ones included.
	if o.conn.flags.Changed("exclude") {
		opts.Exclude = o.conn.excludeRegions
	}
	// With hedging configured (flags or profile), the probe also reads the way an
	// application does, as the row "(hedged)".
	if !o.accountOnly && !o.replicas {
		var strategy hedging.Strategy
		if strategy, err = o.conn.hedge.strategy(sess.settings); err != nil {
			return err
		}
		// What the hedged stream learns of the first region's latency is what a later
		// one-shot `cosmosctl read` with adaptive hedging starts from.
		sess.learn(strategy)
		opts.Hedge, opts.HedgePreferred, opts.HedgeExclude = strategy, sess.settings.PreferredRegions, sess.settings.ExcludeRegions
	}
	if o.metricsAddr != "" {
		opts.Metrics = metrics.NewProbe()
		mctx, stop := context.WithCancel(ctx)
		defer stop()
		addr, _, err := metrics.Serve(mctx, o.metricsAddr, opts.Metrics)
		if err != nil {
			return usageErrorf("--metrics-addr %s: %v", o.metricsAddr, err)
		}
		fmt.Fprintf(io.ErrOut, "serving Prometheus metrics on http://%s/metrics\n", addr)
	}

	res, err := probe.Run(ctx, opts, probe.Streams{Out: io.Out, ErrOut: io.ErrOut, OutTTY: io.OutTTY, ErrTTY: io.ErrTTY})
	if err != nil {
		var pu *probe.UsageError
		if errors.As(err, &pu) {
			return &UsageError{Err: err}
		}
		return asUsage(err)
	}
	if n := len(res.Breaches); n > 0 {
		return &ThresholdBreachError{Breaches: n}
	}
	if res.Interrupted {
		return errInterrupted
	}
	return nil
}
