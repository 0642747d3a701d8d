package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/output"
)

const (
	headerOfferThroughput = "x-ms-offer-throughput"
	headerOfferAutoscale  = "x-ms-cosmos-offer-autopilot-settings"
	headerMinThroughput   = "x-ms-cosmos-min-throughput"
	headerReplacePending  = "x-ms-offer-replace-pending"
)

// resourceHelp is what the database, container and throughput commands share.
const resourceHelp = `
Reads (ls, show) go to the effective read regions in turn until one answers, each
attempt bounded by the metadata attempt timeout and the whole command by
--e2e-timeout; creates, deletes and throughput changes go once to the write region.
A resource that does not exist exits 3, a create of one that exists exits 4.
` + accountHelp

// resourceOptions are the flags of the db, container and throughput commands.
type resourceOptions struct {
	conn         connFlags
	yes          bool
	pk           string
	throughput   int
	autoscaleMax int
	migrate      string
	ttl          string
	level        string
}

// resourceRun is one connected resource command: the session, and the request options
// every request of the command shares.
type resourceRun struct {
	o       *resourceOptions
	io      *IOStreams
	sess    *session
	exclude []string
}

func (o *resourceOptions) connect(ctx context.Context, io *IOStreams) (*resourceRun, error) {
	sess, err := o.conn.open(ctx, io)
	if err != nil {
		return nil, err
	}
	ex, err := o.conn.excludes(ctx, sess)
	if err != nil {
		sess.Close()
		return nil, err
	}
	return &resourceRun{o: o, io: io, sess: sess, exclude: ex}, nil
}

// send is one metadata request; what names the resource in a 404's message.
func (r *resourceRun) send(ctx context.Context, req engine.MetadataRequest, what string) (*cosmos.Response, error) {
	req.ExcludeRegions = r.exclude
	if req.E2ETimeout == 0 {
		req.E2ETimeout = r.sess.settings.E2ETimeout
	}
	resp, d, err := r.sess.client.Metadata(ctx, req)
	if d != nil && len(d.Attempts) > 0 && r.o.conn.diagnostics && !r.json() {
		_ = output.WriteDiagnostics(r.io.ErrOut, d, r.o.conn.styles(r.io))
	}
	if status, _, ok := cosmos.Status(err); ok {
		switch {
		case status == 404:
			return nil, fmt.Errorf("%s does not exist: %w", what, err)
		case status == 409:
			return nil, fmt.Errorf("%s already exists: %w", what, err)
		}
	}
	return resp, asUsage(err)
}

func (r *resourceRun) json() bool { return r.o.conn.wantJSON(r.sess.settings) }

func (r *resourceRun) database(arg []string) (string, error) {
	if len(arg) > 0 {
		return arg[0], nil
	}
	if r.sess.settings.Database == "" {
		return "", usageErrorf("no database: give its name, --database, or set one in a profile")
	}
	return r.sess.settings.Database, nil
}

func (r *resourceRun) container(arg []string) (string, error) {
	if len(arg) > 0 {
		return arg[0], nil
	}
	if r.sess.settings.Container == "" {
		return "", usageErrorf("no container: give its name, --container, or set one in a profile")
	}
	return r.sess.settings.Container, nil
}

// target is the database and container a container command works on: the container
// named in arg, or the profile's (flags') one, in the profile's database.
func (r *resourceRun) target(arg []string) (db, name string, err error) {
	if db, err = r.database(nil); err != nil {
		return "", "", err
	}
	name, err = r.container(arg)
	return db, name, err
}

func (r *resourceRun) print(v any, table func() error) error {
	if r.json() {
		return output.WriteJSON(r.io.Out, v)
	}
	return table()
}

// confirm asks on a terminal before a delete; without one it needs --yes, so that a
// script never deletes by a prompt nobody answered.
func (r *resourceRun) confirm(what, name string) error {
	if r.o.yes {
		return nil
	}
	if !r.io.InTTY {
		return usageErrorf("refusing to delete %s without confirmation: stdin is not a terminal, add --yes", what)
	}
	fmt.Fprintf(r.io.ErrOut, "Delete %s? This cannot be undone. Type %q to confirm: ", what, name)
	line, _ := bufio.NewReader(r.io.In).ReadString('\n')
	if strings.TrimSpace(line) != name {
		return usageErrorf("not deleted: the answer was not %q", name)
	}
	return nil
}

func newDBCmd(io *IOStreams) *cobra.Command {
	c := &cobra.Command{
		Use:     "db",
		Short:   "List, show, create and delete databases",
		Long:    "List, show, create and delete the account's databases.\n" + resourceHelp,
		Example: "  cosmosctl db ls\n  cosmosctl db create app --throughput 1000\n  cosmosctl db delete scratch --yes",
	}
	c.AddCommand(newDBLsCmd(io), newDBShowCmd(io), newDBCreateCmd(io), newDBDeleteCmd(io))
	return c
}

func newDBLsCmd(io *IOStreams) *cobra.Command {
	o := &resourceOptions{}
	c := &cobra.Command{
		Use:     "ls",
		Short:   "List the account's databases and their throughput",
		Long:    "List the account's databases and their throughput.\n" + resourceHelp,
		Example: "  cosmosctl db ls\n  cosmosctl db ls -o json | jq -r '.[].id'",
		Args:    noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			r, err := o.connect(c.Context(), io)
			if err != nil {
				return err
			}
			defer r.sess.Close()
			dbs, err := r.listDatabases(c.Context())
			if err != nil {
				return err
			}
			offers, err := r.offers(c.Context())
			if err != nil {
				return err
			}
			out := make([]output.DatabaseInfo, len(dbs))
			for i, d := range dbs {
				out[i] = output.DatabaseInfo{ID: d.ID, RID: d.RID, Throughput: throughputOf(offers, d.RID, "database "+d.ID, true)}
			}
			return r.print(out, func() error { return output.WriteDatabases(io.Out, io.outStyles(o.conn.noColor), out) })
		},
	}
	o.conn.register(c)
	o.conn.format.add(config.OutputTSV)
	o.conn.noContainer = true // a database command names its database itself
	return c
}

func newDBShowCmd(io *IOStreams) *cobra.Command {
	o := &resourceOptions{}
	c := &cobra.Command{
		Use:     "show [NAME]",
		Short:   "Show a database and its throughput",
		Long:    "Show a database (the profile's when no NAME is given) and its throughput.\n" + resourceHelp,
		Example: "  cosmosctl db show app",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			// A database named needs nothing announced but the key; the profile's (or
			// an emulator's only one) is the one shown otherwise.
			o.conn.noContainer, o.conn.databaseOnly = len(args) > 0, len(args) == 0
			r, err := o.connect(c.Context(), io)
			if err != nil {
				return err
			}
			defer r.sess.Close()
			name, err := r.database(args)
			if err != nil {
				return err
			}
			d, err := r.getDatabase(c.Context(), name)
			if err != nil {
				return err
			}
			tp, err := r.throughputOfOne(c.Context(), d.RID, "database "+d.ID, true)
			if err != nil {
				return err
			}
			out := output.DatabaseInfo{ID: d.ID, RID: d.RID, Throughput: tp}
			return r.print(out, func() error {
				return output.WriteDatabases(io.Out, io.outStyles(o.conn.noColor), []output.DatabaseInfo{out})
			})
		},
	}
	o.conn.register(c)
	o.conn.format.add(config.OutputTSV)
	return c
}

func newDBCreateCmd(io *IOStreams) *cobra.Command {
	o := &resourceOptions{}
	c := &cobra.Command{
		Use:   "create NAME [--throughput N | --autoscale-max N]",
		Short: "Create a database, with shared throughput if asked",
		Long: `Create a database. With --throughput or --autoscale-max its containers share
that throughput (a container created with its own keeps its own).
` + resourceHelp,
		Example: "  cosmosctl db create app\n  cosmosctl db create shared --autoscale-max 4000",
		Args:    exactArgs(1, "the database name"),
		RunE: func(c *cobra.Command, args []string) error {
			h, err := o.offerHeaders()
			if err != nil {
				return err
			}
			r, err := o.connect(c.Context(), io)
			if err != nil {
				return err
			}
			defer r.sess.Close()
			body, _ := json.Marshal(map[string]string{"id": args[0]})
			resp, err := r.send(c.Context(), engine.MetadataRequest{Method: http.MethodPost, Path: "/dbs", Header: h, Body: body, Database: args[0]}, "database "+args[0])
			if err != nil {
				return err
			}
			var d cosmos.Database
			if err := json.Unmarshal(resp.Body, &d); err != nil {
				return fmt.Errorf("the account's answer to the create is not a database: %v", err)
			}
			// The create's answer is the database alone: what it was given is its
			// offer, read back as db show reads it (as the SDKs' ReadThroughput does).
			out := output.DatabaseInfo{ID: d.ID, RID: d.RID, Throughput: r.createdThroughput(c.Context(), d.RID, "database "+d.ID, true)}
			return r.print(out, func() error {
				return output.WriteDatabases(io.Out, io.outStyles(o.conn.noColor), []output.DatabaseInfo{out})
			})
		},
	}
	o.conn.register(c)
	o.conn.format.add(config.OutputTSV)
	o.conn.noContainer = true // a database command names its database itself
	o.registerThroughput(c)
	return c
}

func newDBDeleteCmd(io *IOStreams) *cobra.Command {
	o := &resourceOptions{}
	c := &cobra.Command{
		Use:   "delete NAME [--yes]",
		Short: "Delete a database and every container in it",
		Long: `Delete a database and every container and item in it. On a terminal it asks
for the name to confirm; otherwise --yes is needed (exit 2 without it).
` + resourceHelp,
		Example: "  cosmosctl db delete scratch\n  cosmosctl db delete scratch --yes",
		Args:    exactArgs(1, "the database name"),
		RunE: func(c *cobra.Command, args []string) error {
			r, err := o.connect(c.Context(), io)
			if err != nil {
				return err
			}
			defer r.sess.Close()
			what := "database " + strconv.Quote(args[0])
			if err := r.confirm(what+" and all its containers", args[0]); err != nil {
				return err
			}
			if _, err := r.send(c.Context(), engine.MetadataRequest{Method: http.MethodDelete, Path: cosmos.EscapePath("dbs", args[0]), Database: args[0]}, what); err != nil {
				return err
			}
			return r.printDeleted("database", args[0])
		},
	}
	o.conn.register(c)
	o.conn.noContainer = true // a database command names its database itself
	c.Flags().BoolVarP(&o.yes, "yes", "y", false, "delete without asking")
	return c
}

// deletedJSON is what `db delete` and `container delete` print with -o json.
type deletedJSON struct {
	// Deleted is what was deleted: database or container.
	Deleted string `json:"deleted"`
	ID      string `json:"id"`
}

func (r *resourceRun) printDeleted(kind, name string) error {
	if r.json() {
		return output.WriteJSON(r.io.Out, deletedJSON{Deleted: kind, ID: name})
	}
	fmt.Fprintf(r.io.ErrOut, "deleted %s %s\n", kind, name)
	return nil
}

func (r *resourceRun) listDatabases(ctx context.Context) ([]cosmos.Database, error) {
	var out []cosmos.Database
	err := r.feed(ctx, "/dbs", "", "databases", func(body []byte) error {
		var page struct {
			Databases []cosmos.Database `json:"Databases"`
		}
		err := json.Unmarshal(body, &page)
		out = append(out, page.Databases...)
		return err
	})
	return out, err
}

func (r *resourceRun) getDatabase(ctx context.Context, name string) (cosmos.Database, error) {
	var d cosmos.Database
	resp, err := r.send(ctx, engine.MetadataRequest{Method: http.MethodGet, Path: cosmos.EscapePath("dbs", name), Database: name}, "database "+strconv.Quote(name))
	if err != nil {
		return d, err
	}
	return d, json.Unmarshal(resp.Body, &d)
}

// feed reads every page of a feed (GET path), following the continuation.
func (r *resourceRun) feed(ctx context.Context, path, db, what string, page func([]byte) error) error {
	return r.pages(ctx, engine.MetadataRequest{Method: http.MethodGet, Path: path, Database: db}, what, func(body []byte) (bool, error) {
		if err := page(body); err != nil {
			return false, fmt.Errorf("the account's %s feed is not what it should be: %v", what, err)
		}
		return false, nil
	})
}

// pages sends req for every page of a feed or of a query of one, following
// x-ms-continuation until an answer has none (the service pages every feed, and a
// listing that stopped at the first page would leave resources out without a word), or
// until page says it has found what it looks for. The end-to-end timeout bounds the
// whole read, not each page: a feed of many pages must not take many times the
// deadline the operator set.
func (r *resourceRun) pages(ctx context.Context, req engine.MetadataRequest, what string, page func([]byte) (bool, error)) error {
	e2e, start := r.sess.settings.E2ETimeout, time.Now()
	header := req.Header
	cont := ""
	for {
		req.Header = header.Clone()
		if req.Header == nil {
			req.Header = http.Header{}
		}
		if cont != "" {
			req.Header.Set(cosmos.HeaderContinuation, cont)
		}
		req.E2ETimeout = 0
		if e2e > 0 {
			if req.E2ETimeout = e2e - time.Since(start); req.E2ETimeout <= 0 {
				return &engine.TimeoutError{Timeout: e2e, Cause: fmt.Errorf("%s: the feed was not read to its end", what)}
			}
		}
		resp, err := r.send(ctx, req, what)
		if te := (*engine.TimeoutError)(nil); errors.As(err, &te) {
			te.Timeout = e2e // the page's share was what was left of the whole read's
		}
		if err != nil {
			return err
		}
		if done, err := page(resp.Body); done || err != nil {
			return err
		}
		next := resp.Header.Get(cosmos.HeaderContinuation)
		if next == "" {
			return nil
		}
		if next == cont {
			return fmt.Errorf("the account's %s feed gave back the continuation it was sent, so it would never end", what)
		}
		cont = next
	}
}

// offer is the service's throughput resource, as much of it as cosmosctl reads.
type offer struct {
	ID              string `json:"id"`
	OfferResourceID string `json:"offerResourceId"`
	OfferVersion    string `json:"offerVersion"`
	Content         struct {
		OfferThroughput int `json:"offerThroughput"`
		Autopilot       *struct {
			MaxThroughput     int `json:"maxThroughput"`
			AutoUpgradePolicy *struct {
				ThroughputPolicy *struct {
					IncrementPercent int `json:"incrementPercent"`
				} `json:"throughputPolicy"`
			} `json:"autoUpgradePolicy"`
		} `json:"offerAutopilotSettings"`
		Minimum *struct {
			MaxThroughputEverProvisioned int `json:"maxThroughputEverProvisioned"`
		} `json:"offerMinimumThroughputParameters"`
	} `json:"content"`
	header http.Header
}

// offers reads the account's offers feed: one read answers ls for every resource at
// once. For one resource, offerOf queries for it instead.
func (r *resourceRun) offers(ctx context.Context) ([]offer, error) {
	var out []offer
	err := r.feed(ctx, "/offers", "", "offers", func(body []byte) error {
		var page struct {
			Offers []offer `json:"Offers"`
		}
		err := json.Unmarshal(body, &page)
		out = append(out, page.Offers...)
		return err
	})
	return out, err
}

// offerOf finds the offer of the resource with _rid rid by querying the offers feed for
// its offerResourceId, as the SDKs do: one small answer however many containers the
// account has. nil when the resource has no offer of its own.
func (r *resourceRun) offerOf(ctx context.Context, rid, resource string) (*offer, error) {
	spec := cosmos.QuerySpec{Query: "SELECT * FROM root r WHERE r.offerResourceId = @rid",
		Parameters: []cosmos.QueryParameter{{Name: "@rid", Value: json.RawMessage(strconv.Quote(rid))}}}
	body, _ := json.Marshal(spec)
	h := http.Header{}
	h.Set("Content-Type", "application/query+json")
	h.Set(cosmos.HeaderIsQuery, "True")
	var found *offer
	err := r.pages(ctx, engine.MetadataRequest{Method: http.MethodPost, Path: "/offers", ResourceType: "offers", Header: h, Body: body, Read: true},
		"the offer of "+resource, func(body []byte) (bool, error) {
			var page struct {
				Offers []offer `json:"Offers"`
			}
			if err := json.Unmarshal(body, &page); err != nil {
				return false, fmt.Errorf("the account's answer to a query of its offers is not an offers feed: %v", err)
			}
			for i := range page.Offers {
				if page.Offers[i].OfferResourceID == rid {
					found = &page.Offers[i]
					return true, nil
				}
			}
			return false, nil
		})
	return found, err
}

// throughputOfOne is the throughput of one resource, from its offer found by a query.
func (r *resourceRun) throughputOfOne(ctx context.Context, rid, resource string, isDB bool) (*output.ThroughputInfo, error) {
	of, err := r.offerOf(ctx, rid, resource)
	if err != nil || of == nil {
		return throughputOf(nil, rid, resource, isDB), err
	}
	return throughputOf([]offer{*of}, rid, resource, isDB), nil
}

// createdThroughput is the throughput of a resource just created, read back; nil (null:
// not known) with a warning when it cannot be read, since the create itself succeeded.
func (r *resourceRun) createdThroughput(ctx context.Context, rid, resource string, isDB bool) *output.ThroughputInfo {
	tp, err := r.throughputOfOne(ctx, rid, resource, isDB)
	if err != nil {
		fmt.Fprintf(r.io.ErrOut, "warning: %s was created, but its throughput could not be read: %v\n", resource, oneLine(err.Error()))
		return nil
	}
	return tp
}

// throughputOf is the throughput of the resource with _rid rid, from its offer; a
// database without one has none, a container without one shares its database's.
func throughputOf(offers []offer, rid, resource string, isDB bool) *output.ThroughputInfo {
	for _, of := range offers {
		if of.OfferResourceID == rid {
			return offerInfo(of, resource)
		}
	}
	if isDB {
		return &output.ThroughputInfo{Resource: resource, Mode: "none"}
	}
	return &output.ThroughputInfo{Resource: resource, Mode: "shared"}
}

func offerInfo(of offer, resource string) *output.ThroughputInfo {
	t := &output.ThroughputInfo{Resource: resource, Mode: "manual", OfferID: of.ID, RUPerSecond: of.Content.OfferThroughput}
	if a := of.Content.Autopilot; a != nil && a.MaxThroughput > 0 {
		t.Mode, t.AutoscaleMaxRU = "autoscale", a.MaxThroughput
		if p := a.AutoUpgradePolicy; p != nil && p.ThroughputPolicy != nil {
			t.IncrementPercent = p.ThroughputPolicy.IncrementPercent
		}
	}
	if m := of.Content.Minimum; m != nil {
		t.MaxEverRUPerSecond = m.MaxThroughputEverProvisioned
	}
	if of.header != nil {
		t.MinRUPerSecond, _ = strconv.Atoi(of.header.Get(headerMinThroughput))
		t.ReplacePending = strings.EqualFold(of.header.Get(headerReplacePending), "true")
	}
	return t
}

func (o *resourceOptions) registerThroughput(c *cobra.Command) {
	c.Flags().IntVar(&o.throughput, "throughput", 0, "manual throughput in RU/s (a multiple of 100, at least 400)")
	c.Flags().IntVar(&o.autoscaleMax, "autoscale-max", 0, "autoscale with this maximum in RU/s (a multiple of 1000); it scales down to a tenth of it")
}

// offerHeaders are the create request's throughput headers, none when neither flag is set.
func (o *resourceOptions) offerHeaders() (http.Header, error) {
	h := http.Header{}
	switch {
	case o.throughput != 0 && o.autoscaleMax != 0:
		return nil, usageErrorf("give --throughput (manual) or --autoscale-max (autoscale), not both")
	case o.throughput < 0 || o.autoscaleMax < 0:
		return nil, usageErrorf("throughput must be a positive number of RU/s")
	case o.throughput != 0:
		h.Set(headerOfferThroughput, strconv.Itoa(o.throughput))
	case o.autoscaleMax != 0:
		h.Set(headerOfferAutoscale, fmt.Sprintf(`{"maxThroughput":%d}`, o.autoscaleMax))
	}
	return h, nil
}

// parseTTL reads --ttl: a duration (90s, 24h) or a number of seconds, or -1 (time to
// live on, items expire only by their own ttl).
func parseTTL(s string) (int, error) {
	if n, err := strconv.Atoi(s); err == nil && (n > 0 || n == -1) {
		return n, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < time.Second || d%time.Second != 0 {
		return 0, usageErrorf("--ttl must be a whole number of seconds or a duration such as 24h (or -1: on, no default expiry), not %q", s)
	}
	return int(d / time.Second), nil
}
