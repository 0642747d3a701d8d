package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	goio "io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/bulk"
	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/internal/progress"
	"github.com/cosmosctl/cosmosctl/internal/rulimit"
	"github.com/cosmosctl/cosmosctl/output"
	"github.com/cosmosctl/cosmosctl/shard"
)

// importOptions are the flags of `cosmosctl import`.
type importOptions struct {
	conn        connFlags
	mode        string
	concurrency int
	maxRU       float64
	state       string
	rejected    string
	failFast    bool
	progress    string
	// shard is --shard as given, spec what it says (Count 0: the whole input); runID
	// --run-id; maxRUPerShard --max-ru-per-second-per-shard.
	shard         string
	spec          shard.Spec
	runID         string
	maxRUPerShard float64
}

// importLineRetryWait is the wait before a line whose write failed for the service's
// availability is sent again, doubling with each retry (bulk.Options.RetryWait). Tests
// of a write region that is down shorten it: what they show is when the import stops,
// not how long it waits.
var importLineRetryWait = 200 * time.Millisecond

// importWriteTimeout bounds each write of an import when no --e2e-timeout is set: the
// point ladder alone (6 s, 10 s, 65 s, and the write retries) would leave a line
// waiting minutes on a hung write region, and an import dozens of minutes, before any
// write failed. A write that gets no answer within it, with no other write answered
// meanwhile, stops the import (bulk.UnavailableError). 15 s is two attempts of the
// ladder, far beyond a healthy write's milliseconds.
const importWriteTimeout = 15 * time.Second

// importCheckpointEvery is how often --state is saved while an import runs
// (bulk.Options.CheckpointEvery). Tests that wait for a checkpoint shorten it.
var importCheckpointEvery = time.Second

// bulkLimiter paces an import's writes.
type bulkLimiter = bulk.Limiter

// newImportLimiter makes the import's limiter for a cap in RU/s (0: none); tests
// see through it which cap a shard got.
var newImportLimiter = defaultImportLimiter

func defaultImportLimiter(ru float64) bulkLimiter { return rulimit.New(ru, clock.Real{}) }

// maxImportConcurrency bounds --concurrency: more writes in flight than this only
// queue in the client or get throttled.
const maxImportConcurrency = 256

const importLong = `Load a file of items, one JSON object a line (NDJSON), into the container:
each line one write through the engine (the write region, --e2e-timeout per
write, the engine's retries), --concurrency of them in flight at once.

Modes:
  create   (default) an item whose id is already stored in its partition is left
           as it is and counted as already present
  upsert   every item is created or replaced (counted as created or updated)

Exactly once. Creates carry a _trackingId (the run's id, from the state file, and
the line number; it stays in the stored item), so a write whose answer was lost (a
dropped connection, a killed process) is recognised when it is sent again: its 409
is checked against the stored item, and counts as created when it carries the
run's _trackingId, already present when it does not. Upserts need no id.

--state FILE checkpoints the import every second and when it stops (atomically):
the lines done and the counts of the whole run. Run the same command again to
resume: done lines are skipped, and the report covers every process of the run.
The state is bound to the input (its size and the SHA-256 of its first MiB) and
to the account, database, container and --mode; another one is refused (exit 2).
From standard input (-) only the first MiB can be checked: feed the same data.

More than one machine. --shard i/N makes this process shard i (from 0) of N: it
takes line n of the input when (n-1) mod N is i, passes over the other lines
unparsed, and reports its lines as shard i/N's. Start N processes with the same
input, flags and N, i from 0 to N-1, each with its own --state: together they
import every line exactly once. --shard auto/N (or /N) takes i from
JOB_COMPLETION_INDEX, which a Kubernetes Indexed Job sets in each pod. The shards
share the run id, so that each line's _trackingId is the one a single process
would give it in that run: by default it derives from the input (its size and the
SHA-256 of its first MiB), the database, container, mode and N; --run-id ID sets it
(give every shard the same, e.g. the Job's uid), so that two imports of the same
file are two runs. A shard's state file records its shard and run: another
shard's, or another run's, is refused (exit 2). Each shard resumes on its own.
Several files: concatenate them into standard input (cat a.ndjson b.ndjson |
cosmosctl import - --shard i/N): their lines are numbered as one input, the same
in every shard.

Throughput. --max-ru-per-second caps the RU the import spends (default: no cap).
A 429 pauses every writer for the service's retry-after and lowers the import's
own rate to 0.8x what it measured, climbing back 10 %/s while no 429 comes, so
that the import does not take the container's whole throughput from its other
clients. With --shard, --max-ru-per-second is the total of all N shards: each
keeps to a 1/N share of it, unless --max-ru-per-second-per-shard gives its own
cap (which then wins). The engine retries each 429 itself (9 times, 30 s at
most); a line still throttled after that is sent again, up to 20 times, without
failing.

Rejected lines: a line that is not UTF-8 (its first invalid byte's offset is
given: re-encode the file, e.g. with iconv), not a JSON object, has no string id,
no value at the partition key path, or is over 2 MiB (rejected once 2 MiB of it is
read, the rest skipped unread), and a write that failed, goes to the
rejected-lines file with its line number and reason (--rejected; default FILE.rejected.ndjson,
or STATE.rejected.ndjson with --state, or import.rejected.ndjson for standard input),
one JSON object a line: {"line":N,"reason":"...","error":"...","item":{...}}, so that
jq -c .item FILE.rejected.ndjson | cosmosctl import - loads them again. They do not
stop the import unless --fail-fast (which records the line, then stops; resuming
goes on after it).

Outages. Each write has an end-to-end bound (--e2e-timeout; 15s for import unless
set): a write that gets no answer within it while no other write is answered shows
the write region hung or unreachable, and stops the import at once. Writes that
fail for the service's availability (503, timeouts, no answer) are sent again 3
times; 20 in a row (or twice --concurrency), or a run of them at the end of the
input with no write answered after it, stop the import too. Those lines are not
marked done, so that resuming sends them again (exit 8).

Order. Lines of the same item (the same id and partition key) are written one at a
time in the file's order, across resumes too, so the item ends as the file's last
line for it says, as a sequential import would leave it; other items' lines go out
in parallel. In upsert mode, a 200 whose line an earlier attempt may already have
written (a lost answer retried, or a resumed run sending again a line an earlier
process may have sent) is counted as "created or updated": which one is not known.

Progress goes to stderr, stdout being the report: a bar on a terminal (items,
items/s, RU/s, ETA, failures); --progress json writes NDJSON events instead, one a
second, {"event":"progress",...}, and the report last, {"event":"report",...}
(export's, the same); --progress off, none. The report goes to stdout at the end:
created, already present, updated, failed and bad lines by reason, lines, RU,
items/s and duration; -o json prints it as one object (--jq picks from it), -o tsv
as tab-separated lines.

Exit codes: 0 every line imported (created, already present or updated); 11 the
import completed but some lines were rejected or failed (the report counts them,
the rejected-lines file holds them); 130 on Ctrl-C (143 on SIGTERM), after the
state is saved (resume with the same command); 2 bad flags, input or state
file; 8 the service stopped taking writes. Exit codes: cosmosctl help exit-codes.
` + accountHelp

func newImportCmd(io *IOStreams) *cobra.Command {
	o := &importOptions{}
	c := &cobra.Command{
		Use:   "import FILE.ndjson|- [--mode create|upsert] [--state FILE]",
		Short: "Load NDJSON items exactly once, resumable, paced by RU/s",
		Long:  importLong,
		Example: `  cosmosctl import items.ndjson --state items.state
  cosmosctl import items.ndjson --mode upsert --concurrency 32 --max-ru-per-second 2000
  gunzip -c items.ndjson.gz | cosmosctl import - --state items.state --jq .created
  cosmosctl import items.ndjson --progress json 2>progress.ndjson
  jq -c .item items.state.rejected.ndjson | cosmosctl import - --rejected retry.rejected.ndjson
  cosmosctl import items.ndjson --shard 2/4 --state items.2.state --max-ru-per-second 4000   # 1000 RU/s for this shard`,
		Args: exactArgs(1, "the NDJSON file, or - for standard input"),
		RunE: func(c *cobra.Command, args []string) error {
			return o.run(c.Context(), io, args[0])
		},
	}
	o.conn.register(c)
	f := c.Flags()
	f.Lookup("e2e-timeout").Usage = fmt.Sprintf("end-to-end timeout of each write, its retries included, e.g. 5s ($COSMOSCTL_E2E_TIMEOUT; default %s for import)", importWriteTimeout)
	_ = f.MarkHidden("diagnostics")
	o.conn.format.add(config.OutputTSV)
	f.StringVar(&o.progress, "progress", "", "progress on stderr: bar, json (NDJSON events) or off (default: bar on a terminal, else off)")
	f.StringVar(&o.mode, "mode", string(bulk.Create), "create (an existing item is left and counted as already present) or upsert (created or replaced)")
	f.IntVar(&o.concurrency, "concurrency", 16, fmt.Sprintf("writes in flight at once, 1 to %d", maxImportConcurrency))
	f.Float64Var(&o.maxRU, "max-ru-per-second", 0, "spend at most this many RU/s (default: no cap; 429s still slow the import down)")
	f.StringVar(&o.state, "state", "", "checkpoint to this file, and resume from it if it exists")
	f.StringVar(&o.rejected, "rejected", "", "the rejected-lines file (default FILE.rejected.ndjson, or STATE.rejected.ndjson with --state)")
	f.BoolVar(&o.failFast, "fail-fast", false, "stop at the first rejected line (after recording it)")
	f.StringVar(&o.shard, "shard", "", "import only shard i of N of the lines, i/N (line n is shard (n-1) mod N's); auto/N takes i from $JOB_COMPLETION_INDEX")
	f.StringVar(&o.runID, "run-id", "", "the run's id, the first part of every _trackingId: the same for every shard (default: a new one, or with --shard one derived from the input, container, mode and N)")
	f.Float64Var(&o.maxRUPerShard, "max-ru-per-second-per-shard", 0, shardRUHelp)
	return c
}

// validate checks the flags that need no I/O.
func (o *importOptions) validate() (bulk.Mode, error) {
	mode := bulk.Mode(strings.ToLower(o.mode))
	switch {
	case mode != bulk.Create && mode != bulk.Upsert:
		return "", usageErrorf("--mode must be create or upsert, not %q", o.mode)
	case o.concurrency < 1 || o.concurrency > maxImportConcurrency:
		return "", usageErrorf("--concurrency must be between 1 and %d, not %d", maxImportConcurrency, o.concurrency)
	case o.maxRU < 0 || o.maxRU != o.maxRU:
		return "", usageErrorf("--max-ru-per-second must be 0 (no cap) or more, not %v", o.maxRU)
	case o.maxRUPerShard < 0 || o.maxRUPerShard != o.maxRUPerShard:
		return "", usageErrorf("--max-ru-per-second-per-shard must be 0 (no cap) or more, not %v", o.maxRUPerShard)
	case o.maxRUPerShard > 0 && o.shard == "":
		return "", usageErrorf("--max-ru-per-second-per-shard caps one shard: give --shard i/N too, or use --max-ru-per-second")
	case o.runID != "" && (strings.TrimSpace(o.runID) != o.runID || strings.ContainsAny(o.runID, " \t\n:") || len(o.runID) > 128):
		return "", usageErrorf("--run-id %q: give 1 to 128 characters without spaces or ':' (it goes before the line number in each _trackingId)", o.runID)
	}
	if o.shard != "" {
		spec, err := shard.ParseSpec(o.shard, getenv)
		if err != nil {
			return "", &UsageError{Err: err}
		}
		o.spec = spec
	}
	switch o.progress {
	case "", "bar", "json", "off":
	default:
		return "", usageErrorf("--progress must be bar, json or off, not %q", o.progress)
	}
	return mode, nil
}

// openInput opens the input file (or standard input) and says its size (-1: unknown).
func (o *importOptions) openInput(io *IOStreams, name string) (goio.Reader, int64, func(), error) {
	if name == "-" {
		return io.In, -1, func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, nil, usageErrorf("cannot read the input: %v", err)
	}
	info, err := f.Stat()
	if err == nil && info.IsDir() {
		f.Close()
		return nil, 0, nil, usageErrorf("the input %s is a directory: give an NDJSON file, or - for standard input", name)
	}
	size := int64(-1)
	if err == nil && info.Mode().IsRegular() {
		size = info.Size()
	}
	return f, size, func() { f.Close() }, nil
}

// rejectedPath is where the rejected lines go: --rejected, the file a resumed run
// already uses, or a default next to the state file or the input.
func (o *importOptions) rejectedPath(input string, st *bulk.State, resumed bool) (string, error) {
	if resumed && st.Rejected != "" {
		if o.rejected != "" && filepath.Clean(o.rejected) != filepath.Clean(st.Rejected) {
			return "", usageErrorf("this import's rejected lines are in %s (the state file says so): give --rejected %s, or none", st.Rejected, st.Rejected)
		}
		return st.Rejected, nil
	}
	switch {
	case o.rejected != "":
		return o.rejected, nil
	case o.state != "":
		return o.state + ".rejected.ndjson", nil
	case input == "-":
		return "import.rejected.ndjson", nil
	}
	return strings.TrimSuffix(input, ".ndjson") + ".rejected.ndjson", nil
}

func (o *importOptions) run(ctx context.Context, io *IOStreams, input string) error {
	mode, err := o.validate()
	if err != nil {
		return err
	}
	// stderr is NDJSON for a program to read: no notice may break into it.
	io.errJSON = o.progress == "json"
	var st *bulk.State
	if o.state != "" {
		if st, err = bulk.LoadState(o.state); err != nil {
			return &UsageError{Err: err}
		}
	}
	r, size, closeInput, err := o.openInput(io, input)
	if err != nil {
		return err
	}
	defer closeInput()
	src, err := bulk.NewSource(ctx, r, input, size)
	if err != nil {
		if ctx.Err() != nil {
			return &InterruptedError{What: "import of " + input + " before its first line"}
		}
		return usageErrorf("cannot read the input: %v", err)
	}
	resumed := st != nil
	rejPath, err := o.rejectedPath(input, st, resumed)
	if err != nil {
		return err
	}
	// Before any request: a file that cannot be written is found before the import
	// costs anything, not when the first checkpoint or rejected line is written.
	rejOut := outputPath{flag: "--rejected", path: rejPath}
	switch {
	case resumed && st.Rejected != "":
		rejOut.origin = "named by the state file"
	case o.rejected == "":
		rejOut.origin = "the default"
	}
	if err := checkWritable(outputPath{flag: "--state", path: o.state, replaced: true}, rejOut); err != nil {
		return err
	}
	sess, err := o.conn.open(ctx, io)
	if err != nil {
		return err
	}
	defer sess.Close()
	target := bulk.Target{Endpoint: sess.settings.Endpoint, Database: sess.settings.Database, Container: sess.settings.Container}
	if !sess.settings.Configured() {
		target.Endpoint = "the embedded emulator"
	}
	if resumed {
		if err := st.Check(o.state, src.Fingerprint(), target, mode); err != nil {
			return &UsageError{Err: err}
		}
		if err := st.CheckRun(o.state, o.bulkShard(), o.runID); err != nil {
			return &UsageError{Err: err}
		}
	} else {
		st = o.newState(src.Fingerprint(), target, mode)
	}
	st.Rejected = rejPath
	def, err := sess.client.PartitionKeyDefinition(ctx, target.Database, target.Container)
	if err != nil {
		return asUsage(err)
	}
	write := engine.Operation{}
	write.E2ETimeout = sess.settings.E2ETimeout
	if write.E2ETimeout <= 0 {
		write.E2ETimeout = importWriteTimeout
	}
	if write.ExcludeRegions, err = o.conn.excludes(ctx, sess); err != nil {
		return err
	}
	rej, err := bulk.OpenRejected(rejPath, st)
	if err != nil {
		return &UsageError{Err: err}
	}
	if resumed {
		io.notice(fmt.Sprintf("cosmosctl: resuming the import from %s: %s done by %s", o.state,
			output.HumanCountThousands(st.Counts.Lines, "line"), output.HumanCount(st.Runs, "earlier run")))
	}

	asJSON := o.conn.wantJSON(sess.settings)
	bar := o.startProgress(ctx, io, input, size)
	bo := bulk.Options{Client: sess.client, Target: target, PartitionKey: def, Mode: mode, Concurrency: o.concurrency,
		Limiter: newImportLimiter(o.ruLimit()), Write: write, RetryWait: importLineRetryWait, FailFast: o.failFast, Rejected: rej,
		Progress: func(p bulk.Progress) {
			if bar != nil {
				bar.Update(progress.Counts{Done: p.Done - p.Rejected, Failed: p.Rejected, Skipped: p.Skipped, RU: p.RequestCharge, Total: bar.total})
			}
		}}
	if o.conn.diagnosticsJSON {
		events := o.conn.eventsTo(io)
		bo.Written = func(line int64, id string, res *engine.Result, err error) {
			events.emit(newWriteEvent(line, id, res, err))
		}
	}
	if o.state != "" {
		bo.Checkpoint = func(s *bulk.State) error { return s.Save(o.state, time.Now()) }
		bo.CheckpointEvery = importCheckpointEvery
	}
	rep, runErr := bulk.Import(ctx, src, st, bo)
	bar.Stop()
	if cerr := rej.Close(); cerr != nil && runErr == nil {
		runErr = cerr
	}
	if rep.Rejected() == 0 {
		// Nothing to look at: no empty file left behind (a resumed run makes it anew).
		os.Remove(rejPath)
		rejPath = ""
	}
	var refused *bulk.RefusedError
	if errors.As(runErr, &refused) && !resumed && rep.Lines == 0 && o.state != "" {
		// A first run whose writes were all refused did nothing: a state left behind
		// would bind the next run to what was wrong (the container, say), and refuse
		// the corrected command.
		os.Remove(o.state)
		o.state = ""
	}
	err = o.commandError(ctx, input, rep, rejPath, runErr)
	obj := output.NewImportReport(rep, input, target, mode, err)
	if obj.Shard != nil {
		if ru := o.ruLimit(); ru > 0 {
			obj.Shard.MaxRUPerSecond = &ru
		}
	}
	if rejPath != "" {
		obj.RejectedFile = &rejPath
	}
	if o.state != "" {
		obj.StateFile = &o.state
	}
	classifyFailure(obj.Error, err)
	if o.progress == "json" {
		// The stream of events ends with the report, as export's does.
		if b, merr := jsonLine(obj); merr == nil {
			io.ErrOut.Write(b)
		}
	}
	if asJSON {
		if werr := output.WriteJSON(io.Out, obj); werr != nil {
			return werr
		}
	} else if werr := output.WriteImportReport(io.Out, io.outStyles(o.conn.noColor), obj); werr != nil {
		return werr
	}
	o.notes(io, input, rep, rejPath, err, o.resumeCommand(input, target.Database, target.Container))
	return err
}

// bulkShard is --shard for the import: the zero Shard for the whole input.
func (o *importOptions) bulkShard() bulk.Shard {
	if o.spec.Count == 0 {
		return bulk.Shard{}
	}
	return bulk.Shard{Index: o.spec.Index, Count: o.spec.Count}
}

// ruLimit is the RU/s this process keeps to: with --shard, its share of the total.
func (o *importOptions) ruLimit() float64 {
	return shardRULimit(o.maxRU, o.maxRUPerShard, o.spec)
}

// newState starts a run. Every shard of a sharded run must give each line the
// _trackingId a single process would: the same run id, --run-id or one they all
// derive from what they share, without talking to each other.
func (o *importOptions) newState(in bulk.Fingerprint, target bulk.Target, mode bulk.Mode) *bulk.State {
	st := bulk.NewState(in, target, mode)
	if sh := o.bulkShard(); !sh.Whole() {
		st.Shard = &sh
		st.RunID = bulk.ShardRunID(in, target, mode, sh.Count)
	}
	if o.runID != "" {
		st.RunID = o.runID
	}
	return st
}

func jsonLine(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	return append(b, '\n'), err
}

// notes tell a person on stderr how to go on: where the rejected lines are, and how to
// resume.
func (o *importOptions) notes(io *IOStreams, input string, rep *bulk.Report, rejPath string, err error, resume string) {
	if n := rep.Rejected(); n > 0 {
		whose := "their line numbers and reasons"
		if n == 1 {
			whose = "its line number and reason"
		}
		fmt.Fprintf(io.ErrOut, "cosmosctl: %s rejected, with %s, in %s\n", output.HumanCount(int(n), "line"), whose, rejPath)
	}
	if rep.Complete {
		return
	}
	var ue *bulk.UnavailableError
	var ff *bulk.FailFastError
	var re *bulk.RefusedError
	resumable := errors.Is(err, errInterrupted) || errors.As(err, &ue) || errors.As(err, &ff) || errors.As(err, &re)
	switch {
	case !resumable:
	case re != nil && rep.Lines == 0:
		// Nothing was done: the error says what to fix, and then the same command
		// (or the corrected one) starts afresh.
	case o.state != "" && input == "-":
		fmt.Fprintf(io.ErrOut, "cosmosctl: the state is saved in %s: resume with the same command, the same data on standard input: %s\n", o.state, resume)
	case o.state != "":
		fmt.Fprintf(io.ErrOut, "cosmosctl: the state is saved in %s: resume with the same command: %s\n", o.state, resume)
	default:
		fmt.Fprintf(io.ErrOut, "cosmosctl: no --state was given, so this import cannot be resumed: running it again counts the %s already written as already present; give --state FILE to make an import resumable\n",
			output.HumanCount(int(rep.Written()), "item"))
	}
}

// commandError is the command's error for how the import ended.
func (o *importOptions) commandError(ctx context.Context, input string, rep *bulk.Report, rejPath string, err error) error {
	var ff *bulk.FailFastError
	switch {
	case err == nil && rep.Rejected() > 0:
		return &PartialError{Rejected: rep.Rejected(), Lines: rep.Lines, File: rejPath}
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		return &InterruptedError{What: fmt.Sprintf("import of %s after %s", input, output.HumanCount(int(rep.Lines), "line"))}
	case errors.As(err, &ff) && ff.Err == nil:
		return &UsageError{Err: err}
	}
	return asUsage(err)
}

// importProgress is the import's progress display and the input's line count.
type importProgress struct {
	*progress.Reporter
	total int64
}

func (p *importProgress) Update(c progress.Counts) {
	if p != nil {
		p.Reporter.Update(c)
	}
}

func (p *importProgress) Stop() {
	if p != nil {
		p.Reporter.Stop()
	}
}

// startProgress starts the display on stderr, stdout being the report: --progress, else a
// bar on a terminal and nothing otherwise. A file's lines are counted first for the
// total, until ctx is done: a signal then stops the import before it starts, with its
// state saved.
func (o *importOptions) startProgress(ctx context.Context, io *IOStreams, input string, size int64) *importProgress {
	mode := progress.Off
	switch {
	case o.progress == "bar":
		mode = progress.Bar
	case o.progress == "json":
		mode = progress.JSON
	case o.progress == "" && io.ErrTTY:
		mode = progress.Bar
	}
	rep := progress.New(io.ErrOut, mode, progress.Options{Label: "import", Unit: "item", Width: func() int { return io.ErrWidth }})
	if rep == nil {
		return nil
	}
	p := &importProgress{Reporter: rep}
	if size >= 0 {
		if f, err := os.Open(input); err == nil {
			total, _ := bulk.CountLines(ctx, f)
			p.total = o.bulkShard().LinesOf(total)
			f.Close()
		}
	}
	return p
}
