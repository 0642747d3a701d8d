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
	"github.com/cosmosctl/cosmosctl/output"
)

func newRegionsCmd(io *IOStreams) *cobra.Command {
	var conn connFlags
	var noPing bool
	c := &cobra.Command{
		Use:   "regions",
		Short: "Show the account's regions, the effective order, and a latency to each",
		Long: `Show the account's write and read regions with their endpoints, the order the
current settings (--preferred-regions, --exclude, --region) use them in for reads
and writes, the latency of one request to each region, and the region health
remembered from earlier commands (cosmosctl help health): HEALTH for reads and
writes, and "reads go to" in the order operations use now, unavailable regions
last.

--e2e-timeout (or COSMOSCTL_E2E_TIMEOUT, profile e2e_timeout) bounds the whole
command: a region that has not answered by then is shown unreachable, so that
regions answers in the middle of an outage too.
` + accountHelp + `

The table goes to stdout; -o json prints one JSON object with every region, its
latency and health, and the orders reads and writes use. Exit codes: cosmosctl
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
	conn.noContainer = true
	// The data commands' flags that mean nothing to a command that reads no item.
	for _, name := range []string{"database", "container", "diagnostics", "no-replica-health"} {
		_ = c.Flags().MarkHidden(name)
	}
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
	if d := sess.settings.E2ETimeout; d > 0 {
		// The whole command, the account lookup and every region's GET / included: a
		// region that hangs must not hold up the answer about the others.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	exclude, err := conn.excludes(ctx, sess)
	if err != nil {
		return err
	}
	rep, err := sess.client.Regions(ctx, exclude, !noPing)
	if err != nil {
		return asUsage(err)
	}

	// Region health as the command's own store holds it: what earlier commands saved,
	// merged when the session opened, and nothing else (a GET / is not an operation).
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
		lat := st.None()
		switch {
		case noPing:
		case r.Error != "":
			lat = "unreachable"
		default:
			lat = output.HumanDuration(r.Latency)
		}
		t.Append(r.Name, role, rank(st, r.ReadRank), rank(st, r.WriteRank), lat, healths[r.Name].Text(now), r.Endpoint, r.Note)
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
	for _, fb := range []string{rep.ReadFallback, rep.WriteFallback} {
		if fb != "" {
			fmt.Fprintf(w, "note: %s\n", fb)
		}
	}
	return nil
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
	return marshalJSON(regionJSON{RegionInfoJSON: r.RegionInfo.JSON(), Health: r.Health})
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
