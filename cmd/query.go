package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	goio "io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/output"
	"github.com/cosmosctl/cosmosctl/query"
)

// queryOptions are the flags of `cosmosctl query`.
type queryOptions struct {
	conn         connFlags
	pk           string
	params       []string
	maxItems     int
	all          bool
	pageSize     int
	continuation string
	timeout      time.Duration
	parallelism  int
	explain      bool
	shards       shardFlags
}

// defaultQueryMaxItems is how many items a query returns unless told otherwise: a
// screenful to look at, and a bound on what an unfiltered query over a large container
// costs by accident. --all reads everything.
const defaultQueryMaxItems = 100

// maxQueryPageSize is the largest page the service serves (x-ms-max-item-count).
const maxQueryPageSize = 1000

const queryLong = `Run a SQL query and print its items, reading through the engine like read does:
the effective regions, --exclude and --region, the attempt and end-to-end
timeouts, and hedging, each of them per page: every page request is a read of its
own, retried, failed over and hedged with the same strategies (adaptive included,
which learns query pages apart from point reads).

With --pk the query runs within that partition key, where the service runs all
of it. A prefix of a hierarchical key (--pk '["acme"]' on /tenant,/user) is no
partition key the service takes: the query runs as across partitions, on the
ranges that hold the prefix's keys, each page narrowed to them (x-ms-start-epk,
x-ms-end-epk), as the JS SDK reads a prefix. Without --pk the query runs across partitions: cosmosctl asks the gateway
for the query plan and runs the rewritten query on each partition key range (4
page requests at once, --parallelism), merging on the client as the SDKs do: ORDER BY
(one or more paths) by a k-way merge, TOP and OFFSET … LIMIT after the merge,
DISTINCT, the aggregates COUNT, SUM, MIN, MAX and AVG (VALUE or not), and GROUP
BY. A range that splits during the query is replaced by its children, from where
it was. ORDER BY RANK (FullTextScore, RRF) runs as the service's hybrid search
plan: global statistics from every range, each component query on every range,
reciprocal rank fusion; it has no continuation token. A plan feature cosmosctl
does not run across partitions (a vector search) is an error naming it (exit 2):
give --pk to run it in one partition.

How much: the first --max-items items (default 100), then the command prints a
continuation token on stderr; --continuation TOKEN resumes after them, with every
item exactly once, and --all reads everything. The token is cosmosctl's own (not
the service's) and only fits the same query, parameters, --pk and container.

Parameters: --param @name=VALUE, repeatable, where VALUE is JSON (42, true,
"text", [1,2]) or else a plain string, as for --pk.

Output:
  -o table   (default) a column per top-level property, in the order first seen,
             system properties last, values on one line; on a terminal values and
             the table are cut to its width, and a footnote names the columns
             left out. The table is printed when the query ends.
  -o json    one object: items, complete, continuation, totals (request_charge,
             duration_ms, first_item_ms, contacted_regions) and every request
             with its diagnostics (pages[]). Printed when the query ends.
  -o ndjson  one item per line, compact, written as each page arrives, so that
             "| jq" starts at once; the continuation goes to stderr.

On a terminal stderr shows a progress line while a query runs longer than a
moment (pages, items, RU, elapsed) and one line of totals at the end;
--diagnostics prints a table of every request instead (its range, regions,
attempts, hedges, status, RU, duration and items) and the totals.

--e2e-timeout bounds each page; --timeout bounds the whole query. When either
runs out, or on Ctrl-C, what was read is printed (items already streamed stay)
with the continuation to resume from, and the exit code says why: 6 for a
timeout, 130 for Ctrl-C. Bad SQL is the service's 400 message (exit 2).

Queries are reads of the gateway: in direct mode they still go through the
gateway, as the SDKs' gateway query path does.
` + "Exit codes: cosmosctl help exit-codes."

func newQueryCmd(io *IOStreams) *cobra.Command {
	o := &queryOptions{}
	c := &cobra.Command{
		Use:   "query 'SQL' [--pk KEY] [--param @name=VALUE …]",
		Short: "Run a SQL query, hedged per page, within a partition or across partitions",
		Long:  queryLong + queryExplainHelp,
		Example: `  cosmosctl query "SELECT * FROM c WHERE c.status = 'stuck' ORDER BY c._ts DESC"
  cosmosctl query 'SELECT * FROM c WHERE c.tenant = @t' --param @t=acme --pk acme
  cosmosctl query 'SELECT * FROM c ORDER BY c._ts DESC' --pk '["acme"]'   # a prefix of /tenant,/user
  cosmosctl query 'SELECT c.id, c.total FROM c WHERE c.total > @min' --param @min=100 --all -o ndjson | jq -r .id
  cosmosctl query 'SELECT VALUE COUNT(1) FROM c' --hedge-threshold 100ms --diagnostics
  cosmosctl query 'SELECT * FROM c ORDER BY c._ts DESC' --max-items 20 --continuation "$TOKEN"
  cosmosctl query 'SELECT c.region, COUNT(1) AS n FROM c GROUP BY c.region' --exclude "East US" -o json
  cosmosctl query "SELECT * FROM c WHERE c.status = 'stuck'" --explain`,
		Args: exactArgs(1, "the SQL text, quoted as one argument"),
		RunE: func(c *cobra.Command, args []string) error {
			return o.run(c.Context(), io, args[0])
		},
	}
	o.conn.register(c)
	o.conn.withHedging(c.Flags())
	o.conn.withConsistency(c.Flags())
	o.conn.format.add(config.OutputNDJSON, config.OutputTSV)
	f := c.Flags()
	f.Lookup("output").Usage = "table, tsv, json or ndjson (one item a line, as pages arrive) ($COSMOSCTL_OUTPUT; default table)"
	f.Lookup("diagnostics").Usage = "print every request (the plan, the range reads, each page) and the totals on stderr, terminal or not"
	f.Lookup("e2e-timeout").Usage = "end-to-end timeout of each page request, retries and hedges included, e.g. 2s ($COSMOSCTL_E2E_TIMEOUT; default none)"
	f.StringVar(&o.pk, "pk", "", "run within this partition key: a JSON value, a JSON array for a hierarchical key or a prefix of one, or a plain string (default: across partitions)")
	f.StringArrayVar(&o.params, "param", nil, "a query parameter, @name=VALUE, VALUE JSON or a plain string; repeatable")
	f.IntVar(&o.maxItems, "max-items", defaultQueryMaxItems, "stop after this many items and print the continuation to resume from")
	f.BoolVar(&o.all, "all", false, "read every item (no --max-items limit)")
	f.IntVar(&o.pageSize, "page-size", 0, fmt.Sprintf("items per page request, 1 to %d (default: %d with --all, as export; else --max-items, %d at most)", maxQueryPageSize, defaultExportPageSize, maxQueryPageSize))
	f.StringVar(&o.continuation, "continuation", "", "resume after the items of an earlier run of the same query (its printed continuation token)")
	f.DurationVar(&o.timeout, "timeout", 0, "bound on the whole query, e.g. 30s (default none; --e2e-timeout bounds each page)")
	f.IntVar(&o.parallelism, "parallelism", query.DefaultParallelism, fmt.Sprintf("page requests in flight at once across partition key ranges, 1 to %d", query.MaxParallelism))
	o.shards.register(f)
	f.BoolVar(&o.explain, "explain", false, "print how the service ran the query (per range: RU, server time, documents retrieved vs output; indexes; a policy change; advice), not its items")
	return c
}

// validate checks the flags that need no I/O and builds the query.
// open checks the query and its --pk, then opens the session a run and --explain
// both need.
func (o *queryOptions) open(ctx context.Context, io *IOStreams, sql string) (cosmos.QuerySpec, cosmos.PartitionKey, *session, error) {
	var pk cosmos.PartitionKey
	spec, err := o.validate(sql)
	if err != nil {
		return spec, pk, nil, err
	}
	if o.conn.flags.Changed("pk") {
		if pk, err = parsePartitionKey(o.pk); err != nil {
			return spec, pk, nil, err
		}
	}
	sess, err := o.conn.open(ctx, io)
	return spec, pk, sess, err
}

func (o *queryOptions) validate(sql string) (cosmos.QuerySpec, error) {
	fl := o.conn.flags
	switch {
	case strings.TrimSpace(sql) == "":
		return cosmos.QuerySpec{}, usageErrorf("the query is empty: give the SQL text, e.g. 'SELECT * FROM c'")
	case o.all && fl.Changed("max-items"):
		return cosmos.QuerySpec{}, usageErrorf("--all reads every item and --max-items stops after some: give one of them")
	case o.maxItems < 1:
		return cosmos.QuerySpec{}, usageErrorf("--max-items must be at least 1, not %d (--all reads every item)", o.maxItems)
	case fl.Changed("page-size") && (o.pageSize < 1 || o.pageSize > maxQueryPageSize):
		return cosmos.QuerySpec{}, usageErrorf("--page-size must be between 1 and %d, not %d", maxQueryPageSize, o.pageSize)
	case o.timeout < 0:
		return cosmos.QuerySpec{}, usageErrorf("--timeout must not be negative (got %s); give a duration such as 30s", o.timeout)
	case o.parallelism < 1 || o.parallelism > query.MaxParallelism:
		return cosmos.QuerySpec{}, usageErrorf("--parallelism must be between 1 and %d, not %d", query.MaxParallelism, o.parallelism)
	case fl.Changed("pk") && (fl.Changed("shard") || fl.Changed("feed-range")):
		return cosmos.QuerySpec{}, usageErrorf("--pk runs the query within one partition key, which lives in one range: leave out %s", o.shards.flagName())
	case o.explain && (fl.Changed("shard") || fl.Changed("feed-range")):
		return cosmos.QuerySpec{}, usageErrorf("--explain shows how the service runs the whole query: leave out %s", o.shards.flagName())
	}
	if off, bad := invalidUTF8(sql); bad {
		return cosmos.QuerySpec{}, usageErrorf("the query is not valid UTF-8 (byte offset %d)", off)
	}
	spec := cosmos.QuerySpec{Query: sql}
	seen := map[string]bool{}
	for _, p := range o.params {
		qp, err := parseQueryParam(p)
		if err != nil {
			return spec, err
		}
		if seen[qp.Name] {
			return spec, usageErrorf("--param %s is given twice: give each parameter once", qp.Name)
		}
		seen[qp.Name] = true
		spec.Parameters = append(spec.Parameters, qp)
	}
	return spec, nil
}

var paramName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^@[A-Za-z_][A-Za-z0-9_]*$`) })

// parseQueryParam reads one --param @name=VALUE: VALUE is JSON, or else a plain string.
func parseQueryParam(s string) (cosmos.QueryParameter, error) {
	if off, bad := invalidUTF8(s); bad {
		return cosmos.QueryParameter{}, usageErrorf("--param is not valid UTF-8 (byte offset %d)", off)
	}
	name, value, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	switch {
	case !ok:
		return cosmos.QueryParameter{}, usageErrorf("--param %q has no value: give it as @name=VALUE, e.g. --param @status='\"stuck\"' or --param @min=10", s)
	case !paramName().MatchString(name):
		return cosmos.QueryParameter{}, usageErrorf("--param %q: the name must be @ and a letter or _, then letters, digits or _ (as the query writes it), e.g. @status", s)
	}
	raw := json.RawMessage(strings.TrimSpace(value))
	if len(raw) == 0 || !json.Valid(raw) {
		raw, _ = json.Marshal(value)
	}
	return cosmos.QueryParameter{Name: name, Value: raw}, nil
}

// errQueryTimeout is the cause of a query that ran out of --timeout.
var errQueryTimeout = errors.New("query timeout")

func (o *queryOptions) run(ctx context.Context, io *IOStreams, sql string) error {
	if o.explain {
		return o.explainQuery(ctx, io, sql)
	}
	spec, pk, sess, err := o.open(ctx, io, sql)
	if err != nil {
		return err
	}
	defer sess.Close()
	page, err := o.conn.readTemplate(ctx, sess)
	if err != nil {
		return err
	}
	keys, err := resolveKeyScope(ctx, sess, o.pk, pk)
	if err != nil {
		return err
	}
	asked, err := o.shards.asked(getenv)
	if err != nil {
		return err
	}
	scope, err := resolveScope(ctx, sess, io, nil, asked)
	if err != nil {
		return queryError(err)
	}
	qo := query.Options{Client: sess.client, Database: sess.settings.Database, Container: sess.settings.Container,
		Spec: spec, PartitionKey: keys.key, PartitionKeyPrefix: keys.prefix, PageSize: o.pageSize, Continuation: o.continuation, Parallelism: o.parallelism, Page: page}
	if scope != nil {
		iv := scope.EPK()
		qo.FeedRange = &iv
	}
	if o.all && !o.conn.flags.Changed("page-size") {
		// The pages export reads: the fewest requests for every item.
		qo.PageSize = defaultExportPageSize
	}
	if !o.all {
		qo.MaxItems = o.maxItems
		if !o.conn.flags.Changed("page-size") {
			// Pages no larger than what the run returns: a page of 100 for 5 items
			// would be read and paid for, then read again cut to size.
			qo.PageSize = min(o.maxItems, maxQueryPageSize)
		}
	}
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.timeout, errQueryTimeout)
		defer cancel()
	}
	run := &queryRun{o: o, io: io, lines: output.ItemLineWriter{W: io.Out}, sess: sess, spec: spec, keys: keys, format: sess.settings.Output, start: time.Now(), firstItem: -1}
	// -o ndjson writes each page's items out before it asks for the next (read): their
	// buffer can serve a later page. The other formats keep every item to the end.
	qo.ReuseItemMemory = run.format == config.OutputNDJSON
	it, err := query.Run(ctx, qo)
	if err != nil {
		return queryError(err)
	}
	defer it.Close()
	run.progress = startQueryProgress(io, run.format)
	runErr := run.read(ctx, it)
	it.Close()
	run.progress.stop()
	return run.finish(ctx, it, runErr)
}

// queryRun is one run of the query: what it read so far and how it is shown.
type queryRun struct {
	o         *queryOptions
	io        *IOStreams
	lines     output.ItemLineWriter // -o ndjson's, on io.Out
	sess      *session
	spec      cosmos.QuerySpec
	keys      keyScope
	format    string
	start     time.Time
	firstItem time.Duration
	items     []json.RawMessage  // kept for table and json
	pages     []output.QueryPage // kept for json and --diagnostics
	pageN     int                // the pages the pipeline reported so far
	progress  *queryProgress
}

// read takes the query's items and requests until it ends; items stream out as they
// come with -o ndjson.
func (r *queryRun) read(ctx context.Context, it *query.Iterator) error {
	for {
		items, info, err := it.Next(ctx)
		if info != nil {
			r.pageN++
			if r.o.conn.diagnosticsJSON {
				r.o.conn.eventsTo(r.io).emit(pageEvent{"page", output.NewQueryPage(r.pageN, *info)})
			}
			// Kept only for what prints them: a long query has many pages.
			if r.format == config.OutputJSON || r.o.conn.diagnostics && !r.o.conn.diagnosticsJSON {
				r.pages = append(r.pages, output.NewQueryPage(r.pageN, *info))
			}
		}
		if len(items) > 0 {
			if r.firstItem < 0 {
				r.firstItem = time.Since(r.start)
			}
			if r.format == config.OutputNDJSON {
				if werr := r.lines.Write(items); werr != nil {
					return werr
				}
			} else {
				r.items = append(r.items, items...)
			}
		}
		r.progress.update(it.Stats())
		switch {
		case errors.Is(err, goio.EOF):
			return nil
		case err != nil:
			return err
		}
	}
}

// finish prints what the run read, how to resume it, and what it cost, and returns the
// command's error.
func (r *queryRun) finish(ctx context.Context, it *query.Iterator, runErr error) error {
	stats := it.Stats()
	stats.Duration = time.Since(r.start) // from where the first item's time counts too
	totals := output.NewQueryTotals(stats, r.firstItem)
	token := it.Continuation()
	complete := runErr == nil && token == "" && it.Unresumable() == ""
	err := r.commandError(ctx, runErr, totals.Items)
	st := r.o.conn.styles(r.io)
	switch r.format {
	case config.OutputJSON:
		obj := &output.QueryObject{Query: r.spec.Query, Parameters: r.spec.Parameters, PartitionKey: json.RawMessage("null"),
			Items: r.items, Complete: complete, Totals: totals, Pages: r.pages, Error: output.ErrorOf(err)}
		if obj.Parameters == nil {
			obj.Parameters = []cosmos.QueryParameter{}
		}
		if obj.Items == nil {
			obj.Items = []json.RawMessage{}
		}
		if obj.Pages == nil {
			obj.Pages = []output.QueryPage{}
		}
		if k := r.keys.json(); k != "" {
			obj.PartitionKey = json.RawMessage(k)
		}
		obj.PartitionKeyPrefix = r.keys.prefix != nil
		if token != "" {
			obj.Continuation = &token
		}
		if u := it.Unresumable(); u != "" {
			obj.Unresumable = &u
		}
		classifyFailure(obj.Error, err)
		if werr := output.WriteJSON(r.io.Out, obj); werr != nil {
			return werr
		}
	case config.OutputNDJSON:
		// The items went out as they came.
	default:
		if werr := output.WriteQueryItems(r.io.Out, r.io.outStyles(r.o.conn.noColor), r.items); werr != nil {
			return werr
		}
	}
	if r.format != config.OutputJSON {
		switch {
		case r.o.conn.diagnosticsJSON:
			// Each page went out as an event.
		case r.o.conn.diagnostics:
			head := output.QueryHead{Query: r.spec.Query, Scope: r.scope(), Hedging: r.hedging(), E2ETimeout: r.sess.settings.E2ETimeout}
			_ = output.WriteQueryPages(r.io.ErrOut, st, head, r.pages, totals)
		case r.o.conn.terminalDiagnostics(r.io) && totals.Pages > 0:
			fmt.Fprintln(r.io.ErrOut, st.Faint(output.QuerySummary(totals)))
		}
		if status, _, _ := cosmos.Status(runErr); status != http.StatusBadRequest {
			// A 400 refuses the query itself: resuming it would only be refused again.
			r.resumeNote(token, it.Unresumable(), complete, runErr != nil, totals.Items)
		}
	}
	return err
}

// resumeNote tells a person (stderr) how to go on when the query has more.
func (r *queryRun) resumeNote(token, unresumable string, complete, failed bool, items int) {
	if complete {
		return
	}
	what := "more results"
	if failed {
		what = fmt.Sprintf("the query stopped after %s", output.HumanCount(items, "item"))
	}
	switch {
	case token != "":
		more := ""
		if !failed && !r.o.all {
			more = ", or read everything with --all"
		}
		fmt.Fprintf(r.io.ErrOut, "cosmosctl: %s: resume with --continuation %s%s\n", what, token, more)
	case unresumable != "":
		fmt.Fprintf(r.io.ErrOut, "cosmosctl: %s, but it cannot be resumed: %s\n", what, unresumable)
	}
}

// commandError is the command's error for how the run ended: nil, an interruption
// (130), the --timeout (6), bad input (2), or what the service answered.
func (r *queryRun) commandError(ctx context.Context, err error, items int) error {
	switch {
	case err == nil:
		return nil
	case context.Cause(ctx) == errQueryTimeout:
		return fmt.Errorf("the query ran out of --timeout %s after %s: %w", r.o.timeout, output.HumanCount(items, "item"), context.DeadlineExceeded)
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		return &InterruptedError{What: fmt.Sprintf("query after %s", output.HumanCount(items, "item"))}
	}
	return queryError(err)
}

// queryError makes the pipeline's refusals usage errors: a feature it cannot run across
// partitions, a continuation token of another query, options the engine refused.
func queryError(err error) error {
	var ue *query.UnsupportedError
	if errors.As(err, &ue) {
		return &UsageError{Err: err}
	}
	return asUsage(err)
}

func (r *queryRun) scope() string {
	if r.keys.key != nil {
		return r.keys.describe()
	}
	ranges := map[string]bool{}
	for _, p := range r.pages {
		if p.RangeID != "" {
			ranges[p.RangeID] = true
		}
	}
	read := output.HumanCount(len(ranges), "partition key range")
	if r.keys.prefix != nil {
		return fmt.Sprintf("%s, across partitions (%s read)", r.keys.describe(), read)
	}
	return fmt.Sprintf("across partitions (%s read)", read)
}

// hedging is the strategy as the first page's diagnostics describe it.
func (r *queryRun) hedging() string {
	for _, p := range r.pages {
		if p.Diagnostics != nil && p.Diagnostics.HedgeConfig != "" {
			return p.Diagnostics.HedgeConfig
		}
	}
	return ""
}
