package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/hedgetest"
	"github.com/cosmosctl/cosmosctl/output"
	"github.com/cosmosctl/cosmosctl/retries"
	"github.com/cosmosctl/cosmosctl/workload"
)

type hedgeTestOptions struct {
	conn        connFlags
	scenario    string
	strategies  string
	count       int
	concurrency int
	rate        float64
	targetP99   time.Duration
	budget      string
	items       int
	plot        string
	cleanup     bool
	op          string
}

const defaultStrategies = "none,threshold=500ms/100ms,fanout,adaptive"

func newHedgeTestCmd(io *IOStreams) *cobra.Command {
	o := &hedgeTestOptions{}
	c := &cobra.Command{
		Use:   "hedge-test",
		Short: "Compare hedging strategies on the same read workload",
		Long: `Run the same read workload under several hedging strategies, one after another on
the same account and data, and compare them: p50/p90/p99/p99.9, extra requests and
request units, which regions answered, timeouts. It ends with a recommendation —
the strategy that meets --target-p99 at the least extra load — and, on a terminal,
a latency chart. Of the strategies that meet the target, a tie (the same extra
requests as the table prints them, +0.0% each for instance: their p99s then differ
by the run's noise) goes to the simpler strategy: none, then threshold, adaptive,
fanout; of two of one kind, to the lower p99.

--plot FILE.svg writes the latency chart as an SVG image; --plot FILE.html writes a
page that needs nothing else (no network): the strategies table, with the requests
each sent and the recommendation highlighted, the chart, and the latency of every
strategy at the percentile under the pointer. The path is checked before the test
starts (a missing or unwritable directory is a usage error, exit 2, before any
request); the chart is written once the results are printed, to a new file that
then replaces FILE, so a failed run leaves an existing FILE as it was. If it cannot
be written after all (a full disk), the results are printed in full anyway and the
exit code is 1.

With no account configured it runs on an embedded emulator (three regions with
realistic latencies) under a scenario, the brownout by default:
  brownout           the first region answers 5% of reads 0.5–2 s late
  outage             the first region refuses connections
  hang               the first region accepts requests and never answers them: a
                     read there waits out its attempt timeout (6s for a point
                     read; --attempt-timeout caps it) before it goes elsewhere,
                     until region health moves the region last. Only an attempt
                     timeout tells region health: keep it shorter than the
                     end-to-end timeout (--e2e-timeout, here 5s by default).
  write-region-down  the write region (the first) refuses connections, and the
                     global endpoint, its alias, drops every data request; the
                     reads run as usual, then writes are tried (see below)
  throttle           the first region returns 429 (retry after 100ms) for 20% of
                     reads
  replica-move       a secondary replica of each partition key range in the first
                     region answers 410 a little into each run, and the gateway
                     hands out its successor 2s later (reads go direct to the
                     replicas)
or a TOML scenario file (see cosmosctl emulator --help). Against a real account it
uses the configured profile and no scenario, and upserts --items small documents
with ids cosmosctl-hedge-test-N (partition key = id) to read, each with
"ttl": 3600, and deletes them when the test ends, on Ctrl-C or a failure too
(--cleanup, on by default; --cleanup=false keeps them). The ttl removes items a
killed test left behind, but only where the container has time to live enabled
(a default TTL, -1 included); elsewhere it is ignored. The deletion is bounded
(2s a request, 10s in all): if some fail, one notice on stderr says how many,
and the exit code is the test's. The items are written before the scenario's
faults start; the embedded emulator's are discarded with it.

When the account's write region cannot take the items (it is down, hangs,
refuses or throttles writes: anything but an answer about the request or the
key), hedge-test reads up to --items items already in the container instead,
found by a query (SELECT * FROM c) pinned to one region at a time, each bounded
(5s): the read regions other than the write region first, the write region
last. One notice on stderr says why and which region found them; the strategies
then run their reads as usual (--op query-cross filters on hedge-test's own
items, so it may find none of them: each query still runs). It fails (exit 8
for an unavailable region) only when no region can run that query either, or
the container has no items to read.

With --scenario write-region-down the strategies table is followed by a write
phase, "writes while the write region is down": min(--count, 50) upserts of scratch
items cosmosctl-hedge-test-write-N (partition key = id, "ttl": 3600), --concurrency at once, each bounded
by the end-to-end timeout, first on the embedded account (single-write: they fail,
fast, with the reason), then on a second embedded account started multi-write with
the same fault on its write region (they go to another region). For each: how many
were written, by which regions, p50/p99/max latency, and the distinct error
messages (-o json: the "writes" array). Writes use the write retry policy of the
profile or COSMOSCTL_WRITE_RETRY_POLICY, off by default, as cosmosctl upsert does.

Strategies: none, threshold=T/S (threshold T, step S), fanout (every region at
once), adaptive (threshold learned from the first region's recent p99, extra
requests capped by --budget), adaptive=5% (its own budget).

--op chooses the workload, the same items either way:
  read         point reads (default)
  query        a query page within an item's partition key,
               SELECT * FROM c WHERE c.id = @id, hedged like a read; the adaptive
               strategy learns query pages apart from reads
  query-cross  a whole cross-partition query, SELECT TOP 10 c.id, c._ts FROM c
               WHERE c.purpose = @purpose ORDER BY c._ts DESC: its query plan, then a
               page from every partition key range at once, merged; each request
               is hedged on its own, and the query takes as long as its slowest
               page. Latency is per query; extra requests count against the
               requests a query needs (plan and pages)
The brownout, throttle and hang scenarios affect query pages as they do reads.

With --scenario replica-move the reads go direct to the replicas, and each strategy
runs twice: with replica health awareness, and without it ("<strategy> (no replica
health)", for comparison only; the recommendation considers the health-aware runs).
After the strategies table a second table compares, per run, the reads sent during
the window in which the gateway still hands out the moved replicas: how many
requests still went to a moved replica after it had answered 410, and their p50,
p99 and maximum latency. The moves are made anew for every run, which starts once
the previous run's moves have settled (about 2s apart).`,
		Example: `  cosmosctl hedge-test
  cosmosctl hedge-test --scenario throttle --strategies none,threshold=50ms/20ms,adaptive
  cosmosctl hedge-test --count 5000 --target-p99 150ms --plot tails.svg
  cosmosctl hedge-test --scenario replica-move --count 500
  cosmosctl hedge-test --scenario write-region-down --count 2000
  cosmosctl hedge-test --scenario hang --attempt-timeout 500ms
  cosmosctl hedge-test --profile prod --strategies none,adaptive -o json`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return o.run(c.Context(), io) },
	}
	o.conn.register(c)
	o.conn.format.add(config.OutputTSV)
	f := c.Flags()
	f.StringVar(&o.scenario, "scenario", "", "embedded emulator only: brownout (default), outage, hang, write-region-down, throttle, replica-move, or a TOML scenario file")
	f.StringVar(&o.strategies, "strategies", defaultStrategies, "strategies to compare, comma-separated")
	f.IntVar(&o.count, "count", 1000, "operations per strategy (reads, query pages or queries: --op)")
	f.IntVar(&o.concurrency, "concurrency", 8, "operations in flight at once")
	f.Float64Var(&o.rate, "rate", 0, "operations per second, open loop (latency counted from the intended send time); 0 runs closed loop")
	f.StringVar(&o.op, "op", string(hedgetest.OpRead), "the workload: read, query (a page within a partition key) or query-cross (a cross-partition TOP 10 ORDER BY)")
	f.DurationVar(&o.targetP99, "target-p99", 100*time.Millisecond, "the p99 the recommendation must meet")
	f.StringVar(&o.budget, "budget", "10%", "adaptive strategy's extra-request budget")
	f.IntVar(&o.items, "items", 20, "distinct items the workload reads")
	f.BoolVar(&o.cleanup, "cleanup", true, "delete the items the test wrote when it ends; --cleanup=false keeps them")
	f.StringVar(&o.plot, "plot", "", "write the latency chart to this .svg file, or the chart and the table to this .html page")
	return c
}

func (o *hedgeTestOptions) validate() (float64, error) {
	switch {
	case o.count < 1:
		return 0, usageErrorf("--count must be at least 1, not %d", o.count)
	case o.concurrency < 1:
		return 0, usageErrorf("--concurrency must be at least 1, not %d", o.concurrency)
	case o.rate < 0:
		return 0, usageErrorf("--rate must not be negative (got %g)", o.rate)
	case o.targetP99 <= 0:
		return 0, usageErrorf("--target-p99 must be a positive duration such as 100ms")
	case o.items < 1:
		return 0, usageErrorf("--items must be at least 1")
	}
	if o.plot != "" {
		if ext := strings.ToLower(filepath.Ext(o.plot)); ext != ".svg" && ext != ".html" {
			return 0, usageErrorf("--plot %s: the chart is written as .svg or .html", o.plot)
		}
	}
	var pct float64
	if _, err := fmt.Sscanf(strings.TrimSuffix(o.budget, "%"), "%g", &pct); err != nil || !strings.HasSuffix(o.budget, "%") || pct <= 0 || pct > 100 {
		return 0, usageErrorf("--budget %q must be a percentage such as 10%%", o.budget)
	}
	return pct / 100, nil
}

func (o *hedgeTestOptions) run(ctx context.Context, io *IOStreams) error {
	budget, err := o.validate()
	if err != nil {
		return err
	}
	specs, err := hedgetest.ParseStrategies(o.strategies, budget)
	if err != nil {
		return &UsageError{Err: err}
	}
	op, err := hedgetest.ParseOp(o.op)
	if err != nil {
		return &UsageError{Err: err}
	}
	if op != hedgetest.OpRead && o.scenario == emulator.ScenarioReplicaMove {
		return usageErrorf("--scenario replica-move moves replicas under direct-mode reads; queries go through the gateway: use --op read")
	}
	var plot *plotFile
	if o.plot != "" {
		if plot, err = checkPlot(o.plot); err != nil {
			return err
		}
	}
	settings, err := o.conn.resolve(io)
	if err != nil {
		return err
	}
	scenario := o.scenario
	if settings.Configured() && scenario != "" {
		return usageErrorf("--scenario applies to the embedded emulator only; against %s hedge-test uses the account as it is", settings.Endpoint)
	}
	if !settings.Configured() && scenario == "" {
		scenario = "brownout"
	}
	// hedge-test never persists the embedded emulator's data: its items are scratch.
	o.conn.ephemeral = true
	sess, err := o.conn.connect(ctx, io, settings)
	if err != nil {
		return err
	}
	defer sess.Close()
	// The items are written before the scenario starts: an outage of the write region
	// would otherwise stop the test before it begins. A real account's write region may
	// be down already: then the test reads items that are there.
	items, err := o.prepareItems(ctx, sess)
	if o.cleanup && sess.embedded == nil {
		// Deferred: on every way out, once an item is written.
		defer o.cleanupItems(ctx, io, sess, items)
	}
	if err != nil {
		if items, err = o.existingItems(ctx, io, sess, err); err != nil {
			return err
		}
	}
	if sess.embedded != nil {
		if err := applyScenario(sess.embedded, scenario); err != nil {
			return err
		}
		fmt.Fprintf(io.ErrOut, "scenario: %s\n", describeScenario(scenario))
	}
	e2e := sess.settings.E2ETimeout
	if e2e == 0 {
		e2e = 5 * time.Second
	}
	w := hedgetest.Workload{Client: sess.client, Database: sess.settings.Database, Container: sess.settings.Container,
		Items: items, Op: op, Count: o.count, Concurrency: o.concurrency, Rate: o.rate, E2ETimeout: e2e}
	if w.ExcludeRegions, err = o.conn.excludes(ctx, sess); err != nil {
		return err
	}
	var results []hedgetest.Result
	var move *hedgeTestReplicaMove
	if scenario == emulator.ScenarioReplicaMove {
		results, move, err = o.runReplicaMove(ctx, io, sess, w, specs)
	} else {
		results, err = o.runStrategies(ctx, io, w, specs)
	}
	if err != nil {
		return err
	}
	var writes []hedgetest.WriteSummary
	if scenario == emulator.ScenarioWriteRegionDown && sess.embedded != nil {
		if writes, err = o.runWrites(ctx, io, sess, scenario, e2e); err != nil {
			return err
		}
	}
	rec := hedgetest.Recommend(recommendable(results), o.targetP99)
	series := make([]output.Series, len(results))
	for i, r := range results {
		series[i] = output.Series{Name: r.Strategy, Latencies: r.Latencies, Quantile: r.Stats.Quantile}
	}
	// The results are printed before the chart is written: a chart that cannot be
	// written after all loses nothing.
	if o.conn.wantJSON(sess.settings) {
		rep := hedgeTestJSON(scenario, o, results, rec)
		rep.ReplicaMove = move
		rep.Writes = writes
		err = output.WriteJSON(io.Out, rep)
	} else {
		err = o.printTable(io, results, rec, series, move, writes)
	}
	if err != nil || plot == nil {
		return err
	}
	return o.writeHedgeTestPlot(io, plot, scenario, results, rec, series, move != nil || len(writes) > 0)
}

// runStrategies runs the workload under each strategy, one after another.
func (o *hedgeTestOptions) runStrategies(ctx context.Context, io *IOStreams, w hedgetest.Workload, specs []hedgetest.Spec) ([]hedgetest.Result, error) {
	var results []hedgetest.Result
	for _, spec := range specs {
		w.Progress = o.progress(io, spec.Name, w.Op.Noun())
		r, err := hedgetest.Run(ctx, w, spec)
		if io.ErrTTY {
			fmt.Fprint(io.ErrOut, "\r\033[K")
		}
		if err != nil {
			return nil, asUsage(err)
		}
		results = append(results, r)
	}
	return results, nil
}

// progress shows on a terminal how far a strategy's run is.
func (o *hedgeTestOptions) progress(io *IOStreams, name, noun string) func(done int) {
	if !io.ErrTTY {
		return nil
	}
	return func(done int) {
		if done%50 == 0 || done == o.count {
			fmt.Fprintf(io.ErrOut, "\r%-28s %d/%d %s", name, done, o.count, noun)
		}
	}
}

// recommendable are the runs a recommendation may pick: not the comparison runs without
// replica health.
func recommendable(results []hedgetest.Result) []hedgetest.Result {
	var out []hedgetest.Result
	for _, r := range results {
		if !strings.HasSuffix(r.Strategy, noReplicaHealthSuffix) {
			out = append(out, r)
		}
	}
	return out
}

func applyScenario(srv *emulator.Server, scenario string) error {
	first := srv.Regions()[0].Name
	if _, builtin := emulator.BuiltinScenarios[scenario]; builtin {
		rules, err := emulator.BuiltinScenario(scenario, first)
		if err != nil {
			return &UsageError{Err: err}
		}
		for _, r := range rules {
			if _, err := srv.AddFault(r); err != nil {
				return err
			}
		}
		return nil
	}
	if _, err := os.Stat(scenario); err != nil {
		return usageErrorf("--scenario %q is neither a built-in scenario (%s) nor a readable file", scenario, strings.Join(emulator.BuiltinScenarioNames(), ", "))
	}
	var cfg emulator.Config
	if err := emulator.LoadScenario(scenario, &cfg); err != nil {
		return &UsageError{Err: err}
	}
	for _, l := range cfg.Latency {
		if err := srv.Faults().SetLatency(l.Region, l.Operation, l.Distribution); err != nil {
			return &UsageError{Err: fmt.Errorf("scenario %s: %v", scenario, err)}
		}
	}
	for _, r := range cfg.Faults {
		if _, err := srv.AddFault(r); err != nil {
			return &UsageError{Err: fmt.Errorf("scenario %s: %v", scenario, err)}
		}
	}
	return nil
}

func describeScenario(s string) string {
	if d, ok := emulator.BuiltinScenarios[s]; ok {
		return s + " (" + d + ")"
	}
	if s == "" {
		return "the configured account, as it is"
	}
	return s
}

// prepareItems upserts the items the workload reads. On a failure it returns the items
// written so far, for the cleanup.
func (o *hedgeTestOptions) prepareItems(ctx context.Context, sess *session) ([]hedgetest.Item, error) {
	items := make([]hedgetest.Item, 0, o.items)
	for i := range o.items {
		id := hedgetest.ItemID(i)
		res, err := sess.client.Execute(ctx, engine.Operation{Kind: engine.OpUpsert, Database: sess.settings.Database, Container: sess.settings.Container,
			Body: hedgetest.ItemDocument(id), E2ETimeout: 30 * time.Second})
		if err != nil {
			return items, asUsage(fmt.Errorf("preparing item %s: %w", id, err))
		}
		items = append(items, hedgetest.Item{ID: id, PartitionKey: pkOf(res)})
	}
	return items, nil
}

// existingAttempt bounds each region's query for existing items: a hung region costs the
// test this much, and the next region is asked.
const existingAttempt = 5 * time.Second

// existingItems are the items to read when the test could not write its own (writeErr)
// because the write region is down: items already in the container, found by a query
// in the read regions. A write region that is down must not stop a test of how reads
// get around a sick region; the test fails only when no region can read either, or the
// container has nothing to read.
func (o *hedgeTestOptions) existingItems(ctx context.Context, io *IOStreams, sess *session, writeErr error) ([]hedgetest.Item, error) {
	if sess.embedded != nil || !hedgetest.WriteUnavailable(writeErr) {
		return nil, writeErr
	}
	db, coll := sess.settings.Database, sess.settings.Container
	found, err := hedgetest.ExistingItems(ctx, sess.client, db, coll, o.items, existingAttempt)
	var none *hedgetest.NoItemsError
	switch {
	case errors.As(err, &none):
		return nil, fmt.Errorf("%w; and %s/%s has no items to read instead (a query in %s found none)", writeErr, db, coll, none.Region)
	case err != nil:
		// Classified by the reads' failure: they are what the test needed.
		return nil, asUsage(fmt.Errorf("reading existing items of %s/%s instead: %w; writing its own: %w", db, coll, err, writeErr))
	}
	fmt.Fprintf(io.ErrOut, "cosmosctl: could not write the hedge-test items (%v); reading %d existing items of %s/%s instead, found by a query in %s\n",
		writeErr, len(found.Items), db, coll, found.Region)
	return found.Items, nil
}

// cleanupItems deletes the items the test wrote; a failure is one notice, never the
// test's error.
func (o *hedgeTestOptions) cleanupItems(ctx context.Context, io *IOStreams, sess *session, items []hedgetest.Item) {
	if len(items) == 0 {
		return
	}
	err := hedgetest.Cleanup(ctx, sess.client, sess.settings.Database, sess.settings.Container, items)
	var ce *hedgetest.CleanupError
	if errors.As(err, &ce) {
		fmt.Fprintf(io.ErrOut, "cosmosctl: could not delete %d of the %d hedge-test items %s…%d from %s/%s (%s); their ttl removes them where the container has TTL on\n",
			ce.Failed, ce.Of, hedgetest.ItemID(0), len(items)-1, sess.settings.Database, sess.settings.Container, ce.Reason())
	}
}

func pkOf(res *engine.Result) cosmos.PartitionKey {
	pk, _ := cosmos.ParsePartitionKeyJSON(string(res.Diagnostics.PartitionKey))
	return pk
}

func winsText(r hedgetest.Result) string {
	share := r.WinShare()
	regions := make([]string, 0, len(share))
	for region := range share {
		regions = append(regions, region)
	}
	sort.Slice(regions, func(i, j int) bool { return share[regions[i]] > share[regions[j]] })
	var parts []string
	for _, region := range regions {
		parts = append(parts, fmt.Sprintf("%s %.0f%%", region, share[region]))
	}
	return strings.Join(parts, ", ")
}

func (o *hedgeTestOptions) printTable(io *IOStreams, results []hedgetest.Result, rec hedgetest.Recommendation, series []output.Series, move *hedgeTestReplicaMove, writes []hedgetest.WriteSummary) error {
	st := io.outStyles(o.conn.noColor)
	header, rows := hedgeTestRows(results)
	cols := make([]output.Column, len(header))
	for i, h := range header {
		cols[i] = hedgeTestColumns[h]
		cols[i].Header = h
	}
	t := output.NewTableOf(io.Out, st, cols...)
	for _, r := range rows {
		t.Append(r...)
	}
	if err := t.Render(); err != nil {
		return err
	}
	// The sections under the table are for a person: on stderr under -o tsv, whose
	// stdout is the strategies table alone.
	w, wst := io.Out, st
	if st.TSV {
		w, wst = io.ErrOut, io.errStyles(o.conn.noColor)
	}
	if move != nil {
		if err := o.writeReplicaMove(w, wst, move); err != nil {
			return err
		}
	}
	if len(writes) > 0 {
		writeWrites(w, writes)
	}
	if err := writeHedgeTestRegions(w, wst, results); err != nil {
		return err
	}
	fmt.Fprintln(w, "\n"+extraRUNote)
	fmt.Fprintln(w, verdictText(rec))
	if io.OutTTY && !st.TSV {
		fmt.Fprintln(io.Out)
		return output.WriteCDF(io.Out, series, output.CDFWidth(st.Width), 14, st)
	}
	return nil
}

// hedgeTestRows are the strategies table, for the terminal and the --plot page alike.
// hedgeTestColumns say how the columns of the strategies table give way on a narrow
// terminal: the extra RU goes first (the note under the table says why it is a lower
// bound), then the p99.9 and p90, the timeouts; the wins are cut. The strategy, p50, p99
// and extra requests are what a recommendation weighs: they stay.
var hedgeTestColumns = map[string]output.Column{
	"STRATEGY":  {Key: true, Priority: 9, Min: 24},
	"P50":       {Key: true},
	"P90":       {Priority: 3},
	"P99":       {Key: true},
	"P99.9":     {Priority: 2},
	"MAX":       {Priority: 6},
	"EXTRA REQ": {Short: "+REQ", Key: true},
	"EXTRA RU":  {Priority: 1},
	"TIMEOUTS":  {Priority: 4},
	"WINS":      {Priority: 5, Min: 16},
}

func hedgeTestRows(results []hedgetest.Result) (header []string, rows [][]string) {
	header = []string{"STRATEGY", "P50", "P90", "P99", "P99.9", "MAX", "EXTRA REQ", "EXTRA RU", "TIMEOUTS", "WINS"}
	for _, r := range results {
		q := r.Stats.Quantile
		rows = append(rows, []string{r.Strategy, output.HumanDuration(q(0.5)), output.HumanDuration(q(0.9)), output.HumanDuration(q(0.99)),
			output.HumanDuration(q(0.999)), output.HumanDuration(q(1)), fmt.Sprintf("+%.1f%%", r.ExtraRequestsPct()),
			fmt.Sprintf("+%.1f%%", r.ExtraRUPct()), fmt.Sprint(r.Timeouts), winsText(r)})
	}
	return header, rows
}

const extraRUNote = "extra RU counts the answers that arrived: a cancelled request's charge is unknown to the client, though the service may bill it"

func verdictText(rec hedgetest.Recommendation) string {
	if !rec.Met {
		return "recommendation: " + rec.Reason
	}
	return "recommendation: " + rec.Strategy + " — " + rec.Reason
}

// hedgeTestReport is the -o json shape; units are in the field names.
type hedgeTestReport struct {
	Scenario string `json:"scenario"`
	// Op is the workload: read, query or query-cross; Reads counts its operations
	// per strategy whatever they are.
	Op          string `json:"op"`
	Reads       int    `json:"reads_per_strategy"`
	Concurrency int    `json:"concurrency"`
	// RatePerSecond is --rate; null for as fast as --concurrency allows.
	RatePerSecond *float64 `json:"rate_per_second"`
	// TargetP99Ms is --target-p99; null when none was given.
	TargetP99Ms    *float64                 `json:"target_p99_ms"`
	Strategies     []hedgeTestStrategy      `json:"strategies"`
	Recommendation hedgetest.Recommendation `json:"recommendation"`
	// ReplicaMove is the --scenario replica-move section; null for other scenarios.
	ReplicaMove *hedgeTestReplicaMove `json:"replica_move"`
	// Writes are --scenario write-region-down's write phases, the single-write
	// account's, then the multi-write account's; null for other scenarios.
	Writes []hedgetest.WriteSummary `json:"writes" jsonschema:"nullable"`
}

type hedgeTestStrategy struct {
	Name   string  `json:"name"`
	P50Ms  float64 `json:"p50_ms"`
	P90Ms  float64 `json:"p90_ms"`
	P99Ms  float64 `json:"p99_ms"`
	P999Ms float64 `json:"p999_ms"`
	MaxMs  float64 `json:"max_ms"`
	Reads  int     `json:"reads"`
	// Requests counts the requests on the wire; Operations the engine operations
	// they served (a read, a query page, or a cross-partition query's plan and pages).
	Operations       int     `json:"operations"`
	Requests         int     `json:"requests"`
	ExtraRequestsPct float64 `json:"extra_requests_pct"`
	RequestCharge    float64 `json:"request_charge"`
	ExtraRUPct       float64 `json:"extra_ru_pct"`
	Timeouts         int     `json:"timeouts"`
	Failures         int     `json:"failures"`
	// Wins are the regions whose answers were used, and how often: a list of records
	// carrying the region, most wins first.
	Wins       []hedgeTestWins `json:"wins"`
	DurationMs float64         `json:"duration_ms"`
	// ReplicaHealth is set for --scenario replica-move (false on the comparison runs);
	// null for other scenarios.
	ReplicaHealth *bool `json:"replica_health"`
	// Regions are the requests on the wire by region, hedges and retries included, each
	// with its client-measured percentiles and, for the answers that carried the
	// service's own time, server_p50_ms … network_p99_ms (null when none did).
	Regions []hedgeTestRegion `json:"regions"`
}

// hedgeTestRegion is one region's requests on the wire under a strategy, hedges and
// retries included (hedgetest.RecordAttempts): the client's time of each, and for the
// answers that carried it the service's own time and the network's.
type hedgeTestRegion struct {
	Region string `json:"region"`
	workload.Summary
}

// hedgeTestRegionsOf is r's regions, by name.
func hedgeTestRegionsOf(r hedgetest.Result) []hedgeTestRegion {
	out := []hedgeTestRegion{}
	for _, region := range slices.Sorted(maps.Keys(r.Regions)) {
		out = append(out, hedgeTestRegion{Region: region, Summary: r.Regions[region].Summary()})
	}
	return out
}

// writeHedgeTestRegions writes, when some answer carried the service's own time, every
// region's requests on the wire over all the strategies, with their server and
// network times, and the notes on a region that is slow itself or slow to reach.
func writeHedgeTestRegions(w io.Writer, st output.Styles, results []hedgetest.Result) error {
	all := map[string]*workload.Stats{}
	for _, r := range results {
		for region, s := range r.Regions {
			if all[region] == nil {
				all[region] = workload.NewStats()
			}
			all[region].Merge(s)
		}
	}
	var rows []output.ProbeRegion
	server := false
	for _, region := range slices.Sorted(maps.Keys(all)) {
		sum := all[region].Summary()
		server = server || sum.HasServerTime()
		rows = append(rows, output.ProbeRegion{Region: region, Summary: sum})
	}
	if !server {
		return nil
	}
	fmt.Fprintln(w, "\nrequests on the wire by region, every strategy (SRV: the service's own time; NET: the rest, the network):")
	if err := output.WriteProbeTable(w, st, rows); err != nil {
		return err
	}
	var notes []string
	for _, r := range rows {
		notes = append(notes, output.ServerTimeVerdicts(r.Region, r.Summary)...)
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
	}
	for _, n := range notes {
		fmt.Fprintln(w, "note: "+n)
	}
	return nil
}

// hedgeTestWins is the share of a strategy's operations one region's answer won.
type hedgeTestWins struct {
	Region  string  `json:"region"`
	WinsPct float64 `json:"wins_pct"`
}

// winsOf is r's wins by region, most first (then by name).
func winsOf(r hedgetest.Result) []hedgeTestWins {
	share := r.WinShare()
	out := []hedgeTestWins{}
	for region, pct := range share {
		out = append(out, hedgeTestWins{Region: region, WinsPct: pct})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].WinsPct != out[j].WinsPct {
			return out[i].WinsPct > out[j].WinsPct
		}
		return out[i].Region < out[j].Region
	})
	return out
}

func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func hedgeTestJSON(scenario string, o *hedgeTestOptions, results []hedgetest.Result, rec hedgetest.Recommendation) hedgeTestReport {
	rep := hedgeTestReport{Scenario: scenario, Op: o.op, Reads: o.count, Concurrency: o.concurrency,
		Recommendation: rec, Strategies: []hedgeTestStrategy{}}
	if o.rate > 0 {
		rate := o.rate
		rep.RatePerSecond = &rate
	}
	if o.targetP99 > 0 {
		ms := msOf(o.targetP99)
		rep.TargetP99Ms = &ms
	}
	for _, r := range results {
		q := r.Stats.Quantile
		var health *bool
		if scenario == emulator.ScenarioReplicaMove {
			on := !strings.HasSuffix(r.Strategy, noReplicaHealthSuffix)
			health = &on
		}
		rep.Strategies = append(rep.Strategies, hedgeTestStrategy{ReplicaHealth: health,
			Name: r.Strategy, P50Ms: msOf(q(0.5)), P90Ms: msOf(q(0.9)), P99Ms: msOf(q(0.99)), P999Ms: msOf(q(0.999)), MaxMs: msOf(q(1)),
			Reads: r.Reads, Operations: r.Requests, Requests: r.Attempts, ExtraRequestsPct: r.ExtraRequestsPct(), RequestCharge: r.RequestCharge,
			ExtraRUPct: r.ExtraRUPct(), Timeouts: r.Timeouts, Failures: r.Failures, Wins: winsOf(r), DurationMs: msOf(r.Duration),
			Regions: hedgeTestRegionsOf(r),
		})
	}
	return rep
}

// runWrites is the write phase of the write-region-down scenario: the writes on the
// session's account (single-write), then on a second embedded account started
// multi-write, whose client learns its topology and container before the same fault
// takes its write region down, as the session's did while seeding the items.
func (o *hedgeTestOptions) runWrites(ctx context.Context, io *IOStreams, sess *session, scenario string, e2e time.Duration) ([]hedgetest.WriteSummary, error) {
	n := min(o.count, hedgetest.DefaultWrites)
	fmt.Fprintf(io.ErrOut, "write phase: %d upserts of %s…%d, on this account, then on a multi-write one under the same fault\n",
		n, hedgetest.WriteItemID(0), n-1)
	w := hedgetest.Writes{Client: sess.client, Database: sess.settings.Database, Container: sess.settings.Container,
		Count: n, Concurrency: o.concurrency, E2ETimeout: e2e, WriteRetries: hedgeTestWritePolicy(sess.settings)}
	run := func(w hedgetest.Writes, name string) (hedgetest.WriteSummary, error) {
		w.Progress = o.writeProgress(io, name, n)
		sum, err := w.Run(ctx)
		if io.ErrTTY {
			fmt.Fprint(io.ErrOut, "\r\033[K")
		}
		return sum, asUsage(err)
	}
	single, err := run(w, "single-write account")
	if err != nil {
		return nil, err
	}
	srv, err := startEmbedded(embeddedMultiWrite)
	if err != nil {
		return nil, fmt.Errorf("starting the multi-write embedded emulator: %w", err)
	}
	defer srv.Close()
	client, release, err := embeddedClient(srv, sess.settings)
	if err != nil {
		return nil, err
	}
	defer release()
	w.Client = client
	if err := w.Warm(ctx); err != nil {
		return nil, asUsage(err)
	}
	if err := applyScenario(srv, scenario); err != nil {
		return nil, err
	}
	multi, err := run(w, "multi-write account")
	if err != nil {
		return nil, err
	}
	return []hedgetest.WriteSummary{single, multi}, nil
}

// hedgeTestWritePolicy is the write retry policy the write phase's upserts use: the
// profile's or the environment's, as cosmosctl upsert's without its flag.
func hedgeTestWritePolicy(s config.Settings) retries.WritePolicy {
	switch s.WriteRetries.Policy {
	case config.WriteRetriesOn:
		return retries.WriteRetries
	case config.WriteRetriesTrackingID:
		return retries.WriteRetriesWithTrackingID
	}
	return retries.NoWriteRetries
}

// writeProgress shows on a terminal how far a write phase is.
func (o *hedgeTestOptions) writeProgress(io *IOStreams, name string, n int) func(done int) {
	if !io.ErrTTY {
		return nil
	}
	return func(done int) { fmt.Fprintf(io.ErrOut, "\r%-28s %d/%d writes", name, done, n) }
}

// writeWrites writes the write phase's section after the strategies table: one line per
// account, the error message inline when there is one, listed with counts when several.
func writeWrites(w io.Writer, writes []hedgetest.WriteSummary) {
	fmt.Fprintln(w, "\nwrites while the write region is down:")
	for _, s := range writes {
		line := fmt.Sprintf("%-22s%d of %d written", s.Account+" account:", s.Written, s.Attempted)
		if s.Written > 0 {
			var by []string
			for _, r := range s.Regions() {
				by = append(by, fmt.Sprintf("%s %d", r, s.WrittenByRegion[r]))
			}
			line += " (" + strings.Join(by, ", ") + "); p99 " + output.HumanDuration(msDur(s.P99Ms))
		}
		switch {
		case s.Failed == 0:
		case s.Failed == s.Attempted:
			line += "; each failed in at most " + output.HumanDuration(msDur(s.FailedMaxMs))
		default:
			line += fmt.Sprintf("; %d failed, each in at most %s", s.Failed, output.HumanDuration(msDur(s.FailedMaxMs)))
		}
		if s.Timeouts > 0 {
			line += fmt.Sprintf(" (%d ran out the end-to-end timeout)", s.Timeouts)
		}
		switch len(s.Errors) {
		case 0:
			fmt.Fprintln(w, "  "+line)
		case 1:
			fmt.Fprintln(w, "  "+line+": "+s.Errors[0].Message)
		default:
			fmt.Fprintln(w, "  "+line+":")
			for _, e := range s.Errors {
				fmt.Fprintf(w, "    %d× %s\n", e.Count, e.Message)
			}
		}
	}
}
