package probe

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cosmosctl/cosmosctl/output"
	"github.com/cosmosctl/cosmosctl/workload"
)

// writeTables writes the region table and, with --replicas, the replica table after it.
func (p *run) writeTables(w io.Writer) error {
	if err := output.WriteProbeTable(w, p.opts.Style, p.rows()); err != nil || p.replicas == nil {
		return err
	}
	fmt.Fprintln(w)
	return output.WriteProbeReplicas(w, p.opts.Style, p.replicas.rows(p.regions))
}

func (p *run) rows() []output.ProbeRegion {
	rows := make([]output.ProbeRegion, len(p.regions))
	for i, region := range p.regions {
		rows[i] = output.ProbeRegion{Region: region, Summary: p.recorders[i].Total().Summary()}
	}
	return rows
}

// recentRows are the regions' rows of the last seconds before elapsed.
func (p *run) recentRows(elapsed time.Duration) []output.ProbeRegion {
	rows := make([]output.ProbeRegion, len(p.regions))
	for i, region := range p.regions {
		rows[i] = output.ProbeRegion{Region: region, Summary: p.windows[i].summary(elapsed)}
	}
	return rows
}

// report writes the final results: the table and its notes, or the last interval lines
// and the summary line; one line on stderr per --fail-on breach, and one when the
// default time limit ended the probe before its --count.
func (p *run) report(request string, interrupted bool) error {
	if p.progress {
		fmt.Fprint(p.streams.ErrOut, "\r\x1b[K")
	}
	rows := p.rows()
	for _, r := range rows {
		for _, rule := range p.opts.Rules {
			if rule.Breached(r.Summary) {
				p.breached = append(p.breached, output.NewProbeBreach(r.Region, rule, r.Summary))
			}
		}
	}
	var replicas []output.ProbeReplica
	if p.replicas != nil {
		replicas = p.replicas.rows(p.regions)
		for _, r := range replicas {
			for _, rule := range p.opts.Rules {
				if rule.Breached(r.Summary) {
					p.breached = append(p.breached, output.NewProbeReplicaBreach(r.Region, r.Address, rule, r.Summary))
				}
			}
		}
	}
	notSent := p.notSent()
	endedBy := p.endedBy(interrupted)
	var err error
	if p.opts.JSON {
		p.writeIntervals(p.elapsed, true)
		sum := output.ProbeSummary{
			Type: output.ProbeLineSummary, Request: request, Probed: p.probed, ElapsedMs: millis(p.elapsed), EndedBy: endedBy,
			Regions: make([]output.ProbeRegionSummary, len(rows)), Breaches: p.breached,
		}
		if d := p.opts.Schedule.Duration; d > 0 {
			sum.TimeLimitMs = workload.Ms(millis(d))
		}
		if sum.Breaches == nil {
			sum.Breaches = []output.ProbeBreach{}
		}
		for i, r := range rows {
			sum.Regions[i] = output.ProbeRegionSummary{Region: r.Region, Summary: r.Summary, NotSent: notSent[i]}
		}
		if p.replicas != nil {
			sum.Replicas = append([]output.ProbeReplica{}, replicas...)
		}
		err = output.WriteJSONLine(p.streams.Out, sum)
	} else {
		p.erase()
		err = p.writeTables(p.streams.Out)
		if err == nil {
			p.writeNotes(rows, notSent)
		}
	}
	if endedBy == output.ProbeEndedByTimeLimit {
		fmt.Fprintf(p.streams.ErrOut, "cosmosctl: the probe stopped at its time limit of %s before every region had sent its %s (%s); --duration sets another limit\n",
			p.opts.Schedule.Duration, output.HumanCount(p.opts.Schedule.Count, "request"), p.sentText())
	}
	for _, b := range p.breached {
		fmt.Fprintln(p.streams.ErrOut, b.Message)
	}
	return err
}

// notSent is, per region with --rate, the requests that were due before sending stopped
// and never sent; nil entries without --rate.
func (p *run) notSent() []*int {
	out := make([]*int, len(p.regions))
	if p.sched.Rate <= 0 {
		return out
	}
	window := p.elapsed
	if d := p.sched.Duration; d > 0 {
		window = min(window, d)
	}
	due := p.sched.Due(p.start, p.start.Add(window))
	for i := range p.regions {
		n := max(due-p.flights[i].sent(), 0)
		out[i] = &n
	}
	return out
}

// endedBy is how the run ended, for the summary's ended_by.
func (p *run) endedBy(interrupted bool) string {
	s := p.opts.Schedule
	switch {
	case interrupted:
		return output.ProbeEndedByInterrupt
	case s.Count > 0 && p.allSent(s.Count):
		return output.ProbeEndedByCount
	case p.opts.DefaultTimeLimit:
		return output.ProbeEndedByTimeLimit
	}
	return output.ProbeEndedByDuration
}

func (p *run) allSent(count int) bool {
	for _, f := range p.flights {
		if f.sent() < count {
			return false
		}
	}
	return true
}

// sentText is how many requests each region that fell short of the count sent:
// "East US 12".
func (p *run) sentText() string {
	var parts []string
	for i, region := range p.regions {
		if n := p.flights[i].sent(); n < p.opts.Schedule.Count {
			parts = append(parts, fmt.Sprintf("%s %d", region, n))
		}
	}
	return strings.Join(parts, ", ")
}

// writeNotes writes, under the table, what the table cannot show: that the probe read a
// missing item, a region none of whose requests got an answer (no latency figure), a
// region that is slow itself or slow to reach (its server and network times), and
// requests due at --rate and never sent.
func (p *run) writeNotes(rows []output.ProbeRegion, notSent []*int) {
	var notes []string
	if p.probed == output.ProbedMissingItem {
		notes = append(notes, fmt.Sprintf("probed the missing item %q (it could be neither found nor created): a 404/0 (not found) is a region's answer and counts as one, not as an error", ItemID))
	}
	for i, r := range rows {
		s := r.Summary
		if s.Timeouts > 0 && s.P50Ms == nil {
			notes = append(notes, fmt.Sprintf("%s: no request got an answer in time (%d %s): no latency figure", r.Region, s.Timeouts, plural2(s.Timeouts, "timeout", "timeouts")))
		}
		notes = append(notes, output.ServerTimeVerdicts(r.Region, s)...)
		if notSent[i] != nil && *notSent[i] > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d %s due at --rate %g never sent: all %d workers were waiting on earlier requests (latencies count from when each request was due)",
				r.Region, *notSent[i], plural2(*notSent[i], "request", "requests"), p.sched.Rate, p.sched.Concurrency))
		}
	}
	// The notes are for a person: on stderr under -o tsv, whose stdout is the table alone.
	w := p.streams.Out
	if p.opts.Style.TSV {
		w = p.streams.ErrOut
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintln(w, "note: "+n)
		}
	}
}

func plural2(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
