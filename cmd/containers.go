package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/output"
)

func newContainerCmd(io *IOStreams) *cobra.Command {
	c := &cobra.Command{
		Use:     "container",
		Short:   "List, show, create and delete containers",
		Long:    "List, show, create and delete the containers of a database (--database, or the profile's).\n" + resourceHelp,
		Example: "  cosmosctl container ls\n  cosmosctl container show orders\n  cosmosctl container create orders --partition-key /tenantId",
	}
	c.AddCommand(newContainerLsCmd(io), newContainerShowCmd(io), newContainerCreateCmd(io), newContainerDeleteCmd(io), newContainerSetIndexingPolicyCmd(io))
	return c
}

// containerDoc is a container resource with the policies show summarises.
type containerDoc struct {
	cosmos.Container
	IndexingPolicy struct {
		Automatic     *bool             `json:"automatic"`
		IndexingMode  string            `json:"indexingMode"`
		IncludedPaths []json.RawMessage `json:"includedPaths"`
		ExcludedPaths []json.RawMessage `json:"excludedPaths"`
		Composite     []json.RawMessage `json:"compositeIndexes"`
		Spatial       []json.RawMessage `json:"spatialIndexes"`
	} `json:"indexingPolicy"`
	UniqueKeyPolicy struct {
		UniqueKeys []struct {
			Paths []string `json:"paths"`
		} `json:"uniqueKeys"`
	} `json:"uniqueKeyPolicy"`
	ConflictResolutionPolicy struct {
		Mode      string `json:"mode"`
		Path      string `json:"conflictResolutionPath"`
		Procedure string `json:"conflictResolutionProcedure"`
	} `json:"conflictResolutionPolicy"`
}

func (d containerDoc) info(db string) output.ContainerInfo {
	out := output.ContainerInfo{ID: d.ID, Database: db, RID: d.RID, PartitionKeyPaths: d.PartitionKey.Paths,
		PartitionKeyKind: d.PartitionKey.Kind, PartitionKeyVersion: max(d.PartitionKey.Version, 1), DefaultTTLSeconds: d.DefaultTTL}
	ip := d.IndexingPolicy
	mode := strings.ToLower(ip.IndexingMode)
	if mode == "" {
		mode = "consistent"
	}
	auto := ip.Automatic == nil || *ip.Automatic
	out.Indexing = fmt.Sprintf("%s, automatic %t, %d included, %d excluded, %d composite, %d spatial",
		mode, auto, len(ip.IncludedPaths), len(ip.ExcludedPaths), len(ip.Composite), len(ip.Spatial))
	out.UniqueKeys = [][]string{}
	for _, k := range d.UniqueKeyPolicy.UniqueKeys {
		out.UniqueKeys = append(out.UniqueKeys, k.Paths)
	}
	cr := d.ConflictResolutionPolicy
	switch {
	case cr.Mode == "":
		out.ConflictResolution = "last writer wins (_ts)"
	case cr.Path != "":
		out.ConflictResolution = cr.Mode + " (" + cr.Path + ")"
	case cr.Procedure != "":
		out.ConflictResolution = cr.Mode + " (" + cr.Procedure + ")"
	default:
		out.ConflictResolution = cr.Mode
	}
	return out
}

func newContainerLsCmd(io *IOStreams) *cobra.Command {
	o := &resourceOptions{}
	c := &cobra.Command{
		Use:     "ls",
		Short:   "List a database's containers",
		Long:    "List the containers of a database (--database, or the profile's).\n" + resourceHelp,
		Example: "  cosmosctl container ls --database app",
		Args:    noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			r, err := o.connect(c.Context(), io)
			if err != nil {
				return err
			}
			defer r.sess.Close()
			db, err := r.database(nil)
			if err != nil {
				return err
			}
			var docs []containerDoc
			err = r.feed(c.Context(), cosmos.EscapePath("dbs", db, "colls"), db, "database "+strconv.Quote(db), func(body []byte) error {
				var page struct {
					DocumentCollections []containerDoc `json:"DocumentCollections"`
				}
				err := json.Unmarshal(body, &page)
				docs = append(docs, page.DocumentCollections...)
				return err
			})
			if err != nil {
				return err
			}
			out := make([]output.ContainerInfo, len(docs))
			for i, d := range docs {
				out[i] = d.info(db)
			}
			return r.print(out, func() error { return output.WriteContainers(io.Out, io.outStyles(o.conn.noColor), out) })
		},
	}
	o.conn.register(c)
	o.conn.databaseOnly = true // a container command names its container itself
	o.conn.format.add(config.OutputTSV)
	return c
}

func newContainerShowCmd(io *IOStreams) *cobra.Command {
	o := &resourceOptions{}
	var policyOnly bool
	c := &cobra.Command{
		Use:   "show [NAME] [--indexing-policy]",
		Short: "Show a container's partition key, policies, ranges and throughput",
		Long: `Show a container (the profile's when no NAME is given): its partition key paths,
kind and version, a summary of its indexing policy, default TTL, unique keys,
conflict resolution, the number of partition key ranges, and its throughput.
--indexing-policy prints the indexing policy alone, as the JSON object that
"container set-indexing-policy" applies.
` + resourceHelp,
		Example: "  cosmosctl container show orders\n  cosmosctl container show orders -o json | jq .partition_key_ranges\n  cosmosctl container show --indexing-policy > policy.json",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.conn.databaseOnly = len(args) > 0 // else the profile's (or an emulator's only) container
			r, err := o.connect(c.Context(), io)
			if err != nil {
				return err
			}
			defer r.sess.Close()
			db, name, err := r.target(args)
			if err != nil {
				return err
			}
			if policyOnly {
				return r.printIndexingPolicy(c.Context(), db, name)
			}
			d, err := r.getContainer(c.Context(), db, name)
			if err != nil {
				return err
			}
			out := d.info(db)
			ranges, _, err := r.sess.client.PartitionKeyRanges(c.Context(), db, name, true, r.sess.settings.E2ETimeout)
			if err != nil {
				return err
			}
			n := len(ranges)
			out.PartitionKeyRanges = &n
			if out.Throughput, err = r.throughputOfOne(c.Context(), d.RID, "container "+name, false); err != nil {
				return err
			}
			return r.print(out, func() error { return output.WriteContainer(io.Out, io.outStyles(o.conn.noColor), out) })
		},
	}
	o.conn.register(c)
	o.conn.format.add(config.OutputTSV)
	c.Flags().BoolVar(&policyOnly, "indexing-policy", false, "print only the indexing policy, as JSON that container set-indexing-policy applies")
	return c
}

func (r *resourceRun) getContainer(ctx context.Context, db, name string) (containerDoc, error) {
	var d containerDoc
	what := fmt.Sprintf("container %q in database %q", name, db)
	resp, err := r.send(ctx, engine.MetadataRequest{Method: http.MethodGet, Path: cosmos.ContainerPath(db, name), Database: db, Container: name}, what)
	if err != nil {
		return d, err
	}
	return d, json.Unmarshal(resp.Body, &d)
}

func newContainerCreateCmd(io *IOStreams) *cobra.Command {
	o := &resourceOptions{}
	c := &cobra.Command{
		Use:   "create NAME --partition-key /a[,/b,/c] [--throughput N | --autoscale-max N] [--ttl D]",
		Short: "Create a container",
		Long: `Create a container in a database (--database, or the profile's). One
--partition-key path is a hash key; two or three (comma-separated) a hierarchical
key (MultiHash). Without --throughput or --autoscale-max it has the account's
default (or shares its database's throughput). --ttl turns time to live on with
that default expiry (a duration, a number of seconds, or -1: no default expiry).
` + resourceHelp,
		Example: `  cosmosctl container create orders --partition-key /tenantId
  cosmosctl container create events --partition-key /tenantId,/userId --autoscale-max 4000 --ttl 24h`,
		Args: exactArgs(1, "the container name"),
		RunE: func(c *cobra.Command, args []string) error {
			pk, err := parsePartitionKeyPaths(o.pk)
			if err != nil {
				return err
			}
			h, err := o.offerHeaders()
			if err != nil {
				return err
			}
			body := map[string]any{"id": args[0], "partitionKey": pk}
			if o.ttl != "" {
				ttl, err := parseTTL(o.ttl)
				if err != nil {
					return err
				}
				body["defaultTtl"] = ttl
			}
			r, err := o.connect(c.Context(), io)
			if err != nil {
				return err
			}
			defer r.sess.Close()
			db, err := r.database(nil)
			if err != nil {
				return err
			}
			b, _ := json.Marshal(body)
			what := fmt.Sprintf("container %q in database %q", args[0], db)
			resp, err := r.send(c.Context(), engine.MetadataRequest{Method: http.MethodPost, Path: cosmos.EscapePath("dbs", db, "colls"), Header: h, Body: b, Database: db, Container: args[0]}, what)
			var ce *cosmos.Error
			if errors.As(err, &ce) && ce.StatusCode == http.StatusNotFound {
				// A container is created in a database that exists; the service does
				// not create the database too.
				return fmt.Errorf("database %q does not exist: create it first (cosmosctl db create %s), then the container: %w", db, shellQuote(db), ce)
			}
			if err != nil {
				return err
			}
			var d containerDoc
			if err := json.Unmarshal(resp.Body, &d); err != nil {
				return fmt.Errorf("the account's answer to the create is not a container: %v", err)
			}
			out := d.info(db)
			out.Throughput = r.createdThroughput(c.Context(), d.RID, "container "+d.ID, false)
			if ttl, asked := body["defaultTtl"]; asked && (d.DefaultTTL == nil || *d.DefaultTTL != ttl) {
				// An account that dropped it (an older emulator) must not look as
				// if it had applied it.
				fmt.Fprintf(io.ErrOut, "warning: the account did not keep the default TTL of %ds: the container has %s\n", ttl, ttlDescription(d.DefaultTTL))
			}
			return r.print(out, func() error { return output.WriteContainer(io.Out, io.outStyles(o.conn.noColor), out) })
		},
	}
	o.conn.register(c)
	o.conn.databaseOnly = true // a container command names its container itself
	o.conn.format.add(config.OutputTSV)
	c.Flags().StringVar(&o.pk, "partition-key", "", "partition key path(s): /a, or /a,/b[,/c] for a hierarchical key")
	o.registerThroughput(c)
	c.Flags().StringVar(&o.ttl, "ttl", "", "time to live on, with this default expiry (24h, 3600, or -1 for none)")
	return c
}

// parsePartitionKeyPaths reads --partition-key into a partition key definition.
func parsePartitionKeyPaths(s string) (cosmos.PartitionKeyDefinition, error) {
	if s == "" {
		return cosmos.PartitionKeyDefinition{}, usageErrorf("a container needs --partition-key, e.g. --partition-key /tenantId")
	}
	paths := strings.Split(s, ",")
	for i, p := range paths {
		p = strings.TrimSpace(p)
		if !strings.HasPrefix(p, "/") || len(p) < 2 {
			return cosmos.PartitionKeyDefinition{}, usageErrorf("partition key path %q must start with / and name a property, e.g. /tenantId", p)
		}
		paths[i] = p
	}
	switch len(paths) {
	case 1:
		return cosmos.PartitionKeyDefinition{Paths: paths, Kind: cosmos.PartitionKindHash, Version: 2}, nil
	case 2, 3:
		return cosmos.PartitionKeyDefinition{Paths: paths, Kind: cosmos.PartitionKindMultiHash, Version: 2}, nil
	}
	return cosmos.PartitionKeyDefinition{}, usageErrorf("a hierarchical partition key has at most 3 paths, not %d", len(paths))
}

func newContainerDeleteCmd(io *IOStreams) *cobra.Command {
	o := &resourceOptions{}
	c := &cobra.Command{
		Use:   "delete NAME [--yes]",
		Short: "Delete a container and every item in it",
		Long: `Delete a container and every item in it. On a terminal it asks for the name
to confirm; otherwise --yes is needed (exit 2 without it).
` + resourceHelp,
		Example: "  cosmosctl container delete scratch --yes",
		Args:    exactArgs(1, "the container name"),
		RunE: func(c *cobra.Command, args []string) error {
			r, err := o.connect(c.Context(), io)
			if err != nil {
				return err
			}
			defer r.sess.Close()
			db, err := r.database(nil)
			if err != nil {
				return err
			}
			what := fmt.Sprintf("container %q in database %q", args[0], db)
			if err := r.confirm(what, args[0]); err != nil {
				return err
			}
			if _, err := r.send(c.Context(), engine.MetadataRequest{Method: http.MethodDelete, Path: cosmos.ContainerPath(db, args[0]), Database: db, Container: args[0]}, what); err != nil {
				return err
			}
			return r.printDeleted("container", args[0])
		},
	}
	o.conn.register(c)
	o.conn.databaseOnly = true // a container command names its container itself
	c.Flags().BoolVarP(&o.yes, "yes", "y", false, "delete without asking")
	return c
}

func ttlDescription(ttl *int) string {
	if ttl == nil {
		return "time to live off"
	}
	return fmt.Sprintf("a default TTL of %ds", *ttl)
}
