package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/output"
)

// emulator split and emulator merge change a container's partition key ranges while
// the emulator serves, as the service does under load or after a throughput change:
// the documents move, the old ranges answer 410/1002 and the ranges feed lists the
// new ones with their parents. They drive the control API (emulator/reshape.go); the
// container is the one the data commands would use.

func newEmulatorSplitCmd(io *IOStreams) *cobra.Command {
	opts := &controlOptions{io: io}
	var at string
	c := &cobra.Command{
		Use:   "split [RANGE]",
		Short: "Split a partition key range of a running emulator's container",
		Long: `Split partition key range RANGE of a container in two, while the emulator serves:
its documents move to two new ranges (the next ids), each holding those whose
effective partition key falls in it. The range splits at --at, an effective
partition key strictly inside it (hex, as the ranges feed writes bounds), else at
the median key of its documents. RANGE may be left out when the container has
one range.

From then on the old range answers requests addressed to it with 410/1002
(PartitionKeyRangeGone), on which SDKs re-read the ranges; the ranges feed lists
the new ranges with their parents. A query or change feed continuation of the old
range goes on in the new ones.

The container is --database and --container, else COSMOSCTL_DATABASE and
COSMOSCTL_CONTAINER, else the profile's, else the emulator's only database and
container (or app and items). A persistent emulator (--data-dir) refuses: its data
file keeps the ranges a container was created with.

EXIT STATUS
  0  the range split
  2  refused: no such range, --at outside it, a persistent emulator; or bad
     flags or arguments
  3  no such database or container
  8  the emulator does not answer
  other codes as in cosmosctl help exit-codes`,
		Example: `  cosmosctl emulator split 1
  cosmosctl emulator split 0 --at 08 --database app --container items
  cosmosctl emulator split 4 -o json | jq -r '.created[].id'`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 1 {
				return exactArgs(1, "the id of the range to split")(c, args)
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			if at != "" && !isEPK(at) {
				return usageErrorf("--at must be an effective partition key, hex digits such as 08 or 1A2B (got %q)", at)
			}
			in := emulator.SplitRequest{At: strings.ToUpper(at)}
			if len(args) == 1 {
				in.Range = args[0]
			}
			return runReshape(c.Context(), opts, func(ctx context.Context, cl *emulator.ControlClient, db, coll string) (emulator.RangeChange, error) {
				in.Database, in.Container = db, coll
				return cl.Split(ctx, in)
			})
		},
	}
	opts.addFlags(c)
	opts.addContainerFlags(c, "container whose range splits")
	opts.tables()
	c.Flags().StringVar(&at, "at", "", "the effective partition key to split at, strictly inside the range (default: the median key of its documents)")
	return c
}

func newEmulatorMergeCmd(io *IOStreams) *cobra.Command {
	opts := &controlOptions{io: io}
	c := &cobra.Command{
		Use:   "merge RANGE RANGE",
		Short: "Merge two adjacent partition key ranges of a running emulator's container",
		Long: `Merge two adjacent partition key ranges of a container into one, while the
emulator serves: their documents move to a new range (the next id) spanning both.

From then on the old ranges answer requests addressed to them with 410/1002
(PartitionKeyRangeGone), on which SDKs re-read the ranges; the ranges feed lists
the new range with its parents. A query or change feed continuation of an old
range goes on in the new one, narrowed to the old range's keys
(x-ms-start-epk/x-ms-end-epk), as SDKs with merge support send it. With
--merge-enabled the emulator also refuses SDKs that do not declare merge support.

The container is chosen as for emulator split.

EXIT STATUS
  0  the ranges merged
  2  refused: no such range, ranges that are not neighbours, a persistent
     emulator; or bad flags or arguments
  3  no such database or container
  8  the emulator does not answer
  other codes as in cosmosctl help exit-codes`,
		Example: `  cosmosctl emulator merge 2 3
  cosmosctl emulator merge 2 3 --database app --container items -o json`,
		Args: exactArgs(2, "two adjacent range ids"),
		RunE: func(c *cobra.Command, args []string) error {
			return runReshape(c.Context(), opts, func(ctx context.Context, cl *emulator.ControlClient, db, coll string) (emulator.RangeChange, error) {
				return cl.Merge(ctx, emulator.MergeRequest{Database: db, Container: coll, Ranges: args})
			})
		},
	}
	opts.addFlags(c)
	opts.addContainerFlags(c, "container whose ranges merge")
	opts.tables()
	return c
}

// runReshape finds the emulator and the container, has do split or merge, and prints
// what changed.
func runReshape(ctx context.Context, opts *controlOptions, do func(context.Context, *emulator.ControlClient, string, string) (emulator.RangeChange, error)) error {
	cl, err := opts.client()
	if err != nil {
		return err
	}
	db, coll, err := opts.place(ctx, cl)
	if err != nil {
		return err
	}
	ch, err := do(ctx, cl, db, coll)
	if err != nil {
		return err
	}
	if config.JSONOutput(opts.Output) {
		return printJSON(opts.io, emulatorRangeChangeOf(ch))
	}
	return printRangeChange(opts.io, ch)
}

// addContainerFlags adds --database and --container, for a control subcommand that
// acts on a container.
func (o *controlOptions) addContainerFlags(c *cobra.Command, what string) {
	c.Flags().StringVar(&o.Database, "database", "", "database of the "+what+" ($COSMOSCTL_DATABASE; default: the emulator's only database, or app)")
	c.Flags().StringVar(&o.Container, "container", "", what+" ($COSMOSCTL_CONTAINER; default: the database's only container, or items)")
}

// place is the database and container the command acts on: as configured (flag >
// environment > profile), else what the emulator announces, as for the data commands
// (emulator_detect.go).
func (o *controlOptions) place(ctx context.Context, cl *emulator.ControlClient) (db, coll string, err error) {
	db, coll = o.target.database, o.target.container
	if db != "" && coll != "" {
		return db, coll, nil
	}
	h, err := emulator.AskHello(ctx, cl.Transport, cl.Endpoint)
	if ne := (*cosmos.NetworkError)(nil); errors.As(err, &ne) {
		return "", "", ne // nothing answers: say that, as the other control commands do
	}
	if err != nil {
		return "", "", err
	}
	by := announcer(cl.Endpoint)
	if !h.DatabasesListed {
		return "", "", usageErrorf("no container: %s does not list its databases; give --database and --container", by)
	}
	d, err := pickDatabase(h, db, db != "", by)
	switch {
	case err != nil:
		return "", "", err
	case d == nil:
		return "", "", usageErrorf("no container: %s has no database %s (it has %s): give --database of one it has, and --container", by, db, databaseIDs(h))
	}
	if coll == "" {
		if coll, err = pickContainer(d, by); err != nil {
			return "", "", err
		}
	}
	return d.ID, coll, nil
}

// isEPK reports whether s is an effective partition key: hex digits.
func isEPK(s string) bool {
	for _, c := range strings.ToUpper(s) {
		if (c < '0' || c > '9') && (c < 'A' || c > 'F') {
			return false
		}
	}
	return true
}

// printRangeChange prints a split or merge: a line saying what happened, then the new
// ranges with their bounds and documents (the table alone under -o tsv).
func printRangeChange(io *IOStreams, ch emulator.RangeChange) error {
	if !io.tsv {
		created := make([]string, len(ch.Created))
		for i, r := range ch.Created {
			created[i] = r.ID
		}
		verb, what := "split", "range "+ch.Retired[0]
		if len(ch.Retired) > 1 {
			verb, what = "merged", "ranges "+strings.Join(ch.Retired, " and ")
		}
		fmt.Fprintf(io.Out, "%s %s of %s/%s into %s\n", verb, what, ch.Database, ch.Container, strings.Join(created, " and "))
	}
	t := output.NewTableOf(io.Out, io.outStyles(true),
		output.Column{Header: "RANGE", Key: true},
		output.Column{Header: "MIN", Key: true},
		output.Column{Header: "MAX", Key: true},
		output.Column{Header: "PARENTS", Priority: 1},
		output.Column{Header: "DOCUMENTS", Key: true},
	).Gap(2)
	for i, r := range ch.Created {
		minInclusive := r.MinInclusive
		if !io.tsv {
			minInclusive = orEmpty(minInclusive)
		}
		t.Append(r.ID, minInclusive, r.MaxExclusive, strings.Join(r.Parents, ","), fmt.Sprint(ch.Documents[i]))
	}
	return t.Render()
}
