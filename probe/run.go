package probe

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/output"
	"github.com/cosmosctl/cosmosctl/workload"
)

// maxGrace bounds how long the requests still in flight when a probe's duration ends
// may take to answer: however sick a region, the probe ends within its duration and
// this.
const maxGrace = time.Second

// run is one probe: a schedule per region running at once, and what a person or a
// script sees of it while it runs and at the end.
type run struct {
	streams Streams
	opts    Options
	regions []string
	send    sendFunc
	// replicas keeps the per-replica records of --replicas; nil without it.
	replicas *replicaProber
	clock    clock.Clock
	// grace is how long requests in flight at the end of the duration may still take.
	grace time.Duration
	// probed is what the requests read (output.Probed…).
	probed string

	recorders []*workload.Recorder
	// windows are each region's last seconds, for the live table.
	windows []*recent
	// flights are each region's requests in flight; started counts the requests each
	// region sent.
	flights []*flight
	// sched is the schedule every region runs, counted from start.
	sched    workload.Schedule
	start    time.Time
	elapsed  time.Duration
	breached []output.ProbeBreach
	// drawn is the number of lines of the live table on a terminal, to move back over.
	drawn    int
	progress bool // a progress line is on stderr
}

// run probes every region at once and reports whether ctx ended before the schedules did.
//
// The duration bounds the wall clock: when it ends no request starts (an open loop's
// backlog is dropped, not sent late), the requests in flight get the grace to answer,
// and those still waiting then are cut and counted as timeouts, which is what they are
// to a client whose deadline has passed. Without the cut a hung region would hold the
// probe for the request timeout, and the backlog of an open loop for many times that.
// With neither a count nor a duration the probe runs until ctx ends (--watch).
func (p *run) run(ctx context.Context) (interrupted bool) {
	p.start = p.clock.Now()
	// Both end with ctx: an interrupt stops sending and cuts every request at once.
	sending, stopSending := context.WithCancel(ctx)
	defer stopSending()
	requests, cutRequests := context.WithCancel(ctx)
	defer cutRequests()
	var cut, interrupt atomic.Bool
	sched := p.opts.Schedule
	sched.Clock, sched.Start = p.clock, p.start
	p.sched = sched
	if d := sched.Duration; d > 0 {
		stop := p.clock.AfterFunc(d, stopSending)
		defer stop.Stop()
		deadline := p.clock.AfterFunc(d+p.grace, func() {
			// Sending has surely stopped before any request is cut, whichever of the
			// two timers' functions runs first: a worker freed by the cut starts no more.
			stopSending()
			cut.Store(true)
			cutRequests()
		})
		defer deadline.Stop()
	}
	if sched.Count == 0 && sched.Duration == 0 {
		sched.Count = math.MaxInt
	}
	var wg sync.WaitGroup
	for _, region := range p.regions {
		rec, win, fl := workload.NewRecorder(), newRecent(recentSpan), newFlight()
		p.recorders, p.windows, p.flights = append(p.recorders, rec), append(p.windows, win), append(p.flights, fl)
		wg.Go(func() {
			err := sched.Run(sending, func(_ context.Context, intended time.Time) {
				id := fl.add(intended)
				out := p.send(requests, region)
				switch {
				case ctx.Err() != nil:
					fl.done(id, nil)
					return // cut short by an interrupt: not a measurement
				case out.failed && out.status == 0 && cut.Load():
					// Cut after the grace: no answer in time, as the deadline has it.
					charge := out.charge
					out = timeoutOutcome
					out.charge = charge
				}
				now := p.clock.Now()
				latency := now.Sub(intended)
				// The request leaves the in-flight set as it is counted, under one lock,
				// so that an interval counts it once: in flight or ended.
				fl.done(id, func() {
					for _, t := range out.serverTimes {
						rec.RecordServerTime(t)
						win.recordServerTime(now.Sub(p.start), t)
					}
					if out.timedOut {
						rec.RecordTimeout(out.charge)
						win.recordTimeout(now.Sub(p.start), out.charge)
						return
					}
					rec.Record(latency, out.status, out.substatus, out.charge, out.failed)
					win.record(now.Sub(p.start), latency, out.status, out.substatus, out.charge, out.failed)
				})
				if p.replicas != nil && out.replica != "" {
					p.replicas.record(region, latency, out)
				}
			})
			if err != nil && ctx.Err() != nil {
				interrupt.Store(true)
			}
		})
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	for next := 1; ; next++ {
		// A tick that came late (a slow terminal) is not made up for.
		next = max(next, int(p.clock.Now().Sub(p.start)/time.Second)+1)
		t := p.clock.NewTimer(p.start.Add(time.Duration(next) * time.Second).Sub(p.clock.Now()))
		select {
		case <-done:
			t.Stop()
			p.elapsed = p.clock.Now().Sub(p.start)
			return interrupt.Load()
		case <-t.C():
			p.tick(p.clock.Now().Sub(p.start))
		}
	}
}

// tick is the once-a-second update: the interval lines of the JSON stream, the live
// table, the progress line.
func (p *run) tick(elapsed time.Duration) {
	switch {
	case p.opts.JSON:
		p.writeIntervals(elapsed, false)
	case p.opts.Watch:
		p.draw(elapsed)
	}
	if p.showProgress() && elapsed >= progressAfter {
		fmt.Fprintf(p.streams.ErrOut, "\r\x1b[K%s", p.status(elapsed))
		p.progress = true
	}
}

// showProgress: progress goes to stderr when it is a terminal, unless the live table is
// already redrawing the same terminal.
func (p *run) showProgress() bool {
	return p.streams.ErrTTY && !(p.opts.Watch && p.streams.OutTTY && !p.opts.JSON)
}

// writeIntervals writes one interval line per region and starts the next interval: the
// requests that ended in it, those still in flight at its end, and with --rate those due
// and not yet sent. The last, shorter interval is written only for regions that ended
// requests in it or still have some in flight.
func (p *run) writeIntervals(elapsed time.Duration, last bool) {
	now := p.start.Add(elapsed)
	for i, region := range p.regions {
		var iv *workload.Stats
		inFlight, oldest, started := p.flights[i].cut(now, func() { iv = p.recorders[i].CutInterval() })
		sum := iv.Summary()
		if last && sum.Count == 0 && inFlight == 0 {
			continue
		}
		line := output.ProbeInterval{Type: output.ProbeLineInterval, Region: region, ElapsedMs: millis(elapsed), Summary: sum, InFlight: inFlight}
		if inFlight > 0 {
			line.OldestInFlightMs = workload.Ms(millis(oldest))
		}
		if p.sched.Rate > 0 {
			behind := max(p.sched.Due(p.start, now)-started, 0)
			line.Behind = &behind
		}
		_ = output.WriteJSONLine(p.streams.Out, line)
	}
}

// draw shows the table so far: redrawn in place on a terminal, appended as plain lines
// otherwise.
func (p *run) draw(elapsed time.Duration) {
	var buf bytes.Buffer
	fmt.Fprintln(&buf, p.status(elapsed))
	_ = p.writeTables(&buf)
	fmt.Fprintf(&buf, "\nlast %s:\n", recentSpan)
	_ = output.WriteProbeTable(&buf, p.opts.Style, p.recentRows(elapsed))
	if p.streams.OutTTY {
		p.erase()
		p.drawn = strings.Count(buf.String(), "\n")
	} else {
		buf.WriteByte('\n')
	}
	_, _ = p.streams.Out.Write(buf.Bytes())
}

// erase moves the cursor back over the live table and clears it.
func (p *run) erase() {
	if p.drawn > 0 {
		fmt.Fprintf(p.streams.Out, "\x1b[%dA\x1b[J", p.drawn)
		p.drawn = 0
	}
}

// status is one line on how far the probe is: "probing 3 regions: 412/600 requests, 8s".
func (p *run) status(elapsed time.Duration) string {
	n := 0
	for _, r := range p.recorders {
		n += r.Total().Count()
	}
	s := p.opts.Schedule
	var b strings.Builder
	fmt.Fprintf(&b, "probing %d region%s: %d", len(p.regions), plural(len(p.regions)), n)
	if s.Count > 0 {
		fmt.Fprintf(&b, "/%d", s.Count*len(p.regions))
	}
	fmt.Fprintf(&b, " requests, %s", elapsed.Round(time.Second))
	if s.Duration > 0 {
		fmt.Fprintf(&b, " of %s", s.Duration)
	}
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func millis(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond)) / float64(time.Millisecond)
}

// flight is one region's requests in flight, by id, with the time each was due, and the
// count of requests it sent. Its lock also covers a request's leaving the set and being
// counted, and an interval's cut (see cut), so that an interval record counts every
// request once: ended in it, or in flight at its end.
type flight struct {
	mu      sync.Mutex
	next    uint64
	due     map[uint64]time.Time
	started int
}

func newFlight() *flight { return &flight{due: map[uint64]time.Time{}} }

// add records a request sent, due at due, and returns its id.
func (f *flight) add(due time.Time) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next++
	f.started++
	f.due[f.next] = due
	return f.next
}

// done removes a request from the set, running count (if not nil) under the same lock.
func (f *flight) done(id uint64, count func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.due, id)
	if count != nil {
		count()
	}
}

// cut runs cutInterval and returns, as of the same instant, the requests in flight,
// how long the oldest has waited since it was due at now, and the requests sent so far.
func (f *flight) cut(now time.Time, cutInterval func()) (inFlight int, oldest time.Duration, started int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cutInterval()
	for _, due := range f.due {
		oldest = max(oldest, now.Sub(due))
	}
	return len(f.due), oldest, f.started
}

// sent is how many requests the region sent.
func (f *flight) sent() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.started
}
