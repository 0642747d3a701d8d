package bulk

import (
	"context"
	"sync"
	"testing"

	"github.com/cosmosctl/cosmosctl/cosmos"
	"github.com/cosmosctl/cosmosctl/engine"
)

// heldWrites answers the refused line only once the other writers' writes are in
// flight, and holds those until the refusal has been answered: so they are in flight
// when the import decides to stop, whatever the scheduling. A write sent after those
// waits until the import has recorded the refusal (recorded), so that how many more go
// out does not depend on which goroutine the scheduler runs first.
type heldWrites struct {
	*fakeContainer
	refused  string
	inFlight chan struct{} // one token a write that reached the account
	others   int           // how many the refusal waits for
	once     sync.Once
	release  chan struct{}
	recorded chan struct{}
}

func (h *heldWrites) Execute(ctx context.Context, op engine.Operation) (*engine.Result, error) {
	if op.ID == h.refused {
		for range h.others {
			<-h.inFlight
		}
		defer h.once.Do(func() { close(h.release) })
		return h.fakeContainer.Execute(ctx, op)
	}
	select {
	case <-h.release: // sent after the refusal was answered: nothing waits for it
		<-h.recorded
	default: // one of the writers' first writes (the others are all writers')
		h.inFlight <- struct{}{}
		<-h.release
	}
	return h.fakeContainer.Execute(ctx, op)
}

// A write the account refuses for good stops the import, but the writes already in
// flight get their answers: one the service applied is counted as created (and its line
// done), never cut off with its answer lost while the item is stored.
func TestARefusalLetsTheWritesInFlightFinishAndCountsThem(t *testing.T) {
	c := newFakeContainer()
	c.fail["i1"] = []error{&cosmos.Error{StatusCode: 403, SubStatus: 5301}}
	o := testOptions(nil)
	o.Concurrency = 4
	h := &heldWrites{fakeContainer: c, refused: "i1", inFlight: make(chan struct{}, o.Concurrency-1), others: o.Concurrency - 1,
		release: make(chan struct{}), recorded: make(chan struct{})}
	o.Client = h
	// The tracker reports progress after every line it settles; a report with no more
	// lines done than the one before is the refusal's (it marks nothing done).
	var lastDone int64
	var recordOnce sync.Once
	o.Progress = func(p Progress) {
		if p.Done == lastDone {
			recordOnce.Do(func() { close(h.recorded) })
		}
		lastDone = p.Done
	}
	rep, err := Import(context.Background(), mustSource(t, ndjson(50)), NewState(Fingerprint{}, Target{}, Create), o)
	var refused *RefusedError
	if !asRefused(err, &refused) || refused.Line != 1 || rep.Complete {
		t.Fatalf("err %v, complete %v: want the refusal of line 1", err, rep.Complete)
	}
	c.mu.Lock()
	stored := len(c.items)
	c.mu.Unlock()
	// The writes in flight with the refused one are all applied. (A writer that finished
	// one may have taken the next line before the refusal was recorded: that one is sent
	// too, and counted like the rest.)
	if stored < o.Concurrency-1 || stored > 2*o.Concurrency {
		t.Fatalf("%d items stored: want the %d writes in flight with the refused one, and few after it", stored, o.Concurrency-1)
	}
	if rep.Created != int64(stored) || rep.Lines != int64(stored) {
		t.Fatalf("created %d, lines done %d, items stored %d: every write the service applied is counted done", rep.Created, rep.Lines, stored)
	}
}

func asRefused(err error, target **RefusedError) bool {
	r, ok := err.(*RefusedError)
	*target = r
	return ok
}
