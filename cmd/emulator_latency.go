package cmd

import (
	"fmt"
	"strings"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/emulator/faults"
)

// Values of `cosmosctl emulator --latency`.
const (
	latencyRealistic = "realistic"
	latencyNone      = "none"
)

// standaloneLatencies gives the standalone emulator the embedded one's round trips, so
// that a rehearsal against `cosmosctl emulator` sees a near region and far ones as the
// README's examples do, rather than three regions all a loopback hop away (where no
// hedge or failover ever has anything to win). Regions get them by position, the first
// being the client's own region: a client next to the write region is the usual case,
// and the names of custom regions say nothing about where the client is.
func standaloneLatencies(regions []emulator.RegionConfig) []faults.LatencySpec {
	out := make([]faults.LatencySpec, 0, len(regions))
	for i, r := range regions {
		d := embeddedLatencies[min(i, len(embeddedLatencies)-1)].Distribution
		out = append(out, faults.LatencySpec{Region: r.Name, Operation: faults.GroupAll, Distribution: d})
	}
	return out
}

// latencySummary is the one line `cosmosctl emulator` prints about latency on stderr.
func latencySummary(table []faults.LatencyEntry) string {
	if len(table) == 0 {
		return "latency: none added (--latency none): every region answers as fast as loopback"
	}
	parts := make([]string, 0, len(table))
	for _, l := range table {
		where := orAny(l.Region)
		if l.Operation != faults.GroupAll {
			where += " " + l.Operation
		}
		parts = append(parts, where+" "+shortDistribution(l.Distribution))
	}
	return "latency: " + strings.Join(parts, ", ") + " (--latency none for none)"
}

func shortDistribution(d faults.Distribution) string {
	switch d.Kind {
	case faults.KindLognormal:
		return fmt.Sprintf("≈%s (p99 %s)", d.P50, d.P99)
	case faults.KindFixed:
		return d.Value.String()
	case faults.KindUniform:
		return fmt.Sprintf("%s–%s", d.Min, d.Max)
	}
	return "none"
}
