package probe

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/workload"
)

// A hung region must never look fastest in the JSON stream (issue 20, item 3): its
// seconds count the requests in flight, its timeouts are timeouts, it has no latency
// figure (null, never 0), and an open loop that fell behind says how far.

// jsonLine is any line of the stream, as far as these tests look.
type jsonLine struct {
	Type             string   `json:"type"`
	Region           string   `json:"region"`
	ElapsedMs        float64  `json:"elapsed_ms"`
	Count            int      `json:"count"`
	Errors           int      `json:"errors"`
	Timeouts         int      `json:"timeouts"`
	P99Ms            *float64 `json:"p99_ms"`
	InFlight         int      `json:"in_flight"`
	OldestInFlightMs *float64 `json:"oldest_in_flight_ms"`
	Behind           *int     `json:"behind"`
	EndedBy          string   `json:"ended_by"`
	Regions          []struct {
		Region   string   `json:"region"`
		Count    int      `json:"count"`
		Timeouts int      `json:"timeouts"`
		P99Ms    *float64 `json:"p99_ms"`
		NotSent  *int     `json:"not_sent"`
	} `json:"regions"`
}

func parseLines(t *testing.T, out string) []jsonLine {
	t.Helper()
	var lines []jsonLine
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var jl jsonLine
		if err := json.Unmarshal([]byte(l), &jl); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		lines = append(lines, jl)
	}
	return lines
}

// timingOut is a region whose requests hang until their own timeout, which the test
// sends by cancelling nothing: it answers timeouts when released.
type timingOut struct {
	started chan struct{}
	release chan struct{}
}

func (f *timingOut) send(ctx context.Context, _ string) outcome {
	f.started <- struct{}{}
	select {
	case <-f.release:
		return timeoutOutcome // its end-to-end timeout expired
	case <-ctx.Done():
		return outcome{failed: true}
	}
}

// tickDone waits until the run has written the second that just ended: it then arms
// the timer of the next one.
func tickDone(t *testing.T, clk *clock.Fake) {
	t.Helper()
	if !clk.WaitForTimerIn(time.Second, guard) {
		t.Fatal("the run did not write the second")
	}
}

func TestAHungRegionsSecondsCountItsRequestsInFlightAndItsTimeouts(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	hung := &timingOut{started: make(chan struct{}, 100), release: make(chan struct{})}
	var out lockedBuffer
	// A closed loop of two workers for 3.2s; each request times out after 1.5s.
	p := testRun(clk, hung.send, workload.Schedule{Concurrency: 2, Duration: 3200 * time.Millisecond}, &out)
	p.opts.JSON = true
	done := start(context.Background(), p)
	for range 2 {
		<-hung.started
	}
	// The deadline, its grace and the first tick.
	if !clk.WaitForTimers(3, guard) {
		t.Fatal("the run armed no timers")
	}
	clk.Advance(time.Second) // 1s: both requests in flight for a second
	tickDone(t, clk)
	clk.Advance(500 * time.Millisecond)
	hung.release <- struct{}{}
	hung.release <- struct{}{}
	for range 2 {
		<-hung.started // the next two are sent
	}
	clk.WaitForTimers(3, guard)
	clk.Advance(500 * time.Millisecond) // 2s
	tickDone(t, clk)
	clk.Advance(1200 * time.Millisecond) // 3.2s: sending stops
	clk.Advance(p.grace)                 // the two in flight are cut
	awaitEnd(t, done)
	p.report("read", false)

	lines := parseLines(t, out.String())
	first := lines[0]
	if first.Type != "interval" || first.Count != 0 || first.InFlight != 2 || first.OldestInFlightMs == nil || *first.OldestInFlightMs != 1000 || first.P99Ms != nil {
		t.Fatalf("the first second: %+v; want nothing ended, 2 in flight for 1000ms, no latency figure", first)
	}
	second := lines[1]
	if second.Count != 2 || second.Timeouts != 2 || second.Errors != 2 || second.InFlight != 2 || second.P99Ms != nil {
		t.Fatalf("the second second: %+v; want the 2 timeouts and the next 2 in flight", second)
	}
	sum := lines[len(lines)-1]
	if sum.Type != "summary" || len(sum.Regions) != 1 || sum.Regions[0].Region != "East US" || sum.Regions[0].Count != 4 ||
		sum.Regions[0].Timeouts != 4 || sum.Regions[0].P99Ms != nil || sum.Regions[0].NotSent != nil || sum.EndedBy != "duration" {
		t.Fatalf("summary %+v: want 4 timeouts, no latency figure, and no not_sent in a closed loop", sum)
	}
	if !strings.Contains(out.String(), `"p99_ms":null`) {
		t.Fatalf("a latency with no answer is null in JSON:\n%s", out.String())
	}
}

func TestAnOpenLoopThatFellBehindSaysHowFar(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	hung := newFakeRegion(true)
	var out lockedBuffer
	// 10 a second for 2.2s with one worker, which hangs on its first request: 21 of the
	// 22 due are never sent.
	p := testRun(clk, hung.send, workload.Schedule{Rate: 10, Concurrency: 1, Duration: 2200 * time.Millisecond}, &out)
	p.opts.JSON = true
	done := start(context.Background(), p)
	hung.awaitStarted(t, 1)
	if !clk.WaitForTimers(3, guard) {
		t.Fatal("the run armed no timers")
	}
	clk.Advance(time.Second)
	tickDone(t, clk)
	clk.Advance(1200 * time.Millisecond)
	clk.Advance(p.grace)
	awaitEnd(t, done)
	p.report("read", false)
	lines := parseLines(t, out.String())
	if first := lines[0]; first.Behind == nil || *first.Behind != 10 || first.InFlight != 1 {
		t.Fatalf("at 1s: %+v; want 10 due and not sent (11 due by then, 1 sent) and 1 in flight", first)
	}
	sum := lines[len(lines)-1].Regions[0]
	if sum.NotSent == nil || *sum.NotSent != 21 || sum.Timeouts != 1 || sum.Count != 1 {
		t.Fatalf("summary %+v: want 21 not sent, the one sent cut as a timeout", sum)
	}

	var table lockedBuffer
	p.opts.JSON, p.streams.Out = false, &table
	p.report("read", false)
	for _, want := range []string{"note: East US: no request got an answer in time (1 timeout): no latency figure",
		"note: East US: 21 requests due at --rate 10 never sent: all 1 workers were waiting on earlier requests"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, table.String())
		}
	}
}

func TestTheDefaultTimeLimitEndsAProbeOfAHungRegionAndSaysSo(t *testing.T) {
	if got := TimeLimit(100, 0); got != 30*time.Second {
		t.Errorf("closed loop: %s", got)
	}
	if got := TimeLimit(100, 2); got != time.Minute {
		t.Errorf("100 at 2 a second: %s, want the 50s they take and 10s", got)
	}
	clk := clock.NewFake(time.Unix(1000, 0))
	hung := newFakeRegion(true)
	var errOut lockedBuffer
	p := testRun(clk, hung.send, workload.Schedule{Concurrency: 4, Count: 100, Duration: TimeLimit(100, 0)}, io.Discard)
	p.opts.DefaultTimeLimit = true
	p.streams.ErrOut = &errOut
	done := start(context.Background(), p)
	hung.awaitStarted(t, 4)
	if !clk.WaitForTimers(3, guard) {
		t.Fatal("the run armed no timers")
	}
	clk.Advance(30*time.Second + p.grace)
	awaitEnd(t, done)
	p.report("read", false)
	if p.endedBy(false) != "time_limit" || !strings.Contains(errOut.String(), "the probe stopped at its time limit of 30s before every region had sent its 100 requests (East US 4); --duration sets another limit") {
		t.Fatalf("ended by %q, stderr %q", p.endedBy(false), errOut.String())
	}
}
