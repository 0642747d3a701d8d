package cmd

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
	"github.com/cosmosctl/cosmosctl/output"
)

// controlOptions say which running emulator a control subcommand talks to (see
// emulator_endpoint.go).
type controlOptions struct {
	Endpoint string
	Profile  string
	KeyFile  string
	// Database and Container are the flags of a subcommand that acts on a container
	// (addContainerFlags).
	Database, Container string
	// target is what client() resolved.
	target controlTarget
	// Output is the format, once settled (table or json): -o, --jq, COSMOSCTL_OUTPUT.
	Output string
	format formatFlags
	io     *IOStreams
	cmd    *cobra.Command // whose flags say what was given, and whose stderr gets warnings
}

func (o *controlOptions) addFlags(c *cobra.Command) {
	o.cmd = c
	c.Flags().StringVar(&o.Endpoint, "endpoint", "", "the emulator's global endpoint (default: $COSMOSCTL_EMULATOR_ENDPOINT, else the data commands' $COSMOSCTL_ENDPOINT or profile endpoint, else "+defaultEmulatorEndpoint+")")
	c.Flags().StringVar(&o.Profile, "profile", "", "profile whose endpoint and key to use ($COSMOSCTL_PROFILE, else default_profile)")
	c.Flags().StringVar(&o.KeyFile, "key-file", "", "file holding the emulator's key (default: $COSMOSCTL_KEY or $COSMOSCTL_KEY_FILE, else the profile's, else the well-known emulator key)")
	o.format.textAlias = true
	o.format.register(c.Flags(), config.OutputTable, config.OutputJSON)
}

// tables declares that the command prints a table, and so -o tsv too.
func (o *controlOptions) tables() *controlOptions {
	o.format.add(config.OutputTSV)
	return o
}

func (o *controlOptions) client() (*emulator.ControlClient, error) {
	var err error
	if o.Output, err = o.format.apply(o.io, envFormat()); err != nil {
		return nil, err
	}
	var warn io.Writer
	if o.cmd != nil {
		warn = o.cmd.ErrOrStderr()
	}
	t, err := o.resolveControlTarget(warn)
	if err != nil {
		return nil, err
	}
	o.target = t
	if !strings.HasPrefix(t.endpoint, "http://") && !strings.HasPrefix(t.endpoint, "https://") {
		return nil, usageErrorf("the emulator endpoint %q (%s) must be a URL such as %s", t.endpoint, t.source, defaultEmulatorEndpoint)
	}
	c, err := emulator.NewControlClient(t.endpoint, t.key)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	return c, nil
}

func printJSON(io *IOStreams, v any) error { return output.WriteJSON(io.Out, v) }

func newEmulatorStatusCmd(io *IOStreams) *cobra.Command {
	opts := &controlOptions{io: io}
	var wait time.Duration
	c := &cobra.Command{
		Use:   "status",
		Short: "Show a running emulator's regions, latencies and faults",
		Long: `Show a running emulator's regions, latencies, fault rules and settings.

--wait D makes it a readiness probe: it asks again until the emulator answers or D
has passed, so that a script that started ` + "`cosmosctl emulator &`" + ` waits for it
without a sleep. An emulator that is not up yet refuses the connection; any answer
(a refused key included) is final. Not answered within D: exit 8.`,
		Example: `  cosmosctl emulator status
  cosmosctl emulator status -o json | jq '.faults'
  cosmosctl emulator --port 8081 & cosmosctl emulator status --wait 30s >/dev/null   # ready`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cl, err := opts.client()
			if err != nil {
				return err
			}
			var st emulator.State
			if wait > 0 {
				st, err = waitForEmulator(c.Context(), cl, wait)
			} else {
				st, err = cl.State(c.Context())
			}
			if err != nil {
				return err
			}
			if config.JSONOutput(opts.Output) {
				return printJSON(io, emulatorStatusOf(st))
			}
			tw := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "account\t%s\n", st.Account)
			fmt.Fprintf(tw, "endpoint\t%s\n", st.Endpoint)
			fmt.Fprintf(tw, "multi-write\t%v\n", st.MultiWrite)
			fmt.Fprintf(tw, "replication lag\t%s\n", st.ReplicationLag)
			fmt.Fprintf(tw, "persistent\t%v\n", st.Persistent)
			if st.DataDir != "" {
				fmt.Fprintf(tw, "data\t%s\n", st.DataDir)
			}
			fmt.Fprintf(tw, "enforce throughput\t%v\n", st.EnforceThroughput)
			if st.EnforceThroughput || st.Throttled > 0 {
				fmt.Fprintf(tw, "throttled\t%d answered 429/3200 (RU budget spent)\n", st.Throttled)
			}
			for _, r := range st.Regions {
				role := "read"
				if r.Write {
					role = "write"
				}
				fmt.Fprintf(tw, "region\t%s\t%s\t%s\n", r.Name, role, r.Endpoint)
			}
			for _, l := range st.Latency {
				fmt.Fprintf(tw, "latency\t%s\t%s\t%s\n", orAny(l.Region), orAll(l.Operation), l.Distribution)
			}
			tw.Flush()
			return printFaults(io, st.Faults)
		},
	}
	opts.addFlags(c)
	c.Flags().DurationVar(&wait, "wait", 0, "ask until the emulator answers, at most this long (a readiness probe; 0: ask once)")
	return c
}

func orAny(region string) string {
	if region == "" {
		return "(any region)"
	}
	return region
}

func orAll(op string) string {
	if op == "" {
		return "all"
	}
	return op
}

func printFaults(io *IOStreams, rules []faults.Rule) error {
	if len(rules) == 0 && !io.tsv {
		fmt.Fprintln(io.Out, "no fault rules")
		return nil
	}
	// On a narrow terminal the probability and count shorten their headers, then the
	// count, the operations and the window go; the id, region, effect and how often
	// the rule fired stay.
	t := output.NewTableOf(io.Out, io.outStyles(true),
		output.Column{Header: "ID", Key: true},
		output.Column{Header: "REGION", Key: true, Priority: 9, Min: 10},
		output.Column{Header: "OPERATIONS", Short: "OPS", Priority: 3, Min: 8},
		output.Column{Header: "EFFECT", Key: true, Priority: 8, Min: 12},
		output.Column{Header: "PROBABILITY", Short: "PROB", Priority: 4},
		output.Column{Header: "COUNT", Priority: 2},
		output.Column{Header: "WINDOW", Priority: 5, Min: 10},
		output.Column{Header: "FIRED", Key: true},
	).Gap(2)
	for _, r := range rules {
		ops := strings.Join(r.Operations, ",")
		effect := r.Effect
		switch r.Effect {
		case faults.EffectStatus:
			effect = fmt.Sprintf("status %d/%d", r.Status, r.SubStatus)
			if r.RetryAfter > 0 {
				effect += " retry-after " + r.RetryAfter.String()
			}
		case faults.EffectDelay:
			effect = "delay " + r.Delay.String()
		}
		p := r.Probability
		if p == 0 {
			p = 1
		}
		count := "∞"
		if r.Count > 0 {
			count = fmt.Sprint(r.Count)
		}
		window := faultWindow(r)
		t.Append(r.ID, orAny(r.Region), orAll(ops), effect, fmt.Sprintf("%g", p), count, window, fmt.Sprint(r.Fired))
	}
	return t.Render()
}

// faultWindow says when a rule is active in the emulator's clock: the times its
// window opens and closes, which need no knowledge of whether it counts from the
// emulator's start (a scenario's rule) or from when it was added.
func faultWindow(r faults.Rule) string {
	if r.After == 0 && r.For == 0 {
		return "always"
	}
	if r.Since.IsZero() { // an emulator that does not report it
		w := "after " + r.After.String()
		if r.For > 0 {
			w += " for " + r.For.String()
		}
		return w
	}
	from := r.Since.Add(time.Duration(r.After)).Local()
	if r.For == 0 {
		return "from " + from.Format(time.TimeOnly)
	}
	return from.Format(time.TimeOnly) + "–" + from.Add(time.Duration(r.For)).Format(time.TimeOnly)
}

func newEmulatorFailoverCmd(io *IOStreams) *cobra.Command {
	opts := &controlOptions{io: io}
	c := &cobra.Command{
		Use:   "failover REGION",
		Short: "Make REGION the write region of a running emulator",
		Long: `Make REGION the write region. The old write region then answers writes with
403/3 (WriteForbidden), and GET / lists the new region first, which is what
makes SDKs re-read the account and follow.`,
		Example: `  cosmosctl emulator failover "West US"`,
		Args:    exactArgs(1, "one region name"),
		RunE: func(c *cobra.Command, args []string) error {
			cl, err := opts.client()
			if err != nil {
				return err
			}
			acct, err := cl.Failover(c.Context(), args[0])
			if err != nil {
				return err
			}
			if config.JSONOutput(opts.Output) {
				return printJSON(io, emulatorFailoverOf(acct))
			}
			fmt.Fprintf(io.Out, "write region is now %s\n", acct.WritableLocations[0].Name)
			return nil
		},
	}
	opts.addFlags(c)
	return c
}

func newEmulatorReplicationCmd(io *IOStreams) *cobra.Command {
	opts := &controlOptions{io: io}
	var lag time.Duration
	c := &cobra.Command{
		Use:     "replication",
		Short:   "Change the replication lag of a running emulator",
		Example: "  cosmosctl emulator replication --lag 2s",
		Args:    noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if !c.Flags().Changed("lag") {
				return usageErrorf("give the new lag with --lag, e.g. --lag 500ms")
			}
			if lag < 0 {
				return usageErrorf("--lag must not be negative (got %s)", lag)
			}
			cl, err := opts.client()
			if err != nil {
				return err
			}
			st, err := cl.SetReplicationLag(c.Context(), faults.Duration(lag))
			if err != nil {
				return err
			}
			if config.JSONOutput(opts.Output) {
				return printJSON(io, emulatorStatusOf(st))
			}
			fmt.Fprintf(io.Out, "replication lag is now %s\n", st.ReplicationLag)
			return nil
		},
	}
	c.Flags().DurationVar(&lag, "lag", 0, "how long a write takes to reach the other regions")
	opts.addFlags(c)
	return c
}

func newEmulatorEnforceThroughputCmd(io *IOStreams) *cobra.Command {
	opts := &controlOptions{io: io}
	c := &cobra.Command{
		Use:   "enforce-throughput on|off",
		Short: "Turn throttling by provisioned throughput on or off in a running emulator",
		Long: `Turn throttling by provisioned throughput on or off, as --enforce-throughput
does at start. On, each partition key range of a container has its share of the
container's RU/s (or its database's shared RU/s) to spend per second, starting full;
an item operation whose charge does not fit answers 429/3200 with
x-ms-retry-after-ms, is charged 0 RU and is not applied. Off, throughput is
bookkeeping only. ` + "`cosmosctl emulator status`" + ` counts the requests throttled.`,
		Example: "  cosmosctl emulator enforce-throughput on\n  cosmosctl emulator enforce-throughput off",
		Args:    exactArgs(1, "on or off"),
		RunE: func(c *cobra.Command, args []string) error {
			var on bool
			switch args[0] {
			case "on":
				on = true
			case "off":
			default:
				return usageErrorf("enforce-throughput takes on or off, not %q", args[0])
			}
			cl, err := opts.client()
			if err != nil {
				return err
			}
			st, err := cl.SetEnforceThroughput(c.Context(), on)
			if err != nil {
				return err
			}
			if config.JSONOutput(opts.Output) {
				return printJSON(io, emulatorStatusOf(st))
			}
			if st.EnforceThroughput {
				fmt.Fprintln(io.Out, "throughput is now enforced: 429/3200 once a range's share of its container's RU/s is spent")
			} else {
				fmt.Fprintln(io.Out, "throughput is now bookkeeping only")
			}
			return nil
		},
	}
	opts.addFlags(c)
	return c
}

func newEmulatorLatencyCmd(io *IOStreams) *cobra.Command {
	opts := &controlOptions{io: io}
	var spec faults.LatencySpec
	var fixed, min, max, p50, p99 time.Duration
	c := &cobra.Command{
		Use:   "latency",
		Short: "Show or set the latency distributions of a running emulator",
		Long: `Set the latency of one region and operation, then print the latency table.
Give --fixed, or --min and --max (uniform), or --p50 and --p99 (log-normal);
--none removes added latency. With no flags, print the latency table.`,
		Example: `  cosmosctl emulator latency
  cosmosctl emulator latency --region "East US" --op reads --p50 5ms --p99 40ms
  cosmosctl emulator latency --region "West US" --fixed 70ms`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			for name, d := range map[string]time.Duration{"fixed": fixed, "min": min, "max": max, "p50": p50, "p99": p99} {
				if d < 0 {
					return usageErrorf("--%s must not be negative (got %s)", name, d)
				}
			}
			f := c.Flags().Changed
			list := false
			switch {
			case f("none"):
				spec.Kind = faults.KindNone
			case f("fixed"):
				spec.Kind, spec.Value = faults.KindFixed, faults.Duration(fixed)
			case f("min") || f("max"):
				spec.Kind, spec.Min, spec.Max = faults.KindUniform, faults.Duration(min), faults.Duration(max)
			case f("p50") || f("p99"):
				spec.Kind, spec.P50, spec.P99 = faults.KindLognormal, faults.Duration(p50), faults.Duration(p99)
			case f("region") || f("op"):
				return usageErrorf("give a distribution: --fixed D, --min D --max D, --p50 D --p99 D, or --none (with no flags at all, the latency table is printed)")
			default:
				list = true
			}
			if !list {
				if err := spec.Distribution.Validate(); err != nil {
					return &UsageError{Err: err}
				}
			}
			cl, err := opts.client()
			if err != nil {
				return err
			}
			var table []faults.LatencyEntry
			if list {
				table, err = cl.Latency(c.Context())
			} else {
				table, err = cl.SetLatency(c.Context(), spec)
			}
			if err != nil {
				return err
			}
			if config.JSONOutput(opts.Output) {
				return printJSON(io, latencyTableJSON(table))
			}
			return printLatency(io, table)
		},
	}
	fl := c.Flags()
	fl.StringVar(&spec.Region, "region", "", "region (default: every region)")
	fl.StringVar(&spec.Operation, "op", "all", "operation: read, query, create, upsert, replace, delete, patch, account, pkranges, metadata, or a group: reads, writes, all")
	fl.DurationVar(&fixed, "fixed", 0, "a fixed latency")
	fl.DurationVar(&min, "min", 0, "uniform latency lower bound")
	fl.DurationVar(&max, "max", 0, "uniform latency upper bound")
	fl.DurationVar(&p50, "p50", 0, "log-normal median")
	fl.DurationVar(&p99, "p99", 0, "log-normal 99th percentile")
	fl.Bool("none", false, "no added latency")
	opts.addFlags(c)
	opts.tables()
	return c
}

// printLatency prints the latency table, most specific entries where they were set:
// the emulator picks a region's own entry over the every-region one, and an exact
// operation over its group.
func printLatency(io *IOStreams, table []faults.LatencyEntry) error {
	if len(table) == 0 && !io.tsv {
		fmt.Fprintln(io.Out, "no added latency")
		return nil
	}
	t := output.NewTableOf(io.Out, io.outStyles(true),
		output.Column{Header: "REGION", Key: true, Priority: 9, Min: 10},
		output.Column{Header: "OPERATION", Key: true},
		output.Column{Header: "LATENCY", Key: true, Priority: 8, Min: 16},
	).Gap(2)
	for _, l := range table {
		t.Append(orAny(l.Region), orAll(l.Operation), l.Distribution.String())
	}
	return t.Render()
}

func newEmulatorFaultCmd(io *IOStreams) *cobra.Command {
	c := &cobra.Command{
		Use:   "fault",
		Short: "Add, list and remove fault rules of a running emulator",
		Example: `  cosmosctl emulator fault add --region "East US" --op reads --effect status --status 503
  cosmosctl emulator fault list
  cosmosctl emulator fault remove f1
  cosmosctl emulator fault clear`,
	}
	c.AddCommand(newFaultAddCmd(io), newFaultListCmd(io), newFaultRemoveCmd(io), newFaultClearCmd(io))
	return c
}

func newFaultAddCmd(io *IOStreams) *cobra.Command {
	opts := &controlOptions{io: io}
	var r faults.Rule
	var delay, retryAfter, after, forD time.Duration
	c := &cobra.Command{
		Use:   "add",
		Short: "Add a fault rule",
		Long: `Add a fault rule. Effects:
  delay          add --delay to matching requests
  status         answer --status (and --substatus, --retry-after for 429)
  hang           never answer until the client gives up
  refuse         refuse connections: the region is down
  drop-response  apply the write, then drop the connection (the ambiguous write)

--after and --for count from now, when the rule is added: --after 10s --for 30s
is active from ten seconds from now for thirty seconds, however long the emulator
has been running. (The after and for of a scenario file's rules count from the
emulator's start, so that a scenario plays out the same way each run.)
` + "`cosmosctl emulator fault list`" + ` shows each rule's window in the emulator's clock.`,
		Example: `  cosmosctl emulator fault add --region "East US" --op reads --effect delay --delay 1s --probability 0.05
  cosmosctl emulator fault add --region "East US" --effect status --status 429 --retry-after 200ms --count 10
  cosmosctl emulator fault add --region "West US" --effect refuse --for 30s      # down now, for 30 s
  cosmosctl emulator fault add --region "East US" --effect hang --after 10s --for 1m
  cosmosctl emulator fault add --op create --effect drop-response --probability 0.3`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			for name, d := range map[string]time.Duration{"delay": delay, "retry-after": retryAfter, "after": after, "for": forD} {
				if d < 0 {
					return usageErrorf("--%s must not be negative (got %s)", name, d)
				}
			}
			f := c.Flags().Changed
			// On the wire a probability of 0 means "not given", that is always; a
			// --probability 0 typed on the command line means "never" and is a mistake.
			if p := r.Probability; f("probability") && (math.IsNaN(p) || p <= 0 || p > 1) {
				return usageErrorf("--probability must be more than 0 and at most 1, e.g. 0.05 (got %v); leave it out to fire on every matching request", p)
			}
			switch {
			case r.Effect == faults.EffectDelay && !f("delay"):
				return usageErrorf("--effect delay needs --delay, e.g. --delay 500ms")
			case r.Effect == faults.EffectDelay && delay == 0:
				return usageErrorf("--delay must be more than 0 (got %s)", delay)
			case r.Effect != faults.EffectDelay && f("delay") && r.Effect != "":
				return usageErrorf("--delay is only used with --effect delay, not --effect %s", r.Effect)
			}
			if r.Effect == faults.EffectDelay {
				r.Delay = faults.Distribution{Kind: faults.KindFixed, Value: faults.Duration(delay)}
			}
			r.RetryAfter, r.After, r.For = faults.Duration(retryAfter), faults.Duration(after), faults.Duration(forD)
			check := r
			if err := check.Validate(); err != nil {
				return &UsageError{Err: err}
			}
			cl, err := opts.client()
			if err != nil {
				return err
			}
			added, err := cl.AddFault(c.Context(), r)
			if err != nil {
				return err
			}
			if config.JSONOutput(opts.Output) {
				return printJSON(io, faultOf(added))
			}
			fmt.Fprintf(io.Out, "added fault %s\n", added.ID)
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVar(&r.Region, "region", "", "region the rule applies to (default: every region)")
	fl.StringSliceVar(&r.Operations, "op", nil, "operations (read, query, create, upsert, replace, delete, patch, account, pkranges, metadata, or reads, writes, all)")
	fl.StringVar(&r.Effect, "effect", "", "delay, status, hang, refuse or drop-response")
	fl.DurationVar(&delay, "delay", 0, "extra latency for --effect delay (required with it)")
	fl.IntVar(&r.Status, "status", 0, "HTTP status for --effect status (e.g. 503, 429, 408, 410)")
	fl.IntVar(&r.SubStatus, "substatus", 0, "substatus sent with --status (e.g. 3 with 403)")
	fl.DurationVar(&retryAfter, "retry-after", 0, "retry-after sent with 429 (default 100ms)")
	fl.Float64Var(&r.Probability, "probability", 0, "chance that a matching request is hit, more than 0 and at most 1 (default: every matching request)")
	fl.IntVar(&r.Count, "count", 0, "stop after firing this many times (default: never)")
	fl.DurationVar(&after, "after", 0, "become active this long from now (default: at once)")
	fl.DurationVar(&forD, "for", 0, "stay active this long once active (default: forever)")
	opts.addFlags(c)
	return c
}

func newFaultListCmd(io *IOStreams) *cobra.Command {
	opts := &controlOptions{io: io}
	c := &cobra.Command{
		Use:     "list",
		Short:   "List fault rules and how often each fired",
		Example: "  cosmosctl emulator fault list\n  cosmosctl emulator fault list -o json | jq '.[] | select(.fired > 0) | .id'",
		Args:    noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cl, err := opts.client()
			if err != nil {
				return err
			}
			rules, err := cl.Faults(c.Context())
			if err != nil {
				return err
			}
			if config.JSONOutput(opts.Output) {
				return printJSON(io, faultsJSON(rules))
			}
			return printFaults(io, rules)
		},
	}
	opts.addFlags(c)
	opts.tables()
	return c
}

func newFaultRemoveCmd(io *IOStreams) *cobra.Command {
	opts := &controlOptions{io: io}
	c := &cobra.Command{
		Use:     "remove ID",
		Short:   "Remove one fault rule",
		Example: "  cosmosctl emulator fault remove f2",
		Args:    exactArgs(1, "one fault id (see `cosmosctl emulator fault list`)"),
		RunE: func(c *cobra.Command, args []string) error {
			cl, err := opts.client()
			if err != nil {
				return err
			}
			if err := cl.RemoveFault(c.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(io.ErrOut, "removed fault %s\n", args[0])
			return nil
		},
	}
	opts.addFlags(c)
	return c
}

func newFaultClearCmd(io *IOStreams) *cobra.Command {
	opts := &controlOptions{io: io}
	c := &cobra.Command{
		Use:     "clear",
		Short:   "Remove every fault rule",
		Example: "  cosmosctl emulator fault clear                       # end the rehearsal's faults\n  cosmosctl emulator fault clear --endpoint http://127.0.0.1:9081",
		Args:    noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cl, err := opts.client()
			if err != nil {
				return err
			}
			if err := cl.ClearFaults(c.Context()); err != nil {
				return err
			}
			fmt.Fprintln(io.ErrOut, "removed every fault rule")
			return nil
		},
	}
	opts.addFlags(c)
	return c
}
