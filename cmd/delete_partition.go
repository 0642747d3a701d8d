package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/internal/rulimit"
	"github.com/cosmosctl/cosmosctl/internal/statefile"
	"github.com/cosmosctl/cosmosctl/output"
)

// partitionDeleteOptions are the flags of `delete --partition-key-value`.
type partitionDeleteOptions struct {
	value  string
	mode   string
	dryRun bool
	yes    bool
	state  string
	maxRU  float64
}

const (
	partitionDeleteModeAuto    = "auto"
	partitionDeleteModeService = "service"
	partitionDeleteModeQuery   = "query"

	partitionDeleteStateKind    = "partition-delete"
	partitionDeleteStateVersion = 1
)

// partitionDeletePage is how many ids one query page asks for; a variable so that a
// test can make a small partition span pages.
var partitionDeletePage = 100

// partitionDeleteAfterPage, when set (tests only), is called once a page's deletes
// are recorded; an error it returns stops the run there, as an interruption would.
var partitionDeleteAfterPage func() error

const partitionDeleteHelp = `
Deleting a whole logical partition. --partition-key-value VALUE (instead of an ID
and --pk; a hierarchical key is the whole JSON array, '["acme","user-7"]') deletes
every item whose partition key is VALUE:
  --mode service  the service's delete-by-partition-key operation (POST
                  …/operations/partitionkeydelete). The service answers at once and
                  removes the items in the background; they leave reads and queries
                  at once. The account must have the feature enabled.
  --mode query    a query for the partition's ids, then one delete each, paced by
                  --max-ru-per-second, with progress on stderr. An item already gone
                  (404) counts as deleted. --state FILE records what is done: after an
                  interruption, the same command with the same --state continues.
  --mode auto     the service operation, and the query-and-delete when the account
                  refuses it (default).
--dry-run counts the partition's items (SELECT VALUE COUNT(1)) and deletes nothing.
It is destructive: on a terminal it asks for the value to be typed back; otherwise
--yes is needed (exit 2 without it).`

// registerPartitionDelete adds the partition delete's flags to the delete command.
func (p *partitionDeleteOptions) register(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&p.value, "partition-key-value", "", "delete every item of this logical partition (a JSON array for a hierarchical key)")
	f.StringVar(&p.mode, "mode", partitionDeleteModeAuto, "with --partition-key-value: service, query or auto")
	f.BoolVar(&p.dryRun, "dry-run", false, "with --partition-key-value: count the partition's items, delete nothing")
	f.BoolVarP(&p.yes, "yes", "y", false, "with --partition-key-value: delete without asking")
	f.StringVar(&p.state, "state", "", "with --partition-key-value and the query mode: record progress in FILE, resume from it")
	f.Float64Var(&p.maxRU, "max-ru-per-second", 0, "with --partition-key-value and the query mode: spend at most this many request units a second (default: no cap)")
}

// validate checks the flags before anything is read or sent.
func (p *partitionDeleteOptions) validate(c *cobra.Command) (cosmos.PartitionKey, error) {
	switch p.mode {
	case partitionDeleteModeAuto, partitionDeleteModeService, partitionDeleteModeQuery:
	default:
		return nil, usageErrorf("--mode must be service, query or auto, not %q", p.mode)
	}
	if c.Flags().Changed("pk") || c.Flags().Changed("if-match") {
		return nil, usageErrorf("--partition-key-value deletes a whole logical partition: leave out --pk and --if-match")
	}
	if p.maxRU < 0 {
		return nil, usageErrorf("--max-ru-per-second must not be negative (got %g); leave it out for no cap", p.maxRU)
	}
	if p.mode == partitionDeleteModeService && (p.state != "" || p.maxRU > 0) {
		return nil, usageErrorf("--state and --max-ru-per-second pace the query-and-delete; --mode service sends one request")
	}
	pk, err := parsePartitionKey(p.value)
	if err != nil {
		return nil, usageErrorf("--partition-key-value: %v", strings.TrimPrefix(err.Error(), "--pk "))
	}
	return pk, nil
}

// partitionDeleteSummary is the one result the command prints.
type partitionDeleteSummary struct {
	PartitionKey  json.RawMessage `json:"partition_key"`
	Method        string          `json:"method"`
	DryRun        bool            `json:"dry_run"`
	Items         *int64          `json:"items,omitempty"`
	Deleted       *int64          `json:"deleted,omitempty"`
	AlreadyGone   int64           `json:"already_gone"`
	RequestCharge float64         `json:"request_charge"`
	// Fallback says why the service operation was not used in auto mode.
	Fallback string `json:"fallback,omitempty"`
}

// partitionDeleteState is what --state records: the partition it is for and what
// the query-and-delete has done. Items deleted leave the partition, so a rerun's
// query finds only those left: the counts carry over, nothing else needs to.
type partitionDeleteState struct {
	Database      string  `json:"database"`
	Container     string  `json:"container"`
	PartitionKey  string  `json:"partition_key"` // its JSON, compared as text
	Deleted       int64   `json:"deleted"`
	AlreadyGone   int64   `json:"already_gone"`
	RequestCharge float64 `json:"request_charge"`
	Done          bool    `json:"done"`
}

// runPartitionDelete is `delete --partition-key-value`.
func (o *itemOptions) runPartitionDelete(ctx context.Context, io *IOStreams, c *cobra.Command, p *partitionDeleteOptions) error {
	pk, err := p.validate(c)
	if err != nil {
		return err
	}
	if err := checkWritable(outputPath{flag: "--state", path: p.state, replaced: true}); err != nil {
		return err
	}
	sess, err := o.conn.open(ctx, io)
	if err != nil {
		return err
	}
	defer sess.Close()
	if p.state != "" {
		// A state file that cannot be used is an error before the first item
		// request, not a silent start from nothing.
		if _, err := loadPartitionDeleteState(p.state, sess.settings.Endpoint); err != nil {
			return err
		}
	}
	base := engine.Operation{Database: sess.settings.Database, Container: sess.settings.Container, PartitionKey: pk, E2ETimeout: sess.settings.E2ETimeout}
	sum := partitionDeleteSummary{PartitionKey: json.RawMessage(pk.JSON()), Method: p.mode}
	if p.dryRun {
		n, charge, err := countPartition(ctx, sess.client, base)
		if err != nil {
			return err
		}
		sum.DryRun, sum.Items, sum.RequestCharge, sum.Method = true, &n, charge, "count"
		return p.print(io, o, sess, sum)
	}
	if err := p.confirm(io, pk); err != nil {
		return err
	}
	if p.mode != partitionDeleteModeQuery {
		op := base
		op.Kind = engine.OpDeletePartition
		res, err := sess.client.Execute(ctx, op)
		switch {
		case err == nil:
			sum.Method, sum.RequestCharge = partitionDeleteModeService, res.RequestCharge
			return p.print(io, o, sess, sum)
		case p.mode == partitionDeleteModeService || !serviceLacksPartitionDelete(err):
			return interruptedDuring(res, err)
		}
		status, sub, _ := cosmos.Status(err)
		sum.Fallback = fmt.Sprintf("the service operation was refused (%d/%d): query and delete", status, sub)
		fmt.Fprintf(io.ErrOut, "delete: %s\n", sum.Fallback)
	}
	sum.Method = partitionDeleteModeQuery
	return p.queryAndDelete(ctx, io, o, sess, base, sum)
}

// serviceLacksPartitionDelete reports whether err is the service saying it has no
// delete-by-partition-key for this account, rather than a failure of the request.
// What an account without the feature (it was behind a preview registration,
// DeleteAllItemsByPartitionKey) answers is not documented, and no SDK handles it
// apart, so this is a choice: 400 (but for 400/1001, a key that does not fit the
// container, which a query-and-delete would not fix), 404 with no substatus of its
// own (a gateway without the route; a missing container fails the query too, with
// its own words), 405 and 501.
func serviceLacksPartitionDelete(err error) bool {
	status, sub, ok := cosmos.Status(err)
	if !ok {
		return false
	}
	switch status {
	case 400:
		return sub != cosmos.SubPartitionKeyMismatch
	case 404:
		return sub == 0
	case 405, 501:
		return true
	}
	return false
}

// confirm asks on a terminal for the partition key value to be typed back; without
// a terminal it needs --yes, so that a script never deletes by a prompt nobody answered.
func (p *partitionDeleteOptions) confirm(io *IOStreams, pk cosmos.PartitionKey) error {
	if p.yes {
		return nil
	}
	what := "every item of logical partition " + pk.JSON()
	if !io.InTTY {
		return usageErrorf("refusing to delete %s without confirmation: stdin is not a terminal, add --yes", what)
	}
	fmt.Fprintf(io.ErrOut, "Delete %s? This cannot be undone. Type %q to confirm: ", what, p.value)
	line, _ := bufio.NewReader(io.In).ReadString('\n')
	if strings.TrimSpace(line) != p.value {
		return usageErrorf("not deleted: the answer was not %q", p.value)
	}
	return nil
}

// countPartition counts the items of the operation's logical partition.
func countPartition(ctx context.Context, client *engine.Client, base engine.Operation) (int64, float64, error) {
	op := base
	op.Kind = engine.OpQuery
	op.Query = &cosmos.QuerySpec{Query: "SELECT VALUE COUNT(1) FROM c"}
	var total int64
	charge := 0.0
	for {
		res, err := client.Execute(ctx, op)
		if err != nil {
			return 0, charge, interruptedDuring(res, err)
		}
		charge += res.RequestCharge
		var page struct{ Documents []int64 }
		if err := json.Unmarshal(res.Body, &page); err != nil {
			return 0, charge, fmt.Errorf("the count query's answer is not a page of numbers: %v", err)
		}
		for _, n := range page.Documents {
			total += n
		}
		if res.Continuation == "" {
			return total, charge, nil
		}
		op.Continuation = res.Continuation
	}
}

// loadPartitionDeleteState reads --state: the zero state when the file is missing, a
// usage error naming the problem when it cannot be used (corrupt, another kind of
// state, another account), for it would otherwise be replaced and its counts lost.
func loadPartitionDeleteState(path, endpoint string) (partitionDeleteState, error) {
	st, err := statefile.Load[partitionDeleteState](path, partitionDeleteStateKind, partitionDeleteStateVersion, endpoint)
	var ignored *statefile.Ignored
	switch {
	case errors.As(err, &ignored):
		return st, usageErrorf("--state %s: %s; give another file, or remove it to start over", path, ignored.Problem)
	case err != nil:
		return st, usageErrorf("--state %s: %v", path, unwrapPath(err))
	}
	return st, nil
}

// queryAndDelete reads the partition's ids a page at a time and deletes each,
// within the RU cap, recording its progress in --state after every page.
func (p *partitionDeleteOptions) queryAndDelete(ctx context.Context, io *IOStreams, o *itemOptions, sess *session, base engine.Operation, sum partitionDeleteSummary) error {
	st := partitionDeleteState{Database: base.Database, Container: base.Container, PartitionKey: string(sum.PartitionKey)}
	if p.state != "" {
		prev, err := loadPartitionDeleteState(p.state, sess.settings.Endpoint)
		if err != nil {
			return err
		}
		if prev.Database != "" {
			if prev.Database != st.Database || prev.Container != st.Container || prev.PartitionKey != st.PartitionKey {
				return usageErrorf("--state %s is for partition %s of %s/%s, not this one: give another file", p.state, prev.PartitionKey, prev.Database, prev.Container)
			}
			st = prev
			fmt.Fprintf(io.ErrOut, "delete: resuming from %s: %d items deleted before\n", p.state, st.Deleted+st.AlreadyGone)
		}
	}
	limiter := rulimit.New(p.maxRU, clock.Real{})
	save := func() error {
		if p.state == "" {
			return nil
		}
		return statefile.Update(p.state, partitionDeleteStateKind, partitionDeleteStateVersion, sess.settings.Endpoint, func(partitionDeleteState, bool) (partitionDeleteState, error) {
			return st, nil
		})
	}
	q := base
	q.Kind, q.MaxItemCount = engine.OpQuery, partitionDeletePage
	q.Query = &cosmos.QuerySpec{Query: "SELECT VALUE c.id FROM c"}
	err := func() error {
		for {
			if err := limiter.Wait(ctx); err != nil {
				return err
			}
			res, err := sess.client.Execute(ctx, q)
			if res != nil {
				limiter.Spent(res.RequestCharge)
				st.RequestCharge += res.RequestCharge
			}
			if err != nil {
				return interruptedDuring(res, err)
			}
			var page struct{ Documents []string }
			if err := json.Unmarshal(res.Body, &page); err != nil {
				return fmt.Errorf("the id query's answer is not a page of ids: %v", err)
			}
			for _, id := range page.Documents {
				if err := limiter.Wait(ctx); err != nil {
					return err
				}
				del := base
				del.Kind, del.ID = engine.OpDelete, id
				res, err := sess.client.Execute(ctx, del)
				if res != nil {
					limiter.Spent(res.RequestCharge)
					st.RequestCharge += res.RequestCharge
				}
				switch status, _, _ := cosmos.Status(err); {
				case err == nil:
					st.Deleted++
				case status == 404:
					// Gone already: deleted by an earlier run, the service's own
					// background delete, or anyone else. The goal is met.
					st.AlreadyGone++
				default:
					return interruptedDuring(res, err)
				}
			}
			if err := save(); err != nil {
				return err
			}
			fmt.Fprintf(io.ErrOut, "delete: %d items deleted, %d already gone, %.2f RU\n", st.Deleted, st.AlreadyGone, st.RequestCharge)
			if partitionDeleteAfterPage != nil {
				if err := partitionDeleteAfterPage(); err != nil {
					return err
				}
			}
			if res.Continuation == "" {
				return nil
			}
			q.Continuation = res.Continuation
		}
	}()
	if err != nil {
		_ = save()
		return err
	}
	st.Done = true
	if err := save(); err != nil {
		return err
	}
	sum.Deleted, sum.AlreadyGone, sum.RequestCharge = &st.Deleted, st.AlreadyGone, st.RequestCharge
	return p.print(io, o, sess, sum)
}

// print writes the summary: one JSON object with -o json, one line otherwise.
func (p *partitionDeleteOptions) print(io *IOStreams, o *itemOptions, sess *session, sum partitionDeleteSummary) error {
	if o.conn.wantJSON(sess.settings) {
		return output.WriteJSON(io.Out, sum)
	}
	var line string
	switch {
	case sum.DryRun:
		line = fmt.Sprintf("%d items in partition %s; nothing deleted (dry run)", *sum.Items, sum.PartitionKey)
	case sum.Method == partitionDeleteModeService:
		line = fmt.Sprintf("partition %s deleted by the service (its items are gone from reads now; the service removes them in the background)", sum.PartitionKey)
	default:
		line = fmt.Sprintf("partition %s: %d items deleted, %d already gone, %.2f RU", sum.PartitionKey, *sum.Deleted, sum.AlreadyGone, sum.RequestCharge)
	}
	_, err := fmt.Fprintln(io.Out, line)
	return err
}
