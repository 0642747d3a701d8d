package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/output"
)

func newThroughputCmd(io *IOStreams) *cobra.Command {
	c := &cobra.Command{
		Use:   "throughput",
		Short: "Show and set a container's or database's throughput",
		Long: `Show and set the throughput (the offer) of a container, or of a database with
--level database. Manual throughput is a number of RU/s; autoscale scales
between a tenth of its maximum and the maximum.
` + resourceHelp,
		Example: "  cosmosctl throughput show orders\n  cosmosctl throughput set orders --throughput 1000",
	}
	c.AddCommand(newThroughputShowCmd(io), newThroughputSetCmd(io))
	return c
}

func (o *resourceOptions) registerLevel(c *cobra.Command) {
	c.Flags().StringVar(&o.level, "level", "container", "container, or database for a database's shared throughput")
}

// resolvedOffer is the offer of the resource a throughput command is about, read in full.
type resolvedOffer struct {
	resource string
	raw      map[string]any
	offer    offer
}

// findOffer reads the offer of the container (or database) named by args or the profile.
func (r *resourceRun) findOffer(ctx context.Context, args []string) (*resolvedOffer, error) {
	db, err := r.database(nil)
	if err != nil {
		return nil, err
	}
	var rid, resource string
	switch r.o.level {
	case "database":
		if len(args) > 0 {
			db = args[0]
		}
		d, err := r.getDatabase(ctx, db)
		if err != nil {
			return nil, err
		}
		rid, resource = d.RID, "database "+db
	case "container":
		name, err := r.container(args)
		if err != nil {
			return nil, err
		}
		d, err := r.getContainer(ctx, db, name)
		if err != nil {
			return nil, err
		}
		rid, resource = d.RID, "container "+name
	default:
		return nil, usageErrorf("--level must be container or database, not %q", r.o.level)
	}
	of, err := r.offerOf(ctx, rid, resource)
	if err != nil {
		return nil, err
	}
	if of != nil {
		// The query's answer has the offer; reading it gives the headers its throughput
		// response carries (minimum throughput, replace pending), as the SDKs do.
		resp, err := r.send(ctx, engine.MetadataRequest{Method: http.MethodGet, Path: "/offers/" + of.ID,
			ResourceType: "offers", ResourceLink: strings.ToLower(of.ID)}, "the offer of "+resource)
		if err != nil {
			return nil, err
		}
		out := &resolvedOffer{resource: resource}
		if err := json.Unmarshal(resp.Body, &out.raw); err != nil {
			return nil, fmt.Errorf("the offer of %s is not JSON: %v", resource, err)
		}
		if err := json.Unmarshal(resp.Body, &out.offer); err != nil {
			return nil, fmt.Errorf("the offer of %s is not an offer: %v", resource, err)
		}
		out.offer.header = resp.Header
		return out, nil
	}
	return &resolvedOffer{resource: resource}, nil
}

func (ro *resolvedOffer) info() output.ThroughputInfo {
	if ro.raw == nil {
		return *throughputOf(nil, "", ro.resource, strings.HasPrefix(ro.resource, "database "))
	}
	return *offerInfo(ro.offer, ro.resource)
}

func newThroughputShowCmd(io *IOStreams) *cobra.Command {
	o := &resourceOptions{}
	c := &cobra.Command{
		Use:   "show [NAME] [--level container|database]",
		Short: "Show a container's or database's throughput",
		Long: `Show the throughput of a container (the profile's when no NAME is given), or of
a database with --level database: manual or autoscale, RU/s now, the autoscale
range, the minimum the service allows (when it reports it), and whether a
replace is still pending.
` + resourceHelp,
		Example: "  cosmosctl throughput show orders\n  cosmosctl throughput show --level database -o json",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			r, err := o.connect(c.Context(), io)
			if err != nil {
				return err
			}
			defer r.sess.Close()
			ro, err := r.findOffer(c.Context(), args)
			if err != nil {
				return err
			}
			out := ro.info()
			return r.print(out, func() error { return output.WriteThroughput(io.Out, io.outStyles(o.conn.noColor), out) })
		},
	}
	o.conn.register(c)
	o.conn.format.add(config.OutputTSV)
	o.registerLevel(c)
	return c
}
