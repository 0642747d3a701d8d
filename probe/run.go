package probe

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/output"
	"github.com/cosmosctl/cosmosctl/workload"
)

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

	recorders []*workload.Recorder
	start     time.Time
	elapsed   time.Duration
	breached  []output.ProbeBreach
	// drawn is the number of lines of the live table on a terminal, to move back over.
	drawn    int
	progress bool // a progress line is on stderr
}

// run probes every region at once and reports whether ctx ended before the schedules did.
func (p *run) run(ctx context.Context) (interrupted bool) {
	p.start = p.clock.Now()
	var wg sync.WaitGroup
	var cut atomic.Bool
	for _, region := range p.regions {
		rec := workload.NewRecorder()
		p.recorders = append(p.recorders, rec)
		wg.Add(1)
		go func() {
			defer wg.Done()
			sched := p.opts.Schedule
			sched.Clock = p.clock
			err := sched.Run(ctx, func(ctx context.Context, intended time.Time) {
				out := p.send(ctx, region)
				if ctx.Err() != nil {
					return // cut short by an interrupt: not a measurement
				}
				latency := p.clock.Now().Sub(intended)
				rec.Record(latency, out.status, out.substatus, out.charge, out.failed)
				if p.replicas != nil && out.replica != "" {
					p.replicas.record(region, latency, out)
				}
			})
			if err != nil {
				cut.Store(true)
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-done:
			p.elapsed = p.clock.Now().Sub(p.start)
			return cut.Load()
		case <-ticker.C:
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

// writeIntervals writes one interval line per region and starts the next interval. The
// last, shorter interval is written only for regions that completed requests in it.
func (p *run) writeIntervals(elapsed time.Duration, last bool) {
	for i, region := range p.regions {
		sum := p.recorders[i].CutInterval().Summary()
		if last && sum.Count == 0 {
			continue
		}
		_ = output.WriteJSONLine(p.streams.Out, output.ProbeInterval{Type: output.ProbeLineInterval, Region: region, ElapsedMs: millis(elapsed), Summary: sum})
	}
}

// draw shows the table so far: redrawn in place on a terminal, appended as plain lines
// otherwise.
func (p *run) draw(elapsed time.Duration) {
	var buf bytes.Buffer
	fmt.Fprintln(&buf, p.status(elapsed))
	_ = p.writeTables(&buf)
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
