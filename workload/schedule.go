package workload

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
)

// Schedule runs a function repeatedly: in an open loop at Rate calls per second (Rate > 0)
// or in a closed loop (Rate == 0), with Concurrency workers, until Count calls were made
// (Count > 0) or Duration passed (Duration > 0), whichever comes first, or the context ends.
//
// Open loop, as wrk2 and vegeta: the i-th call's intended send time is start + i/Rate. A
// worker takes the next intended time, waits for it on the Clock (a call is never sent
// early) and calls fn with it. When every worker is busy the calls queue up and start
// late, and because the caller measures latency as completion − intended time, a stall
// of the service shows in the percentiles of every call it delayed (no coordinated
// omission). With a Duration, the calls intended before its end are all made, even if
// a backlog makes them start after it.
//
// Closed loop: each worker calls fn again as soon as the previous call returns, and
// intended is the actual start time: this measures the service, not a user's wait.
type Schedule struct {
	Rate        float64 // calls per second; 0 for a closed loop
	Concurrency int     // workers; at least 1
	Count       int     // stop after this many calls; 0 for no limit
	Duration    time.Duration
	// Start is the time the schedule counts from, the first call's intended time in an
	// open loop; zero means when Run starts.
	Start time.Time
	// Clock defaults to the wall clock.
	Clock clock.Clock
}

// intended is the intended send time of the i-th call of an open loop started at start.
func (s Schedule) intended(start time.Time, i int) time.Time {
	return start.Add(time.Duration(math.Round(float64(i) / s.Rate * float64(time.Second))))
}

// Due is how many calls of an open loop started at start were due at or before now:
// intended at or before it, within Count and before the end of Duration. A caller that
// counts the calls it made sees how far behind the schedule it fell: the calls due but
// not yet made, for want of a free worker. It is 0 for a closed loop, which has no due
// times.
func (s Schedule) Due(start, now time.Time) int {
	if s.Rate <= 0 || math.IsNaN(s.Rate) || math.IsInf(s.Rate, 0) || now.Before(start) {
		return 0
	}
	n := int(math.Floor(now.Sub(start).Seconds()*s.Rate)) + 1
	for n > 0 && s.intended(start, n-1).After(now) {
		n--
	}
	for !s.intended(start, n).After(now) {
		n++
	}
	if s.Count > 0 {
		n = min(n, s.Count)
	}
	if s.Duration > 0 {
		end := start.Add(s.Duration)
		for n > 0 && !s.intended(start, n-1).Before(end) {
			n--
		}
	}
	return n
}

// Validate checks the schedule without running it.
func (s Schedule) Validate() error {
	switch {
	case math.IsNaN(s.Rate) || math.IsInf(s.Rate, 0):
		return fmt.Errorf("rate must be a number of calls per second, not %v", s.Rate)
	case s.Rate < 0:
		return fmt.Errorf("rate must not be negative (got %v); 0 means a closed loop: the next call as soon as the previous one returns", s.Rate)
	case s.Concurrency < 1:
		return fmt.Errorf("concurrency must be at least 1 (got %d)", s.Concurrency)
	case s.Count < 0:
		return fmt.Errorf("count must not be negative (got %d)", s.Count)
	case s.Duration < 0:
		return fmt.Errorf("duration must not be negative (got %s)", s.Duration)
	case s.Count == 0 && s.Duration == 0:
		return errors.New("give a count or a duration: without either the schedule never ends")
	}
	return nil
}

// Run calls fn on the schedule and returns when every call has returned. fn gets the
// context (cancelled when ctx is) and the call's intended send time; it must be safe to
// call from Concurrency goroutines at once. Run returns ctx's error if ctx ended before
// the schedule did, and no call starts after that.
func (s Schedule) Run(ctx context.Context, fn func(ctx context.Context, intended time.Time)) error {
	if err := s.Validate(); err != nil {
		return err
	}
	clk := s.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	start := s.Start
	if start.IsZero() {
		start = clk.Now()
	}
	end := start.Add(s.Duration)

	var mu sync.Mutex
	next := 0
	// claim hands out the calls in order, so that intended times are never reordered
	// between workers.
	claim := func() (time.Time, bool) {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() != nil || (s.Count > 0 && next >= s.Count) {
			return time.Time{}, false
		}
		var intended time.Time
		if s.Rate > 0 {
			intended = s.intended(start, next)
		} else {
			intended = clk.Now()
		}
		if s.Duration > 0 && !intended.Before(end) {
			return time.Time{}, false
		}
		next++
		return intended, true
	}

	var wg sync.WaitGroup
	for range s.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				intended, ok := claim()
				if !ok || !waitUntil(ctx, clk, intended) {
					return
				}
				fn(ctx, intended)
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// waitUntil waits on the clock until t, and reports false if ctx ended first.
func waitUntil(ctx context.Context, clk clock.Clock, t time.Time) bool {
	d := t.Sub(clk.Now())
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := clk.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C():
		return true
	case <-ctx.Done():
		return false
	}
}
