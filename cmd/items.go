package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/output"
	"github.com/cosmosctl/cosmosctl/retries"
)

// itemOptions are the flags of the item commands.
type itemOptions struct {
	conn         connFlags
	pk           string
	file         string
	ifMatch      string
	ops          []string
	condition    string
	writeRetries string
}

// writeRetriesHelp is the write retry section of a write command's help: what
// tracking-id adds depends on the command, since only create and replace send a
// document whose stored copy can say "this was our write".
func writeRetriesHelp(kind engine.OpKind) string {
	what := map[engine.OpKind]string{engine.OpCreate: "create", engine.OpUpsert: "upsert", engine.OpReplace: "replace", engine.OpDelete: "delete"}[kind]
	b := `
Write retries. A ` + what + ` whose answer is lost (a timeout, a reset connection, 408,
503, 449, 410) may or may not have been applied, so by default it is not sent
again and the command fails. --write-retries (or COSMOSCTL_WRITE_RETRY_POLICY,
or write_retries.policy in the profile) changes that:
  off          ambiguous failures surface (default)
  retries      retried with back-off, at most 3 times, within --e2e-timeout`
	switch kind {
	case engine.OpCreate, engine.OpReplace:
		status := map[engine.OpKind]string{engine.OpCreate: "409", engine.OpReplace: "412"}[kind]
		b += `; a
               retry's ` + status + ` stands, though the first attempt may have succeeded
  tracking-id  as retries, and a "_trackingId" property (a random UUID, the same
               for every retry) is added to the document: a ` + status + ` on a retry is
               checked against the stored item, and if it carries our _trackingId
               the ` + what + ` is reported as the success it was.
               The _trackingId property stays in the stored document.`
	case engine.OpUpsert:
		b += `
  tracking-id  the same as retries for an upsert, which a retry cannot make
               conflict: no _trackingId is added`
	case engine.OpDelete:
		b += `
  tracking-id  the same as retries for a delete, which sends no document to
               carry a _trackingId
A retried delete that finds the item gone exits with not-found (3) and says that
an earlier attempt may have deleted it.`
	}
	return b
}

// accountHelp says where the account comes from, for every command that talks to one.
const accountHelp = `
The account comes from --endpoint and --key-file, the COSMOSCTL_* environment
variables, or a profile (see cosmosctl config); with none of them the command
runs against an embedded three-region emulator and says so on stderr (see
cosmosctl help embedded-emulator). An endpoint that is a standalone cosmosctl
emulator needs no key, database or container: it announces its well-known key
and its only database and container, which are used when none is configured
(and stderr says so).`

// connectionHelp is accountHelp and what an item command prints.
const connectionHelp = accountHelp + `

The item goes to stdout; the per-attempt diagnostics table goes to stderr when
stderr is a terminal (unless --diagnostics=false) or --diagnostics is given.
-o json prints one JSON object with the item and the full diagnostics (--jq picks
from it: --jq .etag). Exit codes: cosmosctl help exit-codes.`

// readFailoverHelp says when a read moves to the next region, as retries.Policy
// decides it (a test holds the two, and the README, together).
const readFailoverHelp = `A read that gets no final answer fails over to the next effective region: after
a 503, 500, 408, 410, 449, 404/1002 (the region has not caught up with the
session) or any other answer that is not final, an expired attempt timeout, or
a network error. A 429 is retried in the same region after the service's
retry-after, 9 times and 30 s of waiting at most, then the read fails over too.
A 410 saying that the partition moved (1000, 1002, 1007, 1008) is sent again
after routing is refreshed, twice, then fails over. A 403/3 or 403/1008 (the
write region moved) re-reads the account and tries again. Final answers end the
read at once: any status below 400, and 400, 401, 404/0, 405, 409, 412, 413, and
403 with any other substatus (5301 is an RBAC denial), as in the SDKs.

With --e2e-timeout, the attempt timeouts are fitted inside it: while another
region remains to fail over to, an attempt gets at most half of what is left
(a 6s first attempt under a 5s end-to-end timeout gets 2.5s), so that a hung
region is always left in time for the next one; the last region gets all that
is left, and the end-to-end timeout ends the read. A hedged read is not fitted:
its hedges reach the other regions on their schedule.`

func newReadCmd(io *IOStreams) *cobra.Command {
	o := &itemOptions{}
	c := &cobra.Command{
		Use:   "read ID --pk VALUE",
		Short: "Read one item by id and partition key",
		Long: `Read one item by id and partition key, from the first effective region.

` + readFailoverHelp + `

With hedging on (--hedge-threshold, or [profiles.NAME.hedging] in the config file),
a read that has no answer after the threshold is sent to the next effective region
too, then to one more every step; the first final answer wins and the others are
cancelled. The diagnostics show every attempt on a timeline.

--pk '[{}]' is the none key, for items without the partition key property (written
with --pk '[{}]'; create and upsert refuse such a document otherwise).
` + connectionHelp,
		Example: `  cosmosctl read order-1 --pk tenant-7
  cosmosctl read order-1 --pk tenant-7 --exclude "East US"      # skip a region in trouble
  cosmosctl read order-1 --pk tenant-7 --region "West US"       # this region only
  cosmosctl read order-1 --pk '["acme","user-7"]'               # hierarchical key
  cosmosctl read order-1 --pk tenant-7 --hedge-threshold 300ms --hedge-step 100ms --e2e-timeout 2s
  cosmosctl read order-1 --pk 42 -o json | jq .diagnostics.attempts`,
		Args: exactArgs(1, "the item id"),
		RunE: func(c *cobra.Command, args []string) error {
			return o.run(c.Context(), io, engine.Operation{Kind: engine.OpRead, ID: args[0]})
		},
	}
	o.conn.register(c)
	o.conn.withHedging(c.Flags())
	o.conn.withConsistency(c.Flags())
	c.Flags().StringVar(&o.pk, "pk", "", "partition key value: a JSON value, a JSON array for a hierarchical key, or a plain string")
	return c
}

func newWriteCmd(io *IOStreams, kind engine.OpKind) *cobra.Command {
	o := &itemOptions{}
	var c *cobra.Command
	switch kind {
	case engine.OpCreate, engine.OpUpsert:
		verb := map[engine.OpKind]string{engine.OpCreate: "Create an item (409 if its id exists in its partition)", engine.OpUpsert: "Create an item, or replace it if it exists"}[kind]
		c = &cobra.Command{
			Use:   string(kind) + " -f FILE|-",
			Short: verb,
			Long:  verb + ".\nThe partition key comes from --pk, or from the document at the container's\npartition key path. A document without that property is refused: add it, or give\n--pk explicitly; --pk '[{}]' is the none key, for items without the property (read\nthem back with the same --pk '[{}]'). A UTF-8 byte order mark is ignored; a\ndocument that is not valid UTF-8 is refused.\n" + connectionHelp,
			Example: fmt.Sprintf(`  cosmosctl %[1]s -f order.json
  echo '{"id":"order-1","pk":"tenant-7","total":42}' | cosmosctl %[1]s -f -`, kind),
			Args: noArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				body, doc, err := readScannedDocument(o.file, io.In)
				if err != nil {
					return err
				}
				return o.run(c.Context(), io, engine.Operation{Kind: kind, Body: body, Document: doc})
			},
		}
	case engine.OpReplace:
		c = &cobra.Command{
			Use:   "replace ID -f FILE|- [--if-match ETAG]",
			Short: "Replace an existing item",
			Long:  "Replace an existing item (404 if it does not exist). With --if-match the replace\nhappens only if the item's etag still matches (412 otherwise).\n" + connectionHelp,
			Example: `  cosmosctl replace order-1 -f order.json
  cosmosctl replace order-1 -f order.json --if-match '"00000000-0000-0000-1f2a-5b3c4d5e6f70"'`,
			Args:    exactArgs(1, "the item id"),
			PreRunE: o.checkIfMatch,
			RunE: func(c *cobra.Command, args []string) error {
				body, doc, err := readScannedDocument(o.file, io.In)
				if err != nil {
					return err
				}
				return o.run(c.Context(), io, engine.Operation{Kind: kind, ID: args[0], Body: body, Document: doc, IfMatch: o.ifMatch})
			},
		}
	}
	o.conn.register(c)
	c.Flags().StringVarP(&o.file, "file", "f", "", "the document, as a JSON file, or - for standard input")
	c.Flags().StringVar(&o.pk, "pk", "", "partition key value (default: read from the document)")
	if kind == engine.OpReplace {
		c.Flags().StringVar(&o.ifMatch, "if-match", "", "replace only if the item's etag is this one")
	}
	o.registerWriteRetries(c)
	return c
}

func (o *itemOptions) registerWriteRetries(c *cobra.Command) {
	c.Flags().StringVar(&o.writeRetries, "write-retries", "", "retry a write whose outcome is unknown: off, retries or tracking-id ($COSMOSCTL_WRITE_RETRY_POLICY; default off)")
	// On a multi-write account with write retries on, a write may be hedged like a read.
	o.conn.withHedging(c.Flags())
	c.Long += "\n" + writeRetriesHelp(engine.OpKind(strings.Fields(c.Use)[0])) + "\n\nOn a multi-write account with write retries on, the hedging flags and profile\nsettings apply to writes too; otherwise writes are never hedged."
}

func newDeleteCmd(io *IOStreams) *cobra.Command {
	o := &itemOptions{}
	part := &partitionDeleteOptions{}
	c := &cobra.Command{
		Use:   "delete {ID --pk VALUE [--if-match ETAG] | --partition-key-value VALUE}",
		Short: "Delete an item, or every item of a logical partition",
		Long: "Delete an item, or with --partition-key-value every item of a logical partition.\n" + accountHelp + `

Nothing goes to stdout on success; the per-attempt diagnostics table goes to
stderr when stderr is a terminal (unless --diagnostics=false) or --diagnostics is
given. -o json prints one JSON object with the status and the full diagnostics.
A partition delete prints one summary line (-o json: one object with
partition_key, method, deleted, already_gone and request_charge).
Exit codes: cosmosctl help exit-codes.
` + partitionDeleteHelp,
		Example: `  cosmosctl delete order-1 --pk tenant-7
  cosmosctl delete order-1 --pk tenant-7 --if-match "$ETAG"
  cosmosctl delete --partition-key-value tenant-7 --dry-run
  cosmosctl delete --partition-key-value tenant-7 --yes
  cosmosctl delete --partition-key-value '["acme","user-7"]' --mode query --max-ru-per-second 400 --state tenant-7.state --yes`,
		Args: func(c *cobra.Command, args []string) error {
			if c.Flags().Changed("partition-key-value") {
				if len(args) != 0 {
					return usageErrorf("--partition-key-value deletes a whole logical partition: give no item id (got %s)", quoteAll(args))
				}
				return nil
			}
			return exactArgs(1, "the item id")(c, args)
		},
		PreRunE: o.checkIfMatch,
		RunE: func(c *cobra.Command, args []string) error {
			if c.Flags().Changed("partition-key-value") {
				return o.runPartitionDelete(c.Context(), io, c, part)
			}
			for _, f := range []string{"mode", "dry-run", "yes", "state", "max-ru-per-second"} {
				if c.Flags().Changed(f) {
					return usageErrorf("--%s applies to a partition delete: add --partition-key-value VALUE", f)
				}
			}
			return o.run(c.Context(), io, engine.Operation{Kind: engine.OpDelete, ID: args[0], IfMatch: o.ifMatch})
		},
	}
	o.conn.register(c)
	c.Flags().StringVar(&o.pk, "pk", "", "partition key value")
	c.Flags().StringVar(&o.ifMatch, "if-match", "", "delete only if the item's etag is this one")
	part.register(c)
	o.registerWriteRetries(c)
	return c
}

func newPatchCmd(io *IOStreams) *cobra.Command {
	o := &itemOptions{}
	c := &cobra.Command{
		Use:   "patch ID --pk VALUE --op 'set /path=VALUE' …",
		Short: "Change parts of an item without replacing it",
		Long: `Apply partial-update operations to an item, atomically. Each --op is one of
  set /path=VALUE      add /path=VALUE     replace /path=VALUE
  incr /path=NUMBER    remove /path        move /from /to
VALUE is JSON (1, true, "text", {"a":1}); anything that is not JSON is a string.
At most 10 operations. --condition applies them only if the item matches
(412 otherwise).
` + connectionHelp,
		Example: `  cosmosctl patch order-1 --pk tenant-7 --op 'set /status="shipped"' --op 'incr /version=1'
  cosmosctl patch order-1 --pk tenant-7 --op 'remove /draft' --condition 'from c where c.status = "open"'`,
		Args:    exactArgs(1, "the item id"),
		PreRunE: o.checkIfMatch,
		RunE: func(c *cobra.Command, args []string) error {
			body, err := patchBody(o.ops, o.condition)
			if err != nil {
				return err
			}
			return o.run(c.Context(), io, engine.Operation{Kind: engine.OpPatch, ID: args[0], Body: body, IfMatch: o.ifMatch})
		},
	}
	o.conn.register(c)
	c.Flags().StringVar(&o.pk, "pk", "", "partition key value")
	c.Flags().StringArrayVar(&o.ops, "op", nil, "a patch operation; repeatable")
	c.Flags().StringVar(&o.condition, "condition", "", "apply only if the item matches, e.g. 'from c where c.status = \"open\"'")
	c.Flags().StringVar(&o.ifMatch, "if-match", "", "patch only if the item's etag is this one")
	// Whether a patch is safe to send twice depends on its operations (set is, incr is
	// not), so only this command's own flag turns retries on, never a profile.
	c.Flags().StringVar(&o.writeRetries, "write-retries", "", "retry this patch if its outcome is unknown: off or retries (only this flag enables patch retries; check the operations are safe to apply twice)")
	return c
}

// checkIfMatch refuses an --if-match that says nothing. An empty or blank etag is
// what `--if-match "$ETAG"` becomes when ETAG is unset, and sent as it is the write
// would carry no condition at all: the unconditional write the flag was there to
// prevent. It is checked before anything is read or sent.
func (o *itemOptions) checkIfMatch(c *cobra.Command, _ []string) error {
	if !c.Flags().Changed("if-match") || strings.TrimSpace(o.ifMatch) != "" {
		return nil
	}
	verb := c.Name()
	return usageErrorf("--if-match is empty (an unset variable?): give the item's etag, the \"etag\" of `cosmosctl read ID --pk VALUE -o json`, or leave --if-match out to %s whatever is stored", verb)
}

// run resolves settings, connects, executes the operation and prints the result.
func (o *itemOptions) run(ctx context.Context, io *IOStreams, op engine.Operation) error {
	switch {
	case o.conn.flags.Changed("pk"):
		pk, err := parsePartitionKey(o.pk)
		if err != nil {
			return err
		}
		op.PartitionKey = pk
	case op.Kind == engine.OpRead || op.Kind == engine.OpDelete || op.Kind == engine.OpPatch:
		return usageErrorf("%s needs the item's partition key: add --pk VALUE", op.Kind)
	}
	if o.conn.flags.Changed("write-retries") && op.Kind != engine.OpPatch {
		o.conn.writeRetryFlag = &o.writeRetries
	}
	settings, err := o.conn.resolve(io)
	if err != nil {
		return err
	}
	if op.WriteRetries, err = o.writePolicy(op.Kind, settings); err != nil {
		return err
	}
	sess, err := o.conn.connect(ctx, io, settings)
	if err != nil {
		return err
	}
	defer sess.Close()
	op.Database, op.Container = sess.settings.Database, sess.settings.Container
	op.E2ETimeout = sess.settings.E2ETimeout
	if op.Kind == engine.OpRead {
		if op.Consistency, err = o.conn.readConsistency(); err != nil {
			return err
		}
	}
	if o.conn.hedge != nil {
		if op.Hedge, err = o.conn.hedge.strategy(sess.settings); err != nil {
			return err
		}
		sess.learn(op.Hedge)
	}
	if op.ExcludeRegions, err = o.conn.excludes(ctx, sess); err != nil {
		return err
	}
	res, err := sess.client.Execute(ctx, op)
	err = withUniqueKeyHint(err)
	if o.conn.flags.Changed("pk") {
		err = withPartitionKeyHint(err, o.pk, op.PartitionKey, func() bool {
			_, cerr := sess.client.PartitionKeyDefinition(ctx, op.Database, op.Container)
			status, _, _ := cosmos.Status(cerr)
			return status != 404
		})
	}
	return o.render(io, sess, res, interruptedDuring(res, err))
}

func (o *itemOptions) render(io *IOStreams, sess *session, res *engine.Result, err error) error {
	if o.conn.wantJSON(sess.settings) {
		obj := output.ResultJSON(res, err)
		if r, ok := obj.(*output.ResultObject); ok {
			classifyFailure(r.Error, err)
			addHint(r.Error, err)
		}
		if werr := output.WriteJSON(io.Out, obj); werr != nil {
			return werr
		}
	} else if err == nil && res != nil {
		if werr := output.WriteItem(io.Out, res.Body, io.OutTTY); werr != nil {
			return werr
		}
	}
	// Nothing sent (bad input the engine refused), nothing to show: an empty table would
	// only describe settings that never applied.
	if res != nil && res.Diagnostics != nil && len(res.Diagnostics.Attempts) > 0 {
		switch {
		case o.conn.diagnosticsJSON:
			o.conn.eventsTo(io).emit(diagnosticsEvent{"diagnostics", res.Diagnostics})
		case (o.conn.diagnostics || o.conn.terminalDiagnostics(io)) && !o.conn.wantJSON(sess.settings):
			_ = output.WriteDiagnostics(io.ErrOut, res.Diagnostics, o.conn.styles(io))
		}
	}
	return asUsage(err)
}

// writePolicy is the write retry policy of this command: the flag, environment or
// profile (nearest wins) for create, upsert, replace and delete; only the command's own
// flag for patch.
func (o *itemOptions) writePolicy(kind engine.OpKind, s config.Settings) (retries.WritePolicy, error) {
	if !kind.IsWrite() {
		return retries.NoWriteRetries, nil
	}
	policy := s.WriteRetries.Policy
	if kind == engine.OpPatch {
		policy = config.WriteRetriesOff
		switch o.writeRetries {
		case "", "off":
		case "retries":
			policy = config.WriteRetriesOn
		default:
			return 0, usageErrorf("patch --write-retries must be off or retries, not %q (a patch carries no _trackingId)", o.writeRetries)
		}
	}
	switch policy {
	case config.WriteRetriesOn:
		return retries.WriteRetries, nil
	case config.WriteRetriesTrackingID:
		return retries.WriteRetriesWithTrackingID, nil
	}
	return retries.NoWriteRetries, nil
}
