package bulk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/retries"
)

// Executor runs one operation: an *engine.Client.
type Executor interface {
	Execute(ctx context.Context, op engine.Operation) (*engine.Result, error)
}

// Limiter paces the writes by request units (internal/rulimit.Limiter): Wait before
// each write, Spent with each write's charge, Throttled for each 429 the engine gets.
type Limiter interface {
	Wait(ctx context.Context) error
	Spent(ru float64)
	Throttled(retryAfter time.Duration)
}

// Options say how to import.
type Options struct {
	Client Executor
	Target Target
	// PartitionKey is the container's partition key definition: each line's key is
	// read from it before the write is sent.
	PartitionKey cosmos.PartitionKeyDefinition
	Mode         Mode
	// Concurrency is how many writes are in flight at once (default 16).
	Concurrency int
	// Limiter paces the writes; nil sends them as fast as Concurrency allows.
	Limiter Limiter
	// Write is the template of every write: ExcludeRegions, E2ETimeout, Hedge.
	Write engine.Operation
	// FailFast stops the import at the first line rejected (a bad line or a failed
	// write), after recording it.
	FailFast bool
	// LineRetries is how many times a line whose write failed for the service's
	// availability (after the engine's own retries) is sent again, RetryWait apart
	// (doubling): default 3 and 200 ms.
	LineRetries int
	RetryWait   time.Duration
	// StopAfter failed writes in a row stop the import (default 20, or twice the
	// concurrency if more): the service is not taking writes. Those lines are not
	// marked done, so resuming sends them again.
	StopAfter int
	Clock     clock.Clock
	// Progress is called after every line with the run's progress so far.
	Progress func(Progress)
	// Written, when set, is called after every write sent for a line (a line the
	// import retries is written more than once) with the line's number and id and the
	// engine's result (its diagnostics) and error; from the writers' goroutines.
	Written func(line int64, id string, res *engine.Result, err error)
	// Checkpoint is called with a copy of the state every CheckpointEvery (default
	// 1 s) and once at the end, never twice at once; nil keeps no state.
	Checkpoint      func(*State) error
	CheckpointEvery time.Duration
	// Rejected receives the rejected lines, one JSON object (Rejection) a line. When
	// it has a Sync method, that is called before each checkpoint, so that a state
	// never counts a rejection its file lost.
	Rejected io.Writer

	runID string // the state's, for the tracking ids
	// halt stops the run with an error (an outage seen by a write).
	halt func(error)
}

// Progress is a run's progress: the lines this process did (Rejected of them
// rejected), and the lines earlier processes did, skipped.
type Progress struct {
	Done, Skipped, Rejected int64
	RequestCharge           float64
}

// FailFastError is the first rejected line of an import with FailFast.
type FailFastError struct {
	Line   int64
	Reason string
	// Err is the write's error for a failed write, nil for a bad line.
	Err error
	msg string
}

func (e *FailFastError) Error() string {
	return fmt.Sprintf("line %d: %s (stopped by --fail-fast)", e.Line, e.msg)
}

func (e *FailFastError) Unwrap() error { return e.Err }

// UnavailableError is an import stopped because its writes kept failing for the
// service's availability.
type UnavailableError struct {
	Failures int
	Err      error
	// Hung: a write got no answer within its bound while no other write was answered.
	// AtEnd: the writes at the end of the input failed, with none answered after them.
	Hung, AtEnd bool
}

func (e *UnavailableError) Error() string {
	switch {
	case e.Hung:
		return fmt.Sprintf("stopped: a write got no answer within its bound and no other write was answered meanwhile (the write region is hung or unreachable): %v; the lines not answered are not marked done", e.Err)
	case e.AtEnd:
		if e.Failures == 1 {
			return fmt.Sprintf("stopped: the last write failed for the service's availability, with: %v; its line is not marked done", e.Err)
		}
		return fmt.Sprintf("stopped: the last %d writes failed for the service's availability with no write answered after them, the last with: %v; those lines are not marked done", e.Failures, e.Err)
	}
	return fmt.Sprintf("stopped after %d writes in a row failed, the last with: %v; those lines are not marked done", e.Failures, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// RefusedError is an import stopped at the first write the account refused in a way
// that no other line could get past: 401 (the credential), 403 other than a moved write
// region (RBAC, a firewall, the storage quota), 404 (no such container or database).
// Sending the other lines one by one would only reject every one of them, so the import
// stops at once, and the line is not marked done: resuming, once the cause is fixed,
// sends it again.
type RefusedError struct {
	Line int64
	Err  error
}

func (e *RefusedError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *RefusedError) Unwrap() error { return e.Err }

func (o *Options) defaults() {
	if o.Concurrency <= 0 {
		o.Concurrency = 16
	}
	if o.LineRetries == 0 {
		o.LineRetries = 3
	}
	if o.RetryWait <= 0 {
		o.RetryWait = 200 * time.Millisecond
	}
	if o.StopAfter <= 0 {
		o.StopAfter = max(20, 2*o.Concurrency)
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.CheckpointEvery <= 0 {
		o.CheckpointEvery = time.Second
	}
	if o.Limiter == nil {
		o.Limiter = noLimit{}
	}
}

// throttledLineRetries is how many more times a line still throttled after the
// engine's 429 retries (9, 30 s of waiting at most) is sent: a busy container slows an
// import down, it does not fail its lines.
const throttledLineRetries = 20

type noLimit struct{}

func (noLimit) Wait(ctx context.Context) error { return ctx.Err() }
func (noLimit) Spent(float64)                  {}
func (noLimit) Throttled(time.Duration)        {}

// job is one item to write.
type job struct {
	n    int64
	body []byte
	id   string
	pk   cosmos.PartitionKey
	key  string // itemKey(id, pk): lines of one item are written in order
	// doc is body as the line's scan read it, handed to the engine so that it does not
	// scan the line again (engine.Operation.Document); nil for a line the scan left to
	// encoding/json.
	doc *engine.Document
}

type outcome int

const (
	outCreated outcome = iota
	outPresent
	outUpdated
	// outUncertain is an upsert answered 200 after an earlier attempt of the line, in
	// this process or one before it, may have been applied: whether the line created
	// the item or updated it is not known.
	outUncertain
	// outSuperseded is a line whose write failed for availability and that a later line
	// of the same item then overwrote: the item holds the later line, as a sequential
	// import would leave it, so the line is done and not rejected.
	outSuperseded
	outFailed    // the service refused the write: final
	outTransient // the write failed for availability, after every retry
	outBad       // the line is not an item
	outBlank
	outCancelled // the run stopped before the write ended: not done
	outFatal     // the write cannot work for any line (auth, no such container)
)

// result is what came of one line.
type result struct {
	n         int64
	key       string
	out       outcome
	reason    string
	err       error
	status    int
	item      []byte
	text      []byte
	bytes     int64
	ru        float64
	throttles int64
}

// Import writes src's lines into the target, resuming st (from NewState or
// LoadState), and returns the report of the whole run. It returns the report with
// the error that stopped it: the context's (interrupted), *FailFastError,
// *UnavailableError, *RefusedError (a write error that no line could get past: 401,
// 403, 404), or a
// failure to read the input or save a checkpoint. The state is checkpointed before it
// returns, whatever stopped it.
func Import(ctx context.Context, src *Source, st *State, o Options) (*Report, error) {
	o.defaults()
	o.runID = st.RunID
	resumed := st.Runs > 0
	st.Runs++
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	shard := st.shard()
	t := &tracker{o: &o, st: st, done: newDoneSet(shard, st.Prefix, st.Above), start: o.Clock.Now(), elapsed: st.Elapsed, rejBytes: st.RejectedBytes,
		horizon: st.SentThrough}
	// sentBefore: the lines of a resumed run up to it may have been sent by an earlier
	// process (which reserved them in its state before sending them); lines after it
	// were never sent. A state without the horizon (all of it may have been sent) is
	// read as reserving every line.
	sentBefore := st.SentThrough
	if resumed && sentBefore == 0 {
		sentBefore = math.MaxInt64
	}
	t.rej = o.Rejected
	skip := newDoneSet(shard, st.Prefix, st.Above)

	// A write the account refused for good (RefusedError) stops the feeding of lines,
	// not the writes already sent: those are left to get their answers, so that one the
	// service applied is counted as done rather than cut off in flight with its fate
	// unknown (its answer would be lost, though the item is stored).
	feedCtx, stopFeeding := context.WithCancelCause(runCtx)
	defer stopFeeding(nil)
	t.refused = stopFeeding
	o.halt = stop
	order := newKeyOrder(max(64, 4*o.Concurrency))
	jobs := make(chan job)
	var wg sync.WaitGroup
	for range o.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				// The line, then the lines of the same item read since, in order.
				for ok := true; ok; j, ok = order.next(j.key) {
					if feedCtx.Err() != nil {
						continue // handed over but not sent: not done, sent again on resume
					}
					r := write(runCtx, &o, t, j, resumed && j.n <= sentBefore)
					var refused *RefusedError
					switch err := t.finish(r); {
					case errors.As(err, &refused):
						stopFeeding(err)
					case err != nil:
						stop(err)
					}
				}
			}
		}()
	}
	ckDone := make(chan struct{})
	ckExited := make(chan struct{})
	go func() {
		defer close(ckExited)
		for {
			timer := o.Clock.NewTimer(o.CheckpointEvery)
			select {
			case <-timer.C():
				if err := t.checkpoint(false); err != nil {
					stop(err)
				}
			case <-ckDone:
				timer.Stop()
				return
			}
		}
	}()

	readErr := readLines(feedCtx, src, &o, shard, skip, t, order, jobs)
	if readErr != nil && !errors.Is(readErr, context.Canceled) {
		stop(readErr)
	}
	close(jobs)
	wg.Wait()
	close(ckDone)
	<-ckExited

	complete := feedCtx.Err() == nil && readErr == nil
	if endErr := t.end(complete); endErr != nil {
		stop(endErr)
		complete = false
	}
	ckErr := t.checkpoint(complete)
	rep := t.report(complete)

	err := context.Cause(feedCtx) // runCtx's cause when it was stopped, else a refusal
	switch {
	case complete:
		err = nil
	case ctx.Err() != nil:
		err = ctx.Err()
		rep.Stopped = "interrupted"
	case err != nil:
		rep.Stopped = err.Error()
	}
	if err == nil && ckErr != nil {
		err = ckErr
	}
	return rep, err
}

// readLines reads the input and hands its items to the writers, passing over the lines
// of other shards unread, skipping the lines done before and settling bad lines itself.
func readLines(ctx context.Context, src *Source, o *Options, shard Shard, skip *doneSet, t *tracker, order *keyOrder, jobs chan<- job) error {
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !shard.Has(src.n + 1) {
			err := src.pass(ctx)
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("reading %s: %w", src.fingerprint.Name, err)
			}
			t.otherShard()
			continue
		}
		l, err := src.next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", src.fingerprint.Name, err)
		}
		t.shardLine()
		if skip.has(l.n) {
			t.skip()
			continue
		}
		j, bad := parseLine(l, o.PartitionKey)
		if bad != nil {
			if err := t.finish(*bad); err != nil {
				return err
			}
			continue
		}
		if err := t.reserve(j.n); err != nil {
			return err
		}
		sendNow, err := order.admit(ctx, j)
		if err != nil {
			return err
		}
		if !sendNow {
			continue // the writer of the item's line before it sends it next
		}
		select {
		case jobs <- j:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// parseLine makes a line a job, or the result of a line that is not an item.
func parseLine(l line, def cosmos.PartitionKeyDefinition) (job, *result) {
	if l.tooLarge > 0 {
		return job{}, &result{n: l.n, out: outBad, reason: ReasonTooLarge, err: errors.New(tooLargeError(l.tooLarge, l.cut)), bytes: l.tooLarge}
	}
	if j, ok := scanLine(l, def); ok {
		return j, nil
	}
	return decodeLine(l, def)
}

// scanLine is parseLine's single pass over a line that is an item, as nearly all are:
// one scan validates its JSON and UTF-8 and finds its id and partition key
// (engine.ScanDocument). ok is false for any line the scan is not sure of (not JSON, not
// UTF-8, no id, no key…): parseLine then decodes it as before, and says what is wrong
// with it in the same words.
func scanLine(l line, def cosmos.PartitionKeyDefinition) (job, bool) {
	doc, ok := engine.ScanDocument(l.text)
	if !ok {
		return job{}, false
	}
	id, ok := doc.ID()
	if !ok || id == "" {
		return job{}, false
	}
	pk, ok := doc.PartitionKey(def)
	if !ok {
		return job{}, false
	}
	return job{n: l.n, body: l.text, id: id, pk: pk, key: itemKey(id, pk.JSON()), doc: doc}, true
}

// decodeLine is parseLine for a line the scan was not sure of, as every line was read
// before the scan: encoding/json decodes it, and says what is wrong with it.
func decodeLine(l line, def cosmos.PartitionKeyDefinition) (job, *result) {
	bad := func(reason, msg string) (job, *result) {
		r := &result{n: l.n, out: outBad, reason: reason, err: errors.New(msg)}
		if json.Valid(l.text) {
			r.item = l.text
		} else {
			r.text = l.text
		}
		return job{}, r
	}
	// encoding/json would replace invalid bytes with U+FFFD, so that an id, a partition
	// key or a value would be stored as something else than what the file says.
	if off, invalid := invalidUTF8(l.text); invalid {
		return job{}, &result{n: l.n, out: outBad, reason: ReasonInvalidUTF8, text: l.text,
			err: fmt.Errorf("the line is not valid UTF-8 (byte offset %d): save the file as UTF-8, e.g. iconv -f LATIN1 -t UTF-8", l.bom+off)}
	}
	if len(bytes.TrimSpace(l.text)) == 0 {
		return job{}, &result{n: l.n, out: outBlank}
	}

	dec := json.NewDecoder(bytes.NewReader(l.text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return bad(ReasonInvalidJSON, "the line is not valid JSON: "+err.Error())
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return bad(ReasonInvalidJSON, "the line has more after its JSON value: give one item a line")
	}
	doc, ok := v.(map[string]any)
	if !ok {
		return bad(ReasonNotObject, fmt.Sprintf("the line is %s, not an object: each line is one item", cosmos.JSONKind(v)))
	}
	id, isString := doc["id"].(string)
	switch {
	case doc["id"] == nil:
		return bad(ReasonNoID, `the item has no "id" property: every Cosmos DB item needs a string id`)
	case !isString:
		return bad(ReasonIDNotString, fmt.Sprintf(`the item's "id" is %s: it must be a string`, cosmos.JSONKind(doc["id"])))
	case id == "":
		return bad(ReasonNoID, `the item's "id" is empty`)
	}
	if missing := missingPaths(doc, def.Paths); len(missing) > 0 {
		msg := "the item has no value at the container's partition key path " + strings.Join(missing, ", ")
		if len(def.Paths) > 1 {
			msg += " (the key is " + strings.Join(def.Paths, ", ") + ")"
		}
		return bad(ReasonNoKey, msg)
	}
	pk, err := engine.PartitionKeyOfDocument(doc, def)
	if err != nil {
		return bad(ReasonBadKey, err.Error())
	}
	return job{n: l.n, body: l.text, id: id, pk: pk, key: itemKey(id, pk.JSON())}, nil
}

func missingPaths(doc map[string]any, paths []string) []string {
	var missing []string
	for _, path := range paths {
		var cur any = doc
		for _, seg := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
			m, ok := cur.(map[string]any)
			if !ok {
				cur = nil
				break
			}
			v, present := m[seg]
			if !present {
				missing = append(missing, path)
				break
			}
			cur = v
		}
	}
	return missing
}

// TrackingID is the _trackingId of a line of a run: the same in every attempt and
// every process, so that a resumed run recognises the items it stored before.
func TrackingID(runID string, line int64) string { return fmt.Sprintf("%s:%d", runID, line) }

// write sends one item, retrying it when it failed for availability. sentBefore says
// that an earlier process of the run may have sent the line.
func write(ctx context.Context, o *Options, t *tracker, j job, sentBefore bool) result {
	r := result{n: j.n, key: j.key, item: j.body}
	var throttles atomic.Int64
	sent, throttled := 0, 0
	// mayBeApplied: an earlier attempt of the line may have been applied, so an upsert's
	// 200 may be the answer to the line's own earlier create.
	mayBeApplied := sentBefore
	for attempt := 0; ; attempt++ {
		if err := o.Limiter.Wait(ctx); err != nil {
			r.out = outCancelled
			break
		}
		op := o.Write
		op.Database, op.Container = o.Target.Database, o.Target.Container
		op.ID, op.PartitionKey, op.Body, op.Document = j.id, j.pk, j.body, j.doc
		op.MinimalResponse = true // an import prints no document
		op.Throttled = func(d time.Duration) {
			throttles.Add(1)
			o.Limiter.Throttled(d)
		}
		switch o.Mode {
		case Upsert:
			op.Kind, op.WriteRetries = engine.OpUpsert, retries.WriteRetries
		default:
			op.Kind, op.WriteRetries = engine.OpCreate, retries.WriteRetriesWithTrackingID
			op.TrackingID = TrackingID(o.runID, j.n)
			op.SentBefore = sentBefore || sent > 0
		}
		sent++
		answeredBefore, throttlesBefore := t.answers(), throttles.Load()
		res, err := o.Client.Execute(ctx, op)
		if o.Written != nil {
			o.Written(j.n, j.id, res, err)
		}
		if res != nil && res.Diagnostics != nil {
			r.ru += res.Diagnostics.RequestCharge
			o.Limiter.Spent(res.Diagnostics.RequestCharge)
		}
		r.out, r.reason, r.status = classify(ctx, o.Mode, res, err)
		r.err = err
		wasThrottled := throttles.Load() > throttlesBefore
		if r.out == outTransient && r.status == 0 && wasThrottled && ctx.Err() == nil {
			// The end-to-end timeout ended the engine's waits after 429s: the container is
			// busy, and answering.
			r.status, r.reason = 429, "429 Too Many Requests (the end-to-end timeout ended the waits)"
		}
		if r.out == outUpdated && (mayBeApplied || appliedBefore(res)) {
			r.out = outUncertain
		}
		if r.out == outTransient && r.status == 429 && throttled < throttledLineRetries && ctx.Err() == nil {
			// Still throttled after the engine's own retries: the container is busy,
			// not down. The line waits for the limiter (paused and slowed by the
			// 429s) and goes again, without using up its retries for availability.
			throttled++
			attempt--
			continue
		}
		if r.out == outTransient {
			mayBeApplied = true
			if ctx.Err() == nil && timedOut(err) {
				// No answer within the write's bound, and no other write answered since it
				// was sent: the write region is hung or gone, and every line waiting on it
				// would wait as long. The import stops now (these lines not done) rather
				// than after every line's every retry.
				if herr := t.writeTimedOut(answeredBefore, err); herr != nil {
					o.halt(herr)
				}
			}
		}
		if r.out != outTransient || attempt >= o.LineRetries || !sleep(ctx, o.Clock, o.RetryWait<<attempt) {
			if r.out == outTransient && ctx.Err() != nil {
				r.out = outCancelled
			}
			break
		}
	}
	r.throttles = throttles.Load()
	return r
}

// timedOut reports a write that got no answer within its bound: the end-to-end timeout,
// or the engine's last attempt timeout.
func timedOut(err error) bool {
	var te *engine.TimeoutError
	return errors.As(err, &te) || errors.Is(err, context.DeadlineExceeded) || engine.IsAttemptTimeout(err)
}

// appliedBefore reports an operation whose attempts other than the winning one may have
// been applied: one that got no answer or was cancelled (it may have been sent), or an
// ambiguous answer (408, 449, 503, a 410 other than a routing one).
func appliedBefore(res *engine.Result) bool {
	if res == nil || res.Diagnostics == nil {
		return false
	}
	atts := res.Diagnostics.Attempts
	for _, a := range atts {
		if a.N == res.Diagnostics.WinningAttempt || a.Reason == engine.ReasonVerify {
			continue
		}
		switch {
		case a.StatusCode == 0, a.StatusCode == 408, a.StatusCode == 449, a.StatusCode == 503,
			a.StatusCode == 410 && !retries.IsRoutingGone(a.StatusCode, a.SubStatus):
			return true
		}
	}
	return false
}

func sleep(ctx context.Context, clk clock.Clock, d time.Duration) bool {
	t := clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}

// unverified reports a 409 whose _trackingId check (a verify attempt) got no answer.
func unverified(res *engine.Result) bool {
	if res == nil || res.Diagnostics == nil {
		return false
	}
	for _, a := range res.Diagnostics.Attempts {
		if a.Reason == engine.ReasonVerify && a.StatusCode == 200 {
			return false
		}
	}
	for _, a := range res.Diagnostics.Attempts {
		if a.Reason == engine.ReasonVerify {
			return true
		}
	}
	return false
}

// classify says what a write's answer means for its line.
func classify(ctx context.Context, mode Mode, res *engine.Result, err error) (outcome, string, int) {
	if err == nil {
		if res.StatusCode == http.StatusOK && mode == Upsert {
			return outUpdated, "", res.StatusCode
		}
		return outCreated, "", res.StatusCode
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return outCancelled, "", 0
	}
	var ie *engine.InputError
	if errors.As(err, &ie) {
		return outBad, ReasonRefused, 0
	}
	var te *engine.TimeoutError
	if errors.As(err, &te) || errors.Is(err, context.DeadlineExceeded) {
		return outTransient, "end-to-end timeout", 0
	}
	if status, sub, ok := cosmos.Status(err); ok {
		reason := fmt.Sprintf("%d %s", status, http.StatusText(status))
		if sub != 0 {
			reason = fmt.Sprintf("%d/%d %s", status, sub, http.StatusText(status))
		}
		switch {
		case status == 409 && mode == Create && unverified(res):
			// The 409 may be this run's own earlier write: the read that checks its
			// _trackingId got no answer, so the line is sent again rather than
			// counted as someone else's item.
			return outTransient, "409 not checked against the stored item", status
		case status == 409 && mode == Create:
			return outPresent, "", status
		case status == 429 || status == 408 || status == 449 || status == 410 || status >= 500 ||
			(status == 403 && sub == cosmos.SubWriteForbidden):
			return outTransient, reason, status
		case status == 401 || status == 403 || status == 404:
			return outFatal, reason, status
		}
		return outFailed, reason, status
	}
	var ne *cosmos.NetworkError
	if errors.As(err, &ne) {
		return outTransient, "no answer", 0
	}
	return outFailed, "other error", 0
}
