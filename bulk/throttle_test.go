package bulk

import (
	"context"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/internal/rulimit"
)

// A 429 with a retry-after pauses every writer for it, on the limiter's clock, and
// leaves the import's own rate lowered.
func TestA429PausesTheImportForItsRetryAfterAndLowersItsRate(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	lim := rulimit.New(0, clk)
	// Two seconds of writes went before (a 429 in the limiter's first second only
	// pauses: too little was measured to lower the rate by).
	for range 20 {
		lim.Spent(5)
		clk.Advance(100 * time.Millisecond)
	}
	c := newFakeContainer()
	c.throttle["i2"] = 500 * time.Millisecond
	o := testOptions(c)
	o.Limiter, o.Clock, o.Concurrency = lim, clk, 1
	type ended struct {
		rep *Report
		err error
	}
	done := make(chan ended, 1)
	go func() {
		rep, err := Import(context.Background(), mustSource(t, ndjson(6)), NewState(Fingerprint{}, Target{}, Create), o)
		done <- ended{rep, err}
	}()
	if !clk.WaitForTimerIn(500*time.Millisecond, 5*time.Second) {
		t.Fatal("the next write did not wait for the retry-after")
	}
	// The one writer is held by the limiter: nothing is in flight.
	c.mu.Lock()
	stored := c.stored
	c.mu.Unlock()
	if stored != 2 {
		t.Fatalf("%d items stored during the pause, want 2", stored)
	}
	clk.Advance(500 * time.Millisecond)
	// The lowered rate paces the rest, on the same clock.
	var e ended
	for wait := true; wait; {
		select {
		case e = <-done:
			wait = false
		case <-time.After(time.Millisecond):
			clk.Advance(50 * time.Millisecond)
		}
	}
	if e.err != nil || e.rep.Created != 6 || e.rep.Throttles != 1 || lim.Throttles() != 1 {
		t.Fatalf("err %v, report %+v, limiter throttles %d", e.err, e.rep, lim.Throttles())
	}
	if lim.Rate() <= 0 {
		t.Fatal("after a 429 the import's rate is limited")
	}
}
