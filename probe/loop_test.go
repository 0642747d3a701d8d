package probe

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/workload"
)

// guard bounds, in real time, each wait of these tests for the run's goroutines: only a
// broken run ever waits that long.
const guard = 10 * time.Second

// lockedBuffer is a bytes.Buffer safe to read while the run writes to it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// fakeRegion is a region's answers: hung ones wait until their request is cut, others
// answer 200 at once. Every request announces itself on started.
type fakeRegion struct {
	hung    bool
	started chan string
}

func newFakeRegion(hung bool) *fakeRegion {
	return &fakeRegion{hung: hung, started: make(chan string, 1000)}
}

func (f *fakeRegion) send(ctx context.Context, region string) outcome {
	f.started <- region
	if f.hung {
		<-ctx.Done()
		return outcome{failed: true} // no answer: what a cancelled request gets
	}
	return outcome{status: 200, charge: 1}
}

func (f *fakeRegion) awaitStarted(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-f.started:
		case <-time.After(guard):
			t.Fatalf("a request the schedule is due to send was not sent")
		}
	}
}

func testRun(clk *clock.Fake, send sendFunc, sched workload.Schedule, out io.Writer) *run {
	return &run{streams: Streams{Out: out, ErrOut: io.Discard}, opts: Options{Schedule: sched}, regions: []string{"East US"},
		send: send, clock: clk, grace: 500 * time.Millisecond}
}

// start runs p and returns what it returns.
func start(ctx context.Context, p *run) <-chan bool {
	done := make(chan bool, 1)
	go func() { done <- p.run(ctx) }()
	return done
}

func awaitEnd(t *testing.T, done <-chan bool) (interrupted bool) {
	t.Helper()
	select {
	case interrupted = <-done:
		return interrupted
	case <-time.After(guard):
		t.Fatal("the run did not end")
	}
	return false
}

func TestDurationBoundsTheRunOfAHungRegion(t *testing.T) {
	for _, tc := range []struct {
		name  string
		count int
	}{
		{"duration alone", 0},
		{"count and duration, the duration ends first", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewFake(time.Unix(1000, 0))
			hung := newFakeRegion(true)
			// 100 requests due in the second, two workers: both hang on their first.
			p := testRun(clk, hung.send, workload.Schedule{Rate: 100, Concurrency: 2, Count: tc.count, Duration: time.Second}, io.Discard)
			done := start(context.Background(), p)
			hung.awaitStarted(t, 1) // due at once
			// The second worker waits for its request due at 10ms; the timers of the
			// deadline, the grace and the first tick are armed too.
			if !clk.WaitForTimers(4, guard) {
				t.Fatal("the run armed no timers")
			}
			clk.Advance(10 * time.Millisecond)
			hung.awaitStarted(t, 1)
			// The deadline stops sending; the grace after it cuts the two requests.
			clk.Advance(990*time.Millisecond + p.grace)
			if awaitEnd(t, done) {
				t.Fatal("a run that reached its deadline reports an interrupt")
			}
			sum := p.recorders[0].Total().Summary()
			if sum.Count != 2 || sum.Timeouts != 2 || sum.ErrorsByStatus["408/20008"] != 2 || sum.MaxMs != nil {
				t.Fatalf("%+v: want the two requests in flight, cut at the deadline and its grace as timeouts (no latency: they got no answer), and none of the 98 due after them", sum)
			}
			if len(hung.started) != 0 {
				t.Fatalf("%d requests sent after the deadline", len(hung.started))
			}
		})
	}
}

func TestCountEndsARunBeforeItsDuration(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	healthy := newFakeRegion(false)
	p := testRun(clk, healthy.send, workload.Schedule{Concurrency: 2, Count: 5, Duration: time.Hour}, io.Discard)
	if awaitEnd(t, start(context.Background(), p)) {
		t.Fatal("interrupted")
	}
	if sum := p.recorders[0].Total().Summary(); sum.Count != 5 || sum.Errors != 0 {
		t.Fatalf("%+v: want the 5 requests of the count", sum)
	}
}

func TestAnInterruptEndsTheRunWithoutMeasuringWhatItCut(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	hung := newFakeRegion(true)
	p := testRun(clk, hung.send, workload.Schedule{Concurrency: 3, Duration: time.Minute}, io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	done := start(ctx, p)
	hung.awaitStarted(t, 3)
	cancel()
	if !awaitEnd(t, done) {
		t.Fatal("an interrupted run must say so")
	}
	if n := p.recorders[0].Total().Count(); n != 0 {
		t.Fatalf("%d requests cut by the interrupt were counted", n)
	}
}

func TestWatchWithoutCountOrDurationRunsUntilInterruptedAndShowsTheLastSeconds(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	healthy := newFakeRegion(false)
	var out lockedBuffer
	p := testRun(clk, healthy.send, workload.Schedule{Rate: 1, Concurrency: 1}, &out)
	p.opts.Watch = true
	ctx, cancel := context.WithCancel(context.Background())
	done := start(ctx, p)
	const seconds = 12
	for range seconds {
		healthy.awaitStarted(t, 1)
		// The worker has recorded its request and waits for the next; the live table
		// waits for the next second.
		if !clk.WaitForTimers(2, guard) {
			t.Fatal("the run stopped arming timers")
		}
		clk.Advance(time.Second)
	}
	healthy.awaitStarted(t, 1)
	clk.WaitForTimers(2, guard)
	cancel()
	if !awaitEnd(t, done) {
		t.Fatal("an interrupted run must say so")
	}
	if n := p.recorders[0].Total().Count(); n != seconds+1 {
		t.Fatalf("%d requests, want one a second until the interrupt (%d)", n, seconds+1)
	}
	got := out.String()
	frames := strings.Split(got, "probing 1 region: ")
	if len(frames) != seconds+1 || strings.Count(got, "last 10s:") != seconds {
		t.Fatalf("want a frame a second with the last 10s, then the final table:\n%s", got)
	}
	last := frames[seconds]
	// The request due at 12s and the frame drawn at 12s race: either may come first.
	if !(strings.HasPrefix(last, "12 requests, 12s\n") || strings.HasPrefix(last, "13 requests, 12s\n")) || !strings.Contains(last, "last 10s:") {
		t.Fatalf("the frame at 12s: no count to reach, no duration:\n%s", last)
	}
	// At 12s the last ten seconds hold the requests of 2s to 11s.
	window := strings.Split(last[strings.Index(last, "last 10s:"):], "\n")
	if len(window) < 3 || strings.Join(strings.Fields(window[2])[:3], " ") != "East US 10" {
		t.Fatalf("the last 10s at 12s hold 10 requests:\n%s", strings.Join(window, "\n"))
	}
}
