package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/output"
	"github.com/cosmosctl/cosmosctl/shard"
)

const rangesLong = `Split a container into N shards for N processes (export, changes, query,
import with --shard i/N or --feed-range), and print the plan: each shard's
effective partition key (EPK) interval [min, max), the physical partition key
ranges it lies in, its feed range in the .NET SDK's JSON
({"Range":{"min":"…","max":"…"}}, FeedRange.FromJsonString) and in the Java
SDK's form (base64url of its JSON, FeedRange.fromString), and the documents and
storage it holds by the service's partition statistics (estimates).

The plan is the one --shard i/N computes: a pure function of the container's
ranges, so each of N processes, started anywhere and at any time, computes the
same interval for its index without talking to the others. With N at most the
number of ranges R, shard i gets the whole ranges floor(i*R/N) up to
floor((i+1)*R/N): contiguous physical partitions. With N above R each range is
cut into as-even pieces at EPK midpoints (the first N mod R ranges into one piece
more): a sub-range's reads still run on its whole physical partition, so its
shards share that partition's RU/s, and reading part of a partition costs more RU
per item than reading it whole; more shards than ranges spreads the client's
work, not the partition's.

Without --shards, one shard a range. --balance statistics instead groups whole
ranges so that each shard holds about as many documents (greedy, contiguous):
better when the ranges hold very different amounts, but the statistics change
between two processes' starts, so --shard never uses it; give each process its
shard's feed range with --feed-range instead. --feed-range FEEDRANGE prints one
line for a feed range of either SDK's form: its interval, the ranges it
overlaps, and both encodings (converting one into the other).
` + accountHelp + `

The table goes to stdout; -o json (or ndjson) prints one JSON line per shard
(index, count, min, max, feed_range, feed_range_java, ranges, sub_range,
est_documents, est_kb, balance); -o tsv the table alone, the rest on stderr.
Exit codes (cosmosctl help exit-codes): 0 with the plan (statistics that cannot
be read leave the estimates null, with a note on stderr); 2 for bad flags
(--shards 0, a feed range that is not one); 3 for a container that does not
exist.`

// rangesOptions are the flags of `cosmosctl ranges`.
type rangesOptions struct {
	conn      connFlags
	shards    int
	balance   string
	feedRange string
}

const (
	rangesBalanceRanges     = "ranges"
	rangesBalanceStatistics = "statistics"
)

func newRangesCmd(io *IOStreams) *cobra.Command {
	o := &rangesOptions{}
	c := &cobra.Command{
		Use:   "ranges [--shards N [--balance statistics] | --feed-range FEEDRANGE]",
		Short: "Plan N shards of a container: each one's EPK interval, feed range (.NET and Java) and estimated size",
		Long:  rangesLong,
		Example: `  cosmosctl ranges                         # one shard a physical range
  cosmosctl ranges --shards 8              # the plan --shard i/8 computes
  cosmosctl ranges --shards 8 -o json | jq -r .feed_range_java
  cosmosctl ranges --shards 3 --balance statistics -o json   # for --feed-range
  cosmosctl ranges --feed-range '{"Range":{"min":"","max":"20"}}'`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return o.run(c.Context(), io)
		},
	}
	o.conn.register(c)
	o.conn.format.add(config.OutputNDJSON, config.OutputTSV)
	o.conn.format.streams()
	_ = c.Flags().MarkHidden("diagnostics")
	f := c.Flags()
	f.IntVar(&o.shards, "shards", 0, "the number of shards N (default: one a physical range)")
	f.StringVar(&o.balance, "balance", rangesBalanceRanges, "ranges: the plan --shard i/N computes from the ranges alone; statistics: whole ranges grouped by the partition statistics' documents, for --feed-range")
	f.StringVar(&o.feedRange, "feed-range", "", `describe this feed range instead: .NET JSON {"Range":{"min":"…","max":"…"}} or Java's base64url form`)
	return c
}

// validate checks the flags before anything is read.
func (o *rangesOptions) validate() (shard.Interval, error) {
	changed := o.conn.flags.Changed
	switch {
	case changed("shards") && o.shards < 1:
		return shard.Interval{}, usageErrorf("--shards must be at least 1, not %d", o.shards)
	case o.balance != rangesBalanceRanges && o.balance != rangesBalanceStatistics:
		return shard.Interval{}, usageErrorf("--balance must be ranges or statistics, not %q", o.balance)
	case changed("feed-range") && (changed("shards") || changed("balance")):
		return shard.Interval{}, usageErrorf("--feed-range describes one feed range: leave out --shards and --balance")
	case o.balance == rangesBalanceStatistics && !changed("shards"):
		return shard.Interval{}, usageErrorf("--balance statistics groups the ranges into --shards N: give --shards")
	}
	if changed("feed-range") {
		iv, err := shard.ParseFeedRange(o.feedRange)
		if err != nil {
			return shard.Interval{}, &UsageError{Err: err}
		}
		return iv, nil
	}
	return shard.Interval{}, nil
}

// rangesShard is one line of ranges -o json: one shard of the plan.
type rangesShard struct {
	Index int    `json:"index"`
	Count int    `json:"count"`
	Min   string `json:"min"`
	Max   string `json:"max"`
	// FeedRange is the .NET SDK's JSON for the interval (FeedRange.FromJsonString).
	FeedRange json.RawMessage `json:"feed_range"`
	// FeedRangeJava is the Java SDK's string for it (FeedRange.fromString): base64url JSON.
	FeedRangeJava string `json:"feed_range_java"`
	// Ranges are the ids of the physical partition key ranges the shard lies in.
	Ranges []string `json:"ranges"`
	// SubRange says the shard is less than a whole range.
	SubRange bool `json:"sub_range"`
	// EstDocuments and EstKB are the statistics' figures of its ranges, a sub-range
	// getting its share of the range's EPK width: estimates; null when the service
	// reports no statistics.
	EstDocuments *int64 `json:"est_documents"`
	EstKB        *int64 `json:"est_kb"`
	// Balance is "ranges" (the plan --shard i/N computes), "statistics" (whole ranges
	// grouped by documents: use it through --feed-range) or "feed-range" (--feed-range).
	Balance string `json:"balance"`
}

func (o *rangesOptions) run(ctx context.Context, io *IOStreams) error {
	iv, err := o.validate()
	if err != nil {
		return err
	}
	sess, err := o.conn.open(ctx, io)
	if err != nil {
		return err
	}
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
	var notes []string
	stats, err := sess.client.PartitionStatistics(ctx, db, coll)
	if err != nil {
		stats = nil
		notes = append(notes, "the partition statistics could not be read, so the plan has no estimates: "+err.Error())
	} else if len(stats) == 0 {
		notes = append(notes, "the service reports no partition statistics: the plan has no estimates")
	}

	var rows []rangesShard
	switch {
	case o.conn.flags.Changed("feed-range"):
		rows = []rangesShard{rangesRow(shard.Shard{Spec: shard.Spec{Index: 0, Count: 1}, Interval: iv}, ranges, stats, "feed-range")}
		ids, whole := []string{}, true
		for _, r := range (cosmos.EPKRange{Min: iv.Min, Max: iv.Max}).Overlapping(ranges) {
			ids = append(ids, r.ID)
			if _, narrowed := (cosmos.EPKRange{Min: iv.Min, Max: iv.Max}).Within(r); narrowed {
				whole = false
			}
		}
		rows[0].Ranges, rows[0].SubRange = ids, !whole
	case o.balance == rangesBalanceStatistics:
		if len(stats) == 0 {
			return fmt.Errorf("--balance statistics needs the partition statistics, and %s: leave --balance out for the plan --shard computes from the ranges alone", strings.TrimPrefix(notes[0], "the "))
		}
		if o.shards > len(ranges) {
			return usageErrorf("--balance statistics groups whole ranges, and %s/%s has %d: give --shards %d or fewer, or leave --balance out to cut ranges", db, coll, len(ranges), len(ranges))
		}
		for _, s := range balanceByDocuments(ranges, stats, o.shards) {
			rows = append(rows, rangesRow(s, ranges, stats, rangesBalanceStatistics))
		}
	default:
		n := o.shards
		if n == 0 {
			n = len(ranges)
		}
		plan, err := shard.Plan(ranges, n)
		if err != nil {
			return err
		}
		for _, s := range plan {
			rows = append(rows, rangesRow(s, ranges, stats, rangesBalanceRanges))
		}
	}

	if o.conn.wantJSON(sess.settings) {
		for _, r := range rows {
			if err := output.WriteJSONLine(io.Out, r); err != nil {
				return err
			}
		}
		for _, n := range notes {
			fmt.Fprintln(io.ErrOut, "ranges: "+n)
		}
		return nil
	}
	return printRanges(io, o.conn.noColor, db, coll, len(ranges), rows, notes)
}

// rangesRow is a shard's line: its encodings and its estimates from the statistics
// of the ranges it lies in.
func rangesRow(s shard.Shard, ranges []cosmos.PartitionKeyRange, stats map[string]engine.RangeStatistics, balance string) rangesShard {
	row := rangesShard{Index: s.Index, Count: s.Count, Min: s.Min, Max: s.Max, FeedRange: s.Interval.DotNetJSON(),
		FeedRangeJava: s.Interval.JavaBase64(), Ranges: s.RangeIDs, SubRange: s.SubRange, Balance: balance}
	if row.Ranges == nil {
		row.Ranges = []string{}
	}
	if len(stats) == 0 {
		return row
	}
	var docs, kb float64
	for _, r := range ranges {
		st, ok := stats[r.ID]
		f := s.Interval.Share(r)
		if !ok || f == 0 {
			continue
		}
		docs += f * float64(st.DocumentCount)
		kb += f * float64(st.SizeInKB)
	}
	d, k := int64(math.Round(docs)), int64(math.Round(kb))
	row.EstDocuments, row.EstKB = &d, &k
	return row
}

// balanceByDocuments groups the ranges, in EPK order, into n contiguous shards of about
// as many documents each: each cut goes where the running total of documents comes
// nearest to its share (j/n of all), leaving every shard at least one range. A range the
// statistics do not list counts as none.
func balanceByDocuments(ranges []cosmos.PartitionKeyRange, stats map[string]engine.RangeStatistics, n int) []shard.Shard {
	R := len(ranges)
	prefix := make([]float64, R+1)
	for i, r := range ranges {
		prefix[i+1] = prefix[i] + float64(stats[r.ID].DocumentCount)
	}
	total := prefix[R]
	cuts := []int{0}
	for j := 1; j < n; j++ {
		target := total * float64(j) / float64(n)
		best := cuts[j-1] + 1
		for b := best + 1; b <= R-(n-j); b++ {
			if math.Abs(prefix[b]-target) < math.Abs(prefix[best]-target) {
				best = b
			}
		}
		cuts = append(cuts, best)
	}
	cuts = append(cuts, R)
	out := make([]shard.Shard, 0, n)
	for j := 0; j < n; j++ {
		group := ranges[cuts[j]:cuts[j+1]]
		s := shard.Shard{Spec: shard.Spec{Index: j, Count: n}, Interval: shard.Interval{Min: group[0].MinInclusive, Max: group[len(group)-1].MaxExclusive}}
		for _, r := range group {
			s.RangeIDs = append(s.RangeIDs, r.ID)
		}
		out = append(out, s)
	}
	return out
}

func printRanges(io *IOStreams, noColor bool, db, coll string, nRanges int, rows []rangesShard, notes []string) error {
	st := io.outStyles(noColor)
	head := io.Out
	if st.TSV {
		head = io.ErrOut
	}
	fmt.Fprintln(head, rangesHeadline(db, coll, nRanges, rows))
	t := output.NewTableOf(io.Out, st,
		output.Column{Header: "SHARD", Key: true},
		output.Column{Header: "MIN", Key: true, Min: 6},
		output.Column{Header: "MAX", Key: true, Min: 6},
		output.Column{Header: "RANGES", Priority: 7, Min: 6},
		output.Column{Header: "EST. ITEMS", Short: "ITEMS", Priority: 6},
		output.Column{Header: "EST. SIZE", Short: "SIZE", Priority: 5},
		output.Column{Header: "FEED RANGE", Priority: 1, Min: 12},
	)
	for _, r := range rows {
		t.Append(rangesCells(st, r)...)
	}
	if err := t.Render(); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(io.ErrOut, "ranges: "+n)
	}
	return nil
}

// rangesHeadline says what the plan is and how to use it.
func rangesHeadline(db, coll string, nRanges int, rows []rangesShard) string {
	what := fmt.Sprintf("%s/%s: %s", db, coll, output.HumanCountThousands(int64(nRanges), "range"))
	if len(rows) == 1 && rows[0].Balance == "feed-range" {
		return fmt.Sprintf("%s: the feed range [%q, %q)", what, rows[0].Min, rows[0].Max)
	}
	n := len(rows)
	switch {
	case rows[0].Balance == rangesBalanceStatistics:
		return fmt.Sprintf("%s, %s balanced by the partition statistics' documents: give each process its --feed-range (--shard i/%d computes its own plan from the ranges alone)", what, output.HumanCountThousands(int64(n), "shard"), n)
	case n > nRanges:
		return fmt.Sprintf("%s, %s: the plan of --shard i/%d, ranges cut at EPK midpoints (a sub-range's reads share its partition's RU/s)", what, output.HumanCountThousands(int64(n), "shard"), n)
	}
	return fmt.Sprintf("%s, %s: the plan of --shard i/%d, whole ranges", what, output.HumanCountThousands(int64(n), "shard"), n)
}

func rangesCells(st output.Styles, r rangesShard) []string {
	min, max := r.Min, r.Max
	if !st.TSV && min == "" {
		min = `""`
	}
	items, size := "", ""
	if r.EstDocuments != nil {
		items, size = fmt.Sprint(*r.EstDocuments), fmt.Sprintf("%d KB", *r.EstKB)
	} else if !st.TSV {
		items, size = st.None(), st.None()
	}
	ids := strings.Join(r.Ranges, ",")
	if r.SubRange {
		ids += " (part)"
	}
	return []string{fmt.Sprintf("%d/%d", r.Index, r.Count), min, max, ids, items, size, string(r.FeedRange)}
}
