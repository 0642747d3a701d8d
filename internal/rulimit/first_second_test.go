package rulimit

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
)

// senders runs n senders against l on the fake clock for d, as an import's writers
// are: each waits for the limiter, sends a request costing charge RU that is answered
// latency later, tells the limiter its charge, and goes again. Time moves a millisecond
// at a time, each step once every sender is blocked on the clock (waiting for the
// limiter or for its answer), so the run is the same whatever the machine's load. It
// returns the RU sent by the end of each 100 ms, counted when a request goes (when the
// service would take its charge).
func senders(t *testing.T, l *Limiter, clk *clock.Fake, n int, charge float64, latency, d time.Duration) []float64 {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	sent := 0.0
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if l.Wait(ctx) != nil {
					return
				}
				mu.Lock()
				sent += charge
				mu.Unlock()
				answer := clk.NewTimer(latency)
				select {
				case <-ctx.Done():
					return
				case <-answer.C():
				}
				l.Spent(charge)
			}
		}()
	}
	var byTenth []float64
	for step := time.Millisecond; step <= d; step += time.Millisecond {
		// Every sender is blocked on a timer: waiting for the limiter, or its answer.
		if !clk.WaitForTimers(n, 10*time.Second) {
			t.Fatalf("at %v: %d of %d senders blocked on the clock", step, clk.Pending(), n)
		}
		clk.Advance(time.Millisecond)
		if step%(100*time.Millisecond) == 0 {
			// The senders woken by this step have taken what they go with once they
			// are blocked again.
			if !clk.WaitForTimers(n, 10*time.Second) {
				t.Fatalf("at %v: senders did not settle", step)
			}
			mu.Lock()
			byTenth = append(byTenth, sent)
			mu.Unlock()
		}
	}
	cancel()
	wg.Wait()
	return byTenth
}

// A capped job's first second spends no more than the cap either: the bucket starts
// with one request's worth, not a whole second's, and senders that go together take
// what requests cost as they go, so that they do not all go on the same balance. The
// issue's case: a 5,000 RU/s cap, 32 writers of 10 RU each, 4 s; it spent 6,046 RU/s.
func TestACappedJobSpendsNoMoreThanTheCapFromItsFirstSecond(t *testing.T) {
	for _, tc := range []struct {
		cap     float64
		senders int
		charge  float64
		latency time.Duration
	}{
		{5000, 32, 10, 2 * time.Millisecond},
		{5000, 16, 6.5, 5 * time.Millisecond},
		{200, 16, 10, 3 * time.Millisecond},
		{1000, 1, 40, 10 * time.Millisecond},
	} {
		t.Run(fmt.Sprintf("%.0f RU/s, %d senders of %.1f RU", tc.cap, tc.senders, tc.charge), func(t *testing.T) {
			clk := clock.NewFake(epoch)
			l := New(tc.cap, clk)
			const run = 4 * time.Second
			sent := senders(t, l, clk, tc.senders, tc.charge, tc.latency, run)
			// What no limiter can avoid: before the first answer nothing is known of a
			// request's charge, and a request goes while 1 RU is there, so a few
			// requests beyond the cap, and never more than every sender's one.
			slack := min(3, float64(tc.senders)) * tc.charge
			for i, s := range sent {
				at := time.Duration(i+1) * 100 * time.Millisecond
				if allowed := tc.cap*at.Seconds() + slack; s > allowed {
					t.Errorf("by %v: %.0f RU sent, more than the cap allows (%.0f RU/s × %v + %.0f)", at, s, tc.cap, at, slack)
				}
			}
			// And the cap is what it gets: the job is not held below it.
			if total, want := sent[len(sent)-1], 0.97*tc.cap*run.Seconds(); total < want {
				t.Errorf("%.0f RU sent in %v, want at least %.0f (97%% of the cap)", total, run, want)
			}
			t.Logf("first second %.0f RU, %v %.0f RU (%.0f RU/s)", sent[9], run, sent[len(sent)-1], sent[len(sent)-1]/run.Seconds())
		})
	}
}
