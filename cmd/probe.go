package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

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
	// probeItemID is the item probes read unless --id names another; its partition key
	// has the same value at every partition key path of the container.
	probeItemID = "cosmosctl-probe"
	// defaultProbeTimeout bounds each probe request when no --e2e-timeout is set, so
	// that a region that hangs shows up as timeouts instead of a probe that never ends.
	defaultProbeTimeout = 10 * time.Second
	// probeProgressAfter is how long a probe runs before it shows progress on stderr:
	// short probes finish before anyone wonders.
	probeProgressAfter = 3 * time.Second
	// probeReplicationWait bounds the wait for a newly created probe item to reach every
	// probed region.
	probeReplicationWait = 5 * time.Second
)

// probeOptions are the flags of `cosmosctl probe`.
type probeOptions struct {
	conn        connFlags
	regions     []string
	id, pk      string
	accountOnly bool
	replicas    bool
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
partition key path(s). It is created (upserted, 5 RU) on first use; --id and --pk
read an existing item instead and write nothing.

Each region gets --concurrency workers. With --rate the probe is an open loop:
requests are due at a fixed rate per region, and latency is measured from when a
request was due, not from when a worker was free to send it, so a stall of the
service shows in the percentiles of every request it delayed (as wrk2 and
vegeta measure). Without --rate each worker sends its next request as soon as the
last one answered. Every request, a failed one included, is bounded by
--e2e-timeout (default 10s for probes). Throttling (429) and unavailability
(503) are counted as errors of their own, never retried away.

Output: a table on stdout at the end; --watch redraws it every second (in
place on a terminal). With -o json, one NDJSON line per region per second
({"type":"interval",...}, the requests that completed in that second) and a
final {"type":"summary",...} line with every region's numbers and breaches
(and with --replicas a "replicas" section: per region, a list of replicas with
address, role, health and the same numbers).
On a terminal, stderr shows progress once a probe has run for 3 seconds.

--fail-on checks each region's final numbers (and with --replicas each
replica's): p50, p90, p99, p99.9 or max above a duration, or errors above a
percentage. Each breach is one line on stderr ("East US: p99 250ms > 200ms") and
the exit code is 10.

The account comes from --endpoint and --key-file, the COSMOSCTL_* environment
variables, or a profile (see cosmosctl config); with none of them the probe runs
against the embedded three-region emulator and says so on stderr. Preferred and
excluded regions from the environment or a profile do not apply: a probe measures
every region, the excluded ones too. --region probes one region; an --exclude on
the command line leaves a region out.

EXIT STATUS
  0   the probe ran and breached no --fail-on threshold (errors are data, not a failure)
  2   bad flags, a bad --fail-on expression, an unknown region
  10  a --fail-on threshold was breached
  other codes as in cosmosctl help exit-codes, when the probe could not run at all`,
		Example: `  cosmosctl probe                                         # 100 reads per region, 4 at a time
  cosmosctl probe --duration 30s --rate 20 --fail-on 'p99>200ms,errors>1%' || page-oncall
  cosmosctl probe --regions "West US,North Europe" --count 500
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
	fl := c.Flags()
	// A probe measures every region on its own and shows no per-operation diagnostics.
	_ = fl.MarkHidden("preferred-regions")
	_ = fl.MarkHidden("diagnostics")
	fl.StringSliceVar(&o.regions, "regions", nil, "probe these regions only; comma-separated or repeated (default: every region of the account)")
	fl.StringVar(&o.metricsAddr, "metrics-addr", "", "serve Prometheus metrics on this address while probing, e.g. :9464 (per-region latency histograms, outcomes, hedges)")
	o.conn.withHedging(fl)
	fl.StringVar(&o.id, "id", "", "read this existing item instead of the probe item (with --pk)")
	fl.StringVar(&o.pk, "pk", "", "partition key of --id: a JSON value, a JSON array for a hierarchical key, or a plain string")
	fl.BoolVar(&o.accountOnly, "account-only", false, "send GET / to each regional endpoint instead of reading an item")
	fl.BoolVar(&o.replicas, "replicas", false, "read from each replica of the item's partition key range in turn (direct mode) and report every replica")
	fl.IntVar(&o.count, "count", 100, "requests per region")
	fl.DurationVar(&o.duration, "duration", 0, "probe for this long instead of --count requests, e.g. 30s (with both, whichever ends first)")
	fl.Float64Var(&o.rate, "rate", 0, "requests per second per region, in an open loop; 0 sends the next request when one answers")
	fl.IntVar(&o.concurrency, "concurrency", 4, "requests in flight per region at most")
	fl.BoolVar(&o.watch, "watch", false, "redraw the table every second while probing")
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
	if fl.Changed("duration") && !fl.Changed("count") {
		count = 0
	}
	o.schedule = workload.Schedule{Rate: o.rate, Concurrency: o.concurrency, Count: count, Duration: o.duration}
	if err := o.schedule.Validate(); err != nil {
		return usageErrorf("%v (see --count, --duration, --rate and --concurrency)", err)
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
	return nil
}

func (o *probeOptions) run(ctx context.Context, io *IOStreams) error {
	settings, err := o.conn.resolve(io)
	if err != nil {
		return err
	}
	sess, err := o.conn.connect(ctx, io, settings)
	if err != nil {
		return err
	}
	defer sess.Close()
	acct, err := sess.client.Account(ctx)
	if err != nil {
		return err
	}
	regions, err := o.chooseRegions(acct)
	if err != nil {
		return err
	}
	timeout := sess.settings.E2ETimeout
	if timeout == 0 {
		timeout = defaultProbeTimeout
	}
	// Requests pinned to their region and never retried: a 429 or a 503 is a result to
	// count, not something to hide behind a retry or a failover.
	prober := sess.client.Derive(nil, retries.Policy{})
	var send probeFunc
	var replicas *replicaProber
	request := "account"
	if o.accountOnly {
		send = pingProbe(prober, timeout)
	} else {
		request = "read"
		op, err := o.probeItem(ctx, io, sess, regions, acct.ReadRegions(), timeout)
		if err != nil {
			return err
		}
		send = readProbe(prober, op, acct.ReadRegions())
		if o.replicas {
			// Its own address cache, so that the health shown is what this probe's
			// requests taught it, whatever the session's connection mode.
			direct := sess.client.DeriveDirect(nil, retries.Policy{}, o.conn.noReplicaHealth)
			defer direct.Close()
			replicas = newReplicaProber(direct, op)
			replicas.resolve(ctx, regions, timeout)
			send = replicas.send
		}
	}

	// With hedging configured (flags or profile), the probe also reads the way an
	// application does: through the effective regions with the strategy, as the row
	// "(hedged)" — what hedging buys right now, and what feeds the hedge metrics.
	var strategy hedging.Strategy
	if !o.accountOnly && !o.replicas {
		if strategy, err = o.conn.hedge.strategy(sess.settings); err != nil {
			return err
		}
	}
	var exporter *metrics.Probe
	if o.metricsAddr != "" {
		exporter = metrics.NewProbe()
		mctx, stop := context.WithCancel(ctx)
		defer stop()
		addr, _, err := metrics.Serve(mctx, o.metricsAddr, exporter)
		if err != nil {
			return usageErrorf("--metrics-addr %s: %v", o.metricsAddr, err)
		}
		fmt.Fprintf(io.ErrOut, "serving Prometheus metrics on http://%s/metrics\n", addr)
	}
	if strategy != nil {
		op, err := o.probeItem(ctx, io, sess, regions, acct.ReadRegions(), timeout)
		if err != nil {
			return err
		}
		op.Hedge, op.ExcludeRegions = strategy, sess.settings.ExcludeRegions
		hedged := sess.client.Derive(sess.settings.PreferredRegions, retries.Policy{})
		pinned := send
		send = func(ctx context.Context, region string) probeOutcome {
			if region != hedgedRow {
				return pinned(ctx, region)
			}
			res, err := hedged.Execute(ctx, op)
			if exporter != nil && res != nil {
				exporter.ObserveOperation(res.Diagnostics)
			}
			return readOutcome(res, err)
		}
		regions = append(regions, hedgedRow)
	}
	if exporter != nil {
		inner := send
		send = func(ctx context.Context, region string) probeOutcome {
			start := time.Now()
			out := inner(ctx, region)
			exporter.ObserveRequest(region, request, time.Since(start), out.status, out.substatus, out.failed)
			return out
		}
	}

	p := &probeRun{
		io: io, opts: o, regions: regions, send: send, replicas: replicas, clock: clock.Real{},
		json:  o.conn.wantJSON(sess.settings),
		style: output.StylesFor(io.Out, io.OutTTY, o.conn.noColor, getenv),
	}
	interrupted := p.run(ctx)
	if err := p.report(request); err != nil {
		return err
	}
	if n := p.breaches(); n > 0 {
		return &ThresholdBreachError{Breaches: n}
	}
	if interrupted {
		return errInterrupted
	}
	return nil
}

// chooseRegions returns the regions to probe, in the order given (--regions or --region)
// or the account's order, less any --exclude given on the command line. Preferred and
// excluded regions from the environment or a profile do not apply: a probe measures
// every region on its own, the excluded ones included.
func (o *probeOptions) chooseRegions(acct *cosmos.Account) ([]string, error) {
	all := acct.ReadRegions()
	match := func(flag, name string) (string, error) {
		for _, r := range all {
			if cosmos.SameRegion(r, name) {
				return r, nil
			}
		}
		return "", usageErrorf("%s: %q is not a region of this account; its regions are %s", flag, name, strings.Join(all, ", "))
	}
	chosen, flag := o.regions, "--regions"
	if o.conn.region != "" {
		chosen, flag = []string{o.conn.region}, "--region"
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
	if o.conn.flags.Changed("exclude") {
		for _, name := range o.conn.excludeRegions {
			r, err := match("--exclude", strings.TrimSpace(name))
			if err != nil {
				return nil, err
			}
			out = without(out, r)
		}
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

// hedgedRow names the probe's stream of hedged reads through the effective regions.
const hedgedRow = "(hedged)"

// probeOutcome is what one probe request got.
type probeOutcome struct {
	status, substatus int
	charge            float64
	failed            bool
	// replica is the address the request went to with --replicas, "" when it could not
	// be sent to one (the replica set could not be resolved).
	replica string
}

// probeFunc sends one probe request to a region.
type probeFunc func(ctx context.Context, region string) probeOutcome

// readProbe reads the item of op in one region, every other region excluded.
func readProbe(client *engine.Client, op engine.Operation, all []string) probeFunc {
	others := map[string][]string{}
	for _, r := range all {
		others[r] = without(all, r)
	}
	return func(ctx context.Context, region string) probeOutcome {
		op := op
		op.ExcludeRegions = others[region]
		return readOutcome(client.Execute(ctx, op))
	}
}

// readOutcome is what a probe read got: its status (408/20008 for the end-to-end
// timeout, 0 for no answer) and the request charge of every attempt.
func readOutcome(res *engine.Result, err error) probeOutcome {
	out := probeOutcome{}
	if res != nil && res.Diagnostics != nil {
		out.charge = res.Diagnostics.RequestCharge
	}
	var te *engine.TimeoutError
	switch {
	case err == nil:
		out.status, out.substatus = res.StatusCode, res.SubStatus
	case errors.As(err, &te):
		out.status, out.substatus, out.failed = 408, cosmos.SubClientE2ETimeout, true
	default:
		out.status, out.substatus, _ = cosmos.Status(err)
		out.failed = true
	}
	return out
}

// pingProbe sends GET / to a region's own endpoint.
func pingProbe(client *engine.Client, timeout time.Duration) probeFunc {
	return func(ctx context.Context, region string) probeOutcome {
		pctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		resp, err := client.Ping(pctx, region)
		out := probeOutcome{failed: err != nil}
		if resp != nil {
			out.status, out.substatus, out.charge = resp.StatusCode, resp.SubStatus, resp.RequestCharge
		}
		if err != nil && resp == nil && ctx.Err() == nil && errors.Is(pctx.Err(), context.DeadlineExceeded) {
			out.status, out.substatus = 408, cosmos.SubClientE2ETimeout
		}
		return out
	}
}

// probeItem returns the read operation of the probe: --id and --pk as given, or the
// probe item, created on first use.
func (o *probeOptions) probeItem(ctx context.Context, io *IOStreams, sess *session, regions, all []string, timeout time.Duration) (engine.Operation, error) {
	op := engine.Operation{Kind: engine.OpRead, Database: sess.settings.Database, Container: sess.settings.Container, E2ETimeout: timeout}
	if op.Database == "" || op.Container == "" {
		return op, usageErrorf("no database or container: give --database and --container (or set them in a profile), or use --account-only")
	}
	if o.id != "" {
		pk, err := parsePartitionKey(o.pk)
		if err != nil {
			return op, err
		}
		op.ID, op.PartitionKey = o.id, pk
		return op, nil
	}
	paths, err := sess.client.PartitionKeyPaths(ctx, op.Database, op.Container)
	if err != nil {
		return op, asUsage(err)
	}
	values := make([]any, len(paths))
	for i := range values {
		values[i] = probeItemID
	}
	pk, err := cosmos.PK(values...)
	if err != nil {
		return op, err
	}
	op.ID, op.PartitionKey = probeItemID, pk
	_, err = sess.client.Execute(ctx, op)
	if status, sub, _ := cosmos.Status(err); status != 404 || sub != 0 {
		return op, asUsage(err)
	}
	up := op
	up.Kind, up.Body = engine.OpUpsert, probeDocument(paths)
	if _, err := sess.client.Execute(ctx, up); err != nil {
		return op, fmt.Errorf("creating the probe item %q in %s/%s: %w (or probe an existing item with --id and --pk, or the endpoints with --account-only)", probeItemID, op.Database, op.Container, asUsage(err))
	}
	fmt.Fprintf(io.ErrOut, "cosmosctl: created the probe item %q in %s/%s (partition key %s)\n", probeItemID, op.Database, op.Container, pk.JSON())
	awaitReplication(ctx, sess.client.Derive(nil, retries.Policy{}), op, regions, all)
	return op, nil
}

// probeDocument is the probe item: its id, and the same value at every partition key path.
func probeDocument(paths []string) []byte {
	doc := map[string]any{"id": probeItemID}
	for _, path := range paths {
		cur := doc
		segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
		for i, seg := range segs {
			if i == len(segs)-1 {
				cur[seg] = probeItemID
				break
			}
			next, ok := cur[seg].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[seg] = next
			}
			cur = next
		}
	}
	b, _ := json.Marshal(doc)
	return b
}

// awaitReplication waits, briefly, until a newly created probe item can be read in every
// probed region, so that replication lag is not reported as 404s. Whatever is still
// missing after the wait shows in the results.
func awaitReplication(ctx context.Context, client *engine.Client, op engine.Operation, regions, all []string) {
	ctx, cancel := context.WithTimeout(ctx, probeReplicationWait)
	defer cancel()
	var wg sync.WaitGroup
	for _, region := range regions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			read := op
			read.ExcludeRegions = without(all, region)
			for {
				_, err := client.Execute(ctx, read)
				// 404/0 (not there yet) and 404/1002 (this region's replica is behind).
				if status, _, _ := cosmos.Status(err); status != 404 {
					return
				}
				t := time.NewTimer(100 * time.Millisecond)
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
			}
		}()
	}
	wg.Wait()
}
