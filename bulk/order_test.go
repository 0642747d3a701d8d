package bulk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
)

// repeatedIDs is n lines over fewer items: item i<k%items> mostly, with runs of one item
// on adjacent lines and one item on every tenth line, so that ids repeat far apart and
// side by side, some more than ten times. Each line carries its number in "n".
func repeatedIDs(n, items int) (string, map[string]int) {
	var b strings.Builder
	last := map[string]int{}
	for k := 1; k <= n; k++ {
		id := fmt.Sprintf("i%d", k%items)
		switch {
		case k%10 == 0:
			id = "hot"
		case k%97 < 4:
			id = fmt.Sprintf("run%d", k/97) // four adjacent lines
		}
		fmt.Fprintf(&b, `{"id":%q,"pk":"p","n":%d}`+"\n", id, k)
		last[id] = k
	}
	return b.String(), last
}

// orderWatch is the account as a sequential import needs it: it fails the test when two
// writes of one item are in flight at once, or when an item is written with a line
// before the one it holds. Each write yields the processor a random number of times
// first, so that writes of a concurrent import arrive in varied orders.
type orderWatch struct {
	*fakeContainer
	t        *testing.T
	mu       sync.Mutex
	inFlight map[string]bool
	held     map[string]int // id -> the line it holds
	// lose makes every lose-th write's answer lost after it was applied.
	lose, writes int
}

func (w *orderWatch) Execute(ctx context.Context, op engine.Operation) (*engine.Result, error) {
	var line struct{ N int }
	if err := json.Unmarshal(op.Body, &line); err != nil {
		w.t.Errorf("body %s: %v", op.Body, err)
	}
	w.mu.Lock()
	if w.inFlight[op.ID] {
		w.t.Errorf("two writes of %s in flight at once (one of line %d)", op.ID, line.N)
	}
	if line.N < w.held[op.ID] {
		w.t.Errorf("%s holds line %d and is written with line %d", op.ID, w.held[op.ID], line.N)
	}
	w.inFlight[op.ID] = true
	w.writes++
	lost := w.lose > 0 && w.writes%w.lose == 0
	w.mu.Unlock()
	for range rand.IntN(50) {
		runtime.Gosched()
	}
	res, err := w.fakeContainer.Execute(ctx, op)
	w.mu.Lock()
	delete(w.inFlight, op.ID)
	if err == nil {
		w.held[op.ID] = line.N
	}
	w.mu.Unlock()
	if err == nil && lost {
		return res, &cosmos.NetworkError{Sent: true, Err: errors.New("connection reset after the write")}
	}
	return res, err
}

func newOrderWatch(t *testing.T) *orderWatch {
	return &orderWatch{fakeContainer: newFakeContainer(), t: t, inFlight: map[string]bool{}, held: map[string]int{}}
}

// checkLastLines fails the test unless every item holds the last line the file has for
// it.
func checkLastLines(t *testing.T, c *fakeContainer, last map[string]int) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.items) != len(last) {
		t.Fatalf("%d items stored, want %d", len(c.items), len(last))
	}
	for id, n := range last {
		if !strings.Contains(c.items[id], fmt.Sprintf(`"n":%d}`, n)) {
			t.Errorf("%s holds %s, want line %d's document", id, c.items[id], n)
		}
	}
}

// checkUpsertCounts fails the test unless the report accounts for every line once and
// no count claims more than is true: the container started empty, so the first line of
// each item created it and every other line updated it; "created or updated" are the
// lines whose answer could not tell.
func checkUpsertCounts(t *testing.T, c Counts, lines, items int64) {
	t.Helper()
	if c.Lines != lines || c.Created+c.Updated+c.CreatedOrUpdated+c.Superseded != lines || c.Failed != 0 || c.BadLines != 0 {
		t.Fatalf("counts %+v: want %d lines, each created, updated, created or updated, or superseded", c, lines)
	}
	if c.Created > items || c.Updated > lines-items {
		t.Fatalf("counts %+v claim more than is true: %d items created, %d lines updated them", c, items, lines-items)
	}
}

// Lines of one item are written one at a time and in the file's order, whatever the
// concurrency, so the item holds the file's last line for it, as a sequential upsert
// would leave it; and the created/updated split is exact when no answer was lost.
func TestLinesOfOneItemAreWrittenInTheFilesOrder(t *testing.T) {
	text, last := repeatedIDs(3000, 400)
	w := newOrderWatch(t)
	o := testOptions(w)
	o.Mode, o.Concurrency = Upsert, 32
	rep, err := Import(context.Background(), mustSource(t, text), NewState(Fingerprint{}, Target{}, Upsert), o)
	if err != nil || !rep.Complete {
		t.Fatalf("err %v, report %+v", err, rep)
	}
	checkLastLines(t, w.fakeContainer, last)
	items := int64(len(last))
	if rep.Created != items || rep.Updated != 3000-items || rep.CreatedOrUpdated != 0 {
		t.Fatalf("counts %+v: want %d created and %d updated, exactly", rep.Counts, items, 3000-items)
	}
}

// Interrupted again and again, with answers lost, an upsert import resumed from its
// state still leaves every item with its last line, and its counts never claim more
// than is true: the lines whose earlier attempt may have written them are counted as
// "created or updated".
func TestAnInterruptedUpsertImportKeepsTheFilesOrderAcrossResumes(t *testing.T) {
	text, last := repeatedIDs(3000, 400)
	w := newOrderWatch(t)
	w.lose = 37
	c := w.fakeContainer
	var saved *State
	st := NewState(Fingerprint{}, Target{}, Upsert)
	var rep *Report
	for run := 1; ; run++ {
		ctx, cancel := context.WithCancel(context.Background())
		c.mu.Lock()
		c.cancel, c.cancelAfter, c.stored = cancel, 150, 0
		c.mu.Unlock()
		o := testOptions(w)
		o.Mode, o.Concurrency = Upsert, 32
		o.Checkpoint = func(s *State) error { saved = s; return nil }
		var err error
		rep, err = Import(ctx, mustSource(t, text), st, o)
		cancel()
		if err == nil {
			break
		}
		if !errors.Is(err, context.Canceled) || run > 10 {
			t.Fatalf("run %d: err %v", run, err)
		}
		if saved.SentThrough < saved.Prefix {
			t.Fatalf("run %d: lines up to %d done but only %d reserved as sent", run, saved.Prefix, saved.SentThrough)
		}
		st = saved
	}
	if rep.Runs < 3 {
		t.Fatalf("%d runs: the test means to interrupt the import twice at least", rep.Runs)
	}
	checkLastLines(t, c, last)
	checkUpsertCounts(t, rep.Counts, 3000, int64(len(last)))
	if rep.CreatedOrUpdated == 0 {
		t.Fatalf("counts %+v: lost answers retried leave lines whose outcome is unknown", rep.Counts)
	}
}

// timeoutWrites times out every write (no answer within its bound) when hung is set;
// otherwise it times out the first write of the slow id only, once another write's answer
// was recorded (answered), as a write region that answers most writes and drops one.
type timeoutWrites struct {
	*fakeContainer
	slow     string
	hung     bool
	slowOnce sync.Once
	// gate is a write held until the slow one has been sent (slowSent closed), so
	// that at least one write is answered while the slow one waits, whatever the
	// schedule: without it the other writes may all be answered before the slow one
	// is sent, and none after.
	gate     string
	slowSent chan struct{}
	// recorded counts the lines the tracker recorded; progressed is told of each.
	recorded   atomic.Int64
	progressed chan struct{}
	// returned counts the other writes' answers handed back to the import.
	returned atomic.Int64
}

// progress is the import's Progress callback.
func (w *timeoutWrites) progress(p Progress) {
	w.recorded.Store(p.Done)
	select {
	case w.progressed <- struct{}{}:
	default:
	}
}

func (w *timeoutWrites) Execute(ctx context.Context, op engine.Operation) (*engine.Result, error) {
	if w.hung {
		return &engine.Result{Diagnostics: &engine.Diagnostics{}}, &engine.TimeoutError{Timeout: 15e9}
	}
	if op.ID == w.gate && w.slowSent != nil {
		<-w.slowSent
	}
	timedOut := false
	if op.ID == w.slow {
		w.slowOnce.Do(func() {
			// The import counted at most `before` answers when this write was sent (it
			// cannot have recorded an answer not yet handed back), and the gated write
			// is not among them: once more lines than that are recorded, a write was
			// answered while this one waited. (Waiting for the recorded count to move
			// is not enough: an answer counted before this write was sent may be
			// reported to Progress after it.)
			before := w.returned.Load()
			if w.slowSent != nil {
				close(w.slowSent)
			}
			for w.recorded.Load() <= before {
				<-w.progressed
			}
			timedOut = true
		})
	}
	if timedOut {
		return &engine.Result{Diagnostics: &engine.Diagnostics{}}, &engine.TimeoutError{Timeout: 15e9}
	}
	defer w.returned.Add(1)
	return w.fakeContainer.Execute(ctx, op)
}

// A write that gets no answer within its bound while no other write is answered shows
// the write region hung: the import stops at once (not after every line's every retry),
// with no line done that was not answered, and resuming imports every line.
func TestAHungWriteRegionStopsTheImportAtTheFirstWriteThatTimesOut(t *testing.T) {
	w := &timeoutWrites{fakeContainer: newFakeContainer(), hung: true}
	o := testOptions(w)
	o.Concurrency = 4
	var saved *State
	o.Checkpoint = func(s *State) error { saved = s; return nil }
	rep, err := Import(context.Background(), mustSource(t, ndjson(20)), NewState(Fingerprint{}, Target{}, Create), o)
	var ue *UnavailableError
	if !errors.As(err, &ue) || !ue.Hung || rep.Complete || rep.Lines != 0 {
		t.Fatalf("err %v, report %+v: want a stop for a hung write region, no line done", err, rep.Counts)
	}
	if saved == nil || saved.Prefix != 0 || len(saved.Above) != 0 {
		t.Fatalf("saved %+v: no line is done", saved)
	}
	w.hung = false
	rep, err = Import(context.Background(), mustSource(t, ndjson(20)), saved, o)
	if err != nil || rep.Created != 20 || !rep.Complete {
		t.Fatalf("resumed: err %v, report %+v", err, rep.Counts)
	}
}

// One write that times out while others are answered is a write to retry, not a hung
// region: it is sent again and the import goes on.
func TestOneWriteTimingOutAmongAnsweredOnesDoesNotStopTheImport(t *testing.T) {
	w := &timeoutWrites{fakeContainer: newFakeContainer(), slow: "i3", gate: "i10", slowSent: make(chan struct{}), progressed: make(chan struct{}, 1)}
	o := testOptions(w)
	o.Concurrency, o.Progress = 4, w.progress
	rep, err := Import(context.Background(), mustSource(t, ndjson(20)), NewState(Fingerprint{}, Target{}, Create), o)
	if err != nil || !rep.Complete || rep.Created != 20 {
		t.Fatalf("err %v, report %+v: want every line created", err, rep.Counts)
	}
	if !w.sentBefore["i3"] {
		t.Fatal("i3 was not sent again as a write that may have been applied")
	}
}

// A small import during an outage (fewer lines than a run of failures that stops an
// import) stops like a large one: exit for unavailability, no line marked done as
// failed, and the resume after recovery writes every line.
func TestASmallImportDuringAnOutageStopsWithNothingDone(t *testing.T) {
	c := newFakeContainer()
	for k := 1; k <= 10; k++ {
		for range 4 {
			c.fail[idOf(k)] = append(c.fail[idOf(k)], &cosmos.Error{StatusCode: 503})
		}
	}
	var rej strings.Builder
	o := testOptions(c)
	o.Concurrency, o.Rejected = 16, &rej
	var saved *State
	o.Checkpoint = func(s *State) error { saved = s; return nil }
	rep, err := Import(context.Background(), mustSource(t, ndjson(10)), NewState(Fingerprint{}, Target{}, Create), o)
	var ue *UnavailableError
	if !errors.As(err, &ue) || !ue.AtEnd || rep.Complete || rep.Lines != 0 || rej.Len() != 0 {
		t.Fatalf("err %v, report %+v, rejected %q: want a stop for unavailability, nothing done", err, rep.Counts, rej.String())
	}
	rep, err = Import(context.Background(), mustSource(t, ndjson(10)), saved, o)
	if err != nil || rep.Created != 10 || !rep.Complete {
		t.Fatalf("resumed: err %v, report %+v", err, rep.Counts)
	}
}

// A failed write held back (it may be the start of an outage) that a later line of the
// same item overwrites before the run stops is superseded: done and not rejected, so
// that a resume does not send it after the later line.
func TestAFailedLineOverwrittenByALaterLineOfItsItemIsSuperseded(t *testing.T) {
	c := newFakeContainer()
	text := `{"id":"a","pk":"p","n":1}` + "\n" + `{"id":"a","pk":"p","n":2}` + "\n"
	for range 4 {
		c.fail["a"] = append(c.fail["a"], &cosmos.Error{StatusCode: 503})
	}
	var rej strings.Builder
	o := testOptions(c)
	o.Mode, o.Rejected = Upsert, &rej
	rep, err := Import(context.Background(), mustSource(t, text), NewState(Fingerprint{}, Target{}, Upsert), o)
	if err != nil || !rep.Complete || rep.Superseded != 1 || rep.Created != 1 || rej.Len() != 0 {
		t.Fatalf("err %v, report %+v, rejected %q", err, rep.Counts, rej.String())
	}
	checkLastLines(t, c, map[string]int{"a": 2})
}

// A resumed run treats as possibly sent before only the lines an earlier process
// reserved in its state before sending them: the lines after that horizon were never
// sent, so their writes need no check of an earlier attempt.
func TestOnlyLinesReservedByAnEarlierProcessAreTreatedAsSentBefore(t *testing.T) {
	const lines = 3000
	c := newFakeContainer()
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel, c.cancelAfter = cancel, 20
	o := testOptions(c)
	var saved *State
	o.Checkpoint = func(s *State) error { saved = s; return nil }
	if _, err := Import(ctx, mustSource(t, ndjson(lines)), NewState(Fingerprint{}, Target{}, Create), o); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v: want the first run interrupted", err)
	}
	cancel()
	horizon, first := saved.SentThrough, saved
	done := newDoneSet(Shard{}, first.Prefix, first.Above)
	if horizon <= first.Prefix || horizon >= lines {
		t.Fatalf("horizon %d with %d lines done: want it ahead of the done lines and short of the end", horizon, first.Prefix)
	}
	c.mu.Lock()
	c.cancelAfter, c.sentBefore = 0, map[string]bool{}
	c.mu.Unlock()
	rep, err := Import(context.Background(), mustSource(t, ndjson(lines)), first, o)
	if err != nil || rep.Created != lines {
		t.Fatalf("resumed: err %v, report %+v", err, rep.Counts)
	}
	for k := 1; k <= lines; k++ {
		if c.sentBefore[idOf(k)] != (k <= int(horizon) && !done.has(int64(k))) {
			t.Fatalf("line %d sent as sent before: %v; the horizon is %d", k, c.sentBefore[idOf(k)], horizon)
		}
	}
}
