package cmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cosmosctl/cosmosctl/clock"
	"github.com/cosmosctl/cosmosctl/output"
	"github.com/cosmosctl/cosmosctl/workload"
)

// probeRun is one run of `cosmosctl probe`: a schedule per region running at once, and
// what a person or a script sees of it while it runs and at the end.
type probeRun struct {
	io      *IOStreams
	opts    *probeOptions
	regions []string
	send    probeFunc
	// replicas keeps the per-replica records of --replicas; nil without it.
	replicas *replicaProber
	clock    clock.Clock
	json     bool
	style    output.Styles

	recorders []*workload.Recorder
	start     time.Time
	elapsed   time.Duration
	breached  []output.ProbeBreach
	// drawn is the number of lines of the live table on a terminal, to move back over.
	drawn    int
	progress bool // a progress line is on stderr
}

// run probes every region at once and reports whether ctx ended before the schedules did.
func (p *probeRun) run(ctx context.Context) (interrupted bool) {
	p.start = p.clock.Now()
	var wg sync.WaitGroup
	var cut atomic.Bool
	for _, region := range p.regions {
		rec := workload.NewRecorder()
		p.recorders = append(p.recorders, rec)
		wg.Add(1)
		go func() {
			defer wg.Done()
			sched := p.opts.schedule
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
func (p *probeRun) tick(elapsed time.Duration) {
	switch {
	case p.json:
		p.writeIntervals(elapsed, false)
	case p.opts.watch:
		p.draw(elapsed)
	}
	if p.showProgress() && elapsed >= probeProgressAfter {
		fmt.Fprintf(p.io.ErrOut, "\r\x1b[K%s", p.status(elapsed))
		p.progress = true
	}
}

// showProgress: progress goes to stderr when it is a terminal, unless the live table is
// already redrawing the same terminal.
func (p *probeRun) showProgress() bool {
	return p.io.ErrTTY && !(p.opts.watch && p.io.OutTTY && !p.json)
}

// writeIntervals writes one interval line per region and starts the next interval. The
// last, shorter interval is written only for regions that completed requests in it.
func (p *probeRun) writeIntervals(elapsed time.Duration, last bool) {
	for i, region := range p.regions {
		sum := p.recorders[i].CutInterval().Summary()
		if last && sum.Count == 0 {
			continue
		}
		_ = output.WriteJSONLine(p.io.Out, output.ProbeInterval{Type: output.ProbeLineInterval, Region: region, ElapsedMs: millis(elapsed), Summary: sum})
	}
}

// draw shows the table so far: redrawn in place on a terminal, appended as plain lines
// otherwise.
func (p *probeRun) draw(elapsed time.Duration) {
	var buf bytes.Buffer
	fmt.Fprintln(&buf, p.status(elapsed))
	_ = p.writeTables(&buf)
	if p.io.OutTTY {
		p.erase()
		p.drawn = strings.Count(buf.String(), "\n")
	} else {
		buf.WriteByte('\n')
	}
	_, _ = p.io.Out.Write(buf.Bytes())
}

// erase moves the cursor back over the live table and clears it.
func (p *probeRun) erase() {
	if p.drawn > 0 {
		fmt.Fprintf(p.io.Out, "\x1b[%dA\x1b[J", p.drawn)
		p.drawn = 0
	}
}

// status is one line on how far the probe is: "probing 3 regions: 412/600 requests, 8s".
func (p *probeRun) status(elapsed time.Duration) string {
	n := 0
	for _, r := range p.recorders {
		n += r.Total().Count()
	}
	s := p.opts.schedule
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

// writeTables writes the region table and, with --replicas, the replica table after it.
func (p *probeRun) writeTables(w io.Writer) error {
	if err := output.WriteProbeTable(w, p.style, p.rows()); err != nil || p.replicas == nil {
		return err
	}
	fmt.Fprintln(w)
	return output.WriteProbeReplicas(w, p.style, p.replicas.rows(p.regions))
}

func (p *probeRun) rows() []output.ProbeRegion {
	rows := make([]output.ProbeRegion, len(p.regions))
	for i, region := range p.regions {
		rows[i] = output.ProbeRegion{Region: region, Summary: p.recorders[i].Total().Summary()}
	}
	return rows
}

// report writes the final results: the table, or the last interval lines and the summary
// line; and one line on stderr per --fail-on breach.
func (p *probeRun) report(request string) error {
	if p.progress {
		fmt.Fprint(p.io.ErrOut, "\r\x1b[K")
	}
	rows := p.rows()
	for _, r := range rows {
		for _, rule := range p.opts.rules {
			if rule.Breached(r.Summary) {
				p.breached = append(p.breached, output.NewProbeBreach(r.Region, rule, r.Summary))
			}
		}
	}
	var replicas []output.ProbeReplica
	if p.replicas != nil {
		replicas = p.replicas.rows(p.regions)
		for _, r := range replicas {
			for _, rule := range p.opts.rules {
				if rule.Breached(r.Summary) {
					p.breached = append(p.breached, output.NewProbeReplicaBreach(r.Region, r.Address, rule, r.Summary))
				}
			}
		}
	}
	var err error
	if p.json {
		p.writeIntervals(p.elapsed, true)
		sum := output.ProbeSummary{
			Type: output.ProbeLineSummary, Request: request, ElapsedMs: millis(p.elapsed),
			Regions: map[string]workload.Summary{}, Breaches: p.breached,
		}
		if sum.Breaches == nil {
			sum.Breaches = []output.ProbeBreach{}
		}
		for _, r := range rows {
			sum.Regions[r.Region] = r.Summary
		}
		if p.replicas != nil {
			sum.Replicas = map[string][]output.ProbeReplica{}
			for _, region := range p.regions {
				sum.Replicas[region] = []output.ProbeReplica{}
			}
			for _, r := range replicas {
				sum.Replicas[r.Region] = append(sum.Replicas[r.Region], r)
			}
		}
		err = output.WriteJSONLine(p.io.Out, sum)
	} else {
		p.erase()
		err = p.writeTables(p.io.Out)
	}
	for _, b := range p.breached {
		fmt.Fprintln(p.io.ErrOut, b.Message)
	}
	return err
}

func (p *probeRun) breaches() int { return len(p.breached) }

func millis(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond)) / float64(time.Millisecond)
}
