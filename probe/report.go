package probe

import (
	"fmt"
	"io"
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

// report writes the final results: the table, or the last interval lines and the summary
// line; and one line on stderr per --fail-on breach.
func (p *run) report(request string) error {
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
	var err error
	if p.opts.JSON {
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
		err = output.WriteJSONLine(p.streams.Out, sum)
	} else {
		p.erase()
		err = p.writeTables(p.streams.Out)
	}
	for _, b := range p.breached {
		fmt.Fprintln(p.streams.ErrOut, b.Message)
	}
	return err
}
