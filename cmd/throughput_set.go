package cmd

import (
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

// The migration flags of an offer replace: with one set to true, a PUT of the offer
// moves it between manual and autoscale, the service choosing the RU/s it ends with.
// Data Explorer sends them so (cosmos-explorer src/Common/dataAccess/updateOffer.ts,
// updateOfferWithSDK), and a replace that changes the mode without them is refused with
// 400 (azure-cosmos-dotnet-v3 issues 1554 and 1820).
const (
	headerMigrateToAutoscale = "x-ms-cosmos-migrate-offer-to-autopilot"
	headerMigrateToManual    = "x-ms-cosmos-migrate-offer-to-manual-throughput"
)

func newThroughputSetCmd(io *IOStreams) *cobra.Command {
	o := &resourceOptions{}
	c := &cobra.Command{
		Use:   "set [NAME] (--throughput N | --autoscale-max N | --migrate autoscale|manual) [--level container|database]",
		Short: "Change a container's or database's throughput",
		Long: `Replace the throughput of a container (the profile's when no NAME is given), or
of a database with --level database. The offer keeps its mode: --throughput N sets
a manual offer's RU/s, or an autoscale offer's maximum; --autoscale-max N sets an
autoscale offer's maximum and is refused on a manual one.

--migrate autoscale|manual changes the mode, with the service's migration (the
offer replaced with x-ms-cosmos-migrate-offer-to-autopilot or
x-ms-cosmos-migrate-offer-to-manual-throughput). The service picks the RU/s a
migration leaves and takes none with it: an autoscale offer becomes manual at its
maximum; a manual one becomes autoscale with a maximum the service works out from
its RU/s, its highest RU/s ever and its storage. Set other RU/s with a second
throughput set once it is done. A large increase or a migration may be applied
asynchronously: show says "replace pending" until it is.
` + resourceHelp,
		Example: "  cosmosctl throughput set orders --throughput 1000\n  cosmosctl throughput set --autoscale-max 10000\n" +
			"  cosmosctl throughput set orders --migrate autoscale",
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.validateSet(); err != nil {
				return err
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
			h, body, err := o.offerReplace(ro)
			if err != nil {
				return err
			}
			out := ro.info()
			if body == nil {
				fmt.Fprintf(io.ErrOut, "%s is already %s: nothing to migrate\n", ro.resource, out.Mode)
			} else {
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
				out = *offerInfo(of, ro.resource)
			}
			return r.print(out, func() error { return output.WriteThroughput(io.Out, io.outStyles(o.conn.noColor), out) })
		},
	}
	o.conn.register(c)
	o.conn.format.add(config.OutputTSV)
	o.registerLevel(c)
	o.registerThroughput(c)
	c.Flags().Lookup("throughput").Usage = "RU/s in the offer's mode: a manual offer's throughput (a multiple of 100, at least 400), or an autoscale offer's maximum (a multiple of 1000)"
	c.Flags().Lookup("autoscale-max").Usage = "an autoscale offer's maximum in RU/s (a multiple of 1000); refused on a manual offer (see --migrate)"
	c.Flags().StringVar(&o.migrate, "migrate", "", "change the mode with the service's migration: autoscale or manual (the service picks the RU/s)")
	return c
}

// validateSet checks set's flags before any request.
func (o *resourceOptions) validateSet() error {
	switch {
	case o.migrate != "" && o.migrate != "autoscale" && o.migrate != "manual":
		return usageErrorf("--migrate must be autoscale or manual, not %q", o.migrate)
	case o.migrate != "" && (o.throughput != 0 || o.autoscaleMax != 0):
		// "During this step, no user-provided RU/s value is accepted" (the autoscale FAQ).
		return usageErrorf("--migrate takes no RU/s (the service picks them); set them with a second throughput set once it is done")
	case o.migrate != "":
		return nil
	case (o.throughput == 0) == (o.autoscaleMax == 0):
		return usageErrorf("give --throughput N, --autoscale-max N (an autoscale offer), or --migrate autoscale|manual")
	case o.throughput < 0 || o.autoscaleMax < 0:
		return usageErrorf("throughput must be a positive number of RU/s")
	}
	return nil
}

// offerReplace is the request that makes ro's offer what the flags ask: its headers and
// body, or a nil body when there is nothing to send (a migration to the mode the offer
// has). A number keeps the offer's mode; only --migrate changes it.
func (o *resourceOptions) offerReplace(ro *resolvedOffer) (http.Header, []byte, error) {
	cur := ro.info()
	autoscale := cur.Mode == "autoscale"
	h := http.Header{}
	if etag, ok := ro.raw["_etag"].(string); ok {
		h.Set(cosmos.HeaderIfMatch, etag)
	}
	content, _ := ro.raw["content"].(map[string]any)
	if content == nil {
		content = map[string]any{}
	}
	perMinute, _ := content["offerIsRUPerMinuteThroughputEnabled"].(bool)
	switch {
	case o.migrate == "autoscale" && autoscale, o.migrate == "manual" && !autoscale:
		return nil, nil, nil
	case o.migrate == "autoscale":
		// As Data Explorer sends it: no autopilot settings and no RU/s.
		h.Set(headerMigrateToAutoscale, "true")
		content = map[string]any{"offerIsRUPerMinuteThroughputEnabled": perMinute}
	case o.migrate == "manual":
		// As Data Explorer sends it: autopilot settings of maximum 0; the RU/s it
		// ends with are the maximum, which is what the service sets.
		h.Set(headerMigrateToManual, "true")
		content = map[string]any{"offerThroughput": cur.AutoscaleMaxRU, "offerIsRUPerMinuteThroughputEnabled": perMinute,
			"offerAutopilotSettings": map[string]any{"maxThroughput": 0}}
	case autoscale:
		n := o.autoscaleMax
		if n == 0 {
			n = o.throughput
		}
		settings, _ := content["offerAutopilotSettings"].(map[string]any)
		if settings == nil {
			settings = map[string]any{}
		}
		settings["maxThroughput"] = n
		content["offerAutopilotSettings"] = settings
		delete(content, "offerThroughput")
	case o.autoscaleMax != 0:
		return nil, nil, usageErrorf("%s has manual throughput (%d RU/s): --autoscale-max would change its mode; run throughput set --migrate autoscale first", ro.resource, cur.RUPerSecond)
	default:
		content["offerThroughput"] = o.throughput
		delete(content, "offerAutopilotSettings")
	}
	raw := make(map[string]any, len(ro.raw))
	for k, v := range ro.raw {
		raw[k] = v
	}
	raw["content"] = content
	body, err := json.Marshal(raw)
	return h, body, err
}
