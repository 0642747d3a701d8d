package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/output"
)

const locateLong = `Show where a partition key lives: its effective partition key (the V2 hash the
service routes by), the partition key range that holds it (id, minInclusive,
maxExclusive), and the range's size and item count where the service reports them.

--pk is a JSON value ("tenant-1" quoted, 42, true, null), a plain string, a JSON
array for a hierarchical (MultiHash) key such as '["acme","user-7"]', or '[{}]'
for the none key (items without the partition key property). A hierarchical key
with fewer values than the container has paths is a prefix: locate prints every
range that the prefix's keys span, from the prefix's hash to its end.

Size and item count come from a container read that asks for partition
statistics (x-ms-documentdb-populatepartitionstatistics), as the SDKs'
PartitionKeyRangeStatistics do; the service samples them, so they are
approximate (cosmosctl's emulator counts exactly), and where it reports none
locate says "not reported" (null in -o json).

With --connection-mode direct locate also lists the range's replicas in every
read region, from the address cache, with each replica's recorded health and the
region's health (cosmosctl help health). The addresses are the gateway's
rntbd:// replica addresses, as the SDKs' direct mode uses them.

The ranges are read like a query reads them, from the effective read regions in
turn, so that a region that is down or hangs does not stop the answer;
--e2e-timeout bounds that read.
` + accountHelp + `

The table goes to stdout; -o json prints one JSON object (partition_key,
effective_partition_key, ranges[] with their replicas). Exit codes: cosmosctl
help exit-codes.`

type locateOptions struct {
	conn connFlags
	pk   string
}

func newLocateCmd(io *IOStreams) *cobra.Command {
	o := &locateOptions{}
	c := &cobra.Command{
		Use:   "locate --pk KEY",
		Short: "Show the effective partition key, range, size and replicas of a partition key",
		Long:  locateLong,
		Example: `  cosmosctl locate --pk tenant-1
  cosmosctl locate --pk '["acme","user-7"]' -o json
  cosmosctl locate --pk '["acme"]'          # a prefix: the ranges it spans
  cosmosctl locate --pk '[{}]'              # the none key
  cosmosctl locate --pk tenant-1 --connection-mode direct`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return o.run(c.Context(), io)
		},
	}
	o.conn.register(c)
	o.conn.format.add(config.OutputTSV)
	_ = c.Flags().MarkHidden("diagnostics")
	c.Flags().StringVar(&o.pk, "pk", "", "the partition key: a JSON value, a JSON array for a hierarchical key or a prefix of one, [{}] for the none key, or a plain string")
	return c
}

// locateReport is locate's -o json: stable field names, every range the key spans.
type locateReport struct {
	Database              string          `json:"database"`
	Container             string          `json:"container"`
	PartitionKey          json.RawMessage `json:"partition_key"`
	PartitionKeyPaths     []string        `json:"partition_key_paths"`
	PartitionKeyKind      string          `json:"partition_key_kind"`
	Prefix                bool            `json:"prefix"`
	EffectivePartitionKey string          `json:"effective_partition_key"`
	// EffectiveMax is the end of a prefix's span (its hash and "FF"); null otherwise.
	EffectiveMax   *string       `json:"effective_partition_key_max"`
	ConnectionMode string        `json:"connection_mode"`
	Ranges         []locateRange `json:"ranges"`
}

type locateRange struct {
	ID           string `json:"id"`
	MinInclusive string `json:"min_inclusive"`
	MaxExclusive string `json:"max_exclusive"`
	// DocumentCount and SizeKB are null where the service reports no statistics.
	DocumentCount *int64 `json:"document_count"`
	SizeKB        *int64 `json:"size_kb"`
	// Regions are the range's replicas in each read region, in direct mode; null in
	// gateway mode, which does not see replicas.
	Regions []locateRegion `json:"regions" jsonschema:"nullable"`
}

type locateRegion struct {
	Region   string              `json:"region"`
	Health   output.RegionHealth `json:"health"`
	Replicas []locateReplica     `json:"replicas"`
	// Error says why the region's addresses did not come; null when they did.
	Error *string `json:"error"`
}

type locateReplica struct {
	URL    string `json:"url"`
	Role   string `json:"role"`
	Health string `json:"health"`
}

func (o *locateOptions) run(ctx context.Context, io *IOStreams) error {
	if !o.conn.flags.Changed("pk") || strings.TrimSpace(o.pk) == "" {
		return usageErrorf("no partition key: give --pk, e.g. --pk tenant-1, --pk '[\"acme\",\"user-7\"]' or --pk '[{}]' for the none key")
	}
	pk, err := parsePartitionKey(o.pk)
	if err != nil {
		return err
	}
	sess, err := o.conn.open(ctx, io)
	if err != nil {
		return err
	}
	defer sess.Close()
	db, coll := sess.settings.Database, sess.settings.Container
	def, err := sess.client.PartitionKeyDefinition(ctx, db, coll)
	if err != nil {
		return asUsage(err)
	}
	if err := checkKeyLength(o.pk, pk, def); err != nil {
		return err
	}
	ranges, _, err := sess.client.PartitionKeyRanges(ctx, db, coll, false, sess.settings.E2ETimeout)
	if err != nil {
		return asUsage(err)
	}
	kind := def.Kind
	if kind == "" {
		kind = cosmos.PartitionKindHash
		if len(def.Paths) > 1 {
			kind = cosmos.PartitionKindMultiHash
		}
	}
	rep := locateReport{Database: db, Container: coll, PartitionKey: json.RawMessage(pk.JSON()),
		PartitionKeyPaths: def.Paths, PartitionKeyKind: kind, Prefix: def.IsPrefix(pk),
		EffectivePartitionKey: cosmos.EffectivePartitionKey(pk), ConnectionMode: "gateway", Ranges: []locateRange{}}
	for _, r := range spannedRanges(pk, rep.Prefix, ranges) {
		rep.Ranges = append(rep.Ranges, locateRange{ID: r.ID, MinInclusive: r.MinInclusive, MaxExclusive: r.MaxExclusive})
	}
	if rep.Prefix {
		end := cosmos.PrefixRange(pk).Max
		rep.EffectiveMax = &end
	}
	if len(rep.Ranges) == 0 {
		return fmt.Errorf("no partition key range of %s/%s holds %s (effective partition key %s)", db, coll, pk, rep.EffectivePartitionKey)
	}
	// Statistics are a bonus: a service that does not answer them does not stop the answer.
	if stats, err := sess.client.PartitionStatistics(ctx, db, coll); err == nil {
		for i, r := range rep.Ranges {
			if s, ok := stats[r.ID]; ok {
				rep.Ranges[i].DocumentCount, rep.Ranges[i].SizeKB = &s.DocumentCount, &s.SizeInKB
			}
		}
	}
	if sess.client.AddressCache() != nil {
		rep.ConnectionMode = "direct"
		if err := o.replicas(ctx, sess, &rep); err != nil {
			return err
		}
	}
	if o.conn.wantJSON(sess.settings) {
		return output.WriteJSON(io.Out, rep)
	}
	return printLocate(io, o.conn.noColor, rep)
}

// spannedRanges returns the range that holds pk, or for a prefix every range that
// overlaps the prefix's effective partition keys (cosmos.PrefixRange), as query,
// changes and export read them.
func spannedRanges(pk cosmos.PartitionKey, prefix bool, ranges []cosmos.PartitionKeyRange) []cosmos.PartitionKeyRange {
	if !prefix {
		if r, ok := cosmos.RangeFor(cosmos.EffectivePartitionKey(pk), ranges); ok {
			return []cosmos.PartitionKeyRange{r}
		}
		return nil
	}
	return cosmos.PrefixRange(pk).Overlapping(ranges)
}

// replicas fills in each range's replicas in every read region that is not excluded.
// A region whose addresses do not come is reported with its error: the others still do.
func (o *locateOptions) replicas(ctx context.Context, sess *session, rep *locateReport) error {
	acct, err := sess.client.Account(ctx)
	if err != nil {
		return err
	}
	exclude, err := o.conn.excludes(ctx, sess)
	if err != nil {
		return err
	}
	entries := sess.client.Health().Entries()
	for i := range rep.Ranges {
		rng := &rep.Ranges[i]
		for _, region := range acct.ReadRegions() {
			if excluded(exclude, region) {
				continue
			}
			lr := locateRegion{Region: region, Health: output.RegionHealthOf(entries, region), Replicas: []locateReplica{}}
			set, err := sess.client.RangeReplicas(ctx, rep.Database, rep.Container, rng.ID, region)
			if err != nil {
				msg := err.Error()
				lr.Error = &msg
			}
			for _, r := range set {
				role := "secondary"
				if r.Primary {
					role = "primary"
				}
				lr.Replicas = append(lr.Replicas, locateReplica{URL: r.URL, Role: role, Health: r.Health.String()})
			}
			rng.Regions = append(rng.Regions, lr)
		}
		if rng.Regions == nil {
			rng.Regions = []locateRegion{}
		}
	}
	return nil
}

func excluded(exclude []string, region string) bool {
	for _, e := range exclude {
		if cosmos.SameRegion(e, region) {
			return true
		}
	}
	return false
}

func printLocate(io *IOStreams, noColor bool, rep locateReport) error {
	st := io.outStyles(noColor)
	if st.TSV {
		return printLocateTSV(io, st, rep)
	}
	key := "partition key " + string(rep.PartitionKey)
	if rep.Prefix {
		key += fmt.Sprintf(" (a prefix of %s)", strings.Join(rep.PartitionKeyPaths, ", "))
	}
	fmt.Fprintln(io.Out, key)
	if rep.Prefix {
		fmt.Fprintf(io.Out, "effective partition key %s … %s\n", rep.EffectivePartitionKey, *rep.EffectiveMax)
	} else {
		fmt.Fprintf(io.Out, "effective partition key %s\n", rep.EffectivePartitionKey)
	}
	// On a narrow terminal the bounds shorten and go before the size and the count; the
	// range id stays.
	t := output.NewTableOf(io.Out, st, locateRangeColumns...)
	for _, r := range rep.Ranges {
		t.Append(locateRangeCells(st, r)...)
	}
	if err := t.Render(); err != nil {
		return err
	}
	if rep.ConnectionMode != "direct" {
		return nil
	}
	fmt.Fprintln(io.Out)
	now := time.Now()
	rt := output.NewTableOf(io.Out, st,
		output.Column{Header: "RANGE", Key: true},
		output.Column{Header: "REGION", Key: true, Priority: 9, Min: 10},
		output.Column{Header: "REGION HEALTH", Short: "REGION H.", Priority: 4, Min: 10},
		output.Column{Header: "ROLE", Key: true},
		output.Column{Header: "REPLICA", Key: true, Priority: 6, Min: 16, KeepEnd: true},
		output.Column{Header: "HEALTH", Key: true, Priority: 8},
	)
	for _, r := range rep.Ranges {
		for _, g := range r.Regions {
			if g.Error != nil {
				rt.Append(r.ID, g.Region, g.Health.Text(now), st.None(), "no addresses: "+*g.Error, st.None())
				continue
			}
			for _, p := range g.Replicas {
				rt.Append(r.ID, g.Region, g.Health.Text(now), p.Role, p.URL, p.Health)
			}
		}
	}
	return rt.Render()
}

var locateRangeColumns = []output.Column{
	{Header: "RANGE", Key: true},
	{Header: "MIN INCLUSIVE", Short: "MIN", Priority: 6, Min: 8},
	{Header: "MAX EXCLUSIVE", Short: "MAX", Priority: 5, Min: 8},
	{Header: "ITEMS", Key: true, Priority: 8},
	{Header: "SIZE", Priority: 7},
}

// locateRangeCells are a range's cells: its bounds, items and size.
func locateRangeCells(st output.Styles, r locateRange) []string {
	items, size := "not reported", "not reported"
	if st.TSV {
		items, size = "", ""
	}
	if r.DocumentCount != nil {
		items = fmt.Sprint(*r.DocumentCount)
	}
	if r.SizeKB != nil {
		size = fmt.Sprintf("%d KB", *r.SizeKB)
	}
	minInclusive := r.MinInclusive
	if !st.TSV {
		minInclusive = orEmpty(minInclusive)
	}
	return []string{r.ID, minInclusive, r.MaxExclusive, items, size}
}

// printLocateTSV is locate under -o tsv: one table, the ranges; in direct mode a row
// per replica, the range's columns on each (the key and its hash go to stderr).
func printLocateTSV(io *IOStreams, st output.Styles, rep locateReport) error {
	fmt.Fprintf(io.ErrOut, "partition key %s, effective partition key %s\n", rep.PartitionKey, rep.EffectivePartitionKey)
	cols := locateRangeColumns
	if rep.ConnectionMode == "direct" {
		cols = append(slices.Clone(cols), output.Column{Header: "REGION"}, output.Column{Header: "REGION HEALTH"},
			output.Column{Header: "ROLE"}, output.Column{Header: "REPLICA"}, output.Column{Header: "HEALTH"}, output.Column{Header: "ERROR"})
	}
	t := output.NewTableOf(io.Out, st, cols...)
	now := time.Now()
	for _, r := range rep.Ranges {
		cells := locateRangeCells(st, r)
		if rep.ConnectionMode != "direct" {
			t.Append(cells...)
			continue
		}
		for _, g := range r.Regions {
			if g.Error != nil {
				t.Append(append(slices.Clone(cells), g.Region, g.Health.Text(now), "", "", "", *g.Error)...)
				continue
			}
			for _, p := range g.Replicas {
				t.Append(append(slices.Clone(cells), g.Region, g.Health.Text(now), p.Role, p.URL, p.Health, "")...)
			}
		}
	}
	return t.Render()
}

// orEmpty shows the empty lower bound of the first range.
func orEmpty(s string) string {
	if s == "" {
		return `""`
	}
	return s
}
