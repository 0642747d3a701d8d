package workload

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func TestScheduleValidate(t *testing.T) {
	cases := []struct {
		name string
		s    Schedule
		want string // "" for valid
	}{
		{"a count in a closed loop", Schedule{Concurrency: 1, Count: 10}, ""},
		{"a duration in an open loop", Schedule{Rate: 20, Concurrency: 4, Duration: time.Second}, ""},
		{"both a count and a duration", Schedule{Rate: 0.5, Concurrency: 1, Count: 3, Duration: time.Minute}, ""},
		{"a negative rate", Schedule{Rate: -1, Concurrency: 1, Count: 1}, "rate must not be negative"},
		{"a rate that is not a number", Schedule{Rate: math.NaN(), Concurrency: 1, Count: 1}, "rate must be a number"},
		{"an infinite rate", Schedule{Rate: math.Inf(1), Concurrency: 1, Count: 1}, "rate must be a number"},
		{"no workers", Schedule{Concurrency: 0, Count: 1}, "concurrency must be at least 1"},
		{"a negative count", Schedule{Concurrency: 1, Count: -3}, "count must not be negative"},
		{"a negative duration", Schedule{Concurrency: 1, Duration: -time.Second}, "duration must not be negative"},
		{"neither a count nor a duration", Schedule{Concurrency: 1, Rate: 5}, "give a count or a duration"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.s.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("valid schedule rejected: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Fatalf("error is not one line: %q", err)
			}
			if tc.want != "" {
				if rerr := tc.s.Run(context.Background(), func(context.Context, time.Time) { t.Error("an invalid schedule made a call") }); rerr == nil {
					t.Fatal("Run accepted an invalid schedule")
				}
			}
		})
	}
}

// simClock is a discrete-event clock for one worker: waiting on a timer jumps time to
// its deadline at once, and the function under test moves time by its own service
// time. With a single worker this is an exact, instant simulation of a real run.
type simClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *simClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *simClock) NewTimer(d time.Duration) clock.Timer {
	c.Advance(d)
	ch := make(chan time.Time, 1)
	ch <- c.Now()
	return firedTimer(ch)
}

func (c *simClock) AfterFunc(time.Duration, func()) clock.Timer {
	panic("Schedule does not use AfterFunc")
}

type firedTimer chan time.Time

func (t firedTimer) C() <-chan time.Time { return t }
func (t firedTimer) Stop() bool          { return false }

// simulate runs 1000 calls (or the schedule's own limits) on one worker; every call takes
// 1ms except the one with index stallAt, which takes stall. It returns each call's
// latency from its intended send time, in call order.
func simulate(t *testing.T, s Schedule, stallAt int, stall time.Duration) []time.Duration {
	t.Helper()
	clk := &simClock{now: t0}
	s.Clock, s.Concurrency = clk, 1
	var lat []time.Duration
	err := s.Run(context.Background(), func(_ context.Context, intended time.Time) {
		if s.Rate == 0 && !intended.Equal(clk.Now()) {
			t.Errorf("closed loop: intended %s is not the start time %s", intended.Sub(t0), clk.Now().Sub(t0))
		}
		if clk.Now().Before(intended) {
			t.Errorf("call %d sent %s early", len(lat), intended.Sub(clk.Now()))
		}
		if len(lat) == stallAt {
			clk.Advance(stall)
		} else {
			clk.Advance(time.Millisecond)
		}
		lat = append(lat, clk.Now().Sub(intended))
	})
	if err != nil {
		t.Fatal(err)
	}
	return lat
}

func countAbove(lat []time.Duration, d time.Duration) int {
	n := 0
	for _, l := range lat {
		if l > d {
			n++
		}
	}
	return n
}

func statsOf(lat []time.Duration) *Stats {
	s := NewStats()
	for _, l := range lat {
		s.Record(l, 200, 0, 1, false)
	}
	return s
}

func TestOpenLoopChargesAStallToEveryCallItDelayed(t *testing.T) {
	// 100 calls per second, one worker, 1ms per call; call 100 (intended at t=1s) stalls
	// for one second. The ~100 calls intended during the stall queue behind it.
	lat := simulate(t, Schedule{Rate: 100, Count: 1000}, 100, time.Second)
	if len(lat) != 1000 {
		t.Fatalf("%d calls, want 1000", len(lat))
	}
	if lat[100] != time.Second {
		t.Fatalf("the stalled call took %s, want 1s", lat[100])
	}
	// Call 100+j starts when call 100+j-1 ends, at 2s+(j-1)ms, and was intended at
	// 1s+10j ms: it waited 1000-9j ms in all. The backlog drains 9ms per call.
	for j := 1; j <= 110; j++ {
		if want := time.Duration(1000-9*j) * time.Millisecond; lat[100+j] != want {
			t.Fatalf("call %d: latency %s, want %s (queued behind the stall)", 100+j, lat[100+j], want)
		}
	}
	if n := countAbove(lat, 10*time.Millisecond); n != 110 {
		t.Fatalf("%d calls slower than 10ms, want the stalled one and the 109 queued longest behind it", n)
	}
	st := statsOf(lat)
	if p50 := st.Quantile(0.5); p50 != time.Millisecond {
		t.Fatalf("p50 %s: the calls away from the stall take 1ms", p50)
	}
	if p99 := st.Quantile(0.99); p99 < 850*time.Millisecond {
		t.Fatalf("p99 %s does not show the one-second stall", p99)
	}
}

func TestClosedLoopRecordsAStallAsOneSlowCall(t *testing.T) {
	// The same stall in a closed loop: the caller simply waits, nothing queues, and only
	// the stalled call is slow. This is the coordinated omission the open loop avoids.
	lat := simulate(t, Schedule{Count: 1000}, 100, time.Second)
	if n := countAbove(lat, 10*time.Millisecond); n != 1 {
		t.Fatalf("%d slow calls, want 1", n)
	}
	st := statsOf(lat)
	if p99 := st.Quantile(0.99); p99 != time.Millisecond {
		t.Fatalf("closed-loop p99 %s, want 1ms", p99)
	}
	if max := st.Quantile(1); max != time.Second {
		t.Fatalf("max %s, want the 1s stall", max)
	}
}

func TestScheduleStopsAtTheCountOrTheDuration(t *testing.T) {
	cases := []struct {
		name      string
		s         Schedule
		wantCalls int
	}{
		{"an open loop's duration allows rate × duration calls", Schedule{Rate: 100, Duration: time.Second}, 100},
		{"a fractional rate", Schedule{Rate: 0.5, Duration: 10 * time.Second}, 5},
		{"a count reached before the duration ends the run", Schedule{Rate: 100, Count: 7, Duration: time.Minute}, 7},
		{"a duration reached before the count ends the run", Schedule{Rate: 100, Count: 1000, Duration: 250 * time.Millisecond}, 25},
		{"a closed loop runs until the duration passes", Schedule{Duration: 100 * time.Millisecond}, 100},
		{"a closed loop with a count", Schedule{Count: 3}, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := len(simulate(t, tc.s, -1, 0)); got != tc.wantCalls {
				t.Fatalf("%d calls, want %d", got, tc.wantCalls)
			}
		})
	}
}

// recv waits (in real time, as a guard) for the next call.
func recv(t *testing.T, calls <-chan time.Time) time.Time {
	t.Helper()
	select {
	case c := <-calls:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("no call")
		return time.Time{}
	}
}

func noCall(t *testing.T, calls <-chan time.Time) {
	t.Helper()
	select {
	case c := <-calls:
		t.Fatalf("unexpected call intended at +%s", c.Sub(t0))
	default:
	}
}

func TestOpenLoopNeverSendsEarly(t *testing.T) {
	clk := clock.NewFake(t0)
	calls := make(chan time.Time, 10)
	done := make(chan error, 1)
	go func() {
		done <- Schedule{Rate: 10, Concurrency: 1, Count: 3, Clock: clk}.Run(context.Background(), func(_ context.Context, intended time.Time) {
			if now := clk.Now(); now.Before(intended) {
				t.Errorf("sent at +%s, intended +%s", now.Sub(t0), intended.Sub(t0))
			}
			calls <- intended
		})
	}()
	if got := recv(t, calls); !got.Equal(t0) {
		t.Fatalf("first call intended at +%s, want at the start", got.Sub(t0))
	}
	for i := 1; i <= 2; i++ {
		if !clk.WaitForTimers(1, 5*time.Second) {
			t.Fatal("the worker did not wait for the next intended time")
		}
		clk.Advance(99 * time.Millisecond)
		noCall(t, calls)
		clk.Advance(time.Millisecond)
		if got, want := recv(t, calls), t0.Add(time.Duration(i)*100*time.Millisecond); !got.Equal(want) {
			t.Fatalf("call %d intended at +%s, want +%s", i, got.Sub(t0), want.Sub(t0))
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestOpenLoopQueuesCallsWhenEveryWorkerIsBusy(t *testing.T) {
	clk := clock.NewFake(t0)
	calls := make(chan time.Time, 10)
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Schedule{Rate: 100, Concurrency: 2, Count: 4, Clock: clk}.Run(context.Background(), func(_ context.Context, intended time.Time) {
			calls <- intended
			if intended.Before(t0.Add(20 * time.Millisecond)) {
				<-release
			}
		})
	}()
	recv(t, calls) // +0ms starts at once
	if !clk.WaitForTimers(1, 5*time.Second) {
		t.Fatal("the second worker did not wait for +10ms")
	}
	clk.Advance(10 * time.Millisecond)
	recv(t, calls) // +10ms; now both workers are busy
	clk.Advance(40 * time.Millisecond)
	noCall(t, calls)
	if n := clk.Pending(); n != 0 {
		t.Fatalf("%d timers armed while every worker is busy", n)
	}
	close(release)
	// The calls intended at +20ms and +30ms start late, at +50ms, and say when they
	// were meant to start, so that the caller charges the wait to them.
	got := map[time.Duration]bool{recv(t, calls).Sub(t0): true, recv(t, calls).Sub(t0): true}
	if !got[20*time.Millisecond] || !got[30*time.Millisecond] {
		t.Fatalf("late calls intended at %v, want +20ms and +30ms", got)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestClosedLoopKeepsConcurrencyCallsInFlight(t *testing.T) {
	var active, peak atomic.Int32
	allIn := make(chan struct{})
	var once sync.Once
	var calls atomic.Int32
	err := Schedule{Concurrency: 3, Count: 30}.Run(context.Background(), func(context.Context, time.Time) {
		calls.Add(1)
		n := active.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		if n == 3 {
			once.Do(func() { close(allIn) })
		}
		<-allIn // the first calls wait until three are in flight together
		active.Add(-1)
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 30 || peak.Load() != 3 {
		t.Fatalf("%d calls with at most %d in flight, want 30 with 3", calls.Load(), peak.Load())
	}
}

func TestCancellingTheContextStopsTheScheduleWithoutLeaks(t *testing.T) {
	cases := []struct {
		name string
		s    Schedule
	}{
		{"an open loop waiting for its next call", Schedule{Rate: 1, Concurrency: 2, Count: 100}},
		{"a closed loop", Schedule{Concurrency: 4, Duration: time.Hour}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewFake(t0)
			tc.s.Clock = clk
			ctx, cancel := context.WithCancel(context.Background())
			var calls atomic.Int32
			done := make(chan error, 1)
			go func() {
				done <- tc.s.Run(ctx, func(ctx context.Context, _ time.Time) {
					if calls.Add(1) == 1 {
						cancel()
					}
					<-ctx.Done()
				})
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("Run did not return after its context was cancelled")
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Run returned %v, want context.Canceled", err)
			}
			if n := calls.Load(); n > int32(tc.s.Concurrency) {
				t.Fatalf("%d calls started; none may start after the cancellation", n)
			}
			if clk.Pending() != 0 {
				t.Fatal("a timer was left armed")
			}
		})
	}
}

func TestDueCountsTheCallsOfAnOpenLoopDueByThen(t *testing.T) {
	start := time.Unix(1000, 0)
	at := func(d time.Duration) time.Time { return start.Add(d) }
	for _, tc := range []struct {
		name string
		s    Schedule
		now  time.Time
		want int
	}{
		{"the first call is due at the start", Schedule{Rate: 10}, start, 1},
		{"one every 100ms", Schedule{Rate: 10}, at(950 * time.Millisecond), 10},
		{"a call due exactly now is due", Schedule{Rate: 10}, at(time.Second), 11},
		{"never more than the count", Schedule{Rate: 10, Count: 5}, at(time.Hour), 5},
		{"none due at or after the end of the duration", Schedule{Rate: 10, Duration: time.Second}, at(time.Hour), 10},
		{"before the start nothing is due", Schedule{Rate: 10}, at(-time.Second), 0},
		{"a closed loop has no due times", Schedule{Concurrency: 1}, at(time.Hour), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.s.Due(start, tc.now); got != tc.want {
				t.Fatalf("Due = %d, want %d", got, tc.want)
			}
		})
	}
}
