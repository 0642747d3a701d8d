package cmd

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

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
and writes, and the latency of one request to each region.` + "\n" + strings.TrimPrefix(connectionHelp, "\n"),
		Example: `  cosmosctl regions
  cosmosctl regions --exclude "East US"
  cosmosctl regions --preferred-regions "West US,East US" -o json`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			settings, err := conn.resolve(io)
			if err != nil {
				return err
			}
			sess, err := conn.connect(c.Context(), io, settings)
			if err != nil {
				return err
			}
			defer sess.Close()
			exclude, err := conn.excludes(c.Context(), sess)
			if err != nil {
				return err
			}
			rep, err := sess.client.Regions(c.Context(), exclude, !noPing)
			if err != nil {
				return asUsage(err)
			}
			if conn.wantJSON(sess.settings) {
				return output.WriteJSON(io.Out, rep)
			}
			st := output.StylesFor(io.Out, io.OutTTY, conn.noColor, getenv)
			t := output.NewTable(io.Out, st, "REGION", "ROLE", "READ #", "WRITE #", "LATENCY", "ENDPOINT", "NOTE")
			for _, r := range rep.Regions {
				role := "read"
				if r.Write {
					role = "write"
				}
				lat := "—"
				switch {
				case noPing:
				case r.Error != "":
					lat = "unreachable"
				default:
					lat = output.HumanDuration(r.Latency)
				}
				t.Append(r.Name, role, rank(r.ReadRank), rank(r.WriteRank), lat, r.Endpoint, r.Note)
			}
			if err := t.Render(); err != nil {
				return err
			}
			fmt.Fprintf(io.Out, "\nreads go to:  %s\n", strings.Join(rep.EffectiveReads, " → "))
			fmt.Fprintf(io.Out, "writes go to: %s\n", strings.Join(rep.EffectiveWrites, " → "))
			for _, fb := range []string{rep.ReadFallback, rep.WriteFallback} {
				if fb != "" {
					fmt.Fprintf(io.Out, "note: %s\n", fb)
				}
			}
			return nil
		},
	}
	conn.register(c)
	c.Flags().BoolVar(&noPing, "no-latency", false, "do not measure the latency to each region")
	return c
}

func rank(n int) string {
	if n == 0 {
		return "—"
	}
	return strconv.Itoa(n)
}
