package cmd

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/health"
	"github.com/cosmosctl/cosmosctl/internal/jsonenc"
	"github.com/cosmosctl/cosmosctl/output"
	"github.com/cosmosctl/cosmosctl/probe"
)

func newRegionsCmd(io *IOStreams) *cobra.Command {
	var conn connFlags
	var noPing bool
	c := &cobra.Command{
		Use:   "regions",
		Short: "Show the account's regions, the effective order, and a read's latency in each",
		Long: `Show the account's write and read regions with their endpoints, the order the
current settings (--preferred-regions, --exclude, --region) use them in for reads
and writes, the latency of one read in each region, and the region health
remembered from earlier commands (cosmosctl help health): HEALTH for reads and
writes, and "reads go to" in the order operations use now, unavailable regions
last.

The regions and their roles are the account's as it answers now: every endpoint
of the account (the global one and each region's) is asked at once, and the
first answer is used, so a failover shows at once. Only when none answers are
the regions shown as an earlier command saved them (cosmosctl help health:
topology.json, up to 7 days old), and the output says so: a note under the table,
"topology": {"source": "saved", "fetched_at": ...} in JSON.

The latency is a data-plane read: a point read of the probe item
"cosmosctl-probe" (the item probe reads; a 404 when it does not exist is an
answer too) in the configured container, sent to each region at once, pinned to
it and never retried. Its outcome counts toward region health as any read's: a
region that does not answer within --e2e-timeout, or within the read's 6s attempt
timeout, counts a timeout (a slow answer is a failed one, as the Java SDK's
circuit breaker counts an operation its end-to-end timeout cancelled), a 503 or
500 a failure. With no database and container configured, the latency is that of
GET / to each regional endpoint (the account lookup: it says nothing of the
region's data plane), and a line under the table says so. --no-latency sends
neither.

--e2e-timeout (or COSMOSCTL_E2E_TIMEOUT, profile e2e_timeout) bounds the whole
command: a region that has not answered by then is shown as a timeout, so that
regions answers in the middle of an outage too.
` + accountHelp + `

The table goes to stdout; -o json prints one JSON object with every region, its
latency and health, the orders reads and writes use, where the topology came
from ("topology") and what was measured ("measurement"). Exit codes: cosmosctl
help exit-codes.`,
		Example: `  cosmosctl regions
  cosmosctl regions --exclude "East US"
  cosmosctl regions --preferred-regions "West US,East US" -o json`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runRegions(c.Context(), io, &conn, noPing)
		},
	}
	conn.register(c)
	conn.format.add(config.OutputTSV)
	conn.noContainer, conn.optionalContainer = true, true
	// The data commands' flags that mean nothing to a command that reads no item.
	for _, name := range []string{"diagnostics", "no-replica-health"} {
		_ = c.Flags().MarkHidden(name)
	}
	c.Flags().Lookup("database").Usage = "database of the container each region's read goes to ($COSMOSCTL_DATABASE)"
	c.Flags().Lookup("container").Usage = "container each region's read goes to; without one, GET / is measured ($COSMOSCTL_CONTAINER)"
	c.Flags().BoolVar(&noPing, "no-latency", false, "do not measure the latency to each region")
	return c
}

func runRegions(ctx context.Context, io *IOStreams, conn *connFlags, noPing bool) error {
	settings, err := conn.resolve(io)
	if err != nil {
		return err
	}
	sess, err := conn.connect(ctx, io, settings)
	if err != nil {
		return err
	}
	defer sess.Close()
	e2e := sess.settings.E2ETimeout
	var exclude []string
	{
		// --region needs the account's regions: bounded like the rest of the command.
		ectx := ctx
		if e2e > 0 {
			var cancel context.CancelFunc
			ectx, cancel = context.WithTimeout(ctx, e2e)
			defer cancel()
		}
		if exclude, err = conn.excludes(ectx, sess); err != nil {
			return err
		}
	}
	opts := engine.RegionsOptions{Exclude: exclude, Measure: !noPing, Timeout: e2e}
	if db, coll := sess.settings.Database, sess.settings.Container; db != "" && coll != "" {
		opts.Read = &engine.Operation{Kind: engine.OpRead, Database: db, Container: coll, ID: probe.ItemID}
	}
	rep, err := sess.client.Regions(ctx, opts)
	if err != nil {
		return asUsage(err)
	}

	// Region health as the command's own store holds it: what earlier commands saved,
	// merged when the session opened, and what this command's reads just taught it.
	hs := sess.client.Health()
	entries := hs.Entries()
	healths := make(map[string]output.RegionHealth, len(rep.Regions))
	for _, r := range rep.Regions {
		healths[r.Name] = output.RegionHealthOf(entries, r.Name)
	}
	readOrder := byHealth(hs, rep.EffectiveReads, health.Read)
	writeOrder := byHealth(hs, rep.EffectiveWrites, health.Write)
	if conn.wantJSON(sess.settings) {
		j := regionsReport{RegionsReport: rep, Regions: make([]regionWithHealth, len(rep.Regions)),
			HealthReadOrder: readOrder, HealthWriteOrder: writeOrder}
		for i, r := range rep.Regions {
			j.Regions[i] = regionWithHealth{RegionInfo: r, Health: healths[r.Name]}
		}
		return output.WriteJSON(io.Out, j)
	}

	now := time.Now()
	st := io.outStyles(conn.noColor)
	// On a narrow terminal the endpoint shortens to its host, then goes with the note;
	// the ranks go before the role and the latency; the health is cut last.
	t := output.NewTableOf(io.Out, st,
		output.Column{Header: "REGION", Key: true, Priority: 9, Min: 10},
		output.Column{Header: "ROLE", Priority: 5},
		output.Column{Header: "READ #", Priority: 4},
		output.Column{Header: "WRITE #", Priority: 3},
		output.Column{Header: "LATENCY", Priority: 6},
		output.Column{Header: "HEALTH", Key: true, Priority: 8, Min: 12},
		output.Column{Header: "ENDPOINT", Priority: 1, Abbrev: output.EndpointHost},
		output.Column{Header: "NOTE", Priority: 2, Min: 16},
	)
	for _, r := range rep.Regions {
		role := "read"
		if r.Write {
			role = "write"
		}
		t.Append(r.Name, role, rank(st, r.ReadRank), rank(st, r.WriteRank), latencyCell(st, r, rep.Measurement), healths[r.Name].Text(now), r.Endpoint, r.Note)
	}
	if err := t.Render(); err != nil {
		return err
	}
	readDown := func(region string) bool { return healths[region].Read.Status != health.StatusAvailable }
	writeDown := func(region string) bool { return healths[region].Write.Status != health.StatusAvailable }
	// Under the table for a person; on stderr under -o tsv, whose stdout is the table
	// alone (its READ # and WRITE # columns give the same orders).
	w := io.Out
	if io.tsv {
		w = io.ErrOut
	} else {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "reads go to:  %s\n", orderText(readOrder, rep.EffectiveReads, readDown))
	fmt.Fprintf(w, "writes go to: %s\n", orderText(writeOrder, rep.EffectiveWrites, writeDown))
	if rep.Consistency != "" {
		fmt.Fprintf(w, "consistency:  %s\n", rep.Consistency)
	}
	if m := measurementText(rep.Measurement); m != "" {
		fmt.Fprintf(w, "latency: %s\n", m)
	}
	if tp := rep.Topology; tp.Source == "saved" {
		fmt.Fprintf(w, "note: the account did not answer (%s): the regions and their roles are as saved %s (%s ago); a failover since then is not shown\n",
			tp.Error, tp.FetchedAt.Local().Format("2006-01-02 15:04:05"), now.Sub(tp.FetchedAt).Round(time.Second))
	}
	for _, fb := range []string{rep.ReadFallback, rep.WriteFallback} {
		if fb != "" {
			fmt.Fprintf(w, "note: %s\n", fb)
		}
	}
	return nil
}

// latencyCell is a region's LATENCY: the time of its answer, with the status when it is
// not the answer a read expects ("12ms", "40ms (503)"), "timeout", "unreachable", or a
// dash when nothing was measured.
func latencyCell(st output.Styles, r engine.RegionInfo, m *engine.Measurement) string {
	switch {
	case !r.Measured:
		return st.None()
	case r.TimedOut:
		return "timeout"
	case !r.Answered:
		return "unreachable"
	}
	lat := output.HumanDuration(r.Latency)
	expected := r.Status < 300 || (m != nil && m.Request == "read" && r.Status == 404 && r.SubStatus == 0)
	if !expected {
		lat += fmt.Sprintf(" (%d)", r.Status)
	}
	return lat
}

// measurementText says what the latency is the time of.
func measurementText(m *engine.Measurement) string {
	switch {
	case m == nil:
		return ""
	case m.Request == "read":
		return fmt.Sprintf("one read of the item %q in %s/%s, pinned to each region, at once (a 404 is an answer: the read went through the region's data plane); a read not answered within %s is a timeout of its region",
			m.ID, m.Database, m.Container, time.Duration(m.TimeoutMs*float64(time.Millisecond)).Round(time.Millisecond))
	}
	why := "no database and container are configured"
	if m.Note != "" {
		why = m.Note
	}
	return "GET / to each regional endpoint, the account lookup: not a data read (" + why + "; give --database and --container to measure a read)"
}

func rank(st output.Styles, n int) string {
	if n == 0 {
		return st.None()
	}
	return strconv.Itoa(n)
}

// regionsReport is `regions -o json`: the engine's report, each region with the health
// remembered of it ("health": {"read": {...}, "write": {...}}).
type regionsReport struct {
	*engine.RegionsReport
	Regions []regionWithHealth `json:"regions"`
	// HealthReadOrder and HealthWriteOrder are the effective regions in the order
	// operations use them now: region health moves unavailable regions last.
	HealthReadOrder  []string `json:"health_read_order"`
	HealthWriteOrder []string `json:"health_write_order"`
}

type regionWithHealth struct {
	engine.RegionInfo
	Health output.RegionHealth
}

// regionJSON is a region of `regions -o json`: the engine's region with the health
// remembered of it.
type regionJSON struct {
	engine.RegionInfoJSON
	Health output.RegionHealth `json:"health"`
}

// MarshalJSON writes the region as regionJSON.
func (r regionWithHealth) MarshalJSON() ([]byte, error) {
	return jsonenc.Marshal(regionJSON{RegionInfoJSON: r.RegionInfo.JSON(), Health: r.Health})
}

// JSONSchemaAlias is the type the region's JSON schema is generated from.
func (regionWithHealth) JSONSchemaAlias() any { return regionJSON{} }

// byHealth is the order operations use regions in now, as the engine orders them:
// regions that region health knows to be unavailable last (never left out), unless
// every one is; a single region is never reordered.
func byHealth(h *health.Store, regions []string, kind health.Kind) []string {
	if h == nil || len(regions) < 2 {
		return regions
	}
	o := h.Order(regions, "", kind)
	o.Probe.Abandoned() // only looking: a probe is an operation's to make
	return o.Regions
}

// orderText is the order operations use, and what region health changed in it.
func orderText(now, settings []string, down func(region string) bool) string {
	text := strings.Join(now, " → ")
	if slices.Equal(now, settings) {
		return text
	}
	var last []string
	for _, r := range now {
		if down(r) {
			last = append(last, r)
		}
	}
	return text + " (region health: " + strings.Join(last, ", ") + " unavailable, used last)"
}
