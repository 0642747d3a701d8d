package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/internal/progress"
	"github.com/cosmosctl/cosmosctl/internal/rulimit"
	"github.com/cosmosctl/cosmosctl/output"
)

// skewPartitionMaxRU is the most RU/s one physical partition serves: "Each physical
// partition can support a maximum of 10,000 RU/s of throughput" (learn.microsoft.com,
// Azure Cosmos DB, "Best practices for scaling provisioned throughput (RU/s)"); a
// resource with more is split into more partitions.
const skewPartitionMaxRU = 10000

const skewLong = `Hot partition or too few RU? For a container, per physical partition (partition
key range): its storage and items (the service's partition statistics), the
largest logical partitions the service lists for it, its share of the provisioned
RU/s (the throughput over the ranges, each range serving at most 10,000 RU/s),
and with --sample DURATION the request charge and the 429s that a sample of real
requests met on it. Then the verdict in one line, with the numbers behind it:
  hot partition: 71 % of RU and 93 % of 429s on range 3 (key tenant-42 took 90 % of its RU in the sample)
  evenly loaded: raise throughput (412 429s spread over 4 ranges, at most 27 % on range 1)

The sample is --query SQL (run to its end again and again) or --ids FILE (point
reads of the listed items in turn; - is stdin; one JSON object a line,
{"id":"o1","pk":"tenant-1"}, the pk a JSON value or an array for a hierarchical
key). --concurrency requests are in flight at once (and with --max-ru-per-second
the sample spends at most that many request units a second); at the end of the duration
the requests still in flight are cut and not counted, and Ctrl-C ends the sample
early and prints what it has (exit 130). The requests go through the engine as any
command's do (retries of 429s after the service's retry-after, --e2e-timeout and
--attempt-timeout, failover), and each attempt counts: a 429 that a retry then
got past is still a 429 the range met. Sampling spends the container's RU: run it
at a quiet time or keep it short.

The statistics are the service's, sampled and approximate, and it lists only its
largest logical partitions (about 1 GB and more): none is named for smaller ones.
The RU/s share assumes the service splits the throughput evenly over the ranges,
which it does unless it was redistributed across partitions; a container that
shares its database's throughput has no share of its own to show.
` + skewVerdictHelp + `
` + accountHelp + `

The table goes to stdout, the verdict last; -o json prints one object (throughput,
ranges[] with their statistics and sample, sample, verdict {kind, text, range_id,
partition_key}, partial, notes); -o tsv the table alone, the rest on stderr.
Exit codes (cosmosctl help exit-codes): 0 with a complete report; 11 when it is
partial (the statistics, the offer or some sampled requests failed: the notes say
which), the report printed first; 2 for bad flags or --ids; 3 for a container that
does not exist; 130 on Ctrl-C during the sample, after the report.`

// skewOptions are the flags of `cosmosctl skew`.
type skewOptions struct {
	res         resourceOptions // the connection, and the offer read as throughput show reads it
	sample      time.Duration
	query       string
	ids         string
	concurrency int
	maxRU       float64
}

func newSkewCmd(io *IOStreams) *cobra.Command {
	o := &skewOptions{}
	c := &cobra.Command{
		Use:   "skew [--sample DURATION (--query SQL | --ids FILE)]",
		Short: "Hot partition or too few RU? Per range: storage, largest keys, RU share, and a sample's RU and 429s",
		Long:  skewLong,
		Example: `  cosmosctl skew                                   # statistics and throughput only
  cosmosctl skew --sample 30s --query 'SELECT * FROM c WHERE c.status = "open"'
  cosmosctl skew --sample 1m --ids ids.ndjson --concurrency 8 -o json
  cosmosctl query 'SELECT c.id, c.tenant AS pk FROM c' -o ndjson | cosmosctl skew --sample 20s --ids -`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return o.run(c.Context(), io)
		},
	}
	o.res.conn.register(c)
	// The sample's requests are reads as the application's are: hedged and at a
	// consistency level as theirs may be.
	o.res.conn.withHedging(c.Flags())
	o.res.conn.withConsistency(c.Flags())
	o.res.conn.format.add(config.OutputTSV)
	// A sample is thousands of requests: their diagnostics would drown the report.
	_ = c.Flags().MarkHidden("diagnostics")
	o.res.level = "container"
	f := c.Flags()
	f.DurationVar(&o.sample, "sample", 0, "send a sample of requests for this long (e.g. 30s) and count their RU and 429s per range; needs --query or --ids")
	f.StringVar(&o.query, "query", "", "with --sample: the query to run, again and again")
	f.StringVar(&o.ids, "ids", "", `with --sample: point-read these items in turn: a file (- for stdin) of JSON lines {"id":"o1","pk":"tenant-1"}`)
	f.IntVar(&o.concurrency, "concurrency", 4, "with --sample: requests in flight at once (1 to 64)")
	f.Float64Var(&o.maxRU, "max-ru-per-second", 0, "with --sample: spend at most this many request units a second on the sample (default: no cap beyond --concurrency)")
	return c
}

// validate checks the flags before anything is read or sent.
func (o *skewOptions) validate() error {
	changed := o.res.conn.flags.Changed
	switch {
	case o.sample < 0:
		return usageErrorf("--sample must be a positive duration such as 30s, not %s", o.sample)
	case changed("sample") && o.sample == 0:
		return usageErrorf("--sample 0 samples nothing: give a duration such as 30s, or leave --sample out")
	case o.query != "" && o.ids != "":
		return usageErrorf("give --query or --ids for the sample, not both")
	case o.sample > 0 && o.query == "" && o.ids == "":
		return usageErrorf("--sample needs requests to send: --query SQL or --ids FILE")
	case o.sample == 0 && (o.query != "" || o.ids != ""):
		return usageErrorf("--query and --ids are what --sample sends: add --sample DURATION, e.g. --sample 30s")
	case o.concurrency < 1 || o.concurrency > 64:
		return usageErrorf("--concurrency must be 1 to 64, not %d", o.concurrency)
	case o.maxRU < 0 || math.IsNaN(o.maxRU) || math.IsInf(o.maxRU, 0):
		return usageErrorf("--max-ru-per-second must be a positive number of request units, not %g; leave it out for no cap", o.maxRU)
	case changed("max-ru-per-second") && o.sample == 0:
		return usageErrorf("--max-ru-per-second paces the sample: add --sample DURATION, e.g. --sample 30s")
	}
	return nil
}

// skewReport is skew's -o json: one object, stable field names.
type skewReport struct {
	Database   string         `json:"database"`
	Container  string         `json:"container"`
	Throughput skewThroughput `json:"throughput"`
	Ranges     []skewRange    `json:"ranges"`
	// Sample is what --sample sent and met; null without --sample.
	Sample  *skewSample `json:"sample" jsonschema:"nullable"`
	Verdict skewVerdict `json:"verdict"`
	// Partial says something the report needs did not come: Notes say what.
	Partial bool     `json:"partial"`
	Notes   []string `json:"notes"`
}

type skewThroughput struct {
	// Mode is manual, autoscale, shared (the database's throughput, shared with its
	// other containers) or unknown (the offer could not be read).
	Mode string `json:"mode"`
	// RUPerSecond is the provisioned RU/s (autoscale: its maximum); null when unknown.
	RUPerSecond *int `json:"ru_per_second"`
	// PerRangeRUPerSecond is RUPerSecond over the ranges; null for shared or unknown
	// throughput.
	PerRangeRUPerSecond *float64 `json:"per_range_ru_per_second"`
	// PartitionMaxRUPerSecond is what one physical partition serves at most.
	PartitionMaxRUPerSecond int `json:"partition_max_ru_per_second"`
	// InstantMaxRUPerSecond is the ranges times PartitionMaxRUPerSecond: the most the
	// throughput can be raised to without the service splitting partitions.
	InstantMaxRUPerSecond int `json:"instant_max_ru_per_second"`
}

type skewRange struct {
	ID           string `json:"id"`
	MinInclusive string `json:"min_inclusive"`
	MaxExclusive string `json:"max_exclusive"`
	// DocumentCount, SizeKB and StoragePercent (of the container's) are null where the
	// service reports no statistics.
	DocumentCount  *int64   `json:"document_count"`
	SizeKB         *int64   `json:"size_kb"`
	StoragePercent *float64 `json:"storage_percent"`
	// SampledDistinctPartitionKeys is the service's estimate of the range's logical
	// partitions; null when it does not say.
	SampledDistinctPartitionKeys *int64 `json:"sampled_distinct_partition_keys"`
	// LargestPartitionKeys are the logical partitions the service lists for the range,
	// largest first: only its large ones (about 1 GB and more), so often none.
	LargestPartitionKeys []skewKeySize `json:"largest_partition_keys"`
	// Sample is what the sample met on the range; null without --sample.
	Sample *skewRangeSample `json:"sample" jsonschema:"nullable"`
}

type skewKeySize struct {
	PartitionKey json.RawMessage `json:"partition_key"`
	SizeKB       int64           `json:"size_kb"`
	// PercentOfRange is the key's share of the range's storage; null when the range's
	// size is not reported.
	PercentOfRange *float64 `json:"percent_of_range"`
}

type skewRangeSample struct {
	// Requests are the sampled requests sent to the range that ended (not cut by the
	// sample's end); RequestCharge and Throttled count every attempt, retries included.
	Requests             int64   `json:"requests"`
	RequestCharge        float64 `json:"request_charge"`
	RUPerSecond          float64 `json:"ru_per_second"`
	Throttled            int64   `json:"throttled"`
	RequestChargePercent float64 `json:"request_charge_percent"`
	ThrottledPercent     float64 `json:"throttled_percent"`
	// TopPartitionKey is the key that took most of the range's request charge, with
	// --ids; null for a query's sample.
	TopPartitionKey *skewKeyLoad `json:"top_partition_key" jsonschema:"nullable"`
}

type skewKeyLoad struct {
	PartitionKey         json.RawMessage `json:"partition_key"`
	RequestCharge        float64         `json:"request_charge"`
	Throttled            int64           `json:"throttled"`
	RequestChargePercent float64         `json:"request_charge_percent"`
	ThrottledPercent     float64         `json:"throttled_percent"`
}

type skewSample struct {
	// Source is "query" or "ids".
	Source      string `json:"source"`
	Query       string `json:"query,omitempty"`
	IDs         int    `json:"ids,omitempty"`
	Concurrency int    `json:"concurrency"`
	// MaxRUPerSecond is --max-ru-per-second; null without a cap.
	MaxRUPerSecond *float64 `json:"max_ru_per_second" jsonschema:"nullable"`
	// SampleMs is the duration asked for, DurationMs the one it ran (shorter when
	// interrupted).
	SampleMs      int64   `json:"sample_ms"`
	DurationMs    int64   `json:"duration_ms"`
	Requests      int64   `json:"requests"`
	RequestCharge float64 `json:"request_charge"`
	// Throttled counts the attempts answered 429; Failed the requests that failed
	// otherwise (a timeout, a region down), FirstError the first of those.
	Throttled   int64   `json:"throttled"`
	Failed      int64   `json:"failed"`
	FirstError  *string `json:"first_error"`
	Interrupted bool    `json:"interrupted"`
}

type skewVerdict struct {
	// Kind is hot-partition, evenly-loaded, not-throttled, storage-skew, storage-even,
	// one-partition or unknown (cosmosctl skew --help).
	Kind string `json:"kind"`
	Text string `json:"text"`
	// RangeID is the range the verdict is about; null when it is about none.
	RangeID *string `json:"range_id"`
	// PartitionKey is the key the verdict names; null when it names none.
	PartitionKey json.RawMessage `json:"partition_key"`
}

// skewPartialError is a report that lacks something: it was printed, the notes say what.
type skewPartialError struct{ notes []string }

func (e *skewPartialError) Error() string {
	return "the report is partial: " + strings.Join(e.notes, "; ")
}

func (o *skewOptions) run(ctx context.Context, io *IOStreams) error {
	if err := o.validate(); err != nil {
		return err
	}
	var ids []skewID
	if o.ids != "" {
		var err error
		if ids, err = readSkewIDs(o.ids, io.In); err != nil {
			return err
		}
	}
	r, err := o.res.connect(ctx, io)
	if err != nil {
		return err
	}
	sess := r.sess
	defer sess.Close()
	db, coll := sess.settings.Database, sess.settings.Container
	// The definition first: a container that does not exist says so here (exit 3).
	if _, err := sess.client.PartitionKeyDefinition(ctx, db, coll); err != nil {
		return asUsage(err)
	}
	ranges, _, err := sess.client.PartitionKeyRanges(ctx, db, coll, false, sess.settings.E2ETimeout)
	if err != nil {
		return asUsage(err)
	}
	sort.Slice(ranges, func(i, j int) bool { return ranges[i].MinInclusive < ranges[j].MinInclusive })
	rep := skewReport{Database: db, Container: coll, Ranges: []skewRange{}, Notes: []string{}}
	for _, rg := range ranges {
		rep.Ranges = append(rep.Ranges, skewRange{ID: rg.ID, MinInclusive: rg.MinInclusive, MaxExclusive: rg.MaxExclusive, LargestPartitionKeys: []skewKeySize{}})
	}
	o.statistics(ctx, sess, &rep)
	o.throughput(ctx, r, &rep)

	var sampleErr error
	if o.sample > 0 {
		for i := range ids {
			if rg, ok := cosmos.RangeFor(cosmos.EffectivePartitionKey(ids[i].pk), ranges); ok {
				ids[i].rangeID = rg.ID
			}
		}
		sampleErr = o.runSample(ctx, sess, ids, &rep)
		var ue *UsageError
		if errors.As(sampleErr, &ue) {
			return sampleErr
		}
	}
	rep.Verdict = skewVerdictOf(rep)
	rep.Partial = len(rep.Notes) > 0
	if o.res.conn.wantJSON(sess.settings) {
		err = output.WriteJSON(io.Out, rep)
	} else {
		err = printSkew(io, o.res.conn.noColor, rep)
	}
	switch {
	case err != nil:
		return err
	case sampleErr != nil:
		return sampleErr
	case rep.Partial:
		return &skewPartialError{notes: rep.Notes}
	}
	return nil
}

// statistics fills in the ranges' statistics; a service that does not answer them
// leaves them null, with a note.
func (o *skewOptions) statistics(ctx context.Context, sess *session, rep *skewReport) {
	stats, err := sess.client.PartitionStatistics(ctx, rep.Database, rep.Container)
	if err != nil {
		rep.Notes = append(rep.Notes, "the partition statistics could not be read: "+err.Error())
		return
	}
	fillStatistics(rep, stats)
}

// fillStatistics puts the service's statistics into the report's ranges: each range's
// share of the storage, and its listed keys, largest first, with their share of it.
func fillStatistics(rep *skewReport, stats map[string]engine.RangeStatistics) {
	var total int64
	for _, s := range stats {
		total += s.SizeInKB
	}
	for i := range rep.Ranges {
		r := &rep.Ranges[i]
		s, ok := stats[r.ID]
		if !ok {
			continue
		}
		r.DocumentCount, r.SizeKB, r.SampledDistinctPartitionKeys = &s.DocumentCount, &s.SizeInKB, s.SampledDistinctPartitionKeyCount
		p := 0.0 // an empty container's ranges hold none of its storage, reported
		if total > 0 {
			p = round1(100 * float64(s.SizeInKB) / float64(total))
		}
		r.StoragePercent = &p
		keys := append([]engine.PartitionKeyStatistics(nil), s.PartitionKeys...)
		sort.SliceStable(keys, func(a, b int) bool { return keys[a].SizeInKB > keys[b].SizeInKB })
		for _, k := range keys {
			ks := skewKeySize{PartitionKey: k.PartitionKey, SizeKB: k.SizeInKB}
			if s.SizeInKB > 0 {
				// The service samples the two sizes apart: the .NET SDK's own example
				// of the statistics (DocumentCollection.PartitionKeyRangeStatistics)
				// shows a key larger than its range. A key holds all of it, at most.
				p := min(100, round1(100*float64(k.SizeInKB)/float64(s.SizeInKB)))
				ks.PercentOfRange = &p
			}
			r.LargestPartitionKeys = append(r.LargestPartitionKeys, ks)
		}
	}
}

// throughput reads the container's offer (or its database's, when it shares it), as
// `throughput show` does; an offer that cannot be read leaves the mode unknown, with
// a note.
func (o *skewOptions) throughput(ctx context.Context, r *resourceRun, rep *skewReport) {
	n := len(rep.Ranges)
	rep.Throughput = skewThroughput{Mode: "unknown", PartitionMaxRUPerSecond: skewPartitionMaxRU, InstantMaxRUPerSecond: n * skewPartitionMaxRU}
	ro, err := r.findOffer(ctx, nil)
	shared := err == nil && ro.info().Mode == "shared"
	if shared {
		r.o.level = "database"
		ro, err = r.findOffer(ctx, nil)
		r.o.level = "container"
	}
	if err != nil {
		rep.Notes = append(rep.Notes, "the throughput could not be read: "+err.Error())
		return
	}
	info := ro.info()
	ru := info.RUPerSecond
	if info.Mode == "autoscale" {
		ru = info.AutoscaleMaxRU
	}
	rep.Throughput.Mode = info.Mode
	if shared {
		rep.Throughput.Mode = "shared"
	}
	if ru > 0 {
		rep.Throughput.RUPerSecond = &ru
		if rep.Throughput.Mode != "shared" && n > 0 {
			per := round1(float64(ru) / float64(n))
			rep.Throughput.PerRangeRUPerSecond = &per
		}
	}
}

// runSample sends the sample and fills in what it met. A usage error (a query the
// service refuses) is returned as it is; an interruption fills in what was sampled
// and returns errInterrupted.
func (o *skewOptions) runSample(ctx context.Context, sess *session, ids []skewID, rep *skewReport) error {
	tmpl, err := o.res.conn.readTemplate(ctx, sess)
	if err != nil {
		return err
	}
	sum := &skewSample{Source: "ids", IDs: len(ids), Query: o.query, Concurrency: o.concurrency, SampleMs: o.sample.Milliseconds()}
	if o.query != "" {
		sum.Source = "query"
	}
	s := newSkewSampler()
	w := skewWorkload{client: sess.client, database: rep.Database, container: rep.Container, template: tmpl, query: o.query, ids: ids, concurrency: o.concurrency}
	if o.maxRU > 0 {
		w.limiter = rulimit.New(o.maxRU, clock.Real{})
		sum.MaxRUPerSecond = &o.maxRU
	}
	start := time.Now()
	sctx, cancel := context.WithTimeout(ctx, o.sample)
	err = w.run(sctx, s)
	cancel()
	s.fill(rep, sum, time.Since(start))
	rep.Sample = sum
	if err != nil {
		return err
	}
	if other := s.unlisted(rep); len(other) > 0 {
		// A range that split or merged during the sample: its load is in the totals,
		// not in the table's rows, whose shares then add up to less than 100 %.
		rep.Notes = append(rep.Notes, "the sample met ranges that were not in the container's list (a split or merge?): "+strings.Join(other, ", ")+"; rerun for their rows")
	}
	if sum.Failed > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s of the sample's requests failed, the first with: %s", progress.Thousands(sum.Failed), *sum.FirstError))
	}
	if ctx.Err() != nil {
		sum.Interrupted = true
		rep.Notes = append(rep.Notes, "the sample was interrupted after "+time.Duration(sum.DurationMs*int64(time.Millisecond)).String())
		return errInterrupted
	}
	return nil
}

func printSkew(io *IOStreams, noColor bool, rep skewReport) error {
	st := io.outStyles(noColor)
	head := io.Out
	if st.TSV {
		head = io.ErrOut
	}
	fmt.Fprintln(head, skewThroughputLine(rep))
	if s := rep.Sample; s != nil {
		what := fmt.Sprintf("point reads of %s", output.HumanCountThousands(int64(s.IDs), "id"))
		if s.Source == "query" {
			what = "the query"
		}
		pace := fmt.Sprintf("%d at a time", s.Concurrency)
		if s.MaxRUPerSecond != nil {
			pace += fmt.Sprintf(" within %g RU/s", *s.MaxRUPerSecond)
		}
		fmt.Fprintf(head, "sample: %s of %s, %s: %s, %s RU, %s, %s failed\n", time.Duration(s.DurationMs)*time.Millisecond, what, pace,
			output.HumanCountThousands(s.Requests, "request"), progress.Thousands(int64(s.RequestCharge)), plural429(s.Throttled), progress.Thousands(s.Failed))
	}
	cols := []output.Column{
		{Header: "RANGE", Key: true},
		{Header: "ITEMS", Key: true, Priority: 6},
		{Header: "SIZE", Priority: 7},
		{Header: "STORAGE", Short: "STOR.", Priority: 8},
		{Header: "LARGEST KEY", Short: "KEY", Priority: 3, Min: 8},
	}
	if rep.Sample != nil {
		cols = append(cols,
			output.Column{Header: "REQUESTS", Short: "REQS", Priority: 4},
			output.Column{Header: "RU", Priority: 5},
			output.Column{Header: "RU %", Key: true},
			output.Column{Header: "429s", Priority: 9},
			output.Column{Header: "429 %", Key: true},
			output.Column{Header: "TOP KEY", Priority: 2, Min: 8})
	}
	t := output.NewTableOf(io.Out, st, cols...)
	for _, r := range rep.Ranges {
		t.Append(skewRangeCells(st, rep, r)...)
	}
	if err := t.Render(); err != nil {
		return err
	}
	verdict := "verdict: " + rep.Verdict.Text
	for _, n := range rep.Notes {
		fmt.Fprintln(io.ErrOut, "skew: "+n)
	}
	if st.TSV {
		fmt.Fprintln(io.ErrOut, verdict)
		return nil
	}
	fmt.Fprintln(io.Out)
	_, err := fmt.Fprintln(io.Out, verdict)
	return err
}

// skewThroughputLine says what the container is provisioned with and each range's share.
func skewThroughputLine(rep skewReport) string {
	t := rep.Throughput
	n := len(rep.Ranges)
	ranges := output.HumanCountThousands(int64(n), "range")
	switch {
	case t.RUPerSecond == nil:
		return fmt.Sprintf("%s/%s: throughput %s, %s (a range serves at most %s RU/s)", rep.Database, rep.Container, t.Mode, ranges, progress.Thousands(int64(t.PartitionMaxRUPerSecond)))
	case t.PerRangeRUPerSecond == nil:
		return fmt.Sprintf("%s/%s: %s RU/s shared with the database's other containers, %s (a range serves at most %s RU/s)", rep.Database, rep.Container,
			progress.Thousands(int64(*t.RUPerSecond)), ranges, progress.Thousands(int64(t.PartitionMaxRUPerSecond)))
	}
	return fmt.Sprintf("%s/%s: %s RU/s %s over %s, %g RU/s each (a range serves at most %s RU/s: up to %s RU/s without a split)", rep.Database, rep.Container,
		progress.Thousands(int64(*t.RUPerSecond)), t.Mode, ranges, *t.PerRangeRUPerSecond, progress.Thousands(int64(t.PartitionMaxRUPerSecond)), progress.Thousands(int64(t.InstantMaxRUPerSecond)))
}

func skewRangeCells(st output.Styles, rep skewReport, r skewRange) []string {
	none := "not reported"
	if st.TSV {
		none = ""
	}
	items, size, share, key := none, none, none, ""
	if r.DocumentCount != nil {
		items = fmt.Sprint(*r.DocumentCount)
	}
	if r.SizeKB != nil {
		size = fmt.Sprintf("%d KB", *r.SizeKB)
	}
	if r.StoragePercent != nil {
		share = pct(*r.StoragePercent)
	}
	if len(r.LargestPartitionKeys) > 0 {
		k := r.LargestPartitionKeys[0]
		key = keyText(k.PartitionKey)
		if k.PercentOfRange != nil {
			key += " (" + pct(*k.PercentOfRange) + ")"
		}
	} else if !st.TSV {
		key = st.None()
	}
	cells := []string{r.ID, items, size, share, key}
	if rep.Sample == nil {
		return cells
	}
	s := r.Sample
	top := ""
	if s.TopPartitionKey != nil {
		top = fmt.Sprintf("%s (%s)", keyText(s.TopPartitionKey.PartitionKey), pct(s.TopPartitionKey.RequestChargePercent))
	} else if !st.TSV {
		top = st.None()
	}
	return append(cells, fmt.Sprint(s.Requests), fmt.Sprintf("%.2f", s.RequestCharge), pct(s.RequestChargePercent),
		fmt.Sprint(s.Throttled), pct(s.ThrottledPercent), top)
}
