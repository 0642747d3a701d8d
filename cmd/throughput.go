package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
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

func newThroughputSetCmd(io *IOStreams) *cobra.Command {
	o := &resourceOptions{}
	c := &cobra.Command{
		Use:   "set [NAME] (--throughput N | --autoscale-max N) [--level container|database]",
		Short: "Change a container's or database's throughput",
		Long: `Replace the throughput of a container (the profile's when no NAME is given), or
of a database with --level database. --throughput sets manual RU/s,
--autoscale-max an autoscale maximum; the offer keeps its mode (moving between
manual and autoscale is the service's migrate operation). A large increase may
be applied asynchronously: show says "replace pending" until it is.
` + resourceHelp,
		Example: "  cosmosctl throughput set orders --throughput 1000\n  cosmosctl throughput set --autoscale-max 10000",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if (o.throughput == 0) == (o.autoscaleMax == 0) {
				return usageErrorf("give --throughput N (manual) or --autoscale-max N (autoscale)")
			}
			if o.throughput < 0 || o.autoscaleMax < 0 {
				return usageErrorf("throughput must be a positive number of RU/s")
			}
			r, err := o.connect(c.Context(), io)
			if err != nil {
				return err
			}
			defer r.sess.Close()
			ro, err := r.findOffer(c.Context(), args)
			if err != nil {
				return err
			}
			if ro.raw == nil {
				return fmt.Errorf("%s has no throughput of its own (%s): %w", ro.resource, ro.info().Mode, &cosmos.Error{StatusCode: 404, Message: "no offer"})
			}
			content, _ := ro.raw["content"].(map[string]any)
			if content == nil {
				content = map[string]any{}
			}
			if o.throughput != 0 {
				content["offerThroughput"] = o.throughput
				delete(content, "offerAutopilotSettings")
			} else {
				content["offerAutopilotSettings"] = map[string]any{"maxThroughput": o.autoscaleMax}
				delete(content, "offerThroughput")
			}
			ro.raw["content"] = content
			body, _ := json.Marshal(ro.raw)
			h := http.Header{}
			if etag, ok := ro.raw["_etag"].(string); ok {
				h.Set(cosmos.HeaderIfMatch, etag)
			}
			resp, err := r.send(c.Context(), engine.MetadataRequest{Method: http.MethodPut, Path: "/offers/" + ro.offer.ID,
				ResourceType: "offers", ResourceLink: strings.ToLower(ro.offer.ID), Header: h, Body: body}, "the offer of "+ro.resource)
			if err != nil {
				return err
			}
			var of offer
			if err := json.Unmarshal(resp.Body, &of); err != nil {
				return fmt.Errorf("the account's answer to the replace is not an offer: %v", err)
			}
			of.header = resp.Header
			out := *offerInfo(of, ro.resource)
			return r.print(out, func() error { return output.WriteThroughput(io.Out, io.outStyles(o.conn.noColor), out) })
		},
	}
	o.conn.register(c)
	o.conn.format.add(config.OutputTSV)
	o.registerLevel(c)
	o.registerThroughput(c)
	return c
}
