package bulk

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"sync"
	"sync/atomic"
	"time"
)

// tracker keeps what the run has done: the done lines, the counts, the rejected-lines
// file, and the failed writes not yet settled. Writers finish lines in any order.
type tracker struct {
	o     *Options
	start time.Time

	mu      sync.Mutex
	st      *State
	done    *doneSet
	this    Counts
	skipped int64
	// shardLines are the lines of the input read so far that are this shard's (all of
	// them without a shard), otherShards those passed over, another shard's.
	shardLines, otherShards int64
	elapsed                 time.Duration // of earlier processes
	rej                     io.Writer
	rejBytes                int64
	rejErr                  error
	// pending are failed writes (for availability) held back while they may be the
	// start of a run of failures that stops the import: settled (done, rejected) when a
	// write succeeds after them or the input ends, dropped (not done) when the run
	// stops, so that resuming sends them again.
	pending []result
	tripped bool
	// answered counts the writes the service answered (not for availability); a write
	// that timed out with none answered while it waited shows a hung write region.
	answered atomic.Int64
	// horizon: every line up to it may have been sent, and the state says so
	// (State.SentThrough) before any line after it is sent.
	horizon int64

	// refused stops the feeding of lines (not the writes in flight) once a write was
	// refused for good; called with mu held.
	refused func(error)

	ckMu sync.Mutex // one checkpoint at a time
}

// skip counts a line done by an earlier process.
func (t *tracker) skip() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.skipped++
	t.progress()
}

// shardLine counts a line read that is this shard's.
func (t *tracker) shardLine() {
	t.mu.Lock()
	t.shardLines++
	t.mu.Unlock()
}

// otherShard counts a line passed over, another shard's: neither done nor skipped.
func (t *tracker) otherShard() {
	t.mu.Lock()
	t.otherShards++
	t.mu.Unlock()
}

// finish records what came of a line, and returns an error when the import must stop
// because of it.
func (t *tracker) finish(r result) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.st.Counts.RequestCharge += r.ru
	t.this.RequestCharge += r.ru
	t.st.Counts.Throttles += r.throttles
	t.this.Throttles += r.throttles
	defer t.progress()
	switch r.out {
	case outCancelled:
		return nil
	case outFatal:
		t.tripped = true
		err := &RefusedError{Line: r.n, Err: r.err}
		if t.refused != nil {
			// No line is handed to a writer after this one is recorded.
			t.refused(err)
		}
		return err
	case outTransient:
		if t.o.FailFast {
			t.commit(r)
			return t.failFast(r)
		}
		if t.tripped {
			return nil
		}
		t.pending = append(t.pending, r)
		if len(t.pending) >= t.o.StopAfter {
			t.tripped = true
			return &UnavailableError{Failures: len(t.pending), Err: r.err}
		}
		return nil
	case outCreated, outPresent, outUpdated, outUncertain, outFailed:
		// The service answered: the failures before this were not a run of them.
		t.answered.Add(1)
		t.supersede(r)
		if !t.tripped {
			for _, p := range t.pending {
				t.commit(p)
			}
			t.pending = t.pending[:0]
		}
	}
	t.commit(r)
	if t.rejErr != nil {
		return t.rejErr
	}
	if t.o.FailFast && (r.out == outFailed || r.out == outBad) {
		return t.failFast(r)
	}
	return nil
}

// supersede settles the failed writes held back of the item r wrote, a later line of it:
// the item holds r's document, as a sequential import would leave it, so they are done
// (superseded) rather than left to be sent again after r by a resumed run.
func (t *tracker) supersede(r result) {
	if r.out == outFailed {
		return
	}
	kept := t.pending[:0]
	for _, p := range t.pending {
		if p.key == r.key && p.n < r.n {
			p.out = outSuperseded
			t.commit(p)
			continue
		}
		kept = append(kept, p)
	}
	t.pending = kept
}

// answers is how many writes the service has answered so far.
func (t *tracker) answers() int64 { return t.answered.Load() }

// writeTimedOut is told of a write that got no answer within its bound, sent when the
// service had answered answeredBefore writes: when none answered since, the write
// region is taken as hung and the import stops (an *UnavailableError), once.
func (t *tracker) writeTimedOut(answeredBefore int64, err error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tripped || t.answered.Load() != answeredBefore || t.o.FailFast {
		return nil
	}
	t.tripped = true
	return &UnavailableError{Failures: len(t.pending) + 1, Err: err, Hung: true}
}

// reserve is called before line n is sent: when n is past the horizon, the horizon
// moves on (by a batch of lines) and the state is saved with it first, so that a
// resumed run knows which lines this process may have sent.
func (t *tracker) reserve(n int64) error {
	if t.o.Checkpoint == nil {
		return nil
	}
	t.mu.Lock()
	if n <= t.horizon {
		t.mu.Unlock()
		return nil
	}
	t.horizon = n + int64(max(horizonBatch, 8*t.o.Concurrency))
	t.mu.Unlock()
	return t.checkpoint(false)
}

// horizonBatch is how many lines ahead a checkpoint reserves at least.
const horizonBatch = 1024

func (t *tracker) failFast(r result) error {
	e := &FailFastError{Line: r.n, Reason: r.reason, msg: r.err.Error()}
	if r.out != outBad {
		e.Err = r.err
	}
	return e
}

// commit marks a line done and counts it; a rejected one goes to the rejected file.
func (t *tracker) commit(r result) {
	t.done.add(r.n)
	for _, c := range []*Counts{&t.st.Counts, &t.this} {
		c.Lines++
		switch r.out {
		case outCreated:
			c.Created++
		case outPresent:
			c.AlreadyPresent++
		case outUpdated:
			c.Updated++
		case outUncertain:
			c.CreatedOrUpdated++
		case outSuperseded:
			c.Superseded++
		case outBlank:
			c.Blank++
		case outBad:
			c.BadLines++
		case outFailed, outTransient:
			c.Failed++
		}
		if r.out == outBad || r.out == outFailed || r.out == outTransient {
			if c.Reasons == nil {
				c.Reasons = map[string]int64{}
			}
			c.Reasons[r.reason]++
		}
	}
	if r.out == outBad || r.out == outFailed || r.out == outTransient {
		t.reject(r)
	}
}

func (t *tracker) reject(r result) {
	if t.rej == nil || t.rejErr != nil {
		return
	}
	rej := Rejection{Line: r.n, Reason: r.reason, Status: r.status, Bytes: r.bytes}
	if r.err != nil {
		rej.Error = r.err.Error()
	}
	if r.item != nil {
		rej.Item = json.RawMessage(r.item)
	} else if r.text != nil {
		rej.Text = string(r.text)
	}
	b, err := json.Marshal(rej)
	if err == nil {
		var n int
		n, err = t.rej.Write(append(b, '\n'))
		t.rejBytes += int64(n)
	}
	if err != nil {
		t.rejErr = fmt.Errorf("writing the rejected-lines file: %w", err)
	}
}

// end settles the failed writes still pending when the run stopped early: not at all
// (not done, so that resuming sends them again). When the input was read to its end, a
// run of failed writes that no answered write followed is an outage at the end of the
// input, whatever its length: an *UnavailableError, the lines not done.
func (t *tracker) end(complete bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	defer func() { t.pending = nil }()
	if !complete || t.tripped || len(t.pending) == 0 {
		return nil
	}
	t.tripped = true
	last := t.pending[len(t.pending)-1]
	return &UnavailableError{Failures: len(t.pending), Err: last.err, AtEnd: true}
}

func (t *tracker) progress() {
	if t.o.Progress == nil {
		return
	}
	t.o.Progress(Progress{Done: t.this.Lines, Skipped: t.skipped, Rejected: t.this.Rejected(), RequestCharge: t.this.RequestCharge})
}

// snapshot is a copy of the state as of now; t.mu is held.
func (t *tracker) snapshot(complete bool) *State {
	s := *t.st
	s.Prefix, s.Above = t.done.prefix, t.done.sortedAbove()
	s.SentThrough = t.horizon
	s.Counts.Reasons = maps.Clone(t.st.Counts.Reasons)
	s.RejectedBytes = t.rejBytes
	s.Elapsed = t.elapsed + t.o.Clock.Now().Sub(t.start)
	s.Complete = complete
	return &s
}

// checkpoint saves the state, after the rejections it counts are on disk.
func (t *tracker) checkpoint(complete bool) error {
	if t.o.Checkpoint == nil {
		return nil
	}
	t.ckMu.Lock()
	defer t.ckMu.Unlock()
	t.mu.Lock()
	var err error
	if f, ok := t.rej.(interface{ Flush() error }); ok {
		err = f.Flush()
	}
	s := t.snapshot(complete)
	t.mu.Unlock()
	if f, ok := t.rej.(interface{ Sync() error }); ok && err == nil {
		err = f.Sync()
	}
	if err != nil {
		return fmt.Errorf("writing the rejected-lines file: %w", err)
	}
	return t.o.Checkpoint(s)
}

// report is the run's report as of now.
func (t *tracker) report(complete bool) *Report {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.snapshot(complete)
	this := t.this
	this.Reasons = maps.Clone(t.this.Reasons)
	return &Report{Counts: s.Counts, Skipped: t.skipped, ShardLines: t.shardLines, OtherShards: t.otherShards, ThisRun: this, Duration: t.o.Clock.Now().Sub(t.start),
		Elapsed: s.Elapsed, Runs: s.Runs, Complete: complete, Shard: t.st.shard(), RunID: s.RunID}
}
