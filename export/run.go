package export

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
)

// Page is what one Next of a Source returns: items (maybe none, for a request that
// brought none yet) and what the requests behind them cost.
type Page struct {
	Items         []json.RawMessage
	RequestCharge float64
	Requests      int
	// Throttled counts the attempts the service answered 429 (the engine waited their
	// retry-after before it tried again).
	Throttled int
}

// Source is where an export's items come from.
type Source interface {
	// Next returns the next page; io.EOF once every item was returned. After an error
	// other than the context's the source ends; Position still resumes after the items
	// returned. A page's items may live only until the next call of Next: the export
	// writes them out before it asks for more.
	Next(ctx context.Context) (Page, error)
	// Position resumes after every item Next returned so far, as opaque JSON (null: from
	// the start); an *UnresumableError when the source cannot say.
	Position() (json.RawMessage, error)
	Close()
}

// UnresumableError is a source that cannot give a position to resume from (a query whose
// merge state is too large to carry): the export goes on without checkpoints.
type UnresumableError struct{ Why string }

func (e *UnresumableError) Error() string { return "the export cannot be resumed: " + e.Why }

// Limiter paces the requests of an export (rulimit.Limiter): Wait before each page,
// Spent and Throttled after it.
type Limiter interface {
	Wait(ctx context.Context) error
	Spent(ru float64)
	Throttled(retryAfter time.Duration)
}

// Counts are an export's totals so far, resumed runs' included.
type Counts struct {
	Items         int64
	Bytes         int64
	RequestCharge float64
	Requests      int64
	Throttled     int64
}

// Options describe one run of an export.
type Options struct {
	Source Source
	// Out receives the lines, a page at a time. With a State it is the output file,
	// already cut to State.OutputBytes and positioned at its end.
	Out io.Writer
	// Sync makes what was written to Out durable before a checkpoint records it (the
	// output file's Sync); nil when there is nothing to sync.
	Sync func() error
	// State is the checkpoint this run updates at StatePath (nil: none). A resumed run
	// passes the state it loaded; its counts go on from there.
	State     *State
	StatePath string
	// CheckpointEvery is the least time between checkpoints (0: after every page); the
	// run also checkpoints when it ends, however it ends.
	CheckpointEvery time.Duration
	// Strip are the top-level properties dropped from every item.
	Strip []string
	// Filter, when set, rewrites a page's lines (one compact item a line, stripped)
	// before they are written (--jq): what it returns is what the output gets, and
	// what a checkpoint counts. It must give the same lines for the same input, so
	// that a resumed export writes what an uninterrupted one would.
	Filter func(lines []byte) ([]byte, error)
	// Limiter paces the pages (nil: as fast as they come).
	Limiter Limiter
	// Progress is called after every page with the totals so far.
	Progress func(Counts)
	Clock    clock.Clock
}

// Result is how a run ended.
type Result struct {
	Counts
	// Complete says every item was written.
	Complete bool
	// Checkpoint is the state as last saved (nil: none was).
	Checkpoint *State
	// Unresumable says why no checkpoint could be written ("" when they could).
	Unresumable string
	// PeakPageItems is the most items the run held at once: one page.
	PeakPageItems int
}

// Run copies the source's items to Out until the source ends, fails, or ctx ends. It
// returns the source's or the context's error (the state then resumes after every line
// written), or an error writing the output or the state.
func Run(ctx context.Context, o Options) (Result, error) {
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	r := &run{o: o, drop: map[string]bool{}}
	for _, p := range o.Strip {
		r.drop[p] = true
	}
	if s := o.State; s != nil {
		r.res.Items, r.res.Bytes, r.res.RequestCharge = s.Items, s.OutputBytes, s.RequestCharge
	}
	err := r.copy(ctx)
	var we *writeError
	if o.State != nil && !errors.As(err, &we) {
		// However the source ended, every item it returned is written: the position
		// resumes after the last line. (After a failed write the file may hold part of
		// a page; the last checkpoint is where to resume from.)
		if cerr := r.checkpoint(); cerr != nil && err == nil {
			err = cerr
		}
	}
	if we != nil {
		err = we.err
	}
	return r.res, err
}

type run struct {
	o      Options
	drop   map[string]bool
	res    Result
	buf    bytes.Buffer
	lastCP time.Time
}

type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }

func (r *run) copy(ctx context.Context) error {
	r.lastCP = r.o.Clock.Now()
	for {
		if r.o.Limiter != nil {
			if err := r.o.Limiter.Wait(ctx); err != nil {
				return err
			}
		}
		page, err := r.o.Source.Next(ctx)
		r.account(page)
		if werr := r.write(page.Items); werr != nil {
			return &writeError{werr}
		}
		if r.o.Progress != nil {
			r.o.Progress(r.res.Counts)
		}
		switch {
		case errors.Is(err, io.EOF):
			r.res.Complete = true
			return nil
		case err != nil:
			return err
		}
		if r.o.State != nil && len(page.Items) > 0 && r.o.Clock.Now().Sub(r.lastCP) >= r.o.CheckpointEvery {
			if err := r.checkpoint(); err != nil {
				return &writeError{err}
			}
		}
	}
}

func (r *run) account(p Page) {
	r.res.RequestCharge += p.RequestCharge
	r.res.Requests += int64(p.Requests)
	r.res.Throttled += int64(p.Throttled)
	if l := r.o.Limiter; l != nil {
		if p.RequestCharge > 0 {
			l.Spent(p.RequestCharge)
		}
		for range p.Throttled {
			// The engine waited out the retry-after already; what is left for the
			// limiter is to lower the rate.
			l.Throttled(0)
		}
	}
}

// write writes one page's lines in one write: a reader of a pipe gets whole lines.
func (r *run) write(items []json.RawMessage) error {
	if len(items) == 0 {
		return nil
	}
	r.res.PeakPageItems = max(r.res.PeakPageItems, len(items))
	r.buf.Reset()
	for _, it := range items {
		if err := appendLine(&r.buf, it, r.drop); err != nil {
			return err
		}
	}
	lines := r.buf.Bytes()
	if r.o.Filter != nil {
		var err error
		if lines, err = r.o.Filter(lines); err != nil {
			return err
		}
	}
	n, err := r.o.Out.Write(lines)
	r.res.Bytes += int64(n)
	if err != nil {
		return err
	}
	r.res.Items += int64(len(items))
	return nil
}

// checkpoint saves the source's position with the output's length: first what was
// written is made durable, then the state is replaced, so that the state never counts
// bytes the file may not have.
func (r *run) checkpoint() error {
	if r.res.Unresumable != "" {
		return nil
	}
	pos, err := r.o.Source.Position()
	var ue *UnresumableError
	if errors.As(err, &ue) {
		r.res.Unresumable = ue.Why
		return nil
	}
	if err != nil {
		return err
	}
	if r.o.Sync != nil {
		if err := r.o.Sync(); err != nil {
			return err
		}
	}
	s := r.o.State
	s.Position, s.OutputBytes, s.Items, s.RequestCharge, s.Complete = pos, r.res.Bytes, r.res.Items, r.res.RequestCharge, r.res.Complete
	if err := s.Save(r.o.StatePath, r.o.Clock.Now()); err != nil {
		return err
	}
	r.lastCP = r.o.Clock.Now()
	saved := *s
	r.res.Checkpoint = &saved
	return nil
}
