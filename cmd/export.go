package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/changefeed"
	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/export"
	"github.com/cosmosctl/cosmosctl/internal/progress"
	"github.com/cosmosctl/cosmosctl/internal/shardscope"
	"github.com/cosmosctl/cosmosctl/output"
	"github.com/cosmosctl/cosmosctl/query"
	"github.com/cosmosctl/cosmosctl/shard"
)

// exportOptions are the flags of `cosmosctl export`.
type exportOptions struct {
	conn       connFlags
	query      string
	params     []string
	pk         string
	outputFile string
	state      string
	maxRU      float64
	// maxRUPerShard is --max-ru-per-second-per-shard: with --shard, this shard's cap
	// instead of its 1/N share of --max-ru-per-second.
	maxRUPerShard   float64
	stripSystem     bool
	stripTrackingID bool
	pageSize        int
	parallelism     int
	progress        string
	source          string
	manifest        string
	shards          shardFlags
}

// exportCheckpointEvery is the least time between two checkpoints of an export with
// --state: each syncs the output and replaces the state file, which a page every few
// milliseconds would make the export's bottleneck. A resumed run reads again at most
// this much.
var exportCheckpointEvery = time.Second

// exportCheckpointEveryLinked, when set at link time (go build -ldflags "-X
// github.com/cosmosctl/cosmosctl/cmd.exportCheckpointEveryLinked=100ms"), replaces
// exportCheckpointEvery: the tests that stop the binary build one that checkpoints more
// often, so that it can be stopped after a checkpoint sooner. A release build leaves it
// empty.
var exportCheckpointEveryLinked string

func init() {
	if d, err := time.ParseDuration(exportCheckpointEveryLinked); err == nil && d > 0 {
		exportCheckpointEvery = d
	}
}

// defaultExportPageSize is the page an export asks for: the largest the service serves,
// the fewest requests for the items.
const defaultExportPageSize = maxQueryPageSize

// exportWholeContainer is the query of an export given no --query.
const exportWholeContainer = "SELECT * FROM c"

const exportLong = `Copy a container's items to NDJSON, one item a line, on stdout or into
--output-file FILE, a page at a time: the export holds one page, never the whole
container. -o ndjson is its only format (the default); --jq EXPR writes what the
expression makes of each item instead (--jq 'del(._rid)', --jq .id).
(--output FILE, which named the file before -o/--output became the format on every
command, still works for one release, with a warning.)

What is read: with --query (and --param, --pk as for query) the items of that
query, through the query pipeline; with --pk alone the items of that partition
key (or of every key that starts with a prefix of a hierarchical key, --pk
'["acme"]', read range by range as query reads a prefix); with neither, every
item of the container ("SELECT * FROM c" across partitions). --source change-feed reads a snapshot of the change feed instead
(every item, or those of --pk). Each page is a read of its own, as for query:
the effective regions, --exclude and --region, attempt timeouts, hedging,
failover, so that an export goes on when a region hangs, refuses or throttles.

What the file holds when the container changes during the export:
  --source query (default): every item that exists from the start of the export
    to its end is in the file exactly once, in the version it had when its page
    was read (a range is read in the order of the items' resource ids, given at
    creation and kept by updates). An item created during the export is there if
    its range had not been read to the end; one deleted during the export is
    there if its page was read before the delete. It is not a point-in-time copy.
  --source change-feed: each range read from the beginning up to the position it
    had at the start (latest version mode, where an item is in the feed once, at
    its latest change). Nothing created after the start is there; an item not
    changed since the start is there once, as it was; an item updated or deleted
    after the start is there, as it was at the start, if its range had read it
    by then, and missing otherwise (its one entry moved past the start, or left
    the feed). Items carry _lsn. The query is the default: it has no such gap.

System properties: --strip-system drops _rid, _self, _etag, _ts and
_attachments from every item (the top-level ones; a nested property of the same
name stays), and --strip-tracking-id the _trackingId that cosmosctl's retried
writes leave in items, so that the file re-imports as the items were written.

Resume: with --state FILE (and --output-file FILE) the export saves a checkpoint —
the position of the query, or of every range's feed, and the length of the
output file after the last page written, the file synced first — at most once a
second, when it ends, and when it stops (an error, Ctrl-C). Run the same
command again and it cuts the file back to the checkpoint's length and reads on
from its position, so the file holds every item exactly once however often the
export was interrupted or killed. A state file is bound to the account,
database, container, source, query, parameters, --pk, the stripped properties
and the output file; anything else is refused (exit 2). Once the export is
complete a run with its state does nothing. --state needs --output-file: stdout
cannot be cut back to a checkpoint.

Rate: --max-ru-per-second caps the request units the export spends (the limit
is applied between pages, so a page costs what it costs; pages are read one at a
time unless --parallelism says otherwise), and a throttled page (429) lowers the
rate further; without it the export reads --parallelism pages at once, backing
off only as the engine's retries do.

Stopping: on Ctrl-C the export writes the state (with --state) and exits 130,
saying how to resume; a page the regions could not serve ends the export with
the service's exit code, the state saved the same way. Bad input is one line and
exit 2.
` + "Exit codes: cosmosctl help exit-codes."

func newExportCmd(io *IOStreams) *cobra.Command {
	o := &exportOptions{}
	c := &cobra.Command{
		Use:   "export [--query SQL] [--pk KEY] [--output-file FILE] [--state FILE]",
		Short: "Copy a container's items (or a query's) to NDJSON, resumable, with every item once",
		Long:  exportLong,
		Example: `  cosmosctl export > items.ndjson
  cosmosctl export --output-file items.ndjson --state items.state --strip-system --strip-tracking-id
  cosmosctl export --query 'SELECT * FROM c WHERE c.status = @s' --param @s=stuck --output-file stuck.ndjson
  cosmosctl export --pk tenant-7 --max-ru-per-second 400 | gzip > tenant-7.ndjson.gz`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("export takes no arguments, got %q: give a query with --query 'SQL'", strings.Join(args, " "))
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			return o.run(c.Context(), io)
		},
	}
	c.AddCommand(newExportMergeCmd(io))
	o.conn.formats = []string{config.OutputNDJSON}
	o.conn.register(c)
	o.conn.format.streams()
	o.conn.format.stdoutIsData()
	o.conn.format.filtersItself = true
	o.conn.withHedging(c.Flags())
	o.conn.withConsistency(c.Flags())
	f := c.Flags()
	_ = f.MarkHidden("diagnostics") // an export has thousands of requests: --progress counts them
	f.Lookup("e2e-timeout").Usage = "end-to-end timeout of each page request, retries and hedges included, e.g. 2s ($COSMOSCTL_E2E_TIMEOUT; default none)"
	f.StringVar(&o.query, "query", "", "export the items of this SQL query (default: every item, "+exportWholeContainer+")")
	f.StringArrayVar(&o.params, "param", nil, "a parameter of --query, @name=VALUE, VALUE JSON or a plain string; repeatable")
	f.StringVar(&o.pk, "pk", "", "export within this partition key only: a JSON value, a JSON array for a hierarchical key or a prefix of one, or a plain string")
	f.Lookup("output").Usage = "ndjson, one item a line: export's only format (--output FILE, the file before, is deprecated: --output-file)"
	f.Lookup("jq").Usage = "write what this jq expression (gojq) makes of each item instead of the item, e.g. 'del(._rid)' or .id (strings raw)"
	f.StringVar(&o.outputFile, "output-file", "", "write the NDJSON to this file (created, or emptied unless --state resumes it) instead of stdout")
	f.StringVar(&o.state, "state", "", "checkpoint to this file and resume from it when it exists (needs --output-file)")
	f.Float64Var(&o.maxRU, "max-ru-per-second", 0, "spend at most this many request units a second (default: no cap); with --shard, the total of all N shards, each keeping to 1/N of it")
	f.Float64Var(&o.maxRUPerShard, "max-ru-per-second-per-shard", 0, shardRUHelp)
	f.BoolVar(&o.stripSystem, "strip-system", false, "drop the system properties _rid, _self, _etag, _ts and _attachments from every item")
	f.BoolVar(&o.stripTrackingID, "strip-tracking-id", false, "drop the _trackingId cosmosctl's write retries leave in items")
	f.IntVar(&o.pageSize, "page-size", defaultExportPageSize, fmt.Sprintf("items per page request, 1 to %d", maxQueryPageSize))
	f.IntVar(&o.parallelism, "parallelism", query.DefaultParallelism, fmt.Sprintf("page requests in flight at once across partition key ranges, 1 to %d (default 1 with --max-ru-per-second)", query.MaxParallelism))
	f.StringVar(&o.source, "source", export.SourceQuery, "what to read: query (the query pipeline, default) or change-feed (a snapshot of the change feed at the start)")
	o.shards.register(f)
	f.StringVar(&o.manifest, "manifest", "", "with --shard or --feed-range, write the shard's manifest (its spec, interval, output file, item count, complete or not) to this file (default: the --output-file's name + "+export.ManifestSuffix+")")
	f.StringVar(&o.progress, "progress", "", "progress on stderr: bar, json (NDJSON events) or off (default: bar on a terminal, else off)")
	return c
}

// outputFormats are what --output means as a format on any command: a value of export's
// --output that is none of them is the file it named before --output-file (deprecated).
var outputFormats = map[string]bool{config.OutputJSON: true, config.OutputTable: true, config.OutputNDJSON: true, config.OutputTSV: true, "text": true}

// longOutputFlag says whether --output was spelt out among args (-o never named export's
// file).
func longOutputFlag(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--output" || strings.HasPrefix(a, "--output=") {
			return true
		}
	}
	return false
}

// deprecatedOutputFile takes export's --output FILE, the file before -o/--output became
// the format on every command, as --output-file FILE, for one release, with a warning.
func (o *exportOptions) deprecatedOutputFile(io *IOStreams) error {
	fl := o.conn.flags
	v := o.conn.format.output
	if !fl.Changed("output") || outputFormats[strings.ToLower(strings.TrimSpace(v))] || !longOutputFlag(io.args) {
		return nil // a format (or -o, which never named a file): checked as one
	}
	if v == "" {
		return usageErrorf("--output is empty: the file is --output-file FILE (leave it out for stdout); -o/--output is the format, ndjson")
	}
	if fl.Changed("output-file") {
		return usageErrorf("--output %s and --output-file %s: the file is --output-file; --output is the format (ndjson)", v, o.outputFile)
	}
	fmt.Fprintf(io.ErrOut, "cosmosctl: warning: export --output FILE is deprecated: -o/--output is the format on every command; write --output-file %s (--output FILE stops working in the next release)\n", v)
	o.outputFile, o.conn.format.output = v, config.OutputNDJSON
	return nil
}

// validate checks the flags that need no I/O and builds the query.
func (o *exportOptions) validate() (cosmos.QuerySpec, cosmos.PartitionKey, error) {
	fl := o.conn.flags
	var pk cosmos.PartitionKey
	switch {
	case fl.Changed("query") && strings.TrimSpace(o.query) == "":
		return cosmos.QuerySpec{}, nil, usageErrorf("--query is empty: give the SQL text, e.g. --query 'SELECT * FROM c', or leave it out to export every item")
	case len(o.params) > 0 && !fl.Changed("query"):
		return cosmos.QuerySpec{}, nil, usageErrorf("--param is a parameter of --query: give the query that uses it")
	case fl.Changed("output-file") && o.outputFile == "":
		return cosmos.QuerySpec{}, nil, usageErrorf("--output-file is empty: give the file to write, or leave it out for stdout")
	case o.state != "" && o.outputFile == "":
		return cosmos.QuerySpec{}, nil, usageErrorf("--state needs --output-file FILE: a resumed export cuts its file back to the last checkpoint, which it cannot do to stdout")
	case fl.Changed("state") && o.state == "":
		return cosmos.QuerySpec{}, nil, usageErrorf("--state is empty: give the checkpoint file, e.g. --state items.state")
	case o.state != "" && samePath(o.state, o.outputFile):
		return cosmos.QuerySpec{}, nil, usageErrorf("--state and --output-file are the same file (%s): give the checkpoint a file of its own", o.state)
	case fl.Changed("pk") && (fl.Changed("shard") || fl.Changed("feed-range")):
		return cosmos.QuerySpec{}, nil, usageErrorf("--pk exports one partition key (or prefix), which a shard would cut: leave out %s, or --pk", o.shards.flagName())
	case fl.Changed("manifest") && !fl.Changed("shard") && !fl.Changed("feed-range"):
		return cosmos.QuerySpec{}, nil, usageErrorf("--manifest is a shard's: give --shard i/N or --feed-range as well")
	case fl.Changed("manifest") && o.outputFile == "":
		return cosmos.QuerySpec{}, nil, usageErrorf("--manifest needs --output-file FILE: export merge combines the shards' files, which stdout is not")
	case o.maxRU < 0:
		return cosmos.QuerySpec{}, nil, usageErrorf("--max-ru-per-second must not be negative (got %g); leave it out for no cap", o.maxRU)
	case o.maxRUPerShard < 0 || o.maxRUPerShard != o.maxRUPerShard:
		return cosmos.QuerySpec{}, nil, usageErrorf("--max-ru-per-second-per-shard must be 0 (no cap) or more, not %v", o.maxRUPerShard)
	case o.maxRUPerShard > 0 && !o.conn.flags.Changed("shard"):
		return cosmos.QuerySpec{}, nil, usageErrorf("--max-ru-per-second-per-shard applies to a shard: give --shard i/N, or use --max-ru-per-second")
	case o.pageSize < 1 || o.pageSize > maxQueryPageSize:
		return cosmos.QuerySpec{}, nil, usageErrorf("--page-size must be between 1 and %d, not %d", maxQueryPageSize, o.pageSize)
	case o.parallelism < 1 || o.parallelism > query.MaxParallelism:
		return cosmos.QuerySpec{}, nil, usageErrorf("--parallelism must be between 1 and %d, not %d", query.MaxParallelism, o.parallelism)
	}
	switch o.progress {
	case "", "bar", "json", "off":
	default:
		return cosmos.QuerySpec{}, nil, usageErrorf("--progress must be bar, json or off, not %q", o.progress)
	}
	switch {
	case o.source != export.SourceQuery && o.source != export.SourceChangeFeed:
		return cosmos.QuerySpec{}, nil, usageErrorf("--source must be query or change-feed, not %q", o.source)
	case o.source == export.SourceChangeFeed && fl.Changed("query"):
		return cosmos.QuerySpec{}, nil, usageErrorf("--query runs through the query pipeline: leave out --source change-feed, which reads every item of the container (or of --pk)")
	}
	if fl.Changed("pk") {
		var err error
		if pk, err = parsePartitionKey(o.pk); err != nil {
			return cosmos.QuerySpec{}, nil, err
		}
	}
	spec := cosmos.QuerySpec{Query: exportWholeContainer}
	if fl.Changed("query") {
		if off, bad := invalidUTF8(o.query); bad {
			return spec, nil, usageErrorf("--query is not valid UTF-8 (byte offset %d)", off)
		}
		spec.Query = o.query
	}
	seen := map[string]bool{}
	for _, p := range o.params {
		qp, err := parseQueryParam(p)
		if err != nil {
			return spec, nil, err
		}
		if seen[qp.Name] {
			return spec, nil, usageErrorf("--param %s is given twice: give each parameter once", qp.Name)
		}
		seen[qp.Name] = true
		spec.Parameters = append(spec.Parameters, qp)
	}
	return spec, pk, nil
}

// samePath says whether a and b name the same file, as far as can be told without it.
func samePath(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	if err1 != nil || err2 != nil {
		return a == b
	}
	if aa == bb {
		return true
	}
	ia, err1 := os.Stat(aa)
	ib, err2 := os.Stat(bb)
	return err1 == nil && err2 == nil && os.SameFile(ia, ib)
}

// strip is the top-level properties the flags drop.
func (o *exportOptions) strip() []string {
	var out []string
	if o.stripSystem {
		out = append(out, export.SystemProperties...)
		out = append(out, export.FeedProperties...)
	}
	if o.stripTrackingID {
		out = append(out, export.TrackingIDProperty)
	}
	return out
}

func (o *exportOptions) run(ctx context.Context, io *IOStreams) error {
	if err := o.deprecatedOutputFile(io); err != nil {
		return err
	}
	spec, pk, err := o.validate()
	if err != nil {
		return err
	}
	// stderr is NDJSON for a program to read: no notice may break into it.
	io.errJSON = o.progress == "json"
	// Before any connection: a file that cannot be written is found before the export
	// costs anything, and a state that cannot be used before the output is touched.
	var outPath string
	if o.outputFile != "" {
		if outPath, err = filepath.Abs(o.outputFile); err != nil {
			return usageErrorf("--output-file %s: %v", o.outputFile, err)
		}
	}
	asked, err := o.shards.asked(getenv)
	if err != nil {
		return err
	}
	if asked != nil && asked.Count > 0 {
		// With --shard the cap is the whole job's: this shard spends its share.
		o.maxRU = shardRULimit(o.maxRU, o.maxRUPerShard, shard.Spec{Index: asked.Index, Count: asked.Count})
	}
	var loaded *export.State
	var recorded *shardscope.Scope
	if o.state != "" {
		if loaded, err = export.LoadState(o.state); err != nil {
			return asStateError(err)
		}
		if loaded != nil {
			recorded = loaded.Shard
			if err := checkRecorded(o.state, recorded, asked); err != nil {
				return err
			}
		}
	}
	manifestPath := o.manifest
	if manifestPath == "" && asked != nil && outPath != "" {
		manifestPath = outPath + export.ManifestSuffix
	}
	if err := checkWritable(outputPath{flag: "--output-file", path: o.outputFile}, outputPath{flag: "--state", path: o.state, replaced: true},
		outputPath{flag: "--manifest", path: manifestPath, replaced: true}); err != nil {
		return err
	}
	settings, err := o.conn.resolve(io)
	if err != nil {
		return err
	}
	sess, err := o.conn.connect(ctx, io, settings)
	if err != nil {
		return err
	}
	defer sess.Close()
	page, err := o.conn.readTemplate(ctx, sess)
	if err != nil {
		return err
	}

	scope, err := resolveScope(ctx, sess, io, recorded, asked)
	if err != nil {
		return o.commandError(ctx, err, "0 items")
	}
	binding := export.Binding{Shard: scope, Endpoint: o.accountName(sess), Database: sess.settings.Database, Container: sess.settings.Container,
		Source: o.source, Query: spec.Query, Strip: o.strip(), Output: outPath, Filter: o.conn.format.jq}
	if o.source == export.SourceChangeFeed {
		binding.Query = ""
	}
	if len(spec.Parameters) > 0 {
		binding.Parameters, _ = json.Marshal(spec.Parameters)
	}
	if pk != nil {
		binding.PartitionKey = json.RawMessage(pk.JSON())
	}
	var manifest *export.Manifest
	if scope != nil && manifestPath != "" {
		manifest = export.NewManifest(binding)
	}
	state := loaded
	if state != nil {
		if err := state.Check(o.state, binding); err != nil {
			return asStateError(err)
		}
		if state.Complete {
			if manifest != nil {
				manifest.Complete, manifest.Items, manifest.Bytes = true, state.Items, state.OutputBytes
				if err := manifest.Save(manifestPath, time.Now()); err != nil {
					return err
				}
			}
			fmt.Fprintf(io.ErrOut, "cosmosctl: the export in %s is complete (%s in %s): nothing to do; delete %s to export again\n",
				o.state, output.HumanCount(int(state.Items), "item"), o.outputFile, o.state)
			return nil
		}
	} else if o.state != "" {
		state = export.NewState(binding)
	}

	parallelism := o.parallelism
	if o.maxRU > 0 && !o.conn.flags.Changed("parallelism") {
		// One page at a time: pages read ahead in parallel would be spent before the
		// limiter could hold them back.
		parallelism = 1
	}
	var position json.RawMessage
	if state != nil {
		position = state.Position
	}
	var src export.Source
	keys, err := resolveKeyScope(ctx, sess, o.pk, pk)
	if err != nil {
		return err
	}
	if o.source == export.SourceChangeFeed {
		fo := changefeed.Options{Client: sess.client, Database: sess.settings.Database, Container: sess.settings.Container,
			PartitionKey: keys.key, PartitionKeyPrefix: keys.prefix, PageSize: o.pageSize, Parallelism: parallelism, Page: page}
		fo.Scope = scope
		src, err = export.NewFeedSource(ctx, fo, position)
	} else {
		qo := query.Options{Client: sess.client, Database: sess.settings.Database, Container: sess.settings.Container,
			Spec: spec, PartitionKey: keys.key, PartitionKeyPrefix: keys.prefix, PageSize: o.pageSize, Parallelism: parallelism, Page: page}
		if scope != nil {
			iv := scope.EPK()
			qo.FeedRange = &iv
		}
		src, err = export.NewQuerySource(ctx, qo, position)
	}
	if err != nil {
		return o.commandError(ctx, err, "0 items")
	}
	defer src.Close()

	eo := export.Options{Source: src, Out: io.Out, Strip: o.strip(), Limiter: newExportLimiter(o.maxRU)}
	if code, _ := o.conn.format.code(); code != nil {
		eo.Filter = func(lines []byte) ([]byte, error) { return filterLines(code, lines) }
	}
	var file *os.File
	if outPath != "" {
		if file, err = export.OpenOutput(outPath, loaded); err != nil {
			return usageErrorf("--output-file %s: %v", o.outputFile, unwrapPath(err))
		}
		defer file.Close()
		eo.Out, eo.Sync = file, file.Sync
	}
	if state != nil {
		eo.State, eo.StatePath, eo.CheckpointEvery = state, o.state, exportCheckpointEvery
	}
	mode := exportProgressMode(io, o.progress, o.outputFile == "")
	var total int64
	if mode != progress.Off && pk == nil && scope == nil && !o.conn.flags.Changed("query") { // a shard holds an unknown share
		total = containerItems(ctx, sess)
	}
	prog := startExportProgress(io, mode, total)
	eo.Progress = prog.update
	start := time.Now()
	if manifest != nil {
		// Before the first page: a shard killed before it completed leaves a manifest
		// that says so, for export merge to name.
		if state != nil {
			manifest.Items, manifest.Bytes = state.Items, state.OutputBytes
		}
		if err := manifest.Save(manifestPath, start); err != nil {
			return err
		}
	}
	res, runErr := export.Run(ctx, eo)
	prog.stop()
	src.Close()
	if file != nil {
		if cerr := file.Close(); cerr != nil && runErr == nil {
			runErr = cerr
		}
	}
	if manifest != nil {
		manifest.Complete, manifest.Items, manifest.Bytes = res.Complete && runErr == nil, res.Items, res.Bytes
		if err := manifest.Save(manifestPath, time.Now()); err != nil && runErr == nil {
			runErr = err
		}
	}
	return o.finish(ctx, io, res, runErr, time.Since(start), loaded != nil)
}

// accountName is what a state file binds the account by: its endpoint, or the embedded
// emulator, whose ports change from run to run but whose data does not.
func (o *exportOptions) accountName(sess *session) string {
	switch {
	case !sess.settings.Configured() && o.conn.ephemeral:
		// Its data is gone with the process: no later run can resume this export.
		return fmt.Sprintf("cosmosctl embedded emulator in memory (pid %d)", os.Getpid())
	case !sess.settings.Configured():
		return "cosmosctl embedded emulator"
	}
	return sess.settings.Endpoint
}

// finish says how the export ended on stderr, and returns the command's error.
func (o *exportOptions) finish(ctx context.Context, io *IOStreams, res export.Result, runErr error, took time.Duration, resumed bool) error {
	what := output.HumanCount(int(res.Items), "item")
	if res.Unresumable != "" && o.state != "" {
		fmt.Fprintf(io.ErrOut, "cosmosctl: warning: no checkpoint could be saved: %s\n", res.Unresumable)
	}
	var err error
	if runErr != nil {
		err = o.commandError(ctx, runErr, what)
	}
	if o.progress == "json" {
		o.writeReport(io, res, err, took, resumed)
	}
	if runErr == nil {
		if io.ErrTTY && o.progress != "json" {
			dest := "stdout"
			if o.outputFile != "" {
				dest = o.outputFile
			}
			fmt.Fprintf(io.ErrOut, "cosmosctl: exported %s (%s) to %s, %.2f RU, in %s\n", what, humanBytes(res.Bytes), dest,
				res.RequestCharge, output.HumanDuration(took.Round(time.Millisecond)))
		}
		return nil
	}
	if ExitCode(err) == ExitUsage || (res.Items == 0 && o.state == "") {
		return err // nothing to resume
	}
	resume := "run it again to export from the start (with --output-file and --state FILE it would resume)"
	switch {
	case res.Checkpoint != nil && res.Unresumable == "":
		resume = fmt.Sprintf("the state is saved in %s: run the same command to resume after the %s in %s", o.state, what, o.outputFile)
	case o.state != "" && res.Unresumable == "":
		resume = fmt.Sprintf("no checkpoint was saved in %s; the same command resumes from the last one", o.state)
	}
	if !io.errJSON { // the report event says as much
		fmt.Fprintf(io.ErrOut, "cosmosctl: the export stopped after %s: %s\n", what, resume)
	}
	return err
}

// commandError is the command's error for how the export ended: an interruption (130),
// a state file it could not write, or what the service answered.
func (o *exportOptions) commandError(ctx context.Context, err error, what string) error {
	var se *export.StateError
	switch {
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		return &InterruptedError{What: "export after " + what}
	case errors.As(err, &se):
		return asStateError(err)
	}
	var fe *changefeed.StateError
	if errors.As(err, &fe) {
		return &UsageError{Err: err}
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return err // the output or the state file: an I/O error, exit 1
	}
	return queryError(err)
}

// asStateError makes a state file that cannot be used bad input (exit 2).
func asStateError(err error) error {
	var se *export.StateError
	if errors.As(err, &se) {
		return &UsageError{Err: err}
	}
	return usageErrorf("--state: %v", unwrapPath(err))
}

// unwrapPath is the reason of a file error without its path: the caller names the flag
// and the path once.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// humanBytes is a size for a person: 1.2 MB.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
