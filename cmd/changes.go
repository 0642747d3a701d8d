package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	goio "io"
	"io/fs"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/changefeed"
	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/internal/shardscope"
	"github.com/cosmosctl/cosmosctl/output"
)

// changesOptions are the flags of `cosmosctl changes`.
type changesOptions struct {
	conn         connFlags
	from         string
	pk           string
	follow       bool
	maxItems     int
	state        string
	pollInterval time.Duration
	pageSize     int
	parallelism  int
	duration     time.Duration
	until        string
	shards       shardFlags
}

const changesLong = `Print the container's change feed: every item created or changed, once, in its
latest version (deletions are not in it), read through the engine like any read:
the effective regions, --exclude and --region, the attempt and end-to-end timeouts
(--e2e-timeout bounds each poll), failover, region health, and hedging.

Every partition key range is read at once (8 polls in flight, --parallelism),
each from its own position; a range that splits is followed into its children.
Each poll asks for up to 1,000 changes (--page-size), the pages a backlog drains
fastest with, as the Java SDK's change feed reader asks for (export and query --all
read such pages too); with --max-items N, for N at most.
With --pk only that partition key's changes are read; with a prefix of a
hierarchical key (--pk '["acme"]' on /tenant,/user) those of every key that
starts with it: each range that holds such keys is read, each poll narrowed to
them (x-ms-start-epk, x-ms-end-epk), as the JS SDK reads a prefix.

Where it starts (--from): beginning (default), now (only changes made after the
command starts), or an RFC 3339 time (changes made at or after it, to the second).

When it stops: once every range has no newer change (exit 0), or with --follow
never: each range is polled again --poll-interval after it had nothing new, until
Ctrl-C (exit 130). --max-items N stops after N changes. --duration D (10m, 1h)
or --until TIME (RFC 3339) stops the command at that time at the latest, with
--follow or not: it exits 0, with every change it printed in the saved position,
as when it catches up (the time counts from the command's start; a feed that
could not even be opened by then exits 6).

Output: one item a line (NDJSON), compact, written as the changes arrive, when
stdout is not a terminal or with -o json or ndjson; on a terminal a table of the
changes (time, range, id, partition key, size, LSN) as they arrive. On a terminal
stderr gets one line of totals at the end (changes, polls, RU, time);
--diagnostics prints every poll instead.

--state FILE keeps the position: the command resumes from the file when it
exists (--from applies to a first run only) and saves it, atomically, only
once the changes it covers are written to stdout: every 0.1 s at most while
changes keep coming, as soon as there is nothing new, and when the command
stops (Ctrl-C included). The guarantee is at least once: a change is never
lost, and the only changes printed again after a crash or kill -9 are those
printed since the last save (about the last tenth of a second of output). With
--max-items the saved position is exactly after the last change printed. The
file belongs to one container (and --pk, a prefix with the ranges it spans):
another one's file is refused (exit 2).

A poll that fails (throttled, timed out, a region down) is retried after the
service's retry-after or a back-off and reported on stderr; without --follow
three failures in a row of one range end the command.
` + "Exit codes: cosmosctl help exit-codes."

func newChangesCmd(io *IOStreams) *cobra.Command {
	o := &changesOptions{}
	c := &cobra.Command{
		Use:   "changes [--from beginning|now|TIME] [--pk KEY] [--follow] [--state FILE]",
		Short: "Stream the change feed (every range in parallel), optionally following it and resuming from a saved position",
		Long:  changesLong,
		Example: `  cosmosctl changes --from now --follow
  cosmosctl changes --from 2026-12-01T09:00:00Z --pk acme | jq -r .id
  cosmosctl changes --follow --state feed.json > changes.ndjson
  cosmosctl changes --follow --duration 10m --state feed.json >> changes.ndjson   # a runbook step that ends
  cosmosctl changes --follow --until 2026-12-01T18:00:00Z --state feed.json
  cosmosctl changes --max-items 100 --state feed.json -o ndjson
  cosmosctl changes --follow --poll-interval 5s --exclude "East US" --diagnostics`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return o.run(c.Context(), io)
		},
	}
	c.AddCommand(newChangesLagCmd(io))
	o.conn.register(c)
	o.conn.withHedging(c.Flags())
	o.conn.withConsistency(c.Flags())
	o.conn.format.add(config.OutputNDJSON, config.OutputTSV)
	o.conn.format.streams()
	f := c.Flags()
	f.Lookup("output").Usage = "table (a terminal's default), tsv, json or ndjson (both one item a line, as the changes arrive; the default off a terminal) ($COSMOSCTL_OUTPUT)"
	f.Lookup("diagnostics").Usage = "print every poll (range, status, changes, RU, duration, regions) on stderr, terminal or not"
	f.Lookup("e2e-timeout").Usage = "end-to-end timeout of each poll, retries and hedges included, e.g. 2s ($COSMOSCTL_E2E_TIMEOUT; default none)"
	f.StringVar(&o.from, "from", "beginning", "where a first run starts: beginning, now, or an RFC 3339 time such as 2026-12-01T09:00:00Z")
	f.StringVar(&o.pk, "pk", "", "read this partition key's changes only: a JSON value, a JSON array for a hierarchical key or a prefix of one, or a plain string")
	f.BoolVar(&o.follow, "follow", false, "keep polling for new changes until Ctrl-C, --duration or --until")
	f.DurationVar(&o.duration, "duration", 0, "stop after this long, e.g. 10m, exiting 0 with the position saved (default: no limit)")
	f.StringVar(&o.until, "until", "", "stop at this time, RFC 3339 such as 2026-12-01T18:00:00Z, exiting 0 with the position saved")
	f.IntVar(&o.maxItems, "max-items", 0, "stop after this many changes (default: no limit)")
	f.StringVar(&o.state, "state", "", "file of the feed's position: resumed from when it exists, saved after every batch written (at least once)")
	f.DurationVar(&o.pollInterval, "poll-interval", changefeed.DefaultPollDelay, "with --follow, how long a range with nothing new waits before it is polled again")
	f.IntVar(&o.pageSize, "page-size", 0, fmt.Sprintf("changes per poll, 1 to %d (default: %d, the pages a catch-up drains fastest with, as export and query --all; with --max-items N, N up to that)", maxQueryPageSize, defaultExportPageSize))
	f.IntVar(&o.parallelism, "parallelism", changefeed.DefaultParallelism, fmt.Sprintf("polls in flight at once across partition key ranges, 1 to %d", changefeed.MaxParallelism))
	o.shards.register(f)
	return c
}

// validate checks the flags that need no I/O.
func (o *changesOptions) validate() (changefeed.StartFrom, error) {
	fl := o.conn.flags
	switch {
	case fl.Changed("duration") && fl.Changed("until"):
		return changefeed.StartFrom{}, usageErrorf("--duration and --until both say when to stop: give one")
	case fl.Changed("duration") && o.duration <= 0:
		return changefeed.StartFrom{}, usageErrorf("--duration must be more than 0 (got %s); give a duration such as 10m", o.duration)
	case o.maxItems < 0:
		return changefeed.StartFrom{}, usageErrorf("--max-items must not be negative, not %d (0: no limit)", o.maxItems)
	case o.pollInterval < 0:
		return changefeed.StartFrom{}, usageErrorf("--poll-interval must not be negative (got %s); give a duration such as 1s", o.pollInterval)
	case fl.Changed("page-size") && (o.pageSize < 1 || o.pageSize > maxQueryPageSize):
		return changefeed.StartFrom{}, usageErrorf("--page-size must be between 1 and %d, not %d", maxQueryPageSize, o.pageSize)
	case o.parallelism < 1 || o.parallelism > changefeed.MaxParallelism:
		return changefeed.StartFrom{}, usageErrorf("--parallelism must be between 1 and %d, not %d", changefeed.MaxParallelism, o.parallelism)
	case fl.Changed("state") && strings.TrimSpace(o.state) == "":
		return changefeed.StartFrom{}, usageErrorf("--state needs a file name")
	case fl.Changed("pk") && (fl.Changed("shard") || fl.Changed("feed-range")):
		return changefeed.StartFrom{}, usageErrorf("--pk reads one partition key's changes, which live in one range: leave out %s", o.shards.flagName())
	}
	return parseFrom(o.from)
}

// deadline is when --duration or --until stops the command, counted from start; zero
// for neither. A time already past is an error: --until is when the command stops, not
// a bound on the times of the changes it prints.
func (o *changesOptions) deadline(start time.Time) (time.Time, error) {
	fl := o.conn.flags
	switch {
	case fl.Changed("duration"):
		return start.Add(o.duration), nil
	case !fl.Changed("until"):
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(o.until))
	if err != nil {
		return time.Time{}, usageErrorf("--until must be an RFC 3339 time such as 2026-12-01T18:00:00Z, not %q", o.until)
	}
	if !t.After(start) {
		return time.Time{}, usageErrorf("--until %s has passed (it is now %s): it is when the command stops, so give a time to come", o.until, start.UTC().Format(time.RFC3339))
	}
	return t, nil
}

// parseFrom reads --from: beginning, now, or an RFC 3339 time.
func parseFrom(s string) (changefeed.StartFrom, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "beginning":
		return changefeed.StartFrom{Kind: changefeed.Beginning}, nil
	case "now":
		return changefeed.StartFrom{Kind: changefeed.Now}, nil
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(s))
	if err != nil {
		return changefeed.StartFrom{}, usageErrorf("--from must be beginning, now or an RFC 3339 time such as 2026-12-01T09:00:00Z, not %q", s)
	}
	return changefeed.StartFrom{Kind: changefeed.AtTime, Time: t}, nil
}

func (o *changesOptions) run(ctx context.Context, io *IOStreams) error {
	start := time.Now()
	from, err := o.validate()
	if err != nil {
		return err
	}
	deadline, err := o.deadline(start)
	if err != nil {
		return err
	}
	var pk cosmos.PartitionKey
	if o.conn.flags.Changed("pk") {
		if pk, err = parsePartitionKey(o.pk); err != nil {
			return err
		}
	}
	shardAsked, err := o.shards.asked(getenv)
	if err != nil {
		return err
	}
	var state *changefeed.State
	if o.state != "" {
		state, err = changefeed.LoadState(o.state)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			state = nil
		case err != nil:
			return &UsageError{Err: err}
		case o.conn.flags.Changed("from"):
			io.notice(fmt.Sprintf("cosmosctl: resuming from the position in %s (--from applies to a first run only)", o.state))
		}
	}
	var recorded *shardscope.Scope
	if state != nil {
		recorded = state.Shard
		if err := checkRecorded(o.state, recorded, shardAsked); err != nil {
			return err
		}
	}
	// Before any request: a position that cannot be saved is found now, not after the
	// changes it would cover were printed.
	if err := checkWritable(outputPath{flag: "--state", path: o.state, replaced: true}); err != nil {
		return err
	}
	sess, err := o.conn.open(ctx, io)
	if err != nil {
		return err
	}
	defer sess.Close()
	page, err := o.conn.readTemplate(ctx, sess)
	if err != nil {
		return err
	}
	keys, err := resolveKeyScope(ctx, sess, o.pk, pk)
	if err != nil {
		return err
	}
	scope, err := resolveScope(ctx, sess, io, recorded, shardAsked)
	if err != nil {
		return changesError(err)
	}
	fo := changefeed.Options{Scope: scope, Client: sess.client, Database: sess.settings.Database, Container: sess.settings.Container,
		PartitionKey: keys.key, PartitionKeyPrefix: keys.prefix, From: from, Until: changefeed.CaughtUp, State: state, PageSize: o.pageSize,
		Parallelism: o.parallelism, PollDelay: o.pollInterval, Page: page}
	if o.follow {
		fo.Until = changefeed.Forever
		if o.pollInterval == 0 {
			fo.PollDelay = time.Millisecond // "0": as soon as possible, without spinning
		}
	}
	if !o.conn.flags.Changed("page-size") {
		fo.PageSize = changesPageSize(o.maxItems)
	}
	// Off a terminal the changes are NDJSON unless a format was asked for (-o, or
	// COSMOSCTL_OUTPUT or the profile's output).
	asked := o.conn.flags.Changed("output") || sess.settings.Source("output") != config.SourceDefault
	ndjson := config.JSONOutput(sess.settings.Output) || (!io.OutTTY && !asked)
	// As lines, each batch is written out before the next is asked for (read): its
	// buffer can serve a later poll. The table keeps rows of them.
	fo.ReuseItemMemory = ndjson
	// The feed (its polls in the background included) lives until the deadline; the
	// interruption is still ctx's.
	feedCtx := ctx
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		feedCtx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	feed, err := changefeed.Open(feedCtx, fo)
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return &InterruptedError{What: "changes before the first poll"}
		}
		if ctx.Err() == nil && feedCtx.Err() != nil {
			return fmt.Errorf("the change feed could not be opened before %s: %w", o.stopFlag(), context.DeadlineExceeded)
		}
		return changesError(err)
	}
	defer feed.Close()
	r := &changesRun{o: o, io: io, lines: output.ItemLineWriter{W: io.Out}, feed: feed, start: start, ndjson: ndjson}
	if o.state != "" {
		// Where the feed starts: saved even if nothing comes, so that a first run
		// --from now is where the next one starts.
		r.pos = feed.State()
	}
	if !r.ndjson {
		r.table = output.NewChangesTable(io.Out, io.outStyles(o.conn.noColor))
		r.pkPaths, _ = sess.client.PartitionKeyPaths(ctx, sess.settings.Database, sess.settings.Container, 0)
	}
	runErr := r.read(feedCtx)
	if runErr != nil && ctx.Err() == nil && feedCtx.Err() != nil {
		// --duration or --until is over: the end the user asked for. What was
		// printed is in the position finish saves.
		runErr, r.stopped = nil, o.stopFlag()
	}
	return r.finish(ctx, runErr)
}

// changesPageSize is the page a run asks for when --page-size is not given, chosen as
// the SDKs choose by the kind of read. A query iterator leaves the page to the service
// (.NET FeedRequestOptions.MaxItemCount unset or -1, "dynamic page size"; Go
// QueryOptions.PageSizeHint 0 sends no x-ms-max-item-count): the service's 100, for a
// person paging through results. The change feed pull model of the Java SDK asks for
// 1,000 by default (CosmosChangeFeedRequestOptions.DEFAULT_MAX_ITEM_COUNT = 1000),
// because a feed is drained: every page is a round trip and the service's per-request
// cost. A catch-up, and --follow draining a backlog, is such a read: pages of 1,000,
// as export and query --all read (a quiet feed answers with what it has, so large pages
// cost a follower nothing). A run of --max-items N asks for no more than it prints:
// the rest would be read and paid for.
func changesPageSize(maxItems int) int {
	if maxItems > 0 {
		return min(maxItems, maxQueryPageSize)
	}
	return defaultExportPageSize
}

// stopFlag names the flag that set the deadline, for messages.
func (o *changesOptions) stopFlag() string {
	if o.conn.flags.Changed("duration") {
		return "--duration " + o.duration.String()
	}
	return "--until " + o.until
}

// changesRun is one run of the command: what it printed, and where the feed stands.
type changesRun struct {
	o       *changesOptions
	io      *IOStreams
	lines   output.ItemLineWriter // -o ndjson's, on io.Out
	feed    *changefeed.Feed
	ndjson  bool
	table   *output.ChangesTable
	pkPaths []string
	printed int
	polls   int
	charge  float64
	start   time.Time
	// pos is the position covering what is on stdout: the feed's state after the last
	// batch written (or after a batch with nothing to write), or, when --max-items
	// stopped the run inside a batch, the position after its last change printed. A
	// batch whose write failed is not in it.
	pos *changefeed.State
	// dirty: pos is not saved yet; saved is when it last was, savedRanges what.
	dirty       bool
	saved       time.Time
	savedRanges []byte
	// stopped names the flag whose time ended the run (--duration 10m), if one did.
	stopped string
}

// read prints the changes as they come and saves the position after each batch.
func (r *changesRun) read(ctx context.Context) error {
	for {
		b, err := r.next(ctx)
		if err != nil {
			if errors.Is(err, goio.EOF) {
				return nil
			}
			return err
		}
		if b == nil {
			continue // the position was saved while nothing came
		}
		r.diagnose(b)
		if b.Info.Kind == changefeed.KindPoll {
			r.polls++
		}
		r.charge += b.Info.RequestCharge
		if b.Info.Err != nil && !r.o.conn.diagnostics {
			fmt.Fprintf(r.io.ErrOut, "cosmosctl: warning: %s: %v; polling it again in %s\n", rangeLabel(b.RangeID), b.Info.Err, output.HumanDuration(b.Info.Wait))
		}
		if len(b.Items) == 0 {
			if r.o.state != "" {
				r.pos, r.dirty = r.feed.State(), true
			}
			continue
		}
		items := b.Items
		pos := (*changefeed.State)(nil)
		if r.o.maxItems > 0 && r.printed+len(items) >= r.o.maxItems {
			n := r.o.maxItems - r.printed
			if pos, err = r.feed.StateAfter(b, n); err != nil {
				return err
			}
			items = items[:n]
		}
		if err := r.write(b.RangeID, items); err != nil {
			return err
		}
		// The batch is on stdout (written, not buffered): only now may the position
		// move past it.
		if pos == nil {
			pos = r.feed.State()
		}
		r.pos, r.dirty = pos, r.o.state != ""
		r.printed += len(items)
		if r.o.maxItems > 0 && r.printed >= r.o.maxItems {
			return nil
		}
		if time.Since(r.saved) >= checkpointEvery {
			if err := r.save(); err != nil {
				return err
			}
		}
	}
}

// checkpointEvery is how often, at most, --state is saved while batches come one after
// another (a save is an fsync'd atomic replace, milliseconds: after every batch it
// would be most of a catch-up's time); a position not saved yet is saved as soon as
// the feed has nothing ready for that long, and when the command stops.
const checkpointEvery = 100 * time.Millisecond

// next is the feed's next batch. With a position not saved yet it waits only until
// checkpointEvery after the last save, then saves and returns nil.
func (r *changesRun) next(ctx context.Context) (*changefeed.Batch, error) {
	if !r.dirty {
		return r.feed.Next(ctx)
	}
	wait, cancel := context.WithTimeout(ctx, checkpointEvery-time.Since(r.saved))
	defer cancel()
	b, err := r.feed.Next(wait)
	if err != nil && ctx.Err() == nil && wait.Err() != nil {
		return nil, r.save()
	}
	return b, err
}

func (r *changesRun) write(rangeID string, items []json.RawMessage) error {
	if r.ndjson {
		return r.lines.Write(items)
	}
	rows := make([]output.ChangeRow, len(items))
	for i, it := range items {
		rows[i] = output.NewChangeRow(it, rangeID, r.pkPaths)
	}
	return r.table.Write(rows)
}

// save writes the position to --state, if given.
func (r *changesRun) save() error {
	r.dirty, r.saved = false, time.Now()
	if r.o.state == "" || r.pos == nil {
		return nil
	}
	ranges, _ := json.Marshal(r.pos.Ranges)
	if bytes.Equal(ranges, r.savedRanges) {
		return nil // no range moved
	}
	if err := r.pos.Save(r.o.state); err != nil {
		return fmt.Errorf("saving the change feed position: %w", err)
	}
	r.savedRanges = ranges
	return nil
}

// finish saves the position a last time and returns the command's error: nil, an
// interruption (130) naming where the position is, or what ended the feed.
func (r *changesRun) finish(ctx context.Context, runErr error) error {
	if r.table != nil {
		_ = r.table.Close()
	}
	saveErr := r.save()
	if r.o.conn.terminalDiagnostics(r.io) && !r.o.conn.diagnostics {
		st := r.o.conn.styles(r.io)
		fmt.Fprintln(r.io.ErrOut, st.Faint(fmt.Sprintf("%s, %s, %.2f RU in %s", output.HumanCount(r.printed, "change"),
			output.HumanCount(r.polls, "poll"), r.charge, output.HumanDuration(time.Since(r.start)))))
	}
	saved := ""
	if r.o.state != "" && saveErr == nil {
		saved = fmt.Sprintf("; the position is saved in %s: resume with --state %s", r.o.state, r.o.state)
	}
	switch {
	case runErr == nil && r.stopped != "" && saveErr == nil:
		r.io.notice(fmt.Sprintf("cosmosctl: stopped at the end of %s, after %s%s", r.stopped, output.HumanCount(r.printed, "change"), saved))
		return nil
	case runErr == nil:
		return saveErr
	case errors.Is(runErr, context.Canceled) && ctx.Err() != nil:
		return &InterruptedError{What: fmt.Sprintf("changes after %s%s", output.HumanCount(r.printed, "change"), saved)}
	}
	if saved != "" {
		fmt.Fprintf(r.io.ErrOut, "cosmosctl: the change feed stopped after %s%s\n", output.HumanCount(r.printed, "change"), saved)
	}
	return changesError(runErr)
}

// changesError makes a state file of another container, or options the engine or the
// feed refused, usage errors.
func changesError(err error) error {
	var se *changefeed.StateError
	if errors.As(err, &se) {
		return &UsageError{Err: err}
	}
	return asUsage(err)
}

// diagnose prints one line per poll with --diagnostics.
func (r *changesRun) diagnose(b *changefeed.Batch) {
	if !r.o.conn.diagnostics {
		return
	}
	in := b.Info
	if r.o.conn.diagnosticsJSON {
		r.o.conn.eventsTo(r.io).emit(newPollEvent(b))
		return
	}
	var line strings.Builder
	fmt.Fprintf(&line, "%s %s: ", in.Kind, rangeLabel(b.RangeID))
	switch {
	case in.Err != nil:
		fmt.Fprintf(&line, "failed (%v), again in %s", in.Err, output.HumanDuration(in.Wait))
	case in.Kind == changefeed.KindRanges:
		line.WriteString(in.Note)
	case in.CaughtUp:
		line.WriteString("304 nothing new")
	default:
		fmt.Fprintf(&line, "%d, %s", in.StatusCode, output.HumanCount(len(b.Items), "change"))
	}
	fmt.Fprintf(&line, ", %.2f RU, %s", in.RequestCharge, output.HumanDuration(in.Duration))
	if d := in.Diagnostics; d != nil {
		var regions []string
		for _, a := range d.Attempts {
			regions = append(regions, fmt.Sprintf("%s %s", a.Region, a.Outcome))
		}
		if len(regions) > 0 {
			line.WriteString(" [" + strings.Join(regions, ", ") + "]")
		}
	}
	fmt.Fprintln(r.io.ErrOut, line.String())
}

func rangeLabel(id string) string {
	if id == "" {
		return "the partition key"
	}
	return "range " + id
}
